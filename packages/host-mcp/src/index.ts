/**
 * `@ratchet/host-mcp`: Ratchet's MCP server. An agent reads a task's status, gates, log, evidence
 * and run, creates tasks, asks and answers the brief's questions, proposes specs and plans and
 * starts runs, as Model Context Protocol tools and resources over the controller. No tool
 * approves anything.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
export * as Identity from "./Identity.js"

/**
 * @since 0.1.0
 */
export * as McpError from "./McpError.js"

/**
 * @since 0.1.0
 */
export * as McpServer from "./McpServer.js"

/**
 * @since 0.1.0
 */
export * as Resources from "./Resources.js"

/**
 * @since 0.1.0
 */
export * as RunStarter from "./RunStarter.js"

/**
 * @since 0.1.0
 */
export * as Tools from "./Tools.js"

/**
 * @since 0.2.0
 */
export * as ToolOutput from "./ToolOutput.js"
