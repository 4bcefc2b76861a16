/**
 * Ratchet's entries in Claude Code's settings: installed next to other hooks and settings without
 * touching them, idempotently; removed without touching anything else; settings of the wrong
 * shape refused with the field named.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Settings from "../src/Settings.js"

const command = "ratchet hook claude-code"
const ours = { type: "command", command, timeout: 10 }

const theirs = {
  model: "claude-sonnet-4-5",
  permissions: { allow: ["Bash(npm test)"] },
  hooks: {
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./scripts/audit.sh" }] }],
    Notification: [{ hooks: [{ type: "command", command: "notify-send done" }] }]
  }
}

describe("Settings.install", () => {
  it("into empty settings: one group per event with our command", () => {
    const installed = Either.getOrThrow(Settings.install(undefined, command))
    expect(Object.keys(installed["hooks"] as object)).toEqual([...Settings.events])
    for (const event of Settings.events) expect((installed["hooks"] as Record<string, unknown>)[event]).toEqual([{ hooks: [ours] }])
    expect(Settings.countOurs(installed)).toBe(Settings.events.length)
  })

  it("keeps every other setting and hook, in place", () => {
    const installed = Either.getOrThrow(Settings.install(theirs, command))
    expect(installed["model"]).toBe("claude-sonnet-4-5")
    expect(installed["permissions"]).toEqual(theirs.permissions)
    const hooks = installed["hooks"] as Record<string, ReadonlyArray<unknown>>
    expect(hooks["PreToolUse"]).toEqual([theirs.hooks.PreToolUse[0], { hooks: [ours] }])
    expect(hooks["Notification"]).toEqual(theirs.hooks.Notification)
  })

  it("is idempotent, and a changed command replaces ours rather than adding", () => {
    const once = Either.getOrThrow(Settings.install(theirs, command))
    expect(Either.getOrThrow(Settings.install(once, command))).toEqual(once)
    const moved = Either.getOrThrow(Settings.install(once, "/opt/bin/ratchet hook claude-code"))
    expect(Settings.countOurs(moved)).toBe(Settings.events.length)
    expect(JSON.stringify(moved)).not.toContain(`"command":"ratchet hook claude-code"`)
  })

  it("refuses settings of the wrong shape, naming the field, and writes nothing", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [[], "(settings)"],
      ["text", "(settings)"],
      [{ hooks: [] }, "hooks"],
      [{ hooks: { PreToolUse: {} } }, "hooks.PreToolUse"],
      [{ hooks: { Stop: [{ command: "x" }] } }, "hooks.Stop[0]"]
    ]
    for (const [settings, field] of cases) {
      const result = Settings.install(settings, command)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left.field).toBe(field)
        expect(result.left.fix).toContain("nothing was written")
      }
    }
  })
})

describe("Settings.uninstall", () => {
  it("removes only ours: the settings come back as they were", () => {
    expect(Either.getOrThrow(Settings.uninstall(Either.getOrThrow(Settings.install(theirs, command))))).toEqual(theirs)
  })

  it("keeps a group's other hooks when ours shared it", () => {
    const shared = { hooks: { Stop: [{ hooks: [{ type: "command", command: "./lint.sh" }, ours] }] } }
    expect(Either.getOrThrow(Settings.uninstall(shared))).toEqual({ hooks: { Stop: [{ hooks: [{ type: "command", command: "./lint.sh" }] }] } })
  })

  it("drops hooks entirely when only ours were there, and changes nothing without ours", () => {
    expect(Either.getOrThrow(Settings.uninstall(Either.getOrThrow(Settings.install({ model: "x" }, command))))).toEqual({ model: "x" })
    expect(Either.getOrThrow(Settings.uninstall(theirs))).toEqual(theirs)
    expect(Either.getOrThrow(Settings.uninstall(undefined))).toEqual({})
  })

  it("recognises our command however it is launched, and nothing that merely mentions it", () => {
    const accepted = ["ratchet hook claude-code", "/usr/local/bin/ratchet hook claude-code", "npx ratchet hook claude-code", "\"/opt/my tools/ratchet\" hook claude-code"]
    const rejected = ["ratchet hook codex", "echo ratchet hook claude-code-extra", "myratchet hook claude-code", "ratchet status", "logger 'ratchet hook claude-code ran'", "echo ratchet hook claude-code"]
    for (const text of accepted) expect(Settings.isOurs({ type: "command", command: text }), text).toBe(true)
    for (const text of rejected) expect(Settings.isOurs({ type: "command", command: text }), text).toBe(false)
    expect(Settings.isOurs({ type: "prompt", command })).toBe(false)
  })
})
