/**
 * The run decider: `evolve` over every run-level event (rows it does not touch stay the same
 * objects, unknown attempts and intents change nothing, a store's extra fields are kept), and
 * `decide` for every run command from a hand-written table of states, with the events it must
 * produce when accepted and the refusal when not.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type * as Event from "../src/Event.js"
import * as Run from "../src/Run.js"
import * as Turn from "../src/Turn.js"

const actor: Event.Actor = { kind: "runner", id: "r-1" }
const meta = { actor, at: 7, runId: "run-1" }
const v = { version: 1 as const, actor, at: 7 }

/** A run state built by folding events, each at its 1-based position. */
const stateOf = (...events: ReadonlyArray<Event.Event>): Run.State =>
  Run.fold(events.map((event, index) => ({ event, lsn: index + 1 })))

const scheduled = (stepId: string, attempt: number, runId = "run-1"): Event.Event => ({ _tag: "AttemptScheduled", ...v, runId, stepId, attempt })
const moved = (stepId: string, attempt: number, from: "Pending" | "Running", to: "Running" | "Succeeded" | "Failed" | "Cancelled" | "Indeterminate" | "TimedOut", runId = "run-1"): Event.Event => ({
  _tag: "AttemptTransitioned",
  ...v,
  runId,
  stepId,
  attempt,
  from,
  to
})
const recorded = (intentId: string, stepId: string, attempt: number, runId = "run-1"): Event.Event => ({
  _tag: "IntentRecorded",
  ...v,
  intentId,
  runId,
  stepId,
  attempt,
  description: "npm test"
})
const dispatched = (intentId: string): Event.Event => ({ _tag: "IntentDispatched", ...v, intentId })
const resolved = (intentId: string, outcome: "Succeeded" | "Failed" = "Succeeded"): Event.Event => ({ _tag: "IntentResolved", ...v, intentId, outcome, resultRefs: [] })

const running = stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), recorded("i-1", "build", 1), dispatched("i-1"))

const eventsOf = (decision: Run.Decision): ReadonlyArray<Event.Event> => {
  if (Either.isLeft(decision)) throw new Error(`refused: ${decision.left.message}`)
  return decision.right
}
const refusalOf = (decision: Run.Decision): string => {
  if (Either.isRight(decision)) throw new Error(`accepted: ${decision.right.map((e) => e._tag).join(", ")}`)
  expect(decision.left._tag).toBe("@ratchet/kernel/RunCommandRefused")
  return decision.left.message
}
const tags = (events: ReadonlyArray<Event.Event>) => events.map((event) => event._tag)

