/**
 * The append's decision and the rows it writes, as plain functions every SQL engine shares.
 *
 * `SqlStore` runs an append as `@effect/sql` statements; an engine may instead run the same
 * append as one call into its driver (SQLite: one synchronous transaction of prepared statements,
 * see ADR 0021). Both take every decision here, so the semantics cannot drift apart:
 * - {@link prepare} validates, encodes and digests the request before any transaction;
 * - {@link replayOf} answers a known operation id: the same request returns the first result, a
 *   different one is `OperationReused`. The digest hashes the payload strings the store keeps;
 *   when it differs (an event built with its keys in another order, or a digest written by an
 *   older Ratchet) the stored events of the operation are compared in canonical JSON, so a
 *   replay is recognised exactly as before;
 * - {@link decide} checks the stream's project, the lease epoch ({@link Fencing}) and the expected
 *   version against the state read in the transaction, and returns the events as stored;
 * - {@link touched} names the read-model rows the events can change, {@link changedRows} the rows
 *   to upsert after `ReadModel.fold`, as column records.
 *
 * {@link RowMemo} keeps the decoded rows an engine wrote last (keyed by their stored text), so an
 * append does not decode back the summary, lease, attempts and intents the previous append wrote:
 * a row whose stored text equals the remembered one is the remembered value.
 *
 * @since 0.1.0
 */
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Either from "effect/Either"
import * as EventStore from "./EventStore.js"
import { prepare as prepareRequest, type Prepared as PreparedRequest } from "./internal/appendRequest.js"
import * as Fencing from "./internal/fencing.js"
import { corrupt, decodeAttempt, decodeIntent, decodeLease, decodeSummary, int, type Row } from "./internal/rows.js"
import * as validate from "./internal/validate.js"
import * as ReadModel from "./ReadModel.js"
import type * as StorageError from "./StorageError.js"

/**
 * An append request checked, encoded (`payloads`) and digested.
 *
 * @since 0.1.0
 * @category models
 */
export type Prepared = PreparedRequest

/**
 * Validates, encodes and digests an append request (see the module doc).
 *
 * @since 0.1.0
 * @category constructors
 */
export const prepare = prepareRequest

/**
 * The committed operation an append's operation id names.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operation {
  readonly streamId: string
  readonly branch: string
  readonly digest: string
  readonly version: number
  readonly firstLsn: number
  readonly lastLsn: number
}

/**
 * A stored event of a committed operation, as {@link replayOf} compares it.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredPayload {
  readonly payload: string
  readonly epoch: number | null
}

/**
 * Reads the operation columns of the append's state row (`o.*` aliased as in `SqlStore`), or
 * `null` when the operation id is new.
 *
 * @since 0.1.0
 * @category constructors
 */
export const operationOf = (row: Row): Operation | null => {
  const digest = row["request_digest"]
  if (digest === null || digest === undefined) return null
  return {
    streamId: String(row["operation_stream"]),
    branch: String(row["operation_branch"]),
    digest: String(digest),
    version: int(row["operation_version"]),
    firstLsn: int(row["operation_first_lsn"]),
    lastLsn: int(row["operation_last_lsn"])
  }
}

/** The canonical JSON of one stored payload, or `undefined` for text that is not JSON. */
const canonicalOf = (payload: string): string | undefined => {
  try {
    return Either.getOrUndefined(Digest.canonicalize(JSON.parse(payload) as unknown))
  } catch {
    return undefined
  }
}

/**
 * Whether a request is the one a committed operation recorded, by content: the same stream,
 * branch, project, expected version, epoch and events (each in canonical JSON). The slow path
 * behind a digest that differs.
 *
 * @since 0.1.0
 * @category guards
 */
export const sameRequest = (
  request: Prepared,
  operation: Operation,
  streamProject: unknown,
  stored: ReadonlyArray<StoredPayload>
): boolean => {
  const count = operation.lastLsn - operation.firstLsn + 1
  if (
    operation.streamId !== request.streamId || operation.branch !== request.branch ||
    streamProject !== request.projectId || count !== request.events.length || stored.length !== count ||
    operation.version - count !== request.expectedVersion
  ) return false
  return stored.every((row, index) => {
    const mine = request.payloads[index]
    if (row.epoch !== request.epoch || mine === undefined) return false
    if (row.payload === mine) return true
    const theirs = canonicalOf(row.payload)
    return theirs !== undefined && theirs === canonicalOf(mine)
  })
}

