/**
 * The brief's reference timeline, on a logical clock (Effect's TestClock drives the SQLite store's
 * clock), one unit = one second: heartbeat interval 2, grace 3.
 *
 *   A acquires at 0, heartbeats at 2 (deadline 5); B's takeover at 3 is DENIED; A dies at 4;
 *   B's takeover at 4 and 5 is DENIED, at 6 ALLOWED; B heartbeats at 7.
 *
 * Then the same timeline with A holding through `withLease` (its heartbeat fiber driven by the
 * TestClock) and its heartbeats cut off by a partition: after the takeover, A's next heartbeat
 * finds the lease lost and A's work is interrupted with `LeaseLost`, without releasing B's lease.
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as LeaseManager from "../src/LeaseManager.js"
import { A, B, checkpoint, createTask, partitionable, PROJECT, sqliteStore, writeAtHead } from "./fixtures.js"

const unit = 1_000
const settings = { heartbeatMs: 2 * unit, graceMs: 3 * unit }
const at = (t: number) => TestClock.setTime(t * unit)
const key = (taskId: string): LeaseManager.Key => ({ projectId: PROJECT, taskId })

const tagOf = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.either(effect), (either) => (Either.isLeft(either) ? either.left._tag : "ALLOWED"))

describe("the reference timeline (heartbeat 2, grace 3)", () => {
  it.effect("takeover denied at 3, 4 and 5, allowed at 6; the new owner heartbeats at 7; A is fenced", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-ref")

      yield* at(0)
      const a = yield* leases.acquire(key("t-ref"), A)
      expect(a).toMatchObject({ epoch: 1, owner: A, acquiredAt: 0, heartbeatAt: 0, deadline: 3 * unit })

      yield* at(2)
      const beat = yield* leases.heartbeat(a)
      expect(beat).toMatchObject({ epoch: 1, heartbeatAt: 2 * unit, deadline: 5 * unit })

      yield* at(3)
      const early = yield* Effect.flip(leases.takeover(key("t-ref"), B))
      expect(early).toMatchObject({
        _tag: "@ratchet/lease/TakeoverTooEarly",
        epoch: 1,
        holder: A,
        heartbeatAt: 2 * unit,
        deadline: 5 * unit,
        now: 3 * unit
      })
      expect(early._tag === "@ratchet/lease/TakeoverTooEarly" && early.waitMs).toBe(2 * unit + 1)

      // A dies at 4: it heartbeats no more, and nothing hands its lease over by itself.
      yield* at(4)
      expect(yield* tagOf(leases.takeover(key("t-ref"), B))).toBe("@ratchet/lease/TakeoverTooEarly")
      yield* at(5)
      expect(yield* tagOf(leases.takeover(key("t-ref"), B))).toBe("@ratchet/lease/TakeoverTooEarly")
      expect((yield* leases.observe(key("t-ref"))).status).toBe("held")

      yield* at(6)
      // An expired lease is still held: a plain acquire is refused and points at takeover.
      const held = yield* Effect.flip(leases.acquire(key("t-ref"), B))
      expect(held._tag).toBe("@ratchet/lease/LeaseHeld")
      expect(held._tag === "@ratchet/lease/LeaseHeld" && held.expired).toBe(true)
      // A is a runner: its lease is taken over by a run, which continues from where it died (ADR 0022).
      expect(held.message).toContain("ratchet run t-ref --takeover")
      expect((yield* leases.observe(key("t-ref"))).status).toBe("expired")

      const took = yield* leases.takeover(key("t-ref"), B)
      expect(took).toMatchObject({
        displaced: A,
        displacedEpoch: 1,
        checkpoint: null,
        lease: { epoch: 2, owner: B, heartbeatAt: 6 * unit, deadline: 9 * unit }
      })

      yield* at(7)
      expect(yield* leases.heartbeat(took.lease)).toMatchObject({ epoch: 2, heartbeatAt: 7 * unit, deadline: 10 * unit })

      // A, had it survived, is fenced: its heartbeat and its writes are refused.
      expect(yield* Effect.flip(leases.heartbeat(a))).toMatchObject({
        _tag: "@ratchet/lease/LeaseLost",
        epoch: 1,
        currentEpoch: 2,
        held: true
      })
      expect(yield* Effect.flip(writeAtHead("t-ref", 1, [checkpoint("late")], "a-late"))).toMatchObject({
        _tag: "@ratchet/storage/StaleEpoch",
        presented: 1,
        current: 2
      })

      // The log tells the whole story: acquired by A at epoch 1, taken over by B at epoch 2.
      const store = yield* EventStore.EventStore
      const log = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: "t-ref" })))
      expect(log.map((stored) => [stored.event._tag, stored.epoch, stored.recordedAt])).toEqual([
        ["TaskCreated", null, 0],
        ["LeaseAcquired", 1, 0],
        ["LeaseTakenOver", 1, 6 * unit]
      ])
      expect(log[2]?.event).toMatchObject({ epoch: 2, owner: B, displaced: A, heartbeatMs: 2 * unit, graceMs: 3 * unit })
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("with a scoped holder: heartbeats on schedule; cut off, it loses the lease and its work is interrupted", () =>
    Effect.gen(function*() {
      const partitioned = yield* Ref.make(false)
      // A's view of the store: its heartbeats fail while partitioned, as over a dropped network.
      const cutOff = yield* partitionable(partitioned)
      const forA = yield* LeaseManager.make(settings).pipe(Effect.provideService(LeaseStore.LeaseStore, cutOff))
      const forB = yield* LeaseManager.make(settings)
      yield* createTask("t-held")

      yield* at(0)
      const work = yield* Effect.fork(
        forA.withLease(key("t-held"), A, (holder) =>
          Effect.gen(function*() {
            yield* holder.append({ expectedVersion: 2, operationId: "a-1", events: [checkpoint("run-a", "run_start")] })
            return yield* Effect.never
          }))
      )
      yield* TestClock.adjust(2 * unit)
      expect(yield* forB.observe(key("t-held"))).toMatchObject({ status: "held", epoch: 1, holder: A, heartbeatAt: 2 * unit })
      yield* TestClock.adjust(2 * unit)
      expect((yield* forB.observe(key("t-held"))).heartbeatAt).toBe(4 * unit)

      // Cut off at 4: the heartbeats at 6 and 8 fail; the lease stays held, and expires after 7.
      yield* Ref.set(partitioned, true)
      yield* TestClock.adjust(2 * unit)
      expect(yield* tagOf(forB.takeover(key("t-held"), B))).toBe("@ratchet/lease/TakeoverTooEarly")
      yield* at(7)
      expect(yield* tagOf(forB.takeover(key("t-held"), B))).toBe("@ratchet/lease/TakeoverTooEarly")
      yield* TestClock.adjust(1)
      const took = yield* forB.takeover(key("t-held"), B)
      // The takeover verified A's run_start checkpoint against the head.
      expect(took).toMatchObject({ displaced: A, displacedEpoch: 1, checkpoint: { kind: "run_start", runId: "run-a" } })
      expect(Option.isNone(yield* Fiber.poll(work)), "A's work is still running").toBe(true)

      // The partition heals; A's next heartbeat (at 8) finds the lease lost and interrupts its work.
      yield* Ref.set(partitioned, false)
      yield* at(8)
      const exit = yield* Fiber.await(work)
      expect(Exit.isFailure(exit)).toBe(true)
      const lost = yield* Effect.flip(Fiber.join(work))
      expect(lost).toMatchObject({ _tag: "@ratchet/lease/LeaseLost", epoch: 1, currentEpoch: 2, held: true })
      // A did not release B's lease on its way out.
      expect(yield* forB.observe(key("t-held"))).toMatchObject({ status: "held", epoch: 2, holder: B })
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("a fenced write stops the holder's work; a takeover can start a scoped holder; holds are not reentrant", () =>
    Effect.gen(function*() {
      const partitioned = yield* Ref.make(true)
      const cutOff = yield* partitionable(partitioned)
      const forA = yield* LeaseManager.make(settings).pipe(Effect.provideService(LeaseStore.LeaseStore, cutOff))
      const forB = yield* LeaseManager.make(settings)
      yield* createTask("t-fenced")
      yield* at(0)
      const written = yield* Ref.make(0)
      const gate = yield* Ref.make(false)
      // A writes whenever the gate opens; its heartbeats never reach the store.
      const workOfA = yield* Effect.fork(
        forA.withLease(key("t-fenced"), A, (holder) =>
          Effect.gen(function*() {
            // A second hold by the same owner would share A's epoch: refused.
            const again = yield* Effect.flip(Effect.scoped(forA.hold(key("t-fenced"), A)))
            expect(again).toMatchObject({ _tag: "@ratchet/lease/LeaseHeld", holder: A })
            // A holder changes its lease only through the manager.
            const sneaky = yield* Effect.flip(holder.append({ expectedVersion: 2, operationId: "a-sneaky", events: [] as never }).pipe(
              Effect.zipRight(holder.append({
                expectedVersion: 2,
                operationId: "a-sneaky-2",
                events: [{ _tag: "LeaseReleased", version: 1, actor: { kind: "runner", id: "a" }, at: 0, epoch: 1 }]
              }))
            ))
            expect(sneaky).toMatchObject({ _tag: "@ratchet/storage/InvalidRequest", field: "events" })
            for (let n = 0;; n += 1) {
              yield* Effect.sleep(unit)
              if (!(yield* Ref.get(gate))) continue
              const head = yield* Effect.flatMap(EventStore.EventStore, (store) => store.head("t-fenced"))
              yield* holder.append({ expectedVersion: head?.version ?? 0, operationId: `a-${n}`, events: [checkpoint(`a-${n}`)] })
              yield* Ref.update(written, (count) => count + 1)
            }
          }))
      )
      yield* TestClock.adjust(3 * unit + 1)
      // B starts its own scoped holder by taking over, and keeps it while A comes back.
      const workOfB = yield* Effect.fork(
        forB.withLease(key("t-fenced"), B, (holder) => Effect.as(Effect.sleep(10 * unit), holder.epoch), { takeover: true })
      )
      yield* TestClock.adjust(1)
      expect(yield* forB.observe(key("t-fenced"))).toMatchObject({ status: "held", epoch: 2, holder: B })
      // A's next write is fenced (StaleEpoch): that alone marks the lease lost and ends A's work
      // with LeaseLost, while its heartbeats still fail.
      yield* Ref.set(gate, true)
      yield* TestClock.adjust(unit)
      const lost = yield* Effect.flip(Fiber.join(workOfA))
      expect(lost).toMatchObject({ _tag: "@ratchet/lease/LeaseLost", epoch: 1, currentEpoch: 2, held: true })
      expect(yield* Ref.get(written)).toBe(0)
      yield* TestClock.adjust(10 * unit)
      expect(yield* Fiber.join(workOfB)).toBe(2)
      expect(yield* forB.observe(key("t-fenced"))).toMatchObject({ status: "free", epoch: 2 })
    }).pipe(Effect.provide(sqliteStore())))

  it.effect("a live holder is never displaced, and its lease is released when its scope closes", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-live")
      yield* at(0)
      const work = yield* Effect.fork(leases.withLease(key("t-live"), A, () => Effect.sleep(20 * unit).pipe(Effect.as("done"))))
      for (let t = 1; t < 20; t += 1) {
        yield* TestClock.adjust(unit)
        expect(yield* tagOf(leases.takeover(key("t-live"), B)), `a takeover at ${t + 1}`).toBe("@ratchet/lease/TakeoverTooEarly")
      }
      yield* TestClock.adjust(unit)
      expect(yield* Fiber.join(work)).toBe("done")
      expect(yield* leases.observe(key("t-live"))).toMatchObject({ status: "free", epoch: 1, holder: null })
      const store = yield* EventStore.EventStore
      const log = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: "t-live" })))
      expect(log.map((stored) => stored.event._tag)).toEqual(["TaskCreated", "LeaseAcquired", "LeaseReleased"])
    }).pipe(Effect.provide(sqliteStore())))
})
