/**
 * The fail-closed launcher (`bin/ratchet-hook`, ADR 0026) alone, run by `/bin/sh` as a host runs
 * it, in front of stand-in programs that behave each way Ratchet can fail: for every host and
 * event kind, a table written by hand says what the host must get. An answer the host takes is
 * passed on unchanged; anything else blocks a tool call in the host's own form (exit 2 with the
 * reason, or Claude Code's PermissionRequest deny) and warns on any other event (Claude Code's
 * `systemMessage`, Codex's exit 1). Never exit 0 without an answer on a tool call, never 127.
 *
 * The plugin's copy of the launcher is the same file, byte for byte.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { cliRoot } from "./harness.js"

const launcher = path.join(cliRoot, "bin", "ratchet-hook")
const pluginLauncher = path.resolve(cliRoot, "..", "..", "plugins", "claude-code", "bin", "ratchet-hook")

const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-launcher-")))
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }))

const deny = "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"Ratchet: no\"}}"

/** Stand-in programs, each one way a hook can answer or fail; they read their input first. */
const programs: Readonly<Record<string, string>> = {
  json: `cat >/dev/null; printf '%s\\n' '${deny}'`,
  silent: "cat >/dev/null",
  block: "cat >/dev/null; echo 'Ratchet blocked this call because it could not check it: the store is locked.' >&2; exit 2",
  silentBlock: "cat >/dev/null; exit 2",
  warn: "cat >/dev/null; echo 'Ratchet (warning): the store is locked' >&2; exit 1",
  text: "cat >/dev/null; echo 'Debugger attached.'",
  crash: "cat >/dev/null; echo 'Segmentation fault in sqlite' >&2; kill -SEGV $$",
  status3: "cat >/dev/null; exit 3",
  hang: "cat >/dev/null; exec sleep 30",
  echo: "cat; echo \" args:$*\" >&2"
}
const programFile = (name: string): string => {
  const file = path.join(directory, `${name}.sh`)
  if (!fs.existsSync(file)) fs.writeFileSync(file, `#!/bin/sh\n${programs[name]}\n`, { mode: 0o755 })
  return file
}

