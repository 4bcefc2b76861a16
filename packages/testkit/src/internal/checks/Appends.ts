/**
 * Conformance checks of appends: creation, atomicity, version conflicts, concurrency, fixed
 * projects, unknown branches, and invalid requests.
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Events from "../../Events.js"
import { check, created, describeError, expectBranch, holds, invalidField, makeIds, newStream, questions, readAll, rejects, request, same, services, show, succeeds, tags } from "./Kit.js"

// ---------------------------------------------------------------------------------------------
// Appends
// ---------------------------------------------------------------------------------------------

export const appendCreates = check(
  "append",
  "append.create",
  "the first append (expected version 0) creates the stream on main, numbered from 1",
  Effect.gen(function*() {
    const promise = "an append creates the stream"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "create")
    yield* same(promise, "the head of a stream never written", yield* succeeds(promise, "head", store.head(stream.streamId)), null)
    const events = [created(stream), Events.interviewBegun(), ...questions(1, 2)]
    const operationId = ids.operation()
    const result = yield* succeeds(promise, "the first append", store.append(request(ids, stream, 0, events, { operationId })))
    yield* same(
      promise,
      "the append result",
      { streamId: result.streamId, branch: result.branch, version: result.version, replayed: result.replayed },
      { streamId: stream.streamId, branch: EventStore.mainBranch, version: 4, replayed: false }
    )
    const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, events)
    yield* same(
      promise,
      "the stored events' metadata",
      read.map((stored) => ({
        projectId: stored.projectId,
        streamId: stored.streamId,
        branch: stored.branch,
        epoch: stored.epoch,
        operationId: stored.operationId
      })),
      events.map(() => ({ ...stream, branch: EventStore.mainBranch, epoch: null, operationId }))
    )
    yield* same(promise, "the LSN range of the result", [result.firstLsn, result.lastLsn], [read[0]!.lsn, read[3]!.lsn])
    yield* holds(
      promise,
      read.every((stored) => Number.isSafeInteger(stored.recordedAt) && stored.recordedAt >= 0),
      () => `recordedAt is not epoch milliseconds: ${show(read.map((stored) => stored.recordedAt))}`
    )
    const head = yield* succeeds(promise, "head", store.head(stream.streamId))
    yield* same(promise, "the head", head, {
      ...stream,
      branch: EventStore.mainBranch,
      version: 4,
      lastLsn: result.lastLsn
    })
    const branches = yield* succeeds(promise, "branches", store.branches(stream.streamId))
    yield* same(
      promise,
      "the branches of a new stream",
      branches.map((branch) => ({ streamId: branch.streamId, branch: branch.branch, parent: branch.parent, forkLsn: branch.forkLsn })),
      [{ streamId: stream.streamId, branch: EventStore.mainBranch, parent: null, forkLsn: null }]
    )
    // Naming the main branch explicitly is the same as leaving it out.
    const next = yield* succeeds(
      promise,
      "an append naming branch main",
      store.append(request(ids, stream, 4, questions(3, 1), { branch: EventStore.mainBranch }))
    )
    yield* same(promise, "the version after appending to main by name", next.version, 5)
  })
)

export const appendAtomic = check(
  "append",
  "append.atomic",
  "a batch lands whole, with consecutive versions and one operation id, or not at all",
  Effect.gen(function*() {
    const promise = "an append is atomic"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "atomic")
    yield* succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)])))
    const batch = [
      Events.interviewBegun(),
      Events.attemptScheduled("run-1", "build", 1),
      Events.intentRecorded("i-1", { runId: "run-1", stepId: "build", attempt: 1 }),
      Events.checkpointRecorded("step", "run-1"),
      ...questions(1, 3)
    ]
    const operationId = ids.operation()
    const result = yield* succeeds(promise, "a batch of 7", store.append(request(ids, stream, 1, batch, { operationId })))
    yield* same(promise, "the version after a batch of 7", result.version, 8)
    const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), ...batch])
    const landed = read.slice(1)
    yield* holds(
      promise,
      landed.every((stored) => stored.operationId === operationId && stored.lsn >= result.firstLsn && stored.lsn <= result.lastLsn),
      () => `the batch's events do not all carry its operation id inside its LSN range: ${show(landed.map((s) => [s.lsn, s.operationId]))}`
    )
    const before = yield* succeeds(promise, "the snapshot", models.snapshot(stream.streamId))
    // A rejected batch (here: a stale expected version) leaves no event and no read-model change.
    yield* rejects(
      promise,
      "a stale batch of 4",
      store.append(request(ids, stream, 1, [Events.attemptScheduled("run-1", "build", 2), ...questions(10, 3)])),
      tags.VersionConflict
    )
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), ...batch])
    yield* same(promise, "the read models after a rejected batch", yield* succeeds(promise, "the snapshot", models.snapshot(stream.streamId)), before)
  })
)

export const versionConflict = check(
  "append",
  "append.expected-version",
  "a stale expected version is a VersionConflict naming the current version, and writes nothing",
  Effect.gen(function*() {
    const promise = "appends are conditional on the expected version"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "version")
    const events = [created(stream), Events.interviewBegun()]
    yield* succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, events)))
    for (const expected of [1, 0, 3, 7]) {
      const conflict = yield* rejects(
        promise,
        `an append expecting version ${expected} (the stream is at 2)`,
        store.append(request(ids, stream, expected, questions(expected, 1))),
        tags.VersionConflict
      )
      yield* same(
        promise,
        `the VersionConflict for expected ${expected}`,
        { streamId: conflict.streamId, branch: conflict.branch, expected: conflict.expected, actual: conflict.actual },
        { streamId: stream.streamId, branch: EventStore.mainBranch, expected, actual: 2 }
      )
    }
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, events)
    // A stream that does not exist is at version 0: expecting more is a conflict, and creates nothing.
    const missing = newStream(ids, "version-missing")
    const conflict = yield* rejects(
      promise,
      "an append expecting version 3 of a stream that does not exist",
      store.append(request(ids, missing, 3, [created(missing)])),
      tags.VersionConflict
    )
    yield* same(promise, "the VersionConflict for a missing stream", { expected: conflict.expected, actual: conflict.actual }, {
      expected: 3,
      actual: 0
    })
    yield* same(promise, "the head of a stream a conflict did not create", yield* succeeds(promise, "head", store.head(missing.streamId)), null)
    const next = yield* succeeds(promise, "an append at the current version", store.append(request(ids, stream, 2, questions(1, 1))))
    yield* same(promise, "the version after appending at the current version", next.version, 3)
  })
)

export const concurrentInProcess = check(
  "append",
  "append.concurrent",
  "of 8 concurrent appends expecting the same version, exactly one wins; the rest get the conflict",
  Effect.gen(function*() {
    const promise = "concurrent appends with the same expected version: exactly one wins"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "race")
    yield* succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)])))
    const attempts = Array.from({ length: 8 }, (_, i) => request(ids, stream, 1, questions(i * 10, 2)))
    const outcomes = yield* Effect.all(attempts.map((attempt) => Effect.either(store.append(attempt))), { concurrency: "unbounded" })
    const winners = outcomes.flatMap((outcome, index) => (Either.isRight(outcome) ? [index] : []))
    yield* holds(promise, winners.length === 1, () => `${winners.length} of 8 appends succeeded: ${show(outcomes.map(describeOutcome))}`)
    for (const outcome of outcomes) {
      if (Either.isLeft(outcome)) {
        const error = outcome.left
        yield* holds(
          promise,
          error._tag === tags.VersionConflict && error.expected === 1 && error.actual === 3,
          () => `a losing append failed with ${describeError(error)} instead of VersionConflict(expected 1, actual 3)`
        )
      }
    }
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), ...attempts[winners[0]!]!.events])
  })
)

export const describeOutcome = (outcome: Either.Either<unknown, unknown>): string =>
  Either.isRight(outcome) ? "ok" : describeError(outcome.left)

export const projectFixed = check(
  "append",
  "append.project",
  "a stream's project is fixed by its first append; naming another is InvalidRequest(projectId)",
  Effect.gen(function*() {
    const promise = "a stream belongs to one project"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "project")
    yield* succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)])))
    yield* invalidField(
      promise,
      "an append naming another project",
      store.append(request(ids, { ...stream, projectId: ids.project() }, 1, questions(1, 1))),
      "projectId"
    )
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream)])
  })
)

export const unknownBranch = check(
  "append",
  "append.unknown-branch",
  "appending to or reading a branch that does not exist is BranchNotFound",
  Effect.gen(function*() {
    const promise = "branches must exist"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "nobranch")
    yield* succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)])))
    const missing = yield* rejects(
      promise,
      "an append to branch nope",
      store.append(request(ids, stream, 1, questions(1, 1), { branch: "nope" })),
      tags.BranchNotFound
    )
    yield* same(promise, "the BranchNotFound", { streamId: missing.streamId, branch: missing.branch }, {
      streamId: stream.streamId,
      branch: "nope"
    })
    yield* rejects(promise, "reading branch nope", readAll(store, { streamId: stream.streamId, branch: "nope" }), tags.BranchNotFound)
    yield* rejects(promise, "the head of branch nope", store.head(stream.streamId, "nope"), tags.BranchNotFound)
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream)])
  })
)

// ---------------------------------------------------------------------------------------------
// Invalid requests
// ---------------------------------------------------------------------------------------------

export const badIds: ReadonlyArray<string> = [
  "",
  " ",
  "a b",
  "a/b",
  "../escape",
  "a\\b",
  "x".repeat(129),
  "é",
  "line\nbreak",
  "semi;colon",
  "quote'd",
  "null\u0000byte"
]

export const invalidIds = check(
  "invalid",
  "invalid.ids",
  "ids outside [A-Za-z0-9._:-]{1,128} are InvalidRequest naming the field; nothing is written",
  Effect.gen(function*() {
    const promise = "invalid requests are rejected before anything is written"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "ids")
    const events = [created(stream)]
    for (const bad of badIds) {
      const base = request(ids, stream, 0, events)
      yield* invalidField(promise, `an append with projectId ${show(bad)}`, store.append({ ...base, projectId: bad }), "projectId")
      yield* invalidField(promise, `an append with streamId ${show(bad)}`, store.append({ ...base, streamId: bad }), "streamId")
      yield* invalidField(promise, `an append with branch ${show(bad)}`, store.append({ ...base, branch: bad }), "branch")
      yield* invalidField(promise, `an append with operationId ${show(bad)}`, store.append({ ...base, operationId: bad }), "operationId")
      yield* invalidField(promise, `reading stream ${show(bad)}`, readAll(store, { streamId: bad }), "streamId")
      yield* invalidField(promise, `the head of stream ${show(bad)}`, store.head(bad), "streamId")
      yield* invalidField(promise, `the branches of stream ${show(bad)}`, store.branches(bad), "streamId")
      yield* invalidField(promise, `forking stream ${show(bad)}`, store.fork({ streamId: bad, atLsn: 1, branch: "b" }), "streamId")
    }
    yield* same(promise, "the head after only invalid appends", yield* succeeds(promise, "head", store.head(stream.streamId)), null)
    // The accepted set: the whole alphabet and the longest id.
    const edge = { projectId: "P.r_o:j-1", streamId: `T.a_s:k-${"x".repeat(100)}-${ids.operation()}`.slice(0, 128) }
    yield* succeeds(promise, "an append with ids at the edge of the alphabet", store.append(request(ids, edge, 0, [created(edge)])))
    yield* expectBranch(promise, store, edge.streamId, EventStore.mainBranch, [created(edge)])
  })
)

export const invalidShapes = check(
  "invalid",
  "invalid.shape",
  "an empty batch, a negative or fractional expected version are InvalidRequest naming the field",
  Effect.gen(function*() {
    const promise = "invalid requests are rejected before anything is written"
    const { store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "shape")
    yield* invalidField(promise, "an append of no events", store.append(request(ids, stream, 0, [])), "events")
    for (const expectedVersion of [-1, -100, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      yield* invalidField(
        promise,
        `an append expecting version ${expectedVersion}`,
        store.append(request(ids, stream, expectedVersion, [created(stream)])),
        "expectedVersion"
      )
    }
    yield* same(promise, "the head after only invalid appends", yield* succeeds(promise, "head", store.head(stream.streamId)), null)
    yield* succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)])))
    yield* invalidField(promise, "an append of no events to an existing stream", store.append(request(ids, stream, 1, [])), "events")
    yield* invalidField(
      promise,
      "an append expecting version -1 of an existing stream",
      store.append(request(ids, stream, -1, questions(1, 1))),
      "expectedVersion"
    )
    yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream)])
  })
)
