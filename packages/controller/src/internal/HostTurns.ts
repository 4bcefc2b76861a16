/**
 * A host session as a manual step's worker: its tool calls recorded as the step's intents
 * (dispatched before the call runs, resolved after), and its turn's flags as `TurnRecorded` events
 * of the attempt awaiting it. Every write goes through the command handler (`UseCase.write`).
 *
 * @since 0.2.0
 * @internal
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Progress from "@ratchet/kernel/Progress"
import * as Task from "@ratchet/kernel/Task"
import * as Turn from "@ratchet/kernel/Turn"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { write, frontierRows } = kit

  /** The manual step awaiting its worker in the current run, with its open attempt, or null. */
  const awaitingOf = (task: Task.Task) =>
    task.state !== "RUNNING" || task.plan === null || task.run === null
      ? Effect.succeed(null)
      : Effect.map(frontierRows(task), ({ attempts, intents }) => {
        const awaiting = Progress.awaitingWorker((task.plan as NonNullable<Task.Task["plan"]>).plan, attempts, intents)
        if (awaiting === null) return null
        const row = attempts.find((candidate) => candidate.stepId === awaiting.step.id && candidate.attempt === awaiting.attempt)
        return {
          runId: (task.run as NonNullable<Task.Task["run"]>).runId,
          stepId: awaiting.step.id,
          attempt: awaiting.attempt,
          intents,
          turn: row?.turn ?? Turn.initial
        }
      })

  const toolCall: Controller.Service["toolCall"] = {
    started: (taskId, input, invocation) =>
      Effect.gen(function*() {
        const intentId = UseCase.toolIntentId(input.sessionRef, input.callId)
        let recorded: string | null = null
        const written = yield* write(taskId, invocation, (aggregate, at) =>
          Effect.map(awaitingOf(aggregate as Task.Task), (awaiting): ReadonlyArray<Event.Event> => {
            recorded = null
            // Nothing awaits a worker (or the hook repeated itself): the call is not a step's work.
            if (awaiting === null || awaiting.intents.some((intent) => intent.intentId === intentId)) return []
            recorded = intentId
            const meta = { version: 1 as const, actor: invocation.actor, at }
            const description = input.description.trim().slice(0, 4000) || "(a tool call)"
            return [
              { _tag: "IntentRecorded", ...meta, intentId, runId: awaiting.runId, stepId: awaiting.stepId, attempt: awaiting.attempt, description },
              { _tag: "IntentDispatched", ...meta, intentId }
            ]
          }))
        return { ...written, intentId: recorded }
      }),
    ended: (taskId, input, invocation) =>
      Effect.gen(function*() {
        const intentId = UseCase.toolIntentId(input.sessionRef, input.callId)
        let resolved: string | null = null
        const written = yield* write(taskId, invocation, (aggregate, at) =>
          Effect.map(
            aggregate._tag === "Task" && aggregate.run !== null
              ? frontierRows(aggregate)
              : Effect.succeed({ attempts: [] as ReadonlyArray<ReadModel.AttemptRow>, intents: [] as ReadonlyArray<ReadModel.IntentRow> }),
            ({ attempts, intents }): ReadonlyArray<Event.Event> => {
              // Unknown (not a step's work), already resolved, or its attempt already decided by
              // recovery (Indeterminate, awaiting a person's settlement): then the call's end is late.
              resolved = null
              const intent = intents.find((row) => row.intentId === intentId && row.state === "Dispatched")
              const attempt = intent === undefined
                ? undefined
                : attempts.find((row) => row.stepId === intent.stepId && row.attempt === intent.attempt && (row.state === "Running" || row.state === "Pending"))
              if (intent === undefined || attempt === undefined) return []
              resolved = intentId
              return [
                { _tag: "IntentResolved", version: 1, actor: invocation.actor, at, intentId, outcome: input.outcome, resultRefs: [] },
                ...turnEvents(invocation.actor, at, intent, Turn.changes(attempt.turn, input.turn))
              ]
            }
          ))
        return { ...written, intentId: resolved }
      })
  }

  const recordTurn: Controller.Service["recordTurn"] = (taskId, input, invocation) =>
    Effect.gen(function*() {
      if (invocation.leaseEpoch === undefined) {
        return yield* new ControllerError.InvalidRequest({
          field: "--lease-epoch",
          reason: `a turn is recorded by the worker holding task ${taskId}'s writer lease, and this invocation presents no lease epoch.`,
          fix: `Present the epoch the worker holds (ratchet lease ${taskId} shows it).`
        })
      }
      let recorded: { readonly stepId: string; readonly attempt: number } | null = null
      const written = yield* write(taskId, invocation, (aggregate, at) =>
        Effect.map(awaitingOf(aggregate as Task.Task), (awaiting): ReadonlyArray<Event.Event> => {
          // Decided again after a conflict: only the last decision counts.
          recorded = null
          if (awaiting === null || awaiting.stepId !== input.attempt.stepId || awaiting.attempt !== input.attempt.attempt) return []
          // The turn is its flags: an event that changes none is no news, and is not appended, so
          // a worker's hundredth tool call of a turn (or a repeated hook) writes nothing.
          const news = Turn.changes(awaiting.turn, input.events)
          if (news.length > 0) recorded = input.attempt
          return turnEvents(invocation.actor, at, { runId: awaiting.runId, ...input.attempt }, news)
        }))
      return { ...written, attempt: recorded }
    })

  return { toolCall, recordTurn } satisfies Pick<Controller.Service, "toolCall" | "recordTurn">
}

/** `TurnRecorded` events of one attempt. */
const turnEvents = (
  actor: Event.Actor,
  at: number,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number },
  turns: ReadonlyArray<Turn.Event>
): ReadonlyArray<Event.Event> =>
  turns.map((turn) => ({ _tag: "TurnRecorded", version: 1, actor, at, runId: target.runId, stepId: target.stepId, attempt: target.attempt, turn }))
