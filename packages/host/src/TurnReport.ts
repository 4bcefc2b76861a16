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
 * @since 0.1.0
 */
import type * as Turn from "@ratchet/kernel/Turn"
import type * as Guard from "./Guard.js"
import type * as HostEvent from "./HostEvent.js"

const turnStarted: Turn.Event = { _tag: "turnStarted" }
const toolUsed: Turn.Event = { _tag: "toolUsed" }
const streamReadCompleted: Turn.Event = { _tag: "streamReadCompleted" }

/**
 * The turn events `event` reports, given the guard's `decision` about it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const eventsOf = (event: HostEvent.HostEvent, decision: Guard.Decision): ReadonlyArray<Turn.Event> => {
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
    case "StopRequested":
      return event.subagent ? [] : decision._tag === "Deny" ? [turnStarted] : [streamReadCompleted]
    case "SessionStarted":
    case "SessionEnded":
    case "Passthrough":
      return []
  }
}
