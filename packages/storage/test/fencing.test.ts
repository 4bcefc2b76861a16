import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as Fencing from "../src/internal/fencing.js"

const owner = { workspaceId: "ws", host: "cli", pid: 1, processStartedAt: 1 }
const actor = { kind: "runner", id: "r" } as const
const acquired = (epoch: number): Event.Event => ({
  _tag: "LeaseAcquired",
  version: 1,
  actor,
  at: 1,
  epoch,
  owner,
  heartbeatMs: 2000,
  graceMs: 3000
})
const takenOver = (epoch: number): Event.Event => ({
  _tag: "LeaseTakenOver",
  version: 1,
  actor,
  at: 1,
  epoch,
  owner,
  displaced: owner,
  heartbeatMs: 2000,
  graceMs: 3000
})
const released = (epoch: number): Event.Event => ({ _tag: "LeaseReleased", version: 1, actor, at: 1, epoch })
const other: Event.Event = { _tag: "InterviewBegun", version: 1, actor, at: 1 }

// [row, presented epoch, events, lands?] — written by hand from the fencing rules.
const cases: ReadonlyArray<readonly [string, Fencing.LeaseState | null, number | null, ReadonlyArray<Event.Event>, boolean]> = [
  ["no lease, no epoch, plain event", null, null, [other], true],
  ["no lease, epoch presented without acquiring", null, 1, [other], false],
  ["no lease, acquire epoch 1 presenting nothing", null, null, [acquired(1)], true],
  ["no lease, acquire epoch 1 presenting 1", null, 1, [acquired(1), other], true],
  ["no lease, acquire epoch 1 presenting 999", null, 999, [acquired(1)], false],
  ["no lease, acquire epoch 1 presenting 0", null, 0, [acquired(1)], false],
  ["no lease, acquire epoch 2 (skips one)", null, null, [acquired(2)], false],
  ["released at 2, acquire 3 presenting 3", { epoch: 2, held: false }, 3, [acquired(3)], true],
  ["released at 2, acquire 3 presenting 0", { epoch: 2, held: false }, 0, [acquired(3)], false],
  ["released at 2, old epoch 2 writes", { epoch: 2, held: false }, 2, [other], false],
  ["held at 2, holder writes", { epoch: 2, held: true }, 2, [other], true],
  ["held at 2, stale epoch 1 writes", { epoch: 2, held: true }, 1, [other], false],
  ["held at 2, no epoch writes", { epoch: 2, held: true }, null, [other], false],
  ["held at 2, second acquisition", { epoch: 2, held: true }, 2, [acquired(3)], false],
  ["held at 2, takeover to 3", { epoch: 2, held: true }, 2, [takenOver(3)], true],
  ["held at 2, takeover to 4", { epoch: 2, held: true }, 2, [takenOver(4)], false],
  ["held at 2, release of 2", { epoch: 2, held: true }, 2, [released(2)], true],
  ["held at 2, release of 1", { epoch: 2, held: true }, 2, [released(1)], false],
  ["held at 2, release twice", { epoch: 2, held: true }, 2, [released(2), released(2)], false]
]

describe("fencing", () => {
  it.each(cases)("%s", (_name, row, presented, events, lands) => {
    const rejection = Fencing.check("p", "s", row, presented, events)
    if (lands) {
      expect(rejection).toBeUndefined()
    } else {
      expect(rejection?._tag).toBe("@ratchet/storage/StaleEpoch")
      expect(rejection?.presented).toBe(presented)
      expect(rejection?.current).toBe(row === null ? null : row.epoch)
    }
  })
})
