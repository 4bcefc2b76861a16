/**
 * Ratchet's entries in Codex's hooks file (`.codex/hooks.json` in a project, `~/.codex/hooks.json`
 * for the user), through the shared `HookSettings` of `@ratchet/host`: merged in idempotently,
 * keeping every other hook, and removed without touching anything that is not ours. Codex asks the
 * user to review new or changed hooks (`/hooks`) before it runs them.
 *
 * SessionEnd is not registered: Codex caps its hooks at 3 s and Ratchet does not act on it yet.
 *
 * @since 0.1.0
 */
import * as HookSettings from "@ratchet/host/HookSettings"

/**
 * The events Ratchet listens to, in the order they are written.
 *
 * @since 0.1.0
 * @category constants
 */
export const events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "SubagentStop"] as const

/**
 * Our entries' operations: `isOurs(hook)`, `install(content, command)`, `uninstall(content)` and
 * `countOurs(content)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const { countOurs, install, isOurs, uninstall } = HookSettings.make({ host: "codex", events })
