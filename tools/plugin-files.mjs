#!/usr/bin/env node
/**
 * `npm run plugins:write`: writes the files of `plugins/` that follow from the code, so that they
 * say what `ratchet hooks install` writes (ADR 0026, ADR 0028): the Claude Code plugin's
 * `hooks/hooks.json` and its copy of the launcher (`bin/ratchet-hook`), and Codex's
 * `plugins/codex/hooks.json`. `apps/cli/test/Plugin.test.ts` fails until they are written again
 * after a change to the hosts' events, matchers, timeouts or the launcher.
 *
 * Run with the workspace packages' TypeScript sources (`--conditions=@ratchet/source --import tsx`).
 */
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"

/** @param {string} relative */
const at = (relative) => fileURLToPath(new URL(`../${relative}`, import.meta.url))
const Either = await import("effect/Either")
const HookCommand = await import(at("packages/host/src/HookCommand.ts"))
const ClaudeCodeSettings = await import(at("packages/host-claude-code/src/Settings.ts"))
const CodexSettings = await import(at("packages/host-codex/src/Settings.ts"))

/** @param {unknown} value */
const json = (value) => `${JSON.stringify(value, null, 2)}\n`

const claudeCode = Either.getOrThrow(ClaudeCodeSettings.install(undefined, (/** @type {string} */ event) =>
  HookCommand.command({ host: "claude-code", event, launcher: { _tag: "HostVariable", path: "${CLAUDE_PLUGIN_ROOT}/bin/ratchet-hook" }, program: "", fix: "" })
))
fs.writeFileSync(
  at("plugins/claude-code/hooks/hooks.json"),
  json({
    description: "Ratchet holds the session to the approved contract: Bash and file writes are judged before they run, the worker's calls and turn are recorded, a stop with unverified criteria is blocked once. Every hook runs bin/ratchet-hook, which blocks tool calls when Ratchet cannot run.",
    hooks: claudeCode.hooks
  })
)
fs.copyFileSync(at("apps/cli/bin/ratchet-hook"), at("plugins/claude-code/bin/ratchet-hook"))
fs.chmodSync(at("plugins/claude-code/bin/ratchet-hook"), 0o755)

const codex = Either.getOrThrow(CodexSettings.install(undefined, (/** @type {string} */ event) =>
  HookCommand.command({
    host: "codex",
    event,
    launcher: { _tag: "OnPath" },
    program: "",
    fix: "Install the Ratchet CLI (npm i -g @ratchet/cli) or run ratchet hooks install codex in a terminal."
  })
))
fs.writeFileSync(at("plugins/codex/hooks.json"), json(codex))
console.log("wrote plugins/claude-code/hooks/hooks.json, plugins/claude-code/bin/ratchet-hook, plugins/codex/hooks.json")
