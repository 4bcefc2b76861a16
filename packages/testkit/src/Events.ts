/**
 * Event builders for tests of anything that stores Ratchet events.
 *
 * Each builder returns a complete, valid kernel `Event.Event` of the current version with a
 * plausible actor and a logical time, so a test states only what it is about:
 *
 * ```ts
 * const events = [Events.taskCreated({ taskId: "t-1", projectId: "p-1" }), Events.leaseAcquired(1, Events.owner("a"))]
 * ```
 *
 * Times are logical (`at` defaults to a fixed value) because stores never interpret them; nothing
 * here reads a clock or generates randomness, so a failing test replays the same events.
 *
 * @since 0.1.0
 */
import type * as Digest from "@ratchet/kernel/Digest"
import * as Event from "@ratchet/kernel/Event"
import type * as Turn from "@ratchet/kernel/Turn"

/**
 * The time every builder uses unless told otherwise.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultAt = 1_000

/**
 * One actor of each kind.
 *
 * @since 0.1.0
 * @category constructors
 */
export const actors = {
  user: { kind: "user", id: "alice" },
  agent: { kind: "agent", id: "agent-1" },
  runner: { kind: "runner", id: "runner-1" },
  verifier: { kind: "verifier", id: "verifier-1" },
  system: { kind: "system", id: "ratchet" }
} as const satisfies Record<string, Event.Actor>

/**
 * What every builder accepts besides its own fields.
 *
 * @since 0.1.0
 * @category models
 */
export interface Meta {
  readonly actor?: Event.Actor
  readonly at?: number
}

type Of<Tag extends Event.Event["_tag"]> = Extract<Event.Event, { readonly _tag: Tag }>

const build = <Tag extends Event.Event["_tag"]>(
  tag: Tag,
  actor: Event.Actor,
  meta: Meta,
  fields: Omit<Of<Tag>, "_tag" | "version" | "actor" | "at">
): Of<Tag> =>
  ({ _tag: tag, version: Event.catalogue[tag], actor: meta.actor ?? actor, at: meta.at ?? defaultAt, ...fields }) as unknown as Of<Tag>

/**
 * The event that creates a task stream. Stores key the stream by its task id.
 *
 * @since 0.1.0
 * @category constructors
 */
export const taskCreated = (
  input: { readonly taskId: string; readonly projectId: string; readonly goal?: string; readonly slug?: string },
  meta: Meta = {}
): Of<"TaskCreated"> =>
  build("TaskCreated", actors.user, meta, {
    taskId: input.taskId,
    projectId: input.projectId,
    goal: input.goal ?? "Add a --json flag to the status command",
    slug: input.slug ?? "json-flag"
  })

/**
 * @since 0.1.0
 * @category constructors
 */
export const interviewBegun = (meta: Meta = {}): Of<"InterviewBegun"> => build("InterviewBegun", actors.user, meta, {})

/**
 * @since 0.1.0
 * @category constructors
 */
export const questionAsked = (
  questionId: string,
  options: { readonly text?: string; readonly blocking?: boolean } = {},
  meta: Meta = {}
): Of<"QuestionAsked"> =>
  build("QuestionAsked", actors.agent, meta, {
    questionId,
    text: options.text ?? `Question ${questionId}?`,
    blocking: options.blocking ?? false
  })

/**
 * @since 0.1.0
 * @category constructors
 */
export const questionAnswered = (
  questionId: string,
  answer = "yes",
  meta: Meta = {}
): Of<"QuestionAnswered"> => build("QuestionAnswered", actors.user, meta, { questionId, answer, source: "user" })

/**
 * @since 0.1.0
 * @category constructors
 */
export const taskCancelled = (
  from: Event.TaskState,
  reason = "no longer needed",
  meta: Meta = {}
): Of<"TaskCancelled"> => build("TaskCancelled", actors.user, meta, { from, reason })

/**
 * @since 0.1.0
 * @category constructors
 */
export const attemptScheduled = (
  runId: string,
  stepId: string,
  attempt: number,
  meta: Meta = {}
): Of<"AttemptScheduled"> => build("AttemptScheduled", actors.runner, meta, { runId, stepId, attempt })

/**
 * @since 0.1.0
 * @category constructors
 */
export const attemptTransitioned = (
  input: {
    readonly runId: string
    readonly stepId: string
    readonly attempt: number
    readonly from: Of<"AttemptTransitioned">["from"]
    readonly to: Of<"AttemptTransitioned">["to"]
  },
  meta: Meta = {}
): Of<"AttemptTransitioned"> =>
  build("AttemptTransitioned", actors.runner, meta, {
    runId: input.runId,
    stepId: input.stepId,
    attempt: input.attempt,
    from: input.from,
    to: input.to
  })

