/**
 * `ratchet gate`: which gate answers for which transition, from hand-written tasks, and the exit
 * class every failure maps to.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Digest from "@ratchet/kernel/Digest"
import type * as Task from "@ratchet/kernel/Task"
import * as Signing from "@ratchet/testkit/Signing"
import * as ControllerError from "../src/ControllerError.js"
import * as Explain from "../src/Explain.js"
import * as TaskView from "../src/TaskView.js"

/** ana approved the spec and plan of these tasks with her key; the project trusts her. */
const ana = Signing.keyOf(5)

const digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" as Digest.Digest
const digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" as Digest.Digest

const base: Task.Task = {
  _tag: "Task",
  version: 5,
  taskId: "t-00000001",
  projectId: "prj",
  goal: "goal",
  slug: "goal",
  state: "INTERVIEWING",
  pausedFrom: null,
  brief: { revision: 1, questions: [], restatement: null, closed: false },
  spec: null,
  preflight: null,
  plan: null,
  run: null,
  successorsUsed: 0,
  failureFingerprints: [],
  blockers: []
}

const spec = {
  revision: 1,
  digest: digestA,
  spec: {
    goal: "goal",
    acceptanceCriteria: [{ id: "AC-001", outcome: "works", required: true, verify: { command: "true" } }],
    execution: { allowedScope: ["src/**"] }
  },
  approvedDigest: digestA,
  approval: Signing.receipt(ana, "prj", "t-00000001", 1, { subject: "spec", digest: digestA, actor: { kind: "user", id: "ana" }, channel: "terminal", at: 1 })
} as unknown as NonNullable<Task.Task["spec"]>

const plan = (approved: boolean, stale = false) =>
  ({
    revision: 1,
    digest: digestB,
    plan: { specDigest: digestA, steps: [{ id: "s1", title: "s1", acRefs: ["AC-001"], run: { command: "true" } }] },
    approvedDigest: approved ? digestB : null,
    approval: approved
      ? Signing.receipt(ana, "prj", "t-00000001", 1, { subject: "plan", digest: digestB, actor: { kind: "user", id: "ana" }, channel: "terminal", at: 2 })
      : null,
    stale
  }) as unknown as NonNullable<Task.Task["plan"]>

const facts: Explain.Facts = { now: 1000, leaseHeld: false, pendingSteps: [], authority: Signing.authorityFor("prj", [{ id: "ana", key: ana.key }]) }

const codes = (explained: Explain.Explanation) => explained.gate?.reasons.map((r) => r.code) ?? []

describe("Explain.explain", () => {
  // [description, task, --to, decision, gate kind or null, reason codes]
  const table: ReadonlyArray<
    readonly [string, Task.Task, Task.State | undefined, Explain.Explanation["decision"], string | null, ReadonlyArray<string>]
  > = [
    ["an open blocking question holds the brief", {
      ...base,
      brief: { ...base.brief, questions: [{ questionId: "Q-1", text: "?", blocking: true, answer: null }] }
    }, undefined, "HOLD", "brief_closure", ["blocking_question_open", "restatement_missing"]],
    ["a closed brief clears the spec proposal", { ...base, brief: { ...base.brief, closed: true } }, undefined, "CLEAR", "spec_proposal", []],
    ["INTERVIEWING → RUNNING is forbidden", base, "RUNNING", "FORBIDDEN", null, []],
    ["SPEC_READY → RUNNING is forbidden", { ...base, state: "SPEC_READY", spec: { ...spec, approvedDigest: null } }, "RUNNING", "FORBIDDEN", null, []],
    ["a spec approval needs a receipt", { ...base, state: "SPEC_READY", spec: { ...spec, approvedDigest: null } }, undefined, "HOLD", "spec_approval", [
      "receipt_required"
    ]],
    ["SPEC_APPROVED → PREFLIGHT has no gate", { ...base, state: "SPEC_APPROVED", spec }, undefined, "ALLOWED", null, []],
    ["a missing preflight holds the plan", { ...base, state: "PREFLIGHT", spec }, undefined, "HOLD", "plan_proposal", ["preflight_missing"]],
    ["a wrong assumption holds the plan", {
      ...base,
      state: "PREFLIGHT",
      spec,
      preflight: { specDigest: digestA, observation: { head: null, dirtyPaths: [], missingPaths: ["src/gone.ts"], invalidScopes: [] } }
    }, undefined, "HOLD", "plan_proposal", ["preflight_wrong_assumption"]],
    ["a stale plan holds its approval", { ...base, state: "PLAN_READY", spec, plan: plan(false, true) }, undefined, "HOLD", "plan_approval", [
      "plan_stale",
      "receipt_required"
    ]],
    ["an approved plan without the lease holds the run", { ...base, state: "PLAN_APPROVED", spec, plan: plan(true) }, undefined, "HOLD", "run_start", [
      "lease_required"
    ]],
    ["steps without a terminal attempt hold verification", { ...base, state: "RUNNING", spec, plan: plan(true) }, undefined, "HOLD", "verification_entry", [
      "steps_not_terminal"
    ]],
    ["completion without evidence holds", { ...base, state: "VERIFYING", spec, plan: plan(true) }, undefined, "HOLD", "completion", ["missing_evidence"]],
    ["a cancelled task is terminal", { ...base, state: "CANCELLED" }, "INTERVIEWING", "FORBIDDEN", null, []],
    ["a completed task is terminal", { ...base, state: "COMPLETED" }, undefined, "FORBIDDEN", null, []],
    ["reopening out of FAILED needs a receipt", { ...base, state: "FAILED", spec }, undefined, "HOLD", "reopen", ["receipt_required"]],
    ["PAUSED goes back where it paused, ungated", { ...base, state: "PAUSED", pausedFrom: "INTERVIEWING" }, undefined, "ALLOWED", null, []]
  ]

  for (const [description, task, to, decision, kind, reasons] of table) {
    it(description, () => {
      const explained = Explain.explain(task, to, { ...facts, pendingSteps: task.state === "RUNNING" ? ["s1"] : [] })
      expect(explained.decision).toBe(decision)
      expect(explained.gate?.kind ?? null).toBe(kind)
      for (const code of reasons) expect(codes(explained)).toContain(code)
      expect(explained.explanation.length).toBeGreaterThan(0)
    })
  }

  it("an approved plan whose lease is held clears the run start", () => {
    const explained = Explain.explain({ ...base, state: "PLAN_APPROVED", spec, plan: plan(true) }, undefined, { ...facts, leaseHeld: true })
    expect(explained.decision).toBe("CLEAR")
  })
})

