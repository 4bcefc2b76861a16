/**
 * Packaging smoke test for `@ratchet/host-claude-code`. `tools/pack-check.mjs` runs it inside an
 * empty project that installed the packed tarball (with `@ratchet/host` and what it needs), so it
 * sees what a user sees: the entry point resolves to the built `dist/`, a PreToolUse payload
 * decodes, a denial is encoded in Claude Code's contract, and our settings entries install and
 * uninstall. Prints one line; exits non-zero on the first thing that is wrong.
 */
import { ClaudeCode, Settings } from "@ratchet/host-claude-code"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/host-claude-code smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/host-claude-code")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const payload = JSON.stringify({
  session_id: "s-1",
  cwd: "/w",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "ratchet approve t-1 spec" },
  tool_use_id: "toolu_1"
})
const event = Effect.runSync(ClaudeCode.decode(payload))
if (event._tag !== "ToolCallRequested" || event.call.action._tag !== "Shell") fail(`a Bash PreToolUse should decode to a shell tool call, got ${JSON.stringify(event)}`)
const reply = ClaudeCode.reply(event, { _tag: "Deny", reason: "no.", fix: "ask." })
if (JSON.parse(reply.stdout).hookSpecificOutput?.permissionDecision !== "deny") fail(`a denial should be permissionDecision deny, got ${reply.stdout}`)

const installed = Either.getOrThrow(Settings.install({ model: "x" }, "ratchet hook claude-code"))
if (Settings.countOurs(installed) !== Settings.events.length) fail("install should add one entry per event")
const removed = Either.getOrThrow(Settings.uninstall(installed))
if (JSON.stringify(removed) !== JSON.stringify({ model: "x" })) fail(`uninstall should restore the settings, got ${JSON.stringify(removed)}`)

console.log("@ratchet/host-claude-code smoke: ok — a PreToolUse decodes, a denial is encoded, settings install and uninstall")
