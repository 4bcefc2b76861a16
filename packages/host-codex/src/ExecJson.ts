/**
 * Codex's headless stream, `codex exec --json …`, decoded line by line into the shared words of
 * `@ratchet/host/AgentStream`. Pure: the runner feeds it lines and reads signals and a summary.
 *
 * The format is Codex's `ThreadEvent`, one JSON object per line, as its TypeScript SDK declares it
 * (openai/codex, `sdk/typescript/src/events.ts` and `items.ts`, "based on event types from
 * codex-rs/exec/src/exec_events.rs"):
 * - `thread.started { thread_id }`, first;
 * - `turn.started`; `turn.completed { usage { input_tokens, cached_input_tokens, output_tokens } }`;
 *   `turn.failed { error { message } }`;
 * - `item.started`, `item.updated`, `item.completed`, each `{ item }`, an item being one of
 *   `agent_message { text }`, `reasoning`, `plan`, `command_execution { command, exit_code?,
 *   status }`, `file_change { changes, status }`, `mcp_tool_call { server, tool, status, error? }`,
 *   `web_search { query }`, `todo_list`, `error { message }`, all with an `id`;
 * - `error { message }`, an unrecoverable error of the stream;
 * - `item.plan.delta` and `request_user_input`, known and ignored here.
 * Every other field is ignored, any other `type` is an unknown event (counted), and so is an item
 * of a type not listed (it counts as content, not as a call).
 *
 * The signals (see `AgentStream` for their turn events):
 * - `turn.started` starts a request; the turn's first item event is its first chunk;
 * - a call (a command, a file change, an MCP call, a web search) is requested when its item
 *   starts, or when it completes without having started (a file change is only reported done);
 *   its `item.completed` ends it: `completed` used, `failed` failed (a command that exits non-zero
 *   is failed, as its status says), `declined` rejected (later Codex versions report a call the
 *   sandbox or the approval policy refused so); a web search has no status and is used;
 * - `turn.completed` and `turn.failed` are the host's own end of its answer (`StreamCompleted`);
 *   the result is the turn's last agent message, or the failure's message. A stream without
 *   either has no result in its summary. A failed turn is the stream's outcome wherever it is:
 *   `codex exec` runs one turn, so a `turn.completed` after a `turn.failed` (a resumed or
 *   replayed stream, or a host that misbehaves) never turns it into a success, and the first
 *   failure's message stays the result (a later failure may only follow from it).
 * - A top-level `error` alone is not a failure: Codex prints one for a stream error it recovers
 *   from (`Reconnecting... 1/5`) as well as for a critical one, and a critical one ends its turn
 *   with `turn.failed` (codex-rs exec keeps it as the turn's last critical error). It is recorded
 *   among the errors; the turn's end decides.
 * Codex reports neither the model nor a cost in this stream: the summary has them null (the
 * runner knows the model it asked for). Usage is summed over the stream's turns.
 *
 * @since 0.4.0
 */
import * as AgentStream from "@ratchet/host/AgentStream"
import * as Either from "effect/Either"
import * as HashSet from "effect/HashSet"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const Count = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())

/**
 * An item of the thread, with the fields this module reads.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Item = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  text: optional(Schema.String),
  status: optional(Schema.String),
  message: optional(Schema.String),
  command: optional(Schema.String),
  tool: optional(Schema.String)
})

/**
 * Token usage of a turn.
 *
 * @since 0.4.0
 * @category schemas
 */
export const Usage = Schema.Struct({ input_tokens: Count, cached_input_tokens: Count, output_tokens: Count })

