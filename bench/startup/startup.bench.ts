/**
 * Start-up: what a `ratchet` command costs as the host runs it, one cold process per operation.
 *
 * The world is a real project: a git repository, `RATCHET_HOME` in a temporary directory (the
 * SQLite store), `ratchet init`, and one task created with `ratchet task create`, so it is
 * INTERVIEWING. The Claude Code `PreToolUse` payload of an `Edit` (the adapter's test fixture, its
 * `cwd` and `file_path` rewritten into the repository) is then denied after the hook reads the task
 * from the store, which is the decision a host waits for before every tool call. The hook writes
 * nothing in that state, so every operation finds the same store.
 *
 * Pairs, each operation one spawned process waited to exit (`ratchet` through its bin, which loads
 * the bundle `apps/cli/build.mjs` builds; the suite builds it first, so the figures are of the
 * current source):
 * - `ratchet hook claude-code` (PreToolUse) vs a plain script that opens the same database with
 *   better-sqlite3 and reads one row (the task's summary) and prints its state: target ≤ 2×,
 *   stretch 1.5×;
 * - the hook vs `node -e 0`, the floor of any Node.js process (informational);
 * - `ratchet status --json` vs the same plain script (informational).
 *
 * "Cold" is the process: nothing is kept between operations but the operating system's file cache,
 * which is warm for both sides alike. Peak memory (maximum resident set size) of each command is
 * measured in runs of its own through GNU time (see processes.ts) and reported with the facts.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Pair, Prepared, Skipped, Suite } from "../lib/Pair.js"
import { cleanEnv, type Command, gitRepository, mebibytes, peakKiB, run, runOk } from "./processes.js"

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))
const cliBin = path.join(repositoryRoot, "apps", "cli", "bin", "ratchet.mjs")
const fixture = path.join(repositoryRoot, "packages", "host-claude-code", "test", "fixtures", "PreToolUse.Edit.json")

/** The plain script: open the store's file with better-sqlite3, read the task's summary row, print its state. */
const plainScript = (driver: string): string => `import { createRequire } from "node:module"
const require = createRequire(import.meta.url)
const Database = require(${JSON.stringify(driver)})
const db = new Database(process.argv[2])
const row = db.prepare("SELECT state, summary FROM ratchet_task_summaries WHERE project_id = ? AND branch = 'main' LIMIT 1").get(process.argv[3])
db.close()
process.stdout.write(JSON.stringify({ state: row === undefined ? null : JSON.parse(row.summary).state ?? row.state }) + "\\n")
`

/** Runs `command` `operations` times, one after another, each to its exit; fails on a non-zero exit. */
const side = (command: Command) => async (_round: number, operations: number) => {
  for (let i = 0; i < operations; i++) {
    const ran = await run(command)
    if (ran.code !== 0) throw new Error(`${path.basename(command.args[0] ?? command.file)} exited ${ran.code}: ${ran.stderr.slice(0, 500)}`)
  }
}

const bytes = (files: ReadonlyArray<string>): string =>
  `${(files.reduce((sum, file) => sum + fs.statSync(file).size, 0) / 1024).toFixed(0)} KiB`

/** The bundle files the entry loads at start-up: itself and the chunks it imports statically. */
const staticallyLoaded = (entry: string): ReadonlyArray<string> => {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file)) return
    seen.add(file)
    const text = fs.readFileSync(file, "utf8")
    for (const match of text.matchAll(/^(?:import|export)\s[^;]*?from\s*"(\.\/[^"]+)"/gm)) visit(path.join(path.dirname(file), match[1]!))
    for (const match of text.matchAll(/^import\s*"(\.\/[^"]+)"/gm)) visit(path.join(path.dirname(file), match[1]!))
  }
  visit(entry)
  return [...seen]
}

