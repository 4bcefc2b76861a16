/**
 * What `ratchet stats` shows: the figures an operator alerts on, read from the stored read models.
 *
 * - **Attempts by state**, across the store's tasks (each on its current branch), Indeterminate first:
 *   an Indeterminate attempt is one whose side effect may or may not have happened, and nothing
 *   moves it on until a person resolves it, so the count is expected to stay near zero.
 * - **Open intents by age**: intents still Pending or Dispatched (what recovery must look at),
 *   bucketed by the time since their last change, with the oldest ones named.
 *
 * The figures cover every project of the store unless a project is given. An intent's age is the
 * caller's clock minus the store's `recordedAt` of the event that last changed it (clamped at zero,
 * since PostgreSQL's clock may run ahead of this machine's).
 *
 * @since 0.1.0
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TaskBranch from "./TaskBranch.js"

/**
 * An attempt's state, as the read models store it.
 *
 * @since 0.1.0
 * @category models
 */
export type AttemptState = ReadModel.AttemptRow["state"]

/**
 * Every attempt state in the order stats lists them: the ones that need a person first.
 *
 * @since 0.1.0
 * @category constants
 */
export const attemptStates: ReadonlyArray<AttemptState> = [
  "Indeterminate",
  "Running",
  "Pending",
  "TimedOut",
  "Failed",
  "Cancelled",
  "Succeeded"
]

/**
 * @since 0.1.0
 * @category models
 */
export type AgeBucket = "<1m" | "1m-1h" | "1h-1d" | ">1d"

/**
 * The age buckets, youngest first.
 *
 * @since 0.1.0
 * @category constants
 */
export const ageBuckets: ReadonlyArray<AgeBucket> = ["<1m", "1m-1h", "1h-1d", ">1d"]

const minute = 60_000
const hour = 60 * minute
const day = 24 * hour

/**
 * The bucket of an age in milliseconds: under a minute, under an hour, under a day, or older.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bucketOf = (ageMs: number): AgeBucket =>
  ageMs < minute ? "<1m" : ageMs < hour ? "1m-1h" : ageMs < day ? "1h-1d" : ">1d"

/**
 * How many open intents {@link Stats} names, oldest first.
 *
 * @since 0.1.0
 * @category constants
 */
export const oldestLimit = 10

/**
 * @since 0.1.0
 * @category models
 */
export interface AttemptCount {
  readonly state: AttemptState
  readonly count: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface BucketCount {
  readonly bucket: AgeBucket
  readonly count: number
}

/**
 * An open intent and how long it has waited since its last change.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenIntent {
  readonly taskId: string
  readonly intentId: string
  readonly stepId: string
  readonly attempt: number
  readonly state: "Pending" | "Dispatched"
  readonly ageMs: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Stats {
  /** Every attempt state, in {@link attemptStates} order, zero counts included. */
  readonly attempts: ReadonlyArray<AttemptCount>
  /** How many tasks the figures cover. */
  readonly tasks: number
  /**
   * The Indeterminate attempts still waiting for a person: their side effect was dispatched and
   * nobody recorded how it ended (`ratchet unblock <task> --resolve <step> succeeded|failed`). An
   * Indeterminate attempt stays Indeterminate once settled or cancelled; these are the ones to act on.
   */
  readonly unsettled: ReadonlyArray<{ readonly taskId: string; readonly stepId: string; readonly attempt: number; readonly intentId: string }>
  readonly openIntents: {
    readonly total: number
    /** Every bucket, youngest first, zero counts included. */
    readonly byAge: ReadonlyArray<BucketCount>
    /** At most {@link oldestLimit}, oldest first. */
    readonly oldest: ReadonlyArray<OpenIntent>
  }
  /** When the figures were read, epoch milliseconds by the caller's clock. */
  readonly at: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Only this project's tasks; every project's when omitted. */
  readonly projectId?: string | undefined
}

/**
 * The count of an attempt state in `stats` (0 when none).
 *
 * @since 0.1.0
 * @category getters
 */
export const countOf = (stats: Stats, state: AttemptState): number =>
  stats.attempts.find((entry) => entry.state === state)?.count ?? 0

