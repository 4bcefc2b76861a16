/**
 * The envelope of a successor a failed verification scheduled (ADR 0041): the failures and their
 * fingerprint in the text ahead of the prompt and in `RATCHET_REVISION`, bounded; and nothing of
 * the kind for an attempt no REVISE scheduled. A hand table of revisions.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import type * as Task from "@ratchet/kernel/Task"
import * as Either from "effect/Either"
import * as AgentEnvelope from "../src/AgentEnvelope.js"

const spec: Spec.Spec = Either.getOrThrow(Spec.decode({
  goal: "Make the flag say fixed",
  acceptanceCriteria: [{ id: "AC-001", outcome: "The flag says fixed.", required: true, verify: { command: "grep -qx fixed flag.txt" } }],
  execution: { allowedScope: ["flag.txt"] }
}))
const plan = Either.getOrThrow(Plan.decode({
  specDigest: Spec.digest(spec),
  steps: [{ id: "impl", title: "Fix it", acRefs: ["AC-001"], agent: { host: "codex", prompt: "Fix the flag." } }]
}, spec))
const step = plan.steps[0]!
const task = {
  _tag: "Task",
  version: 20,
  taskId: "t-1",
  projectId: "p-1",
  goal: spec.goal,
  slug: "fix",
  state: "RUNNING",
  pausedFrom: null,
  brief: { revision: 1, questions: [], restatement: null, closed: true },
  spec: { revision: 1, digest: Spec.digest(spec), spec, approvedDigest: Spec.digest(spec), approval: null },
  preflight: null,
  plan: { revision: 1, digest: Plan.digest(plan), plan, approvedDigest: Plan.digest(plan), approval: null, stale: false },
  run: { runId: "run-1", specDigest: Spec.digest(spec), planDigest: Plan.digest(plan), leaseEpoch: 1 },
  successorsUsed: 1,
  failureFingerprints: [],
  blockers: []
} as unknown as Task.Task

const fingerprint = "fp:exit:1:0123456789abcdef"
const envelopeOf = (revision: AgentEnvelope.Revision | null) => {
  const made = AgentEnvelope.make(task, step, 2, revision)
  if (typeof made === "string") throw new Error(made)
  return made
}

describe("AgentEnvelope with a revision", () => {
  it("an attempt no REVISE scheduled says nothing of one", () => {
    const envelope = envelopeOf(null)
    expect(envelope.revision).toBeUndefined()
    expect(AgentEnvelope.promptOf(envelope)).not.toContain("failed verification")
    expect(AgentEnvelope.environmentOf(envelope)["RATCHET_REVISION"]).toBeUndefined()
  })

  it("a successor reads the failures and the fingerprint ahead of the prompt, and in RATCHET_REVISION", () => {
    const envelope = envelopeOf({
      fingerprint,
      failures: [{ acId: "AC-001", verdict: "FAIL", excerpt: "the check ended exit:1: expected fixed\ngot broken\n" }]
    })
    const text = AgentEnvelope.promptOf(envelope)
    expect(text).toContain(
      [
        `This attempt revises work that failed verification (fingerprint ${fingerprint}). Fix what failed; the same failure again blocks the task:`,
        "- AC-001 FAIL: the check ended exit:1: expected fixed | got broken",
        "",
        "The step:",
        "Fix the flag."
      ].join("\n")
    )
    expect(text.endsWith("The step:\nFix the flag.")).toBe(true)
    expect(JSON.parse(AgentEnvelope.environmentOf(envelope)["RATCHET_REVISION"]!)).toStrictEqual({
      fingerprint,
      failures: [{ acId: "AC-001", verdict: "FAIL", excerpt: "the check ended exit:1: expected fixed\ngot broken" }]
    })
  })

  // failures given → listed, left out; excerpt length given → kept
  it.each([
    [1, 1, 0, 10, 10],
    [20, 20, 0, 400, 400],
    [21, 20, 1, 401, 400],
    [50, 20, 30, 5000, 400]
  ])("%i failures → %i listed, %i left out; an excerpt of %i characters keeps %i", (given, listed, leftOut, length, kept) => {
    const envelope = envelopeOf({
      fingerprint,
      failures: Array.from({ length: given }, (_, i) => ({ acId: `AC-${i}`, verdict: "FAIL", excerpt: "e".repeat(length) }))
    })
    expect(envelope.revision!.failures).toHaveLength(listed)
    expect(envelope.revision!.failuresLeftOut).toBe(leftOut)
    expect(envelope.revision!.failures[0]!.excerpt).toHaveLength(kept)
    const text = AgentEnvelope.promptOf(envelope)
    if (leftOut > 0) expect(text).toContain(`- and ${leftOut} more; ratchet evidence t-1 lists them all`)
    else expect(text).not.toContain("more; ratchet evidence")
    // Still one process argument, with the largest prompt a plan may hold.
    expect(Buffer.byteLength(AgentEnvelope.promptOf({ ...envelope, prompt: "p".repeat(65_536) }))).toBeLessThan(128 * 1024)
  })
})
