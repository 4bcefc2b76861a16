/**
 * The PostgreSQL engine of Ratchet's store, over `@effect/sql-pg`.
 *
 * {@link layer} connects a pool to one database, keeps every table in one schema (`public` unless
 * told otherwise; created if missing), migrates it, and provides the engine-neutral SQL store
 * (`EventStore`, `ReadModels`), the blob store (in the database, so runners on other machines can
 * read what this one wrote), the {@link SqlDialect} below, and the `SqlClient`/`PgClient` it runs on.
 * {@link layerConfig} reads the same from `RATCHET_DATABASE_URL` (and optionally
 * `RATCHET_DATABASE_SCHEMA`).
 *
 * Constraints the dialect keeps:
 * - The schema is fixed per connection through the `search_path` startup option, so no statement
 *   is qualified and no connection of the pool can see another schema's tables.
 * - A write transaction is `BEGIN … COMMIT` at READ COMMITTED. Writers are ordered by row locks:
 *   the SQL store's first statement in every write transaction updates the LSN counter row
 *   (`ratchet_lsn`), so a second writer waits there until the first commits, and each of its later
 *   statements reads a snapshot taken after that commit: the version, lease and operation checks
 *   never read a row a concurrent writer is about to change, and commit order is LSN order across
 *   processes and machines. Migrations take a transaction-scoped advisory lock instead (the counter
 *   row may not exist yet). Deadlocks and serialisation failures (SQLSTATE 40P01, 40001) are
 *   retried, at most {@link maxAttempts} tries with jittered exponential backoff; a retry re-runs
 *   the whole transaction from `BEGIN`, never a part of it. A nested write transaction is a
 *   savepoint and is not retried on its own: the failure aborts the outer transaction, whose retry
 *   covers it.
 * - A failed `COMMIT` or `ROLLBACK` (the connection dropped mid-transaction) is a typed
 *   `StorageError` (`Connection`), not a defect. The server rolls back a transaction whose
 *   connection dies before `COMMIT` reaches it, and every event committed earlier is intact; an
 *   append is safe to repeat with the same operation id, which tells whether it had landed.
 * - Read transactions are `REPEATABLE READ READ ONLY`: one snapshot, never a lock.
 * - `now` is the database's `clock_timestamp()`, so lease deadlines compare across machines whose
 *   clocks disagree.
 * - {@link classify} maps SQLSTATEs and socket errors to the port's one `StorageError`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import type * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import type * as LessonStore from "@ratchet/storage/LessonStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as SqlAppend from "@ratchet/storage/SqlAppend"
import * as SqlAppendOnce from "@ratchet/storage/SqlAppendOnce"
import * as SqlBlobStore from "@ratchet/storage/SqlBlobStore"
import * as SqlDialect from "@ratchet/storage/SqlDialect"
import * as SqlLessonStore from "@ratchet/storage/SqlLessonStore"
import * as SqlStore from "@ratchet/storage/SqlStore"
import * as StoreSpan from "@ratchet/storage/StoreSpan"
import * as StorageError from "@ratchet/storage/StorageError"
import * as TaskClaims from "@ratchet/storage/TaskClaims"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as PostgresClaims from "./PostgresClaims.js"
import { defaultSchema, type Prepared, prepare } from "./internal/prepare.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** A `postgres://` (or `postgresql://`) URL. Keep it redacted: it usually carries a password. */
  readonly url: Redacted.Redacted<string> | string
  /** The schema every table lives in; created when missing. Defaults to `public`. */
  readonly schema?: string | undefined
  /** The pool size. Defaults to 10. */
  readonly maxConnections?: number | undefined
  /**
   * A URL whose connections are sessions of their own, for the task claims and the runners'
   * wake-ups (ADR 0042): session-level advisory locks and `LISTEN` need a session that stays one
   * server connection, which a pooler in transaction mode (PgBouncer's `pool_mode = transaction`)
   * does not give. Name the server directly, or a session-mode pool, when `url` goes through such a
   * pooler. Defaults to `url`.
   */
  readonly sessionUrl?: Redacted.Redacted<string> | string | undefined
}

/**
 * Everything {@link layer} provides.
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
  | PgClient.PgClient

/**
 * How many times a write transaction runs at most when PostgreSQL reports a serialisation failure
 * or a deadlock.
 *
 * @since 0.1.0
 * @category models
 */
