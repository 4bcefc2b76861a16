/**
 * Scenario 10: `--help` on every command exits 0 with its usage and an example, and
 * `ratchet --help` lists every command. Help opens no store and needs no project.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { bin, exec, mapLimit } from "./harness.js"

/**
 * Every command as typed, and how its synopsis begins in `ratchet --help` and in its own help
 * (`brief` verbs take the task first); written by hand.
 */
const commands: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
  [["init"], "init"],
  [["task", "create"], "task create --goal <text>"],
  [["task", "list"], "task list"],
  [["status"], "status [<task>]"],
  [["brief", "ask"], "brief <task> ask <text>"],
  [["brief", "answer"], "brief <task> answer <questionId> <text>"],
  [["brief", "restate"], "brief <task> restate <sentence>"],
  [["brief", "close"], "brief <task> close"],
  [["spec"], "spec <task> --file <spec.md>"],
  [["plan"], "plan <task> --file <plan.yaml>"],
  [["approve"], "approve <task> restatement|spec|plan"],
  [["preflight"], "preflight <task>"],
  [["pause"], "pause <task>"],
  [["resume"], "resume <task>"],
  [["cancel"], "cancel <task> --reason <text>"],
  [["reopen"], "reopen <task> --reason <text>"],
  [["unblock"], "unblock <task> --to RUNNING|VERIFYING"],
  [["gate"], "gate <task>"],
  [["log"], "log <task>"],
  [["lease", "show"], "lease show <task>"],
  [["lease", "acquire"], "lease acquire <task>"],
  [["lease", "heartbeat"], "lease heartbeat <task> --epoch <n>"],
  [["lease", "release"], "lease release <task> --epoch <n>"],
  [["lease", "takeover"], "lease takeover <task>"],
  [["digest"], "digest <file>"]
]

const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-e2e-help-")))
afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }))

const ratchet = (args: ReadonlyArray<string>) => {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", RATCHET_HOME: path.join(cwd, "home") }
  delete env["RATCHET_DATABASE_URL"]
  return exec(process.execPath, [bin, ...args], { cwd, env })
}

describe("help", { timeout: 120_000 }, () => {
  it("10. ratchet --help lists every command", async () => {
    const main = await ratchet(["--help"])
    expect(main.code).toBe(0)
    expect(main.stdout).toContain("Usage: ratchet <command>")
    const lines = main.stdout.split("\n")
    for (const [, synopsis] of commands) {
      expect(lines.filter((line) => line.startsWith(`  ${synopsis}`)), synopsis).toHaveLength(1)
    }
    expect(fs.readdirSync(cwd)).toEqual([])
  })

  it("10. --help on every command exits 0 with its usage and an example, and opens nothing", async () => {
    const results = await mapLimit(commands, 4, ([words]) => ratchet([...words, "--help"]))
    for (const [index, [words, synopsis]] of commands.entries()) {
      const result = results[index] as (typeof results)[number]
      expect({ command: words.join(" "), code: result.code, stderr: result.stderr }).toEqual({ command: words.join(" "), code: 0, stderr: "" })
      expect(result.stdout).toContain("Usage:")
      expect(result.stdout).toContain(`ratchet ${synopsis}`)
      expect(result.stdout).toContain("Example")
      expect(result.stdout).toContain("$ ratchet ")
    }
    // the task-first form of a brief verb, and -h, are help too
    const taskFirst = await ratchet(["brief", "t-3f9a1c2b", "answer", "-h"])
    expect(taskFirst.code).toBe(0)
    expect(taskFirst.stdout).toContain("Usage: ratchet brief <task> answer")
    expect(fs.readdirSync(cwd)).toEqual([])
  })
})
