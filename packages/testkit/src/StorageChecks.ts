/**
 * The checks of the storage conformance suite, as plain Effects over the storage port.
 *
 * Each {@link Check} states one promise of `@ratchet/storage` (an append is atomic, a stale epoch
 * never lands, a read model equals its cold rebuild, …), drives the store through the port only,
 * and fails with a {@link ConformanceViolation} naming the promise and what the store did instead.
 * An unexpected store error fails the check with that error. Keeping the checks here, apart from
 * the vitest wiring in `StorageConformance`, lets a check be run against a deliberately broken
 * store to show that it would catch the bug.
 *
 * Every check works in streams and projects of its own (random ids), so checks may share a store
 * with each other and with whatever else is in it.
 *
 * @since 0.1.0
 */
import { createHash, randomBytes } from "node:crypto"
import { inspect } from "node:util"
import * as Event from "@ratchet/kernel/Event"
import * as Progress from "@ratchet/kernel/Progress"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Events from "./Events.js"
import * as Histories from "./Histories.js"
import { type Outcome, type ProcessHarness, runChildren, type Services, type SharedStore, wireAppend } from "./StorageChild.js"
import { StorageFaults } from "./StorageFaults.js"

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

/**
 * The store did not keep a promise of the port.
 *
 * @since 0.1.0
 * @category errors
 */
export class ConformanceViolation extends Schema.TaggedError<ConformanceViolation>()(
  "@ratchet/testkit/ConformanceViolation",
  { promise: Schema.String, detail: Schema.String }
) {
  override get message(): string {
    return `The store broke the promise "${this.promise}": ${this.detail}`
  }
}

/**
 * One check of the suite. `id` is stable (use it to skip a check); `group` is the describe block.
 *
 * @since 0.1.0
 * @category models
 */
export interface Check {
  readonly id: string
  readonly group: string
  readonly title: string
  readonly run: Effect.Effect<void, unknown, Services>
  /** Milliseconds; the suite's default when absent. */
  readonly timeout?: number
}

/**
 * A check that starts real OS processes against a store shared with them.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessCheck {
  readonly id: string
  readonly title: string
  readonly run: (harness: ProcessHarness, children: number) => Effect.Effect<void, unknown, Scope.Scope>
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const show = (value: unknown): string => {
  const text = inspect(value, { depth: 6, breakLength: Infinity, maxArrayLength: 20, sorted: true })
  return text.length > 600 ? `${text.slice(0, 600)}…` : text
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Map) &&
  !(value instanceof Uint8Array)

/**
 * The first place where `actual` differs from `expected`, as `path: expected …, got …`, or
 * `undefined` when they are structurally equal. Maps compare by key, arrays by position, objects
 * by their defined keys; an own key whose value is `undefined` counts as absent.
 *
 * @since 0.1.0
 * @category testing
 */