describe("TaskView.actionsOf", () => {
  it("offers nothing in a terminal state and always offers cancel otherwise", () => {
    expect(TaskView.actionsOf({ ...base, state: "CANCELLED" })).toEqual([])
    expect(TaskView.actionsOf({ ...base, state: "COMPLETED" })).toEqual([])
    for (const state of ["INTERVIEWING", "SPEC_READY", "PLAN_APPROVED", "RUNNING", "BLOCKED", "FAILED", "PAUSED"] as const) {
      expect(TaskView.actionsOf({ ...base, state }).some((action) => action.command.startsWith("ratchet cancel"))).toBe(true)
    }
  })

  it("offers the spec only once the brief is closed", () => {
    const open = TaskView.actionsOf(base).map((a) => a.command)
    const closed = TaskView.actionsOf({ ...base, brief: { ...base.brief, closed: true } }).map((a) => a.command)
    expect(open.some((c) => c.startsWith("ratchet spec"))).toBe(false)
    expect(closed.some((c) => c.startsWith("ratchet spec"))).toBe(true)
  })
})

describe("ControllerError.exitClassOf", () => {
  const table: ReadonlyArray<readonly [unknown, ControllerError.ExitClass]> = [
    [{ _tag: "@ratchet/kernel/TaskCommandHeld" }, "hold"],
    [{ _tag: "@ratchet/kernel/TaskCommandHeld", gate: { reasons: [{ code: "receipt_required" }] } }, "hold"],
    [{ _tag: "@ratchet/kernel/TaskCommandHeld", gate: { reasons: [{ code: "approval_requires_terminal" }, { code: "stale_digest" }] } }, "conflict"],
    [{ _tag: "@ratchet/kernel/TaskCommandRefused", code: "forbidden_transition" }, "invalid"],
    [{ _tag: "@ratchet/kernel/TaskCommandRefused", code: "terminal_state" }, "invalid"],
    [{ _tag: "@ratchet/kernel/TaskCommandRefused", code: "stale_digest" }, "conflict"],
    [{ _tag: "@ratchet/controller/LeaseConflict" }, "conflict"],
    [{ _tag: "@ratchet/controller/WriteConflict" }, "conflict"],
    [{ _tag: "@ratchet/lease/LeaseHeld" }, "conflict"],
    [{ _tag: "@ratchet/lease/TakeoverTooEarly" }, "conflict"],
    [{ _tag: "@ratchet/controller/TaskNotFound" }, "invalid"],
    [{ _tag: "@ratchet/controller/ContractFileError" }, "invalid"],
    [{ _tag: "@ratchet/controller/ProjectNotInitialised" }, "invalid"],
    [{ _tag: "@ratchet/storage/StorageError", reason: { _tag: "SchemaTooNew" } }, "invalid"],
    [{ _tag: "@ratchet/storage/StorageError", reason: { _tag: "Connection" } }, "unexpected"],
    [{ _tag: "@ratchet/controller/PreflightError" }, "unexpected"],
    [new Error("boom"), "unexpected"],
    ["a string", "unexpected"],
    [null, "unexpected"]
  ]
  for (const [error, expected] of table) {
    it(`${JSON.stringify(error) ?? String(error)} → ${expected}`, () => {
      expect(ControllerError.exitClassOf(error)).toBe(expected)
    })
  }
})

describe("TaskView.make next step", () => {
  const observation = {
    projectId: "prj",
    taskId: base.taskId,
    status: "free" as const,
    epoch: null,
    holder: null,
    acquiredAt: null,
    heartbeatAt: null,
    graceMs: null,
    deadline: null,
    now: 0
  }
  const preflighted = (missing: ReadonlyArray<string>): Task.Task => ({
    ...base,
    state: "PREFLIGHT",
    spec,
    preflight: { specDigest: digestA, observation: { head: null, dirtyPaths: [], missingPaths: missing, invalidScopes: [] } }
  })

  it("points at reopen after a wrong assumption, at the plan otherwise", () => {
    const wrong = TaskView.make(preflighted(["src/gone.ts"]), { version: 1, lastLsn: 1 }, observation)
    expect(wrong.next).toBe(`The preflight found a wrong assumption (missing src/gone.ts): reopen the contract: ratchet reopen ${base.taskId} --reason "…"`)
    const clean = TaskView.make(preflighted([]), { version: 1, lastLsn: 1 }, observation)
    expect(clean.next).toBe(`Propose the plan: ratchet plan ${base.taskId} --file plan.yaml`)
  })
})
