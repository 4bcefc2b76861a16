/**
 * One verification pass: every applicable verifier over each acceptance criterion asked for, in
 * order, each criterion's verdict combined from their judgements with the evidence stored as
 * blobs; then the conclusion over the episode's verdicts — APPROVED (the completion gate is
 * CLEAR: READY_TO_COMPLETE), REVISE (a required criterion FAILED: the steps behind it get successor
 * attempts and the task runs again), BLOCKED (a check could not conclude: INDETERMINATE, NOT_RUN,
 * a PASS without evidence), or HELD (some required criterion has no independent verdict yet; the
 * task stays VERIFYING for more verification).
 *
 * Which verdicts count: only those taken in this episode (the same snapshot LSN) against the
 * current spec digest, signed by one of the project's approvers, newest per criterion, and never
 * by someone who worked on the run (the kernel's completion gate decides that part, so `ratchet
 * done` applies the very same rule). A pass records its verdicts unsigned; the caller signs them
 * with the verifier of record's key before they are recorded.
 *
 * @since 0.1.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import type * as Event from "@ratchet/kernel/Event"
import * as Gate from "@ratchet/kernel/Gate"
import type * as Spec from "@ratchet/kernel/Spec"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Effect from "effect/Effect"
import * as EpisodeView from "./EpisodeView.js"
import * as Evidence from "./Evidence.js"
import * as Verifier from "./Verifier.js"

/**
 * What one criterion came to in this pass.
 *
 * @since 0.1.0
 * @category models
 */
export interface CriterionResult {
  readonly acId: string
  readonly required: boolean
  readonly verdict: Event.AcVerdict
  readonly judgements: ReadonlyArray<Verifier.Judgement>
}

/**
 * Progress of a pass, for a terminal or NDJSON.
 *
 * @since 0.1.0
 * @category models
 */
export type Progress =
  | { readonly _tag: "CriterionStarted"; readonly acId: string; readonly index: number; readonly total: number; readonly verifiers: ReadonlyArray<string> }
  | { readonly _tag: "CriterionJudged"; readonly acId: string; readonly index: number; readonly total: number; readonly result: CriterionResult }

/**
 * Runs the verifiers over `criteria` (in spec order) and stores their evidence.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (input: {
  readonly criteria: ReadonlyArray<Spec.AcceptanceCriterion>
  readonly ctx: Omit<Verifier.VerifierCtx, "step" | "attempt">
  readonly onProgress?: (progress: Progress) => Effect.Effect<void>
}): Effect.Effect<ReadonlyArray<CriterionResult>, StorageError, Verifier.Verifiers> =>
  Effect.gen(function*() {
    const verifiers = yield* Verifier.Verifiers
    const report = input.onProgress ?? (() => Effect.void)
    const results: Array<CriterionResult> = []
    const total = input.criteria.length
    for (const [index, criterion] of input.criteria.entries()) {
      const applicable = verifiers.filter((verifier) => verifier.appliesTo(criterion))
      yield* report({ _tag: "CriterionStarted", acId: criterion.id, index, total, verifiers: applicable.map((v) => v.name) })
      const steps = EpisodeView.stepsFor(input.ctx.episode, criterion.id)
      const step = steps[steps.length - 1] ?? null
      const attempts = step === null ? [] : EpisodeView.attemptsOf(input.ctx.episode, step)
      const ctx: Verifier.VerifierCtx = { ...input.ctx, step, attempt: attempts[attempts.length - 1]?.attempt ?? null }
      const judgements: Array<Verifier.Judgement> = []
      for (const verifier of applicable) judgements.push(yield* verifier.verify(criterion, ctx, judgements))
      const refs: Array<string> = []
      for (const judgement of judgements) {
        for (const evidence of judgement.evidence) refs.push(yield* Evidence.store(ctx.blobs, evidence))
      }
      // The verifier of record is whoever observed: the person for a manual check.
      const observer = judgements.flatMap((j) => j.evidence).find((evidence) => evidence._tag === "manual")?.verifier
      const verdict: Event.AcVerdict = {
        acId: criterion.id,
        verdict: Verifier.combine(judgements),
        evidenceRefs: refs,
        specDigest: ctx.specDigest as Event.AcVerdict["specDigest"],
        verifier: observer ?? ctx.verifier,
        at: Date.now(),
        signature: null
      }
      const result: CriterionResult = { acId: criterion.id, required: criterion.required, verdict, judgements }
      results.push(result)
      yield* report({ _tag: "CriterionJudged", acId: criterion.id, index, total, result })
    }
    return results
  })

/**
 * The conclusion of verification over an episode.
 *
 * @since 0.1.0
 * @category models
 */
