/**
 * Lessons (issue 21, ADR 0031): what a failure taught, kept so that only evidence promotes it. This
 * module holds the shapes of a lesson and of the facts it is judged on.
 *
 * - **The lesson** ({@link Body}): its scope (project, path globs, task types), the trigger (when it
 *   applies), the wrong assumption, the actual rule, the root cause, a proposed guard (a check that
 *   fails while the problem is there and passes once it is fixed), the failure fingerprints it is
 *   about and evidence references. Its status is never part of the text: a proposal is always a
 *   `candidate`, and only the evaluator's thresholds or a person's signed control move it.
 * - **Facts** the controller records: a {@link Failure} (a run's failure, with a structured
 *   `Fingerprint`), an {@link Exposure} (a run that succeeded: which lessons it was shown,
 *   whether it was assisted, whether it is eligible, its scope) and a {@link GuardCheck} (the
 *   proposed guard run before or after the fix).
 * - **A person's controls** carry a {@link Receipt} signed with an approver's key (ADR 0018).
 * The events of a lesson's stream are `LessonEvent`'s, the evaluator is `LessonRules`' and the
 * decider `LessonDecider`'s.
 *
 * Every string from outside is bounded (summaries at {@link limits}`.summary` = 400 characters, the
 * size a prompt shows) and refuses control and bidirectional-override characters, and every scope
 * glob must stay inside the repository (`Glob.problem`): a lesson file is written by anyone and
 * read back into an agent's prompt. A refusal names the field (a JSON Pointer), the reason and the
 * fix.
 *
 * A failure carries a structured `Fingerprint` (the successor budget's, taken over output from
 * which the run's own locations were removed first), so two workspaces failing the same way agree.
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Digest from "./Digest.js"
import { Actor, Timestamp } from "./Event.js"
import * as Fingerprint from "./Fingerprint.js"
import * as Glob from "./Glob.js"
import * as Signature from "./Signature.js"
import * as Spec from "./Spec.js"

// ---------------------------------------------------------------------------------------------
// Bounded values
// ---------------------------------------------------------------------------------------------

/**
 * The bounds of every field: lengths in UTF-16 code units, counts in items.
 *
 * @since 0.3.0
 * @category models
 */
export const limits = {
  /** A trigger, a wrong assumption, an actual rule, a guard's description: what a prompt shows. */
  summary: 400,
  rootCause: 2000,
  command: 2000,
  name: 128,
  ref: 512,
  glob: 256,
  path: 1024,
  globs: 32,
  taskTypes: 16,
  fingerprints: 8,
  evidenceRefs: 64,
  paths: 1000,
  shown: 64
} as const

// C0 and C1 controls other than tab and newline, and the bidirectional overrides and isolates
// that make text read differently from what it is ("Trojan Source").
// eslint-disable-next-line no-control-regex
const hidden = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

/** What is wrong with `text` as a field of at most `max` characters, or `undefined`. */
const textProblem = (text: string, max: number, singleLine: boolean): string | undefined => {
  if (text.length > max) return `is ${text.length} characters long, over the limit of ${max}; shorten it to at most ${max}`
  if (text.trim() === "") return "is empty; write what it says, or leave the field out where it is optional"
  if (singleLine && text.includes("\n")) return "holds a line break; write it on one line"
  if (hidden.test(text)) {
    return "holds a control or bidirectional-override character, which would show differently from what it is; remove it"
  }
  return undefined
}

const text = (max: number, singleLine = false) =>
  Digest.CanonicalString.pipe(Schema.filter((value) => textProblem(value, max, singleLine)))

const many = <S extends Schema.Schema.Any>(item: S, max: number, what: string) =>
  Schema.Array(item).pipe(
    Schema.filter((items) =>
      items.length > max ? `holds ${items.length} ${what}, over the limit of ${max}; keep the ${max} that matter` : undefined
    )
  )

/**
 * A summary shown to an agent: at most 400 characters.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Summary = text(limits.summary)

/**
 * An identifier from elsewhere (a run, task, project, workspace, step or criterion): one line, at
 * most 128 characters.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Name = text(limits.name, true)

/**
 * An evidence reference (a blob, an event, a file): one line, at most 512 characters.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Ref = text(limits.ref, true)

/**
 * A lesson's id. It names the lesson's file, so it is 1 to 64 characters from `A-Z a-z 0-9 . _ -`
 * starting with a letter or a digit: never a path.
 *
 * @since 0.3.0
 * @category schemas
 */
export const LessonId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    message: (issue) =>
      `expected a lesson id (1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit; it names a file), got ${
        JSON.stringify(String(issue.actual).slice(0, 80))
      }`
  })
)

