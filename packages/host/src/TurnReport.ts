/**
 * What a host event tells of the worker's current turn, in the kernel's turn events (`Turn`).
 *
 * | host event                                   | turn events                                   |
 * |----------------------------------------------|-----------------------------------------------|
 * | `PromptSubmitted`                            | `turnStarted`                                 |
 * | `TurnStarted`                                | `turnStarted`, `firstChunkAwaitStarted`       |
 * | `FirstChunk`                                 | `firstChunkAwaitEnded`                        |
 * | `ToolCallRequested`, the guard denies it     | `toolRejected`                                |
 * | `ToolCallCompleted`                          | `toolUsed`                                    |
 * | `ToolCallFailed`                             | `toolUsed`, `toolFailed`                      |
 * | `StreamReadCompleted`                        | `streamReadCompleted`                         |
 * | `StopRequested` of the main agent, allowed   | `streamReadCompleted`                         |
 * | `StopRequested` of the main agent, blocked   | `turnStarted`                                 |
 * | `StopRequested` of the main agent, with a call's end no hook reported | `toolUsed` first, then as above |
 * | anything else                                | none                                          |
 *
 * Hook-based hosts (Claude Code, Codex) report no stream: a prompt starts the turn, and the main
 * agent's stop is the end of its response, read to the end. Only a host that reports the turn's
 * start as a stream (`TurnStarted`) also says it now waits for the first chunk, so a hook host
 * never leaves `waitingForFirstChunk` set with nothing to clear it. A call the guard lets through
 * or asks about is not rejected (the person may still decline it at the host's own prompt, which
 * no hook reports). A blocked stop sends the agent on with the reason as its next instruction: a
 * new turn, as a prompt would start. A subagent's stop ends its own stream, not the turn's.
 *
 * Where an adapter's hooks are not installed on the end of every call (Claude Code's PostToolUse
 * matches only the tools the guard judges, ADR 0030), the end of a read is reported at the stop
 * instead, from the host's own record of the turn (`HostAdapter.callEndedInTurn`): `toolUsed`
 * comes before the stop's own event, so that a blocked stop's new turn does not clear it unseen.
 *
 * @since 0.1.0
 */
import type * as Turn from "@ratchet/kernel/Turn"
import type * as Guard from "./Guard.js"
import type * as HostEvent from "./HostEvent.js"

const turnStarted: Turn.Event = { _tag: "turnStarted" }
const toolUsed: Turn.Event = { _tag: "toolUsed" }
const streamReadCompleted: Turn.Event = { _tag: "streamReadCompleted" }

/**
 * The turn events `event` reports, given the guard's `decision` about it. `unreportedEnd` is, for
 * the main agent's stop, whether the host's own record shows a call of the turn that ended without
 * an error and that no hook reported (`HostAdapter.callEndedInTurn`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const eventsOf = (event: HostEvent.HostEvent, decision: Guard.Decision, unreportedEnd = false): ReadonlyArray<Turn.Event> => {
  switch (event._tag) {
    case "PromptSubmitted":
      return [turnStarted]
    case "TurnStarted":
      return [turnStarted, { _tag: "firstChunkAwaitStarted" }]
    case "FirstChunk":
      return [{ _tag: "firstChunkAwaitEnded" }]
    case "ToolCallRequested":
      return decision._tag === "Deny" ? [{ _tag: "toolRejected" }] : []
    case "ToolCallCompleted":
      return [toolUsed]
    case "ToolCallFailed":
      return [toolUsed, { _tag: "toolFailed" }]
    case "StreamReadCompleted":
      return [streamReadCompleted]
    case "StopRequested": {
      if (event.subagent) return []
      const ended = decision._tag === "Deny" ? turnStarted : streamReadCompleted
      return unreportedEnd ? [toolUsed, ended] : [ended]
    }
    case "SessionStarted":
    case "SessionEnded":
    case "Passthrough":
      return []
  }
}
