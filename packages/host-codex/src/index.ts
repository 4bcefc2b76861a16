/**
 * `@ratchet/host-codex`: the Codex adapter and its hooks.json entries.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as Codex from "./Codex.js"

/**
 * @since 0.1.0
 */
export * as Settings from "./Settings.js"