describe("Run.evolve", () => {
  it("folds attempts, intents and turns, each with the position of its last change", () => {
    const state = stateOf(
      scheduled("build", 1),
      moved("build", 1, "Pending", "Running"),
      recorded("i-1", "build", 1),
      dispatched("i-1"),
      { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "build", attempt: 1, turn: { _tag: "toolUsed" } },
      resolved("i-1", "Failed"),
      moved("build", 1, "Running", "Failed")
    )
    expect(state.attempts.get(Run.key("run-1", "build", 1))).toEqual({
      runId: "run-1",
      stepId: "build",
      attempt: 1,
      state: "Failed",
      turn: { ...Turn.initial, toolUsed: true },
      updatedLsn: 7
    })
    expect(state.intents.get("i-1")).toEqual({ intentId: "i-1", runId: "run-1", stepId: "build", attempt: 1, state: "Resolved", outcome: "Failed", updatedLsn: 6 })
  })

  it("a turn event keeps the attempt's position; an abandon clears no outcome it never had", () => {
    const state = stateOf(scheduled("b", 1), { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "b", attempt: 1, turn: { _tag: "turnStarted" } })
    expect(state.attempts.get(Run.key("run-1", "b", 1))?.updatedLsn).toBe(1)
    const abandoned = stateOf(recorded("i", "b", 1), { _tag: "IntentAbandoned", ...v, intentId: "i", reason: "r" })
    expect(abandoned.intents.get("i")).toMatchObject({ state: "Abandoned", outcome: null, updatedLsn: 2 })
  })

  it("an event about an attempt or intent the run never saw changes nothing (the same state)", () => {
    const state = stateOf(scheduled("b", 1))
    for (const event of [
      dispatched("nope"),
      resolved("nope"),
      { _tag: "IntentAbandoned", ...v, intentId: "nope", reason: "x" } satisfies Event.Event,
      { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "other", attempt: 1, turn: { _tag: "toolUsed" } } satisfies Event.Event,
      { _tag: "TaskPaused", ...v, from: "RUNNING" } satisfies Event.Event
    ]) {
      expect(Run.evolve(state, event, 9, {})).toBe(state)
    }
  })

  it("rows an event does not touch stay the same objects; a store's extra fields are kept on update and taken from base on creation", () => {
    const base = { streamId: "t-1", branch: "main" }
    let state: Run.State<typeof base> = { attempts: new Map(), intents: new Map() }
    state = Run.evolve(state, scheduled("a", 1), 1, base)
    state = Run.evolve(state, scheduled("b", 1), 2, base)
    const a = state.attempts.get(Run.key("run-1", "a", 1))
    const after = Run.evolve(state, moved("b", 1, "Pending", "Running"), 3, { streamId: "ignored", branch: "ignored" })
    expect(after.attempts.get(Run.key("run-1", "a", 1))).toBe(a)
    expect(after.attempts.get(Run.key("run-1", "b", 1))).toMatchObject({ streamId: "t-1", branch: "main", state: "Running", updatedLsn: 3 })
  })
})

describe("Run.decide: StartStep", () => {
  it("a new attempt of a command: scheduled, admitted, its effect recorded and dispatched, in one decision", () => {
    const events = eventsOf(Run.decide({ _tag: "StartStep", ...meta, stepId: "build", attempt: 1, scheduled: false, effect: { intentId: "i-1", description: "npm test" } }, Run.initial))
    expect(events).toEqual([
      { _tag: "AttemptScheduled", ...v, runId: "run-1", stepId: "build", attempt: 1 },
      { _tag: "AttemptTransitioned", ...v, runId: "run-1", stepId: "build", attempt: 1, from: "Pending", to: "Running" },
      { _tag: "IntentRecorded", ...v, intentId: "i-1", runId: "run-1", stepId: "build", attempt: 1, description: "npm test" },
      { _tag: "IntentDispatched", ...v, intentId: "i-1" }
    ])
  })

  it("a successor verification scheduled is admitted as it is; a manual step records no effect", () => {
    const state = stateOf(scheduled("build", 2))
    expect(tags(eventsOf(Run.decide({ _tag: "StartStep", ...meta, stepId: "build", attempt: 2, scheduled: true, effect: { intentId: "i-2", description: "x" } }, state)))).toEqual([
      "AttemptTransitioned",
      "IntentRecorded",
      "IntentDispatched"
    ])
    expect(tags(eventsOf(Run.decide({ _tag: "StartStep", ...meta, stepId: "docs", attempt: 1, scheduled: false, effect: null }, Run.initial)))).toEqual([
      "AttemptScheduled",
      "AttemptTransitioned"
    ])
  })

  it.each([
    { label: "the attempt exists already", state: running, scheduled: false, intentId: "i-9", reason: "attempt 1 of step build already exists (Running)." },
    { label: "it was not scheduled", state: Run.initial, scheduled: true, intentId: "i-9", reason: "attempt 1 of step build was not scheduled (it is absent)." },
    { label: "the scheduled attempt already runs", state: running, scheduled: true, intentId: "i-9", reason: "attempt 1 of step build was not scheduled (it is Running)." },
    { label: "the intent id is taken", state: stateOf(recorded("i-1", "other", 1)), scheduled: false, intentId: "i-1", reason: "intent i-1 already exists." }
  ])("refused when $label", ({ intentId, reason, scheduled: isScheduled, state }) => {
    expect(refusalOf(Run.decide({ _tag: "StartStep", ...meta, stepId: "build", attempt: 1, scheduled: isScheduled, effect: { intentId, description: "x" } }, state))).toBe(
      `StartStep refused: ${reason}`
    )
  })
})

