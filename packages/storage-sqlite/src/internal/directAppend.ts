/**
 * The SQLite append as one engine call: one synchronous better-sqlite3 transaction
 * (`BEGIN IMMEDIATE` … `COMMIT`) of statements prepared once per connection, with no fiber and no
 * `@effect/sql` statement per statement inside it (ADR 0021).
 *
 * It is `SqlStore`'s append statement for statement — the LSN counter first, one read of the
 * operation, stream, branch, summary and lease, then the branch, the events, the operation and the
 * changed read-model rows — and every decision is `SqlAppend`'s, so both paths refuse, replay and
 * fold alike. What it saves is the machinery around the driver: an append is one `Effect.sync`
 * holding the connection's permit. The rows this connection wrote are not decoded back (the
 * `SqlAppend` memos), and the digest is the one `SqlAppend.prepare` computed from the payloads.
 *
 * A refusal or a replay is thrown out of the transaction function as a {@link Stop}, so
 * better-sqlite3 rolls the transaction back; a driver error (SQLITE_BUSY after the busy timeout, a
 * full disk at COMMIT) is classified like every other SQLite failure.
 *
 * @internal
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as SqlAppend from "@ratchet/storage/SqlAppend"
import * as StoreSpan from "@ratchet/storage/StoreSpan"
import type * as StorageError from "@ratchet/storage/StorageError"
import type Sqlite from "better-sqlite3"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Handle } from "./client.js"

type Row = Record<string, unknown>

/** Carries a refusal, a replay or a corrupt row out of the transaction function, rolling it back. */
class Stop {
  constructor(readonly outcome: Either.Either<EventStore.AppendResult, EventStore.AppendError>) {}
}

const operation = "append"

const orStop = <A, E extends EventStore.AppendError>(value: Either.Either<A, E>): A => {
  if (Either.isLeft(value)) throw new Stop(Either.left(value.left))
  return value.right
}

const present = (value: unknown): boolean => value !== null && value !== undefined

const num = (value: unknown): number =>
  typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : Number.NaN

