/**
 * Reads of one task that the `Controller` service's views do not carry, for a transport that
 * answers an agent (the MCP server's `task_log`, `run_check` and spec and plan resources): a page
 * of the log after a position, the run's steps with their attempts, and the spec or plan rendered
 * as its projection file shows it. Each reads the stored read models and the log of the task's
 * branch, refuses another project's task like the controller's own reads, and writes nothing; a
 * transport calls them rather than reaching into the store itself.
 *
 * @since 0.2.0
 */
import * as AgentStep from "@ratchet/kernel/AgentStep"
import * as Plan from "@ratchet/kernel/Plan"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Controller, Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as Projection from "./Projection.js"
import * as Runnable from "./Runnable.js"
import * as RunReport from "./RunReport.js"
import type * as TaskView from "./TaskView.js"
import * as TaskBranch from "./TaskBranch.js"

/**
 * The task aggregate `taskId` of this project with the branch it lives on, or `TaskNotFound`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const taskOf = (taskId: string) =>
  Effect.gen(function*() {
    const project = yield* Project
    const projectId = project.project.projectId
    // The controller's status validates the id and names a malformed one as such.
    yield* Effect.flatMap(Controller, (c) => c.status(taskId))
    const models = yield* ReadModel.ReadModels
    const branch = yield* TaskBranch.of(taskId)
    const summary = yield* models.taskSummary(taskId, branch)
    if (summary === null || summary.projectId !== projectId) return yield* new ControllerError.TaskNotFound({ taskId, projectId })
    return { task: summary.task, branch }
  })

/**
 * Refuses a task whose plan has an agent step of a host the runner it would start cannot read
 * (`hosts`: by default both, which the bundled `ratchet-runner` reads, ADR 0039), as
 * `Runnable.unsupportedStep` names it; succeeds otherwise, also when the task has no plan yet. A
 * transport that starts a runner in the background checks it first, with `Runnable.check`, so
 * the refusal reaches its caller rather than the detached runner's log.
 *
 * @since 0.4.0
 * @category guards
 */
export const runnableSteps = (taskId: string, hosts: ReadonlyArray<AgentStep.Host> = AgentStep.hosts) =>
  Effect.flatMap(taskOf(taskId), ({ task }) => {
    const refused = Runnable.unsupportedStep(taskId, task.plan?.plan ?? null, hosts)
    return refused === null ? Effect.void : Effect.fail(refused)
  })

/**
 * A page of a task's log: the events after `afterLsn`, at most `limit` of them, on `branch` (the
 * task's current one by default), whether more follow, and where the next page starts.
 *
 * @since 0.2.0
 * @category models
 */
export interface LogPage {
  readonly taskId: string
  readonly branch: string
  readonly events: ReadonlyArray<EventStore.StoredEvent>
  readonly more: boolean
  readonly nextAfterLsn: number | null
}

/**
 * Reads one {@link LogPage}; a branch the task does not have is an invalid request naming them.
 *
 * @since 0.2.0
 * @category constructors
 */
export const logPage = (taskId: string, options: { readonly afterLsn?: number | undefined; readonly limit: number; readonly branch?: string | undefined }) =>
  Effect.gen(function*() {
    const c = yield* Controller
    const listed = yield* c.branches(taskId)
    const { afterLsn, branch, limit } = options
    if (branch !== undefined && !listed.branches.some((b) => b.branch === branch)) {
      return yield* new ControllerError.InvalidRequest({
        field: "branch",
        reason: `task ${taskId} has no branch ${JSON.stringify(branch.slice(0, 80))} (it has ${listed.branches.map((b) => b.branch).join(", ") || "main"}).`,
        fix: "Leave branch out for the task's current branch, or name one it has."
      })
    }
    const store = yield* EventStore.EventStore
    const read = store.read({ streamId: taskId, branch: branch ?? listed.current, fromLsn: (afterLsn ?? 0) + 1 })
    // One past the page tells whether there is more, without reading further.
    const page = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(read, limit + 1)))
    const events = page.slice(0, limit)
    return {
      taskId,
      branch: branch ?? listed.current,
      events,
      more: page.length > limit,
      nextAfterLsn: events.at(-1)?.lsn ?? afterLsn ?? null
    } satisfies LogPage
  })

/**
 * One step of the run as an agent checks it: its status (the state of its newest attempt) and
 * every attempt with how it ended.
 *
 * @since 0.2.0
 * @category models
 */
export interface StepCheck {
  readonly stepId: string
  readonly title: string
  readonly kind: Plan.StepKind
  readonly status: string
  readonly attempts: ReadonlyArray<{
    readonly attempt: number
    readonly state: string
    readonly exitCode: number | null
    readonly signal: string | null
    readonly timedOut: boolean
    readonly durationMs: number | null
    readonly changedPaths: ReadonlyArray<string>
    readonly outputTail: string | null
    readonly notes: ReadonlyArray<string>
  }>
}

/**
 * Where a task's run stands: its status view and, once a run has started, the run's digests, lease
 * epoch and each step of the plan with its attempts.
 *
 * @since 0.2.0
 * @category models
 */
export interface RunCheck {
  readonly task: TaskView.TaskView
  readonly run: {
    readonly runId: string
    readonly specDigest: string
    readonly planDigest: string
    readonly leaseEpoch: number
    readonly steps: ReadonlyArray<StepCheck>
  } | null
}

/**
 * Reads the {@link RunCheck} of `taskId`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const runCheck = (taskId: string) =>
  Effect.gen(function*() {
    const c = yield* Controller
    const view = yield* c.status(taskId)
    const { branch, task } = yield* taskOf(taskId)
    if (task.run === null || task.plan === null) return { task: view, run: null } satisfies RunCheck
    const run = task.run
    const attempts = RunReport.attemptsOf(yield* RunReport.runEvents(taskId, run.runId, branch), run.runId)
    const steps = task.plan.plan.steps.map((step): StepCheck => {
      const own = attempts.filter((line) => line.stepId === step.id)
      return {
        stepId: step.id,
        title: step.title,
        kind: Plan.kindOf(step),
        status: own.at(-1)?.state ?? "not started",
        attempts: own.map((line) => ({
          attempt: line.attempt,
          state: line.state,
          exitCode: line.exit?.exitCode ?? null,
          signal: line.exit?.signal ?? null,
          timedOut: line.exit?.timedOut ?? false,
          durationMs: line.exit?.durationMs ?? null,
          changedPaths: line.exit?.changedPaths ?? [],
          outputTail: line.exit?.outputTail ?? null,
          notes: line.notes
        }))
      }
    })
    return {
      task: view,
      run: { runId: run.runId, specDigest: run.specDigest, planDigest: run.planDigest, leaseEpoch: run.leaseEpoch, steps }
    } satisfies RunCheck
  })

/**
 * The task's spec or plan as its projection file (`spec.md`, `plan.md`) renders it from the
 * store; a task without one yet is an invalid request whose fix is the task's next step.
 *
 * @since 0.2.0
 * @category constructors
 */
export const rendered = (taskId: string, part: "spec" | "plan") =>
  Effect.gen(function*() {
    const { task } = yield* taskOf(taskId)
    const text = Projection.render(task)[part === "spec" ? "spec.md" : "plan.md"]
    if (text === null) {
      const view = yield* Effect.flatMap(Controller, (c) => c.status(taskId))
      return yield* new ControllerError.InvalidRequest({ field: "uri", reason: `task ${taskId} has no ${part} yet.`, fix: view.next })
    }
    return text
  })
