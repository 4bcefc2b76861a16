/**
 * The host kit's own promise checks can fail. `decodesOrFailsTyped`: an adapter that throws, dies,
 * fails with an untyped error, or reports another host's name is caught; a typed failure passes.
 * `recordAnswer`: a read of the host's record that fails, dies or throws is caught; an answer passes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as HostKit from "../src/HostKit.js"

class DecodeError extends Data.TaggedError("@ratchet/host/HostDecodeError")<{ readonly host: string; readonly field: string; readonly reason: string }> {}

const base: Omit<HostKit.KitAdapter, "decode"> = {
  name: "kit-host",
  canAsk: true,
  reply: () => ({ stdout: "", stderr: "", exitCode: 0 }),
  failure: () => ({ stdout: "", stderr: "", exitCode: 0 })
}
const session = { host: "kit-host", sessionId: "s", cwd: "/w" }

describe("HostKit.decodesOrFailsTyped", () => {
  const cases: ReadonlyArray<readonly [string, HostKit.KitAdapter["decode"], boolean]> = [
    ["a decoded event of this host", () => Effect.succeed({ _tag: "Passthrough", session, name: "X" }), true],
    ["a typed failure naming a field", () => Effect.fail(new DecodeError({ host: "kit-host", field: "cwd", reason: "is missing" })), true],
    ["an event claiming another host", () => Effect.succeed({ _tag: "Passthrough", session: { ...session, host: "other" }, name: "X" }), false],
    ["a typed failure of another host", () => Effect.fail(new DecodeError({ host: "other", field: "cwd", reason: "x" })), false],
    ["a typed failure naming no field", () => Effect.fail(new DecodeError({ host: "kit-host", field: "", reason: "x" })), false],
    ["a defect", () => Effect.die(new Error("boom")), false],
    ["a throw", () => {
      throw new Error("boom")
    }, false]
  ]
  for (const [name, decode, expected] of cases) {
    it(`${name}: ${expected ? "passes" : "is caught"}`, () => {
      const adapter: HostKit.KitAdapter = { ...base, decode }
      let verdict: boolean
      try {
        verdict = HostKit.decodesOrFailsTyped(adapter, "{}")
      } catch {
        verdict = false
      }
      expect(verdict).toBe(expected)
    })
  }
})

describe("HostKit.recordAnswer", () => {
  const cases: ReadonlyArray<readonly [string, (transcript: string) => Effect.Effect<boolean>, boolean | null]> = [
    ["a read that finds a call's end", () => Effect.succeed(true), true],
    ["a read that finds nothing", () => Effect.succeed(false), false],
    ["a read that fails", () => Effect.fail("unreadable") as unknown as Effect.Effect<boolean>, null],
    ["a read that dies", () => Effect.die(new Error("boom")), null],
    ["a read that throws", () => {
      throw new Error("boom")
    }, null],
    ["a read that answers something else than a boolean", () => Effect.succeed("yes") as unknown as Effect.Effect<boolean>, null]
  ]
  for (const [name, read, expected] of cases) {
    it(`${name}: ${expected === null ? "is caught" : `answers ${expected}`}`, () => {
      expect(HostKit.recordAnswer(read, "/t.jsonl")).toBe(expected)
    })
  }
})
