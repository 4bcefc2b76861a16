/**
 * One verification pass and its conclusion.
 *
 * `run` with fake verifiers returning fixed judgements: the order they run in, what each sees
 * (`earlier`, the step and attempt behind the criterion), the progress events, the evidence
 * stored as blobs and the verifier of record. One pass with the built-in verifiers in a real
 * workspace. `counted` and `conclude` over verdicts written by hand: APPROVED, REVISE (with the
 * steps to revise in plan order) and BLOCKED for missing evidence or missing authority.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Event from "@ratchet/kernel/Event"
import type * as Gate from "@ratchet/kernel/Gate"
import type * as Spec from "@ratchet/kernel/Spec"
import * as StorageError from "@ratchet/storage/StorageError"
import * as Signing from "@ratchet/testkit/Signing"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Builtin from "../src/Builtin.js"
import type * as EpisodeView from "../src/EpisodeView.js"
import * as Evidence from "../src/Evidence.js"
import * as Verification from "../src/Verification.js"
import * as Verifier from "../src/Verifier.js"
import {
  ac001,
  ac002,
  ac003,
  agent1,
  alice,
  ctxFor,
  episode,
  memoryBlobs,
  OTHER_SPEC_DIGEST,
  PLAN_DIGEST,
  removeWorkspaces,
  RUN_ID,
  runner1,
  SNAPSHOT,
  spec,
  SPEC_DIGEST,
  TREE,
  verifier1,
  workspace
} from "./fixtures.js"

afterEach(removeWorkspaces)

// ---------------------------------------------------------------------------------------------
// run
// ---------------------------------------------------------------------------------------------

const ac009: Spec.AcceptanceCriterion = { id: "AC-009", outcome: "no step serves this one", required: true, verify: { command: "true" } }
const ac010: Spec.AcceptanceCriterion = { id: "AC-010", outcome: "nothing can check this one", required: false }

const commandEvidence = (acId: string, command: string): Evidence.Evidence => ({
  _tag: "command",
  acId,
  specDigest: SPEC_DIGEST,
  snapshotLsn: SNAPSHOT,
  verifier: verifier1,
  at: 10_000,
  command,
  expectExitCode: 0,
  tree: TREE,
  startedAt: 9_000,
  exitCode: 0,
  signal: null,
  timedOut: false,
  durationMs: 1_000,
  stdoutRef: null,
  stderrRef: null,
  outputTail: "",
  notStarted: null
})

const manualEvidence = (acId: string): Evidence.Evidence => ({
  _tag: "manual",
  acId,
  specDigest: SPEC_DIGEST,
  snapshotLsn: SNAPSHOT,
  verifier: alice,
  at: 10_500,
  procedure: "look",
  observer: "tech writer",
  result: "pass",
  note: "",
  channel: "terminal"
})

interface Call {
  readonly verifier: string
  readonly acId: string
  readonly step: string | null
  readonly attempt: number | null
  readonly earlier: ReadonlyArray<string>
}

/**
 * Three fake verifiers: `alpha` judges everything with a verify command PASS with one command
 * evidence; `beta` judges the same criteria by a fixed table, without evidence for AC-009; `eye`
 * judges manual criteria PASS with alice's manual evidence. Every call is recorded.
 */
