/**
 * What the SQL store needs from an engine beyond `@effect/sql`'s generic `SqlClient`.
 *
 * The SQL implementation of the store (`SqlStore`) is written once against `SqlClient`; an engine
 * package (`@ratchet/storage-sqlite`, `@ratchet/storage-postgres`) provides this service next to
 * its client, so a maintainer swaps engines by providing another layer:
 *
 * - `writeTransaction` runs an effect in a transaction that serialises writers: SQLite takes the
 *   write lock up front with `BEGIN IMMEDIATE` (a deferred transaction that reads before it writes
 *   can fail with SQLITE_BUSY_SNAPSHOT instead of waiting), PostgreSQL takes row locks (or a
 *   transaction-scoped advisory lock for migrations) with a bounded retry on serialisation failures.
 * - `classify` maps the engine's native failures (SQLite result codes, SQLSTATEs, errno values)
 *   into the port's one `StorageError`, so nothing above the engine branches on a driver code.
 * - `now` is the store's clock, in epoch milliseconds: PostgreSQL's `clock_timestamp()`, so
 *   machines with skewed clocks agree on lease deadlines; SQLite's is the local clock.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Dialect } from "./Migrations.js"
import type { StorageError } from "./StorageError.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly dialect: Dialect
  /** Runs `effect` inside one write transaction; failures of `effect` roll it back. */
  readonly writeTransaction: <A, E, R>(
    operation: string,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | StorageError, R>
  /** Runs `effect` inside one read transaction (a consistent snapshot). */
  readonly readTransaction: <A, E, R>(
    operation: string,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | StorageError, R>
  /** Maps any engine failure (usually an `SqlError` wrapping the driver's error) to a StorageError. */
  readonly classify: (operation: string, cause: unknown) => StorageError
  /** Runs once per write transaction that migrates, before reading the schema version. */
  readonly lockForMigration: Effect.Effect<void, StorageError>
  /** The store's clock, epoch milliseconds. */
  readonly now: Effect.Effect<number, StorageError>
}

/**
 * @since 0.1.0
 * @category services
 */
export class SqlDialect extends Context.Tag("@ratchet/storage/SqlDialect")<SqlDialect, Service>() {}
