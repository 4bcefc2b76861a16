/**
 * The lessons an agent is given for its task (issue 21, ADR 0038): the read behind the hooks'
 * additional context and MCP's `lessons_query`, and the record of what was shown.
 *
 * The query (`Lessons.query`) is asked about the task's project, its allowed scope (the paths a
 * run of it may touch, standing for the paths it will), no task type (a spec names none yet) and
 * its text (goal and acceptance criteria, for the full-text rank): at most three verified or
 * enforced lessons whose scope covers the task, each summary at most 400 characters.
 *
 * Only a task in RUNNING with a run is given lessons to act on, and they are recorded as shown to
 * that run (`Lessons.recordShown`, on each lesson's own stream: the hook and the MCP server do not
 * hold the task's writer lease, so they cannot append to the task) **before** they are returned: a
 * read that cannot record them fails, so a lesson is never in front of a run without the record
 * that makes the run's later success assisted. A lesson is recorded once per run (the first read
 * that shows it; later reads find it in `Lessons.shownTo` and write nothing). Outside RUNNING the
 * same lessons can be read (`record: false`, or any other state) and nothing is written.
 *
 * {@link render} turns them into the text a host adds to the agent's context: one line each, the
 * whitespace of a summary folded, within {@link budget} characters (about 512 tokens).
 *
 * @since 0.4.0
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as Task from "@ratchet/kernel/Task"
import * as Lessons from "@ratchet/memory/Lessons"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as TaskBranch from "./TaskBranch.js"

/**
 * The most characters {@link render} writes: about 512 tokens at four characters a token.
 *
 * @since 0.4.0
 * @category models
 */
export const budget = 2048

/**
 * How the lessons reach the agent: a host's hook, the agent's own MCP call, `ratchet lessons
 * query` (an agent's shell or a person who may pass them on: either way the run may be helped), or
 * the runner's envelope of an agent step's attempt (`AgentLessons`).
 *
 * @since 0.4.0
 * @category models
 */
export type Via = "hook" | "mcp" | "cli" | "runner"

/**
 * What a read is asked: the task, how it is shown, whether it is recorded as shown (only in
 * RUNNING with a run), and the step whose worker the session is, when one awaits it.
 *
 * @since 0.4.0
 * @category models
 */
export interface Request {
  readonly taskId: string
  readonly via: Via
  readonly record: boolean
  readonly step?: { readonly stepId: string; readonly attempt: number } | null | undefined
}

/**
 * The lessons for a task, and whether they were recorded as shown to its run.
 *
 * @since 0.4.0
 * @category models
 */
export interface Result {
  readonly taskId: string
  readonly state: Event.TaskState
  readonly runId: string | null
  readonly lessons: ReadonlyArray<Lessons.Applicable>
  /** Whether `lessons` are all recorded as shown to `runId` (`Lessons.recordShown`). */
  readonly recorded: boolean
  /** The lessons this read recorded as shown: those no earlier read had shown to the run. */
  readonly fresh: ReadonlyArray<string>
}

/**
 * Who records a showing: Ratchet itself (an observer), never the agent it shows them to.
 *
 * @since 0.4.0
 * @category models
 */
export const recorder = (via: Via): Event.Actor => ({ kind: "system", id: `lessons-${via}` })

/** The query a task asks: its project, its allowed scope, its goal and criteria. */
/**
 * What task `task` asks the lessons store: its project's lessons whose scope covers the paths its
 * spec names (relevant paths and allowed scope) and its spec's task type (a lesson scoped to types
 * reaches no task without one), those carrying one of its failure fingerprints
 * first, ranked by its goal's and criteria's words. The one definition: the hooks, MCP and
 * `ratchet lessons query` ask the same.
 *
 * @since 0.4.0
 * @category constructors
 */
export const queryOf = (task: Task.Task): Lessons.Query => {
  const spec = task.spec?.spec ?? null
  return {
    projectId: task.projectId,
    paths: [...(spec?.context?.relevantPaths ?? []), ...(spec?.execution?.allowedScope ?? [])],
    taskType: spec?.taskType ?? null,
    fingerprints: task.failureFingerprints,
    text: [task.goal, ...(spec?.acceptanceCriteria ?? []).map((ac) => ac.outcome)].join("\n")
  }
}

/**
 * The lessons for `request.taskId`; recorded as shown to its run when asked and the task is in
 * RUNNING with a run and there is any. Fails with `TaskNotFound` for a task the store lacks.
 *
 * @since 0.4.0
 * @category constructors
 */
export const forTask = (request: Request) =>
  Effect.gen(function*() {
    const models = yield* ReadModel.ReadModels
    const branch = yield* TaskBranch.of(request.taskId)
    const summary = yield* models.taskSummary(request.taskId, branch)
    const projectId = (yield* Project).project.projectId
    if (summary === null || summary.projectId !== projectId) return yield* new ControllerError.TaskNotFound({ taskId: request.taskId, projectId })
    const task = summary.task
    const runId = task.state === "RUNNING" ? task.run?.runId ?? null : null
    const service = yield* Lessons.Lessons
    const lessons = yield* service.query(queryOf(task))
    const result = (recorded: boolean, fresh: ReadonlyArray<string>): Result => ({ taskId: task.taskId, state: task.state, runId, lessons, recorded, fresh })
    if (!request.record || runId === null || lessons.length === 0) return result(false, [])
    const earlier = new Set((yield* service.shownTo({ projectId: task.projectId, runId })).map((lesson) => lesson.id))
    const fresh = lessons.map((lesson) => lesson.id).filter((id) => !earlier.has(id))
    if (fresh.length === 0) return result(true, [])
    const shown = {
      runId,
      projectId: task.projectId,
      taskId: task.taskId,
      stepId: request.step?.stepId ?? null,
      attempt: request.step?.attempt ?? null,
      via: request.via,
      at: yield* Clock.currentTimeMillis
    }
    yield* service.recordShown({ actor: recorder(request.via), lessonIds: fresh, shown })
    return result(true, fresh)
  })

/** A summary on one line: no line break or run of spaces lets a lesson pass for another part of the text. */
const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

/**
 * The text a host adds to its agent's context for `result`, or null when there is nothing to add.
 * At most {@link budget} characters: a header, then one line per lesson (its id, its status and its
 * summary), as many whole lines as fit.
 *
 * @since 0.4.0
 * @category constructors
 */
export const render = (result: Pick<Result, "taskId" | "lessons">): string | null => {
  if (result.lessons.length === 0) return null
  const header = `Ratchet: lessons from earlier runs in this project that apply to task ${oneLine(result.taskId)} (verified by reproducible evidence; follow them where they apply):`
  let text = header.slice(0, budget)
  for (const lesson of result.lessons) {
    const line = `\n- [${oneLine(lesson.id)}, ${lesson.status}] ${oneLine(lesson.summary)}`
    if (text.length + line.length > budget) break
    text += line
  }
  return text === header ? null : text
}
