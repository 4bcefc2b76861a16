/**
 * One agent step of a run, between the two writes that bracket it (ADR 0039): its host started
 * headless after the attempt's start and the dispatch of its one intent ("the agent runs") are
 * committed, exactly as a command step's process is (`RunStep`, `StepProcess`): in the workspace,
 * in its own process group with a pid file beside its output, killed as a group at the step's
 * timeout, a cancel or a lost lease, its stdout and stderr in files, not pipes, so that a runner
 * killed with SIGKILL leaves the agent running to its end, for recovery to wait for.
 *
 * Once it ended, its stdout is read as the host's stream (`AgentHost.Decoder`), and the next write
 * records, in one transaction with the step boundary: the stream's turn events on the attempt
 * (`RecordTurn`, the kernel keeps those that change a flag), the process's exit (`CommandExited`)
 * with the intent's resolution and the attempt's end as `AgentOutcome` decides it, what the host
 * reported (`AgentReported`: session, model, usage, cost, result, counts, the transcript's blob),
 * and what the task does about it: a cancel, a block for a tree that could not be read or a scope
 * violation, a failure counted against the successor budget.
 *
 * Nothing here writes to the store; the runner appends what {@link finish} returns.
 *
 * @since 0.4.0
 */
import * as fs from "node:fs"
import type * as AgentStep from "@ratchet/kernel/AgentStep"
import * as Attempt from "@ratchet/kernel/Attempt"
import type * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import type * as Plan from "@ratchet/kernel/Plan"
import * as Progress from "@ratchet/kernel/Progress"
import * as Turn from "@ratchet/kernel/Turn"
import type * as Task from "@ratchet/kernel/Task"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as AgentEnvelope from "./AgentEnvelope.js"
import * as AgentFence from "./AgentFence.js"
import * as AgentHooksRan from "./AgentHooksRan.js"
import type * as AgentHooks from "./AgentHooks.js"
import type * as AgentHost from "./AgentHost.js"
import * as AgentOutcome from "./AgentOutcome.js"
import * as RunRequest from "./RunRequest.js"
import * as RunStep from "./RunStep.js"
import * as StepProcess from "./StepProcess.js"
import * as StepScope from "./StepScope.js"
import * as Tracing from "./Tracing.js"
import * as WorkTree from "./WorkTree.js"

/**
 * The timeout of an agent step that names none: an unattended agent is always bounded.
 *
 * @since 0.4.0
 * @category models
 */
export const defaultTimeoutSeconds = 3_600

/**
 * The most of the host's stdout kept as the transcript (the first and last halves beyond it).
 *
 * @since 0.4.0
 * @category models
 */
export const maxTranscriptBytes = 64 * 1024 * 1024

/** How often a long step reports that it is still running, and looks for a cancel. */
const tickMs = 5_000
const requestPollMs = 200

/**
 * An agent step's timeout, in seconds.
 *
 * @since 0.4.0
 * @category constructors
 */
export const timeoutOf = (step: Plan.Step): number => step.agent?.timeoutSeconds ?? defaultTimeoutSeconds

/**
 * What the attempt's intent says it does (the agent's host and the first line of its prompt).
 *
 * @since 0.4.0
 * @category constructors
 */
export const describe: (agent: AgentStep.Agent) => string = AgentEnvelope.describe

/**
 * An agent that ran: the process as a command's (`RunStep.Ran`, whose stdout is the transcript),
 * and what its stream said.
 *
 * @since 0.4.0
 * @category models
 */
export interface Ran extends RunStep.Ran {
  readonly agent: {
    readonly host: AgentStep.Host
    readonly decoded: AgentHost.Decoded
    readonly end: AgentOutcome.Outcome
    readonly transcriptRef: string | null
    /** Whether the host was given the run's hooks (ADR 0040): its calls must then be intents. */
    readonly hooked?: boolean | undefined
    /** The calls its stream shows that ran without the hooks (`AgentHooksRan`); none when absent. */
    readonly unfenced?: ReadonlyArray<string> | undefined
  }
}

/**
 * `ran` when `calls` ran without the run's hooks (`AgentHooksRan.unrecorded`): its attempt fails,
 * whatever the stream said, with the reason, and {@link finish} blocks the task for a person. The
 * same `ran` when there are none.
 *
 * @since 0.4.0
 * @category constructors
 */
export const withUnfenced = (ran: Ran, calls: ReadonlyArray<string>): Ran =>
  calls.length === 0 || ran.agent.end.outcome === "Cancelled"
    ? ran
    : { ...ran, agent: { ...ran.agent, end: { outcome: "Failed", reason: AgentHooksRan.reasonOf(calls) }, unfenced: calls } }

