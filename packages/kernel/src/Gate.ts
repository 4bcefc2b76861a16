/**
 * Gates: the evaluated answer to "may this transition happen now".
 *
 * A gate is a record, not an exception: `decision` is `CLEAR` or `HOLD`, and a HOLD lists stable
 * reason codes and the actions a person can take. HOLD is a normal domain result (the CLI exits 3
 * with it), distinct from an infrastructure failure.
 *
 * Every evaluator here is a pure function of *facts* (digests, receipts, verdicts, the lease as
 * observed) and a {@link Context} naming the revision the facts were read at. A gate is bound to
 * that revision: when a newer revision exists, an older gate says nothing about it
 * ({@link isBoundTo}).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Authority from "./Authority.js"
import * as Digest from "./Digest.js"
import { AcVerdict, Actor, Blocker, Receipt, TaskState } from "./Event.js"
import type { ReceiptSubject } from "./Event.js"

/**
 * The lifecycle policy these evaluators implement. Bumped whenever a gate's rules change, so a
 * recorded gate says which rules it applied.
 *
 * @since 0.1.0
 * @category models
 */
export const policyVersion = "ratchet-lifecycle/2"

/**
 * Receipt channels that prove a person approved: an interactive terminal prompt. Anything an agent
 * can produce without a person present (a file field, a tool call, a piped stdin) is not one.
 *
 * @since 0.1.0
 * @category models
 */
export const trustedReceiptChannels: ReadonlyArray<string> = ["terminal"]

/**
 * Stable reason codes. Scripts and hosts branch on these; messages are for people.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReasonCode = Schema.Literal(
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
)

/**
 * @since 0.1.0
 * @category models
 */
export type ReasonCode = typeof ReasonCode.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const Reason = Schema.Struct({ code: ReasonCode, message: Schema.String })

/**
 * @since 0.1.0
 * @category models
 */
export type Reason = typeof Reason.Type

/**
 * Something a person can do to turn a HOLD into a CLEAR; `command` is the `ratchet` invocation
 * when there is one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RequiredAction = Schema.Struct({
  description: Schema.String,
  command: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type RequiredAction = typeof RequiredAction.Type

/**
 * Which gated transition a gate answers for. A CLEAR `completion` gate is the READY_TO_COMPLETE
 * gate of the completion order.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Kind = Schema.Literal(
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
)

/**
 * @since 0.1.0
 * @category models
 */
export type Kind = typeof Kind.Type

/**
 * The revision a gate evaluated: the task stream version and the digests current at that moment.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Binding = Schema.Struct({
  taskVersion: Schema.Int,
  specDigest: Schema.NullOr(Digest.Digest),
  planDigest: Schema.NullOr(Digest.Digest)
})

/**
 * @since 0.1.0
 * @category models
 */
export type Binding = typeof Binding.Type

/**
 * The gate record of the brief.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Gate = Schema.Struct({
  kind: Kind,
  decision: Schema.Literal("CLEAR", "HOLD"),
  from: TaskState,
  to: TaskState,
  reasons: Schema.Array(Reason),
  requiredActions: Schema.Array(RequiredAction),
  evidenceRefs: Schema.Array(Schema.String),
  evaluatedAt: Schema.Int,
  policyVersion: Schema.String,
  boundTo: Binding
})

/**
 * @since 0.1.0
 * @category models
 */
export type Gate = typeof Gate.Type

/**
 * Where and when a gate is evaluated. `taskId` fills the `ratchet …` commands of required actions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context {
  readonly taskId: string
  readonly from: TaskState
  readonly evaluatedAt: number
  readonly boundTo: Binding
}

/**
 * True when the gate was evaluated at exactly this binding; a gate for an older revision never
 * authorises a transition of a newer one.
 *
 * @since 0.1.0
 * @category guards
 */
export const isBoundTo = (gate: Gate, binding: Binding): boolean =>
  gate.boundTo.taskVersion === binding.taskVersion &&
  gate.boundTo.specDigest === binding.specDigest &&
  gate.boundTo.planDigest === binding.planDigest

/**
 * @since 0.1.0
 * @category guards
 */
export const isClear = (gate: Gate): boolean => gate.decision === "CLEAR"

