/**
 * `@ratchet/lease` — the single-writer lease of a task with fencing: the `LeaseManager` service
 * (acquire, heartbeat, release, explicit takeover after the grace deadline, observe, and a scoped
 * holder that heartbeats in a fiber), the owner identity, the settings and the refusals.
 *
 * It depends on `@ratchet/storage`'s ports only (`EventStore`, `ReadModels`, `LeaseStore`): any
 * store layer that passes the storage conformance suite carries it.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as LeaseError from "./LeaseError.js"
/** @since 0.1.0 */
export * as LeaseManager from "./LeaseManager.js"
/** @since 0.1.0 */
export * as LeaseSettings from "./LeaseSettings.js"
/** @since 0.1.0 */
export * as Owner from "./Owner.js"
