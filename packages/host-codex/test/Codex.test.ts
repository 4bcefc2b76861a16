/**
 * The Codex adapter against Codex's documented payloads (test/fixtures, field for field from the
 * hooks schema): every fixture decodes to the event written here by hand; apply_patch's files are
 * read from the patch; replies use only Codex's documented shapes (an ask is a denial); bad input
 * fails on the field named; failures block tool calls and fail open elsewhere; our hooks.json
 * entries install and uninstall without touching anyone else's.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Codex from "../src/Codex.js"
import * as Settings from "../src/Settings.js"

const fixtures = path.join(import.meta.dirname, "fixtures")
const fixture = (file: string): string => fs.readFileSync(path.join(fixtures, file), "utf8")
const decode = (raw: string) => Effect.runSync(Effect.either(Codex.decode(raw)))
const event = (file: string) => Either.getOrThrow(decode(fixture(file)))

// Written by hand: what each fixture must decode to.
const expected: Readonly<Record<string, string>> = {
  "SessionStart.startup.json": "SessionStarted",
  "SessionStart.resume.json": "SessionStarted",
  "SessionStart.compact.json": "SessionStarted",
  "UserPromptSubmit.basic.json": "PromptSubmitted",
  "PreToolUse.bash-npm-test.json": "ToolCallRequested:Shell",
  "PreToolUse.bash-ratchet-approve.json": "ToolCallRequested:Shell",
  "PreToolUse.apply_patch.json": "ToolCallRequested:Write",
  "PermissionRequest.bash.json": "ToolCallRequested:Shell",
  "PermissionRequest.apply_patch.json": "ToolCallRequested:Write",
  "PostToolUse.bash-npm-test.json": "ToolCallCompleted:Shell",
  "PostToolUse.apply_patch.json": "ToolCallCompleted:Write",
  "Stop.first.json": "StopRequested",
  "Stop.continued.json": "StopRequested",
  "Stop.no-message.json": "StopRequested",
  "SubagentStop.first.json": "StopRequested",
  "SessionEnd.other.json": "SessionEnded"
}

const summary = (decoded: { readonly _tag: string; readonly call?: { readonly action: { readonly _tag: string } } }): string =>
  decoded.call === undefined ? decoded._tag : `${decoded._tag}:${decoded.call.action._tag}`

describe("Codex.decode: the documented payloads", () => {
  const files = fs.readdirSync(fixtures).filter((file) => file.endsWith(".json")).sort()
  it("has a fixture for every event Ratchet acts on", () => {
    for (const file of Object.keys(expected)) expect(files).toContain(file)
  })
  for (const file of files) {
    const want = expected[file] ?? "Passthrough"
    it(`${file} decodes to ${want}`, () => {
      const decoded = event(file)
      expect(summary(decoded)).toBe(want)
      const raw = JSON.parse(fixture(file)) as { session_id: string; cwd: string }
      expect(decoded.session).toEqual({ host: "codex", sessionId: raw.session_id, cwd: raw.cwd })
    })
  }
  it("reads the fields that matter", () => {
    expect(event("PreToolUse.apply_patch.json")).toMatchObject({ call: { tool: "apply_patch", id: "call_Bd4gF7hJ1kLz9xCv2nMq6WsE", action: { _tag: "Write", paths: ["src/index.ts"] } } })
    expect(event("PreToolUse.bash-ratchet-approve.json")).toMatchObject({ call: { action: { _tag: "Shell", command: expect.stringContaining("ratchet approve") } } })
    expect(event("PermissionRequest.bash.json")).toMatchObject({ permissionPrompt: true, call: { id: null } })
    expect(event("Stop.continued.json")).toMatchObject({ continuing: true })
    expect(event("Stop.first.json")).toMatchObject({ continuing: false })
    expect(event("SubagentStop.first.json")).toMatchObject({ subagent: true })
  })
})

describe("Codex.patchedFiles", () => {
  it("reads every file a patch adds, updates, deletes or moves to, once each", () => {
    const patch = [
      "*** Begin Patch",
      "*** Add File: src/new.ts",
      "+export {}",
      "*** Update File: src/a.ts",
      "*** Move to: lib/a.ts",
      "@@",
      "-x",
      "+y",
      "*** Delete File: src/old.ts",
      "*** Update File: src/a.ts",
      "*** End Patch"
    ].join("\n")
    expect(Codex.patchedFiles(patch)).toEqual(["src/new.ts", "src/a.ts", "lib/a.ts", "src/old.ts"])
    expect(Codex.patchedFiles("+*** Add File: not-a-header.ts\n")).toEqual([])
    expect(Codex.patchedFiles("*** Begin Patch\r\n*** Update File: crlf.ts\r\n*** End Patch\r\n")).toEqual(["crlf.ts"])
  })
})

describe("Codex.decode: bad input", () => {
  const base = JSON.parse(fixture("PreToolUse.apply_patch.json")) as Record<string, unknown>
  const cases: ReadonlyArray<readonly [string, string, string, string | null]> = [
    ["empty", "", "(payload)", null],
    ["truncated", fixture("PreToolUse.apply_patch.json").slice(0, 90), "(payload)", null],
    ["not an object", "[]", "(payload)", null],
    ["no event name", JSON.stringify({ ...base, hook_event_name: undefined }), "hook_event_name", null],
    ["no cwd", JSON.stringify({ ...base, cwd: 3 }), "cwd", "PreToolUse"],
    ["a patch that names no file", JSON.stringify({ ...base, tool_input: { command: "*** Begin Patch\n*** End Patch\n" } }), "tool_input.command", "PreToolUse"],
    ["a patch that is not text", JSON.stringify({ ...base, tool_input: { command: { patch: 1 } } }), "tool_input.command", "PreToolUse"],
    ["tool input missing", JSON.stringify({ ...base, tool_input: undefined }), "tool_input", "PreToolUse"]
  ]
  for (const [name, raw, field, eventName] of cases) {
    it(`${name}: fails on ${field}`, () => {
      const decoded = decode(raw)
      expect(Either.isLeft(decoded) ? { host: decoded.left.host, field: decoded.left.field, event: decoded.left.event } : decoded.right).toEqual({ host: "codex", field, event: eventName })
    })
  }
  it("never throws, whatever the bytes", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue().map((value) => JSON.stringify({ hook_event_name: "PreToolUse", session_id: "s", cwd: "/w", tool_name: "apply_patch", tool_input: value }))), (raw) => {
        const decoded = decode(raw)
        return Either.isLeft(decoded) || typeof decoded.right._tag === "string"
      }),
      { numRuns: 1000 }
    )
  })
})

describe("Codex.reply and failure", () => {
  const deny = { _tag: "Deny", reason: "no.", fix: "ask the user." } as const
  const ask = { _tag: "Ask", reason: "rm -rf build deletes without asking. Allow it?" } as const
  it("PreToolUse: a denial (and an ask, which Codex cannot show) is permissionDecision deny with the reason; allow prints nothing", () => {
    const pre = event("PreToolUse.bash-npm-test.json")
    expect(JSON.parse(Codex.reply(pre, deny).stdout)).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Ratchet: no. ask the user." } })
    expect(JSON.parse(Codex.reply(pre, ask).stdout).hookSpecificOutput.permissionDecision).toBe("deny")
    expect(Codex.reply(pre, { _tag: "Allow" })).toEqual({ stdout: "", stderr: "", exitCode: 0 })
    expect(Codex.adapter.canAsk).toBe(false)
  })
  it("SessionStart and UserPromptSubmit carry the lessons as hookSpecificOutput.additionalContext (its two keys only), and only they do", () => {
    const lessons = "Ratchet: lessons …\n- [L-1, verified] Count rows after the header."
    for (const [file, hookEventName] of [["SessionStart.startup.json", "SessionStart"], ["SessionStart.resume.json", "SessionStart"], ["UserPromptSubmit.basic.json", "UserPromptSubmit"]]) {
      const reply = Codex.reply(event(file!), { _tag: "Allow" }, lessons)
      expect(reply.exitCode).toBe(0)
      expect(JSON.parse(reply.stdout)).toEqual({ hookSpecificOutput: { hookEventName, additionalContext: lessons } })
      for (const none of [null, undefined, ""]) expect(Codex.reply(event(file!), { _tag: "Allow" }, none)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
    }
    for (const file of ["PreToolUse.bash-npm-test.json", "PermissionRequest.bash.json", "Stop.first.json", "SessionEnd.other.json"]) {
      expect(Codex.reply(event(file), { _tag: "Allow" }, lessons)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
    }
  })
  it("PermissionRequest: decision.behavior deny with the message", () => {
    expect(JSON.parse(Codex.reply(event("PermissionRequest.bash.json"), deny).stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "Ratchet: no. ask the user." } }
    })
  })
  it("Stop: decision block with the reason; other events print nothing", () => {
    expect(JSON.parse(Codex.reply(event("Stop.first.json"), deny).stdout)).toEqual({ decision: "block", reason: "Ratchet: no. ask the user." })
    for (const file of ["SessionStart.startup.json", "PostToolUse.apply_patch.json", "Interrupt.basic.json", "SessionEnd.other.json"]) {
      expect(Codex.reply(event(file), deny)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
    }
  })
  it("a failure blocks tool calls and unreadable events (exit 2), and fails open elsewhere (exit 1, one line)", () => {
    for (const name of ["PreToolUse", "PermissionRequest", null]) {
      const answer = Codex.failure(name, "the store is locked")
      expect([answer.exitCode, answer.stdout]).toEqual([2, ""])
      expect(answer.stderr).toContain("the store is locked")
    }
    for (const name of ["Stop", "PostToolUse", "SessionStart"]) {
      expect(Codex.failure(name, "the store\nis locked")).toEqual({ stdout: "", stderr: "Ratchet (warning): the store is locked\n", exitCode: 1 })
    }
  })
})

describe("Settings (hooks.json)", () => {
  const theirs = { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./audit.sh", timeout: 30 }] }] } }
  it("installs one group per event next to theirs, idempotently, and uninstalls back to theirs", () => {
    const installed = Either.getOrThrow(Settings.install(theirs, "ratchet hook codex"))
    expect(Settings.countOurs(installed)).toBe(Settings.events.length)
    // SessionEnd (which releases the session's lease) within Codex's 3 s cap, the rest at 10 s
    const hooks = installed["hooks"] as Record<string, ReadonlyArray<{ hooks: ReadonlyArray<{ timeout: number }> }>>
    expect(hooks["SessionEnd"]!.at(-1)!.hooks[0]!.timeout).toBe(3)
    expect(hooks["PreToolUse"]!.at(-1)!.hooks[0]!.timeout).toBe(10)
    expect(Either.getOrThrow(Settings.install(installed, "ratchet hook codex"))).toEqual(installed)
    expect(Either.getOrThrow(Settings.uninstall(installed))).toEqual(theirs)
  })
  it("recognises only the codex hook as ours, bare or through the launcher", () => {
    expect(Settings.isOurs({ type: "command", command: "ratchet hook codex" })).toBe(true)
    expect(Settings.isOurs({ type: "command", command: "/bin/sh '/opt/ratchet/bin/ratchet-hook' codex Stop '/usr/bin/node' '/opt/r.mjs' hook codex" })).toBe(true)
    expect(Settings.isOurs({ type: "command", command: "/bin/sh -c 'L=$(command -v \"$0\") && exec /bin/sh \"$L\" \"$@\"' ratchet-hook codex PreToolUse" })).toBe(true)
    expect(Settings.isOurs({ type: "command", command: "ratchet hook claude-code" })).toBe(false)
    expect(Settings.isOurs({ type: "command", command: "/bin/sh '/opt/ratchet/bin/ratchet-hook' claude-code Stop" })).toBe(false)
    expect(Settings.isOurs({ type: "command", command: "ratchet hook codexx" })).toBe(false)
  })

  it("installs no SubagentStop (a subagent's stop is always allowed and records nothing), and removes one written before", () => {
    expect(Settings.events).not.toContain("SubagentStop")
    const before = { hooks: { SubagentStop: [{ hooks: [{ type: "command", command: "ratchet hook codex", timeout: 10 }] }] } }
    const installed = Either.getOrThrow(Settings.install(before, "ratchet hook codex"))
    expect(Object.keys(installed["hooks"] as object)).toEqual([...Settings.events])
  })

  // Codex's tools (its hooks reference: shell and exec_command report Bash, apply_patch is also
  // matched by its aliases, MCP tools are mcp__server__tool; hosted tools fire no hooks), with
  // names it does not use; written by hand with whether the hook must run for them.
  const tools: ReadonlyArray<readonly [string, Record<string, unknown>, boolean]> = [
    ["Bash", { command: "npm test" }, true],
    ["apply_patch", { command: "*** Begin Patch\n*** Update File: a.ts\n@@\n-a\n+b\n*** End Patch\n" }, true],
    ["mcp__memory__create_entities", { entities: [] }, false],
    ["mcp__ratchet__task_create", { goal: "x" }, false],
    ["view_image", { path: "a.png" }, false],
    ["update_plan", { plan: [] }, false],
    ["bash", { command: "x" }, false],
    ["apply_patch2", { command: "x" }, false]
  ]
  it.each(tools)("%s: matched by PreToolUse and PermissionRequest exactly when the adapter reads it as a write or a shell command", (tool, input, judged) => {
    expect(Settings.matchers["PermissionRequest"]).toBe(Settings.matchers["PreToolUse"])
    const matched = new RegExp(Settings.matchers["PreToolUse"]!).test(tool)
    expect(matched).toBe(judged)
    const raw = JSON.stringify({ session_id: "s", turn_id: "t", transcript_path: null, cwd: "/home/dev/project", hook_event_name: "PreToolUse", model: "m", permission_mode: "default", tool_name: tool, tool_input: input, tool_use_id: "call_1" })
    const decoded = Either.getOrThrow(decode(raw))
    if (decoded._tag !== "ToolCallRequested") throw new Error(`${tool}: decoded as ${decoded._tag}`)
    expect(decoded.call.action._tag === "Write" || decoded.call.action._tag === "Shell").toBe(matched)
  })
})
