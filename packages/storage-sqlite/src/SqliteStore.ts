/**
 * Ratchet's default store: one SQLite file in `$RATCHET_HOME` (default `~/.ratchet/ratchet.db`)
 * through `@effect/sql-sqlite-node`, with blobs as files under `$RATCHET_HOME/blobs/`.
 *
 * Durability and concurrency:
 * - WAL journal (set by the client when it opens the file) and `synchronous=FULL` by default, so
 *   a committed append survives power loss; `NORMAL` trades the last commits for speed.
 * - One connection per process, serialised by the client; several processes share the file
 *   through SQLite's own locks. Every write transaction starts with `BEGIN IMMEDIATE`, taking the
 *   write lock up front: a deferred transaction that read first could fail with
 *   SQLITE_BUSY_SNAPSHOT instead of waiting. A writer waits up to the busy timeout (default 5 s)
 *   for another process, then fails with a retryable `LockTimeout`.
 * - `BEGIN IMMEDIATE`, `COMMIT` and `ROLLBACK` are issued here rather than by the client's
 *   `withTransaction`, so a failed COMMIT (a full disk) is a typed `StorageError` instead of a
 *   defect, and an interrupted transaction always rolls back.
 * - `foreign_keys=ON`; the directory is created `0700`.
 * - An append is one call into better-sqlite3: one synchronous `BEGIN IMMEDIATE` transaction of
 *   statements prepared once, holding the same connection and the same permit as the client
 *   (ADR 0021). Reads, forks, heartbeats and migrations go through `@effect/sql`.
 *
 * Where this process may not write (`$RATCHET_HOME` or the file without write permission), an
 * existing store opens read-only: reads work and every write fails `ReadOnly`, saying why.
 *
 * Opening fails with a `StorageError` a person can act on: `ReadOnly` (permissions), `Corrupt`
 * (not a database, or a damaged image), `SchemaTooNew` (written by a newer Ratchet; nothing is
 * written), `LockTimeout` (another process held the file past the busy timeout).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlError from "@effect/sql/SqlError"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as FileBlobStore from "@ratchet/storage/FileBlobStore"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import * as LessonStore from "@ratchet/storage/LessonStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as SqlDialect from "@ratchet/storage/SqlDialect"
import * as SqlLessonStore from "@ratchet/storage/SqlLessonStore"
import * as SqlStore from "@ratchet/storage/SqlStore"
import * as StorageError from "@ratchet/storage/StorageError"
import * as TaskClaims from "@ratchet/storage/TaskClaims"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import type * as Scope from "effect/Scope"
import { existsSync } from "node:fs"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as Client from "./internal/client.js"
import * as DirectAppend from "./internal/directAppend.js"
import * as ReadOnly from "./internal/readOnly.js"

/**
 * Where and how to open the store.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreConfig {
  /** `$RATCHET_HOME`; a leading `~` is the user's home directory. Created `0700` when missing. */
  readonly directory: string
  /** The database file inside `directory`. Defaults to `ratchet.db`. */
  readonly filename?: string | undefined
  /** `FULL` (the default) survives power loss; `NORMAL` may lose the last commits on power loss. */
  readonly synchronous?: "FULL" | "NORMAL" | undefined
  /** How long a writer waits for another process's lock before `LockTimeout`. Defaults to 5000. */
  readonly busyTimeoutMs?: number | undefined
}

/**
 * The services the SQLite layer provides.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | EventStore.EventStore
  | ReadModel.ReadModels
  | LeaseStore.LeaseStore
  | LessonStore.LessonStore
  | BlobStore.BlobStore
  | TaskClaims.TaskClaims
  | SqlDialect.SqlDialect
  | SqlClient.SqlClient
  | SqliteClient.SqliteClient

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

interface Found {
  readonly code: string
  readonly message: string
}

/** The codes along an error's `cause` chain, outermost first (SqlError → SqliteError → …). */
const codesOf = (cause: unknown): ReadonlyArray<Found> => {
  const found: Array<Found> = []
  let current: unknown = cause
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if ("code" in current && typeof current.code === "string") {
      found.push({ code: current.code, message: current instanceof Error ? current.message : current.code })
    }
    current = "cause" in current ? current.cause : undefined
  }
  return found
}

const messageOf = (cause: unknown): string => {
  let current: unknown = cause
  let message = String(cause)
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof Error && current.message !== "") message = current.message
    current = "cause" in current ? current.cause : undefined
  }
  return message
}