/**
 * The answer to a known operation id: the first result (replayed) for the same request,
 * `OperationReused` otherwise. `stored` reads the operation's events; it is called only when the
 * digests differ.
 *
 * @since 0.1.0
 * @category constructors
 */
export const replayOf = (
  request: Prepared,
  operation: Operation,
  streamProject: unknown,
  stored: () => ReadonlyArray<StoredPayload>
): Either.Either<EventStore.AppendResult, EventStore.OperationReused> => {
  const same = operation.digest === request.digest || sameRequest(request, operation, streamProject, stored())
  return same
    ? Either.right({
      streamId: operation.streamId,
      branch: operation.branch,
      version: operation.version,
      firstLsn: operation.firstLsn,
      lastLsn: operation.lastLsn,
      replayed: true
    })
    : Either.left(new EventStore.OperationReused({ operationId: request.operationId, streamId: operation.streamId }))
}

/**
 * What an append decides against, read in its transaction after the LSN counter was advanced.
 *
 * @since 0.1.0
 * @category models
 */
export interface State {
  /** The stream's project, or `null` for a new stream. */
  readonly streamProject: unknown
  /** The branch's version, or `null` when the branch does not exist. */
  readonly branchVersion: number | null
  readonly lease: ReadModel.LeaseRow | null
}

/**
 * An append that may land: its events as stored, and the branch after it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Plan {
  readonly streamExists: boolean
  readonly version: number
  readonly firstLsn: number
  readonly lastLsn: number
  readonly now: number
  readonly stored: ReadonlyArray<EventStore.StoredEvent>
}

/**
 * The refusals {@link decide} returns.
 *
 * @since 0.1.0
 * @category errors
 */
export type Refusal =
  | EventStore.InvalidRequest
  | EventStore.StaleEpoch
  | EventStore.LeaseNotExpired
  | EventStore.BranchNotFound
  | EventStore.VersionConflict

/**
 * Checks the stream's project, the lease epoch at the store's clock `now` and the expected version;
 * `lastLsn` is the counter's value after it was advanced by the batch's size.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decide = (request: Prepared, state: State, now: number, lastLsn: number): Either.Either<Plan, Refusal> => {
  const { branch, epoch, expectedVersion, operationId, projectId, streamId } = request
  const streamProject = state.streamProject
  const streamExists = streamProject !== null && streamProject !== undefined
  if (streamExists && streamProject !== projectId) {
    return Either.left(
      new EventStore.InvalidRequest({
        field: "projectId",
        reason: `is ${validate.shown(projectId)} but stream ${streamId} belongs to project ${validate.shown(streamProject)}`
      })
    )
  }
  const stale = Fencing.check(projectId, streamId, state.lease, epoch, request.events, now)
  if (stale !== undefined) return Either.left(stale)
  if (state.branchVersion === null && (streamExists || branch !== EventStore.mainBranch)) {
    return Either.left(new EventStore.BranchNotFound({ streamId, branch }))
  }
  const actual = state.branchVersion ?? 0
  if (actual !== expectedVersion) {
    return Either.left(new EventStore.VersionConflict({ streamId, branch, expected: expectedVersion, actual }))
  }
  const count = request.events.length
  const firstLsn = lastLsn - count + 1
  const stored = request.events.map((event, index): EventStore.StoredEvent => ({
    lsn: firstLsn + index,
    projectId,
    streamId,
    branch,
    version: expectedVersion + index + 1,
    epoch,
    operationId,
    recordedAt: now,
    event
  }))
  return Either.right({ streamExists, version: expectedVersion + count, firstLsn, lastLsn, now, stored })
}

/**
 * The read-model rows an append's events can change beyond the summary and the lease: the intents
 * they name, and the attempts whose turn carries over (a scheduled attempt starts a new row).
 *
 * @since 0.1.0
 * @category constructors
 */
export const touched = (events: ReadonlyArray<Event.Event>): {
  readonly intentIds: ReadonlyArray<string>
  readonly attempts: ReadonlyArray<{ readonly runId: string; readonly stepId: string; readonly attempt: number }>
} => {
  const intentIds = new Set<string>()
  const attempts = new Map<string, { readonly runId: string; readonly stepId: string; readonly attempt: number }>()
  for (const event of events) {
    if (event._tag === "IntentDispatched" || event._tag === "IntentResolved" || event._tag === "IntentAbandoned") {
      intentIds.add(event.intentId)
    } else if (event._tag === "AttemptTransitioned" || event._tag === "TurnRecorded") {
      attempts.set(ReadModel.attemptKey(event.runId, event.stepId, event.attempt), {
        runId: event.runId,
        stepId: event.stepId,
        attempt: event.attempt
      })
    }
  }
  return { intentIds: [...intentIds], attempts: [...attempts.values()] }
}

