/**
 * The one-statement append (ADR 0021) against what it remembers going stale. Each store decides its
 * next append against the branch its last append left, and `ratchet_append` lands it only if the
 * version, the lease and the rows taken for absent are still as remembered; otherwise the full
 * transaction answers. Two stores over one schema stand for two processes: one of them moves the
 * branch, the other appends on what it remembers, and must get exactly the answer a store with no
 * memory would give, with read models equal to a fold of the log.
 *
 * Every test works in its own schema, dropped after the file.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Events from "@ratchet/testkit/Events"
import { describePostgres, testUrl } from "@ratchet/testkit/Postgres"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { PostgresStore } from "../src/index.js"
import { schemasDroppedAfterAll } from "./schemas.js"

const url = testUrl()
/** A schema of its own per test, dropped after the file. */
const freshSchema = schemasDroppedAfterAll()

/** One store over `schema`, with a memory of its own: what one process of a fleet has. */
const storeOver = (schema: string) =>
  Effect.map(Layer.build(PostgresStore.layer({ url: Redacted.make(url), schema, maxConnections: 2 })), (context) => ({
    store: Context.get(context, EventStore.EventStore),
    models: Context.get(context, ReadModel.ReadModels),
    sql: Context.get(context, SqlClient.SqlClient)
  }))

/** Two stores over a fresh schema. */
const twoWriters = Effect.gen(function*() {
  const schema = freshSchema()
  const a = yield* storeOver(schema)
  const b = yield* storeOver(schema)
  return { a, b }
})

const projectId = "p-one"

let operations = 0
const append = (
  store: EventStore.Service,
  streamId: string,
  expectedVersion: number,
  events: ReadonlyArray<Event.Event>,
  options: { readonly epoch?: number; readonly operationId?: string } = {}
) =>
  store.append({
    projectId,
    streamId,
    expectedVersion,
    epoch: options.epoch ?? null,
    operationId: options.operationId ?? `op-${++operations}`,
    events
  })

const created = (streamId: string) => Events.taskCreated({ taskId: streamId, projectId })
const question = (n: number) => Events.questionAsked(`q${n}`, {}, { at: Events.defaultAt + n })

const typesOf = (store: EventStore.Service, streamId: string) =>
  Effect.map(Stream.runCollect(store.read({ streamId })), (events) => Chunk.toReadonlyArray(events).map((stored) => stored.event._tag))

/** The stored read models equal a fold of the log, read through either store. */
const modelsAgree = (models: ReadModel.Service, streamId: string) =>
  Effect.gen(function*() {
    const stored = yield* models.snapshot(streamId)
    const folded = yield* models.rebuild(streamId)
    expect(stored).toEqual(folded)
    return stored
  })

const tagOf = (error: { readonly _tag: string }) => error._tag.replace("@ratchet/storage/", "")

