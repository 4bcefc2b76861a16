/**
 * The read models as rows: loading the part of a branch's snapshot an append touches, writing
 * back what `ReadModel.apply` changed, and loading a whole snapshot.
 *
 * An append loads the summary row, the lease row and the intent rows its events name, folds its
 * events into that partial snapshot with `ReadModel.apply`, and upserts exactly the rows that
 * changed: `apply` returns the same object for a row it left alone, so a changed row is one that
 * is no longer identical to what was loaded. Attempts and checkpoints are written whole by their
 * events and need no loading. Upserts use `INSERT … ON CONFLICT (…) DO UPDATE`, which both
 * dialects accept.
 *
 * @internal
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Effect from "effect/Effect"
import * as ReadModel from "../ReadModel.js"
import * as SqlAppend from "../SqlAppend.js"
import type * as StorageError from "../StorageError.js"
import { type Db, rows, run } from "./db.js"
import { decodeAttempt, decodeCheckpoint, decodeIntent, decodeLease, decodeSummary, int } from "./rows.js"

/** Rows per multi-row INSERT: far below both engines' bound-parameter limits. */
const chunkSize = 200

const chunks = <A>(values: ReadonlyArray<A>): ReadonlyArray<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let index = 0; index < values.length; index += chunkSize) out.push(values.slice(index, index + chunkSize))
  return out
}

/** The lease row of a task, or `null`. */
export const loadLease = (
  db: Db,
  operation: string,
  projectId: string,
  streamId: string
): Effect.Effect<ReadModel.LeaseRow | null, StorageError.StorageError> =>
  Effect.flatMap(
    rows(
      db,
      operation,
      db.sql`SELECT project_id, stream_id, epoch, held, owner, acquired_at, heartbeat_at, grace_ms, updated_lsn
        FROM ratchet_leases WHERE project_id = ${projectId} AND stream_id = ${streamId}`
    ),
    (found) => found[0] === undefined ? Effect.succeed(null) : decodeLease(operation, found[0])
  )

/** The task summary of a branch, or `null`. */
export const loadSummary = (
  db: Db,
  operation: string,
  streamId: string,
  branch: string
): Effect.Effect<ReadModel.TaskSummary | null, StorageError.StorageError> =>
  Effect.flatMap(
    rows(
      db,
      operation,
      db.sql`SELECT summary FROM ratchet_task_summaries WHERE stream_id = ${streamId} AND branch = ${branch}`
    ),
    (found) =>
      found[0] === undefined ? Effect.succeed(null) : decodeSummary(operation, streamId, branch, found[0]["summary"])
  )

/**
 * The part of a branch's snapshot that `events` can change, from the summary and lease the caller
 * already read plus the intent rows and the attempt rows the events name (`SqlAppend.touched`),
 * decoded through the connection's memos.
 */
export const loadTouched = (
  db: Db,
  operation: string,
  streamId: string,
  branch: string,
  summary: ReadModel.TaskSummary | null,
  lease: ReadModel.LeaseRow | null,
  events: ReadonlyArray<Event.Event>,
  memos: SqlAppend.Memos
): Effect.Effect<ReadModel.Snapshot, StorageError.StorageError> =>
  Effect.gen(function*() {
    const { sql } = db
    const names = SqlAppend.touched(events)
    const intents = new Map<string, ReadModel.IntentRow>()
    if (names.intentIds.length > 0) {
      const found = yield* rows(
        db,
        operation,
        sql`SELECT stream_id, branch, intent_id, run_id, step_id, attempt, state, outcome, updated_lsn
          FROM ratchet_intents
          WHERE stream_id = ${streamId} AND branch = ${branch} AND intent_id IN ${sql.in([...names.intentIds])}`
      )
      for (const row of found) {
        const intent = yield* memos.intent(operation, row)
        intents.set(intent.intentId, intent)
      }
    }
    const attempts = new Map<string, ReadModel.AttemptRow>()
    // One read for all of them (a batch may name many attempts), in chunks far below both engines'
    // bound-parameter limits.
    for (const part of chunks(names.attempts)) {
      const found = yield* rows(
        db,
        operation,
        sql`SELECT stream_id, branch, run_id, step_id, attempt, state, turn, updated_lsn FROM ratchet_attempts
          WHERE stream_id = ${streamId} AND branch = ${branch} AND ${
          sql.or(part.map((key) => sql.and([sql`run_id = ${key.runId}`, sql`step_id = ${key.stepId}`, sql`attempt = ${key.attempt}`])))
        }`
      )
      for (const row of found) {
        const attempt = yield* memos.attempt(operation, row)
        attempts.set(attemptKeyOf(attempt), attempt)
      }
    }
    return { summary, attempts, intents, lease, checkpoints: [] }
  })

