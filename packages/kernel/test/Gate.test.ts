/**
 * The gate evaluators: for each one, the CLEAR case and every HOLD reason it can give, with the
 * reason's message and the required action (the `ratchet` command a person runs) written out by
 * hand. Also the gate record itself (decision, from, to, evaluatedAt, policyVersion, boundTo), the
 * binding check, the de-duplication of evidence references and required actions, and receipts:
 * for another subject, by an agent, off a terminal, or for another digest.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as Event from "../src/Event.js"
import * as Gate from "../src/Gate.js"
import { agent, authority, fakeDigest, pass, receipt, runner, user, verifier } from "./fixtures.js"
import * as Keys from "./keys.js"

const SPEC = fakeDigest("a")
const OTHER = fakeDigest("b")
const PLAN = fakeDigest("c")

const binding: Gate.Binding = { taskVersion: 9, specDigest: SPEC, planDigest: PLAN }

const ctx = (from: Event.TaskState = "SPEC_READY"): Gate.Context => ({
  taskId: "t-1",
  from,
  evaluatedAt: 77,
  boundTo: binding
})

/** The spec's and plan's approvals as a run rests on them: alice's signed receipts, at revision 1. */
const approvals: Gate.Approvals = {
  spec: { digest: SPEC, revision: 1, receipt: receipt("spec", SPEC) },
  plan: { digest: PLAN, revision: 1, receipt: receipt("plan", PLAN) }
}

const codes = (gate: Gate.Gate): ReadonlyArray<Gate.ReasonCode> => gate.reasons.map((reason) => reason.code)

/** Every gate an evaluator returns is a valid Gate record, HOLD exactly when it has reasons. */
const valid = (gate: Gate.Gate): Gate.Gate => {
  expect(Either.isRight(Schema.decodeUnknownEither(Gate.Gate, { onExcessProperty: "error" })(gate))).toBe(true)
  expect(gate.decision).toBe(gate.reasons.length === 0 ? "CLEAR" : "HOLD")
  expect(Gate.isClear(gate)).toBe(gate.decision === "CLEAR")
  expect(gate.evaluatedAt).toBe(77)
  expect(gate.policyVersion).toBe("ratchet-lifecycle/2")
  expect(gate.boundTo).toEqual(binding)
  return gate
}

const clear = (gate: Gate.Gate): void => {
  valid(gate)
  expect(gate.decision).toBe("CLEAR")
  expect(gate.reasons).toEqual([])
  expect(gate.requiredActions).toEqual([])
}

describe("Gate vocabulary", () => {
  it("has the documented policy version and trusted channels", () => {
    expect(Gate.policyVersion).toBe("ratchet-lifecycle/2")
    expect(Gate.trustedReceiptChannels).toEqual(["terminal"])
  })

  it("has the documented reason codes", () => {
    expect(Gate.ReasonCode.literals).toEqual([
      "project_not_initialized",
      "store_not_writable",
      "blocking_question_open",
      "restatement_missing",
      "restatement_not_approved",
      "brief_not_closed",
      "receipt_required",
      "receipt_wrong_subject",
      "approval_requires_user",
      "approval_requires_terminal",
      "receipt_unsigned",
      "approver_unknown",
      "signature_invalid",
      "verdict_unsigned",
      "stale_digest",
      "spec_not_approved",
      "preflight_missing",
      "preflight_wrong_assumption",
      "plan_not_approved",
      "plan_stale",
      "scope_undefined",
      "lease_required",
      "steps_not_terminal",
      "self_verification",
      "missing_evidence",
      "stale_evidence",
      "ac_not_passed",
      "open_blockers",
      "code_changed",
      "retry_budget_spent"
    ])
  })

  it("has the documented gate kinds", () => {
    expect(Gate.Kind.literals).toEqual([
      "setup",
      "restatement_approval",
      "brief_closure",
      "spec_proposal",
      "spec_approval",
      "plan_proposal",
      "plan_approval",
      "run_start",
      "verification_entry",
      "completion",
      "unblock",
      "reopen"
    ])
  })

  it("the Gate schema rejects an unknown decision, kind or reason code", () => {
    const gate = Gate.setup(ctx("INITIALIZING"), { projectInitialized: true, storeWritable: true })
    const is = Schema.is(Gate.Gate)
    expect(is(gate)).toBe(true)
    expect(is({ ...gate, decision: "MAYBE" })).toBe(false)
    expect(is({ ...gate, kind: "deploy" })).toBe(false)
    expect(is({ ...gate, reasons: [{ code: "because", message: "x" }] })).toBe(false)
    expect(is({ ...gate, boundTo: { ...binding, specDigest: "sha256:nope" } })).toBe(false)
  })
})

describe("the gate record", () => {
  it("carries decision, kind, from, to, reasons, actions, evidence, evaluatedAt, policyVersion and boundTo", () => {
    expect(Gate.setup(ctx("INITIALIZING"), { projectInitialized: true, storeWritable: true })).toEqual({
      kind: "setup",
      decision: "CLEAR",
      from: "INITIALIZING",
      to: "INTERVIEWING",
      reasons: [],
      requiredActions: [],
      evidenceRefs: [],
      evaluatedAt: 77,
      policyVersion: "ratchet-lifecycle/2",
      boundTo: { taskVersion: 9, specDigest: SPEC, planDigest: PLAN }
    })
  })

  it("round-trips through its schema", () => {
    const gate = Gate.completion(ctx("VERIFYING"), {
      taskId: "t-1",
      runId: "run-1",
      currentSpecDigest: SPEC,
      requiredAcs: ["AC-001", "AC-002"],
      verdicts: [pass("AC-001", SPEC)],
      workers: [runner],
      openBlockers: 1,
      authority,
      approvals
    })
    const encoded = Schema.encodeSync(Gate.Gate)(gate)
    expect(Schema.decodeUnknownSync(Gate.Gate)(JSON.parse(JSON.stringify(encoded)))).toEqual(gate)
  })
})

describe("Gate.isBoundTo", () => {
  const gate = (): Gate.Gate => Gate.specProposal(ctx(), { briefClosed: true })

  it("is true for exactly the binding the gate was evaluated at", () => {
    expect(Gate.isBoundTo(gate(), { taskVersion: 9, specDigest: SPEC, planDigest: PLAN })).toBe(true)
  })

  it.each([
    { label: "a newer task version", other: { ...binding, taskVersion: 10 } },
    { label: "an older task version", other: { ...binding, taskVersion: 8 } },
    { label: "another spec digest", other: { ...binding, specDigest: OTHER } },
    { label: "no spec digest", other: { ...binding, specDigest: null } },
    { label: "another plan digest", other: { ...binding, planDigest: OTHER } },
    { label: "no plan digest", other: { ...binding, planDigest: null } }
  ])("is false for $label", ({ other }) => {
    expect(Gate.isBoundTo(gate(), other)).toBe(false)
  })

  it("compares null digests as equal", () => {
    const unbound: Gate.Binding = { taskVersion: 2, specDigest: null, planDigest: null }
    const early = Gate.setup({ ...ctx("INITIALIZING"), boundTo: unbound }, { projectInitialized: true, storeWritable: true })
    expect(Gate.isBoundTo(early, { taskVersion: 2, specDigest: null, planDigest: null })).toBe(true)
    expect(Gate.isBoundTo(early, { taskVersion: 2, specDigest: SPEC, planDigest: null })).toBe(false)
  })
})

