/**
 * The lesson store's conformance checks (group `lessons` of the storage conformance suite): what
 * `LessonStore` promises, proved through the port only (ADR 0033).
 *
 * - lesson.append: the first append (expected version 0) creates the lesson numbered from 1, the
 *   events read back as written, and the read model is their fold;
 * - lesson.expected-version: a stale expected version is a `LessonVersionConflict` naming the
 *   current one, and writes nothing; of 8 concurrent appends at one version exactly one lands;
 * - lesson.operation: a replayed operation id returns the first result and writes nothing; the
 *   same id with another request is `OperationReused`;
 * - lesson.invalid: a bad id, an empty batch, an event of another lesson, a stream that does not
 *   begin with a proposal and a second project are `InvalidRequest` naming the field, and write
 *   nothing;
 * - lesson.search: lessons by project and status; a fingerprint match ranks first, then the
 *   full-text rank; words that are query syntax in FTS5 or `tsquery` are only words.
 *
 * @since 0.3.0
 */
import { randomBytes } from "node:crypto"
import type * as Fingerprint from "@ratchet/kernel/Fingerprint"
import * as LessonRules from "@ratchet/kernel/LessonRules"
import * as LessonStore from "@ratchet/storage/LessonStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Lessons from "./Lessons.js"
import { ConformanceViolation, difference } from "./StorageChecks.js"

/**
 * @since 0.3.0
 * @category models
 */
export interface Check {
  readonly id: string
  readonly group: string
  readonly title: string
  readonly run: Effect.Effect<void, unknown, LessonStore.LessonStore>
}

const violation = (promise: string, detail: string) => new ConformanceViolation({ promise, detail })

const holds = (promise: string, condition: boolean, detail: () => string) =>
  condition ? Effect.void : Effect.fail(violation(promise, detail()))

const same = (promise: string, what: string, actual: unknown, expected: unknown) => {
  const found = difference(actual, expected)
  return found === undefined ? Effect.void : Effect.fail(violation(promise, `${what} differs at ${found}`))
}

const tagOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : String(error)

const succeeds = <A, E, R>(promise: string, what: string, effect: Effect.Effect<A, E, R>) =>
  Effect.mapError(effect, (error) => violation(promise, `${what} should have succeeded but failed with ${tagOf(error)}`))

const rejects = <A, E, R>(promise: string, what: string, effect: Effect.Effect<A, E, R>, tag: string) =>
  Effect.flatMap(Effect.either(effect), (either) => {
    if (Either.isRight(either)) return Effect.fail(violation(promise, `${what} should have failed with ${tag} but succeeded`))
    const found = tagOf(either.left)
    return found === tag
      ? Effect.succeed(either.left as unknown as Record<string, unknown>)
      : Effect.fail(violation(promise, `${what} should have failed with ${tag} but failed with ${found}`))
  })

const ids = () => {
  const prefix = randomBytes(4).toString("hex")
  let n = 0
  const next = (label: string) => `${label}-${prefix}-${(n += 1)}`
  return { project: () => next("p"), lesson: () => next("L"), operation: () => next("op") }
}

const check = (id: string, title: string, run: Check["run"]): Check => ({ id, group: "lessons", title, run })

const fp = Lessons.fingerprint("test", 1, "expected 2 rows, got 3")

const appendCreates = check(
  "lesson.append",
  "the first append creates the lesson numbered from 1; its events read back as written, its read model is their fold",
  Effect.gen(function*() {
    const promise = "an append creates the lesson with its read model"
    const store = yield* LessonStore.LessonStore
    const id = ids()
    const projectId = id.project()
    const lessonId = id.lesson()
    yield* same(promise, "a lesson never written", yield* succeeds(promise, "get", store.get(lessonId)), null)
    const events = [
      Lessons.proposed(lessonId, Lessons.body(projectId)),
      Lessons.failureObserved(lessonId, Lessons.failure(projectId, "run-1", fp, Lessons.T0 + 1))
    ]
    const result = yield* succeeds(promise, "the first append", store.append({ projectId, lessonId, expectedVersion: 0, operationId: id.operation(), events }))
    yield* same(promise, "the append result", result, { lessonId, version: 2, replayed: false })
    const read = yield* succeeds(promise, "read", store.read(lessonId))
    yield* same(promise, "the events read back", read.map((stored) => ({ version: stored.version, projectId: stored.projectId, event: stored.event })), [
      { version: 1, projectId, event: events[0] },
      { version: 2, projectId, event: events[1] }
    ])
    const row = yield* succeeds(promise, "get", store.get(lessonId))
    yield* same(promise, "the read model", row?.view, LessonRules.fold(events))
    yield* same(promise, "the read model's columns", row === null ? null : { status: row.status, revision: row.revision, version: row.version }, {
      status: "candidate",
      revision: 1,
      version: 2
    })
  })
)

