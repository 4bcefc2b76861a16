/**
 * Conformance checks of the writer lease as the store enforces it: acquire, held, takeover,
 * release, deadline, heartbeat, and leases across branches.
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as Effect from "effect/Effect"
import * as Events from "../../Events.js"
import { check, created, expectBranch, holds, invalidField, leaseState, makeIds, newStream, questions, rejects, request, same, services, succeeds, tags } from "./Kit.js"

// ---------------------------------------------------------------------------------------------
// Fencing
// ---------------------------------------------------------------------------------------------

/**
 * Lease timings whose grace deadline is the heartbeat itself, so a takeover is allowed as soon as
 * the store's clock has moved past it ({@link lapse}); the checks that take a lease over use them.
 */
export const expiring = { heartbeatMs: 1, graceMs: 0 } as const

/** Lets the store's clock move past an {@link expiring} lease's deadline (checks run on the live clock). */
export const lapse = Effect.sleep("5 millis")

export const A = Events.owner("a", 101)
export const B = Events.owner("b", 202)
export const C = Events.owner("c", 303)

export const staleEpoch = (
  promise: string,
  what: string,
  effect: Effect.Effect<unknown, EventStore.AppendError>,
  expected: { readonly presented: number | null; readonly current: number | null; readonly held: boolean }
) =>
  Effect.flatMap(rejects(promise, what, effect, tags.StaleEpoch), (error) =>
    same(promise, `the StaleEpoch of ${what}`, { presented: error.presented, current: error.current, held: error.held }, expected))

export const leaseAcquire = check(
  "fencing",
  "lease.acquire",
  "a free lease is acquired at the last epoch + 1 with no prior epoch; any other epoch is StaleEpoch",
  Effect.gen(function*() {
    const promise = "acquiring a lease bumps the epoch by one"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "acquire")
    yield* succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)])))
    yield* same(promise, "the lease of a task never leased", leaseState(yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))), null)
    for (const epoch of [0, 2]) {
      yield* staleEpoch(
        promise,
        `acquiring a never-taken lease at epoch ${epoch}`,
        store.append(request(ids, stream, 1, [Events.leaseAcquired(epoch, A)], { epoch })),
        { presented: epoch, current: null, held: false }
      )
    }
    yield* succeeds(promise, "acquiring at epoch 1 with no prior epoch", store.append(request(ids, stream, 1, [Events.leaseAcquired(1, A)])))
    yield* same(promise, "the lease after acquiring", leaseState(yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))), {
      epoch: 1,
      held: true,
      owner: A
    })
    // Presenting the epoch being acquired is also accepted.
    const other = newStream(ids, "acquire-presenting")
    yield* succeeds(promise, "creating a second stream", store.append(request(ids, other, 0, [created(other)])))
    yield* succeeds(
      promise,
      "acquiring at epoch 1 presenting epoch 1",
      store.append(request(ids, other, 1, [Events.leaseAcquired(1, B)], { epoch: 1 }))
    )
    yield* same(promise, "the second lease", leaseState(yield* succeeds(promise, "lease", models.lease(other.projectId, other.streamId))), {
      epoch: 1,
      held: true,
      owner: B
    })
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), Events.leaseAcquired(1, A)])
  })
)