const fakes = (calls: Array<Call>) => {
  const record = (verifier: string, criterion: Spec.AcceptanceCriterion, ctx: Verifier.VerifierCtx, earlier: ReadonlyArray<Verifier.Judgement>) =>
    calls.push({ verifier, acId: criterion.id, step: ctx.step, attempt: ctx.attempt, earlier: earlier.map((j) => `${j.verifier}:${j.verdict}`) })
  const table: Record<string, Verifier.Judgement["verdict"]> = { "AC-001": "PASS", "AC-002": "FAIL", "AC-009": "INDETERMINATE" }
  const alpha: Verifier.Verifier = {
    name: "alpha",
    appliesTo: (criterion) => criterion.verify !== undefined,
    verify: (criterion, ctx, earlier) =>
      Effect.sync(() => {
        record("alpha", criterion, ctx, earlier)
        return { verifier: "alpha", verdict: "PASS", reason: "alpha ran", evidence: [commandEvidence(criterion.id, `alpha ${criterion.id}`)] }
      })
  }
  const beta: Verifier.Verifier = {
    name: "beta",
    appliesTo: (criterion) => criterion.verify !== undefined,
    verify: (criterion, ctx, earlier) =>
      Effect.sync(() => {
        record("beta", criterion, ctx, earlier)
        const verdict = table[criterion.id] ?? "PASS"
        return {
          verifier: "beta",
          verdict,
          reason: `beta says ${verdict}`,
          evidence: criterion.id === "AC-009" ? [] : [commandEvidence(criterion.id, `beta ${criterion.id}`), commandEvidence(criterion.id, `beta2 ${criterion.id}`)]
        }
      })
  }
  const eye: Verifier.Verifier = {
    name: "eye",
    appliesTo: (criterion) => criterion.manual !== undefined,
    verify: (criterion, ctx, earlier) =>
      Effect.sync(() => {
        record("eye", criterion, ctx, earlier)
        return { verifier: "eye", verdict: "PASS", reason: "looked", evidence: [manualEvidence(criterion.id)] }
      })
  }
  return Verifier.layer(alpha, beta, eye)
}

/** The context a pass gets: the verifier context without the step and attempt it works out. */
const passCtx = (blobs: ReturnType<typeof memoryBlobs>, root = "/nonexistent"): Omit<Verifier.VerifierCtx, "step" | "attempt"> => {
  const { step: _step, attempt: _attempt, ...rest } = ctxFor({ root, blobs })
  return rest
}

