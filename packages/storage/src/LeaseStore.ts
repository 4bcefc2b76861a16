/**
 * The lease row's liveness, which is not in the log.
 *
 * A writer lease is taken, taken over and released by events (`LeaseAcquired`, `LeaseTakenOver`,
 * `LeaseReleased`) appended to the task's stream, so its epochs are part of the history. Its
 * heartbeats are not: a heartbeat every few seconds would bury the history and, worse, move the
 * stream's version under the holder's own writers. A heartbeat therefore only moves the lease row's
 * `heartbeatAt`, in a write transaction serialised with appends, and only for the epoch that holds
 * the lease. Every deadline (`heartbeatAt + graceMs`) is judged by the store's clock ({@link
 * Service.now}): PostgreSQL's, so runners on machines with skewed clocks agree.
 *
 * `ReadModels.rebuild` folds the lease from its events, so a rebuilt lease row carries the
 * acquisition time as its heartbeat; the stored row is the authority for liveness.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { InvalidRequest, StaleEpoch } from "./EventStore.js"
import type { LeaseRow } from "./ReadModel.js"
import type { StorageError } from "./StorageError.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface HeartbeatRequest {
  readonly projectId: string
  readonly streamId: string
  /** The holder's epoch: a heartbeat of any other epoch, or of a released lease, is refused. */
  readonly epoch: number
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Records that the holder of `epoch` is alive, at the store's clock (never earlier than the
   * heartbeat before it), and returns the row. A lease past its deadline is still held, so its
   * holder's heartbeat still lands until somebody takes it over; after that, or after a release,
   * it is {@link StaleEpoch}.
   */
  readonly heartbeat: (request: HeartbeatRequest) => Effect.Effect<LeaseRow, StaleEpoch | InvalidRequest | StorageError>
  /** The store's clock, in epoch milliseconds. */
  readonly now: Effect.Effect<number, StorageError>
}

/**
 * @since 0.1.0
 * @category services
 */
export class LeaseStore extends Context.Tag("@ratchet/storage/LeaseStore")<LeaseStore, Service>() {}
