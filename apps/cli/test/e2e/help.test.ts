/**
 * Scenario 10: `--help` on every command exits 0 with its usage and an example, and
 * `ratchet --help` lists every command. Help opens no store and needs no project. It is wrapped to
 * the terminal: COLUMNS, else the terminal's width, else 80, and no line is wider than that but one
 * holding a single word that cannot be broken.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as Help from "../../src/Help.js"
import { bin, cliRoot, exec, execTty, mapLimit } from "./harness.js"

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
  [["ui"], "ui"],
  [["digest"], "digest <file>"],
  [["version"], "version"],
  [["completion"], "completion bash|zsh|fish"]
]

const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-e2e-help-")))
afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }))

const helpEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", RATCHET_HOME: path.join(cwd, "home"), ...extra }
  delete env["RATCHET_DATABASE_URL"]
  // The width comes from what each test sets, not from the shell the tests were started in.
  if (!("COLUMNS" in extra)) delete env["COLUMNS"]
  return env
}

const ratchet = (args: ReadonlyArray<string>, extra: Record<string, string> = {}) => exec(process.execPath, [bin, ...args], { cwd, env: helpEnv(extra) })

/** The lines wider than `width` that are not one unbreakable word (an example's quoted text, a path). */
const overlong = (text: string, width: number): ReadonlyArray<string> =>
  text.split("\n").filter((line) => {
    if ([...line].length <= width) return false
    const words = line.trim().replace(/^\$ /, "").replace(/ \\$/, "").match(/(?:"[^"]*"|'[^']*'|[^\s"'])+/g) ?? []
    return words.length > 1
  })

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

  it("ratchet --version, -v, -V and version print the package version and the commit it was built from", async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(cliRoot, "package.json"), "utf8")) as { version: string }
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: cliRoot, encoding: "utf8" }).trim()
    const results = await mapLimit([["--version"], ["-v"], ["-V"], ["version"]], 4, (args) => ratchet(args))
    for (const result of results) {
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" })
      // The bundle the global setup built in this checkout: stamped with its HEAD.
      expect(result.stdout).toMatch(new RegExp(`^ratchet ${version.replace(/\./g, "\\.")} \\(${head}(-dirty)?\\)\n$`))
      expect(result.stdout).toBe(results[0]?.stdout)
    }
    const commit = /\((.+)\)/.exec(results[0]?.stdout ?? "")?.[1]
    for (const args of [["version", "--json"], ["--version", "--json"]]) {
      const json = await ratchet(args)
      expect(json.code).toBe(0)
      expect(json.json).toEqual({ ok: true, command: "version", exitCode: 0, version, commit })
    }
    const help = await ratchet(["--help"])
    expect(help.stdout).toContain("ratchet --version | -v")
    expect(fs.readdirSync(cwd)).toEqual([])
  })

  // Every help's wrapping at 80, 60 and 40 columns is tested in process (test/Help.test.ts); here,
  // that the bin reads COLUMNS, for the main help, a group's and three commands'.
  const sampled = [["--help"], ["help", Help.groups[0]!], ["run", "--help"], ["approver", "init", "--help"], ["approve", "--help"]]
  it("10. help is wrapped to COLUMNS (80 and 60 here), and to 80 in a pipe without it", async () => {
    for (const width of [80, 60]) {
      const results = await mapLimit(sampled, 4, (args) => ratchet(args, { COLUMNS: String(width) }))
      for (const [index, args] of sampled.entries()) {
        const result = results[index] as (typeof results)[number]
        expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" })
        expect(overlong(result.stdout, width), `${args.join(" ")} at ${width} columns`).toEqual([])
        // Wrapped, not merely short: a paragraph fills the lines it takes.
        expect(Math.max(...result.stdout.split("\n").map((line) => [...line].length)), args.join(" ")).toBeGreaterThan(width - 15)
      }
    }
    // In a pipe, without COLUMNS (or with one that makes no sense), 80.
    const at80 = await ratchet(["--help"], { COLUMNS: "80" })
    for (const columns of [undefined, "", "abc", "5", "100000"]) {
      const piped = await ratchet(["--help"], columns === undefined ? {} : { COLUMNS: columns })
      expect(piped.stdout, `COLUMNS=${String(columns)}`).toBe(at80.stdout)
    }
    expect(overlong(at80.stdout, 80)).toEqual([])
    expect(at80.stdout).not.toBe((await ratchet(["--help"], { COLUMNS: "60" })).stdout)
  })

  it("10. on a terminal, help is wrapped to the terminal's width", async () => {
    const at = async (cols: number) => {
      const shown = await execTty(`stty cols ${cols} rows 50; ${[process.execPath, bin, "hooks", "install", "--help"].map((w) => `'${w}'`).join(" ")}`, {
        cwd,
        env: helpEnv({ TERM: "xterm" }),
        input: ""
      })
      expect(shown.code).toBe(0)
      return shown.stdout.replace(/\r\n/g, "\n")
    }
    const [narrow, wide] = [await at(64), await at(100)]
    expect(narrow).toBe(`${(await ratchet(["hooks", "install", "--help"], { COLUMNS: "64" })).stdout}`)
    expect(wide).toBe(`${(await ratchet(["hooks", "install", "--help"], { COLUMNS: "100" })).stdout}`)
  })
})
