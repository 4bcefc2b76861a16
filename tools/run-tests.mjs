#!/usr/bin/env node
/**
 * The root `npm test`: run the given nx targets on every project, then print one last line,
 * `N passed, N failed`, adding up the vitest results of every project. `mutate` runs last, on its
 * own, so mutation testing never competes for the cores with the end-to-end tests.
 *
 * Usage: `node tools/run-tests.mjs <target>…` (the root package.json names the targets).
 *
 * Each project's `test` script asks vitest for a JSON report as well
 * (`--reporter=default --reporter=json --outputFile.json=reports/vitest/results.json`); it is an
 * output of the nx `test` target, so a cache hit restores it and the count covers every test
 * whether it ran now or was replayed. Stale reports are deleted first, and a project whose
 * `test` script runs vitest but left no report fails the run. The exit code is nx's (any failed target fails the
 * run), and non-zero as well whenever a test failed or a project that has tests left no report.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const targets = process.argv.slice(2)
if (targets.length === 0) {
  console.error("usage: node tools/run-tests.mjs <target>…")
  process.exit(2)
}

/**
 * Every workspace project directory whose `test` script runs vitest.
 *
 * @returns {Array<{ name: string, dir: string }>}
 */
const vitestProjects = () => {
  /** @type {{ workspaces?: string[] }} */
  const root = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8"))
  /** @type {string[]} */
  const dirs = []
  for (const pattern of root.workspaces ?? []) {
    if (pattern.endsWith("/*")) {
      const parent = path.join(repoRoot, pattern.slice(0, -2))
      if (fs.existsSync(parent)) dirs.push(...fs.readdirSync(parent).map((dir) => path.join(parent, dir)))
    } else {
      dirs.push(path.join(repoRoot, pattern))
    }
  }
  return dirs.flatMap((dir) => {
    const manifestFile = path.join(dir, "package.json")
    if (!fs.existsSync(manifestFile)) return []
    /** @type {{ name?: string, scripts?: Record<string, string> }} */
    const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8"))
    return manifest.scripts?.["test"]?.includes("vitest") === true ? [{ name: manifest.name ?? dir, dir }] : []
  })
}

const reportOf = (/** @type {string} */ dir) => path.join(dir, "reports", "vitest", "results.json")

const projects = vitestProjects()
for (const { dir } of projects) fs.rmSync(reportOf(dir), { force: true })

/**
 * Runs `nx run-many` for `wanted` (and the extra arguments); resolves to its exit status (1 when nx
 * could not start).
 * @param {ReadonlyArray<string>} wanted
 * @param {ReadonlyArray<string>} [extra]
 * @returns {Promise<number>}
 */
const runMany = (wanted, extra = []) =>
  new Promise((resolve) => {
    // The output is a log (CI, a pipe): no full-screen interface.
    const nx = spawn(path.join(repoRoot, "node_modules", ".bin", "nx"), ["run-many", "-t", ...wanted, ...extra], {
      cwd: repoRoot,
      stdio: "inherit",
      env: { ...process.env, NX_TUI: "false" }
    })
    nx.on("error", (error) => {
      console.error(`could not start nx: ${error.message}`)
      resolve(1)
    })
    nx.on("close", (code) => resolve(code ?? 1))
  })

// Mutation testing runs after everything else, not beside it: on a small machine it takes every
// core, and the end-to-end tests (real processes, real timeouts) would then starve. For the same
// reason the CLI's end-to-end files are not started beside the other projects' targets: tried,
// it saved minutes and made the load reach 30 on two cores, where the lease's timing tests (real
// processes, real grace periods) failed.
const first = targets.filter((target) => target !== "mutate")
const statuses = [first.length > 0 ? await runMany(first) : 0]
if (targets.includes("mutate")) statuses.push(await runMany(["mutate"]))
const nxStatus = statuses.find((status) => status !== 0) ?? 0

let passed = 0
let failed = 0
/** @type {string[]} */
const missing = []
if (targets.includes("test")) {
  for (const { name, dir } of projects) {
    if (!fs.existsSync(reportOf(dir))) {
      missing.push(name)
      continue
    }
    /** @type {{ numPassedTests?: number, numFailedTests?: number }} */
    const report = JSON.parse(fs.readFileSync(reportOf(dir), "utf8"))
    passed += report.numPassedTests ?? 0
    failed += report.numFailedTests ?? 0
  }
}

if (missing.length > 0) console.log(`no vitest report from ${missing.join(", ")}: their test task did not run to the end`)
console.log(`${passed} passed, ${failed} failed`)
process.exitCode = nxStatus !== 0 || failed > 0 || missing.length > 0 ? Math.max(nxStatus, 1) : 0
