/**
 * The agent's tool calls still open when its attempt ends (ADR 0040), pure: each side-effecting
 * call the run's hooks recorded is an intent of the agent step's attempt, dispatched before the
 * call and resolved when its end hook ran. A call whose end no hook reported (the host does not run
 * an end hook for it, or stopped mid-call) is still dispatched when the agent's process has ended,
 * and nothing will resolve it afterwards. The runner closes such intents in the write that records
 * the agent's end, as `ratchet step done` closes a manual worker's (the kernel resolves a dispatched
 * intent, it never abandons one): resolved Failed, with a note on the attempt naming them.
 *
 * @since 0.4.0
 */
import type * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import type * as Run from "@ratchet/kernel/Run"

/**
 * What closes the tool calls of `attempt` of `stepId` in `runId` left dispatched in `run`, other
 * than the agent's own intent `agentIntentId` (its end is the step's `FinishStep`): a
 * `ResolveEffect` (Failed) each and one `AttemptNoted`, or nothing when none is open.
 *
 * @since 0.4.0
 * @category constructors
 */
export const closeUnreported = (
  run: Run.State<object>,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number; readonly agentIntentId: string },
  meta: { readonly actor: Event.Actor; readonly at: number }
): ReadonlyArray<Decider.Command | Event.Event> => {
  const open = [...run.intents.values()]
    .filter((intent) =>
      intent.runId === target.runId && intent.stepId === target.stepId && intent.attempt === target.attempt &&
      intent.state === "Dispatched" && intent.intentId !== target.agentIntentId
    )
    .map((intent) => intent.intentId)
    .sort()
  if (open.length === 0) return []
  return [
    ...open.map((intentId): Decider.Command => ({ _tag: "ResolveEffect", ...meta, runId: target.runId, intentId, outcome: "Failed", resultRefs: [] })),
    {
      _tag: "AttemptNoted",
      version: 1,
      ...meta,
      runId: target.runId,
      stepId: target.stepId,
      attempt: target.attempt,
      note: `closed when the agent ended, their end never reported by a hook (the host ran no end hook for them, or stopped mid-call): ${open.slice(0, 20).join(", ")}${open.length > 20 ? ` and ${open.length - 20} more` : ""}`
    }
  ]
}