interface Finding {
  readonly code: ReasonCode
  readonly message: string
  readonly action: RequiredAction
}

const finding = (code: ReasonCode, message: string, description: string, command?: string): Finding => ({
  code,
  message,
  action: command === undefined ? { description } : { description, command }
})

const build = (
  kind: Kind,
  to: TaskState,
  context: Context,
  findings: ReadonlyArray<Finding>,
  evidenceRefs: ReadonlyArray<string> = []
): Gate => {
  const actions: Array<RequiredAction> = []
  for (const { action } of findings) {
    if (!actions.some((known) => known.description === action.description && known.command === action.command)) {
      actions.push(action)
    }
  }
  return {
    kind,
    decision: findings.length === 0 ? "CLEAR" : "HOLD",
    from: context.from,
    to,
    reasons: findings.map(({ code, message }) => ({ code, message })),
    requiredActions: actions,
    evidenceRefs: [...new Set(evidenceRefs)],
    evaluatedAt: context.evaluatedAt,
    policyVersion,
    boundTo: context.boundTo
  }
}

const short = (digest: string): string => digest.slice("sha256:".length, "sha256:".length + 8)

/**
 * Whose signature a gate accepts, and where the receipt it checks was given: `revision` is the
 * spec's or the plan's revision for their approvals (see `Authority.receiptFields`).
 *
 * @since 0.2.0
 * @category models
 */
export interface Signed {
  readonly authority: Authority.Authority
  readonly revision: number | null
}

/** The command a person runs again to give a receipt for `subject`. */
const commandFor = (taskId: string, subject: ReceiptSubject): string => {
  switch (subject) {
    case "reopen":
      return `ratchet reopen ${taskId} --reason "<why>"`
    case "unblock":
      return `ratchet unblock ${taskId} --to RUNNING --resolution "<what resolved it>"`
    case "resolution":
      return `ratchet unblock ${taskId} --resolve <step> succeeded|failed`
    case "rewind":
      return `ratchet rewind ${taskId} --to <lsn>`
    case "restatement":
    case "spec":
    case "plan":
    case "scope":
      return `ratchet approve ${taskId} ${subject}`
  }
}

/**
 * The finding for a person's act whose signature does not count, or none when it does.
 *
 * @since 0.2.0
 * @category constructors
 */
const standingFindings = (what: string, standing: Authority.Standing, approvers: number, command: string): ReadonlyArray<Finding> => {
  if (standing._tag === "Signed") return []
  const register = approvers === 0
    ? "This project has no approvers yet: create your approval key and register it (ratchet approver init), then do it again"
    : "Do it again yourself, on a terminal, with your approval key"
  switch (standing._tag) {
    case "Unsigned":
      return [finding("receipt_unsigned", Authority.explain(what, standing), register, approvers === 0 ? "ratchet approver init" : command)]
    case "UnknownKey":
      return [
        finding(
          "approver_unknown",
          Authority.explain(what, standing),
          approvers === 0 ? register : "Have an approver register the key (ratchet approver add), or sign with a registered key",
          approvers === 0 ? "ratchet approver init" : "ratchet approver list"
        )
      ]
    case "NotTheSigner":
    case "BadSignature":
      return [finding("signature_invalid", Authority.explain(what, standing), register, command)]
  }
}

/**
 * The checks every receipt passes: present, for this subject, by a person, on a trusted channel,
 * for the digest that is current now, and signed by one of the project's approvers over exactly
 * that.
 */