export const difference = (actual: unknown, expected: unknown, path = "(root)"): string | undefined => {
  if (Object.is(actual, expected)) return undefined
  const mismatch = () => `${path}: expected ${show(expected)}, got ${show(actual)}`
  if (actual instanceof Map && expected instanceof Map) {
    const missing = [...expected.keys()].filter((key) => !actual.has(key))
    const extra = [...actual.keys()].filter((key) => !expected.has(key))
    if (missing.length > 0 || extra.length > 0) {
      return `${path}: keys differ (missing ${show(missing)}, unexpected ${show(extra)})`
    }
    for (const [key, value] of expected) {
      const found = difference(actual.get(key), value, `${path}[${show(key)}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (actual instanceof Uint8Array && expected instanceof Uint8Array) {
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} bytes, got ${actual.length}`
    const at = actual.findIndex((byte, index) => byte !== expected[index])
    return at === -1 ? undefined : `${path}: bytes differ first at offset ${at}`
  }
  if (Array.isArray(actual) && Array.isArray(expected)) {
    const length = Math.max(actual.length, expected.length)
    for (let index = 0; index < length; index++) {
      if (index >= actual.length || index >= expected.length) {
        return `${path}: expected ${expected.length} items, got ${actual.length} (first difference at [${index}]: expected ${
          show(expected[index])
        }, got ${show(actual[index])})`
      }
      const found = difference(actual[index], expected[index], `${path}[${index}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (isPlainObject(actual) && isPlainObject(expected)) {
    const keys = new Set([...Object.keys(actual), ...Object.keys(expected)])
    for (const key of [...keys].sort()) {
      const found = difference(actual[key], expected[key], path === "(root)" ? key : `${path}.${key}`)
      if (found !== undefined) return found
    }
    return undefined
  }
  return mismatch()
}

const violation = (promise: string, detail: string) => new ConformanceViolation({ promise, detail })

const holds = (promise: string, condition: boolean, detail: () => string): Effect.Effect<void, ConformanceViolation> =>
  condition ? Effect.void : Effect.fail(violation(promise, detail()))

const same = (promise: string, what: string, actual: unknown, expected: unknown): Effect.Effect<void, ConformanceViolation> => {
  const found = difference(actual, expected)
  return found === undefined ? Effect.void : Effect.fail(violation(promise, `${what} differs at ${found}`))
}

const describeError = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const message = error instanceof Error ? error.message : ""
    return `${String((error as { readonly _tag: unknown })._tag)}${message === "" ? "" : `: ${message}`}`
  }
  return error instanceof Error ? error.message : show(error)
}

const succeeds = <A, E, R>(promise: string, what: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, ConformanceViolation, R> =>
  Effect.mapError(effect, (error) => violation(promise, `${what} should have succeeded but failed with ${describeError(error)}`))

type Tagged = { readonly _tag: string }

const rejects = <A, E, R, const T extends string>(
  promise: string,
  what: string,
  effect: Effect.Effect<A, E, R>,
  tag: T
): Effect.Effect<Extract<E, { readonly _tag: T }>, ConformanceViolation, R> =>
  Effect.flatMap(Effect.either(effect), (either) => {
    if (Either.isRight(either)) {
      return Effect.fail(violation(promise, `${what} should have failed with ${tag} but succeeded with ${show(either.right)}`))
    }
    const error = either.left as unknown
    if (typeof error === "object" && error !== null && (error as Tagged)._tag === tag) {
      return Effect.succeed(error as Extract<E, { readonly _tag: T }>)
    }
    return Effect.fail(violation(promise, `${what} should have failed with ${tag} but failed with ${describeError(error)}`))
  })

const tags = {
  VersionConflict: "@ratchet/storage/VersionConflict",
  StaleEpoch: "@ratchet/storage/StaleEpoch",
  LeaseNotExpired: "@ratchet/storage/LeaseNotExpired",
  OperationReused: "@ratchet/storage/OperationReused",
  BranchNotFound: "@ratchet/storage/BranchNotFound",
  BranchExists: "@ratchet/storage/BranchExists",
  InvalidRequest: "@ratchet/storage/InvalidRequest",
  StorageError: "@ratchet/storage/StorageError",
  BlobNotFound: "@ratchet/storage/BlobNotFound",
  InvalidBlobRef: "@ratchet/storage/InvalidBlobRef"
} as const

/** `field` names `name` when it is `name` or ends with `.name` (e.g. `request.expectedVersion`). */
const namesField = (field: string, name: string): boolean => field === name || field.endsWith(`.${name}`)

const invalidField = <A, E, R>(
  promise: string,
  what: string,
  effect: Effect.Effect<A, E, R>,
  field: string
): Effect.Effect<void, ConformanceViolation, R> =>
  Effect.flatMap(rejects(promise, what, effect, tags.InvalidRequest), (error) => {
    const named = (error as unknown as { readonly field: string }).field
    return holds(promise, namesField(named, field), () => `${what} was rejected naming the field ${JSON.stringify(named)}, not ${field}`)
  })

interface Ids {
  readonly project: () => string
  readonly stream: (label: string) => string
  readonly operation: () => string
}

const makeIds = (): Ids => {
  const prefix = randomBytes(4).toString("hex")
  let n = 0
  const next = (label: string) => `${label}-${prefix}-${(n += 1)}`
  return { project: () => next("p"), stream: (label) => next(`t-${label}`), operation: () => next("op") }
}

const services = Effect.all({
  store: EventStore.EventStore,
  models: ReadModel.ReadModels,
  blobs: BlobStore.BlobStore,
  leases: LeaseStore.LeaseStore
})

interface Stream {
  readonly projectId: string
  readonly streamId: string
}

const newStream = (ids: Ids, label: string): Stream => ({ projectId: ids.project(), streamId: ids.stream(label) })

const request = (
  ids: Ids,
  stream: Stream,
  expectedVersion: number,
  events: ReadonlyArray<Event.Event>,
  options: { readonly epoch?: number | null; readonly branch?: string; readonly operationId?: string } = {}
): EventStore.AppendRequest => ({
  projectId: stream.projectId,
  streamId: stream.streamId,
  ...(options.branch === undefined ? {} : { branch: options.branch }),
  expectedVersion,
  epoch: options.epoch ?? null,
  operationId: options.operationId ?? ids.operation(),
  events
})

const questions = (from: number, count: number): ReadonlyArray<Event.Event> =>
  Array.from({ length: count }, (_, index) => Events.questionAsked(`q${from + index}`, {}, { at: Events.defaultAt + from + index }))

const created = (stream: Stream): Event.Event => Events.taskCreated({ taskId: stream.streamId, projectId: stream.projectId })

const readAll = (store: EventStore.Service, input: EventStore.ReadRequest) =>
  Stream.runCollect(store.read(input)).pipe(Effect.map(Chunk.toReadonlyArray))

const encoded = (events: ReadonlyArray<Event.Event>) => events.map(Event.encode)

/** Reads a branch and checks it holds exactly `expected`, in order, numbered 1… with rising LSNs. */
const expectBranch = (
  promise: string,
  store: EventStore.Service,
  streamId: string,
  branch: string,
  expected: ReadonlyArray<Event.Event>
) =>
  Effect.gen(function*() {
    const read = yield* succeeds(promise, `reading ${streamId}@${branch}`, readAll(store, { streamId, branch }))
    yield* same(promise, `the events read from ${branch}`, encoded(read.map((stored) => stored.event)), encoded(expected))
    yield* same(promise, `the versions read from ${branch}`, read.map((stored) => stored.version), expected.map((_, i) => i + 1))
    yield* holds(
      promise,
      read.every((stored, i) => i === 0 || stored.lsn > read[i - 1]!.lsn),
      () => `LSNs read from ${branch} are not strictly increasing: ${show(read.map((stored) => stored.lsn))}`
    )
    const head = yield* succeeds(promise, `the head of ${streamId}@${branch}`, store.head(streamId, branch))
    const last = read[read.length - 1]
    yield* same(
      promise,
      `the head of ${branch}`,
      head === null ? null : { version: head.version, lastLsn: head.lastLsn },
      last === undefined ? null : { version: read.length, lastLsn: last.lsn }
    )
    return read
  })

const leaseState = (row: ReadModel.LeaseRow | null) =>
  row === null ? null : { epoch: row.epoch, held: row.held, owner: row.owner }

const sha256 = (bytes: Uint8Array): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

const check = (
  group: string,
  id: string,
  title: string,
  run: Effect.Effect<void, unknown, Services>,
  timeout?: number
): Check => (timeout === undefined ? { id, group, title, run } : { id, group, title, run, timeout })

// ---------------------------------------------------------------------------------------------
// Appends
// ---------------------------------------------------------------------------------------------

const appendCreates = check(
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

const appendAtomic = check(
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

const versionConflict = check(
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

const concurrentInProcess = check(
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

const describeOutcome = (outcome: Either.Either<unknown, unknown>): string =>
  Either.isRight(outcome) ? "ok" : describeError(outcome.left)

const projectFixed = check(
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

const unknownBranch = check(
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

const badIds: ReadonlyArray<string> = [
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

const invalidIds = check(
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

const invalidShapes = check(
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

// ---------------------------------------------------------------------------------------------
// Fencing
// ---------------------------------------------------------------------------------------------

/**
 * Lease timings whose grace deadline is the heartbeat itself, so a takeover is allowed as soon as
 * the store's clock has moved past it ({@link lapse}); the checks that take a lease over use them.
 */
const expiring = { heartbeatMs: 1, graceMs: 0 } as const

/** Lets the store's clock move past an {@link expiring} lease's deadline (checks run on the live clock). */
const lapse = Effect.sleep("5 millis")

const A = Events.owner("a", 101)
const B = Events.owner("b", 202)
const C = Events.owner("c", 303)

const staleEpoch = (
  promise: string,
  what: string,
  effect: Effect.Effect<unknown, EventStore.AppendError>,
  expected: { readonly presented: number | null; readonly current: number | null; readonly held: boolean }
) =>
  Effect.flatMap(rejects(promise, what, effect, tags.StaleEpoch), (error) =>
    same(promise, `the StaleEpoch of ${what}`, { presented: error.presented, current: error.current, held: error.held }, expected))

const leaseAcquire = check(
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

const leaseHeld = check(
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

const leaseTakeover = check(
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

const leaseRelease = check(
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

const leaseDeadline = check(
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

const leaseHeartbeat = check(
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

const leaseAcrossBranches = check(
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

// ---------------------------------------------------------------------------------------------
// Operation ids
// ---------------------------------------------------------------------------------------------

const operationReplay = check(
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

const operationReused = check(
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

const lsnGlobal = check(
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

const lsnConcurrent = check(
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

const readRange = check(
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

const readPaging = check(
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

const branchShape = (branch: EventStore.Branch) => ({
  streamId: branch.streamId,
  branch: branch.branch,
  parent: branch.parent,
  forkLsn: branch.forkLsn
})

const forkReads = check(
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

const forkNested = check(
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

const forkErrors = check(
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

// ---------------------------------------------------------------------------------------------
// Read models
// ---------------------------------------------------------------------------------------------

const sortedAttempts = (rows: Iterable<ReadModel.AttemptRow>) =>
  [...rows].sort((a, b) => ReadModel.attemptKey(a.runId, a.stepId, a.attempt).localeCompare(ReadModel.attemptKey(b.runId, b.stepId, b.attempt)))

const intentKey = (row: ReadModel.IntentRow) => JSON.stringify([row.branch, row.intentId, row.updatedLsn])
const sortedIntents = (rows: Iterable<ReadModel.IntentRow>) => [...rows].sort((a, b) => intentKey(a).localeCompare(intentKey(b)))

const isOpen = (row: ReadModel.IntentRow) => row.state === "Pending" || row.state === "Dispatched"

/**
 * Checks that every read model of a branch equals the fold of the branch as read, through every
 * accessor, and that the store's own rebuild agrees.
 *
 * @since 0.1.0
 * @category testing
 */
export const expectReadModelsMatchLog = (
  stream: { readonly projectId: string; readonly streamId: string },
  branch: string
): Effect.Effect<void, ConformanceViolation, Services> =>
  Effect.gen(function*() {
    const promise = "read models equal a cold rebuild from the log"
    const { store, models } = yield* services
    const events = yield* succeeds(promise, `reading ${branch}`, readAll(store, { streamId: stream.streamId, branch }))
    const folded = ReadModel.fold(events)
    const snapshot = yield* succeeds(promise, "the snapshot", models.snapshot(stream.streamId, branch))
    yield* same(promise, `the stored read models of ${branch} (vs the fold of its events)`, snapshot, folded)
    const rebuilt = yield* succeeds(promise, "the rebuild", models.rebuild(stream.streamId, branch))
    yield* same(promise, `the store's rebuild of ${branch} (vs the fold of its events)`, rebuilt, folded)
    yield* same(promise, `taskSummary of ${branch}`, yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId, branch)), folded.summary)
    yield* same(
      promise,
      `attempts of ${branch}`,
      sortedAttempts(yield* succeeds(promise, "attempts", models.attempts(stream.streamId, branch))),
      sortedAttempts(folded.attempts.values())
    )
    yield* same(promise, `checkpoints of ${branch}`, yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, branch)), folded.checkpoints)
    yield* same(promise, "the lease", yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId)), folded.lease)
    // openIntents spans the stream's branches, so it is compared with every branch's snapshot.
    const open = yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId))
    const names = (yield* succeeds(promise, "branches", store.branches(stream.streamId))).map((b) => b.branch)
    const snapshots = yield* Effect.forEach(names, (name) => succeeds(promise, "the snapshot", models.snapshot(stream.streamId, name)))
    yield* same(
      promise,
      `openIntents of ${stream.streamId} (vs the open intents of the snapshots of ${names.join(", ")})`,
      sortedIntents(open),
      sortedIntents(snapshots.flatMap((one) => [...one.intents.values()].filter(isOpen)))
    )
    yield* expectRunReads(stream, branch, folded)
  })