/** Writes the changed rows (`SqlAppend.changedRows`). */
export const saveChanges = (
  db: Db,
  operation: string,
  changes: SqlAppend.Changes
): Effect.Effect<void, StorageError.StorageError> =>
  Effect.gen(function*() {
    const { sql } = db
    if (changes.summary !== null) {
      yield* run(
        db,
        operation,
        sql`INSERT INTO ratchet_task_summaries ${sql.insert(changes.summary)}
        ON CONFLICT (stream_id, branch) DO UPDATE SET project_id = excluded.project_id, version = excluded.version,
          last_lsn = excluded.last_lsn, state = excluded.state, summary = excluded.summary`
      )
    }
    for (const part of chunks(changes.attempts)) {
      yield* run(
        db,
        operation,
        sql`INSERT INTO ratchet_attempts ${sql.insert(part)}
        ON CONFLICT (stream_id, branch, run_id, step_id, attempt) DO UPDATE SET state = excluded.state,
          turn = excluded.turn, updated_lsn = excluded.updated_lsn`
      )
    }
    for (const part of chunks(changes.intents)) {
      yield* run(
        db,
        operation,
        sql`INSERT INTO ratchet_intents ${sql.insert(part)}
        ON CONFLICT (stream_id, branch, intent_id) DO UPDATE SET run_id = excluded.run_id, step_id = excluded.step_id,
          attempt = excluded.attempt, state = excluded.state, outcome = excluded.outcome,
          updated_lsn = excluded.updated_lsn`
      )
    }
    for (const part of chunks(changes.checkpoints)) {
      yield* run(db, operation, sql`INSERT INTO ratchet_checkpoints ${sql.insert(part)}`)
    }
    if (changes.lease !== null) {
      yield* run(
        db,
        operation,
        sql`INSERT INTO ratchet_leases ${sql.insert(changes.lease)}
        ON CONFLICT (project_id, stream_id) DO UPDATE SET epoch = excluded.epoch, held = excluded.held,
          owner = excluded.owner, acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at,
          grace_ms = excluded.grace_ms, updated_lsn = excluded.updated_lsn`
      )
    }
  })

const attemptKeyOf = (row: ReadModel.AttemptRow): string => ReadModel.attemptKey(row.runId, row.stepId, row.attempt)

/** The attempts of a branch, keyed by `ReadModel.attemptKey`. */
export const loadAttempts = (
  db: Db,
  operation: string,
  streamId: string,
  branch: string
): Effect.Effect<ReadonlyMap<string, ReadModel.AttemptRow>, StorageError.StorageError> =>
  Effect.gen(function*() {
    const found = yield* rows(
      db,
      operation,
      db.sql`SELECT stream_id, branch, run_id, step_id, attempt, state, turn, updated_lsn FROM ratchet_attempts
        WHERE stream_id = ${streamId} AND branch = ${branch} ORDER BY updated_lsn, run_id, step_id, attempt`
    )
    const attempts = new Map<string, ReadModel.AttemptRow>()
    for (const row of found) {
      const attempt = yield* decodeAttempt(operation, row)
      attempts.set(attemptKeyOf(attempt), attempt)
    }
    return attempts
  })

