/**
 * How an agent step's attempt ends, from how its host's process ended and what its stream said
 * (ADR 0039). The order is the table's, first match wins:
 *
 * | the process | the stream's result | the attempt |
 * |---|---|---|
 * | stopped by a person's cancel (or a lost lease) | any | Cancelled (Indeterminate by the kernel: it was dispatched) |
 * | killed at the step's timeout | any | TimedOut |
 * | could not start (no program, not executable) | none | Failed, with why |
 * | ended by a signal, or exit ≠ 0 | any | Failed, with the exit and the host's own words when it said any |
 * | exit 0 | none (truncated: the host died, or nothing it wrote was its format) | Failed |
 * | exit 0 | the host says it failed (an error subtype, `is_error`, `turn.failed`) | Failed |
 * | exit 0 | the host says it succeeded | Succeeded |
 *
 * Malformed lines and unknown event types never decide the outcome on their own (a host's format
 * changes between versions, ADR 0034): they are counted on the attempt, and named in the reason
 * when the stream had no result, where they are the likely cause.
 *
 * @since 0.4.0
 */
import type * as AgentHost from "./AgentHost.js"

/**
 * How the host's process ended.
 *
 * @since 0.4.0
 * @category models
 */
export interface Ended {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly cancelled: boolean
  /** Why the process could not be started, or null. */
  readonly spawnError: string | null
  /** The step's timeout, for the reason. */
  readonly timeoutSeconds: number
}

/**
 * @since 0.4.0
 * @category models
 */
export interface Outcome {
  readonly outcome: "Succeeded" | "Failed" | "TimedOut" | "Cancelled"
  /** Why it did not succeed, for people and the failure's fingerprint; null when it did. */
  readonly reason: string | null
}

const said = (stream: Pick<AgentHost.Decoded, "result" | "errors">): string => {
  const words = stream.result?.text ?? stream.errors.at(-1) ?? null
  return words === null ? "" : `; the host said: ${words.slice(0, 500)}`
}

/**
 * The attempt's end (see the module's table).
 *
 * @since 0.4.0
 * @category constructors
 */
export const of = (ended: Ended, stream: Pick<AgentHost.Decoded, "result" | "errors" | "lines" | "malformedLines">): Outcome => {
  if (ended.cancelled) return { outcome: "Cancelled", reason: "the agent was stopped by a cancel; its changes may be half made" }
  if (ended.timedOut) {
    return { outcome: "TimedOut", reason: `the agent ran past its timeout of ${ended.timeoutSeconds} s and its process group was killed` }
  }
  if (ended.spawnError !== null) return { outcome: "Failed", reason: `the agent could not be started: ${ended.spawnError}` }
  if (ended.exitCode !== 0) {
    const how = ended.exitCode === null ? `was ended by ${ended.signal ?? "a signal"}` : `exited ${ended.exitCode}`
    return { outcome: "Failed", reason: `the agent ${how}${said(stream)}` }
  }
  if (stream.result === null) {
    const malformed = stream.malformedLines > 0 ? `, ${stream.malformedLines} of its ${stream.lines} lines malformed` : ""
    return {
      outcome: "Failed",
      reason: stream.lines === 0
        ? `the agent exited 0 without writing a stream; its host's result is missing${said(stream)}`
        : `the agent exited 0 but its stream ended without the host's result (truncated${malformed})${said(stream)}`
    }
  }
  if (!stream.result.ok) return { outcome: "Failed", reason: `the host ended with ${stream.result.subtype}${said(stream)}` }
  return { outcome: "Succeeded", reason: null }
}
