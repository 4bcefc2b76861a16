/**
 * Ratchet's entries in Codex's hooks file (`.codex/hooks.json` in a project, `~/.codex/hooks.json`
 * for the user), through the shared `HookSettings` of `@ratchet/host`: merged in idempotently,
 * keeping every other hook, and removed without touching anything that is not ours. Codex asks the
 * user to review new or changed hooks (`/hooks`) before it runs them.
 *
 * SessionEnd releases the session's writer lease; Codex caps its hooks at 3 s (1 s by default),
 * so its entry asks for the 3 s, far above the hook's time.
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
export const events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "SubagentStop", "SessionEnd"] as const

/**
 * Timeouts, in seconds, of the events Codex caps below the shared default.
 *
 * @since 0.1.0
 * @category constants
 */
export const timeouts: Readonly<Record<string, number>> = { SessionEnd: 3 }

/**
 * Our entries' operations: `isOurs(hook)`, `install(content, command)`, `uninstall(content)` and
 * `countOurs(content)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const { countOurs, install, isOurs, uninstall } = HookSettings.make({ host: "codex", events, timeouts })
