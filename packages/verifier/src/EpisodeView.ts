/**
 * The episode a verifier judges: a run's history frozen at one log position (the snapshot LSN
 * recorded when the task entered VERIFYING). It holds the branch, every attempt (failed ones
 * included: "retried three times because the context lacked X" is the signal), the work-tree refs
 * recorded at step boundaries, the contract's context partitions inline, command output by blob
 * reference, and usage.
 *
 * It also carries the lessons shown to the run's agent before the snapshot (ADR 0038), so that a
 * verification tells an assisted success from an unassisted one. They are recorded on the
 * lessons' own streams, not the task's; the caller reads them and passes them in (`shown`), and
 * the fold keeps only those of this run recorded no later than the last event at the snapshot,
 * the first showing of each lesson, with the status it was shown in — so a view rebuilt later, when
 * a lesson has been pinned or retired since, is still equal.
 *
 * It is an owned, deeply frozen value built by a pure fold over the events at or below the
 * snapshot LSN, never a handle that re-reads the store. That is the snapshot barrier: the three
 * mutators that can arrive while a verifier is mid-flight (a rewind forking a new branch, a cancel
 * during VERIFYING, recovery resolving a dispatched intent of an attempt the verifier reads) all
 * write *above* the snapshot LSN or onto another branch, so a view already built cannot change,
 * and a view rebuilt from the log at the same LSN is equal to it.
 *
 * @since 0.1.0
 */
import * as Event from "@ratchet/kernel/Event"
import * as Lesson from "@ratchet/kernel/Lesson"
import * as Task from "@ratchet/kernel/Task"
import * as Turn from "@ratchet/kernel/Turn"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

const Text = Schema.String
const Int = Schema.Int

/**
 * One side effect of an attempt as the log tells it at the snapshot.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IntentView = Schema.Struct({
  intentId: Text,
  description: Text,
  state: Schema.Literal("Pending", "Dispatched", "Resolved", "Abandoned"),
  outcome: Schema.NullOr(Schema.Literal("Succeeded", "Failed")),
  /** Who settled it on a terminal, when a person did (recovery could not tell). */
  settledBy: Schema.NullOr(Event.Actor)
})

/**
 * What a step's command did: exit, duration, output by blob reference, the paths it changed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CommandView = Schema.Struct({
  exitCode: Schema.NullOr(Int),
  signal: Schema.NullOr(Text),
  durationMs: Int,
  timedOut: Schema.Boolean,
  stdoutRef: Schema.NullOr(Text),
  stderrRef: Schema.NullOr(Text),
  outputTail: Text,
  changedPaths: Schema.Array(Text)
})

/**
 * What an agent step's host reported of an attempt (`AgentReported`, ADR 0039): the session, the
 * model, the usage and cost where the host reports them, its own end, and the transcript by blob
 * reference (the prompt is the step's instruction; the envelope is built from the contract).
 *
 * @since 0.4.0
 * @category schemas
 */
export const AgentView = Schema.Struct({
  host: Text,
  sessionId: Schema.NullOr(Text),
  model: Schema.NullOr(Text),
  usage: Schema.NullOr(Schema.Struct({
    inputTokens: Schema.Number,
    outputTokens: Schema.Number,
    cachedInputTokens: Schema.NullOr(Schema.Number),
    cacheCreationInputTokens: Schema.NullOr(Schema.Number)
  })),
  costUsd: Schema.NullOr(Schema.Number),
  result: Schema.NullOr(Schema.Struct({ ok: Schema.Boolean, subtype: Text, text: Schema.NullOr(Text), turns: Schema.NullOr(Int) })),
  transcriptRef: Schema.NullOr(Text),
  reason: Schema.NullOr(Text)
})

/**
 * One attempt at a step, whatever its end.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AttemptView = Schema.Struct({
  stepId: Text,
  attempt: Int,
  state: Schema.Literal("Pending", "Running", "Succeeded", "Failed", "Indeterminate", "Cancelled", "TimedOut"),
  /** Who started it: the worker of record. */
  actor: Event.Actor,
  startedAt: Int,
  endedAt: Schema.NullOr(Int),
  intents: Schema.Array(IntentView),
  command: Schema.NullOr(CommandView),
  /** The failure fingerprint the kernel judged it by, when it failed. */
  fingerprint: Schema.NullOr(Text),
  notes: Schema.Array(Text),
  /** The turn region its worker's host reported (`TurnRecorded`): every flag false when none did. */
  turn: Turn.State,
  /** An agent step's: what its host reported. Absent for a command or a person's step. */
  agent: Schema.optionalWith(AgentView, { exact: true })
})