describe("Verification.run", () => {
  it.effect("runs the applicable verifiers per criterion in order, each seeing the judgements before it", () =>
    Effect.gen(function*() {
      const calls: Array<Call> = []
      const blobs = memoryBlobs()
      yield* Effect.provide(Verification.run({ criteria: [ac001, ac002, ac003, ac009], ctx: passCtx(blobs) }), fakes(calls))
      expect(calls).toEqual([
        { verifier: "alpha", acId: "AC-001", step: "test", attempt: 3, earlier: [] },
        { verifier: "beta", acId: "AC-001", step: "test", attempt: 3, earlier: ["alpha:PASS"] },
        { verifier: "alpha", acId: "AC-002", step: "test", attempt: 3, earlier: [] },
        { verifier: "beta", acId: "AC-002", step: "test", attempt: 3, earlier: ["alpha:PASS"] },
        { verifier: "eye", acId: "AC-003", step: "docs", attempt: 1, earlier: [] },
        { verifier: "alpha", acId: "AC-009", step: null, attempt: null, earlier: [] },
        { verifier: "beta", acId: "AC-009", step: null, attempt: null, earlier: ["alpha:PASS"] }
      ])
    }))

  it.effect("combines each criterion's judgements, stores every evidence record and names the verifier of record", () =>
    Effect.gen(function*() {
      const blobs = memoryBlobs()
      const before = Date.now()
      const results = yield* Effect.provide(Verification.run({ criteria: [ac001, ac002, ac003, ac009, ac010], ctx: passCtx(blobs) }), fakes([]))
      const after = Date.now()
      expect(results.map((result) => [result.acId, result.required, result.verdict.verdict, result.verdict.verifier, result.judgements.map((j) => j.verifier)])).toEqual([
        ["AC-001", true, "PASS", verifier1, ["alpha", "beta"]],
        ["AC-002", true, "FAIL", verifier1, ["alpha", "beta"]],
        ["AC-003", false, "PASS", alice, ["eye"]],
        ["AC-009", true, "INDETERMINATE", verifier1, ["alpha", "beta"]],
        ["AC-010", false, "NOT_RUN", verifier1, []]
      ])
      for (const result of results) {
        expect(result.verdict.acId).toBe(result.acId)
        expect(result.verdict.specDigest).toBe(SPEC_DIGEST)
        expect(result.verdict.at >= before && result.verdict.at <= after).toBe(true)
        // Every ref is a stored blob that loads back as the evidence, in the order judged.
        const loaded: Array<Evidence.Evidence> = []
        for (const ref of result.verdict.evidenceRefs) loaded.push(yield* Evidence.load(blobs, ref))
        expect(loaded).toEqual(result.judgements.flatMap((judgement) => judgement.evidence))
      }
      expect(results.map((result) => result.verdict.evidenceRefs.length)).toEqual([3, 3, 1, 1, 0])
      expect(results.map((result) => result.judgements.flatMap((j) => j.evidence).map((e) => e._tag === "command" ? e.command : e._tag))).toEqual([
        ["alpha AC-001", "beta AC-001", "beta2 AC-001"],
        ["alpha AC-002", "beta AC-002", "beta2 AC-002"],
        ["manual"],
        ["alpha AC-009"],
        []
      ])
      expect(blobs.puts).toHaveLength(8)
    }))

  it.effect("reports progress in order: started then judged, with index and total", () =>
    Effect.gen(function*() {
      const progress: Array<Verification.Progress> = []
      const results = yield* Effect.provide(
        Verification.run({
          criteria: [ac003, ac001, ac010],
          ctx: passCtx(memoryBlobs()),
          onProgress: (event) => Effect.sync(() => progress.push(event))
        }),
        fakes([])
      )
      expect(progress.map((event) =>
        event._tag === "CriterionStarted"
          ? [event._tag, event.acId, event.index, event.total, event.verifiers]
          : [event._tag, event.acId, event.index, event.total, event.result.verdict.verdict]
      )).toEqual([
        ["CriterionStarted", "AC-003", 0, 3, ["eye"]],
        ["CriterionJudged", "AC-003", 0, 3, "PASS"],
        ["CriterionStarted", "AC-001", 1, 3, ["alpha", "beta"]],
        ["CriterionJudged", "AC-001", 1, 3, "PASS"],
        ["CriterionStarted", "AC-010", 2, 3, []],
        ["CriterionJudged", "AC-010", 2, 3, "NOT_RUN"]
      ])
      // The judged events carry the very results returned.
      expect(progress.filter((event) => event._tag === "CriterionJudged").map((event) => event.result)).toEqual(results)
    }))

  it.effect("with no criteria, judges nothing and reports nothing", () =>
    Effect.gen(function*() {
      const progress: Array<Verification.Progress> = []
      const blobs = memoryBlobs()
      const results = yield* Effect.provide(
        Verification.run({ criteria: [], ctx: passCtx(blobs), onProgress: (event) => Effect.sync(() => progress.push(event)) }),
        fakes([])
      )
      expect(results).toEqual([])
      expect(progress).toEqual([])
      expect(blobs.puts).toEqual([])
    }))

  it.effect("fails with the store's error when evidence cannot be stored", () =>
    Effect.gen(function*() {
      const full = StorageError.make("blob.put", { _tag: "Full", code: "ENOSPC", detail: "no space left on device" })
      const blobs = { ...memoryBlobs(), put: () => Effect.fail(full) }
      const ctx = { ...passCtx(memoryBlobs()), blobs }
      const error = yield* Effect.flip(Effect.provide(Verification.run({ criteria: [ac001], ctx }), fakes([])))
      expect(error).toBe(full)
    }))

  it.effect("with the built-in verifiers in a real workspace: command, JUnit and manual evidence", () =>
    Effect.gen(function*() {
      const root = workspace()
      const report = `<testsuite name="status"><testcase name="prints json"><failure message="got two documents"/></testcase></testsuite>`
      fs.writeFileSync(path.join(root, "report.src"), report)
      const criteria: ReadonlyArray<Spec.AcceptanceCriterion> = [
        { ...ac001, verify: { command: "echo hello" } },
        { ...ac002, verify: { command: "mkdir -p reports && cp report.src reports/junit.xml", junit: "reports/junit.xml" } },
        ac003
      ]
      const blobs = memoryBlobs()
      const results = yield* Effect.provide(Verification.run({ criteria, ctx: passCtx(blobs, root) }), Builtin.layer)
      expect(results.map((result) => [result.acId, result.verdict.verdict, result.judgements.map((j) => `${j.verifier}:${j.verdict}`)])).toEqual([
        ["AC-001", "PASS", ["command:PASS"]],
        ["AC-002", "FAIL", ["command:PASS", "junit:FAIL"]],
        ["AC-003", "NOT_RUN", ["manual:NOT_RUN"]]
      ])
      const conclusion = Verification.conclude({
        taskId: "t-1",
        spec,
        specDigest: SPEC_DIGEST,
        episode: episode(),
        // The verifier of record signs the pass's verdicts (the controller does, with the person's key).
        verdicts: results.map((result) => sign({ ...result.verdict, verifier: vera })),
        gateContext,
        authority,
        approvals
      })
      expect(conclusion.outcome).toBe("REVISE")
      expect(conclusion.failing).toEqual(["AC-002"])
      expect(conclusion.stepsToRevise).toEqual(["test"])
      expect(conclusion.blocker?.lastEvidence).toEqual(results[1]!.verdict.evidenceRefs)
    }))
})

