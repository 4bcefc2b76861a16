/**
 * `@ratchet/host-claude-code`: the Claude Code adapter and its settings entries.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as ClaudeCode from "./ClaudeCode.js"

/**
 * @since 0.1.0
 */
export * as Sandbox from "./Sandbox.js"

/**
 * @since 0.1.0
 */
export * as Settings from "./Settings.js"

/**
 * @since 0.2.0
 */
export * as Transcript from "./Transcript.js"

/**
 * @since 0.4.0
 */
export * as StreamJson from "./StreamJson.js"