const receiptFindings = (
  context: Context,
  subject: ReceiptSubject,
  current: Digest.Digest,
  receipt: Receipt | null,
  signed: Signed
): ReadonlyArray<Finding> => {
  const approve = commandFor(context.taskId, subject)
  if (receipt === null) {
    return [
      finding(
        "receipt_required",
        `No approval receipt for the ${subject} ${short(current)}.`,
        `A person approves the ${subject} on an interactive terminal`,
        approve
      )
    ]
  }
  const findings: Array<Finding> = []
  if (receipt.subject !== subject) {
    findings.push(
      finding(
        "receipt_wrong_subject",
        `The receipt approves the ${receipt.subject}, not the ${subject}.`,
        `Approve the ${subject} itself`,
        approve
      )
    )
  }
  if (receipt.actor.kind !== "user") {
    findings.push(
      finding(
        "approval_requires_user",
        `The receipt was given by ${receipt.actor.kind} "${receipt.actor.id}"; only a person can approve.`,
        `A person approves the ${subject} on an interactive terminal`,
        approve
      )
    )
  }
  if (!trustedReceiptChannels.includes(receipt.channel)) {
    findings.push(
      finding(
        "approval_requires_terminal",
        `The receipt came through "${receipt.channel}"; approvals are only taken on an interactive terminal.`,
        `Run the approval in a terminal, not from a script or an agent`,
        approve
      )
    )
  }
  if (receipt.digest !== current) {
    findings.push(
      finding(
        "stale_digest",
        `The receipt approves ${short(receipt.digest)} but the current ${subject} is ${short(current)}.`,
        `Review and approve the current ${subject}`,
        approve
      )
    )
  }
  findings.push(
    ...standingFindings(
      `The ${subject} receipt`,
      Authority.ofReceipt(signed.authority, context.taskId, signed.revision, receipt),
      signed.authority.approvers.length,
      approve
    )
  )
  return findings
}

/**
 * INITIALIZING → INTERVIEWING: the project and its store are ready.
 *
 * @since 0.1.0
 * @category constructors
 */
export const setup = (
  context: Context,
  facts: { readonly projectInitialized: boolean; readonly storeWritable: boolean }
): Gate => {
  const findings: Array<Finding> = []
  if (!facts.projectInitialized) {
    findings.push(
      finding(
        "project_not_initialized",
        "This repository has no .ratchet/project.json.",
        "Initialise the project",
        "ratchet init"
      )
    )
  }
  if (!facts.storeWritable) {
    findings.push(
      finding(
        "store_not_writable",
        "The runtime store cannot be written.",
        "Make $RATCHET_HOME writable by this user, or point RATCHET_HOME elsewhere"
      )
    )
  }
  return build("setup", "INTERVIEWING", context, findings)
}

/**
 * @since 0.1.0
 * @category models
 */
export interface QuestionFact {
  readonly questionId: string
  readonly text: string
  readonly blocking: boolean
  readonly answered: boolean
}

/**
 * The closure audit of the brief: no unanswered blocking question, and a restatement of the goal
 * that a person approved. The brief stays INTERVIEWING until it passes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const briefClosure = (
  context: Context,
  facts: {
    readonly questions: ReadonlyArray<QuestionFact>
    readonly restatement: { readonly digest: Digest.Digest; readonly approved: boolean } | null
  }
): Gate => {
  const findings: Array<Finding> = []
  for (const question of facts.questions) {
    if (question.blocking && !question.answered) {
      findings.push(
        finding(
          "blocking_question_open",
          `Blocking question ${question.questionId} is unanswered: "${question.text}"`,
          `Answer question ${question.questionId}`,
          `ratchet brief ${context.taskId} answer ${question.questionId} "<answer>" --source user`
        )
      )
    }
  }
  if (facts.restatement === null) {
    findings.push(
      finding(
        "restatement_missing",
        "The goal has not been restated in one sentence.",
        "Restate the goal in one sentence",
        `ratchet brief ${context.taskId} restate "<one sentence>"`
      )
    )
  } else if (!facts.restatement.approved) {
    findings.push(
      finding(
        "restatement_not_approved",
        `The restatement ${short(facts.restatement.digest)} is not approved.`,
        "A person approves the restatement",
        `ratchet approve ${context.taskId} restatement`
      )
    )
  }
  return build("brief_closure", "INTERVIEWING", context, findings)
}

/**
 * Approving the one-sentence restatement of the goal (the task stays INTERVIEWING).
 *
 * @since 0.1.0
 * @category constructors
 */
export const restatementApproval = (
  context: Context,
  facts: { readonly digest: Digest.Digest; readonly receipt: Receipt | null; readonly authority: Authority.Authority }
): Gate =>
  build(
    "restatement_approval",
    "INTERVIEWING",
    context,
    receiptFindings(context, "restatement", facts.digest, facts.receipt, { authority: facts.authority, revision: null })
  )

