/**
 * The one place a command reaches the store: read the stream's state, let the kernel decide
 * (`Decider`: the task's lifecycle and its run as one), append what it decided under the expected
 * stream version and the presented lease epoch, and decide again when the stream moved in between.
 * Every use case (the lifecycle commands, the runner, verification, completion, host sessions)
 * writes through it.
 *
 * The state after the append is not read back: it is the fold of the decided events over the state
 * read (at the log positions the append gave them), which is exactly what the store's read models
 * now hold, so no use case re-reads what it has just written.
 *
 * - A lease held by someone while the caller presents no epoch is refused before deciding
 *   (`LeaseConflict` naming the holder); an epoch the store fences (`StaleEpoch`) is the same
 *   conflict, with what the store says now.
 * - A `VersionConflict` is decided again from a fresh read, up to {@link maxAttempts} in all, then
 *   `WriteConflict`. Deciding again is safe because commands carry intent, not state (ADR 0009).
 * - A decision that appends nothing writes nothing and returns the state read.
 *
 * @since 0.2.0
 */
import * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"
import type * as Task from "@ratchet/kernel/Task"
import * as Owner from "@ratchet/lease/Owner"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as StoreSpan from "@ratchet/storage/StoreSpan"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ControllerError from "./ControllerError.js"

/**
 * How many times a write is decided before it gives up with `WriteConflict`.
 *
 * @since 0.2.0
 * @category models
 */
export const maxAttempts = 5

/**
 * A stream as a command is decided against it: its task summary (null before the task exists)
 * and, when the command needs it, its run's attempts and intents on the branch (every one, or the
 * current run's frontier: see {@link RunRows}).
 *
 * @since 0.2.0
 * @category models
 */
export interface Read {
  readonly projectId: string
  readonly streamId: string
  readonly branch: string
  readonly summary: ReadModel.TaskSummary | null
  readonly run: Run.State
}

/**
 * What a handled command wrote, and the stream after it.
 *
 * @since 0.2.0
 * @category models
 */
export interface Handled {
  readonly events: ReadonlyArray<Event.Event>
  /** The append's result, or null when the decision appended nothing. */
  readonly appended: EventStore.AppendResult | null
  /** The stream after the append (the one read, when nothing was appended). */
  readonly after: Read
  /** The task after the append. */
  readonly task: Task.Task
}

/**
 * What a write can fail with, besides what its command's own building fails with.
 *
 * @since 0.2.0
 * @category models
 */
export type HandleError =
  | Decider.Rejection
  | ControllerError.LeaseConflict
  | ControllerError.WriteConflict
  | EventStore.AppendError
  | EventStore.InvalidRequest
  | StorageError

/**
 * One command to handle.
 *
 * @since 0.2.0
 * @category models
 */
export interface Request<E, R> {
  readonly projectId: string
  readonly streamId: string
  readonly branch: string
  /** The epoch the caller writes under, or null (no lease may be held then). */
  readonly epoch: number | null
  /** Which attempts and intents the decision reads (see {@link RunRows}); none when omitted. */
  readonly withRun?: RunRows | undefined
  /**
   * The stream as the caller last saw it (an earlier write's `after`): the first decision is taken
   * against it without a read. It is only a guess: the append still carries its version, and a
   * stream that moved since is read afresh and decided again. A writer that holds the lease (the
   * runner) is the only one appending, so its guess is right and its steady state reads nothing.
   */
  readonly known?: Read | undefined
  /** The commands (and facts) to decide against the stream as read, at `at` (the caller's clock). */
  readonly decide: (read: Read, at: number) => Effect.Effect<ReadonlyArray<Decider.Command | Event.Event>, E, R>
  /** Events appended after the decided ones, in the same transaction (a lease's release), when any were decided. */
  readonly trailing?: ((task: Task.Task, at: number) => ReadonlyArray<Event.Event>) | undefined
  /** The holder of a lease, for the refusal that names them. */
  readonly describeHolder: (lease: ReadModel.LeaseRow) => string
}

const conflictOf = (taskId: string, presented: number | null, lease: ReadModel.LeaseRow | null, current: number | null, held: boolean, describe: (lease: ReadModel.LeaseRow) => string) =>
  new ControllerError.LeaseConflict({
    taskId,
    presented,
    epoch: current,
    held,
    holder: lease !== null && lease.held ? describe(lease) : null,
    deadline: lease !== null && lease.held ? lease.heartbeatAt + lease.graceMs : null,
    ...(lease !== null && lease.held ? { takeover: Owner.takeoverCommand(taskId, lease.owner) } : {})
  })

