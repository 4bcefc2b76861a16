/**
 * The runner's agent's tool calls (ADR 0040): whether a session is that agent (`AgentFence`,
 * against the store), and its calls recorded in the agent step's open attempt under the runner's
 * lease epoch, through the kernel's run decider: an allowed side-effecting call is an intent
 * recorded and dispatched before it runs (`DispatchEffect`) and resolved when it ends
 * (`ResolveEffect`); a call the guard refuses is noted on the attempt with the reason
 * (`RefuseEffect`). The hook never holds or heartbeats the lease: the runner does, and a write
 * under an epoch it no longer holds is fenced by the store.
 *
 * Nothing here rewrites the task's projections: the runner does at its next boundary, and a hook
 * answers on every tool call of an agent.
 *
 * @since 0.4.0
 * @internal
 */
import type * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as AgentFence from "../AgentFence.js"
import * as AgentRefusals from "../AgentRefusals.js"
import * as CommandHandler from "../CommandHandler.js"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.4.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { branchOf, frontierRows, keyOn, leases, models, projectId, store, summaryOf } = kit

  /** The epoch the event at `lsn` of `taskId`'s `branch` was appended under, when it is `intentId`'s dispatch. */
  const dispatchEpochOf = (taskId: string, branch: string, lsn: number, intentId: string) =>
    Effect.map(
      Stream.runCollect(store.read({ streamId: taskId, branch, fromLsn: lsn, toLsn: lsn })).pipe(
        Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed(Chunk.empty<EventStore.StoredEvent>()))
      ),
      (events) => {
        const found = Chunk.toReadonlyArray(events).find((stored) => stored.event._tag === "IntentDispatched" && stored.event.intentId === intentId)
        return found?.epoch ?? null
      }
    )

  const fence: Controller.Service["agentCall"]["fence"] = (claim) =>
    Effect.gen(function*() {
      const lease = { status: "free" as const, epoch: null }
      const summary = yield* summaryOf(claim.taskId).pipe(Effect.catchTag("@ratchet/controller/TaskNotFound", () => Effect.succeed(null)))
      if (summary === null) return AgentFence.check(claim, { task: null, attempt: null, intent: null, dispatchEpoch: null, lease })
      const task = summary.task
      const { attempts, intents } = yield* frontierRows(task)
      const attempt = attempts.find((row) => row.runId === claim.runId && row.stepId === claim.stepId && row.attempt === claim.attempt) ?? null
      const intentId = AgentFence.intentIdOf(claim.capability)
      const intent = intents.find((row) => row.intentId === intentId) ?? null
      const dispatchEpoch = intent === null || intent.state !== "Dispatched" ? null : yield* dispatchEpochOf(claim.taskId, summary.branch, intent.updatedLsn, intentId)
      const observed = yield* leases.observe(yield* keyOn(claim.taskId))
      return AgentFence.check(claim, {
        task: { state: task.state, runId: task.run?.runId ?? null },
        attempt,
        intent,
        dispatchEpoch,
        lease: { status: observed.status, epoch: observed.epoch }
      })
    })

  /**
   * One run command of the agent's attempt, decided against the run's frontier and appended under
   * the runner's epoch; `build` returns none when there is nothing to write.
   */
  const writeRun = (
    agent: AgentFence.Verdict & { readonly _tag: "Agent" },
    build: (read: CommandHandler.Read, at: number) => ReadonlyArray<Decider.Command>
  ) =>
    Effect.gen(function*() {
      const taskId = agent.claim.taskId
      yield* summaryOf(taskId)
      const handled = yield* CommandHandler.handle({
        projectId,
        streamId: taskId,
        branch: yield* branchOf(taskId),
        epoch: agent.epoch,
        withRun: "frontier",
        decide: (read, at) => Effect.succeed(build(read, at)),
        describeHolder: (lease) => UseCase.describeOwner(lease.owner)
      }).pipe(
        Effect.provideService(EventStore.EventStore, store),
        Effect.provideService(ReadModel.ReadModels, models),
        Effect.catchTag("@ratchet/kernel/RunCommandRefused", (refused) =>
          Effect.fail(
            new ControllerError.InvalidRequest({
              field: "attempt",
              reason: `the agent's tool call could not be recorded in attempt ${agent.claim.attempt} of step ${agent.claim.stepId}: ${refused.reason}`,
              fix: "The attempt has ended or the run moved on; the call is not run."
            })
          ))
      )
      return { events: handled.events.map((event) => event._tag), lastLsn: handled.appended?.lastLsn ?? null }
    })

  /**
   * The refusals noted on the agent's attempt so far: its notes since its own intent was dispatched
   * (the intent stays dispatched while the agent runs, so its position is where the agent started).
   */
  const refusalsNoted = (agent: AgentFence.Verdict & { readonly _tag: "Agent" }) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(agent.claim.taskId)
      const { intents } = yield* frontierRows(summary.task)
      const own = intents.find((row) => row.intentId === agent.intentId)
      if (own === undefined) return 0
      const events = yield* Stream.runCollect(store.read({ streamId: agent.claim.taskId, branch: summary.branch, fromLsn: own.updatedLsn })).pipe(
        Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed(Chunk.empty<EventStore.StoredEvent>()))
      )
      return AgentRefusals.notedIn(Chunk.toReadonlyArray(events).map((stored) => stored.event), agent.claim)
    })

  const meta = (agent: AgentFence.Verdict & { readonly _tag: "Agent" }, actor: Event.Actor, at: number) => ({ actor, at, runId: agent.claim.runId })

  const agentCall: Controller.Service["agentCall"] = {
    fence,
    started: (agent, input, actor) =>
      Effect.gen(function*() {
        const intentId = UseCase.toolIntentId(input.sessionRef, input.callId)
        const written = yield* writeRun(agent, (read, at) =>
          // A repeated hook (the project's own hooks run beside the run's) records the call once.
          read.run.intents.has(intentId) ? [] : [{
            _tag: "DispatchEffect",
            ...meta(agent, actor, at),
            stepId: agent.claim.stepId,
            attempt: agent.claim.attempt,
            intentId,
            description: input.description.trim().slice(0, 4000) || "(a tool call)"
          }])
        return { ...written, intentId }
      }),
    ended: (agent, input, actor) =>
      Effect.gen(function*() {
        const intentId = UseCase.toolIntentId(input.sessionRef, input.callId)
        let resolved: string | null = null
        const written = yield* writeRun(agent, (read, at) => {
          resolved = null
          const intent = read.run.intents.get(intentId)
          // Unknown (a call that was not recorded), or already resolved: nothing to write.
          if (intent === undefined || intent.state !== "Dispatched") return []
          resolved = intentId
          return [{ _tag: "ResolveEffect", ...meta(agent, actor, at), intentId, outcome: input.outcome, resultRefs: [] }]
        })
        return { ...written, intentId: resolved as string | null }
      }),
    refused: (agent, input, actor) =>
      Effect.gen(function*() {
        // Bounded (`AgentRefusals`): past the bound the call is refused with nothing written.
        const next = AgentRefusals.next(yield* refusalsNoted(agent), input.reason)
        if (next._tag === "Quiet") return { events: [] as ReadonlyArray<string>, lastLsn: null }
        return yield* writeRun(agent, (_, at) => [{
          _tag: "RefuseEffect",
          ...meta(agent, actor, at),
          stepId: agent.claim.stepId,
          attempt: agent.claim.attempt,
          description: input.description,
          reason: next.reason
        }])
      })
  }

  return { agentCall } satisfies Pick<Controller.Service, "agentCall">
}