/**
 * A kind of task a lesson applies to (`bugfix`, `migration`, …): a spec's `taskType`
 * ({@link Spec.TaskType}).
 *
 * @since 0.3.0
 * @category schemas
 */
export const TaskType = Spec.TaskType

const pathLike = (max: number) =>
  text(max, true).pipe(
    Schema.filter((entry) => {
      const problem = Glob.problem(entry)
      return problem === undefined ? undefined : `${problem}; use a path or glob relative to the repository root that stays inside it`
    })
  )

// ---------------------------------------------------------------------------------------------
// The lesson
// ---------------------------------------------------------------------------------------------

/**
 * The lesson's states. `candidate → probationary → verified → enforced → compiled` live;
 * `expired`, `rejected`, `superseded` and `deprecated` are terminal.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Status = Schema.Literal(
  "candidate",
  "probationary",
  "verified",
  "enforced",
  "compiled",
  "expired",
  "rejected",
  "superseded",
  "deprecated"
)

/**
 * @since 0.3.0
 * @category models
 */
export type Status = typeof Status.Type

/**
 * Every status, in the order above.
 *
 * @since 0.3.0
 * @category models
 */
export const statuses: ReadonlyArray<Status> = Status.literals

/**
 * Whether nothing moves a lesson in `status` any more.
 *
 * @since 0.3.0
 * @category guards
 */
export const isTerminal = (status: Status): boolean =>
  status === "expired" || status === "rejected" || status === "superseded" || status === "deprecated"

/**
 * Where a lesson applies: its project, the paths a task touches (globs; none means every path) and
 * the task types (none means every type).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Scope = Schema.Struct({
  projectId: Name,
  paths: Schema.optionalWith(many(pathLike(limits.glob), limits.globs, "globs"), { exact: true, default: () => [] }),
  taskTypes: Schema.optionalWith(many(TaskType, limits.taskTypes, "task types"), { exact: true, default: () => [] })
})

/**
 * @since 0.3.0
 * @category models
 */
export type Scope = typeof Scope.Type

/**
 * A proposed guard: a check that fails while the lesson's problem is there and passes once it is
 * fixed. `command` is what the runner executes to check it, when it can be automated.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Guard = Schema.Struct({
  description: Summary,
  command: Schema.optionalWith(Schema.NullOr(text(limits.command)), { exact: true, default: () => null })
})

/**
 * @since 0.3.0
 * @category models
 */
export type Guard = typeof Guard.Type

/**
 * A lesson's text: everything a proposal or a person's edit sets. Optional fields may be left out
 * of a file (they read as `null` or empty).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Body = Schema.Struct({
  scope: Scope,
  /** When it applies: the situation an agent is in when the lesson matters. */
  trigger: Summary,
  wrongAssumption: Schema.optionalWith(Schema.NullOr(Summary), { exact: true, default: () => null }),
  actualRule: Summary,
  rootCause: Schema.optionalWith(Schema.NullOr(text(limits.rootCause)), { exact: true, default: () => null }),
  guard: Schema.optionalWith(Schema.NullOr(Guard), { exact: true, default: () => null }),
  /** The failures it is about: a failure with one of these fingerprints is a recurrence. */
  fingerprints: Schema.optionalWith(many(Fingerprint.Key, limits.fingerprints, "fingerprints"), { exact: true, default: () => [] }),
  evidenceRefs: Schema.optionalWith(many(Ref, limits.evidenceRefs, "evidence references"), { exact: true, default: () => [] })
})

/**
 * @since 0.3.0
 * @category models
 */
export type Body = typeof Body.Type

/**
 * A lesson's text or a fact is invalid; `issues` lists every problem, each with its field (a JSON
 * Pointer), the reason and the fix.
 *
 * @since 0.3.0
 * @category errors
 */
export class LessonInvalid extends Schema.TaggedError<LessonInvalid>()("@ratchet/kernel/LessonInvalid", {
  what: Schema.String,
  issues: Schema.Array(Spec.Issue)
}) {
  override get message(): string {
    return `the ${this.what} is invalid (${this.issues.length} ${
      this.issues.length === 1 ? "issue" : "issues"
    }); fix each one and submit it again:\n${Spec.formatIssues(this.issues)}`
  }
}

// A lesson's status is not text anyone may write: say so where a file tries.
const statusIssue = (issue: Spec.Issue): Spec.Issue =>
  issue.path === "/status"
    ? {
      path: issue.path,
      message:
        "a lesson's status is not part of its text: a proposal is always a candidate, and only evidence (the evaluator) or a person's signed control (ratchet lessons pin|reject|deprecate|supersede) changes it; remove the key"
    }
    : issue

