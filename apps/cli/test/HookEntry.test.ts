/**
 * The hook's own way in (HookEntry): which argument lists it takes (exactly `hook <host>` with no
 * actor to check, as the hosts run it) and which it leaves to the command table, from a table
 * written by hand; and the host lookup, which never answers with an inherited member.
 */
import { describe, expect, it } from "vitest"
import * as HookEntry from "../src/HookEntry.js"

describe("HookEntry.isHostCall", () => {
  const taken: ReadonlyArray<ReadonlyArray<string>> = [
    ["hook", "claude-code"],
    ["hook", "codex"],
    // Left to run() to send on to main with the right error.
    ["hook", "nonsense"],
    ["hook", "constructor"]
  ]
  const left: ReadonlyArray<ReadonlyArray<string>> = [
    [],
    ["hook"],
    ["hook", "claude-code", "--json"],
    ["hook", "claude-code", "--help"],
    ["hook", "--help"],
    ["-C", "/tmp", "hook", "claude-code"],
    ["hook", "claude-code", "-C", "/tmp"],
    ["hooks", "install"],
    ["status", "claude-code"],
    ["Hook", "claude-code"]
  ]

  it("takes exactly hook <host>", () => {
    for (const argv of taken) expect(HookEntry.isHostCall(argv, {}), argv.join(" ")).toBe(true)
    for (const argv of left) expect(HookEntry.isHostCall(argv, {}), argv.join(" ")).toBe(false)
  })

  it("leaves a call with RATCHET_ACTOR set to the command table, which checks it", () => {
    expect(HookEntry.isHostCall(["hook", "claude-code"], { RATCHET_ACTOR: "user:ana" })).toBe(false)
    expect(HookEntry.isHostCall(["hook", "claude-code"], { RATCHET_ACTOR: "" })).toBe(false)
    expect(HookEntry.isHostCall(["hook", "claude-code"], { OTHER: "x" })).toBe(true)
  })
})

describe("HookEntry.adapterFor", () => {
  it("finds the hosts' adapters and nothing else", () => {
    expect(HookEntry.adapterFor("claude-code")?.name).toBe("claude-code")
    expect(HookEntry.adapterFor("codex")?.name).toBe("codex")
    for (const host of ["constructor", "__proto__", "toString", "hasOwnProperty", "", "Claude-Code", "claude-code "]) {
      expect(HookEntry.adapterFor(host), host).toBeUndefined()
    }
  })
})
