/**
 * The race checker must be able to fail: hand-made logs, sound and broken.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as LeaseLog from "./leaseLog.js"

const actor: Event.Actor = { kind: "runner", id: "r" }
const owner = (pid: number): Event.LeaseOwner => ({ workspaceId: "w", host: "h", pid, processStartedAt: 1 })
const timings = { heartbeatMs: 20, graceMs: 60 }

const acquired = (epoch: number, pid: number): Event.Event => ({ _tag: "LeaseAcquired", version: 1, actor, at: 0, epoch, owner: owner(pid), ...timings })
const takenOver = (epoch: number, pid: number, from: number): Event.Event => ({
  _tag: "LeaseTakenOver",
  version: 1,
  actor,
  at: 0,
  epoch,
  owner: owner(pid),
  displaced: owner(from),
  ...timings
})
const released = (epoch: number): Event.Event => ({ _tag: "LeaseReleased", version: 1, actor, at: 0, epoch })
const wrote: Event.Event = { _tag: "CheckpointRecorded", version: 1, actor, at: 0, kind: "step", runId: "r" }
const created: Event.Event = { _tag: "TaskCreated", version: 1, actor, at: 0, taskId: "t", projectId: "p", goal: "g", slug: "s" }

/** A log from [event, epoch] pairs, LSNs 1, 2, 3, …, recorded 100 ms apart (the grace is 60). */
const log = (...entries: ReadonlyArray<readonly [Event.Event, number | null]>): ReadonlyArray<EventStore.StoredEvent> =>
  entries.map(([event, epoch], index) => ({
    lsn: index + 1,
    projectId: "p",
    streamId: "t",
    branch: "main",
    version: index + 1,
    epoch,
    operationId: `op-${index}`,
    recordedAt: index * 100,
    event
  }))

const sound = log(
  [created, null],
  [acquired(1, 10), 1],
  [wrote, 1],
  [released(1), 1],
  [acquired(2, 20), 2],
  [wrote, 2],
  [takenOver(3, 10, 20), 2],
  [wrote, 3]
)

describe("the lease log checker", () => {
  it("passes a sound log and names its holders", () => {
    const summary = LeaseLog.check(sound, [
      { pid: 10, epoch: 1, lsns: [3], staleWriteAccepted: false },
      { pid: 20, epoch: 2, lsns: [6], staleWriteAccepted: false },
      { pid: 10, epoch: 3, lsns: [8], staleWriteAccepted: false }
    ])
    expect(summary.violations).toEqual([])
    expect(summary.holders).toEqual([
      { epoch: 1, pid: 10, by: "acquire" },
      { epoch: 2, pid: 20, by: "acquire" },
      { epoch: 3, pid: 10, by: "takeover" }
    ])
    expect(summary.writes).toBe(3)
  })

  it.each([
    ["two holders: an acquisition while held", log([created, null], [acquired(1, 10), 1], [acquired(2, 20), 2]), "two holders"],
    ["a write under a stale epoch after a takeover", log([created, null], [acquired(1, 10), 1], [takenOver(2, 20, 10), 1], [wrote, 1]), "while epoch 2 held"],
    ["a write while nobody holds the lease", log([created, null], [acquired(1, 10), 1], [released(1), 1], [wrote, 1]), "no lease was held"],
    ["a takeover of a free lease", log([created, null], [acquired(1, 10), 1], [released(1), 1], [takenOver(2, 20, 10), 1]), "took over a free lease"],
    ["a skipped epoch", log([created, null], [acquired(2, 10), 2]), "acquired epoch 2 after epoch 0"],
    ["a release of another epoch", log([created, null], [acquired(1, 10), 1], [released(2), 1]), "released epoch 2"],
    ["a takeover presenting no epoch", log([created, null], [acquired(1, 10), 1], [takenOver(2, 20, 10), null]), "presented epoch null"],
    [
      "a takeover within the grace",
      log([created, null], [acquired(1, 10), 1], [takenOver(2, 20, 10), 1]).map((stored) => (stored.lsn === 3 ? { ...stored, recordedAt: 160 } : stored)),
      "within the grace of epoch 1 (taken at 100, grace 60 ms)"
    ]
  ])("reports %s", (_label, broken, fragment) => {
    expect(LeaseLog.check(broken).violations.join("\n")).toContain(fragment)
  })

  it.each([
    ["an epoch believed held by two processes", [{ pid: 10, epoch: 1, lsns: [], staleWriteAccepted: false }, { pid: 20, epoch: 1, lsns: [], staleWriteAccepted: false }], "two processes"],
    ["a process believing it held another's epoch", [{ pid: 10, epoch: 2, lsns: [], staleWriteAccepted: false }], "the log says process 20 did"],
    ["a write the log has under another epoch", [{ pid: 20, epoch: 2, lsns: [3], staleWriteAccepted: false }], "in the log under epoch 1"],
    ["a write missing from the log", [{ pid: 10, epoch: 1, lsns: [99], staleWriteAccepted: false }], "not in the log"],
    ["an accepted stale write", [{ pid: 10, epoch: 1, lsns: [3], staleWriteAccepted: true }], "was accepted"]
  ])("reports %s", (_label, tenures, fragment) => {
    expect(LeaseLog.check(sound, tenures).violations.join("\n")).toContain(fragment)
  })
})
