/**
 * What a headless agent's stream says, in words shared by every host: the signals a decoder reads
 * from its host's lines, what they tell of the kernel's turn region (`Turn`), and the summary of
 * the whole stream. Each host package decodes its own documented format into these
 * (`@ratchet/host-claude-code/StreamJson`, `@ratchet/host-codex/ExecJson`); the runner that starts
 * the host reads only these words.
 *
 * | signal             | turn events                                    |
 * |--------------------|------------------------------------------------|
 * | `RequestStarted`   | `turnStarted`, `firstChunkAwaitStarted`        |
 * | `FirstChunk`       | `firstChunkAwaitEnded`                         |
 * | `ToolRequested`    | none (the call has not run yet)                |
 * | `ToolCompleted`    | `toolUsed`                                     |
 * | `ToolFailed`       | `toolUsed`, `toolFailed`                       |
 * | `ToolRejected`     | `toolRejected`                                 |
 * | `StreamCompleted`  | `streamReadCompleted`                          |
 * | `HostError`        | none (recorded in the summary)                 |
 *
 * A streaming host reports the start of each model request, so, unlike a hook host
 * (`TurnReport`), it says it now waits for the first chunk, and the first content of the request
 * ends that wait. `StreamCompleted` is the host's own end of its answer (Claude Code's `result`,
 * Codex's `turn.completed` or `turn.failed`), never the mere end of the bytes: a stream cut short
 * has no `StreamCompleted`, and its summary has no result, which is how the runner tells a
 * truncated stream from a finished one.
 *
 * Reading never fails. A line is at most {@link maxLineBytes} bytes; a longer one is counted as
 * oversized and skipped without being parsed. A line that is not a JSON object, or an event of a
 * known type that does not match its documented shape, is recorded as malformed (its line number
 * and reason, the first {@link maxRecorded} of them). An event of a type the decoder does not
 * know is counted by type and otherwise ignored, since hosts add event types between versions.
 * Every text kept from the stream is clipped and stripped of control characters, because it is
 * the agent's output: it may say anything, including what looks like a command.
 *
 * @since 0.4.0
 */
import type * as AgentHost from "@ratchet/controller/AgentHost"
import type * as Turn from "@ratchet/kernel/Turn"

/**
 * The longest line read, in bytes of UTF-8 (4 MiB: a tool result may carry a large file).
 *
 * @since 0.4.0
 * @category models
 */
export const maxLineBytes = 4 * 1024 * 1024

/**
 * How many malformed lines, errors and unknown event types a summary records one by one; the
 * counts go on past it.
 *
 * @since 0.4.0
 * @category models
 */
export const maxRecorded = 20

/**
 * The longest text a summary keeps from the stream (an error message, the result), in characters.
 *
 * @since 0.4.0
 * @category models
 */
export const maxTextLength = 2_000

/**
 * One thing a host's stream said.
 *
 * @since 0.4.0
 * @category models
 */
export type Signal =
  | { readonly _tag: "RequestStarted" }
  | { readonly _tag: "FirstChunk" }
  /** `sideEffect`: whether the call is one the run's hooks record as an intent (absent: the decoder does not say). */
  | { readonly _tag: "ToolRequested"; readonly tool: string; readonly callId: string | null; readonly sideEffect?: boolean | undefined }
  | { readonly _tag: "ToolCompleted"; readonly callId: string | null }
  | { readonly _tag: "ToolFailed"; readonly callId: string | null }
  | { readonly _tag: "ToolRejected"; readonly callId: string | null }
  | { readonly _tag: "StreamCompleted" }
  | { readonly _tag: "HostError"; readonly message: string }

/**
 * The turn events `signal` reports (see the module's table).
 *
 * @since 0.4.0
 * @category constructors
 */
export const turnEventsOf = (signal: Signal): ReadonlyArray<Turn.Event> => {
  switch (signal._tag) {
    case "RequestStarted":
      return [{ _tag: "turnStarted" }, { _tag: "firstChunkAwaitStarted" }]
    case "FirstChunk":
      return [{ _tag: "firstChunkAwaitEnded" }]
    case "ToolCompleted":
      return [{ _tag: "toolUsed" }]
    case "ToolFailed":
      return [{ _tag: "toolUsed" }, { _tag: "toolFailed" }]
    case "ToolRejected":
      return [{ _tag: "toolRejected" }]
    case "StreamCompleted":
      return [{ _tag: "streamReadCompleted" }]
    case "ToolRequested":
    case "HostError":
      return []
  }
}

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
 * The host's own end of its answer.
 *
 * @since 0.4.0
 * @category models
 */