const versionConflict = check(
  "lesson.expected-version",
  "a stale expected version is a LessonVersionConflict naming the current one and writes nothing; of 8 racing appends one lands",
  Effect.gen(function*() {
    const promise = "an append lands only at the version it was decided against"
    const store = yield* LessonStore.LessonStore
    const id = ids()
    const projectId = id.project()
    const lessonId = id.lesson()
    yield* succeeds(promise, "the proposal", store.append({ projectId, lessonId, expectedVersion: 0, operationId: id.operation(), events: [Lessons.proposed(lessonId, Lessons.body(projectId))] }))
    const observed = (run: string) => [Lessons.failureObserved(lessonId, Lessons.failure(projectId, run, fp, Lessons.T0 + 1))]
    const conflict = yield* rejects(
      promise,
      "an append at version 0 of a lesson at version 1",
      store.append({ projectId, lessonId, expectedVersion: 0, operationId: id.operation(), events: observed("stale") }),
      "@ratchet/storage/LessonVersionConflict"
    )
    yield* same(promise, "the conflict", { expected: conflict["expected"], actual: conflict["actual"] }, { expected: 0, actual: 1 })
    const outcomes = yield* Effect.all(
      Array.from({ length: 8 }, (_, n) =>
        Effect.either(store.append({ projectId, lessonId, expectedVersion: 1, operationId: id.operation(), events: observed(`race-${n}`) }))),
      { concurrency: "unbounded" }
    )
    const landed = outcomes.filter(Either.isRight).length
    const conflicts = outcomes.filter((outcome) => Either.isLeft(outcome) && tagOf(outcome.left) === "@ratchet/storage/LessonVersionConflict").length
    yield* holds(promise, landed === 1 && conflicts === 7, () => `${landed} appends landed and ${conflicts} conflicted; expected 1 and 7`)
    const read = yield* succeeds(promise, "read", store.read(lessonId))
    yield* same(promise, "the stream's versions", read.map((stored) => stored.version), [1, 2])
  })
)

const operations = check(
  "lesson.operation",
  "a replayed operation id returns the first result and writes nothing; the same id with another request is OperationReused",
  Effect.gen(function*() {
    const promise = "an operation id lands once"
    const store = yield* LessonStore.LessonStore
    const id = ids()
    const projectId = id.project()
    const lessonId = id.lesson()
    const request = { projectId, lessonId, expectedVersion: 0, operationId: id.operation(), events: [Lessons.proposed(lessonId, Lessons.body(projectId))] }
    yield* succeeds(promise, "the first append", store.append(request))
    const replay = yield* succeeds(promise, "the replay", store.append(request))
    yield* same(promise, "the replay's result", replay, { lessonId, version: 1, replayed: true })
    yield* rejects(
      promise,
      "the same operation id with other events",
      store.append({ ...request, expectedVersion: 1, events: [Lessons.failureObserved(lessonId, Lessons.failure(projectId, "r", fp, Lessons.T0 + 1))] }),
      "@ratchet/storage/OperationReused"
    )
    yield* same(promise, "the stream's length", (yield* succeeds(promise, "read", store.read(lessonId))).length, 1)
  })
)

const invalidRequests = check(
  "lesson.invalid",
  "bad ids, empty batches, another lesson's events, a stream not begun by a proposal and a second project write nothing",
  Effect.gen(function*() {
    const promise = "an invalid append is refused naming its field and writes nothing"
    const store = yield* LessonStore.LessonStore
    const id = ids()
    const projectId = id.project()
    const lessonId = id.lesson()
    const propose = [Lessons.proposed(lessonId, Lessons.body(projectId))]
    const cases: ReadonlyArray<readonly [string, LessonStore.AppendRequest, string]> = [
      ["a lesson id with a path", { projectId, lessonId: "../etc", expectedVersion: 0, operationId: id.operation(), events: propose }, "lessonId"],
      ["a project id with a space", { projectId: "p 1", lessonId, expectedVersion: 0, operationId: id.operation(), events: propose }, "projectId"],
      ["no events", { projectId, lessonId, expectedVersion: 0, operationId: id.operation(), events: [] }, "events"],
      ["a negative version", { projectId, lessonId, expectedVersion: -1, operationId: id.operation(), events: propose }, "expectedVersion"],
      ["another lesson's event", { projectId, lessonId: id.lesson(), expectedVersion: 0, operationId: id.operation(), events: propose }, "events[0].lessonId"],
      [
        "a stream begun by a failure",
        { projectId, lessonId, expectedVersion: 0, operationId: id.operation(), events: [Lessons.failureObserved(lessonId, Lessons.failure(projectId, "r", fp, 1))] },
        "events"
      ],
      ["a proposal for another project", { projectId: id.project(), lessonId, expectedVersion: 0, operationId: id.operation(), events: propose }, "projectId"]
    ]
    for (const [what, request, field] of cases) {
      const error = yield* rejects(promise, what, store.append(request), "@ratchet/storage/InvalidRequest")
      yield* holds(promise, error["field"] === field, () => `${what} was refused naming ${String(error["field"])}, not ${field}`)
    }
    yield* same(promise, "the lesson after every refusal", yield* succeeds(promise, "get", store.get(lessonId)), null)
    yield* same(promise, "its stream", (yield* succeeds(promise, "read", store.read(lessonId))).length, 0)
  })
)