describe("Gate.setup (INITIALIZING → INTERVIEWING)", () => {
  it("CLEAR when the project is initialised and the store writable", () => {
    const gate = Gate.setup(ctx("INITIALIZING"), { projectInitialized: true, storeWritable: true })
    clear(gate)
    expect(gate.kind).toBe("setup")
    expect(gate.from).toBe("INITIALIZING")
    expect(gate.to).toBe("INTERVIEWING")
  })

  it("HOLD project_not_initialized, asking for ratchet init", () => {
    const gate = valid(Gate.setup(ctx("INITIALIZING"), { projectInitialized: false, storeWritable: true }))
    expect(gate.reasons).toEqual([{ code: "project_not_initialized", message: "This repository has no .ratchet/project.json." }])
    expect(gate.requiredActions).toEqual([{ description: "Initialise the project", command: "ratchet init" }])
  })

  it("HOLD store_not_writable, with an action that has no command", () => {
    const gate = valid(Gate.setup(ctx("INITIALIZING"), { projectInitialized: true, storeWritable: false }))
    expect(gate.reasons).toEqual([{ code: "store_not_writable", message: "The runtime store cannot be written." }])
    expect(gate.requiredActions).toEqual([
      { description: "Make $RATCHET_HOME writable by this user, or point RATCHET_HOME elsewhere" }
    ])
    expect("command" in gate.requiredActions[0]!).toBe(false)
  })

  it("lists both when both are missing, in order", () => {
    expect(codes(Gate.setup(ctx("INITIALIZING"), { projectInitialized: false, storeWritable: false }))).toEqual([
      "project_not_initialized",
      "store_not_writable"
    ])
  })
})

describe("Gate.briefClosure (the interview's closure audit)", () => {
  const approved = { digest: SPEC, approved: true }
  const question = (questionId: string, blocking: boolean, answered: boolean): Gate.QuestionFact => ({
    questionId,
    text: `What about ${questionId}?`,
    blocking,
    answered
  })

  it("CLEAR with every blocking question answered and an approved restatement", () => {
    const gate = Gate.briefClosure(ctx("INTERVIEWING"), {
      questions: [question("q1", true, true), question("q2", false, false)],
      restatement: approved
    })
    clear(gate)
    expect(gate.kind).toBe("brief_closure")
    expect(gate.to).toBe("INTERVIEWING")
  })

  it("HOLD blocking_question_open for each open blocking question, naming it", () => {
    const gate = valid(
      Gate.briefClosure(ctx("INTERVIEWING"), {
        questions: [question("q1", true, false), question("q2", false, false), question("q3", true, false)],
        restatement: approved
      })
    )
    expect(gate.reasons).toEqual([
      { code: "blocking_question_open", message: "Blocking question q1 is unanswered: \"What about q1?\"" },
      { code: "blocking_question_open", message: "Blocking question q3 is unanswered: \"What about q3?\"" }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Answer question q1", command: "ratchet brief t-1 answer q1 \"<answer>\" --source user" },
      { description: "Answer question q3", command: "ratchet brief t-1 answer q3 \"<answer>\" --source user" }
    ])
  })

  it("HOLD restatement_missing without a restatement", () => {
    const gate = valid(Gate.briefClosure(ctx("INTERVIEWING"), { questions: [], restatement: null }))
    expect(gate.reasons).toEqual([
      { code: "restatement_missing", message: "The goal has not been restated in one sentence." }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Restate the goal in one sentence", command: "ratchet brief t-1 restate \"<one sentence>\"" }
    ])
  })

  it("HOLD restatement_not_approved, naming the restatement's short digest", () => {
    const gate = valid(
      Gate.briefClosure(ctx("INTERVIEWING"), { questions: [], restatement: { digest: OTHER, approved: false } })
    )
    expect(gate.reasons).toEqual([
      { code: "restatement_not_approved", message: "The restatement bbbbbbbb is not approved." }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "A person approves the restatement", command: "ratchet approve t-1 restatement" }
    ])
  })

  it("lists open questions before the restatement", () => {
    expect(
      codes(Gate.briefClosure(ctx("INTERVIEWING"), { questions: [question("q1", true, false)], restatement: null }))
    ).toEqual(["blocking_question_open", "restatement_missing"])
  })
})

describe("receipts (restatement, spec, plan, reopen approvals)", () => {
  const spec = (r: Event.Receipt | null) => Gate.specApproval(ctx(), { specDigest: SPEC, revision: 1, receipt: r, authority })

  it("Gate.restatementApproval is CLEAR for a person's signed terminal receipt of exactly this digest", () => {
    const gate = Gate.restatementApproval(ctx("INTERVIEWING"), { digest: SPEC, receipt: receipt("restatement", SPEC), authority })
    clear(gate)
    expect(gate.kind).toBe("restatement_approval")
    expect(gate.to).toBe("INTERVIEWING")
  })

  it("HOLD receipt_required without a receipt", () => {
    const gate = valid(Gate.restatementApproval(ctx("INTERVIEWING"), { digest: SPEC, receipt: null, authority }))
    expect(gate.reasons).toEqual([{ code: "receipt_required", message: "No approval receipt for the restatement aaaaaaaa." }])
    expect(gate.requiredActions).toEqual([
      { description: "A person approves the restatement on an interactive terminal", command: "ratchet approve t-1 restatement" }
    ])
  })

  it("HOLD receipt_wrong_subject for a receipt that approves something else", () => {
    const gate = valid(spec(receipt("plan", SPEC, {}, { revision: 1 })))
    expect(gate.reasons).toEqual([{ code: "receipt_wrong_subject", message: "The receipt approves the plan, not the spec." }])
    expect(gate.requiredActions).toEqual([{ description: "Approve the spec itself", command: "ratchet approve t-1 spec" }])
  })

  it("HOLD approval_requires_user for an agent's receipt, and its signature names someone else than the agent", () => {
    const gate = valid(spec(receipt("spec", SPEC, { actor: agent })))
    expect(gate.reasons).toEqual([
      { code: "approval_requires_user", message: "The receipt was given by agent \"agent-1\"; only a person can approve." },
      { code: "signature_invalid", message: "The spec receipt names someone other than alice, whose key signed it." }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "A person approves the spec on an interactive terminal", command: "ratchet approve t-1 spec" },
      { description: "Do it again yourself, on a terminal, with your approval key", command: "ratchet approve t-1 spec" }
    ])
  })

  it.each(["runner", "verifier", "system"] as const)("HOLD approval_requires_user for a %s's receipt", (kind) => {
    expect(codes(spec(receipt("spec", SPEC, { actor: { kind, id: "alice" } })))).toEqual(["approval_requires_user", "signature_invalid"])
  })

  it("HOLD approval_requires_terminal for a receipt that did not come from a terminal", () => {
    const gate = valid(spec(receipt("spec", SPEC, { channel: "mcp" })))
    expect(gate.reasons).toEqual([
      {
        code: "approval_requires_terminal",
        message: "The receipt came through \"mcp\"; approvals are only taken on an interactive terminal."
      }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Run the approval in a terminal, not from a script or an agent", command: "ratchet approve t-1 spec" }
    ])
  })

  it("HOLD stale_digest for a receipt of another digest, naming both short digests", () => {
    const gate = valid(spec(receipt("spec", OTHER)))
    expect(gate.reasons).toEqual([
      { code: "stale_digest", message: "The receipt approves bbbbbbbb but the current spec is aaaaaaaa." }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Review and approve the current spec", command: "ratchet approve t-1 spec" }
    ])
  })

  it("reports every fault of one receipt, in order", () => {
    const gate = Gate.planApproval(ctx("PLAN_READY"), {
      planDigest: PLAN,
      revision: 1,
      stale: false,
      receipt: receipt("scope", OTHER, { actor: agent, channel: "pipe" }),
      authority
    })
    expect(codes(gate)).toEqual([
      "receipt_wrong_subject",
      "approval_requires_user",
      "approval_requires_terminal",
      "stale_digest",
      "signature_invalid"
    ])
    expect(gate.requiredActions.map((action) => action.command)).toEqual([
      "ratchet approve t-1 plan",
      "ratchet approve t-1 plan",
      "ratchet approve t-1 plan",
      "ratchet approve t-1 plan",
      "ratchet approve t-1 plan"
    ])
  })

  it("Gate.specApproval is CLEAR for a valid signed receipt, to SPEC_APPROVED", () => {
    const gate = spec(receipt("spec", SPEC, { actor: user }))
    clear(gate)
    expect(gate.kind).toBe("spec_approval")
    expect(gate.to).toBe("SPEC_APPROVED")
    expect(gate.from).toBe("SPEC_READY")
  })

  it("Gate.reopenFromFailed needs a signed reopen receipt for the current spec, with `ratchet reopen` as the action", () => {
    const held = valid(Gate.reopenFromFailed(ctx("FAILED"), { specDigest: SPEC, receipt: null, authority }))
    expect(held.kind).toBe("reopen")
    expect(held.to).toBe("REOPENED")
    expect(held.reasons).toEqual([{ code: "receipt_required", message: "No approval receipt for the reopen aaaaaaaa." }])
    expect(held.requiredActions).toEqual([
      { description: "A person approves the reopen on an interactive terminal", command: "ratchet reopen t-1 --reason \"<why>\"" }
    ])
    expect(codes(Gate.reopenFromFailed(ctx("FAILED"), { specDigest: SPEC, receipt: receipt("spec", SPEC, {}, { revision: null }), authority }))).toEqual([
      "receipt_wrong_subject"
    ])
    clear(Gate.reopenFromFailed(ctx("FAILED"), { specDigest: SPEC, receipt: receipt("reopen", SPEC), authority }))
  })
})

