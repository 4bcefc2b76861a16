/**
 * The lease manager's refusals. Each names the task, what stands in the way and what to do next;
 * none is thrown. Infrastructure failures stay `StorageError`s from the store.
 *
 * @since 0.1.0
 */
import * as Event from "@ratchet/kernel/Event"
import * as Schema from "effect/Schema"
import * as Owner from "./Owner.js"

const iso = (ms: number): string => new Date(ms).toISOString()

/**
 * Someone else holds the lease. An expired lease is still held: it is not acquired but taken over.
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseHeld extends Schema.TaggedError<LeaseHeld>()("@ratchet/lease/LeaseHeld", {
  projectId: Schema.String,
  taskId: Schema.String,
  epoch: Schema.Number,
  holder: Event.LeaseOwner,
  heartbeatAt: Schema.Number,
  /** The holder's grace deadline: a takeover is allowed strictly after it. */
  deadline: Schema.Number,
  /** The store's clock when the lease was read. */
  now: Schema.Number
}) {
  /** Whether the grace deadline has passed, so that a takeover would be allowed now. */
  get expired(): boolean {
    return this.now > this.deadline
  }
  override get message(): string {
    const next = this.expired
      ? `Its grace ran out at ${iso(this.deadline)}: if the holder is gone, take the lease over explicitly (${Owner.takeoverCommand(this.taskId, this.holder)}).`
      : `It is protected until ${iso(this.deadline)}; wait for the holder to finish, or take it over after that if the holder is gone (${
        Owner.takeoverCommand(this.taskId, this.holder)
      }).`
    return `Task ${this.taskId} is leased (epoch ${this.epoch}) by ${Owner.describe(this.holder)}, last heartbeat ${
      iso(this.heartbeatAt)
    }. ${next}`
  }
}

/**
 * A takeover before the holder's grace deadline, by the store's clock.
 *
 * @since 0.1.0
 * @category errors
 */
export class TakeoverTooEarly extends Schema.TaggedError<TakeoverTooEarly>()("@ratchet/lease/TakeoverTooEarly", {
  projectId: Schema.String,
  taskId: Schema.String,
  epoch: Schema.Number,
  holder: Event.LeaseOwner,
  heartbeatAt: Schema.Number,
  deadline: Schema.Number,
  now: Schema.Number
}) {
  /** How long until a takeover is allowed (it must come strictly after the deadline). */
  get waitMs(): number {
    return Math.max(this.deadline - this.now + 1, 1)
  }
  override get message(): string {
    return `Takeover of task ${this.taskId} refused: ${Owner.describe(this.holder)} holds it (epoch ${this.epoch}), last heartbeat ${
      iso(this.heartbeatAt)
    }, protected until ${iso(this.deadline)}; the store's clock reads ${iso(this.now)}. A missing heartbeat alone never hands a lease over: try again in ${this.waitMs} ms, if the holder is still silent.`
  }
}

/**
 * A release or takeover of a lease that nobody holds: never acquired, or already released.
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseNotHeld extends Schema.TaggedError<LeaseNotHeld>()("@ratchet/lease/LeaseNotHeld", {
  projectId: Schema.String,
  taskId: Schema.String,
  operation: Schema.Literal("release", "takeover"),
  /** The last epoch, or `null` when the task never had a lease. */
  lastEpoch: Schema.NullOr(Schema.Number)
}) {
  override get message(): string {
    const state = this.lastEpoch === null
      ? `task ${this.taskId} has never been leased`
      : `the lease of task ${this.taskId} was released at epoch ${this.lastEpoch}`
    return this.operation === "release"
      ? `Nothing to release: ${state}. A lease is released once, by its holder.`
      : `Nothing to take over: ${state}. Acquire it instead (ratchet lease acquire ${this.taskId}).`
  }
}

/**
 * A release by an epoch that does not hold the lease.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotHolder extends Schema.TaggedError<NotHolder>()("@ratchet/lease/NotHolder", {
  projectId: Schema.String,
  taskId: Schema.String,
  presented: Schema.Number,
  epoch: Schema.Number,
  holder: Event.LeaseOwner
}) {
  override get message(): string {
    return `Release of task ${this.taskId} refused: it was asked for epoch ${this.presented}, but the lease is held at epoch ${this.epoch} by ${
      Owner.describe(this.holder)
    }. Only the holder releases its lease; this caller was displaced and must stop writing.`
  }
}

/**
 * The holder found, heartbeating or writing, that its lease is gone: taken over (or released by
 * somebody acting for it). Whatever it was doing must stop; its writes are rejected by the store.
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseLost extends Schema.TaggedError<LeaseLost>()("@ratchet/lease/LeaseLost", {
  projectId: Schema.String,
  taskId: Schema.String,
  epoch: Schema.Number,
  /** The lease's epoch now, and whether it is held, as the store reported them. */
  currentEpoch: Schema.NullOr(Schema.Number),
  held: Schema.Boolean,
  /** Who took the lease over (the owner of `currentEpoch`), when the store could still say. */
  takenBy: Schema.optional(Event.LeaseOwner)
}) {
  override get message(): string {
    // A later epoch means another holder took the lease over, whether or not it still holds it.
    const takenOver = this.currentEpoch !== null && this.currentEpoch > this.epoch
    const by = this.takenBy === undefined ? "" : ` by ${Owner.describe(this.takenBy)}`
    const now = takenOver
      ? `it was taken over at epoch ${this.currentEpoch}${by}${this.held ? ", which holds it now" : " and has been released since"}`
      : this.held
      ? `it is now held at epoch ${this.currentEpoch}`
      : "it has been released"
    return `Lost the lease of task ${this.taskId}: this holder had epoch ${this.epoch} but ${now}. Stop writing: the store rejects every write of epoch ${this.epoch}. Run \`ratchet status ${this.taskId}\` to see who holds it.`
  }
}

/**
 * The lease of a task that does not exist on the store: there is no stream to fence.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()("@ratchet/lease/TaskNotFound", {
  projectId: Schema.String,
  taskId: Schema.String,
  branch: Schema.String
}) {
  override get message(): string {
    return `Task ${this.taskId} (branch ${this.branch}) is not in the store of project ${this.projectId}. Check the id with \`ratchet task list\`.`
  }
}

/**
 * Before a takeover, the last checkpoint the read models record does not match the log: the
 * takeover would resume from a point that is not in the history. Nothing is written.
 *
 * @since 0.1.0
 * @category errors
 */
export class CheckpointMismatch extends Schema.TaggedError<CheckpointMismatch>()("@ratchet/lease/CheckpointMismatch", {
  projectId: Schema.String,
  taskId: Schema.String,
  lsn: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `Takeover of task ${this.taskId} refused: the last checkpoint (LSN ${this.lsn}) does not match the stream: ${this.detail}. The store's read models disagree with its log, so there is no verified point to resume from; nothing was written. Compare them (ReadModels.snapshot against ReadModels.rebuild) and repair the store before taking over.`
  }
}

/**
 * The task's stream kept moving while the lease manager tried to write a lease event.
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseContention extends Schema.TaggedError<LeaseContention>()("@ratchet/lease/LeaseContention", {
  projectId: Schema.String,
  taskId: Schema.String,
  operation: Schema.String,
  attempts: Schema.Number
}) {
  override get message(): string {
    return `Could not ${this.operation} the lease of task ${this.taskId}: its stream moved under ${this.attempts} attempts in a row. Another writer is busy on it; try again.`
  }
}
