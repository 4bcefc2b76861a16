/**
 * The run's whole-history fold (`Run.fold`, which writes `Run.change`'s rows into maps of its
 * own) against `Run.evolve` folded event by event, on random run histories over a few runs, steps,
 * attempts and intents, so that most events touch a row an earlier one made; and `Run.change` by
 * hand: the row each event writes, and nothing for what `evolve` leaves alone.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Attempt from "../src/Attempt.js"
import type * as Event from "../src/Event.js"
import * as Run from "../src/Run.js"
import * as Turn from "../src/Turn.js"
import { runs, SAMPLE_EVENTS } from "./fixtures.js"
import * as fc from "fast-check"

const v = { version: 1 as const, actor: { kind: "runner", id: "r-1" } as const, at: 7 }

const row = fc.record({
  runId: fc.constantFrom("run-1", "run-2"),
  stepId: fc.constantFrom("build", "test"),
  attempt: fc.integer({ min: 1, max: 2 })
})
const intentId = fc.constantFrom("i-1", "i-2", "i-3")

const runEvent: fc.Arbitrary<Event.Event> = fc.oneof(
  row.map((r): Event.Event => ({ _tag: "AttemptScheduled", ...v, ...r })),
  fc.tuple(row, fc.constantFrom<Attempt.State>("Running", "Succeeded", "Failed", "Cancelled", "Indeterminate", "TimedOut"))
    .map(([r, to]): Event.Event => ({ _tag: "AttemptTransitioned", ...v, ...r, from: to === "Running" ? "Pending" : "Running", to })),
  fc.tuple(row, fc.constantFrom<Turn.Event>({ _tag: "turnStarted" }, { _tag: "toolUsed" }, { _tag: "toolFailed" }))
    .map(([r, turn]): Event.Event => ({ _tag: "TurnRecorded", ...v, ...r, turn })),
  fc.tuple(row, intentId).map(([r, id]): Event.Event => ({ _tag: "IntentRecorded", ...v, ...r, intentId: id, description: "npm test" })),
  intentId.map((id): Event.Event => ({ _tag: "IntentDispatched", ...v, intentId: id })),
  fc.tuple(intentId, fc.constantFrom("Succeeded" as const, "Failed" as const))
    .map(([id, outcome]): Event.Event => ({ _tag: "IntentResolved", ...v, intentId: id, outcome, resultRefs: [] })),
  intentId.map((id): Event.Event => ({ _tag: "IntentAbandoned", ...v, intentId: id, reason: "gone" })),
  fc.constantFrom<Event.Event>(SAMPLE_EVENTS.CheckpointRecorded, SAMPLE_EVENTS.RunStarted, SAMPLE_EVENTS.LeaseAcquired, SAMPLE_EVENTS.TaskCreated)
)

const positioned = (events: ReadonlyArray<Event.Event>) => events.map((event, index) => ({ event, lsn: index + 1 }))

describe("Run.fold", () => {
  it("equals Run.evolve folded event by event", () => {
    fc.assert(
      fc.property(fc.array(runEvent, { maxLength: 40 }), (events) => {
        const byEvolve = positioned(events).reduce((state, { event, lsn }) => Run.evolve(state, event, lsn, {}), Run.initial)
        const folded = Run.fold(positioned(events))
        expect([...folded.attempts.entries()]).toEqual([...byEvolve.attempts.entries()])
        expect([...folded.intents.entries()]).toEqual([...byEvolve.intents.entries()])
      }),
      { numRuns: runs(300) }
    )
  })

  it("of nothing is no attempt and no intent", () => {
    expect(Run.fold([])).toEqual(Run.initial)
  })
})

describe("Run.change", () => {
  const scheduled: Event.Event = { _tag: "AttemptScheduled", ...v, runId: "run-1", stepId: "build", attempt: 1 }
  const recorded: Event.Event = { _tag: "IntentRecorded", ...v, runId: "run-1", stepId: "build", attempt: 1, intentId: "i-1", description: "npm test" }
  const base = { streamId: "t-1", branch: "main" }

  it("names the attempt or intent an event writes, as the whole new row", () => {
    expect(Run.change({ attempts: new Map(), intents: new Map() }, scheduled, 3, base)).toEqual({
      _tag: "Attempt",
      key: Run.key("run-1", "build", 1),
      row: { ...base, runId: "run-1", stepId: "build", attempt: 1, state: "Pending", turn: Turn.initial, updatedLsn: 3 }
    })
    expect(Run.change({ attempts: new Map(), intents: new Map() }, recorded, 4, base)).toEqual({
      _tag: "Intent",
      key: "i-1",
      row: { ...base, intentId: "i-1", runId: "run-1", stepId: "build", attempt: 1, state: "Pending", outcome: null, updatedLsn: 4 }
    })
  })

  it("names the intent a dispatch, a resolution or an abandon writes", () => {
    const state = Run.fold(positioned([scheduled, recorded]))
    const intent = state.intents.get("i-1")!
    const transitions: ReadonlyArray<[Event.Event, Partial<Run.IntentView>]> = [
      [{ _tag: "IntentDispatched", ...v, intentId: "i-1" }, { state: "Dispatched", outcome: null }],
      [{ _tag: "IntentResolved", ...v, intentId: "i-1", outcome: "Failed", resultRefs: [] }, { state: "Resolved", outcome: "Failed" }],
      [{ _tag: "IntentAbandoned", ...v, intentId: "i-1", reason: "gone" }, { state: "Abandoned", outcome: null }]
    ]
    for (const [event, changed] of transitions) {
      expect(Run.change(state, event, 5, base)).toEqual({ _tag: "Intent", key: "i-1", row: { ...intent, ...changed, updatedLsn: 5 } })
    }
  })

  it("is null exactly when evolve returns the state it was given", () => {
    const state = Run.fold(positioned([scheduled, recorded]))
    const events: ReadonlyArray<Event.Event> = [
      { _tag: "IntentDispatched", ...v, intentId: "unknown" },
      { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "other", attempt: 1, turn: { _tag: "toolUsed" } },
      SAMPLE_EVENTS.CheckpointRecorded,
      SAMPLE_EVENTS.TaskCreated,
      { _tag: "IntentDispatched", ...v, intentId: "i-1" },
      { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "build", attempt: 1, turn: { _tag: "toolUsed" } }
    ]
    for (const event of events) {
      const changed = Run.change(state, event, 9, {})
      expect(changed === null, event._tag).toBe(Run.evolve(state, event, 9, {}) === state)
    }
  })
})
