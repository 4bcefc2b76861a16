/**
 * What each host event reports of the worker's turn, from a table written by hand: every host
 * event kind, with the decisions that change the answer, and the events that report nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Turn from "@ratchet/kernel/Turn"
import type * as Guard from "../src/Guard.js"
import type * as HostEvent from "../src/HostEvent.js"
import * as TurnReport from "../src/TurnReport.js"

const session: HostEvent.Session = { host: "claude-code", sessionId: "s-1", cwd: "/w" }
const call: HostEvent.ToolCall = { id: "toolu_1", tool: "Edit", action: { _tag: "Write", paths: ["src/a.ts"] } }
const allow: Guard.Decision = { _tag: "Allow" }
const deny: Guard.Decision = { _tag: "Deny", reason: "outside the scope", fix: "widen it" }
const ask: Guard.Decision = { _tag: "Ask", reason: "rm -rf build. Allow it?" }

describe("TurnReport.eventsOf", () => {
  /**
   * (case, host event, the guard's decision, whether the host's record shows a call's end no hook
   * reported, the turn events it reports).
   */
  const table: ReadonlyArray<readonly [string, HostEvent.HostEvent, Guard.Decision, boolean, ReadonlyArray<Turn.Event["_tag"]>]> = [
    ["a prompt starts a turn", { _tag: "PromptSubmitted", session, prompt: "fix it" }, allow, false, ["turnStarted"]],
    ["a streaming host's turn start also awaits the first chunk", { _tag: "TurnStarted", session }, allow, false, ["turnStarted", "firstChunkAwaitStarted"]],
    ["the first chunk ends the wait", { _tag: "FirstChunk", session }, allow, false, ["firstChunkAwaitEnded"]],
    ["a denied call is rejected", { _tag: "ToolCallRequested", session, call, permissionPrompt: false }, deny, false, ["toolRejected"]],
    ["a denied permission prompt is rejected", { _tag: "ToolCallRequested", session, call, permissionPrompt: true }, deny, false, ["toolRejected"]],
    ["an allowed call is not (yet) used", { _tag: "ToolCallRequested", session, call, permissionPrompt: false }, allow, false, []],
    ["a call the host asks about is not rejected", { _tag: "ToolCallRequested", session, call, permissionPrompt: false }, ask, false, []],
    ["a completed call was used", { _tag: "ToolCallCompleted", session, call }, allow, false, ["toolUsed"]],
    ["a failed call was used and failed", { _tag: "ToolCallFailed", session, call, error: "exit 1" }, allow, false, ["toolUsed", "toolFailed"]],
    ["a streaming host's end of stream", { _tag: "StreamReadCompleted", session }, allow, false, ["streamReadCompleted"]],
    ["the main agent's stop ends the stream", { _tag: "StopRequested", session, continuing: false, subagent: false }, allow, false, ["streamReadCompleted"]],
    ["a blocked stop sends the agent into a new turn", { _tag: "StopRequested", session, continuing: false, subagent: false }, deny, false, ["turnStarted"]],
    ["the stop after a block ends the stream", { _tag: "StopRequested", session, continuing: true, subagent: false }, allow, false, ["streamReadCompleted"]],
    ["a subagent's stop is not the turn's", { _tag: "StopRequested", session, continuing: false, subagent: true }, allow, false, []],
    ["a session start reports no turn", { _tag: "SessionStarted", session, source: "startup" }, allow, false, []],
    ["a session end reports no turn", { _tag: "SessionEnded", session, reason: "exit" }, allow, false, []],
    ["a passed-through event reports no turn", { _tag: "Passthrough", session, name: "Notification" }, allow, false, []],
    ["a stop after an unreported read: used, then the stream ended", { _tag: "StopRequested", session, continuing: false, subagent: false }, allow, true, ["toolUsed", "streamReadCompleted"]],
    ["a blocked stop after an unreported read: used before the new turn", { _tag: "StopRequested", session, continuing: false, subagent: false }, deny, true, ["toolUsed", "turnStarted"]],
    ["the stop after a block, after an unreported read", { _tag: "StopRequested", session, continuing: true, subagent: false }, allow, true, ["toolUsed", "streamReadCompleted"]],
    ["a subagent's stop is not the turn's, whatever the record shows", { _tag: "StopRequested", session, continuing: false, subagent: true }, allow, true, []],
    ["an unreported end is a stop's alone: a prompt", { _tag: "PromptSubmitted", session, prompt: "fix it" }, allow, true, ["turnStarted"]],
    ["an unreported end is a stop's alone: a denied call", { _tag: "ToolCallRequested", session, call, permissionPrompt: false }, deny, true, ["toolRejected"]],
    ["an unreported end is a stop's alone: a completed call", { _tag: "ToolCallCompleted", session, call }, allow, true, ["toolUsed"]],
    ["an unreported end is a stop's alone: a session end", { _tag: "SessionEnded", session, reason: "exit" }, allow, true, []]
  ]



  it.each(table)("%s", (_case, event, decision, unreportedEnd, expected) => {
    expect(TurnReport.eventsOf(event, decision, unreportedEnd).map((turn) => turn._tag)).toEqual(expected)
  })

  it("reports only events the kernel's turn accepts", () => {
    for (const [, event, decision, unreportedEnd] of table) {
      for (const turn of TurnReport.eventsOf(event, decision, unreportedEnd)) expect(Turn.eventTags).toContain(turn._tag)
    }
  })

  it("folds a hook host's turn into the flags the kernel defines: a new prompt clears the last turn's", () => {
    const turn = (events: ReadonlyArray<readonly [HostEvent.HostEvent, Guard.Decision]>) =>
      Turn.fold(events.flatMap(([event, decision]) => TurnReport.eventsOf(event, decision)))
    const firstTurn = [
      [{ _tag: "PromptSubmitted", session, prompt: "fix it" }, allow],
      [{ _tag: "ToolCallRequested", session, call, permissionPrompt: false }, deny],
      [{ _tag: "ToolCallFailed", session, call, error: "exit 1" }, allow],
      [{ _tag: "StopRequested", session, continuing: false, subagent: false }, allow]
    ] as const
    expect(turn(firstTurn)).toEqual({ waitingForFirstChunk: false, toolRejected: true, toolUsed: true, toolFailed: true, streamReadComplete: true })
    expect(turn([...firstTurn, [{ _tag: "PromptSubmitted", session, prompt: "again" }, allow]])).toEqual(Turn.initial)
  })

  it("keeps a read's end reported at a blocked stop in the log of changes, before the new turn clears it", () => {
    const stop: HostEvent.HostEvent = { _tag: "StopRequested", session, continuing: false, subagent: false }
    const reported = [...TurnReport.eventsOf({ _tag: "PromptSubmitted", session, prompt: "look" }, allow), ...TurnReport.eventsOf(stop, deny, true)]
    expect(Turn.changes(Turn.initial, reported).map((turn) => turn._tag)).toEqual(["toolUsed", "turnStarted"])
    expect(Turn.fold(reported)).toEqual(Turn.initial)
  })
})
