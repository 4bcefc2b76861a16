/**
 * The store's one SQLite connection, shared by two ways in: the `@effect/sql` client (reads,
 * migrations, forks, heartbeats, everything but the append) and the append's direct path
 * (`directAppend.ts`), which runs one synchronous better-sqlite3 transaction.
 *
 * `@effect/sql-sqlite-node`'s `SqliteClient.make` keeps its `Database` to itself, so this module
 * builds the same client over a `Database` it opens and keeps: the same statement compiler, a
 * cache of prepared statements per connection, and one permit that serialises the connection.
 * The direct path takes the same permit, so it never runs inside another fiber's transaction.
 * The result is a genuine `SqliteClient` (its tag, `export`, `backup`, `loadExtension`), so what
 * depends on `SqlClient` or `SqliteClient` sees no difference.
 *
 * @internal
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as Client from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import Sqlite from "better-sqlite3"
import * as Cache from "effect/Cache"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"

export interface Handle {
  readonly client: SqliteClient.SqliteClient
  readonly db: Sqlite.Database
  /**
   * Runs `effect` holding the connection: outside any transaction of this fiber it takes the
   * connection's permit; inside one, the fiber already holds it.
   */
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

type Row = Record<string, unknown>

/**
 * Opens `filename` (without switching to WAL: the store sets its pragmas itself) for the scope, or
 * wraps the connection `open` makes (a read-only one).
 */
export const make = (filename: string, open: () => Sqlite.Database = () => new Sqlite(filename)): Effect.Effect<Handle, never, Scope.Scope> =>
  Effect.gen(function*() {
    const compiler = Statement.makeCompilerSqlite()
    const db = open()
    yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
    const prepareCache = yield* Cache.make({
      capacity: 200,
      timeToLive: Duration.minutes(10),
      lookup: (sql: string) =>
        Effect.try({
          try: () => db.prepare(sql),
          catch: (cause) => new SqlError({ cause, message: "Failed to prepare statement " })
        })
    })

    const runStatement = (statement: Sqlite.Statement, params: ReadonlyArray<unknown>, raw: boolean) =>
      Effect.withFiberRuntime<ReadonlyArray<Row>, SqlError>((fiber) => {
        if (Context.get(fiber.currentContext, Client.SafeIntegers)) statement.safeIntegers(true)
        try {
          if (statement.reader) return Effect.succeed(statement.all(...params) as ReadonlyArray<Row>)
          const result = statement.run(...params)
          return Effect.succeed(raw ? result as unknown as ReadonlyArray<Row> : [])
        } catch (cause) {
          return Effect.fail(new SqlError({ cause, message: "Failed to execute statement" }))
        }
      })

    const run = (sql: string, params: ReadonlyArray<unknown>, raw = false) =>
      Effect.flatMap(prepareCache.get(sql), (statement) => runStatement(statement, params, raw))

    const connection: Connection = {
      execute: (sql, params, transformRows) =>
        transformRows ? Effect.map(run(sql, params), transformRows) : run(sql, params),
      executeRaw: (sql, params) => run(sql, params, true),
      executeValues: (sql, params) =>
        Effect.acquireUseRelease(
          prepareCache.get(sql),
          (statement) =>
            Effect.try({
              try: () => {
                if (statement.reader) {
                  statement.raw(true)
                  return statement.all(...params) as ReadonlyArray<ReadonlyArray<unknown>>
                }
                statement.run(...params)
                return []
              },
              catch: (cause) => new SqlError({ cause, message: "Failed to execute statement" })
            }),
          (statement) => Effect.sync(() => statement.reader && statement.raw(false))
        ),
      executeUnprepared: (sql, params, transformRows) => {
        const effect = Effect.flatMap(
          Effect.try({
            try: () => db.prepare(sql),
            catch: (cause) => new SqlError({ cause, message: "Failed to prepare statement " })
          }),
          (statement) => runStatement(statement, params ?? [], false)
        )
        return transformRows ? Effect.map(effect, transformRows) : effect
      },
      // Streaming queries are not offered, exactly as in @effect/sql-sqlite-node, whose client this
      // mirrors: the store reads the log in pages of ordinary queries and never asks for a stream.
      executeStream: () => Effect.dieMessage("SqliteStore's client runs no streaming queries: read in pages (as @effect/sql-sqlite-node does)") as never
    }

    const semaphore = yield* Effect.makeSemaphore(1)
    const acquirer = semaphore.withPermits(1)(Effect.succeed(connection))
    const transactionAcquirer = Effect.uninterruptibleMask((restore) =>
      Effect.as(
        Effect.zipRight(
          restore(semaphore.take(1)),
          Effect.tap(Effect.scope, (scope) => Scope.addFinalizer(scope, semaphore.release(1)))
        ),
        connection
      )
    )
    const base = yield* Client.make({
      acquirer,
      compiler,
      transactionAcquirer,
      spanAttributes: [["db.system.name", "sqlite"]]
    }).pipe(Effect.provide(Reactivity.layer))
    const client: SqliteClient.SqliteClient = Object.assign(base, {
      [SqliteClient.TypeId]: SqliteClient.TypeId,
      config: { filename },
      export: Effect.flatMap(acquirer, () =>
        Effect.try({
          try: () => db.serialize() as Uint8Array,
          catch: (cause) => new SqlError({ cause, message: "Failed to export database" })
        })),
      backup: (destination: string) =>
        Effect.flatMap(acquirer, () =>
          Effect.tryPromise({
            try: () => db.backup(destination),
            catch: (cause) => new SqlError({ cause, message: "Failed to backup database" })
          })),
      loadExtension: (path: string) =>
        Effect.flatMap(acquirer, () =>
          Effect.zipRight(
            Effect.try({
              try: () => db.loadExtension(path),
              catch: (cause) => new SqlError({ cause, message: "Failed to load extension" })
            }),
            prepareCache.invalidateAll
          ))
    }) as SqliteClient.SqliteClient

    const exclusive = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.flatMap(
        Effect.serviceOption(Client.TransactionConnection),
        (outer) => outer._tag === "Some" ? effect : semaphore.withPermits(1)(effect)
      )
    return { client, db, exclusive }
  })
