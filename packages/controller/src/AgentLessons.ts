/**
 * The lessons the runner puts in an agent step's envelope (issue 22, ADR 0038's amendment): the
 * same selection as the hooks, MCP and `ratchet lessons query` (`TaskLessons.queryOf`: the task's
 * project, the paths its spec names, its task type, its failure fingerprints first — a successor
 * after a failure or a REVISE carries the failure's — ranked by its goal's and criteria's words),
 * bounded as the envelope bounds them (`AgentEnvelope.lessonsOf`).
 *
 * Recorded before shown, as `TaskLessons.forTask` records: every lesson the envelope will carry is
 * recorded as shown to the run, with the step and attempt and `via: "runner"`, by
 * `system:lessons-runner`, before the host is started; so a success of the run counts as assisted,
 * and a failure's evidence names what the attempt was shown. Unlike the hooks' record (once per
 * run), each attempt's envelope is recorded: each attempt is a fresh host with a fresh context.
 *
 * Advice fails open (ADR 0038): a store that cannot give or record the lessons leaves the attempt
 * without them — never with lessons not recorded — and says so on the runner's standard error and
 * as an event of the trace; the attempt starts as it would have without lessons.
 *
 * @since 0.6.0
 */
import type * as Task from "@ratchet/kernel/Task"
import * as Lessons from "@ratchet/memory/Lessons"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as AgentEnvelope from "./AgentEnvelope.js"
import * as TaskLessons from "./TaskLessons.js"
import * as Tracing from "./Tracing.js"

/**
 * What the runner found for an attempt: the lessons that apply, most relevant first, of which the
 * envelope carries the first that fit its bounds (`AgentEnvelope.lessonsOf`) — those, and only
 * those, recorded as shown — and says how many more there are; and why there are none when the
 * store could not give or record them.
 *
 * @since 0.6.0
 * @category models
 */
export interface Found {
  readonly lessons: ReadonlyArray<Lessons.Applicable>
  readonly problem: string | null
}

const none: Found = { lessons: [], problem: null }

/**
 * The lessons for attempt `attempt` of agent step `stepId` of `task` in run `runId`, recorded as
 * shown to it (see the module comment). Never fails; without the lessons service (a process that
 * provides none) there are none.
 *
 * @since 0.6.0
 * @category constructors
 */
export const forAttempt = (input: { readonly task: Task.Task; readonly runId: string; readonly stepId: string; readonly attempt: number }): Effect.Effect<Found> =>
  Effect.gen(function*() {
    const service = yield* Effect.serviceOption(Lessons.Lessons)
    if (Option.isNone(service)) return none
    const found = yield* service.value.query(TaskLessons.queryOf(input.task))
    // Exactly those the envelope will carry: its bounds keep the first whole ones.
    const carried = found.slice(0, AgentEnvelope.lessonsOf(found).shown.length)
    if (carried.length === 0) return none
    yield* service.value.recordShown({
      actor: TaskLessons.recorder("runner"),
      lessonIds: carried.map((lesson) => lesson.id),
      shown: {
        runId: input.runId,
        projectId: input.task.projectId,
        taskId: input.task.taskId,
        stepId: input.stepId,
        attempt: input.attempt,
        via: "runner",
        at: yield* Clock.currentTimeMillis
      }
    })
    return { lessons: found, problem: null }
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.gen(function*() {
        const error = Cause.squash(cause)
        const problem = (error instanceof Error ? error.message : String(error)).slice(0, 300) || "unknown error"
        process.stderr.write(`warning: lessons: none were given to ${input.stepId}#${input.attempt}: ${problem} (the attempt starts without them)\n`)
        yield* Tracing.event("ratchet.lessons.unavailable", { "ratchet.step": input.stepId, "ratchet.attempt": input.attempt, "ratchet.reason": problem })
        return { ...none, problem }
      })
    )
  )
