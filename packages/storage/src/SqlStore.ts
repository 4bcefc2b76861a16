/**
 * The event store and its read models over `@effect/sql`, written once for every engine.
 *
 * An engine package provides a `SqlClient` and a `SqlDialect`; {@link layer} turns them into
 * `EventStore` and `ReadModels`. Only portable SQL is used (`INSERT … ON CONFLICT (…) DO UPDATE`,
 * `UPDATE … RETURNING`), every value travels as a bound parameter, and every `SqlError` is
 * mapped through `SqlDialect.classify`, so nothing above this module sees a driver code.
 *
 * An append is one write transaction, in this order:
 * 1. the request is validated and its events encoded before the transaction starts;
 * 2. the global LSN counter row (`ratchet_lsn`) is advanced first: in PostgreSQL its row lock
 *    then orders every writer, so commit order is LSN order and every later read in the
 *    transaction sees the previous writer's commit;
 * 3. a known operation id with the same request digest returns the first result and rolls the
 *    transaction back, so a replay writes nothing; with another digest it is `OperationReused`;
 * 4. the stream's project must match; the lease row fences the epoch (`StaleEpoch`); the branch
 *    version must equal the expected one (`VersionConflict`);
 * 5. the events, the branch head, the operation and the changed read-model rows are written.
 *
 * Reads page through the log by LSN (ancestors first on a fork). A `StoredEvent`'s `branch` and
 * `version` are those of the branch read through, so folding a read with `ReadModel.fold` gives
 * that branch's read models. The lease is the task's, not a branch's: `rebuild` folds it from the
 * stream's lease events on every branch, in LSN order, exactly as appends maintained it.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as EventStore from "./EventStore.js"
import { type Db, rows, run } from "./internal/db.js"
import { migrate } from "./internal/migrate.js"
import { foldReadModels, events as logEvents, loadBranches, segments } from "./internal/eventLog.js"
import {
  loadAttempts,
  loadCheckpoints,
  loadFrontier,
  loadLease,
  loadSnapshot,
  loadSummary,
  loadTouched,
  saveChanges
} from "./internal/readModelRows.js"
import { decodeEvent, decodeIntent, decodeSummary, int, intOrNull } from "./internal/rows.js"
import * as validate from "./internal/validate.js"
import * as LeaseStore from "./LeaseStore.js"
import * as ReadModel from "./ReadModel.js"
import * as SqlAppend from "./SqlAppend.js"
import * as SqlAppendOnce from "./SqlAppendOnce.js"
import * as SqlDialect from "./SqlDialect.js"
import * as StorageError from "./StorageError.js"

/**
 * The two services a SQL store provides.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stores {
  readonly eventStore: EventStore.Service
  readonly readModels: ReadModel.Service
  readonly leaseStore: LeaseStore.Service
}

/** Brings the schema to `Migrations.latestVersion` (see `internal/migrate`). */
export { migrate }

/** A replayed operation id: carried out of the transaction as a failure so that it rolls back. */
class Replayed extends Data.TaggedError("@ratchet/storage/SqlStore/Replayed")<{
  readonly result: EventStore.AppendResult
}> {}

const leaseEventTags = ["LeaseAcquired", "LeaseTakenOver", "LeaseReleased"]

/**
 * Options of {@link makeWith}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Told of every append this store committed (not of replays), with the branch after it. */
  readonly appended?: ((state: SqlAppendOnce.BranchState) => void) | undefined
}