/**
 * Whether `ran` is an agent step's.
 *
 * @since 0.4.0
 * @category guards
 */
export const isAgent = (ran: RunStep.Ran): ran is Ran => "agent" in ran

const isExecutable = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.X_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

const isTurnEvent = Schema.is(Turn.Event)

const count = (n: number): number | null => (Number.isFinite(n) && n >= 0 ? n : null)
const whole = (n: number | null): number | null => (n !== null && Number.isSafeInteger(n) && n >= 0 ? n : null)
const name = (text: string | null): string | null => (text === null || text.length === 0 ? null : text.slice(0, 4096))

/**
 * What a decoder said, in the bounds `AgentReported` holds it to: a decoder is given to the runner
 * and may be anyone's, and the agent's end must be recorded whatever it said, so a value out of
 * bounds is left out (null) rather than failing the write.
 */
const reported = (decoded: AgentHost.Decoded) => {
  const usage = decoded.usage
  const input = usage === null ? null : count(usage.inputTokens)
  const output = usage === null ? null : count(usage.outputTokens)
  return {
    sessionId: name(decoded.sessionId),
    model: name(decoded.model),
    usage: usage === null || input === null || output === null
      ? null
      : {
        inputTokens: input,
        outputTokens: output,
        cachedInputTokens: usage.cachedInputTokens === null ? null : count(usage.cachedInputTokens),
        cacheCreationInputTokens: usage.cacheCreationInputTokens === null ? null : count(usage.cacheCreationInputTokens)
      },
    costUsd: decoded.costUsd === null ? null : count(decoded.costUsd),
    result: decoded.result === null ? null : {
      ok: decoded.result.ok,
      subtype: name(decoded.result.subtype) ?? "unknown",
      text: decoded.result.text === null ? null : decoded.result.text.slice(0, 65_536),
      turns: whole(decoded.result.turns)
    },
    lines: whole(decoded.lines) ?? 0,
    malformedLines: whole(decoded.malformedLines) ?? 0,
    unknownEvents: whole(decoded.unknownEvents) ?? 0
  }
}

/** A stream with nothing in it: what a host that never started said. */
const silent: AgentHost.Decoded = {
  turns: [],
  sessionId: null,
  model: null,
  usage: null,
  costUsd: null,
  result: null,
  errors: [],
  lines: 0,
  malformedLines: 0,
  unknownEvents: 0
}

/**
 * The stream as `decoder` reads it. A decoder must never throw; one that does is read as a stream
 * without the host's result (the attempt fails), never as the runner's crash after the agent ran.
 */
const read = (decoder: AgentHost.Decoder, text: string): AgentHost.Decoded => {
  try {
    return decoder.decode(text)
  } catch (error) {
    // Nothing it read counts: every line is unread, as a malformed one is.
    const lines = text.split("\n").filter((line) => line.trim() !== "").length
    return {
      ...silent,
      lines,
      malformedLines: lines,
      errors: [`the stream reader failed: ${String(error instanceof Error ? error.message : error).slice(0, 500)}`]
    }
  }
}

/**
 * Runs agent step `step` as attempt `attempt`, whose start and dispatch (intent `intentId`) are
 * committed, until its host ends, is cancelled, times out or the lease is lost; then reads its
 * stream with `decoder`, observes the tree and stores the transcript.
 *
 * @since 0.4.0
 * @category constructors
 */