/** Every run id the read models of `folded` name, and one they do not. */
const runIdsOf = (folded: ReadModel.Snapshot): ReadonlyArray<string> => [
  ...new Set([
    ...[...folded.attempts.values()].map((row) => row.runId),
    ...[...folded.intents.values()].map((row) => row.runId),
    ...folded.checkpoints.flatMap((row) => (row.runId === null ? [] : [row.runId]))
  ]),
  "run-never-started"
]

/**
 * The narrow reads of a run equal their references over the fold of the branch: `runFrontier` of
 * every run (`ReadModel.runFrontier`), and `checkpoints` narrowed by run, kind and count
 * (`ReadModel.selectCheckpoints`). And the frontier decides like the whole run: every step's
 * standing (`Progress.statusOf`) is the same over it as over every row of the run.
 */
const expectRunReads = (stream: Stream, branch: string, folded: ReadModel.Snapshot) =>
  Effect.gen(function*() {
    const promise = "a run's frontier and checkpoints are read exactly"
    const { models } = yield* services
    for (const runId of runIdsOf(folded)) {
      const stored = yield* succeeds(promise, `runFrontier of ${runId}`, models.runFrontier(stream.streamId, runId, branch))
      const expected = ReadModel.runFrontier(folded, runId)
      yield* same(
        promise,
        `runFrontier of ${runId} on ${branch} (vs ReadModel.runFrontier over the fold)`,
        { attempts: sortedAttempts(stored.attempts.values()), intents: sortedIntents(stored.intents.values()) },
        { attempts: sortedAttempts(expected.attempts.values()), intents: sortedIntents(expected.intents.values()) }
      )
      const all = { attempts: [...folded.attempts.values()].filter((row) => row.runId === runId), intents: [...folded.intents.values()].filter((row) => row.runId === runId) }
      const steps = [...new Set(all.attempts.map((row) => row.stepId))].sort()
      yield* same(
        promise,
        `the standing of each step of ${runId} on ${branch} over its frontier (vs over every row of the run)`,
        steps.map((stepId) => Progress.statusOf(stepId, [...expected.attempts.values()], [...expected.intents.values()])),
        steps.map((stepId) => Progress.statusOf(stepId, all.attempts, all.intents))
      )
      const queries: ReadonlyArray<ReadModel.CheckpointQuery> = [
        { runId },
        { runId, kind: "step" },
        { runId, kind: "step", last: 1 },
        { runId, kind: "run_start", last: 1 },
        { runId, last: 3 }
      ]
      for (const query of queries) {
        yield* same(
          promise,
          `checkpoints of ${branch} narrowed by ${show(query)} (vs ReadModel.selectCheckpoints over the fold)`,
          yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, branch, query)),
          ReadModel.selectCheckpoints(folded.checkpoints, query)
        )
      }
    }
    for (const query of [{ kind: "terminal" as const }, { last: 2 }]) {
      yield* same(
        promise,
        `checkpoints of ${branch} narrowed by ${show(query)} (vs ReadModel.selectCheckpoints over the fold)`,
        yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, branch, query)),
        ReadModel.selectCheckpoints(folded.checkpoints, query)
      )
    }
  })

