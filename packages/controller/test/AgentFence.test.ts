/**
 * How a hook knows the runner's agent (ADR 0040), from hand-written tables: the claim a session's
 * environment makes (none, whole, or broken, and why), and the check of a whole claim against what
 * the store says, every accepted row and every rejected row written out, each refusal with words a
 * person can act on.
 */
import { describe, expect, it } from "@effect/vitest"
import * as AgentFence from "../src/AgentFence.js"

const capability = "c".repeat(43)
const claim: AgentFence.Claim = { taskId: "t-1", runId: "run-1", stepId: "impl", attempt: 2, capability }
const env = { RATCHET_TASK: "t-1", RATCHET_RUN: "run-1", RATCHET_STEP: "impl", RATCHET_ATTEMPT: "2", RATCHET_CAPABILITY: capability }

describe("AgentFence.capability", () => {
  it("is 32 random bytes in base64url, different each time, and its intent id is its SHA-256", () => {
    const one = AgentFence.newCapability()
    const two = AgentFence.newCapability()
    expect(one).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(one).not.toBe(two)
    // sha256("abc"), written out.
    expect(AgentFence.intentIdOf("abc")).toBe("in-agent-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(AgentFence.intentIdOf(one)).not.toBe(AgentFence.intentIdOf(two))
  })
})

describe("AgentFence.claimOf", () => {
  const none: ReadonlyArray<readonly [string, Record<string, string | undefined>]> = [
    ["no variable", {}],
    ["only the task (a person's preferred task)", { RATCHET_TASK: "t-1" }],
    ["the task and the step", { RATCHET_TASK: "t-1", RATCHET_STEP: "impl" }],
    ["the claim's variables set empty", { RATCHET_RUN: "", RATCHET_ATTEMPT: "", RATCHET_CAPABILITY: "" }]
  ]
  it.each(none)("no claim: %s", (_, environment) => {
    expect(AgentFence.claimOf(environment)).toEqual({ _tag: "None" })
  })

  it("a whole claim", () => {
    expect(AgentFence.claimOf(env)).toEqual({ _tag: "Claim", claim })
  })

  const broken: ReadonlyArray<readonly [string, Record<string, string | undefined>, string]> = [
    ["the capability missing", { ...env, RATCHET_CAPABILITY: undefined }, "RATCHET_CAPABILITY is not set"],
    ["the capability empty", { ...env, RATCHET_CAPABILITY: "" }, "RATCHET_CAPABILITY is not set"],
    ["only the capability", { RATCHET_CAPABILITY: capability }, "RATCHET_TASK, RATCHET_RUN, RATCHET_STEP, RATCHET_ATTEMPT are not set"],
    ["the run missing", { ...env, RATCHET_RUN: undefined }, "RATCHET_RUN is not set"],
    ["the task missing", { ...env, RATCHET_TASK: undefined }, "RATCHET_TASK is not set"],
    ["a capability too short", { ...env, RATCHET_CAPABILITY: "c".repeat(42) }, "is not a capability the runner makes"],
    ["a capability with a character base64url has not", { ...env, RATCHET_CAPABILITY: `${"c".repeat(42)}=` }, "is not a capability the runner makes"],
    ["attempt 0", { ...env, RATCHET_ATTEMPT: "0" }, "RATCHET_ATTEMPT is not a positive whole number"],
    ["attempt 1.5", { ...env, RATCHET_ATTEMPT: "1.5" }, "RATCHET_ATTEMPT is not a positive whole number"],
    ["attempt -1", { ...env, RATCHET_ATTEMPT: "-1" }, "RATCHET_ATTEMPT is not a positive whole number"],
    ["a run id with a space", { ...env, RATCHET_RUN: "run 1" }, "RATCHET_RUN is not an id"],
    ["a step id with a slash", { ...env, RATCHET_STEP: "a/b" }, "RATCHET_STEP is not an id"]
  ]
  it.each(broken)("broken: %s", (_, environment, words) => {
    const read = AgentFence.claimOf(environment)
    expect(read._tag).toBe("Broken")
    expect(read._tag === "Broken" ? read.reason : "").toContain(words)
  })
})

describe("AgentFence.check", () => {
  const intentId = AgentFence.intentIdOf(capability)
  /** Everything holds: the runner's agent of attempt 2, under epoch 3. */
  const holds: AgentFence.Facts = {
    task: { state: "RUNNING", runId: "run-1" },
    attempt: { state: "Running" },
    intent: { runId: "run-1", stepId: "impl", attempt: 2, state: "Dispatched" },
    dispatchEpoch: 3,
    lease: { status: "held", epoch: 3 }
  }

  it("accepts the claim when everything holds, with the runner's epoch and the attempt's intent", () => {
    expect(AgentFence.check(claim, holds)).toEqual({ _tag: "Agent", claim, intentId, epoch: 3 })
  })

  // Rejected: [what differs, the facts, the reason's words]. Each row breaks one rule.
  const rejected: ReadonlyArray<readonly [string, AgentFence.Facts, string]> = [
    ["no such task", { ...holds, task: null }, "there is no such task"],
    ["the task is VERIFYING", { ...holds, task: { state: "VERIFYING", runId: "run-1" } }, "the task is VERIFYING, not RUNNING"],
    ["the task is PAUSED", { ...holds, task: { state: "PAUSED", runId: "run-1" } }, "the task is PAUSED, not RUNNING"],
    ["another run is current", { ...holds, task: { state: "RUNNING", runId: "run-2" } }, "the task's current run is run-2"],
    ["no run", { ...holds, task: { state: "RUNNING", runId: null } }, "the task's current run is none"],
    ["no such attempt", { ...holds, attempt: null }, "the run has no such attempt"],
    ["the attempt succeeded", { ...holds, attempt: { state: "Succeeded" } }, "the attempt is Succeeded, not running"],
    ["the attempt is Indeterminate", { ...holds, attempt: { state: "Indeterminate" } }, "the attempt is Indeterminate, not running"],
    ["the attempt is pending", { ...holds, attempt: { state: "Pending" } }, "the attempt is Pending, not running"],
    ["the capability names no intent", { ...holds, intent: null }, "is not the capability the runner gave"],
    ["the intent is another step's", { ...holds, intent: { ...(holds.intent as NonNullable<AgentFence.Facts["intent"]>), stepId: "docs" } }, "is not the capability the runner gave"],
    ["the intent is another attempt's", { ...holds, intent: { ...(holds.intent as NonNullable<AgentFence.Facts["intent"]>), attempt: 1 } }, "is not the capability the runner gave"],
    ["the intent is another run's", { ...holds, intent: { ...(holds.intent as NonNullable<AgentFence.Facts["intent"]>), runId: "run-0" } }, "is not the capability the runner gave"],
    ["the agent's intent was resolved", { ...holds, intent: { ...(holds.intent as NonNullable<AgentFence.Facts["intent"]>), state: "Resolved" } }, "its intent is Resolved"],
    ["the lease expired", { ...holds, lease: { status: "expired", epoch: 3 } }, "the runner's writer lease is expired"],
    ["the lease is free", { ...holds, lease: { status: "free", epoch: 3 } }, "the runner's writer lease is free"],
    ["the lease held with no epoch", { ...holds, lease: { status: "held", epoch: null } }, "the runner's writer lease is unknown"],
    ["the lease was taken over", { ...holds, lease: { status: "held", epoch: 4 } }, "started under lease epoch 3 and the lease is at epoch 4"],
    ["the dispatch's epoch unknown", { ...holds, dispatchEpoch: null }, "started under lease epoch unknown"]
  ]
  it.each(rejected)("refuses: %s", (_, facts, words) => {
    const verdict = AgentFence.check(claim, facts)
    expect(verdict._tag).toBe("Refused")
    const reason = verdict._tag === "Refused" ? verdict.reason : ""
    expect(reason).toContain(words)
    expect(reason).toContain("attempt 2 of step impl in run run-1 of task t-1")
  })
})
