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
import { folding } from "./internal/foldReadModels.js"
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
 * One run's attempts and intents as its next decision reads them (see {@link runFrontier}).
 *
 * @since 0.2.0
 * @category models
 */
export interface RunFrontier {
  readonly attempts: ReadonlyMap<string, AttemptRow>
  readonly intents: ReadonlyMap<string, IntentRow>
}

const openAttempt = (state: AttemptRow["state"]) => state === "Pending" || state === "Running"

const openIntent = (state: IntentRow["state"]) => state === "Pending" || state === "Dispatched"

/**
 * Whether an intent of `attempt` belongs to the run's frontier: it is open (Pending or Dispatched),
 * or its attempt is open (Pending: whether it has any intent tells a scheduled attempt from an open
 * one; Running: a manual step's worker records one intent per tool call, and a call's hook that
 * comes again must find the intent it already recorded, resolved or not), or its attempt is
 * Indeterminate and it changed after the attempt's last transition (a person's settlement). The
 * same rule as the SQL store's `WHERE`.
 *
 * @since 0.2.0
 * @category guards
 */
export const inFrontier = (
  attempt: { readonly state: AttemptRow["state"]; readonly updatedLsn: number },
  intent: { readonly state: IntentRow["state"]; readonly updatedLsn: number }
): boolean =>
  openIntent(intent.state) || openAttempt(attempt.state) ||
  (attempt.state === "Indeterminate" && intent.updatedLsn > attempt.updatedLsn)

/**
 * Run `runId`'s frontier in `state`: the latest attempt of each step it attempted, every open
 * attempt (Pending or Running), and those attempts' intents that {@link inFrontier} keeps.
 *
 * It is all that a run's next decision reads, whatever the length of its history: the kernel's
 * `Progress` (a step's standing, what runs next, what recovery does with an open attempt) looks at
 * each step's latest attempt and its open or settling intents only, and the run's commands
 * (`Run.decide`: start the next attempt, finish, recover or close an open one) name only those
 * rows. A runner's start after a crash reads it instead of every attempt and intent of the branch,
 * which grow with every attempt ever made. Stores read it by index (`ReadModels.runFrontier`);
 * this is the reference they must equal.
 *
 * @since 0.2.0
 * @category constructors
 */
export const runFrontier = (state: { readonly attempts: ReadonlyMap<string, AttemptRow>; readonly intents: ReadonlyMap<string, IntentRow> }, runId: string): RunFrontier => {
  const latest = new Map<string, AttemptRow>()
  const attempts = new Map<string, AttemptRow>()
  for (const row of state.attempts.values()) {
    if (row.runId !== runId) continue
    const known = latest.get(row.stepId)
    if (known === undefined || row.attempt > known.attempt) latest.set(row.stepId, row)
    if (openAttempt(row.state)) attempts.set(attemptKey(row.runId, row.stepId, row.attempt), row)
  }
  for (const row of latest.values()) attempts.set(attemptKey(row.runId, row.stepId, row.attempt), row)
  const intents = new Map<string, IntentRow>()
  for (const intent of state.intents.values()) {
    if (intent.runId !== runId) continue
    const attempt = attempts.get(attemptKey(intent.runId, intent.stepId, intent.attempt))
    if (attempt !== undefined && inFrontier(attempt, intent)) intents.set(intent.intentId, intent)
  }
  return { attempts, intents }
}

/**
 * Which checkpoints {@link Service.checkpoints} returns: only run `runId`'s, only of `kind`, only
 * the `last` ones (still in LSN order). Each narrows an index read, so a reader that needs the
 * run's start or its latest boundary does not read one row per step ever taken.
 *
 * @since 0.2.0
 * @category models
 */
export interface CheckpointQuery {
  readonly runId?: string | undefined
  readonly kind?: CheckpointRow["kind"] | undefined
  readonly last?: number | undefined
}

/**
 * The checkpoints of `all` (in LSN order) that `query` selects: the reference the stores equal.
 *
 * @since 0.2.0
 * @category constructors
 */
export const selectCheckpoints = (all: ReadonlyArray<CheckpointRow>, query: CheckpointQuery = {}): ReadonlyArray<CheckpointRow> => {
  const kept = all.filter((row) =>
    (query.runId === undefined || row.runId === query.runId) && (query.kind === undefined || row.kind === query.kind)
  )
  return query.last === undefined ? kept : kept.slice(Math.max(0, kept.length - query.last))
}

/**
 * Folds one stored event into the read models. Like `Task.evolve`, it trusts what it is given:
 * events were decided before they were stored. The snapshot given is left as it was; a map or
 * list the event changes is a new one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const apply = (snapshot: Snapshot, stored: StoredEvent): Snapshot => fold([stored], snapshot)

/**
 * The cold fold: every read model of a branch from its events, the same snapshot as {@link apply}
 * event by event, with each map copied once rather than once per event.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fold = (events: Iterable<StoredEvent>, from: Snapshot = empty): Snapshot => {
  const working = folding(from)
  working.add(Array.isArray(events) ? events : Array.from(events))
  return working.result()
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
  /** The checkpoints of a branch in LSN order, narrowed by `query` (see {@link CheckpointQuery}). */
  readonly checkpoints: (
    streamId: string,
    branch?: string,
    query?: CheckpointQuery
  ) => Effect.Effect<ReadonlyArray<CheckpointRow>, InvalidRequest | StorageError>
  /**
   * Run `runId`'s frontier on a branch ({@link runFrontier}), read by index: its cost grows with the
   * run's steps and open attempts, not with the attempts and intents the branch ever had.
   */
  readonly runFrontier: (
    streamId: string,
    runId: string,
    branch?: string
  ) => Effect.Effect<RunFrontier, InvalidRequest | StorageError>
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
