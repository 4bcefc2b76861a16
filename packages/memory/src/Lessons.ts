/**
 * The lessons service (ADR 0031, ADR 0033): every change to a lesson goes through one command
 * handler, and every read through the lesson store.
 *
 * The command handler reads the lesson's stream, folds it (`LessonRules.fold`), asks the kernel's
 * `LessonDecider.decide`, and appends what it decided at the version it read. When another writer
 * appended first (`LessonVersionConflict`), it reads and decides again, up to {@link maxAttempts}
 * times. A refusal (`LessonDecider.Refused`) and text that does not decode (`Lesson.LessonInvalid`)
 * are failures that store nothing: the kernel's rules, not this service, decide who may do what —
 * anyone proposes a candidate or inspects one, only Ratchet's observers record facts, only a
 * person with a signed receipt changes a status or the text.
 *
 * Time comes from Effect's `Clock`, so a test moves it with `TestClock`.
 *
 * The query hands an agent the few lessons that apply to its task: the project's verified and
 * enforced lessons (compiled ones live on as guards in the code and are never shown), those
 * carrying one of the task's failure fingerprints first, kept only when their scope covers the
 * task (its type, and one of its paths under one of the lesson's globs), ranked by full text,
 * at most {@link queryLimit}, each as its summary of at most 400 characters.
 *
 * @since 0.3.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import type { Actor } from "@ratchet/kernel/Event"
import * as Glob from "@ratchet/kernel/Glob"
import * as Lesson from "@ratchet/kernel/Lesson"
import * as LessonDecider from "@ratchet/kernel/LessonDecider"
import * as LessonRules from "@ratchet/kernel/LessonRules"
import * as LessonStore from "@ratchet/storage/LessonStore"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"

/**
 * How many times the handler reads, decides and appends before a version conflict is returned.
 *
 * @since 0.3.0
 * @category models
 */
export const maxAttempts = 5

/**
 * How many lessons a query returns at most: three summaries fit the prompt budget of ADR 0031.
 *
 * @since 0.3.0
 * @category models
 */
export const queryLimit = 3

/**
 * Every failure of a lessons command: its text invalid, refused by the kernel, or the store's.
 *
 * @since 0.3.0
 * @category errors
 */
export type CommandError = Lesson.LessonInvalid | LessonDecider.Refused | LessonStore.AppendError

/**
 * @since 0.3.0
 * @category models
 */
export type ReadError = Exclude<LessonStore.AppendError, LessonStore.VersionConflict>

/**
 * A person's control of a lesson: what it does, why, and the signed receipt with whom the project
 * trusts to sign. `Supersede` names the replacing lesson (its status is read here); `Compile` the
 * guard the lesson became; `Edit` carries the new text, decoded here.
 *
 * @since 0.3.0
 * @category models
 */
export type Control =
  & {
    readonly actor: Actor
    readonly lessonId: string
    readonly reason: string
    readonly receipt: Lesson.Receipt | null
    readonly authority: Authority.Authority
  }
  & (
    | { readonly _tag: "Pin" | "Reject" | "Deprecate" }
    | { readonly _tag: "Supersede"; readonly by: string }
    | { readonly _tag: "Compile"; readonly guardRef: string }
    | { readonly _tag: "Edit"; readonly body: unknown }
  )

/**
 * What a query is asked about: the task's project, the paths it touches, its type, the
 * fingerprints of its failures so far, and its text (goal, title, criteria).
 *
 * @since 0.3.0
 * @category models
 */
export interface Query {
  readonly projectId: string
  readonly paths: ReadonlyArray<string>
  readonly taskType: string | null
  readonly fingerprints?: ReadonlyArray<string> | undefined
  readonly text?: string | undefined
  /** At most {@link queryLimit}. */
  readonly limit?: number | undefined
}

/**
 * One lesson a query returns.
 *
 * @since 0.3.0
 * @category models
 */
export interface Applicable {
  readonly id: string
  readonly status: Lesson.Status
  /** `Lesson.summary`: at most 400 characters. */
  readonly summary: string
  readonly fingerprintMatch: boolean
  readonly rank: number
}

