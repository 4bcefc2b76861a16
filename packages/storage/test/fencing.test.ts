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

// The store's clock in every case; a lease row last heartbeat at 1_000 with grace 3_000 is
// protected up to and including 4_000, so a takeover is allowed only at 4_001 or later.
const NOW = 10_000
const free = (epoch: number): Fencing.LeaseState => ({ epoch, held: false, heartbeatAt: 1_000, graceMs: 3_000 })
/** Held, with the deadline long past at NOW. */
const expired = (epoch: number): Fencing.LeaseState => ({ epoch, held: true, heartbeatAt: 1_000, graceMs: 3_000 })
/** Held, last heartbeat at `heartbeatAt`, grace 3_000. */
const heldAt = (epoch: number, heartbeatAt: number): Fencing.LeaseState => ({ epoch, held: true, heartbeatAt, graceMs: 3_000 })

type Outcome = "lands" | "stale" | "not_expired"

// [name, row, presented epoch, events, now, outcome] — written by hand from the fencing rules.
const cases: ReadonlyArray<
  readonly [string, Fencing.LeaseState | null, number | null, ReadonlyArray<Event.Event>, number, Outcome]
> = [
  ["no lease, no epoch, plain event", null, null, [other], NOW, "lands"],
  ["no lease, epoch presented without acquiring", null, 1, [other], NOW, "stale"],
  ["no lease, acquire epoch 1 presenting nothing", null, null, [acquired(1)], NOW, "lands"],
  ["no lease, acquire epoch 1 presenting 1", null, 1, [acquired(1), other], NOW, "lands"],
  ["no lease, acquire epoch 1 presenting 999", null, 999, [acquired(1)], NOW, "stale"],
  ["no lease, acquire epoch 1 presenting 0", null, 0, [acquired(1)], NOW, "stale"],
  ["no lease, acquire epoch 2 (skips one)", null, null, [acquired(2)], NOW, "stale"],
  ["no lease, takeover of nothing", null, null, [takenOver(1)], NOW, "stale"],
  ["no lease, takeover of nothing presenting its epoch", null, 1, [takenOver(1)], NOW, "stale"],
  ["released at 2, acquire 3 presenting 3", free(2), 3, [acquired(3)], NOW, "lands"],
  ["released at 2, acquire 3 presenting 0", free(2), 0, [acquired(3)], NOW, "stale"],
  ["released at 2, old epoch 2 writes", free(2), 2, [other], NOW, "stale"],
  ["released at 2, takeover to 3 (a free lease is acquired, not taken over)", free(2), null, [takenOver(3)], NOW, "stale"],
  ["released at 2, takeover to 3 presenting 3", free(2), 3, [takenOver(3)], NOW, "stale"],
  ["held at 2, holder writes", expired(2), 2, [other], NOW, "lands"],
  ["held at 2, stale epoch 1 writes", expired(2), 1, [other], NOW, "stale"],
  ["held at 2, no epoch writes", expired(2), null, [other], NOW, "stale"],
  ["held at 2, second acquisition", expired(2), 2, [acquired(3)], NOW, "stale"],
  ["held at 2 past its deadline, takeover to 3", expired(2), 2, [takenOver(3)], NOW, "lands"],
  ["held at 2 past its deadline, takeover to 4", expired(2), 2, [takenOver(4)], NOW, "stale"],
  ["held at 2 past its deadline, takeover presenting no epoch", expired(2), null, [takenOver(3)], NOW, "stale"],
  ["held at 2, takeover one millisecond before the deadline", heldAt(2, 1_000), 2, [takenOver(3)], 3_999, "not_expired"],
  ["held at 2, takeover exactly at the deadline", heldAt(2, 1_000), 2, [takenOver(3)], 4_000, "not_expired"],
  ["held at 2, takeover one millisecond after the deadline", heldAt(2, 1_000), 2, [takenOver(3)], 4_001, "lands"],
  ["held at 2, takeover right after a heartbeat", heldAt(2, NOW), 2, [takenOver(3)], NOW, "not_expired"],
  ["held at 2 past its deadline, two takeovers in one batch", expired(2), 2, [takenOver(3), takenOver(4)], NOW, "not_expired"],
  ["no lease, acquire then take over in one batch", null, null, [acquired(1), takenOver(2)], NOW, "not_expired"],
  ["held at 2, release of 2", expired(2), 2, [released(2)], NOW, "lands"],
  ["held at 2, release of 1", expired(2), 2, [released(1)], NOW, "stale"],
  ["held at 2, release twice", expired(2), 2, [released(2), released(2)], NOW, "stale"],
  ["held at 2, release then acquire 3", expired(2), 2, [released(2), acquired(3)], NOW, "lands"],
  ["held at 2, release then take over", expired(2), 2, [released(2), takenOver(3)], NOW, "stale"],
  // Events after a lease change in the same batch are stored under the presented epoch.
  ["held at 2 past its deadline, takeover then a write under the old epoch", expired(2), 2, [takenOver(3), other], NOW, "stale"],
  ["held at 2, release then a write", expired(2), 2, [released(2), other], NOW, "stale"],
  ["held at 2, write then release", expired(2), 2, [other, released(2)], NOW, "lands"],
  ["held at 2, release, acquire 3, then a write under 2", expired(2), 2, [released(2), acquired(3), other], NOW, "stale"],
  ["no lease, acquire 1 presenting 1, release, then a write", null, 1, [acquired(1), released(1), other], NOW, "stale"],
  ["no lease, acquire 1 presenting nothing, then a write", null, null, [acquired(1), other], NOW, "lands"],
  ["no lease, a write, then acquire 1 presenting 1", null, 1, [other, acquired(1)], NOW, "lands"],
  ["no lease, acquire 1 presenting nothing, release, then a write", null, null, [acquired(1), released(1), other], NOW, "lands"],
  ["no lease, a write, then acquire 1 presenting nothing", null, null, [other, acquired(1)], NOW, "lands"]
]

describe("fencing", () => {
  it.each(cases)("%s", (_name, row, presented, events, now, outcome) => {
    const rejection = Fencing.check("p", "s", row, presented, events, now)
    switch (outcome) {
      case "lands":
        expect(rejection).toBeUndefined()
        break
      case "stale":
        expect(rejection?._tag).toBe("@ratchet/storage/StaleEpoch")
        expect(rejection).toMatchObject({ presented, current: row === null ? null : row.epoch, held: row?.held ?? false })
        break
      case "not_expired":
        expect(rejection?._tag).toBe("@ratchet/storage/LeaseNotExpired")
        expect(rejection).toMatchObject({ now })
        break
    }
  })

  it("a premature takeover names the holder's epoch, heartbeat, deadline and the store's clock", () => {
    const rejection = Fencing.check("p", "task-9", heldAt(4, 1_000), 4, [takenOver(5)], 2_500)
    expect(rejection).toMatchObject({ epoch: 4, heartbeatAt: 1_000, graceMs: 3_000, now: 2_500 })
    expect(rejection?._tag === "@ratchet/storage/LeaseNotExpired" && rejection.deadline).toBe(4_000)
    expect(rejection?.message).toBe(
      "Takeover of task task-9 refused: the lease at epoch 4 heartbeat at 1970-01-01T00:00:01.000Z and is protected until " +
        "1970-01-01T00:00:04.000Z (grace 3000 ms); the store's clock reads 1970-01-01T00:00:02.500Z. Take over only after " +
        "the deadline, or ask the holder to release."
    )
  })
})
