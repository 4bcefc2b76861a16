/**
 * Reading rows back: every value that comes out of the database is decoded, never trusted.
 *
 * Drivers disagree on column types (PostgreSQL's `pg` returns BIGINT as a string, SQLite returns
 * numbers), so integers are coerced with {@link int} and then checked by the row schemas; a row
 * that does not decode — JSON damaged by hand, an unknown state, a non-integer LSN — is a
 * `StorageError` with reason `Corrupt` that names the table and the stream, never a throw.
 *
 * @internal
 */
import * as Event from "@ratchet/kernel/Event"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as EventStore from "../EventStore.js"
import * as ReadModel from "../ReadModel.js"
import * as StorageError from "../StorageError.js"

/** A row as a driver returns it, before decoding. */
export type Row = Readonly<Record<string, unknown>>

/**
 * A column that holds an integer, as a number. `NaN` for anything that is not one, so the row
 * schema that checks it reports the damage instead of this function guessing.
 */
export const int = (value: unknown): number => {
  if (typeof value === "number") return value
  if (typeof value === "bigint") return Number(value)
  if (typeof value === "string" && /^-?[0-9]{1,20}$/.test(value)) return Number(value)
  return Number.NaN
}

/** A nullable integer column. */
export const intOrNull = (value: unknown): number | null => value === null || value === undefined ? null : int(value)

/** The `Corrupt` storage error every decoder below fails with. */
export const corrupt = (operation: string, detail: string, cause?: unknown): StorageError.StorageError =>
  StorageError.make(operation, StorageError.Corrupt.make({ code: null, detail }), cause)

const formatted = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 5)
    .map((issue) => `${issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")}: ${issue.message}`)
    .join("; ")

const parseJson = (text: unknown): Either.Either<unknown, string> => {
  if (typeof text !== "string") return Either.left(`expected JSON text, got ${text === null ? "null" : typeof text}`)
  try {
    return Either.right(JSON.parse(text) as unknown)
  } catch (error) {
    return Either.left(`the JSON does not parse (${error instanceof Error ? error.message : String(error)})`)
  }
}

const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "all" })
  return (
    operation: string,
    what: string,
    input: unknown
  ): Either.Either<A, StorageError.StorageError> =>
    Either.mapLeft(decode(input), (error) => corrupt(operation, `${what} does not decode: ${formatted(error)}`, error))
}

const summary = decodeWith(ReadModel.TaskSummary)
const attempt = decodeWith(ReadModel.AttemptRow)
const intent = decodeWith(ReadModel.IntentRow)
const lease = decodeWith(ReadModel.LeaseRow)
const checkpoint = decodeWith(ReadModel.CheckpointRow)

/** A `ratchet_task_summaries.summary` value: JSON of a {@link ReadModel.TaskSummary}. */
export const decodeSummary = (
  operation: string,
  streamId: string,
  branch: string,
  text: unknown
): Either.Either<ReadModel.TaskSummary, StorageError.StorageError> => {
  const what = `the task summary of stream ${streamId} (branch ${branch})`
  return Either.match(parseJson(text), {
    onLeft: (detail) => Either.left(corrupt(operation, `${what} is damaged: ${detail}`)),
    onRight: (json) => summary(operation, what, json)
  })
}

/** A `ratchet_attempts` row; its `turn` column is JSON text of the attempt's turn flags. */
export const decodeAttempt = (operation: string, row: Row): Either.Either<ReadModel.AttemptRow, StorageError.StorageError> => {
  const what = `an attempt row of stream ${String(row["stream_id"])}`
  const turn = parseJson(row["turn"])
  if (Either.isLeft(turn)) return Either.left(corrupt(operation, `${what} is damaged: its turn column: ${turn.left}`))
  return attempt(operation, what, {
    streamId: row["stream_id"],
    branch: row["branch"],
    runId: row["run_id"],
    stepId: row["step_id"],
    attempt: int(row["attempt"]),
    state: row["state"],
    turn: turn.right,
    updatedLsn: int(row["updated_lsn"])
  })
}

