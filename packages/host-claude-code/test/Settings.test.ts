/**
 * Ratchet's entries in Claude Code's settings: installed next to other hooks and settings without
 * touching them, idempotently; removed without touching anything else; settings of the wrong
 * shape refused with the field named. The tool events' matchers (before the call and at its end)
 * start a hook for exactly the tools whose call the adapter can refuse or must record as a write,
 * checked against the adapter itself for every tool Claude Code documents (and names it does not).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ToolIntent from "@ratchet/host/ToolIntent"
import * as ClaudeCode from "../src/ClaudeCode.js"
import * as Settings from "../src/Settings.js"

const command = "ratchet hook claude-code"
const ours = { type: "command", command, timeout: 10 }

const theirs = {
  model: "claude-sonnet-4-5",
  permissions: { allow: ["Bash(npm test)"] },
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./scripts/audit.sh" }] }],
    Notification: [{ hooks: [{ type: "command", command: "notify-send done" }] }]
  }
}

describe("Settings.install", () => {
  it("into empty settings: one group per event with our command, the tool gates and their ends matched", () => {
    const installed = Either.getOrThrow(Settings.install(undefined, command))
    expect(Object.keys(installed["hooks"] as object)).toEqual([...Settings.events])
    const gate = "^(?:Bash|Edit|Write|MultiEdit|NotebookEdit)$"
    const matched: ReadonlyArray<string> = ["PreToolUse", "PermissionRequest", "PostToolUse"]
    for (const event of Settings.events) {
      const group = matched.includes(event) ? { matcher: gate, hooks: [ours] } : { hooks: [ours] }
      expect((installed["hooks"] as Record<string, unknown>)[event], event).toEqual([group])
    }
    expect(Settings.countOurs(installed)).toBe(Settings.events.length)
    // A subagent's stop is always allowed and records nothing: no hook for it.
    expect(Settings.events).not.toContain("SubagentStop")
  })

  it("writes each event's own command when given one per event", () => {
    const installed = Either.getOrThrow(Settings.install(undefined, (event) => `/bin/sh '/opt/ratchet/bin/ratchet-hook' claude-code ${event}`))
    const hooks = installed["hooks"] as Record<string, ReadonlyArray<{ hooks: ReadonlyArray<{ command: string }> }>>
    for (const event of Settings.events) expect(hooks[event]![0]!.hooks[0]!.command).toBe(`/bin/sh '/opt/ratchet/bin/ratchet-hook' claude-code ${event}`)
    expect(Settings.countOurs(installed)).toBe(Settings.events.length)
  })

  it("keeps every other setting and hook, in place", () => {
    const installed = Either.getOrThrow(Settings.install(theirs, command))
    expect(installed["model"]).toBe("claude-sonnet-4-5")
    expect(installed["permissions"]).toEqual(theirs.permissions)
    const hooks = installed["hooks"] as Record<string, ReadonlyArray<unknown>>
    expect(hooks["PreToolUse"]).toEqual([theirs.hooks.PreToolUse[0], { matcher: Settings.matchers["PreToolUse"], hooks: [ours] }])
    expect(hooks["Notification"]).toEqual(theirs.hooks.Notification)
  })

  it("is idempotent, and a changed command replaces ours rather than adding", () => {
    const once = Either.getOrThrow(Settings.install(theirs, command))
    expect(Either.getOrThrow(Settings.install(once, command))).toEqual(once)
    const moved = Either.getOrThrow(Settings.install(once, "/opt/bin/ratchet hook claude-code"))
    expect(Settings.countOurs(moved)).toBe(Settings.events.length)
    expect(JSON.stringify(moved)).not.toContain(`"command":"ratchet hook claude-code"`)
  })

  it("refuses settings of the wrong shape, naming the field, and writes nothing", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [[], "(settings)"],
      ["text", "(settings)"],
      [{ hooks: [] }, "hooks"],
      [{ hooks: { PreToolUse: {} } }, "hooks.PreToolUse"],
      [{ hooks: { Stop: [{ command: "x" }] } }, "hooks.Stop[0]"]
    ]
    for (const [settings, field] of cases) {
      const result = Settings.install(settings, command)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left.field).toBe(field)
        expect(result.left.fix).toContain("nothing was written")
      }
    }
  })
})

describe("Settings.uninstall", () => {
  it("removes only ours: the settings come back as they were", () => {
    expect(Either.getOrThrow(Settings.uninstall(Either.getOrThrow(Settings.install(theirs, command))))).toEqual(theirs)
  })

  it("keeps a group's other hooks when ours shared it", () => {
    const shared = { hooks: { Stop: [{ hooks: [{ type: "command", command: "./lint.sh" }, ours] }] } }
    expect(Either.getOrThrow(Settings.uninstall(shared))).toEqual({ hooks: { Stop: [{ hooks: [{ type: "command", command: "./lint.sh" }] }] } })
  })

  it("drops hooks entirely when only ours were there, and changes nothing without ours", () => {
    expect(Either.getOrThrow(Settings.uninstall(Either.getOrThrow(Settings.install({ model: "x" }, command))))).toEqual({ model: "x" })
    expect(Either.getOrThrow(Settings.uninstall(theirs))).toEqual(theirs)
    expect(Either.getOrThrow(Settings.uninstall(undefined))).toEqual({})
  })

  it("recognises our command however it is launched, and nothing that merely mentions it", () => {
    const accepted = [
      "ratchet hook claude-code",
      "/usr/local/bin/ratchet hook claude-code",
      "npx ratchet hook claude-code",
      "\"/opt/my tools/ratchet\" hook claude-code",
      "/bin/sh '/opt/ratchet/bin/ratchet-hook' claude-code Stop '/usr/bin/node' '/opt/ratchet/dist/ratchet.mjs' hook claude-code",
      "/bin/sh \"${CLAUDE_PLUGIN_ROOT}/bin/ratchet-hook\" claude-code PreToolUse"
    ]
    const rejected = ["ratchet hook codex", "echo ratchet hook claude-code-extra", "myratchet hook claude-code", "ratchet status", "logger 'ratchet hook claude-code ran'", "echo ratchet hook claude-code"]
    for (const text of accepted) expect(Settings.isOurs({ type: "command", command: text }), text).toBe(true)
    for (const text of rejected) expect(Settings.isOurs({ type: "command", command: text }), text).toBe(false)
    expect(Settings.isOurs({ type: "prompt", command })).toBe(false)
  })
})

/** A PreToolUse payload for `tool` with `input`. */
const call = (tool: string, input: Record<string, unknown>, event = "PreToolUse") =>
  JSON.stringify({ session_id: "s", transcript_path: "/t.jsonl", cwd: "/home/dev/project", hook_event_name: event, tool_name: tool, tool_input: input, tool_use_id: "toolu_1" })