describe("signed receipts: only a registered approver's signature over exactly the act counts", () => {
  const spec = (r: Event.Receipt | null, options: { readonly revision?: number; readonly authority?: typeof authority } = {}) =>
    Gate.specApproval(ctx(), { specDigest: SPEC, revision: options.revision ?? 1, receipt: r, authority: options.authority ?? authority })

  it("HOLD receipt_unsigned for a receipt without a signature (an agent's shell, a script, an older Ratchet)", () => {
    const gate = valid(spec(receipt("spec", SPEC, { signature: null })))
    expect(gate.reasons).toEqual([{
      code: "receipt_unsigned",
      message: "The spec receipt carries no approver's signature; only an act signed with a registered approver's key counts."
    }])
    expect(gate.requiredActions).toEqual([
      { description: "Do it again yourself, on a terminal, with your approval key", command: "ratchet approve t-1 spec" }
    ])
  })

  it("HOLD receipt_unsigned pointing at ratchet approver init when the project has no approvers yet", () => {
    const gate = valid(spec(receipt("spec", SPEC, { signature: null }), { authority: Keys.authorityFor("p-1", []) }))
    expect(codes(gate)).toEqual(["receipt_unsigned"])
    expect(gate.requiredActions).toEqual([
      {
        description: "This project has no approvers yet: create your approval key and register it (ratchet approver init), then do it again",
        command: "ratchet approver init"
      }
    ])
  })

  it("HOLD approver_unknown for a receipt signed by a key nobody registered, naming its fingerprint", () => {
    const gate = valid(spec(receipt("spec", SPEC, { actor: { kind: "user", id: "mallory" } }, { signer: Keys.mallory })))
    expect(gate.reasons).toEqual([{
      code: "approver_unknown",
      message: `The spec receipt is signed by the key ${Keys.mallory.key.slice(8, 20)}, which is not one of this project's approvers.`
    }])
    expect(gate.requiredActions).toEqual([
      { description: "Have an approver register the key (ratchet approver add), or sign with a registered key", command: "ratchet approver list" }
    ])
  })

  it("HOLD approver_unknown pointing at ratchet approver init when nobody is registered at all", () => {
    const gate = valid(spec(receipt("spec", SPEC), { authority: Keys.authorityFor("p-1", []) }))
    expect(codes(gate)).toEqual(["approver_unknown"])
    expect(gate.requiredActions.map((action) => action.command)).toEqual(["ratchet approver init"])
  })

  it("HOLD signature_invalid for a receipt altered after signing", () => {
    const signed = receipt("spec", SPEC)
    const gate = valid(spec({ ...signed, at: signed.at + 1 }))
    expect(gate.reasons).toEqual([{
      code: "signature_invalid",
      message: "The spec receipt does not match its signature by alice: it was altered after signing, or forged."
    }])
  })

  it("HOLD signature_invalid for a receipt that names another person than the key's approver", () => {
    // vera's key signs a receipt that says alice approved.
    expect(codes(spec(receipt("spec", SPEC, { actor: user }, { signer: Keys.vera })))).toEqual(["signature_invalid"])
  })

  it.each([
    { label: "another task", options: { taskId: "t-2" } },
    { label: "an earlier revision of the spec", options: { revision: 2 } }
  ])("HOLD signature_invalid for a receipt signed for $label (no replay)", ({ options }) => {
    expect(codes(spec(receipt("spec", SPEC, {}, options)))).toEqual(["signature_invalid"])
  })

  it("HOLD signature_invalid for a receipt signed for another project", () => {
    expect(codes(spec(receipt("spec", SPEC), { authority: { ...Keys.authorityFor("p-2"), projectId: "p-2" } }))).toEqual(["signature_invalid"])
  })

  it("a verifier that throws, or says anything but true, is a bad signature, never a pass", () => {
    const throwing = { ...authority, verify: () => { throw new Error("broken") } }
    expect(codes(spec(receipt("spec", SPEC), { authority: throwing }))).toEqual(["signature_invalid"])
    const truthy = { ...authority, verify: (() => 1) as unknown as typeof authority.verify }
    expect(codes(spec(receipt("spec", SPEC), { authority: truthy }))).toEqual(["signature_invalid"])
  })

  it("is CLEAR for any registered approver's own signed receipt", () => {
    clear(spec(receipt("spec", SPEC, { actor: { kind: "user", id: "vera" } }, { signer: Keys.vera })))
  })
})

describe("Gate.specProposal (INTERVIEWING → SPEC_READY)", () => {
  it("CLEAR from a closed brief", () => {
    const gate = Gate.specProposal(ctx("INTERVIEWING"), { briefClosed: true })
    clear(gate)
    expect(gate.kind).toBe("spec_proposal")
    expect(gate.to).toBe("SPEC_READY")
  })

  it("HOLD brief_not_closed", () => {
    const gate = valid(Gate.specProposal(ctx("INTERVIEWING"), { briefClosed: false }))
    expect(gate.reasons).toEqual([
      { code: "brief_not_closed", message: "The brief is not closed; a spec is written from a closed brief." }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Close the brief (its closure audit lists anything still open)", command: "ratchet brief t-1 close" }
    ])
  })
})

