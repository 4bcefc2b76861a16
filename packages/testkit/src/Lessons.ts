/**
 * Builders of lessons for tests (ADR 0031): a valid lesson text decoded as a person's file would
 * be, fingerprints made by the kernel's own `Fingerprint.of`, and failure and success facts with
 * every field filled in. Each takes overrides, so a test states only what it is about.
 *
 * @since 0.3.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Fingerprint from "@ratchet/kernel/Fingerprint"
import * as Lesson from "@ratchet/kernel/Lesson"
import * as LessonDecider from "@ratchet/kernel/LessonDecider"
import type * as LessonEvent from "@ratchet/kernel/LessonEvent"
import * as LessonRules from "@ratchet/kernel/LessonRules"
import * as Either from "effect/Either"

/**
 * @since 0.3.0
 * @category models
 */
export const T0 = 1_700_000_000_000

/**
 * @since 0.3.0
 * @category models
 */
export const DAY = 24 * 60 * 60 * 1000

/**
 * Actors by kind: a person, an agent, and Ratchet's own observers.
 *
 * @since 0.3.0
 * @category models
 */
export const actors = {
  alice: { kind: "user", id: "alice" },
  agent: { kind: "agent", id: "claude" },
  runner: { kind: "runner", id: "runner-1" },
  verifier: { kind: "verifier", id: "verifier-1" },
  system: { kind: "system", id: "controller" }
} as const satisfies Record<string, Event.Actor>

/**
 * The fingerprint of step `subject` exiting `code` with `text`, as the kernel computes it.
 *
 * @since 0.3.0
 * @category constructors
 */
export const fingerprint = (subject: string, code: number, text: string): Fingerprint.Fingerprint =>
  Fingerprint.of({ subject, ending: { _tag: "Exit", code }, text, locations: { workspaceRoot: null, homeDir: null } })

/**
 * A lesson's text for `projectId`, decoded by `Lesson.decodeBody` (so defaults are filled); throws
 * on an invalid override, which is a mistake in the test.
 *
 * @since 0.3.0
 * @category constructors
 */
export const body = (projectId: string, overrides: Record<string, unknown> = {}): Lesson.Body =>
  Either.getOrThrow(
    Lesson.decodeBody({
      scope: { projectId, paths: ["src/report/**"], taskTypes: ["bugfix"] },
      trigger: "changing how the report counts rows",
      wrongAssumption: "the header row is not counted",
      actualRule: "the report counts the header row; subtract one when comparing with the data",
      rootCause: "the CSV writer emits the header through the same path as the rows",
      guard: { description: "a test that counts rows of a two-row report", command: "npm test -- report-rows" },
      fingerprints: [fingerprint("test", 1, "expected 2 rows, got 3").key],
      evidenceRefs: ["blob:sha256:aa"],
      ...overrides
    })
  )

/**
 * A verification failure of run `runId` at `at` with fingerprint `fp`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const failure = (
  projectId: string,
  runId: string,
  fp: Fingerprint.Fingerprint,
  at: number,
  overrides: Partial<Lesson.Failure> = {}
): Lesson.Failure => ({
  runId,
  attempt: 1,
  projectId,
  taskId: `t-${runId}`,
  workspaceId: "ws-1",
  phase: "VERIFYING",
  stepId: null,
  acId: "AC-001",
  trigger: "npm test -- report",
  wrongAssumption: null,
  actualRule: null,
  category: "verification_failed",
  fingerprint: fp,
  evidenceRefs: [`blob:${runId}`],
  at,
  ...overrides
})

/**
 * An eligible, unassisted success of run `runId` at `at` that changed `src/report/rows.ts` in a
 * bugfix task.
 *
 * @since 0.3.0
 * @category constructors
 */
export const success = (projectId: string, runId: string, at: number, overrides: Partial<Lesson.Exposure> = {}): Lesson.Exposure => ({
  runId,
  projectId,
  taskId: `t-${runId}`,
  workspaceId: "ws-1",
  shown: [],
  assisted: false,
  eligible: true,
  scope: { paths: ["src/report/rows.ts"], taskType: "bugfix" },
  at,
  ...overrides
})

/**
 * The `LessonProposed` event of `lessonId` with `text`, by `actor` (Ratchet's observer unless
 * said: an agent's proposal names no fingerprint) at `at`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const proposed = (
  lessonId: string,
  text: Lesson.Body,
  at: number = T0,
  actor: Event.Actor = actors.system
): LessonEvent.Event => ({ _tag: "LessonProposed", version: 1, actor, at, lessonId, body: text })

/**
 * The `LessonFailureObserved` event of `lessonId` recording `fact`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const failureObserved = (lessonId: string, fact: Lesson.Failure, actor: Event.Actor = actors.verifier): LessonEvent.Event => ({
  _tag: "LessonFailureObserved",
  version: 1,
  actor,
  at: fact.at,
  lessonId,
  failure: fact
})

/**
 * The events of lesson `lessonId`: proposed with `text` at {@link T0} from the failure `observed`
 * (by default the first of `failures`; null for a text that names no fingerprint), then each failure recorded
 * by the verifier, every one decided by the kernel's `LessonDecider` (so the evaluator's
 * transitions are there, as a store would receive them). Throws on a refusal, a mistake in the test.
 *
 * @since 0.3.0
 * @category constructors
 */
export const history = (
  lessonId: string,
  text: Lesson.Body,
  failures: ReadonlyArray<Lesson.Failure>,
  observed: Lesson.Failure | null = failures[0] ?? null
): ReadonlyArray<LessonEvent.Event> => {
  const commands: ReadonlyArray<LessonDecider.Command> = [
    // Ratchet's observer proposes the candidate from the first failure, then records every one, as
    // the controller does (a text from no failure names no fingerprint).
    { _tag: "Propose", actor: actors.system, at: T0, lessonId, body: text, observed },
    ...failures.map((fact): LessonDecider.Command => ({ _tag: "RecordFailure", actor: actors.verifier, at: fact.at, failure: fact }))
  ]
  const events: Array<LessonEvent.Event> = []
  for (const command of commands) {
    const decided = LessonDecider.decide(command, LessonRules.fold(events))
    if (Either.isLeft(decided)) throw new Error(decided.left.message)
    events.push(...decided.right)
  }
  return events
}