/**
 * The work tree as recorded at a step boundary.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RefView = Schema.Struct({
  lsn: Int,
  head: Schema.NullOr(Text),
  dirtyPaths: Schema.Array(Text),
  dirtyDigest: Text,
  nextStep: Schema.NullOr(Text)
})

/**
 * The contract's context partitions, inline: what the worker was given to work with.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContextView = Schema.Struct({
  goal: Text,
  nonGoals: Schema.Array(Text),
  constraints: Schema.Array(Text),
  decisions: Schema.Array(Text),
  relevantPaths: Schema.Array(Text),
  verifiedFacts: Schema.Array(Text),
  allowedScope: Schema.Array(Text),
  forbiddenScope: Schema.Array(Text)
})

/**
 * A step of the approved plan with the criteria it serves and what it ran (or asked a person).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StepView = Schema.Struct({
  stepId: Text,
  title: Text,
  acRefs: Schema.Array(Text),
  /** The command line, the manual instructions or the agent's prompt: the step's prompt. */
  instruction: Text,
  manual: Schema.Boolean
})

/**
 * A lesson put in front of the run's agent: its id, the status it was shown in, how (a host's hook
 * or the agent's MCP call), when, and the step and attempt whose worker the session was, if any.
 *
 * @since 0.4.0
 * @category schemas
 */
export const LessonShownView = Schema.Struct({
  lessonId: Text,
  status: Lesson.Status,
  via: Schema.Literal("hook", "mcp", "cli", "runner"),
  at: Int,
  stepId: Schema.NullOr(Text),
  attempt: Schema.NullOr(Int)
})

/**
 * A lesson shown to a run, as its stream records it (`LessonShown`): what {@link build} is given.
 *
 * @since 0.4.0
 * @category models
 */
export interface Shown extends Schema.Schema.Type<typeof LessonShownView> {
  readonly runId: string
}

/**
 * Counts over the episode.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  attempts: Int,
  failedAttempts: Int,
  commandMs: Int,
  outputBlobs: Int
})

/**
 * The frozen episode.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EpisodeView = Schema.Struct({
  taskId: Text,
  branch: Text,
  runId: Text,
  snapshotLsn: Int,
  specDigest: Text,
  planDigest: Text,
  context: ContextView,
  steps: Schema.Array(StepView),
  attempts: Schema.Array(AttemptView),
  refs: Schema.Array(RefView),
  /** Every identity that moved an attempt or started its side effects: the runner, a manual step's worker (a person, a host session). */
  workers: Schema.Array(Event.Actor),
  /** The lessons shown to the run's agent before the snapshot, each once (its first showing), by id: none for an unassisted run. */
  lessons: Schema.Array(LessonShownView),
  usage: Usage
})

/**
 * @since 0.1.0
 * @category models
 */
export type EpisodeView = typeof EpisodeView.Type

/**
 * The events cannot make an episode: there is no run at the snapshot, or the log does not replay.
 *
 * @since 0.1.0
 * @category errors
 */
export class EpisodeUnavailable extends Data.TaggedError("@ratchet/verifier/EpisodeUnavailable")<{
  readonly taskId: string
  readonly snapshotLsn: number
  readonly reason: string
}> {
  override get message(): string {
    return `No episode of task ${this.taskId} at LSN ${this.snapshotLsn}: ${this.reason}`
  }
}

/** Freezes a plain value and everything it holds. */
const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

interface MutableAttempt {
  stepId: string
  attempt: number
  state: typeof AttemptView.Type["state"]
  actor: Event.Actor
  startedAt: number
  endedAt: number | null
  intents: Array<{
    intentId: string
    description: string
    state: typeof IntentView.Type["state"]
    outcome: "Succeeded" | "Failed" | null
    settledBy: Event.Actor | null
  }>
  command: typeof CommandView.Type | null
  fingerprint: string | null
  notes: Array<string>
  turn: Turn.State
  agent?: typeof AgentView.Type
}

const terminal = new Set(["Succeeded", "Failed", "Indeterminate", "Cancelled", "TimedOut"])

const sameActor = (a: Event.Actor, b: Event.Actor) => a.kind === b.kind && a.id === b.id

/** A copy of an event's actor, so freezing the view never freezes the caller's events. */
const ownActor = (actor: Event.Actor): Event.Actor => ({ kind: actor.kind, id: actor.id })

/**
 * Builds the episode of the run current at `snapshotLsn` from a branch's events (ancestors first,
 * as the store reads them). Events above `snapshotLsn` are ignored, so the same call over a log
 * that has grown since gives an equal view. The result is deeply frozen.
 *
 * @since 0.1.0
 * @category constructors
 */
