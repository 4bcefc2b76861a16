/**
 * What the lifecycle tells the lessons (issue 21, ADR 0031, ADR 0037): the facts the kernel's
 * evaluator judges lessons on, recorded where they happen.
 *
 * - A **failure** when verification ends with a criterion FAIL or INDETERMINATE (`Verify`), when a
 *   step's command fails (`Runner`), when recovery leaves an attempt Indeterminate
 *   (`RunRecovery`): the run, attempt, project, task, workspace, phase, step or criterion, the
 *   category, the structured fingerprint (`Fingerprint.of`, with this checkout's root and the home
 *   directory removed, so two workspaces failing the same way agree), evidence references and the
 *   time. It goes to every live lesson of the project carrying its fingerprint; when none does, a
 *   candidate is proposed from it first (id `fp-<the fingerprint's digest>`), so the failure is
 *   that candidate's first observation (it becomes probationary) and the same failure in another
 *   run verifies it. Proposing and observing are two events, as ADR 0031 requires.
 * - A **success** when a task completes (`Completion`): the run, the paths its steps changed, and
 *   what it was shown. The hooks and the MCP server record each lesson they show a run on that
 *   lesson (`LessonShown`, ADR 0038); `Lessons.recordSuccess` reads them by run id, so a run that
 *   was shown a lesson counts as assisted and its success never counts for that lesson.
 *
 * Recording a lesson never changes a lifecycle outcome: everything here runs after the task's own
 * write, every failure (a store error, a refusal, a defect) becomes one warning line on stderr,
 * and the caller's result is the one it would have been. A process that provides no `Lessons`
 * service records nothing. Time is Effect's `Clock`.
 *
 * @since 0.3.0
 */
import * as os from "node:os"
import type * as Event from "@ratchet/kernel/Event"
import * as Fingerprint from "@ratchet/kernel/Fingerprint"
import * as Glob from "@ratchet/kernel/Glob"
import * as Lesson from "@ratchet/kernel/Lesson"
import type * as Task from "@ratchet/kernel/Task"
import * as Lessons from "@ratchet/memory/Lessons"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Project } from "./Controller.js"
import type * as RunStep from "./RunStep.js"

/**
 * The observer a fact is recorded as when its caller names none (the kernel takes facts only from
 * `runner`, `verifier` and `system`).
 *
 * @since 0.3.0
 * @category constants
 */
export const system: Event.Actor = { kind: "system", id: "ratchet-controller" }

/**
 * The observer a verification's failures are recorded as: Ratchet's verification, not the person
 * who ran it (a person's word is not an observation).
 *
 * @since 0.3.0
 * @category constants
 */
export const verifier: Event.Actor = { kind: "verifier", id: "ratchet-verify" }

// C0/C1 controls (tab and newline aside) and bidirectional overrides: the kernel refuses them in a
// lesson's text, and a failure's output may hold any of them.
// eslint-disable-next-line no-control-regex
const hidden = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g
const hiddenOne = new RegExp(hidden.source)
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * `text` as a lesson's field of at most `max` characters: hidden characters and lone surrogates
 * replaced, whitespace collapsed to one line, cut with an ellipsis (never inside a pair), and
 * `fallback` when nothing is left.
 *
 * @since 0.3.0
 * @category constructors
 */
