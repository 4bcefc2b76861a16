/**
 * The brief: a task's creation (with its interview begun, in one append) and the interview's
 * questions, answers, restatement and closure. Every write goes through the command handler
 * (`UseCase.write` / `UseCase.command`).
 *
 * @since 0.2.0
 * @internal
 */
import * as Task from "@ratchet/kernel/Task"
import * as Effect from "effect/Effect"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as UseCase from "./UseCase.js"

/**
 * A new task id: `t-` and 8 hex characters (32 random bits; the stream id must be unique across the
 * store, and ids are typed by people).
 *
 * @since 0.1.0
 * @category constructors
 */
export const newTaskId = (): string => `t-${crypto.randomUUID().replace(/-/g, "").slice(0, 8)}`

/**
 * A file-name-safe slug of a goal: lowercase ASCII letters and digits joined by `-`, at most 40
 * characters; `task` when nothing is left.
 *
 * @since 0.1.0
 * @category constructors
 */
export const slugOf = (goal: string): string => {
  const slug = goal
    .normalize("NFKD")
    // Drop the combining marks NFKD split off, so "Ünïcödé" slugs as "unicode".
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "")
  return slug.length === 0 ? "task" : slug
}

const validSlug = /^[a-z0-9][a-z0-9-]{0,39}$/

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { projectId, write, command, requireText } = kit

  const createTask: Controller.Service["createTask"] = (input, invocation) => {
    const goal = input.goal.trim()
    if (goal.length === 0 || goal.length > 4096) {
      return Effect.fail(
        new ControllerError.InvalidRequest({
          field: "--goal",
          reason: goal.length === 0 ? "the goal is empty." : `the goal has ${goal.length} characters; at most 4096.`,
          fix: `Say in one sentence what the task must achieve: ratchet task create --goal "…"`
        })
      )
    }
    const slug = input.slug ?? slugOf(goal)
    if (!validSlug.test(slug)) {
      return Effect.fail(
        new ControllerError.InvalidRequest({
          field: "--slug",
          reason: `${JSON.stringify(slug.slice(0, 60))} is not a slug.`,
          fix: "Use 1 to 40 lowercase letters, digits and dashes, starting with a letter or digit, or leave it out."
        })
      )
    }
    const taskId = newTaskId()
    const meta = (at: number) => ({ actor: invocation.actor, at })
    return write(null, invocation, (_aggregate, at) =>
      Effect.succeed<ReadonlyArray<Task.Command>>([
        { _tag: "CreateTask", ...meta(at), taskId, projectId, goal, slug },
        // The setup check: this controller exists only for an initialised project on an open store.
        { _tag: "BeginInterview", ...meta(at), projectInitialized: true, storeWritable: true }
      ]), taskId)
  }

  const ask: Controller.Service["ask"] = (taskId, input, invocation) =>
    Effect.gen(function*() {
      const text = yield* requireText("<text>", input.text, `Ask a question: ratchet brief ${taskId} ask "…"`)
      let questionId = ""
      const written = yield* command(taskId, invocation, (task, meta) => {
        questionId = `Q-${task.brief.questions.length + 1}`
        return { _tag: "AskQuestion", ...meta, questionId, text, blocking: input.blocking }
      })
      return { ...written, questionId }
    })

  const answer: Controller.Service["answer"] = (taskId, input, invocation) =>
    Effect.flatMap(
      // A blank answer would count as answered and let the closure audit pass with nothing said.
      requireText("<text>", input.text, `Answer it: ratchet brief ${taskId} answer ${input.questionId} "…" --source user|code|research`),
      (text) =>
        command(taskId, invocation, (_task, meta) => ({
          _tag: "AnswerQuestion",
          ...meta,
          questionId: input.questionId,
          answer: text,
          source: input.source
        }))
    )

  const restate: Controller.Service["restate"] = (taskId, text, invocation) =>
    Effect.flatMap(
      requireText("<sentence>", text, `Restate the goal in one sentence: ratchet brief ${taskId} restate "…"`),
      (sentence) => command(taskId, invocation, (_task, meta) => ({ _tag: "Restate", ...meta, text: sentence }))
    )

  const closeBrief: Controller.Service["closeBrief"] = (taskId, invocation) =>
    command(taskId, invocation, (_task, meta) => ({ _tag: "CloseBrief", ...meta }))

  return { createTask, ask, answer, restate, closeBrief } satisfies Pick<Controller.Service, "createTask" | "ask" | "answer" | "restate" | "closeBrief">
}
