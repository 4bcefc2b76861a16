/**
 * What a host hook needs to know about the workspace it runs in, read once per hook: which task
 * the agent's tool calls are held to, its state and scope, who holds its writer lease, which manual
 * step awaits its worker, and which required criteria are not verified yet. Reads only.
 *
 * Which task: the one `RATCHET_TASK` names (the caller passes it); otherwise the project's only
 * task that has not ended; otherwise, among several, the only one with a run in progress (RUNNING,
 * VERIFYING, PAUSED from RUNNING or BLOCKED). More than one candidate left is ambiguous: the guard
 * then refuses writes and says to set `RATCHET_TASK`, rather than guess which contract applies.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as Task from "@ratchet/kernel/Task"
import * as Turn from "@ratchet/kernel/Turn"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"
import { Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as Episode from "./Episode.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as Progress from "@ratchet/kernel/Progress"
import * as TaskBranch from "./TaskBranch.js"

/**
 * The task a hook judges by.
 *
 * @since 0.1.0
 * @category models
 */
export interface HostTask {
  readonly taskId: string
  readonly state: Event.TaskState
  readonly allowedScope: ReadonlyArray<string>
  readonly forbiddenScope: ReadonlyArray<string>
  /** The writer lease's holder while it is held (not free, not expired), else null. */
  readonly leaseHolder: Event.LeaseOwner | null
  /** The lease's owner while it is held or expired (not yet taken over or released), else null. */
  readonly leaseOwner: Event.LeaseOwner | null
  /** That owner's epoch (with `leaseOwner`), else null. */
  readonly leaseEpoch: number | null
  /**
   * The lease's state as the lease manager sees it: `free` (never taken or released), `held`, or
   * `expired` (its holder stopped heartbeating; a takeover ends it).
   */
  readonly leaseStatus: "free" | "held" | "expired"
  /**
   * The manual step awaiting its worker while the task is RUNNING, with its open attempt and that
   * attempt's turn region (what its worker's host reported), else null.
   */
  readonly awaiting: { readonly stepId: string; readonly attempt: number; readonly turn: Turn.State } | null
  /** Required criteria without a counted PASS in the current verification episode (all of them before one). */
  readonly unverified: ReadonlyArray<string>
}

/**
 * The outcome of choosing the task.
 *
 * @since 0.1.0
 * @category models
 */
export type Selection =
  | { readonly _tag: "None" }
  | { readonly _tag: "One"; readonly task: HostTask }
  | { readonly _tag: "Ambiguous"; readonly candidates: ReadonlyArray<{ readonly taskId: string; readonly state: Event.TaskState }> }

const ended = new Set<Event.TaskState>(["COMPLETED", "CANCELLED", "FAILED"])

const runInProgress = (task: Task.Task): boolean =>
  task.state === "RUNNING" || task.state === "VERIFYING" || task.state === "BLOCKED" || (task.state === "PAUSED" && task.pausedFrom === "RUNNING")

/** The required criteria no independent PASS covers yet. */
const unverifiedOf = (task: Task.Task, branch: string, root: string) =>
  Effect.gen(function*() {
    const spec = task.spec
    if (spec === null) return []
    const required = spec.spec.acceptanceCriteria.filter((ac) => ac.required).map((ac) => ac.id)
    if (task.state !== "VERIFYING") return required
    const episode = yield* Episode.current(task, branch).pipe(Effect.option)
    if (episode._tag === "None") return required
    const counted = Episode.counted(task, episode.value, yield* ProjectApprovers.counting(task.projectId, root))
    return required.filter((id) => counted.get(id)?.verdict !== "PASS")
  })

/** The manual step awaiting its worker (the next step, manual, its attempt open), or null. */
const awaitingOf = (task: Task.Task, branch: string) =>
  Effect.gen(function*() {
    if (task.state !== "RUNNING" || task.plan === null || task.run === null) return null
    // The run's frontier, read by index: a hook runs on every tool call, and the branch's every
    // attempt and intent grow with the task's history (issue 19).
    const frontier = yield* (yield* ReadModel.ReadModels).runFrontier(task.taskId, task.run.runId, branch)
    const attempts = [...frontier.attempts.values()]
    const intents = [...frontier.intents.values()]
    const awaiting = Progress.awaitingWorker(task.plan.plan, attempts, intents)
    if (awaiting === null) return null
    const row = attempts.find((candidate) => candidate.stepId === awaiting.step.id && candidate.attempt === awaiting.attempt)
    return { stepId: awaiting.step.id, attempt: awaiting.attempt, turn: row?.turn ?? Turn.initial }
  })

const describe = (task: Task.Task, branch: string) =>
  Effect.gen(function*() {
    const leases = yield* LeaseManager.LeaseManager
    const project = yield* Project
    const lease = yield* leases.observe({ projectId: project.project.projectId, taskId: task.taskId })
    const execution = task.spec?.spec.execution
    return {
      taskId: task.taskId,
      state: task.state,
      allowedScope: execution?.allowedScope ?? [],
      forbiddenScope: execution?.forbiddenScope ?? [],
      leaseHolder: lease.status === "held" ? lease.holder : null,
      leaseOwner: lease.status === "free" ? null : lease.holder,
      leaseEpoch: lease.status === "free" ? null : lease.epoch,
      leaseStatus: lease.status === "held" ? "held" : lease.status === "expired" ? "expired" : "free",
      awaiting: yield* awaitingOf(task, branch),
      unverified: yield* unverifiedOf(task, branch, project.root)
    } satisfies HostTask
  })

/**
 * Chooses the task of this workspace (see the module comment) and describes it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const select = (preferred: string | null) =>
  Effect.gen(function*() {
    const project = yield* Project
    const projectId = project.project.projectId
    if (preferred !== null) {
      const models = yield* ReadModel.ReadModels
      const branch = yield* TaskBranch.of(preferred)
      const summary = yield* models.taskSummary(preferred, branch)
      if (summary === null || summary.projectId !== projectId) return yield* new ControllerError.TaskNotFound({ taskId: preferred, projectId })
      return { _tag: "One", task: yield* describe(summary.task, summary.branch) } as Selection
    }
    const open = (yield* TaskBranch.summaries(projectId)).filter((summary) => !ended.has(summary.task.state))
    const chosen = open.length === 1 ? open : open.filter((summary) => runInProgress(summary.task))
    if (open.length === 0) return { _tag: "None" } as Selection
    if (chosen.length === 1) return { _tag: "One", task: yield* describe(chosen[0]!.task, chosen[0]!.branch) } as Selection
    return { _tag: "Ambiguous", candidates: (chosen.length === 0 ? open : chosen).map((summary) => ({ taskId: summary.task.taskId, state: summary.task.state })) } as Selection
  })