export interface Result {
  /** Whether the host says the work ended without an error. */
  readonly ok: boolean
  /** The host's word for how it ended (Claude Code's result subtype; Codex's last event type). */
  readonly subtype: string
  /** The final text, or the error's message, clipped. */
  readonly text: string | null
  /** The number of turns the host counted, when it says. */
  readonly turns: number | null
}

/**
 * A line that could not be read as the host's format.
 *
 * @since 0.4.0
 * @category models
 */
export interface Malformed {
  /** 1-based. */
  readonly line: number
  readonly reason: string
}

/**
 * @since 0.4.0
 * @category models
 */
export interface Counts {
  /** Non-empty lines read, oversized ones included. */
  readonly lines: number
  /** Lines decoded as an event of a known type. */
  readonly decoded: number
  readonly unknown: number
  readonly malformed: number
  readonly oversized: number
  readonly requests: number
  readonly toolRequests: number
  readonly toolCompleted: number
  readonly toolFailed: number
  readonly toolRejected: number
}

/**
 * What a whole stream said.
 *
 * @since 0.4.0
 * @category models
 */
export interface Summary {
  readonly host: "claude-code" | "codex"
  readonly sessionId: string | null
  readonly model: string | null
  readonly usage: Usage | null
  readonly costUsd: number | null
  /** Null when the stream ended without the host's own end: truncated, or the host died. */
  readonly result: Result | null
  readonly errors: ReadonlyArray<string>
  readonly counts: Counts
  /** Event types the decoder does not know, with how often each came (the first {@link maxRecorded} types). */
  readonly unknownTypes: Readonly<Record<string, number>>
  readonly malformed: ReadonlyArray<Malformed>
}

/**
 * A summary from what a decoder kept: its tally spread into the summary's counts, errors, unknown
 * types and malformed lines.
 *
 * @since 0.4.0
 * @category constructors
 */
export const summaryOf = (
  host: Summary["host"],
  kept: Pick<Summary, "sessionId" | "model" | "usage" | "costUsd" | "result"> & { readonly tally: Tally }
): Summary => ({
  host,
  sessionId: kept.sessionId,
  model: kept.model,
  usage: kept.usage,
  costUsd: kept.costUsd,
  result: kept.result,
  errors: kept.tally.errors,
  counts: kept.tally.counts,
  unknownTypes: kept.tally.unknownTypes,
  malformed: kept.tally.malformed
})

/**
 * Counts with nothing counted.
 *
 * @since 0.4.0
 * @category constructors
 */
export const noCounts: Counts = {
  lines: 0,
  decoded: 0,
  unknown: 0,
  malformed: 0,
  oversized: 0,
  requests: 0,
  toolRequests: 0,
  toolCompleted: 0,
  toolFailed: 0,
  toolRejected: 0
}

/** Control characters but tab and newline, and lone surrogates. */
// eslint-disable-next-line no-control-regex
const unsafe = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * `text` made safe to keep: control characters (escape sequences among them) and lone surrogates
 * replaced by U+FFFD, clipped to `max` characters with an ellipsis.
 *
 * @since 0.4.0
 * @category constructors
 */
export const clip = (text: string, max: number = maxTextLength): string => {
  const head = text.length > max ? `${text.slice(0, max)}…` : text
  return head.replace(unsafe, "\ufffd")
}

/**
 * An identifier or a model name from the stream: kept when it is one short printable word, else
 * null (a hostile or broken stream cannot smuggle a line into a record through it).
 *
 * @since 0.4.0
 * @category constructors
 */
export const word = (text: string | undefined | null): string | null =>
  text !== undefined && text !== null && /^[\w.:@/[\]-]{1,200}$/.test(text) ? text : null

/**
 * One line, parsed: a JSON object, or why it is not one. The caller has already left out empty
 * lines.
 *
 * @since 0.4.0
 * @category constructors
 */
