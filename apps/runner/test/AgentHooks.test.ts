/**
 * The run's hooks for Claude Code (ADR 0040): the settings given with `--settings` run Ratchet's
 * hook through the fail-closed launcher by absolute path, on every event `ratchet hooks install`
 * registers, and a runner not told where its CLI is (or told a path a hook command cannot name)
 * gives no settings, with the reason (the attempt then fails rather than running unfenced).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as ClaudeCodeSettings from "@ratchet/host-claude-code/Settings"
import * as Either from "effect/Either"
import * as AgentHooks from "../src/AgentHooks.js"

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-agent-hooks-")))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const launcher = path.join(dir, "ratchet-hook")
const cli = path.join(dir, "ratchet.mjs")
fs.writeFileSync(launcher, "#!/bin/sh\n")
fs.writeFileSync(cli, "// the CLI\n")
const node = "/usr/bin/node"

describe("AgentHooks.claudeCodeSettings", () => {
  it("registers Ratchet's hook on every event, through the launcher by absolute path", () => {
    const made = AgentHooks.claudeCodeSettings({ RATCHET_HOOK_LAUNCHER: launcher, RATCHET_HOOK_CLI: cli }, node)
    const settings = JSON.parse(Either.getOrThrow(made))
    expect(Object.keys(settings.hooks).sort()).toEqual([...ClaudeCodeSettings.events].sort())
    expect(ClaudeCodeSettings.countOurs(settings)).toBe(ClaudeCodeSettings.events.length)
    const pre = settings.hooks.PreToolUse[0]
    expect(pre.matcher).toBe(ClaudeCodeSettings.matchers["PreToolUse"])
    expect(pre.hooks[0].command).toContain(`'${launcher}'`)
    expect(pre.hooks[0].command).toContain(`'${node}' '${cli}' hook claude-code`)
    expect(pre.hooks[0].command).not.toMatch(/(^|[^-])ratchet hook/)
  })

  it("says disableAllHooks: false, so that no project or user settings file can switch the run's hooks off", () => {
    const settings = JSON.parse(Either.getOrThrow(AgentHooks.claudeCodeSettings({ RATCHET_HOOK_LAUNCHER: launcher, RATCHET_HOOK_CLI: cli }, node)))
    expect(settings.disableAllHooks).toBe(false)
  })

  // Managed settings, which outrank the command line: [what the file holds (null: absent), the problem's words or null].
  const managed: ReadonlyArray<readonly [string, string | null, string | null]> = [
    ["no managed settings", null, null],
    ["managed settings that leave hooks alone", JSON.stringify({ model: "x", disableAllHooks: false }), null],
    ["managed disableAllHooks", JSON.stringify({ disableAllHooks: true }), "set disableAllHooks"],
    ["managed allowManagedHooksOnly", JSON.stringify({ allowManagedHooksOnly: true }), "set allowManagedHooksOnly"],
    ["managed settings that are not JSON", "{ disableAllHooks", "are not JSON"]
  ]
  it.each(managed)("managed settings: %s", (name, text, words) => {
    const file = path.join(dir, `managed-${name.replace(/\W+/g, "-")}.json`)
    if (text !== null) fs.writeFileSync(file, text)
    const made = AgentHooks.claudeCodeSettings({ RATCHET_HOOK_LAUNCHER: launcher, RATCHET_HOOK_CLI: cli }, node, [path.join(dir, "absent.json"), file])
    if (words === null) expect(Either.isRight(made)).toBe(true)
    else expect(Either.isLeft(made) ? made.left : "settings").toContain(words)
  })

  // Rejected: [the environment, the reason's words].
  const refused: ReadonlyArray<readonly [string, Record<string, string | undefined>, string]> = [
    ["nothing set", {}, "was not told where Ratchet's hook launcher (ratchet-hook) is (RATCHET_HOOK_LAUNCHER)"],
    ["no CLI", { RATCHET_HOOK_LAUNCHER: launcher }, "(RATCHET_HOOK_CLI)"],
    ["a relative launcher", { RATCHET_HOOK_LAUNCHER: "bin/ratchet-hook", RATCHET_HOOK_CLI: cli }, "is not an absolute path"],
    ["a launcher that is gone", { RATCHET_HOOK_LAUNCHER: path.join(dir, "gone"), RATCHET_HOOK_CLI: cli }, "is not a readable file"],
    ["a CLI that is a directory", { RATCHET_HOOK_LAUNCHER: launcher, RATCHET_HOOK_CLI: dir }, "is not a readable file"],
    ["a launcher with a quote", { RATCHET_HOOK_LAUNCHER: "/opt/it's/ratchet-hook", RATCHET_HOOK_CLI: cli }, "has a single quote"]
  ]
  it.each(refused)("gives no settings: %s", (_, environment, words) => {
    const made = AgentHooks.claudeCodeSettings(environment, node)
    expect(Either.isLeft(made) ? made.left : "settings").toContain(words)
  })

  it("is what the installer gives Claude Code, and nothing for Codex", () => {
    const installers = AgentHooks.installers({ RATCHET_HOOK_LAUNCHER: launcher, RATCHET_HOOK_CLI: cli })
    const given = installers["claude-code"]!()
    expect(given._tag === "Args" ? given.args[0] : given.problem).toBe("--settings")
    // Only the user's settings besides the command line's: never the project's nor the local file the agent can write.
    expect(given._tag === "Args" ? given.args.slice(2) : given.problem).toStrictEqual(["--setting-sources", "user,project"])
    expect(installers.codex).toBeUndefined()
    const missing = AgentHooks.installers({})["claude-code"]!()
    expect(missing._tag).toBe("Problem")
  })
})