export const build = (input: {
  readonly taskId: string
  readonly branch: string
  readonly snapshotLsn: number
  readonly events: Iterable<EventStore.StoredEvent>
  /** The lessons shown to the task's runs, as their streams record them (none when omitted). */
  readonly shown?: ReadonlyArray<Shown> | undefined
}): Either.Either<EpisodeView, EpisodeUnavailable> => {
  const unavailable = (reason: string) =>
    Either.left(new EpisodeUnavailable({ taskId: input.taskId, snapshotLsn: input.snapshotLsn, reason }))
  const upTo: Array<Event.Event> = []
  const lsns: Array<number> = []
  for (const stored of input.events) {
    if (stored.lsn > input.snapshotLsn) continue
    upTo.push(stored.event)
    lsns.push(stored.lsn)
  }
  const replayed = Task.replay(upTo)
  if (Either.isLeft(replayed)) return unavailable(`the log does not replay: ${replayed.left.message}`)
  const task = replayed.right
  if (task._tag !== "Task") return unavailable("the task does not exist at that position.")
  if (task.run === null || task.spec === null || task.plan === null) {
    return unavailable("no run had started at that position.")
  }
  const runId = task.run.runId
  const attempts = new Map<string, MutableAttempt>()
  const intentOwner = new Map<string, MutableAttempt>()
  const refs: Array<typeof RefView.Type> = []
  const workers: Array<Event.Actor> = []
  const addWorker = (actor: Event.Actor) => {
    if (!workers.some((known) => sameActor(known, actor))) workers.push(ownActor(actor))
  }
  const keyOf = (stepId: string, attempt: number) => `${stepId}#${attempt}`
  upTo.forEach((event, index) => {
    switch (event._tag) {
      case "AttemptScheduled":
        if (event.runId !== runId) return
        attempts.set(keyOf(event.stepId, event.attempt), {
          stepId: event.stepId,
          attempt: event.attempt,
          state: "Pending",
          actor: ownActor(event.actor),
          startedAt: event.at,
          endedAt: null,
          intents: [],
          command: null,
          fingerprint: null,
          notes: [],
          turn: Turn.initial
        })
        // Scheduling is not working on it (verification schedules a revision's successor): the
        // worker is whoever admits and ends the attempt, below.
        return
      case "AttemptTransitioned": {
        if (event.runId !== runId) return
        const attempt = attempts.get(keyOf(event.stepId, event.attempt))
        if (attempt === undefined) return
        attempt.state = event.to
        if (terminal.has(event.to)) attempt.endedAt = event.at
        // A manual step's worker reports it done: that identity worked on the step.
        addWorker(event.actor)
        return
      }
      case "AttemptFailed": {
        if (event.runId !== runId) return
        const attempt = attempts.get(keyOf(event.stepId, event.attempt))
        if (attempt !== undefined) attempt.fingerprint = event.fingerprint
        return
      }
      case "AttemptNoted": {
        if (event.runId !== runId) return
        attempts.get(keyOf(event.stepId, event.attempt))?.notes.push(event.note)
        return
      }
      case "TurnRecorded": {
        if (event.runId !== runId) return
        const attempt = attempts.get(keyOf(event.stepId, event.attempt))
        if (attempt === undefined) return
        attempt.turn = Turn.next(attempt.turn, event.turn)
        // The session reporting the attempt's turns is its worker.
        addWorker(event.actor)
        return
      }
      case "IntentRecorded": {
        if (event.runId !== runId) return
        const attempt = attempts.get(keyOf(event.stepId, event.attempt))
        if (attempt === undefined) return
        attempt.intents.push({ intentId: event.intentId, description: event.description, state: "Pending", outcome: null, settledBy: null })
        intentOwner.set(event.intentId, attempt)
        // Whoever started a side effect of the step worked on it (a host session as a manual
        // step's worker records its tool calls; the person who marks the step done may be another).
        addWorker(event.actor)
        return
      }
      case "IntentDispatched":
      case "IntentResolved":
      case "IntentAbandoned":
      case "IntentSettled": {
        const intent = intentOwner.get(event.intentId)?.intents.find((known) => known.intentId === event.intentId)
        if (intent === undefined) return
        if (event._tag === "IntentDispatched") intent.state = "Dispatched"
        else if (event._tag === "IntentResolved") {
          intent.state = "Resolved"
          intent.outcome = event.outcome
        } else if (event._tag === "IntentAbandoned") intent.state = "Abandoned"
        else intent.settledBy = ownActor(event.receipt.actor)
        return
      }
      case "CommandExited": {
        if (event.runId !== runId) return
        const attempt = attempts.get(keyOf(event.stepId, event.attempt))
        if (attempt === undefined) return
        attempt.command = {
          exitCode: event.exitCode,
          signal: event.signal,
          durationMs: event.durationMs,
          timedOut: event.timedOut,
          stdoutRef: event.stdoutRef,
          stderrRef: event.stderrRef,
          outputTail: event.outputTail,
          changedPaths: [...event.changedPaths]
        }
        return
      }
      case "AgentReported": {
        if (event.runId !== runId) return
        const attempt = attempts.get(keyOf(event.stepId, event.attempt))
        if (attempt === undefined) return
        attempt.agent = {
          host: event.host,
          sessionId: event.sessionId,
          model: event.model,
          usage: event.usage === null ? null : { ...event.usage },
          costUsd: event.costUsd,
          result: event.result === null ? null : { ...event.result },
          transcriptRef: event.transcriptRef,
          reason: event.reason
        }
        return
      }
      case "BoundaryRecorded":
        if (event.runId !== runId) return
        refs.push({
          lsn: lsns[index] ?? 0,
          head: event.head,
          dirtyPaths: [...event.dirtyPaths],
          dirtyDigest: event.dirtyDigest,
          nextStep: event.nextStep
        })
        return
      default:
        return
    }
  })
  const spec = task.spec.spec
  const ordered = [...attempts.values()].sort((a, b) =>
    a.startedAt - b.startedAt || a.stepId.localeCompare(b.stepId) || a.attempt - b.attempt
  )
  const view: EpisodeView = {
    taskId: input.taskId,
    branch: input.branch,
    runId,
    snapshotLsn: input.snapshotLsn,
    specDigest: task.run.specDigest,
    planDigest: task.run.planDigest,
    context: {
      goal: spec.goal,
      nonGoals: [...(spec.nonGoals ?? [])],
      constraints: [...(spec.constraints ?? [])],
      decisions: [...(spec.decisions ?? [])],
      relevantPaths: [...(spec.context?.relevantPaths ?? [])],
      verifiedFacts: [...(spec.context?.verifiedFacts ?? [])],
      allowedScope: [...(spec.execution?.allowedScope ?? [])],
      forbiddenScope: [...(spec.execution?.forbiddenScope ?? [])]
    },
    steps: task.plan.plan.steps.map((step) => ({
      stepId: step.id,
      title: step.title,
      acRefs: [...step.acRefs],
      instruction: step.run?.command ?? step.manual?.instructions ?? step.agent?.prompt ?? "",
      manual: step.manual !== undefined
    })),
    attempts: ordered.map((attempt) => ({ ...attempt, intents: attempt.intents.map((intent) => ({ ...intent })), notes: [...attempt.notes] })),
    refs,
    workers,
    lessons: lessonsShown(input.shown ?? [], runId, upTo.at(-1)?.at ?? Number.NEGATIVE_INFINITY),
    usage: {
      attempts: ordered.length,
      failedAttempts: ordered.filter((attempt) => attempt.state !== "Succeeded" && attempt.endedAt !== null).length,
      commandMs: ordered.reduce((sum, attempt) => sum + (attempt.command?.durationMs ?? 0), 0),
      outputBlobs: ordered.reduce(
        (sum, attempt) => sum + (attempt.command?.stdoutRef ? 1 : 0) + (attempt.command?.stderrRef ? 1 : 0),
        0
      )
    }
  }
  return Either.right(deepFreeze(view))
}

