/**
 * A lesson as a decider: `decide(command, state)` returns the events to append to the lesson's
 * stream or a typed {@link Refused}, over the state `LessonRules.evolve` folds. Pure and total; time
 * and the facts from elsewhere (the replacing lesson's status, the project's approvers) arrive in
 * the command.
 *
 * Who may do what:
 * - anyone proposes a candidate (its text only: a proposal has no status) or inspects a lesson; a
 *   proposal names no failure fingerprint unless it is made from a failure Ratchet observed (the
 *   command carries it), since the actor is declared by the caller and proves nothing;
 * - only Ratchet's own observers (`runner`, `verifier`, `system`) record facts — a failure, a
 *   success, a guard check, the lesson shown to a run (which moves nothing) — and after each the evaluator (`LessonRules.evaluate`) decides, in the
 *   same decision, whether a threshold is met; `Evaluate` asks it again as time passes;
 * - only a person changes a status or the text: pin, reject, deprecate, supersede, compile and
 *   edit carry a receipt signed with an approver's key on a terminal, as approvals do (ADR 0018).
 *   Anyone else is refused with `person_only`, naming the command a person runs.
 *
 * The order of the checks is the order of usefulness: a terminal lesson first (nothing will move
 * it), then who asks, then whether the status allows the control, then the receipt — so nobody is
 * asked to sign for a control that cannot happen.
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Authority from "./Authority.js"
import type { Actor } from "./Event.js"
import { trustedReceiptChannels } from "./Gate.js"
import * as Lesson from "./Lesson.js"
import type * as LessonEvent from "./LessonEvent.js"
import * as LessonRules from "./LessonRules.js"

interface Meta {
  readonly actor: Actor
  readonly at: number
}

/**
 * What a person's control carries: why, the signed receipt (null when none was given) and whom the
 * project trusts to sign.
 *
 * @since 0.3.0
 * @category models
 */
export interface Signed {
  readonly reason: string
  readonly receipt: Lesson.Receipt | null
  readonly authority: Authority.Authority
}

/**
 * Every command about a lesson. Facts from elsewhere (the replacing lesson's status, the project's
 * approvers) arrive inside the command, read by the caller in the transaction that appends.
 *
 * @since 0.3.0
 * @category models
 */
export type Command =
  | Meta & {
    readonly _tag: "Propose"
    readonly lessonId: string
    readonly body: Lesson.Body
    /**
     * The failure Ratchet observed that this candidate is proposed from, or null for a text anyone
     * proposes (a person's file, an agent's `lesson_propose`). Only an observed failure ties a new
     * lesson to a fingerprint: who proposes is declared by the caller and proves nothing.
     */
    readonly observed: Lesson.Failure | null
  }
  | Meta & { readonly _tag: "RecordFailure"; readonly failure: Lesson.Failure }
  | Meta & { readonly _tag: "RecordSuccess"; readonly exposure: Lesson.Exposure }
  | Meta & { readonly _tag: "RecordGuardCheck"; readonly check: Lesson.GuardCheck }
  | Meta & { readonly _tag: "RecordShown"; readonly shown: Lesson.Shown }
  | Meta & { readonly _tag: "Evaluate" }
  | Meta & { readonly _tag: "Inspect" }
  | Meta & Signed & { readonly _tag: "Pin" | "Reject" | "Deprecate" }
  | Meta & Signed & { readonly _tag: "Supersede"; readonly by: { readonly id: string; readonly status: Lesson.Status } }
  | Meta & Signed & { readonly _tag: "Compile"; readonly guardRef: string }
  | Meta & Signed & { readonly _tag: "Edit"; readonly body: Lesson.Body }

/**
 * Stable codes of a refused command.
 *
 * @since 0.3.0
 * @category schemas
 */
export const RefusalCode = Schema.Literal(
  "lesson_exists",
  "lesson_not_found",
  "terminal_status",
  "forbidden_transition",
  "person_only",
  "not_an_observer",
  "wrong_project",
  "fingerprint_mismatch",
  "no_guard",
  "stale_guard",
  "bad_replacement",
  "receipt_required",
  "receipt_mismatch",
  "approval_requires_terminal",
  "receipt_unsigned",
  "approver_unknown",
  "signature_invalid",
  "observed_fingerprints_only"
)