const makeEventStore = (db: Db, dialect: SqlDialect.Service, options: Options): EventStore.Service => {
  const { sql } = db
  const memos = SqlAppend.makeMemos()

  const appendIn = (request: SqlAppend.Prepared) =>
    Effect.gen(function*() {
      const operation = "append"
      const { branch, operationId, projectId, streamId } = request
      const count = request.events.length
      const counter = yield* rows(
        db,
        operation,
        sql`UPDATE ratchet_lsn SET value = value + ${count} WHERE id = 1 RETURNING value`
      )
      const lastLsn = int(counter[0]?.["value"])
      if (!Number.isSafeInteger(lastLsn)) return yield* SqlAppend.counterDamaged(operation)

      // Everything the append decides against, in one read: the operation, the stream's project,
      // the branch version, the task summary and the lease row (absent ones come back NULL).
      const state = (yield* rows(
        db,
        operation,
        sql`SELECT o.stream_id AS operation_stream, o.branch AS operation_branch, o.request_digest,
            o.version AS operation_version, o.first_lsn AS operation_first_lsn, o.last_lsn AS operation_last_lsn,
            s.project_id AS stream_project, b.version AS branch_version, t.summary,
            l.project_id, l.stream_id, l.epoch, l.held, l.owner, l.acquired_at, l.heartbeat_at, l.grace_ms, l.updated_lsn
          FROM (SELECT 1 AS here) AS probe
          LEFT JOIN ratchet_operations o ON o.operation_id = ${operationId}
          LEFT JOIN ratchet_streams s ON s.stream_id = ${streamId}
          LEFT JOIN ratchet_branches b ON b.stream_id = ${streamId} AND b.branch = ${branch}
          LEFT JOIN ratchet_task_summaries t ON t.stream_id = ${streamId} AND t.branch = ${branch}
          LEFT JOIN ratchet_leases l ON l.project_id = ${projectId} AND l.stream_id = ${streamId}`
      ))[0] ?? {}
      const present = (value: unknown) => value !== null && value !== undefined
      const done = SqlAppend.operationOf(state)
      if (done !== null) {
        // Read only when the digests differ: the stored events, compared by content.
        const stored = done.digest === request.digest ? [] : (yield* rows(
          db,
          operation,
          sql`SELECT payload, epoch FROM ratchet_events WHERE operation_id = ${operationId} ORDER BY lsn`
        )).map((row) => ({ payload: String(row["payload"]), epoch: intOrNull(row["epoch"]) }))
        const streamProject = done.streamId === streamId
          ? state["stream_project"]
          : (yield* loadBranches(db, operation, done.streamId))?.projectId
        const result = yield* SqlAppend.replayOf(request, done, streamProject, () => stored)
        return yield* new Replayed({ result })
      }
      const lease = present(state["project_id"]) ? yield* memos.lease(operation, state) : null
      // The store's clock, read inside the transaction: lease deadlines are judged by it.
      const now = yield* dialect.now
      const plan = yield* SqlAppend.decide(request, {
        streamProject: state["stream_project"],
        branchVersion: present(state["branch_version"]) ? int(state["branch_version"]) : null,
        lease
      }, now, lastLsn)
      const { firstLsn, stored, version } = plan
      if (!plan.streamExists) {
        yield* run(
          db,
          operation,
          sql`INSERT INTO ratchet_streams ${sql.insert({ stream_id: streamId, project_id: projectId, created_at: now })}`
        )
        yield* run(
          db,
          operation,
          sql`INSERT INTO ratchet_branches ${
            sql.insert({
              stream_id: streamId,
              branch,
              parent: null,
              fork_lsn: null,
              version,
              last_lsn: lastLsn,
              created_at: now
            })
          }`
        )
      } else {
        yield* run(
          db,
          operation,
          sql`UPDATE ratchet_branches SET version = ${version}, last_lsn = ${lastLsn}
            WHERE stream_id = ${streamId} AND branch = ${branch}`
        )
      }
      for (let start = 0; start < stored.length; start += 200) {
        yield* run(
          db,
          operation,
          sql`INSERT INTO ratchet_events ${
            sql.insert(stored.slice(start, start + 200).map((row, offset) => ({
              lsn: row.lsn,
              stream_id: streamId,
              branch,
              version: row.version,
              type: row.event._tag,
              type_version: row.event.version,
              payload: request.payloads[start + offset] ?? "",
              epoch: row.epoch,
              operation_id: operationId,
              recorded_at: now
            })))
          }`
        )
      }
      yield* run(
        db,
        operation,
        sql`INSERT INTO ratchet_operations ${
          sql.insert({
            operation_id: operationId,
            stream_id: streamId,
            branch,
            request_digest: request.digest,
            version,
            first_lsn: firstLsn,
            last_lsn: lastLsn
          })
        }`
      )
      const summary = present(state["summary"])
        ? yield* memos.summary(operation, streamId, branch, state["summary"])
        : null
      const before = yield* loadTouched(db, operation, streamId, branch, summary, lease, request.events, memos)
      const after = ReadModel.fold(stored, before)
      const changes = SqlAppend.changedRows(before, after, true)
      yield* saveChanges(db, operation, changes)
      // Remembered only once committed: a rolled-back append must not leave its rows behind.
      return { result: { streamId, branch, version, firstLsn, lastLsn, replayed: false }, after, changes }
    })

  const append: EventStore.Service["append"] = (request) =>
    Effect.flatMap(SqlAppend.prepare(request), (prepared) =>
      dialect.writeTransaction("append", appendIn(prepared)).pipe(
        Effect.map(({ after, changes, result }) => {
          memos.written(after, changes)
          options.appended?.(SqlAppendOnce.branchStateOf(prepared, result.version, after))
          return result
        }),
        Effect.catchTag("@ratchet/storage/SqlStore/Replayed", (replayed) => Effect.succeed(replayed.result))
      ))

  const read: EventStore.Service["read"] = (request) =>
    Stream.unwrap(Effect.gen(function*() {
      const operation = "read"
      const streamId = yield* validate.id("streamId", request.streamId)
      const branch = yield* validate.branch("branch", request.branch)
      const fromLsn = yield* validate.optionalInteger("fromLsn", request.fromLsn, 0)
      const toLsn = yield* validate.optionalInteger("toLsn", request.toLsn, 0)
      const stream = yield* loadBranches(db, operation, streamId)
      if (stream === null) {
        return branch === EventStore.mainBranch ? Stream.empty : yield* new EventStore.BranchNotFound({ streamId, branch })
      }
      const parts = yield* segments(operation, streamId, stream, branch)
      return logEvents(db, operation, streamId, stream.projectId, branch, parts, {
        fromLsn: Math.max(fromLsn ?? 1, 1),
        toLsn: toLsn ?? Number.MAX_SAFE_INTEGER
      })
    }))

  const head: EventStore.Service["head"] = (streamIdInput, branchInput) =>
    Effect.gen(function*() {
      const streamId = yield* validate.id("streamId", streamIdInput)
      const branch = yield* validate.branch("branch", branchInput)
      const stream = yield* loadBranches(db, "head", streamId)
      if (stream === null) return null
      const row = stream.branches.get(branch)
      if (row === undefined) return yield* new EventStore.BranchNotFound({ streamId, branch })
      return { projectId: stream.projectId, streamId, branch, version: row.version, lastLsn: row.lastLsn }
    })

  const forkIn = (streamId: string, from: string, branch: string, atLsn: number) =>
    Effect.gen(function*() {
      const operation = "fork"
      // Takes the LSN row's lock like an append does, so forks and appends are ordered alike.
      yield* run(db, operation, sql`UPDATE ratchet_lsn SET value = value WHERE id = 1`)
      const stream = yield* loadBranches(db, operation, streamId)
      if (stream === null) return yield* new EventStore.BranchNotFound({ streamId, branch: from })
      const parts = yield* segments(operation, streamId, stream, from)
      if (stream.branches.has(branch)) return yield* new EventStore.BranchExists({ streamId, branch })
      const at = (yield* rows(
        db,
        operation,
        sql`SELECT branch, version FROM ratchet_events WHERE stream_id = ${streamId} AND lsn = ${atLsn}`
      ))[0]
      const visible = at !== undefined && parts.some((part) => part.branch === at["branch"] && atLsn <= part.upTo)
      if (at === undefined || !visible) {
        return yield* new EventStore.InvalidRequest({
          field: "atLsn",
          reason: `${atLsn} is not the LSN of an event visible on branch ${from} of stream ${streamId}`
        })
      }
      const now = yield* dialect.now
      yield* run(
        db,
        operation,
        sql`INSERT INTO ratchet_branches ${
          sql.insert({
            stream_id: streamId,
            branch,
            parent: from,
            fork_lsn: atLsn,
            version: int(at["version"]),
            last_lsn: atLsn,
            created_at: now
          })
        }`
      )
      const snapshot = yield* foldReadModels(
        logEvents(db, operation, streamId, stream.projectId, branch, parts, { fromLsn: 1, toLsn: atLsn })
      )
      yield* saveChanges(db, operation, SqlAppend.changedRows(ReadModel.empty, snapshot, false))
      return { streamId, branch, parent: from, forkLsn: atLsn, createdAt: now }
    })

  const fork: EventStore.Service["fork"] = (request) =>
    Effect.gen(function*() {
      const streamId = yield* validate.id("streamId", request.streamId)
      const from = yield* validate.branch("from", request.from)
      const branch = yield* validate.id("branch", request.branch)
      const atLsn = yield* validate.integer("atLsn", request.atLsn, 1)
      return yield* dialect.writeTransaction("fork", forkIn(streamId, from, branch, atLsn))
    })

  const branches: EventStore.Service["branches"] = (streamIdInput) =>
    Effect.gen(function*() {
      const streamId = yield* validate.id("streamId", streamIdInput)
      const stream = yield* loadBranches(db, "branches", streamId)
      if (stream === null) return []
      return [...stream.branches.values()].map((row) => ({
        streamId,
        branch: row.branch,
        parent: row.parent,
        forkLsn: row.forkLsn,
        createdAt: row.createdAt
      }))
    })

  return { append, read, head, fork, branches }
}

