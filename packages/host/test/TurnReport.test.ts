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
  /** (case, host event, the guard's decision, the turn events it reports). */
  const table: ReadonlyArray<readonly [string, HostEvent.HostEvent, Guard.Decision, ReadonlyArray<Turn.Event["_tag"]>]> = [
    ["a prompt starts a turn", { _tag: "PromptSubmitted", session, prompt: "fix it" }, allow, ["turnStarted"]],
    ["a streaming host's turn start also awaits the first chunk", { _tag: "TurnStarted", session }, allow, ["turnStarted", "firstChunkAwaitStarted"]],
    ["the first chunk ends the wait", { _tag: "FirstChunk", session }, allow, ["firstChunkAwaitEnded"]],
    ["a denied call is rejected", { _tag: "ToolCallRequested", session, call, permissionPrompt: false }, deny, ["toolRejected"]],
    ["a denied permission prompt is rejected", { _tag: "ToolCallRequested", session, call, permissionPrompt: true }, deny, ["toolRejected"]],
    ["an allowed call is not (yet) used", { _tag: "ToolCallRequested", session, call, permissionPrompt: false }, allow, []],
    ["a call the host asks about is not rejected", { _tag: "ToolCallRequested", session, call, permissionPrompt: false }, ask, []],
    ["a completed call was used", { _tag: "ToolCallCompleted", session, call }, allow, ["toolUsed"]],
    ["a failed call was used and failed", { _tag: "ToolCallFailed", session, call, error: "exit 1" }, allow, ["toolUsed", "toolFailed"]],
    ["a streaming host's end of stream", { _tag: "StreamReadCompleted", session }, allow, ["streamReadCompleted"]],
    ["the main agent's stop ends the stream", { _tag: "StopRequested", session, continuing: false, subagent: false }, allow, ["streamReadCompleted"]],
    ["a blocked stop sends the agent into a new turn", { _tag: "StopRequested", session, continuing: false, subagent: false }, deny, ["turnStarted"]],
    ["the stop after a block ends the stream", { _tag: "StopRequested", session, continuing: true, subagent: false }, allow, ["streamReadCompleted"]],
    ["a subagent's stop is not the turn's", { _tag: "StopRequested", session, continuing: false, subagent: true }, allow, []],
    ["a session start reports no turn", { _tag: "SessionStarted", session, source: "startup" }, allow, []],
    ["a session end reports no turn", { _tag: "SessionEnded", session, reason: "exit" }, allow, []],
    ["a passed-through event reports no turn", { _tag: "Passthrough", session, name: "Notification" }, allow, []]
  ]

  it.each(table)("%s", (_case, event, decision, expected) => {
    expect(TurnReport.eventsOf(event, decision).map((turn) => turn._tag)).toEqual(expected)
  })

  it("reports only events the kernel's turn accepts", () => {
    for (const [, event, decision] of table) {
      for (const turn of TurnReport.eventsOf(event, decision)) expect(Turn.eventTags).toContain(turn._tag)
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
})
