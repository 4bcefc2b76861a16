/**
 * The bound on refusals noted on an agent's attempt (ADR 0040's amendment), from hand-written
 * counts and events: the first 49 are noted as they are, the 50th says later ones are not, and
 * every later one writes nothing; only the attempt's own refusal notes count.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"
import * as AgentRefusals from "../src/AgentRefusals.js"

const actor: Event.Actor = { kind: "agent", id: "claude-code:s" }
const v = { version: 1 as const, actor, at: 1 }
const target = { runId: "run-1", stepId: "impl", attempt: 2 }
const noted = (note: string, runId = "run-1", stepId = "impl", attempt = 2): Event.Event => ({ _tag: "AttemptNoted", ...v, runId, stepId, attempt, note })

describe("AgentRefusals.next", () => {
  const last = "outside the scope (the 50th refusal noted on this attempt: later ones are refused without a note; the agent's transcript lists them)"
  // [refusals noted so far, what one more writes].
  const table: ReadonlyArray<readonly [number, ReturnType<typeof AgentRefusals.next>]> = [
    [0, { _tag: "Note", reason: "outside the scope" }],
    [1, { _tag: "Note", reason: "outside the scope" }],
    [48, { _tag: "Note", reason: "outside the scope" }],
    [49, { _tag: "Note", reason: last }],
    [50, { _tag: "Quiet" }],
    [51, { _tag: "Quiet" }],
    [10_000, { _tag: "Quiet" }]
  ]
  it.each(table)("after %i noted: %j", (count, expected) => {
    expect(AgentRefusals.next(count, "outside the scope")).toStrictEqual(expected)
  })

  it("notes at most maxNotes however many refusals come", () => {
    let count = 0
    for (let i = 0; i < 500; i++) if (AgentRefusals.next(count, "r")._tag === "Note") count++
    expect(count).toBe(AgentRefusals.maxNotes)
  })
})

describe("AgentRefusals.notedIn", () => {
  it("counts the attempt's refusal notes only", () => {
    const refusal = `${Run.refusalNotePrefix}Write src/x — outside the scope`
    const events: ReadonlyArray<Event.Event> = [
      noted(refusal),
      noted(refusal),
      noted("closed when the agent ended, their end never reported by a hook: tool-1"),
      noted(refusal, "run-0"),
      noted(refusal, "run-1", "docs"),
      noted(refusal, "run-1", "impl", 1),
      { _tag: "IntentDispatched", ...v, intentId: "tool-1" }
    ]
    expect(AgentRefusals.notedIn(events, target)).toBe(2)
    expect(AgentRefusals.notedIn([], target)).toBe(0)
  })

  it("reads the kernel's own refusal notes", () => {
    const running = Run.fold([
      { event: { _tag: "AttemptScheduled", ...v, ...target }, lsn: 1 },
      { event: { _tag: "AttemptTransitioned", ...v, ...target, from: "Pending", to: "Running" }, lsn: 2 }
    ])
    const decided = Run.decide({ _tag: "RefuseEffect", actor, at: 3, ...target, description: "Write src/x", reason: "no" }, running)
    expect(decided._tag).toBe("Right")
    if (decided._tag === "Right") expect(AgentRefusals.notedIn(decided.right, target)).toBe(1)
  })
})

describe("AgentRefusals.refusedCallIds", () => {
  const refusal = (callId: string | null, description = "Write src/x") => `${Run.refusalNotePrefix}${AgentRefusals.describeCall(callId, description)} — outside the scope`
  // [name, the notes, the call ids they name].
  const table: ReadonlyArray<readonly [string, ReadonlyArray<Event.Event>, ReadonlyArray<string>]> = [
    ["a refusal named by its call id", [noted(refusal("toolu_1"))], ["toolu_1"]],
    ["two refusals", [noted(refusal("toolu_1")), noted(refusal("toolu_2"))], ["toolu_1", "toolu_2"]],
    ["a description that mentions another call id names only its own", [noted(refusal("toolu_1", "Bash echo 'call toolu_9: x'"))], ["toolu_1"]],
    // Rejected: notes that are not this attempt's refusals, or name no call.
    ["a refusal with no call id", [noted(refusal(null))], []],
    ["a refusal without the call's name (written before call ids)", [noted(`${Run.refusalNotePrefix}Write src/x — no`)], []],
    ["another attempt's refusal", [noted(refusal("toolu_1"), "run-1", "impl", 1)], []],
    ["another step's refusal", [noted(refusal("toolu_1"), "run-1", "docs")], []],
    ["another run's refusal", [noted(refusal("toolu_1"), "run-0")], []],
    ["a note that is not a refusal", [noted("call toolu_1: closed when the agent ended")], []],
    ["an intent named like a call", [{ _tag: "IntentDispatched", ...v, intentId: "call toolu_1: x" }], []]
  ]
  it.each(table)("%s", (_, events, expected) => {
    expect([...AgentRefusals.refusedCallIds(events, target)]).toStrictEqual(expected)
  })

  it("reads the call id back from the kernel's note, however long the description", () => {
    const running = Run.fold([
      { event: { _tag: "AttemptScheduled", ...v, ...target }, lsn: 1 },
      { event: { _tag: "AttemptTransitioned", ...v, ...target, from: "Pending", to: "Running" }, lsn: 2 }
    ])
    const description = AgentRefusals.describeCall("toolu_long", `Bash ${"x".repeat(5000)}`)
    const decided = Run.decide({ _tag: "RefuseEffect", actor, at: 3, ...target, description, reason: "no" }, running)
    expect(decided._tag).toBe("Right")
    if (decided._tag === "Right") expect([...AgentRefusals.refusedCallIds(decided.right, target)]).toStrictEqual(["toolu_long"])
  })
})
