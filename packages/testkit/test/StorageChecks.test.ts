/**
 * The checks catch broken stores. Each case decorates the reference memory store (which passes
 * every check, see MemoryStore.test.ts) with one realistic bug, runs the check for the promise the
 * bug breaks, and asserts the check fails with a ConformanceViolation naming that promise; the
 * undecorated store passes the same check. A check that cannot fail proves nothing.
 */
import * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import * as StorageChecks from "@ratchet/testkit/StorageChecks"
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as MemoryStore from "./MemoryStore.js"

type Decorate = (memory: MemoryStore.Memory) => MemoryStore.Memory

const withStore = (memory: MemoryStore.Memory, eventStore: Partial<EventStore.Service>): MemoryStore.Memory => ({
  ...memory,
  eventStore: { ...memory.eventStore, ...eventStore }
})

/** Appends as if the caller had read the head just now: no conflict is ever reported. */
const ignoresExpectedVersion: Decorate = (memory) =>
  withStore(memory, {
    append: (request) =>
      Effect.flatMap(Effect.orElseSucceed(memory.eventStore.head(request.streamId, request.branch), () => null), (head) =>
        memory.eventStore.append({ ...request, expectedVersion: head?.version ?? 0 }))
  })

/** Fills in the current lease epoch for every writer: fencing is never applied. */
const ignoresEpoch: Decorate = (memory) =>
  withStore(memory, {
    append: (request) =>
      Effect.flatMap(memory.readModels.lease(request.projectId, request.streamId), (lease) =>
        memory.eventStore.append({ ...request, epoch: lease?.held === true ? lease.epoch : request.epoch }))
  })

/** Treats every call as a new operation: a retried append is written twice. */
const forgetsOperations: Decorate = (memory) => {
  let n = 0
  return withStore(memory, {
    append: (request) => memory.eventStore.append({ ...request, operationId: `${request.operationId}-${(n += 1)}` })
  })
}

/** Reads only the branch's own events: forks lose their ancestors. */
const readsWithoutAncestors: Decorate = (memory) =>
  withStore(memory, {
    read: (request) =>
      Stream.filter(memory.eventStore.read(request), (stored) => stored.branch === (request.branch ?? EventStore.mainBranch))
  })

/** Forking to an existing name replaces nothing but reports success. */
const forkOverwrites: Decorate = (memory) =>
  withStore(memory, {
    fork: (request) =>
      Effect.catchTag(memory.eventStore.fork(request), "@ratchet/storage/BranchExists", () =>
        Effect.succeed({ streamId: request.streamId, branch: request.branch, parent: "main", forkLsn: request.atLsn, createdAt: 0 }))
  })

/** Names the whole request instead of the field that is wrong. */
const vagueInvalidRequests: Decorate = (memory) =>
  withStore(memory, {
    append: (request) =>
      Effect.mapError(memory.eventStore.append(request), (error) =>
        error._tag === "@ratchet/storage/InvalidRequest" ? new EventStore.InvalidRequest({ field: "request", reason: error.reason }) : error)
  })

/** The stored checkpoints miss the newest one (an update left out of the append's transaction). */
const dropsNewestCheckpoint: Decorate = (memory) => ({
  ...memory,
  readModels: {
    ...memory.readModels,
    snapshot: (streamId, branch) =>
      Effect.map(memory.readModels.snapshot(streamId, branch), (snapshot) => ({
        ...snapshot,
        checkpoints: snapshot.checkpoints.slice(0, -1)
      }))
  }
})

/** Counts a Pending intent once it is dispatched, not when recorded. */
const lateIntents: Decorate = (memory) => ({
  ...memory,
  readModels: {
    ...memory.readModels,
    openIntents: (streamId) =>
      Effect.map(memory.readModels.openIntents(streamId), (rows) => rows.filter((row) => row.state === "Dispatched"))
  }
})

/** Reads a run's frontier as every row of the run (what the runner read before it had an index). */
const wholeRunAsFrontier: Decorate = (memory) => ({
  ...memory,
  readModels: {
    ...memory.readModels,
    runFrontier: (streamId, runId, branch) =>
      Effect.map(memory.readModels.snapshot(streamId, branch), (snapshot) => ({
        attempts: new Map([...snapshot.attempts].filter(([, row]) => row.runId === runId)),
        intents: new Map([...snapshot.intents].filter(([, row]) => row.runId === runId))
      }))
  }
})

