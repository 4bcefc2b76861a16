/**
 * A lesson's rules (ADR 0031): the evaluator, whose thresholds alone move a lesson on evidence, the
 * table of every status change, and `evolve`, which folds a lesson's events into its state (the
 * decider over it is `LessonDecider`). Pure and total; time arrives as an argument, never from a
 * clock.
 *
 * The evaluator ({@link evaluate}, rules at {@link ruleVersion}):
 * - `candidate → probationary` (`observed`): a failure with one of its fingerprints was seen in a run;
 * - `candidate | probationary → verified` (`two_runs`): such failures in {@link thresholds}`.runs`
 *   (2) distinct runs; several failures of one run are one;
 * - `candidate | probationary → verified` (`guard_reproduced`): its proposed guard failed on the tree
 *   before the fix and passed on another tree after it, and no check of that guard said otherwise;
 * - `candidate | probationary → expired` (`outlived`): {@link thresholds}`.successes` (3) eligible,
 *   unassisted successes of distinct runs in its scope, none of them shown the lesson, all after its
 *   last recurrence, and the lesson at least {@link thresholds}`.ageMs` (7 days) old.
 * Time alone never expires a lesson, and a proposal alone never moves one. Verification wins over
 * expiry when both hold. Verified, enforced and compiled lessons move only by a person's control.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import { Actor, Timestamp } from "./Event.js"
import * as Glob from "./Glob.js"
import * as Lesson from "./Lesson.js"
import * as LessonEvent from "./LessonEvent.js"

// ---------------------------------------------------------------------------------------------
// The evaluator
// ---------------------------------------------------------------------------------------------

/**
 * The version of the threshold rules, recorded on every transition they make. Bumped whenever a
 * rule or a threshold changes.
 *
 * @since 0.3.0
 * @category models
 */
export const ruleVersion = "ratchet-lessons/1"

/**
 * The thresholds of the rules.
 *
 * @since 0.3.0
 * @category models
 */
export const thresholds = {
  /** Distinct runs whose failures carry one of the lesson's fingerprints, to verify it. */
  runs: 2,
  /** Eligible, unassisted successes of distinct runs in scope since the last recurrence, to expire it… */
  successes: 3,
  /** …once it is at least this old (7 days, in milliseconds). */
  ageMs: 7 * 24 * 60 * 60 * 1000
} as const

/** How many distinct failure runs, and guard checks per side, a lesson keeps. */
const kept = 16

/**
 * A lesson as decided: its text and status, and the evidence the evaluator reads.
 * - `failureRuns`: the distinct runs that failed with one of its fingerprints (sorted, at most 16);
 * - `lastFailureAt`: the latest such failure (the last recurrence);
 * - `successes`: the latest {@link thresholds}`.successes` counted successes, one per run;
 * - `guardBefore` / `guardAfter`: checks of the current guard that failed before the fix and passed
 *   after it; `guardContradicted` once one said the opposite;
 * - `shownTo`: the latest runs it was put in front of (`LessonShown`), oldest first, at most 16 — so
 *   a run's success finds the lessons that helped it. Views stored before it existed read as none.
 *
 * @since 0.3.0
 * @category schemas
 */
export const View = Schema.Struct({
  _tag: Schema.Literal("Lesson"),
  id: Lesson.LessonId,
  status: Lesson.Status,
  revision: Schema.Int,
  body: Lesson.Body,
  proposedBy: Actor,
  createdAt: Timestamp,
  changedAt: Timestamp,
  supersededBy: Schema.NullOr(Schema.String),
  compiledAs: Schema.NullOr(Schema.String),
  failureRuns: Schema.Array(Schema.String),
  failures: Schema.Int,
  lastFailureAt: Schema.NullOr(Timestamp),
  successes: Schema.Array(Schema.Struct({ runId: Schema.String, at: Timestamp })),
  guardBefore: Schema.Array(Schema.Struct({ commit: Schema.String, runId: Schema.String })),
  guardAfter: Schema.Array(Schema.Struct({ commit: Schema.String, runId: Schema.String })),
  guardContradicted: Schema.Boolean,
  shownTo: Schema.optionalWith(Schema.Array(Schema.String), { exact: true, default: () => [] })
})

/**
 * @since 0.3.0
 * @category models
 */
export type View = typeof View.Type

/**
 * Before the lesson's first event, or a lesson.
 *
 * @since 0.3.0
 * @category models
 */
export type State = { readonly _tag: "Absent" } | View

/**
 * @since 0.3.0
 * @category constructors
 */
export const initial: State = { _tag: "Absent" }

/**
 * A status change the evaluator decides, and the runs whose facts met its rule.
 *
 * @since 0.3.0
 * @category models
 */