/**
 * @since 0.1.0
 * @category constructors
 */
export const intentRecorded = (
  intentId: string,
  input: {
    readonly runId: string
    readonly stepId: string
    readonly attempt: number
    readonly description?: string
  },
  meta: Meta = {}
): Of<"IntentRecorded"> =>
  build("IntentRecorded", actors.runner, meta, {
    intentId,
    runId: input.runId,
    stepId: input.stepId,
    attempt: input.attempt,
    description: input.description ?? "npm run build"
  })

/**
 * @since 0.1.0
 * @category constructors
 */
export const intentDispatched = (intentId: string, meta: Meta = {}): Of<"IntentDispatched"> =>
  build("IntentDispatched", actors.runner, meta, { intentId })

/**
 * @since 0.1.0
 * @category constructors
 */
export const intentResolved = (
  intentId: string,
  outcome: "Succeeded" | "Failed",
  resultRefs: ReadonlyArray<string> = [],
  meta: Meta = {}
): Of<"IntentResolved"> => build("IntentResolved", actors.runner, meta, { intentId, outcome, resultRefs })

/**
 * @since 0.1.0
 * @category constructors
 */
export const intentAbandoned = (intentId: string, reason = "the runner restarted", meta: Meta = {}): Of<"IntentAbandoned"> =>
  build("IntentAbandoned", actors.system, meta, { intentId, reason })

/**
 * @since 0.1.0
 * @category constructors
 */
export const checkpointRecorded = (
  kind: "run_start" | "step" | "terminal",
  runId: string,
  meta: Meta = {}
): Of<"CheckpointRecorded"> => build("CheckpointRecorded", actors.system, meta, { kind, runId })

/**
 * The trace a runner of `runId` exports under; the ids default to the W3C specification's example.
 *
 * @since 0.4.0
 * @category constructors
 */
export const traceRecorded = (
  runId: string,
  epoch: number,
  ids: { readonly traceId: string; readonly spanId: string } = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" },
  meta: Meta = {}
): Of<"TraceRecorded"> => build("TraceRecorded", actors.runner, meta, { runId, epoch, traceId: ids.traceId, spanId: ids.spanId })

/**
 * A lease owner named `name`: the same name gives the same owner.
 *
 * @since 0.1.0
 * @category constructors
 */
export const owner = (name: string, pid = 4242): Event.LeaseOwner => ({
  workspaceId: `ws-${name}`,
  host: `host-${name}`,
  pid,
  processStartedAt: defaultAt
})

/**
 * Lease timings every builder uses unless told otherwise.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultTimings = { heartbeatMs: 2_000, graceMs: 3_000 } as const

/**
 * Takes a free lease at `epoch` (the last epoch plus one, or 1 for a task that never had one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const leaseAcquired = (
  epoch: number,
  by: Event.LeaseOwner,
  timings: { readonly heartbeatMs: number; readonly graceMs: number } = defaultTimings,
  meta: Meta = {}
): Of<"LeaseAcquired"> =>
  build("LeaseAcquired", actors.runner, meta, {
    epoch,
    owner: by,
    heartbeatMs: timings.heartbeatMs,
    graceMs: timings.graceMs
  })

/**
 * Takes a held lease over from `displaced` at `epoch` (the held epoch plus one).
 *
 * @since 0.1.0
 * @category constructors
 */
export const leaseTakenOver = (
  epoch: number,
  by: Event.LeaseOwner,
  displaced: Event.LeaseOwner,
  timings: { readonly heartbeatMs: number; readonly graceMs: number } = defaultTimings,
  meta: Meta = {}
): Of<"LeaseTakenOver"> =>
  build("LeaseTakenOver", actors.runner, meta, {
    epoch,
    owner: by,
    displaced,
    heartbeatMs: timings.heartbeatMs,
    graceMs: timings.graceMs
  })

/**
 * Releases the lease held at `epoch`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const leaseReleased = (epoch: number, meta: Meta = {}): Of<"LeaseReleased"> =>
  build("LeaseReleased", actors.runner, meta, { epoch })

/**
 * What a step's command did (exit code, duration, output refs, changed paths), beside its intent's
 * resolution.
 *
 * @since 0.1.0
 * @category constructors
 */