export const leaseHeld = check(
  "fencing",
  "lease.held",
  "while a lease is held, an append without its epoch (none, older, newer) is StaleEpoch and writes nothing",
  Effect.gen(function*() {
    const promise = "a stale epoch never lands"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "held")
    const events = [created(stream), Events.leaseAcquired(1, A)]
    yield* succeeds(promise, "creating the stream with a lease", store.append(request(ids, stream, 0, events)))
    const before = yield* succeeds(promise, "the snapshot", models.snapshot(stream.streamId))
    for (const epoch of [null, 0, 2, 5]) {
      yield* staleEpoch(
        promise,
        `an append presenting ${epoch === null ? "no epoch" : `epoch ${epoch}`} while epoch 1 is held`,
        store.append(request(ids, stream, 2, questions(1, 1), { epoch })),
        { presented: epoch, current: 1, held: true }
      )
    }
    // Fencing is checked before the version: a stale writer learns it is fenced, not that it is behind.
    yield* staleEpoch(
      promise,
      "an append with a stale epoch and a stale version",
      store.append(request(ids, stream, 1, questions(1, 1), { epoch: null })),
      { presented: null, current: 1, held: true }
    )
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, events)
    yield* same(promise, "the read models after rejected appends", yield* succeeds(promise, "the snapshot", models.snapshot(stream.streamId)), before)
    const ok = yield* succeeds(promise, "an append presenting the held epoch", store.append(request(ids, stream, 2, questions(1, 1), { epoch: 1 })))
    const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [...events, ...questions(1, 1)])
    yield* same(promise, "the epoch stored with the event", read[2]?.epoch, 1)
    yield* same(promise, "the version", ok.version, 3)
  })
)

export const leaseTakeover = check(
  "fencing",
  "lease.takeover",
  "a takeover after the deadline presents the held epoch and carries the next; afterwards the old epoch is StaleEpoch",
  Effect.gen(function*() {
    const promise = "a takeover fences the previous holder"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "takeover")
    yield* succeeds(promise, "creating the stream with a lease", store.append(request(ids, stream, 0, [created(stream), Events.leaseAcquired(1, A, expiring)])))
    for (const epoch of [1, 3]) {
      yield* staleEpoch(
        promise,
        `a takeover carrying epoch ${epoch} while epoch 1 is held`,
        store.append(request(ids, stream, 2, [Events.leaseTakenOver(epoch, B, A, expiring)], { epoch: 1 })),
        { presented: 1, current: 1, held: true }
      )
    }
    yield* staleEpoch(
      promise,
      "a takeover presenting no epoch while epoch 1 is held",
      store.append(request(ids, stream, 2, [Events.leaseTakenOver(2, B, A, expiring)], { epoch: null })),
      { presented: null, current: 1, held: true }
    )
    yield* lapse
    yield* succeeds(promise, "B taking over at epoch 2", store.append(request(ids, stream, 2, [Events.leaseTakenOver(2, B, A, expiring)], { epoch: 1 })))
    yield* same(promise, "the lease after the takeover", leaseState(yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))), {
      epoch: 2,
      held: true,
      owner: B
    })
    yield* staleEpoch(
      promise,
      "A writing with epoch 1 after the takeover",
      store.append(request(ids, stream, 3, questions(1, 1), { epoch: 1 })),
      { presented: 1, current: 2, held: true }
    )
    yield* succeeds(promise, "B writing with epoch 2", store.append(request(ids, stream, 3, questions(1, 1), { epoch: 2 })))
    yield* lapse
    yield* succeeds(promise, "C taking over from B at epoch 3", store.append(request(ids, stream, 4, [Events.leaseTakenOver(3, C, B, expiring)], { epoch: 2 })))
    yield* staleEpoch(
      promise,
      "B writing with epoch 2 after C's takeover",
      store.append(request(ids, stream, 5, questions(2, 1), { epoch: 2 })),
      { presented: 2, current: 3, held: true }
    )
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [
      created(stream),
      Events.leaseAcquired(1, A, expiring),
      Events.leaseTakenOver(2, B, A, expiring),
      ...questions(1, 1),
      Events.leaseTakenOver(3, C, B, expiring)
    ])
  })
)

