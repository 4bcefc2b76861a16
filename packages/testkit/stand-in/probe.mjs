/**
 * A probe for the REVISE loop's leak test (ADR 0041, amended): run as an agent (by the stand-in
 * host, `STAND_IN_PROBE`) or as a criterion's check (`node probe.mjs <label> <dir> <needles>`), it
 * reads `/proc/<pid>/environ` and `/proc/<pid>/cmdline` of every ancestor up to pid 1 and of every
 * process it can list, looks for the needles (the verifier's passphrase and its file's path, from a
 * JSON file only the test and this probe know), and writes what it found to `<dir>/<label>.json`.
 * As a check it also prints its parent's verifier variables, as an attacker's check would
 * (`tr '\0' '\n' < /proc/$PPID/environ`), so a leak would reach the evidence and the next prompt.
 * In the loop's sandbox (ADR 0043) it also reports what it reads of the files the needles file
 * lists under `files` (the verifier's key and passphrase files: empty there), and which files
 * under the directories it lists under `scan` hold the passphrase.
 *
 * As an agent, when the needles file sets `plantFilter` to a file's path, it also plants a git clean
 * filter in the workspace (`filter.probe.clean` in `.git/config`, chosen for every path by
 * `.git/info/attributes`) that appends the key and passphrase files to that file, and touches the
 * tracked files, so the next `git status` anyone runs there runs the filter. In the loop's sandbox
 * git's settings are read-only, so planting fails (the stand-in reports it in `plant-<attempt>.json`);
 * where it succeeds, the runner's own git must run the filter where those files read as empty
 * (ADR 0043's amendments). When the needles file also sets `escapeGit` to a directory, the agent
 * instead points git at settings of its own past those mounts ({@link escapeGit}): the loop must
 * then end BLOCKED on git's settings (ADR 0045).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const quoted = (text) => `'${text.replace(/'/g, "'\\''")}'`

/** Plants the clean filter described above in the git work tree around the current directory. */
export const plantFilter = (needles) => {
  const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim()
  const gitDir = execFileSync("git", ["rev-parse", "--absolute-git-dir"], { encoding: "utf8" }).trim()
  const sources = Object.values(needles.files ?? {}).map(quoted).join(" ")
  execFileSync("git", ["config", "filter.probe.clean", `cat ${sources} >> ${quoted(needles.plantFilter)} 2>/dev/null; cat`])
  fs.mkdirSync(path.join(gitDir, "info"), { recursive: true })
  fs.appendFileSync(path.join(gitDir, "info", "attributes"), "* filter=probe\n")
  const later = new Date(Date.now() + 2_000)
  for (const file of execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter((name) => name !== "")) {
    try {
      fs.utimesSync(path.join(root, file), later, later)
    } catch {
      // Gone or not ours: nothing to touch.
    }
  }
}

/**
 * Points git at settings of the agent's own, past the read-only mounts (ADR 0045): it first tries
 * to rename `.git` and make a new one from a copy (the loop's sandbox pins `.git`, so this fails
 * with EBUSY there); failing that, it copies the git directory to `needles.escapeGit` and writes a
 * `commondir` file into `.git` naming the copy. Either way the clean filter `plantFilter` describes
 * goes into the new settings, and the tracked files are touched. What happened is returned.
 */
export const escapeGit = (needles) => {
  const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim()
  const gitDir = execFileSync("git", ["rev-parse", "--absolute-git-dir"], { encoding: "utf8" }).trim()
  const sources = Object.values(needles.files ?? {}).map(quoted).join(" ")
  const filter = `cat ${sources} >> ${quoted(needles.plantFilter)} 2>/dev/null; cat`
  const plantIn = (settings) => {
    execFileSync("git", ["config", "--file", path.join(settings, "config"), "filter.probe.clean", filter])
    fs.mkdirSync(path.join(settings, "info"), { recursive: true })
    fs.appendFileSync(path.join(settings, "info", "attributes"), "* filter=probe\n")
  }
  const report = { renamed: false, renameError: null, commondir: false }
  try {
    fs.renameSync(gitDir, `${gitDir}-old`)
    report.renamed = true
    fs.cpSync(`${gitDir}-old`, gitDir, { recursive: true })
    plantIn(gitDir)
  } catch (error) {
    report.renameError = error?.code ?? String(error)
  }
  if (!report.renamed) {
    fs.cpSync(gitDir, needles.escapeGit, { recursive: true })
    plantIn(needles.escapeGit)
    fs.writeFileSync(path.join(gitDir, "commondir"), `${needles.escapeGit}\n`)
    report.commondir = true
  }
  const later = new Date(Date.now() + 2_000)
  for (const file of execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter((name) => name !== "")) {
    try {
      fs.utimesSync(path.join(root, file), later, later)
    } catch {
      // Gone or not ours: nothing to touch.
    }
  }
  return report
}

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
  const commands = []
  let environs = 0
  for (const pid of pids) {
    const environ = readText(`/proc/${pid}/environ`)
    const cmdline = readText(`/proc/${pid}/cmdline`) ?? ""
    commands.push(cmdline.replace(/\n/g, " ").slice(0, 300))
    if (environ !== null) environs += 1
    for (const [field, text] of [["environ", environ ?? ""], ["cmdline", cmdline]]) {
      for (const [name, needle] of Object.entries(needles)) {
        if (typeof needle === "string" && needle !== "" && text.includes(needle)) {
          // Where it was: the variable's name, or the argument's first characters (never the secret itself).
          const entry = text.split("\n").find((line) => line.includes(needle)) ?? ""
          const at = field === "environ" ? entry.split("=")[0] : entry.slice(0, 40)
          hits.push({ pid, field, needle: name, at, ancestor: ancestors.includes(pid), cmdline: cmdline.replace(/\n/g, " ").slice(0, 300) })
        }
      }
    }
  }
  const files = Object.fromEntries(Object.entries(needles.files ?? {}).map(([name, file]) => [name, readText(file)]))
  const found = []
  const walk = (dir, depth) => {
    let entries = []
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory() && depth < 12) walk(file, depth + 1)
      else if (entry.isFile()) {
        try {
          if (fs.statSync(file).size < 64 * 1024 * 1024 && fs.readFileSync(file).includes(needles.passphrase)) found.push(file)
        } catch {
          // Unreadable: nothing found there.
        }
      }
    }
  }
  for (const dir of needles.scan ?? []) walk(dir, 0)
  const report = {
    label,
    files,
    found,
    pid: process.pid,
    scanned: pids.size,
    commands,
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
