/**
 * A REVISE pass's failures and fingerprint (ADR 0041), from hand-written evidence: how each kind of
 * check's ending is named, what the fingerprint is taken over (FAILed criteria only, in id order,
 * numbers and digests normalised), and the excerpt a successor's envelope carries.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import type * as Evidence from "@ratchet/verifier/Evidence"
import * as Revision from "../src/Revision.js"

const verdict = (acId: string, outcome: Event.AcVerdict["verdict"] = "FAIL"): Event.AcVerdict => ({
  acId,
  verdict: outcome,
  evidenceRefs: [],
  specDigest: `sha256:${"a".repeat(64)}` as Event.AcVerdict["specDigest"],
  verifier: { kind: "user", id: "v" },
  at: 1,
  signature: null
})

const command = (fields: Partial<Evidence.Evidence & { _tag: "command" }>): Evidence.Evidence =>
  ({
    _tag: "command",
    command: "grep -qx fixed flag.txt",
    expectExitCode: 0,
    startedAt: 1,
    exitCode: 1,
    signal: null,
    timedOut: false,
    durationMs: 5,
    stdoutRef: null,
    stderrRef: null,
    outputTail: "broken",
    notStarted: null,
    ...fields
  }) as Evidence.Evidence

describe("Revision.failureOf", () => {
  // evidence → ending, text
  it.each<[string, ReadonlyArray<Evidence.Evidence>, string, string]>([
    ["an exit", [command({})], "exit:1", "broken"],
    ["a timeout", [command({ exitCode: null, timedOut: true, outputTail: "slow" })], "timeout", "slow"],
    ["a signal", [command({ exitCode: null, signal: "SIGKILL", outputTail: "" })], "signal:SIGKILL", ""],
    ["a command that never started", [command({ exitCode: null, notStarted: "spawn sh ENOENT" })], "not_started", "spawn sh ENOENT"],
    ["a person's fail", [{ _tag: "manual", procedure: "look", observer: "a reviewer", result: "fail", note: "still wrong", channel: "terminal" } as unknown as Evidence.Evidence], "manual:fail", "still wrong"],
    ["no evidence", [], "fail", ""]
  ])("%s", (_, evidence, ending, text) => {
    expect(Revision.failureOf(verdict("AC-001"), evidence)).toStrictEqual({ acId: "AC-001", verdict: "FAIL", ending, text })
  })
})

describe("Revision.fingerprintOf", () => {
  const failure = (acId: string, text: string, outcome: Event.AcVerdict["verdict"] = "FAIL", ending = "exit:1"): Revision.Failure => ({ acId, verdict: outcome, ending, text })
  const base = Revision.fingerprintOf([failure("AC-001", "broken 1")])

  it("is the budget's form, over how the checks ended", () => {
    expect(base).toMatch(/^fp:exit:1:[0-9a-f]{16}$/)
  })

  // another pass → the same fingerprint?
  it.each<[string, ReadonlyArray<Revision.Failure>, boolean]>([
    ["numbers differ only", [failure("AC-001", "broken 27")], true],
    ["a criterion that did not FAIL is not part of it", [failure("AC-001", "broken 1"), failure("AC-002", "?", "INDETERMINATE")], true],
    ["different output", [failure("AC-001", "broken-alpha")], false],
    ["another criterion", [failure("AC-002", "broken 1")], false],
    ["another ending", [failure("AC-001", "broken 1", "FAIL", "exit:2")], false],
    ["one more criterion failed", [failure("AC-001", "broken 1"), failure("AC-002", "x")], false]
  ])("%s → same: %s", (_, failures, same) => {
    expect(Revision.fingerprintOf(failures) === base).toBe(same)
  })

  it("does not depend on the order of the criteria, and is null when nothing FAILed", () => {
    const two = [failure("AC-002", "b"), failure("AC-001", "a")]
    expect(Revision.fingerprintOf(two)).toBe(Revision.fingerprintOf([...two].reverse()))
    expect(Revision.fingerprintOf([failure("AC-001", "x", "NOT_RUN")])).toBeNull()
    expect(Revision.fingerprintOf([])).toBeNull()
  })
})

describe("Revision.revisionOf", () => {
  it("names every criterion that did not pass, with how its check ended and the end of its output", () => {
    const long = `${"x".repeat(500)}END`
    expect(Revision.revisionOf("fp:exit:1:0123456789abcdef", [
      { acId: "AC-001", verdict: "FAIL", ending: "exit:1", text: "broken\n" },
      { acId: "AC-002", verdict: "INDETERMINATE", ending: "timeout", text: "" },
      { acId: "AC-003", verdict: "FAIL", ending: "exit:1", text: long }
    ])).toStrictEqual({
      fingerprint: "fp:exit:1:0123456789abcdef",
      failures: [
        { acId: "AC-001", verdict: "FAIL", excerpt: "the check ended exit:1: broken" },
        { acId: "AC-002", verdict: "INDETERMINATE", excerpt: "the check ended timeout" },
        { acId: "AC-003", verdict: "FAIL", excerpt: `the check ended exit:1: …${"x".repeat(296)}END` }
      ]
    })
  })
})