await describePostgres("the one-statement append when what it remembers went stale (ADR 0021)", () => {
  it.scopedLive("a version another process moved is a VersionConflict naming it, and nothing is written", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoWriters
      const streamId = "t-version"
      yield* append(a.store, streamId, 0, [created(streamId)])
      yield* append(a.store, streamId, 1, [question(1)])
      // A remembers version 2; B, which never appended, moves the branch to 3.
      yield* append(b.store, streamId, 2, [question(2)])
      const conflict = yield* Effect.flip(append(a.store, streamId, 2, [question(3)]))
      expect(conflict).toMatchObject({ _tag: "@ratchet/storage/VersionConflict", expected: 2, actual: 3 })
      expect(yield* typesOf(b.store, streamId)).toEqual(["TaskCreated", "QuestionAsked", "QuestionAsked"])
      // Against the version read again, A lands, and from there appends in one statement again.
      const third = yield* append(a.store, streamId, 3, [question(3)])
      const fourth = yield* append(a.store, streamId, 4, [question(4)])
      expect([third.version, fourth.version, fourth.firstLsn - third.lastLsn]).toEqual([4, 5, 1])
      const summary = (yield* modelsAgree(b.models, streamId)).summary
      expect(summary).toMatchObject({ version: 5, lastLsn: fourth.lastLsn })
    }))

  it.scopedLive("an operation id another process used replays its result, or is OperationReused for other events", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoWriters
      const streamId = "t-operation"
      yield* append(a.store, streamId, 0, [created(streamId)])
      yield* append(a.store, streamId, 1, [question(1)])
      // B lands operation "shared" at version 2, behind A's memory of version 2.
      const first = yield* append(b.store, streamId, 2, [question(2)], { operationId: "op-shared" })
      // A sends the same request expecting the version it remembers: the first result, nothing new.
      const again = yield* append(a.store, streamId, 2, [question(2)], { operationId: "op-shared" })
      expect(again).toEqual({ ...first, replayed: true })
      // The same id for other events is refused, and writes nothing.
      const reused = yield* Effect.flip(append(a.store, streamId, 2, [question(9)], { operationId: "op-shared" }))
      expect(tagOf(reused)).toBe("OperationReused")
      expect(yield* typesOf(a.store, streamId)).toEqual(["TaskCreated", "QuestionAsked", "QuestionAsked"])
      yield* modelsAgree(a.models, streamId)
    }))

  it.scopedLive("a lease another process took over fences the remembered epoch: StaleEpoch, nothing written", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoWriters
      const streamId = "t-lease"
      const expiring = { heartbeatMs: 1, graceMs: 0 } as const
      const ownerA = Events.owner("a", 101)
      const ownerB = Events.owner("b", 202)
      yield* append(a.store, streamId, 0, [created(streamId), Events.leaseAcquired(1, ownerA, expiring)])
      yield* append(a.store, streamId, 2, [question(1)], { epoch: 1 })
      yield* append(a.store, streamId, 3, [question(2)], { epoch: 1 })
      // The deadline passes by the store's clock; B takes the lease over at epoch 2.
      yield* Effect.sleep("5 millis")
      yield* append(b.store, streamId, 4, [Events.leaseTakenOver(2, ownerB, ownerA, expiring)], { epoch: 1 })
      // A writes on with epoch 1, expecting the version it remembers: the lease refuses it first.
      const stale = yield* Effect.flip(append(a.store, streamId, 4, [question(3)], { epoch: 1 }))
      expect(stale).toMatchObject({ _tag: "@ratchet/storage/StaleEpoch", presented: 1, current: 2, held: true })
      // ... and expecting the version it would find, still refused.
      const staleAtHead = yield* Effect.flip(append(a.store, streamId, 5, [question(3)], { epoch: 1 }))
      expect(staleAtHead).toMatchObject({ _tag: "@ratchet/storage/StaleEpoch", presented: 1, current: 2 })
      expect((yield* typesOf(b.store, streamId)).at(-1)).toBe("LeaseTakenOver")
      // B, the holder, writes on; A's memory does not leak into what B's appends fold.
      yield* append(b.store, streamId, 5, [question(3)], { epoch: 2 })
      const models = yield* modelsAgree(a.models, streamId)
      expect(models.lease).toMatchObject({ epoch: 2, held: true })
    }))

  it.scopedLive("attempt and intent rows another process changed are not overwritten from memory", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoWriters
      const streamId = "t-rows"
      const step = { runId: "r-1", stepId: "build", attempt: 1 } as const
      yield* append(a.store, streamId, 0, [created(streamId)])
      yield* append(a.store, streamId, 1, [Events.attemptScheduled("r-1", "build", 1)])
      yield* append(a.store, streamId, 2, [Events.intentRecorded("i-1", step)])
      // A remembers the intent Pending at version 3; B dispatches and resolves it.
      yield* append(b.store, streamId, 3, [Events.intentDispatched("i-1")])
      yield* append(b.store, streamId, 4, [Events.intentResolved("i-1", "Succeeded")])
      // A, from its memory, tries to dispatch it again: the version has moved.
      const conflict = yield* Effect.flip(append(a.store, streamId, 3, [Events.intentDispatched("i-1")]))
      expect(conflict).toMatchObject({ _tag: "@ratchet/storage/VersionConflict", expected: 3, actual: 5 })
      // A appends at the head: the intent it remembered as Pending stays resolved.
      yield* append(a.store, streamId, 5, [Events.intentRecorded("i-2", step)])
      yield* append(a.store, streamId, 6, [Events.intentDispatched("i-2")])
      const models = yield* modelsAgree(b.models, streamId)
      const i1 = models.intents.get("i-1")
      const i2 = models.intents.get("i-2")
      expect([i1?.state, i1?.outcome, i2?.state]).toEqual(["Resolved", "Succeeded", "Dispatched"])
      expect((yield* b.models.openIntents(streamId)).map((row) => row.intentId)).toEqual(["i-2"])
    }))

  it.scopedLive("an append inside a caller's transaction that rolls back leaves nothing remembered", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoWriters
      const streamId = "t-rollback"
      yield* append(a.store, streamId, 0, [created(streamId)])
      yield* append(a.store, streamId, 1, [question(1)])
      // Inside A's caller's transaction: a question asked, then the transaction rolls back.
      const rolledBack = yield* Effect.exit(
        a.sql.withTransaction(Effect.zipRight(append(a.store, streamId, 2, [question(100)]), Effect.fail("the caller gives up" as const)))
      )
      expect(rolledBack._tag).toBe("Failure")
      // B lands another question at the same version.
      yield* append(b.store, streamId, 2, [question(200)])
      // A appends at the head, touching only the summary: what it folds is the stored branch (with
      // q200, without q100), never the one that rolled back, though the versions agree.
      yield* append(a.store, streamId, 3, [question(2)])
      const models = yield* modelsAgree(b.models, streamId)
      expect(models.summary?.task.brief.questions.map((asked) => asked.questionId).sort()).toEqual(["q1", "q2", "q200"])
    }))
})