describe("Gate.planProposal (PREFLIGHT → PLAN_READY)", () => {
  const preflight = { specDigest: SPEC, missingPaths: [], invalidScopes: [] }

  it("CLEAR with a clean preflight of the current spec and a plan bound to it", () => {
    const gate = Gate.planProposal(ctx("PREFLIGHT"), { currentSpecDigest: SPEC, preflight, planSpecDigest: SPEC })
    clear(gate)
    expect(gate.kind).toBe("plan_proposal")
    expect(gate.to).toBe("PLAN_READY")
  })

  it.each([
    { label: "no preflight", facts: null },
    { label: "a preflight of another spec", facts: { ...preflight, specDigest: OTHER } }
  ])("HOLD preflight_missing with $label", ({ facts }) => {
    const gate = valid(Gate.planProposal(ctx("PREFLIGHT"), { currentSpecDigest: SPEC, preflight: facts, planSpecDigest: SPEC }))
    expect(gate.reasons).toEqual([{ code: "preflight_missing", message: "No preflight of the current spec aaaaaaaa." }])
    expect(gate.requiredActions).toEqual([
      { description: "Inspect the repository against the approved spec", command: "ratchet preflight t-1" }
    ])
  })

  it("HOLD preflight_wrong_assumption, listing every missing path and invalid scope", () => {
    const gate = valid(
      Gate.planProposal(ctx("PREFLIGHT"), {
        currentSpecDigest: SPEC,
        preflight: { specDigest: SPEC, missingPaths: ["src/a.ts", "src/b.ts"], invalidScopes: ["lib/**"] },
        planSpecDigest: SPEC
      })
    )
    expect(gate.reasons).toEqual([
      {
        code: "preflight_wrong_assumption",
        message:
          "The spec assumes what the repository does not hold: relevant path \"src/a.ts\" does not exist; relevant path \"src/b.ts\" does not exist; scope \"lib/**\" is not a valid path in this repository."
      }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Reopen the task and correct the contract", command: "ratchet reopen t-1 --reason \"<what was wrong>\"" }
    ])
  })

  it.each([
    { missingPaths: ["src/a.ts"], invalidScopes: [] },
    { missingPaths: [], invalidScopes: ["lib/**"] }
  ])("either kind of wrong assumption holds: %o", (observation) => {
    expect(
      codes(
        Gate.planProposal(ctx("PREFLIGHT"), {
          currentSpecDigest: SPEC,
          preflight: { specDigest: SPEC, ...observation },
          planSpecDigest: SPEC
        })
      )
    ).toEqual(["preflight_wrong_assumption"])
  })

  it("HOLD stale_digest for a plan bound to another spec, telling the digest to bind it to", () => {
    const gate = valid(Gate.planProposal(ctx("PREFLIGHT"), { currentSpecDigest: SPEC, preflight, planSpecDigest: OTHER }))
    expect(gate.reasons).toEqual([
      { code: "stale_digest", message: "The plan is bound to spec bbbbbbbb but the current spec is aaaaaaaa." }
    ])
    expect(gate.requiredActions).toEqual([
      { description: `Set the plan's specDigest to ${SPEC} after reviewing it against the current spec` }
    ])
  })

  it("a missing preflight and a stale plan are both reported", () => {
    expect(
      codes(Gate.planProposal(ctx("PREFLIGHT"), { currentSpecDigest: SPEC, preflight: null, planSpecDigest: OTHER }))
    ).toEqual(["preflight_missing", "stale_digest"])
  })
})

describe("Gate.planApproval (PLAN_READY → PLAN_APPROVED)", () => {
  it("CLEAR for a current plan and a valid plan receipt", () => {
    const gate = Gate.planApproval(ctx("PLAN_READY"), { planDigest: PLAN, revision: 1, stale: false, receipt: receipt("plan", PLAN), authority })
    clear(gate)
    expect(gate.kind).toBe("plan_approval")
    expect(gate.to).toBe("PLAN_APPROVED")
  })

  it("HOLD plan_stale for a plan made for an earlier spec, even with a valid receipt", () => {
    const gate = valid(
      Gate.planApproval(ctx("PLAN_READY"), { planDigest: PLAN, revision: 1, stale: true, receipt: receipt("plan", PLAN), authority })
    )
    expect(gate.reasons).toEqual([{ code: "plan_stale", message: "The plan cccccccc was made for an earlier spec." }])
    expect(gate.requiredActions).toEqual([
      { description: "Propose a plan bound to the current spec", command: "ratchet plan t-1 --file <plan.yaml>" }
    ])
  })

  it("HOLD receipt_required, asking for `ratchet approve … plan`", () => {
    const gate = valid(Gate.planApproval(ctx("PLAN_READY"), { planDigest: PLAN, revision: 1, stale: true, receipt: null, authority }))
    expect(codes(gate)).toEqual(["plan_stale", "receipt_required"])
    expect(gate.reasons[1]!.message).toBe("No approval receipt for the plan cccccccc.")
    expect(gate.requiredActions[1]).toEqual({
      description: "A person approves the plan on an interactive terminal",
      command: "ratchet approve t-1 plan"
    })
  })
})

