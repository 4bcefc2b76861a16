/**
 * Packaging smoke test for `@ratchet/host-codex`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball (with `@ratchet/host` and what it needs): the entry
 * point resolves to the built `dist/`, an apply_patch payload decodes to a write of its files, an
 * ask is answered as a denial, our hooks.json entries install and uninstall, and the sandbox is set
 * in a config.toml and taken out again (so `smol-toml` resolves from the installed tarball). Prints one line;
 * exits non-zero on the first thing that is wrong.
 */
import { Codex, Sandbox, Settings } from "@ratchet/host-codex"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/host-codex smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/host-codex")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const payload = JSON.stringify({
  session_id: "s-1",
  cwd: "/w",
  hook_event_name: "PreToolUse",
  tool_name: "apply_patch",
  tool_input: { command: "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-a\n+b\n*** End Patch\n" },
  tool_use_id: "call_1"
})
const event = Effect.runSync(Codex.decode(payload))
if (event._tag !== "ToolCallRequested" || event.call.action._tag !== "Write" || event.call.action.paths[0] !== "src/a.ts") {
  fail(`an apply_patch should decode to a write of src/a.ts, got ${JSON.stringify(event)}`)
}
const reply = Codex.reply(event, { _tag: "Ask", reason: "Sure?" })
if (JSON.parse(reply.stdout).hookSpecificOutput?.permissionDecision !== "deny") fail(`an ask should be a denial, got ${reply.stdout}`)

const installed = Either.getOrThrow(Settings.install({}, "ratchet hook codex"))
if (Settings.countOurs(installed) !== Settings.events.length) fail("install should add one entry per event")
if (JSON.stringify(Either.getOrThrow(Settings.uninstall(installed))) !== "{}") fail("uninstall should remove every entry of ours")

const config = "# mine\nsandbox_mode = \"danger-full-access\"\n"
const targets = { store: ["/tmp/rh"], key: ["/tmp/rh/approver-key.json"], projectRoot: "/w", home: "/home/dev" }
const sandboxed = Either.getOrThrow(Sandbox.install("/w/.codex/config.toml", config, targets, { slashTmp: ["/tmp"], tmpdir: [] })).text
if (!sandboxed.includes("sandbox_mode = \"workspace-write\"") || !sandboxed.includes("exclude_slash_tmp = true")) fail(`config.toml should get workspace-write and exclude_slash_tmp, got ${sandboxed}`)
if (Either.getOrThrow(Sandbox.uninstall("/w/.codex/config.toml", sandboxed)) !== config) fail("uninstall should give config.toml back as it was")

console.log("@ratchet/host-codex smoke: ok — an apply_patch decodes to its files, an ask is a denial, hooks.json install and uninstall, config.toml sandbox set and removed")