// ---------------------------------------------------------------------------------------------
// counted and conclude
// ---------------------------------------------------------------------------------------------

const gateContext: Gate.Context = {
  taskId: "t-1",
  from: "VERIFYING",
  evaluatedAt: 9_000,
  boundTo: { taskVersion: 58, specDigest: SPEC_DIGEST, planDigest: PLAN_DIGEST }
}

const ref = (n: number) => `sha256:${String(n).repeat(64).slice(0, 64)}`

/** The project's approvers in these tests: alice approved the contract, vera verifies. */
const vera: Event.Actor = { kind: "user", id: "vera" }
const keys: Readonly<Record<string, Signing.TestKey>> = { alice: Signing.keyOf(1), vera: Signing.keyOf(2) }
const authority = Signing.authorityFor("p-1", [{ id: "alice", key: keys["alice"]!.key }, { id: "vera", key: keys["vera"]!.key }])
const approvals: Gate.Approvals = {
  spec: {
    digest: SPEC_DIGEST,
    revision: 1,
    receipt: Signing.receipt(keys["alice"]!, "p-1", "t-1", 1, { subject: "spec", digest: SPEC_DIGEST, actor: alice, channel: "terminal", at: 130 })
  },
  plan: {
    digest: PLAN_DIGEST,
    revision: 1,
    receipt: Signing.receipt(keys["alice"]!, "p-1", "t-1", 1, { subject: "plan", digest: PLAN_DIGEST, actor: alice, channel: "terminal", at: 160 })
  }
}

/** A verdict signed by its verifier's key when they have one (a person), unsigned otherwise. */
const sign = (given: Event.AcVerdict): Event.AcVerdict => {
  const key = given.verifier.kind === "user" ? keys[given.verifier.id] : undefined
  const { signature: _none, ...unsigned } = given
  return key === undefined ? { ...unsigned, signature: null } : Signing.verdict(key, "p-1", "t-1", RUN_ID, unsigned)
}

const verdict = (
  acId: string,
  outcome: Event.AcVerdict["verdict"],
  options: { readonly at?: number; readonly by?: Event.Actor; readonly digest?: Event.AcVerdict["specDigest"]; readonly refs?: ReadonlyArray<string> } = {}
): Event.AcVerdict =>
  sign({
    acId,
    verdict: outcome,
    evidenceRefs: options.refs ?? [ref(Number(acId.slice(3)))],
    specDigest: options.digest ?? SPEC_DIGEST,
    verifier: options.by ?? vera,
    at: options.at ?? 8_500,
    signature: null
  })

const conclude = (verdicts: ReadonlyArray<Event.AcVerdict>, view: EpisodeView.EpisodeView = episode()) =>
  Verification.conclude({ taskId: "t-1", spec, specDigest: SPEC_DIGEST, episode: view, verdicts, gateContext, authority, approvals })

const facts = (workers: ReadonlyArray<Event.Actor>): Gate.VerdictFacts => ({
  taskId: "t-1",
  runId: RUN_ID,
  currentSpecDigest: SPEC_DIGEST,
  workers,
  authority
})