const search = check(
  "lesson.search",
  "lessons by project and status; a fingerprint match first, then full-text rank; query syntax is only words",
  Effect.gen(function*() {
    const promise = "a search finds a project's lessons in the statuses asked, best first"
    const store = yield* LessonStore.LessonStore
    const id = ids()
    const projectId = id.project()
    const other = Lessons.fingerprint("build", 2, "cannot find module")
    // Each lesson is Ratchet's candidate from a failure with its own fingerprint (`fp`, else one of
    // its own), then failed in `runs`.
    const make = (overrides: Record<string, unknown>, runs: ReadonlyArray<string>, project = projectId, fp?: Fingerprint.Fingerprint) =>
      Effect.gen(function*() {
        const lessonId = id.lesson()
        const own = fp ?? Lessons.fingerprint("x", 9, lessonId)
        const body = Lessons.body(project, { wrongAssumption: null, rootCause: null, guard: null, ...overrides, fingerprints: [own.key] })
        const failures = runs.map((run, n) => Lessons.failure(project, run, own, Lessons.T0 + n + 1))
        const events = Lessons.history(lessonId, body, failures, Lessons.failure(project, "run-seen", own, Lessons.T0))
        yield* succeeds(promise, `the lesson ${lessonId}`, store.append({ projectId: project, lessonId, expectedVersion: 0, operationId: id.operation(), events }))
        return lessonId
      })
    const verified = ["run-a", "run-b"]
    const migrations = yield* make({ trigger: "writing a database migration", actualRule: "a migration keeps every stored row" }, verified)
    const timezone = yield* make({ trigger: "formatting dates in reports", actualRule: "dates are stored in UTC and shown in the user's zone" }, verified)
    const byFingerprint = yield* make({ trigger: "building the CLI", actualRule: "the CLI bundles its own dependencies" }, verified, projectId, other)
    const candidate = yield* make({ trigger: "writing a database migration twice", actualRule: "a migration is numbered once" }, [])
    yield* make({ trigger: "writing a database migration elsewhere", actualRule: "a migration of another project" }, verified, id.project())
    const hits = yield* succeeds(
      promise,
      "search",
      store.search({ projectId, statuses: ["verified", "enforced"], fingerprints: [other.key], text: "Database migration: schema" })
    )
    const order = hits.map((hit) => hit.lesson.id)
    yield* holds(promise, order[0] === byFingerprint, () => `the fingerprint match should come first, got ${order.join(", ")}`)
    yield* holds(promise, order.indexOf(migrations) < order.indexOf(timezone), () => `the migration lesson should outrank the time-zone one, got ${order.join(", ")}`)
    yield* holds(promise, !order.includes(candidate), () => "a candidate was found in a search for verified and enforced lessons")
    yield* holds(promise, hits.every((hit) => hit.lesson.projectId === projectId), () => "a lesson of another project was found")
    yield* holds(promise, hits.find((hit) => hit.lesson.id === timezone)?.rank === 0, () => "a lesson no word matched has a rank other than 0")
    const listed = yield* succeeds(promise, "list", store.list({ projectId, statuses: ["candidate"] }))
    yield* same(promise, "the project's candidates", listed.map((lesson) => lesson.id), [candidate])
    for (const hostile of [`"unbalanced`, "NEAR(migration database)", "migration* OR", "a & b | !c <-> d", "'); DROP TABLE ratchet_lessons; --"]) {
      yield* succeeds(promise, `a search for ${JSON.stringify(hostile)}`, store.search({ projectId, statuses: ["verified"], fingerprints: [hostile], text: hostile }))
    }
  })
)

/**
 * Every lesson check, in order.
 *
 * @since 0.3.0
 * @category constructors
 */
export const checks: ReadonlyArray<Check> = [appendCreates, versionConflict, operations, invalidRequests, search]
