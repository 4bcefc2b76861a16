/**
 * Combining several verifiers' judgements of one criterion: the whole table of which verdicts
 * were present → the verdict, written by hand, and a property against a reference written
 * independently (a severity ranking rather than the implementation's chain of checks).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as Builtin from "../src/Builtin.js"
import * as Verifier from "../src/Verifier.js"

type Verdict = Verifier.Judgement["verdict"]

const judgement = (verdict: Verdict, verifier = "fake"): Verifier.Judgement => ({ verifier, verdict, reason: "", evidence: [] })
const combine = (verdicts: ReadonlyArray<Verdict>) => Verifier.combine(verdicts.map((verdict) => judgement(verdict)))

describe("Verifier.combine", () => {
  // Every subset of the four verdicts, each present once.
  const table: ReadonlyArray<readonly [ReadonlyArray<Verdict>, Verdict]> = [
    [[], "NOT_RUN"],
    [["PASS"], "PASS"],
    [["NOT_RUN"], "NOT_RUN"],
    [["INDETERMINATE"], "INDETERMINATE"],
    [["FAIL"], "FAIL"],
    [["PASS", "NOT_RUN"], "NOT_RUN"],
    [["PASS", "INDETERMINATE"], "INDETERMINATE"],
    [["PASS", "FAIL"], "FAIL"],
    [["NOT_RUN", "INDETERMINATE"], "INDETERMINATE"],
    [["NOT_RUN", "FAIL"], "FAIL"],
    [["INDETERMINATE", "FAIL"], "FAIL"],
    [["PASS", "NOT_RUN", "INDETERMINATE"], "INDETERMINATE"],
    [["PASS", "NOT_RUN", "FAIL"], "FAIL"],
    [["PASS", "INDETERMINATE", "FAIL"], "FAIL"],
    [["NOT_RUN", "INDETERMINATE", "FAIL"], "FAIL"],
    [["PASS", "NOT_RUN", "INDETERMINATE", "FAIL"], "FAIL"]
  ]
  it.each(table)("%j → %s", (verdicts, expected) => {
    expect(combine(verdicts)).toBe(expected)
    expect(combine([...verdicts].reverse())).toBe(expected)
  })

  it.each([
    [["PASS", "PASS", "PASS"], "PASS"],
    [["FAIL", "FAIL"], "FAIL"],
    [["NOT_RUN", "PASS", "PASS"], "NOT_RUN"],
    [["PASS", "PASS", "INDETERMINATE", "NOT_RUN", "NOT_RUN"], "INDETERMINATE"]
  ] as const)("with repeats: %j → %s", (verdicts, expected) => {
    expect(combine(verdicts)).toBe(expected)
  })

  it("agrees with a severity ranking (FAIL > INDETERMINATE > NOT_RUN > PASS, nothing → NOT_RUN)", () => {
    const severity: Record<Verdict, number> = { PASS: 0, NOT_RUN: 1, INDETERMINATE: 2, FAIL: 3 }
    const byRank: ReadonlyArray<Verdict> = ["PASS", "NOT_RUN", "INDETERMINATE", "FAIL"]
    const reference = (verdicts: ReadonlyArray<Verdict>): Verdict =>
      verdicts.length === 0 ? "NOT_RUN" : byRank[Math.max(...verdicts.map((verdict) => severity[verdict]))]!
    fc.assert(
      fc.property(fc.array(fc.constantFrom<Verdict>("PASS", "FAIL", "INDETERMINATE", "NOT_RUN"), { maxLength: 12 }), (verdicts) => {
        expect(combine(verdicts)).toBe(reference(verdicts))
      })
    )
  })

  it("a PASS never changes what the others came to, unless nothing else judged", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<Verdict>("PASS", "FAIL", "INDETERMINATE", "NOT_RUN"), { minLength: 1, maxLength: 8 }), fc.nat(), (verdicts, at) => {
        const withPass = [...verdicts]
        withPass.splice(at % (verdicts.length + 1), 0, "PASS")
        expect(combine(withPass)).toBe(combine(verdicts))
      })
    )
  })
})

describe("Verifier.layer and Builtin", () => {
  it.effect("provides exactly the verifiers given, in order", () =>
    Effect.gen(function*() {
      const a: Verifier.Verifier = { name: "a", appliesTo: () => true, verify: () => Effect.succeed(judgement("PASS", "a")) }
      const b: Verifier.Verifier = { name: "b", appliesTo: () => false, verify: () => Effect.succeed(judgement("FAIL", "b")) }
      const verifiers = yield* Effect.provide(Verifier.Verifiers, Verifier.layer(b, a))
      expect(verifiers.map((verifier) => verifier.name)).toEqual(["b", "a"])
    }))

  it.effect("the built-in layer runs command, junit, artifact, manual in that order", () =>
    Effect.gen(function*() {
      const verifiers = yield* Effect.provide(Verifier.Verifiers, Builtin.layer)
      expect(verifiers.map((verifier) => verifier.name)).toEqual(["command", "junit", "artifact", "manual"])
      expect(Builtin.verifiers.map((verifier) => verifier.name)).toEqual(["command", "junit", "artifact", "manual"])
    }))

  const applies: ReadonlyArray<readonly [string, Parameters<Verifier.Verifier["appliesTo"]>[0], ReadonlyArray<string>]> = [
    ["a bare command", { id: "AC-001", outcome: "o", required: true, verify: { command: "true" } }, ["command"]],
    ["a command with a JUnit report", { id: "AC-001", outcome: "o", required: true, verify: { command: "true", junit: "r.xml" } }, ["command", "junit"]],
    [
      "a command with artifacts",
      { id: "AC-001", outcome: "o", required: true, verify: { command: "true", artifacts: [{ path: "a" }] } },
      ["command", "artifact"]
    ],
    [
      "a command with an empty artifact list",
      { id: "AC-001", outcome: "o", required: true, verify: { command: "true", artifacts: [] } },
      ["command"]
    ],
    [
      "everything a command can carry",
      { id: "AC-001", outcome: "o", required: true, verify: { command: "true", junit: "r.xml", artifacts: [{ path: "a" }] } },
      ["command", "junit", "artifact"]
    ],
    ["a manual check", { id: "AC-001", outcome: "o", required: true, manual: { procedure: "p", observer: "qa" } }, ["manual"]],
    ["neither (a criterion nobody can check)", { id: "AC-001", outcome: "o", required: false }, []]
  ]
  it.each(applies)("for %s, applies %j", (_label, criterion, names) => {
    expect(Builtin.verifiers.filter((verifier) => verifier.appliesTo(criterion)).map((verifier) => verifier.name)).toEqual(names)
  })
})