export const maxAttempts = 5

/**
 * The environment variable {@link layerConfig} reads the database URL from.
 *
 * @since 0.1.0
 * @category models
 */
export const urlVariable = "RATCHET_DATABASE_URL"

/**
 * The environment variable {@link layerConfig} reads the schema from (optional).
 *
 * @since 0.1.0
 * @category models
 */
export const schemaVariable = "RATCHET_DATABASE_SCHEMA"

/**
 * The variable {@link layerConfig} reads {@link Options.sessionUrl} from.
 *
 * @since 0.5.0
 * @category models
 */
export const sessionUrlVariable = "RATCHET_DATABASE_SESSION_URL"


/**
 * The first key of every advisory lock this engine takes ("RATC"), so they cannot collide with an
 * application's single-key locks; the second key names the purpose and the schema.
 */
const lockClass = 0x52415443
const lockPurpose = { schema: 1, migrate: 2 } as const

/**
 * A 32-bit FNV-1a hash of the schema name as a signed int4: stores in different schemas of one
 * database never wait for each other's locks.
 */
const schemaKey = (schema: string): number => {
  let hash = 0x811c9dc5
  for (let index = 0; index < schema.length; index++) {
    hash ^= schema.charCodeAt(index)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash | 0
}

/** Folds the purpose into the low bits so (class, key) stays a pair of int4 values. */
const lockKey = (schema: string, purpose: number): number => (schemaKey(schema) ^ purpose) | 0

// ---------------------------------------------------------------------------------------------
// classify
// ---------------------------------------------------------------------------------------------

const isSqlError = (u: unknown): u is SqlError => Predicate.isTagged(u, "SqlError")

const isStorageError = (u: unknown): u is StorageError.StorageError =>
  Predicate.isTagged(u, "@ratchet/storage/StorageError")

/** Socket-level failures: the server went away or was never there. */
const connectionErrnos: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

/** What `pg` and `@effect/sql-pg` say when a connection dies without an SQLSTATE. */
const connectionMessage =
  /Connection terminated|not queryable|Connection timed out|timeout expired|timeout exceeded when trying to connect|connection error|Failed to connect|Failed to acquire connection/i

interface Found {
  readonly code: string | null
  readonly detail: string
  readonly messages: ReadonlyArray<string>
}

/**
 * Walks `SqlError.cause`, `Error.cause` and `AggregateError.errors` down to the driver's error:
 * the first string `code` wins (an SQLSTATE or an errno), its message is the detail.
 */
const driverFailure = (cause: unknown): Found => {
  const messages: Array<string> = []
  let current: unknown = cause
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    const message = Predicate.hasProperty(current, "message") && typeof current.message === "string"
      ? current.message
      : typeof current === "string"
      ? current
      : undefined
    if (message !== undefined && message !== "") messages.push(message)
    if (Predicate.hasProperty(current, "code") && typeof current.code === "string" && current.code !== "") {
      return { code: current.code, detail: message ?? current.code, messages }
    }
    if (Predicate.hasProperty(current, "cause") && current.cause !== undefined) {
      current = current.cause
    } else if (
      Predicate.hasProperty(current, "errors") && Array.isArray(current.errors) && current.errors.length > 0
    ) {
      current = current.errors[0]
    } else {
      break
    }
  }
  return { code: null, detail: messages[messages.length - 1] ?? String(cause), messages }
}

type ReasonTag = StorageError.Reason["_tag"]

const reasonOfCode = (code: string): ReasonTag => {
  switch (code) {
    case "40001": // serialization_failure
    case "40P01": // deadlock_detected
      return "Serialization"
    case "23505": // unique_violation
      return "UniqueViolation"
    case "55P03": // lock_not_available
    case "57014": // query_canceled (statement_timeout, lock_timeout)
      return "LockTimeout"
    case "25006": // read_only_sql_transaction
    case "42501": // insufficient_privilege: the role may not write here
      return "ReadOnly"
    case "53100": // disk_full
      return "Full"
    case "XX001": // data_corrupted
    case "XX002": // index_corrupted
      return "Corrupt"
    case "57P01": // admin_shutdown (pg_terminate_backend, a fast shutdown)
    case "57P02": // crash_shutdown
    case "57P03": // cannot_connect_now (starting up, in recovery)
    case "53300": // too_many_connections
      return "Connection"
  }
  if (code.startsWith("08") || connectionErrnos.has(code)) return "Connection"
  return "Unknown"
}

