/**
 * Runs every benchmark under `bench/` (files named `*.bench.ts`, each exporting a `suite`), prints
 * one table of pairs with their medians and ratio against the target, and writes the full results
 * (every round of every pair, the machine, the engines' settings) to
 * `bench/results/<timestamp>.json`, which git ignores.
 *
 * Usage, from the repository root: `npm run bench [-- <filter>…]`, where a filter keeps the pairs
 * whose id contains it (e.g. `npm run bench -- sqlite/append-1`). `BENCH_ROUNDS` sets the recorded
 * rounds per pair (default 7, at least 5).
 *
 * The exit code is 0 even when a pair misses its target: the figures are for people to read and to
 * record in docs/benchmarks.md, and timing never gates a build.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { measure, type PairResult, type Suite } from "./lib/Pair.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const filters = process.argv.slice(2)
const rounds = Math.max(5, Number.parseInt(process.env["BENCH_ROUNDS"] ?? "7", 10) || 7)

const benchFiles = (directory: string): Array<string> =>
  fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "results" ? [] : benchFiles(full)
    return entry.name.endsWith(".bench.ts") ? [full] : []
  }).sort()

const milliseconds = (value: number): string => value >= 10 ? value.toFixed(1) : value >= 1 ? value.toFixed(2) : value.toFixed(3)

const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? []
  return rows.map((row, index) => {
    const line = row.map((cell, column) => column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0)).join("  ")
    return index === 0 ? `${line}\n${widths.map((width) => "-".repeat(width)).join("  ")}` : line
  }).join("\n")
}

const machine = {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? "unknown",
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.type()} ${os.release()} ${os.arch()}`
}

const main = async () => {
  console.log(`Ratchet benchmarks: ${rounds} rounds per pair, sides alternating, medians per operation`)
  console.log(`machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}, ${machine.platform}`)
  const results: Array<PairResult> = []
  const facts: Record<string, Record<string, string>> = {}
  const skipped: Record<string, string> = {}
  for (const file of benchFiles(here)) {
    const module = (await import(pathToFileURL(file).href)) as { readonly suite?: Suite }
    const suite = module.suite
    if (suite === undefined) throw new Error(`${path.relative(here, file)} exports no \`suite\``)
    const prepared = await suite.prepare()
    if (prepared._tag === "Skipped") {
      skipped[suite.name] = prepared.reason
      console.log(`${suite.name}: skipped: ${prepared.reason}`)
      continue
    }
    facts[suite.name] = prepared.facts
    console.log(`${suite.name}:`)
    for (const [key, value] of Object.entries(prepared.facts)) console.log(`  ${key}: ${value}`)
    try {
      for (const pair of prepared.pairs) {
        if (filters.length > 0 && !filters.some((filter) => pair.id.includes(filter))) continue
        process.stdout.write(`  ${pair.id} …`)
        const result = await measure(pair, rounds)
        results.push(result)
        process.stdout.write(` ${result.ratio.toFixed(2)}×\n`)
      }
    } finally {
      await prepared.close()
    }
  }

  console.log("")
  console.log(table([
    ["pair", "ours ms/op", "baseline", "baseline ms/op", "ours cpu ms/op", "baseline cpu ms/op", "ours µs/event", "ratio", "target", ""],
    ...results.map((result) => [
      result.id,
      milliseconds(result.oursMedianMs),
      result.baseline,
      milliseconds(result.rawMedianMs),
      milliseconds(result.oursCpuMedianMs),
      milliseconds(result.rawCpuMedianMs),
      (result.oursMedianMs * 1000 / result.eventsPerOperation).toFixed(0),
      `${result.ratio.toFixed(2)}×`,
      result.targetText,
      Number.isFinite(result.target) ? (result.met ? "met" : "MISSED") : "reported"
    ])
  ]))

  const stamp = new Date().toISOString().replace(/[:.]/g, "-")
  const directory = path.join(here, "results")
  fs.mkdirSync(directory, { recursive: true })
  const file = path.join(directory, `${stamp}.json`)
  fs.writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), rounds, machine, facts, skipped, results }, null, 2)}\n`)
  console.log(`\nresults: ${path.relative(process.cwd(), file)}`)
}

await main()
