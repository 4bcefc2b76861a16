/**
 * The event store port: Ratchet's authority.
 *
 * One append-only log. Each task is a stream (keyed by its task id, inside a project) with its own
 * version per branch; every event gets a global, strictly increasing LSN, the branch it was written
 * on, the lease epoch it was written under and the operation id of the append that wrote it.
 *
 * An append is one transaction that is conditional three ways:
 * - on the **expected version** of the branch (stale → {@link VersionConflict} naming the current
 *   version);
 * - on the **lease epoch** (checked against the task's lease row in the same transaction: a stale
 *   epoch, or no epoch while a lease is held → {@link StaleEpoch}; a `LeaseTakenOver` before the
 *   holder's grace deadline by the store's clock → {@link LeaseNotExpired});
 * - on the **operation id** (an id already committed returns the first result and writes nothing;
 *   the same id with a different request → {@link OperationReused}).
 * The read models (task summary, attempts, open intents, lease, checkpoints) are updated in the same
 * transaction, so a read never sees events without their read models or the reverse.
 *
 * Branches: `fork` starts a new branch of a stream at an LSN of an existing branch. Reading a branch
 * yields its ancestors' events up to the fork point, then its own; the old branch is never touched.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import type { StorageError } from "./StorageError.js"

/**
 * The branch every stream starts on.
 *
 * @since 0.1.0
 * @category models
 */
export const mainBranch = "main"

/**
 * Identifiers accepted by the store: 1 to 128 characters of `[A-Za-z0-9._:-]`, not made of dots
 * alone. They end up in file names, log lines and SQL, so the alphabet is closed, and `.` and `..`
 * (which name directories) are refused.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Id = Schema.String.pipe(
  Schema.pattern(/^(?!\.+$)[A-Za-z0-9._:-]{1,128}$/),
  Schema.annotations({
    message: () => "expected an identifier of 1 to 128 characters from A-Z a-z 0-9 . _ : -, not only dots"
  })
)

/**
 * @since 0.1.0
 * @category models
 */