describe("Verification.counted", () => {
  const workers = episode().workers

  it("keeps the newest verdict per criterion against the digest, from a non-worker", () => {
    const a = verdict("AC-001", "FAIL", { at: 100 })
    const b = verdict("AC-001", "PASS", { at: 200 })
    const c = verdict("AC-002", "PASS", { at: 300, digest: OTHER_SPEC_DIGEST })
    const d = verdict("AC-002", "FAIL", { at: 50 })
    const e = verdict("AC-003", "PASS", { at: 900, by: agent1 })
    const f = verdict("AC-003", "FAIL", { at: 10 })
    const counted = Verification.counted([b, a, c, d, e, f], facts(workers))
    expect([...counted.entries()]).toEqual([["AC-001", b], ["AC-002", d], ["AC-003", f]])
  })

  it("breaks a tie in time by log order: the later one wins", () => {
    const first = verdict("AC-001", "FAIL", { at: 100 })
    const second = verdict("AC-001", "PASS", { at: 100 })
    expect(Verification.counted([first, second], facts(workers)).get("AC-001")).toBe(second)
    expect(Verification.counted([second, first], facts(workers)).get("AC-001")).toBe(first)
  })

  it("never counts a worker's verdict, an unsigned one, nor another digest's", () => {
    const byWorker = verdict("AC-001", "PASS")
    const unsigned = verdict("AC-002", "PASS", { by: { kind: "verifier", id: "runner-1" } })
    const stale = verdict("AC-003", "PASS", { digest: OTHER_SPEC_DIGEST })
    expect(Verification.counted([byWorker, unsigned, stale], facts([...workers, vera])).size).toBe(0)
    expect([...Verification.counted([byWorker, unsigned, stale], facts([])).keys()]).toEqual(["AC-001"])
    expect(Verification.counted([], facts(workers)).size).toBe(0)
  })
})