describe("Run.decide: FinishStep", () => {
  const exit: Run.Exit = { exitCode: 0, signal: null, durationMs: 12, timedOut: false, stdoutRef: null, stderrRef: null, outputTail: "ok", changedPaths: ["src/a.ts"] }

  it.each([
    ["Succeeded", "Succeeded", "Succeeded"],
    ["Failed", "Failed", "Failed"],
    ["TimedOut", "Failed", "TimedOut"],
    ["Cancelled", "Failed", "Indeterminate"]
  ] as const)("%s: the exit, the intent resolved %s, the attempt %s", (outcome, resolvedAs, ended) => {
    const events = eventsOf(Run.decide({ _tag: "FinishStep", ...meta, stepId: "build", attempt: 1, intentId: "i-1", exit, outcome, resultRefs: ["out-1"] }, running))
    expect(events).toEqual([
      { _tag: "CommandExited", ...v, intentId: "i-1", runId: "run-1", stepId: "build", attempt: 1, ...exit },
      { _tag: "IntentResolved", ...v, intentId: "i-1", outcome: resolvedAs, resultRefs: ["out-1"] },
      { _tag: "AttemptTransitioned", ...v, runId: "run-1", stepId: "build", attempt: 1, from: "Running", to: ended }
    ])
  })

  it.each([
    { label: "the attempt does not exist", state: Run.initial, contains: "attempt 1 of step build does not exist" },
    { label: "the intent does not exist", state: stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running")), contains: "intent i-1 does not exist" },
    { label: "the intent was never dispatched", state: stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), recorded("i-1", "build", 1)), contains: "intent i-1: Intent in state Pending cannot take Resolve" },
    { label: "the intent is resolved already", state: stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), recorded("i-1", "build", 1), dispatched("i-1"), resolved("i-1")), contains: "terminal_state" },
    { label: "the attempt ended already", state: stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), recorded("i-1", "build", 1), dispatched("i-1"), moved("build", 1, "Running", "Indeterminate")), contains: "Attempt in state Indeterminate cannot take Succeed" }
  ])("refused when $label", ({ contains, state }) => {
    expect(refusalOf(Run.decide({ _tag: "FinishStep", ...meta, stepId: "build", attempt: 1, intentId: "i-1", exit, outcome: "Succeeded", resultRefs: [] }, state))).toContain(contains)
  })
})