const reasonFor = (code: string, all: ReadonlyArray<Found>) => {
  const errnoDenied = all.some((found) => found.code === "EACCES" || found.code === "EPERM" || found.code === "EROFS")
  // A stale WAL snapshot cannot be waited out: the transaction must start again.
  if (code === "SQLITE_BUSY_SNAPSHOT") return StorageError.Serialization
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) return StorageError.LockTimeout
  if (code === "SQLITE_FULL" || code === "ENOSPC" || code === "EDQUOT") return StorageError.Full
  if (code.startsWith("SQLITE_READONLY") || code === "SQLITE_PERM") return StorageError.ReadOnly
  if (code === "EACCES" || code === "EPERM" || code === "EROFS") return StorageError.ReadOnly
  if (code.startsWith("SQLITE_CANTOPEN")) return errnoDenied ? StorageError.ReadOnly : StorageError.Connection
  if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") return StorageError.Corrupt
  if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") return StorageError.UniqueViolation
  return StorageError.Unknown
}

/**
 * Maps a failure of the SQLite driver (a `SqlError` wrapping better-sqlite3's `SqliteError`, whose
 * `code` is the extended result code) or of the file system to the port's `StorageError`:
 * SQLITE_BUSY* and SQLITE_LOCKED* → LockTimeout (SQLITE_BUSY_SNAPSHOT → Serialization: a stale WAL snapshot
 * cannot be waited out, the transaction must start again); SQLITE_FULL, ENOSPC → Full; SQLITE_READONLY*,
 * SQLITE_PERM, EACCES, EPERM, EROFS (and SQLITE_CANTOPEN caused by one of them) → ReadOnly;
 * SQLITE_CORRUPT*, SQLITE_NOTADB → Corrupt; SQLITE_CONSTRAINT_UNIQUE / PRIMARYKEY →
 * UniqueViolation; SQLITE_CANTOPEN → Connection; anything else → Unknown. A `StorageError` passes
 * through unchanged.
 *
 * @since 0.1.0
 * @category errors
 */
export const classify = (operation: string, cause: unknown): StorageError.StorageError => {
  if (cause instanceof StorageError.StorageError) return cause
  const all = codesOf(cause)
  const primary = all.find((found) => found.code.startsWith("SQLITE_")) ?? all[0]
  if (primary === undefined) {
    return StorageError.make(operation, StorageError.Unknown.make({ code: null, detail: messageOf(cause) }), cause)
  }
  const reason = reasonFor(primary.code, all)
  return StorageError.make(operation, reason.make({ code: primary.code, detail: primary.message }), cause)
}

// ---------------------------------------------------------------------------------------------
// Dialect
// ---------------------------------------------------------------------------------------------

const isSqlError = (error: unknown): error is SqlError.SqlError => Predicate.hasProperty(error, SqlError.SqlErrorTypeId)

/**
 * The SQLite `SqlDialect` over the context's `SqlClient`.
 *
 * Transactions reserve the client's one connection (which also holds back this process's other
 * statements until the transaction ends), run `BEGIN IMMEDIATE` (writes) or `BEGIN` (reads), run
 * the effect with the connection as the transaction connection — so its statements use it and a
 * nested `withTransaction` becomes a savepoint — then COMMIT, or ROLLBACK on failure or
 * interruption. A transaction begun inside another one is a savepoint of it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDialect: Effect.Effect<SqlDialect.Service, never, SqlClient.SqlClient> = Effect.suspend(() => dialectWith(classify))

/** The dialect with its own `classify` (a read-only store's says why it is read-only). */
const dialectWith = (
  classify: (operation: string, cause: unknown) => StorageError.StorageError
): Effect.Effect<SqlDialect.Service, never, SqlClient.SqlClient> => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const transaction = (begin: string) =>
  <A, E, R>(operation: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StorageError.StorageError, R> =>
    Effect.flatMap(Effect.serviceOption(SqlClient.TransactionConnection), (outer) =>
      outer._tag === "Some"
        ? sql.withTransaction(effect).pipe(
          Effect.catchIf(isSqlError, (error) => Effect.fail(classify(operation, error)))
        )
        : Effect.uninterruptibleMask((restore) =>
          Effect.scoped(Effect.gen(function*() {
            const conn = yield* Effect.mapError(restore(sql.reserve), (error) => classify(operation, error))
            yield* Effect.mapError(conn.execute(begin, [], undefined), (error) => classify(operation, error))
            const exit = yield* Effect.exit(
              restore(effect).pipe(Effect.provideService(SqlClient.TransactionConnection, [conn, 1] as const))
            )
            if (Exit.isFailure(exit)) {
              // SQLite may already have rolled back (SQLITE_FULL, SQLITE_BUSY); a failing ROLLBACK then says so.
              yield* Effect.ignore(conn.execute("ROLLBACK", [], undefined))
              return yield* exit
            }
            const committed = yield* Effect.exit(conn.execute("COMMIT", [], undefined))
            if (Exit.isFailure(committed)) {
              yield* Effect.ignore(conn.execute("ROLLBACK", [], undefined))
              return yield* Effect.fail(classify(operation, Cause.squash(committed.cause)))
            }
            return exit.value
          }))
        ))

  return {
    dialect: "sqlite",
    writeTransaction: transaction("BEGIN IMMEDIATE"),
    readTransaction: transaction("BEGIN"),
    classify,
    // BEGIN IMMEDIATE already excludes every other writer, in this process and in others.
    lockForMigration: Effect.void,
    now: Clock.currentTimeMillis
  }
})

