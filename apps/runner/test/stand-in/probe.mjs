/**
 * A probe for the REVISE loop's leak test (ADR 0041, amended): run as an agent (by the stand-in
 * host, `STAND_IN_PROBE`) or as a criterion's check (`node probe.mjs <label> <dir> <needles>`), it
 * reads `/proc/<pid>/environ` and `/proc/<pid>/cmdline` of every ancestor up to pid 1 and of every
 * process it can list, looks for the needles (the verifier's passphrase and its file's path, from a
 * JSON file only the test and this probe know), and writes what it found to `<dir>/<label>.json`.
 * As a check it also prints its parent's verifier variables, as an attacker's check would
 * (`tr '\0' '\n' < /proc/$PPID/environ`), so a leak would reach the evidence and the next prompt.
 */
import * as fs from "node:fs"
import * as path from "node:path"

const parentOf = (pid) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return 0
  }
}

const readText = (file) => {
  try {
    return fs.readFileSync(file).toString("utf8").replace(/\0/g, "\n")
  } catch {
    return null
  }
}

export const probe = (label, dir, needlesFile) => {
  const needles = JSON.parse(fs.readFileSync(needlesFile, "utf8"))
  const ancestors = []
  for (let pid = process.pid; pid > 1; pid = parentOf(pid)) ancestors.push(pid)
  ancestors.push(1)
  const pids = new Set([...ancestors, ...fs.readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name)).map(Number)])
  const hits = []
  let environs = 0
  for (const pid of pids) {
    const environ = readText(`/proc/${pid}/environ`)
    const cmdline = readText(`/proc/${pid}/cmdline`) ?? ""
    if (environ !== null) environs += 1
    for (const [field, text] of [["environ", environ ?? ""], ["cmdline", cmdline]]) {
      for (const [name, needle] of Object.entries(needles)) {
        if (needle !== "" && text.includes(needle)) {
          hits.push({ pid, field, needle: name, ancestor: ancestors.includes(pid), cmdline: cmdline.replace(/\n/g, " ").slice(0, 300) })
        }
      }
    }
  }
  const report = {
    label,
    pid: process.pid,
    scanned: pids.size,
    environs,
    ancestors: ancestors.map((pid) => ({ pid, cmdline: (readText(`/proc/${pid}/cmdline`) ?? "").replace(/\n/g, " ").slice(0, 300) })),
    hits
  }
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, `${label}.json`), JSON.stringify(report, null, 2))
  return report
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const [label, dir, needles] = process.argv.slice(2)
  const report = probe(label, dir, needles)
  process.stdout.write(`probe ${label}: ${report.scanned} processes, ${report.environs} environments read\n`)
  const parent = readText(`/proc/${process.ppid}/environ`) ?? ""
  for (const line of parent.split("\n")) if (line.includes("VERIFIER")) process.stdout.write(`${line}\n`)
}
