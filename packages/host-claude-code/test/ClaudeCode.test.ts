/**
 * The Claude Code adapter against the documented payloads (test/fixtures, field for field from
 * the hooks reference): every fixture decodes to the event written here by hand; the replies are
 * Claude Code's contract; malformed, truncated, oversized and hostile payloads fail with the field
 * named, and a failure blocks tool calls and only warns elsewhere.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ClaudeCode from "../src/ClaudeCode.js"

const fixtures = path.join(import.meta.dirname, "fixtures")
const fixture = (file: string): string => fs.readFileSync(path.join(fixtures, file), "utf8")
const decode = (raw: string) => Effect.runSync(Effect.either(ClaudeCode.decode(raw)))

// Written by hand: the event (and, for tool calls, the action) each fixture must decode to.
const expected: Readonly<Record<string, string>> = {
  "SessionStart.startup.json": "SessionStarted",
  "SessionStart.resume.json": "SessionStarted",
  "SessionStart.clear.json": "SessionStarted",
  "SessionStart.compact.json": "SessionStarted",
  "SessionStart.fork.json": "SessionStarted",
  "UserPromptSubmit.basic.json": "PromptSubmitted",
  "PreToolUse.Edit.json": "ToolCallRequested:Write",
  "PreToolUse.Write.json": "ToolCallRequested:Write",
  "PreToolUse.MultiEdit.json": "ToolCallRequested:Write",
  "PreToolUse.NotebookEdit.json": "ToolCallRequested:Write",
  "PreToolUse.Read.json": "ToolCallRequested:Read",
  "PreToolUse.Bash.npm-test.json": "ToolCallRequested:Shell",
  "PreToolUse.Bash.ratchet-approve.json": "ToolCallRequested:Shell",
  "PreToolUse.mcp__memory__create_entities.json": "ToolCallRequested:Other",
  "PermissionRequest.Bash.json": "ToolCallRequested:Shell",
  "PostToolUse.Edit.json": "ToolCallCompleted:Write",
  "PostToolUse.Bash.json": "ToolCallCompleted:Shell",
  "PostToolUseFailure.Bash.json": "ToolCallFailed:Shell",
  "Stop.stop_hook_active-false.json": "StopRequested",
  "Stop.stop_hook_active-true.json": "StopRequested",
  "SubagentStop.Explore.json": "StopRequested",
  "SessionEnd.prompt_input_exit.json": "SessionEnded",
  "SessionEnd.clear.json": "SessionEnded",
  "SessionEnd.logout.json": "SessionEnded",
  "SessionEnd.resume.json": "SessionEnded",
  "SessionEnd.other.json": "SessionEnded"
}

const summary = (event: { readonly _tag: string; readonly call?: { readonly action: { readonly _tag: string } } }): string =>
  event.call === undefined ? event._tag : `${event._tag}:${event.call.action._tag}`

describe("ClaudeCode.decode: the documented payloads", () => {
  const files = fs.readdirSync(fixtures).filter((file) => file.endsWith(".json")).sort()

  it("has a fixture for every event Ratchet acts on", () => {
    for (const file of Object.keys(expected)) expect(files).toContain(file)
  })

  for (const file of files) {
    const want = expected[file] ?? "Passthrough"
    it(`${file} decodes to ${want}`, () => {
      const decoded = decode(fixture(file))
      if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
      expect(summary(decoded.right)).toBe(want)
      const raw = JSON.parse(fixture(file)) as { session_id: string; cwd: string; hook_event_name: string }
      expect(decoded.right.session).toEqual({ host: "claude-code", sessionId: raw.session_id, cwd: raw.cwd })
      if (decoded.right._tag === "Passthrough") expect(decoded.right.name).toBe(raw.hook_event_name)
    })
  }

  it("reads the fields that matter, as the payload gives them", () => {
    const edit = decode(fixture("PreToolUse.Edit.json"))
    expect(Either.getOrThrow(edit)).toMatchObject({
      _tag: "ToolCallRequested",
      permissionPrompt: false,
      call: { id: "toolu_01HkX7c3VqN9sR2mTfB4pLdE", tool: "Edit", action: { _tag: "Write", paths: ["/home/dev/project/src/math.ts"] } }
    })
    expect(Either.getOrThrow(decode(fixture("PreToolUse.Bash.ratchet-approve.json")))).toMatchObject({
      call: { tool: "Bash", action: { _tag: "Shell", command: "ratchet approve t-1234abcd spec" } }
    })
    expect(Either.getOrThrow(decode(fixture("PermissionRequest.Bash.json")))).toMatchObject({ permissionPrompt: true, call: { id: null } })
    expect(Either.getOrThrow(decode(fixture("Stop.stop_hook_active-true.json")))).toMatchObject({ continuing: true, subagent: false })
    expect(Either.getOrThrow(decode(fixture("Stop.stop_hook_active-false.json")))).toMatchObject({ continuing: false })
    expect(Either.getOrThrow(decode(fixture("SubagentStop.Explore.json")))).toMatchObject({ subagent: true })
    // The stop carries where the session's transcript is, for the end of calls no hook saw (ADR 0030)
    expect(Either.getOrThrow(decode(fixture("Stop.stop_hook_active-false.json")))).toMatchObject({
      transcript: "/home/dev/.claude/projects/-home-dev-project/9b2e4c1a-7f3d-4e8b-a6c5-2d1f0e9b8a47.jsonl"
    })
    const stop = JSON.parse(fixture("Stop.stop_hook_active-false.json")) as Record<string, unknown>
    for (const missing of [undefined, null, "", 7, { path: "/t.jsonl" }]) {
      const decoded = Either.getOrThrow(decode(JSON.stringify({ ...stop, transcript_path: missing })))
      expect(decoded._tag === "StopRequested" && "transcript" in decoded, String(missing)).toBe(false)
    }
    expect(Either.getOrThrow(decode(fixture("PostToolUseFailure.Bash.json")))).toMatchObject({ error: expect.stringContaining("Exit code 1") })
  })
})

describe("ClaudeCode.decode: bad input", () => {
  const base = JSON.parse(fixture("PreToolUse.Edit.json")) as Record<string, unknown>
  const cases: ReadonlyArray<readonly [string, string, string, string | null]> = [
    ["empty input", "", "(payload)", null],
    ["not JSON", "hello", "(payload)", null],
    ["truncated JSON", fixture("PreToolUse.Edit.json").slice(0, 80), "(payload)", null],
    ["a JSON array", "[1,2]", "(payload)", null],
    ["a JSON string", "\"PreToolUse\"", "(payload)", null],
    ["null", "null", "(payload)", null],
    ["no event name", JSON.stringify({ ...base, hook_event_name: undefined }), "hook_event_name", null],
    ["an event name that is a number", JSON.stringify({ ...base, hook_event_name: 7 }), "hook_event_name", null],
    ["no session id", JSON.stringify({ ...base, session_id: undefined }), "session_id", "PreToolUse"],
    ["no cwd", JSON.stringify({ ...base, cwd: null }), "cwd", "PreToolUse"],
    ["no tool name", JSON.stringify({ ...base, tool_name: undefined }), "tool_name", "PreToolUse"],
    ["tool input not an object", JSON.stringify({ ...base, tool_input: "x" }), "tool_input", "PreToolUse"],
    ["an Edit without file_path", JSON.stringify({ ...base, tool_input: { old_string: "a", new_string: "b" } }), "tool_input.file_path", "PreToolUse"],
    ["a Bash call whose command is an array", JSON.stringify({ ...base, tool_name: "Bash", tool_input: { command: ["rm", "-rf"] } }), "tool_input.command", "PreToolUse"],
    ["a prompt that is not text", JSON.stringify({ session_id: "s", cwd: "/w", hook_event_name: "UserPromptSubmit", prompt: {} }), "prompt", "UserPromptSubmit"]
  ]
  for (const [name, raw, field, event] of cases) {
    it(`${name}: fails on ${field}`, () => {
      const decoded = decode(raw)
      expect(Either.isLeft(decoded)).toBe(true)
      if (Either.isLeft(decoded)) {
        expect(decoded.left).toMatchObject({ _tag: "@ratchet/host/HostDecodeError", host: "claude-code", field, event })
        expect(decoded.left.message).toContain(field)
      }
    })
  }

  it("an oversized payload (over 16 MiB) fails without being parsed", () => {
    const raw = JSON.stringify({ ...base, tool_name: "Write", tool_input: { file_path: "/w/a", content: "x".repeat(17 * 1024 * 1024) } })
    expect(Either.getLeft(decode(raw))).toMatchObject({ _tag: "Some", value: { field: "(payload)" } })
  })

  it("a large but legitimate Write (over 1 MiB) decodes", () => {
    const raw = JSON.stringify({ ...base, tool_name: "Write", tool_input: { file_path: "/w/a", content: "x".repeat(2 * 1024 * 1024) } })
    expect(Either.isRight(decode(raw))).toBe(true)
  })

  it("hostile values stay data: prototype keys, control characters, deep nesting", () => {
    const hostile = `{"__proto__":{"polluted":true},"session_id":"s\\u0000\\u001b[2J","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo \\u202e"}}`
    const decoded = decode(hostile)
    expect(Either.isRight(decoded)).toBe(true)
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    const deep = `{"session_id":"s","cwd":"/w","hook_event_name":"Notification","x":${"[".repeat(5000)}${"]".repeat(5000)}}`
    expect(Either.isRight(decode(deep))).toBe(true)
  })

  it("never throws, whatever the bytes", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.json({ maxDepth: 4 }), fc.jsonValue().map((value) => JSON.stringify({ hook_event_name: "PreToolUse", session_id: "s", cwd: "/w", tool_name: "Edit", tool_input: value }))), (raw) => {
        const decoded = decode(raw)
        return Either.isLeft(decoded) || typeof decoded.right._tag === "string"
      }),
      { numRuns: 1000 }
    )
  })
})

describe("ClaudeCode.reply and failure", () => {
  const event = (file: string) => Either.getOrThrow(decode(fixture(file)))
  const deny = { _tag: "Deny", reason: "Task t-1 is INTERVIEWING: not yet.", fix: "Approve the plan." } as const
  const ask = { _tag: "Ask", reason: "rm -rf build deletes without asking. Allow it?" } as const
  const allow = { _tag: "Allow" } as const

  it("PreToolUse: deny and ask as hookSpecificOutput with the reason; allow prints nothing (Claude Code's own prompt stays)", () => {
    const pre = event("PreToolUse.Edit.json")
    expect(ClaudeCode.reply(pre, deny)).toEqual({
      stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Ratchet: Task t-1 is INTERVIEWING: not yet. Approve the plan." } })}\n`,
      stderr: "",
      exitCode: 0
    })
    expect(JSON.parse(ClaudeCode.reply(pre, ask).stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "Ratchet: rm -rf build deletes without asking. Allow it?" }
    })
    expect(ClaudeCode.reply(pre, allow)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
  })

  it("PermissionRequest: a denial is decision.behavior deny; an ask or allow leaves the user's prompt", () => {
    const request = event("PermissionRequest.Bash.json")
    expect(JSON.parse(ClaudeCode.reply(request, deny).stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "Ratchet: Task t-1 is INTERVIEWING: not yet. Approve the plan." } }
    })
    expect(ClaudeCode.reply(request, ask)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
    expect(ClaudeCode.reply(request, allow)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
  })

  it("Stop: a block is decision block with the reason; an allow prints nothing", () => {
    const stop = event("Stop.stop_hook_active-false.json")
    expect(JSON.parse(ClaudeCode.reply(stop, deny).stdout)).toEqual({ decision: "block", reason: "Ratchet: Task t-1 is INTERVIEWING: not yet. Approve the plan." })
    expect(ClaudeCode.reply(stop, allow).stdout).toBe("")
  })

  it("SessionStart and UserPromptSubmit carry the lessons as hookSpecificOutput.additionalContext, and only they do", () => {
    const lessons = "Ratchet: lessons …\n- [L-1, verified] Count rows after the header."
    for (const [file, hookEventName] of [["SessionStart.startup.json", "SessionStart"], ["SessionStart.compact.json", "SessionStart"], ["UserPromptSubmit.basic.json", "UserPromptSubmit"]]) {
      const reply = ClaudeCode.reply(event(file!), allow, lessons)
      expect(reply.exitCode).toBe(0)
      expect(reply.stderr).toBe("")
      expect(JSON.parse(reply.stdout)).toEqual({ hookSpecificOutput: { hookEventName, additionalContext: lessons } })
      // No lessons, no output.
      for (const none of [null, undefined, ""]) expect(ClaudeCode.reply(event(file!), allow, none)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
    }
    // Context never rides on a tool call's or a stop's answer, nor changes a denial.
    for (const file of ["PreToolUse.Edit.json", "PermissionRequest.Bash.json", "Stop.stop_hook_active-false.json", "SessionEnd.other.json"]) {
      expect(ClaudeCode.reply(event(file), allow, lessons)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
    }
    expect(ClaudeCode.reply(event("PreToolUse.Edit.json"), deny, lessons)).toEqual(ClaudeCode.reply(event("PreToolUse.Edit.json"), deny))
  })

  it("events Ratchet does not judge print nothing whatever the decision", () => {
    for (const file of ["SessionStart.startup.json", "PostToolUse.Edit.json", "Notification.idle_prompt.json", "SessionEnd.other.json"]) {
      expect(ClaudeCode.reply(event(file), deny)).toEqual({ stdout: "", stderr: "", exitCode: 0 })
    }
  })

  it("a failure blocks tool calls (exit 2, reason on stderr) and unknown events, and only warns elsewhere", () => {
    const request = ClaudeCode.failure("PermissionRequest", "the store is locked")
    expect(request.exitCode).toBe(0)
    expect(JSON.parse(request.stdout).hookSpecificOutput).toEqual({
      hookEventName: "PermissionRequest",
      decision: { behavior: "deny", message: "Ratchet could not check this call: the store is locked" }
    })
    for (const name of ["PreToolUse", null]) {
      const reply = ClaudeCode.failure(name, "the store is locked")
      expect(reply.exitCode).toBe(2)
      expect(reply.stdout).toBe("")
      expect(reply.stderr).toContain("the store is locked")
      expect(reply.stderr).toContain("ratchet status")
    }
    for (const name of ["Stop", "PostToolUse", "SessionStart", "UserPromptSubmit"]) {
      const reply = ClaudeCode.failure(name, "the store\nis locked")
      expect(reply.exitCode).toBe(0)
      expect(JSON.parse(reply.stdout)).toEqual({ systemMessage: "Ratchet (warning): the store is locked" })
    }
  })
})
