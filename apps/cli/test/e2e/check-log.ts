/**
 * Reads a task's whole log (its current branch) from the store and checks it the way recovery relies on: every event
 * decodes, the checked fold (`Task.replay`: every state change an edge of the lifecycle) succeeds,
 * every attempt and intent transition in it is legal for its machine, and the read models rebuilt
 * by a cold fold equal the stored ones.
 *
 * The tests run its bundle, which their global setup builds (`harness.helper`).
 * Run as `node --conditions=@ratchet/source --import tsx check-log.ts <taskId>` with the CLI's
 * store environment. Prints one JSON line `{ ok, state, events, problems }`.
 */
import * as TaskBranch from "@ratchet/controller/TaskBranch"
import * as Attempt from "@ratchet/kernel/Attempt"
import * as Intent from "@ratchet/kernel/Intent"
import * as Task from "@ratchet/kernel/Task"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"

const taskId = process.argv[2]
if (taskId === undefined) {
  process.stderr.write("usage: check-log.ts <taskId>\n")
  process.exit(2)
}

const program = Effect.gen(function*() {
  const store = yield* EventStore.EventStore
  const models = yield* ReadModel.ReadModels
  // The task's current branch (the one created last), ancestors included.
  const branch = TaskBranch.current(yield* store.branches(taskId))
  const stored = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: taskId, branch })))
  const problems: Array<string> = []
  const replayed = Task.replay(stored.map((s) => s.event))
  if (Either.isLeft(replayed)) problems.push(replayed.left.message)
  const attempts = new Map<string, Attempt.State>()
  const intents = new Map<string, Intent.State>()
  for (const { event, lsn } of stored) {
    if (event._tag === "AttemptScheduled") attempts.set(`${event.runId}/${event.stepId}/${event.attempt}`, "Pending")
    if (event._tag === "AttemptTransitioned") {
      const key = `${event.runId}/${event.stepId}/${event.attempt}`
      const from = attempts.get(key)
      if (from !== event.from) problems.push(`lsn ${lsn}: attempt ${key} is ${from ?? "unknown"}, the event says ${event.from}`)
      else {
        const legal = (["Admit", "Succeed", "Fail", "TimeOut"] as const).some((tag) =>
          Either.getOrNull(Attempt.transition(event.from, { _tag: tag } as Attempt.Cause)) === event.to
        ) || [true, false].some((dispatched) => Either.getOrNull(Attempt.transition(event.from, Attempt.cancel(dispatched))) === event.to)
        if (!legal) problems.push(`lsn ${lsn}: attempt ${key} ${event.from} → ${event.to} is not a transition of the attempt machine`)
      }
      attempts.set(key, event.to)
    }
    if (event._tag === "IntentRecorded") intents.set(event.intentId, Intent.pending)
    const cause: Intent.Cause | null = event._tag === "IntentDispatched"
      ? Intent.dispatch
      : event._tag === "IntentResolved"
      ? Intent.resolve(event.outcome)
      : event._tag === "IntentAbandoned"
      ? Intent.abandon
      : null
    if (cause !== null && "intentId" in event) {
      const from = intents.get(event.intentId)
      const next = from === undefined ? null : Either.getOrNull(Intent.transition(from, cause))
      if (next === null) problems.push(`lsn ${lsn}: intent ${event.intentId} cannot take ${event._tag} from ${from?._tag ?? "nothing"}`)
      else intents.set(event.intentId, next)
    }
  }
  const snapshot = yield* models.snapshot(taskId, branch)
  const rebuilt = yield* models.rebuild(taskId, branch)
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
  if (!same([...snapshot.attempts.entries()].sort(), [...rebuilt.attempts.entries()].sort())) problems.push("the attempts read model differs from a cold fold")
  if (!same([...snapshot.intents.entries()].sort(), [...rebuilt.intents.entries()].sort())) problems.push("the intents read model differs from a cold fold")
  if (!same(snapshot.summary?.task, rebuilt.summary?.task)) problems.push("the task summary differs from a cold fold")
  const state = Either.isRight(replayed) && replayed.right._tag === "Task" ? replayed.right.state : null
  return { ok: problems.length === 0, state, events: stored.length, problems }
})

const layer = (process.env["RATCHET_DATABASE_URL"] ?? "") === "" ? SqliteStore.layerConfig : PostgresStore.layerConfig

Effect.runPromise(Effect.provide(program, layer)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`)
  },
  (error: unknown) => {
    process.stderr.write(`check-log: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
)
