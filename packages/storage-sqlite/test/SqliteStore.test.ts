/**
 * Focused smoke tests of the SQLite store on a temporary directory: append and read, replay,
 * fencing, forks, paging, the read models against a cold rebuild, damaged rows, the migration
 * guard, the transaction wrapper (BEGIN IMMEDIATE / COMMIT / ROLLBACK, interruption, savepoints)
 * and the error classification from fake driver errors. The exhaustive, engine-neutral suite is
 * `@ratchet/testkit`'s storage conformance suite (see conformance.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Event from "@ratchet/kernel/Event"
import * as Spec from "@ratchet/kernel/Spec"
import * as Turn from "@ratchet/kernel/Turn"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as Migrations from "@ratchet/storage/Migrations"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as SqlDialect from "@ratchet/storage/SqlDialect"
import type * as StorageError from "@ratchet/storage/StorageError"
import Database from "better-sqlite3"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as SqliteStore from "../src/SqliteStore.js"

const roots: Array<string> = []
const tempHome = (): string => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-sqlite-"))
  roots.push(directory)
  return path.join(directory, "home")
}
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true })
})

const actor: Event.Actor = { kind: "system", id: "test" }
const owner = { workspaceId: "w-1", host: "h-1", pid: 42, processStartedAt: 7 }

const created = (taskId: string): Event.Event =>
  Event.make({ _tag: "TaskCreated", actor, at: 1, taskId, projectId: "p-1", goal: "ship it", slug: "ship-it" })
const begun: Event.Event = Event.make({ _tag: "InterviewBegun", actor, at: 2 })
const asked = (questionId: string): Event.Event =>
  Event.make({ _tag: "QuestionAsked", actor, at: 3, questionId, text: "why?", blocking: false })
const acquired = (epoch: number): Event.Event =>
  Event.make({ _tag: "LeaseAcquired", actor, at: 4, epoch, owner, heartbeatMs: 2000, graceMs: 3000 })
const takenOver = (epoch: number): Event.Event =>
  Event.make({
    _tag: "LeaseTakenOver",
    actor,
    at: 5,
    epoch,
    owner: { ...owner, pid: 43 },
    displaced: owner,
    heartbeatMs: 2000,
    graceMs: 3000
  })
const released = (epoch: number): Event.Event => Event.make({ _tag: "LeaseReleased", actor, at: 6, epoch })

const request = (
  overrides: Partial<EventStore.AppendRequest> & Pick<EventStore.AppendRequest, "operationId" | "events">
): EventStore.AppendRequest => ({ projectId: "p-1", streamId: "t-1", expectedVersion: 0, epoch: null, ...overrides })

const readAll = (request: EventStore.ReadRequest) =>
  Effect.flatMap(EventStore.EventStore, (store) => Stream.runCollect(store.read(request))).pipe(
    Effect.map(Chunk.toReadonlyArray)
  )

const failure = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

const reasonOf = (error: unknown): string =>
  (error as StorageError.StorageError)._tag === "@ratchet/storage/StorageError"
    ? (error as StorageError.StorageError).reason._tag
    : String((error as { _tag?: unknown })._tag)

describe("SqliteStore", () => {
  it.effect("appends, reads back in LSN order and reports the head", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const first = yield* store.append(request({ operationId: "op-1", events: [created("t-1"), begun] }))
      expect(first).toEqual({ streamId: "t-1", branch: "main", version: 2, firstLsn: 1, lastLsn: 2, replayed: false })
      const second = yield* store.append(request({ operationId: "op-2", expectedVersion: 2, events: [asked("q-1")] }))
      expect(second).toEqual({ streamId: "t-1", branch: "main", version: 3, firstLsn: 3, lastLsn: 3, replayed: false })
      const events = yield* readAll({ streamId: "t-1" })
      expect(events.map((stored) => [stored.lsn, stored.version, stored.event._tag, stored.operationId])).toEqual([
        [1, 1, "TaskCreated", "op-1"],
        [2, 2, "InterviewBegun", "op-1"],
        [3, 3, "QuestionAsked", "op-2"]
      ])
      expect(events[2]?.event).toEqual(asked("q-1"))
      expect(events.every((stored) => stored.projectId === "p-1" && stored.branch === "main")).toBe(true)
      expect(yield* store.head("t-1")).toEqual({ projectId: "p-1", streamId: "t-1", branch: "main", version: 3, lastLsn: 3 })
      expect(yield* store.head("nope")).toBeNull()
      expect(yield* readAll({ streamId: "nope" })).toEqual([])
      expect(reasonOf(yield* failure(store.head("t-1", "elsewhere")))).toBe("@ratchet/storage/BranchNotFound")
      // Ranges are inclusive LSN bounds.
      expect((yield* readAll({ streamId: "t-1", fromLsn: 2, toLsn: 2 })).map((stored) => stored.lsn)).toEqual([2])
    }).pipe(Effect.provide(SqliteStore.layer({ directory: tempHome() }))))

  it.effect("refuses a stale expected version, naming the current one, and bad requests by field", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      yield* store.append(request({ operationId: "op-1", events: [created("t-1")] }))
      const conflict = yield* failure(store.append(request({ operationId: "op-2", events: [begun] })))
      expect(conflict).toEqual(
        new EventStore.VersionConflict({ streamId: "t-1", branch: "main", expected: 0, actual: 1 })
      )
      const ahead = yield* failure(store.append(request({ operationId: "op-3", expectedVersion: 5, events: [begun] })))
      expect(ahead).toEqual(new EventStore.VersionConflict({ streamId: "t-1", branch: "main", expected: 5, actual: 1 }))
      const cases: ReadonlyArray<readonly [EventStore.AppendRequest, string]> = [
        [request({ operationId: "op-x", events: [] }), "events"],
        [request({ operationId: "bad id", events: [begun] }), "operationId"],
        [request({ operationId: "op-x", streamId: "../t", events: [begun] }), "streamId"],
        [request({ operationId: "op-x", projectId: "", events: [begun] }), "projectId"],
        [request({ operationId: "op-x", branch: "a/b", events: [begun] }), "branch"],
        [request({ operationId: "op-x", expectedVersion: -1, events: [begun] }), "expectedVersion"],
        [request({ operationId: "op-x", expectedVersion: 1.5, events: [begun] }), "expectedVersion"],
        [request({ operationId: "op-x", epoch: -2, events: [begun] }), "epoch"],
        [request({ operationId: "op-x", events: [{ _tag: "Nope" } as unknown as Event.Event] }), "events[0]"],
        [request({ operationId: "op-x", expectedVersion: 1, projectId: "p-2", events: [begun] }), "projectId"]
      ]
      for (const [bad, field] of cases) {
        const error = yield* failure(store.append(bad))
        expect(error._tag).toBe("@ratchet/storage/InvalidRequest")
        expect((error as EventStore.InvalidRequest).field).toBe(field)
      }
      const missing = yield* failure(
        store.append(request({ operationId: "op-y", expectedVersion: 1, branch: "side", events: [begun] }))
      )
      expect(missing).toEqual(new EventStore.BranchNotFound({ streamId: "t-1", branch: "side" }))
      expect((yield* store.head("t-1"))?.version).toBe(1)
    }).pipe(Effect.provide(SqliteStore.layer({ directory: tempHome() }))))

  it.effect("replays an operation id without writing, and refuses its reuse for another request", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const original = request({ operationId: "op-1", events: [created("t-1")] })
      const first = yield* store.append(original)
      yield* store.append(request({ operationId: "op-2", expectedVersion: 1, events: [begun] }))
      // The version moved since; the replay still returns the first result.
      const replay = yield* store.append(original)
      expect(replay).toEqual({ ...first, replayed: true })
      const reused = yield* failure(store.append({ ...original, events: [created("t-2")] }))
      expect(reused).toEqual(new EventStore.OperationReused({ operationId: "op-1", streamId: "t-1" }))
      // Nothing was written by the replay or the refusal: the LSN counter did not move.
      const next = yield* store.append(request({ operationId: "op-3", expectedVersion: 2, events: [asked("q")] }))
      expect([next.firstLsn, next.version]).toEqual([3, 3])
      expect((yield* readAll({ streamId: "t-1" })).length).toBe(3)
    }).pipe(Effect.provide(SqliteStore.layer({ directory: tempHome() }))))

  it.effect("fences writers by lease epoch through acquisition, takeover and release", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const models = yield* ReadModel.ReadModels
      let version = 0
      const write = (operationId: string, epoch: number | null, events: ReadonlyArray<Event.Event>) =>
        Effect.tap(
          store.append(request({ operationId, epoch, expectedVersion: version, events })),
          (result) => Effect.sync(() => (version = result.version))
        )
      const stale = (presented: number | null, current: number | null, held: boolean) =>
        new EventStore.StaleEpoch({ projectId: "p-1", streamId: "t-1", presented, current, held })

      yield* write("op-1", null, [created("t-1")])
      expect(yield* failure(write("op-2", 1, [begun]))).toEqual(stale(1, null, false))
      expect(yield* failure(write("op-2", null, [acquired(2)]))).toEqual(stale(null, null, false))
      yield* write("op-3", null, [acquired(1)])
      expect(yield* models.lease("p-1", "t-1")).toMatchObject({ epoch: 1, held: true, owner })
      expect(yield* failure(write("op-4", null, [begun]))).toEqual(stale(null, 1, true))
      expect(yield* failure(write("op-4", 2, [begun]))).toEqual(stale(2, 1, true))
      expect(yield* failure(write("op-4", 1, [acquired(2)]))).toEqual(stale(1, 1, true))
      yield* write("op-5", 1, [begun])
      expect(yield* failure(write("op-6", 1, [takenOver(3)]))).toEqual(stale(1, 1, true))
      // The SQLite store's clock is Effect's Clock (here the TestClock, at 0): the lease acquired at
      // 0 with grace 3000 is taken over only strictly after 3000.
      expect(yield* failure(write("op-7", 1, [takenOver(2)]))).toEqual(
        new EventStore.LeaseNotExpired({ projectId: "p-1", streamId: "t-1", epoch: 1, heartbeatAt: 0, graceMs: 3000, now: 0 })
      )
      yield* TestClock.adjust("3000 millis")
      expect(yield* failure(write("op-7", 1, [takenOver(2)]))).toMatchObject({ _tag: "@ratchet/storage/LeaseNotExpired", now: 3000 })
      yield* TestClock.adjust("1 millis")
      yield* write("op-7", 1, [takenOver(2)])
      expect(yield* failure(write("op-8", 1, [asked("late")]))).toEqual(stale(1, 2, true))
      expect(yield* failure(write("op-8", 2, [released(1)]))).toEqual(stale(2, 2, true))
      yield* write("op-9", 2, [released(2)])
      expect(yield* models.lease("p-1", "t-1")).toMatchObject({ epoch: 2, held: false })
      expect(yield* failure(write("op-10", 2, [asked("after")]))).toEqual(stale(2, 2, false))
      yield* write("op-11", null, [asked("unleased")])
      yield* write("op-12", null, [acquired(3)])
      const stored = yield* readAll({ streamId: "t-1" })
      expect(stored.map((event) => [event.event._tag, event.epoch])).toEqual([
        ["TaskCreated", null],
        ["LeaseAcquired", null],
        ["InterviewBegun", 1],
        ["LeaseTakenOver", 1],
        ["LeaseReleased", 2],
        ["QuestionAsked", null],
        ["LeaseAcquired", null]
      ])
    }).pipe(Effect.provide(SqliteStore.layer({ directory: tempHome() }))))

  it.effect("forks a branch at an LSN: ancestors first, the old branch untouched, read models materialised", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const models = yield* ReadModel.ReadModels
      yield* store.append(request({ operationId: "op-1", events: [created("t-1"), begun, asked("q-1")] }))
      const branch = yield* store.fork({ streamId: "t-1", atLsn: 2, branch: "alt" })
      expect(branch).toMatchObject({ streamId: "t-1", branch: "alt", parent: "main", forkLsn: 2 })
      expect(yield* store.head("t-1", "alt")).toMatchObject({ version: 2, lastLsn: 2 })
      yield* store.append(request({ operationId: "op-2", branch: "alt", expectedVersion: 2, events: [asked("q-2")] }))
      yield* store.append(request({ operationId: "op-3", expectedVersion: 3, events: [asked("q-3")] }))
      const alt = yield* readAll({ streamId: "t-1", branch: "alt" })
      expect(alt.map((stored) => [stored.lsn, stored.version, stored.branch])).toEqual([
        [1, 1, "alt"],
        [2, 2, "alt"],
        [4, 3, "alt"]
      ])
      const main = yield* readAll({ streamId: "t-1" })
      expect(main.map((stored) => [stored.lsn, stored.version])).toEqual([[1, 1], [2, 2], [3, 3], [5, 4]])
      // A fork of a fork, below its parent's fork point.
      yield* store.fork({ streamId: "t-1", from: "alt", atLsn: 1, branch: "alt.2" })
      expect((yield* readAll({ streamId: "t-1", branch: "alt.2" })).map((stored) => stored.lsn)).toEqual([1])
      expect((yield* store.branches("t-1")).map((row) => [row.branch, row.parent, row.forkLsn])).toEqual([
        ["main", null, null],
        ["alt", "main", 2],
        ["alt.2", "alt", 1]
      ])
      expect(yield* failure(store.fork({ streamId: "t-1", atLsn: 1, branch: "alt" }))).toEqual(
        new EventStore.BranchExists({ streamId: "t-1", branch: "alt" })
      )
      // LSN 3 is main's own, not visible on alt; LSN 99 does not exist.
      for (const atLsn of [3, 99]) {
        const error = yield* failure(store.fork({ streamId: "t-1", from: "alt", atLsn, branch: "x" }))
        expect(error).toMatchObject({ _tag: "@ratchet/storage/InvalidRequest", field: "atLsn" })
      }
      expect(yield* failure(store.fork({ streamId: "t-9", atLsn: 1, branch: "x" }))).toEqual(
        new EventStore.BranchNotFound({ streamId: "t-9", branch: "main" })
      )
      const summary = yield* models.taskSummary("t-1", "alt")
      expect(summary).toMatchObject({ branch: "alt", version: 3, lastLsn: 4 })
      expect(summary?.task.brief.questions.map((question) => question.questionId)).toEqual(["q-2"])
      for (const name of ["main", "alt", "alt.2"]) {
        expect(yield* models.snapshot("t-1", name)).toEqual(yield* models.rebuild("t-1", name))
      }
    }).pipe(Effect.provide(SqliteStore.layer({ directory: tempHome() }))))

  it.effect("keeps the run-level read models in the append transaction and equal to a rebuild", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const models = yield* ReadModel.ReadModels
      const run = { runId: "r-1", stepId: "s-1", attempt: 1 }
      yield* store.append(request({
        operationId: "op-1",
        events: [
          created("t-1"),
          acquired(1),
          Event.make({ _tag: "CheckpointRecorded", actor, at: 9, kind: "run_start", runId: "r-1" }),
          Event.make({ _tag: "AttemptScheduled", actor, at: 9, ...run }),
          Event.make({ _tag: "IntentRecorded", actor, at: 9, intentId: "i-1", ...run, description: "npm test" }),
          Event.make({ _tag: "IntentRecorded", actor, at: 9, intentId: "i-2", ...run, description: "npm run build" })
        ]
      }))
      yield* store.append(request({
        operationId: "op-2",
        epoch: 1,
        expectedVersion: 6,
        events: [
          Event.make({ _tag: "AttemptTransitioned", actor, at: 10, ...run, from: "Pending", to: "Running" }),
          Event.make({ _tag: "IntentDispatched", actor, at: 10, intentId: "i-1" }),
          Event.make({ _tag: "IntentResolved", actor, at: 10, intentId: "i-2", outcome: "Succeeded", resultRefs: [] })
        ]
      }))
      expect(yield* models.attempts("t-1")).toEqual([
        { streamId: "t-1", branch: "main", ...run, state: "Running", turn: Turn.initial, updatedLsn: 7 }
      ])
      expect(yield* models.openIntents("t-1")).toEqual([
        {
          streamId: "t-1",
          branch: "main",
          intentId: "i-1",
          ...run,
          state: "Dispatched",
          outcome: null,
          updatedLsn: 8
        }
      ])
      expect(yield* models.checkpoints("t-1")).toEqual([
        { streamId: "t-1", branch: "main", lsn: 3, kind: "run_start", runId: "r-1" }
      ])
      expect((yield* models.listTasks("p-1")).map((summary) => summary.streamId)).toEqual(["t-1"])
      expect(yield* models.listTasks("p-other")).toEqual([])
      expect(yield* models.snapshot("t-1")).toEqual(yield* models.rebuild("t-1"))
    }).pipe(Effect.provide(SqliteStore.layer({ directory: tempHome() }))))

  it.effect("pages a long read and keeps LSNs strictly increasing across streams", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const many = Array.from({ length: 1203 }, (_, index) => asked(`q-${index}`))
      yield* store.append(request({ operationId: "op-1", events: [created("t-1"), ...many] }))
      yield* store.append(request({ operationId: "op-2", streamId: "t-2", events: [created("t-2")] }))
      const events = yield* readAll({ streamId: "t-1" })
      expect(events.length).toBe(1204)
      expect(events.every((stored, index) => stored.lsn === index + 1 && stored.version === index + 1)).toBe(true)
      expect((yield* readAll({ streamId: "t-2" })).map((stored) => stored.lsn)).toEqual([1205])
      expect((yield* readAll({ streamId: "t-1", fromLsn: 600, toLsn: 1100 })).length).toBe(501)
    }).pipe(Effect.provide(SqliteStore.layer({ directory: tempHome() }))))

  it.effect("reports a damaged payload as Corrupt naming the LSN, and a damaged summary naming the stream", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      yield* Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        yield* store.append(request({ operationId: "op-1", events: [created("t-1"), begun] }))
      }).pipe(Effect.provide(SqliteStore.layer({ directory })))
      const db = new Database(path.join(directory, "ratchet.db"))
      db.prepare("UPDATE ratchet_events SET payload = '{\"_tag\":' WHERE lsn = 2").run()
      db.prepare("UPDATE ratchet_task_summaries SET summary = '{\"nope\":1}'").run()
      db.close()
      yield* Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        const models = yield* ReadModel.ReadModels
        const read = yield* failure(readAll({ streamId: "t-1" }))
        expect(reasonOf(read)).toBe("Corrupt")
        expect((read as StorageError.StorageError).message).toContain("LSN 2")
        const summary = yield* failure(models.taskSummary("t-1"))
        expect(reasonOf(summary)).toBe("Corrupt")
        expect((summary as StorageError.StorageError).message).toContain("stream t-1")
        // The intact event before the damaged one is still readable.
        expect((yield* readAll({ streamId: "t-1", toLsn: 1 })).map((stored) => stored.lsn)).toEqual([1])
        expect(yield* store.head("t-1")).toMatchObject({ version: 2 })
      }).pipe(Effect.provide(SqliteStore.layer({ directory })))
    }))

  it.effect("refuses a store written by a newer schema and writes nothing", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      yield* Effect.provide(Effect.void, SqliteStore.layer({ directory }))
      const file = path.join(directory, "ratchet.db")
      const db = new Database(file)
      db.prepare("UPDATE ratchet_schema SET version = ?").run(Migrations.latestVersion + 1)
      db.close()
      const opened = yield* Effect.either(Effect.provide(Effect.void, SqliteStore.layer({ directory })))
      expect(Either.isLeft(opened) && opened.left.reason._tag).toBe("SchemaTooNew")
      const after = new Database(file, { readonly: true })
      expect(after.prepare("SELECT version FROM ratchet_schema").get()).toEqual({ version: Migrations.latestVersion + 1 })
      after.close()
    }))

  /** The attempt of the two tests below. */
  const run = { runId: "r-1", stepId: "s-1", attempt: 1 }

  /** A new store directory whose task t-1 has one scheduled attempt, `run`. */
  const storeWithOneAttempt = Effect.gen(function*() {
    const directory = tempHome()
    yield* Effect.flatMap(EventStore.EventStore, (store) =>
      store.append(request({
        operationId: "op-1",
        events: [created("t-1"), Event.make({ _tag: "AttemptScheduled", actor, at: 9, ...run })]
      }))).pipe(Effect.provide(SqliteStore.layer({ directory })))
    return directory
  })

  it.effect("upgrades a version-1 store: its attempts gain an empty turn region, and turn events then fold into it", () =>
    Effect.gen(function*() {
      const directory = yield* storeWithOneAttempt
      // The store as version 1 left it: no turn column, version 1 recorded.
      const file = path.join(directory, "ratchet.db")
      const db = new Database(file)
      db.exec("ALTER TABLE ratchet_attempts DROP COLUMN turn")
      db.prepare("UPDATE ratchet_schema SET version = 1").run()
      db.close()
      yield* Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        const models = yield* ReadModel.ReadModels
        expect(yield* models.attempts("t-1")).toEqual([{ streamId: "t-1", branch: "main", ...run, state: "Pending", turn: Turn.initial, updatedLsn: 2 }])
        yield* store.append(request({
          operationId: "op-2",
          expectedVersion: 2,
          events: [Event.make({ _tag: "TurnRecorded", actor, at: 10, ...run, turn: { _tag: "toolUsed" } })]
        }))
        expect((yield* models.attempts("t-1"))[0]?.turn).toEqual({ ...Turn.initial, toolUsed: true })
        expect(yield* models.snapshot("t-1")).toEqual(yield* models.rebuild("t-1"))
      }).pipe(Effect.provide(SqliteStore.layer({ directory })))
      const after = new Database(file, { readonly: true })
      expect(after.prepare("SELECT version FROM ratchet_schema").get()).toEqual({ version: Migrations.latestVersion })
      after.close()
    }))

  it.effect("upgrades a version-2 store: summaries are folded again, and approvals an older Ratchet wrote read as unsigned", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      const spec = Either.getOrThrow(Spec.decode({
        goal: "ship it",
        acceptanceCriteria: [{ id: "AC-001", outcome: "it ships", required: true }]
      }))
      const digest = Spec.digest(spec)
      const receiptV1 = { subject: "spec", digest, actor: { kind: "user", id: "alice" }, channel: "terminal", at: 5 } as const
      yield* Effect.flatMap(EventStore.EventStore, (store) =>
        store.append(request({
          operationId: "op-1",
          events: [
            created("t-1"),
            Event.make({ _tag: "SpecProposed", actor, at: 4, revision: 1, digest, spec, voidedApproval: false }),
            Event.make({ _tag: "SpecApproved", actor, at: 5, revision: 1, digest, receipt: { ...receiptV1, signature: null } })
          ]
        }))).pipe(Effect.provide(SqliteStore.layer({ directory })))
      // The store as version 2 left it: the approval event at version 1 (no signature), and a
      // summary without the approval's receipt.
      const file = path.join(directory, "ratchet.db")
      const db = new Database(file)
      db.prepare("UPDATE ratchet_events SET type_version = 1, payload = ? WHERE type = 'SpecApproved'").run(
        JSON.stringify({ _tag: "SpecApproved", version: 1, actor, at: 5, revision: 1, digest, receipt: receiptV1 })
      )
      const row = db.prepare("SELECT summary FROM ratchet_task_summaries WHERE stream_id = 't-1'").get() as { summary: string }
      const old = JSON.parse(row.summary) as { task: { spec: Record<string, unknown> } }
      delete old.task.spec["approval"]
      db.prepare("UPDATE ratchet_task_summaries SET summary = ? WHERE stream_id = 't-1'").run(JSON.stringify(old))
      db.prepare("UPDATE ratchet_schema SET version = 2").run()
      db.close()
      yield* Effect.gen(function*() {
        const models = yield* ReadModel.ReadModels
        const summary = yield* models.taskSummary("t-1")
        expect(summary?.task.spec?.approval).toEqual({ ...receiptV1, signature: null })
        expect(summary?.task.spec?.approvedDigest).toBe(digest)
        expect(yield* models.snapshot("t-1")).toEqual(yield* models.rebuild("t-1"))
      }).pipe(Effect.provide(SqliteStore.layer({ directory })))
      const after = new Database(file, { readonly: true })
      expect(after.prepare("SELECT version FROM ratchet_schema").get()).toEqual({ version: Migrations.latestVersion })
      after.close()
    }))

  it.effect("upgrades a version-4 store: the run indexes are created, and a run's frontier and checkpoints read through them", () =>
    Effect.gen(function*() {
      const directory = yield* storeWithOneAttempt
      const file = path.join(directory, "ratchet.db")
      const runIndexes = ["ratchet_attempts_open", "ratchet_checkpoints_run", "ratchet_intents_attempt"]
      const indexesOf = (db: Database.Database) =>
        (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name IN (?, ?, ?) ORDER BY name").all(...runIndexes) as ReadonlyArray<{ name: string }>)
          .map((row) => row.name)
      // The store as version 4 left it: none of the run indexes, version 4 recorded.
      const db = new Database(file)
      expect(indexesOf(db)).toEqual(runIndexes)
      for (const name of runIndexes) db.exec(`DROP INDEX ${name}`)
      db.prepare("UPDATE ratchet_schema SET version = 4").run()
      db.close()
      yield* Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        const models = yield* ReadModel.ReadModels
        yield* store.append(request({
          operationId: "op-2",
          expectedVersion: 2,
          events: [
            Event.make({ _tag: "AttemptTransitioned", actor, at: 10, ...run, from: "Pending", to: "Running" }),
            Event.make({ _tag: "IntentRecorded", actor, at: 10, intentId: "i-1", ...run, description: "npm test" }),
            Event.make({ _tag: "CheckpointRecorded", actor, at: 10, kind: "step", runId: run.runId })
          ]
        }))
        const frontier = yield* models.runFrontier("t-1", run.runId)
        expect([...frontier.attempts.values()].map((row) => [row.stepId, row.attempt, row.state])).toEqual([[run.stepId, 1, "Running"]])
        expect([...frontier.intents.keys()]).toEqual(["i-1"])
        expect((yield* models.checkpoints("t-1", undefined, { runId: run.runId, kind: "step", last: 1 })).map((row) => row.lsn)).toEqual([5])
      }).pipe(Effect.provide(SqliteStore.layer({ directory })))
      const after = new Database(file, { readonly: true })
      expect(after.prepare("SELECT version FROM ratchet_schema").get()).toEqual({ version: Migrations.latestVersion })
      expect(indexesOf(after)).toEqual(runIndexes)
      // The reads seek: SQLite's plan for them names the new indexes.
      const plan = (statement: string, ...params: ReadonlyArray<unknown>) =>
        (after.prepare(`EXPLAIN QUERY PLAN ${statement}`).all(...params) as ReadonlyArray<{ detail: string }>).map((row) => row.detail).join("; ")
      expect(plan("SELECT * FROM ratchet_attempts a WHERE a.stream_id = ? AND a.branch = ? AND a.run_id = ? AND a.state IN ('Pending', 'Running')", "t-1", "main", "r-1"))
        .toContain("ratchet_attempts_open")
      expect(plan("SELECT * FROM ratchet_intents WHERE stream_id = ? AND branch = ? AND run_id = ? AND step_id = ? AND attempt = ?", "t-1", "main", "r-1", "s-1", 1))
        .toContain("ratchet_intents_attempt")
      expect(plan("SELECT lsn FROM ratchet_checkpoints WHERE stream_id = ? AND branch = ? AND run_id = ? AND kind = ? ORDER BY lsn DESC LIMIT 1", "t-1", "main", "r-1", "step"))
        .toContain("ratchet_checkpoints_run")
      after.close()
    }))

  it.effect("reports a damaged turn column as a corrupt attempt row, naming the stream", () =>
    Effect.gen(function*() {
      const directory = yield* storeWithOneAttempt
      for (const damaged of ["{\"toolUsed\":", "{\"toolUsed\":\"yes\"}", "null"]) {
        const db = new Database(path.join(directory, "ratchet.db"))
        db.prepare("UPDATE ratchet_attempts SET turn = ?").run(damaged)
        db.close()
        const read = yield* failure(Effect.flatMap(ReadModel.ReadModels, (models) => models.attempts("t-1"))).pipe(
          Effect.provide(SqliteStore.layer({ directory }))
        )
        expect(reasonOf(read)).toBe("Corrupt")
        expect((read as StorageError.StorageError).message).toContain("stream t-1")
      }
    }))

  it.effect("migrates once: two stores opening the same fresh directory both succeed", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      const open = Effect.provide(
        Effect.flatMap(EventStore.EventStore, (store) => store.head("t-1")),
        SqliteStore.layer({ directory })
      )
      const [a, b] = yield* Effect.all([open, open], { concurrency: 2 })
      expect([a, b]).toEqual([null, null])
      const db = new Database(path.join(directory, "ratchet.db"), { readonly: true })
      expect(db.prepare("SELECT version FROM ratchet_schema").all()).toEqual([{ version: Migrations.latestVersion }])
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal")
      db.close()
      expect(fs.statSync(directory).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(directory, "blobs")).mode & 0o777).toBe(0o700)
    }))

  it.effect("sets the pragmas it promises and provides a file blob store under blobs/", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`PRAGMA synchronous`).toEqual([{ synchronous: 1 }])
        expect(yield* sql`PRAGMA busy_timeout`).toEqual([{ timeout: 1234 }])
        expect(yield* sql`PRAGMA foreign_keys`).toEqual([{ foreign_keys: 1 }])
        const blobs = yield* BlobStore.BlobStore
        const ref = yield* blobs.put(new TextEncoder().encode("hello"))
        expect(fs.existsSync(path.join(directory, "blobs", ref.slice(7, 9), ref.slice(9)))).toBe(true)
      }).pipe(
        Effect.provide(SqliteStore.layer({ directory, synchronous: "NORMAL", busyTimeoutMs: 1234, filename: "x.db" }))
      )
      expect(fs.existsSync(path.join(directory, "x.db"))).toBe(true)
      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        expect(yield* sql`PRAGMA synchronous`).toEqual([{ synchronous: 2 }])
        expect(yield* sql`PRAGMA busy_timeout`).toEqual([{ timeout: 5000 }])
      }).pipe(Effect.provide(SqliteStore.layer({ directory })))
    }))

  it.effect("rolls a write transaction back on failure and on interruption; nests as a savepoint", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const dialect = yield* SqlDialect.SqlDialect
      yield* sql`CREATE TABLE t (v INTEGER)`
      const insert = (v: number) => sql`INSERT INTO t (v) VALUES (${v})`
      yield* dialect.writeTransaction("test", insert(1))
      const failed = yield* failure(dialect.writeTransaction("test", Effect.zipRight(insert(2), Effect.fail("boom"))))
      expect(failed).toBe("boom")
      const latch = yield* Effect.makeLatch(false)
      const fiber = yield* Effect.fork(
        dialect.writeTransaction("test", Effect.zipRight(Effect.zipRight(insert(3), latch.open), Effect.never))
      )
      yield* latch.await
      yield* Fiber.interrupt(fiber)
      yield* dialect.writeTransaction(
        "test",
        Effect.zipRight(insert(4), Effect.ignore(dialect.writeTransaction("inner", Effect.zipRight(insert(5), Effect.fail("no")))))
      )
      expect(yield* sql`SELECT v FROM t ORDER BY v`).toEqual([{ v: 1 }, { v: 4 }])
      const value = yield* dialect.readTransaction("test", sql`SELECT COUNT(*) AS n FROM t`)
      expect(value).toEqual([{ n: 2 }])
    }).pipe(Effect.provide(SqliteStore.layer({ directory: tempHome() }))))

  it.effect("fails to open a file that is not a database with a Corrupt storage error", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      fs.mkdirSync(directory, { recursive: true })
      fs.writeFileSync(path.join(directory, "ratchet.db"), "this is not a database, just text ".repeat(200))
      const opened = yield* Effect.either(Effect.provide(Effect.void, SqliteStore.layer({ directory })))
      expect(Either.isLeft(opened) && opened.left.reason._tag).toBe("Corrupt")
    }))
})