/**
 * The first showing of each lesson to `runId` no later than `until`, by lesson id: a showing after
 * the snapshot (a later pass of the same run) is not part of this episode.
 */
const lessonsShown = (shown: ReadonlyArray<Shown>, runId: string, until: number): Array<typeof LessonShownView.Type> => {
  const first = new Map<string, Shown>()
  for (const entry of shown) {
    if (entry.runId !== runId || entry.at > until) continue
    const known = first.get(entry.lessonId)
    if (known === undefined || entry.at < known.at) first.set(entry.lessonId, entry)
  }
  return [...first.values()]
    .sort((a, b) => (a.lessonId < b.lessonId ? -1 : a.lessonId > b.lessonId ? 1 : 0))
    .map((entry) => ({ lessonId: entry.lessonId, status: entry.status, via: entry.via, at: entry.at, stepId: entry.stepId, attempt: entry.attempt }))
}

/**
 * Whether the run was helped by lessons: any was shown to its agent before the snapshot. A success
 * of an assisted run never counts toward expiring a lesson (ADR 0031).
 *
 * @since 0.4.0
 * @category getters
 */
export const assisted = (view: EpisodeView): boolean => view.lessons.length > 0

/**
 * The attempts of one step, oldest first.
 *
 * @since 0.1.0
 * @category getters
 */
export const attemptsOf = (view: EpisodeView, stepId: string): ReadonlyArray<typeof AttemptView.Type> =>
  view.attempts.filter((attempt) => attempt.stepId === stepId).sort((a, b) => a.attempt - b.attempt)

/**
 * The steps behind a criterion (those whose `acRefs` name it), in plan order.
 *
 * @since 0.1.0
 * @category getters
 */
export const stepsFor = (view: EpisodeView, acId: string): ReadonlyArray<string> =>
  view.steps.filter((step) => step.acRefs.includes(acId)).map((step) => step.stepId)
