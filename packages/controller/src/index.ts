/**
 * `@ratchet/controller` — the canonical command API that the `ratchet` CLI, the MCP server and the
 * host hooks transport. So far: the project file (`ProjectFile`) and the checkout's project and
 * workspace identity (`Workspace`).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as ProjectFile from "./ProjectFile.js"
/** @since 0.1.0 */
export * as Workspace from "./Workspace.js"