const readModelsScripted = check(
  "read models",
  "readmodels.append",
  "every append updates the task summary, attempts, open intents, lease and checkpoints it touches",
  Effect.gen(function*() {
    const promise = "read models are updated in the same transaction as the events"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "models")
    // Appends a batch and returns the LSNs its events got, in order.
    const at = (batch: ReadonlyArray<Event.Event>, expectedVersion: number, epoch: number | null = null) =>
      Effect.gen(function*() {
        const result = yield* succeeds(promise, `append at ${expectedVersion}`, store.append(request(ids, stream, expectedVersion, batch, { epoch })))
        const landed = yield* succeeds(promise, "read", readAll(store, { streamId: stream.streamId, fromLsn: result.firstLsn, toLsn: result.lastLsn }))
        yield* same(promise, `the events of the append at ${expectedVersion}`, encoded(landed.map((s) => s.event)), encoded(batch))
        return { result, lsn: landed.map((s) => s.lsn), recordedAt: landed.map((s) => s.recordedAt) }
      })
    const attempt = { streamId: stream.streamId, branch: "main", runId: "run-1", stepId: "build", attempt: 1 }
    const target = { runId: "run-1", stepId: "build", attempt: 1 }
    const turn = { waitingForFirstChunk: false, toolRejected: false, toolUsed: false, toolFailed: false, streamReadComplete: false }
    const intent = { streamId: stream.streamId, branch: "main", runId: "run-1", stepId: "build", attempt: 1 }

    const r1 = yield* at([created(stream)], 0)
    const summary1 = yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId))
    yield* same(
      promise,
      "the summary after TaskCreated",
      summary1 === null ? null : { ...summary1, task: { state: summary1.task.state, version: summary1.task.version, taskId: summary1.task.taskId } },
      { ...stream, branch: "main", version: 1, lastLsn: r1.lsn[0], task: { state: "INITIALIZING", version: 1, taskId: stream.streamId } }
    )

    const r2 = yield* at([
      Events.interviewBegun(),
      Events.attemptScheduled("run-1", "build", 1),
      Events.intentRecorded("i-1", { runId: "run-1", stepId: "build", attempt: 1 })
    ], 1)
    const summary2 = yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId))
    yield* same(promise, "the summary after InterviewBegun", [summary2?.task.state, summary2?.version, summary2?.lastLsn], ["INTERVIEWING", 4, r2.lsn[2]])
    yield* same(promise, "the attempts after AttemptScheduled", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Pending", turn, updatedLsn: r2.lsn[1] }
    ])
    const open2 = yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId))
    yield* same(promise, "the open intents after IntentRecorded", open2, [
      { ...intent, intentId: "i-1", state: "Pending", outcome: null, updatedLsn: r2.lsn[2] }
    ])

    const r3 = yield* at([
      Events.attemptTransitioned({ runId: "run-1", stepId: "build", attempt: 1, from: "Pending", to: "Running" }),
      Events.intentDispatched("i-1"),
      Events.checkpointRecorded("step", "run-1")
    ], 4)
    yield* same(promise, "the attempts after AttemptTransitioned", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Running", turn, updatedLsn: r3.lsn[0] }
    ])
    yield* same(promise, "the open intents after IntentDispatched", yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId)), [
      { ...intent, intentId: "i-1", state: "Dispatched", outcome: null, updatedLsn: r3.lsn[1] }
    ])
    yield* same(promise, "the checkpoints after CheckpointRecorded", yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId)), [
      { streamId: stream.streamId, branch: "main", lsn: r3.lsn[2], kind: "step", runId: "run-1" }
    ])

    const r4 = yield* at([
      Events.intentResolved("i-1", "Succeeded", ["out-1"]),
      Events.intentRecorded("i-2", { runId: "run-1", stepId: "build", attempt: 1 }),
      Events.leaseAcquired(1, A)
    ], 7)
    yield* same(promise, "the open intents after IntentResolved", yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId)), [
      { ...intent, intentId: "i-2", state: "Pending", outcome: null, updatedLsn: r4.lsn[1] }
    ])
    const lease4 = yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))
    const recordedAt = r4.recordedAt[2]
    yield* same(promise, "the lease after LeaseAcquired", lease4, {
      ...stream,
      epoch: 1,
      held: true,
      owner: A,
      acquiredAt: recordedAt,
      heartbeatAt: recordedAt,
      graceMs: Events.defaultTimings.graceMs,
      updatedLsn: r4.lsn[2]
    })

    // The turn region: each event sets its own flag (the attempt's LSN stays its last
    // transition's), a new turn clears four, an attempt's transition alone keeps them, and a turn
    // event naming an attempt the branch never scheduled is kept in the log but touches no row.
    yield* at([
      Events.turnRecorded(target, { _tag: "firstChunkAwaitStarted" }),
      Events.turnRecorded(target, { _tag: "toolUsed" }),
      Events.turnRecorded(target, { _tag: "toolFailed" }),
      Events.turnRecorded({ ...target, attempt: 9 }, { _tag: "toolRejected" })
    ], 10, 1)
    yield* same(promise, "the attempts after TurnRecorded", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Running", turn: { ...turn, waitingForFirstChunk: true, toolUsed: true, toolFailed: true }, updatedLsn: r3.lsn[0] }
    ])
    yield* at([
      Events.turnRecorded(target, { _tag: "turnStarted" }),
      Events.turnRecorded(target, { _tag: "streamReadCompleted" })
    ], 14, 1)
    yield* same(promise, "the attempts after a new turn", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Running", turn: { ...turn, waitingForFirstChunk: true, streamReadComplete: true }, updatedLsn: r3.lsn[0] }
    ])
    const r7t = yield* at([
      Events.attemptTransitioned({ runId: "run-1", stepId: "build", attempt: 1, from: "Running", to: "Succeeded" })
    ], 16, 1)
    yield* same(promise, "the attempts after a transition alone (the turn carried over from the stored row)", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Succeeded", turn: { ...turn, waitingForFirstChunk: true, streamReadComplete: true }, updatedLsn: r7t.lsn[0] }
    ])

    const r5 = yield* at([Events.intentAbandoned("i-2"), Events.leaseReleased(1)], 17, 1)
    yield* same(promise, "the open intents after IntentAbandoned", yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId)), [])
    yield* same(promise, "the lease after LeaseReleased", yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId)), {
      ...stream,
      epoch: 1,
      held: false,
      owner: A,
      acquiredAt: recordedAt,
      heartbeatAt: recordedAt,
      graceMs: Events.defaultTimings.graceMs,
      updatedLsn: r5.lsn[1]
    })
    yield* expectReadModelsMatchLog(stream, "main")
  })
)

const readModelsForks = check(
  "read models",
  "readmodels.fork",
  "a fork's read models are its own: folded from what it sees, untouched by the other branch",
  Effect.gen(function*() {
    const promise = "read models equal a cold rebuild from the log"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "models-fork")
    const first = yield* succeeds(promise, "append", store.append(request(ids, stream, 0, [
      created(stream),
      Events.interviewBegun(),
      Events.attemptScheduled("run-1", "build", 1),
      Events.intentRecorded("i-1", { runId: "run-1", stepId: "build", attempt: 1 }),
      Events.checkpointRecorded("run_start", "run-1")
    ])))
    yield* succeeds(promise, "append", store.append(request(ids, stream, 5, [
      Events.intentDispatched("i-1"),
      Events.attemptTransitioned({ runId: "run-1", stepId: "build", attempt: 1, from: "Pending", to: "Running" }),
      Events.checkpointRecorded("step", "run-1")
    ])))
    yield* succeeds(promise, "fork", store.fork({ streamId: stream.streamId, atLsn: first.lastLsn, branch: "alt" }))
    yield* expectReadModelsMatchLog(stream, "alt")
    yield* expectReadModelsMatchLog(stream, "main")
    yield* succeeds(promise, "append to alt", store.append(request(ids, stream, 5, [
      Events.intentAbandoned("i-1"),
      Events.taskCancelled("INTERVIEWING"),
      Events.checkpointRecorded("terminal", "run-1")
    ], { branch: "alt" })))
    yield* expectReadModelsMatchLog(stream, "alt")
    yield* expectReadModelsMatchLog(stream, "main")
    const alt = yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId, "alt"))
    const main = yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId))
    yield* same(promise, "the states of the two branches", [main?.task.state, main?.version, alt?.task.state, alt?.version], [
      "INTERVIEWING",
      8,
      "CANCELLED",
      8
    ])
  })
)

