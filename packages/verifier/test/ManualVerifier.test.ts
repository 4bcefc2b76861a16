/**
 * The manual verifier: without an Observer the criterion is NOT_RUN and says how to record it;
 * with one, the person's answer is the verdict and their identity the verifier of record.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManualVerifier from "../src/ManualVerifier.js"
import * as Verifier from "../src/Verifier.js"
import { ac003, alice, bob, ctxFor, memoryBlobs, SNAPSHOT, SPEC_DIGEST } from "./fixtures.js"

type Request = Parameters<Verifier.Observer["Type"]["observe"]>[0]

const observer = (answer: Verifier.Observation | null, asked: Array<Request> = []) =>
  Layer.succeed(Verifier.Observer, {
    observe: (request) =>
      Effect.sync(() => {
        asked.push(request)
        return answer
      })
  })

const verify = () => ManualVerifier.verifier.verify(ac003, ctxFor({ root: "/nonexistent", blobs: memoryBlobs() }), [])

const notRun = {
  verifier: "manual",
  verdict: "NOT_RUN",
  reason:
    "AC-003 is checked by a person (tech writer); run ratchet verify t-1 --ac AC-003 on an interactive terminal to record what they observe.",
  evidence: []
}

describe("ManualVerifier", () => {
  it("applies to manual criteria only", () => {
    expect(ManualVerifier.verifier.appliesTo(ac003)).toBe(true)
    expect(ManualVerifier.verifier.appliesTo({ id: "AC-001", outcome: "o", required: true, verify: { command: "true" } })).toBe(false)
  })

  it.effect("NOT_RUN without an Observer, naming the command that records the observation", () =>
    Effect.gen(function*() {
      expect(yield* verify()).toEqual(notRun)
    }))

  it.effect("NOT_RUN when the Observer has nobody to ask (null)", () =>
    Effect.gen(function*() {
      const asked: Array<Request> = []
      expect(yield* Effect.provide(verify(), observer(null, asked))).toEqual(notRun)
      expect(asked).toHaveLength(1)
    }))

  it.effect("PASS when the observer says it holds; they are the verifier of record", () =>
    Effect.gen(function*() {
      const asked: Array<Request> = []
      const judgement = yield* Effect.provide(verify(), observer({ result: "pass", note: "found it under Usage", actor: alice }, asked))
      expect(asked).toEqual([{
        acId: "AC-003",
        outcome: "the guide mentions the flag",
        procedure: "Read docs/guide.md and find --json",
        observer: "tech writer"
      }])
      expect(judgement.verifier).toBe("manual")
      expect(judgement.verdict).toBe("PASS")
      expect(judgement.reason).toBe("alice observed it holds: found it under Usage.")
      expect(judgement.evidence).toHaveLength(1)
      expect(judgement.evidence[0]).toMatchObject({
        _tag: "manual",
        acId: "AC-003",
        specDigest: SPEC_DIGEST,
        snapshotLsn: SNAPSHOT,
        verifier: { kind: "user", id: "alice" },
        procedure: "Read docs/guide.md and find --json",
        observer: "tech writer",
        result: "pass",
        note: "found it under Usage",
        channel: "terminal"
      })
    }))

  it.effect("FAIL when the observer says it does not hold (an empty note adds nothing to the reason)", () =>
    Effect.gen(function*() {
      const judgement = yield* Effect.provide(verify(), observer({ result: "fail", note: "", actor: bob }))
      expect(judgement.verdict).toBe("FAIL")
      expect(judgement.reason).toBe("bob observed it does not hold.")
      expect(judgement.evidence[0]).toMatchObject({ verifier: { kind: "user", id: "bob" }, result: "fail", note: "" })
    }))

  it.effect("NOT_RUN when the observation comes from anything but a person", () =>
    Effect.gen(function*() {
      const judgement = yield* Effect.provide(verify(), observer({ result: "pass", note: "looks fine", actor: { kind: "agent", id: "claude" } }))
      expect(judgement).toEqual({
        verifier: "manual",
        verdict: "NOT_RUN",
        reason: "AC-003 is a person's observation, and agent:claude is not a person; run ratchet verify t-1 --ac AC-003 yourself, on an interactive terminal.",
        evidence: []
      })
    }))
})