describe("Run.decide: a worker's effects, ends and turns", () => {
  const manual = stateOf(scheduled("docs", 1), moved("docs", 1, "Pending", "Running"))

  it("DispatchEffect records and dispatches in a running attempt, and is refused elsewhere or for a taken id", () => {
    expect(tags(eventsOf(Run.decide({ _tag: "DispatchEffect", ...meta, stepId: "docs", attempt: 1, intentId: "tool-1", description: "Write a.md" }, manual)))).toEqual([
      "IntentRecorded",
      "IntentDispatched"
    ])
    expect(refusalOf(Run.decide({ _tag: "DispatchEffect", ...meta, stepId: "docs", attempt: 1, intentId: "i-1", description: "x" }, stateOf(scheduled("docs", 1))))).toContain(
      "is not running (Pending)"
    )
    expect(refusalOf(Run.decide({ _tag: "DispatchEffect", ...meta, stepId: "docs", attempt: 2, intentId: "i-1", description: "x" }, manual))).toContain("is not running (absent)")
    expect(refusalOf(Run.decide({ _tag: "DispatchEffect", ...meta, stepId: "build", attempt: 1, intentId: "i-1", description: "x" }, running))).toContain(
      "intent i-1 already exists"
    )
  })

  describe("RefuseEffect notes a refused call on a running attempt only (ADR 0040)", () => {
    const refusal = { _tag: "RefuseEffect", ...meta, stepId: "build", attempt: 1, description: "Write /etc/passwd", reason: "outside the allowed scope" } as const
    const note = "tool call refused: Write /etc/passwd — outside the allowed scope"
    const rejected = stateOf(
      scheduled("build", 1),
      moved("build", 1, "Pending", "Running"),
      { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "build", attempt: 1, turn: { _tag: "toolRejected" } }
    )
    // Accepted: [state, the events it must produce].
    const accepted: ReadonlyArray<readonly [string, Run.State, ReadonlyArray<Event.Event>]> = [
      ["a running attempt whose turn had no rejection: the note and the flag", running, [
        { _tag: "AttemptNoted", ...v, runId: "run-1", stepId: "build", attempt: 1, note },
        { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "build", attempt: 1, turn: { _tag: "toolRejected" } }
      ]],
      ["a running attempt already flagged: the note alone", rejected, [
        { _tag: "AttemptNoted", ...v, runId: "run-1", stepId: "build", attempt: 1, note }
      ]]
    ]
    // Refused: [state, the refusal's words].
    const refused: ReadonlyArray<readonly [string, Run.State, string]> = [
      ["no such attempt", Run.initial, "is not running (absent)"],
      ["a pending attempt", stateOf(scheduled("build", 1)), "is not running (Pending)"],
      ["a succeeded attempt", stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), moved("build", 1, "Running", "Succeeded")), "is not running (Succeeded)"],
      ["an Indeterminate attempt", stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), moved("build", 1, "Running", "Indeterminate")), "is not running (Indeterminate)"],
      ["a failed attempt", stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), moved("build", 1, "Running", "Failed")), "is not running (Failed)"],
      ["an attempt cancelled while running", stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), moved("build", 1, "Running", "Cancelled")), "is not running (Cancelled)"],
      ["an attempt cancelled before it ran", stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Cancelled")), "is not running (Cancelled)"],
      ["a timed-out attempt", stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), moved("build", 1, "Running", "TimedOut")), "is not running (TimedOut)"],
      ["only another attempt of the step is running", stateOf(scheduled("build", 2), moved("build", 2, "Pending", "Running")), "is not running (absent)"],
      ["another run's attempt of the same step", stateOf(scheduled("build", 1, "run-0"), moved("build", 1, "Pending", "Running", "run-0")), "is not running (absent)"]
    ]
    it.each(accepted)("accepted: %s", (_, state, events) => {
      expect(eventsOf(Run.decide(refusal, state))).toEqual(events)
    })
    it.each(refused)("refused: %s", (_, state, words) => {
      expect(refusalOf(Run.decide(refusal, state))).toContain(words)
    })
    it("records no intent, so nothing is left for recovery", () => {
      expect(tags(eventsOf(Run.decide(refusal, running)))).not.toContain("IntentRecorded")
    })
  })

  it("DispatchEffect is accepted in an agent step's attempt, whose own intent is dispatched (ADR 0040)", () => {
    // `running`: attempt 1 of build Running with the runner's intent i-1 dispatched, as an agent's is.
    expect(eventsOf(Run.decide({ _tag: "DispatchEffect", ...meta, stepId: "build", attempt: 1, intentId: "tool-1", description: "Write src/a.ts" }, running))).toEqual([
      { _tag: "IntentRecorded", ...v, intentId: "tool-1", runId: "run-1", stepId: "build", attempt: 1, description: "Write src/a.ts" },
      { _tag: "IntentDispatched", ...v, intentId: "tool-1" }
    ])
    const ended = stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), recorded("i-1", "build", 1), dispatched("i-1"), moved("build", 1, "Running", "Indeterminate"))
    expect(refusalOf(Run.decide({ _tag: "DispatchEffect", ...meta, stepId: "build", attempt: 1, intentId: "tool-1", description: "x" }, ended))).toContain("is not running (Indeterminate)")
  })

  it("ResolveEffect resolves a dispatched effect only", () => {
    expect(eventsOf(Run.decide({ _tag: "ResolveEffect", ...meta, intentId: "i-1", outcome: "Failed", resultRefs: ["r"] }, running))).toEqual([
      { _tag: "IntentResolved", ...v, intentId: "i-1", outcome: "Failed", resultRefs: ["r"] }
    ])
    expect(refusalOf(Run.decide({ _tag: "ResolveEffect", ...meta, intentId: "nope", outcome: "Failed", resultRefs: [] }, running))).toContain("intent nope does not exist")
  })

  it("EndAttempt goes through the attempt machine", () => {
    expect(eventsOf(Run.decide({ _tag: "EndAttempt", ...meta, stepId: "docs", attempt: 1, cause: { _tag: "Succeed" } }, manual))).toEqual([
      { _tag: "AttemptTransitioned", ...v, runId: "run-1", stepId: "docs", attempt: 1, from: "Running", to: "Succeeded" }
    ])
    expect(refusalOf(Run.decide({ _tag: "EndAttempt", ...meta, stepId: "docs", attempt: 1, cause: { _tag: "Succeed" } }, stateOf(scheduled("docs", 1))))).toContain(
      "Attempt in state Pending cannot take Succeed"
    )
    expect(refusalOf(Run.decide({ _tag: "EndAttempt", ...meta, stepId: "x", attempt: 1, cause: { _tag: "Fail" } }, manual))).toContain("does not exist")
  })

  it("RecordTurn records only what changes the attempt's flags", () => {
    const turned = stateOf(scheduled("docs", 1), { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "docs", attempt: 1, turn: { _tag: "toolUsed" } })
    expect(eventsOf(Run.decide({ _tag: "RecordTurn", ...meta, stepId: "docs", attempt: 1, events: [{ _tag: "toolUsed" }, { _tag: "toolFailed" }, { _tag: "toolFailed" }] }, turned))).toEqual([
      { _tag: "TurnRecorded", ...v, runId: "run-1", stepId: "docs", attempt: 1, turn: { _tag: "toolFailed" } }
    ])
    expect(refusalOf(Run.decide({ _tag: "RecordTurn", ...meta, stepId: "nope", attempt: 1, events: [] }, turned))).toContain("does not exist")
  })
})

