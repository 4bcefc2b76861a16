/**
 * Fencing: whether an append's lease epoch lets it land, decided against the task's lease row
 * read in the same transaction, at the store's clock. Pure, so the rules are one function.
 *
 * - While the lease is held, the append must present the held epoch.
 * - While it is not held (never taken, or released), the append must present no epoch, unless it
 *   takes the lease itself: its first lease event is a `LeaseAcquired` whose epoch is exactly the
 *   row's epoch + 1 (1 when there is no row); it then presents no epoch or exactly that new one.
 * - The lease events of the batch must then follow one another: `LeaseAcquired` only while not
 *   held, `LeaseReleased` only of the held epoch, `LeaseTakenOver` only of a held lease, to the
 *   next epoch, and only strictly after the holder's grace deadline (last heartbeat + grace) by
 *   the store's clock. A second acquisition racing the first is therefore refused here, not
 *   merged into the lease, and a takeover the lease manager judged against a heartbeat that has
 *   since moved is refused too: the deadline is checked where the heartbeat is read.
 *
 * No other event may follow, in the same batch, a release of the presented epoch or a takeover
 * from it: it would be stored under an epoch the batch itself has just fenced.
 *
 * An epoch refusal is one `StaleEpoch` carrying what was presented and the row as it stands; a
 * takeover before the deadline is `LeaseNotExpired` with the deadline and the store's clock.
 *
 * @internal
 */
import type * as Event from "@ratchet/kernel/Event"
import * as EventStore from "../EventStore.js"

/** The part of the lease row fencing reads. */
export interface LeaseState {
  readonly epoch: number
  readonly held: boolean
  /** Store-clock milliseconds of the holder's last heartbeat (its acquisition, at first). */
  readonly heartbeatAt: number
  readonly graceMs: number
}

type LeaseEvent = Extract<Event.Event, { readonly _tag: "LeaseAcquired" | "LeaseTakenOver" | "LeaseReleased" }>

const isLeaseEvent = (event: Event.Event): event is LeaseEvent =>
  event._tag === "LeaseAcquired" || event._tag === "LeaseTakenOver" || event._tag === "LeaseReleased"

/** The instant strictly after which a held lease may be taken over. */
export const deadlineOf = (lease: Pick<LeaseState, "heartbeatAt" | "graceMs">): number => lease.heartbeatAt + lease.graceMs

type Step = LeaseState | "stale" | "not_expired"

/** The lease after `event` at store time `now`, or why `event` cannot follow `state`. */
const step = (state: LeaseState, event: LeaseEvent, now: number): Step => {
  switch (event._tag) {
    case "LeaseAcquired":
      return !state.held && event.epoch === state.epoch + 1
        ? { epoch: event.epoch, held: true, heartbeatAt: now, graceMs: event.graceMs }
        : "stale"
    case "LeaseTakenOver":
      if (!state.held || event.epoch !== state.epoch + 1) return "stale"
      return now > deadlineOf(state) ? { epoch: event.epoch, held: true, heartbeatAt: now, graceMs: event.graceMs } : "not_expired"
    case "LeaseReleased":
      return state.held && event.epoch === state.epoch ? { ...state, held: false } : "stale"
  }
}

/** `undefined` when the append may land; the rejection otherwise. */
export const check = (
  projectId: string,
  streamId: string,
  row: LeaseState | null,
  presented: number | null,
  events: ReadonlyArray<Event.Event>,
  now: number
): EventStore.StaleEpoch | EventStore.LeaseNotExpired | undefined => {
  const rejected = () =>
    new EventStore.StaleEpoch({
      projectId,
      streamId,
      presented,
      current: row === null ? null : row.epoch,
      held: row !== null && row.held
    })
  const leaseEvents = events.filter(isLeaseEvent)
  if (row !== null && row.held) {
    if (presented !== row.epoch) return rejected()
  } else if (presented !== null) {
    // The epoch an append presents is stored on each of its events, so it must be the epoch the
    // batch itself acquires: anything else would record a fencing token that never existed.
    const first = leaseEvents[0]
    const next = (row === null ? 0 : row.epoch) + 1
    if (first === undefined || first._tag !== "LeaseAcquired" || first.epoch !== next || presented !== next) {
      return rejected()
    }
  }
  let state: LeaseState = row ?? { epoch: 0, held: false, heartbeatAt: now, graceMs: 0 }
  const heldByPresented = (lease: LeaseState) => presented !== null && lease.held && lease.epoch === presented
  let tenureEnded = false
  for (const event of events) {
    if (!isLeaseEvent(event)) {
      // Every event is stored under the presented epoch: once the batch has released that epoch or
      // had it taken over, a later event would land as the write of a writer already fenced.
      if (tenureEnded) return rejected()
      continue
    }
    const after = step(state, event, now)
    if (after === "stale") return rejected()
    if (after === "not_expired") {
      return new EventStore.LeaseNotExpired({
        projectId,
        streamId,
        epoch: state.epoch,
        heartbeatAt: state.heartbeatAt,
        graceMs: state.graceMs,
        now
      })
    }
    if (heldByPresented(state) && !heldByPresented(after)) tenureEnded = true
    state = after
  }
  return undefined
}
