/**
 * What the runner checks and closes when an agent step's host has ended, before the attempt's end
 * is written (ADR 0040 and its amendments):
 * - the calls the hooks refused, as the refusal notes on the attempt name them ({@link refusedCalls},
 *   read before the write);
 * - an agent given the run's hooks whose stream shows side-effecting calls they did not record ran
 *   unfenced: its attempt fails and the task blocks (`AgentHooksRan`);
 * - the agent's tool calls whose end no hook reported are closed before its end (`AgentToolCalls`).
 *
 * A command step passes through unchanged.
 *
 * @since 0.5.0
 */
import type * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import type * as Run from "@ratchet/kernel/Run"
import type * as EventStore from "@ratchet/storage/EventStore"
import type * as ReadModel from "@ratchet/storage/ReadModel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as AgentHooksRan from "./AgentHooksRan.js"
import * as AgentRefusals from "./AgentRefusals.js"
import * as AgentToolCalls from "./AgentToolCalls.js"
import * as CommandHandler from "./CommandHandler.js"
import * as RunAgentStep from "./RunAgentStep.js"
import type * as RunStep from "./RunStep.js"

const none: ReadonlySet<string> = new Set<string>()

/**
 * The call ids the refusals noted on `ran`'s attempt name (`AgentRefusals.refusedCallIds`): its
 * events since the agent's own intent was dispatched (it stays dispatched while the agent runs).
 * None for a step that is not a hooked agent's, and none when they cannot be read: the check then
 * holds every failed call unaccounted for (fail closed).
 *
 * @since 0.5.0
 * @category constructors
 */
export const refusedCalls = (
  store: EventStore.EventStore["Type"],
  ran: RunStep.Ran,
  target: { readonly projectId: string; readonly taskId: string; readonly branch: string; readonly runId: string }
): Effect.Effect<ReadonlySet<string>, never, ReadModel.ReadModels> => {
  if (!RunAgentStep.isAgent(ran) || ran.agent.hooked !== true) return Effect.succeed(none)
  const attempt = { runId: target.runId, stepId: ran.stepId, attempt: ran.attempt, agentIntentId: ran.intentId }
  return Effect.gen(function*() {
    const { run } = yield* CommandHandler.read(target.projectId, target.taskId, target.branch, "frontier")
    const own = run.intents.get(ran.intentId)
    if (own === undefined) return none
    const events = yield* Stream.runCollect(store.read({ streamId: target.taskId, branch: target.branch, fromLsn: own.updatedLsn }))
    return AgentRefusals.refusedCallIds(Chunk.toReadonlyArray(events).map((stored) => stored.event), attempt)
  }).pipe(Effect.catchAll(() => Effect.succeed(none)))
}

/**
 * `ran` as the runner finishes it against the run's state `run`: failed when a hooked agent's
 * calls ran unfenced (`refused` being the calls the hooks refused), and the events that close the
 * agent's unreported tool calls, written before its end.
 *
 * @since 0.5.0
 * @category constructors
 */
export const settle = (
  ran: RunStep.Ran,
  run: Run.State<object>,
  refused: ReadonlySet<string>,
  meta: { readonly runId: string; readonly actor: Event.Actor; readonly at: number }
): { readonly checked: RunStep.Ran; readonly unreported: ReadonlyArray<Decider.Command | Event.Event> } => {
  if (!RunAgentStep.isAgent(ran)) return { checked: ran, unreported: [] }
  const target = { runId: meta.runId, stepId: ran.stepId, attempt: ran.attempt, agentIntentId: ran.intentId }
  const checked = ran.agent.hooked === true
    ? RunAgentStep.withUnfenced(ran, AgentHooksRan.unrecorded(run, { ...target, host: ran.agent.host }, ran.agent.decoded, refused))
    : ran
  return { checked, unreported: AgentToolCalls.closeUnreported(run, target, { actor: meta.actor, at: meta.at }) }
}
