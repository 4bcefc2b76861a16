/**
 * Request validation shared by the SQL store's services: identifiers, LSNs and versions are
 * checked before any statement runs, so a bad request is an `InvalidRequest` naming the field and
 * never reaches the database. Values quoted back in a reason are cut short, so a hostile
 * multi-megabyte identifier does not become a multi-megabyte error message.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as EventStore from "../EventStore.js"
import type * as ReadModel from "../ReadModel.js"

const isId = Schema.is(EventStore.Id)

/** Quotes a value for an error message, cut to 60 characters. */
export const shown = (value: unknown): string => {
  const text = typeof value === "string" ? JSON.stringify(value) : String(value)
  return text.length > 60 ? `${text.slice(0, 60)}…` : text
}

/** An identifier of the `EventStore.Id` alphabet, or `InvalidRequest` naming `field`. */
export const id = (field: string, value: unknown): Effect.Effect<string, EventStore.InvalidRequest> =>
  isId(value)
    ? Effect.succeed(value)
    : Effect.fail(
      new EventStore.InvalidRequest({
        field,
        reason: `must be 1 to 128 characters from A-Z a-z 0-9 . _ : -, not only dots (got ${shown(value)})`
      })
    )

/** `value` when it is a safe integer at least `min`, else `InvalidRequest` naming `field`. */
export const integer = (
  field: string,
  value: unknown,
  min: number
): Effect.Effect<number, EventStore.InvalidRequest> =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= min
    ? Effect.succeed(value)
    : Effect.fail(
      new EventStore.InvalidRequest({ field, reason: `must be an integer of at least ${min} (got ${shown(value)})` })
    )

/** An optional integer bound: `undefined` stays `undefined`. */
export const optionalInteger = (
  field: string,
  value: unknown,
  min: number
): Effect.Effect<number | undefined, EventStore.InvalidRequest> =>
  value === undefined ? Effect.succeed(undefined) : integer(field, value, min)

/** A branch name, defaulting to the main branch. */
export const branch = (field: string, value: unknown): Effect.Effect<string, EventStore.InvalidRequest> =>
  value === undefined ? Effect.succeed(EventStore.mainBranch) : id(field, value)

const checkpointKinds: ReadonlyArray<string> = ["run_start", "step", "terminal"]

/** A checkpoint query (`ReadModel.CheckpointQuery`): a run id, a known kind, a positive count. */
export const checkpointQuery = (
  value: ReadModel.CheckpointQuery | undefined
): Effect.Effect<ReadModel.CheckpointQuery, EventStore.InvalidRequest> =>
  Effect.gen(function*() {
    if (value === undefined) return {}
    const runId = value.runId === undefined ? undefined : yield* id("query.runId", value.runId)
    if (value.kind !== undefined && !checkpointKinds.includes(value.kind)) {
      return yield* new EventStore.InvalidRequest({
        field: "query.kind",
        reason: `must be one of ${checkpointKinds.join(", ")} (got ${shown(value.kind)})`
      })
    }
    const last = yield* optionalInteger("query.last", value.last, 1)
    return { runId, kind: value.kind, last }
  })
