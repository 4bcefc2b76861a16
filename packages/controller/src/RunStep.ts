/**
 * One command step of a run, between the two writes that bracket it: the child process started
 * after its start and dispatch are committed, watched for a cancel from another terminal or a lost
 * lease, and, once it ended, what the run records about it — the exit, the intent's resolution,
 * the attempt's end, and what the kernel decides about the task (a scope violation's block, a
 * failure to record, a person's cancel) — as the commands of the next write.
 *
 * Nothing here writes to the store: the runner appends what {@link finish} returns, with the step
 * boundary and the next step's start, as one transaction (ADR 0020).
 *
 * @since 0.2.0
 */
import * as Attempt from "@ratchet/kernel/Attempt"
import type * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import type * as Plan from "@ratchet/kernel/Plan"
import * as Progress from "@ratchet/kernel/Progress"
import type * as Task from "@ratchet/kernel/Task"
import type * as LeaseError from "@ratchet/lease/LeaseError"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ChildSandbox from "./ChildSandbox.js"
import * as RunRequest from "./RunRequest.js"
import * as StepProcess from "./StepProcess.js"
import * as StepScope from "./StepScope.js"
import * as Tracing from "./Tracing.js"
import * as WorkTree from "./WorkTree.js"

/** How often a long step reports that it is still running (elapsed time). */
const tickMs = 5_000

/** How often a running child's runner looks for a cancel request. */
const requestPollMs = 200

/**
 * Where a step runs and whom it tells.
 *
 * @since 0.2.0
 * @category models
 */
export interface Context {
  readonly root: string
  readonly taskId: string
  /** `$RATCHET_HOME`, where cancel requests from other terminals arrive. */
  readonly home: string
  /** Where step commands write their output and pid files on this machine. */
  readonly outputDir: string
  readonly epoch: number
  /** Completed when the lease is lost: the running command is stopped. */
  readonly lost: Deferred.Deferred<never, LeaseError.LeaseLost>
  readonly onOutput: (stream: "stdout" | "stderr", text: string) => void
  readonly onTick: (elapsedMs: number) => void
  /** The loop's sandbox every child runs in (ADR 0043), or none outside the loop. */
  readonly sandbox?: ChildSandbox.Sandbox | null | undefined
}

/**
 * A command that ran: how it ended, what it changed in the work tree (against the tree observed
 * before it), the tree after it, and its stored output.
 *
 * @since 0.2.0
 * @category models
 */
export interface Ran {
  readonly stepId: string
  readonly attempt: number
  readonly intentId: string
  readonly ended: StepProcess.Exit
  readonly changedPaths: ReadonlyArray<string>
  /** The changed paths that are a git repository of their own (`WorkTree.repositoriesAmong`); none when absent. */
  readonly repositories?: ReadonlyArray<string> | undefined
  /** The tree after the command, or why it could not be read (then its scope was not checked). */
  readonly after: Either.Either<WorkTree.Observation, string>
  readonly stdoutRef: string | null
  readonly stderrRef: string | null
  /** A person's cancel that stopped it, or null. */
  readonly cancelled: RunRequest.Request | null
}

/**
 * Runs `command` as attempt `attempt` of `step`, whose start and dispatch (intent `intentId`) are
 * committed, until it ends, is cancelled or the lease is lost; then observes the tree and stores
 * the output. `started` is called once the child process exists, `exited` once it has ended and
 * before anything about its end is read.
 *
 * @since 0.2.0
 * @category constructors
 */
