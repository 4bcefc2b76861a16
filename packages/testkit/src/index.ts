/**
 * `@ratchet/testkit` — what Ratchet publishes for testing: the storage conformance suite every
 * store layer runs, its checks and child-process harness, random task histories and event
 * builders, the host adapter kit (`HostKit`) every host adapter runs, and the guard's bypass
 * table (`GuardKit`) every adapter replays through its payloads.
 *
 * `StorageConformance` registers vitest tests, so it needs vitest; a child process of the suite
 * imports `@ratchet/testkit/StorageChild` directly, which does not.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Events from "./Events.js"
/** @since 0.1.0 */
export * as GuardKit from "./GuardKit.js"
/** @since 0.1.0 */
export * as Histories from "./Histories.js"
/** @since 0.1.0 */
export * as HostKit from "./HostKit.js"
/** @since 0.1.0 */
export * as Postgres from "./Postgres.js"
/** @since 0.2.0 */
export * as Signing from "./Signing.js"
/** @since 0.1.0 */
export * as StorageChecks from "./StorageChecks.js"
/** @since 0.1.0 */
export * as StorageChild from "./StorageChild.js"
/** @since 0.1.0 */
export * as StorageConformance from "./StorageConformance.js"
/** @since 0.1.0 */
export * as StorageFaults from "./StorageFaults.js"
