/**
 * `@ratchet/storage-postgres` — Ratchet's store on PostgreSQL: the engine-neutral SQL store of
 * `@ratchet/storage` bound to `@effect/sql-pg`, configured from `RATCHET_DATABASE_URL`, with blobs in
 * the database so runners on several machines share one store.
 *
 * @since 0.1.0
 */

/** @since 0.5.0 */
export * as PostgresClaims from "./PostgresClaims.js"
/** @since 0.1.0 */
export * as PostgresStore from "./PostgresStore.js"