describe("Gate.runStart (PLAN_APPROVED → RUNNING)", () => {
  const facts = {
    currentSpecDigest: SPEC,
    approvedSpecDigest: SPEC,
    currentPlanDigest: PLAN,
    approvedPlanDigest: PLAN,
    planStale: false,
    requestedSpecDigest: SPEC,
    requestedPlanDigest: PLAN,
    allowedScope: ["src/**"],
    leaseHeld: true,
    approvals,
    authority
  }

  it("CLEAR on the approved current digests, with a scope and the lease", () => {
    const gate = Gate.runStart(ctx("PLAN_APPROVED"), facts)
    clear(gate)
    expect(gate.kind).toBe("run_start")
    expect(gate.from).toBe("PLAN_APPROVED")
    expect(gate.to).toBe("RUNNING")
  })

  it.each([null, OTHER])("HOLD spec_not_approved when the approved spec is %s", (approvedSpecDigest) => {
    const gate = valid(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, approvedSpecDigest }))
    expect(gate.reasons).toEqual([{ code: "spec_not_approved", message: "The current spec aaaaaaaa is not approved." }])
    expect(gate.requiredActions).toEqual([{ description: "A person approves the spec", command: "ratchet approve t-1 spec" }])
  })

  it("HOLD plan_stale (and not plan_not_approved) for a stale plan", () => {
    const gate = valid(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, planStale: true, approvedPlanDigest: null }))
    expect(gate.reasons).toEqual([{ code: "plan_stale", message: "The plan was made for an earlier spec." }])
    expect(gate.requiredActions).toEqual([
      { description: "Propose a plan bound to the current spec", command: "ratchet plan t-1 --file <plan.yaml>" }
    ])
  })

  it.each([null, OTHER])("HOLD plan_not_approved when the approved plan is %s", (approvedPlanDigest) => {
    const gate = valid(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, approvedPlanDigest }))
    expect(gate.reasons).toEqual([{ code: "plan_not_approved", message: "The current plan cccccccc is not approved." }])
    expect(gate.requiredActions).toEqual([{ description: "A person approves the plan", command: "ratchet approve t-1 plan" }])
  })

  it.each([
    { label: "spec", changed: { requestedSpecDigest: OTHER } },
    { label: "plan", changed: { requestedPlanDigest: OTHER } }
  ])("HOLD stale_digest when the requested $label digest is not the current one", ({ changed }) => {
    const gate = valid(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, ...changed }))
    expect(codes(gate)).toEqual(["stale_digest"])
    expect(gate.requiredActions).toEqual([
      { description: "Read the task again and start the run against the current digests", command: "ratchet status t-1" }
    ])
  })

  it("the stale_digest message names what was asked and what is current", () => {
    const gate = Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, requestedSpecDigest: OTHER, requestedPlanDigest: OTHER })
    expect(gate.reasons).toEqual([
      {
        code: "stale_digest",
        message: "The run was asked for spec bbbbbbbb and plan bbbbbbbb, but the current ones are aaaaaaaa and cccccccc."
      }
    ])
  })

  it("HOLD scope_undefined without an allowed scope", () => {
    const gate = valid(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, allowedScope: [] }))
    expect(gate.reasons).toEqual([
      {
        code: "scope_undefined",
        message: "The spec defines no execution.allowedScope, so no write could be checked against it."
      }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Add execution.allowedScope to the spec and approve it again", command: "ratchet spec t-1 --file <spec.md>" }
    ])
  })

  it("HOLD lease_required without the writer lease", () => {
    const gate = valid(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, leaseHeld: false }))
    expect(gate.reasons).toEqual([{ code: "lease_required", message: "The caller does not hold the task's writer lease." }])
    expect(gate.requiredActions).toEqual([
      {
        description: "Acquire the writer lease (or take it over after its grace period)",
        command: "ratchet lease acquire t-1"
      }
    ])
  })

  describe("the approvals a run rests on are checked again: a forged approval never runs", () => {
    it.each([
      { label: "the spec's approval has no signature", approvals: { ...approvals, spec: { ...approvals.spec, receipt: receipt("spec", SPEC, { signature: null }) } }, expected: ["receipt_unsigned"] },
      {
        label: "the plan's approval is signed by a key nobody registered",
        approvals: { ...approvals, plan: { ...approvals.plan, receipt: receipt("plan", PLAN, { actor: { kind: "user", id: "m" } }, { signer: Keys.mallory }) } },
        expected: ["approver_unknown"]
      },
      {
        label: "the plan's approval was signed for an earlier revision",
        approvals: { ...approvals, plan: { ...approvals.plan, revision: 2 } },
        expected: ["signature_invalid"]
      },
      {
        label: "the plan's approval is the restatement's receipt moved into it",
        approvals: { ...approvals, plan: { ...approvals.plan, receipt: receipt("restatement", PLAN) } },
        expected: ["receipt_wrong_subject", "signature_invalid"]
      },
      {
        label: "the spec was 'approved' with no receipt at all",
        approvals: { ...approvals, spec: { ...approvals.spec, receipt: null } },
        expected: ["receipt_required"]
      },
      {
        label: "the plan's receipt approves another digest",
        approvals: { ...approvals, plan: { ...approvals.plan, receipt: receipt("plan", OTHER) } },
        expected: ["stale_digest"]
      }
    ])("HOLD when $label", ({ approvals: changed, expected }) => {
      expect(codes(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, approvals: changed }))).toEqual(expected)
    })

    it("are not judged again when the spec or plan is not approved at all (that reason says enough)", () => {
      const forged = { ...approvals, spec: { ...approvals.spec, receipt: null } }
      expect(codes(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, approvedSpecDigest: null, approvals: forged }))).toEqual(["spec_not_approved"])
      expect(codes(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, planStale: true, approvals: forged }))).toEqual(["plan_stale"])
      expect(codes(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, approvedPlanDigest: OTHER, approvals: forged }))).toEqual(["plan_not_approved"])
    })

    it("a project whose approvers were all removed from the store's trust cannot run on old approvals", () => {
      expect(codes(Gate.runStart(ctx("PLAN_APPROVED"), { ...facts, authority: Keys.authorityFor("p-1", [Keys.veraApprover]) }))).toEqual([
        "approver_unknown",
        "approver_unknown"
      ])
    })
  })

  it("reports every fault at once, in order", () => {
    expect(
      codes(
        Gate.runStart(ctx("PLAN_APPROVED"), {
          ...facts,
          approvedSpecDigest: null,
          planStale: true,
          requestedSpecDigest: OTHER,
          allowedScope: [],
          leaseHeld: false
        })
      )
    ).toEqual(["spec_not_approved", "plan_stale", "stale_digest", "scope_undefined", "lease_required"])
  })
})

describe("Gate.verificationEntry (RUNNING → VERIFYING)", () => {
  it("CLEAR when every step is terminal", () => {
    const gate = Gate.verificationEntry(ctx("RUNNING"), { pendingSteps: [] })
    clear(gate)
    expect(gate.kind).toBe("verification_entry")
    expect(gate.to).toBe("VERIFYING")
  })

  it("HOLD steps_not_terminal, listing the open steps", () => {
    const gate = valid(Gate.verificationEntry(ctx("RUNNING"), { pendingSteps: ["build", "docs"] }))
    expect(gate.reasons).toEqual([
      { code: "steps_not_terminal", message: "Steps still without a terminal attempt: build, docs." }
    ])
    expect(gate.requiredActions).toEqual([{ description: "Finish the remaining steps", command: "ratchet run t-1" }])
  })
})

