/**
 * The shared kit of the storage conformance checks: the violation, the check shapes, and the
 * helpers every family uses (ids, requests, expectations). Internal: `StorageChecks` re-exports
 * what is public.
 */
import { createHash, randomBytes } from "node:crypto"
import { inspect } from "node:util"
import * as Event from "@ratchet/kernel/Event"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Events from "../../Events.js"
import { type ProcessHarness, type Services } from "../../StorageChild.js"

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

export const show = (value: unknown): string => {
  const text = inspect(value, { depth: 6, breakLength: Infinity, maxArrayLength: 20, sorted: true })
  return text.length > 600 ? `${text.slice(0, 600)}…` : text
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
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

export const violation = (promise: string, detail: string) => new ConformanceViolation({ promise, detail })

export const holds = (promise: string, condition: boolean, detail: () => string): Effect.Effect<void, ConformanceViolation> =>
  condition ? Effect.void : Effect.fail(violation(promise, detail()))

export const same = (promise: string, what: string, actual: unknown, expected: unknown): Effect.Effect<void, ConformanceViolation> => {
  const found = difference(actual, expected)
  return found === undefined ? Effect.void : Effect.fail(violation(promise, `${what} differs at ${found}`))
}

export const describeError = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const message = error instanceof Error ? error.message : ""
    return `${String((error as { readonly _tag: unknown })._tag)}${message === "" ? "" : `: ${message}`}`
  }
  return error instanceof Error ? error.message : show(error)
}

export const succeeds = <A, E, R>(promise: string, what: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, ConformanceViolation, R> =>
  Effect.mapError(effect, (error) => violation(promise, `${what} should have succeeded but failed with ${describeError(error)}`))

export type Tagged = { readonly _tag: string }

export const rejects = <A, E, R, const T extends string>(
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

export const tags = {
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
export const namesField = (field: string, name: string): boolean => field === name || field.endsWith(`.${name}`)

export const invalidField = <A, E, R>(
  promise: string,
  what: string,
  effect: Effect.Effect<A, E, R>,
  field: string
): Effect.Effect<void, ConformanceViolation, R> =>
  Effect.flatMap(rejects(promise, what, effect, tags.InvalidRequest), (error) => {
    const named = (error as unknown as { readonly field: string }).field
    return holds(promise, namesField(named, field), () => `${what} was rejected naming the field ${JSON.stringify(named)}, not ${field}`)
  })

export interface Ids {
  readonly project: () => string
  readonly stream: (label: string) => string
  readonly operation: () => string
}

export const makeIds = (): Ids => {
  const prefix = randomBytes(4).toString("hex")
  let n = 0
  const next = (label: string) => `${label}-${prefix}-${(n += 1)}`
  return { project: () => next("p"), stream: (label) => next(`t-${label}`), operation: () => next("op") }
}

export const services = Effect.all({
  store: EventStore.EventStore,
  models: ReadModel.ReadModels,
  blobs: BlobStore.BlobStore,
  leases: LeaseStore.LeaseStore
})

export interface StreamRef {
  readonly projectId: string
  readonly streamId: string
}

export const newStream = (ids: Ids, label: string): StreamRef => ({ projectId: ids.project(), streamId: ids.stream(label) })

export const request = (
  ids: Ids,
  stream: StreamRef,
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

export const questions = (from: number, count: number): ReadonlyArray<Event.Event> =>
  Array.from({ length: count }, (_, index) => Events.questionAsked(`q${from + index}`, {}, { at: Events.defaultAt + from + index }))

export const created = (stream: StreamRef): Event.Event => Events.taskCreated({ taskId: stream.streamId, projectId: stream.projectId })

export const readAll = (store: EventStore.Service, input: EventStore.ReadRequest) =>
  Stream.runCollect(store.read(input)).pipe(Effect.map(Chunk.toReadonlyArray))

export const encoded = (events: ReadonlyArray<Event.Event>) => events.map(Event.encode)

/** Reads a branch and checks it holds exactly `expected`, in order, numbered 1… with rising LSNs. */
export const expectBranch = (
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

export const leaseState = (row: ReadModel.LeaseRow | null) =>
  row === null ? null : { epoch: row.epoch, held: row.held, owner: row.owner }

export const sha256 = (bytes: Uint8Array): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

export const check = (
  group: string,
  id: string,
  title: string,
  run: Effect.Effect<void, unknown, Services>,
  timeout?: number
): Check => (timeout === undefined ? { id, group, title, run } : { id, group, title, run, timeout })
