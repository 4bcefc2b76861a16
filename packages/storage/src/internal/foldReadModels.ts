/**
 * The read models' fold over many events, on a working copy of its own: what `ReadModel.apply` and
 * `ReadModel.fold` run, and the store's streaming fold of a rebuild or a fork.
 *
 * Folding event by event through immutable snapshots copies a map of rows for every event that
 * changes one: quadratic in the number of events when the map grows with them, as the attempts and
 * intents of a long run do. Here each collection is copied once, on its first change, and written
 * in place until the fold hands its snapshot out.
 *
 * @internal
 */
import * as Run from "@ratchet/kernel/Run"
import * as Task from "@ratchet/kernel/Task"
import type { StoredEvent } from "../EventStore.js"
import type { AttemptRow, CheckpointRow, IntentRow, Snapshot } from "../ReadModel.js"

/**
 * The read models of `from` as a fold over batches of events leaves them. The attempts, intents and
 * checkpoints are copied once, on their first change, into collections of the fold's own, written
 * in place from then on and never handed out before the fold is over; the task is folded by
 * `Task.fold` a batch at a time. Rows no event touches stay the objects `from` holds, so the store
 * writes exactly the rows that changed.
 */
export const folding = (from: Snapshot) => {
  let summary = from.summary
  let lease = from.lease
  // `Run.change` reads the rows through this record; the maps in it become the fold's own copies.
  const run: { attempts: ReadonlyMap<string, AttemptRow>; intents: ReadonlyMap<string, IntentRow> } = {
    attempts: from.attempts,
    intents: from.intents
  }
  let attempts: Map<string, AttemptRow> | null = null
  let intents: Map<string, IntentRow> | null = null
  let checkpoints: Array<CheckpointRow> | null = null
  let folded = false

  const add = (batch: ReadonlyArray<StoredEvent>): void => {
    const last = batch.at(-1)
    if (last === undefined) return
    folded = true
    const aggregate = Task.fold(batch.map((stored) => stored.event), summary?.task ?? Task.initial)
    if (aggregate._tag === "Task") {
      summary = {
        projectId: last.projectId,
        streamId: last.streamId,
        branch: last.branch,
        version: last.version,
        lastLsn: last.lsn,
        task: aggregate
      }
    }
    for (const stored of batch) {
      const event = stored.event
      const base = { streamId: stored.streamId, branch: stored.branch }
      // The run's attempts, intents and turns are the kernel's (`Run.change`).
      const changed = Run.change(run, event, stored.lsn, base)
      if (changed?._tag === "Attempt") {
        run.attempts = attempts ??= new Map(from.attempts)
        attempts.set(changed.key, changed.row)
      } else if (changed?._tag === "Intent") {
        run.intents = intents ??= new Map(from.intents)
        intents.set(changed.key, changed.row)
      }
      switch (event._tag) {
        case "CheckpointRecorded":
          checkpoints ??= [...from.checkpoints]
          checkpoints.push({ ...base, lsn: stored.lsn, kind: event.kind, runId: event.runId })
          break
        case "LeaseAcquired":
        case "LeaseTakenOver":
          lease = {
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
          break
        case "LeaseReleased":
          if (lease !== null) lease = { ...lease, held: false, updatedLsn: stored.lsn }
          break
        default:
          // Task lifecycle events change only the summary, folded above; run events the run's rows.
          break
      }
    }
  }

  const result = (): Snapshot =>
    folded
      ? {
        ...from,
        summary,
        attempts: run.attempts,
        intents: run.intents,
        lease,
        checkpoints: checkpoints ?? from.checkpoints
      }
      : from

  return { add, result }
}
