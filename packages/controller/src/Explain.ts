/**
 * `ratchet gate <task> [--to STATE]`: the gate of one transition, evaluated now and written
 * nowhere. It answers "what stands between this task and that state, and what do I do about it"
 * with the kernel's own gate functions, given the facts the controller observed (the lease, the
 * steps still without a terminal attempt, the episode's verdicts, the project's approvers).
 * Approvals are evaluated without a receipt: the explanation of an approval gate is that it needs
 * yours.
 *
 * @since 0.1.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import type * as Event from "@ratchet/kernel/Event"
import * as Gate from "@ratchet/kernel/Gate"
import * as Task from "@ratchet/kernel/Task"

/**
 * What the controller observed for the explanation.
 *
 * @since 0.1.0
 * @category models
 */
export interface Facts {
  readonly now: number
  readonly leaseHeld: boolean
  readonly pendingSteps: ReadonlyArray<string>
  /** For an unblock: whether the code changed since the blocker (read as the `unblock` command reads it). */
  readonly codeChanged?: boolean | undefined
  /** Whom the project trusts: the receipts and verdicts the gates count are signed by them. */
  readonly authority: Authority.Authority
  /** For a completion: the current episode's verdicts and workers, as `ratchet done` decides on them. */
  readonly episode?: {
    readonly runId: string
    readonly verdicts: ReadonlyArray<Event.AcVerdict>
    readonly workers: ReadonlyArray<Event.Actor>
  } | undefined
}

/**
 * The explanation: the gate when one guards the transition, otherwise whether the lifecycle allows
 * it at all and why.
 *
 * @since 0.1.0
 * @category models
 */
export interface Explanation {
  readonly taskId: string
  readonly from: Task.State
  readonly to: Task.State
  /** `CLEAR`/`HOLD` from the gate; `ALLOWED` for an ungated edge; `FORBIDDEN` for no edge. */
  readonly decision: "CLEAR" | "HOLD" | "ALLOWED" | "FORBIDDEN"
  readonly gate: Gate.Gate | null
  readonly explanation: string
}

/** The state a task is heading for when nobody names one: the forward path, or the way back. */
const defaultTarget = (task: Task.Task): Task.State => {
  switch (task.state) {
    case "INITIALIZING":
      return "INTERVIEWING"
    case "INTERVIEWING":
      return "SPEC_READY"
    case "SPEC_READY":
      return "SPEC_APPROVED"
    case "SPEC_APPROVED":
      return "PREFLIGHT"
    case "PREFLIGHT":
      return "PLAN_READY"
    case "PLAN_READY":
      return "PLAN_APPROVED"
    case "PLAN_APPROVED":
      return "RUNNING"
    case "RUNNING":
      return "VERIFYING"
    case "VERIFYING":
      return "COMPLETED"
    case "REOPENED":
      return "SPEC_READY"
    case "PAUSED":
      return task.pausedFrom ?? "INTERVIEWING"
    case "BLOCKED":
      return "RUNNING"
    case "FAILED":
      return "REOPENED"
    case "COMPLETED":
    case "CANCELLED":
      return task.state
  }
}

