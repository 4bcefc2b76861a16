/**
 * Whether the run's hooks ran for the agent's calls (ADR 0040's amendment), from hand-written run
 * states and streams: a side-effecting call the stream shows that ran (completed, or no end shown)
 * with no intent of the attempt recorded by a hook is unfenced; a recorded or rejected call is not,
 * nor a failed one that a refusal noted on the attempt names by its call id (the hook denied it); a
 * failed call no refusal names is unfenced (the hooks never saw it: it may have run and failed); another attempt's, step's or run's intent does not count; with no session
 * in the stream, the calls are counted against the attempt's tool-call intents.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"
import type * as AgentHost from "../src/AgentHost.js"
import * as AgentHooksRan from "../src/AgentHooksRan.js"
import * as UseCase from "../src/internal/UseCase.js"

const actor: Event.Actor = { kind: "runner", id: "r-1" }
const v = { version: 1 as const, actor, at: 1 }
const target = { runId: "run-1", stepId: "impl", attempt: 2, agentIntentId: "in-agent-x", host: "claude-code" }
const session = "sess-1"

const stateOf = (...events: ReadonlyArray<Event.Event>): Run.State => Run.fold(events.map((event, index) => ({ event, lsn: index + 1 })))
const opened = (stepId = "impl", attempt = 2, runId = "run-1"): ReadonlyArray<Event.Event> => [
  { _tag: "AttemptScheduled", ...v, runId, stepId, attempt },
  { _tag: "AttemptTransitioned", ...v, runId, stepId, attempt, from: "Pending", to: "Running" }
]
const intent = (intentId: string, stepId = "impl", attempt = 2, runId = "run-1"): ReadonlyArray<Event.Event> => [
  { _tag: "IntentRecorded", ...v, intentId, runId, stepId, attempt, description: intentId },
  { _tag: "IntentDispatched", ...v, intentId }
]
/** The intent the hook records for `callId` of the stream's session. */
const hooked = (callId: string, stepId = "impl", attempt = 2, runId = "run-1") => intent(UseCase.toolIntentId(`claude-code:${session}`, callId), stepId, attempt, runId)

const stream = (calls: ReadonlyArray<AgentHost.ToolCall>, sessionId: string | null = session): AgentHost.Decoded => ({
  turns: [],
  sessionId,
  model: null,
  usage: null,
  costUsd: null,
  result: null,
  errors: [],
  lines: 0,
  malformedLines: 0,
  unknownEvents: 0,
  toolCalls: calls
})
const call = (callId: string | null, end: AgentHost.ToolCall["end"], tool = "Write"): AgentHost.ToolCall => ({ callId, tool, end })
const base = [...opened(), ...intent("in-agent-x")]