const reason = (tag: ReasonTag, code: string | null, detail: string): StorageError.Reason => {
  switch (tag) {
    case "Connection":
      return StorageError.Connection.make({ code, detail })
    case "LockTimeout":
      return StorageError.LockTimeout.make({ code, detail })
    case "Serialization":
      return StorageError.Serialization.make({ code, detail })
    case "UniqueViolation":
      return StorageError.UniqueViolation.make({ code, detail })
    case "ReadOnly":
      return StorageError.ReadOnly.make({ code, detail })
    case "Full":
      return StorageError.Full.make({ code, detail })
    case "Corrupt":
      return StorageError.Corrupt.make({ code, detail })
    case "SchemaTooNew":
      return StorageError.SchemaTooNew.make({ code, detail })
    case "Unknown":
      return StorageError.Unknown.make({ code, detail })
  }
}

/**
 * Maps a failure of the PostgreSQL driver (usually an `SqlError` whose `cause` is a `pg` error
 * carrying an SQLSTATE in `code`, or a socket error carrying an errno) to a `StorageError`. A
 * `StorageError` passes through unchanged.
 *
 * | SQLSTATE / errno | reason |
 * | --- | --- |
 * | 40001, 40P01 | Serialization |
 * | 23505 | UniqueViolation |
 * | 55P03, 57014 | LockTimeout |
 * | 25006, 42501 | ReadOnly |
 * | 53100 | Full |
 * | 08xxx, 57P01–57P03, 53300, ECONNREFUSED, ECONNRESET, …, "Connection terminated" | Connection |
 * | XX001, XX002 | Corrupt |
 * | anything else | Unknown |
 *
 * @since 0.1.0
 * @category errors
 */
export const classify = (operation: string, cause: unknown): StorageError.StorageError => {
  if (isStorageError(cause)) return cause
  const found = driverFailure(cause)
  const tag = found.code !== null
    ? reasonOfCode(found.code)
    : found.messages.some((message) => connectionMessage.test(message))
    ? "Connection"
    : "Unknown"
  return StorageError.make(operation, reason(tag, found.code, found.detail), cause)
}

// ---------------------------------------------------------------------------------------------
// the dialect
// ---------------------------------------------------------------------------------------------

const isSerialization = (u: unknown): boolean => isStorageError(u) && u.reason._tag === "Serialization"

const retrySchedule = Schedule.exponential("10 millis", 2).pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(maxAttempts - 1))
)

/**
 * `withTransaction` turns a failed COMMIT or ROLLBACK into a defect; a dropped connection is an
 * expected failure of a store, so such defects become typed again, and every `SqlError` is
 * classified.
 */
