/**
 * Ratchet's entries in Claude Code's settings (`.claude/settings.json` in a project,
 * `~/.claude/settings.json` for the user), through the shared `HookSettings` of `@ratchet/host`:
 * merged in idempotently, keeping every other hook and setting, and removed without touching
 * anything that is not ours.
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
export const events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "SessionEnd"] as const

/**
 * Our entries' operations: `isOurs(hook)`, `install(settings, command)`, `uninstall(settings)`
 * and `countOurs(settings)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const { countOurs, install, isOurs, uninstall } = HookSettings.make({ host: "claude-code", events })
