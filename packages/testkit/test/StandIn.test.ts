/**
 * The stand-in programs as the test kit ships them: where `StandIn` says they are, what each
 * `STAND_IN_STREAM` prints (the file `streamFile` names) and how the stand-in ends, the command
 * lines they refuse, and the shape check the adapters' tests hold their lines to, on a hand-written
 * table of accepted and rejected cases.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as StandIn from "../src/StandIn.js"

const argv = { claude: ["-p", "--verbose", "--output-format", "stream-json", "Add the flag."], codex: ["exec", "--json", "--sandbox", "workspace-write", "Add the flag."] }

const run = (host: "claude" | "codex", args: ReadonlyArray<string>, env: Record<string, string>) => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "stand-in-kit-"))
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("STAND_IN_")))
  const ran = spawnSync(StandIn[host], args, { cwd, env: { ...clean, ...env }, encoding: "utf8", timeout: 60_000 })
  fs.rmSync(cwd, { recursive: true, force: true })
  return ran
}

describe("StandIn", () => {
  it("names programs that exist and run as they are", () => {
    for (const file of [StandIn.claude, StandIn.codex, StandIn.probe]) expect(fs.existsSync(file)).toBe(true)
    for (const file of [StandIn.claude, StandIn.codex]) expect(fs.statSync(file).mode & 0o111).not.toBe(0)
  })

  // stream → exit code, signal
  const ends: ReadonlyArray<readonly [StandIn.Stream, number | null, string | null]> = [
    ["success", 0, null],
    ["error", 1, null],
    ["truncated", 0, null],
    ["crash", null, "SIGKILL"],
    ["garbage", 0, null]
  ]
  for (const host of ["claude", "codex"] as const) {
    it.each(ends)(`${host}, STAND_IN_STREAM=%s prints streamFile's stream and ends with %s / %s`, (name, status, signal) => {
      const ran = run(host, argv[host], { STAND_IN_STREAM: name })
      expect(ran.stdout).toBe(fs.readFileSync(StandIn.streamFile(host, name), "utf8"))
      expect([ran.status, ran.signal]).toEqual([status, signal])
    })
  }

  // host, command line → exit code: what the real host would not run headless is refused
  const refused: ReadonlyArray<readonly ["claude" | "codex", ReadonlyArray<string>, number]> = [
    ["claude", ["--output-format", "stream-json", "--verbose", "x"], 1],
    ["claude", ["-p", "--output-format", "stream-json", "x"], 1],
    ["claude", ["-p", "--verbose", "x"], 1],
    ["codex", ["exec", "x"], 2],
    ["codex", ["exec", "--json", "--sandbox", "read-only", "x"], 2],
    ["codex", ["exec", "--json", "--sandbox", "workspace-write", "--full-auto", "x"], 2],
    ["codex", ["exec", "--json", "--sandbox", "workspace-write", "--dangerously-bypass-approvals-and-sandbox", "x"], 2]
  ]
  it.each(refused)("%s %j is refused with exit %s, before any stream", (host, args, status) => {
    const ran = run(host, args, { STAND_IN_STREAM: "success" })
    expect([ran.status, ran.stdout]).toEqual([status, ""])
  })

  it("claude makes STAND_IN_TOOLS' calls through its settings' hooks and logs each answer with its wall time", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stand-in-hooks-"))
    const hookLog = path.join(dir, "hooks.ndjson")
    const tools = path.join(dir, "tools.json")
    fs.writeFileSync(tools, JSON.stringify([{ tool: "Write", input: { file_path: "a.txt", content: "a\n" } }]))
    const hook = { type: "command", command: "cat >/dev/null; echo no >&2; exit 2" }
    const settings = JSON.stringify({ hooks: { PreToolUse: [{ matcher: "Write", hooks: [hook] }] } })
    const ran = run("claude", [...argv.claude.slice(0, -1), "--settings", settings, "Add the flag."], { STAND_IN_STREAM: "success", STAND_IN_TOOLS: tools, STAND_IN_HOOK_LOG: hookLog })
    const logged = fs.existsSync(hookLog) ? fs.readFileSync(hookLog, "utf8").trim().split("\n").map((line) => JSON.parse(line)) : []
    fs.rmSync(dir, { recursive: true, force: true })
    expect(ran.status, ran.stderr).toBe(0)
    expect(logged).toHaveLength(1)
    expect(logged[0]).toMatchObject({ event: "PreToolUse", status: 2, stdout: "", stderr: "no\n" })
    expect(Object.keys(logged[0]).sort()).toEqual(["event", "id", "ms", "status", "stderr", "stdout"])
    expect(Number.isSafeInteger(logged[0].ms) && logged[0].ms >= 0).toBe(true)
  })

  it("refuses a stream it does not know", () => {
    const ran = run("claude", argv.claude, { STAND_IN_STREAM: "sometimes" })
    expect([ran.status, ran.stdout]).toEqual([2, ""])
    expect(ran.stderr).toContain("success, error, truncated, crash, garbage")
  })

  // actual, sample → whether it has the sample's shape
  const shapes: ReadonlyArray<readonly [unknown, unknown, boolean]> = [
    [{ a: 1, b: [{ c: "x" }] }, { a: 2, b: [{ c: "y" }] }, true],
    [{ a: 1 }, { a: 1, b: null }, false],
    [{ a: 1, b: null }, { a: 1 }, false],
    [{ a: "1" }, { a: 1 }, false],
    [{ a: null }, { a: "x" }, false],
    [{ a: null }, { a: null }, true],
    [[{ c: 1 }, { d: "x" }], [{ d: "y" }, { c: 2 }], true],
    [[{ e: 1 }], [{ c: 1 }], false],
    [[1], [], false],
    [[], [1], true],
    [{ a: { b: { c: true } } }, { a: { b: { c: false } } }, true],
    [{ a: { b: { c: "true" } } }, { a: { b: { c: false } } }, false]
  ]
  it.each(shapes)("shapeMismatch(%j, %j) is null: %s", (actual, sample, fits) => {
    expect(StandIn.shapeMismatch(actual, sample) === null).toBe(fits)
  })

  it("sameShape takes a line of any sample's shape, and none without a sample", () => {
    expect(StandIn.sameShape({ a: 1 }, [{ b: 1 }, { a: 2 }])).toBeNull()
    expect(StandIn.sameShape({ a: 1 }, [{ b: 1 }])).toBe("$: unexpected a, missing b")
    expect(StandIn.sameShape({ a: 1 }, [])).toBe("no golden line of this kind")
  })
})