export const leaseRelease = check(
  "fencing",
  "lease.release",
  "a release carries the held epoch; after it the old epoch is StaleEpoch, no epoch writes, and the next acquire is epoch + 1",
  Effect.gen(function*() {
    const promise = "a released lease fences its last holder"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "release")
    yield* succeeds(promise, "creating the stream with a lease", store.append(request(ids, stream, 0, [created(stream), Events.leaseAcquired(1, A)])))
    yield* rejects(
      promise,
      "releasing epoch 2 while epoch 1 is held",
      store.append(request(ids, stream, 2, [Events.leaseReleased(2)], { epoch: 1 })),
      tags.StaleEpoch
    )
    yield* succeeds(promise, "releasing epoch 1", store.append(request(ids, stream, 2, [Events.leaseReleased(1)], { epoch: 1 })))
    yield* same(promise, "the lease after release", leaseState(yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))), {
      epoch: 1,
      held: false,
      owner: A
    })
    yield* staleEpoch(
      promise,
      "writing with the released epoch",
      store.append(request(ids, stream, 3, questions(1, 1), { epoch: 1 })),
      { presented: 1, current: 1, held: false }
    )
    yield* succeeds(promise, "writing with no epoch while no lease is held", store.append(request(ids, stream, 3, questions(1, 1))))
    yield* staleEpoch(
      promise,
      "re-acquiring at the released epoch",
      store.append(request(ids, stream, 4, [Events.leaseAcquired(1, B)], { epoch: 1 })),
      { presented: 1, current: 1, held: false }
    )
    yield* succeeds(promise, "re-acquiring at epoch 2", store.append(request(ids, stream, 4, [Events.leaseAcquired(2, B)])))
    yield* same(promise, "the lease after re-acquiring", leaseState(yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))), {
      epoch: 2,
      held: true,
      owner: B
    })
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [
      created(stream),
      Events.leaseAcquired(1, A),
      Events.leaseReleased(1),
      ...questions(1, 1),
      Events.leaseAcquired(2, B)
    ])
  })
)

export const leaseDeadline = check(
  "fencing",
  "lease.deadline",
  "a takeover up to the holder's grace deadline (by the store's clock) is LeaseNotExpired and writes nothing",
  Effect.gen(function*() {
    const promise = "a lease is taken over only strictly after its grace deadline"
    const { leases, models, store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "deadline")
    const minute = { heartbeatMs: 20_000, graceMs: 60_000 } as const
    const events = [created(stream), Events.leaseAcquired(1, A, minute)]
    const before = yield* succeeds(promise, "the store's clock", leases.now)
    yield* succeeds(promise, "creating the stream with a one-minute lease", store.append(request(ids, stream, 0, events)))
    const lease = yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))
    const error = yield* rejects(
      promise,
      "a takeover right after the acquisition",
      store.append(request(ids, stream, 2, [Events.leaseTakenOver(2, B, A, minute)], { epoch: 1 })),
      tags.LeaseNotExpired
    )
    yield* same(promise, "the refusal's lease", { epoch: error.epoch, heartbeatAt: error.heartbeatAt, graceMs: error.graceMs }, {
      epoch: 1,
      heartbeatAt: lease?.heartbeatAt,
      graceMs: 60_000
    })
    yield* holds(
      promise,
      error.now >= before && error.now < error.heartbeatAt + error.graceMs,
      () => `the refusal's clock ${error.now} is not between the check's start ${before} and the deadline ${error.heartbeatAt + error.graceMs}`
    )
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, events)
    yield* same(promise, "the lease after the refusal", leaseState(yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))), {
      epoch: 1,
      held: true,
      owner: A
    })
  })
)