const makeReadModels = (db: Db, dialect: SqlDialect.Service, eventStore: EventStore.Service): ReadModel.Service => {
  const { sql } = db

  const taskSummary: ReadModel.Service["taskSummary"] = (streamIdInput, branchInput) =>
    Effect.gen(function*() {
      const streamId = yield* validate.id("streamId", streamIdInput)
      const branch = yield* validate.branch("branch", branchInput)
      return yield* loadSummary(db, "taskSummary", streamId, branch)
    })

  const listTasks: ReadModel.Service["listTasks"] = (projectIdInput) =>
    Effect.gen(function*() {
      const operation = "listTasks"
      const projectId = projectIdInput === undefined ? undefined : yield* validate.id("projectId", projectIdInput)
      // Newest first: by the LSN that created each stream's main branch (an index seek each).
      const found = yield* rows(
        db,
        operation,
        projectId === undefined
          ? sql`SELECT t.stream_id, t.summary FROM ratchet_task_summaries t WHERE t.branch = ${EventStore.mainBranch}
              ORDER BY (SELECT MIN(e.lsn) FROM ratchet_events e WHERE e.stream_id = t.stream_id AND e.branch = t.branch) DESC`
          : sql`SELECT t.stream_id, t.summary FROM ratchet_task_summaries t
              WHERE t.branch = ${EventStore.mainBranch} AND t.project_id = ${projectId}
              ORDER BY (SELECT MIN(e.lsn) FROM ratchet_events e WHERE e.stream_id = t.stream_id AND e.branch = t.branch) DESC`
      )
      return yield* Effect.forEach(found, (row) =>
        decodeSummary(operation, String(row["stream_id"]), EventStore.mainBranch, row["summary"]))
    })

  const attempts: ReadModel.Service["attempts"] = (streamIdInput, branchInput) =>
    Effect.gen(function*() {
      const streamId = yield* validate.id("streamId", streamIdInput)
      const branch = yield* validate.branch("branch", branchInput)
      return [...(yield* loadAttempts(db, "attempts", streamId, branch)).values()]
    })

  const openIntents: ReadModel.Service["openIntents"] = (streamIdInput) =>
    Effect.gen(function*() {
      const operation = "openIntents"
      const streamId = streamIdInput === undefined ? undefined : yield* validate.id("streamId", streamIdInput)
      const open = sql.in(["Pending", "Dispatched"])
      const found = yield* rows(
        db,
        operation,
        streamId === undefined
          ? sql`SELECT stream_id, branch, intent_id, run_id, step_id, attempt, state, outcome, updated_lsn
              FROM ratchet_intents WHERE state IN ${open} ORDER BY stream_id, branch, updated_lsn, intent_id`
          : sql`SELECT stream_id, branch, intent_id, run_id, step_id, attempt, state, outcome, updated_lsn
              FROM ratchet_intents WHERE stream_id = ${streamId} AND state IN ${open}
              ORDER BY branch, updated_lsn, intent_id`
      )
      return yield* Effect.forEach(found, (row) => decodeIntent(operation, row))
    })

  const lease: ReadModel.Service["lease"] = (projectIdInput, streamIdInput) =>
    Effect.gen(function*() {
      const projectId = yield* validate.id("projectId", projectIdInput)
      const streamId = yield* validate.id("streamId", streamIdInput)
      return yield* loadLease(db, "lease", projectId, streamId)
    })

  const checkpoints: ReadModel.Service["checkpoints"] = (streamIdInput, branchInput, queryInput) =>
    Effect.gen(function*() {
      const streamId = yield* validate.id("streamId", streamIdInput)
      const branch = yield* validate.branch("branch", branchInput)
      const query = yield* validate.checkpointQuery(queryInput)
      return yield* loadCheckpoints(db, "checkpoints", streamId, branch, query)
    })

  const runFrontier: ReadModel.Service["runFrontier"] = (streamIdInput, runIdInput, branchInput) =>
    Effect.gen(function*() {
      const streamId = yield* validate.id("streamId", streamIdInput)
      const runId = yield* validate.id("runId", runIdInput)
      const branch = yield* validate.branch("branch", branchInput)
      return yield* dialect.readTransaction("runFrontier", loadFrontier(db, "runFrontier", streamId, branch, runId))
    })

  const snapshot: ReadModel.Service["snapshot"] = (streamIdInput, branchInput) =>
    Effect.gen(function*() {
      const streamId = yield* validate.id("streamId", streamIdInput)
      const branch = yield* validate.branch("branch", branchInput)
      return yield* dialect.readTransaction("snapshot", loadSnapshot(db, "snapshot", streamId, branch))
    })

  const rebuild: ReadModel.Service["rebuild"] = (streamIdInput, branchInput) =>
    Effect.gen(function*() {
      const operation = "rebuild"
      const streamId = yield* validate.id("streamId", streamIdInput)
      const branch = yield* validate.branch("branch", branchInput)
      return yield* dialect.readTransaction(
        operation,
        Effect.gen(function*() {
          const folded = yield* foldReadModels(eventStore.read({ streamId, branch }))
          const projectId = (yield* loadBranches(db, operation, streamId))?.projectId ?? ""
          const leaseRows = yield* rows(
            db,
            operation,
            sql`SELECT lsn, version, payload, epoch, operation_id, recorded_at FROM ratchet_events
              WHERE stream_id = ${streamId} AND type IN ${sql.in(leaseEventTags)} ORDER BY lsn`
          )
          const leaseEvents = yield* Effect.forEach(leaseRows, (row) =>
            decodeEvent(operation, { projectId, streamId, branch }, row))
          return { ...folded, lease: ReadModel.fold(leaseEvents).lease }
        })
      )
    })

  return { taskSummary, listTasks, attempts, openIntents, lease, checkpoints, runFrontier, snapshot, rebuild }
}