describe("Verification.conclude", () => {
  it("APPROVED when every required criterion PASSed with evidence by a non-worker", () => {
    const conclusion = conclude([verdict("AC-001", "PASS"), verdict("AC-002", "PASS")])
    expect(conclusion).toEqual({
      outcome: "APPROVED",
      gate: {
        kind: "completion",
        decision: "CLEAR",
        from: "VERIFYING",
        to: "COMPLETED",
        reasons: [],
        requiredActions: [],
        evidenceRefs: [ref(1), ref(2)],
        evaluatedAt: 9_000,
        policyVersion: "ratchet-lifecycle/2",
        boundTo: { taskVersion: 58, specDigest: SPEC_DIGEST, planDigest: PLAN_DIGEST }
      },
      failing: [],
      stepsToRevise: [],
      blocker: null
    })
  })

  it.each([
    ["an optional criterion that FAILed", [verdict("AC-003", "FAIL")]],
    ["an optional criterion that was NOT_RUN", [verdict("AC-003", "NOT_RUN")]],
    ["an optional criterion never judged", []]
  ])("APPROVED despite %s", (_label, extra) => {
    expect(conclude([verdict("AC-001", "PASS"), verdict("AC-002", "PASS"), ...extra]).outcome).toBe("APPROVED")
  })

  it("APPROVED by a manual observer who is not a worker", () => {
    expect(conclude([verdict("AC-001", "PASS", { by: alice }), verdict("AC-002", "PASS", { by: alice })]).outcome).toBe("APPROVED")
  })

  it("REVISE when a required criterion FAILed: its steps, the agent to act, its evidence", () => {
    const failed = verdict("AC-002", "FAIL", { refs: [ref(7), ref(8)] })
    const conclusion = conclude([verdict("AC-001", "PASS"), failed])
    expect(conclusion.outcome).toBe("REVISE")
    expect(conclusion.failing).toEqual(["AC-002"])
    expect(conclusion.stepsToRevise).toEqual(["test"])
    expect(conclusion.gate.decision).toBe("HOLD")
    expect(conclusion.gate.reasons).toEqual([{ code: "ac_not_passed", message: "AC-002 FAILED." }])
    expect(conclusion.blocker?.category).toBe("verification_failed")
    expect(conclusion.blocker?.owner).toBe("agent")
    expect(conclusion.blocker?.lastEvidence).toEqual([ref(7), ref(8)])
    expect(conclusion.blocker?.requiredAction).toContain("AC-002 failed (see ratchet evidence t-1)")
    expect(conclusion.blocker?.requiredAction).toContain("of test")
  })

  it("REVISE over every failing criterion, in spec order, their steps in plan order without repeats", () => {
    const conclusion = conclude([verdict("AC-002", "FAIL", { refs: [ref(2)] }), verdict("AC-001", "FAIL", { refs: [ref(1)] })])
    expect(conclusion.failing).toEqual(["AC-001", "AC-002"])
    expect(conclusion.stepsToRevise).toEqual(["build", "test"])
    expect(conclusion.blocker?.lastEvidence).toEqual([ref(1), ref(2)])
    expect(conclusion.blocker?.requiredAction).toContain("AC-001, AC-002 failed")
  })

  it("takes the steps to revise in the plan's order, not the criteria's", () => {
    const view: EpisodeView.EpisodeView = {
      ...episode(),
      steps: [
        { stepId: "guide", title: "g", acRefs: ["AC-002"], instruction: "write", manual: true },
        { stepId: "impl", title: "i", acRefs: ["AC-001"], instruction: "make", manual: false },
        { stepId: "lint", title: "l", acRefs: ["AC-003"], instruction: "lint", manual: false },
        { stepId: "check", title: "c", acRefs: ["AC-002", "AC-001"], instruction: "make check", manual: false }
      ]
    }
    const conclusion = conclude([verdict("AC-001", "FAIL"), verdict("AC-002", "FAIL")], view)
    expect(conclusion.stepsToRevise).toEqual(["guide", "impl", "check"])
  })

  it("REVISE even when another required criterion is missing its verdict", () => {
    const conclusion = conclude([verdict("AC-001", "FAIL")])
    expect(conclusion.outcome).toBe("REVISE")
    expect(conclusion.failing).toEqual(["AC-001"])
    expect(conclusion.stepsToRevise).toEqual(["build", "test"])
  })

  const blockedEvidence: ReadonlyArray<readonly [string, ReadonlyArray<Event.AcVerdict>, ReadonlyArray<Gate.Reason>, ReadonlyArray<string>, string]> = [
    [
      "a required criterion INDETERMINATE",
      [verdict("AC-001", "PASS"), verdict("AC-002", "INDETERMINATE")],
      [{ code: "ac_not_passed", message: "AC-002 is INDETERMINATE, which never counts as PASS." }],
      [ref(1), ref(2)],
      "AC-002"
    ],
    [
      "a required criterion NOT_RUN",
      [verdict("AC-001", "PASS"), verdict("AC-002", "NOT_RUN", { refs: [] })],
      [{ code: "ac_not_passed", message: "AC-002 was NOT_RUN: its check could not be executed." }],
      [ref(1)],
      "AC-002"
    ],
    [
      "a PASS without evidence",
      [verdict("AC-001", "PASS"), verdict("AC-002", "PASS", { refs: [] })],
      [{ code: "missing_evidence", message: "AC-002 is marked PASS without any evidence reference; a claim alone is not evidence." }],
      [ref(1)],
      "AC-002"
    ],
    [
      "an inconclusive criterion beside one never judged",
      [verdict("AC-001", "INDETERMINATE")],
      [
        { code: "ac_not_passed", message: "AC-001 is INDETERMINATE, which never counts as PASS." },
        { code: "missing_evidence", message: "AC-002 has no verdict." }
      ],
      [ref(1)],
      "AC-001"
    ]
  ]
  it.each(blockedEvidence)("BLOCKED missing_evidence for %s", (_label, verdicts, reasons, lastEvidence, inconclusive) => {
    const conclusion = conclude(verdicts)
    expect(conclusion.outcome).toBe("BLOCKED")
    expect(conclusion.failing).toEqual([])
    expect(conclusion.stepsToRevise).toEqual([])
    expect(conclusion.gate.decision).toBe("HOLD")
    expect(conclusion.gate.reasons).toEqual(reasons)
    expect(conclusion.blocker?.category).toBe("missing_evidence")
    expect(conclusion.blocker?.owner).toBe("user")
    expect(conclusion.blocker?.lastEvidence).toEqual(lastEvidence)
    for (const reason of reasons) expect(conclusion.blocker?.requiredAction).toContain(reason.message)
    expect(conclusion.blocker?.requiredAction).toContain(`ratchet verify t-1 --ac ${inconclusive}`)
  })

  /** Short only of verdicts: nothing blocks; the task stays VERIFYING for more verification. */
  const held: ReadonlyArray<readonly [string, ReadonlyArray<Event.AcVerdict>, ReadonlyArray<string>]> = [
    ["a required criterion never judged", [verdict("AC-001", "PASS")], ["missing_evidence"]],
    ["no verdict at all", [], ["missing_evidence", "missing_evidence"]],
    [
      "verdicts against another spec digest only (a FAIL among them)",
      [verdict("AC-001", "PASS"), verdict("AC-002", "FAIL", { digest: OTHER_SPEC_DIGEST }), verdict("AC-002", "PASS", { digest: OTHER_SPEC_DIGEST })],
      ["stale_evidence"]
    ],
    ["a self-verified criterion beside a missing one", [verdict("AC-001", "PASS", { by: runner1 })], ["self_verification", "missing_evidence"]],
    ["a PASS only by the agent that did the manual step", [verdict("AC-001", "PASS"), verdict("AC-002", "PASS", { by: agent1 })], ["self_verification"]],
    ["a PASS only by the runner that ran the attempts", [verdict("AC-001", "PASS", { by: runner1 }), verdict("AC-002", "PASS")], ["self_verification"]],
    ["a worker's FAIL, which never makes a REVISE", [verdict("AC-001", "PASS"), verdict("AC-002", "FAIL", { by: agent1 })], ["self_verification"]],
    ["every verdict by workers", [verdict("AC-001", "PASS", { by: runner1 }), verdict("AC-002", "PASS", { by: agent1 })], ["self_verification", "self_verification"]]
  ]
  it.each(held)("HELD for %s: no blocker, the gate says what is missing", (_label, verdicts, codes) => {
    const conclusion = conclude(verdicts)
    expect(conclusion.outcome).toBe("HELD")
    expect(conclusion.blocker).toBeNull()
    expect(conclusion.failing).toEqual([])
    expect(conclusion.stepsToRevise).toEqual([])
    expect(conclusion.gate.decision).toBe("HOLD")
    expect(conclusion.gate.reasons.map((reason) => reason.code)).toEqual(codes)
  })

  it("a worker's newer PASS does not hide an independent FAIL: REVISE", () => {
    const conclusion = conclude([verdict("AC-001", "PASS"), verdict("AC-002", "FAIL", { at: 100 }), verdict("AC-002", "PASS", { at: 200, by: agent1 })])
    expect(conclusion.outcome).toBe("REVISE")
    expect(conclusion.failing).toEqual(["AC-002"])
  })

  it.each([
    ["an older FAIL then a newer PASS", [verdict("AC-002", "FAIL", { at: 100 }), verdict("AC-002", "PASS", { at: 200 })], "APPROVED"],
    ["a newer PASS listed before an older FAIL", [verdict("AC-002", "PASS", { at: 200 }), verdict("AC-002", "FAIL", { at: 100 })], "APPROVED"],
    ["an older PASS then a newer FAIL", [verdict("AC-002", "PASS", { at: 100 }), verdict("AC-002", "FAIL", { at: 200 })], "REVISE"],
    ["an older FAIL then a newer INDETERMINATE", [verdict("AC-002", "FAIL", { at: 100 }), verdict("AC-002", "INDETERMINATE", { at: 200 })], "BLOCKED"],
    ["a FAIL and a PASS at the same time, the PASS logged later", [verdict("AC-002", "FAIL", { at: 100 }), verdict("AC-002", "PASS", { at: 100 })], "APPROVED"],
    ["a current-digest FAIL and a newer PASS for another digest", [
      verdict("AC-002", "FAIL", { at: 100 }),
      verdict("AC-002", "PASS", { at: 200, digest: OTHER_SPEC_DIGEST })
    ], "REVISE"]
  ] as const)("the newest counted verdict per criterion wins: %s → %s", (_label, verdicts, outcome) => {
    expect(conclude([verdict("AC-001", "PASS"), ...verdicts]).outcome).toBe(outcome)
  })
})
