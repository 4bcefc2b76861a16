/**
 * The pure read-model projection, event by event, against expectations written by hand: what
 * each run-level fact does to the attempts, intents, checkpoints and the lease, how the summary
 * follows the stored event's branch, version and LSN, and which rows `apply` leaves identical
 * (the SQL store writes back only rows that are no longer the same object).
 *
 * The fold over many events works on a copy of its own rather than through `apply`: on random
 * histories it must equal the projection event by event as it was written before (a reference
 * copy below), row for row, with the same rows left identical and so the same rows to write, and
 * the store's streaming fold must equal it whatever the chunks.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"
import * as Task from "@ratchet/kernel/Task"
import * as Turn from "@ratchet/kernel/Turn"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fc from "fast-check"
import type * as EventStore from "../src/EventStore.js"
import { foldReadModels } from "../src/internal/eventLog.js"
import * as ReadModel from "../src/ReadModel.js"
import * as SqlAppend from "../src/SqlAppend.js"

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

/** The projection of one event as `apply` was written before the fold got a working copy. */
const applyByHand = (snapshot: ReadModel.Snapshot, stored: EventStore.StoredEvent): ReadModel.Snapshot => {
  const aggregate = Task.evolve(snapshot.summary?.task ?? Task.initial, stored.event)
  const summary: ReadModel.TaskSummary | null = aggregate._tag === "Task"
    ? { projectId: stored.projectId, streamId: stored.streamId, branch: stored.branch, version: stored.version, lastLsn: stored.lsn, task: aggregate }
    : snapshot.summary
  const run = Run.evolve(snapshot, stored.event, stored.lsn, { streamId: stored.streamId, branch: stored.branch })
  const next: ReadModel.Snapshot = { ...snapshot, summary, attempts: run.attempts, intents: run.intents }
  const event = stored.event
  switch (event._tag) {
    case "CheckpointRecorded":
      return {
        ...next,
        checkpoints: [...next.checkpoints, { streamId: stored.streamId, branch: stored.branch, lsn: stored.lsn, kind: event.kind, runId: event.runId }]
      }
    case "LeaseAcquired":
    case "LeaseTakenOver":
      return {
        ...next,
        lease: {
          projectId: stored.projectId,
          streamId: stored.streamId,
          epoch: event.epoch,
          held: true,
          owner: event.owner,
          acquiredAt: stored.recordedAt,
          heartbeatAt: stored.recordedAt,
          graceMs: event.graceMs,
          updatedLsn: stored.lsn
        }
      }
    case "LeaseReleased":
      return next.lease === null ? next : { ...next, lease: { ...next.lease, held: false, updatedLsn: stored.lsn } }
    default:
      return next
  }
}

const attemptOf = fc.record({ stepId: fc.constantFrom("s-1", "s-2"), attempt: fc.integer({ min: 1, max: 2 }) })
const intentOf = fc.constantFrom("i-1", "i-2", "i-3")

/** Events of one task over a few attempts and intents, so that most touch a row an earlier one made. */
const anyEvent: fc.Arbitrary<Event.Event> = fc.oneof(
  fc.constantFrom(created, begun, checkpoint("step"), checkpoint("run_start"), acquired(1), takenOver(2), released(2)),
  attemptOf.map(({ attempt, stepId }) => Event.make({ _tag: "AttemptScheduled", actor, at: 3, runId: "r-1", stepId, attempt })),
  attemptOf.map(({ attempt, stepId }) =>
    Event.make({ _tag: "AttemptTransitioned", actor, at: 4, runId: "r-1", stepId, attempt, from: "Pending", to: "Running" })),
  attemptOf.map(({ attempt, stepId }) =>
    Event.make({ _tag: "TurnRecorded", actor, at: 4, runId: "r-1", stepId, attempt, turn: { _tag: "toolUsed" } })),
  intentOf.map(recorded),
  intentOf.map(dispatched),
  intentOf.map(resolved),
  intentOf.map(abandoned)
)

/** A branch's stored events: positions counted on, now and then on another branch. */
const history = fc.array(fc.tuple(anyEvent, fc.boolean()), { maxLength: 30 }).map((events) =>
  events.map(([event, alt], index) => stored(index + 1, event, alt ? { branch: "alt", recordedAt: 2000 + index } : {}))
)