const makeLeaseStore = (db: Db, dialect: SqlDialect.Service): LeaseStore.Service => {
  const { sql } = db

  const heartbeat: LeaseStore.Service["heartbeat"] = (request) =>
    Effect.gen(function*() {
      const operation = "heartbeat"
      const projectId = yield* validate.id("projectId", request.projectId)
      const streamId = yield* validate.id("streamId", request.streamId)
      const epoch = yield* validate.integer("epoch", request.epoch, 1)
      return yield* dialect.writeTransaction(
        operation,
        Effect.gen(function*() {
          // Serialise with appends (which take the counter row first), so a takeover's deadline
          // check and a heartbeat never interleave: one of them sees the other.
          yield* run(db, operation, sql`UPDATE ratchet_lsn SET value = value WHERE id = 1`)
          const lease = yield* loadLease(db, operation, projectId, streamId)
          if (lease === null || !lease.held || lease.epoch !== epoch) {
            return yield* new EventStore.StaleEpoch({
              projectId,
              streamId,
              presented: epoch,
              current: lease === null ? null : lease.epoch,
              held: lease !== null && lease.held
            })
          }
          // Never backwards: a local clock stepped back must not shorten the holder's grace.
          const heartbeatAt = Math.max(lease.heartbeatAt, yield* dialect.now)
          yield* run(
            db,
            operation,
            sql`UPDATE ratchet_leases SET heartbeat_at = ${heartbeatAt}
              WHERE project_id = ${projectId} AND stream_id = ${streamId} AND epoch = ${epoch}`
          )
          return { ...lease, heartbeatAt }
        })
      )
    })

  return { heartbeat, now: dialect.now }
}