export const execute = (
  context: Context,
  input: {
    readonly step: Plan.Step
    readonly command: string
    readonly attempt: number
    readonly intentId: string
    /** The tree before the command (the last boundary's). */
    readonly before: WorkTree.Observation
    readonly started: () => void
    readonly exited: () => void
  }
): Effect.Effect<Ran, never, BlobStore.BlobStore> =>
  Effect.gen(function*() {
    const { attempt, command, intentId, step } = input
    const blobs = yield* BlobStore.BlobStore
    const child = StepProcess.start({
      command,
      cwd: context.root,
      timeoutMs: step.timeoutSeconds === undefined ? null : step.timeoutSeconds * 1000,
      // A step that traces itself joins its attempt's span (TRACEPARENT), not the command's.
      env: yield* Tracing.childEnv(StepProcess.environment({ taskId: context.taskId, stepId: step.id, attempt })),
      directory: context.outputDir,
      name: intentId,
      onOutput: context.onOutput,
      sandbox: context.sandbox
    })
    input.started()
    yield* Tracing.event("child.started", { "ratchet.intent": intentId })
    // While the child runs, a cancel from another terminal (or a lost lease) stops it.
    let cancelled: RunRequest.Request | null = null
    const startedAt = yield* Clock.currentTimeMillis
    let lastTick = startedAt
    const watch = Effect.gen(function*() {
      while (true) {
        yield* Effect.sleep(Duration.millis(requestPollMs))
        const now = yield* Clock.currentTimeMillis
        if (now - lastTick >= tickMs) {
          lastTick = now
          context.onTick(now - startedAt)
        }
        const request = RunRequest.read(context.home, context.taskId)
        if (request !== null && request.kind === "cancel" && RunRequest.isFor(request, context.epoch)) {
          cancelled = request
          child.cancel()
          return
        }
        if (yield* Deferred.isDone(context.lost)) {
          child.cancel()
          return
        }
      }
    })
    const ended = yield* Effect.raceFirst(child.exit, Effect.zipRight(watch, Effect.never)).pipe(
      Effect.onInterrupt(() => Effect.sync(() => child.cancel()))
    )
    input.exited()
    yield* Tracing.event("child.exited", {
      "ratchet.intent": intentId,
      "process.exit.code": ended.exitCode ?? -1,
      "ratchet.timed_out": ended.timedOut === true,
      "ratchet.duration_ms": ended.durationMs
    })
    // The command's end is known now and must be recorded whatever fails next: a work tree that
    // cannot be read blocks the task (its scope cannot be checked), and output that cannot be
    // stored keeps its tail inline.
    const after = yield* Effect.either(WorkTree.observe(context.root))
    const changed = Either.isRight(after)
      ? yield* Effect.either(WorkTree.changedBetween(context.root, input.before, after.right))
      : Either.left(after.left)
    if (Either.isRight(after)) {
      // The tree itself, under the reference that equals the boundary's `dirtyDigest`: a manual
      // step's worker is held to the scope against it when the step is marked done (StepScope).
      yield* StepScope.storeTree(after.right)
    }
    const put = (bytes: Uint8Array) =>
      bytes.length === 0 ? Effect.succeed(null) : blobs.put(bytes).pipe(Effect.map((ref): string | null => ref), Effect.catchAll(() => Effect.succeed(null)))
    return {
      stepId: step.id,
      attempt,
      intentId,
      ended,
      changedPaths: Either.getOrElse(changed, () => [] as ReadonlyArray<string>),
      repositories: WorkTree.repositoriesAmong(context.root, Either.getOrElse(changed, () => [] as ReadonlyArray<string>)),
      after: Either.isLeft(changed) ? Either.left(changed.left.message) : Either.right(Either.getOrThrow(after)),
      stdoutRef: yield* put(ended.stdout),
      stderrRef: yield* put(ended.stderr),
      cancelled: cancelled as RunRequest.Request | null
    } satisfies Ran
  })

/**
 * Whether the command succeeded: exit 0, in time, not cancelled, started at all.
 *
 * @since 0.2.0
 * @category predicates
 */
export const succeeded = (ran: Ran): boolean =>
  ran.ended.exitCode === 0 && !ran.ended.timedOut && !ran.ended.cancelled && ran.ended.spawnError === null

/**
 * The attempt's end, as the attempt machine names its cause.
 *
 * @since 0.2.0
 * @category constructors
 */