export const execute = (
  context: RunStep.Context,
  input: {
    readonly step: Plan.Step
    readonly task: Task.Task
    readonly attempt: number
    readonly intentId: string
    /** The host's stream reader; without one the host is not started and the attempt fails. */
    readonly decoder: AgentHost.Decoder | undefined
    /** How the host is given the run's hooks (ADR 0040); without one it runs without them. */
    readonly hooks?: AgentHooks.Install | undefined
    /** The attempt's capability (`AgentFence`), given to the agent only, in its environment. */
    readonly capability?: string | undefined
    /** The verification failure this attempt revises, for its envelope (ADR 0041); null or absent otherwise. */
    readonly revision?: AgentEnvelope.Revision | null | undefined
    /** The lessons that apply, recorded as shown to the attempt (`AgentLessons`); none when absent. */
    readonly lessons?: ReadonlyArray<AgentEnvelope.LessonInput> | undefined
    readonly before: WorkTree.Observation
    readonly started: () => void
    readonly exited: () => void
  }
): Effect.Effect<Ran, never, BlobStore.BlobStore> =>
  Effect.gen(function*() {
    const { attempt, intentId, step } = input
    const agent = step.agent as AgentStep.Agent
    const blobs = yield* BlobStore.BlobStore
    const timeoutSeconds = timeoutOf(step)
    const envelope = AgentEnvelope.make(input.task, step, attempt, input.revision ?? null, input.lessons ?? [])
    // The run's hooks for the host's session (ADR 0040): a host that must have them and cannot is not started.
    const hooked = input.hooks === undefined ? null : input.hooks()
    const program = typeof envelope === "string"
      ? { problem: envelope }
      : input.decoder === undefined
      ? { problem: `this runner has no reader for the ${agent.host} stream` }
      : hooked?._tag === "Problem"
      ? { problem: hooked.problem }
      : AgentEnvelope.programOf(agent.host, process.env, isExecutable)
    const startedAt = yield* Clock.currentTimeMillis
    let cancelled: RunRequest.Request | null = null
    let ended: StepProcess.Exit
    if ("problem" in program || typeof envelope === "string") {
      // Nothing was started: the attempt fails with the reason, as a command that cannot start does.
      input.started()
      ended = {
        exitCode: null,
        signal: null,
        timedOut: false,
        cancelled: false,
        spawnError: "problem" in program ? program.problem : "no envelope",
        durationMs: 0,
        stdout: new Uint8Array(),
        stderr: new Uint8Array()
      }
    } else {
      const child = StepProcess.start({
        command: AgentEnvelope.describe(agent),
        argv: { file: program.file, args: [...(hooked?._tag === "Args" ? hooked.args : []), ...AgentEnvelope.argsOf(agent, AgentEnvelope.promptOf(envelope))] },
        capturedBytes: maxTranscriptBytes,
        cwd: context.root,
        timeoutMs: timeoutSeconds * 1000,
        env: yield* Tracing.childEnv({
          ...StepProcess.environment({ taskId: context.taskId, stepId: step.id, attempt }),
          ...AgentEnvelope.environmentOf(envelope),
          ...(input.capability === undefined ? {} : { [AgentFence.capabilityVariable]: input.capability })
        }),
        directory: context.outputDir,
        name: intentId,
        // The live view shows what the agent says on stderr; its stdout is the stream, read at its end.
        onOutput: (stream, text) => (stream === "stderr" ? context.onOutput(stream, text) : undefined),
        // In the loop the host runs sandboxed (ADR 0043): it cannot read the runner that holds the verifier's key.
        sandbox: context.sandbox
      })
      input.started()
      yield* Tracing.event("child.started", { "ratchet.intent": intentId, "ratchet.agent.host": agent.host })
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
      ended = yield* Effect.raceFirst(child.exit, Effect.zipRight(watch, Effect.never)).pipe(
        Effect.onInterrupt(() => Effect.sync(() => child.cancel()))
      )
    }
    input.exited()
    const decoded = ended.stdout.length === 0 || input.decoder === undefined ? silent : read(input.decoder, Buffer.from(ended.stdout).toString("utf8"))
    const end = AgentOutcome.of({ ...ended, timeoutSeconds }, decoded)
    yield* Tracing.event("child.exited", {
      "ratchet.intent": intentId,
      "process.exit.code": ended.exitCode ?? -1,
      "ratchet.timed_out": ended.timedOut,
      "ratchet.duration_ms": ended.durationMs,
      "ratchet.agent.outcome": end.outcome
    })
    // The agent's end is known now and must be recorded whatever fails next (as a command's).
    const after = yield* Effect.either(WorkTree.observe(context.root))
    const changed = Either.isRight(after)
      ? yield* Effect.either(WorkTree.changedBetween(context.root, input.before, after.right))
      : Either.left(after.left)
    if (Either.isRight(after)) yield* StepScope.storeTree(after.right)
    const put = (bytes: Uint8Array) =>
      bytes.length === 0 ? Effect.succeed(null) : blobs.put(bytes).pipe(Effect.map((ref): string | null => ref), Effect.catchAll(() => Effect.succeed(null)))
    const transcriptRef = yield* put(ended.stdout)
    return {
      stepId: step.id,
      attempt,
      intentId,
      ended,
      changedPaths: Either.getOrElse(changed, () => [] as ReadonlyArray<string>),
      repositories: WorkTree.repositoriesAmong(context.root, Either.getOrElse(changed, () => [] as ReadonlyArray<string>)),
      after: Either.isLeft(changed) ? Either.left(changed.left.message) : Either.right(Either.getOrThrow(after)),
      stdoutRef: transcriptRef,
      stderrRef: yield* put(ended.stderr),
      cancelled: cancelled as RunRequest.Request | null,
      agent: { host: agent.host, decoded, end, transcriptRef, hooked: hooked?._tag === "Args" }
    } satisfies Ran
  })