export interface Transition {
  readonly from: Lesson.Status
  readonly to: Lesson.Status
  readonly rule: LessonEvent.Rule
  readonly runIds: ReadonlyArray<string>
}

/** The guard's reproduction: the runs of a failing before-check and a passing after-check on another tree. */
const reproduction = (lesson: View): ReadonlyArray<string> | null => {
  if (lesson.guardContradicted) return null
  for (const before of lesson.guardBefore) {
    const after = lesson.guardAfter.find((check) => check.commit !== before.commit)
    if (after !== undefined) return [before.runId, after.runId]
  }
  return null
}

/**
 * The status change the thresholds call for at time `now`, or null. Only a candidate or a
 * probationary lesson moves; verification wins over expiry.
 *
 * @since 0.3.0
 * @category transitions
 */
export const evaluate = (lesson: View, now: number): Transition | null => {
  const from = lesson.status
  if (from !== "candidate" && from !== "probationary") return null
  if (lesson.failureRuns.length >= thresholds.runs) return { from, to: "verified", rule: "two_runs", runIds: lesson.failureRuns }
  const reproduced = reproduction(lesson)
  if (reproduced !== null) return { from, to: "verified", rule: "guard_reproduced", runIds: reproduced }
  const since = lesson.lastFailureAt ?? -Infinity
  const outliving = lesson.successes.filter((success) => success.at > since)
  if (outliving.length >= thresholds.successes && now - lesson.createdAt >= thresholds.ageMs) {
    return { from, to: "expired", rule: "outlived", runIds: outliving.map((success) => success.runId) }
  }
  if (from === "candidate" && lesson.failureRuns.length > 0) {
    return { from, to: "probationary", rule: "observed", runIds: lesson.failureRuns }
  }
  return null
}

/**
 * Whether a run worked inside `scope`: the same project, one of the task types (when any are
 * named), and a changed path under one of the globs (when any are named).
 *
 * @since 0.3.0
 * @category predicates
 */
export const inScope = (scope: Lesson.Scope, exposure: Lesson.Exposure): boolean =>
  exposure.projectId === scope.projectId &&
  (scope.taskTypes.length === 0 || scope.taskTypes.some((type) => type === exposure.scope.taskType)) &&
  (scope.paths.length === 0 || exposure.scope.paths.some((path) => scope.paths.some((glob) => Glob.matches(glob, path))))

/**
 * How a success stands for `lesson`: it counts toward expiry only when eligible, not shown the
 * lesson, unassisted, in scope, and not before the lesson existed.
 *
 * @since 0.3.0
 * @category constructors
 */
export const standingOf = (lesson: View, exposure: Lesson.Exposure): LessonEvent.Standing => {
  if (!exposure.eligible) return "ineligible"
  if (exposure.shown.includes(lesson.id)) return "shown"
  if (exposure.assisted) return "assisted"
  if (!inScope(lesson.body.scope, exposure)) return "out_of_scope"
  if (exposure.at < lesson.createdAt) return "before_lesson"
  return "counted"
}

// ---------------------------------------------------------------------------------------------
// Evolve
// ---------------------------------------------------------------------------------------------

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** `checks` with `check` added once, sorted by tree then run, at most {@link kept}. */
const adding = (
  checks: ReadonlyArray<{ readonly commit: string; readonly runId: string }>,
  check: { readonly commit: string; readonly runId: string }
) =>
  [...checks.filter((known) => known.commit !== check.commit || known.runId !== check.runId), check]
    .sort((a, b) => byText(a.commit, b.commit) || byText(a.runId, b.runId))
    .slice(0, kept)

/**
 * The counted successes with `runId`'s at its latest, the latest few kept: enough to answer "are
 * there {@link thresholds}`.successes` after time T" for any T, whatever order they arrive in.
 */
const latest = (successes: View["successes"], runId: string, at: number): View["successes"] => {
  const known = successes.find((success) => success.runId === runId)
  return [...successes.filter((success) => success.runId !== runId), { runId, at: Math.max(at, known?.at ?? at) }]
    .sort((a, b) => b.at - a.at || byText(a.runId, b.runId))
    .slice(0, thresholds.successes)
}

const sameGuard = (a: Lesson.Guard | null, b: Lesson.Guard | null): boolean =>
  a === null || b === null ? a === b : a.description === b.description && a.command === b.command

const guardEvidence = { guardBefore: [], guardAfter: [], guardContradicted: false } as const

/**
 * Folds one event. Like the task's `evolve`, it trusts what it is given (events were decided before
 * they were stored): an event about a lesson that does not exist yet changes nothing.
 *
 * @since 0.3.0
 * @category transitions
 */