export const leaseHeartbeat = check(
  "fencing",
  "lease.heartbeat",
  "a heartbeat of the held epoch moves only the lease's heartbeat (never backwards); any other epoch, or a released lease, is StaleEpoch",
  Effect.gen(function*() {
    const promise = "only the holder keeps its lease alive, and a heartbeat writes no event"
    const { leases, models, store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "heartbeat")
    const minute = { heartbeatMs: 20_000, graceMs: 60_000 } as const
    const events = [created(stream), Events.leaseAcquired(1, A, minute)]
    yield* succeeds(promise, "creating the stream with a lease", store.append(request(ids, stream, 0, events)))
    const acquired = yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))
    yield* lapse
    const beat = yield* succeeds(promise, "a heartbeat of epoch 1", leases.heartbeat({ projectId: stream.projectId, streamId: stream.streamId, epoch: 1 }))
    yield* holds(
      promise,
      acquired !== null && beat.heartbeatAt > acquired.heartbeatAt,
      () => `the heartbeat did not move forward: acquired at ${acquired?.heartbeatAt}, heartbeat at ${beat.heartbeatAt}`
    )
    const stored = yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))
    yield* same(promise, "the stored lease after the heartbeat", stored, { ...acquired, heartbeatAt: beat.heartbeatAt })
    yield* same(promise, "the returned lease", beat, stored)
    yield* same(promise, "the head after a heartbeat (no event written)", (yield* succeeds(promise, "head", store.head(stream.streamId)))?.version, 2)
    // The deadline moved with the heartbeat: a takeover is judged against it.
    const error = yield* rejects(
      promise,
      "a takeover after the heartbeat",
      store.append(request(ids, stream, 2, [Events.leaseTakenOver(2, B, A, minute)], { epoch: 1 })),
      tags.LeaseNotExpired
    )
    yield* same(promise, "the heartbeat the refusal judged against", error.heartbeatAt, beat.heartbeatAt)
    for (const epoch of [2, 7]) {
      const stale = yield* rejects(
        promise,
        `a heartbeat of epoch ${epoch} while epoch 1 is held`,
        leases.heartbeat({ projectId: stream.projectId, streamId: stream.streamId, epoch }),
        tags.StaleEpoch
      )
      yield* same(promise, `the StaleEpoch of a heartbeat of epoch ${epoch}`, { presented: stale.presented, current: stale.current, held: stale.held }, {
        presented: epoch,
        current: 1,
        held: true
      })
    }
    const never = newStream(ids, "heartbeat-never")
    yield* succeeds(promise, "creating a stream without a lease", store.append(request(ids, never, 0, [created(never)])))
    yield* staleEpoch(promise, "a heartbeat of a task never leased", leases.heartbeat({ projectId: never.projectId, streamId: never.streamId, epoch: 1 }), {
      presented: 1,
      current: null,
      held: false
    })
    yield* succeeds(promise, "releasing epoch 1", store.append(request(ids, stream, 2, [Events.leaseReleased(1)], { epoch: 1 })))
    yield* staleEpoch(promise, "a heartbeat of the released epoch", leases.heartbeat({ projectId: stream.projectId, streamId: stream.streamId, epoch: 1 }), {
      presented: 1,
      current: 1,
      held: false
    })
    yield* invalidField(promise, "a heartbeat of epoch 0", leases.heartbeat({ projectId: stream.projectId, streamId: stream.streamId, epoch: 0 }), "epoch")
    yield* invalidField(promise, "a heartbeat with a hostile stream id", leases.heartbeat({ projectId: stream.projectId, streamId: "../x", epoch: 1 }), "streamId")
  })
)

export const leaseAcrossBranches = check(
  "fencing",
  "lease.branches",
  "the lease belongs to the task: it fences appends on every branch",
  Effect.gen(function*() {
    const promise = "a stale epoch never lands"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "lease-branch")
    const result = yield* succeeds(
      promise,
      "creating the stream with a lease",
      store.append(request(ids, stream, 0, [created(stream), Events.leaseAcquired(1, A)]))
    )
    yield* succeeds(promise, "forking", store.fork({ streamId: stream.streamId, atLsn: result.lastLsn, branch: "side" }))
    yield* staleEpoch(
      promise,
      "an append to the fork without the held epoch",
      store.append(request(ids, stream, 2, questions(1, 1), { branch: "side" })),
      { presented: null, current: 1, held: true }
    )
    yield* succeeds(promise, "an append to the fork with the held epoch", store.append(request(ids, stream, 2, questions(1, 1), { branch: "side", epoch: 1 })))
  })
)