/** Keeps only the open intents in a run's frontier, losing the settlement of an Indeterminate attempt. */
const frontierWithoutSettlements: Decorate = (memory) => ({
  ...memory,
  readModels: {
    ...memory.readModels,
    runFrontier: (streamId, runId, branch) =>
      Effect.map(memory.readModels.runFrontier(streamId, runId, branch), (frontier) => ({
        ...frontier,
        intents: new Map([...frontier.intents].filter(([, row]) => row.state === "Pending" || row.state === "Dispatched"))
      }))
  }
})

/** Returns the first checkpoints a query selects instead of the last. */
const firstCheckpoints: Decorate = (memory) => ({
  ...memory,
  readModels: {
    ...memory.readModels,
    checkpoints: (streamId, branch, query) =>
      Effect.map(memory.readModels.checkpoints(streamId, branch, query === undefined ? undefined : { ...query, last: undefined }), (rows) =>
        query?.last === undefined ? rows : rows.slice(0, query.last))
  }
})

/** Serves its own copy of each blob without re-hashing it (and damage lands in that copy). */
const servesUnverifiedBlobs: Decorate = (memory) => {
  const copies = new Map<string, Uint8Array>()
  return {
    ...memory,
    blobStore: {
      ...memory.blobStore,
      put: (bytes) => Effect.tap(memory.blobStore.put(bytes), (ref) => Effect.sync(() => copies.set(ref, Uint8Array.from(bytes)))),
      get: (ref) => {
        const copy = copies.get(ref)
        return copy === undefined ? memory.blobStore.get(ref) : Effect.succeed(copy)
      }
    },
    corruptBlob: (ref) => {
      const bytes = copies.get(ref)
      if (bytes !== undefined) copies.set(ref, Uint8Array.from([...bytes, 0x2a]))
    }
  }
}

/** Answers "not here" for a ref it should have refused to look up. */
const acceptsHostileRefs: Decorate = (memory) => ({
  ...memory,
  blobStore: {
    ...memory.blobStore,
    has: (ref) => Effect.catchTag(memory.blobStore.has(ref), "@ratchet/storage/InvalidBlobRef", () => Effect.succeed(false))
  }
})

/** A later append can reuse LSNs of another stream: the counter is per stream. */
const perStreamLsns: Decorate = (memory) => {
  const offsets = new Map<string, number>()
  const shift = (streamId: string, lsn: number) => lsn - (offsets.get(streamId) ?? 0)
  return withStore(memory, {
    append: (request) =>
      Effect.map(memory.eventStore.append(request), (result) => {
        if (!offsets.has(request.streamId)) offsets.set(request.streamId, result.firstLsn - 1)
        return { ...result, firstLsn: shift(request.streamId, result.firstLsn), lastLsn: shift(request.streamId, result.lastLsn) }
      })
  })
}

const byId = (id: string): StorageChecks.Check => {
  const found = StorageChecks.checks({ histories: { runs: 10 } }).find((check) => check.id === id)
  if (found === undefined) throw new Error(`no check ${id}`)
  return found
}