const runFrontierScripted = check(
  "read models",
  "readmodels.run-frontier",
  "runFrontier reads exactly a run's latest and open attempts, every intent of an open attempt and the open or settling intents of the others: no other run's, no other branch's, no closed attempt's before the latest",
  Effect.gen(function*() {
    const promise = "a run's frontier and checkpoints are read exactly"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "frontier")
    const other = newStream(ids, "frontier-other")
    const of = (runId: string, stepId: string, attempt: number) => ({ runId, stepId, attempt })
    const moved = (target: ReturnType<typeof of>, from: "Pending" | "Running", to: "Running" | "Failed" | "Succeeded" | "Indeterminate") =>
      Events.attemptTransitioned({ ...target, from, to })
    const ran = (target: ReturnType<typeof of>, intentId: string, to: "Failed" | "Succeeded", outcome: "Failed" | "Succeeded") => [
      Events.attemptScheduled(target.runId, target.stepId, target.attempt),
      moved(target, "Pending", "Running"),
      Events.intentRecorded(intentId, target),
      Events.intentDispatched(intentId),
      Events.intentResolved(intentId, outcome),
      moved(target, "Running", to)
    ]
    const r = "run-2"
    // Run 1 (an earlier run of the task): done, and open rows the frontier of run 2 must not show.
    const first = yield* succeeds(promise, "append", store.append(request(ids, stream, 0, [
      created(stream),
      Events.checkpointRecorded("run_start", "run-1"),
      ...ran(of("run-1", "build", 1), "i-r1", "Succeeded", "Succeeded"),
      Events.attemptScheduled("run-1", "lint", 1),
      Events.checkpointRecorded("step", "run-1")
    ])))
    // Run 2: build failed twice and then ran again (attempt 3 Running, its intent dispatched);
    // test failed once, then its attempt 2 is Indeterminate and was settled; docs is scheduled;
    // an older attempt of deploy is left open below a later one.
    const second = yield* succeeds(promise, "append", store.append(request(ids, stream, first.version, [
      Events.checkpointRecorded("run_start", r),
      ...ran(of(r, "build", 1), "i-b1", "Failed", "Failed"),
      Events.checkpointRecorded("step", r),
      ...ran(of(r, "build", 2), "i-b2", "Failed", "Failed"),
      Events.checkpointRecorded("step", r),
      Events.attemptScheduled(r, "build", 3),
      moved(of(r, "build", 3), "Pending", "Running"),
      Events.intentRecorded("i-b3", of(r, "build", 3)),
      Events.intentDispatched("i-b3"),
      Events.intentRecorded("i-b3-pending", of(r, "build", 3)),
      Events.intentRecorded("i-b3-done", of(r, "build", 3)),
      Events.intentAbandoned("i-b3-done"),
      ...ran(of(r, "test", 1), "i-t1", "Failed", "Failed"),
      Events.attemptScheduled(r, "test", 2),
      moved(of(r, "test", 2), "Pending", "Running"),
      Events.intentRecorded("i-t2-before", of(r, "test", 2)),
      Events.intentDispatched("i-t2-before"),
      Events.intentResolved("i-t2-before", "Failed"),
      Events.intentRecorded("i-t2", of(r, "test", 2)),
      Events.intentDispatched("i-t2"),
      moved(of(r, "test", 2), "Running", "Indeterminate"),
      Events.intentResolved("i-t2", "Succeeded"),
      Events.attemptScheduled(r, "docs", 1),
      Events.attemptScheduled(r, "deploy", 1),
      moved(of(r, "deploy", 1), "Pending", "Running"),
      ...ran(of(r, "deploy", 2), "i-d2", "Succeeded", "Succeeded"),
      Events.checkpointRecorded("step", r)
    ])))
    // Another branch of the stream and another stream, each with an open attempt of run 2.
    yield* succeeds(promise, "fork", store.fork({ streamId: stream.streamId, atLsn: second.lastLsn, branch: "alt" }))
    yield* succeeds(promise, "append to alt", store.append(request(ids, stream, second.version, [
      Events.attemptScheduled(r, "alt-only", 1),
      Events.intentRecorded("i-alt", of(r, "alt-only", 1))
    ], { branch: "alt" })))
    yield* succeeds(promise, "append to another stream", store.append(request(ids, other, 0, [
      created(other),
      Events.attemptScheduled(r, "build", 9),
      Events.intentRecorded("i-other", of(r, "build", 9))
    ])))
    const frontier = yield* succeeds(promise, "runFrontier", models.runFrontier(stream.streamId, r))
    yield* same(
      promise,
      "the attempts of run-2's frontier on main",
      [...frontier.attempts.values()].map((row) => `${row.stepId}#${row.attempt}:${row.state}`).sort(),
      ["build#3:Running", "deploy#1:Running", "deploy#2:Succeeded", "docs#1:Pending", "test#2:Indeterminate"]
    )
    yield* same(
      promise,
      "the intents of run-2's frontier on main",
      [...frontier.intents.values()].map((row) => `${row.intentId}:${row.state}`).sort(),
      // build#3 is Running: every intent of it, the abandoned one too (a worker's call whose hook
      // comes again finds its intent); test#2 is Indeterminate: only what was settled after it.
      ["i-b3-done:Abandoned", "i-b3-pending:Pending", "i-b3:Dispatched", "i-t2:Resolved"]
    )
    yield* same(
      promise,
      "the keys of run-2's frontier",
      [...frontier.attempts.entries()].every(([key, row]) => key === ReadModel.attemptKey(row.runId, row.stepId, row.attempt)) &&
        [...frontier.intents.entries()].every(([key, row]) => key === row.intentId),
      true
    )
    const alt = yield* succeeds(promise, "runFrontier on alt", models.runFrontier(stream.streamId, r, "alt"))
    yield* same(
      promise,
      "the attempts of run-2's frontier on alt",
      [...alt.attempts.values()].map((row) => `${row.stepId}#${row.attempt}`).sort(),
      ["alt-only#1", "build#3", "deploy#1", "deploy#2", "docs#1", "test#2"]
    )
    yield* same(promise, "the intents of alt-only#1 on alt", [...alt.intents.keys()].includes("i-alt"), true)
    const none = yield* succeeds(promise, "runFrontier of a run never started", models.runFrontier(stream.streamId, "run-9"))
    yield* same(promise, "the frontier of a run never started", [none.attempts.size, none.intents.size], [0, 0])
    const unknown = yield* succeeds(promise, "runFrontier of a stream never written", models.runFrontier(ids.stream("never"), r))
    yield* same(promise, "the frontier of a stream never written", [unknown.attempts.size, unknown.intents.size], [0, 0])
    const lsns = (found: ReadonlyArray<ReadModel.CheckpointRow>) => found.map((row) => `${row.kind}:${row.runId}`)
    yield* same(
      promise,
      "run-2's last two step checkpoints",
      lsns(yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, undefined, { runId: r, kind: "step", last: 2 }))),
      ["step:run-2", "step:run-2"]
    )
    const start = yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, undefined, { runId: r, kind: "run_start", last: 1 }))
    const all = yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId))
    yield* same(promise, "run-2's start checkpoint", start, all.filter((row) => row.kind === "run_start" && row.runId === r))
    yield* invalidField(promise, "runFrontier with a bad run id", models.runFrontier(stream.streamId, "bad id"), "runId")
    yield* invalidField(promise, "checkpoints with last 0", models.checkpoints(stream.streamId, undefined, { last: 0 }), "last")
    yield* invalidField(
      promise,
      "checkpoints with an unknown kind",
      models.checkpoints(stream.streamId, undefined, { kind: "halfway" as unknown as "step" }),
      "kind"
    )
    yield* expectReadModelsMatchLog(stream, "main")
    yield* expectReadModelsMatchLog(stream, "alt")
  })
)