/**
 * INTERVIEWING → SPEC_READY: the brief passed its closure audit and was closed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const specProposal = (context: Context, facts: { readonly briefClosed: boolean }): Gate =>
  build(
    "spec_proposal",
    "SPEC_READY",
    context,
    facts.briefClosed ? [] : [
      finding(
        "brief_not_closed",
        "The brief is not closed; a spec is written from a closed brief.",
        "Close the brief (its closure audit lists anything still open)",
        `ratchet brief ${context.taskId} close`
      )
    ]
  )

/**
 * SPEC_READY → SPEC_APPROVED: a person's receipt for exactly the current spec digest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const specApproval = (
  context: Context,
  facts: {
    readonly specDigest: Digest.Digest
    readonly revision: number
    readonly receipt: Receipt | null
    readonly authority: Authority.Authority
  }
): Gate =>
  build(
    "spec_approval",
    "SPEC_APPROVED",
    context,
    receiptFindings(context, "spec", facts.specDigest, facts.receipt, { authority: facts.authority, revision: facts.revision })
  )

/**
 * PREFLIGHT → PLAN_READY: a preflight of the current spec found no wrong assumption, and the plan
 * is bound to the current spec digest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const planProposal = (
  context: Context,
  facts: {
    readonly currentSpecDigest: Digest.Digest
    readonly preflight: {
      readonly specDigest: Digest.Digest
      readonly missingPaths: ReadonlyArray<string>
      readonly invalidScopes: ReadonlyArray<string>
    } | null
    readonly planSpecDigest: Digest.Digest
  }
): Gate => {
  const findings: Array<Finding> = []
  const { preflight } = facts
  if (preflight === null || preflight.specDigest !== facts.currentSpecDigest) {
    findings.push(
      finding(
        "preflight_missing",
        `No preflight of the current spec ${short(facts.currentSpecDigest)}.`,
        "Inspect the repository against the approved spec",
        `ratchet preflight ${context.taskId}`
      )
    )
  } else if (preflight.missingPaths.length > 0 || preflight.invalidScopes.length > 0) {
    const wrong = [
      ...preflight.missingPaths.map((path) => `relevant path "${path}" does not exist`),
      ...preflight.invalidScopes.map((scope) => `scope "${scope}" is not a valid path in this repository`)
    ]
    findings.push(
      finding(
        "preflight_wrong_assumption",
        `The spec assumes what the repository does not hold: ${wrong.join("; ")}.`,
        "Reopen the task and correct the contract",
        `ratchet reopen ${context.taskId} --reason "<what was wrong>"`
      )
    )
  }
  if (facts.planSpecDigest !== facts.currentSpecDigest) {
    findings.push(
      finding(
        "stale_digest",
        `The plan is bound to spec ${short(facts.planSpecDigest)} but the current spec is ${short(facts.currentSpecDigest)}.`,
        `Set the plan's specDigest to ${facts.currentSpecDigest} after reviewing it against the current spec`
      )
    )
  }
  return build("plan_proposal", "PLAN_READY", context, findings)
}

/**
 * PLAN_READY → PLAN_APPROVED: the plan is not stale and a person approved exactly its digest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const planApproval = (
  context: Context,
  facts: {
    readonly planDigest: Digest.Digest
    readonly revision: number
    readonly stale: boolean
    readonly receipt: Receipt | null
    readonly authority: Authority.Authority
  }
): Gate => {
  const findings: Array<Finding> = []
  if (facts.stale) {
    findings.push(
      finding(
        "plan_stale",
        `The plan ${short(facts.planDigest)} was made for an earlier spec.`,
        "Propose a plan bound to the current spec",
        `ratchet plan ${context.taskId} --file <plan.yaml>`
      )
    )
  }
  findings.push(...receiptFindings(context, "plan", facts.planDigest, facts.receipt, { authority: facts.authority, revision: facts.revision }))
  return build("plan_approval", "PLAN_APPROVED", context, findings)
}

/**
 * The approvals a run rests on, as the task recorded them: the receipt behind the current spec's
 * and plan's approval, with the revision each was given at (`null` receipt: never approved).
 *
 * @since 0.2.0
 * @category models
 */
