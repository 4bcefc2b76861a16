/**
 * Reading the JSON hook payloads of the hosts that send one object on standard input with
 * `hook_event_name`, `session_id` and `cwd` (Claude Code, Codex): the size limit, the parse, the
 * common fields and tool calls, each failure a {@link HostAdapter.HostDecodeError} naming the field.
 * An adapter supplies what is its own: how its tools map to actions, and its events to host events.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as HostAdapter from "./HostAdapter.js"
import type * as HostEvent from "./HostEvent.js"

/**
 * A JSON object as parsed.
 *
 * @since 0.1.0
 * @category models
 */
export type Json = { readonly [key: string]: unknown }

/**
 * Whether `value` is a JSON object (not an array, not null).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A parsed payload with its event name and session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Payload {
  readonly host: string
  readonly event: string
  readonly session: HostEvent.Session
  readonly fields: Json
}

const describeType = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "an array" : typeof value)

/**
 * A failure on `field` of `host`'s payload.
 *
 * @since 0.1.0
 * @category errors
 */
export const fail = (host: string, field: string, reason: string, event: string | null) =>
  Effect.fail(new HostAdapter.HostDecodeError({ host, field, reason, event }))

/**
 * A required string field of `fields`; `shown` names it as the payload does (`tool_input.command`).
 *
 * @since 0.1.0
 * @category decoding
 */
export const text = (payload: { readonly host: string; readonly event: string | null }, fields: Json, field: string, shown = field) => {
  const value = fields[field]
  return typeof value === "string"
    ? Effect.succeed(value)
    : fail(payload.host, shown, value === undefined ? "is missing" : `must be a string, got ${describeType(value)}`, payload.event)
}

/**
 * An optional string field: its value, or null when absent or not a string.
 *
 * @since 0.1.0
 * @category decoding
 */
export const optionalText = (fields: Json, field: string): string | null => {
  const value = fields[field]
  return typeof value === "string" ? value : null
}

/**
 * Parses `raw` as one payload of `host`: at most {@link HostAdapter.maxPayloadBytes}, a JSON
 * object, with string `hook_event_name`, `session_id` and `cwd`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const parse = (host: string, raw: string): Effect.Effect<Payload, HostAdapter.HostDecodeError> =>
  Effect.gen(function*() {
    if (Buffer.byteLength(raw, "utf8") > HostAdapter.maxPayloadBytes) {
      return yield* fail(host, "(payload)", `is larger than ${HostAdapter.maxPayloadBytes} bytes`, null)
    }
    const parsed = yield* Effect.try({
      try: (): unknown => JSON.parse(raw),
      catch: (error) =>
        new HostAdapter.HostDecodeError({ host, field: "(payload)", reason: `is not JSON (${error instanceof Error ? error.message.slice(0, 120) : "unreadable"})`, event: null })
    })
    if (!isObject(parsed)) return yield* fail(host, "(payload)", "must be a JSON object", null)
    const event = yield* text({ host, event: null }, parsed, "hook_event_name")
    const known = { host, event }
    const session: HostEvent.Session = { host, sessionId: yield* text(known, parsed, "session_id"), cwd: yield* text(known, parsed, "cwd") }
    return { host, event, session, fields: parsed }
  })

/**
 * The tool call of a tool event: `tool_name`, `tool_input` (an object) and `tool_use_id` when
 * present, with the action `actionOf` reads from the tool's name and input.
 *
 * @since 0.1.0
 * @category decoding
 */
export const toolCall = (
  payload: Payload,
  actionOf: (tool: string, input: Json) => Effect.Effect<HostEvent.ToolAction, HostAdapter.HostDecodeError>
): Effect.Effect<HostEvent.ToolCall, HostAdapter.HostDecodeError> =>
  Effect.gen(function*() {
    const tool = yield* text(payload, payload.fields, "tool_name")
    const input = payload.fields["tool_input"]
    if (!isObject(input)) return yield* fail(payload.host, "tool_input", input === undefined ? "is missing" : "must be an object", payload.event)
    return { id: optionalText(payload.fields, "tool_use_id"), tool, action: yield* actionOf(tool, input) }
  })

/**
 * The host event of a payload whose events follow Claude Code's names (Codex uses the same):
 * SessionStart, SessionEnd, UserPromptSubmit, PreToolUse, PermissionRequest (a tool call the host
 * is about to ask the user about), PostToolUse, PostToolUseFailure, Stop and SubagentStop (with
 * `stop_hook_active` as `continuing` and `transcript_path`, when a non-empty string, as
 * `transcript`); any other event passes through.
 *
 * @since 0.1.0
 * @category decoding
 */
export const eventOf = (
  payload: Payload,
  actionOf: (tool: string, input: Json) => Effect.Effect<HostEvent.ToolAction, HostAdapter.HostDecodeError>
): Effect.Effect<HostEvent.HostEvent, HostAdapter.HostDecodeError> =>
  Effect.gen(function*() {
    const { event, fields, session } = payload
    const call = toolCall(payload, actionOf)
    switch (event) {
      case "SessionStart":
        return { _tag: "SessionStarted", session, source: optionalText(fields, "source") ?? "startup" } as const
      case "SessionEnd":
        return { _tag: "SessionEnded", session, reason: optionalText(fields, "reason") ?? "other" } as const
      case "UserPromptSubmit":
        return { _tag: "PromptSubmitted", session, prompt: yield* text(payload, fields, "prompt") } as const
      case "PreToolUse":
      case "PermissionRequest":
        return { _tag: "ToolCallRequested", session, call: yield* call, permissionPrompt: event === "PermissionRequest" } as const
      case "PostToolUse":
        return { _tag: "ToolCallCompleted", session, call: yield* call } as const
      case "PostToolUseFailure":
        return { _tag: "ToolCallFailed", session, call: yield* call, error: optionalText(fields, "error") ?? "" } as const
      case "Stop":
      case "SubagentStop": {
        const transcript = optionalText(fields, "transcript_path")
        return {
          _tag: "StopRequested",
          session,
          continuing: fields["stop_hook_active"] === true,
          subagent: event === "SubagentStop",
          ...(transcript === null || transcript === "" ? {} : { transcript })
        } as const
      }
      default:
        return { _tag: "Passthrough", session, name: event } as const
    }
  })
