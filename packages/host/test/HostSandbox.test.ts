/**
 * The path arithmetic every host's sandbox check rests on: what is below a root (a sibling whose
 * name starts the same is not; `..` is not; a name beginning with `..` is), and the `~/` form of
 * a path below the home directory.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HostSandbox from "../src/HostSandbox.js"

describe("HostSandbox.isWithin", () => {
  it("accepts the root and what is below it, and nothing else", () => {
    const accepted: ReadonlyArray<readonly [string, string]> = [
      ["/home/dev/.ratchet", "/home/dev/.ratchet"],
      ["/home/dev/.ratchet/ratchet.db", "/home/dev/.ratchet"],
      ["/home/dev/.ratchet/blobs/ab/cd", "/home/dev"],
      ["/tmp/..hidden/store", "/tmp"],
      ["/anything", "/"]
    ]
    const rejected: ReadonlyArray<readonly [string, string]> = [
      ["/home/dev/.ratchet-other", "/home/dev/.ratchet"],
      ["/home/dev", "/home/dev/.ratchet"],
      ["/home", "/home/dev"],
      ["/tmpx/store", "/tmp"],
      ["/var/tmp/store", "/tmp"]
    ]
    for (const [target, root] of accepted) expect(HostSandbox.isWithin(target, root), `${target} in ${root}`).toBe(true)
    for (const [target, root] of rejected) expect(HostSandbox.isWithin(target, root), `${target} in ${root}`).toBe(false)
  })
})

describe("HostSandbox.homeRelative", () => {
  it("writes a path below the home as ~/…, and nothing for the home itself or a path elsewhere", () => {
    expect(HostSandbox.homeRelative("/home/dev/.ratchet", "/home/dev")).toBe("~/.ratchet")
    expect(HostSandbox.homeRelative("/home/dev/a/b.json", "/home/dev")).toBe("~/a/b.json")
    expect(HostSandbox.homeRelative("/home/dev", "/home/dev")).toBeUndefined()
    expect(HostSandbox.homeRelative("/home/developer/.ratchet", "/home/dev")).toBeUndefined()
    expect(HostSandbox.homeRelative("/srv/ratchet", "/home/dev")).toBeUndefined()
  })

  it("names the project's .ratchet/ only when the settings are a project's", () => {
    expect(HostSandbox.projectState({ store: [], key: [], projectRoot: "/w/repo", home: "/home/dev" })).toBe("/w/repo/.ratchet")
    expect(HostSandbox.projectState({ store: [], key: [], projectRoot: undefined, home: "/home/dev" })).toBeUndefined()
  })
})
