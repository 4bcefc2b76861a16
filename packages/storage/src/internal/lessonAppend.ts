/**
 * What both lesson stores (`SqlLessonStore`, `MemoryLessonStore`) do alike: validating, encoding
 * and digesting an append request, folding it onto the stored view, the text a lesson is searched
 * by, and the order of search hits.
 *
 * @internal
 */
import * as Digest from "@ratchet/kernel/Digest"
import * as Lesson from "@ratchet/kernel/Lesson"
import * as LessonEvent from "@ratchet/kernel/LessonEvent"
import * as LessonRules from "@ratchet/kernel/LessonRules"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as EventStore from "../EventStore.js"
import type * as LessonStore from "../LessonStore.js"

const maxEvents = 1000

export const invalid = (field: string, reason: string) => new EventStore.InvalidRequest({ field, reason })

export const checkId = (schema: Schema.Schema<string>, field: string, value: unknown) =>
  Schema.is(schema)(value) ? Effect.void : Effect.fail(invalid(field, `is not a valid identifier: ${JSON.stringify(value)}`))

export const checkLessonId = (lessonId: unknown) => checkId(Lesson.LessonId, "lessonId", lessonId)

export interface Prepared {
  readonly request: LessonStore.AppendRequest
  readonly payloads: ReadonlyArray<{ readonly type: string; readonly payload: string }>
  readonly digest: string
}

export const prepare = (request: LessonStore.AppendRequest): Effect.Effect<Prepared, EventStore.InvalidRequest> =>
  Effect.gen(function*() {
    yield* checkLessonId(request.lessonId)
    yield* checkId(EventStore.Id, "projectId", request.projectId)
    yield* checkId(EventStore.Id, "operationId", request.operationId)
    if (!Number.isSafeInteger(request.expectedVersion) || request.expectedVersion < 0) {
      return yield* invalid("expectedVersion", "must be a non-negative integer")
    }
    if (request.events.length === 0 || request.events.length > maxEvents) {
      return yield* invalid("events", `must hold 1 to ${maxEvents} events`)
    }
    const encoded: Array<unknown> = []
    for (const [index, event] of request.events.entries()) {
      if (event.lessonId !== request.lessonId) {
        return yield* invalid(`events[${index}].lessonId`, `is ${event.lessonId}, not the stream's lesson ${request.lessonId}`)
      }
      const value = yield* Effect.try({
        try: () => LessonEvent.encode(event),
        catch: (error) => invalid(`events[${index}]`, `is not a lesson event: ${error instanceof Error ? error.message : String(error)}`)
      })
      // Total on the way back: what is stored must decode.
      if (Either.isLeft(LessonEvent.decode(value))) return yield* invalid(`events[${index}]`, "does not decode as a lesson event")
      encoded.push(value)
    }
    const digest = Digest.of({
      projectId: request.projectId,
      lessonId: request.lessonId,
      expectedVersion: request.expectedVersion,
      events: encoded
    })
    if (Either.isLeft(digest)) return yield* invalid("events", `cannot be digested: ${digest.left.message}`)
    return {
      request,
      payloads: request.events.map((event, index) => ({ type: event._tag, payload: JSON.stringify(encoded[index]) })),
      digest: digest.right
    }
  })

/** The text a lesson is searched by: what it says, not its identifiers. */
export const searchText = (body: Lesson.Body): string =>
  [body.trigger, body.wrongAssumption, body.actualRule, body.rootCause, body.guard?.description ?? null, ...body.scope.taskTypes]
    .filter((part): part is string => part !== null)
    .join("\n")


/**
 * The lesson after the request's events, or why they cannot be stored: a stream begins with a
 * proposal, and its project is the lesson's.
 */
export const folded = (
  before: LessonRules.View | null,
  request: LessonStore.AppendRequest
): Either.Either<LessonRules.View, EventStore.InvalidRequest> => {
  if (before !== null && before.body.scope.projectId !== request.projectId) {
    return Either.left(invalid("projectId", `is ${request.projectId}, but lesson ${request.lessonId} belongs to project ${before.body.scope.projectId}`))
  }
  let state: LessonRules.State = before ?? LessonRules.initial
  for (const event of request.events) state = LessonRules.evolve(state, event)
  if (state._tag === "Absent") return Either.left(invalid("events", "must begin a lesson's stream with LessonProposed"))
  if (state.body.scope.projectId !== request.projectId) {
    return Either.left(invalid("projectId", `is ${request.projectId}, but the lesson's scope names project ${state.body.scope.projectId}`))
  }
  return Either.right(state)
}

/** Search hits best first: a fingerprint match, then the text rank, then the latest change, then the id. */
export const byRelevance = (a: LessonStore.SearchHit, b: LessonStore.SearchHit): number =>
  Number(b.fingerprintMatch) - Number(a.fingerprintMatch) || b.rank - a.rank ||
  b.lesson.view.changedAt - a.lesson.view.changedAt || (a.lesson.id < b.lesson.id ? -1 : a.lesson.id > b.lesson.id ? 1 : 0)

/** Checks a list request's project and statuses. */
export const checkList = (request: LessonStore.ListRequest): Effect.Effect<ReadonlyArray<Lesson.Status>, EventStore.InvalidRequest> =>
  Effect.gen(function*() {
    if (request.projectId !== undefined) yield* checkId(EventStore.Id, "projectId", request.projectId)
    const statuses = request.statuses ?? []
    for (const status of statuses) {
      if (!Schema.is(Lesson.Status)(status)) return yield* invalid("statuses", `holds ${JSON.stringify(status)}, not a lesson status`)
    }
    return statuses
  })
