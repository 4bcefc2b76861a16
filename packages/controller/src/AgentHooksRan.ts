/**
 * Whether the run's hooks ran for the agent's tool calls (ADR 0040, its amendment), pure: checked
 * after the fact, from the agent's own stream, because nothing before it can be sure they will. A
 * setting the runner cannot see or outrank (a project file written by an earlier attempt, a
 * variable, a host release that changes how settings merge) may keep Claude Code from running them,
 * and a session without its hooks is unfenced: its calls are neither judged nor recorded.
 *
 * Every side-effecting call the stream shows (`AgentHost.Decoded.toolCalls`, the calls the hooks
 * record: file writers, and Bash commands that write or cannot be read) must be one of:
 * - an intent of the attempt: the hook recorded it before it ran. Matched by the intent id the
 *   hook gives it (`toolIntentId` of the session and the host's call id, as `HostSession` does);
 *   when the stream names no session the ids cannot be made, and the attempt's tool-call intents
 *   are counted instead;
 * - refused, so it never ran: a denial of the result line (`rejected`), or a call whose result is
 *   an error (`failed`: a hook's denial is told to the agent as a failed result) that a refusal
 *   noted on the attempt names by its call id (`AgentRefusals.describeCall`, written by the hook
 *   before it answers). A failed call with neither an intent nor such a note is one the hooks did
 *   not see: it may have run and failed half-way (a command that wrote, then exited non-zero).
 * Anything else ran without the hooks: a call that `completed`, or whose end the stream does not
 * show, or that failed unrefused, with no intent. Past the bound on refusal notes
 * (`AgentRefusals.maxNotes`) a refused call has no note, so an agent refused that often is taken
 * as unfenced too (fail closed: a person looks). The attempt is then failed and the task blocked for a person (`finish`),
 * since what the agent did was not fenced.
 *
 * @since 0.4.0
 */
import type * as Run from "@ratchet/kernel/Run"
import type * as AgentHost from "./AgentHost.js"
import * as UseCase from "./internal/UseCase.js"

/**
 * The calls of `decoded` that ran with no intent of the attempt recorded by a hook, shown as
 * `<tool> <call id>` (none when every call is accounted for). `refused` holds the call ids the
 * refusals noted on the attempt name (`AgentRefusals.refusedCallIds`).
 *
 * @since 0.4.0
 * @category constructors
 */
export const unrecorded = (
  run: Run.State<object>,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number; readonly agentIntentId: string; readonly host: string },
  decoded: AgentHost.Decoded,
  refused: ReadonlySet<string> = new Set()
): ReadonlyArray<string> => {
  const recorded = new Set(
    [...run.intents.values()]
      .filter((intent) =>
        intent.runId === target.runId && intent.stepId === target.stepId && intent.attempt === target.attempt && intent.intentId !== target.agentIntentId
      )
      .map((intent) => intent.intentId)
  )
  const ran = (decoded.toolCalls ?? []).filter((call) =>
    call.end === "completed" || call.end === null || (call.end === "failed" && (call.callId === null || !refused.has(call.callId)))
  )
  const shown = (call: AgentHost.ToolCall) => `${call.tool} ${call.callId ?? "(no id)"}`
  if (decoded.sessionId === null) {
    // No session to make the hook's ids from: as many calls ran as the hooks recorded, or more.
    return ran.length > recorded.size ? ran.slice(recorded.size).map(shown) : []
  }
  const sessionRef = `${target.host}:${decoded.sessionId}`
  return ran.filter((call) => call.callId === null || !recorded.has(UseCase.toolIntentId(sessionRef, call.callId))).map(shown)
}

/**
 * The reason an attempt whose calls ran without the hooks fails with.
 *
 * @since 0.4.0
 * @category constructors
 */
export const reasonOf = (calls: ReadonlyArray<string>): string =>
  `the run's hooks did not run for ${calls.length} tool call${calls.length === 1 ? "" : "s"} of the agent (${calls.slice(0, 10).join(", ")}${
    calls.length > 10 ? ` and ${calls.length - 10} more` : ""
  }): they were neither judged nor recorded, so what the agent did is not fenced`