export const parseLine = (
  line: string
):
  | { readonly _tag: "Object"; readonly value: Readonly<Record<string, unknown>>; readonly type: string | null }
  | { readonly _tag: "Oversized"; readonly bytes: number }
  | { readonly _tag: "Malformed"; readonly reason: string } =>
{
  // A string's UTF-8 length is at most three bytes per UTF-16 unit: only count when it may be over.
  if (line.length * 3 > maxLineBytes) {
    const bytes = new TextEncoder().encode(line).length
    if (bytes > maxLineBytes) return { _tag: "Oversized", bytes }
  }
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    // A parse error, or a stack too deep for a hostile nesting: either way, not a line of the format.
    return { _tag: "Malformed", reason: `not JSON (${clip(error instanceof Error ? error.message : String(error), 200)})` }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { _tag: "Malformed", reason: `not a JSON object (${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value})` }
  }
  const type = (value as Record<string, unknown>)["type"]
  return { _tag: "Object", value: value as Record<string, unknown>, type: typeof type === "string" ? type : null }
}

/**
 * The lines of `text`, split on newlines (a carriage return before one is dropped), empty ones
 * kept so that line numbers match the stream's. The last segment is a line too: a stream cut short
 * loses its newline, not its last event.
 *
 * @since 0.4.0
 * @category constructors
 */
export const splitLines = (text: string): ReadonlyArray<string> => {
  const lines = text.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line))
  if (lines.at(-1) === "") lines.pop()
  return lines
}

/**
 * One line through a host's decoder: blank lines skipped, every other counted; an oversized,
 * malformed, unknown or undecodable line recorded in the tally; a decoded event applied. What
 * differs between hosts is `decode` (undefined for a type the host's format does not name, else
 * the event or why it does not match its documented shape) and `apply`.
 *
 * @since 0.4.0
 * @category constructors
 */
export const stepWith = <S extends { readonly line: number; readonly tally: Tally }, E>(
  state: S,
  line: string,
  decoder: {
    /** What the host calls one line ("message", "event"), for the malformed line's reason. */
    readonly noun: string
    readonly decode: (type: string | null, value: Readonly<Record<string, unknown>>) => { readonly event: E } | { readonly reason: string } | undefined
    readonly apply: (state: S, event: E, signals: Array<Signal>) => S
  }
): { readonly state: S; readonly signals: ReadonlyArray<Signal> } => {
  const at: S = { ...state, line: state.line + 1 }
  if (line.trim().length === 0) return { state: at, signals: [] }
  const tally = count(at.tally, "lines")
  const parsed = parseLine(line)
  switch (parsed._tag) {
    case "Oversized":
      return { state: { ...at, tally: count(tally, "oversized") }, signals: [] }
    case "Malformed":
      return { state: { ...at, tally: malformed(tally, at.line, parsed.reason) }, signals: [] }
    case "Object": {
      const decoded = decoder.decode(parsed.type, parsed.value)
      if (decoded === undefined) return { state: { ...at, tally: unknown(tally, parsed.type) }, signals: [] }
      if ("reason" in decoded) {
        return { state: { ...at, tally: malformed(tally, at.line, `a "${parsed.type}" ${decoder.noun}: ${decoded.reason}`) }, signals: [] }
      }
      const signals: Array<Signal> = []
      return { state: decoder.apply({ ...at, tally: count(tally, "decoded") }, decoded.event, signals), signals }
    }
  }
}

/**
 * Reads a whole stream with a host's decoder (`step` line by line from `initial`, then `summarise`):
 * its signals in order, and its summary.
 *
 * @since 0.4.0
 * @category constructors
 */
export const decodeWith = <S>(
  text: string,
  decoder: {
    readonly initial: S
    readonly step: (state: S, line: string) => { readonly state: S; readonly signals: ReadonlyArray<Signal> }
    readonly summarise: (state: S) => Summary
  }
): { readonly signals: ReadonlyArray<Signal>; readonly summary: Summary } => {
  let state = decoder.initial
  const signals: Array<Signal> = []
  for (const line of splitLines(text)) {
    const next = decoder.step(state, line)
    state = next.state
    signals.push(...next.signals)
  }
  return { signals, summary: decoder.summarise(state) }
}

/**
 * The side-effecting calls `signals` request (`ToolRequested` with `sideEffect`), each with its
 * last end: a rejection (the result line's denials) outranks the failed result that preceded it.
 * None when the decoder marks no call (it does not tell side effects apart).
 *
 * @since 0.4.0
 * @category constructors
 */