export interface Approvals {
  readonly spec: { readonly digest: Digest.Digest; readonly revision: number; readonly receipt: Receipt | null }
  readonly plan: { readonly digest: Digest.Digest; readonly revision: number; readonly receipt: Receipt | null }
}

/**
 * The approvals a run rests on, checked again as any receipt is: a spec or plan that reached
 * "approved" through a receipt that is not a person's signed approval of exactly it (written
 * straight into the store, or by an older Ratchet without signatures) holds the run and the
 * completion, whatever the state says.
 */
const approvalFindings = (context: Context, approvals: Approvals, authority: Authority.Authority): ReadonlyArray<Finding> => [
  ...receiptFindings(context, "spec", approvals.spec.digest, approvals.spec.receipt, { authority, revision: approvals.spec.revision }),
  ...receiptFindings(context, "plan", approvals.plan.digest, approvals.plan.receipt, { authority, revision: approvals.plan.revision })
]

/**
 * PLAN_APPROVED → RUNNING: the contract and plan the caller means to run are the current ones and
 * are approved (by signed receipts of the project's approvers, checked again here), the spec
 * defines the allowed scope, and the caller holds the writer lease.
 *
 * @since 0.1.0
 * @category constructors
 */
export const runStart = (
  context: Context,
  facts: {
    readonly currentSpecDigest: Digest.Digest
    readonly approvedSpecDigest: Digest.Digest | null
    readonly currentPlanDigest: Digest.Digest
    readonly approvedPlanDigest: Digest.Digest | null
    readonly planStale: boolean
    readonly requestedSpecDigest: Digest.Digest
    readonly requestedPlanDigest: Digest.Digest
    readonly allowedScope: ReadonlyArray<string>
    readonly leaseHeld: boolean
    readonly approvals: Approvals
    readonly authority: Authority.Authority
  }
): Gate => {
  const findings: Array<Finding> = []
  if (facts.approvedSpecDigest !== facts.currentSpecDigest) {
    findings.push(
      finding(
        "spec_not_approved",
        `The current spec ${short(facts.currentSpecDigest)} is not approved.`,
        "A person approves the spec",
        `ratchet approve ${context.taskId} spec`
      )
    )
  }
  if (facts.planStale) {
    findings.push(
      finding(
        "plan_stale",
        "The plan was made for an earlier spec.",
        "Propose a plan bound to the current spec",
        `ratchet plan ${context.taskId} --file <plan.yaml>`
      )
    )
  } else if (facts.approvedPlanDigest !== facts.currentPlanDigest) {
    findings.push(
      finding(
        "plan_not_approved",
        `The current plan ${short(facts.currentPlanDigest)} is not approved.`,
        "A person approves the plan",
        `ratchet approve ${context.taskId} plan`
      )
    )
  }
  if (facts.approvedSpecDigest === facts.currentSpecDigest && facts.approvedPlanDigest === facts.currentPlanDigest && !facts.planStale) {
    findings.push(...approvalFindings(context, facts.approvals, facts.authority))
  }
  if (facts.requestedSpecDigest !== facts.currentSpecDigest || facts.requestedPlanDigest !== facts.currentPlanDigest) {
    findings.push(
      finding(
        "stale_digest",
        `The run was asked for spec ${short(facts.requestedSpecDigest)} and plan ${short(facts.requestedPlanDigest)}, but the current ones are ${short(facts.currentSpecDigest)} and ${short(facts.currentPlanDigest)}.`,
        "Read the task again and start the run against the current digests",
        `ratchet status ${context.taskId}`
      )
    )
  }
  if (facts.allowedScope.length === 0) {
    findings.push(
      finding(
        "scope_undefined",
        "The spec defines no execution.allowedScope, so no write could be checked against it.",
        "Add execution.allowedScope to the spec and approve it again",
        `ratchet spec ${context.taskId} --file <spec.md>`
      )
    )
  }
  if (!facts.leaseHeld) {
    findings.push(
      finding(
        "lease_required",
        "The caller does not hold the task's writer lease.",
        "Acquire the writer lease (or take it over after its grace period)",
        `ratchet lease acquire ${context.taskId}`
      )
    )
  }
  return build("run_start", "RUNNING", context, findings)
}

