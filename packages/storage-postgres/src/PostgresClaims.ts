/**
 * PostgreSQL's `TaskClaims` (ADR 0042): a claim is a session-level advisory lock, taken with
 * `pg_try_advisory_lock` on one connection this process reserves from the pool the first time it
 * claims, and keeps until the store closes; a wake-up is a `NOTIFY` on the schema's channel.
 *
 * Why an advisory lock rather than `SELECT … FOR UPDATE SKIP LOCKED` on the task's row: a claim must
 * last as long as the runner works on the task, and a row lock held that long would block the
 * runner's own appends, which update that row from other connections of the pool. The advisory lock
 * is the same "skip what another holds" primitive on a key of its own, and PostgreSQL releases it
 * when the session ends, so a runner killed with SIGKILL leaves no claim behind (its lease still
 * holds until its grace deadline).
 *
 * The key is `hashtextextended(schema ∥ project ∥ task, 0)`, a 64-bit key; two tasks whose keys
 * collide only make a runner skip one of them while the other is claimed. `NOTIFY` channels are
 * per database, so the channel carries the schema's name and the payload the project's id;
 * `LISTEN` starts on the first call of any method, before the caller's first listing, so a wake-up
 * sent after that listing is never lost (it is kept until the next {@link Service.awaitWork}).
 *
 * @since 0.5.0
 */
import type * as SqlConnection from "@effect/sql/SqlConnection"
import type * as PgClient from "@effect/sql-pg/PgClient"
import type { StorageError } from "@ratchet/storage/StorageError"
import type * as TaskClaims from "@ratchet/storage/TaskClaims"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"

/**
 * The channel `NOTIFY` uses for the store in `schema`.
 *
 * @since 0.5.0
 * @category models
 */
export const channelOf = (schema: string): string => `ratchet_work_${schema}`.slice(0, 63)

/**
 * The claims of a store in `schema` over `pg`; the reserved connection and the listener live in
 * `scope` (the store's).
 *
 * @since 0.5.0
 * @category constructors
 */
export const make = (
  pg: PgClient.PgClient,
  schema: string,
  scope: Scope.Scope,
  classify: (operation: string, cause: unknown) => StorageError
): Effect.Effect<TaskClaims.Service> =>
  Effect.gen(function*() {
    const channel = channelOf(schema)
    const wakes = yield* Queue.sliding<string>(64)
    // One connection for the process's claims: session-level locks belong to the session that took
    // them. Reserved on first use and kept; a failed reservation is not remembered, the next claim
    // tries again.
    const reserved = yield* SynchronizedRef.make<SqlConnection.Connection | null>(null)
    const connection: Effect.Effect<SqlConnection.Connection, StorageError> = SynchronizedRef.modifyEffect(reserved, (held) =>
      held !== null
        ? Effect.succeed([held, held] as const)
        : Effect.map(Effect.mapError(Scope.extend(pg.reserve, scope), (error) => classify("claim", error)), (made) => [made, made] as const))
    const listening: Effect.Effect<void> = yield* Effect.cached(
      Effect.asVoid(Effect.forkIn(
        Stream.runForEach(pg.listen(channel), (payload) => Queue.offer(wakes, payload)).pipe(
          // A listener that fails (the server went away) leaves waits to their timeouts: claims and
          // leases stay correct, idle runners only wake later.
          Effect.ignore
        ),
        scope
      ))
    )
    const keyOf = (projectId: string, taskId: string) => `${schema}/${projectId}/${taskId}`
    const query = (operation: string, text: string, params: ReadonlyArray<unknown>) =>
      Effect.zipRight(
        listening,
        Effect.flatMap(connection, (conn) => Effect.mapError(conn.execute(text, params, undefined), (error) => classify(operation, error)))
      )
    return {
      tryClaim: (projectId, taskId) =>
        Effect.map(
          query("claim", "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS claimed", [keyOf(projectId, taskId)]),
          (rows) => rows[0]?.claimed === true
        ),
      release: (projectId, taskId) =>
        // Unlocking a key this session does not hold only warns; the answer is not needed.
        Effect.asVoid(query("release claim", "SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS released", [keyOf(projectId, taskId)])),
      announce: (projectId) =>
        // `pg_notify` rather than the client's `notify`: `NOTIFY` takes no bound parameters.
        Effect.zipRight(listening, Effect.mapError(Effect.asVoid(pg`SELECT pg_notify(${channel}, ${projectId})`), (error) => classify("announce", error))),
      awaitWork: (projectId, timeout) =>
        Effect.zipRight(
          listening,
          Effect.asVoid(Effect.timeoutOption(
            Effect.iterate("", { while: (payload) => payload !== projectId, body: () => Queue.take(wakes) }),
            timeout
          ))
        )
    }
  })
