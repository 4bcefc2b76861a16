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
 * collide only make a runner skip one of them while the other is claimed.
 *
 * A claim is not re-entrant, as the local claims are not (the contract test in
 * `@ratchet/testkit/ClaimsConformance` holds both to it): PostgreSQL's advisory locks stack within a
 * session, so a second claim of a held task by this process would succeed and need two releases,
 * and one release would leave the task claimed until the runner exits. The process keeps the set of
 * keys it holds and answers a second claim `false` without asking the server. A reserved connection
 * that fails with a connection error is dropped (its session, and so its claims, are gone) and the
 * set cleared; the next claim reserves a new one, rather than every claim failing until restart.
 *
 * `NOTIFY` channels are per database, so the channel carries the schema's name (a digest of it where
 * the name would pass PostgreSQL's 63-byte identifier limit) and the payload the project's id;
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
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import { createHash } from "node:crypto"

/**
 * The channel `NOTIFY` uses for the store in `schema`.
 *
 * @since 0.5.0
 * @category models
 */
export const channelOf = (schema: string): string => {
  const plain = `ratchet_work_${schema}`
  // PostgreSQL truncates a longer identifier, and two long schema names sharing a prefix would share
  // a channel: keep a prefix for the reader and make the rest a digest of the whole name.
  return Buffer.byteLength(plain, "utf8") <= 63
    ? plain
    : `ratchet_work_${schema.slice(0, 24).replace(/[^A-Za-z0-9_]/g, "_")}_${createHash("sha256").update(schema).digest("hex").slice(0, 24)}`
}

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
    // them. Reserved on first use and kept, in a scope of its own so that a dead one is given back
    // to the pool when dropped; a failed reservation is not remembered, the next claim tries again.
    const reserved = yield* SynchronizedRef.make<{ readonly conn: SqlConnection.Connection; readonly scope: Scope.CloseableScope } | null>(null)
    const connection: Effect.Effect<SqlConnection.Connection, StorageError> = SynchronizedRef.modifyEffect(reserved, (current) =>
      current !== null
        ? Effect.succeed([current.conn, current] as const)
        : Effect.flatMap(Scope.fork(scope, ExecutionStrategy.sequential), (own) =>
          Effect.mapBoth(Scope.extend(pg.reserve, own), {
            onFailure: (error) => classify("claim", error),
            onSuccess: (conn) => [conn, { conn, scope: own }] as const
          })))
    const drop: Effect.Effect<void> = SynchronizedRef.updateEffect(reserved, (current) =>
      current === null ? Effect.succeed(null) : Effect.as(Scope.close(current.scope, Exit.void), null))
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
    // The keys this process's session holds (see the module comment: claims are not re-entrant).
    const held = new Set<string>()
    // One claim or release at a time in this process, so that two fibers cannot both find a key
    // unheld and both be granted PostgreSQL's re-entrant lock.
    const serial = yield* Effect.makeSemaphore(1)
    const query = (operation: string, text: string, params: ReadonlyArray<unknown>) =>
      Effect.zipRight(
        listening,
        Effect.flatMap(connection, (conn) =>
          Effect.tapError(
            Effect.mapError(conn.execute(text, params, undefined), (error) => classify(operation, error)),
            (error) =>
              // The session is gone and its claims with it: reserve a new one next time.
              error.reason._tag === "Connection"
                ? Effect.zipRight(drop, Effect.sync(() => held.clear()))
                : Effect.void
          ))
      )
    return {
      tryClaim: (projectId, taskId) => {
        const key = keyOf(projectId, taskId)
        return serial.withPermits(1)(Effect.suspend(() => held.has(key) ? Effect.succeed(false) : Effect.map(
          query("claim", "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS claimed", [key]),
          (rows) => {
            const claimed = rows[0]?.claimed === true
            if (claimed) held.add(key)
            return claimed
          }
        )))
      },
      release: (projectId, taskId) => {
        const key = keyOf(projectId, taskId)
        // Not held by this process: nothing to unlock (and no stacked lock to undo).
        return serial.withPermits(1)(Effect.suspend(() =>
          !held.has(key) ? Effect.void : Effect.asVoid(Effect.zipRight(
            Effect.sync(() => held.delete(key)),
            query("release claim", "SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS released", [key])
          ))))
      },
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