export const evolve = (state: State, event: LessonEvent.Event): State => {
  if (event._tag === "LessonProposed") {
    if (state._tag === "Lesson") return state
    return {
      _tag: "Lesson",
      id: event.lessonId,
      status: "candidate",
      revision: 1,
      body: event.body,
      proposedBy: event.actor,
      createdAt: event.at,
      changedAt: event.at,
      supersededBy: null,
      compiledAs: null,
      failureRuns: [],
      failures: 0,
      lastFailureAt: null,
      successes: [],
      ...guardEvidence,
      shownTo: []
    }
  }
  if (state._tag === "Absent") return state
  switch (event._tag) {
    case "LessonFailureObserved": {
      const { at, runId } = event.failure
      return {
        ...state,
        failureRuns: [...new Set([...state.failureRuns, runId])].sort(byText).slice(0, kept),
        failures: state.failures + 1,
        lastFailureAt: Math.max(at, state.lastFailureAt ?? at)
      }
    }
    case "LessonSuccessObserved":
      return event.standing === "counted"
        ? { ...state, successes: latest(state.successes, event.exposure.runId, event.exposure.at) }
        : state
    case "LessonGuardChecked": {
      const { check } = event
      // No exit code (killed, timed out) is no answer either way.
      if (check.exitCode === null) return state
      const passed = check.exitCode === 0
      const expected = check.side === "before" ? !passed : passed
      if (!expected) return { ...state, guardContradicted: true }
      const entry = { commit: check.commit, runId: check.runId }
      return check.side === "before"
        ? { ...state, guardBefore: adding(state.guardBefore, entry) }
        : { ...state, guardAfter: adding(state.guardAfter, entry) }
    }
    case "LessonTransitioned":
      return { ...state, status: event.to, changedAt: event.at }
    case "LessonControlled":
      return {
        ...state,
        status: event.to,
        changedAt: event.at,
        supersededBy: event.receipt.control === "supersede" ? event.receipt.target : state.supersededBy,
        compiledAs: event.receipt.control === "compile" ? event.receipt.target : state.compiledAs
      }
    case "LessonEdited":
      // Checks of the guard before an edit say nothing about the edited one.
      return { ...state, revision: event.revision, body: event.body, ...(sameGuard(event.body.guard, state.body.guard) ? {} : guardEvidence) }
    case "LessonInspected":
      return state
    case "LessonShown": {
      // Latest last: a run shown again moves to the end, the oldest beyond the bound goes.
      const runId = event.shown.runId
      return { ...state, shownTo: [...state.shownTo.filter((known) => known !== runId), runId].slice(-kept) }
    }
  }
}

/**
 * The fold of a lesson's events.
 *
 * @since 0.3.0
 * @category transitions
 */
export const fold = (events: Iterable<LessonEvent.Event>): State => {
  let state: State = initial
  for (const event of events) state = evolve(state, event)
  return state
}

/**
 * Who changed a status by a threshold rule: the evaluator, never whoever recorded the fact.
 *
 * @since 0.3.0
 * @category models
 */
export const evaluator: Actor = { kind: "system", id: "lesson-evaluator" }

/**
 * A person's control that changes a status (an edit changes the text only).
 *
 * @since 0.3.0
 * @category models
 */
export type PersonControl = Exclude<Lesson.Control, "edit">

/**
 * Every status change: by the evaluator's rules, or by a person's control. Nothing else moves a
 * lesson; terminal statuses have no way out.
 *
 * @since 0.3.0
 * @category models
 */
export const edges: ReadonlyArray<{ readonly from: Lesson.Status; readonly to: Lesson.Status; readonly by: LessonEvent.Rule | PersonControl }> = [
  { from: "candidate", to: "probationary", by: "observed" },
  { from: "candidate", to: "verified", by: "two_runs" },
  { from: "probationary", to: "verified", by: "two_runs" },
  { from: "candidate", to: "verified", by: "guard_reproduced" },
  { from: "probationary", to: "verified", by: "guard_reproduced" },
  { from: "candidate", to: "expired", by: "outlived" },
  { from: "probationary", to: "expired", by: "outlived" },
  ...(["candidate", "probationary", "verified"] as const).map((from) => ({ from, to: "enforced" as const, by: "pin" as const })),
  { from: "enforced", to: "compiled", by: "compile" },
  ...(["candidate", "probationary", "verified", "enforced"] as const).map((from) => ({ from, to: "rejected" as const, by: "reject" as const })),
  ...(["verified", "enforced", "compiled"] as const).map((from) => ({ from, to: "deprecated" as const, by: "deprecate" as const })),
  ...(["candidate", "probationary", "verified", "enforced", "compiled"] as const).map((from) => ({ from, to: "superseded" as const, by: "supersede" as const }))
]