/** The gate guarding `from → to`, when the kernel has one for it. */
const gateOf = (task: Task.Task, to: Task.State, facts: Facts): Gate.Gate | null => {
  const context: Gate.Context = {
    taskId: task.taskId,
    from: task.state,
    evaluatedAt: facts.now,
    boundTo: { taskVersion: task.version, specDigest: task.spec?.digest ?? null, planDigest: task.plan?.digest ?? null }
  }
  const edge = `${task.state}->${to}`
  switch (edge) {
    case "INITIALIZING->INTERVIEWING":
      return Gate.setup(context, { projectInitialized: true, storeWritable: true })
    case "INTERVIEWING->SPEC_READY":
      // Until the brief is closed, what stands in the way is its closure audit.
      return task.brief.closed
        ? Gate.specProposal(context, { briefClosed: true })
        : Gate.briefClosure(context, {
          questions: task.brief.questions.map((q) => ({
            questionId: q.questionId,
            text: q.text,
            blocking: q.blocking,
            answered: q.answer !== null
          })),
          restatement: task.brief.restatement
        })
    case "SPEC_READY->SPEC_APPROVED":
      return task.spec === null
        ? null
        : Gate.specApproval(context, { specDigest: task.spec.digest, revision: task.spec.revision, receipt: null, authority: facts.authority })
    case "PREFLIGHT->PLAN_READY":
      return task.spec === null ? null : Gate.planProposal(context, {
        currentSpecDigest: task.spec.digest,
        preflight: task.preflight === null ? null : {
          specDigest: task.preflight.specDigest,
          missingPaths: task.preflight.observation.missingPaths,
          invalidScopes: task.preflight.observation.invalidScopes
        },
        planSpecDigest: task.spec.digest
      })
    case "PLAN_READY->PLAN_APPROVED":
      return task.plan === null
        ? null
        : Gate.planApproval(context, {
          planDigest: task.plan.digest,
          revision: task.plan.revision,
          stale: task.plan.stale,
          receipt: null,
          authority: facts.authority
        })
    case "PLAN_APPROVED->RUNNING":
      return task.spec === null || task.plan === null ? null : Gate.runStart(context, {
        currentSpecDigest: task.spec.digest,
        approvedSpecDigest: task.spec.approvedDigest,
        currentPlanDigest: task.plan.digest,
        approvedPlanDigest: task.plan.approvedDigest,
        planStale: task.plan.stale,
        requestedSpecDigest: task.spec.digest,
        requestedPlanDigest: task.plan.digest,
        allowedScope: task.spec.spec.execution?.allowedScope ?? [],
        leaseHeld: facts.leaseHeld,
        approvals: Task.approvals(task)!,
        authority: facts.authority
      })
    case "RUNNING->VERIFYING":
      return Gate.verificationEntry(context, { pendingSteps: facts.pendingSteps })
    case "VERIFYING->COMPLETED":
      return task.spec === null || task.plan === null ? null : Gate.completion(context, {
        taskId: task.taskId,
        runId: facts.episode?.runId ?? task.run?.runId ?? "",
        currentSpecDigest: task.spec.digest,
        requiredAcs: task.spec.spec.acceptanceCriteria.filter((ac) => ac.required).map((ac) => ac.id),
        verdicts: facts.episode?.verdicts ?? [],
        workers: facts.episode?.workers ?? [],
        openBlockers: task.blockers.length,
        approvals: Task.approvals(task)!,
        authority: facts.authority
      })
    case "BLOCKED->RUNNING":
    case "BLOCKED->VERIFYING":
      return Gate.unblock(context, {
        to: to as "RUNNING" | "VERIFYING",
        blockers: task.blockers,
        codeChanged: facts.codeChanged ?? false,
        pendingSteps: facts.pendingSteps,
        receipt: null,
        authority: facts.authority
      })
    case "FAILED->REOPENED":
      return task.spec === null ? null : Gate.reopenFromFailed(context, { specDigest: task.spec.digest, receipt: null, authority: facts.authority })
    default:
      return null
  }
}

/**
 * Explains the transition from the task's state to `to` (its next state on the lifecycle when
 * omitted).
 *
 * @since 0.1.0
 * @category constructors
 */
export const explain = (task: Task.Task, to: Task.State | undefined, facts: Facts): Explanation => {
  const target = to ?? defaultTarget(task)
  const base = { taskId: task.taskId, from: task.state, to: target }
  if (Task.isTerminal(task.state)) {
    return {
      ...base,
      decision: "FORBIDDEN",
      gate: null,
      explanation: `${task.state} is terminal: no transition leaves it. ${Task.nextStep(task)}`
    }
  }
  if (!Task.isEdge(task.state, target)) {
    return {
      ...base,
      decision: "FORBIDDEN",
      gate: null,
      explanation: `The lifecycle has no transition ${task.state} → ${target}. ${Task.nextStep(task)}`
    }
  }
  const gate = gateOf(task, target, facts)
  if (gate === null) {
    return {
      ...base,
      decision: "ALLOWED",
      gate: null,
      explanation: `No gate guards ${task.state} → ${target}; the command that makes it decides. ${Task.nextStep(task)}`
    }
  }
  return {
    ...base,
    decision: gate.decision,
    gate,
    explanation: Gate.isClear(gate)
      ? `The gate for ${task.state} → ${target} is CLEAR. ${Task.nextStep(task)}`
      : `The gate for ${task.state} → ${target} holds: ${gate.reasons.map((reason) => reason.message).join(" ")}`
  }
}

/**
 * `explained` held by `gate` instead: a HOLD the controller found beyond the kernel's gate (the
 * evidence under a completion's verdicts is stale or unreadable), explained as the action would
 * refuse on it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const held = (explained: Explanation, gate: Gate.Gate): Explanation => ({
  ...explained,
  decision: gate.decision,
  gate,
  explanation: `The gate for ${explained.from} → ${explained.to} holds: ${gate.reasons.map((reason) => reason.message).join(" ")}`
})
