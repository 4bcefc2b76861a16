/**
 * The runner process refuses what it cannot run before it touches anything: the bundled
 * `ratchet-runner` spawned with malformed arguments (no task, a task and `--any`, two tasks,
 * `--takeover` with `--any`, unknown options, hostile values) and a hostile environment
 * (`RATCHET_FAULT` naming no fault point), and outside any Ratchet project, exits 2 with a clear
 * message on stderr, or exactly one `{"type":"result","ok":false,...}` line on stdout with
 * `--json`; `--help` exits 0. Every spawn gets a `RATCHET_HOME` of its own in a temporary
 * directory and none of the caller's `RATCHET_*` or `GIT_*` variables; a refusal opens no store,
 * so that home is never even created.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

/** The `ratchet-runner` bin: it loads the bundle the global setup built. */
const bin = fileURLToPath(new URL("../bin/ratchet-runner.mjs", import.meta.url))

/** A temporary directory that is not a Ratchet project (nor inside one, nor inside git). */
const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-runner-main-")))
afterAll(() => fs.rmSync(outside, { recursive: true, force: true }))

let homes = 0

interface Result {
  readonly code: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly home: string
}

/**
 * Runs the runner with `args` in `cwd` (the temporary directory by default), with the caller's
 * environment stripped of `RATCHET_*` and `GIT_*`, `extra` added, and a fresh `RATCHET_HOME`.
 */
const runner = (args: ReadonlyArray<string>, extra: NodeJS.ProcessEnv = {}, cwd = outside): Promise<Result> => {
  const home = path.join(outside, `home-${++homes}`)
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("RATCHET_") && !key.startsWith("GIT_")) env[key] = value
  }
  Object.assign(env, { NO_COLOR: "1", GIT_CEILING_DIRECTORIES: path.dirname(outside), ...extra, RATCHET_HOME: home })
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.on("error", reject)
    child.on("close", (code, signal) =>
      resolve({ code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), home }))
  })
}

/** The one JSON line a `--json` refusal prints: exactly one line, a `result` that is not ok. */
const resultLine = (stdout: string) => {
  const lines = stdout.split("\n").filter((line) => line !== "")
  expect(lines, stdout).toHaveLength(1)
  const result = JSON.parse(lines[0] as string) as { type: unknown; ok: unknown; exitCode: unknown; error: { _tag: unknown; message: unknown } }
  expect(result).toMatchObject({ type: "result", ok: false, exitCode: 2 })
  expect(typeof result.error.message).toBe("string")
  return result
}

/** A refusal: exit 2, the message on stderr, nothing on stdout, no store opened. */
const refused = (result: Result, message: string | RegExp) => {
  expect(result.signal).toBeNull()
  expect(result.code, result.stderr).toBe(2)
  expect(result.stdout).toBe("")
  expect(result.stderr).toMatch(/^error: /)
  if (typeof message === "string") expect(result.stderr).toContain(message)
  else expect(result.stderr).toMatch(message)
  expect(result.stderr).not.toMatch(/\n\s+at /) // no stack trace
  expect(fs.existsSync(result.home)).toBe(false)
}

/** The same refusal with `--json`: exit 2, one result line, nothing on stderr, no store opened. */
const refusedJson = (result: Result, tag: string, message: string | RegExp) => {
  expect(result.code, result.stderr).toBe(2)
  expect(result.stderr).toBe("")
  const line = resultLine(result.stdout)
  expect(line.error._tag).toBe(tag)
  if (typeof message === "string") expect(line.error.message).toContain(message)
  else expect(line.error.message).toMatch(message)
  expect(fs.existsSync(result.home)).toBe(false)
}

const usage = "Usage: ratchet-runner <task>"
const oneTask = "give one task, or --any."

/** (case, arguments, what stderr says), by hand: each one is a usage error. */
const usageErrors: ReadonlyArray<readonly [string, ReadonlyArray<string>, string | RegExp]> = [
  ["no task and no --any", [], oneTask],
  ["a task and --any", ["t-1", "--any"], oneTask],
  ["--any and a task", ["--any", "t-1"], oneTask],
  ["two tasks", ["t-1", "t-2"], oneTask],
  ["two tasks and --any", ["t-1", "t-2", "--any"], oneTask],
  ["--takeover with --any", ["--any", "--takeover"], "--takeover names one task's lease; with --any use --takeover-expired."],
  ["only --takeover", ["--takeover"], oneTask],
  ["only --takeover-expired", ["--takeover-expired"], oneTask],
  ["an unknown option", ["t-1", "--bogus"], "Unknown option '--bogus'"],
  ["an unknown short option", ["t-1", "-x"], "Unknown option '-x'"],
  ["a value for a flag", ["t-1", "--takeover=yes"], "--takeover"],
  ["-C without a directory", ["t-1", "-C"], "-C"],
  ["an option that looks like --any", ["--anything"], "Unknown option '--anything'"],
  ["--help among garbage", ["--help", "--bogus"], "Unknown option '--bogus'"],
  ["an option with control characters", ["t-1", "--\u001b[31mred\u0007"], "Unknown option"],
  ["an unknown option of 100 kB", ["t-1", `--${"x".repeat(100_000)}`], "Unknown option"]
]

