/**
 * The agent's tool calls left open at its end (ADR 0040), from hand-written run states: only the
 * attempt's own dispatched tool calls are closed (resolved Failed, with one note naming them);
 * the agent's own intent, resolved or pending calls, and other attempts', steps' and runs' calls
 * are left alone; nothing is written when none is open. The commands are then accepted by the run
 * decider.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"
import * as Either from "effect/Either"
import * as AgentToolCalls from "../src/AgentToolCalls.js"

const actor: Event.Actor = { kind: "runner", id: "r-1" }
const v = { version: 1 as const, actor, at: 1 }
const meta = { actor, at: 9 }
const target = { runId: "run-1", stepId: "impl", attempt: 2, agentIntentId: "in-agent-x" }

const stateOf = (...events: ReadonlyArray<Event.Event>): Run.State => Run.fold(events.map((event, index) => ({ event, lsn: index + 1 })))
const opened = (stepId: string, attempt: number, runId = "run-1"): ReadonlyArray<Event.Event> => [
  { _tag: "AttemptScheduled", ...v, runId, stepId, attempt },
  { _tag: "AttemptTransitioned", ...v, runId, stepId, attempt, from: "Pending", to: "Running" }
]
const intent = (intentId: string, stepId = "impl", attempt = 2, runId = "run-1"): ReadonlyArray<Event.Event> => [
  { _tag: "IntentRecorded", ...v, intentId, runId, stepId, attempt, description: intentId },
  { _tag: "IntentDispatched", ...v, intentId }
]
const resolved = (intentId: string): Event.Event => ({ _tag: "IntentResolved", ...v, intentId, outcome: "Succeeded", resultRefs: [] })

describe("AgentToolCalls.closeUnreported", () => {
  it("closes the attempt's dispatched tool calls, resolved Failed, and notes them", () => {
    const run = stateOf(...opened("impl", 2), ...intent("in-agent-x"), ...intent("tool-b"), ...intent("tool-a"))
    const items = AgentToolCalls.closeUnreported(run, target, meta)
    expect(items).toStrictEqual([
      { _tag: "ResolveEffect", ...meta, runId: "run-1", intentId: "tool-a", outcome: "Failed", resultRefs: [] },
      { _tag: "ResolveEffect", ...meta, runId: "run-1", intentId: "tool-b", outcome: "Failed", resultRefs: [] },
      {
        _tag: "AttemptNoted",
        version: 1,
        ...meta,
        runId: "run-1",
        stepId: "impl",
        attempt: 2,
        note: "closed when the agent ended, their end never reported by a hook (the host ran no end hook for them, or stopped mid-call): tool-a, tool-b"
      }
    ])
    // The kernel accepts them against that state.
    expect(Either.isRight(Decider.decideAll(items, { task: { _tag: "Absent", version: 0 } as never, run }, 100))).toBe(true)
  })

  // Left alone: [what, the state].
  const none: ReadonlyArray<readonly [string, Run.State]> = [
    ["no intent but the agent's own", stateOf(...opened("impl", 2), ...intent("in-agent-x"))],
    ["a tool call whose end was reported", stateOf(...opened("impl", 2), ...intent("in-agent-x"), ...intent("tool-a"), resolved("tool-a"))],
    ["a tool call only recorded, never dispatched", stateOf(...opened("impl", 2), { _tag: "IntentRecorded", ...v, intentId: "tool-a", runId: "run-1", stepId: "impl", attempt: 2, description: "x" })],
    ["another attempt's call", stateOf(...opened("impl", 1), ...intent("tool-a", "impl", 1), ...opened("impl", 2))],
    ["another step's call", stateOf(...opened("docs", 1), ...intent("tool-a", "docs", 1), ...opened("impl", 2))],
    ["another run's call", stateOf(...opened("impl", 2, "run-0"), ...intent("tool-a", "impl", 2, "run-0"))]
  ]
  it.each(none)("writes nothing: %s", (_, run) => {
    expect(AgentToolCalls.closeUnreported(run, target, meta)).toStrictEqual([])
  })

  it("names at most 20 in the note", () => {
    const ids = Array.from({ length: 23 }, (_, i) => `tool-${String(i).padStart(2, "0")}`)
    const run = stateOf(...opened("impl", 2), ...ids.flatMap((id) => intent(id)))
    const items = AgentToolCalls.closeUnreported(run, target, meta)
    expect(items).toHaveLength(24)
    const note = (items.at(-1) as { note: string }).note
    expect(note).toContain("tool-19 and 3 more")
    expect(note).not.toContain("tool-20")
  })
})
