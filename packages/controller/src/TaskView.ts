/**
 * What `ratchet status <task>` shows, as a value: the task's state and stage, its revisions and
 * digests, the lease as observed now, open blockers and the actions the lifecycle allows next.
 * Pure: built from the stored task summary and a lease observation, so every transport shows the
 * same thing.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import type * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Owner from "@ratchet/lease/Owner"

/**
 * An action a person (or a host) may take from the task's current state, with its command.
 *
 * @since 0.1.0
 * @category models
 */
export interface Action {
  readonly command: string
  readonly description: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface LeaseView {
  readonly status: "free" | "held" | "expired"
  readonly epoch: number | null
  readonly holder: Event.LeaseOwner | null
  readonly heartbeatAt: number | null
  readonly deadline: number | null
  readonly now: number
  /**
   * How a held lease is taken over should its holder be dead, and from when: the store allows a
   * takeover only strictly after the grace deadline. `null` while the lease is free.
   */
  readonly takeover: Takeover | null
}

/**
 * The one command that takes a held lease over, and the moment it becomes allowed.
 *
 * @since 0.2.0
 * @category models
 */
export interface Takeover {
  readonly command: string
  /** The grace deadline: a takeover is allowed strictly after it (by the store's clock). */
  readonly allowedAfter: number
  /** Whether the deadline had passed when the lease was observed. */
  readonly allowedNow: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface TaskView {
  readonly taskId: string
  readonly projectId: string
  readonly slug: string
  readonly goal: string
  readonly state: Task.State
  readonly stage: Task.Stage
  readonly terminal: boolean
  readonly pausedFrom: "INTERVIEWING" | "RUNNING" | null
  readonly version: number
  readonly lastLsn: number
  /** The branch of the stream the task lives on: `main` until a rewind forks another. */
  readonly branch: string
  readonly revisions: { readonly brief: number; readonly spec: number | null; readonly plan: number | null }
  readonly digests: {
    readonly restatement: string | null
    readonly spec: string | null
    readonly specApproved: string | null
    readonly plan: string | null
    readonly planApproved: string | null
  }
  readonly brief: {
    readonly questions: number
    readonly openBlocking: ReadonlyArray<string>
    readonly restatementApproved: boolean
    readonly closed: boolean
  }
  readonly planStale: boolean
  readonly preflight: Event.PreflightObservation | null
  readonly lease: LeaseView
  readonly blockers: ReadonlyArray<Event.Blocker>
  /** The one next step the lifecycle expects, as a sentence with its command. */
  readonly next: string
  /** Every action the current state allows. */
  readonly actions: ReadonlyArray<Action>
}

/**
 * Said of the commands that arrive with the verifier: the lifecycle names them, this version of the
 * CLI does not have them yet.
 */

/**
 * The actions a state allows, written out by hand from the lifecycle (brief, "Task lifecycle").
 *
 * @since 0.1.0
 * @category constructors
 */
export const actionsOf = (task: Task.Task): ReadonlyArray<Action> => {
  const id = task.taskId
  const pause: Action = { command: `ratchet pause ${id}`, description: "pause the task" }
  const cancel: Action = { command: `ratchet cancel ${id} --reason "…"`, description: "cancel the task (terminal)" }
  const reopen: Action = { command: `ratchet reopen ${id} --reason "…"`, description: "reopen the contract" }
  const reviseSpec: Action = {
    command: `ratchet spec ${id} --file spec.md`,
    description: "revise the spec (a semantic change voids its approval and makes the plan stale)"
  }
  switch (task.state) {
    case "INITIALIZING":
      return [cancel]
    case "INTERVIEWING":
      return [
        { command: `ratchet brief ${id} ask "…" [--blocking]`, description: "ask a question" },
        { command: `ratchet brief ${id} answer <questionId> "…" --source user|code|research`, description: "answer a question" },
        { command: `ratchet brief ${id} restate "…"`, description: "restate the goal in one sentence" },
        { command: `ratchet approve ${id} restatement`, description: "approve the restatement (interactive)" },
        { command: `ratchet brief ${id} close`, description: "close the brief (runs the closure audit)" },
        ...(task.brief.closed ? [{ command: `ratchet spec ${id} --file spec.md`, description: "propose the spec" }] : []),
        pause,
        cancel
      ]
    case "SPEC_READY":
      return [
        { command: `ratchet approve ${id} spec`, description: "approve the spec (interactive)" },
        { command: `ratchet spec ${id} --file spec.md`, description: "revise the spec" },
        cancel
      ]
    case "SPEC_APPROVED":
      return [
        { command: `ratchet preflight ${id}`, description: "inspect the repository read-only" },
        { command: `ratchet spec ${id} --file spec.md`, description: "revise the spec (voids the approval)" },
        cancel
      ]
    case "PREFLIGHT":
      return [
        { command: `ratchet plan ${id} --file plan.yaml`, description: "propose the plan" },
        { command: `ratchet preflight ${id}`, description: "inspect the repository again" },
        reviseSpec,
        reopen,
        cancel
      ]
    case "PLAN_READY":
      return [
        { command: `ratchet approve ${id} plan`, description: "approve the plan (interactive)" },
        { command: `ratchet plan ${id} --file plan.yaml`, description: "revise the plan" },
        reviseSpec,
        cancel
      ]
    case "PLAN_APPROVED":
      return [
        { command: `ratchet run ${id}`, description: "start the run: the runner executes the plan's steps" },
        { command: `ratchet plan ${id} --file plan.yaml`, description: "revise the plan (voids its approval)" },
        reviseSpec,
        cancel
      ]
    case "RUNNING":
      return [
        { command: `ratchet run ${id}`, description: "continue the run (after a manual step: ratchet step done first)" },
        { command: `ratchet step done ${id} <step> --note "…"`, description: "finish a manual step awaiting its worker" },
        pause,
        reopen,
        cancel
      ]
    case "VERIFYING":
      return [
        { command: `ratchet verify ${id}`, description: "verify the acceptance criteria (an identity other than the worker)" },
        { command: `ratchet done ${id}`, description: "complete the task once verification approved it" },
        { command: `ratchet evidence ${id}`, description: "show the verdicts and their evidence" },
        reopen,
        cancel
      ]
    case "REOPENED":
      return [
        { command: `ratchet spec ${id} --file spec.md`, description: "revise the spec" },
        { command: `ratchet resume ${id}`, description: "resume the interview" },
        cancel
      ]
    case "PAUSED":
      return [{ command: `ratchet resume ${id}`, description: `resume (back to ${task.pausedFrom ?? "where it paused"})` }, cancel]
    case "BLOCKED":
      return [
        { command: `ratchet unblock ${id} --to RUNNING|VERIFYING --resolution "…"`, description: "resolve the blocker" },
        { command: `ratchet unblock ${id} --resolve <step> succeeded|failed`, description: "settle a step whose outcome is unknown (interactive)" },
        reopen,
        cancel
      ]
    case "FAILED":
      return [{ command: `ratchet reopen ${id} --reason "…"`, description: "reopen with your confirmation (interactive)" }, cancel]
    case "COMPLETED":
    case "CANCELLED":
      return []
  }
}

/**
 * The view of a task at `version`/`lastLsn` with the lease as observed.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  task: Task.Task,
  position: { readonly version: number; readonly lastLsn: number; readonly branch?: string | undefined },
  lease: LeaseManager.Observation
): TaskView => ({
  taskId: task.taskId,
  projectId: task.projectId,
  slug: task.slug,
  goal: task.goal,
  state: task.state,
  stage: Task.stageOf(task.state),
  terminal: Task.isTerminal(task.state),
  pausedFrom: task.pausedFrom,
  version: position.version,
  lastLsn: position.lastLsn,
  branch: position.branch ?? "main",
  revisions: { brief: task.brief.revision, spec: task.spec?.revision ?? null, plan: task.plan?.revision ?? null },
  digests: {
    restatement: task.brief.restatement?.digest ?? null,
    spec: task.spec?.digest ?? null,
    specApproved: task.spec?.approvedDigest ?? null,
    plan: task.plan?.digest ?? null,
    planApproved: task.plan?.approvedDigest ?? null
  },
  brief: {
    questions: task.brief.questions.length,
    openBlocking: task.brief.questions.filter((q) => q.blocking && q.answer === null).map((q) => q.questionId),
    restatementApproved: task.brief.restatement?.approved ?? false,
    closed: task.brief.closed
  },
  planStale: task.plan?.stale ?? false,
  preflight: task.preflight?.observation ?? null,
  lease: {
    status: lease.status,
    epoch: lease.epoch,
    holder: lease.holder,
    heartbeatAt: lease.heartbeatAt,
    deadline: lease.deadline,
    now: lease.now,
    takeover: lease.status === "free" || lease.deadline === null
      ? null
      : { command: Owner.takeoverCommand(task.taskId, lease.holder), allowedAfter: lease.deadline, allowedNow: lease.status === "expired" }
  },
  blockers: task.blockers,
  next: nextOf(task, lease),
  actions: actionsOf(task)
})

/** A moment for people: UTC, to the second. */
const instant = (at: number): string => new Date(at).toISOString().replace(/\.\d{3}Z$/, "Z")

/**
 * The kernel's next step, except where the controller knows more: after a preflight that found a
 * wrong assumption, proposing a plan would only HOLD, so the next step is to reopen the contract;
 * and while a runner holds the task's lease, no other command moves the task: the next step is to
 * wait for that runner or, if it died, to take its lease over once its grace has ended (whatever
 * state it left the task in, ADR 0022).
 */
const nextOf = (task: Task.Task, lease: LeaseManager.Observation): string => {
  if (!Task.isTerminal(task.state) && lease.status !== "free" && lease.holder?.host === "runner" && lease.deadline !== null) {
    const command = Owner.takeoverCommand(task.taskId, lease.holder)
    return lease.status === "expired"
      ? `The runner holding the lease (pid ${lease.holder.pid}, epoch ${lease.epoch}) stopped heartbeating; its grace ended at ${
        instant(lease.deadline)
      }. Take its lease over and continue: ${command}`
      : `A runner holds the lease (pid ${lease.holder.pid}, epoch ${lease.epoch}); wait for it to stop (ratchet status ${task.taskId}). ` +
        `If it died, its grace ends at ${instant(lease.deadline)}; after that, take its lease over and continue: ${command}`
  }
  const observed = task.preflight
  if (
    task.state === "PREFLIGHT" && observed !== null && task.spec !== null && observed.specDigest === task.spec.digest &&
    (observed.observation.missingPaths.length > 0 || observed.observation.invalidScopes.length > 0)
  ) {
    return `The preflight found a wrong assumption (${
      [...observed.observation.missingPaths.map((p) => `missing ${p}`), ...observed.observation.invalidScopes].join("; ")
    }): reopen the contract: ratchet reopen ${task.taskId} --reason "…"`
  }
  if (task.state === "VERIFYING") return `${Task.nextStep(task)}, then complete it: ratchet done ${task.taskId}`
  return Task.nextStep(task)
}
