/**
 * The pure read-model projection, event by event, against expectations written by hand: what
 * each run-level fact does to the attempts, intents, checkpoints and the lease, how the summary
 * follows the stored event's branch, version and LSN, and which rows `apply` leaves identical
 * (the SQL store writes back only rows that are no longer the same object).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Event from "@ratchet/kernel/Event"
import * as Turn from "@ratchet/kernel/Turn"
import type * as EventStore from "../src/EventStore.js"
import * as ReadModel from "../src/ReadModel.js"

const actor: Event.Actor = { kind: "system", id: "test" }
const owner = { workspaceId: "w-1", host: "h-1", pid: 42, processStartedAt: 7 }
const other = { workspaceId: "w-2", host: "h-2", pid: 43, processStartedAt: 8 }
const run = { runId: "r-1", stepId: "s-1", attempt: 1 }

const stored = (lsn: number, event: Event.Event, overrides: Partial<EventStore.StoredEvent> = {}): EventStore.StoredEvent => ({
  lsn,
  projectId: "p-1",
  streamId: "t-1",
  branch: "main",
  version: lsn,
  epoch: null,
  operationId: `op-${lsn}`,
  recordedAt: 1000 + lsn,
  event,
  ...overrides
})

const created = Event.make({ _tag: "TaskCreated", actor, at: 1, taskId: "t-1", projectId: "p-1", goal: "g", slug: "s" })
const begun = Event.make({ _tag: "InterviewBegun", actor, at: 2 })
const scheduled = Event.make({ _tag: "AttemptScheduled", actor, at: 3, ...run })
const running = Event.make({ _tag: "AttemptTransitioned", actor, at: 4, ...run, from: "Pending", to: "Running" })
const recorded = (intentId: string) =>
  Event.make({ _tag: "IntentRecorded", actor, at: 5, intentId, ...run, description: "npm test" })
const dispatched = (intentId: string) => Event.make({ _tag: "IntentDispatched", actor, at: 6, intentId })
const resolved = (intentId: string) =>
  Event.make({ _tag: "IntentResolved", actor, at: 7, intentId, outcome: "Failed", resultRefs: ["sha256:x"] })
const abandoned = (intentId: string) => Event.make({ _tag: "IntentAbandoned", actor, at: 8, intentId, reason: "gone" })
const checkpoint = (kind: "run_start" | "step" | "terminal") =>
  Event.make({ _tag: "CheckpointRecorded", actor, at: 9, kind, runId: "r-1" })
const acquired = (epoch: number) =>
  Event.make({ _tag: "LeaseAcquired", actor, at: 10, epoch, owner, heartbeatMs: 2000, graceMs: 3000 })
const takenOver = (epoch: number) =>
  Event.make({
    _tag: "LeaseTakenOver",
    actor,
    at: 11,
    epoch,
    owner: other,
    displaced: owner,
    heartbeatMs: 2000,
    graceMs: 5000
  })
const released = (epoch: number) => Event.make({ _tag: "LeaseReleased", actor, at: 12, epoch })

describe("ReadModel.apply", () => {
  it("starts empty", () => {
    expect(ReadModel.empty).toEqual({
      summary: null,
      attempts: new Map(),
      intents: new Map(),
      lease: null,
      checkpoints: []
    })
  })

  it("creates the summary from TaskCreated and keeps it at the stored event's branch, version and LSN", () => {
    const one = ReadModel.apply(ReadModel.empty, stored(1, created))
    expect(one.summary).toMatchObject({ projectId: "p-1", streamId: "t-1", branch: "main", version: 1, lastLsn: 1 })
    expect(one.summary?.task).toMatchObject({ _tag: "Task", version: 1, taskId: "t-1", state: "INITIALIZING" })
    const two = ReadModel.apply(one, stored(7, begun, { branch: "alt", version: 2 }))
    expect(two.summary).toMatchObject({ branch: "alt", version: 2, lastLsn: 7 })
    expect(two.summary?.task).toMatchObject({ version: 2, state: "INTERVIEWING" })
    // Run-level facts count as versions of the stream too.
    const three = ReadModel.apply(two, stored(8, scheduled, { version: 3 }))
    expect(three.summary).toMatchObject({ version: 3, lastLsn: 8 })
    expect(three.summary?.task).toMatchObject({ version: 3, state: "INTERVIEWING" })
  })

  it("has no summary before TaskCreated, while run-level facts still project", () => {
    const snapshot = ReadModel.fold([stored(1, acquired(1)), stored(2, begun)])
    expect(snapshot.summary).toBeNull()
    expect(snapshot.lease).toMatchObject({ epoch: 1, held: true })
  })

  it("projects attempts by run, step and attempt number", () => {
    const snapshot = ReadModel.fold([
      stored(1, created),
      stored(2, scheduled),
      stored(3, Event.make({ _tag: "AttemptScheduled", actor, at: 3, ...run, attempt: 2 })),
      stored(4, running)
    ])
    expect([...snapshot.attempts.entries()]).toEqual([
      [
        JSON.stringify(["r-1", "s-1", 1]),
        { streamId: "t-1", branch: "main", runId: "r-1", stepId: "s-1", attempt: 1, state: "Running", turn: Turn.initial, updatedLsn: 4 }
      ],
      [
        JSON.stringify(["r-1", "s-1", 2]),
        { streamId: "t-1", branch: "main", runId: "r-1", stepId: "s-1", attempt: 2, state: "Pending", turn: Turn.initial, updatedLsn: 3 }
      ]
    ])
    expect(ReadModel.attemptKey("r-1", "s-1", 1)).toBe("[\"r-1\",\"s-1\",1]")
  })

  it("projects intents through Pending, Dispatched, Resolved and Abandoned", () => {
    const snapshot = ReadModel.fold([
      stored(1, recorded("i-1")),
      stored(2, recorded("i-2")),
      stored(3, recorded("i-3")),
      stored(4, dispatched("i-1")),
      stored(5, dispatched("i-2")),
      stored(6, resolved("i-2")),
      stored(7, abandoned("i-3"))
    ])
    const base = { streamId: "t-1", branch: "main", ...run }
    expect(snapshot.intents.get("i-1")).toEqual({ ...base, intentId: "i-1", state: "Dispatched", outcome: null, updatedLsn: 4 })
    expect(snapshot.intents.get("i-2")).toEqual({ ...base, intentId: "i-2", state: "Resolved", outcome: "Failed", updatedLsn: 6 })
    expect(snapshot.intents.get("i-3")).toEqual({ ...base, intentId: "i-3", state: "Abandoned", outcome: null, updatedLsn: 7 })
    expect(snapshot.intents.size).toBe(3)
  })

  it("ignores a transition of an intent it never saw recorded", () => {
    const before = ReadModel.fold([stored(1, recorded("i-1"))])
    for (const event of [dispatched("i-9"), resolved("i-9"), abandoned("i-9")]) {
      const after = ReadModel.apply(before, stored(2, event))
      expect(after.intents).toBe(before.intents)
    }
  })

  it("appends checkpoints in order", () => {
    const snapshot = ReadModel.fold([stored(1, checkpoint("run_start")), stored(2, begun), stored(3, checkpoint("terminal"))])
    expect(snapshot.checkpoints).toEqual([
      { streamId: "t-1", branch: "main", lsn: 1, kind: "run_start", runId: "r-1" },
      { streamId: "t-1", branch: "main", lsn: 3, kind: "terminal", runId: "r-1" }
    ])
  })

  it("projects the lease: acquired and taken over at the record time, released keeping its epoch", () => {
    const acquiredOnce = ReadModel.fold([stored(1, created), stored(2, acquired(1), { recordedAt: 500 })])
    expect(acquiredOnce.lease).toEqual({
      projectId: "p-1",
      streamId: "t-1",
      epoch: 1,
      held: true,
      owner,
      acquiredAt: 500,
      heartbeatAt: 500,
      graceMs: 3000,
      updatedLsn: 2
    })
    const taken = ReadModel.apply(acquiredOnce, stored(3, takenOver(2), { recordedAt: 900, branch: "alt" }))
    expect(taken.lease).toEqual({
      projectId: "p-1",
      streamId: "t-1",
      epoch: 2,
      held: true,
      owner: other,
      acquiredAt: 900,
      heartbeatAt: 900,
      graceMs: 5000,
      updatedLsn: 3
    })
    const free = ReadModel.apply(taken, stored(4, released(2), { recordedAt: 950 }))
    expect(free.lease).toEqual({ ...taken.lease, held: false, updatedLsn: 4 })
    // A release with no lease on record changes nothing.
    const none = ReadModel.apply(ReadModel.empty, stored(1, released(1)))
    expect(none.lease).toBeNull()
  })

  it("leaves the rows an event does not touch identical", () => {
    const before = ReadModel.fold([
      stored(1, created),
      stored(2, scheduled),
      stored(3, recorded("i-1")),
      stored(4, acquired(1)),
      stored(5, checkpoint("run_start"))
    ])
    const afterTask = ReadModel.apply(before, stored(6, begun))
    expect(afterTask.summary).not.toBe(before.summary)
    expect(afterTask.attempts).toBe(before.attempts)
    expect(afterTask.intents).toBe(before.intents)
    expect(afterTask.lease).toBe(before.lease)
    expect(afterTask.checkpoints).toBe(before.checkpoints)
    const afterIntent = ReadModel.apply(before, stored(6, recorded("i-2")))
    expect(afterIntent.intents.get("i-1")).toBe(before.intents.get("i-1"))
    expect(afterIntent.attempts).toBe(before.attempts)
    expect(afterIntent.lease).toBe(before.lease)
  })
})

describe("ReadModel.fold", () => {
  it("is apply from the empty snapshot, or from a given one", () => {
    const events = [stored(1, created), stored(2, scheduled), stored(3, acquired(1))]
    const byHand = ReadModel.apply(ReadModel.apply(ReadModel.apply(ReadModel.empty, events[0]!), events[1]!), events[2]!)
    expect(ReadModel.fold(events)).toEqual(byHand)
    expect(ReadModel.fold(events.slice(1), ReadModel.fold(events.slice(0, 1)))).toEqual(byHand)
    expect(ReadModel.fold([])).toBe(ReadModel.empty)
  })
})