/**
 * The column records of read-model rows, named as the migrations name the columns.
 *
 * @since 0.1.0
 * @category models
 */
export interface Changes {
  readonly summary: Readonly<Record<string, string | number>> | null
  readonly attempts: ReadonlyArray<Readonly<Record<string, string | number>>>
  readonly intents: ReadonlyArray<Readonly<Record<string, string | number | null>>>
  readonly checkpoints: ReadonlyArray<Readonly<Record<string, string | number | null>>>
  readonly lease: Readonly<Record<string, string | number>> | null
}

/** The stored text of a summary: plain JSON data (no transformations in its schema). */
const summaryText = (summary: ReadModel.TaskSummary): string => JSON.stringify(summary)

const attemptKeyOf = (row: ReadModel.AttemptRow): string => ReadModel.attemptKey(row.runId, row.stepId, row.attempt)

/**
 * Every row of `after` that differs from `before` (`ReadModel.apply` returns the same object for a
 * row it left alone), as column records. The lease is left out when `lease` is false (a fork's
 * snapshot: the lease is the task's and already current).
 *
 * @since 0.1.0
 * @category constructors
 */
export const changedRows = (before: ReadModel.Snapshot, after: ReadModel.Snapshot, lease: boolean): Changes => {
  const summary = after.summary !== null && after.summary !== before.summary
    ? {
      stream_id: after.summary.streamId,
      branch: after.summary.branch,
      project_id: after.summary.projectId,
      version: after.summary.version,
      last_lsn: after.summary.lastLsn,
      state: after.summary.task.state,
      summary: summaryText(after.summary)
    }
    : null
  const attempts = [...after.attempts.values()]
    .filter((row) => before.attempts.get(attemptKeyOf(row)) !== row)
    .map((row) => ({
      stream_id: row.streamId,
      branch: row.branch,
      run_id: row.runId,
      step_id: row.stepId,
      attempt: row.attempt,
      state: row.state,
      // Plain JSON data, like the summary; decoded with the row on the way out.
      turn: JSON.stringify(row.turn),
      updated_lsn: row.updatedLsn
    }))
  const intents = [...after.intents.values()]
    .filter((row) => before.intents.get(row.intentId) !== row)
    .map((row) => ({
      stream_id: row.streamId,
      branch: row.branch,
      intent_id: row.intentId,
      run_id: row.runId,
      step_id: row.stepId,
      attempt: row.attempt,
      state: row.state,
      outcome: row.outcome,
      updated_lsn: row.updatedLsn
    }))
  const checkpoints = after.checkpoints.slice(before.checkpoints.length).map((row) => ({
    stream_id: row.streamId,
    branch: row.branch,
    lsn: row.lsn,
    kind: row.kind,
    run_id: row.runId
  }))
  const leaseRow = lease && after.lease !== null && after.lease !== before.lease
    ? {
      project_id: after.lease.projectId,
      stream_id: after.lease.streamId,
      epoch: after.lease.epoch,
      held: after.lease.held ? 1 : 0,
      owner: JSON.stringify(after.lease.owner),
      acquired_at: after.lease.acquiredAt,
      heartbeat_at: after.lease.heartbeatAt,
      grace_ms: after.lease.graceMs,
      updated_lsn: after.lease.updatedLsn
    }
    : null
  return { summary, attempts, intents, checkpoints, lease: leaseRow }
}

/** Rows a memo keeps at most; an engine's hot set is the few tasks its runners write. */
const memoCapacity = 512

/**
 * Decoded rows keyed by their stored text, so a row an engine wrote is not decoded back by the
 * next append that reads it. A row whose text differs (another process wrote it) is decoded.
 * Bounded: the oldest entry goes first.
 *
 * @since 0.1.0
 * @category models
 */
export class RowMemo<A> {
  private readonly entries = new Map<string, { readonly text: string; readonly value: A }>()

  /** The remembered value of `key` when its stored text is `text`, else `decode()` remembered. */
  get<E>(key: string, text: string, decode: () => Either.Either<A, E>): Either.Either<A, E> {
    const found = this.entries.get(key)
    if (found !== undefined && found.text === text) return Either.right(found.value)
    const decoded = decode()
    if (Either.isRight(decoded)) this.remember(key, text, decoded.right)
    return decoded
  }