describe("ratchet-runner: usage errors exit 2", { timeout: 120_000 }, () => {
  it.each(usageErrors)("%s", async (_, args, message) => {
    const result = await runner(args)
    refused(result, message)
    expect(result.stderr).toContain(usage)
  })

  it.each(usageErrors)("%s, with --json: one result line", async (_, args, message) => {
    const result = await runner([...args, "--json"])
    refusedJson(result, "UsageError", message)
  })
})

describe("ratchet-runner: a hostile environment", { timeout: 120_000 }, () => {
  /** (case, RATCHET_FAULT), by hand: none names a fault point. */
  const faults: ReadonlyArray<readonly [string, string]> = [
    ["a word", "bogus"],
    ["a fault point in capitals", "CHILD-STARTED"],
    ["a fault point with a space", "child-started "],
    ["two fault points", "child-started,child-exited"],
    ["control characters", "\u001b[2J\u0007"],
    ["10 kB", "f".repeat(10_000)]
  ]

  it.each(faults)("RATCHET_FAULT=%s: exit 2 naming the fault points", async (_, fault) => {
    const result = await runner(["t-1"], { RATCHET_FAULT: fault })
    refused(result, "is not a fault point; use one of step-started,")
    // The value is quoted and cut short, never echoed whole.
    expect(result.stderr.length).toBeLessThan(1_000)
    expect(result.stderr).not.toContain("\u001b")
  })

  it("RATCHET_FAULT=bogus with --json: one result line", async () => {
    const result = await runner(["t-1", "--json"], { RATCHET_FAULT: "bogus" })
    refusedJson(result, "UsageError", "RATCHET_FAULT=\"bogus\" is not a fault point")
  })

  it("an empty RATCHET_FAULT is no fault: the run goes on to find no project", async () => {
    const result = await runner(["t-1"], { RATCHET_FAULT: "" })
    refused(result, "No Ratchet project")
  })
})

describe("ratchet-runner: outside a Ratchet project", { timeout: 120_000 }, () => {
  it("a task: exit 2, not a Ratchet project", async () => {
    const result = await runner(["t-1"])
    refused(result, `No Ratchet project in ${outside} or above it`)
    expect(result.stderr).toContain("ratchet init")
  })

  it("--no-color is an option (ratchet run passes it on): the run goes on to find no project", async () => {
    refused(await runner(["t-1", "--no-color"]), "No Ratchet project")
    refused(await runner(["--no-color", "--any"], { FORCE_COLOR: "1" }), "No Ratchet project")
  })

  it("--any: exit 2, not a Ratchet project", async () => {
    refused(await runner(["--any"]), "No Ratchet project")
    refused(await runner(["--any", "--takeover-expired"]), "No Ratchet project")
  })

  it("with --json: one result line naming the error", async () => {
    const result = await runner(["t-1", "--json"])
    refusedJson(result, "@ratchet/controller/ProjectNotInitialised", "No Ratchet project")
  })

  it("-C naming a directory that does not exist, or a file", async () => {
    refused(await runner(["t-1", "-C", path.join(outside, "missing")]), "No Ratchet project")
    const file = path.join(outside, "a-file")
    fs.writeFileSync(file, "not a directory\n")
    const result = await runner(["t-1", "-C", file])
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toMatch(/^error: /)
  })

  it("a hostile task id changes nothing: still not a project", async () => {
    for (const task of ["../../etc/passwd", "-- --any", "t\u0001x", "ü".repeat(1_000)]) {
      refused(await runner(["--", task]), "No Ratchet project")
    }
  })
})

describe("ratchet-runner --help", { timeout: 120_000 }, () => {
  it.each([["--help"], ["-h"], ["t-1", "--help"], ["--any", "--takeover", "--help"]])("%s exits 0 with the usage", async (...args) => {
    const result = await runner(args)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(usage)
    expect(result.stdout).toContain("ratchet-runner --any [--takeover-expired]")
    expect(result.stderr).toBe("")
    expect(fs.existsSync(result.home)).toBe(false)
  })
})