const typed = <A, E, R>(
  operation: string,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, SqlError> | StorageError.StorageError, R> =>
  effect.pipe(
    Effect.catchSomeDefect((defect) =>
      isSqlError(defect) ? Option.some(Effect.fail(classify(operation, defect))) : Option.none()
    ),
    Effect.mapError((error) =>
      (isSqlError(error) ? classify(operation, error) : error) as Exclude<E, SqlError> | StorageError.StorageError
    )
  )

const inTransaction: Effect.Effect<boolean> = Effect.map(
  Effect.serviceOption(SqlClient.TransactionConnection),
  Option.isSome
)

/**
 * The PostgreSQL dialect over a client whose connections already have the store's schema first on
 * their `search_path`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeDialect = (sql: SqlClient.SqlClient, schema: string): SqlDialect.Service => {
  const migrationLock = sql`SELECT pg_advisory_xact_lock(${lockClass}::int4, ${
    lockKey(schema, lockPurpose.migrate)
  }::int4)`

  const writeTransaction = <A, E, R>(
    operation: string,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | StorageError.StorageError, R> =>
    Effect.flatMap(inTransaction, (nested): Effect.Effect<A, E | StorageError.StorageError, R> => {
      const once = typed(operation, sql.withTransaction(effect))
      return nested ? once : Effect.retry(once, { schedule: retrySchedule, while: isSerialization })
    })

  const readTransaction = <A, E, R>(
    operation: string,
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<A, E | StorageError.StorageError, R> =>
    Effect.flatMap(inTransaction, (nested): Effect.Effect<A, E | StorageError.StorageError, R> =>
      nested
        ? effect
        : typed(
          operation,
          sql.withTransaction(Effect.zipRight(sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`, effect))
        ))

  const now = sql<{ readonly now: string | number }>`SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now`
    .pipe(
      Effect.mapError((error) => classify("now", error)),
      Effect.flatMap((rows) => {
        const value = Number(rows[0]?.now)
        return Number.isSafeInteger(value)
          ? Effect.succeed(value)
          : Effect.fail(
            StorageError.make(
              "now",
              StorageError.Unknown.make({ code: null, detail: `the database clock returned ${String(rows[0]?.now)}` })
            )
          )
      })
    )

  return {
    dialect: "pg",
    writeTransaction,
    readTransaction,
    classify,
    lockForMigration: Effect.asVoid(Effect.mapError(migrationLock, (error) => classify("migrate", error))),
    now
  }
}

/** Creates the schema once, under a lock, so two processes opening a fresh store both succeed. */
const ensureSchema = (sql: SqlClient.SqlClient, schema: string): Effect.Effect<void, StorageError.StorageError> =>
  schema === defaultSchema
    ? Effect.void
    : typed(
      "create schema",
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${lockClass}::int4, ${lockKey(schema, lockPurpose.schema)}::int4)`
        // Checked first: CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege.
        const found = yield* sql`SELECT 1 AS found FROM pg_namespace WHERE nspname = ${schema}`
        if (found.length === 0) yield* sql`CREATE SCHEMA ${sql(schema)}`
      }))
    )

// ---------------------------------------------------------------------------------------------
// configuration
// ---------------------------------------------------------------------------------------------

const build = (prepared: Prepared): Layer.Layer<Services, StorageError.StorageError> => {
  const client = PgClient.layer({
    url: prepared.url,
    maxConnections: prepared.maxConnections,
    applicationName: "ratchet"
  }).pipe(Layer.mapError((error) => classify("connect", error)))
  const dialect = Layer.effect(
    SqlDialect.SqlDialect,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* ensureSchema(sql, prepared.schema)
      return makeDialect(sql, prepared.schema)
    })
  )
  const engine = Layer.provideMerge(dialect, client)
  // Which runner works on which task, and the wake-up of idle runners (ADR 0042).
  // With a session URL they get a small pool of their own there: one session for the claims, one
  // for LISTEN.
  const claimsClient: Effect.Effect<PgClient.PgClient, StorageError.StorageError, PgClient.PgClient | Scope.Scope> = prepared.sessionUrl === null
    ? PgClient.PgClient
    : Effect.map(
      Layer.build(PgClient.layer({ url: prepared.sessionUrl, maxConnections: 2, applicationName: "ratchet-claims" })),
      (context) => Context.get(context, PgClient.PgClient)
    ).pipe(Effect.mapError((error) => classify("connect", error)))
  const claims = Layer.scoped(
    TaskClaims.TaskClaims,
    Effect.flatMap(Effect.zip(claimsClient, Effect.scope), ([pg, scope]) => PostgresClaims.make(pg, prepared.schema, scope, classify))
  )
  // Fresh: layers are memoised by reference, and two stores in one graph must not share services.
  return Layer.mergeAll(Layer.fresh(stores), Layer.fresh(SqlBlobStore.layer), Layer.fresh(SqlLessonStore.layer), claims).pipe(
    Layer.provideMerge(engine)
  )
}

/** Branches remembered for the one-statement append; the hot set is the tasks this process runs. */
const rememberedBranches = 256

/**
 * `SqlStore`'s services, with the append in one round trip when it can be (ADR 0021): decided and
 * folded against the branch as this store's last append to it left it, and sent as one call of
 * `ratchet_append`, which lands it only if that is still the stored state. Otherwise — a branch not
 * remembered, another writer in between, a lease event, a replay, a refusal — `SqlStore`'s
 * transaction runs, and its answer is the reference.
 */
const stores: Layer.Layer<
  EventStore.EventStore | ReadModel.ReadModels | LeaseStore.LeaseStore,
  StorageError.StorageError,
  SqlClient.SqlClient | SqlDialect.SqlDialect
> = Layer.effectContext(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const branches = new Map<string, SqlAppendOnce.BranchState>()
  const keyOf = (streamId: string, branch: string) => `${streamId}\u0000${branch}`
  const remember = (state: SqlAppendOnce.BranchState) => {
    const key = keyOf(state.streamId, state.branch)
    branches.delete(key)
    branches.set(key, state)
    if (branches.size > rememberedBranches) {
      const oldest = branches.keys().next()
      if (oldest.done !== true) branches.delete(oldest.value)
    }
  }
  const inner = yield* SqlStore.makeWith({ appended: remember })
  // Only outside a caller's transaction (see `append`), so a serialization failure is retried whole.
  const call = (plan: string) =>
    Effect.retry(typed("append", sql<{ readonly first: string | number | null }>`SELECT ratchet_append(${plan}) AS first`), {
      schedule: retrySchedule,
      while: isSerialization
    })
  const append: EventStore.Service["append"] = (request) =>
    Effect.flatMap(Effect.zip(SqlAppend.prepare(request), inTransaction), ([prepared, nested]) => {
      const key = keyOf(prepared.streamId, prepared.branch)
      // Inside a caller's transaction nothing may be remembered: that transaction can still roll
      // back, and a later one-call append would be decided against a state that never committed.
      // Which path an append took goes on the trace's append span (ADR 0036): one statement that
      // commits on its own, or the full transaction.
      const path = (name: "one-call" | "full" | "nested") =>
        StoreSpan.annotate(name === "one-call"
          ? { "db.system": "postgresql", "ratchet.append.path": name, "ratchet.statements": 1, "ratchet.commits": 1 }
          : { "db.system": "postgresql", "ratchet.append.path": name })
      if (nested) {
        branches.delete(key)
        return Effect.zipRight(path("nested"), Effect.ensuring(inner.eventStore.append(request), Effect.sync(() => branches.delete(key))))
      }
      const one = SqlAppendOnce.oneCall(prepared, branches.get(key))
      if (one === undefined) return Effect.zipRight(path("full"), inner.eventStore.append(request))
      return Effect.flatMap(call(one.plan), (rows) => {
        const first = rows[0]?.first
        if (first === null || first === undefined) {
          branches.delete(key)
          return Effect.zipRight(path("full"), inner.eventStore.append(request))
        }
        const landed = one.landed(Number(first))
        remember(landed.state)
        return Effect.as(path("one-call"), landed.result)
      })
    })
  return Context.make(EventStore.EventStore, { ...inner.eventStore, append }).pipe(
    Context.add(ReadModel.ReadModels, inner.readModels),
    Context.add(LeaseStore.LeaseStore, inner.leaseStore)
  )
}))

/**
 * The PostgreSQL store: connects, creates the schema if missing, migrates, and provides the
 * `EventStore`, `ReadModels`, `LeaseStore`, `LessonStore`, `BlobStore`, `TaskClaims` (ADR 0042), the dialect and the clients. A malformed URL or schema
 * name is a `ConfigError` naming the field; an unreachable server, a refused login or a store
 * written by a newer Ratchet is a `StorageError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Services, StorageError.StorageError | ConfigError.ConfigError> =>
  Either.match(prepare(options, "url", "schema"), {
    onLeft: (error): Layer.Layer<Services, StorageError.StorageError | ConfigError.ConfigError> => Layer.fail(error),
    onRight: build
  })

/**
 * {@link layer} configured from the environment: `RATCHET_DATABASE_URL` (required, a
 * `postgres://` URL), `RATCHET_DATABASE_SCHEMA` (optional, default `public`) and
 * `RATCHET_DATABASE_SESSION_URL` (optional: {@link Options.sessionUrl}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<Services, StorageError.StorageError | ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.gen(function*() {
    const url = yield* Config.redacted(urlVariable)
    const schema = yield* Config.option(Config.string(schemaVariable))
    const sessionUrl = yield* Config.option(Config.redacted(sessionUrlVariable))
    return Either.match(prepare({ url, schema: Option.getOrUndefined(schema), sessionUrl: Option.getOrUndefined(sessionUrl) }, urlVariable, schemaVariable, sessionUrlVariable), {
      onLeft: (error): Layer.Layer<Services, StorageError.StorageError | ConfigError.ConfigError> => Layer.fail(error),
      onRight: build
    })
  })
)