/** The same values, and the same objects where the reference kept its input's. */
const sameFold = (from: ReadModel.Snapshot, actual: ReadModel.Snapshot, expected: ReadModel.Snapshot) => {
  expect(actual).toEqual(expected)
  expect([...actual.attempts.keys()]).toEqual([...expected.attempts.keys()])
  expect([...actual.intents.keys()]).toEqual([...expected.intents.keys()])
  for (const key of ["summary", "attempts", "intents", "lease", "checkpoints"] as const) {
    expect(actual[key] === from[key], key).toBe(expected[key] === from[key])
  }
  for (const [key, row] of from.attempts) expect(actual.attempts.get(key) === row).toBe(expected.attempts.get(key) === row)
  for (const [key, row] of from.intents) expect(actual.intents.get(key) === row).toBe(expected.intents.get(key) === row)
  expect(SqlAppend.changedRows(from, actual, true)).toEqual(SqlAppend.changedRows(from, expected, true))
}

describe("ReadModel.fold on random histories", () => {
  it("equals the projection event by event, from nothing or from a folded prefix, and leaves the same rows identical", () => {
    fc.assert(
      fc.property(history, fc.nat(), (events, cut) => {
        const at = cut % (events.length + 1)
        const from = events.slice(0, at).reduce(applyByHand, ReadModel.empty)
        const rest = events.slice(at)
        sameFold(ReadModel.empty, ReadModel.fold(events), events.reduce(applyByHand, ReadModel.empty))
        sameFold(from, ReadModel.fold(rest, from), rest.reduce(applyByHand, from))
        // From an iterable that is not an array, read once.
        sameFold(from, ReadModel.fold(rest.values(), from), rest.reduce(applyByHand, from))
      }),
      { numRuns: 300 }
    )
  })

  it("apply is the projection of one event", () => {
    fc.assert(
      fc.property(history, anyEvent, (events, event) => {
        const from = events.reduce(applyByHand, ReadModel.empty)
        const next = stored(events.length + 1, event)
        sameFold(from, ReadModel.apply(from, next), applyByHand(from, next))
      }),
      { numRuns: 300 }
    )
  })

  it.effect("the store's streaming fold equals it, whatever the chunks", () =>
    Effect.gen(function*() {
      const samples = fc.sample(fc.tuple(history, fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 30 })), 100)
      for (const [events, sizes] of samples) {
        const chunks: Array<Chunk.Chunk<EventStore.StoredEvent>> = []
        for (let start = 0, index = 0; start < events.length; index++) {
          const size = sizes[index % sizes.length]!
          chunks.push(Chunk.fromIterable(events.slice(start, start + size)))
          start += size
        }
        const from = ReadModel.fold(events.slice(0, 2))
        const streamed = yield* foldReadModels(Stream.fromChunks(...chunks))
        sameFold(ReadModel.empty, streamed, events.reduce(applyByHand, ReadModel.empty))
        const continued = yield* foldReadModels(Stream.fromIterable(events.slice(2)), from)
        sameFold(from, continued, events.slice(2).reduce(applyByHand, from))
      }
      expect(yield* foldReadModels(Stream.empty)).toBe(ReadModel.empty)
    }))
})

describe("ReadModel.fold of a long run", () => {
  it("keeps every row: 3,000 attempts and intents, each scheduled, run, recorded and resolved", () => {
    const events: Array<EventStore.StoredEvent> = [stored(1, created)]
    for (let attempt = 1; attempt <= 3000; attempt++) {
      const intentId = `i-${attempt}`
      for (const event of [
        Event.make({ _tag: "AttemptScheduled", actor, at: 3, runId: "r-1", stepId: "s-1", attempt }),
        Event.make({ _tag: "AttemptTransitioned", actor, at: 4, runId: "r-1", stepId: "s-1", attempt, from: "Pending", to: "Running" }),
        Event.make({ _tag: "IntentRecorded", actor, at: 5, intentId, runId: "r-1", stepId: "s-1", attempt, description: "npm test" }),
        resolved(intentId)
      ]) events.push(stored(events.length + 1, event))
    }
    const snapshot = ReadModel.fold(events)
    expect(snapshot.attempts.size).toBe(3000)
    expect(snapshot.intents.size).toBe(3000)
    expect(snapshot.attempts.get(ReadModel.attemptKey("r-1", "s-1", 3000))).toMatchObject({ state: "Running", updatedLsn: 11_999 })
    expect(snapshot.summary).toMatchObject({ version: 12_001, lastLsn: 12_001, task: { version: 12_001, state: "INITIALIZING" } })
  })
})