const cases: ReadonlyArray<{ readonly bug: string; readonly decorate: Decorate; readonly check: string; readonly promise: string }> = [
  { bug: "ignores the expected version", decorate: ignoresExpectedVersion, check: "append.expected-version", promise: "appends are conditional on the expected version" },
  { bug: "ignores the expected version (concurrently)", decorate: ignoresExpectedVersion, check: "append.concurrent", promise: "concurrent appends with the same expected version: exactly one wins" },
  { bug: "ignores the lease epoch", decorate: ignoresEpoch, check: "lease.held", promise: "a stale epoch never lands" },
  { bug: "ignores the lease epoch after a takeover", decorate: ignoresEpoch, check: "lease.takeover", promise: "a takeover fences the previous holder" },
  { bug: "forgets operation ids", decorate: forgetsOperations, check: "operation.replay", promise: "an operation id makes an append idempotent" },
  { bug: "reads forks without their ancestors", decorate: readsWithoutAncestors, check: "fork.read", promise: "a fork reads ancestors up to the fork point, then its own" },
  { bug: "lets a fork overwrite a branch", decorate: forkOverwrites, check: "fork.errors", promise: "forks are validated" },
  { bug: "names no field in InvalidRequest", decorate: vagueInvalidRequests, check: "invalid.shape", promise: "invalid requests are rejected before anything is written" },
  { bug: "numbers LSNs per stream", decorate: perStreamLsns, check: "lsn.global", promise: "every event gets a global, strictly increasing LSN" },
  { bug: "drops the newest checkpoint from the read models", decorate: dropsNewestCheckpoint, check: "readmodels.random", promise: "read models equal a cold rebuild from the log" },
  { bug: "lists only dispatched intents as open", decorate: lateIntents, check: "readmodels.append", promise: "read models are updated in the same transaction as the events" },
  { bug: "reads every row of a run as its frontier", decorate: wholeRunAsFrontier, check: "readmodels.run-frontier", promise: "a run's frontier and checkpoints are read exactly" },
  { bug: "loses an Indeterminate attempt's settlement from the frontier", decorate: frontierWithoutSettlements, check: "readmodels.run-frontier", promise: "a run's frontier and checkpoints are read exactly" },
  { bug: "returns the first checkpoints instead of the last", decorate: firstCheckpoints, check: "readmodels.run-frontier", promise: "a run's frontier and checkpoints are read exactly" },
  { bug: "serves blobs without re-hashing them", decorate: servesUnverifiedBlobs, check: "blob.verify", promise: "get verifies the hash" },
  { bug: "answers has() for a hostile ref", decorate: acceptsHostileRefs, check: "blob.hostile-refs", promise: "no reference can escape the store" }
]

const violationOf = (exit: Exit.Exit<void, unknown>): StorageChecks.ConformanceViolation | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const failure = Cause.failureOption(exit.cause)
  return Option.isSome(failure) && failure.value instanceof StorageChecks.ConformanceViolation ? failure.value : undefined
}

describe("the checks catch broken stores", () => {
  for (const { bug, check, decorate, promise } of cases) {
    it.live(`${check} fails against a store that ${bug}`, () =>
      Effect.gen(function*() {
        const broken = yield* Effect.exit(Effect.provide(byId(check).run, MemoryStore.layer(decorate)))
        const violation = violationOf(broken)
        expect(violation?.promise, `the check should report a violation; it ended with ${Exit.isSuccess(broken) ? "success" : Cause.pretty(broken.cause)}`).toBe(promise)
        expect(violation?.message).toContain(`The store broke the promise "${promise}"`)
        const sound = yield* Effect.exit(Effect.provide(byId(check).run, MemoryStore.layer()))
        expect(Exit.isSuccess(sound), Exit.isFailure(sound) ? Cause.pretty(sound.cause) : "").toBe(true)
      }), 120_000)
  }

  it.live("blob.verify fails, saying how to fix it, when the layer provides no StorageFaults", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.provide(byId("blob.verify").run, MemoryStore.layer(undefined, { faults: false })))
      expect(violationOf(exit)?.detail).toContain("Merge StorageFaults.fileBlobs(directory)")
    }))
})

describe("difference", () => {
  it("finds the first differing path, compares maps by key and ignores undefined keys", () => {
    expect(StorageChecks.difference({ a: 1, b: [1, 2] }, { a: 1, b: [1, 2] })).toBeUndefined()
    expect(StorageChecks.difference({ a: 1, b: undefined }, { a: 1 })).toBeUndefined()
    expect(StorageChecks.difference({ a: { b: [1, 3] } }, { a: { b: [1, 2] } })).toBe("a.b[1]: expected 2, got 3")
    expect(StorageChecks.difference([1], [1, 2])).toContain("expected 2 items, got 1")
    expect(StorageChecks.difference(new Map([["k", 1]]), new Map([["k", 2]]))).toBe("(root)['k']: expected 2, got 1")
    expect(StorageChecks.difference(new Map([["k", 1]]), new Map([["j", 1]]))).toContain("keys differ")
    expect(StorageChecks.difference(Uint8Array.from([1, 2]), Uint8Array.from([1, 3]))).toContain("offset 1")
    expect(StorageChecks.difference(null, { a: 1 })).toBe("(root): expected { a: 1 }, got null")
    expect(StorageChecks.difference(Event.encode(Event.make({ _tag: "InterviewBegun", actor: { kind: "user", id: "u" }, at: 1 })), {
      _tag: "InterviewBegun",
      version: 1,
      actor: { kind: "user", id: "u" },
      at: 1
    })).toBeUndefined()
  })
})
