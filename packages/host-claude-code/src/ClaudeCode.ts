/**
 * The Claude Code adapter: its hook payloads (one JSON object on standard input, as the hooks
 * reference documents them) decoded into host events, and the guard's decisions encoded in Claude
 * Code's contract.
 *
 * The answers:
 * - PreToolUse: a denial is exit 0 with `hookSpecificOutput.permissionDecision: "deny"` and the
 *   reason (Claude sees it); an ask is `"ask"`. An allowed call prints nothing: `"allow"` would
 *   skip Claude Code's own permission prompt, and Ratchet only ever narrows what the user allows.
 * - PermissionRequest: a denial is `hookSpecificOutput.decision.behavior: "deny"` with the message;
 *   otherwise nothing, and the user is asked as usual.
 * - Stop / SubagentStop: a block is `decision: "block"` with the reason, which Claude reads as its
 *   next instruction; `stop_hook_active` makes it a single block, never a loop.
 * - Everything else: exit 0, nothing printed.
 *
 * Failing: a payload that cannot be read, or a decision Ratchet cannot make, blocks a tool call
 * (exit 2 with the reason on standard error, which Claude Code treats as a denial) and, for any
 * other event, goes on with a one-line `systemMessage` warning. A hook that times out fails open
 * in Claude Code, so the hook path is kept fast.
 *
 * @since 0.1.0
 */
import * as HostAdapter from "@ratchet/host/HostAdapter"
import type * as Guard from "@ratchet/host/Guard"
import type * as HostEvent from "@ratchet/host/HostEvent"
import * as Effect from "effect/Effect"

/**
 * The adapter's name: `ratchet hook claude-code`.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "claude-code"

/** The events on which a failure must block: the host is about to run a tool. */
const toolGates = new Set(["PreToolUse", "PermissionRequest"])

type Json = { readonly [key: string]: unknown }

const fail = (field: string, reason: string, event: string | null) => Effect.fail(new HostAdapter.HostDecodeError({ host: name, field, reason, event }))

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** A required string field; `shown` names it as the payload does. */
const text = (payload: Json, field: string, event: string | null, shown = field) => {
  const value = payload[field]
  if (typeof value === "string") return Effect.succeed(value)
  return fail(shown, value === undefined ? "is missing" : `must be a string, got ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`, event)
}

const optionalText = (payload: Json, field: string): string | null => {
  const value = payload[field]
  return typeof value === "string" ? value : null
}

/** The tools that write the file named by a field of their input, by that field. */
const writers: Readonly<Record<string, string>> = { Edit: "file_path", Write: "file_path", MultiEdit: "file_path", NotebookEdit: "notebook_path" }

/** The tools that only read, by the field naming what they read (if any). */
const readers: Readonly<Record<string, string | null>> = { Read: "file_path", Glob: "path", Grep: "path", LS: "path", NotebookRead: "notebook_path" }

/** What a tool call would do, from its name and input. */
const actionOf = (tool: string, input: Json, event: string) =>
  Effect.gen(function*() {
    const writes = writers[tool]
    if (writes !== undefined) return { _tag: "Write" as const, paths: [yield* text(input, writes, event, `tool_input.${writes}`)] }
    if (tool === "Bash") return { _tag: "Shell" as const, command: yield* text(input, "command", event, "tool_input.command") }
    if (tool in readers) {
      const field = readers[tool]
      const file = field === null || field === undefined ? null : optionalText(input, field)
      return { _tag: "Read" as const, paths: file === null ? [] : [file] }
    }
    return { _tag: "Other" as const }
  })

const toolCall = (payload: Json, event: string) =>
  Effect.gen(function*() {
    const tool = yield* text(payload, "tool_name", event)
    const input = payload["tool_input"]
    if (!isObject(input)) return yield* fail("tool_input", input === undefined ? "is missing" : "must be an object", event)
    return { id: optionalText(payload, "tool_use_id"), tool, action: yield* actionOf(tool, input, event) } satisfies HostEvent.ToolCall
  })

