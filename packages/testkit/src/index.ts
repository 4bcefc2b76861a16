/**
 * `@ratchet/testkit` — what Ratchet publishes for testing: random task histories and event
 * builders, the storage conformance checks as plain Effects, the child-process harness of the
 * multi-process checks, and the faults a store test injects.
 *
 * Nothing the root loads imports vitest, so it works in any process: a script, a benchmark, another
 * test runner, the child process of a multi-process check. What registers vitest tests — the
 * storage conformance suite, the host adapter kit, the guard's bypass table and the PostgreSQL
 * gate — is `@ratchet/testkit/vitest`.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Events from "./Events.js"
/** @since 0.1.0 */
export * as Histories from "./Histories.js"
/** @since 0.3.0 */
export * as LessonChecks from "./LessonChecks.js"
/** @since 0.3.0 */
export * as Lessons from "./Lessons.js"
/** @since 0.2.0 */
export * as Signing from "./Signing.js"
/** @since 0.5.0 */
export * as StandIn from "./StandIn.js"
/** @since 0.1.0 */
export * as StorageChecks from "./StorageChecks.js"
/** @since 0.1.0 */
export * as StorageChild from "./StorageChild.js"
/** @since 0.1.0 */
export * as StorageFaults from "./StorageFaults.js"