/**
 * RUNNING → VERIFYING: every step is terminal. Verification is a resting state entered only then,
 * so no attempt can still be moving under a verifier.
 *
 * @since 0.1.0
 * @category constructors
 */
export const verificationEntry = (context: Context, facts: { readonly pendingSteps: ReadonlyArray<string> }): Gate =>
  build(
    "verification_entry",
    "VERIFYING",
    context,
    facts.pendingSteps.length === 0
      ? []
      : [
        finding(
          "steps_not_terminal",
          `Steps still without a terminal attempt: ${facts.pendingSteps.join(", ")}.`,
          "Finish the remaining steps",
          `ratchet run ${context.taskId}`
        )
      ]
  )

/**
 * Who worked on a run, for independence: a verdict by one of them never counts. Matched by kind
 * and id, so a person is barred only for work done as themselves (a manual step they marked done);
 * starting a runner does not make them the worker of its steps (the runner, `runner:<id>`, is), so
 * the same person may verify them, and an agent's session (`agent:…`) never shares an id with an
 * approver.
 *
 * @since 0.2.0
 * @category guards
 */
export const isWorker = (workers: ReadonlyArray<Actor>, actor: Actor): boolean =>
  workers.some((worker) => worker.kind === actor.kind && worker.id === actor.id)

/**
 * What decides which verdicts count for a completion.
 *
 * @since 0.2.0
 * @category models
 */
export interface VerdictFacts {
  readonly taskId: string
  readonly runId: string
  readonly currentSpecDigest: Digest.Digest
  readonly workers: ReadonlyArray<Actor>
  readonly authority: Authority.Authority
}

/**
 * Whether a verdict may count: taken against the current spec digest, signed by one of the
 * project's approvers over exactly itself and this run, by someone who did not work on the run.
 *
 * @since 0.2.0
 * @category guards
 */
export const isEligible = (facts: VerdictFacts, verdict: AcVerdict): boolean =>
  verdict.specDigest === facts.currentSpecDigest &&
  !isWorker(facts.workers, verdict.verifier) &&
  Authority.ofVerdict(facts.authority, facts.taskId, facts.runId, verdict)._tag === "Signed"

/**
 * The verdicts a completion rests on: per criterion, the newest eligible one ({@link isEligible}),
 * in the order given (of two equally new, the later one).
 *
 * @since 0.2.0
 * @category constructors
 */
export const countedVerdicts = (facts: VerdictFacts, verdicts: ReadonlyArray<AcVerdict>): ReadonlyArray<AcVerdict> => {
  const eligible = verdicts.filter((verdict) => isEligible(facts, verdict))
  return eligible.filter((verdict, index) =>
    !eligible.some((other, j) => other.acId === verdict.acId && (other.at > verdict.at || (other.at === verdict.at && j > index)))
  )
}

/**
 * VERIFYING → COMPLETED. CLEAR only when every required acceptance criterion has a PASS verdict
 * with evidence, taken against the current spec digest, signed by one of the project's approvers,
 * by a verifier that did not work on the run, no blocker is open, and the approvals of the spec and
 * plan are still a person's signed receipts. A CLEAR completion gate is the READY_TO_COMPLETE gate.
 *
 * Per criterion, the newest eligible verdict decides; verdicts against an older digest are
 * reported as stale and never reused; unsigned ones (an agent's, a pass off a terminal) and a
 * worker's are reported and never count.
 *
 * @since 0.1.0
 * @category constructors
 */