describe("Run.decide: CloseRun", () => {
  it("abandons pending effects; a running attempt with a dispatched effect is Indeterminate, one without Cancelled; other runs and ended attempts stay", () => {
    const state = stateOf(
      scheduled("a", 1),
      moved("a", 1, "Pending", "Running"),
      recorded("ia", "a", 1),
      dispatched("ia"),
      scheduled("b", 1),
      moved("b", 1, "Pending", "Running"),
      recorded("ib", "b", 1),
      scheduled("c", 1),
      scheduled("d", 1),
      moved("d", 1, "Pending", "Running"),
      moved("d", 1, "Running", "Succeeded"),
      scheduled("a", 1, "run-0"),
      moved("a", 1, "Pending", "Running", "run-0")
    )
    const events = eventsOf(Run.decide({ _tag: "CloseRun", ...meta, reason: "the run ended" }, state))
    expect(events).toEqual([
      { _tag: "AttemptTransitioned", ...v, runId: "run-1", stepId: "a", attempt: 1, from: "Running", to: "Indeterminate" },
      { _tag: "IntentAbandoned", ...v, intentId: "ib", reason: "the run ended" },
      { _tag: "AttemptTransitioned", ...v, runId: "run-1", stepId: "b", attempt: 1, from: "Running", to: "Cancelled" },
      { _tag: "AttemptTransitioned", ...v, runId: "run-1", stepId: "c", attempt: 1, from: "Pending", to: "Cancelled" }
    ])
  })

  it("nothing open, nothing to close", () => {
    expect(eventsOf(Run.decide({ _tag: "CloseRun", ...meta, reason: "x" }, Run.initial))).toEqual([])
  })
})

