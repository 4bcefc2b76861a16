/**
 * Opening a SQL store at this build's schema: the recorded version read, the missing migrations
 * applied in one write transaction under the dialect's migration lock, and, when a migration
 * changes how a summary is folded, every stream's summary folded again from its log.
 * `SqlStore.migrate` is this module's `migrate`.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Migrations from "../Migrations.js"
import * as ReadModel from "../ReadModel.js"
import * as SqlAppend from "../SqlAppend.js"
import * as SqlDialect from "../SqlDialect.js"
import * as StorageError from "../StorageError.js"
import { type Db, rows, run } from "./db.js"
import { foldReadModels, events as logEvents, loadBranches, segments } from "./eventLog.js"
import { saveChanges } from "./readModelRows.js"
import { corrupt, int } from "./rows.js"

const schemaTable = `CREATE TABLE IF NOT EXISTS ratchet_schema (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL,
  updated_at BIGINT NOT NULL
)`

const readVersion = (
  db: Db,
  operation: string,
  probe = false
): Effect.Effect<number, StorageError.StorageError> =>
  Effect.flatMap(
    rows(
      db,
      operation,
      // The probe may fail (no table yet), and a driver's statement cache may remember a failed
      // prepare for its text, so the probe and the read inside the migration use different texts.
      probe
        ? db.sql`SELECT version FROM ratchet_schema WHERE id = ${1}`
        : db.sql`SELECT version FROM ratchet_schema WHERE id = 1`
    ),
    (found) => {
      if (found[0] === undefined) return Effect.succeed(0)
      const version = int(found[0]["version"])
      return Number.isSafeInteger(version)
        ? Effect.succeed(version)
        : Effect.fail(corrupt(operation, "the recorded schema version (ratchet_schema) is damaged"))
    }
  )

const tooNew = (version: number): StorageError.StorageError =>
  StorageError.make(
    "migrate",
    StorageError.SchemaTooNew.make({
      code: null,
      detail: `the store is at schema version ${version}; this Ratchet understands up to ${Migrations.latestVersion}`
    })
  )

/**
 * Folds every branch's task summary again from its events and rewrites it (a migration whose
 * summary shape changed; see `Migrations.Migration.refoldSummaries`). Only branches that have a
 * summary are touched; the other read models keep their rows.
 */
const refoldSummaries = (db: Db, operation: string): Effect.Effect<void, StorageError.StorageError> =>
  Effect.gen(function*() {
    const found = yield* rows(db, operation, db.sql`SELECT DISTINCT stream_id FROM ratchet_task_summaries ORDER BY stream_id`)
    for (const row of found) {
      const streamId = String(row["stream_id"])
      const stream = yield* loadBranches(db, operation, streamId)
      if (stream === null) continue
      for (const branch of stream.branches.keys()) {
        const parts = yield* segments(operation, streamId, stream, branch).pipe(
          Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed([]))
        )
        const folded = yield* foldReadModels(
          logEvents(db, operation, streamId, stream.projectId, branch, parts, { fromLsn: 1, toLsn: Number.MAX_SAFE_INTEGER })
        )
        yield* saveChanges(
          db,
          operation,
          SqlAppend.changedRows(ReadModel.empty, { ...ReadModel.empty, summary: folded.summary }, false)
        )
      }
    }
  })

/**
 * Brings the schema to `Migrations.latestVersion` and returns the version recorded.
 *
 * A store already at the latest version is opened with one read and no write lock (so a
 * read-only store still opens for reading). Otherwise, in one write transaction: the dialect's
 * migration lock, `ratchet_schema` created if missing, the recorded version read (newer than this
 * build → `SchemaTooNew`, rolled back, nothing written), the missing migrations applied and the
 * new version recorded. Two processes opening a fresh store at once both succeed: the second
 * waits for the lock, then finds nothing left to do.
 *
 * @since 0.1.0
 * @category constructors
 */
export const migrate: Effect.Effect<number, StorageError.StorageError, SqlClient.SqlClient | SqlDialect.SqlDialect> =
  Effect.gen(function*() {
    const dialect = yield* SqlDialect.SqlDialect
    const db: Db = { sql: (yield* SqlClient.SqlClient).withoutTransforms(), classify: dialect.classify }
    const operation = "migrate"
    // A missing table or an unreadable store fails here; the transaction below reports it properly.
    const recorded = yield* Effect.option(readVersion(db, operation, true))
    if (recorded._tag === "Some" && recorded.value > Migrations.latestVersion) return yield* tooNew(recorded.value)
    if (recorded._tag === "Some" && recorded.value === Migrations.latestVersion) return recorded.value
    return yield* dialect.writeTransaction(
      operation,
      Effect.gen(function*() {
        yield* dialect.lockForMigration
        // The DDL strings are this package's constants; nothing from outside reaches them.
        yield* run(db, operation, db.sql.unsafe(schemaTable))
        const current = yield* readVersion(db, operation)
        if (current > Migrations.latestVersion) return yield* tooNew(current)
        const pending = Migrations.migrations.filter((migration) => migration.version > current)
        if (pending.length === 0) return current
        for (const migration of pending) {
          for (const statement of migration.statements[dialect.dialect]) {
            yield* run(db, operation, db.sql.unsafe(statement))
          }
        }
        if (pending.some((migration) => migration.refoldSummaries === true)) yield* refoldSummaries(db, operation)
        const now = yield* dialect.now
        yield* run(
          db,
          operation,
          db.sql`INSERT INTO ratchet_schema (id, version, updated_at) VALUES (1, ${Migrations.latestVersion}, ${now})
            ON CONFLICT (id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`
        )
        return Migrations.latestVersion
      })
    )
  })
