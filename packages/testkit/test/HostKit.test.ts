/**
 * The host kit's own promise check, `decodesOrFailsTyped`, can fail: an adapter that throws, dies,
 * fails with an untyped error, or reports another host's name is caught; a typed failure passes.
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
