/**
 * What a person (or an agent) does with lessons from a terminal (issue 21, ADR 0037): list, show,
 * query for a task, propose from a file, and a person's signed controls (pin, reject, deprecate,
 * supersede, edit). Transports (`ratchet lessons …`) call one function each; the rules are the
 * kernel's (`LessonDecider`), the command handler and the query `@ratchet/memory`'s.
 *
 * A control is shown first ({@link subject}: what is decided and the digest it is bound to — the
 * lesson's current text, or the new text of an edit), confirmed and signed at a terminal exactly
 * as an approval is (the CLI's `Approval`), then recorded ({@link control}) with a receipt signed
 * by the invocation's approval key over the lesson, the control, the revision shown, the digest
 * and the target, judged against the project's approvers. An agent, a script or a person without
 * their key gets the kernel's refusal (`person_only`, `receipt_required`,
 * `approval_requires_terminal`, `receipt_unsigned`) and nothing is stored.
 *
 * Every lesson a person proposes or changes here gets its readable copy rewritten
 * (`LessonFile.write`); a copy that cannot be written is a warning, never a failure.
 *
 * @since 0.3.0
 */
import type * as Digest from "@ratchet/kernel/Digest"
import * as Lesson from "@ratchet/kernel/Lesson"
import * as LessonDecider from "@ratchet/kernel/LessonDecider"
import type * as LessonRules from "@ratchet/kernel/LessonRules"
import * as Lessons from "@ratchet/memory/Lessons"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type Invocation, Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as LessonFile from "./LessonFile.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as Signed from "./Signed.js"
import * as TaskLessons from "./TaskLessons.js"

/**
 * A person's control, as a transport names it.
 *
 * @since 0.3.0
 * @category models
 */
export type Control =
  | { readonly control: "pin" | "reject" | "deprecate" }
  | { readonly control: "supersede"; readonly by: string }
  | { readonly control: "edit"; readonly body: Lesson.Body }

/**
 * What a person is shown before signing a control: the lesson, its revision, the digest the
 * receipt is bound to, and the text it is about.
 *
 * @since 0.3.0
 * @category models
 */
export interface Subject {
  readonly lessonId: string
  readonly control: Control["control"]
  readonly status: Lesson.Status
  readonly revision: number
  readonly digest: Digest.Digest
  readonly target: string | null
  readonly text: string
}

/** `id` when it is a lesson id (`Lesson.LessonId`), or `InvalidRequest` naming the argument. */
const lessonId = (id: string): Effect.Effect<string, ControllerError.InvalidRequest> =>
  Either.isRight(Schema.decodeUnknownEither(Lesson.LessonId)(id))
    ? Effect.succeed(id)
    : Effect.fail(
      new ControllerError.InvalidRequest({
        field: "lesson",
        reason: `${JSON.stringify(id.slice(0, 80))} is not a lesson id (1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit).`,
        fix: "Name a lesson as ratchet lessons list shows it."
      })
    )

const notFound = (id: string) =>
  new ControllerError.InvalidRequest({ field: "lesson", reason: `no lesson ${id} in this project.`, fix: "See the lessons with: ratchet lessons list" })

/** The lesson `id` of the context's project, or `InvalidRequest`. */
const lessonOf = (id: string) =>
  Effect.gen(function*() {
    const lessons = yield* Lessons.Lessons
    const project = yield* Project
    const shown = yield* lessons.show(yield* lessonId(id))
    if (shown === null || shown.lesson.projectId !== project.project.projectId) return yield* notFound(id)
    return shown
  })

/**
 * The project's lessons, in the statuses asked for (all when none).
 *
 * @since 0.3.0
 * @category constructors
 */
export const list = (statuses: ReadonlyArray<Lesson.Status>) =>
  Effect.gen(function*() {
    const lessons = yield* Lessons.Lessons
    const project = yield* Project
    return yield* lessons.list({ projectId: project.project.projectId, statuses })
  })

/**
 * One lesson and its events (who proposed, observed, changed it, with which rule or receipt).
 *
 * @since 0.3.0
 * @category constructors
 */
export const show = (id: string) => lessonOf(id)