const decoding = <A, I>(schema: Schema.Schema<A, I>, what: string) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })
  return (input: unknown): Either.Either<A, LessonInvalid> =>
    Either.mapLeft(decode(input), (error) => new LessonInvalid({ what, issues: Spec.issuesOf(error).map(statusIssue) }))
}

/**
 * Decodes a lesson's text (a proposal, or a person's edited file parsed to plain data): unknown
 * keys are errors, and every issue is reported.
 *
 * @since 0.3.0
 * @category constructors
 */
export const decodeBody: (input: unknown) => Either.Either<Body, LessonInvalid> = decoding(Body, "lesson")

/**
 * The digest of a lesson's text: what a person's receipt is bound to. Total on every body produced
 * by {@link decodeBody}; a hand-built one that breaks the schema (a lone surrogate) is a defect and
 * throws.
 *
 * @since 0.3.0
 * @category constructors
 */
export const digest = (body: Body): Digest.Digest =>
  Either.getOrThrowWith(
    Digest.of(body),
    (error) => new Error(`Lesson.digest needs a body produced by Lesson.decodeBody: ${error.message}`)
  )

/**
 * The digest a guard check names: the guard's description and command.
 *
 * @since 0.3.0
 * @category constructors
 */
export const guardDigest = (guard: Guard): Digest.Digest =>
  Either.getOrThrowWith(
    Digest.of({ description: guard.description, command: guard.command }),
    (error) => new Error(`Lesson.guardDigest needs a guard produced by Lesson.decodeBody: ${error.message}`)
  )

/**
 * What an agent is shown of a lesson: the rule, when it applies and what it corrects, at most
 * {@link limits}`.summary` characters (cut with an ellipsis, never inside a surrogate pair).
 *
 * @since 0.3.0
 * @category constructors
 */
export const summary = (body: Body): string => {
  const full = `${body.actualRule} (when: ${body.trigger}${body.wrongAssumption === null ? "" : `; not: ${body.wrongAssumption}`})`
  if (full.length <= limits.summary) return full
  const cut = full.slice(0, limits.summary - 1)
  // A high surrogate at the end would be half a character.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`
}

// ---------------------------------------------------------------------------------------------
// Facts
// ---------------------------------------------------------------------------------------------

/**
 * What kind of failure a fact records: a step's command failed; a criterion's verification failed
 * or was indeterminate; recovery left an attempt Indeterminate; a preflight found a wrong
 * assumption.
 *
 * @since 0.3.0
 * @category schemas
 */
export const FailureCategory = Schema.Literal(
  "step_failed",
  "verification_failed",
  "verification_indeterminate",
  "attempt_indeterminate",
  "wrong_assumption"
)

/**
 * @since 0.3.0
 * @category models
 */
export type FailureCategory = typeof FailureCategory.Type

const Attempt = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))

/**
 * A failure, as the controller records it. `runId` is the run it happened in; a preflight, which
 * comes before any run, names its own pass, so that two tasks' preflights are two observations
 * and one preflight recorded twice is one. `phase` is the task's state at the time. A step's
 * failure names its step, a criterion's its criterion (`acId`).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Failure = Schema.Struct({
  runId: Name,
  attempt: Schema.NullOr(Attempt),
  projectId: Name,
  taskId: Name,
  workspaceId: Name,
  phase: Schema.Literal("PREFLIGHT", "RUNNING", "VERIFYING"),
  stepId: Schema.NullOr(Name),
  acId: Schema.NullOr(Name),
  /** What was being done when it failed: the command, the check, the criterion. */
  trigger: Summary,
  wrongAssumption: Schema.NullOr(Summary),
  actualRule: Schema.NullOr(Summary),
  category: FailureCategory,
  fingerprint: Fingerprint.Fingerprint,
  evidenceRefs: many(Ref, limits.evidenceRefs, "evidence references"),
  at: Timestamp
}).pipe(
  Schema.filter((failure) => {
    const step = failure.category === "step_failed" || failure.category === "attempt_indeterminate"
    if (step && failure.stepId === null) return `a ${failure.category} failure names its step; set stepId`
    const criterion = failure.category === "verification_failed" || failure.category === "verification_indeterminate"
    if (criterion && failure.acId === null) return `a ${failure.category} failure names its criterion; set acId`
    return undefined
  })
)

/**
 * @since 0.3.0
 * @category models
 */
export type Failure = typeof Failure.Type

/**
 * A run that succeeded, and what it was exposed to: the lessons put into its context (`shown`),
 * whether it had help that could hide a failure (`assisted`: lessons shown, a person stepping in),
 * whether it is `eligible` evidence at all (the controller's judgement: a verified completion of
 * real work), the scope it worked in (the paths it changed and its task type), and when.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Exposure = Schema.Struct({
  runId: Name,
  projectId: Name,
  taskId: Name,
  workspaceId: Name,
  shown: many(LessonId, limits.shown, "lessons"),
  assisted: Schema.Boolean,
  eligible: Schema.Boolean,
  scope: Schema.Struct({
    paths: many(pathLike(limits.path), limits.paths, "paths"),
    taskType: Schema.NullOr(TaskType)
  }),
  at: Timestamp
})

/**
 * @since 0.3.0
 * @category models
 */