/**
 * The events this module knows.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ThreadEvent = Schema.Union(
  Schema.Struct({ type: Schema.Literal("thread.started"), thread_id: Schema.String }),
  Schema.Struct({ type: Schema.Literal("turn.started") }),
  Schema.Struct({ type: Schema.Literal("turn.completed"), usage: Usage }),
  Schema.Struct({ type: Schema.Literal("turn.failed"), error: Schema.Struct({ message: Schema.String }) }),
  Schema.Struct({ type: Schema.Literal("item.started", "item.updated", "item.completed"), item: Item }),
  Schema.Struct({ type: Schema.Literal("error"), message: Schema.String }),
  Schema.Struct({ type: Schema.Literal("item.plan.delta", "request_user_input") })
)

/**
 * @since 0.4.0
 * @category models
 */
export type ThreadEvent = typeof ThreadEvent.Type

const known: ReadonlyArray<string> = [
  "thread.started",
  "turn.started",
  "turn.completed",
  "turn.failed",
  "item.started",
  "item.updated",
  "item.completed",
  "error",
  "item.plan.delta",
  "request_user_input"
]

const decodeEvent = Schema.decodeUnknownEither(ThreadEvent)

/** The item types that are calls of a tool, as opposed to content. */
const calls: ReadonlySet<string> = new Set(["command_execution", "file_change", "mcp_tool_call", "web_search"])

/**
 * The decoder's state between lines.
 *
 * @since 0.4.0
 * @category models
 */
export interface State {
  readonly line: number
  readonly tally: AgentStream.Tally
  readonly sessionId: string | null
  readonly usage: AgentStream.Usage | null
  readonly result: AgentStream.Result | null
  readonly turns: number
  readonly awaitingFirstChunk: boolean
  readonly lastMessage: string | null
  /** Calls whose start was reported, so that their end does not request them again (persistent: a stream may hold many). */
  readonly startedCalls: HashSet.HashSet<string>
}

/**
 * Before the first line.
 *
 * @since 0.4.0
 * @category constructors
 */
export const initial: State = {
  line: 0,
  tally: AgentStream.emptyTally,
  sessionId: null,
  usage: null,
  result: null,
  turns: 0,
  awaitingFirstChunk: false,
  lastMessage: null,
  startedCalls: HashSet.empty()
}

const reasonOf = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  // A union reports one issue per member; the one deepest in the line says most.
  const deepest = [...issues].sort((a, b) => b.path.length - a.path.length)[0]
  return deepest === undefined ? "does not match its documented shape" : `${deepest.path.map(String).join(".") || "the line"}: ${deepest.message}`
}

const itemEvent = (state: State, type: "item.started" | "item.updated" | "item.completed", item: typeof Item.Type, signals: Array<AgentStream.Signal>): State => {
  let next = state
  if (next.awaitingFirstChunk) {
    signals.push({ _tag: "FirstChunk" })
    next = { ...next, awaitingFirstChunk: false }
  }
  const callId = AgentStream.word(item.id)
  if (calls.has(item.type)) {
    const seen = HashSet.has(next.startedCalls, item.id)
    if (!seen && (type === "item.started" || type === "item.completed")) {
      signals.push({ _tag: "ToolRequested", tool: AgentStream.word(item.tool ?? item.type) ?? item.type, callId })
      next = { ...next, tally: AgentStream.count(next.tally, "toolRequests"), startedCalls: HashSet.add(next.startedCalls, item.id) }
    }
    if (type === "item.completed") {
      const status = item.status ?? "completed"
      const signal = status === "failed" ? "ToolFailed" : status === "declined" ? "ToolRejected" : "ToolCompleted"
      signals.push({ _tag: signal, callId })
      const key = signal === "ToolFailed" ? "toolFailed" : signal === "ToolRejected" ? "toolRejected" : "toolCompleted"
      next = { ...next, tally: AgentStream.count(next.tally, key), startedCalls: HashSet.remove(next.startedCalls, item.id) }
    }
    return next
  }
  if (type === "item.completed" && item.type === "agent_message" && item.text !== undefined) {
    return { ...next, lastMessage: AgentStream.clip(item.text) }
  }
  if (type === "item.completed" && item.type === "error" && item.message !== undefined) {
    signals.push({ _tag: "HostError", message: AgentStream.clip(item.message, 500) })
    return { ...next, tally: AgentStream.error(next.tally, item.message) }
  }
  return next
}

