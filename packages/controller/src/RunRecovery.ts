/**
 * What a runner does first when it takes a task over: close every attempt a dead runner left open,
 * as the kernel's recovery table says (`Progress.recoveryOf`): an attempt with no dispatched intent
 * is cancelled cleanly; a dispatched, unresolved one is probed, re-run when idempotent, or left
 * Indeterminate with the task BLOCKED for a person to settle. A non-idempotent side effect is never
 * re-run silently.
 *
 * A dead runner's command may still be running on this machine: nothing about its effect is
 * decided before it ends (within its timeout, after which its group is killed). It is known by its
 * pid and start time, so a reused pid is neither waited on nor signalled, and a command that ended
 * under a stopped runner (a zombie nobody reaps) counts as ended at once (see `StepProcess.orphan`).
 * A dead runner's agent (an agent step's host, ADR 0039) is waited for the same way, within the
 * agent's timeout, and its attempt is then Indeterminate: an agent is never re-run.
 *
 * @since 0.2.0
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as Plan from "@ratchet/kernel/Plan"
import * as Progress from "@ratchet/kernel/Progress"
import type * as Run from "@ratchet/kernel/Run"
import type * as Task from "@ratchet/kernel/Task"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as ChildSandbox from "./ChildSandbox.js"
import * as RunAgentStep from "./RunAgentStep.js"
import type * as RunWriter from "./RunWriter.js"
import * as LessonFacts from "./LessonFacts.js"
import * as StepProcess from "./StepProcess.js"

/** How long recovery waits for a dead runner's command that is still running, when its step has no timeout. */
const orphanWaitSeconds = 600

/** The timeout of a recovery probe when its step declares none. */
const defaultProbeTimeoutMs = 60_000

/** How often recovery looks whether an orphaned command has ended. */
const pollMs = 200

/**
 * @since 0.2.0
 * @category models
 */
export interface Context {
  readonly root: string
  readonly taskId: string
  readonly actor: Event.Actor
  readonly outputDir: string
  readonly writer: RunWriter.Writer
  readonly onOrphan: (stepId: string, pgid: number) => void
  readonly onRecovered: (stepId: string, attempt: number, decision: Progress.Recovery["_tag"]) => void
  /** The loop's sandbox a probe runs in (ADR 0043), or none outside the loop. */
  readonly sandbox?: ChildSandbox.Sandbox | null | undefined
}

/** Waits for the orphaned command of `intentId` to end (killing its group past the step's timeout). */
const waitForOrphan = (context: Context, intentId: string, step: Plan.Step) =>
  Effect.gen(function*() {
    const pgid = StepProcess.orphan(context.outputDir, intentId)
    if (pgid === null) return
    context.onOrphan(step.id, pgid)
    // An agent step is bounded by its own timeout (or the default one), as its runner bounded it.
    const limit = (step.agent !== undefined ? RunAgentStep.timeoutOf(step) : step.timeoutSeconds ?? orphanWaitSeconds) * 1000
    const started = yield* Clock.currentTimeMillis
    // Looked up again each time, so the group is signalled only while it is still the command's.
    for (let running: number | null = pgid; running !== null; running = StepProcess.orphan(context.outputDir, intentId)) {
      if ((yield* Clock.currentTimeMillis) - started > limit) {
        StepProcess.killGroup(running)
        break
      }
      yield* Effect.sleep(Duration.millis(pollMs))
    }
  }).pipe(Effect.ensuring(Effect.sync(() => StepProcess.discard(context.outputDir, intentId))))

/** Runs the step's probe for `intentId`'s effect: what it says happened. */
const probe = (context: Context, step: Plan.Step, attempt: number, command: string, intentId: string) =>
  Effect.map(
    StepProcess.start({
      command,
      cwd: context.root,
      timeoutMs: step.timeoutSeconds === undefined ? defaultProbeTimeoutMs : step.timeoutSeconds * 1000,
      env: StepProcess.environment({ taskId: context.taskId, stepId: step.id, attempt }),
      directory: context.outputDir,
      name: `${intentId}.probe`,
      sandbox: context.sandbox
    }).exit,
    (ended) => ({
      verdict: ended.timedOut || ended.spawnError !== null ? "unknown" as const : Progress.probeVerdict(ended.exitCode),
      why: ended.timedOut ? "it timed out" : ended.spawnError ?? `exit ${ended.exitCode ?? ended.signal}`
    })
  )