export type Exposure = typeof Exposure.Type

/**
 * Lessons put in front of a run's agent: the run (and, while a step awaits its worker, the step and
 * attempt), the task and project, how they reached it (`hook`: a host's additional context at a
 * session's start or a prompt; `mcp`: the agent asked with `lessons_query`), and when. Recorded on
 * each lesson shown, before it is shown, so that the run's later success is known to have been
 * helped by it (`Exposure.shown`, `assisted`), whoever records that success.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Shown = Schema.Struct({
  runId: Name,
  projectId: Name,
  taskId: Name,
  stepId: Schema.NullOr(Name),
  attempt: Schema.NullOr(Attempt),
  /**
   * A host's hook, the agent's MCP call, `ratchet lessons query` (whoever ran it), or the runner's
   * envelope of an agent step's attempt (ADR 0038's amendment).
   */
  via: Schema.Literal("hook", "mcp", "cli", "runner"),
  at: Timestamp
})

/**
 * @since 0.4.0
 * @category models
 */
export type Shown = typeof Shown.Type

/**
 * The proposed guard run once: against the tree before the fix (`before`) or after it (`after`),
 * the commit it ran on, its exit code (null when it was killed or timed out: no answer), and the
 * digest of the guard it ran ({@link guardDigest}), so a check of an edited guard never counts for
 * the new one.
 *
 * @since 0.3.0
 * @category schemas
 */
export const GuardCheck = Schema.Struct({
  runId: Name,
  projectId: Name,
  guardDigest: Digest.Digest,
  side: Schema.Literal("before", "after"),
  commit: Name,
  exitCode: Schema.NullOr(Schema.Int),
  evidenceRefs: many(Ref, limits.evidenceRefs, "evidence references"),
  at: Timestamp
})

/**
 * @since 0.3.0
 * @category models
 */
export type GuardCheck = typeof GuardCheck.Type

/**
 * Decodes a failure fact at the boundary.
 *
 * @since 0.3.0
 * @category constructors
 */
export const decodeFailure: (input: unknown) => Either.Either<Failure, LessonInvalid> = decoding(Failure, "failure")

/**
 * Decodes an exposure (success) fact at the boundary.
 *
 * @since 0.3.0
 * @category constructors
 */
export const decodeExposure: (input: unknown) => Either.Either<Exposure, LessonInvalid> = decoding(Exposure, "exposure")

/**
 * Decodes a record of lessons shown to a run at the boundary.
 *
 * @since 0.4.0
 * @category constructors
 */
export const decodeShown: (input: unknown) => Either.Either<Shown, LessonInvalid> = decoding(Shown, "record of lessons shown")

/**
 * Decodes a guard check at the boundary.
 *
 * @since 0.3.0
 * @category constructors
 */
export const decodeGuardCheck: (input: unknown) => Either.Either<GuardCheck, LessonInvalid> = decoding(GuardCheck, "guard check")

// ---------------------------------------------------------------------------------------------
// A person's controls
// ---------------------------------------------------------------------------------------------

/**
 * What a person does to a lesson: pin it (enforced), reject it, deprecate it, supersede it by
 * another, edit its text, or mark it compiled into a guard in the code.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Control = Schema.Literal("pin", "reject", "deprecate", "supersede", "edit", "compile")

/**
 * @since 0.3.0
 * @category models
 */
export type Control = typeof Control.Type

/**
 * A person's control of a lesson, signed with their approval key (`Authority.ofLessonReceipt`):
 * bound to the lesson, the control, the lesson's `revision` and `digest` (its current text, or for
 * an edit the new text) and the `target` (the replacing lesson's id for `supersede`, the guard's
 * reference for `compile`, otherwise null).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Receipt = Schema.Struct({
  control: Control,
  lessonId: LessonId,
  revision: Schema.Int,
  digest: Digest.Digest,
  target: Schema.NullOr(Ref),
  actor: Actor,
  channel: Name,
  at: Timestamp,
  signature: Schema.NullOr(Signature.Signature)
})

/**
 * @since 0.3.0
 * @category models
 */
export type Receipt = typeof Receipt.Type


/**
 * The stream a store records lesson `lessonId` on: beside the tasks, under an id no task id can
 * take (task ids are `t-…`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const streamOf = (lessonId: string): string => `lesson.${lessonId}`