/**
 * @since 0.3.0
 * @category models
 */
export type RefusalCode = typeof RefusalCode.Type

/**
 * A command refused: which, on which lesson in which status, why, and what to do instead.
 *
 * @since 0.3.0
 * @category errors
 */
export class Refused extends Schema.TaggedError<Refused>()("@ratchet/kernel/LessonCommandRefused", {
  code: RefusalCode,
  command: Schema.String,
  /** The lesson and its status, or null when there is no lesson. */
  lesson: Schema.NullOr(Schema.Struct({ id: Schema.String, status: Lesson.Status })),
  reason: Schema.String,
  fix: Schema.String
}) {
  override get message(): string {
    const lesson = this.lesson === null ? "" : ` for lesson ${this.lesson.id} (${this.lesson.status})`
    return `${this.command} refused${lesson}: ${this.reason} ${this.fix}`
  }
}

/**
 * @since 0.3.0
 * @category models
 */
export type Decision = Either.Either<ReadonlyArray<LessonEvent.Event>, Refused>

type Controlled = "Pin" | "Reject" | "Deprecate" | "Supersede" | "Compile"

const controls: Readonly<Record<Controlled, { readonly control: LessonRules.PersonControl; readonly to: Lesson.Status }>> = {
  Pin: { control: "pin", to: "enforced" },
  Reject: { control: "reject", to: "rejected" },
  Deprecate: { control: "deprecate", to: "deprecated" },
  Supersede: { control: "supersede", to: "superseded" },
  Compile: { control: "compile", to: "compiled" }
}

/**
 * The command a person runs for `control` of lesson `id`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const commandFor = (control: Lesson.Control, id: string): string => {
  switch (control) {
    case "supersede":
      return `ratchet lessons supersede ${id} --by <lesson>`
    case "edit":
      return `ratchet lessons edit ${id} --file lesson.yaml`
    case "compile":
      return `ratchet lessons compile ${id} --guard <reference>`
    case "pin":
    case "reject":
    case "deprecate":
      return `ratchet lessons ${control} ${id}`
  }
}

/** What to do instead of a control the lesson's status does not allow. */
const instead = (control: LessonRules.PersonControl, id: string): string => {
  switch (control) {
    case "deprecate":
      return `A lesson that was never verified is not deprecated but rejected: ${commandFor("reject", id)}.`
    case "compile":
      return `Only an enforced lesson is compiled: pin it first (${commandFor("pin", id)}).`
    case "reject":
      return `A compiled lesson lives on as a guard in the code: deprecate it (${commandFor("deprecate", id)}) and remove the guard.`
    default:
      // A pin of an enforced or compiled lesson; a supersede is never forbidden by status.
      return "Nothing to do: a pin makes a lesson enforced, and this one is enforced already."
  }
}

const refuse = (command: Command, state: LessonRules.State, code: RefusalCode, reason: string, fix: string): Refused =>
  new Refused({
    code,
    command: command._tag,
    lesson: state._tag === "Lesson" ? { id: state.id, status: state.status } : null,
    reason,
    fix
  })

const meta = (command: Meta, lesson: LessonRules.View) => ({ version: 1 as const, actor: command.actor, at: command.at, lessonId: lesson.id })

const transitioned = (lesson: LessonRules.View, transition: LessonRules.Transition, at: number): LessonEvent.Event => ({
  _tag: "LessonTransitioned",
  version: 1,
  actor: LessonRules.evaluator,
  at,
  lessonId: lesson.id,
  from: transition.from,
  to: transition.to,
  rule: transition.rule,
  ruleVersion: LessonRules.ruleVersion,
  runIds: [...transition.runIds]
})

/** `event`, and the transition the evaluator makes of the state it leaves, if any. */
const evaluated = (lesson: LessonRules.View, event: LessonEvent.Event, now: number): Decision => {
  const after = LessonRules.evolve(lesson, event) as LessonRules.View
  const transition = LessonRules.evaluate(after, now)
  return Either.right(transition === null ? [event] : [event, transitioned(lesson, transition, now)])
}

const observers: ReadonlyArray<Actor["kind"]> = ["runner", "verifier", "system"]