/** Prepares the append's statements on `db`; the schema must already be migrated. */
const statements = (db: Sqlite.Database) => ({
  counter: db.prepare<[number], Row>("UPDATE ratchet_lsn SET value = value + ? WHERE id = 1 RETURNING value"),
  state: db.prepare<[string, string, string, string, string, string, string, string], Row>(
    `SELECT o.stream_id AS operation_stream, o.branch AS operation_branch, o.request_digest,
        o.version AS operation_version, o.first_lsn AS operation_first_lsn, o.last_lsn AS operation_last_lsn,
        s.project_id AS stream_project, b.version AS branch_version, t.summary,
        l.project_id, l.stream_id, l.epoch, l.held, l.owner, l.acquired_at, l.heartbeat_at, l.grace_ms, l.updated_lsn
      FROM (SELECT 1 AS here) AS probe
      LEFT JOIN ratchet_operations o ON o.operation_id = ?
      LEFT JOIN ratchet_streams s ON s.stream_id = ?
      LEFT JOIN ratchet_branches b ON b.stream_id = ? AND b.branch = ?
      LEFT JOIN ratchet_task_summaries t ON t.stream_id = ? AND t.branch = ?
      LEFT JOIN ratchet_leases l ON l.project_id = ? AND l.stream_id = ?`
  ),
  operationEvents: db.prepare<[string], Row>(
    "SELECT payload, epoch FROM ratchet_events WHERE operation_id = ? ORDER BY lsn"
  ),
  streamProject: db.prepare<[string], Row>("SELECT project_id FROM ratchet_streams WHERE stream_id = ?"),
  insertStream: db.prepare("INSERT INTO ratchet_streams (stream_id, project_id, created_at) VALUES (?, ?, ?)"),
  insertBranch: db.prepare(
    `INSERT INTO ratchet_branches (stream_id, branch, parent, fork_lsn, version, last_lsn, created_at)
      VALUES (?, ?, NULL, NULL, ?, ?, ?)`
  ),
  updateBranch: db.prepare("UPDATE ratchet_branches SET version = ?, last_lsn = ? WHERE stream_id = ? AND branch = ?"),
  insertEvent: db.prepare(
    `INSERT INTO ratchet_events
      (lsn, stream_id, branch, version, type, type_version, payload, epoch, operation_id, recorded_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  ),
  insertOperation: db.prepare(
    `INSERT INTO ratchet_operations (operation_id, stream_id, branch, request_digest, version, first_lsn, last_lsn)
      VALUES (?, ?, ?, ?, ?, ?, ?)`
  ),
  intent: db.prepare<[string, string, string], Row>(
    `SELECT stream_id, branch, intent_id, run_id, step_id, attempt, state, outcome, updated_lsn
      FROM ratchet_intents WHERE stream_id = ? AND branch = ? AND intent_id = ?`
  ),
  attempt: db.prepare<[string, string, string, string, number], Row>(
    `SELECT stream_id, branch, run_id, step_id, attempt, state, turn, updated_lsn FROM ratchet_attempts
      WHERE stream_id = ? AND branch = ? AND run_id = ? AND step_id = ? AND attempt = ?`
  ),
  summary: db.prepare(
    `INSERT INTO ratchet_task_summaries (stream_id, branch, project_id, version, last_lsn, state, summary)
      VALUES (@stream_id, @branch, @project_id, @version, @last_lsn, @state, @summary)
      ON CONFLICT (stream_id, branch) DO UPDATE SET project_id = excluded.project_id, version = excluded.version,
        last_lsn = excluded.last_lsn, state = excluded.state, summary = excluded.summary`
  ),
  saveAttempt: db.prepare(
    `INSERT INTO ratchet_attempts (stream_id, branch, run_id, step_id, attempt, state, turn, updated_lsn)
      VALUES (@stream_id, @branch, @run_id, @step_id, @attempt, @state, @turn, @updated_lsn)
      ON CONFLICT (stream_id, branch, run_id, step_id, attempt) DO UPDATE SET state = excluded.state,
        turn = excluded.turn, updated_lsn = excluded.updated_lsn`
  ),
  saveIntent: db.prepare(
    `INSERT INTO ratchet_intents (stream_id, branch, intent_id, run_id, step_id, attempt, state, outcome, updated_lsn)
      VALUES (@stream_id, @branch, @intent_id, @run_id, @step_id, @attempt, @state, @outcome, @updated_lsn)
      ON CONFLICT (stream_id, branch, intent_id) DO UPDATE SET run_id = excluded.run_id, step_id = excluded.step_id,
        attempt = excluded.attempt, state = excluded.state, outcome = excluded.outcome,
        updated_lsn = excluded.updated_lsn`
  ),
  checkpoint: db.prepare(
    `INSERT INTO ratchet_checkpoints (stream_id, branch, lsn, kind, run_id)
      VALUES (@stream_id, @branch, @lsn, @kind, @run_id)`
  ),
  lease: db.prepare(
    `INSERT INTO ratchet_leases
      (project_id, stream_id, epoch, held, owner, acquired_at, heartbeat_at, grace_ms, updated_lsn)
      VALUES (@project_id, @stream_id, @epoch, @held, @owner, @acquired_at, @heartbeat_at, @grace_ms, @updated_lsn)
      ON CONFLICT (project_id, stream_id) DO UPDATE SET epoch = excluded.epoch, held = excluded.held,
        owner = excluded.owner, acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at,
        grace_ms = excluded.grace_ms, updated_lsn = excluded.updated_lsn`
  )
})

/** `prepared` with each statement's `run`, `get` and `all` calling `tick` first. */
const counted = <S extends Record<string, Sqlite.Statement<Array<unknown>, unknown>>>(prepared: S, tick: () => void): S => {
  for (const statement of Object.values(prepared)) {
    const { all, get, run } = statement
    statement.run = (...parameters) => {
      tick()
      return run.apply(statement, parameters)
    }
    statement.get = (...parameters) => {
      tick()
      return get.apply(statement, parameters)
    }
    statement.all = (...parameters) => {
      tick()
      return all.apply(statement, parameters)
    }
  }
  return prepared
}

/**
 * The append of `EventStore.Service` over `handle`'s connection. `classify` maps a driver failure.
 */
export const make = (
  handle: Handle,
  classify: (operation: string, cause: unknown) => StorageError.StorageError
): EventStore.Service["append"] => {
  const { db } = handle
  const memos = SqlAppend.makeMemos()
  // Every statement the transaction runs is counted, for the trace's append span (ADR 0036).
  let executed = 0
  const s = counted(statements(db), () => {
    executed += 1
  })

  /** The body of the transaction; throws a {@link Stop} to roll back with an answer. */
  const body = (request: SqlAppend.Prepared, clock: Clock.Clock) => {
    const { branch, epoch, operationId, projectId, streamId } = request
    const count = request.events.length
    const lastLsn = num(s.counter.get(count)?.["value"])
    if (!Number.isSafeInteger(lastLsn)) throw new Stop(Either.left(SqlAppend.counterDamaged(operation)))
    const state = s.state.get(operationId, streamId, streamId, branch, streamId, branch, projectId, streamId) ?? {}
    const done = SqlAppend.operationOf(state)
    if (done !== null) {
      const streamProject = done.streamId === streamId
        ? state["stream_project"]
        : s.streamProject.get(done.streamId)?.["project_id"]
      const stored = () =>
        s.operationEvents.all(operationId).map((row) => ({
          payload: String(row["payload"]),
          epoch: present(row["epoch"]) ? num(row["epoch"]) : null
        }))
      throw new Stop(SqlAppend.replayOf(request, done, streamProject, stored))
    }
    const lease = present(state["project_id"]) ? orStop(memos.lease(operation, state)) : null
    // The store's clock, read inside the transaction: lease deadlines are judged by it.
    const now = clock.unsafeCurrentTimeMillis()
    const plan = orStop(SqlAppend.decide(request, {
      streamProject: state["stream_project"],
      branchVersion: present(state["branch_version"]) ? num(state["branch_version"]) : null,
      lease
    }, now, lastLsn))
    const { firstLsn, stored, version } = plan
    if (!plan.streamExists) {
      s.insertStream.run(streamId, projectId, now)
      s.insertBranch.run(streamId, branch, version, lastLsn, now)
    } else {
      s.updateBranch.run(version, lastLsn, streamId, branch)
    }
    for (const [index, row] of stored.entries()) {
      s.insertEvent.run(
        row.lsn,
        streamId,
        branch,
        row.version,
        row.event._tag,
        row.event.version,
        request.payloads[index] ?? "",
        epoch,
        operationId,
        now
      )
    }
    s.insertOperation.run(operationId, streamId, branch, request.digest, version, firstLsn, lastLsn)

    const summary = present(state["summary"]) ? orStop(memos.summary(operation, streamId, branch, state["summary"])) : null
    const names = SqlAppend.touched(request.events)
    const intents = new Map<string, ReadModel.IntentRow>()
    for (const intentId of names.intentIds) {
      const row = s.intent.get(streamId, branch, intentId)
      if (row !== undefined) intents.set(intentId, orStop(memos.intent(operation, row)))
    }
    const attempts = new Map<string, ReadModel.AttemptRow>()
    for (const key of names.attempts) {
      const row = s.attempt.get(streamId, branch, key.runId, key.stepId, key.attempt)
      if (row !== undefined) {
        attempts.set(ReadModel.attemptKey(key.runId, key.stepId, key.attempt), orStop(memos.attempt(operation, row)))
      }
    }
    const before: ReadModel.Snapshot = { summary, attempts, intents, lease, checkpoints: [] }
    const after = ReadModel.fold(stored, before)
    const changes = SqlAppend.changedRows(before, after, true)
    if (changes.summary !== null) s.summary.run(changes.summary)
    for (const row of changes.attempts) s.saveAttempt.run(row)
    for (const row of changes.intents) s.saveIntent.run(row)
    for (const row of changes.checkpoints) s.checkpoint.run(row)
    if (changes.lease !== null) s.lease.run(changes.lease)
    return {
      result: { streamId, branch, version, firstLsn, lastLsn, replayed: false } satisfies EventStore.AppendResult,
      after,
      changes
    }
  }
  const transaction = db.transaction(body)

  const attempt = (request: SqlAppend.Prepared, clock: Clock.Clock) =>
    Effect.suspend((): Effect.Effect<EventStore.AppendResult, EventStore.AppendError> => {
      try {
        // Inside another transaction of this fiber better-sqlite3 makes it a savepoint of it.
        const nested = db.inTransaction
        const from = executed
        const { after, changes, result } = nested ? transaction(request, clock) : transaction.immediate(request, clock)
        // Remembered only once committed: a rolled-back append must not leave its rows behind.
        memos.written(after, changes)
        // BEGIN and COMMIT (or SAVEPOINT and RELEASE) around the counted statements.
        return Effect.as(StoreSpan.annotate({ "db.system": "sqlite", "ratchet.statements": executed - from + 2, "ratchet.commits": nested ? 0 : 1 }), result)
      } catch (error) {
        if (error instanceof Stop) {
          return Either.isRight(error.outcome) ? Effect.succeed(error.outcome.right) : Effect.fail(error.outcome.left)
        }
        return Effect.fail(classify(operation, error))
      }
    })

  return (request) =>
    Effect.flatMap(
      SqlAppend.prepare(request),
      (prepared) => Effect.clockWith((clock) => handle.exclusive(attempt(prepared, clock)))
    )
}
