/**
 * Ratchet's entries in Codex's hooks file (`.codex/hooks.json` in a project, `~/.codex/hooks.json`
 * for the user), through the shared `HookSettings` of `@ratchet/host`: merged in idempotently,
 * keeping every other hook, and removed without touching anything that is not ours. Codex asks the
 * user to review new or changed hooks (`/hooks`) before it runs them.
 *
 * SessionEnd releases the session's writer lease; Codex caps its hooks at 3 s (1 s by default),
 * so its entry asks for the 3 s, far above the hook's time.
 *
 * Only what can change an answer or a record starts a hook process (ADR 0026, ADR 0030):
 * PreToolUse and PermissionRequest match `Bash` and `apply_patch` (`Codex.judgedTools`; every other
 * tool is allowed in every state); PostToolUse matches every tool, because the other tools Codex
 * reports to hooks (MCP and other function tools) end in the worker's `toolUsed`, and no other
 * Codex event tells of them (it has no failure event, and its transcript's format is its own);
 * SessionStart, UserPromptSubmit, Stop and SessionEnd have no matcher; SubagentStop is not
 * installed (a subagent's stop is always allowed and records nothing).
 *
 * @since 0.1.0
 */
import * as HookSettings from "@ratchet/host/HookSettings"
import * as Codex from "./Codex.js"

/**
 * The events Ratchet listens to, in the order they are written.
 *
 * @since 0.1.0
 * @category constants
 */
export const events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "Stop", "SessionEnd"] as const

/**
 * Timeouts, in seconds, of the events Codex caps below the shared default.
 *
 * @since 0.1.0
 * @category constants
 */
export const timeouts: Readonly<Record<string, number>> = { SessionEnd: 3 }

/**
 * The matcher of each event that has one: the tools whose call Ratchet may refuse.
 *
 * @since 0.2.0
 * @category constants
 */
export const matchers: Readonly<Record<string, string>> = {
  PreToolUse: HookSettings.toolMatcher(Codex.judgedTools),
  PermissionRequest: HookSettings.toolMatcher(Codex.judgedTools)
}

/**
 * Our entries' operations: `isOurs(hook)`, `install(content, command)`, `uninstall(content)` and
 * `countOurs(content)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const { countOurs, install, isOurs, runsHook, uninstall } = HookSettings.make({ host: "codex", events, timeouts, matchers })