const loadIntents = (
  db: Db,
  operation: string,
  streamId: string,
  branch: string
): Effect.Effect<ReadonlyMap<string, ReadModel.IntentRow>, StorageError.StorageError> =>
  Effect.gen(function*() {
    const found = yield* rows(
      db,
      operation,
      db.sql`SELECT stream_id, branch, intent_id, run_id, step_id, attempt, state, outcome, updated_lsn
        FROM ratchet_intents WHERE stream_id = ${streamId} AND branch = ${branch} ORDER BY updated_lsn, intent_id`
    )
    const intents = new Map<string, ReadModel.IntentRow>()
    for (const row of found) {
      const intent = yield* decodeIntent(operation, row)
      intents.set(intent.intentId, intent)
    }
    return intents
  })

/**
 * The checkpoints of a branch, in LSN order, narrowed by `query` (`ReadModel.selectCheckpoints`):
 * with a run and a kind, an index seek (`ratchet_checkpoints_run`); the `last` ones are read from
 * the end and put back in LSN order.
 */
export const loadCheckpoints = (
  db: Db,
  operation: string,
  streamId: string,
  branch: string,
  query: ReadModel.CheckpointQuery = {}
): Effect.Effect<ReadonlyArray<ReadModel.CheckpointRow>, StorageError.StorageError> => {
  const { sql } = db
  const conditions = [
    sql`stream_id = ${streamId}`,
    sql`branch = ${branch}`,
    ...(query.runId === undefined ? [] : [sql`run_id = ${query.runId}`]),
    ...(query.kind === undefined ? [] : [sql`kind = ${query.kind}`])
  ]
  const statement = query.last === undefined
    ? sql`SELECT stream_id, branch, lsn, kind, run_id FROM ratchet_checkpoints WHERE ${sql.and(conditions)} ORDER BY lsn`
    : sql`SELECT stream_id, branch, lsn, kind, run_id FROM ratchet_checkpoints WHERE ${sql.and(conditions)}
        ORDER BY lsn DESC LIMIT ${query.last}`
  return Effect.flatMap(rows(db, operation, statement), (found) =>
    Effect.forEach(query.last === undefined ? found : [...found].reverse(), (row) => decodeCheckpoint(operation, row)))
}

const attemptColumns = "a.stream_id, a.branch, a.run_id, a.step_id, a.attempt, a.state, a.turn, a.updated_lsn"

/**
 * Run `runId`'s frontier on a branch (`ReadModel.runFrontier`), by index only, in the caller's read
 * transaction, in three statements whose rows grow with the run's steps and open attempts, never
 * with its history:
 * 1. each step's latest attempt number: the steps by a skip scan of the primary key (a recursive
 *    query, one seek per step), and per step one seek for its highest attempt;
 * 2. those attempts, a primary-key seek each, and the open ones (the partial index `ratchet_attempts_open`,
 *    whose predicate the query repeats word for word so that SQLite uses it). The keys are bound
 *    values rather than a join with the first statement: PostgreSQL underestimates a run's
 *    attempts (its stream and run columns are correlated) and would hash-join the run's every
 *    attempt instead of seeking each one;
 * 3. their intents that `ReadModel.inFrontier` keeps, per attempt (`ratchet_intents_attempt`).
 */
