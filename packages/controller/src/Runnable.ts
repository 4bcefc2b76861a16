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
 * @since 0.2.0
 */
import * as Task from "@ratchet/kernel/Task"
import * as Effect from "effect/Effect"
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