/** The lesson a fact may be recorded on, or why not: it exists, is live, the actor observes, the project is its. */
const observed = (command: Command, state: LessonRules.State, projectId: string): Either.Either<LessonRules.View, Refused> => {
  if (state._tag === "Absent") {
    return Either.left(refuse(command, state, "lesson_not_found", "there is no such lesson.", "Record facts only about a lesson that was proposed."))
  }
  if (Lesson.isTerminal(state.status)) {
    return Either.left(
      refuse(command, state, "terminal_status", `a ${state.status} lesson takes no more facts.`, "Propose a new candidate if the failure matters again.")
    )
  }
  if (!observers.includes(command.actor.kind)) {
    return Either.left(
      refuse(
        command,
        state,
        "not_an_observer",
        `${command.actor.kind} "${command.actor.id}" cannot record a fact: only Ratchet's runner, verifier or controller observes runs.`,
        "Facts come from runs Ratchet executed; an agent may propose a lesson's text instead."
      )
    )
  }
  if (projectId !== state.body.scope.projectId) {
    return Either.left(
      refuse(
        command,
        state,
        "wrong_project",
        `the fact is from project ${projectId}, the lesson belongs to ${state.body.scope.projectId}.`,
        "Record a fact only on the lessons of its own project."
      )
    )
  }
  return Either.right(state)
}

/** Why a person's control of `lesson` may not happen before its receipt is even read, or null. */
const unmovable = (command: Command & Signed, lesson: LessonRules.View, control: Lesson.Control): Refused | null => {
  if (Lesson.isTerminal(lesson.status)) {
    return refuse(command, lesson, "terminal_status", `a ${lesson.status} lesson never changes again.`, "Propose a new candidate if it matters again.")
  }
  if (command.actor.kind !== "user") {
    return refuse(
      command,
      lesson,
      "person_only",
      `${command.actor.kind} "${command.actor.id}" asked to ${control} it; only a person changes a lesson's status or text, with their approval key.`,
      `A person runs ${commandFor(control, lesson.id)} at a terminal. An agent may propose a lesson (its text), never change one.`
    )
  }
  return null
}

/** The receipt of a person's control, when it counts: for this act, on a terminal, signed by an approver. */
const receiptOf = (
  command: Command & Signed,
  lesson: LessonRules.View,
  control: Lesson.Control,
  digest: string,
  target: string | null
): Either.Either<Lesson.Receipt, Refused> => {
  const run = commandFor(control, lesson.id)
  const receipt = command.receipt
  if (receipt === null) {
    return Either.left(refuse(command, lesson, "receipt_required", `no receipt was signed for this ${control}.`, `Run ${run} at a terminal with your approval key.`))
  }
  const expected = { control, lessonId: lesson.id, revision: lesson.revision, digest, target }
  const field = (Object.keys(expected) as Array<keyof typeof expected>).find((key) => receipt[key] !== expected[key])
  const someoneElse = receipt.actor.kind !== command.actor.kind || receipt.actor.id !== command.actor.id
  if (field !== undefined || someoneElse) {
    return Either.left(
      refuse(
        command,
        lesson,
        "receipt_mismatch",
        field === undefined
          ? `the receipt names ${receipt.actor.kind} "${receipt.actor.id}", not ${command.actor.kind} "${command.actor.id}" who asked.`
          : `the receipt's ${field} is ${JSON.stringify(receipt[field])}, not ${JSON.stringify(expected[field])}: it was given for another act or an earlier revision.`,
        `Review the lesson as it is now (ratchet lessons show ${lesson.id}) and run ${run} again.`
      )
    )
  }
  if (!trustedReceiptChannels.includes(receipt.channel)) {
    return Either.left(
      refuse(
        command,
        lesson,
        "approval_requires_terminal",
        `the receipt came through "${receipt.channel}"; a person's control is only taken on an interactive terminal.`,
        `Run ${run} in a terminal, not from a script or an agent.`
      )
    )
  }
  const standing = Authority.ofLessonReceipt(command.authority, receipt)
  if (standing._tag === "Signed") return Either.right(receipt)
  const code: RefusalCode = standing._tag === "Unsigned" ? "receipt_unsigned" : standing._tag === "UnknownKey" ? "approver_unknown" : "signature_invalid"
  return Either.left(
    refuse(
      command,
      lesson,
      code,
      Authority.explain(`The ${control} receipt`, standing),
      command.authority.approvers.length === 0
        ? "This project has no approvers yet: create your approval key and register it (ratchet approver init), then do it again."
        : `Do it again yourself, on a terminal, with your approval key: ${run}.`
    )
  )
}

