/**
 * The checker of the lease race: reads a task's log afterwards and proves, from the log alone,
 * that at no LSN were two holders valid and that every committed event's epoch was the current
 * one; then that what each process believed (its tenures and writes) agrees with the log.
 *
 * Written independently of the store's fencing code: it replays the lease events with the rules
 * of the brief and reports every departure, rather than trusting the store.
 */
import type * as EventStore from "@ratchet/storage/EventStore"

/** One lease tenure as a contender reported it. */
export interface Tenure {
  readonly pid: number
  readonly epoch: number
  /** The LSNs of the writes it committed under the epoch. */
  readonly lsns: ReadonlyArray<number>
  /** Its write with the epoch after releasing it: must have been refused. */
  readonly staleWriteAccepted: boolean
}

export interface Summary {
  /** Every epoch that held the lease, in order, with its holder's pid. */
  readonly holders: ReadonlyArray<{ readonly epoch: number; readonly pid: number; readonly by: "acquire" | "takeover" }>
  readonly writes: number
  readonly violations: ReadonlyArray<string>
}

/** Replays the lease of `log` (one task, LSN order) and checks every event against it. */
export const check = (log: ReadonlyArray<EventStore.StoredEvent>, tenures: ReadonlyArray<Tenure> = []): Summary => {
  const violations: Array<string> = []
  const holders: Array<{ epoch: number; pid: number; by: "acquire" | "takeover" }> = []
  /** The epoch that held the lease at each LSN of a non-lease event. */
  const writeEpoch = new Map<number, number>()
  let epoch = 0
  let held = false
  /** When the current holder took the lease (store clock) and its grace: a takeover must come after both. */
  let takenAt = 0
  let grace = 0
  let lastLsn = 0
  let writes = 0
  for (const stored of log) {
    if (stored.lsn <= lastLsn) violations.push(`LSN ${stored.lsn} does not increase (after ${lastLsn})`)
    lastLsn = stored.lsn
    const event = stored.event
    switch (event._tag) {
      case "LeaseAcquired":
        if (held) violations.push(`LSN ${stored.lsn}: epoch ${event.epoch} acquired while epoch ${epoch} was held: two holders`)
        if (event.epoch !== epoch + 1) violations.push(`LSN ${stored.lsn}: acquired epoch ${event.epoch} after epoch ${epoch}`)
        epoch = event.epoch
        held = true
        takenAt = stored.recordedAt
        grace = event.graceMs
        holders.push({ epoch, pid: event.owner.pid, by: "acquire" })
        break
      case "LeaseTakenOver":
        if (!held) violations.push(`LSN ${stored.lsn}: epoch ${event.epoch} took over a free lease`)
        if (event.epoch !== epoch + 1) violations.push(`LSN ${stored.lsn}: took over to epoch ${event.epoch} from epoch ${epoch}`)
        if (stored.epoch !== epoch) violations.push(`LSN ${stored.lsn}: the takeover presented epoch ${stored.epoch}, not the held ${epoch}`)
        // Heartbeats are not in the log, so this is the weakest bound: never before the grace that
        // followed the taking of the lease, whatever heartbeats extended it.
        if (held && stored.recordedAt <= takenAt + grace) {
          violations.push(`LSN ${stored.lsn}: epoch ${event.epoch} took over at ${stored.recordedAt}, within the grace of epoch ${epoch} (taken at ${takenAt}, grace ${grace} ms)`)
        }
        epoch = event.epoch
        held = true
        takenAt = stored.recordedAt
        grace = event.graceMs
        holders.push({ epoch, pid: event.owner.pid, by: "takeover" })
        break
      case "LeaseReleased":
        if (!held || event.epoch !== epoch) {
          violations.push(`LSN ${stored.lsn}: released epoch ${event.epoch} while ${held ? `epoch ${epoch} was held` : "no lease was held"}`)
        }
        if (stored.epoch !== event.epoch) violations.push(`LSN ${stored.lsn}: the release was written under epoch ${stored.epoch}`)
        held = false
        break
      case "TaskCreated":
        if (stored.epoch !== null) violations.push(`LSN ${stored.lsn}: the task was created under epoch ${stored.epoch}`)
        break
      default:
        writes += 1
        if (!held) violations.push(`LSN ${stored.lsn}: ${event._tag} written under epoch ${stored.epoch} while no lease was held`)
        else if (stored.epoch !== epoch) violations.push(`LSN ${stored.lsn}: ${event._tag} written under epoch ${stored.epoch} while epoch ${epoch} held the lease`)
        writeEpoch.set(stored.lsn, epoch)
    }
  }
  // What each process believed, against the log.
  const holderOf = new Map(holders.map((holder) => [holder.epoch, holder.pid]))
  const claimed = new Map<number, number>()
  for (const tenure of tenures) {
    const other = claimed.get(tenure.epoch)
    if (other !== undefined) violations.push(`epoch ${tenure.epoch} was believed held by two processes: ${other} and ${tenure.pid}`)
    claimed.set(tenure.epoch, tenure.pid)
    const inLog = holderOf.get(tenure.epoch)
    if (inLog !== tenure.pid) violations.push(`process ${tenure.pid} believed it held epoch ${tenure.epoch}; the log says ${inLog === undefined ? "nobody did" : `process ${inLog} did`}`)
    for (const lsn of tenure.lsns) {
      const at = writeEpoch.get(lsn)
      if (at !== tenure.epoch) violations.push(`process ${tenure.pid}'s write at LSN ${lsn} under epoch ${tenure.epoch} is ${at === undefined ? "not in the log" : `in the log under epoch ${at}`}`)
    }
    if (tenure.staleWriteAccepted) violations.push(`process ${tenure.pid}'s write with its released epoch ${tenure.epoch} was accepted`)
  }
  return { holders, writes, violations }
}
