/**
 * What the runner needs from a host adapter to run an agent step: how to read the host's headless
 * stream. The controller sits above the host adapters in the package table (they depend on it), so
 * it cannot import their decoders; the runner process is given them (`Runner.Options.agentHosts`)
 * by whoever wires it, and a runner without a host's decoder refuses that host's agent steps
 * before it takes the lease (`Runnable.unsupportedStep`), never running a stream it cannot read.
 *
 * `@ratchet/host/AgentStream.decoder` turns a host package's `decode` into one.
 *
 * @since 0.4.0
 */
import type * as AgentStep from "@ratchet/kernel/AgentStep"
import type * as Turn from "@ratchet/kernel/Turn"

/**
 * Token usage as the host reports it; a count the host does not report is null.
 *
 * @since 0.4.0
 * @category models
 */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cachedInputTokens: number | null
  readonly cacheCreationInputTokens: number | null
}

/**
 * What a whole stream said, in the words the attempt records.
 *
 * @since 0.4.0
 * @category models
 */
export interface Decoded {
  /** The turn events of the stream's signals, in order (the kernel keeps those that change a flag). */
  readonly turns: ReadonlyArray<Turn.Event>
  readonly sessionId: string | null
  readonly model: string | null
  readonly usage: Usage | null
  readonly costUsd: number | null
  /** The host's own end of its answer; null when the stream ended without one (truncated, or the host died). */
  readonly result: { readonly ok: boolean; readonly subtype: string; readonly text: string | null; readonly turns: number | null } | null
  /** Errors the host reported in its stream, clipped. */
  readonly errors: ReadonlyArray<string>
  readonly lines: number
  readonly malformedLines: number
  readonly unknownEvents: number
  /**
   * The side-effecting tool calls the stream shows (the calls the run's hooks record as intents,
   * ADR 0040), each with how it ended; absent when the decoder does not tell them (a host the
   * runner gives no hooks).
   */
  readonly toolCalls?: ReadonlyArray<ToolCall> | undefined
}

/**
 * A side-effecting tool call the stream shows: the host's call id (null when it gave none), the
 * tool, and its end: `completed`, `failed` (its result an error: a failure or a hook's denial),
 * `rejected` (a permission denial of the result line), or null when the stream shows no end.
 *
 * @since 0.4.0
 * @category models
 */
export interface ToolCall {
  readonly callId: string | null
  readonly tool: string
  readonly end: "completed" | "failed" | "rejected" | null
}

/**
 * A host's stream reader: total (it never throws, whatever the text).
 *
 * @since 0.4.0
 * @category models
 */
export interface Decoder {
  readonly decode: (stdout: string) => Decoded
}

/**
 * The stream readers a runner has, by host.
 *
 * @since 0.4.0
 * @category models
 */
export type Decoders = { readonly [H in AgentStep.Host]?: Decoder }
