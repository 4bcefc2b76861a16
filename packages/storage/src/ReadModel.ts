/**
 * The read models and their pure projection.
 *
 * A read model is what a reader needs in O(1) of history length: the task summary (the folded task
 * aggregate), the attempts (with each one's turn region), the open intents, the writer lease and the checkpoints of a stream's
 * branch. {@link apply} folds one stored event into a {@link Snapshot}; the SQL store runs the same
 * function inside the append transaction over the rows the events touch, and {@link fold} runs it
 * over a whole branch for the cold rebuild that must equal the stored rows.
 *
 * Leases belong to the task, not to a branch: a lease event on any branch updates the one lease.
 *
 * @since 0.1.0
 */
import * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"
import * as Task from "@ratchet/kernel/Task"
import * as Turn from "@ratchet/kernel/Turn"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { BranchNotFound, InvalidRequest, StoredEvent } from "./EventStore.js"
import type { StorageError } from "./StorageError.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const TaskSummary = Schema.Struct({
  projectId: Schema.String,
  streamId: Schema.String,
  branch: Schema.String,
  version: Schema.Int,
  lastLsn: Schema.Int,
  task: Task.TaskSchema
})

/**
 * @since 0.1.0
 * @category models
 */
export type TaskSummary = typeof TaskSummary.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const AttemptRow = Schema.Struct({
  streamId: Schema.String,
  branch: Schema.String,
  runId: Schema.String,
  stepId: Schema.String,
  attempt: Schema.Int,
  state: Schema.Literal("Pending", "Running", "Succeeded", "Failed", "Indeterminate", "Cancelled", "TimedOut"),
  /** The attempt's turn region: the flags its worker's turn events left (`TurnRecorded`). */
  turn: Turn.State,
  /** The LSN of the attempt's last transition (its schedule, or a change of state; not a turn event). */
  updatedLsn: Schema.Int
})

/**
 * @since 0.1.0
 * @category models
 */
export type AttemptRow = typeof AttemptRow.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const IntentRow = Schema.Struct({
  streamId: Schema.String,
  branch: Schema.String,
  intentId: Schema.String,
  runId: Schema.String,
  stepId: Schema.String,
  attempt: Schema.Int,
  state: Schema.Literal("Pending", "Dispatched", "Resolved", "Abandoned"),
  outcome: Schema.NullOr(Schema.Literal("Succeeded", "Failed")),
  updatedLsn: Schema.Int
})

/**
 * @since 0.1.0
 * @category models
 */
export type IntentRow = typeof IntentRow.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const LeaseRow = Schema.Struct({
  projectId: Schema.String,
  streamId: Schema.String,
  epoch: Schema.Int,
  held: Schema.Boolean,
  owner: Event.LeaseOwner,
  acquiredAt: Schema.Int,
  heartbeatAt: Schema.Int,
  graceMs: Schema.Int,
  updatedLsn: Schema.Int
})

/**
 * @since 0.1.0
 * @category models
 */