/**
 * The SQLite `SqlDialect` alone, over an existing `SqlClient`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerDialect: Layer.Layer<SqlDialect.SqlDialect, never, SqlClient.SqlClient> = Layer.effect(
  SqlDialect.SqlDialect,
  makeDialect
)

// ---------------------------------------------------------------------------------------------
// Opening
// ---------------------------------------------------------------------------------------------

const expandHome = (directory: string): string =>
  directory === "~" ? os.homedir() : directory.startsWith("~/") ? path.join(os.homedir(), directory.slice(2)) : directory

const invalidConfig = (detail: string): StorageError.StorageError =>
  StorageError.make("open", StorageError.Unknown.make({ code: null, detail: `invalid SQLite store configuration: ${detail}` }))

const pragmas = (sql: SqlClient.SqlClient, config: { readonly synchronous: "FULL" | "NORMAL"; readonly busyTimeoutMs: number }) =>
  Effect.gen(function*() {
    // PRAGMA takes no bound parameters: the level is one of two literals and the timeout a checked integer.
    yield* config.synchronous === "FULL" ? sql`PRAGMA synchronous = FULL` : sql`PRAGMA synchronous = NORMAL`
    // The busy timeout is set before the switch to WAL: on a fresh file the switch takes an
    // exclusive lock, and several processes opening the store at once must wait for it with the
    // configured patience rather than the driver's default.
    yield* sql.unsafe(`PRAGMA busy_timeout = ${Math.trunc(config.busyTimeoutMs)}`)
    yield* sql`PRAGMA journal_mode = WAL`
    yield* sql`PRAGMA foreign_keys = ON`
  })

/** A read-only connection sets only what reading needs: the journal mode is the writer's. */
const readOnlyPragmas = (sql: SqlClient.SqlClient, busyTimeoutMs: number) =>
  Effect.gen(function*() {
    yield* sql.unsafe(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`)
    yield* sql`PRAGMA foreign_keys = ON`
  })

/**
 * Opens (creating when missing) the store in `config.directory` and builds every service over
 * it, for the lifetime of the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: StoreConfig
): Effect.Effect<Context.Context<Services>, StorageError.StorageError, Scope.Scope> =>
  Effect.gen(function*() {
    const synchronous = config.synchronous ?? "FULL"
    const busyTimeoutMs = config.busyTimeoutMs ?? 5000
    if (synchronous !== "FULL" && synchronous !== "NORMAL") {
      return yield* invalidConfig(`synchronous must be FULL or NORMAL, got ${String(synchronous)}`)
    }
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 2_147_483_647) {
      return yield* invalidConfig(`busyTimeoutMs must be an integer from 0 to 2147483647, got ${String(busyTimeoutMs)}`)
    }
    const directory = path.resolve(expandHome(config.directory))
    const filename = path.resolve(directory, config.filename ?? "ratchet.db")
    yield* Effect.tryPromise({
      try: () => fs.mkdir(directory, { recursive: true, mode: 0o700 }),
      catch: (cause) => classify("open", cause)
    })
    // Where this process may not write, the store opens read-only so reads still work, and every
    // write fails naming why (see internal/readOnly.ts); a store that does not exist yet cannot be
    // made there at all.
    const readOnly = ReadOnly.whyReadOnly(directory, filename)
    if (readOnly !== null && !existsSync(filename)) {
      return yield* StorageError.make(
        "open",
        StorageError.ReadOnly.make({ code: null, detail: `no store exists at ${filename} and none can be made: ${readOnly}` })
      )
    }
    const classifyHere = readOnly === null ? classify : (operation: string, cause: unknown) => {
      const error = classify(operation, cause)
      return error.reason._tag !== "ReadOnly" ? error : StorageError.make(
        operation,
        StorageError.ReadOnly.make({
          code: error.reason.code,
          detail: `the store ${filename} ($RATCHET_HOME) was opened read-only because ${readOnly}; reads work, nothing can be written`
        }),
        cause
      )
    }
    // better-sqlite3 throws from its constructor and from the WAL pragma (e.g. SQLITE_NOTADB for a
    // file that is not a database); those throws are defects here, classified.
    const handle = yield* Client.make(filename, readOnly === null ? undefined : () => ReadOnly.open(filename, readOnly)).pipe(
      Effect.catchAllDefect((defect) =>
        Effect.fail(
          defect instanceof ReadOnly.PendingWal
            ? StorageError.make("open", StorageError.ReadOnly.make({ code: null, detail: defect.message }), defect)
            : classifyHere("open", defect)
        )
      )
    )
    const client = handle.client
    yield* Effect.mapError(
      readOnly === null ? pragmas(client, { synchronous, busyTimeoutMs }) : readOnlyPragmas(client, busyTimeoutMs),
      (error) => classifyHere("open", error)
    )
    const dialect = yield* dialectWith(classifyHere).pipe(Effect.provideService(SqlClient.SqlClient, client))
    const stores = yield* SqlStore.make.pipe(
      Effect.provideService(SqlClient.SqlClient, client),
      Effect.provideService(SqlDialect.SqlDialect, dialect)
    )
    // The append is one call into the driver (ADR 0021); everything else stays on the client.
    const eventStore: EventStore.Service = { ...stores.eventStore, append: DirectAppend.make(handle, classifyHere) }
    const lessons = yield* SqlLessonStore.make.pipe(
      Effect.provideService(SqlClient.SqlClient, client),
      Effect.provideService(SqlDialect.SqlDialect, dialect)
    )
    const blobs = yield* FileBlobStore.make(path.join(directory, "blobs"))
    return Context.make(SqliteClient.SqliteClient, client).pipe(
      Context.add(SqlClient.SqlClient, client),
      Context.add(SqlDialect.SqlDialect, dialect),
      Context.add(BlobStore.BlobStore, blobs),
      Context.add(EventStore.EventStore, eventStore),
      Context.add(ReadModel.ReadModels, stores.readModels),
      Context.add(LeaseStore.LeaseStore, stores.leaseStore),
      Context.add(LessonStore.LessonStore, lessons),
      // Every runner of a SQLite store shares one machine: claims within the process (ADR 0042).
      Context.add(TaskClaims.TaskClaims, TaskClaims.makeLocal())
    )
  })

/**
 * Every storage service over the SQLite store in `config.directory`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: StoreConfig): Layer.Layer<Services, StorageError.StorageError> =>
  Layer.scopedContext(make(config))

/**
 * The configuration read from the environment: `RATCHET_HOME` (default `~/.ratchet`),
 * `RATCHET_SQLITE_SYNCHRONOUS` (`FULL` | `NORMAL`, default `FULL`) and
 * `RATCHET_SQLITE_BUSY_TIMEOUT_MS` (default 5000).
 *
 * @since 0.1.0
 * @category models
 */
export const config: Config.Config<StoreConfig> = Config.all({
  directory: Config.string("RATCHET_HOME").pipe(Config.withDefault("~/.ratchet")),
  synchronous: Config.literal("FULL", "NORMAL")("RATCHET_SQLITE_SYNCHRONOUS").pipe(Config.withDefault("FULL" as const)),
  busyTimeoutMs: Config.integer("RATCHET_SQLITE_BUSY_TIMEOUT_MS").pipe(Config.withDefault(5000))
})

/**
 * {@link layer} configured from the environment (see {@link config}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<Services, StorageError.StorageError | ConfigError.ConfigError> = Layer
  .unwrapEffect(Effect.map(config, layer))
