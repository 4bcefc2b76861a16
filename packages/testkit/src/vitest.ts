/**
 * `@ratchet/testkit/vitest` — the parts of the test kit that register vitest tests, so they load
 * only inside vitest (with `vitest` and `@effect/vitest` installed): the storage conformance suite,
 * the host adapter kit, the guard's bypass table and the gate for tests that need PostgreSQL.
 * Everything that runs without vitest is the package root, `@ratchet/testkit`.
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as GuardKit from "./GuardKit.js"
/** @since 0.2.0 */
export * as HostKit from "./HostKit.js"
/** @since 0.2.0 */
export * as Postgres from "./Postgres.js"
/** @since 0.2.0 */
export * as StorageConformance from "./StorageConformance.js"