/**
 * A lesson shown to a run, and its status now.
 *
 * @since 0.4.0
 * @category models
 */
export interface Shown {
  readonly id: string
  readonly status: Lesson.Status
}

/**
 * @since 0.3.0
 * @category models
 */
export interface Service {
  /**
   * A new candidate from `body` (decoded as a person's file is: unknown keys and a `status` are
   * refused). `observed` is the failure Ratchet saw that the candidate is proposed from; only then
   * may the text name a fingerprint (exactly that failure's). Leave it out for anyone's text.
   */
  readonly propose: (
    input: { readonly actor: Actor; readonly lessonId: string; readonly body: unknown; readonly observed?: unknown }
  ) => Effect.Effect<LessonRules.View, CommandError>
  /** The failure on every live lesson of its project carrying its fingerprint; the lessons after it. */
  readonly recordFailure: (input: { readonly actor: Actor; readonly failure: unknown }) => Effect.Effect<ReadonlyArray<LessonRules.View>, CommandError>
  /**
   * The success on its project's candidate and probationary lessons and on the live lessons it was
   * shown. The lessons recorded as shown to its run (`recordShown`) are added to `shown`, and make
   * it `assisted`, whatever the caller knew: a success is never counted as unhelped by a lesson
   * that was put in front of it.
   */
  readonly recordSuccess: (input: { readonly actor: Actor; readonly exposure: unknown }) => Effect.Effect<ReadonlyArray<LessonRules.View>, CommandError>
  /**
   * Records on each of `lessonIds` that it was put in front of a run (`Lesson.Shown`), before it is
   * shown; the lessons after it. A lesson that cannot take it (gone terminal since it was read)
   * fails the whole record, so that nothing is shown that was not recorded.
   */
  readonly recordShown: (input: { readonly actor: Actor; readonly lessonIds: ReadonlyArray<string>; readonly shown: unknown }) => Effect.Effect<ReadonlyArray<LessonRules.View>, CommandError>
  /** The project's lessons shown to `runId` (any status), as their views record it. */
  readonly shownTo: (input: { readonly projectId: string; readonly runId: string }) => Effect.Effect<ReadonlyArray<Shown>, ReadError>
  readonly recordGuardCheck: (input: { readonly actor: Actor; readonly lessonId: string; readonly check: unknown }) => Effect.Effect<LessonRules.View, CommandError>
  /** Asks the evaluator again as time passes (an expiry needs age as well as successes). */
  readonly evaluate: (input: { readonly actor: Actor; readonly lessonId: string }) => Effect.Effect<LessonRules.View, CommandError>
  readonly control: (input: Control) => Effect.Effect<LessonRules.View, CommandError>
  /** Records who looked, and returns the lesson. */
  readonly inspect: (input: { readonly actor: Actor; readonly lessonId: string }) => Effect.Effect<LessonRules.View, CommandError>
  readonly list: (request: LessonStore.ListRequest) => Effect.Effect<ReadonlyArray<LessonStore.StoredLesson>, ReadError>
  /** The lesson and its events, or null. Records nothing (see `inspect`). */
  readonly show: (
    lessonId: string
  ) => Effect.Effect<{ readonly lesson: LessonStore.StoredLesson; readonly events: ReadonlyArray<LessonStore.StoredEvent> } | null, ReadError>
  readonly query: (query: Query) => Effect.Effect<ReadonlyArray<Applicable>, ReadError>
}

/**
 * @since 0.3.0
 * @category services
 */
export class Lessons extends Context.Tag("@ratchet/memory/Lessons")<Lessons, Service>() {}

const live: ReadonlyArray<Lesson.Status> = Lesson.statuses.filter((status) => !Lesson.isTerminal(status))

