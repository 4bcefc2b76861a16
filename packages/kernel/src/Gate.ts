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
import * as Digest from "./Digest.js"
import { AcVerdict, Actor, Receipt, TaskState } from "./Event.js"
import type { ReceiptSubject } from "./Event.js"

/**
 * The lifecycle policy these evaluators implement. Bumped whenever a gate's rules change, so a
 * recorded gate says which rules it applied.
 *
 * @since 0.1.0
 * @category models
 */
export const policyVersion = "ratchet-lifecycle/1"

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
 * The checks every receipt passes: present, for this subject, by a person, on a trusted channel,
 * for the digest that is current now.
 */
const receiptFindings = (
  context: Context,
  subject: ReceiptSubject,
  current: Digest.Digest,
  receipt: Receipt | null
): ReadonlyArray<Finding> => {
  const approve = `ratchet ${subject === "reopen" ? "reopen" : "approve"} ${context.taskId}${subject === "reopen" ? "" : ` ${subject}`}`
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
  facts: { readonly digest: Digest.Digest; readonly receipt: Receipt | null }
): Gate =>
  build("restatement_approval", "INTERVIEWING", context, receiptFindings(context, "restatement", facts.digest, facts.receipt))

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
  facts: { readonly specDigest: Digest.Digest; readonly receipt: Receipt | null }
): Gate => build("spec_approval", "SPEC_APPROVED", context, receiptFindings(context, "spec", facts.specDigest, facts.receipt))

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
  facts: { readonly planDigest: Digest.Digest; readonly stale: boolean; readonly receipt: Receipt | null }
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
  findings.push(...receiptFindings(context, "plan", facts.planDigest, facts.receipt))
  return build("plan_approval", "PLAN_APPROVED", context, findings)
}

/**
 * PLAN_APPROVED → RUNNING: the contract and plan the caller means to run are the current ones and
 * are approved, the spec defines the allowed scope, and the caller holds the writer lease.
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
 * VERIFYING → COMPLETED. CLEAR only when every required acceptance criterion has a PASS verdict
 * with evidence, taken against the current spec digest, by a verifier that did not execute the
 * steps, and no blocker is open. A CLEAR completion gate is the READY_TO_COMPLETE gate.
 *
 * Per criterion, the newest verdict taken against the current digest decides; verdicts against an
 * older digest are reported as stale and never reused.
 *
 * @since 0.1.0
 * @category constructors
 */
export const completion = (
  context: Context,
  facts: {
    readonly currentSpecDigest: Digest.Digest
    readonly requiredAcs: ReadonlyArray<string>
    readonly verdicts: ReadonlyArray<AcVerdict>
    /** Identities that executed the run's steps (workers). */
    readonly workers: ReadonlyArray<Actor>
    readonly openBlockers: number
  }
): Gate => {
  const findings: Array<Finding> = []
  const evidence: Array<string> = []
  const isWorker = (actor: Actor) => facts.workers.some((worker) => worker.id === actor.id)
  for (const acId of facts.requiredAcs) {
    const forAc = facts.verdicts.filter((verdict) => verdict.acId === acId)
    const current = forAc
      .filter((verdict) => verdict.specDigest === facts.currentSpecDigest && !isWorker(verdict.verifier))
      .reduce<AcVerdict | null>((newest, verdict) => (newest === null || verdict.at >= newest.at ? verdict : newest), null)
    const verify = `ratchet verify ${context.taskId} --ac ${acId}`
    if (current === null) {
      if (forAc.some((verdict) => verdict.specDigest === facts.currentSpecDigest && isWorker(verdict.verifier))) {
        findings.push(
          finding(
            "self_verification",
            `${acId} was judged only by the worker that executed the steps.`,
            `Verify ${acId} with an independent verifier`,
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
  return build("completion", "COMPLETED", context, findings, evidence)
}

/**
 * BLOCKED → RUNNING or VERIFYING. Back to VERIFYING only when the missing evidence or dependency
 * arrived with no change to the code and every step is terminal, and never after a criterion
 * FAILED (that needs the work revised, so RUNNING); back to RUNNING or VERIFYING never when the
 * block was the retry budget (continuing with the same strategy is forbidden — the contract must
 * change, through a reopen).
 *
 * @since 0.1.0
 * @category constructors
 */
export const unblock = (
  context: Context,
  facts: {
    readonly to: "RUNNING" | "VERIFYING"
    readonly blockerCategories: ReadonlyArray<string>
    readonly codeChanged: boolean
    readonly pendingSteps: ReadonlyArray<string>
  }
): Gate => {
  const findings: Array<Finding> = []
  const reopen = `ratchet reopen ${context.taskId} --reason "<what must change>"`
  const spent = facts.blockerCategories.filter((category) =>
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
    if (facts.blockerCategories.includes("verification_failed")) {
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
    const notEvidence = facts.blockerCategories.filter((category) =>
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
  facts: { readonly specDigest: Digest.Digest; readonly receipt: Receipt | null }
): Gate => build("reopen", "REOPENED", context, receiptFindings(context, "reopen", facts.specDigest, facts.receipt))
