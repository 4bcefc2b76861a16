/**
 * The events of a lesson's stream (`Lesson.streamOf`), a catalogue of their own beside the task's
 * (`Event`): a lesson is not part of any task. Every event carries `_tag`, `version`, the actor,
 * the time and the lesson's id. Decoding is total, as the task catalogue's is: an unknown type, a
 * newer version or a malformed body is a typed `EventDecodeError`, never a crash.
 *
 * A status changes by exactly two events: `LessonTransitioned`, by a threshold rule of the
 * evaluator, carrying the rule's version; and `LessonControlled`, by a person's signed control.
 * `LessonProposed` has no status field at all: a proposal is a candidate.
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Actor, EventDecodeError, malformedBody, Timestamp } from "./Event.js"
import * as Lesson from "./Lesson.js"

/**
 * How a success stood for a lesson when it was recorded: `counted` toward expiry, or why not.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Standing = Schema.Literal("counted", "ineligible", "shown", "assisted", "out_of_scope", "before_lesson")

/**
 * @since 0.3.0
 * @category models
 */
export type Standing = typeof Standing.Type

/**
 * The threshold rules of the evaluator (`LessonRules`): `observed` (a first run's failure:
 * candidate → probationary), `two_runs` and `guard_reproduced` (→ verified), `outlived` (→ expired).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Rule = Schema.Literal("observed", "two_runs", "guard_reproduced", "outlived")

/**
 * @since 0.3.0
 * @category models
 */
export type Rule = typeof Rule.Type

const event = <Tag extends string, Fields extends Schema.Struct.Fields>(tag: Tag, fields: Fields) =>
  Schema.TaggedStruct(tag, { version: Schema.Literal(1), actor: Actor, at: Timestamp, lessonId: Lesson.LessonId, ...fields })

/** @since 0.3.0 @category schemas */
export const Proposed = event("LessonProposed", { body: Lesson.Body })
/** @since 0.3.0 @category schemas */
export const FailureObserved = event("LessonFailureObserved", { failure: Lesson.Failure })
/** @since 0.3.0 @category schemas */
export const SuccessObserved = event("LessonSuccessObserved", { exposure: Lesson.Exposure, standing: Standing })
/** @since 0.3.0 @category schemas */
export const GuardChecked = event("LessonGuardChecked", { check: Lesson.GuardCheck })
/**
 * A status change by a threshold rule, with the rule's version and the runs whose facts met it.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Transitioned = event("LessonTransitioned", {
  from: Lesson.Status,
  to: Lesson.Status,
  rule: Rule,
  ruleVersion: Lesson.Name,
  runIds: Schema.Array(Lesson.Name)
})
/**
 * A status change by a person's signed control.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Controlled = event("LessonControlled", {
  from: Lesson.Status,
  to: Lesson.Status,
  reason: Lesson.Summary,
  receipt: Lesson.Receipt
})
/** @since 0.3.0 @category schemas */
export const Edited = event("LessonEdited", { revision: Schema.Int, body: Lesson.Body, reason: Lesson.Summary, receipt: Lesson.Receipt })
/** @since 0.3.0 @category schemas */
export const Inspected = event("LessonInspected", {})
/**
 * The lesson was put in front of a run's agent (`Lesson.Shown`), in `status` (the decider's, as the
 * lesson stood): what the agent was told it was. It changes no status: it tells the run's later
 * success, and its verification, that it was helped.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Shown = event("LessonShown", { shown: Lesson.Shown, status: Lesson.Status })

/**
 * Every event of a lesson's stream.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Event = Schema.Union(
  Proposed,
  FailureObserved,
  SuccessObserved,
  GuardChecked,
  Transitioned,
  Controlled,
  Edited,
  Inspected,
  Shown
)

/**
 * @since 0.3.0
 * @category models
 */
export type Event = typeof Event.Type

const members: { readonly [K in Event["_tag"]]: Schema.Schema.AnyNoContext } = {
  LessonProposed: Proposed,
  LessonFailureObserved: FailureObserved,
  LessonSuccessObserved: SuccessObserved,
  LessonGuardChecked: GuardChecked,
  LessonTransitioned: Transitioned,
  LessonControlled: Controlled,
  LessonEdited: Edited,
  LessonInspected: Inspected,
  LessonShown: Shown
}

/**
 * Decodes one stored lesson event. Like the task catalogue's `Event.decode`, it is total: a type
 * this kernel does not know, a newer version or a malformed body is a typed error saying which.
 *
 * @since 0.3.0
 * @category encoding
 */
export const decode = (input: unknown): Either.Either<Event, EventDecodeError> => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return Either.left(
      new EventDecodeError({ reason: "not_an_object", type: null, version: null, detail: "expected an object" })
    )
  }
  const record = input as Record<string, unknown>
  const type = typeof record["_tag"] === "string" ? record["_tag"] : null
  const version = typeof record["version"] === "number" ? record["version"] : null
  if (type === null) {
    return Either.left(new EventDecodeError({ reason: "malformed", type, version, detail: "the `_tag` field is missing or not a string" }))
  }
  if (!Object.prototype.hasOwnProperty.call(members, type)) {
    return Either.left(new EventDecodeError({ reason: "unknown_type", type, version, detail: "" }))
  }
  // A missing version reads as 0 here; the schema then names it.
  if (Number(version) > 1) {
    return Either.left(new EventDecodeError({ reason: "newer_version", type, version, detail: "1" }))
  }
  const schema = members[type as Event["_tag"]] as Schema.Schema<Event, unknown>
  return Either.mapLeft(
    Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(input),
    (error) => malformedBody(type, version, error)
  )
}

/**
 * Encodes a lesson event to its stored form (the inverse of {@link decode}).
 *
 * @since 0.3.0
 * @category encoding
 */
export const encode: (event: Event) => unknown = Schema.encodeSync(Event)
