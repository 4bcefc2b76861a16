/**
 * `@ratchet/host`: the adapter SDK.
 *
 * @since 0.1.0
 */

/**
 * @since 0.4.0
 */
export * as AgentStream from "./AgentStream.js"

/**
 * @since 0.1.0
 */
export * as Guard from "./Guard.js"

/**
 * @since 0.1.0
 */
export * as HostAdapter from "./HostAdapter.js"

/**
 * @since 0.1.0
 */
export * as HookPayload from "./HookPayload.js"

/**
 * @since 0.2.0
 */
export * as HookCommand from "./HookCommand.js"

/**
 * @since 0.1.0
 */
export * as HookSettings from "./HookSettings.js"

/**
 * @since 0.1.0
 */
export * as HostEvent from "./HostEvent.js"

/**
 * @since 0.1.0
 */
export * as HostSandbox from "./HostSandbox.js"

/**
 * @since 0.5.0
 */
export * as NestedAgent from "./NestedAgent.js"

/**
 * @since 0.2.0
 */
export * as ProjectRoot from "./ProjectRoot.js"

/**
 * @since 0.1.0
 */
export * as Shell from "./Shell.js"

/**
 * @since 0.1.0
 */
export * as ToolIntent from "./ToolIntent.js"

/**
 * @since 0.1.0
 */
export * as TurnReport from "./TurnReport.js"
