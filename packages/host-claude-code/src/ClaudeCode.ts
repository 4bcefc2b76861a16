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
 * - SessionStart and UserPromptSubmit with lessons for the agent (ADR 0038):
 *   `hookSpecificOutput.additionalContext` with the event's name, which Claude Code adds to the
 *   agent's context.
 * - Everything else: exit 0, nothing printed.
 *
 * The project is looked for in `CLAUDE_PROJECT_DIR` (the project root where the session started),
 * never in the payload's `cwd`, which follows Claude's `cd` (see `ProjectRoot`).
 *
 * Failing: a payload that cannot be read, or a decision Ratchet cannot make, blocks a tool call
 * (PreToolUse: exit 2 with the reason on standard error, which Claude Code treats as a denial;
 * PermissionRequest, which ignores exit 2: its deny decision) and, for any other event, goes on
 * with a one-line `systemMessage` warning. A hook that times out fails open
 * in Claude Code, so the hook path is kept fast.
 *
 * @since 0.1.0
 */
import type * as Guard from "@ratchet/host/Guard"
import type * as HostAdapter from "@ratchet/host/HostAdapter"
import * as HookPayload from "@ratchet/host/HookPayload"
import type * as HostEvent from "@ratchet/host/HostEvent"
import * as Effect from "effect/Effect"
import * as Transcript from "./Transcript.js"

/**
 * The adapter's name: `ratchet hook claude-code`.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "claude-code"

/**
 * Where Claude Code tells its hooks the project root where the session started; it stays put when
 * Claude changes directory or enters a worktree (the hooks reference, "Reference scripts by path").
 *
 * @since 0.1.0
 * @category constants
 */
export const projectVariable = "CLAUDE_PROJECT_DIR"

/** The events on which a failure must block: the host is about to run a tool. */
const toolGates = new Set(["PreToolUse", "PermissionRequest"])

/** The tools that write the file named by a field of their input, by that field. */
const writers: Readonly<Record<string, string>> = { Edit: "file_path", Write: "file_path", MultiEdit: "file_path", NotebookEdit: "notebook_path" }

/** The tools that only read, by the field naming what they read. */
const readers: Readonly<Record<string, string>> = { Read: "file_path", Glob: "path", Grep: "path", LS: "path", NotebookRead: "notebook_path" }

/**
 * The tools the guard can refuse or an intent must record: the file writers and Bash. Every other
 * tool (Read, Grep, Glob, LS, WebFetch, an MCP tool, …) is allowed whatever the task's state, so
 * the hooks' matchers leave it out of PreToolUse and PermissionRequest (ADR 0026), and out of
 * PostToolUse: its end only ever tells of the worker's turn, which the stop reads (ADR 0030).
 *
 * @since 0.2.0
 * @category constants
 */
export const judgedTools: ReadonlyArray<string> = ["Bash", ...Object.keys(writers)]

/** What a tool call would do, from its name and input. */
const actionOf = (payload: HookPayload.Payload) => (tool: string, input: HookPayload.Json) =>
  Effect.gen(function*() {
    const writes = writers[tool]
    if (writes !== undefined) return { _tag: "Write" as const, paths: [yield* HookPayload.text(payload, input, writes, `tool_input.${writes}`)] }
    if (tool === "Bash") return { _tag: "Shell" as const, command: yield* HookPayload.text(payload, input, "command", "tool_input.command") }
    const reads = readers[tool]
    if (reads !== undefined) {
      const file = HookPayload.optionalText(input, reads)
      return { _tag: "Read" as const, paths: file === null ? [] : [file] }
    }
    return { _tag: "Other" as const }
  })

/**
 * Decodes one hook payload.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (raw: string): Effect.Effect<HostEvent.HostEvent, HostAdapter.HostDecodeError> =>
  Effect.flatMap(HookPayload.parse(name, raw), (payload) => HookPayload.eventOf(payload, actionOf(payload)))

const json = (value: unknown): HostAdapter.Reply => ({ stdout: `${JSON.stringify(value)}\n`, stderr: "", exitCode: 0 })
const nothing: HostAdapter.Reply = { stdout: "", stderr: "", exitCode: 0 }

/** Claude Code reads reasons as text; keep them to one readable paragraph. */
const said = (decision: Guard.Decision): string => (decision._tag === "Deny" ? `${decision.reason} ${decision.fix}` : decision._tag === "Ask" ? decision.reason : "")

/** The events whose answer can add text to the agent's context, by their hook event name. */
const contextEvents: Readonly<Partial<Record<HostEvent.HostEvent["_tag"], string>>> = { SessionStarted: "SessionStart", PromptSubmitted: "UserPromptSubmit" }

/**
 * An allowed event with text for the agent's context: `hookSpecificOutput.additionalContext` with
 * the event's name (the only two keys the host's schema for it takes), or nothing on other events.
 */
const advised = (event: HostEvent.HostEvent, context: string): HostAdapter.Reply => {
  const hookEventName = contextEvents[event._tag]
  return hookEventName === undefined ? nothing : json({ hookSpecificOutput: { hookEventName, additionalContext: context } })
}

/**
 * The answer to an event the guard judged.
 *
 * @since 0.1.0
 * @category encoding
 */
export const reply = (event: HostEvent.HostEvent, decision: Guard.Decision, context?: string | null): HostAdapter.Reply => {
  if (decision._tag === "Allow") return context === undefined || context === null || context === "" ? nothing : advised(event, context)
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
  if (event === "PermissionRequest") {
    // PermissionRequest ignores exit 2: only its own decision denies.
    return json({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: `Ratchet could not check this call: ${line}` } } })
  }
  if (event === null || toolGates.has(event)) {
    return { stdout: "", stderr: `Ratchet blocked this call because it could not check it: ${line} Run \`ratchet status\` in a terminal to see what is wrong.\n`, exitCode: 2 }
  }
  return json({ systemMessage: `Ratchet (warning): ${line}` })
}

/**
 * The adapter. Its PostToolUse entry matches only the judged tools (ADR 0030), so the end of any
 * other call is read from the session's transcript at the main agent's stop (`Transcript`).
 *
 * @since 0.1.0
 * @category adapters
 */
export const adapter: HostAdapter.HostAdapter = {
  name,
  canAsk: true,
  projectVariable,
  decode,
  reply,
  failure,
  callEndedInTurn: Transcript.callEndedInTurn
}