export const commandExited = (
  intentId: string,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number },
  exit: { readonly exitCode?: number | null; readonly timedOut?: boolean; readonly changedPaths?: ReadonlyArray<string> } = {},
  meta: Meta = {}
): Of<"CommandExited"> =>
  build("CommandExited", actors.runner, meta, {
    intentId,
    runId: target.runId,
    stepId: target.stepId,
    attempt: target.attempt,
    exitCode: exit.exitCode === undefined ? 0 : exit.exitCode,
    signal: exit.exitCode === null ? "SIGKILL" : null,
    durationMs: 12,
    timedOut: exit.timedOut ?? false,
    stdoutRef: null,
    stderrRef: null,
    outputTail: "",
    changedPaths: exit.changedPaths ?? []
  })

/**
 * What an agent step's host reported (ADR 0039), beside its process's `CommandExited`: a finished
 * Claude Code stream by default, or, with `result: null`, a stream that ended without the host's
 * result (then nothing else is reported and `reason` says why the attempt failed).
 *
 * @since 0.4.0
 * @category constructors
 */
export const agentReported = (
  intentId: string,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number },
  report: { readonly host?: "claude-code" | "codex"; readonly result?: null; readonly transcriptRef?: string | null } = {},
  meta: Meta = {}
): Of<"AgentReported"> => {
  const finished = report.result !== null
  return build("AgentReported", actors.runner, meta, {
    intentId,
    runId: target.runId,
    stepId: target.stepId,
    attempt: target.attempt,
    host: report.host ?? "claude-code",
    sessionId: finished ? "0f6c1d9e-7a51-4f0a-9d3b-2b8e4c1a7f10" : null,
    model: finished && report.host !== "codex" ? "claude-sonnet-4-5-20250929" : null,
    usage: finished ? { inputTokens: 1200, outputTokens: 340, cachedInputTokens: 9000, cacheCreationInputTokens: null } : null,
    costUsd: finished && report.host !== "codex" ? 0.0421 : null,
    result: finished ? { ok: true, subtype: "success", text: "Done.", turns: 3 } : null,
    lines: finished ? 9 : 4,
    malformedLines: 0,
    unknownEvents: 0,
    transcriptRef: report.transcriptRef === undefined ? null : report.transcriptRef,
    reason: finished ? null : "the agent exited 0 but its stream ended without the host's result (truncated)"
  })
}

/**
 * The work tree and the digests at a step boundary.
 *
 * @since 0.1.0
 * @category constructors
 */
export const boundaryRecorded = (
  runId: string,
  digests: { readonly specDigest: Digest.Digest; readonly planDigest: Digest.Digest },
  nextStep: string | null,
  meta: Meta = {}
): Of<"BoundaryRecorded"> =>
  build("BoundaryRecorded", actors.runner, meta, {
    runId,
    head: null,
    dirtyPaths: [],
    dirtyDigest: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
    specDigest: digests.specDigest,
    planDigest: digests.planDigest,
    nextStep
  })

/**
 * A note on an attempt (a worker's, or recovery's).
 *
 * @since 0.1.0
 * @category constructors
 */
export const attemptNoted = (
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number },
  note: string,
  meta: Meta = {}
): Of<"AttemptNoted"> =>
  build("AttemptNoted", actors.runner, meta, { runId: target.runId, stepId: target.stepId, attempt: target.attempt, note })

/**
 * A person's settlement of a dispatched intent whose outcome was never recorded, with its receipt.
 *
 * @since 0.1.0
 * @category constructors
 */
export const intentSettled = (
  intentId: string,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number },
  outcome: "Succeeded" | "Failed",
  digest: Digest.Digest,
  meta: Meta = {}
): Of<"IntentSettled"> =>
  build("IntentSettled", actors.user, meta, {
    intentId,
    runId: target.runId,
    stepId: target.stepId,
    attempt: target.attempt,
    outcome,
    // Stores never judge a receipt: an unsigned one is a valid event (the gates refuse it).
    receipt: { subject: "resolution", digest, actor: actors.user, channel: "terminal", at: meta.at ?? defaultAt, signature: null }
  })

/**
 * One turn event of an attempt, as its worker's host reported it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const turnRecorded = (
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number },
  turn: Turn.Event,
  meta: Meta = {}
): Of<"TurnRecorded"> =>
  build("TurnRecorded", actors.agent, meta, { runId: target.runId, stepId: target.stepId, attempt: target.attempt, turn })

/**
 * One verification pass over the run's episode frozen at `snapshotLsn`, with its verdicts.
 *
 * @since 0.1.0
 * @category constructors
 */
export const verificationRecorded = (
  runId: string,
  snapshotLsn: number,
  outcome: "APPROVED" | "REVISE" | "BLOCKED" | "HELD",
  verdicts: ReadonlyArray<Event.AcVerdict>,
  meta: Meta = {}
): Of<"VerificationRecorded"> => build("VerificationRecorded", actors.verifier, meta, { runId, snapshotLsn, outcome, verdicts })