const listTasks = check(
  "read models",
  "readmodels.list",
  "listTasks lists a project's main-branch summaries, newest first, and no other project's",
  Effect.gen(function*() {
    const promise = "tasks are listed by project"
    const { store, models } = yield* services
    const ids = makeIds()
    const p1 = ids.project()
    const p2 = ids.project()
    const first = { projectId: p1, streamId: ids.stream("list-1") }
    const second = { projectId: p1, streamId: ids.stream("list-2") }
    const third = { projectId: p2, streamId: ids.stream("list-3") }
    for (const stream of [first, second, third]) {
      yield* succeeds(promise, "creating a task", store.append(request(ids, stream, 0, [created(stream)])))
    }
    const inP1 = yield* succeeds(promise, "listTasks(p1)", models.listTasks(p1))
    yield* same(promise, "the tasks of p1", inP1.map((summary) => [summary.streamId, summary.branch]), [[second.streamId, "main"], [first.streamId, "main"]])
    const inP2 = yield* succeeds(promise, "listTasks(p2)", models.listTasks(p2))
    yield* same(promise, "the tasks of p2", inP2.map((summary) => summary.streamId), [third.streamId])
    const everywhere = (yield* succeeds(promise, "listTasks()", models.listTasks())).map((summary) => summary.streamId)
    yield* holds(
      promise,
      [first, second, third].every((stream) => everywhere.includes(stream.streamId)),
      () => `listTasks() misses a task: ${show(everywhere.slice(0, 20))}`
    )
  })
)

/**
 * How many random histories {@link readModelsRandom} appends, unless told otherwise.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultHistoryRuns = 25

interface BranchState {
  readonly name: string
  readonly committed: Array<Event.Event>
  readonly pending: Array<ReadonlyArray<Event.Event>>
}

/**
 * Appends one random history (see `Histories`) and checks, after every append and on every
 * branch, that the events read back are the ones appended and that the read models equal the
 * cold fold of the log.
 *
 * @since 0.1.0
 * @category testing
 */
export const runHistory = (script: Histories.Script): Effect.Effect<void, ConformanceViolation, Services> =>
  Effect.gen(function*() {
    const promise = "read models equal a cold rebuild from the log"
    const { models, store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "history")
    const main: BranchState = { name: EventStore.mainBranch, committed: [], pending: [] }
    const branches: Array<BranchState> = [main]
    let fork: BranchState | undefined
    let serial = 0
    let batch = 0
    const all = (branch: BranchState) => [...branch.committed, ...branch.pending.flat()]

    const flush = (branch: BranchState) =>
      Effect.gen(function*() {
        if (branch.pending.length === 0) return
        const events = branch.pending.flat()
        const lease = Histories.leaseOf(main.committed)
        // Histories take leases over with a zero grace: let the store's clock pass the deadline.
        if (events.some((event) => event._tag === "LeaseTakenOver")) yield* lapse
        yield* succeeds(
          promise,
          `appending ${events.map((event) => event._tag).join(", ")} to ${branch.name} at version ${branch.committed.length}`,
          store.append(
            request(ids, stream, branch.committed.length, events, { branch: branch.name, epoch: Histories.presentedEpoch(lease) })
          )
        )
        branch.committed.push(...events)
        branch.pending.length = 0
        // After every append: the log and the stored read models; every accessor at the end.
        const read = yield* expectBranch(promise, store, stream.streamId, branch.name, branch.committed)
        const snapshot = yield* succeeds(promise, "the snapshot", models.snapshot(stream.streamId, branch.name))
        yield* same(promise, `the stored read models of ${branch.name} (vs the fold of its events)`, snapshot, ReadModel.fold(read))
      })

    for (const [index, choice] of script.steps.entries()) {
      if (script.fork !== null && fork === undefined && index >= script.fork.afterStep && main.committed.length > 0) {
        yield* flush(main)
        // Leases are task-wide while reads are per branch: fork after the last lease change, so
        // the lease folded from either branch is the task's lease.
        const lastLease = main.committed.reduce((last, event, i) => (Histories.isLeaseEvent(event) ? i : last), -1)
        const low = Math.max(1, lastLease + 1)
        const count = low + (script.fork.at % (main.committed.length - low + 1))
        const read = yield* succeeds(promise, "reading main", readAll(store, { streamId: stream.streamId }))
        const atLsn = read[count - 1]!.lsn
        yield* succeeds(promise, `forking at event ${count}`, store.fork({ streamId: stream.streamId, atLsn, branch: "fork" }))
        fork = { name: "fork", committed: main.committed.slice(0, count), pending: [] }
        branches.push(fork)
        yield* expectBranch(promise, store, stream.streamId, fork.name, fork.committed)
        yield* expectReadModelsMatchLog(stream, fork.name)
      }
      const target = fork !== undefined && choice % 3 === 1 ? fork : main
      const unit = Histories.next(choice, {
        ...stream,
        taskId: stream.streamId,
        branch: all(target),
        lease: Histories.leaseOf([...main.committed, ...main.pending.flat()]),
        leases: fork === undefined && script.fork?.afterStep !== index,
        serial: (serial += 1)
      })
      target.pending.push(unit)
      const size = script.batches[batch % script.batches.length] ?? 1
      if (target.pending.length >= size || unit.some(Histories.isLeaseEvent)) {
        batch += 1
        yield* flush(target)
      }
    }
    for (const branch of branches) yield* flush(branch)
    for (const branch of branches) yield* expectReadModelsMatchLog(stream, branch.name)
  })

/**
 * How the random-history property runs: how many histories, and the fast-check `seed` and `path`
 * that replay a reported failure (both are printed with every failure).
 *
 * @since 0.1.0
 * @category models
 */
export interface HistoryOptions {
  readonly runs?: number | undefined
  readonly seed?: number | undefined
  readonly path?: string | undefined
}

/**
 * The property: random histories (see {@link runHistory}).
 *
 * @since 0.1.0
 * @category testing
 */
export const readModelsRandom = (options: HistoryOptions = {}): Check => {
  const runs = options.runs ?? defaultHistoryRuns
  return check(
    "read models",
    "readmodels.random",
    `over ${runs} random histories (decided commands, run-level facts, random batches, forks), read models equal a cold rebuild after every append`,
    Effect.gen(function*() {
      const context = yield* Effect.context<Services>()
      yield* Effect.tryPromise({
        try: () =>
          fc.assert(
            fc.asyncProperty(Histories.arbitrary(), (script) => Effect.runPromise(Effect.provide(runHistory(script), context))),
            {
              numRuns: runs,
              ...(options.seed === undefined ? {} : { seed: options.seed }),
              ...(options.path === undefined ? {} : { path: options.path, endOnFailure: true })
            }
          ),
        catch: (error) =>
          violation("read models equal a cold rebuild from the log", error instanceof Error ? error.message : String(error))
      })
    }),
    600_000
  )
}

// ---------------------------------------------------------------------------------------------
// Blobs
// ---------------------------------------------------------------------------------------------

const bytesOf = (text: string) => new TextEncoder().encode(text)

