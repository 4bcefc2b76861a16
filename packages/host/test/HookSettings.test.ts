/**
 * Our entries in a host's hooks, as a table of moves written by hand: from a settings file, an
 * install or an uninstall gives exactly the file written here. Entries of ours in any form Ratchet
 * has written (the bare `ratchet hook <host>`, a launcher at another path, an event no longer
 * installed) are replaced by install and removed by uninstall; every hook of anyone else stays where
 * it was; installing twice changes nothing; files of the wrong shape are refused, naming the field.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as HookSettings from "../src/HookSettings.js"

const matcher = HookSettings.toolMatcher(["Bash", "apply_patch"])
const settings = HookSettings.make({ host: "codex", events: ["PreToolUse", "Stop"], timeouts: { Stop: 3 }, matchers: { PreToolUse: matcher } })

const launcher = (event: string, at = "/opt/ratchet/bin/ratchet-hook") => `/bin/sh '${at}' codex ${event} '/usr/bin/node' '/opt/ratchet/dist/ratchet.mjs' hook codex`
const hook = (command: string, timeout = 10) => ({ type: "command", command, timeout })
const ours = {
  PreToolUse: { matcher, hooks: [hook(launcher("PreToolUse"))] },
  Stop: { hooks: [hook(launcher("Stop"), 3)] }
}
const bare = hook("ratchet hook codex")
const audit = { matcher: "Bash", hooks: [{ type: "command", command: "./audit.sh" }] }
const notify = { hooks: [{ type: "command", command: "notify-send done" }] }

type Row = readonly [name: string, before: unknown, action: "install" | "uninstall", after: unknown]

const rows: ReadonlyArray<Row> = [
  ["nothing → install: a group per event, with its matcher where it has one", undefined, "install", { hooks: { PreToolUse: [ours.PreToolUse], Stop: [ours.Stop] } }],
  ["installed → install: nothing changes", { hooks: { PreToolUse: [ours.PreToolUse], Stop: [ours.Stop] } }, "install", {
    hooks: { PreToolUse: [ours.PreToolUse], Stop: [ours.Stop] }
  }],
  [
    "the bare commands of before, in groups of their own → install: replaced by the launcher's",
    { model: "x", hooks: { PreToolUse: [{ hooks: [bare] }], Stop: [{ hooks: [bare] }] } },
    "install",
    { model: "x", hooks: { PreToolUse: [ours.PreToolUse], Stop: [ours.Stop] } }
  ],
  [
    "a bare command sharing a group with someone's → install: theirs stays in its group, ours gets its own",
    { hooks: { Stop: [{ hooks: [notify.hooks[0], bare] }] } },
    "install",
    { hooks: { Stop: [notify, ours.Stop], PreToolUse: [ours.PreToolUse] } }
  ],
  [
    "an event no longer installed (SubagentStop) → install: its entry goes, and the event with it",
    { hooks: { SubagentStop: [{ hooks: [bare] }], Stop: [{ hooks: [hook(launcher("Stop"))] }] } },
    "install",
    { hooks: { Stop: [ours.Stop], PreToolUse: [ours.PreToolUse] } }
  ],
  [
    "the launcher at another path, without a matcher → install: moved, and matched",
    { hooks: { PreToolUse: [{ hooks: [hook(launcher("PreToolUse", "/old/place/ratchet-hook"))] }] } },
    "install",
    { hooks: { PreToolUse: [ours.PreToolUse], Stop: [ours.Stop] } }
  ],
  [
    "someone's hooks and another host's launcher → install: all kept in place",
    { hooks: { PreToolUse: [audit, { hooks: [hook("/bin/sh '/opt/ratchet/bin/ratchet-hook' claude-code PreToolUse")] }], Notification: [notify] } },
    "install",
    {
      hooks: {
        PreToolUse: [audit, { hooks: [hook("/bin/sh '/opt/ratchet/bin/ratchet-hook' claude-code PreToolUse")] }, ours.PreToolUse],
        Notification: [notify],
        Stop: [ours.Stop]
      }
    }
  ],
  [
    "installed next to someone's → uninstall: theirs, as they were",
    { hooks: { PreToolUse: [audit, ours.PreToolUse], Stop: [ours.Stop], Notification: [notify] } },
    "uninstall",
    { hooks: { PreToolUse: [audit], Notification: [notify] } }
  ],
  [
    "the bare command and the launcher mixed → uninstall: neither left, nor the empty events",
    { model: "x", hooks: { PreToolUse: [{ hooks: [bare] }, ours.PreToolUse], SubagentStop: [{ hooks: [bare] }] } },
    "uninstall",
    { model: "x" }
  ],
  ["none of ours → uninstall: nothing changes", { hooks: { PreToolUse: [audit] } }, "uninstall", { hooks: { PreToolUse: [audit] } }],
  ["nothing → uninstall: nothing", undefined, "uninstall", {}]
]

describe("HookSettings install and uninstall, move by move", () => {
  it.each(rows)("%s", (_name, before, action, after) => {
    const result = action === "install" ? settings.install(before, launcher) : settings.uninstall(before)
    expect(Either.getOrThrow(result)).toEqual(after)
    // Every move is idempotent: doing it again from where it led changes nothing.
    const again = action === "install" ? settings.install(after, launcher) : settings.uninstall(after)
    expect(Either.getOrThrow(again)).toEqual(after)
  })

  it("counts ours in every form, and nothing else", () => {
    expect(settings.countOurs({ hooks: { PreToolUse: [audit, { hooks: [bare] }, ours.PreToolUse], Stop: [ours.Stop], Other: [notify] } })).toBe(3)
    expect(settings.countOurs({ hooks: { PreToolUse: [audit] } })).toBe(0)
    expect(settings.countOurs("text")).toBe(0)
  })

  it("refuses a file of the wrong shape, naming the field, in either direction", () => {
    const refused: ReadonlyArray<readonly [unknown, "install" | "uninstall", string]> = [
      [[], "install", "(settings)"],
      ["text", "uninstall", "(settings)"],
      [{ hooks: [] }, "install", "hooks"],
      [{ hooks: "x" }, "uninstall", "hooks"],
      [{ hooks: { PreToolUse: {} } }, "install", "hooks.PreToolUse"],
      [{ hooks: { Stop: [{ command: "x" }] } }, "install", "hooks.Stop[0]"]
    ]
    for (const [before, action, field] of refused) {
      const result = action === "install" ? settings.install(before, launcher) : settings.uninstall(before)
      expect(Either.isLeft(result), JSON.stringify(before)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left.field).toBe(field)
        expect(result.left.fix).toContain("nothing was written")
      }
    }
  })
})

describe("HookSettings.toolMatcher", () => {
  it("matches exactly the tools named, as the hosts test it (unanchored by themselves)", () => {
    const regex = new RegExp(matcher)
    for (const tool of ["Bash", "apply_patch"]) expect(regex.test(tool), tool).toBe(true)
    for (const tool of ["bash", "Bash2", "MyBash", "apply_patch_v2", "mcp__x__Bash", "", "Read"]) expect(regex.test(tool), tool).toBe(false)
    expect(HookSettings.toolMatcher(["a.b", "c|d"])).toBe("^(?:a\\.b|c\\|d)$")
  })
})

describe("HookSettings.runsHook", () => {
  it("is the bare command run by any path or npx, and not a mention of it", () => {
    for (const text of ["ratchet hook codex", "/usr/local/bin/ratchet hook codex", "npx -y ratchet hook codex", "\"/opt/my tools/ratchet\" hook codex"]) {
      expect(HookSettings.runsHook("codex", text), text).toBe(true)
    }
    for (const text of ["echo ratchet hook codex", "ratchet hook codexx", "ratchet hook claude-code", "myratchet hook codex", launcher("Stop")]) {
      expect(HookSettings.runsHook("codex", text), text).toBe(false)
    }
  })
})