const run = (host: string, event: string, program: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  spawnSync("/bin/sh", ["-c", `/bin/sh '${launcher}' ${host} ${event} ${program.map((word) => `'${word}'`).join(" ")}`], {
    input: "{\"hook_event_name\":\"x\"}",
    encoding: "utf8",
    env: { PATH: "/usr/bin:/bin", HOME: directory, ...env },
    timeout: 20_000
  })

/** What the host must get: exit, standard output, standard error (a string: contained; a RegExp: matched). */
type Expected = readonly [exit: number, stdout: string | RegExp, stderr: string | RegExp]

const blocked = (what: RegExp): Expected => [2, "", what]
const claudeDenied = (what: RegExp): Expected => [0, new RegExp(`^\\{"hookSpecificOutput":\\{"hookEventName":"PermissionRequest","decision":\\{"behavior":"deny","message":"Ratchet blocked this call because its hook could not run: .*${what.source}`), ""]
const claudeWarned = (what: RegExp): Expected => [0, new RegExp(`^\\{"systemMessage":"Ratchet \\(warning\\): its hook could not run, so Ratchet did not see this PostToolUse: .*${what.source}`), ""]
const codexWarned = (what: RegExp): Expected => [1, "", new RegExp(`^Ratchet \\(warning\\): its hook could not run, so Ratchet did not see this PostToolUse: .*${what.source}`)]

// program → [Claude Code PreToolUse, Claude Code PermissionRequest, Claude Code PostToolUse, Codex PreToolUse, Codex PermissionRequest, Codex PostToolUse]
const table: ReadonlyArray<readonly [string, ReadonlyArray<Expected>]> = [
  ["json", [[0, deny, ""], [0, deny, ""], [0, deny, ""], [0, deny, ""], [0, deny, ""], [0, deny, ""]]],
  ["silent", [[0, "", ""], [0, "", ""], [0, "", ""], [0, "", ""], [0, "", ""], [0, "", ""]]],
  ["block", [
    [2, "", "the store is locked"],
    claudeDenied(/exited with status 2: Ratchet blocked this call because it could not check it/),
    claudeWarned(/exited with status 2/),
    [2, "", "the store is locked"],
    [2, "", "the store is locked"],
    codexWarned(/exited with status 2/)
  ]],
  ["silentBlock", [blocked(/exited with status 2\. /), claudeDenied(/exited with status 2\. /), claudeWarned(/exited with status 2/), blocked(/exited with status 2\. /), blocked(/exited with status 2\. /), codexWarned(/exited with status 2/)]],
  ["warn", [blocked(/exited with status 1: Ratchet \(warning\)/), claudeDenied(/exited with status 1/), [1, "", "Ratchet (warning): the store is locked"], blocked(/exited with status 1/), blocked(/exited with status 1/), [1, "", "Ratchet (warning): the store is locked"]]],
  ["text", [blocked(/answered with text that is not the host's JSON \(Debugger attached\.\)/), claudeDenied(/not the host's JSON/), claudeWarned(/not the host's JSON/), blocked(/not the host's JSON/), blocked(/not the host's JSON/), codexWarned(/not the host's JSON/)]],
  ["crash", [blocked(/was killed by signal 11: Segmentation fault in sqlite/), claudeDenied(/killed by signal 11/), claudeWarned(/killed by signal 11/), blocked(/killed by signal 11/), blocked(/killed by signal 11/), codexWarned(/killed by signal 11/)]],
  ["status3", [blocked(/exited with status 3\. /), claudeDenied(/exited with status 3/), claudeWarned(/exited with status 3/), blocked(/exited with status 3/), blocked(/exited with status 3/), codexWarned(/exited with status 3/)]],
  ["missing", [blocked(/missing\.sh is missing or not executable/), claudeDenied(/is missing or not executable/), claudeWarned(/is missing or not executable/), blocked(/is missing/), blocked(/is missing/), codexWarned(/is missing/)]]
]
const columns = [["claude-code", "PreToolUse"], ["claude-code", "PermissionRequest"], ["claude-code", "PostToolUse"], ["codex", "PreToolUse"], ["codex", "PermissionRequest"], ["codex", "PostToolUse"]] as const

const check = (result: ReturnType<typeof run>, [exit, stdout, stderr]: Expected) => {
  expect(result.status, result.stderr).toBe(exit)
  if (typeof stdout === "string") expect(result.stdout.trim()).toBe(stdout)
  else expect(result.stdout).toMatch(stdout)
  if (typeof stderr === "string") expect(result.stderr).toContain(stderr)
  else expect(result.stderr).toMatch(stderr)
  // What a host reads as JSON must be JSON.
  if (result.stdout !== "") JSON.parse(result.stdout)
}

describe("bin/ratchet-hook in front of a program", () => {
  describe.each(table)("a program that answers %s", (name, expected) => {
    it.each(columns.map(([host, event], index) => [host, event, expected[index]!] as const))("%s %s", (host, event, wanted) => {
      const program = name === "missing" ? path.join(directory, "missing.sh") : programFile(name)
      check(run(host, event, [program]), wanted)
    })
  })

  it("hands the program the payload and its own arguments, whatever PATH the host gives", () => {
    const result = run("codex", "PreToolUse", [programFile("echo"), "/opt/ratchet/dist/ratchet.mjs", "hook", "codex"], { PATH: "" })
    expect(result.stderr).toContain("the Ratchet CLI /opt/ratchet/dist/ratchet.mjs is missing")
    const passed = run("codex", "PreToolUse", [programFile("echo"), "hook", "codex"], { PATH: "" })
    expect([passed.status, passed.stdout, passed.stderr]).toEqual([0, "{\"hook_event_name\":\"x\"}", " args:hook codex\n"])
  })

  it("a tool call whose answer does not come in time is blocked (a host's own timeout lets it through)", () => {
    const result = run("claude-code", "PreToolUse", [programFile("hang")], { RATCHET_HOOK_DEADLINE: "1" })
    check(result, blocked(/did not answer within 1 s\. .*RATCHET_HOOK_DEADLINE/))
  })

  it("a deadline set at or past the hooks' 10 s timeout stops at 9 s: the host's timeout never comes first", () => {
    const result = run("claude-code", "PreToolUse", [programFile("hang")], { RATCHET_HOOK_DEADLINE: "30" })
    check(result, blocked(/did not answer within 9 s\. .*at most 9/))
  })

  it("names the fix: reinstalling points the hooks at the Ratchet installed now", () => {
    const result = run("codex", "PreToolUse", [path.join(directory, "gone", "node"), path.join(directory, "gone", "ratchet.mjs"), "hook", "codex"])
    expect(result.status).toBe(2)
    expect(result.stderr).toContain("Run ratchet hooks install codex again in a terminal (with --scope user if it was installed for your user)")
  })

  it("started without a host and an event (a hand-edited entry), blocks", () => {
    const result = spawnSync("/bin/sh", [launcher], { input: "{}", encoding: "utf8", env: { PATH: "/usr/bin:/bin" } })
    check(result, blocked(/started without a host and an event/))
  })

  it("without a program, runs ratchet from the host's PATH, and blocks with the install command when there is none", () => {
    const bin = path.join(directory, "bin")
    fs.mkdirSync(bin, { recursive: true })
    fs.copyFileSync(programFile("echo"), path.join(bin, "ratchet"))
    const found = run("claude-code", "PreToolUse", [], { PATH: bin })
    expect([found.status, found.stderr]).toEqual([0, " args:hook claude-code\n"])
    check(run("claude-code", "PreToolUse", [], { PATH: path.join(directory, "empty") }), blocked(/the ratchet command is not on the PATH Claude Code gives its hooks .*npm i -g @ratchet\/cli/))
    check(run("claude-code", "PermissionRequest", [], { PATH: path.join(directory, "empty") }), claudeDenied(/not on the PATH Claude Code gives its hooks/))
  })

  it("is the same file as the Claude Code plugin's copy", () => {
    expect(fs.readFileSync(pluginLauncher, "utf8"), "run npm run plugins:write").toBe(fs.readFileSync(launcher, "utf8"))
  })
})