/**
 * Which of a branch's attempts and intents a decision reads: none (`false`), every one (`true`),
 * or only the frontier of the task's current run (`"frontier"`, `ReadModel.runFrontier`): what
 * the run's commands are decided against (the kernel's `Progress` and `Run.decide` look no further),
 * read by index, so its cost grows with the run's steps and not with every attempt ever made. The
 * runner reads the frontier; a use case that must see earlier runs reads every row.
 *
 * @since 0.2.0
 * @category models
 */
export type RunRows = boolean | "frontier"

/**
 * Reads the stream's state on `branch`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const read = (projectId: string, streamId: string, branch: string, withRun: RunRows) =>
  Effect.gen(function*() {
    const models = yield* ReadModel.ReadModels
    const summary = yield* models.taskSummary(streamId, branch)
    const runId = summary?.task.run?.runId
    const run: Run.State = withRun === "frontier"
      ? runId === undefined ? Run.initial : yield* models.runFrontier(streamId, runId, branch)
      : withRun
      ? yield* models.snapshot(streamId, branch)
      : Run.initial
    return { projectId, streamId, branch, summary, run } satisfies Read
  })

/**
 * Reads, decides, appends and retries (see the module comment).
 *
 * @since 0.2.0
 * @category constructors
 */
export const handle = <E, R>(request: Request<E, R>): Effect.Effect<Handled, HandleError | E, R | EventStore.EventStore | ReadModel.ReadModels> =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const models = yield* ReadModel.ReadModels
    const { branch, epoch, projectId, streamId } = request
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const before = attempt === 1 && request.known !== undefined ? request.known : yield* read(projectId, streamId, branch, request.withRun ?? false)
      if (before.summary !== null && epoch === null) {
        const lease = yield* models.lease(projectId, streamId)
        if (lease !== null && lease.held) return yield* conflictOf(streamId, null, lease, lease.epoch, true, request.describeHolder)
      }
      const at = yield* Clock.currentTimeMillis
      const items = yield* request.decide(before, at)
      const version = before.summary?.version ?? 0
      const firstLsnGuess = (before.summary?.lastLsn ?? 0) + 1
      const decided = Decider.decideAll(items, { task: before.summary?.task ?? { _tag: "Absent", version: 0 }, run: before.run }, firstLsnGuess)
      if (Either.isLeft(decided)) return yield* decided.left
      const task = decided.right.state.task
      if (task._tag === "Absent") return yield* Effect.dieMessage("a write that leaves no task")
      const events = decided.right.events.length === 0 ? [] : [...decided.right.events, ...(request.trailing?.(task, at) ?? [])]
      if (events.length === 0) return { events: [], appended: null, after: before, task } satisfies Handled
      const appended = yield* store.append({
        projectId,
        streamId,
        branch,
        expectedVersion: version,
        epoch,
        operationId: `op-${crypto.randomUUID()}`,
        events
      }).pipe(
        Effect.tap((result) => Effect.annotateCurrentSpan({ "ratchet.lsn.first": result.firstLsn, "ratchet.lsn.last": result.lastLsn, "ratchet.replayed": result.replayed })),
        Effect.withSpan(StoreSpan.name, {
          attributes: { "ratchet.stream": streamId, "ratchet.branch": branch, "ratchet.events": events.length, "ratchet.expected_version": version, "ratchet.try": attempt }
        }),
        Effect.map((result) => Either.right(result)),
        Effect.catchTag("@ratchet/storage/VersionConflict", () => Effect.succeed(Either.left("moved" as const))),
        Effect.catchTag("@ratchet/storage/StaleEpoch", (stale) =>
          Effect.flatMap(models.lease(projectId, streamId), (lease) =>
            Effect.fail(conflictOf(streamId, epoch, lease, stale.current, stale.held, request.describeHolder))))
      )
      if (Either.isLeft(appended)) continue
      const result = appended.right
      // The state after: the decided events folded at the positions the store gave them.
      let after: Decider.State = { task: before.summary?.task ?? { _tag: "Absent", version: 0 }, run: before.run }
      events.forEach((event, index) => {
        after = Decider.evolve(after, event, result.firstLsn + index)
      })
      const done = after.task
      if (done._tag === "Absent") return yield* Effect.dieMessage("a write that leaves no task")
      return {
        events,
        appended: result,
        task: done,
        after: {
          ...before,
          summary: { projectId, streamId, branch, version: result.version, lastLsn: result.lastLsn, task: done },
          run: (request.withRun !== undefined && request.withRun !== false) || request.known !== undefined ? after.run : Run.initial
        }
      } satisfies Handled
    }
    return yield* new ControllerError.WriteConflict({ taskId: streamId, attempts: maxAttempts })
  })
