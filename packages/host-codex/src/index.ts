/**
 * `@ratchet/host-codex`: the Codex adapter, its hooks.json entries and its config.toml sandbox.
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
export * as ConfigToml from "./ConfigToml.js"

/**
 * @since 0.1.0
 */
export * as Sandbox from "./Sandbox.js"

/**
 * @since 0.1.0
 */
export * as Settings from "./Settings.js"

/**
 * @since 0.4.0
 */
export * as ExecJson from "./ExecJson.js"
