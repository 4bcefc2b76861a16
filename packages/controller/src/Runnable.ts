/**
 * Whether a task can be handed to a runner now: PLAN_APPROVED (its run starts) or RUNNING (its run
 * continues). A transport that starts a runner in the background (`ratchet run --detach`, the MCP
 * server's `run_start`) checks it first, so a refusal reaches the caller rather than a detached
 * runner's log where nobody would read it. The runner still passes the run-start gate itself.
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
export const check = (view: TaskView.TaskView): Effect.Effect<TaskView.TaskView, Task.Refused> =>
  view.state === "PLAN_APPROVED" || view.state === "RUNNING"
    ? Effect.succeed(view)
    : Effect.fail(
      new Task.Refused({
        code: view.terminal ? "terminal_state" : view.state === "PAUSED" ? "task_paused" : "forbidden_transition",
        command: "Run",
        state: view.state,
        reason: `a run executes a task that is PLAN_APPROVED or RUNNING; this one is ${view.state}.`,
        action: view.next
      })
    )