/**
 * Reads the figures from the store's read models: one query for the tasks, one per task for its
 * attempts, one for the open intents and one per open intent for the event that last changed it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const collect = (
  options: Options = {}
): Effect.Effect<
  Stats,
  EventStore.BranchNotFound | EventStore.InvalidRequest | StorageError,
  ReadModel.ReadModels | EventStore.EventStore
> =>
  Effect.gen(function*() {
    const readModels = yield* ReadModel.ReadModels
    const events = yield* EventStore.EventStore
    const listed = yield* readModels.listTasks(options.projectId)
    // Each task on the branch it lives on (a rewind forks a new one; the old ones are history).
    const tasks: Array<ReadModel.TaskSummary> = []
    for (const summary of listed) {
      const branch = TaskBranch.current(yield* events.branches(summary.streamId))
      tasks.push(branch === summary.branch ? summary : (yield* readModels.taskSummary(summary.streamId, branch)) ?? summary)
    }
    const branchOf = new Map(tasks.map((summary) => [summary.streamId, summary.branch]))

    const counts = new Map<AttemptState, number>(attemptStates.map((state) => [state, 0]))
    const indeterminate: Array<ReadModel.AttemptRow> = []
    for (const summary of tasks) {
      for (const row of yield* readModels.attempts(summary.streamId, summary.branch)) {
        counts.set(row.state, (counts.get(row.state) ?? 0) + 1)
        if (row.state === "Indeterminate" && summary.task.state !== "CANCELLED" && summary.task.state !== "COMPLETED") indeterminate.push(row)
      }
    }

    const streams = new Set(tasks.map((summary) => summary.streamId))
    const intents = (yield* readModels.openIntents()).filter((row) =>
      (options.projectId === undefined || streams.has(row.streamId)) && (branchOf.get(row.streamId) ?? row.branch) === row.branch
    )
    const unsettled = indeterminate.flatMap((attempt) => {
      const intent = intents.find((row) =>
        row.state === "Dispatched" && row.streamId === attempt.streamId && row.runId === attempt.runId &&
        row.stepId === attempt.stepId && row.attempt === attempt.attempt
      )
      return intent === undefined ? [] : [{ taskId: attempt.streamId, stepId: attempt.stepId, attempt: attempt.attempt, intentId: intent.intentId }]
    })
    const now = yield* Clock.currentTimeMillis
    const aged = yield* Effect.forEach(intents, (row) =>
      Effect.map(
        Stream.runHead(events.read({ streamId: row.streamId, branch: row.branch, fromLsn: row.updatedLsn, toLsn: row.updatedLsn })),
        (stored): OpenIntent => ({
          taskId: row.streamId,
          intentId: row.intentId,
          stepId: row.stepId,
          attempt: row.attempt,
          state: row.state === "Dispatched" ? "Dispatched" : "Pending",
          // The read model is written with its event, so the event is there; should it not be,
          // the intent counts as just changed rather than failing the whole report.
          ageMs: Math.max(0, now - Option.match(stored, { onNone: () => now, onSome: (event) => event.recordedAt }))
        })
      ))

    const byAge = new Map<AgeBucket, number>(ageBuckets.map((bucket) => [bucket, 0]))
    for (const intent of aged) {
      const bucket = bucketOf(intent.ageMs)
      byAge.set(bucket, (byAge.get(bucket) ?? 0) + 1)
    }
    const oldest = [...aged]
      .sort((a, b) =>
        b.ageMs - a.ageMs || a.taskId.localeCompare(b.taskId) || a.intentId.localeCompare(b.intentId)
      )
      .slice(0, oldestLimit)

    return {
      attempts: attemptStates.map((state) => ({ state, count: counts.get(state) ?? 0 })),
      tasks: tasks.length,
      unsettled,
      openIntents: {
        total: aged.length,
        byAge: ageBuckets.map((bucket) => ({ bucket, count: byAge.get(bucket) ?? 0 })),
        oldest
      },
      at: now
    }
  })

/**
 * A duration for a person: `45s`, `12m`, `3h`, `2d`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const formatAge = (ageMs: number): string =>
  ageMs < minute
    ? `${Math.floor(ageMs / 1000)}s`
    : ageMs < hour
    ? `${Math.floor(ageMs / minute)}m`
    : ageMs < day
    ? `${Math.floor(ageMs / hour)}h`
    : `${Math.floor(ageMs / day)}d`

/**
 * The figures as plain text: attempts by state (Indeterminate first) with a hint when any attempt
 * is Indeterminate, then the open intents by age and the oldest ones. `scope` names what the
 * figures cover, e.g. "every project in the store".
 *
 * @since 0.1.0
 * @category rendering
 */
export const text = (stats: Stats, scope: string): string => {
  const width = Math.max(...attemptStates.map((state) => state.length))
  const lines = [`Attempts by state (${stats.tasks} task(s), ${scope}):`]
  for (const entry of stats.attempts) lines.push(`  ${entry.state.padEnd(width)}  ${entry.count}`)
  for (const entry of stats.unsettled.slice(0, oldestLimit)) {
    lines.push(`  waiting for a person: ratchet unblock ${entry.taskId} --resolve ${entry.stepId} succeeded|failed`)
  }
  lines.push("", `Open intents by age (${stats.openIntents.total}):`)
  for (const entry of stats.openIntents.byAge) lines.push(`  ${entry.bucket.padEnd(width)}  ${entry.count}`)
  if (stats.openIntents.oldest.length > 0) {
    lines.push("", `Oldest open intents:`)
    for (const intent of stats.openIntents.oldest) {
      lines.push(
        `  ${formatAge(intent.ageMs).padStart(4)}  ${intent.taskId}  step ${intent.stepId} attempt ${intent.attempt}  ${intent.intentId} (${intent.state})`
      )
    }
  }
  return lines.join("\n")
}