/** Whether a task of `taskType` touching `paths` is inside `scope` (none named means every one). */
const covers = (scope: Lesson.Scope, paths: ReadonlyArray<string>, taskType: string | null): boolean =>
  (scope.taskTypes.length === 0 || (taskType !== null && scope.taskTypes.includes(taskType))) &&
  (scope.paths.length === 0 ||
    paths.some((path) => Glob.problem(path) === undefined && scope.paths.some((glob) => Glob.matches(glob, Glob.normalise(path)))))

const decoded = <A>(either: Either.Either<A, Lesson.LessonInvalid>): Effect.Effect<A, Lesson.LessonInvalid> =>
  Either.isLeft(either) ? Effect.fail(either.left) : Effect.succeed(either.right)

const isConflict = (error: CommandError): boolean => error._tag === "@ratchet/storage/LessonVersionConflict"

/**
 * The service over a `LessonStore`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (store: LessonStore.Service): Service => {
  /**
   * The one command handler: read, fold, decide, append at the version read; again on a conflict.
   * `command` is built from the time and the state, so a retry decides against what is stored now.
   */
  const handle = (
    lessonId: string,
    command: (at: number, state: LessonRules.State) => Effect.Effect<LessonDecider.Command, CommandError>
  ): Effect.Effect<LessonRules.View, CommandError> =>
    Effect.gen(function*() {
      const stored = yield* store.read(lessonId)
      const state = LessonRules.fold(stored.map((event) => event.event))
      const decided = LessonDecider.decide(yield* command(yield* Clock.currentTimeMillis, state), state)
      if (Either.isLeft(decided)) return yield* decided.left
      const after = decided.right.reduce(LessonRules.evolve, state)
      // The decider refuses every command but a proposal on an absent lesson, so this is a defect.
      if (after._tag === "Absent") return yield* Effect.dieMessage(`the decision on lesson ${lessonId} left no lesson`)
      // A decision to record nothing (an evaluation with no threshold met) leaves the lesson as it is.
      if (decided.right.length === 0) return after
      yield* store.append({
        projectId: after.body.scope.projectId,
        lessonId,
        expectedVersion: stored.length,
        operationId: `lesson-op-${randomUUID()}`,
        events: decided.right
      })
      return after
    }).pipe(Effect.retry({ times: maxAttempts - 1, while: isConflict }))

  const meta = (actor: Actor, at: number) => ({ actor, at })

  const propose: Service["propose"] = ({ actor, body, lessonId, observed }) =>
    Effect.gen(function*() {
      const text = yield* decoded(Lesson.decodeBody(body))
      const failure = observed === undefined ? null : yield* decoded(Lesson.decodeFailure(observed))
      return yield* handle(lessonId, (at) => Effect.succeed({ _tag: "Propose", ...meta(actor, at), lessonId, body: text, observed: failure }))
    })

  const onEach = (lessonIds: ReadonlyArray<string>, command: (at: number) => LessonDecider.Command) =>
    Effect.forEach(lessonIds, (lessonId) => handle(lessonId, (at) => Effect.succeed(command(at))))

  const recordFailure: Service["recordFailure"] = ({ actor, failure }) =>
    Effect.gen(function*() {
      const fact = yield* decoded(Lesson.decodeFailure(failure))
      const hits = yield* store.search({ projectId: fact.projectId, statuses: live, fingerprints: [fact.fingerprint.key], text: "" })
      const ids = hits.filter((hit) => hit.fingerprintMatch).map((hit) => hit.lesson.id)
      return yield* onEach(ids, (at) => ({ _tag: "RecordFailure", ...meta(actor, at), failure: fact }))
    })

  const shownTo: Service["shownTo"] = ({ projectId, runId }) =>
    Effect.map(store.list({ projectId }), (lessons) =>
      lessons.filter((lesson) => lesson.view.shownTo.includes(runId)).map((lesson) => ({ id: lesson.id, status: lesson.status })))

  const recordShown: Service["recordShown"] = ({ actor, lessonIds, shown }) =>
    Effect.flatMap(decoded(Lesson.decodeShown(shown)), (fact) =>
      onEach([...new Set(lessonIds)], (at) => ({ _tag: "RecordShown", ...meta(actor, at), shown: fact })))

  const recordSuccess: Service["recordSuccess"] = ({ actor, exposure }) =>
    Effect.gen(function*() {
      const given = yield* decoded(Lesson.decodeExposure(exposure))
      const helped = (yield* shownTo({ projectId: given.projectId, runId: given.runId })).map((lesson) => lesson.id)
      const shown = [...new Set([...given.shown, ...helped])]
      // Re-decoded: the added ids keep the fact within its bounds (at most 64 lessons shown).
      const fact = helped.length === 0 ? given : yield* decoded(Lesson.decodeExposure({ ...given, shown, assisted: true }))
      const lessons = yield* store.list({ projectId: fact.projectId, statuses: live })
      const ids = lessons
        .filter((lesson) => lesson.status === "candidate" || lesson.status === "probationary" || fact.shown.includes(lesson.id))
        .map((lesson) => lesson.id)
      return yield* onEach(ids, (at) => ({ _tag: "RecordSuccess", ...meta(actor, at), exposure: fact }))
    })

  const recordGuardCheck: Service["recordGuardCheck"] = ({ actor, check, lessonId }) =>
    Effect.flatMap(decoded(Lesson.decodeGuardCheck(check)), (fact) =>
      handle(lessonId, (at) => Effect.succeed({ _tag: "RecordGuardCheck", ...meta(actor, at), check: fact })))

  const control: Service["control"] = (input) => {
    const signed = { reason: input.reason, receipt: input.receipt, authority: input.authority }
    return handle(input.lessonId, (at): Effect.Effect<LessonDecider.Command, CommandError> => {
      const base = { ...meta(input.actor, at), ...signed }
      switch (input._tag) {
        case "Pin":
        case "Reject":
        case "Deprecate":
          return Effect.succeed({ _tag: input._tag, ...base })
        case "Compile":
          return Effect.succeed({ _tag: "Compile", ...base, guardRef: input.guardRef })
        case "Edit":
          return Effect.map(decoded(Lesson.decodeBody(input.body)), (body) => ({ _tag: "Edit" as const, ...base, body }))
        case "Supersede":
          return Effect.map(store.get(input.by), (by): LessonDecider.Command => ({
            _tag: "Supersede",
            ...base,
            // A replacement that does not exist reads as rejected: it replaces nothing.
            by: { id: input.by, status: by?.status ?? "rejected" }
          }))
      }
    })
  }

  const query: Service["query"] = (input) =>
    Effect.map(
      store.search({ projectId: input.projectId, statuses: ["verified", "enforced"], fingerprints: input.fingerprints ?? [], text: input.text ?? "" }),
      (hits) =>
        hits
          .filter((hit) => covers(hit.lesson.view.body.scope, input.paths, input.taskType))
          .slice(0, Math.max(0, Math.min(input.limit ?? queryLimit, queryLimit)))
          .map((hit) => ({
            id: hit.lesson.id,
            status: hit.lesson.status,
            summary: Lesson.summary(hit.lesson.view.body),
            fingerprintMatch: hit.fingerprintMatch,
            rank: hit.rank
          }))
    )

  return {
    propose,
    recordFailure,
    recordSuccess,
    recordShown,
    shownTo,
    recordGuardCheck,
    evaluate: ({ actor, lessonId }) => handle(lessonId, (at) => Effect.succeed({ _tag: "Evaluate", ...meta(actor, at) })),
    control,
    inspect: ({ actor, lessonId }) => handle(lessonId, (at) => Effect.succeed({ _tag: "Inspect", ...meta(actor, at) })),
    list: store.list,
    show: (lessonId) =>
      Effect.flatMap(store.get(lessonId), (lesson) =>
        lesson === null ? Effect.succeed(null) : Effect.map(store.read(lessonId), (events) => ({ lesson, events }))),
    query
  }
}

/**
 * The service over the context's `LessonStore` (every store layer provides one).
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<Lessons, never, LessonStore.LessonStore> = Layer.effect(
  Lessons,
  Effect.map(LessonStore.LessonStore, make)
)