// [name, run state, the stream, the unfenced calls, the call ids refusals name].
const table: ReadonlyArray<readonly [string, Run.State, AgentHost.Decoded, ReadonlyArray<string>, ReadonlyArray<string>?]> = [
  ["no calls", stateOf(...base), stream([]), []],
  ["a decoder that tells no calls", stateOf(...base), { ...stream([]), toolCalls: undefined }, []],
  ["a call the hook recorded", stateOf(...base, ...hooked("toolu_1")), stream([call("toolu_1", "completed")]), []],
  ["a call the hook recorded whose end the stream does not show", stateOf(...base, ...hooked("toolu_1")), stream([call("toolu_1", null)]), []],
  ["a call rejected by the result line", stateOf(...base), stream([call("toolu_1", "rejected")]), []],
  ["a call denied by the hook (its result an error, a refusal naming it)", stateOf(...base), stream([call("toolu_1", "failed")]), [], ["toolu_1"]],
  // Rejected: a failed call the hooks did not see may have run (a command that wrote, then failed).
  ["a failed call with no intent and no refusal", stateOf(...base), stream([call("toolu_1", "failed", "Bash")]), ["Bash toolu_1"]],
  ["a failed call whose refusal names another call", stateOf(...base), stream([call("toolu_1", "failed")]), ["Write toolu_1"], ["toolu_2"]],
  ["a failed call with no id", stateOf(...base), stream([call(null, "failed")]), ["Write (no id)"], ["toolu_1"]],
  ["a failed call the hook recorded (it ran and failed)", stateOf(...base, ...hooked("toolu_1")), stream([call("toolu_1", "failed")]), []],
  ["a completed call with no intent", stateOf(...base), stream([call("toolu_1", "completed")]), ["Write toolu_1"]],
  ["a call with no end shown and no intent", stateOf(...base), stream([call("toolu_1", null, "Bash")]), ["Bash toolu_1"]],
  ["a completed call with no id", stateOf(...base, ...hooked("toolu_1")), stream([call(null, "completed")]), ["Write (no id)"]],
  ["one recorded, one not", stateOf(...base, ...hooked("toolu_1")), stream([call("toolu_1", "completed"), call("toolu_2", "completed", "Edit")]), ["Edit toolu_2"]],
  ["the same call id recorded under another session", stateOf(...base, ...intent(UseCase.toolIntentId("claude-code:other", "toolu_1"))), stream([call("toolu_1", "completed")]), ["Write toolu_1"]],
  ["recorded in another attempt", stateOf(...base, ...opened("impl", 1), ...hooked("toolu_1", "impl", 1)), stream([call("toolu_1", "completed")]), ["Write toolu_1"]],
  ["recorded in another step", stateOf(...base, ...opened("docs", 2), ...hooked("toolu_1", "docs", 2)), stream([call("toolu_1", "completed")]), ["Write toolu_1"]],
  ["recorded in another run", stateOf(...base, ...opened("impl", 2, "run-0"), ...hooked("toolu_1", "impl", 2, "run-0")), stream([call("toolu_1", "completed")]), ["Write toolu_1"]],
  ["only the agent's own intent (it is not a tool call's)", stateOf(...base), stream([call("in-agent-x", "completed")]), ["Write in-agent-x"]],
  // No session in the stream: counted.
  ["no session, as many intents as calls", stateOf(...base, ...intent("tool-a")), stream([call("toolu_1", "completed")], null), []],
  ["no session, more calls than intents", stateOf(...base, ...intent("tool-a")), stream([call("toolu_1", "completed"), call("toolu_2", "completed")], null), ["Write toolu_2"]],
  ["no session, a refused failed call beside a recorded one", stateOf(...base, ...intent("tool-a")), stream([call("toolu_1", "completed"), call("toolu_2", "failed")], null), [], ["toolu_2"]],
  ["no session, an unrefused failed call beyond the intents", stateOf(...base, ...intent("tool-a")), stream([call("toolu_1", "completed"), call("toolu_2", "failed")], null), ["Write toolu_2"]]
]

describe("AgentHooksRan.unrecorded", () => {
  for (const [name, run, decoded, expected, refused] of table) {
    it(name, () => {
      expect(AgentHooksRan.unrecorded(run, target, decoded, new Set(refused ?? []))).toStrictEqual(expected)
    })
  }

  it("reads no refusals when none are given", () => {
    expect(AgentHooksRan.unrecorded(stateOf(...base), target, stream([call("toolu_1", "failed")]))).toStrictEqual(["Write toolu_1"])
  })

  it("gives a reason that counts the calls and names at most ten", () => {
    expect(AgentHooksRan.reasonOf(["Write toolu_1"])).toBe(
      "the run's hooks did not run for 1 tool call of the agent (Write toolu_1): they were neither judged nor recorded, so what the agent did is not fenced"
    )
    const many = Array.from({ length: 12 }, (_, i) => `Bash toolu_${i}`)
    expect(AgentHooksRan.reasonOf(many)).toContain("for 12 tool calls of the agent (Bash toolu_0, ")
    expect(AgentHooksRan.reasonOf(many)).toContain("Bash toolu_9 and 2 more)")
  })
})