describe("Run.decide: RecoverAttempt", () => {
  const note = (stepId: string, attempt: number, text: string): Event.Event => ({ _tag: "AttemptNoted", ...v, runId: "run-1", stepId, attempt, note: text })
  const recordedOnly = stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), recorded("i-1", "build", 1))
  const pendingOnly = stateOf(scheduled("build", 1))

  // state, recovery, expected events (by hand) or the refusal's words
  const accepted: ReadonlyArray<{ label: string; state: Run.State; recovery: Run.Recovery; events: ReadonlyArray<Event.Event> }> = [
    {
      label: "a running attempt whose intent was recorded, never dispatched, is cancelled cleanly",
      state: recordedOnly,
      recovery: { _tag: "CancelClean", reason: "nothing happened" },
      events: [
        { _tag: "IntentAbandoned", ...v, intentId: "i-1", reason: "nothing happened" },
        moved("build", 1, "Running", "Cancelled"),
        note("build", 1, "why")
      ]
    },
    {
      label: "a pending attempt with no intent is cancelled cleanly",
      state: pendingOnly,
      recovery: { _tag: "CancelClean", reason: "nothing happened" },
      events: [moved("build", 1, "Pending", "Cancelled"), note("build", 1, "why")]
    },
    {
      label: "a probe that says it happened resolves it Succeeded",
      state: running,
      recovery: { _tag: "Resolved", intentId: "i-1", outcome: "Succeeded" },
      events: [resolved("i-1", "Succeeded"), moved("build", 1, "Running", "Succeeded"), note("build", 1, "why")]
    },
    {
      label: "an idempotent step's unknown effect is resolved Failed for a successor",
      state: running,
      recovery: { _tag: "Resolved", intentId: "i-1", outcome: "Failed" },
      events: [resolved("i-1", "Failed"), moved("build", 1, "Running", "Failed"), note("build", 1, "why")]
    },
    {
      label: "an unknown effect leaves the attempt Indeterminate and the intent dispatched",
      state: running,
      recovery: { _tag: "Indeterminate", intentId: "i-1" },
      events: [moved("build", 1, "Running", "Indeterminate"), note("build", 1, "why")]
    }
  ]
  it.each(accepted)("$label", ({ events, recovery, state }) => {
    expect(eventsOf(Run.decide({ _tag: "RecoverAttempt", ...meta, stepId: "build", attempt: 1, recovery, note: "why" }, state))).toEqual(events)
  })

  const settled = stateOf(scheduled("build", 1), moved("build", 1, "Pending", "Running"), recorded("i-1", "build", 1), dispatched("i-1"), resolved("i-1"), moved("build", 1, "Running", "Succeeded"))
  const rejected: ReadonlyArray<{ label: string; state: Run.State; attempt?: number; recovery: Run.Recovery; contains: string }> = [
    { label: "no such attempt", state: running, attempt: 2, recovery: { _tag: "CancelClean", reason: "r" }, contains: "attempt 2 of step build is not open (absent)" },
    { label: "an attempt that ended", state: settled, recovery: { _tag: "CancelClean", reason: "r" }, contains: "is not open (Succeeded)" },
    { label: "a clean cancel of a dispatched effect", state: running, recovery: { _tag: "CancelClean", reason: "r" }, contains: "intent i-1 was dispatched" },
    { label: "an intent of another attempt", state: running, recovery: { _tag: "Resolved", intentId: "i-9", outcome: "Failed" }, contains: "intent i-9 is not one of attempt 1" },
    { label: "Indeterminate for an intent never dispatched", state: recordedOnly, recovery: { _tag: "Indeterminate", intentId: "i-1" }, contains: "intent i-1 is Pending, not dispatched" },
    { label: "a resolution of an intent never dispatched", state: recordedOnly, recovery: { _tag: "Resolved", intentId: "i-1", outcome: "Succeeded" }, contains: "Intent in state Pending cannot take Resolve" },
    { label: "Indeterminate for a pending attempt", state: stateOf(scheduled("build", 1), recorded("i-1", "build", 1), dispatched("i-1")), recovery: { _tag: "Indeterminate", intentId: "i-1" }, contains: "Attempt in state Pending cannot take Cancel" }
  ]
  it.each(rejected)("refused: $label", ({ attempt, contains, recovery, state }) => {
    expect(refusalOf(Run.decide({ _tag: "RecoverAttempt", ...meta, stepId: "build", attempt: attempt ?? 1, recovery, note: "why" }, state))).toContain(contains)
  })
})