const blobRoundTrip = check(
  "blobs",
  "blob.roundtrip",
  "put returns sha256 of the bytes; get returns them; has knows them (empty, binary, 1 MiB)",
  Effect.gen(function*() {
    const promise = "blobs are content-addressed"
    const { blobs } = yield* services
    const samples: ReadonlyArray<readonly [string, Uint8Array]> = [
      ["an empty blob", new Uint8Array(0)],
      ["text", bytesOf(`prompt ${randomBytes(8).toString("hex")}`)],
      ["every byte value", Uint8Array.from({ length: 256 }, (_, i) => i)],
      ["1 MiB", new Uint8Array(randomBytes(1_048_576))]
    ]
    for (const [what, bytes] of samples) {
      const ref = yield* succeeds(promise, `put ${what}`, blobs.put(bytes))
      yield* same(promise, `the ref of ${what}`, ref, sha256(bytes))
      yield* same(promise, `has ${what}`, yield* succeeds(promise, "has", blobs.has(ref)), true)
      yield* same(promise, `the bytes of ${what}`, new Uint8Array(yield* succeeds(promise, "get", blobs.get(ref))), bytes)
    }
  }),
  60_000
)

const blobDedup = check(
  "blobs",
  "blob.dedup",
  "putting the same bytes again, even concurrently, returns the same ref and keeps one readable copy",
  Effect.gen(function*() {
    const promise = "put is atomic and deduplicating"
    const { blobs } = yield* services
    const bytes = bytesOf(`output ${randomBytes(16).toString("hex")}\n`.repeat(100))
    const first = yield* succeeds(promise, "put", blobs.put(bytes))
    const again = yield* succeeds(promise, "put again", blobs.put(bytes))
    yield* same(promise, "the ref of the same bytes", again, first)
    const fresh = bytesOf(`log ${randomBytes(16).toString("hex")}`)
    const refs = yield* Effect.all(Array.from({ length: 8 }, () => succeeds(promise, "a concurrent put", blobs.put(fresh))), { concurrency: "unbounded" })
    yield* same(promise, "the refs of concurrent puts", new Set(refs).size, 1)
    yield* same(promise, "the bytes after concurrent puts", new Uint8Array(yield* succeeds(promise, "get", blobs.get(refs[0]!))), fresh)
    yield* same(promise, "the bytes after putting twice", new Uint8Array(yield* succeeds(promise, "get", blobs.get(first))), bytes)
  })
)

const blobMissing = check(
  "blobs",
  "blob.missing",
  "a well-formed ref never stored: has is false, get is BlobNotFound",
  Effect.gen(function*() {
    const promise = "get of a missing blob is typed"
    const { blobs } = yield* services
    const ref = sha256(bytesOf(`never stored ${randomBytes(16).toString("hex")}`))
    yield* same(promise, "has of a missing blob", yield* succeeds(promise, "has", blobs.has(ref)), false)
    const missing = yield* rejects(promise, "get of a missing blob", blobs.get(ref), tags.BlobNotFound)
    yield* same(promise, "the BlobNotFound", missing.ref, ref)
  })
)

const hostileRefs: ReadonlyArray<string> = [
  "",
  "sha256:",
  `sha256:${"0".repeat(63)}`,
  `sha256:${"0".repeat(65)}`,
  `sha256:${"A".repeat(64)}`,
  `SHA256:${"0".repeat(64)}`,
  `sha512:${"0".repeat(64)}`,
  `${"0".repeat(64)}`,
  "../../../../etc/passwd",
  "sha256:../../../../etc/passwd",
  `sha256:${"0".repeat(62)}/..`,
  `sha256:../${"0".repeat(61)}`,
  `sha256:${"0".repeat(64)}/../../x`,
  `sha256:${"0".repeat(64)}\n`,
  `sha256:${"0".repeat(63)}\u0000`,
  `/etc/passwd`,
  `sha256:%2e%2e%2f${"0".repeat(55)}`,
  ` sha256:${"0".repeat(64)}`
]

const blobHostile = check(
  "blobs",
  "blob.hostile-refs",
  "a malformed or path-like ref is InvalidBlobRef for get and has, never a file access",
  Effect.gen(function*() {
    const promise = "no reference can escape the store"
    const { blobs } = yield* services
    for (const ref of hostileRefs) {
      const invalid = yield* rejects(promise, `get ${show(ref)}`, blobs.get(ref), tags.InvalidBlobRef)
      yield* same(promise, `the InvalidBlobRef of ${show(ref)}`, invalid.ref, ref)
      yield* rejects(promise, `has ${show(ref)}`, blobs.has(ref), tags.InvalidBlobRef)
    }
  })
)

const blobVerify = check(
  "blobs",
  "blob.verify",
  "get re-hashes: bytes damaged behind the store's back are a Corrupt StorageError; other blobs stay readable",
  Effect.gen(function*() {
    const promise = "get verifies the hash"
    const { blobs } = yield* services
    const faults = yield* Effect.serviceOption(StorageFaults)
    if (Option.isNone(faults)) {
      return yield* Effect.fail(
        violation(
          promise,
          "the layer provides no StorageFaults service, so the suite cannot damage a blob to prove get verifies it. Merge StorageFaults.fileBlobs(directory) (or your own corruptBlob) into the layer, or skip the check \"blob.verify\" explicitly"
        )
      )
    }
    const damaged = bytesOf(`will be damaged ${randomBytes(16).toString("hex")}`)
    const intact = bytesOf(`stays intact ${randomBytes(16).toString("hex")}`)
    const ref = yield* succeeds(promise, "put", blobs.put(damaged))
    const other = yield* succeeds(promise, "put", blobs.put(intact))
    yield* succeeds(promise, "damaging the blob", faults.value.corruptBlob(ref))
    const error = yield* rejects(promise, "get of a damaged blob", blobs.get(ref), tags.StorageError)
    yield* same(promise, "the reason of the StorageError", error.reason._tag, "Corrupt")
    yield* same(promise, "the intact blob", new Uint8Array(yield* succeeds(promise, "get", blobs.get(other))), intact)
  })
)

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

const inStore = <A, E>(shared: SharedStore, effect: Effect.Effect<A, E, Services>) =>
  Effect.provide(effect, shared.layer)

const outcomeText = (outcome: Outcome) => (outcome.ok ? "ok" : `${outcome.tag}: ${outcome.message}`)

const processesOpen: ProcessCheck = {
  id: "processes.open",
  title: "N processes opening a fresh store at the same moment all succeed, and the store works afterwards",
  run: (harness, children) =>
    Effect.gen(function*() {
      const promise = "several processes opening a fresh store at once all succeed"
      const shared = harness.share()
      const outcomes = yield* runChildren(shared.child, Array.from({ length: children }, () => ({ op: "open" as const, streamId: "probe" })))
      yield* holds(promise, outcomes.every((outcome) => outcome.ok && outcome.result === null), () => `outcomes: ${show(outcomes.map(outcomeText))}`)
      yield* inStore(
        shared,
        Effect.gen(function*() {
          const { store } = yield* services
          const ids = makeIds()
          const stream = newStream(ids, "after-open")
          yield* succeeds(promise, "an append after the concurrent opens", store.append(request(ids, stream, 0, [created(stream)])))
          yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream)])
        })
      )
    })
}