export const completion = (
  context: Context,
  facts: VerdictFacts & {
    readonly requiredAcs: ReadonlyArray<string>
    readonly verdicts: ReadonlyArray<AcVerdict>
    readonly openBlockers: number
    readonly approvals: Approvals
  }
): Gate => {
  const findings: Array<Finding> = []
  const evidence: Array<string> = []
  const counted = countedVerdicts(facts, facts.verdicts)
  for (const acId of facts.requiredAcs) {
    const forAc = facts.verdicts.filter((verdict) => verdict.acId === acId)
    const current = counted.find((verdict) => verdict.acId === acId) ?? null
    const verify = `ratchet verify ${context.taskId} --ac ${acId}`
    if (current === null) {
      const onDigest = forAc.filter((verdict) => verdict.specDigest === facts.currentSpecDigest)
      const independent = onDigest.filter((verdict) => !isWorker(facts.workers, verdict.verifier))
      if (onDigest.length > 0 && independent.length === 0) {
        findings.push(
          finding(
            "self_verification",
            `${acId} was judged only by someone who worked on the run.`,
            `Verify ${acId} with an independent verifier`,
            verify
          )
        )
      } else if (independent.length > 0) {
        const newest = independent.reduce((a, b) => (b.at >= a.at ? b : a))
        const standing = Authority.ofVerdict(facts.authority, context.taskId, facts.runId, newest)
        findings.push(
          finding(
            "verdict_unsigned",
            standing._tag === "Signed"
              ? `${acId} has no verdict that counts.`
              : Authority.explain(`${acId}'s verdict by ${newest.verifier.kind}:${newest.verifier.id}`, standing),
            facts.authority.approvers.length === 0
              ? `Register an approval key (ratchet approver init), then verify ${acId} with it`
              : `Verify ${acId} yourself, on a terminal, signing with your approval key`,
            verify
          )
        )
      } else if (forAc.length > 0) {
        findings.push(
          finding(
            "stale_evidence",
            `${acId} has evidence only for an earlier spec digest; it is not reused.`,
            `Verify ${acId} again against the current spec`,
            verify
          )
        )
      } else {
        findings.push(finding("missing_evidence", `${acId} has no verdict.`, `Verify ${acId}`, verify))
      }
      continue
    }
    if (current.verdict !== "PASS") {
      const why = current.verdict === "INDETERMINATE"
        ? "is INDETERMINATE, which never counts as PASS"
        : current.verdict === "NOT_RUN"
        ? "was NOT_RUN: its check could not be executed"
        : "FAILED"
      findings.push(finding("ac_not_passed", `${acId} ${why}.`, `Make ${acId} pass, then verify it again`, verify))
    } else if (current.evidenceRefs.length === 0) {
      findings.push(
        finding(
          "missing_evidence",
          `${acId} is marked PASS without any evidence reference; a claim alone is not evidence.`,
          `Verify ${acId} with a reproducible check`,
          verify
        )
      )
    } else {
      evidence.push(...current.evidenceRefs)
    }
  }
  if (facts.openBlockers > 0) {
    findings.push(
      finding(
        "open_blockers",
        `${facts.openBlockers} blocker(s) are still open.`,
        "Resolve the open blockers",
        `ratchet status ${context.taskId}`
      )
    )
  }
  findings.push(...approvalFindings(context, facts.approvals, facts.authority))
  return build("completion", "COMPLETED", context, findings, evidence)
}

/**
 * Blockers only a person lifts: a scope violation (accepting a change outside the approved scope
 * is widening it) and a decision a person was asked for (the checkout changed under a paused run,
 * a step's tree could not be read). Lifting them takes a signed receipt (subject `unblock`).
 *
 * @since 0.2.0
 * @category models
 */
export const personalBlockers: ReadonlyArray<Blocker["category"]> = ["scope_violation", "decision_needed"]

/**
 * The digest a person's receipt for an unblock binds: the task, where it goes, and the blockers it
 * lifts, exactly.
 *
 * @since 0.2.0
 * @category constructors
 */
export const unblockDigest = (taskId: string, to: "RUNNING" | "VERIFYING", blockers: ReadonlyArray<Blocker>): Digest.Digest =>
  Digest.ofCanonical(
    JSON.stringify({
      unblock: {
        taskId,
        to,
        blockers: blockers.map((blocker) => [blocker.category, blocker.owner, blocker.requiredAction, blocker.lastEvidence ?? []])
      }
    })
  )