describe("SqliteStore.classify", () => {
  const driverError = (code: string, message = `${code} happened`) =>
    new SqlError({ cause: Object.assign(new Error(message), { code }), message: "Failed to execute statement" })

  // Written by hand from SQLite's result codes and the port's reasons.
  const table: ReadonlyArray<readonly [unknown, string, string | null]> = [
    [driverError("SQLITE_BUSY"), "LockTimeout", "SQLITE_BUSY"],
    [driverError("SQLITE_BUSY_SNAPSHOT"), "Serialization", "SQLITE_BUSY_SNAPSHOT"],
    [driverError("SQLITE_LOCKED"), "LockTimeout", "SQLITE_LOCKED"],
    [driverError("SQLITE_FULL"), "Full", "SQLITE_FULL"],
    [driverError("SQLITE_READONLY"), "ReadOnly", "SQLITE_READONLY"],
    [driverError("SQLITE_READONLY_DBMOVED"), "ReadOnly", "SQLITE_READONLY_DBMOVED"],
    [driverError("SQLITE_PERM"), "ReadOnly", "SQLITE_PERM"],
    [driverError("SQLITE_CORRUPT"), "Corrupt", "SQLITE_CORRUPT"],
    [driverError("SQLITE_CORRUPT_INDEX"), "Corrupt", "SQLITE_CORRUPT_INDEX"],
    [driverError("SQLITE_NOTADB"), "Corrupt", "SQLITE_NOTADB"],
    [driverError("SQLITE_CONSTRAINT_UNIQUE"), "UniqueViolation", "SQLITE_CONSTRAINT_UNIQUE"],
    [driverError("SQLITE_CONSTRAINT_PRIMARYKEY"), "UniqueViolation", "SQLITE_CONSTRAINT_PRIMARYKEY"],
    [driverError("SQLITE_CONSTRAINT_FOREIGNKEY"), "Unknown", "SQLITE_CONSTRAINT_FOREIGNKEY"],
    [driverError("SQLITE_CANTOPEN"), "Connection", "SQLITE_CANTOPEN"],
    [
      new SqlError({
        cause: Object.assign(new Error("unable to open"), {
          code: "SQLITE_CANTOPEN",
          cause: Object.assign(new Error("denied"), { code: "EACCES" })
        })
      }),
      "ReadOnly",
      "SQLITE_CANTOPEN"
    ],
    [driverError("SQLITE_IOERR_WRITE"), "Unknown", "SQLITE_IOERR_WRITE"],
    [driverError("SQLITE_ERROR"), "Unknown", "SQLITE_ERROR"],
    [Object.assign(new Error("no space"), { code: "ENOSPC" }), "Full", "ENOSPC"],
    [Object.assign(new Error("denied"), { code: "EACCES" }), "ReadOnly", "EACCES"],
    [Object.assign(new Error("read-only fs"), { code: "EROFS" }), "ReadOnly", "EROFS"],
    [new Error("no code at all"), "Unknown", null],
    ["a string", "Unknown", null]
  ]

  it("maps driver and file-system codes to reasons", () => {
    for (const [cause, reason, code] of table) {
      const error = SqliteStore.classify("append", cause)
      expect([error.reason._tag, error.reason.code, error.operation]).toEqual([reason, code, "append"])
    }
  })

  it("keeps the driver's message as the detail and passes a StorageError through", () => {
    const error = SqliteStore.classify("read", driverError("SQLITE_BUSY", "database is locked"))
    expect(error.reason.detail).toBe("database is locked")
    expect(error.isRetryable).toBe(true)
    expect(SqliteStore.classify("other", error)).toBe(error)
    expect(SqliteStore.classify("x", new Error("plain")).reason.detail).toBe("plain")
  })
})
