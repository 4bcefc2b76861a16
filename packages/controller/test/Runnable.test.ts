/**
 * Which tasks a run may take (ADR 0022): PLAN_APPROVED and RUNNING always; with `--takeover`, a
 * task in any other unfinished state only when a runner's lease is held on it (a dead runner left
 * it), never a free lease, a person's or a host session's, or a finished task. Both sets below are
 * written by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import type * as Task from "@ratchet/kernel/Task"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Runnable from "../src/Runnable.js"

type Lease = "free" | "held" | "expired"

/** (state, terminal, --takeover, lease, holder's host) a run takes. */
const accepted: ReadonlyArray<readonly [Task.State, boolean, boolean, Lease, string | undefined]> = [
  ["PLAN_APPROVED", false, false, "free", undefined],
  ["PLAN_APPROVED", false, true, "expired", "runner"],
  ["RUNNING", false, false, "held", "claude-code"],
  ["RUNNING", false, true, "expired", "runner"],
  ["VERIFYING", false, true, "held", "runner"],
  ["VERIFYING", false, true, "expired", "runner"],
  ["BLOCKED", false, true, "expired", "runner"],
  ["PAUSED", false, true, "held", "runner"]
]

/** (state, terminal, --takeover, lease, holder's host, the refusal's code, words its reason holds). */
const refused: ReadonlyArray<readonly [Task.State, boolean, boolean, Lease, string | undefined, string, string]> = [
  ["VERIFYING", false, false, "held", "runner", "forbidden_transition", "PLAN_APPROVED or RUNNING"],
  ["BLOCKED", false, false, "expired", "runner", "forbidden_transition", "this one is BLOCKED"],
  ["PAUSED", false, false, "free", undefined, "task_paused", "this one is PAUSED"],
  ["VERIFYING", false, true, "free", undefined, "forbidden_transition", "nothing to take over"],
  ["BLOCKED", false, true, "free", "runner", "forbidden_transition", "nothing to take over"],
  ["VERIFYING", false, true, "held", "claude-code", "forbidden_transition", "held by a claude-code session, not a runner"],
  ["INTERVIEWING", false, true, "expired", "codex", "forbidden_transition", "held by a codex session, not a runner"],
  ["BLOCKED", false, true, "held", "cli", "forbidden_transition", "ratchet lease takeover"],
  ["SPEC_READY", false, true, "held", undefined, "forbidden_transition", "an unknown holder"],
  ["COMPLETED", true, true, "held", "runner", "terminal_state", "this one is COMPLETED"],
  ["CANCELLED", true, false, "free", undefined, "terminal_state", "this one is CANCELLED"]
]

const admit = (state: Task.State, terminal: boolean, takeover: boolean, lease: Lease, host: string | undefined) =>
  Effect.runSync(Effect.either(Runnable.admit(state, terminal, takeover, lease, "the next step", host)))

describe("Runnable.admit", () => {
  it.each(accepted)("takes %s (terminal %s, takeover %s, lease %s held by %s)", (state, terminal, takeover, lease, host) => {
    expect(Either.isRight(admit(state, terminal, takeover, lease, host))).toBe(true)
  })

  it.each(refused)("refuses %s (terminal %s, takeover %s, lease %s held by %s): %s", (state, terminal, takeover, lease, host, code, words) => {
    const result = admit(state, terminal, takeover, lease, host)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left.code).toBe(code)
      expect(result.left.reason).toContain(words)
      expect(result.left.action).toBe("the next step")
    }
  })
})

describe("Runnable.unsupportedStep", () => {
  const spec: Spec.Spec = { goal: "g", acceptanceCriteria: [{ id: "AC-001", outcome: "o", required: true }] }
  const planOf = (...steps: ReadonlyArray<Record<string, unknown>>) =>
    Either.getOrThrow(Plan.decode({ specDigest: Spec.digest(spec), steps }, spec))
  const command = { id: "prepare", title: "Prepare", acRefs: ["AC-001"], run: { command: "make" } }
  const manual = { id: "review", title: "Review", acRefs: [], manual: { instructions: "read it" } }
  const agentStep = { id: "impl", title: "Implement", acRefs: [], agent: { host: "claude-code", prompt: "do it" } }

  const codexStep = { id: "review-code", title: "Review", acRefs: [], agent: { host: "codex", prompt: "review it" } }

  it("lets a plan of commands and manual steps run, and a task without a plan, whatever hosts the runner reads", () => {
    expect(Runnable.unsupportedStep("t-1", planOf(command, manual), [])).toBeNull()
    expect(Runnable.unsupportedStep("t-1", null, [])).toBeNull()
  })

  it("lets agent steps run on a runner that reads their hosts' streams", () => {
    expect(Runnable.unsupportedStep("t-1", planOf(command, agentStep, codexStep), ["claude-code", "codex"])).toBeNull()
    expect(Runnable.unsupportedStep("t-1", planOf(command, agentStep), ["claude-code"])).toBeNull()
  })

  // hosts the runner reads → the step refused (null: none)
  it.each([
    [[], "impl"],
    [["codex"], "impl"],
    [["claude-code"], "review-code"]
  ] as const)("a runner reading %j refuses %s, the first step of a host it cannot read", (hosts, refusedStep) => {
    const refused = Runnable.unsupportedStep("t-1", planOf(command, manual, agentStep, codexStep), hosts)
    expect(refused?.field).toContain(`(step "${refusedStep}")`)
  })

  it("refuses by field, reason and fix", () => {
    const refused = Runnable.unsupportedStep("t-1", planOf(command, manual, agentStep, { ...agentStep, id: "impl-2" }), [])
    expect(refused?._tag).toBe("@ratchet/controller/InvalidRequest")
    expect(refused?.field).toBe(`plan.steps[2].agent (step "impl")`)
    expect(refused?.reason).toBe(
      `step "impl" of task t-1 is an agent step (host claude-code), and this runner has no reader for that host's stream, so it cannot start it; nothing was run.`
    )
    expect(refused?.fix).toContain(`ratchet reopen t-1`)
    expect(refused?.fix).toContain("ratchet-runner")
  })
})
