/**
 * The Codex adapter: Codex's hook payloads (one JSON object on standard input; the input structs
 * of Codex's hooks schema) decoded into host events, and the guard's decisions encoded in Codex's
 * contract.
 *
 * Codex differs from Claude Code where it matters:
 * - It does not honour `ask` (an `ask` marks the hook run failed and the call goes ahead), so an
 *   ask is a denial whose reason says what the user would have been asked (`canAsk: false`).
 * - Its JSON output rejects unknown keys and some universal fields, so only the documented shapes
 *   are printed: PreToolUse `hookSpecificOutput.permissionDecision: "deny"` with the reason,
 *   PermissionRequest `hookSpecificOutput.decision.behavior: "deny"` with the message, Stop and
 *   SubagentStop `decision: "block"` with the reason (Codex continues with the reason as the next
 *   prompt; `stop_hook_active` makes that happen once), SessionStart and UserPromptSubmit
 *   `hookSpecificOutput.additionalContext` with the event's name when there are lessons for the
 *   agent (ADR 0038; Codex adds it to the model's context). Everything else prints nothing.
 * - `apply_patch` carries its patch in `tool_input.command`; the files it writes are read from the
 *   patch's `*** Add File:`, `*** Update File:`, `*** Delete File:` and `*** Move to:` lines. A
 *   patch naming none is refused rather than allowed unseen.
 *
 * - Codex documents no variable naming the project: it starts its hooks in the session's working
 *   directory, so that directory (the hook's own) is where the project is looked for; the payload's
 *   `cwd` only resolves a call's relative paths (see `ProjectRoot`).
 *
 * Failing: a tool call is blocked (exit 2 with the reason on standard error, which Codex takes as
 * the denial); any other event exits 1 with one line on standard error, which Codex reports as a
 * failed hook and goes on (fail open). A hook that times out fails open in Codex.
 *
 * @since 0.1.0
 */
import type * as Guard from "@ratchet/host/Guard"
import type * as HostAdapter from "@ratchet/host/HostAdapter"
import * as HookPayload from "@ratchet/host/HookPayload"
import type * as HostEvent from "@ratchet/host/HostEvent"
import * as Effect from "effect/Effect"

/**
 * The adapter's name: `ratchet hook codex`.
 *
 * @since 0.1.0
 * @category constants
 */
export const name = "codex"

/** The events on which a failure must block: the host is about to run a tool. */
const toolGates = new Set(["PreToolUse", "PermissionRequest"])

const patchHeader = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/

/**
 * The files an `apply_patch` patch writes, in order, each once.
 *
 * @since 0.1.0
 * @category decoding
 */
export const patchedFiles = (patch: string): ReadonlyArray<string> => {
  const files: Array<string> = []
  for (const line of patch.split(/\r?\n/)) {
    const match = patchHeader.exec(line)
    const file = match?.[1]?.trim()
    if (file !== undefined && file !== "" && !files.includes(file)) files.push(file)
  }
  return files
}

/**
 * The tools the guard can refuse or an intent must record: Bash and `apply_patch`. Every other
 * tool (an MCP tool, `view_image`, …) is allowed whatever the task's state, so the hooks' matchers
 * leave it out of PreToolUse and PermissionRequest (ADR 0026).
 *
 * @since 0.2.0
 * @category constants
 */
export const judgedTools: ReadonlyArray<string> = ["Bash", "apply_patch"]

/** What a tool call would do, from its name and input. */
const actionOf = (payload: HookPayload.Payload) => (tool: string, input: HookPayload.Json) =>
  Effect.gen(function*() {
    if (tool === "Bash") return { _tag: "Shell" as const, command: yield* HookPayload.text(payload, input, "command", "tool_input.command") }
    if (tool === "apply_patch") {
      const patch = yield* HookPayload.text(payload, input, "command", "tool_input.command")
      const files = patchedFiles(patch)
      if (files.length === 0) {
        return yield* HookPayload.fail(name, "tool_input.command", "is a patch that names no file (no *** Add File, Update File, Delete File or Move to line)", payload.event)
      }
      return { _tag: "Write" as const, paths: files }
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
 * The answer to an event the guard judged; an ask is answered as a denial.
 *
 * @since 0.1.0
 * @category encoding
 */
export const reply = (event: HostEvent.HostEvent, decision: Guard.Decision, context?: string | null): HostAdapter.Reply => {
  if (decision._tag === "Allow") return context === undefined || context === null || context === "" ? nothing : advised(event, context)
  const reason = `Ratchet: ${said(decision)}`
  switch (event._tag) {
    case "ToolCallRequested":
      return event.permissionPrompt
        ? json({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: reason } } })
        : json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } })
    case "StopRequested":
      return decision._tag === "Deny" ? json({ decision: "block", reason }) : nothing
    default:
      return nothing
  }
}

/**
 * The answer when Ratchet could not judge: closed for a tool call or an unreadable event (exit 2,
 * the reason on standard error), open otherwise (exit 1 and one line: a failed hook run, and Codex
 * goes on).
 *
 * @since 0.1.0
 * @category encoding
 */
export const failure = (event: string | null, problem: string): HostAdapter.Reply => {
  const line = problem.replace(/\s+/g, " ").slice(0, 500)
  if (event === null || toolGates.has(event)) {
    return { stdout: "", stderr: `Ratchet blocked this call because it could not check it: ${line} Run \`ratchet status\` in a terminal to see what is wrong.\n`, exitCode: 2 }
  }
  return { stdout: "", stderr: `Ratchet (warning): ${line}\n`, exitCode: 1 }
}

/**
 * The adapter.
 *
 * @since 0.1.0
 * @category adapters
 */
export const adapter: HostAdapter.HostAdapter = { name, canAsk: false, decode, reply, failure }