describe("Gate.completion (VERIFYING → COMPLETED, READY_TO_COMPLETE)", () => {
  const facts = (
    verdicts: ReadonlyArray<Event.AcVerdict>,
    overrides: Partial<Parameters<typeof Gate.completion>[1]> = {}
  ): Parameters<typeof Gate.completion>[1] => ({
    taskId: "t-1",
    runId: "run-1",
    currentSpecDigest: SPEC,
    requiredAcs: ["AC-001"],
    verdicts,
    workers: [runner],
    openBlockers: 0,
    authority,
    approvals,
    ...overrides
  })

  it("CLEAR with an independent PASS with evidence for every required AC, collecting the evidence", () => {
    const gate = Gate.completion(
      ctx("VERIFYING"),
      facts([pass("AC-001", SPEC, { evidenceRefs: ["ev-1", "ev-2"] }), pass("AC-002", SPEC, { evidenceRefs: ["ev-2", "ev-3"] })], {
        requiredAcs: ["AC-001", "AC-002"]
      })
    )
    clear(gate)
    expect(gate.kind).toBe("completion")
    expect(gate.from).toBe("VERIFYING")
    expect(gate.to).toBe("COMPLETED")
    expect(gate.evidenceRefs).toEqual(["ev-1", "ev-2", "ev-3"])
  })

  it("CLEAR with no required AC, and verdicts of optional ACs are not needed", () => {
    clear(Gate.completion(ctx("VERIFYING"), facts([], { requiredAcs: [] })))
  })

  it("HOLD missing_evidence for a required AC without any verdict", () => {
    const gate = valid(Gate.completion(ctx("VERIFYING"), facts([pass("AC-002", SPEC)])))
    expect(gate.reasons).toEqual([{ code: "missing_evidence", message: "AC-001 has no verdict." }])
    expect(gate.requiredActions).toEqual([{ description: "Verify AC-001", command: "ratchet verify t-1 --ac AC-001" }])
  })

  it("HOLD missing_evidence for a PASS without evidence refs", () => {
    const gate = valid(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC, { evidenceRefs: [] })])))
    expect(gate.reasons).toEqual([
      {
        code: "missing_evidence",
        message: "AC-001 is marked PASS without any evidence reference; a claim alone is not evidence."
      }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Verify AC-001 with a reproducible check", command: "ratchet verify t-1 --ac AC-001" }
    ])
  })

  it("HOLD self_verification when only someone who worked on the run judged the AC (vera marked a manual step done)", () => {
    const gate = valid(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC)], { workers: [runner, verifier] })))
    expect(gate.reasons).toEqual([
      { code: "self_verification", message: "AC-001 was judged only by someone who worked on the run." }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Verify AC-001 with an independent verifier", command: "ratchet verify t-1 --ac AC-001" }
    ])
  })

  it("starting a runner does not make a person the worker of its steps: runner:vera does not bar user:vera", () => {
    clear(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC)], { workers: [{ kind: "runner", id: "vera" }] })))
    expect(Gate.isWorker([{ kind: "runner", id: "vera" }], verifier)).toBe(false)
    expect(Gate.isWorker([{ kind: "user", id: "vera" }], verifier)).toBe(true)
    expect(Gate.isWorker([{ kind: "user", id: "vera2" }], verifier)).toBe(false)
  })

  it("HOLD verdict_unsigned for a PASS nobody signed (an agent's ratchet verify, a pass off a terminal)", () => {
    const gate = valid(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC, { signature: null })])))
    expect(gate.reasons).toEqual([{
      code: "verdict_unsigned",
      message: "AC-001's verdict by user:vera carries no approver's signature; only an act signed with a registered approver's key counts."
    }])
    expect(gate.requiredActions).toEqual([
      { description: "Verify AC-001 yourself, on a terminal, signing with your approval key", command: "ratchet verify t-1 --ac AC-001" }
    ])
  })

  it("HOLD verdict_unsigned for an agent's PASS signed with a key nobody registered, or forged, or for another run", () => {
    const byMallory = pass("AC-001", SPEC, { verifier: { kind: "user", id: "mallory" } }, { signer: Keys.mallory })
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([byMallory])))).toEqual(["verdict_unsigned"])
    const signed = pass("AC-001", SPEC)
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([{ ...signed, evidenceRefs: ["ev-other"] }])))).toEqual(["verdict_unsigned"])
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC, {}, { runId: "run-0" })])))).toEqual(["verdict_unsigned"])
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC, { verifier: { kind: "verifier", id: "vera" } })])))).toEqual([
      "verdict_unsigned"
    ])
  })

  it("points at ratchet approver init in the action when the project has no approvers", () => {
    const gate = Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC)], { authority: Keys.authorityFor("p-1", []) }))
    expect(gate.requiredActions[0]).toEqual({
      description: "Register an approval key (ratchet approver init), then verify AC-001 with it",
      command: "ratchet verify t-1 --ac AC-001"
    })
  })

  it("an unsigned newer PASS does not displace nor stand in for a signed FAIL", () => {
    const signedFail = pass("AC-001", SPEC, { at: 1, verdict: "FAIL" })
    const unsignedPass = pass("AC-001", SPEC, { at: 9, signature: null })
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([signedFail, unsignedPass])))).toEqual(["ac_not_passed"])
  })

  it.each([
    { label: "the spec's approval is unsigned", changed: { spec: { ...approvals.spec, receipt: receipt("spec", SPEC, { signature: null }) } }, code: "receipt_unsigned" },
    { label: "the plan's approval was signed by an unknown key", changed: { plan: { ...approvals.plan, receipt: receipt("plan", PLAN, { actor: { kind: "user", id: "m" } }, { signer: Keys.mallory }) } }, code: "approver_unknown" },
    { label: "the plan's approval is a restatement receipt moved into it", changed: { plan: { ...approvals.plan, receipt: receipt("restatement", PLAN) } }, code: "receipt_wrong_subject" }
  ])("HOLD when $label: a forged approval never completes", ({ changed, code }) => {
    const gate = Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC)], { approvals: { ...approvals, ...changed } }))
    expect(codes(gate)).toContain(code)
  })

  it("HOLD stale_evidence when the only evidence is for an earlier digest", () => {
    const gate = valid(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", OTHER)])))
    expect(gate.reasons).toEqual([
      { code: "stale_evidence", message: "AC-001 has evidence only for an earlier spec digest; it is not reused." }
    ])
    expect(gate.requiredActions).toEqual([
      { description: "Verify AC-001 again against the current spec", command: "ratchet verify t-1 --ac AC-001" }
    ])
  })

  it("a stale worker verdict is stale evidence, not self-verification", () => {
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", OTHER)], { workers: [verifier] })))).toEqual([
      "stale_evidence"
    ])
  })

  it.each([
    { verdict: "FAIL" as const, message: "AC-001 FAILED." },
    { verdict: "INDETERMINATE" as const, message: "AC-001 is INDETERMINATE, which never counts as PASS." },
    { verdict: "NOT_RUN" as const, message: "AC-001 was NOT_RUN: its check could not be executed." }
  ])("HOLD ac_not_passed for $verdict", ({ message, verdict }) => {
    const gate = valid(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC, { verdict })])))
    expect(gate.reasons).toEqual([{ code: "ac_not_passed", message }])
    expect(gate.requiredActions).toEqual([
      { description: "Make AC-001 pass, then verify it again", command: "ratchet verify t-1 --ac AC-001" }
    ])
    expect(gate.evidenceRefs).toEqual([])
  })

  it("HOLD open_blockers while a blocker is open", () => {
    const gate = valid(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC)], { openBlockers: 2 })))
    expect(gate.reasons).toEqual([{ code: "open_blockers", message: "2 blocker(s) are still open." }])
    expect(gate.requiredActions).toEqual([{ description: "Resolve the open blockers", command: "ratchet status t-1" }])
  })

  it("the newest current, independent verdict decides", () => {
    const older = pass("AC-001", SPEC, { at: 1 })
    const newerFail = pass("AC-001", SPEC, { at: 2, verdict: "FAIL" })
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([older, newerFail])))).toEqual(["ac_not_passed"])
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([newerFail, older])))).toEqual(["ac_not_passed"])
    const olderFail = pass("AC-001", SPEC, { at: 1, verdict: "FAIL" })
    const newer = pass("AC-001", SPEC, { at: 2 })
    clear(Gate.completion(ctx("VERIFYING"), facts([olderFail, newer])))
    clear(Gate.completion(ctx("VERIFYING"), facts([newer, olderFail])))
  })

  it("on equal times the later-listed verdict decides", () => {
    const first = pass("AC-001", SPEC, { at: 5 })
    const second = pass("AC-001", SPEC, { at: 5, verdict: "FAIL" })
    expect(codes(Gate.completion(ctx("VERIFYING"), facts([first, second])))).toEqual(["ac_not_passed"])
    clear(Gate.completion(ctx("VERIFYING"), facts([second, first])))
  })

  it("a newer worker or stale verdict does not override the independent current one", () => {
    const independent = pass("AC-001", SPEC, { at: 1 })
    const workerFail = pass("AC-001", SPEC, { at: 9, verdict: "FAIL", verifier: user }, { signer: Keys.alice })
    const staleFail = pass("AC-001", OTHER, { at: 9, verdict: "FAIL" })
    const gate = Gate.completion(ctx("VERIFYING"), facts([independent, workerFail, staleFail], { workers: [runner, user] }))
    clear(gate)
    expect(gate.evidenceRefs).toEqual(["ev-AC-001"])
  })

  it("a HOLD still lists the evidence of the ACs that passed", () => {
    const gate = Gate.completion(
      ctx("VERIFYING"),
      facts([pass("AC-001", SPEC)], { requiredAcs: ["AC-001", "AC-003"] })
    )
    expect(codes(gate)).toEqual(["missing_evidence"])
    expect(gate.evidenceRefs).toEqual(["ev-AC-001"])
  })

  it("reports each AC in the order required, then the blockers", () => {
    const gate = Gate.completion(
      ctx("VERIFYING"),
      facts([pass("AC-002", SPEC, { verdict: "FAIL" }), pass("AC-003", OTHER)], {
        requiredAcs: ["AC-001", "AC-002", "AC-003"],
        openBlockers: 1
      })
    )
    expect(codes(gate)).toEqual(["missing_evidence", "ac_not_passed", "stale_evidence", "open_blockers"])
  })

  it("merges identical required actions but keeps every reason", () => {
    const gate = Gate.completion(ctx("VERIFYING"), facts([], { requiredAcs: ["AC-001", "AC-001"] }))
    expect(codes(gate)).toEqual(["missing_evidence", "missing_evidence"])
    expect(gate.requiredActions).toEqual([{ description: "Verify AC-001", command: "ratchet verify t-1 --ac AC-001" }])
  })

  it("a verifier that is not a worker counts, whoever else worked", () => {
    clear(Gate.completion(ctx("VERIFYING"), facts([pass("AC-001", SPEC, { verifier })], { workers: [runner, agent, user] })))
  })

  it("Gate.countedVerdicts keeps, per criterion, the newest eligible verdict, in the order given", () => {
    const a1 = pass("AC-001", SPEC, { at: 1 })
    const a2 = pass("AC-001", SPEC, { at: 2, verdict: "FAIL" })
    const b1 = pass("AC-002", SPEC, { at: 3 })
    const unsigned = pass("AC-002", SPEC, { at: 4, signature: null })
    const stale = pass("AC-002", OTHER, { at: 5 })
    const byWorker = pass("AC-001", SPEC, { at: 6, verifier: user }, { signer: Keys.alice })
    const verdictFacts = { taskId: "t-1", runId: "run-1", currentSpecDigest: SPEC, workers: [user], authority }
    expect(Gate.countedVerdicts(verdictFacts, [b1, a1, unsigned, a2, stale, byWorker])).toEqual([b1, a2])
    expect(Gate.isEligible(verdictFacts, byWorker)).toBe(false)
    expect(Gate.isEligible(verdictFacts, unsigned)).toBe(false)
    expect(Gate.isEligible(verdictFacts, stale)).toBe(false)
    expect(Gate.isEligible(verdictFacts, b1)).toBe(true)
  })
})