/** The result of a turn of the stream that failed already (the outcome, whatever follows), or null. */
const failure = (state: State): AgentStream.Result | null => (state.result !== null && !state.result.ok ? state.result : null)

const apply = (state: State, event: ThreadEvent, signals: Array<AgentStream.Signal>): State => {
  switch (event.type) {
    case "thread.started":
      return { ...state, sessionId: state.sessionId ?? AgentStream.word(event.thread_id) }
    case "turn.started":
      signals.push({ _tag: "RequestStarted" })
      return { ...state, tally: AgentStream.count(state.tally, "requests"), awaitingFirstChunk: true, lastMessage: null }
    case "item.started":
    case "item.updated":
    case "item.completed":
      return itemEvent(state, event.type, event.item, signals)
    case "turn.completed": {
      signals.push({ _tag: "StreamCompleted" })
      const before = state.usage
      const turns = state.turns + 1
      const failed = failure(state)
      return {
        ...state,
        turns,
        awaitingFirstChunk: false,
        usage: {
          inputTokens: (before?.inputTokens ?? 0) + event.usage.input_tokens,
          outputTokens: (before?.outputTokens ?? 0) + event.usage.output_tokens,
          cachedInputTokens: (before?.cachedInputTokens ?? 0) + event.usage.cached_input_tokens,
          cacheCreationInputTokens: null
        },
        // A turn that failed before stays the outcome (see the module comment).
        result: failed !== null ? { ...failed, turns } : { ok: true, subtype: "turn.completed", text: state.lastMessage, turns }
      }
    }
    case "turn.failed": {
      signals.push({ _tag: "HostError", message: AgentStream.clip(event.error.message, 500) }, { _tag: "StreamCompleted" })
      const turns = state.turns + 1
      const failed = failure(state)
      return {
        ...state,
        turns,
        awaitingFirstChunk: false,
        tally: AgentStream.error(state.tally, event.error.message),
        // The first failure is the cause; a later one may only follow from it.
        result: failed !== null ? { ...failed, turns } : { ok: false, subtype: "turn.failed", text: AgentStream.clip(event.error.message), turns }
      }
    }
    case "error":
      signals.push({ _tag: "HostError", message: AgentStream.clip(event.message, 500) })
      return { ...state, tally: AgentStream.error(state.tally, event.message) }
    case "item.plan.delta":
    case "request_user_input":
      return state
  }
}

/**
 * Reads one line of the stream (without its newline). Never fails: see the module's comment.
 *
 * @since 0.4.0
 * @category constructors
 */
export const step = (state: State, line: string): { readonly state: State; readonly signals: ReadonlyArray<AgentStream.Signal> } =>
  AgentStream.stepWith(state, line, {
    noun: "event",
    decode: (type, value) => {
      if (type === null || !known.includes(type)) return undefined
      const decoded = decodeEvent(value)
      return Either.isLeft(decoded) ? { reason: reasonOf(decoded.left) } : { event: decoded.right }
    },
    apply
  })

/**
 * The summary of everything read so far; when the stream has ended, of the whole stream.
 *
 * @since 0.4.0
 * @category constructors
 */
export const summary = (state: State): AgentStream.Summary =>
  // Codex's stream names neither the model nor a cost.
  AgentStream.summaryOf("codex", { ...state, model: null, costUsd: null })

/**
 * Reads a whole stream: its signals in order, and its summary.
 *
 * @since 0.4.0
 * @category constructors
 */
export const decode = (text: string): { readonly signals: ReadonlyArray<AgentStream.Signal>; readonly summary: AgentStream.Summary } =>
  AgentStream.decodeWith(text, { initial, step, summarise: summary })