/** A `ratchet_intents` row. */
export const decodeIntent = (operation: string, row: Row): Either.Either<ReadModel.IntentRow, StorageError.StorageError> =>
  intent(operation, `an intent row of stream ${String(row["stream_id"])}`, {
    streamId: row["stream_id"],
    branch: row["branch"],
    intentId: row["intent_id"],
    runId: row["run_id"],
    stepId: row["step_id"],
    attempt: int(row["attempt"]),
    state: row["state"],
    outcome: row["outcome"] ?? null,
    updatedLsn: int(row["updated_lsn"])
  })

/** A `ratchet_checkpoints` row. */
export const decodeCheckpoint = (
  operation: string,
  row: Row
): Either.Either<ReadModel.CheckpointRow, StorageError.StorageError> =>
  checkpoint(operation, `a checkpoint row of stream ${String(row["stream_id"])}`, {
    streamId: row["stream_id"],
    branch: row["branch"],
    lsn: int(row["lsn"]),
    kind: row["kind"],
    runId: row["run_id"] ?? null
  })

/** A `ratchet_leases` row; `owner` is JSON of an `Event.LeaseOwner`, `held` is 0 or 1. */
export const decodeLease = (operation: string, row: Row): Either.Either<ReadModel.LeaseRow, StorageError.StorageError> => {
  const what = `the lease row of stream ${String(row["stream_id"])}`
  const held = int(row["held"])
  return Either.match(parseJson(row["owner"]), {
    onLeft: (detail) => Either.left(corrupt(operation, `${what} is damaged: owner: ${detail}`)),
    onRight: (owner) =>
      lease(operation, what, {
        projectId: row["project_id"],
        streamId: row["stream_id"],
        epoch: int(row["epoch"]),
        held: held === 1 ? true : held === 0 ? false : row["held"],
        owner,
        acquiredAt: int(row["acquired_at"]),
        heartbeatAt: int(row["heartbeat_at"]),
        graceMs: int(row["grace_ms"]),
        updatedLsn: int(row["updated_lsn"])
      })
  })
}

/** The columns `decodeEvent` reads from `ratchet_events`. */
export interface EventColumns {
  readonly projectId: string
  readonly streamId: string
  /** The branch the event is read through (see `EventStore.StoredEvent.branch`). */
  readonly branch: string
}

/**
 * A `ratchet_events` row as a stored event. A payload that is not JSON or that `Event.decode`
 * refuses is `Corrupt`, naming the LSN.
 */
export const decodeEvent = (
  operation: string,
  columns: EventColumns,
  row: Row
): Effect.Effect<EventStore.StoredEvent, StorageError.StorageError> => {
  const lsn = int(row["lsn"])
  const version = int(row["version"])
  const recordedAt = int(row["recorded_at"])
  const epoch = intOrNull(row["epoch"])
  const operationId = row["operation_id"]
  const where = `the event at LSN ${String(row["lsn"])} of stream ${columns.streamId}`
  if (
    !Number.isSafeInteger(lsn) || !Number.isSafeInteger(version) || !Number.isSafeInteger(recordedAt) ||
    (epoch !== null && !Number.isSafeInteger(epoch)) || typeof operationId !== "string"
  ) {
    return Effect.fail(corrupt(operation, `${where} has a damaged column (lsn, version, epoch, operation id or time)`))
  }
  return Either.match(parseJson(row["payload"]), {
    onLeft: (detail) => Effect.fail(corrupt(operation, `${where} is damaged: ${detail}`)),
    onRight: (json) =>
      Either.match(Event.decode(json), {
        onLeft: (error) => Effect.fail(corrupt(operation, `${where} does not decode: ${error.message}`, error)),
        onRight: (event) =>
          Effect.succeed({
            lsn,
            projectId: columns.projectId,
            streamId: columns.streamId,
            branch: columns.branch,
            version,
            epoch,
            operationId,
            recordedAt,
            event
          })
      })
  })
}