/**
 * Runs the migrations, then builds the services over the context's `SqlClient` and `SqlDialect`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (
  options: Options
): Effect.Effect<Stores, StorageError.StorageError, SqlClient.SqlClient | SqlDialect.SqlDialect> =>
  Effect.gen(function*() {
    yield* migrate
    const dialect = yield* SqlDialect.SqlDialect
    const db: Db = { sql: (yield* SqlClient.SqlClient).withoutTransforms(), classify: dialect.classify }
    const eventStore = makeEventStore(db, dialect, options)
    return { eventStore, readModels: makeReadModels(db, dialect, eventStore), leaseStore: makeLeaseStore(db, dialect) }
  })

/**
 * {@link makeWith} without options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Stores, StorageError.StorageError, SqlClient.SqlClient | SqlDialect.SqlDialect> =
  makeWith({})

/**
 * `EventStore`, `ReadModels` and `LeaseStore` from an engine's `SqlClient` and `SqlDialect`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  EventStore.EventStore | ReadModel.ReadModels | LeaseStore.LeaseStore,
  StorageError.StorageError,
  SqlClient.SqlClient | SqlDialect.SqlDialect
> = Layer.effectContext(
  Effect.map(make, (stores) =>
    Context.make(EventStore.EventStore, stores.eventStore).pipe(
      Context.add(ReadModel.ReadModels, stores.readModels),
      Context.add(LeaseStore.LeaseStore, stores.leaseStore)
    ))
)