export const endOf = (ran: Ran): Attempt.State =>
  Either.getOrThrow(Attempt.transition(
    "Running",
    ran.ended.cancelled ? Attempt.cancel(true) : ran.ended.timedOut ? Attempt.timeOut : succeeded(ran) ? Attempt.succeed : Attempt.fail
  ))

/**
 * What the run records about a command that ended, decided against `task` (the task as the write
 * reads it): the step's end (`FinishStep`), then what the task must do about it — a person's
 * cancel, a block for a tree that could not be read or a scope violation (the hosts'
 * configuration included, whatever the scope: `StepScope.ranViolations`), a failure counted
 * against the retry budget. A successful step in scope asks nothing of the task.
 *
 * @since 0.2.0
 * @category constructors
 */
export const finish = (
  ran: Ran,
  context: {
    readonly runId: string
    readonly taskId: string
    readonly actor: Event.Actor
    readonly at: number
    readonly task: Task.Task
    readonly allowedScope: ReadonlyArray<string>
    readonly forbiddenScope: ReadonlyArray<string>
  }
): ReadonlyArray<Decider.Command> => {
  const { actor, at, runId, taskId } = context
  const { ended, stepId } = ran
  const output = `${Buffer.from(ended.stdout).toString("utf8")}\n${Buffer.from(ended.stderr).toString("utf8")}`
  const ok = succeeded(ran)
  const commands: Array<Decider.Command> = [{
    _tag: "FinishStep",
    actor,
    at,
    runId,
    stepId,
    attempt: ran.attempt,
    intentId: ran.intentId,
    exit: {
      exitCode: ended.exitCode,
      signal: ended.signal,
      durationMs: ended.durationMs,
      timedOut: ended.timedOut,
      stdoutRef: ran.stdoutRef,
      stderrRef: ran.stderrRef,
      outputTail: ended.spawnError === null ? output.slice(-4000) : `could not start: ${ended.spawnError}`,
      changedPaths: ran.changedPaths
    },
    outcome: ended.cancelled ? "Cancelled" : ended.timedOut ? "TimedOut" : ok ? "Succeeded" : "Failed",
    resultRefs: [ran.stdoutRef, ran.stderrRef].flatMap((ref) => (ref === null ? [] : [ref]))
  }]
  if (ran.cancelled !== null) {
    commands.push({ _tag: "Cancel", actor: ran.cancelled.actor, at, reason: ran.cancelled.reason })
    return commands
  }
  if (Either.isLeft(ran.after)) {
    commands.push(Progress.decisionNeeded(
      { actor, at },
      `Step ${stepId} ended (${ended.exitCode === null ? "killed" : `exit ${ended.exitCode}`}) but the work tree could not be read afterwards, so its scope was not checked: ${ran.after.left}. Fix the checkout, check what the step changed, then: ratchet unblock ${taskId} --to RUNNING --resolution "…"`,
      [ran.intentId]
    ))
    return commands
  }
  // The hosts' configuration too, whatever the scope allows: the next agent's host reads it (StepScope).
  const violations = StepScope.ranViolations(ran.changedPaths, context.allowedScope, context.forbiddenScope, ran.repositories)
  if (violations.length > 0) {
    commands.push({ _tag: "Block", actor, at, blocker: StepScope.blocker(taskId, stepId, violations) })
    return commands
  }
  if (!ok) {
    const fingerprint = Progress.fingerprint({
      stepId,
      exitCode: ended.exitCode,
      signal: ended.signal,
      timedOut: ended.timedOut,
      output: ended.spawnError ?? output,
      notStarted: ended.spawnError !== null
    })
    commands.push({
      _tag: "RecordAttemptFailure",
      actor,
      at,
      stepId,
      attempt: ran.attempt,
      fingerprint,
      // The same failure again is caught first (repeated_failure); a new one progressed.
      progressed: ran.changedPaths.length > 0 || !context.task.failureFingerprints.includes(fingerprint)
    })
  }
  return commands
}
