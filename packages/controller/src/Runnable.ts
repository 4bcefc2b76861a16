/**
 * Whether a task can be handed to a runner now: PLAN_APPROVED (its run starts) or RUNNING (its run
 * continues); or, with `--takeover`, any task that is not terminal whose lease is held: a runner
 * that died after leaving the task VERIFYING, BLOCKED or PAUSED but before releasing its lease is
 * taken over by the run, which releases the lease and names the next step (ADR 0022).
 *
 * A transport that starts a runner in the background (`ratchet run --detach`, the MCP server's
 * `run_start`) checks it first, so a refusal reaches the caller rather than a detached runner's log
 * where nobody would read it. The runner still passes the run-start gate itself.
 *
 * A plan with an agent step whose host the runner has no stream reader for is refused before the
 * run takes the lease (`unsupportedStep`, ADR 0039): an agent step must never be skipped silently,
 * mistaken for a manual step that waits for a person, or run with a stream nobody can read.
 *
 * @since 0.2.0
 */
import type * as AgentStep from "@ratchet/kernel/AgentStep"
import type * as Plan from "@ratchet/kernel/Plan"
import * as Task from "@ratchet/kernel/Task"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Effect from "effect/Effect"
import { Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as TaskBranch from "./TaskBranch.js"
import type * as TaskView from "./TaskView.js"

/**
 * The task's view when a runner may take it, else the kernel's refusal naming its state and what
 * to do instead.
 *
 * @since 0.2.0
 * @category guards
 */
export const check = (view: TaskView.TaskView, takeover = false): Effect.Effect<TaskView.TaskView, Task.Refused> =>
  Effect.as(admit(view.state, view.terminal, takeover, view.lease.status, view.next, view.lease.holder?.host), view)

/**
 * Whether a run may start on a task in `state` whose lease is `lease` (see the module comment), else
 * the kernel's refusal with `action`: the rule the runner applies, and each transport checks before
 * it starts one in the background.
 *
 * @since 0.2.0
 * @category guards
 */
export const admit = (
  state: Task.State,
  terminal: boolean,
  takeover: boolean,
  lease: "free" | "held" | "expired",
  action: string,
  holderHost?: string | undefined
): Effect.Effect<void, Task.Refused> =>
  state === "PLAN_APPROVED" || state === "RUNNING" || (takeover && !terminal && lease !== "free" && holderHost === "runner")
    ? Effect.void
    : Effect.fail(
      new Task.Refused({
        code: terminal ? "terminal_state" : state === "PAUSED" ? "task_paused" : "forbidden_transition",
        command: "Run",
        state,
        reason: takeover && !terminal
          ? lease === "free"
            ? `a run executes a task that is PLAN_APPROVED or RUNNING, or takes over the lease a dead runner left held; this one is ${state} and its lease is free: there is nothing to take over.`
            : `a run executes a task that is PLAN_APPROVED or RUNNING, or takes over the lease a dead runner left held; this one is ${state} and its lease is held by ${
              holderHost === undefined ? "an unknown holder" : `a ${holderHost} session`
            }, not a runner: a run does not take it. Wait for that holder, or take its lease over as a person would (ratchet lease takeover).`
          : `a run executes a task that is PLAN_APPROVED or RUNNING; this one is ${state}.`,
        action
      })
    )

/**
 * What a run that took over a task it cannot run (VERIFYING, BLOCKED, PAUSED, …) reports: why it
 * stopped and the task's own next step. Its lease is released as the run ends.
 *
 * @since 0.2.0
 * @category constructors
 */
export const handedOn = (task: Task.Task, epoch: number): { readonly stop: "verifying" | "blocked" | "paused" | "handed_over"; readonly message: string } => ({
  stop: task.state === "VERIFYING" ? "verifying" : task.state === "BLOCKED" ? "blocked" : task.state === "PAUSED" ? "paused" : "handed_over",
  message: `Took over the lease a dead runner left held on this ${task.state} task (epoch ${epoch}) and released it; nothing was run. Next: ${
    task.state === "VERIFYING"
      ? `${Task.nextStep(task)}, then complete it: ratchet done ${task.taskId}`
      : task.blockers.at(-1)?.requiredAction ?? Task.nextStep(task)
  }`
})

/**
 * Whether `error` means "another runner holds this task" (skip it and try the next one).
 *
 * @since 0.2.0
 * @category predicates
 */
export const isBusy = (error: { readonly _tag: string }): boolean =>
  error._tag === "@ratchet/lease/LeaseHeld" || error._tag === "@ratchet/lease/TakeoverTooEarly" ||
  error._tag === "@ratchet/lease/LeaseContention" || error._tag === "@ratchet/lease/LeaseLost" ||
  error._tag === "@ratchet/storage/StaleEpoch" || error._tag === "@ratchet/storage/VersionConflict"

/**
 * The refusal of the first step of `plan` that a runner reading the streams of `hosts` cannot
 * run, or null when it can run them all (see {@link agentStepRefused}).
 *
 * @since 0.4.0
 * @category guards
 */
export const unsupportedStep = (taskId: string, plan: Plan.Plan | null, hosts: ReadonlyArray<AgentStep.Host>): ControllerError.InvalidRequest | null => {
  const index = plan?.steps.findIndex((step) => step.agent !== undefined && !hosts.includes(step.agent.host)) ?? -1
  const step = index < 0 ? undefined : plan?.steps[index]
  return step === undefined ? null : agentStepRefused(taskId, step, index)
}

/**
 * The refusal of agent step `step` (at `index` in its plan): the runner has no reader for its
 * host's stream (ADR 0039), so nothing is run and nothing is written, and the task stays where it
 * is.
 *
 * @since 0.4.0
 * @category guards
 */
export const agentStepRefused = (taskId: string, step: Plan.Step, index: number): ControllerError.InvalidRequest =>
  new ControllerError.InvalidRequest({
    field: `plan.steps[${index}].agent (step "${step.id}")`,
    reason: `step "${step.id}" of task ${taskId} is an agent step (host ${
      step.agent?.host ?? "unknown"
    }), and this runner has no reader for that host's stream, so it cannot start it; nothing was run.`,
    fix:
      `Run the task with the ratchet-runner that ships with the ratchet CLI (it reads the claude-code and codex streams), or make the step manual or a command: ratchet reopen ${taskId} --reason "agent step not runnable here", then propose and approve the changed plan.`
  })

/**
 * The project's tasks a runner could take now: PLAN_APPROVED or RUNNING, with a lease that is free
 * (or expired, when `takeoverExpired`), oldest first; how many runnable tasks a live runner holds
 * (worth waiting for when taking over expired leases); and in how many milliseconds the first of
 * those leases passes its grace deadline by the store's clock (null when none is held), so a
 * runner waiting to take expired leases over wakes then rather than polling (ADR 0042).
 *
 * @since 0.4.0 (was `Runner.runnable`)
 * @category constructors
 */
export const ready = (takeoverExpired: boolean) =>
  Effect.gen(function*() {
    const project = yield* Project
    const leases = yield* LeaseManager.LeaseManager
    const summaries = yield* TaskBranch.summaries(project.project.projectId)
    const ready: Array<{ readonly taskId: string; readonly takeover: boolean }> = []
    let held = 0
    let expiresInMs: number | null = null
    for (const summary of [...summaries].reverse()) {
      const state = summary.task.state
      if (state !== "PLAN_APPROVED" && state !== "RUNNING") continue
      const observed = yield* leases.observe({ projectId: project.project.projectId, taskId: summary.streamId })
      if (observed.status === "free") ready.push({ taskId: summary.streamId, takeover: false })
      else if (observed.status === "expired" && takeoverExpired) ready.push({ taskId: summary.streamId, takeover: true })
      else if (observed.holder?.host === "runner") {
        held += 1
        // A takeover is allowed strictly after the deadline: wake one millisecond past it.
        const left = observed.deadline === null ? null : Math.max(0, observed.deadline - observed.now + 1)
        if (left !== null && (expiresInMs === null || left < expiresInMs)) expiresInMs = left
      }
    }
    return { ready, held, expiresInMs }
  })