/**
 * The lessons that apply to task `taskId`: its project's verified and enforced lessons, those with
 * one of its failure fingerprints first, whose scope covers the paths its spec names (relevant
 * paths and allowed scope), ranked by its goal's and criteria's words; at most three summaries.
 * While the task is RUNNING they are recorded as shown to its run, as the hooks and MCP record
 * theirs: whoever asks (an agent's shell, or a person who may pass them on), the run may be helped
 * by them, and a helped success never counts toward expiring a lesson.
 *
 * @since 0.3.0
 * @category constructors
 */
export const query = (taskId: string) =>
  Effect.map(TaskLessons.forTask({ taskId, via: "cli", record: true }), (found) => ({
    taskId: found.taskId,
    lessons: found.lessons,
    recorded: found.recorded
  }))

/**
 * Asks the evaluator again about every candidate and probationary lesson of the project: an expiry
 * needs age as well as successes, so a lesson whose successes came before its seventh day expires
 * only when asked after it. The evaluator records what it decides as `system:lesson-evaluator`;
 * asking changes nothing a rule does not allow. Returns the lessons whose status changed.
 *
 * @since 0.3.0
 * @category constructors
 */
export const evaluate = (invocation: Invocation) =>
  Effect.gen(function*() {
    if (invocation.actor.kind === "agent") {
      // An expiry is a change of status; only a person or Ratchet asks the evaluator for one.
      return yield* new ControllerError.InvalidRequest({
        field: "actor",
        reason: `${invocation.actor.kind}:${invocation.actor.id} may not ask the lessons' evaluator: what it decides changes a lesson's status, and no agent changes one.`,
        fix: "A person runs ratchet lessons evaluate (a scheduled job does as the system); an agent proposes with lesson_propose or ratchet lessons propose."
      })
    }
    const lessons = yield* Lessons.Lessons
    const project = yield* Project
    const open = yield* lessons.list({ projectId: project.project.projectId, statuses: ["candidate", "probationary"] })
    const changed: Array<{ readonly id: string; readonly from: Lesson.Status; readonly to: Lesson.Status }> = []
    for (const row of open) {
      const view = yield* lessons.evaluate({ actor: invocation.actor, lessonId: row.id })
      if (view.status !== row.status) {
        changed.push({ id: row.id, from: row.status, to: view.status })
        const warning = yield* LessonFile.write(project.root, view)
        if (warning !== null) yield* Effect.logWarning(warning)
      }
    }
    return { evaluated: open.length, changed }
  })

/**
 * Proposes a candidate from a lesson file (anyone may; a proposal is always a candidate). The id
 * is the one given, or `l-` and the first 12 hex digits of the text's digest.
 *
 * @since 0.3.0
 * @category constructors
 */
export const propose = (input: { readonly file: string; readonly lessonId: string | null; readonly invocation: Invocation }) =>
  Effect.gen(function*() {
    const lessons = yield* Lessons.Lessons
    const project = yield* Project
    const body = yield* LessonFile.load(input.file)
    if (body.scope.projectId !== project.project.projectId) {
      return yield* new ControllerError.InvalidRequest({
        field: "scope.projectId",
        reason: `the file is about project ${body.scope.projectId}, not this one (${project.project.projectId}).`,
        fix: `Set scope.projectId: ${project.project.projectId} (from .ratchet/project.json).`
      })
    }
    const id = input.lessonId === null ? `l-${Lesson.digest(body).slice("sha256:".length, "sha256:".length + 12)}` : yield* lessonId(input.lessonId)
    if ((yield* lessons.show(id)) !== null) {
      return yield* new ControllerError.InvalidRequest({
        field: "--id",
        reason: `a lesson ${id} exists already.`,
        fix: `Change it with ratchet lessons edit ${id} --file <file>, or give another --id.`
      })
    }
    const view = yield* lessons.propose({ actor: input.invocation.actor, lessonId: id, body })
    const warning = yield* LessonFile.write(project.root, view)
    return { lesson: view, warnings: warning === null ? [] : [warning] }
  })