const processesVersionRace: ProcessCheck = {
  id: "processes.version-race",
  title: "N processes appending with the same expected version: exactly one wins, the rest get the conflict",
  run: (harness, children) =>
    Effect.gen(function*() {
      const promise = "concurrent appends with the same expected version: exactly one wins"
      const shared = harness.share()
      const ids = makeIds()
      const stream = newStream(ids, "proc-race")
      yield* inStore(
        shared,
        Effect.flatMap(services, ({ store }) => succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)]))))
      )
      const requests = Array.from({ length: children }, (_, i) => request(ids, stream, 1, questions(i * 10, 2)))
      const outcomes = yield* runChildren(shared.child, requests.map((r) => ({ op: "append" as const, request: wireAppend(r) })))
      const winners = outcomes.flatMap((outcome, index) => (outcome.ok ? [index] : []))
      yield* holds(promise, winners.length === 1, () => `${winners.length} of ${children} processes won: ${show(outcomes.map(outcomeText))}`)
      for (const outcome of outcomes) {
        if (!outcome.ok) {
          yield* holds(
            promise,
            outcome.tag === tags.VersionConflict && outcome.fields["expected"] === 1 && outcome.fields["actual"] === 3,
            () => `a losing process got ${outcomeText(outcome)} ${show(outcome.fields)} instead of VersionConflict(expected 1, actual 3)`
          )
        }
      }
      const winner = requests[winners[0]!]!
      yield* inStore(
        shared,
        Effect.gen(function*() {
          const { store } = yield* services
          const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), ...winner.events])
          yield* same(promise, "the operation ids that landed", read.slice(1).map((s) => s.operationId), [winner.operationId, winner.operationId])
        })
      )
    })
}

const processesStaleEpoch: ProcessCheck = {
  id: "processes.stale-epoch",
  title: "N processes appending with the epoch a takeover fenced off: none lands",
  run: (harness, children) =>
    Effect.gen(function*() {
      const promise = "a stale epoch never lands"
      const shared = harness.share()
      const ids = makeIds()
      const stream = newStream(ids, "proc-stale")
      const history = [created(stream), Events.leaseAcquired(1, A, expiring), Events.leaseTakenOver(2, B, A, expiring)]
      yield* inStore(
        shared,
        Effect.gen(function*() {
          const { store } = yield* services
          yield* succeeds(promise, "creating the stream with a lease", store.append(request(ids, stream, 0, history.slice(0, 2))))
          yield* lapse
          yield* succeeds(promise, "B taking over", store.append(request(ids, stream, 2, history.slice(2), { epoch: 1 })))
        })
      )
      const requests = Array.from({ length: children }, (_, i) => request(ids, stream, 3, [Events.checkpointRecorded("step", `run-${i}`)], { epoch: 1 }))
      const outcomes = yield* runChildren(shared.child, requests.map((r) => ({ op: "append" as const, request: wireAppend(r) })))
      for (const outcome of outcomes) {
        yield* holds(
          promise,
          !outcome.ok && outcome.tag === tags.StaleEpoch && outcome.fields["presented"] === 1 && outcome.fields["current"] === 2,
          () => `a process presenting the fenced epoch 1 got ${outcomeText(outcome)} instead of StaleEpoch(presented 1, current 2)`
        )
      }
      yield* inStore(shared, Effect.flatMap(services, ({ store }) => expectBranch(promise, store, stream.streamId, EventStore.mainBranch, history)))
    })
}

const processesFencingRace: ProcessCheck = {
  id: "processes.fencing-race",
  title: "N-1 processes writing under epoch 1 race one taking the lease over: nothing under epoch 1 lands after the takeover",
  run: (harness, children) =>
    Effect.gen(function*() {
      const promise = "a stale epoch never lands"
      const shared = harness.share()
      const ids = makeIds()
      const stream = newStream(ids, "proc-fence")
      yield* inStore(
        shared,
        Effect.flatMap(services, ({ store }) =>
          succeeds(promise, "creating the stream with a lease", store.append(request(ids, stream, 0, [created(stream), Events.leaseAcquired(1, A, expiring)]))))
      )
      yield* lapse
      const takeover = request(ids, stream, 0, [Events.leaseTakenOver(2, B, A, expiring)], { epoch: 1 })
      const writers = Array.from({ length: Math.max(children - 1, 1) }, (_, i) =>
        request(ids, stream, 0, [Events.checkpointRecorded("step", `run-${i}`)], { epoch: 1 }))
      const retries = 4 * children
      const outcomes = yield* runChildren(shared.child, [
        { op: "appendAtHead" as const, request: wireAppend(takeover), retries },
        ...writers.map((r) => ({ op: "appendAtHead" as const, request: wireAppend(r), retries }))
      ])
      const [took, ...wrote] = outcomes
      yield* holds(promise, took?.ok === true, () => `the takeover did not land: ${took === undefined ? "no outcome" : outcomeText(took)}`)
      yield* inStore(
        shared,
        Effect.gen(function*() {
          const { store, models } = yield* services
          const read = yield* succeeds(promise, "reading the stream", readAll(store, { streamId: stream.streamId }))
          const takeoverAt = read.find((stored) => stored.operationId === takeover.operationId)?.lsn
          yield* holds(promise, takeoverAt !== undefined, () => "the takeover is not in the log")
          const late = read.filter((stored) => stored.epoch === 1 && stored.lsn > takeoverAt! && stored.operationId !== takeover.operationId)
          yield* holds(promise, late.length === 0, () => `events written under epoch 1 landed after the takeover: ${show(late.map((s) => [s.lsn, s.event._tag]))}`)
          for (const [index, outcome] of wrote.entries()) {
            const landed = read.filter((stored) => stored.operationId === writers[index]!.operationId)
            if (outcome.ok) {
              yield* holds(promise, landed.length === 1 && landed[0]!.lsn < takeoverAt!, () => `writer ${index} succeeded but its event is ${show(landed.map((s) => s.lsn))}, takeover at ${takeoverAt}`)
            } else {
              yield* holds(
                promise,
                outcome.tag === tags.StaleEpoch && landed.length === 0,
                () => `writer ${index} got ${outcomeText(outcome)} (expected success before the takeover or StaleEpoch after it), and ${landed.length} of its events landed`
              )
            }
          }
          yield* same(promise, "the lease after the race", leaseState(yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))), {
            epoch: 2,
            held: true,
            owner: B
          })
        })
      )
    })
}

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

/**
 * Every in-process check, in the order the suite runs them (`readmodels.random` is built from the
 * number of runs, see {@link readModelsRandom}).
 *
 * @since 0.1.0
 * @category testing
 */
export const checks = (options: { readonly histories?: HistoryOptions | undefined } = {}): ReadonlyArray<Check> => [
  appendCreates,
  appendAtomic,
  versionConflict,
  concurrentInProcess,
  projectFixed,
  unknownBranch,
  invalidIds,
  invalidShapes,
  leaseAcquire,
  leaseHeld,
  leaseTakeover,
  leaseRelease,
  leaseAcrossBranches,
  leaseDeadline,
  leaseHeartbeat,
  operationReplay,
  operationReused,
  lsnGlobal,
  lsnConcurrent,
  readRange,
  readPaging,
  forkReads,
  forkNested,
  forkErrors,
  readModelsScripted,
  readModelsForks,
  runFrontierScripted,
  listTasks,
  readModelsRandom(options.histories),
  blobRoundTrip,
  blobDedup,
  blobMissing,
  blobHostile,
  blobVerify
]

/**
 * Every multi-process check.
 *
 * @since 0.1.0
 * @category testing
 */
export const processChecks: ReadonlyArray<ProcessCheck> = [
  processesOpen,
  processesVersionRace,
  processesStaleEpoch,
  processesFencingRace
]