/**
 * BLOCKED → RUNNING or VERIFYING. Back to VERIFYING only when the missing evidence or dependency
 * arrived with no change to the code and every step is terminal, and never after a criterion
 * FAILED (that needs the work revised, so RUNNING); back to RUNNING or VERIFYING never when the
 * block was the retry budget (continuing with the same strategy is forbidden — the contract must
 * change, through a reopen). A blocker only a person lifts ({@link personalBlockers}) needs their
 * signed receipt for exactly this unblock ({@link unblockDigest}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const unblock = (
  context: Context,
  facts: {
    readonly to: "RUNNING" | "VERIFYING"
    readonly blockers: ReadonlyArray<Blocker>
    readonly codeChanged: boolean
    readonly pendingSteps: ReadonlyArray<string>
    readonly receipt: Receipt | null
    readonly authority: Authority.Authority
  }
): Gate => {
  const findings: Array<Finding> = []
  const blockerCategories = facts.blockers.map((blocker) => blocker.category)
  const reopen = `ratchet reopen ${context.taskId} --reason "<what must change>"`
  const spent = blockerCategories.filter((category) =>
    category === "retry_budget_spent" || category === "repeated_failure" || category === "no_progress"
  )
  if (facts.to === "VERIFYING") {
    if (facts.codeChanged) {
      findings.push(
        finding(
          "code_changed",
          "The code changed since the block; verification may only resume on the code it was blocked on.",
          "Resume running instead, so the change is executed and recorded",
          `ratchet unblock ${context.taskId} --to RUNNING`
        )
      )
    }
    if (blockerCategories.includes("verification_failed")) {
      findings.push(
        finding(
          "ac_not_passed",
          "A required criterion failed verification; verifying the same code again cannot change that.",
          "Resume running so the work behind it is revised",
          `ratchet unblock ${context.taskId} --to RUNNING`
        )
      )
    }
    if (facts.pendingSteps.length > 0) {
      findings.push(
        finding(
          "steps_not_terminal",
          `Steps still without a terminal attempt: ${facts.pendingSteps.join(", ")}.`,
          "Resume running to finish them",
          `ratchet unblock ${context.taskId} --to RUNNING`
        )
      )
    }
    // Verifying resumes only what verifying stopped for: missing evidence or a missing dependency.
    // Anything else (a scope violation, a step awaiting a decision) is resolved by running.
    const notEvidence = blockerCategories.filter((category) =>
      !["missing_evidence", "missing_dependency", "verification_failed", "retry_budget_spent", "repeated_failure", "no_progress"].includes(category)
    )
    if (notEvidence.length > 0) {
      findings.push(
        finding(
          "open_blockers",
          `The task is blocked by ${notEvidence.join(", ")}, which verifying again cannot resolve; only missing evidence or a missing dependency goes back to VERIFYING.`,
          "Resume running so the run deals with it",
          `ratchet unblock ${context.taskId} --to RUNNING`
        )
      )
    }
    // A criterion that failed with the retry budget spent blocks as retry_budget_spent: verifying
    // the same work again is no way around the budget, nor around the failure.
    if (spent.length > 0) {
      findings.push(
        finding(
          "retry_budget_spent",
          `The task is blocked by ${spent.join(", ")}; verifying the same work again cannot lift that.`,
          "Reopen the task and change the contract or the plan",
          reopen
        )
      )
    }
  } else {
    if (spent.length > 0) {
      findings.push(
        finding(
          "retry_budget_spent",
          `The task is blocked by ${spent.join(", ")}; running again with the same contract is not allowed.`,
          "Reopen the task and change the contract or the plan",
          reopen
        )
      )
    }
  }
  if (facts.blockers.some((blocker) => personalBlockers.includes(blocker.category))) {
    findings.push(
      ...receiptFindings(context, "unblock", unblockDigest(context.taskId, facts.to, facts.blockers), facts.receipt, {
        authority: facts.authority,
        revision: null
      })
    )
  }
  return build("unblock", facts.to, context, findings)
}

/**
 * FAILED → REOPENED needs a person's explicit receipt, bound to the current spec digest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reopenFromFailed = (
  context: Context,
  facts: { readonly specDigest: Digest.Digest; readonly receipt: Receipt | null; readonly authority: Authority.Authority }
): Gate =>
  build(
    "reopen",
    "REOPENED",
    context,
    receiptFindings(context, "reopen", facts.specDigest, facts.receipt, { authority: facts.authority, revision: null })
  )