// The refusals that are about the receipt: the only ones a person at a terminal can still answer.
const receiptCodes: ReadonlySet<string> = new Set([
  "receipt_required",
  "receipt_mismatch",
  "approval_requires_terminal",
  "receipt_unsigned",
  "approver_unknown",
  "signature_invalid"
])

/** The kernel's command for `control` (a replacement's status as the store has it). */
const commandOf = (control: Control, byStatus: Lesson.Status) => {
  switch (control.control) {
    case "supersede":
      return { _tag: "Supersede" as const, by: { id: control.by, status: byStatus } }
    case "edit":
      return { _tag: "Edit" as const, body: control.body }
    case "pin":
      return { _tag: "Pin" as const }
    case "reject":
      return { _tag: "Reject" as const }
    case "deprecate":
      return { _tag: "Deprecate" as const }
  }
}

/**
 * What a person is shown before `control` of lesson `id` (see the module comment).
 *
 * @since 0.3.0
 * @category constructors
 */
export const subject = (id: string, control: Control, invocation: Invocation) =>
  Effect.gen(function*() {
    const lessons = yield* Lessons.Lessons
    const project = yield* Project
    const { lesson } = yield* lessonOf(id)
    const view = lesson.view
    // The kernel's refusals that come before the receipt (a terminal lesson, someone not a
    // person, a status the control does not apply to) are given now: nobody is asked to confirm
    // and type a passphrase for an act that would be refused anyway.
    const by = control.control === "supersede" ? yield* lessons.show(control.by) : null
    const decided = LessonDecider.decide({
      ...commandOf(control, by?.lesson.status ?? "rejected"),
      actor: invocation.actor,
      at: view.changedAt,
      reason: "asked before the receipt",
      receipt: null,
      authority: { projectId: project.project.projectId, approvers: [], verify: () => false }
    }, view)
    if (Either.isLeft(decided) && !receiptCodes.has(decided.left.code)) return yield* decided.left
    const body = control.control === "edit" ? control.body : view.body
    const target = control.control === "supersede" ? control.by : null
    const action = control.control === "supersede" ? `supersede it by ${control.by}` : control.control === "edit" ? "replace its text with" : control.control
    return {
      lessonId: view.id,
      control: control.control,
      status: view.status,
      revision: view.revision,
      digest: Lesson.digest(body),
      target,
      text: `lesson ${view.id} (${view.status}, revision ${view.revision}): ${action}\n\n${LessonFile.bodyYaml(body)}`
    } satisfies Subject
  })

/**
 * Records a person's `control` of lesson `id`, confirmed at `digest` on `channel` and signed with
 * the invocation's key (see the module comment).
 *
 * @since 0.3.0
 * @category constructors
 */
export const control = (input: {
  readonly lessonId: string
  readonly control: Control
  readonly reason: string
  readonly confirmation: { readonly digest: Digest.Digest; readonly channel: string; readonly revision: number }
  readonly invocation: Invocation
}) =>
  Effect.gen(function*() {
    const lessons = yield* Lessons.Lessons
    const project = yield* Project
    const projectId = project.project.projectId
    const { lesson } = yield* lessonOf(input.lessonId)
    const authority = yield* ProjectApprovers.authority(projectId, project.root)
    const decided = input.control
    const at = yield* Clock.currentTimeMillis
    const receipt = Signed.lessonReceipt(projectId, {
      control: decided.control,
      lessonId: lesson.id,
      revision: input.confirmation.revision,
      digest: input.confirmation.digest,
      target: decided.control === "supersede" ? decided.by : null,
      channel: input.confirmation.channel,
      at
    }, input.invocation)
    const common = { actor: Signed.personOf(input.invocation), lessonId: lesson.id, reason: input.reason, receipt, authority }
    const command: Lessons.Control = decided.control === "supersede"
      ? { ...common, _tag: "Supersede", by: decided.by }
      : decided.control === "edit"
      ? { ...common, _tag: "Edit", body: decided.body }
      : { ...common, _tag: decided.control === "pin" ? "Pin" : decided.control === "reject" ? "Reject" : "Deprecate" }
    const view: LessonRules.View = yield* lessons.control(command)
    const warning = yield* LessonFile.write(project.root, view)
    return { lesson: view, warnings: warning === null ? [] : [warning] }
  })