export const loadFrontier = (
  db: Db,
  operation: string,
  streamId: string,
  branch: string,
  runId: string
): Effect.Effect<ReadModel.RunFrontier, StorageError.StorageError> =>
  Effect.gen(function*() {
    const { sql } = db
    // The run's rows of table `alias` (every value a bound parameter).
    const of = (alias: string) => {
      const table = sql.unsafe(alias)
      return sql`${table}.stream_id = ${streamId} AND ${table}.branch = ${branch} AND ${table}.run_id = ${runId}`
    }
    const latest = yield* rows(
      db,
      operation,
      sql`WITH RECURSIVE steps (step_id) AS (
          SELECT (SELECT f.step_id FROM ratchet_attempts f WHERE ${of("f")} ORDER BY f.step_id LIMIT 1)
          UNION ALL
          SELECT (SELECT n.step_id FROM ratchet_attempts n
            WHERE ${of("n")} AND n.step_id > steps.step_id ORDER BY n.step_id LIMIT 1)
          FROM steps WHERE steps.step_id IS NOT NULL
        )
        SELECT steps.step_id, (SELECT m.attempt FROM ratchet_attempts m WHERE ${of("m")} AND m.step_id = steps.step_id
          ORDER BY m.attempt DESC LIMIT 1) AS attempt
        FROM steps WHERE steps.step_id IS NOT NULL`
    )
    const columns = sql.unsafe(attemptColumns)
    const found = [
      ...(yield* rows(db, operation, sql`SELECT ${columns} FROM ratchet_attempts a WHERE ${of("a")} AND a.state IN ('Pending', 'Running')`))
    ]
    for (const part of chunks(latest)) {
      // One primary-key seek per step: an OR of the keys lets PostgreSQL factor out an attempt
      // number the steps share and scan the run's index range for it. (A chunk stays below
      // SQLite's 500 terms of a compound SELECT.)
      const seeks = part.map((row) =>
        sql`SELECT ${columns} FROM ratchet_attempts a
          WHERE ${of("a")} AND a.step_id = ${String(row["step_id"])} AND a.attempt = ${int(row["attempt"])}`
      )
      found.push(...(yield* rows(db, operation, sql`${sql.join(" UNION ALL ", false)(seeks)}`)))
    }
    const attempts = new Map<string, ReadModel.AttemptRow>()
    for (const row of found) {
      const attempt = yield* decodeAttempt(operation, row)
      attempts.set(attemptKeyOf(attempt), attempt)
    }
    const intents = new Map<string, ReadModel.IntentRow>()
    for (const part of chunks([...attempts.values()])) {
      // ReadModel.inFrontier, as SQL: which intents of each attempt depends on the attempt's state.
      const wanted = part.map((attempt) =>
        sql.and([
          sql`step_id = ${attempt.stepId}`,
          sql`attempt = ${attempt.attempt}`,
          attempt.state === "Pending" || attempt.state === "Running"
            ? sql`1 = 1`
            : attempt.state === "Indeterminate"
            ? sql`(state IN ('Pending', 'Dispatched') OR updated_lsn > ${attempt.updatedLsn})`
            : sql`state IN ('Pending', 'Dispatched')`
        ])
      )
      const rowsOfPart = yield* rows(
        db,
        operation,
        sql`SELECT stream_id, branch, intent_id, run_id, step_id, attempt, state, outcome, updated_lsn
          FROM ratchet_intents i WHERE ${of("i")} AND ${sql.or(wanted)} ORDER BY updated_lsn, intent_id`
      )
      for (const row of rowsOfPart) {
        const intent = yield* decodeIntent(operation, row)
        intents.set(intent.intentId, intent)
      }
    }
    return { attempts, intents }
  })

/** Every stored read model of a branch; the lease is the task's, whatever branch wrote it. */
export const loadSnapshot = (
  db: Db,
  operation: string,
  streamId: string,
  branch: string
): Effect.Effect<ReadModel.Snapshot, StorageError.StorageError> =>
  Effect.gen(function*() {
    const summary = yield* loadSummary(db, operation, streamId, branch)
    const attempts = yield* loadAttempts(db, operation, streamId, branch)
    const intents = yield* loadIntents(db, operation, streamId, branch)
    const leaseRows = yield* rows(
      db,
      operation,
      db.sql`SELECT project_id, stream_id, epoch, held, owner, acquired_at, heartbeat_at, grace_ms, updated_lsn
        FROM ratchet_leases WHERE stream_id = ${streamId}`
    )
    const lease = leaseRows[0] === undefined ? null : yield* decodeLease(operation, leaseRows[0])
    const checkpoints = yield* loadCheckpoints(db, operation, streamId, branch)
    return { summary, attempts, intents, lease, checkpoints }
  })