/**
 * The attempt's end, as the attempt machine names its cause.
 *
 * @since 0.4.0
 * @category constructors
 */
export const endOf = (ran: RunStep.Ran): Attempt.State => {
  if (!isAgent(ran)) return RunStep.endOf(ran)
  const outcome = ran.agent.end.outcome
  return Either.getOrThrow(Attempt.transition(
    "Running",
    outcome === "Cancelled" ? Attempt.cancel(true) : outcome === "TimedOut" ? Attempt.timeOut : outcome === "Succeeded" ? Attempt.succeed : Attempt.fail
  ))
}

/**
 * What the run records about a step that ended: an agent's as the module comment says, a
 * command's as `RunStep.finish` does.
 *
 * @since 0.4.0
 * @category constructors
 */
export const finish = (ran: RunStep.Ran, context: Parameters<typeof RunStep.finish>[1]): ReadonlyArray<Decider.Command | Event.Event> => {
  if (!isAgent(ran)) return RunStep.finish(ran, context)
  const { actor, at, runId, taskId } = context
  const { ended, stepId } = ran
  const { decoded, end } = ran.agent
  const stderr = Buffer.from(ended.stderr).toString("utf8")
  const ok = end.outcome === "Succeeded"
  const tail = `${end.reason ?? decoded.result?.text ?? ""}\n${stderr}`.slice(-4000)
  const items: Array<Decider.Command | Event.Event> = [
    { _tag: "RecordTurn", actor, at, runId, stepId, attempt: ran.attempt, events: decoded.turns.filter(isTurnEvent) },
    {
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
        outputTail: tail,
        changedPaths: ran.changedPaths
      },
      outcome: end.outcome,
      resultRefs: [ran.stdoutRef, ran.stderrRef].flatMap((ref) => (ref === null ? [] : [ref]))
    },
    {
      _tag: "AgentReported",
      version: 1,
      actor,
      at,
      intentId: ran.intentId,
      runId,
      stepId,
      attempt: ran.attempt,
      host: ran.agent.host,
      ...reported(decoded),
      transcriptRef: ran.agent.transcriptRef,
      reason: end.reason
    }
  ]
  if (ran.cancelled !== null) {
    items.push({ _tag: "Cancel", actor: ran.cancelled.actor, at, reason: ran.cancelled.reason })
    return items
  }
  const unfenced = ran.agent.unfenced ?? []
  if (unfenced.length > 0) {
    // Fail closed: nothing the agent did was judged or recorded, so a person decides what stands.
    items.push(Progress.decisionNeeded(
      { actor, at },
      `Agent step ${stepId} ran without the run's hooks: ${AgentHooksRan.reasonOf(unfenced)}. Find what switched them off (the project's .claude/ settings, Claude Code's managed settings or its version), check what the agent changed, then: ratchet unblock ${taskId} --to RUNNING --resolution "…"`,
      [ran.intentId]
    ))
    return items
  }
  if (Either.isLeft(ran.after)) {
    items.push(Progress.decisionNeeded(
      { actor, at },
      `Agent step ${stepId} ended (${end.outcome}) but the work tree could not be read afterwards, so its scope was not checked: ${ran.after.left}. Fix the checkout, check what the agent changed, then: ratchet unblock ${taskId} --to RUNNING --resolution "…"`,
      [ran.intentId]
    ))
    return items
  }
  // The hosts' configuration too, whatever the scope allows: the next agent's host reads it (StepScope).
  const violations = StepScope.ranViolations(ran.changedPaths, context.allowedScope, context.forbiddenScope, ran.repositories)
  if (violations.length > 0) {
    items.push({ _tag: "Block", actor, at, blocker: StepScope.blocker(taskId, stepId, violations) })
    return items
  }
  if (!ok) {
    // An agent that could not be started fingerprints as that, with why, not as an unknown signal.
    const fingerprint = Progress.fingerprint({
      stepId,
      exitCode: ended.exitCode,
      signal: ended.signal,
      timedOut: ended.timedOut,
      output: tail,
      notStarted: ended.spawnError !== null
    })
    items.push({
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
  return items
}