/** @see the module comment */
export const suite: Suite = {
  name: "Start-up",
  prepare: async (): Promise<Prepared | Skipped> => {
    // Nothing to build or measure when run.ts's filter (its arguments) keeps none of these pairs.
    const filters = process.argv.slice(2)
    const ids = ["startup/hook-pretooluse", "startup/hook-vs-node", "startup/status-json"]
    if (filters.length > 0 && !filters.some((filter) => ids.some((id) => id.includes(filter)))) {
      return { _tag: "Skipped", reason: "no pair of this suite matches the filter" }
    }
    const env = cleanEnv()
    await runOk({ file: process.execPath, args: [path.join(repositoryRoot, "apps", "cli", "build.mjs")], cwd: repositoryRoot, env })

    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-bench-startup-")))
    const close = () => Promise.resolve(fs.rmSync(root, { recursive: true, force: true }))
    try {
      const repo = path.join(root, "repo")
      const home = path.join(root, "home")
      fs.mkdirSync(home)
      await gitRepository(repo, env, {
        "README.md": "# A repository for the start-up benchmark\n",
        "src/math.ts": "export function sub(a: number, b: number): number {\n  return a + b;\n}\n"
      })
      const worldEnv: NodeJS.ProcessEnv = { ...env, RATCHET_HOME: home }
      const ratchet = (args: ReadonlyArray<string>, input?: string): Command => ({
        file: process.execPath,
        args: [cliBin, ...args],
        cwd: repo,
        env: worldEnv,
        input
      })
      const init = JSON.parse((await runOk(ratchet(["init", "--json"]))).stdout) as { projectId: string }
      const created = JSON.parse((await runOk(ratchet(["task", "create", "--goal", "Fix sub: it adds instead of subtracting", "--json"]))).stdout) as {
        taskId: string
        state: string
      }

      const payload = fs.readFileSync(fixture, "utf8").replaceAll("/home/dev/project", repo)
      const hook = ratchet(["hook", "claude-code"], payload)
      const status = ratchet(["status", "--json"])
      const scriptFile = path.join(root, "plain-read.mjs")
      fs.writeFileSync(scriptFile, plainScript(createRequire(import.meta.url).resolve("better-sqlite3")))
      const database = path.join(home, "ratchet.db")
      const plain: Command = { file: process.execPath, args: [scriptFile, database, init.projectId], cwd: repo, env: worldEnv }
      const nodeFloor: Command = { file: process.execPath, args: ["-e", "0"], cwd: repo, env: worldEnv }

      // What each side does, checked once before anything is timed.
      const answered = (await runOk(hook)).stdout
      const decision = (JSON.parse(answered) as { hookSpecificOutput?: { permissionDecision?: string } }).hookSpecificOutput?.permissionDecision
      if (decision !== "deny") throw new Error(`the hook was expected to deny the Edit of an INTERVIEWING task; it answered ${answered.slice(0, 300)}`)
      const read = JSON.parse((await runOk(plain)).stdout) as { state: string | null }
      if (read.state !== created.state) throw new Error(`the plain script read state ${read.state}, expected ${created.state}`)
      const listed = JSON.parse((await runOk(status)).stdout) as { tasks: ReadonlyArray<{ taskId: string }> }
      if (listed.tasks.length !== 1 || listed.tasks[0]?.taskId !== created.taskId) throw new Error("ratchet status --json did not list the one task")

      const entry = path.join(repositoryRoot, "apps", "cli", "dist", "ratchet.mjs")
      const loaded = staticallyLoaded(entry)
      const memoryRuns = 5
      const facts: Record<string, string> = {
        "task": `${created.state}; the hook answers ${decision} (PreToolUse, Edit)`,
        "bundle parsed at start-up": `${bytes(loaded)} in ${loaded.length} file${loaded.length === 1 ? "" : "s"}`,
        "peak memory (max RSS, median of 5), hook PreToolUse": mebibytes(await peakKiB(hook, memoryRuns)),
        "peak memory, ratchet status --json": mebibytes(await peakKiB(status, memoryRuns)),
        "peak memory, plain better-sqlite3 script": mebibytes(await peakKiB(plain, memoryRuns)),
        "peak memory, node -e 0": mebibytes(await peakKiB(nodeFloor, memoryRuns))
      }

      const informational = { target: Number.POSITIVE_INFINITY, targetText: "(informational)" }
      const pairs: ReadonlyArray<Pair> = [
        {
          id: "startup/hook-pretooluse",
          operation: "ratchet hook claude-code (PreToolUse, deny), one process",
          ours: side(hook),
          raw: side(plain),
          baseline: "plain better-sqlite3",
          operationsPerRound: 5,
          eventsPerOperation: 1,
          target: 2,
          targetText: "≤ 2× (stretch 1.5×)"
        },
        {
          id: "startup/hook-vs-node",
          operation: "ratchet hook claude-code (PreToolUse, deny), one process",
          ours: side(hook),
          raw: side(nodeFloor),
          baseline: "node -e 0",
          operationsPerRound: 5,
          eventsPerOperation: 1,
          ...informational
        },
        {
          id: "startup/status-json",
          operation: "ratchet status --json, one process",
          ours: side(status),
          raw: side(plain),
          baseline: "plain better-sqlite3",
          operationsPerRound: 5,
          eventsPerOperation: 1,
          ...informational
        }
      ]
      return { _tag: "Prepared", pairs, facts, close }
    } catch (error) {
      await close()
      throw error
    }
  }
}