describe("Gate.unblock (BLOCKED → RUNNING | VERIFYING)", () => {
  /** One blocker per category, owned by the user, as the runner and verification raise them. */
  const blockersOf = (categories: ReadonlyArray<string>): ReadonlyArray<Event.Blocker> =>
    categories.map((category) => ({ category: category as Event.Blocker["category"], owner: "user", requiredAction: `resolve ${category}` }))

  it("CLEAR back to VERIFYING with no code change and every step terminal", () => {
    const gate = Gate.unblock(ctx("BLOCKED"), {
      to: "VERIFYING",
      blockers: blockersOf(["missing_evidence"]), receipt: null, authority,
      codeChanged: false,
      pendingSteps: []
    })
    clear(gate)
    expect(gate.kind).toBe("unblock")
    expect(gate.from).toBe("BLOCKED")
    expect(gate.to).toBe("VERIFYING")
  })

  it("HOLD code_changed back to VERIFYING after a code change", () => {
    const gate = valid(
      Gate.unblock(ctx("BLOCKED"), { to: "VERIFYING", blockers: blockersOf([]), receipt: null, authority, codeChanged: true, pendingSteps: [] })
    )
    expect(gate.reasons).toEqual([
      {
        code: "code_changed",
        message: "The code changed since the block; verification may only resume on the code it was blocked on."
      }
    ])
    expect(gate.requiredActions).toEqual([
      {
        description: "Resume running instead, so the change is executed and recorded",
        command: "ratchet unblock t-1 --to RUNNING"
      }
    ])
  })

  it("HOLD steps_not_terminal back to VERIFYING with open steps", () => {
    const gate = valid(
      Gate.unblock(ctx("BLOCKED"), { to: "VERIFYING", blockers: blockersOf([]), receipt: null, authority, codeChanged: false, pendingSteps: ["docs"] })
    )
    expect(gate.reasons).toEqual([{ code: "steps_not_terminal", message: "Steps still without a terminal attempt: docs." }])
    expect(gate.requiredActions).toEqual([
      { description: "Resume running to finish them", command: "ratchet unblock t-1 --to RUNNING" }
    ])
  })

  it("HOLD ac_not_passed back to VERIFYING after a failed criterion, even with no code change", () => {
    const gate = valid(
      Gate.unblock(ctx("BLOCKED"), {
        to: "VERIFYING",
        blockers: blockersOf(["missing_evidence", "verification_failed"]), receipt: null, authority,
        codeChanged: false,
        pendingSteps: []
      })
    )
    expect(gate.reasons).toEqual([{
      code: "ac_not_passed",
      message: "A required criterion failed verification; verifying the same code again cannot change that."
    }])
    expect(gate.requiredActions).toEqual([
      { description: "Resume running so the work behind it is revised", command: "ratchet unblock t-1 --to RUNNING" }
    ])
  })

  it.each(["retry_budget_spent", "repeated_failure", "no_progress"])(
    "HOLD retry_budget_spent back to VERIFYING after a %s block, even with no code change and every step done",
    (category) => {
      const gate = valid(
        Gate.unblock(ctx("BLOCKED"), { to: "VERIFYING", blockers: blockersOf(["missing_evidence", category]), receipt: null, authority, codeChanged: false, pendingSteps: [] })
      )
      expect(gate.reasons).toEqual([{
        code: "retry_budget_spent",
        message: `The task is blocked by ${category}; verifying the same work again cannot lift that.`
      }])
      expect(gate.requiredActions).toEqual([
        { description: "Reopen the task and change the contract or the plan", command: "ratchet reopen t-1 --reason \"<what must change>\"" }
      ])
    }
  )

  it.each([["scope_violation"], ["decision_needed"], ["missing_authority"], ["scope_violation", "decision_needed"]])(
    "HOLD open_blockers back to VERIFYING after a %s block: only evidence or a dependency goes back",
    (...categories) => {
      const blockers = blockersOf(["missing_evidence", ...categories])
      // A person's signed receipt for exactly this unblock, so only the route is judged here.
      const signed = receipt("unblock", Gate.unblockDigest("t-1", "VERIFYING", blockers))
      const gate = valid(Gate.unblock(ctx("BLOCKED"), { to: "VERIFYING", blockers, receipt: signed, authority, codeChanged: false, pendingSteps: [] }))
      expect(gate.reasons).toEqual([{
        code: "open_blockers",
        message: `The task is blocked by ${categories.join(", ")}, which verifying again cannot resolve; only missing evidence or a missing dependency goes back to VERIFYING.`
      }])
      expect(gate.requiredActions).toEqual([{ description: "Resume running so the run deals with it", command: "ratchet unblock t-1 --to RUNNING" }])
    }
  )

  it("CLEAR back to VERIFYING after a missing dependency alone", () => {
    clear(Gate.unblock(ctx("BLOCKED"), { to: "VERIFYING", blockers: blockersOf(["missing_dependency"]), receipt: null, authority, codeChanged: false, pendingSteps: [] }))
  })

  it("names every step still pending and every spent category, comma-separated", () => {
    const gate = valid(
      Gate.unblock(ctx("BLOCKED"), {
        to: "VERIFYING",
        blockers: blockersOf(["retry_budget_spent", "no_progress"]), receipt: null, authority,
        codeChanged: false,
        pendingSteps: ["docs", "build"]
      })
    )
    expect(gate.reasons.map((reason) => reason.message)).toEqual([
      "Steps still without a terminal attempt: docs, build.",
      "The task is blocked by retry_budget_spent, no_progress; verifying the same work again cannot lift that."
    ])
  })

  it("CLEAR back to RUNNING after a failed criterion", () => {
    clear(Gate.unblock(ctx("BLOCKED"), { to: "RUNNING", blockers: blockersOf(["verification_failed"]), receipt: null, authority, codeChanged: true, pendingSteps: [] }))
  })

  it("keeps two actions with the same command but different descriptions", () => {
    const gate = Gate.unblock(ctx("BLOCKED"), {
      to: "VERIFYING",
      blockers: blockersOf([]), receipt: null, authority,
      codeChanged: true,
      pendingSteps: ["docs"]
    })
    expect(codes(gate)).toEqual(["code_changed", "steps_not_terminal"])
    expect(gate.requiredActions).toHaveLength(2)
  })

  it("CLEAR back to RUNNING for a block that is not about the retry budget, with the person's receipt for a decision", () => {
    const blockers = blockersOf(["missing_dependency", "decision_needed"])
    const gate = Gate.unblock(ctx("BLOCKED"), {
      to: "RUNNING",
      blockers,
      receipt: receipt("unblock", Gate.unblockDigest("t-1", "RUNNING", blockers)),
      authority,
      codeChanged: true,
      pendingSteps: ["build"]
    })
    clear(gate)
    expect(gate.to).toBe("RUNNING")
  })

  describe("a blocker only a person lifts needs their signed receipt for exactly this unblock", () => {
    it("the personal blockers are a scope violation and a decision, written out", () => {
      expect(Gate.personalBlockers).toEqual(["scope_violation", "decision_needed"])
    })

    it.each(["scope_violation", "decision_needed"])("HOLD receipt_required for a %s without a receipt", (category) => {
      const gate = valid(Gate.unblock(ctx("BLOCKED"), { to: "RUNNING", blockers: blockersOf([category]), receipt: null, authority, codeChanged: false, pendingSteps: [] }))
      expect(codes(gate)).toEqual(["receipt_required"])
      expect(gate.reasons[0]!.message).toMatch(/^No approval receipt for the unblock [0-9a-f]{8}\.$/)
      expect(gate.requiredActions).toEqual([{
        description: "A person approves the unblock on an interactive terminal",
        command: "ratchet unblock t-1 --to RUNNING --resolution \"<what resolved it>\""
      }])
    })

    it("HOLD receipt_unsigned for an agent's unsigned receipt, signature_invalid for one naming the agent", () => {
      const blockers = blockersOf(["scope_violation"])
      const digest = Gate.unblockDigest("t-1", "RUNNING", blockers)
      const unblock = (r: Event.Receipt) => Gate.unblock(ctx("BLOCKED"), { to: "RUNNING", blockers, receipt: r, authority, codeChanged: false, pendingSteps: [] })
      expect(codes(unblock(receipt("unblock", digest, { signature: null })))).toEqual(["receipt_unsigned"])
      expect(codes(unblock(receipt("unblock", digest, { actor: agent })))).toEqual(["approval_requires_user", "signature_invalid"])
    })

    it("HOLD stale_digest for a receipt for another route or other blockers (no replay)", () => {
      const blockers = blockersOf(["scope_violation"])
      const toVerifying = receipt("unblock", Gate.unblockDigest("t-1", "VERIFYING", blockers))
      const other = receipt("unblock", Gate.unblockDigest("t-1", "RUNNING", blockersOf(["decision_needed"])))
      for (const r of [toVerifying, other]) {
        expect(codes(Gate.unblock(ctx("BLOCKED"), { to: "RUNNING", blockers, receipt: r, authority, codeChanged: false, pendingSteps: [] }))).toEqual([
          "stale_digest"
        ])
      }
    })

    it("the digest binds the task, the route and every field of every blocker", () => {
      const one: Event.Blocker = { category: "scope_violation", owner: "user", requiredAction: "undo a.txt", lastEvidence: ["a.txt"] }
      const base = Gate.unblockDigest("t-1", "RUNNING", [one])
      expect(Gate.unblockDigest("t-2", "RUNNING", [one])).not.toBe(base)
      expect(Gate.unblockDigest("t-1", "VERIFYING", [one])).not.toBe(base)
      expect(Gate.unblockDigest("t-1", "RUNNING", [{ ...one, requiredAction: "undo b.txt" }])).not.toBe(base)
      expect(Gate.unblockDigest("t-1", "RUNNING", [{ ...one, lastEvidence: ["b.txt"] }])).not.toBe(base)
      expect(Gate.unblockDigest("t-1", "RUNNING", [{ ...one, owner: "agent" }])).not.toBe(base)
      expect(Gate.unblockDigest("t-1", "RUNNING", [one, one])).not.toBe(base)
      expect(Gate.unblockDigest("t-1", "RUNNING", [{ ...one, lastEvidence: undefined }])).toBe(Gate.unblockDigest("t-1", "RUNNING", [{ ...one, lastEvidence: [] }]))
    })

    it.each(["missing_dependency", "missing_evidence", "verification_failed"])("needs no receipt for a %s", (category) => {
      clear(Gate.unblock(ctx("BLOCKED"), { to: "RUNNING", blockers: blockersOf([category]), receipt: null, authority, codeChanged: false, pendingSteps: [] }))
    })
  })

  it.each(["retry_budget_spent", "repeated_failure", "no_progress"])(
    "HOLD retry_budget_spent back to RUNNING after a %s block",
    (category) => {
      const gate = valid(
        Gate.unblock(ctx("BLOCKED"), {
          to: "RUNNING",
          blockers: blockersOf(["missing_dependency", category]), receipt: null, authority,
          codeChanged: false,
          pendingSteps: []
        })
      )
      expect(gate.reasons).toEqual([
        {
          code: "retry_budget_spent",
          message: `The task is blocked by ${category}; running again with the same contract is not allowed.`
        }
      ])
      expect(gate.requiredActions).toEqual([
        {
          description: "Reopen the task and change the contract or the plan",
          command: "ratchet reopen t-1 --reason \"<what must change>\""
        }
      ])
    }
  )

  it("names every spent category", () => {
    const gate = Gate.unblock(ctx("BLOCKED"), {
      to: "RUNNING",
      blockers: blockersOf(["no_progress", "repeated_failure"]), receipt: null, authority,
      codeChanged: false,
      pendingSteps: []
    })
    expect(gate.reasons[0]!.message).toBe(
      "The task is blocked by no_progress, repeated_failure; running again with the same contract is not allowed."
    )
  })
})
