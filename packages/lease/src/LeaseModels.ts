/**
 * What the lease manager speaks in: which lease, a lease as held, what an observer sees, a
 * takeover's result, a write made under a lease, a holder's handle, the options, and the refusals
 * of each operation. `LeaseManager` re-exports them, so callers keep one import.
 *
 * @since 0.2.0
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as EventStore from "@ratchet/storage/EventStore"
import type * as ReadModel from "@ratchet/storage/ReadModel"
import type { StorageError } from "@ratchet/storage/StorageError"
import type * as Effect from "effect/Effect"
import type * as LeaseError from "./LeaseError.js"
import type * as Owner from "./Owner.js"

/**
 * Which lease: a task of a project. `branch` is the branch the lease events are written on (the
 * lease itself is the task's, on every branch); it defaults to `main`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Key {
  readonly projectId: string
  readonly taskId: string
  readonly branch?: string | undefined
}

/**
 * A lease as its holder sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lease {
  readonly projectId: string
  readonly taskId: string
  readonly branch: string
  readonly epoch: number
  readonly owner: Owner.Owner
  readonly heartbeatMs: number
  readonly graceMs: number
  /** Store-clock milliseconds. */
  readonly acquiredAt: number
  readonly heartbeatAt: number
  /** `heartbeatAt + graceMs`: a takeover is allowed strictly after it. */
  readonly deadline: number
}

/**
 * A task's lease as anyone may read it. `expired` is held but past its deadline: still held, but
 * a takeover would be allowed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Observation {
  readonly projectId: string
  readonly taskId: string
  readonly status: "free" | "held" | "expired"
  /** The current (held) or last (released) epoch; `null` for a task never leased. */
  readonly epoch: number | null
  readonly holder: Owner.Owner | null
  readonly acquiredAt: number | null
  readonly heartbeatAt: number | null
  readonly graceMs: number | null
  readonly deadline: number | null
  /** The store's clock when the lease was read. */
  readonly now: number
}

/**
 * What a takeover did: the new lease, who it displaced and the checkpoint it verified.
 *
 * @since 0.1.0
 * @category models
 */
export interface Takeover {
  readonly lease: Lease
  readonly displaced: Owner.Owner
  readonly displacedEpoch: number
  /** The last checkpoint, verified against the stream; `null` when the task has none yet. */
  readonly checkpoint: ReadModel.CheckpointRow | null
}

/**
 * An append made under a lease: the lease supplies the project, the task, the branch and the epoch.
 *
 * @since 0.1.0
 * @category models
 */
export interface LeasedAppend {
  readonly expectedVersion: number
  readonly operationId: string
  readonly events: ReadonlyArray<Event.Event>
}

/**
 * A lease held inside a scope, kept alive by a heartbeat fiber.
 *
 * @since 0.1.0
 * @category models
 */
export interface Holder {
  readonly epoch: number
  /** The lease as of its last heartbeat. */
  readonly lease: Effect.Effect<Lease>
  /** Appends under this lease's epoch; a fenced write also marks the lease lost. */
  readonly append: (request: LeasedAppend) => Effect.Effect<EventStore.AppendResult, EventStore.AppendError>
  /** Fails with `LeaseLost` once a heartbeat or a write finds the lease gone; never succeeds. */
  readonly lost: Effect.Effect<never, LeaseError.LeaseLost>
  /** Whether a heartbeat or a write has found the lease gone. */
  readonly isLost: Effect.Effect<boolean>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Who the lease events are attributed to; by default the owner's host, as a `runner` actor. */
  readonly actor?: Event.Actor | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type AcquireError =
  | LeaseError.LeaseHeld
  | LeaseError.LeaseLost
  | LeaseError.TaskNotFound
  | LeaseError.LeaseContention
  | Owner.InvalidOwner
  | EventStore.InvalidRequest
  | StorageError

/**
 * @since 0.1.0
 * @category models
 */
export type TakeoverError =
  | LeaseError.LeaseNotHeld
  | LeaseError.LeaseLost
  | LeaseError.TakeoverTooEarly
  | LeaseError.CheckpointMismatch
  | LeaseError.TaskNotFound
  | LeaseError.LeaseContention
  | Owner.InvalidOwner
  | EventStore.InvalidRequest
  | StorageError

/**
 * @since 0.1.0
 * @category models
 */
export type ReleaseError =
  | LeaseError.LeaseNotHeld
  | LeaseError.NotHolder
  | LeaseError.TaskNotFound
  | LeaseError.LeaseContention
  | EventStore.InvalidRequest
  | StorageError