export const sideEffectsOf = (signals: ReadonlyArray<Signal>): ReadonlyArray<AgentHost.ToolCall> => {
  const calls: Array<{ callId: string | null; tool: string; end: AgentHost.ToolCall["end"] }> = []
  const byId = new Map<string, { end: AgentHost.ToolCall["end"] }>()
  for (const signal of signals) {
    if (signal._tag === "ToolRequested" && signal.sideEffect === true) {
      const call = { callId: signal.callId, tool: signal.tool, end: null as AgentHost.ToolCall["end"] }
      calls.push(call)
      if (signal.callId !== null) byId.set(signal.callId, call)
    } else if ((signal._tag === "ToolCompleted" || signal._tag === "ToolFailed" || signal._tag === "ToolRejected") && signal.callId !== null) {
      const call = byId.get(signal.callId)
      if (call !== undefined && call.end !== "rejected") call.end = signal._tag === "ToolCompleted" ? "completed" : signal._tag === "ToolFailed" ? "failed" : "rejected"
    }
  }
  return calls
}

/**
 * What the runner records of a whole stream read with `decode` (a host package's): the turn events
 * of its signals in order, and its summary in the attempt's words (ADR 0039). Hand it to the runner
 * as that host's stream reader (`Runner.Options.agentHosts`).
 *
 * @since 0.4.0
 * @category constructors
 */
export const decoder = (
  decode: (text: string) => { readonly signals: ReadonlyArray<Signal>; readonly summary: Summary }
): AgentHost.Decoder => ({
  decode: (text) => {
    const { signals, summary } = decode(text)
    return {
      turns: signals.flatMap(turnEventsOf),
      sessionId: summary.sessionId,
      model: summary.model,
      usage: summary.usage,
      costUsd: summary.costUsd,
      result: summary.result,
      errors: summary.errors,
      lines: summary.counts.lines,
      malformedLines: summary.counts.malformed + summary.counts.oversized,
      unknownEvents: summary.counts.unknown,
      toolCalls: sideEffectsOf(signals)
    }
  }
})

/**
 * A running record of what the stream said, shared by the host decoders: counts, errors,
 * malformed lines and unknown types, each bounded.
 *
 * @since 0.4.0
 * @category models
 */
export interface Tally {
  readonly counts: Counts
  readonly errors: ReadonlyArray<string>
  readonly unknownTypes: Readonly<Record<string, number>>
  readonly malformed: ReadonlyArray<Malformed>
}

/**
 * @since 0.4.0
 * @category constructors
 */
export const emptyTally: Tally = { counts: noCounts, errors: [], unknownTypes: {}, malformed: [] }

/**
 * `tally` with `key` counted once more.
 *
 * @since 0.4.0
 * @category constructors
 */
export const count = (tally: Tally, key: keyof Counts, by = 1): Tally => ({ ...tally, counts: { ...tally.counts, [key]: tally.counts[key] + by } })

/**
 * `tally` with a malformed line recorded.
 *
 * @since 0.4.0
 * @category constructors
 */
export const malformed = (tally: Tally, line: number, reason: string): Tally => {
  const counted = count(tally, "malformed")
  return tally.malformed.length >= maxRecorded ? counted : { ...counted, malformed: [...tally.malformed, { line, reason: clip(reason, 300) }] }
}

/**
 * `tally` with an event of unknown type counted (its type recorded while fewer than
 * {@link maxRecorded} types are).
 *
 * @since 0.4.0
 * @category constructors
 */
export const unknown = (tally: Tally, type: string | null): Tally => {
  const counted = count(tally, "unknown")
  const key = type === null ? "(no type)" : clip(type, 80)
  const known = Object.prototype.hasOwnProperty.call(tally.unknownTypes, key)
  if (!known && Object.keys(tally.unknownTypes).length >= maxRecorded) return counted
  // A null-prototype record: a hostile type such as "__proto__" is a key like any other.
  const types: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, tally.unknownTypes)
  types[key] = (known ? tally.unknownTypes[key]! : 0) + 1
  return { ...counted, unknownTypes: types }
}

/**
 * `tally` with an error message of the host recorded.
 *
 * @since 0.4.0
 * @category constructors
 */
export const error = (tally: Tally, message: string): Tally =>
  tally.errors.length >= maxRecorded ? tally : { ...tally, errors: [...tally.errors, clip(message, 500)] }