export interface Conclusion {
  readonly outcome: "APPROVED" | "REVISE" | "BLOCKED" | "HELD"
  /** The completion gate over the counted verdicts (CLEAR = READY_TO_COMPLETE). */
  readonly gate: Gate.Gate
  /** The required criteria whose counted verdict is FAIL. */
  readonly failing: ReadonlyArray<string>
  /** The steps behind the failing criteria, in plan order. */
  readonly stepsToRevise: ReadonlyArray<string>
  /** What the task blocks on, for REVISE and BLOCKED. */
  readonly blocker: Event.Blocker | null
}

/**
 * The verdict per criterion the completion gate counts among `verdicts` (`Gate.countedVerdicts`:
 * the newest taken against the current digest, signed by an approver, by someone who did not work
 * on the run), by criterion.
 *
 * @since 0.1.0
 * @category getters
 */
export const counted = (
  verdicts: ReadonlyArray<Event.AcVerdict>,
  facts: Gate.VerdictFacts
): ReadonlyMap<string, Event.AcVerdict> => new Map(Gate.countedVerdicts(facts, verdicts).map((verdict) => [verdict.acId, verdict]))

/**
 * Concludes over every verdict of the episode (earlier passes included) for the task's current
 * spec.
 *
 * @since 0.1.0
 * @category constructors
 */
export const conclude = (input: {
  readonly taskId: string
  readonly spec: Spec.Spec
  readonly specDigest: string
  readonly episode: EpisodeView.EpisodeView
  readonly verdicts: ReadonlyArray<Event.AcVerdict>
  readonly gateContext: Gate.Context
  /** Whom the project trusts: an unsigned or foreign verdict never counts. */
  readonly authority: Authority.Authority
  /** The approvals the run rests on, checked again as the completion gate does. */
  readonly approvals: Gate.Approvals
}): Conclusion => {
  const required = input.spec.acceptanceCriteria.filter((ac) => ac.required).map((ac) => ac.id)
  const facts: Gate.VerdictFacts = {
    taskId: input.taskId,
    runId: input.episode.runId,
    currentSpecDigest: input.specDigest as Event.AcVerdict["specDigest"],
    workers: input.episode.workers,
    authority: input.authority
  }
  const gate = Gate.completion(input.gateContext, {
    ...facts,
    requiredAcs: required,
    verdicts: input.verdicts,
    openBlockers: 0,
    approvals: input.approvals
  })
  const current = counted(input.verdicts, facts)
  const failing = required.filter((acId) => current.get(acId)?.verdict === "FAIL")
  const id = input.taskId
  if (failing.length > 0) {
    const steps = input.episode.steps.filter((step) => step.acRefs.some((ac) => failing.includes(ac))).map((step) => step.stepId)
    const refs = failing.flatMap((acId) => current.get(acId)?.evidenceRefs ?? [])
    return {
      outcome: "REVISE",
      gate,
      failing,
      stepsToRevise: steps,
      blocker: {
        category: "verification_failed",
        owner: "agent",
        requiredAction: `${failing.join(", ")} failed (see ratchet evidence ${id}). Revise the work${
          steps.length > 0 ? ` of ${steps.join(", ")} (each gets a successor attempt, within the retry budget)` : ""
        }, then: ratchet run ${id}; or change the contract: ratchet reopen ${id} --reason "…".`,
        lastEvidence: refs
      }
    }
  }
  if (Gate.isClear(gate)) return { outcome: "APPROVED", gate, failing: [], stepsToRevise: [], blocker: null }
  // A check that could not conclude, or a PASS with nothing behind it, blocks: something outside
  // the verifier (the environment, the command, a person) must change first.
  const inconclusive = required.filter((acId) => {
    const verdict = current.get(acId)
    return verdict !== undefined && (verdict.verdict === "INDETERMINATE" || verdict.verdict === "NOT_RUN" || verdict.evidenceRefs.length === 0)
  })
  if (inconclusive.length > 0) {
    return {
      outcome: "BLOCKED",
      gate,
      failing: [],
      stepsToRevise: [],
      blocker: {
        category: "missing_evidence",
        owner: "user",
        requiredAction: `${gate.reasons.map((reason) => reason.message).join(" ")} Fix what kept the check from concluding (the command, the environment, the report), then: ratchet unblock ${id} --to VERIFYING --resolution "…" and ratchet verify ${id} --ac ${inconclusive.join(",")}.`,
        lastEvidence: [...current.values()].flatMap((verdict) => verdict.evidenceRefs)
      }
    }
  }
  // Only verdicts are missing (not verified yet, or only by a worker): more verification supplies
  // them, and the task stays VERIFYING.
  return { outcome: "HELD", gate, failing: [], stepsToRevise: [], blocker: null }
}