type Fact = "RecordFailure" | "RecordSuccess" | "RecordGuardCheck" | "RecordShown"

const decideFact = (command: Command & { readonly _tag: Fact }, state: LessonRules.State): Decision => {
  switch (command._tag) {
    case "RecordShown":
      // Showing a lesson moves no status, so the evaluator is not asked.
      return Either.map(observed(command, state, command.shown.projectId), (lesson): ReadonlyArray<LessonEvent.Event> => [
        { _tag: "LessonShown", ...meta(command, lesson), shown: command.shown, status: lesson.status }
      ])
    case "RecordFailure":
      return Either.flatMap(observed(command, state, command.failure.projectId), (lesson) => {
        const key = command.failure.fingerprint.key
        if (!lesson.body.fingerprints.includes(key)) {
          return Either.left(
            refuse(
              command,
              lesson,
              "fingerprint_mismatch",
              `the failure's fingerprint ${key} is not one of the lesson's (${lesson.body.fingerprints.join(", ") || "none"}).`,
              "Record a failure only on the lessons whose fingerprints it carries; a person may add a fingerprint by editing the lesson."
            )
          )
        }
        return evaluated(lesson, { _tag: "LessonFailureObserved", ...meta(command, lesson), failure: command.failure }, command.at)
      })
    case "RecordSuccess":
      return Either.flatMap(observed(command, state, command.exposure.projectId), (lesson) =>
        evaluated(
          lesson,
          { _tag: "LessonSuccessObserved", ...meta(command, lesson), exposure: command.exposure, standing: LessonRules.standingOf(lesson, command.exposure) },
          command.at
        ))
    case "RecordGuardCheck":
      return Either.flatMap(observed(command, state, command.check.projectId), (lesson) => {
        if (lesson.body.guard === null) {
          return Either.left(
            refuse(command, lesson, "no_guard", "the lesson proposes no guard to check.", `A person adds one by editing the lesson (${commandFor("edit", lesson.id)}).`)
          )
        }
        const current = Lesson.guardDigest(lesson.body.guard)
        if (command.check.guardDigest !== current) {
          return Either.left(
            refuse(
              command,
              lesson,
              "stale_guard",
              `the check ran guard ${command.check.guardDigest}, but the lesson's guard is now ${current}.`,
              "Run the lesson's current guard and record that check."
            )
          )
        }
        return evaluated(lesson, { _tag: "LessonGuardChecked", ...meta(command, lesson), check: command.check }, command.at)
      })
  }
}

const decideControl = (command: Command & Signed & { readonly _tag: Controlled }, lesson: LessonRules.View): Decision => {
  const { control, to } = controls[command._tag]
  const early = unmovable(command, lesson, control)
  if (early !== null) return Either.left(early)
  if (!LessonRules.edges.some((edge) => edge.by === control && edge.from === lesson.status)) {
    return Either.left(
      refuse(command, lesson, "forbidden_transition", `a ${lesson.status} lesson cannot be moved by ${control} to ${to}.`, instead(control, lesson.id))
    )
  }
  if (command._tag === "Supersede" && (command.by.id === lesson.id || Lesson.isTerminal(command.by.status))) {
    return Either.left(
      refuse(
        command,
        lesson,
        "bad_replacement",
        command.by.id === lesson.id ? "a lesson cannot supersede itself." : `lesson ${command.by.id} is ${command.by.status}, so it replaces nothing.`,
        "Supersede it by a live lesson that says better what this one says."
      )
    )
  }
  const target = command._tag === "Supersede" ? command.by.id : command._tag === "Compile" ? command.guardRef : null
  return Either.map(receiptOf(command, lesson, control, Lesson.digest(lesson.body), target), (receipt): ReadonlyArray<LessonEvent.Event> => [
    { _tag: "LessonControlled", ...meta(command, lesson), from: lesson.status, to, reason: command.reason, receipt }
  ])
}