export const clip = (text: string, max: number, fallback: string): string => {
  const flat = text.replace(hidden, " ").replace(loneSurrogate, "\uFFFD").replace(/\s+/g, " ").trim()
  if (flat === "") return fallback
  if (flat.length <= max) return flat
  const cut = flat.slice(0, max - 1)
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`
}

/**
 * What failed, as the controller knows it (see the module comment).
 *
 * @since 0.3.0
 * @category models
 */
export interface Failed {
  readonly actor: Event.Actor
  readonly task: Task.Task
  readonly runId: string
  readonly phase: "RUNNING" | "VERIFYING"
  readonly category: Lesson.FailureCategory
  readonly attempt: number | null
  readonly stepId: string | null
  readonly acId: string | null
  /** What was being done: the command, the criterion's outcome. */
  readonly trigger: string
  readonly ending: Fingerprint.Ending
  /** The text the fingerprint is taken over: the output's tail, the verdict's reasons. */
  readonly text: string
  readonly evidenceRefs: ReadonlyArray<string>
}

/**
 * The candidate a failure no live lesson carries proposes: scoped to the task's allowed scope (the
 * paths its work may touch), its fingerprint, and a text a person is expected to rewrite
 * (`ratchet lessons edit`) before pinning it.
 *
 * @since 0.3.0
 * @category constructors
 */
export const candidateOf = (failed: Failed, failure: Lesson.Failure): Lesson.Body => {
  const scope = (failed.task.spec?.spec.execution?.allowedScope ?? [])
    .filter((glob) => glob.length <= Lesson.limits.glob && Glob.problem(glob) === undefined)
    .slice(0, Lesson.limits.globs)
  const what = failed.stepId !== null ? `step ${failed.stepId}` : `criterion ${failed.acId ?? "?"}`
  return {
    scope: { projectId: failure.projectId, paths: scope, taskTypes: [] },
    trigger: failure.trigger,
    wrongAssumption: null,
    actualRule: clip(
      `${what} ends ${failure.fingerprint.ending} (${failed.category.replaceAll("_", " ")}) when the work goes as in task ${failed.task.taskId}: ${failed.text}`,
      Lesson.limits.summary,
      `${what} ends ${failure.fingerprint.ending}`
    ),
    rootCause: null,
    guard: null,
    fingerprints: [failure.fingerprint.key],
    evidenceRefs: failure.evidenceRefs
  }
}

/** One warning line; the lifecycle's result is unchanged. */
const warn = (what: string) => (cause: Cause.Cause<unknown>) =>
  Effect.sync(() => {
    const error = Cause.squash(cause)
    const message = error instanceof Error ? error.message : String(error)
    process.stderr.write(`warning: lessons: ${what} was not recorded: ${clip(message, 300, "unknown error")} (the task is unaffected)\n`)
  })

/** `use` with the lessons service and the project, when this process provides both; never fails. */
const withLessons = (what: string, use: (lessons: Lessons.Service, project: typeof Project.Service) => Effect.Effect<void, unknown>) =>
  Effect.gen(function*() {
    const lessons = yield* Effect.serviceOption(Lessons.Lessons)
    const project = yield* Effect.serviceOption(Project)
    if (Option.isNone(lessons) || Option.isNone(project)) return
    yield* use(lessons.value, project.value)
  }).pipe(Effect.catchAllCause(warn(what)))

/** The first of `fp-<digest>`, `fp-<digest>-2`, … no lesson has (a terminal one keeps its id). */
const freeId = (lessons: Lessons.Service, digest: string) =>
  Effect.gen(function*() {
    for (let n = 1; n <= 16; n++) {
      const id = n === 1 ? `fp-${digest}` : `fp-${digest}-${n}`
      if ((yield* lessons.show(id)) === null) return id
    }
    return yield* Effect.fail(new Error(`every id from fp-${digest} to fp-${digest}-16 is taken; reject or supersede old lessons of this failure`))
  })

/**
 * Records a failure (and, when no live lesson carries its fingerprint, proposes the candidate it
 * is the first observation of). Never fails.
 *
 * @since 0.3.0
 * @category constructors
 */
export const failed = (input: Failed): Effect.Effect<void> =>
  withLessons(`the ${input.category.replaceAll("_", " ")} of ${input.stepId ?? input.acId ?? "the task"}`, (lessons, project) =>
    Effect.gen(function*() {
      const fingerprint = Fingerprint.of({
        subject: clip(input.stepId ?? input.acId ?? input.task.taskId, 128, "task"),
        ending: input.ending,
        text: input.text,
        locations: { workspaceRoot: project.root, homeDir: os.homedir() }
      })
      const failure: Lesson.Failure = {
        runId: input.runId,
        attempt: input.attempt,
        projectId: project.project.projectId,
        taskId: input.task.taskId,
        workspaceId: project.workspaceId,
        phase: input.phase,
        stepId: input.stepId,
        acId: input.acId,
        trigger: clip(input.trigger, Lesson.limits.summary, "(no description)"),
        wrongAssumption: null,
        actualRule: null,
        category: input.category,
        fingerprint,
        evidenceRefs: input.evidenceRefs.filter((ref) => ref.length <= Lesson.limits.ref && !ref.includes("\n")).slice(0, Lesson.limits.evidenceRefs),
        at: yield* Clock.currentTimeMillis
      }
      const recorded = yield* lessons.recordFailure({ actor: input.actor, failure })
      if (recorded.length > 0) return
      const lessonId = yield* freeId(lessons, fingerprint.digest)
      yield* lessons.propose({ actor: input.actor, lessonId, body: candidateOf(input, failure), observed: failure }).pipe(
        // Another process failing the same way proposed it first: this failure is observed on it.
        Effect.catchIf((error) => error._tag === "@ratchet/kernel/LessonCommandRefused" && error.code === "lesson_exists", () => Effect.void)
      )
      yield* lessons.recordFailure({ actor: input.actor, failure })
    }))

/**
 * A verification pass's failures: every criterion judged FAIL or INDETERMINATE (and NOT_RUN with
 * evidence: a check that could not start), each one failure of the pass's run.
 *
 * @since 0.3.0
 * @category constructors
 */
export const verificationEnded = (input: {
  readonly actor: Event.Actor
  readonly task: Task.Task
  readonly runId: string
  readonly results: ReadonlyArray<{
    readonly acId: string
    readonly verdict: { readonly verdict: string; readonly evidenceRefs: ReadonlyArray<string> }
    readonly judgements: ReadonlyArray<{ readonly verifier: string; readonly verdict: string; readonly reason: string }>
  }>
}): Effect.Effect<void> =>
  Effect.forEach(input.results, (result) => {
    const verdict = result.verdict.verdict
    if (verdict !== "FAIL" && verdict !== "INDETERMINATE" && !(verdict === "NOT_RUN" && result.verdict.evidenceRefs.length > 0)) return Effect.void
    const outcome = input.task.spec?.spec.acceptanceCriteria.find((ac) => ac.id === result.acId)?.outcome ?? result.acId
    return failed({
      actor: input.actor,
      task: input.task,
      runId: input.runId,
      phase: "VERIFYING",
      category: verdict === "FAIL" ? "verification_failed" : "verification_indeterminate",
      attempt: null,
      stepId: null,
      acId: result.acId,
      trigger: `verifying ${result.acId}: ${outcome}`,
      ending: { _tag: "Verdict", verdict },
      text: result.judgements.map((judgement) => `${judgement.verifier} ${judgement.verdict}: ${judgement.reason}`).join("\n"),
      evidenceRefs: result.verdict.evidenceRefs
    })
  }, { discard: true })

/** What step `stepId` of `task`'s plan runs, for a failure's trigger. */
const stepCommand = (task: Task.Task, stepId: string): string =>
  task.plan?.plan.steps.find((step) => step.id === stepId)?.run?.command ?? "its work"

/**
 * A step's command that failed (exit, signal or timeout) in run `runId`: the failure the successor
 * budget fingerprints, over the same output. Never fails.
 *
 * @since 0.3.0
 * @category constructors
 */
export const stepFailed = (ran: RunStep.Ran, context: { readonly actor: Event.Actor; readonly task: Task.Task; readonly runId: string }): Effect.Effect<void> => {
  const { ended } = ran
  const output = `${Buffer.from(ended.stdout).toString("utf8")}\n${Buffer.from(ended.stderr).toString("utf8")}`
  return failed({
    actor: context.actor,
    task: context.task,
    runId: context.runId,
    phase: "RUNNING",
    category: "step_failed",
    attempt: ran.attempt,
    stepId: ran.stepId,
    acId: null,
    trigger: `running step ${ran.stepId}: ${stepCommand(context.task, ran.stepId)}`,
    ending: ended.timedOut
      ? { _tag: "TimedOut" }
      : ended.exitCode !== null
      ? { _tag: "Exit", code: ended.exitCode }
      : { _tag: "Signal", signal: ended.signal },
    text: ended.spawnError ?? output,
    evidenceRefs: [ran.stdoutRef, ran.stderrRef].flatMap((ref) => (ref === null ? [] : [ref]))
  })
}

/**
 * An attempt recovery left Indeterminate (its side effect was dispatched and nobody can tell
 * whether it happened). Never fails.
 *
 * @since 0.3.0
 * @category constructors
 */
export const attemptIndeterminate = (input: {
  readonly actor: Event.Actor
  readonly task: Task.Task
  readonly runId: string
  readonly stepId: string
  readonly attempt: number
  readonly intentId: string
  readonly why: string
}): Effect.Effect<void> =>
  failed({
    actor: input.actor,
    task: input.task,
    runId: input.runId,
    phase: "RUNNING",
    category: "attempt_indeterminate",
    attempt: input.attempt,
    stepId: input.stepId,
    acId: null,
    trigger: `recovering step ${input.stepId} after its runner died: ${stepCommand(input.task, input.stepId)}`,
    ending: { _tag: "Indeterminate" },
    text: input.why,
    evidenceRefs: [input.intentId]
  })

/**
 * A completed task's success: its run, the paths its steps changed (those inside the repository),
 * and what it was shown (the store adds the lessons recorded as shown to the run). Never fails.
 *
 * @since 0.3.0
 * @category constructors
 */
export const completed = (input: {
  readonly task: Task.Task
  readonly runId: string
  readonly changedPaths: ReadonlyArray<string>
}): Effect.Effect<void> =>
  withLessons(`the completion of ${input.task.taskId}`, (lessons, project) =>
    Effect.gen(function*() {
      const paths = [...new Set(input.changedPaths)]
        .filter((path) => path.length <= Lesson.limits.path && Glob.problem(path) === undefined && !hiddenOne.test(path))
        .slice(0, Lesson.limits.paths)
      yield* lessons.recordSuccess({
        actor: system,
        exposure: {
          runId: input.runId,
          projectId: project.project.projectId,
          taskId: input.task.taskId,
          workspaceId: project.workspaceId,
          shown: [],
          assisted: false,
          // A completion passed the completion gate: verified work, the evidence a success needs.
          eligible: true,
          scope: { paths, taskType: input.task.spec?.spec.taskType ?? null },
          at: yield* Clock.currentTimeMillis
        }
      })
    }))