/**
 * Decodes one hook payload.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (raw: string): Effect.Effect<HostEvent.HostEvent, HostAdapter.HostDecodeError> =>
  Effect.gen(function*() {
    if (Buffer.byteLength(raw, "utf8") > HostAdapter.maxPayloadBytes) {
      return yield* fail("(payload)", `is larger than ${HostAdapter.maxPayloadBytes} bytes`, null)
    }
    const parsed = yield* Effect.try({ try: (): unknown => JSON.parse(raw), catch: (error) => new HostAdapter.HostDecodeError({ host: name, field: "(payload)", reason: `is not JSON (${error instanceof Error ? error.message.slice(0, 120) : "unreadable"})`, event: null }) })
    if (!isObject(parsed)) return yield* fail("(payload)", "must be a JSON object", null)
    const event = yield* text(parsed, "hook_event_name", null)
    const session: HostEvent.Session = { host: name, sessionId: yield* text(parsed, "session_id", event), cwd: yield* text(parsed, "cwd", event) }
    switch (event) {
      case "SessionStart":
        return { _tag: "SessionStarted", session, source: optionalText(parsed, "source") ?? "startup" } as const
      case "SessionEnd":
        return { _tag: "SessionEnded", session, reason: optionalText(parsed, "reason") ?? "other" } as const
      case "UserPromptSubmit":
        return { _tag: "PromptSubmitted", session, prompt: yield* text(parsed, "prompt", event) } as const
      case "PreToolUse":
      case "PermissionRequest":
        return { _tag: "ToolCallRequested", session, call: yield* toolCall(parsed, event), permissionPrompt: event === "PermissionRequest" } as const
      case "PostToolUse":
        return { _tag: "ToolCallCompleted", session, call: yield* toolCall(parsed, event) } as const
      case "PostToolUseFailure":
        return { _tag: "ToolCallFailed", session, call: yield* toolCall(parsed, event), error: optionalText(parsed, "error") ?? "" } as const
      case "Stop":
      case "SubagentStop":
        return { _tag: "StopRequested", session, continuing: parsed["stop_hook_active"] === true, subagent: event === "SubagentStop" } as const
      default:
        return { _tag: "Passthrough", session, name: event } as const
    }
  })

const json = (value: unknown): HostAdapter.Reply => ({ stdout: `${JSON.stringify(value)}\n`, stderr: "", exitCode: 0 })
const nothing: HostAdapter.Reply = { stdout: "", stderr: "", exitCode: 0 }

/** Claude Code reads reasons as text; keep them to one readable paragraph. */
const said = (decision: Guard.Decision): string => (decision._tag === "Deny" ? `${decision.reason} ${decision.fix}` : decision._tag === "Ask" ? decision.reason : "")

/**
 * The answer to an event the guard judged.
 *
 * @since 0.1.0
 * @category encoding
 */
export const reply = (event: HostEvent.HostEvent, decision: Guard.Decision): HostAdapter.Reply => {
  if (decision._tag === "Allow") return nothing
  switch (event._tag) {
    case "ToolCallRequested":
      if (event.permissionPrompt) {
        // A PermissionRequest can allow or deny; an ask is what it already is.
        return decision._tag === "Deny"
          ? json({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: `Ratchet: ${said(decision)}` } } })
          : nothing
      }
      return json({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: decision._tag === "Deny" ? "deny" : "ask",
          permissionDecisionReason: `Ratchet: ${said(decision)}`
        }
      })
    case "StopRequested":
      return decision._tag === "Deny" ? json({ decision: "block", reason: `Ratchet: ${said(decision)}` }) : nothing
    default:
      return nothing
  }
}

/**
 * The answer when Ratchet could not judge: closed for a tool call (exit 2, the reason on standard
 * error), open with a warning for anything else, and closed when the event is unknown (it may
 * have been a tool call).
 *
 * @since 0.1.0
 * @category encoding
 */
export const failure = (event: string | null, problem: string): HostAdapter.Reply => {
  const line = problem.replace(/\s+/g, " ").slice(0, 500)
  if (event === null || toolGates.has(event)) {
    return { stdout: "", stderr: `Ratchet blocked this call because it could not check it: ${line} Run \`ratchet status\` in a terminal to see what is wrong.\n`, exitCode: 2 }
  }
  return json({ systemMessage: `Ratchet (warning): ${line}` })
}

/**
 * The adapter.
 *
 * @since 0.1.0
 * @category adapters
 */
export const adapter: HostAdapter.HostAdapter = { name, canAsk: true, decode, reply, failure }