/**
 * Closes every open attempt of run `runId` of `plan` (see the module comment), each in one write.
 *
 * @since 0.2.0
 * @category constructors
 */
export const recover = (context: Context, plan: Plan.Plan, runId: string) =>
  Effect.gen(function*() {
    const { actor, taskId, writer } = context
    for (const step of plan.steps) {
      const { attempts, intents } = rowsOf(writer.current().run, runId)
      const status = Progress.statusOf(step.id, attempts, intents)
      if (status._tag !== "Open") continue
      const attempt = status.attempt
      const own = intents.filter((intent) => intent.stepId === step.id && intent.attempt === attempt)
      const decision = Progress.recoveryOf(step, own)
      if (decision._tag === "AwaitWorker") continue
      if (decision._tag !== "CancelClean") yield* waitForOrphan(context, decision.intentId, step)
      const recoverWith = (recovery: Run.Recovery, note: string, blocked: (at: number) => ReadonlyArray<Task.Command> = () => []) =>
        writer.write((_read, at) => [
          { _tag: "RecoverAttempt", actor, at, runId, stepId: step.id, attempt, recovery, note: `recovered: ${note}` },
          ...blocked(at)
        ])
      const indeterminate = (intentId: string, why: string) =>
        recoverWith({ _tag: "Indeterminate", intentId }, `Indeterminate; ${why}`, (at) => [Progress.decisionNeeded(
          { actor, at },
          `Step ${step.id} was started and its runner died before recording the outcome (${why}). Check whether its effect happened, then: ratchet unblock ${taskId} --resolve ${step.id} succeeded|failed`,
          [intentId]
        )]).pipe(
          // An Indeterminate attempt teaches the lessons; recording it never changes the recovery.
          Effect.tap((written) => LessonFacts.attemptIndeterminate({ actor, task: written.task, runId, stepId: step.id, attempt, intentId, why }))
        )
      switch (decision._tag) {
        case "CancelClean":
          yield* recoverWith(
            { _tag: "CancelClean", reason: "the runner stopped before dispatching it; nothing external happened" },
            "the runner stopped before the side effect was dispatched; cancelled cleanly, a successor runs"
          )
          break
        case "Rerun":
          yield* recoverWith(
            { _tag: "Resolved", intentId: decision.intentId, outcome: "Failed" },
            "the side effect was dispatched and its outcome is unknown; the step is idempotent, so a successor re-runs it"
          )
          break
        case "Probe": {
          const probed = yield* probe(context, step, attempt, decision.command, decision.intentId)
          if (probed.verdict === "happened") {
            yield* recoverWith(
              { _tag: "Resolved", intentId: decision.intentId, outcome: "Succeeded" },
              "the probe exited 0, so the side effect happened; resolved as succeeded"
            )
          } else if (probed.verdict === "not_happened") {
            yield* recoverWith(
              { _tag: "Resolved", intentId: decision.intentId, outcome: "Failed" },
              "the probe exited 1, so the side effect did not happen; a successor runs"
            )
          } else {
            yield* indeterminate(decision.intentId, `the probe could not tell (${probed.why})`)
          }
          break
        }
        case "Indeterminate":
          yield* indeterminate(
            decision.intentId,
            step.agent !== undefined
              ? "an agent step is never re-run on recovery: its agent ran, and what it changed is for a person to check"
              : "the step is neither idempotent nor probed"
          )
          break
      }
      context.onRecovered(step.id, attempt, decision._tag)
    }
  })

/**
 * Run `runId`'s attempts and intents from the run's state.
 *
 * @since 0.2.0
 * @category constructors
 */
export const rowsOf = (state: Run.State, runId: string) => ({
  attempts: [...state.attempts.values()].filter((row) => row.runId === runId),
  intents: [...state.intents.values()].filter((row) => row.runId === runId)
})
