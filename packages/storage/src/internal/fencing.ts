/**
 * Fencing: whether an append's lease epoch lets it land, decided against the task's lease row
 * read in the same transaction. Pure, so the rules are one function.
 *
 * - While the lease is held, the append must present the held epoch.
 * - While it is not held (never taken, or released), the append must present no epoch, unless it
 *   takes the lease itself: its first lease event is a `LeaseAcquired` or `LeaseTakenOver` whose
 *   epoch is exactly the row's epoch + 1 (1 when there is no row); it then presents no epoch or
 *   exactly that new one. Acquiring needs no prior epoch.
 * - The lease events of the batch must then follow one another: `LeaseAcquired` only while not
 *   held, `LeaseTakenOver` always to the next epoch, `LeaseReleased` only of the held epoch. A
 *   second acquisition racing the first is therefore refused here, not merged into the lease.
 *
 * Every refusal is one `StaleEpoch` carrying what was presented and the row as it stands.
 *
 * @internal
 */
import type * as Event from "@ratchet/kernel/Event"
import * as EventStore from "../EventStore.js"

/** The part of the lease row fencing reads. */
export interface LeaseState {
  readonly epoch: number
  readonly held: boolean
}

type LeaseEvent = Extract<Event.Event, { readonly _tag: "LeaseAcquired" | "LeaseTakenOver" | "LeaseReleased" }>

const isLeaseEvent = (event: Event.Event): event is LeaseEvent =>
  event._tag === "LeaseAcquired" || event._tag === "LeaseTakenOver" || event._tag === "LeaseReleased"

/** The lease after `event`, or `undefined` when `event` cannot follow `state`. */
const step = (state: LeaseState, event: LeaseEvent): LeaseState | undefined => {
  switch (event._tag) {
    case "LeaseAcquired":
      return !state.held && event.epoch === state.epoch + 1 ? { epoch: event.epoch, held: true } : undefined
    case "LeaseTakenOver":
      return event.epoch === state.epoch + 1 ? { epoch: event.epoch, held: true } : undefined
    case "LeaseReleased":
      return state.held && event.epoch === state.epoch ? { epoch: event.epoch, held: false } : undefined
  }
}

/** `undefined` when the append may land; the rejection otherwise. */
export const check = (
  projectId: string,
  streamId: string,
  row: LeaseState | null,
  presented: number | null,
  events: ReadonlyArray<Event.Event>
): EventStore.StaleEpoch | undefined => {
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
    if (first === undefined || first._tag === "LeaseReleased" || first.epoch !== next || presented !== next) {
      return rejected()
    }
  }
  let state: LeaseState | undefined = row ?? { epoch: 0, held: false }
  for (const event of leaseEvents) {
    state = step(state, event)
    if (state === undefined) return rejected()
  }
  return undefined
}