export type LeaseRow = typeof LeaseRow.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const CheckpointRow = Schema.Struct({
  streamId: Schema.String,
  branch: Schema.String,
  lsn: Schema.Int,
  kind: Schema.Literal("run_start", "step", "terminal"),
  runId: Schema.NullOr(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type CheckpointRow = typeof CheckpointRow.Type

/**
 * Every read model of one stream branch. Rows are keyed (`runId/stepId/attempt`, `intentId`) so
 * the SQL store can load only the rows an append touches.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly summary: TaskSummary | null
  readonly attempts: ReadonlyMap<string, AttemptRow>
  readonly intents: ReadonlyMap<string, IntentRow>
  readonly lease: LeaseRow | null
  readonly checkpoints: ReadonlyArray<CheckpointRow>
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const empty: Snapshot = {
  summary: null,
  attempts: new Map(),
  intents: new Map(),
  lease: null,
  checkpoints: []
}

/**
 * The key of an attempt row in {@link Snapshot.attempts} (the kernel's `Run.key`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const attemptKey: (runId: string, stepId: string, attempt: number) => string = Run.key


/**
 * Folds one stored event into the read models. Like `Task.evolve`, it trusts what it is given:
 * events were decided before they were stored.
 *
 * @since 0.1.0
 * @category constructors
 */
export const apply = (snapshot: Snapshot, stored: StoredEvent): Snapshot => {
  const aggregate = Task.evolve(snapshot.summary?.task ?? Task.initial, stored.event)
  const summary: TaskSummary | null = aggregate._tag === "Task"
    ? {
      projectId: stored.projectId,
      streamId: stored.streamId,
      branch: stored.branch,
      version: stored.version,
      lastLsn: stored.lsn,
      task: aggregate
    }
    : snapshot.summary
  // The run's attempts, intents and turns are the kernel's fold (`Run.evolve`); a row the event
  // does not touch stays the same object, so the store writes exactly the rows that changed.
  const run = Run.evolve(snapshot, stored.event, stored.lsn, { streamId: stored.streamId, branch: stored.branch })
  const next: Snapshot = { ...snapshot, summary, attempts: run.attempts, intents: run.intents }
  const event = stored.event
  const base = { streamId: stored.streamId, branch: stored.branch }
  switch (event._tag) {
    case "CheckpointRecorded":
      return {
        ...next,
        checkpoints: [...next.checkpoints, { ...base, lsn: stored.lsn, kind: event.kind, runId: event.runId }]
      }
    case "LeaseAcquired":
    case "LeaseTakenOver":
      return {
        ...next,
        lease: {
          projectId: stored.projectId,
          streamId: stored.streamId,
          epoch: event.epoch,
          held: true,
          owner: event.owner,
          acquiredAt: stored.recordedAt,
          heartbeatAt: stored.recordedAt,
          graceMs: event.graceMs,
          updatedLsn: stored.lsn
        }
      }
    case "LeaseReleased":
      return next.lease === null ? next : { ...next, lease: { ...next.lease, held: false, updatedLsn: stored.lsn } }
    default:
      // Task lifecycle events change only the summary, folded above; run events the run's rows.
      return next
  }
}

/**
 * The cold fold: every read model of a branch from its events.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fold = (events: Iterable<StoredEvent>, from: Snapshot = empty): Snapshot => {
  let snapshot = from
  for (const stored of events) snapshot = apply(snapshot, stored)
  return snapshot
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly taskSummary: (
    streamId: string,
    branch?: string
  ) => Effect.Effect<TaskSummary | null, InvalidRequest | StorageError>
  /** The main-branch summaries of a project's tasks (every project's when omitted), newest first. */
  readonly listTasks: (projectId?: string) => Effect.Effect<ReadonlyArray<TaskSummary>, InvalidRequest | StorageError>
  readonly attempts: (
    streamId: string,
    branch?: string
  ) => Effect.Effect<ReadonlyArray<AttemptRow>, InvalidRequest | StorageError>
  /** Intents still Pending or Dispatched: what recovery must look at. */
  readonly openIntents: (streamId?: string) => Effect.Effect<ReadonlyArray<IntentRow>, InvalidRequest | StorageError>
  readonly lease: (projectId: string, streamId: string) => Effect.Effect<LeaseRow | null, InvalidRequest | StorageError>
  readonly checkpoints: (
    streamId: string,
    branch?: string
  ) => Effect.Effect<ReadonlyArray<CheckpointRow>, InvalidRequest | StorageError>
  /** Every stored read model of a branch. */
  readonly snapshot: (streamId: string, branch?: string) => Effect.Effect<Snapshot, InvalidRequest | StorageError>
  /**
   * The same, recomputed from the log by {@link fold} over the branch's events; must equal
   * {@link Service.snapshot}. The lease, being the task's, is folded from the stream's lease events
   * on every branch.
   */
  readonly rebuild: (
    streamId: string,
    branch?: string
  ) => Effect.Effect<Snapshot, BranchNotFound | InvalidRequest | StorageError>
}

/**
 * @since 0.1.0
 * @category services
 */
export class ReadModels extends Context.Tag("@ratchet/storage/ReadModels")<ReadModels, Service>() {}
