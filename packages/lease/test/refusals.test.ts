/**
 * Every way the lease manager says no: each a typed refusal that names what stands in the way and
 * writes nothing. Table of cases written by hand; the SQLite store under Effect's TestClock.
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as LeaseError from "../src/LeaseError.js"
import * as LeaseManager from "../src/LeaseManager.js"
import { A, B, checkpoint, createTask, owner, PROJECT, sqliteStore, writeAtHead } from "./fixtures.js"

const settings = { heartbeatMs: 1_000, graceMs: 3_000 }
const key = (taskId: string): LeaseManager.Key => ({ projectId: PROJECT, taskId })

/** The head version and the lease row, to show a refusal wrote nothing. */
const stateOf = (taskId: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const models = yield* ReadModel.ReadModels
    return { head: yield* store.head(taskId), lease: yield* models.lease(PROJECT, taskId) }
  })

describe("refusals", () => {
  it.effect("release by a non-holder is NotHolder, naming the holder; nothing is written", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-1")
      const a = yield* leases.acquire(key("t-1"), A)
      yield* TestClock.adjust(3_001)
      const b = (yield* leases.takeover(key("t-1"), B)).lease
      const before = yield* stateOf("t-1")
      const error = yield* Effect.flip(leases.release(a))
      expect(error).toMatchObject({ _tag: "@ratchet/lease/NotHolder", presented: 1, epoch: 2, holder: B })
      expect(error.message).toContain("Only the holder releases its lease")
      expect(yield* stateOf("t-1")).toEqual(before)
      yield* leases.release(b)
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("takeover before the deadline is TakeoverTooEarly with the deadline and the wait; nothing is written", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-2")
      yield* leases.acquire(key("t-2"), A)
      yield* TestClock.adjust(1_500)
      const before = yield* stateOf("t-2")
      const error = yield* Effect.flip(leases.takeover(key("t-2"), B))
      expect(error).toMatchObject({ _tag: "@ratchet/lease/TakeoverTooEarly", epoch: 1, holder: A, heartbeatAt: 0, deadline: 3_000, now: 1_500 })
      expect(error._tag === "@ratchet/lease/TakeoverTooEarly" && error.waitMs).toBe(1_501)
      expect(error.message).toContain("A missing heartbeat alone never hands a lease over")
      expect(yield* stateOf("t-2")).toEqual(before)
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("takeover of a lease never taken, or released, is LeaseNotHeld pointing at acquire", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-3")
      const never = yield* Effect.flip(leases.takeover(key("t-3"), B))
      expect(never).toMatchObject({ _tag: "@ratchet/lease/LeaseNotHeld", operation: "takeover", lastEpoch: null })
      expect(never.message).toBe("Nothing to take over: task t-3 has never been leased. Acquire it instead (ratchet lease acquire t-3).")
      const a = yield* leases.acquire(key("t-3"), A)
      yield* leases.release(a)
      yield* TestClock.adjust(10_000)
      const released = yield* Effect.flip(leases.takeover(key("t-3"), B))
      expect(released).toMatchObject({ _tag: "@ratchet/lease/LeaseNotHeld", operation: "takeover", lastEpoch: 1 })
      expect((yield* stateOf("t-3")).head?.version).toBe(3)
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("a double release is LeaseNotHeld; the second release writes nothing", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-4")
      const a = yield* leases.acquire(key("t-4"), A)
      yield* leases.release(a)
      const before = yield* stateOf("t-4")
      const error = yield* Effect.flip(leases.release(a))
      expect(error).toMatchObject({ _tag: "@ratchet/lease/LeaseNotHeld", operation: "release", lastEpoch: 1 })
      expect(error.message).toBe("Nothing to release: the lease of task t-4 was released at epoch 1. A lease is released once, by its holder.")
      expect(yield* stateOf("t-4")).toEqual(before)
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("acquire of a held lease is LeaseHeld naming holder, heartbeat and deadline; acquire by the holder is idempotent", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-5")
      const a = yield* leases.acquire(key("t-5"), A)
      yield* TestClock.adjust(500)
      const error = yield* Effect.flip(leases.acquire(key("t-5"), B))
      expect(error).toMatchObject({ _tag: "@ratchet/lease/LeaseHeld", epoch: 1, holder: A, heartbeatAt: 0, deadline: 3_000, now: 500 })
      expect(error.message).toContain("protected until 1970-01-01T00:00:03.000Z")
      // The same process of the same host is the holder; a new process with the same pid is not.
      expect(yield* leases.acquire(key("t-5"), A)).toEqual(a)
      const reused = yield* Effect.flip(leases.acquire(key("t-5"), { ...A, processStartedAt: A.processStartedAt + 1 }))
      expect(reused._tag).toBe("@ratchet/lease/LeaseHeld")
      expect((yield* stateOf("t-5")).head?.version).toBe(2)
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("a lease of a task not in the store is TaskNotFound, for acquire, takeover and another branch", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      expect(yield* Effect.flip(leases.acquire(key("t-none"), A))).toMatchObject({ _tag: "@ratchet/lease/TaskNotFound", taskId: "t-none" })
      expect(yield* Effect.flip(leases.takeover(key("t-none"), A))).toMatchObject({ _tag: "@ratchet/lease/TaskNotFound" })
      yield* createTask("t-6")
      expect(yield* Effect.flip(leases.acquire({ ...key("t-6"), branch: "nope" }, A))).toMatchObject({
        _tag: "@ratchet/lease/TaskNotFound",
        branch: "nope"
      })
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("an owner that cannot be recorded is InvalidOwner; hostile keys are InvalidRequest naming the field", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-7")
      for (const bad of [{ ...A, host: "" }, { ...A, pid: 1.5 }, { ...A, extra: 1 }] as ReadonlyArray<typeof A>) {
        expect((yield* Effect.flip(leases.acquire(key("t-7"), bad)))._tag).toBe("@ratchet/lease/InvalidOwner")
      }
      const hostile = yield* Effect.flip(leases.acquire({ projectId: PROJECT, taskId: "../../etc" }, A))
      expect(hostile).toMatchObject({ _tag: "@ratchet/storage/InvalidRequest", field: "streamId" })
      expect((yield* Effect.flip(leases.observe({ projectId: "", taskId: "t-7" })))).toMatchObject({ field: "projectId" })
      expect((yield* stateOf("t-7")).lease).toBeNull()
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("a takeover whose checkpoint does not match the log is CheckpointMismatch and writes nothing", () =>
    Effect.gen(function*() {
      yield* createTask("t-8")
      const honest = yield* LeaseManager.make(settings)
      const a = yield* honest.acquire(key("t-8"), A)
      yield* writeAtHead("t-8", a.epoch, [checkpoint("run-1", "run_start")], "cp-1")
      yield* TestClock.adjust(3_001)
      const models = yield* ReadModel.ReadModels
      const lying = (row: ReadModel.CheckpointRow): ReadModel.Service => ({
        ...models,
        checkpoints: () => Effect.succeed([row])
      })
      const cases: ReadonlyArray<readonly [ReadModel.CheckpointRow, string]> = [
        [{ streamId: "t-8", branch: "main", lsn: 2, kind: "run_start", runId: "run-1" }, "the event at that LSN is LeaseAcquired"],
        [{ streamId: "t-8", branch: "main", lsn: 3, kind: "terminal", runId: "run-1" }, "the log records a run_start checkpoint of run run-1"],
        [{ streamId: "t-8", branch: "main", lsn: 3, kind: "run_start", runId: "run-2" }, "the read model a run_start one of run run-2"]
      ]
      const before = yield* stateOf("t-8")
      for (const [row, detail] of cases) {
        const leases = yield* LeaseManager.make(settings).pipe(Effect.provideService(ReadModel.ReadModels, lying(row)))
        const error = yield* Effect.flip(leases.takeover(key("t-8"), B))
        expect(error._tag, `checkpoint at ${row.lsn}`).toBe("@ratchet/lease/CheckpointMismatch")
        expect(error.message).toContain(detail)
      }
      expect(yield* stateOf("t-8")).toEqual(before)
      const took = yield* honest.takeover(key("t-8"), B)
      expect(took.checkpoint).toEqual({ streamId: "t-8", branch: "main", lsn: 3, kind: "run_start", runId: "run-1" })
    }).pipe(Effect.provide(sqliteStore())))

  it.live("a checkpoint past the head it read is a stream that moved: the takeover reads again, and gives up as LeaseContention", () =>
    Effect.gen(function*() {
      yield* createTask("t-10")
      const quick = { heartbeatMs: 1, graceMs: 2 }
      yield* (yield* LeaseManager.make(quick)).acquire(key("t-10"), A)
      yield* Effect.sleep("10 millis")
      const models = yield* ReadModel.ReadModels
      const ahead: ReadModel.Service = {
        ...models,
        checkpoints: () => Effect.succeed([{ streamId: "t-10", branch: "main", lsn: 999, kind: "step", runId: "r" }])
      }
      const leases = yield* LeaseManager.make(quick).pipe(Effect.provideService(ReadModel.ReadModels, ahead))
      const before = yield* stateOf("t-10")
      const error = yield* Effect.flip(leases.takeover(key("t-10"), B))
      expect(error).toMatchObject({ _tag: "@ratchet/lease/LeaseContention", attempts: 16, operation: "take over" })
      expect(yield* stateOf("t-10")).toEqual(before)
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("a lease read back as another owner's right after acquiring it is LeaseLost, not a lease", () =>
    Effect.gen(function*() {
      yield* createTask("t-11")
      const models = yield* ReadModel.ReadModels
      let reads = 0
      // The caller stalls past the grace between its commit and its read-back: B has it by then.
      const stalled: ReadModel.Service = {
        ...models,
        lease: (projectId, streamId) =>
          Effect.map(models.lease(projectId, streamId), (row) => {
            reads += 1
            return reads === 1 || row === null ? row : { ...row, epoch: row.epoch + 1, owner: B }
          })
      }
      const leases = yield* LeaseManager.make(settings).pipe(Effect.provideService(ReadModel.ReadModels, stalled))
      const error = yield* Effect.flip(leases.acquire(key("t-11"), A))
      expect(error).toMatchObject({ _tag: "@ratchet/lease/LeaseLost", epoch: 1, currentEpoch: 2, held: true })
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("observe reads and never writes", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-9")
      expect(yield* leases.observe(key("t-9"))).toMatchObject({ status: "free", epoch: null, holder: null, deadline: null, now: 0 })
      yield* leases.acquire(key("t-9"), owner("claude-code", 7))
      const before = yield* stateOf("t-9")
      for (let i = 0; i < 5; i += 1) yield* leases.observe(key("t-9"))
      expect(yield* stateOf("t-9")).toEqual(before)
    }).pipe(Effect.provide(sqliteStore())))

  it("a lost lease says whether it was taken over (held now, or released since) or released by its holder's side", () => {
    const lost = (currentEpoch: number | null, held: boolean) =>
      new LeaseError.LeaseLost({ projectId: PROJECT, taskId: "t-10", epoch: 1, currentEpoch, held }).message
    expect(lost(2, true)).toContain("this holder had epoch 1 but it was taken over at epoch 2, which holds it now.")
    // A runner stopped (SIGSTOP) past its grace finds, when it goes on, a successor that took over and finished.
    expect(lost(2, false)).toContain("this holder had epoch 1 but it was taken over at epoch 2 and has been released since.")
    expect(lost(2, false)).not.toContain("it has been released.")
    expect(lost(1, false)).toContain("this holder had epoch 1 but it has been released.")
    // Who took it over, when the store could still say.
    const by = new LeaseError.LeaseLost({ projectId: PROJECT, taskId: "t-10", epoch: 1, currentEpoch: 2, held: false, takenBy: owner("runner", 202) })
    expect(by.message).toContain("taken over at epoch 2 by runner (pid 202, started ")
    expect(by.message).toContain(") in workspace ws-1 and has been released since.")
  })
})
