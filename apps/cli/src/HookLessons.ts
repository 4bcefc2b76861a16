/**
 * The lessons a host hook adds to its agent's context (issue 21, ADR 0038): at a session's start
 * and at each prompt, for a task in RUNNING with a run, the lessons `TaskLessons` finds — recorded
 * as shown to the run before they are shown.
 *
 * Loaded with a dynamic `import()` by `Hook` only for those two events and only in RUNNING, so the
 * tool-call hooks, which a host starts on every call, never parse it (ADR 0032). It provides the
 * lessons service over the store the hook already opened (`Lessons.layer` over its
 * `LessonStore`), in this code path alone.
 *
 * What each event adds: a session's start (new, resumed, cleared or compacted, when the agent's
 * context is new) gets every lesson that applies; a prompt only those not yet recorded as shown to
 * the run — a lesson verified while the run goes on reaches the agent at its next prompt, and the
 * same lines are not repeated on every prompt.
 *
 * @since 0.4.0
 */
import type * as HostView from "@ratchet/controller/HostView"
import * as TaskLessons from "@ratchet/controller/TaskLessons"
import * as Lessons from "@ratchet/memory/Lessons"
import * as Effect from "effect/Effect"

/**
 * The additional context for `task` at `moment`, or null when there is nothing to add. Fails when
 * the lessons cannot be read or recorded: the caller answers without context (context is advisory).
 *
 * @since 0.4.0
 */
export const context = (task: HostView.HostTask, moment: "session" | "prompt") =>
  Effect.gen(function*() {
    const result = yield* TaskLessons.forTask({ taskId: task.taskId, via: "hook", record: true, step: task.awaiting })
    const lessons = moment === "session" ? result.lessons : result.lessons.filter((lesson) => result.fresh.includes(lesson.id))
    return TaskLessons.render({ taskId: result.taskId, lessons })
  }).pipe(Effect.provide(Lessons.layer))