describe("Settings.matchers", () => {
  // Every tool of Claude Code's tools reference with the input the adapter reads, and names it does
  // not know; written by hand with whether the hook must run for it.
  const tools: ReadonlyArray<readonly [string, Record<string, unknown>, boolean]> = [
    ["Bash", { command: "npm test" }, true],
    ["Edit", { file_path: "/home/dev/project/a.ts", old_string: "a", new_string: "b" }, true],
    ["Write", { file_path: "/home/dev/project/a.ts", content: "x" }, true],
    ["MultiEdit", { file_path: "/home/dev/project/a.ts", edits: [] }, true],
    ["NotebookEdit", { notebook_path: "/home/dev/project/a.ipynb", new_source: "x" }, true],
    ["Read", { file_path: "/home/dev/.ratchet/approver-key.json" }, false],
    ["Grep", { pattern: "x", path: "/home/dev/.ratchet" }, false],
    ["Glob", { pattern: "**/*", path: "/home/dev/project/.ratchet" }, false],
    ["LS", { path: "/home/dev/project" }, false],
    ["NotebookRead", { notebook_path: "/home/dev/project/a.ipynb" }, false],
    ["WebFetch", { url: "https://example.com", prompt: "x" }, false],
    ["WebSearch", { query: "x" }, false],
    ["Agent", { prompt: "x", description: "y" }, false],
    ["Task", { prompt: "x", description: "y" }, false],
    ["TodoWrite", { todos: [] }, false],
    ["AskUserQuestion", { questions: [] }, false],
    ["ExitPlanMode", { plan: "x" }, false],
    ["mcp__memory__create_entities", { entities: [] }, false],
    ["mcp__plugin_ratchet_ratchet__task_create", { goal: "x" }, false],
    ["mcp__fs__Write", { path: "x" }, false],
    ["bash", { command: "x" }, false],
    ["EditX", { file_path: "x" }, false]
  ]

  it("PreToolUse, PermissionRequest and PostToolUse match the same tools; the other events, PostToolUseFailure included, match everything", () => {
    expect(Object.keys(Settings.matchers).sort()).toEqual(["PermissionRequest", "PostToolUse", "PreToolUse"])
    expect(Settings.matchers["PermissionRequest"]).toBe(Settings.matchers["PreToolUse"])
    expect(Settings.matchers["PostToolUse"]).toBe(Settings.matchers["PreToolUse"])
    expect(Settings.events).toContain("PostToolUseFailure")
  })

  it.each(tools)("%s: matched exactly when the adapter reads the call as a write or a shell command", (tool, input, judged) => {
    const matched = new RegExp(Settings.matchers["PreToolUse"]!).test(tool)
    expect(matched).toBe(judged)
    const decoded = Effect.runSync(ClaudeCode.decode(call(tool, input)))
    if (decoded._tag !== "ToolCallRequested") throw new Error(`${tool}: decoded as ${decoded._tag}`)
    // An unmatched call is one the guard allows in every state and scope (it only checks that the
    // call runs inside the project) and that opens no intent.
    expect(decoded.call.action._tag === "Write" || decoded.call.action._tag === "Shell").toBe(matched)
    // The end of an unmatched call resolves no intent (it opened none): it only tells of the turn,
    // which the stop reads from the transcript (ADR 0030).
    const ended = Effect.runSync(ClaudeCode.decode(call(tool, input, "PostToolUse")))
    if (ended._tag !== "ToolCallCompleted") throw new Error(`${tool}: its end decoded as ${ended._tag}`)
    if (!matched) expect(ToolIntent.isSideEffect(ended.call)).toBe(false)
  })
})