export interface AppendRequest {
  readonly projectId: string
  readonly streamId: string
  /** Defaults to {@link mainBranch}. */
  readonly branch?: string | undefined
  /** The branch version the caller decided against; 0 creates the stream. */
  readonly expectedVersion: number
  /** The writer's lease epoch, or `null` for a write that needs no lease (none may be held then). */
  readonly epoch: number | null
  /** Makes the append idempotent: a replay returns the first result and writes nothing. */
  readonly operationId: string
  readonly events: ReadonlyArray<Event.Event>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface AppendResult {
  readonly streamId: string
  readonly branch: string
  /** The branch version after the append. */
  readonly version: number
  readonly firstLsn: number
  readonly lastLsn: number
  /** True when this operation id had already been committed and nothing was written now. */
  readonly replayed: boolean
}

/**
 * One event as stored.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredEvent {
  readonly lsn: number
  readonly projectId: string
  readonly streamId: string
  /**
   * The branch the event was read through. On a fork, an ancestor's event (its LSN at or below the
   * fork point) reads as the fork's, so folding a read gives that branch's read models; where it
   * was written follows from `branches` (`parent`, `forkLsn`).
   */
  readonly branch: string
  /** The event's position on the branch it was read through (1-based). */
  readonly version: number
  readonly epoch: number | null
  readonly operationId: string
  /** Epoch milliseconds by the store's clock when the event was committed. */
  readonly recordedAt: number
  readonly event: Event.Event
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Head {
  readonly projectId: string
  readonly streamId: string
  readonly branch: string
  readonly version: number
  /** The LSN of the branch's newest event (its own or, right after a fork, its ancestor's). */
  readonly lastLsn: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Branch {
  readonly streamId: string
  readonly branch: string
  readonly parent: string | null
  /** The last ancestor LSN the branch includes; `null` for the main branch. */
  readonly forkLsn: number | null
  readonly createdAt: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ReadRequest {
  readonly streamId: string
  readonly branch?: string | undefined
  /** Inclusive; defaults to the first event. */
  readonly fromLsn?: number | undefined
  /** Inclusive; defaults to the newest event. */
  readonly toLsn?: number | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ForkRequest {
  readonly streamId: string
  readonly from?: string | undefined
  /** The last LSN of `from` that the new branch includes. Must be an event visible on `from`. */
  readonly atLsn: number
  readonly branch: string
}

/**
 * The branch moved since the caller read it.
 *
 * @since 0.1.0
 * @category errors
 */
export class VersionConflict extends Schema.TaggedError<VersionConflict>()("@ratchet/storage/VersionConflict", {
  streamId: Schema.String,
  branch: Schema.String,
  expected: Schema.Number,
  actual: Schema.Number
}) {
  override get message(): string {
    return `Stream ${this.streamId} (branch ${this.branch}) is at version ${this.actual}, not ${this.expected}: another writer appended first. Read the task again and decide against version ${this.actual}.`
  }
}

/**
 * The append's lease epoch is not the task's current one: the writer was fenced off.
 *
 * @since 0.1.0
 * @category errors
 */
export class StaleEpoch extends Schema.TaggedError<StaleEpoch>()("@ratchet/storage/StaleEpoch", {
  projectId: Schema.String,
  streamId: Schema.String,
  presented: Schema.NullOr(Schema.Number),
  current: Schema.NullOr(Schema.Number),
  held: Schema.Boolean
}) {
  override get message(): string {
    const presented = this.presented === null ? "no lease epoch" : `lease epoch ${this.presented}`
    const current = this.held
      ? `the lease is held at epoch ${this.current}`
      : this.current === null
      ? "no lease has ever been taken"
      : `the lease was released at epoch ${this.current}`
    return `Write to task ${this.streamId} rejected: it carried ${presented} but ${current}. This writer no longer owns the task; stop writing, and take the lease (ratchet lease acquire|takeover ${this.streamId}) if it should.`
  }
}

/**
 * A takeover came before the holder's grace deadline (its last heartbeat plus its grace), judged by
 * the store's clock in the append's own transaction. A takeover is allowed only strictly after it.
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseNotExpired extends Schema.TaggedError<LeaseNotExpired>()("@ratchet/storage/LeaseNotExpired", {
  projectId: Schema.String,
  streamId: Schema.String,
  epoch: Schema.Number,
  heartbeatAt: Schema.Number,
  graceMs: Schema.Number,
  now: Schema.Number
}) {
  /** The last instant at which the lease is still protected: a takeover must come after it. */
  get deadline(): number {
    return this.heartbeatAt + this.graceMs
  }
  override get message(): string {
    return `Takeover of task ${this.streamId} refused: the lease at epoch ${this.epoch} heartbeat at ${
      new Date(this.heartbeatAt).toISOString()
    } and is protected until ${new Date(this.deadline).toISOString()} (grace ${this.graceMs} ms); the store's clock reads ${
      new Date(this.now).toISOString()
    }. Take over only after the deadline, or ask the holder to release.`
  }
}

/**
 * An operation id was committed before with a different request.
 *
 * @since 0.1.0
 * @category errors
 */
export class OperationReused extends Schema.TaggedError<OperationReused>()("@ratchet/storage/OperationReused", {
  operationId: Schema.String,
  streamId: Schema.String
}) {
  override get message(): string {
    return `Operation id ${this.operationId} was already used for a different append (on stream ${this.streamId}). Operation ids identify one request; generate a new one for a new request.`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export class BranchNotFound extends Schema.TaggedError<BranchNotFound>()("@ratchet/storage/BranchNotFound", {
  streamId: Schema.String,
  branch: Schema.String
}) {
  override get message(): string {
    return `Stream ${this.streamId} has no branch "${this.branch}". List its branches, or read the main branch.`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export class BranchExists extends Schema.TaggedError<BranchExists>()("@ratchet/storage/BranchExists", {
  streamId: Schema.String,
  branch: Schema.String
}) {
  override get message(): string {
    return `Stream ${this.streamId} already has a branch "${this.branch}"; branches are never rewritten. Choose another name.`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("@ratchet/storage/InvalidRequest", {
  field: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Invalid storage request: ${this.field} ${this.reason}.`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export type AppendError =
  | VersionConflict
  | StaleEpoch
  | LeaseNotExpired
  | OperationReused
  | BranchNotFound
  | InvalidRequest
  | StorageError

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Appends a batch atomically, with its read models, or not at all. */
  readonly append: (request: AppendRequest) => Effect.Effect<AppendResult, AppendError>
  /** The events of a branch in LSN order, ancestors first. Lazy and paged. */
  readonly read: (
    request: ReadRequest
  ) => Stream.Stream<StoredEvent, BranchNotFound | InvalidRequest | StorageError>
  /** The branch's version and newest LSN, or `null` for a stream that does not exist. */
  readonly head: (
    streamId: string,
    branch?: string
  ) => Effect.Effect<Head | null, BranchNotFound | InvalidRequest | StorageError>
  readonly fork: (
    request: ForkRequest
  ) => Effect.Effect<Branch, BranchNotFound | BranchExists | InvalidRequest | StorageError>
  readonly branches: (streamId: string) => Effect.Effect<ReadonlyArray<Branch>, InvalidRequest | StorageError>
}

/**
 * @since 0.1.0
 * @category services
 */
export class EventStore extends Context.Tag("@ratchet/storage/EventStore")<EventStore, Service>() {}