const decideEdit = (command: Command & Signed & { readonly _tag: "Edit" }, lesson: LessonRules.View): Decision => {
  const early = unmovable(command, lesson, "edit")
  if (early !== null) return Either.left(early)
  if (command.body.scope.projectId !== lesson.body.scope.projectId) {
    return Either.left(
      refuse(
        command,
        lesson,
        "wrong_project",
        `the edit moves the lesson to project ${command.body.scope.projectId}; it belongs to ${lesson.body.scope.projectId}.`,
        "Keep scope.projectId as it is; propose a lesson in the other project instead."
      )
    )
  }
  return Either.map(receiptOf(command, lesson, "edit", Lesson.digest(command.body), null), (receipt): ReadonlyArray<LessonEvent.Event> => [
    { _tag: "LessonEdited", ...meta(command, lesson), revision: lesson.revision + 1, body: command.body, reason: command.reason, receipt }
  ])
}

/**
 * Decides a command against a lesson's state.
 *
 * @since 0.3.0
 * @category transitions
 */
export const decide = (command: Command, state: LessonRules.State): Decision => {
  if (command._tag === "Propose") {
    if (state._tag === "Lesson") {
      return Either.left(refuse(command, state, "lesson_exists", "a lesson with this id exists already.", "Propose it under a new id, or edit the existing one."))
    }
    const named = command.body.fingerprints
    if (named.length > 0 && command.observed === null) {
      // Failures are recorded on every live lesson carrying their fingerprint, and two runs'
      // verify it: a text under a fingerprint someone read would be verified by failures they can
      // make happen. Who proposes is only declared (RATCHET_ACTOR), so the actor's kind cannot tell
      // a person from an agent: only a failure Ratchet observed ties a new lesson to a fingerprint,
      // and a person adds one afterwards with a signed edit.
      return Either.left(
        refuse(
          command,
          state,
          "observed_fingerprints_only",
          command.actor.kind === "agent"
            ? "an agent's proposal names failure fingerprints, and only Ratchet's observers and a person tie a lesson to a failure."
            : "the proposal names failure fingerprints, and only a failure Ratchet observed, or a person's signed edit, ties a lesson to one.",
          "Propose the lesson without fingerprints; Ratchet proposes one per failure it observes, and a person can add one with ratchet lessons edit."
        )
      )
    }
    if (command.observed !== null && (named.length !== 1 || named[0] !== command.observed.fingerprint.key)) {
      return Either.left(
        refuse(
          command,
          state,
          "fingerprint_mismatch",
          `a candidate proposed from a failure names exactly its fingerprint ${command.observed.fingerprint.key}, not ${named.join(", ") || "none"}.`,
          "Propose the observed failure's candidate with fingerprints: [its fingerprint's key]."
        )
      )
    }
    if (command.observed !== null && command.observed.projectId !== command.body.scope.projectId) {
      return Either.left(
        refuse(
          command,
          state,
          "wrong_project",
          `the failure was observed in project ${command.observed.projectId}; the candidate is scoped to ${command.body.scope.projectId}.`,
          "Propose the observed failure's candidate in the failure's project."
        )
      )
    }
    return Either.right([
      { _tag: "LessonProposed", version: 1, actor: command.actor, at: command.at, lessonId: command.lessonId, body: command.body }
    ])
  }
  if (command._tag === "RecordFailure" || command._tag === "RecordSuccess" || command._tag === "RecordGuardCheck" || command._tag === "RecordShown") {
    return decideFact(command, state)
  }
  if (state._tag === "Absent") {
    return Either.left(refuse(command, state, "lesson_not_found", "there is no such lesson.", "List the project's lessons with ratchet lessons list."))
  }
  switch (command._tag) {
    case "Evaluate": {
      if (command.actor.kind === "agent") {
        return Either.left(
          refuse(command, state, "person_only", "an agent asked the evaluator, whose decisions change a lesson's status.", "A person or Ratchet runs ratchet lessons evaluate.")
        )
      }
      const transition = LessonRules.evaluate(state, command.at)
      return Either.right(transition === null ? [] : [transitioned(state, transition, command.at)])
    }
    case "Inspect":
      return Either.right([{ _tag: "LessonInspected", ...meta(command, state) }])
    case "Edit":
      return decideEdit(command, state)
    case "Pin":
    case "Reject":
    case "Deprecate":
    case "Supersede":
    case "Compile":
      return decideControl(command, state)
  }
}
