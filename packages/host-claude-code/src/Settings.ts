/**
 * Ratchet's entries in Claude Code's settings (`.claude/settings.json` in a project,
 * `~/.claude/settings.json` for the user), through the shared `HookSettings` of `@ratchet/host`:
 * merged in idempotently, keeping every other hook and setting, and removed without touching
 * anything that is not ours.
 *
 * Only what can change an answer or a record starts a hook process (ADR 0026, ADR 0030):
 * - PreToolUse and PermissionRequest match the tools the guard judges (`ClaudeCode.judgedTools`:
 *   Bash and the file writers). A Read, Grep, Glob or MCP call is allowed in every state, and the
 *   host's own sandbox and `Read(…)` deny rules, not the hook, keep the store and the key unread.
 * - PostToolUse matches the same tools: a writer's end resolves its intent, and a command's end is
 *   the worker's `toolUsed`. The successful end of any other call only ever told of the turn; the
 *   main agent's Stop now reads it from the session's transcript (`Transcript`), once per turn
 *   instead of once per call.
 * - PostToolUseFailure matches every tool: it runs only when a call fails, and a failure is the
 *   worker's `toolFailed`, which nothing else reports.
 * - SessionStart, UserPromptSubmit, Stop and SessionEnd have no matcher: they take or release the
 *   lease and start or end the worker's turn.
 * - SubagentStop is not installed: a subagent's stop is always allowed and records nothing.
 *
 * @since 0.1.0
 */
import * as HookSettings from "@ratchet/host/HookSettings"
import * as ClaudeCode from "./ClaudeCode.js"

/**
 * The events Ratchet listens to, in the order they are written.
 *
 * @since 0.1.0
 * @category constants
 */
export const events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"] as const

/**
 * The matcher of each event that has one: the tools whose call Ratchet may refuse, before they
 * run and when they end.
 *
 * @since 0.2.0
 * @category constants
 */
export const matchers: Readonly<Record<string, string>> = {
  PreToolUse: HookSettings.toolMatcher(ClaudeCode.judgedTools),
  PermissionRequest: HookSettings.toolMatcher(ClaudeCode.judgedTools),
  PostToolUse: HookSettings.toolMatcher(ClaudeCode.judgedTools)
}

/**
 * Our entries' operations: `isOurs(hook)`, `install(settings, command)`, `uninstall(settings)`
 * and `countOurs(settings)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const { countOurs, install, isOurs, runsHook, uninstall } = HookSettings.make({ host: "claude-code", events, matchers })