  /** Remembers what was just written. */
  remember(key: string, text: string, value: A): void {
    this.entries.delete(key)
    this.entries.set(key, { text, value })
    if (this.entries.size > memoCapacity) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
  }
}

/** The stored text of a lease row, as its memo key compares it. */
const leaseText = (row: Row): string =>
  `${String(row["epoch"])}|${String(row["held"])}|${String(row["owner"])}|${String(row["acquired_at"])}|${
    String(row["heartbeat_at"])
  }|${String(row["grace_ms"])}|${String(row["updated_lsn"])}|${String(row["project_id"])}`

const attemptText = (row: Row): string =>
  `${String(row["state"])}|${String(row["turn"])}|${String(row["updated_lsn"])}`

const intentText = (row: Row): string =>
  `${String(row["run_id"])}|${String(row["step_id"])}|${String(row["attempt"])}|${String(row["state"])}|${
    String(row["outcome"])
  }|${String(row["updated_lsn"])}`

/**
 * The decoded-row memos of one connection, and the decoders that use them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Memos {
  readonly summary: (
    operation: string,
    streamId: string,
    branch: string,
    text: unknown
  ) => Either.Either<ReadModel.TaskSummary, StorageError.StorageError>
  readonly lease: (operation: string, row: Row) => Either.Either<ReadModel.LeaseRow, StorageError.StorageError>
  readonly attempt: (operation: string, row: Row) => Either.Either<ReadModel.AttemptRow, StorageError.StorageError>
  readonly intent: (operation: string, row: Row) => Either.Either<ReadModel.IntentRow, StorageError.StorageError>
  /** Remembers the rows an append wrote, from the snapshot it folded and the columns it stored. */
  readonly written: (after: ReadModel.Snapshot, changes: Changes) => void
}

/**
 * Fresh memos for one connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemos = (): Memos => {
  const summaries = new RowMemo<ReadModel.TaskSummary>()
  const leases = new RowMemo<ReadModel.LeaseRow>()
  const attempts = new RowMemo<ReadModel.AttemptRow>()
  const intents = new RowMemo<ReadModel.IntentRow>()
  const branchKey = (streamId: unknown, branch: unknown) => `${String(streamId)}\u0000${String(branch)}`
  return {
    summary: (operation, streamId, branch, text) =>
      typeof text === "string"
        ? summaries.get(branchKey(streamId, branch), text, () => decodeSummary(operation, streamId, branch, text))
        : decodeSummary(operation, streamId, branch, text),
    lease: (operation, row) =>
      leases.get(`${String(row["stream_id"])}`, leaseText(row), () => decodeLease(operation, row)),
    attempt: (operation, row) =>
      attempts.get(
        `${branchKey(row["stream_id"], row["branch"])}\u0000${
          ReadModel.attemptKey(String(row["run_id"]), String(row["step_id"]), int(row["attempt"]))
        }`,
        attemptText(row),
        () => decodeAttempt(operation, row)
      ),
    intent: (operation, row) =>
      intents.get(
        `${branchKey(row["stream_id"], row["branch"])}\u0000${String(row["intent_id"])}`,
        intentText(row),
        () => decodeIntent(operation, row)
      ),
    written: (after, changes) => {
      if (changes.summary !== null && after.summary !== null) {
        summaries.remember(
          branchKey(after.summary.streamId, after.summary.branch),
          String(changes.summary["summary"]),
          after.summary
        )
      }
      if (changes.lease !== null && after.lease !== null) {
        leases.remember(after.lease.streamId, leaseText(changes.lease), after.lease)
      }
      for (const columns of changes.attempts) {
        const row = after.attempts.get(
          ReadModel.attemptKey(String(columns["run_id"]), String(columns["step_id"]), Number(columns["attempt"]))
        )
        if (row !== undefined) {
          attempts.remember(
            `${branchKey(row.streamId, row.branch)}\u0000${attemptKeyOf(row)}`,
            attemptText(columns),
            row
          )
        }
      }
      for (const columns of changes.intents) {
        const row = after.intents.get(String(columns["intent_id"]))
        if (row !== undefined) {
          intents.remember(`${branchKey(row.streamId, row.branch)}\u0000${row.intentId}`, intentText(columns), row)
        }
      }
    }
  }
}

/**
 * The `Corrupt` error of a damaged LSN counter.
 *
 * @since 0.1.0
 * @category errors
 */
export const counterDamaged = (operation: string): StorageError.StorageError =>
  corrupt(operation, "the LSN counter (ratchet_lsn) is missing or damaged")
