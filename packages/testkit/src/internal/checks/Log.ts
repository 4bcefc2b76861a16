/**
 * Conformance checks of the log's order and identity: operation ids, global gap-free LSNs, reads
 * by range and page, and branches (forks).
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Events from "../../Events.js"
import { check, created, expectBranch, holds, invalidField, makeIds, newStream, questions, readAll, rejects, request, same, services, show, succeeds, tags } from "./Kit.js"
import { A, B, expiring, lapse } from "./Fencing.js"

// ---------------------------------------------------------------------------------------------
// Operation ids
// ---------------------------------------------------------------------------------------------

export const operationReplay = check(
  "operations",
  "operation.replay",
  "replaying an operation id returns the first result and writes nothing, even after the version or epoch moved",
  Effect.gen(function*() {
    const promise = "an operation id makes an append idempotent"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "replay")
    const creation = request(ids, stream, 0, [created(stream)])
    const first = yield* succeeds(promise, "creating the stream", store.append(creation))
    const again = yield* succeeds(promise, "replaying the creation", store.append(creation))
    yield* same(promise, "the replayed creation", again, { ...first, replayed: true })
    const x = request(ids, stream, 1, questions(1, 2))
    const rx = yield* succeeds(promise, "operation X", store.append(x))
    yield* same(promise, "the replay of X right away", yield* succeeds(promise, "replaying X", store.append(x)), { ...rx, replayed: true })
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), ...x.events])
    yield* succeeds(promise, "operation Y", store.append(request(ids, stream, 3, questions(3, 1))))
    yield* same(promise, "the replay of X after Y moved the version", yield* succeeds(promise, "replaying X", store.append(x)), {
      ...rx,
      replayed: true
    })
    yield* succeeds(promise, "acquiring the lease", store.append(request(ids, stream, 4, [Events.leaseAcquired(1, A, expiring)])))
    yield* lapse
    yield* succeeds(promise, "taking it over", store.append(request(ids, stream, 5, [Events.leaseTakenOver(2, B, A, expiring)], { epoch: 1 })))
    yield* same(promise, "the replay of X after the lease moved", yield* succeeds(promise, "replaying X", store.append(x)), {
      ...rx,
      replayed: true
    })
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [
      created(stream),
      ...x.events,
      ...questions(3, 1),
      Events.leaseAcquired(1, A, expiring),
      Events.leaseTakenOver(2, B, A, expiring)
    ])
  })
)

export const operationReused = check(
  "operations",
  "operation.reused",
  "an operation id reused for a different request is OperationReused and writes nothing",
  Effect.gen(function*() {
    const promise = "an operation id identifies one request"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "reused")
    yield* succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)])))
    const x = request(ids, stream, 1, questions(1, 1))
    yield* succeeds(promise, "operation X", store.append(x))
    const other = newStream(ids, "reused-other")
    const variants: ReadonlyArray<readonly [string, EventStore.AppendRequest]> = [
      ["other events", { ...x, events: questions(2, 1) }],
      ["more events", { ...x, events: questions(1, 2) }],
      ["another expected version", { ...x, expectedVersion: 2, events: x.events }],
      ["an epoch", { ...x, epoch: 1 }],
      ["another branch", { ...x, branch: "side" }],
      ["another stream", { ...x, ...other, expectedVersion: 0, events: [created(other)] }]
    ]
    for (const [what, variant] of variants) {
      const reused = yield* rejects(promise, `operation X again with ${what}`, store.append(variant), tags.OperationReused)
      yield* same(promise, `the OperationReused for ${what}`, reused.operationId, x.operationId)
    }
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), ...x.events])
    yield* same(promise, "the head of the other stream", yield* succeeds(promise, "head", store.head(other.streamId)), null)
  })
)

// ---------------------------------------------------------------------------------------------
// LSNs
// ---------------------------------------------------------------------------------------------

export const lsnGlobal = check(
  "lsn",
  "lsn.global",
  "LSNs are global and strictly increasing across streams, in commit order",
  Effect.gen(function*() {
    const promise = "every event gets a global, strictly increasing LSN"
    const { store } = yield* services
    const ids = makeIds()
    const streams = [newStream(ids, "lsn-a"), newStream(ids, "lsn-b"), newStream(ids, "lsn-c")]
    const versions = new Map<string, number>()
    const results: Array<EventStore.AppendResult> = []
    for (let round = 0; round < 4; round++) {
      for (const stream of streams) {
        const version = versions.get(stream.streamId) ?? 0
        const events = version === 0 ? [created(stream), ...questions(round, round)] : questions(round * 10, round + 1)
        const result = yield* succeeds(promise, `append ${results.length + 1}`, store.append(request(ids, stream, version, events)))
        versions.set(stream.streamId, result.version)
        yield* holds(
          promise,
          result.lastLsn - result.firstLsn >= events.length - 1,
          () => `a batch of ${events.length} events got the LSN range ${result.firstLsn}..${result.lastLsn}`
        )
        const previous = results[results.length - 1]
        yield* holds(
          promise,
          previous === undefined || result.firstLsn > previous.lastLsn,
          () => `append ${results.length + 1} got LSNs from ${result.firstLsn}, not after the previous append's ${previous?.lastLsn}`
        )
        results.push(result)
      }
    }
    const all = yield* Effect.forEach(streams, (stream) => succeeds(promise, "read", readAll(store, { streamId: stream.streamId })))
    const lsns = all.flat().map((stored) => stored.lsn)
    yield* holds(promise, new Set(lsns).size === lsns.length, () => `two events share an LSN: ${show(lsns)}`)
    yield* holds(
      promise,
      all.every((events) => events.every((stored, i) => i === 0 || stored.lsn > events[i - 1]!.lsn)),
      () => "a stream's LSNs are not increasing"
    )
  })
)

export const lsnConcurrent = check(
  "lsn",
  "lsn.concurrent",
  "concurrent appends to different streams all land, with distinct LSNs and no interleaved batches",
  Effect.gen(function*() {
    const promise = "every event gets a global, strictly increasing LSN"
    const { store } = yield* services
    const ids = makeIds()
    const streams = Array.from({ length: 10 }, (_, i) => newStream(ids, `lsn-par-${i}`))
    const results = yield* Effect.all(
      streams.map((stream) => succeeds(promise, "a concurrent append", store.append(request(ids, stream, 0, [created(stream), ...questions(0, 5)])))),
      { concurrency: "unbounded" }
    )
    const ranges = [...results].sort((a, b) => a.firstLsn - b.firstLsn)
    yield* holds(
      promise,
      ranges.every((range, i) => i === 0 || range.firstLsn > ranges[i - 1]!.lastLsn),
      () => `the LSN ranges of concurrent batches overlap: ${show(ranges.map((r) => [r.firstLsn, r.lastLsn]))}`
    )
    for (const [index, stream] of streams.entries()) {
      const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), ...questions(0, 5)])
      yield* same(promise, "the LSN range of a concurrent append", [read[0]?.lsn, read[5]?.lsn], [results[index]!.firstLsn, results[index]!.lastLsn])
    }
  })
)

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

export const readRange = check(
  "read",
  "read.range",
  "fromLsn and toLsn are inclusive bounds; versions stay positions on the branch",
  Effect.gen(function*() {
    const promise = "a branch is read by LSN range"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "range")
    const events = [created(stream), ...questions(1, 9)]
    yield* succeeds(promise, "append", store.append(request(ids, stream, 0, events.slice(0, 4))))
    // Another stream's events in between, so LSNs of this stream are not contiguous.
    const noise = newStream(ids, "range-noise")
    yield* succeeds(promise, "append", store.append(request(ids, noise, 0, [created(noise)])))
    yield* succeeds(promise, "append", store.append(request(ids, stream, 4, events.slice(4))))
    const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, events)
    const lsn = (i: number) => read[i]!.lsn
    const cases: ReadonlyArray<readonly [string, EventStore.ReadRequest, number, number]> = [
      ["fromLsn and toLsn at events 3..7", { streamId: stream.streamId, fromLsn: lsn(2), toLsn: lsn(6) }, 2, 7],
      ["fromLsn alone", { streamId: stream.streamId, fromLsn: lsn(5) }, 5, 10],
      ["toLsn alone", { streamId: stream.streamId, toLsn: lsn(3) }, 0, 4],
      ["one event", { streamId: stream.streamId, fromLsn: lsn(4), toLsn: lsn(4) }, 4, 5],
      ["bounds between events", { streamId: stream.streamId, fromLsn: lsn(3) + 1, toLsn: lsn(5) }, 4, 6],
      ["fromLsn after the last event", { streamId: stream.streamId, fromLsn: lsn(9) + 1 }, 10, 10],
      // Only when an LSN exists before the stream's first (LSNs may start at 1).
      ...(lsn(0) > 1 ? [["toLsn before the first event", { streamId: stream.streamId, toLsn: lsn(0) - 1 }, 0, 0] as const] : [])
    ]
    for (const [what, range, from, to] of cases) {
      const got = yield* succeeds(promise, `reading ${what}`, readAll(store, range))
      yield* same(
        promise,
        `the events read with ${what}`,
        got.map((stored) => ({ lsn: stored.lsn, version: stored.version })),
        read.slice(from, to).map((stored) => ({ lsn: stored.lsn, version: stored.version }))
      )
    }
  })
)

export const readPaging = check(
  "read",
  "read.paging",
  "a long branch (1,200 events) reads completely, in order, across pages",
  Effect.gen(function*() {
    const promise = "a branch reads as a lazy, paged stream"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "paging")
    const events = [created(stream), ...questions(1, 1_199)]
    for (let start = 0; start < events.length; start += 400) {
      yield* succeeds(promise, "a batch of 400", store.append(request(ids, stream, start, events.slice(start, start + 400))))
    }
    const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, events)
    const middle = yield* succeeds(promise, "a range across pages", readAll(store, { streamId: stream.streamId, fromLsn: read[450]!.lsn, toLsn: read[1_050]!.lsn }))
    yield* same(promise, "the versions of a range across pages", middle.map((stored) => stored.version), read.slice(450, 1_051).map((stored) => stored.version))
    const firstTen = yield* succeeds(promise, "taking 10", Stream.runCollect(Stream.take(store.read({ streamId: stream.streamId }), 10)))
    yield* same(promise, "the first ten events", Chunk.toReadonlyArray(firstTen).map((stored) => stored.version), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  }),
  120_000
)

// ---------------------------------------------------------------------------------------------
// Branches
// ---------------------------------------------------------------------------------------------

export const branchShape = (branch: EventStore.Branch) => ({
  streamId: branch.streamId,
  branch: branch.branch,
  parent: branch.parent,
  forkLsn: branch.forkLsn
})

export const forkReads = check(
  "branches",
  "fork.read",
  "a fork reads its ancestors up to the fork point, then its own events; the old branch never changes",
  Effect.gen(function*() {
    const promise = "a fork reads ancestors up to the fork point, then its own"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "fork")
    const main = [created(stream), ...questions(1, 5)]
    yield* succeeds(promise, "append", store.append(request(ids, stream, 0, main.slice(0, 3))))
    yield* succeeds(promise, "append", store.append(request(ids, stream, 3, main.slice(3))))
    const mainRead = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, main)
    const mainSnapshot = yield* succeeds(promise, "the main snapshot", models.snapshot(stream.streamId))
    const at = mainRead[2]!.lsn
    const branch = yield* succeeds(promise, "forking at the third event", store.fork({ streamId: stream.streamId, atLsn: at, branch: "b" }))
    yield* same(promise, "the new branch", branchShape(branch), { streamId: stream.streamId, branch: "b", parent: "main", forkLsn: at })
    yield* same(promise, "the head of the new branch", yield* succeeds(promise, "head", store.head(stream.streamId, "b")), {
      ...stream,
      branch: "b",
      version: 3,
      lastLsn: at
    })
    const fork = yield* expectBranch(promise, store, stream.streamId, "b", main.slice(0, 3))
    yield* same(promise, "the LSNs of the ancestors read through the fork", fork.map((s) => s.lsn), mainRead.slice(0, 3).map((s) => s.lsn))
    const own = questions(100, 2)
    const ownResult = yield* succeeds(promise, "appending to the fork at version 3", store.append(request(ids, stream, 3, own, { branch: "b" })))
    yield* same(promise, "the fork's version", { branch: ownResult.branch, version: ownResult.version }, { branch: "b", version: 5 })
    const forkRead = yield* expectBranch(promise, store, stream.streamId, "b", [...main.slice(0, 3), ...own])
    yield* same(promise, "the branch of the fork's own events", forkRead.slice(3).map((s) => s.branch), ["b", "b"])
    yield* holds(promise, forkRead[3]!.lsn > mainRead[5]!.lsn, () => "the fork's own events did not get new LSNs")
    // The old branch is untouched, by the fork and by the fork's appends.
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, main)
    yield* same(promise, "main's read models after the fork", yield* succeeds(promise, "the main snapshot", models.snapshot(stream.streamId)), mainSnapshot)
    const more = questions(200, 1)
    yield* succeeds(promise, "appending to main at version 6", store.append(request(ids, stream, 6, more)))
    yield* expectBranch(promise, store, stream.streamId, "b", [...main.slice(0, 3), ...own])
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [...main, ...more])
    const conflict = yield* rejects(promise, "appending to the fork at a stale version", store.append(request(ids, stream, 3, own, { branch: "b" })), tags.VersionConflict)
    yield* same(promise, "the fork's VersionConflict", { branch: conflict.branch, actual: conflict.actual }, { branch: "b", actual: 5 })
    // Ranges span the fork point.
    const range = yield* succeeds(promise, "a range across the fork point", readAll(store, { streamId: stream.streamId, branch: "b", fromLsn: mainRead[1]!.lsn, toLsn: forkRead[3]!.lsn }))
    yield* same(promise, "the versions of a range across the fork point", range.map((s) => s.version), [2, 3, 4])
    const branches = yield* succeeds(promise, "branches", store.branches(stream.streamId))
    yield* same(
      promise,
      "the branches after one fork",
      [...branches].map(branchShape).sort((x, y) => x.branch.localeCompare(y.branch)),
      [{ streamId: stream.streamId, branch: "b", parent: "main", forkLsn: at }, {
        streamId: stream.streamId,
        branch: "main",
        parent: null,
        forkLsn: null
      }]
    )
  })
)

export const forkNested = check(
  "branches",
  "fork.nested",
  "a fork of a fork sees each ancestor up to its own fork point, at an own or an inherited LSN",
  Effect.gen(function*() {
    const promise = "a fork reads ancestors up to the fork point, then its own"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "nested")
    const main = [created(stream), ...questions(1, 5)]
    yield* succeeds(promise, "append", store.append(request(ids, stream, 0, main)))
    const mainRead = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, main)
    yield* succeeds(promise, "forking b", store.fork({ streamId: stream.streamId, atLsn: mainRead[2]!.lsn, branch: "b" }))
    const bOwn = questions(100, 3)
    yield* succeeds(promise, "appending to b", store.append(request(ids, stream, 3, bOwn, { branch: "b" })))
    const bRead = yield* expectBranch(promise, store, stream.streamId, "b", [...main.slice(0, 3), ...bOwn])
    yield* succeeds(promise, "forking c from b at b's own event", store.fork({ streamId: stream.streamId, from: "b", atLsn: bRead[3]!.lsn, branch: "c" }))
    yield* expectBranch(promise, store, stream.streamId, "c", [...main.slice(0, 3), ...bOwn.slice(0, 1)])
    const d = yield* succeeds(promise, "forking d from b at an inherited event", store.fork({ streamId: stream.streamId, from: "b", atLsn: bRead[1]!.lsn, branch: "d" }))
    yield* same(promise, "the branch d", branchShape(d), { streamId: stream.streamId, branch: "d", parent: "b", forkLsn: bRead[1]!.lsn })
    yield* expectBranch(promise, store, stream.streamId, "d", main.slice(0, 2))
    const cOwn = questions(300, 2)
    yield* succeeds(promise, "appending to c", store.append(request(ids, stream, 4, cOwn, { branch: "c" })))
    yield* expectBranch(promise, store, stream.streamId, "c", [...main.slice(0, 3), ...bOwn.slice(0, 1), ...cOwn])
    yield* expectBranch(promise, store, stream.streamId, "b", [...main.slice(0, 3), ...bOwn])
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, main)
  })
)

export const forkErrors = check(
  "branches",
  "fork.errors",
  "forking to an existing name is BranchExists; at an LSN not visible on the source, InvalidRequest(atLsn)",
  Effect.gen(function*() {
    const promise = "forks are validated"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "forkerr")
    const main = [created(stream), ...questions(1, 5)]
    yield* succeeds(promise, "append", store.append(request(ids, stream, 0, main)))
    const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, main)
    const elsewhere = newStream(ids, "forkerr-other")
    const foreign = yield* succeeds(promise, "append elsewhere", store.append(request(ids, elsewhere, 0, [created(elsewhere)])))
    yield* succeeds(promise, "forking b", store.fork({ streamId: stream.streamId, atLsn: read[2]!.lsn, branch: "b" }))
    for (const name of ["b", "main"]) {
      const exists = yield* rejects(promise, `forking to ${name} again`, store.fork({ streamId: stream.streamId, atLsn: read[1]!.lsn, branch: name }), tags.BranchExists)
      yield* same(promise, `the BranchExists for ${name}`, { streamId: exists.streamId, branch: exists.branch }, { streamId: stream.streamId, branch: name })
    }
    const invisible: ReadonlyArray<readonly [string, number, string | undefined]> = [
      ["LSN 0", 0, undefined],
      ["a negative LSN", -1, undefined],
      ["a fractional LSN", read[1]!.lsn + 0.5, undefined],
      ["an LSN past the head", read[5]!.lsn + 1_000_000, undefined],
      ["another stream's LSN", foreign.lastLsn, undefined],
      ["a main LSN after b's fork point, from b", read[4]!.lsn, "b"]
    ]
    for (const [what, atLsn, from] of invisible) {
      yield* invalidField(
        promise,
        `forking at ${what}`,
        store.fork({ streamId: stream.streamId, atLsn, branch: "x", ...(from === undefined ? {} : { from }) }),
        "atLsn"
      )
    }
    yield* invalidField(promise, "forking to an invalid branch name", store.fork({ streamId: stream.streamId, atLsn: read[1]!.lsn, branch: "no/slash" }), "branch")
    yield* rejects(promise, "forking from a missing branch", store.fork({ streamId: stream.streamId, from: "nope", atLsn: read[1]!.lsn, branch: "y" }), tags.BranchNotFound)
    yield* rejects(promise, "forking a missing stream", store.fork({ streamId: ids.stream("missing"), atLsn: 1, branch: "y" }), tags.BranchNotFound)
    const branches = yield* succeeds(promise, "branches", store.branches(stream.streamId))
    yield* same(promise, "the branches after rejected forks", [...branches].map((b) => b.branch).sort(), ["b", "main"])
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, main)
  })
)
