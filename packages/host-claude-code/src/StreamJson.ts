/**
 * Claude Code's headless stream, `claude -p … --output-format stream-json --verbose` (with
 * `--include-partial-messages` when the first chunk should be seen), decoded line by line into the
 * shared words of `@ratchet/host/AgentStream`. Pure: the runner feeds it lines and reads signals
 * and a summary.
 *
 * The format is the Agent SDK's `SDKMessage` union, one JSON object per line. Its documented shape
 * (the Agent SDK TypeScript reference, code.claude.com/docs/en/agent-sdk/typescript, "Message
 * Types"; the Python SDK's `Message = UserMessage | AssistantMessage | SystemMessage |
 * ResultMessage | StreamEvent` is the same union), of which this module reads:
 * - `system`, subtype `init`: `session_id`, `model` (other subtypes, such as `compact_boundary`,
 *   are known and ignored);
 * - `assistant`: `message` (an Anthropic Messages API message: `id`, `model`, `content` blocks,
 *   among them `tool_use { id, name }`), `parent_tool_use_id` (non-null inside a subagent);
 * - `user`: `message.content`, a string or blocks, among them `tool_result { tool_use_id,
 *   is_error? }`;
 * - `stream_event` (only with partial messages on, `SDKPartialAssistantMessage`): `event`, a raw
 *   Messages API stream event (`message_start`, `content_block_start`, `content_block_delta`, …);
 * - `result` (`SDKResultMessage`): `subtype` (`success`, `error_max_turns`,
 *   `error_during_execution`, …), `is_error`, `num_turns`, `result` (success only),
 *   `total_cost_usd`, `usage { input_tokens, output_tokens, cache_creation_input_tokens,
 *   cache_read_input_tokens }`, `permission_denials [{ tool_name, tool_use_id }]`, `errors`.
 * Every other field is ignored, and any other `type` is an unknown event, counted.
 *
 * The signals (see `AgentStream` for their turn events):
 * - a request of the main agent starts with `stream_event` `message_start` when partial messages
 *   are on, and its first `content_block_start` or `content_block_delta` is the first chunk;
 *   without them, an `assistant` message with a new message id is a request whose first chunk has
 *   arrived with it (the host writes one `assistant` line per content block, under one id);
 * - a `tool_use` block is a requested call; a `tool_result` ends it, failed when `is_error`;
 * - a denial is only told apart from a failure at the end: each of the result's
 *   `permission_denials` is a rejection (its `tool_result` was already a failure);
 * - the `result` line is the end of the stream (`StreamCompleted`); a stream without one has no
 *   result in its summary.
 * A subagent's messages (`parent_tool_use_id` set) start no request of the main turn; its tool
 * calls and their ends are counted like the main agent's.
 *
 * @since 0.4.0
 */
import * as AgentStream from "@ratchet/host/AgentStream"
import * as ToolIntent from "@ratchet/host/ToolIntent"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const NullableString = Schema.NullOr(Schema.String)
const Count = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())

/**
 * `system` messages; `init` carries the session and the model.
 *
 * @since 0.4.0
 * @category schemas
 */
export const SystemMessage = Schema.Struct({
  type: Schema.Literal("system"),
  subtype: Schema.String,
  session_id: optional(Schema.String),
  model: optional(Schema.String)
})

const ContentBlock = Schema.Struct({
  type: Schema.String,
  id: optional(Schema.String),
  name: optional(Schema.String),
  tool_use_id: optional(Schema.String),
  is_error: optional(Schema.NullOr(Schema.Boolean)),
  input: optional(Schema.Unknown)
})

/** The tools that write a file (`ClaudeCode`'s writers): every call of one is a side effect. */
const fileWriters = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit"])

/**
 * Whether a `tool_use` is one the run's hooks record as an intent (ADR 0040), by the same rule
 * (`ToolIntent.isSideEffect`): a file writer always, a Bash command when the guard's reading says
 * it writes or cannot be read (a command the stream does not give is counted, failing closed).
 */
const sideEffectOf = (tool: string | undefined, input: unknown): boolean => {
  if (tool === undefined) return false
  if (fileWriters.has(tool)) return true
  if (tool !== "Bash") return false
  const command = typeof input === "object" && input !== null ? (input as Record<string, unknown>)["command"] : undefined
  return typeof command !== "string" || ToolIntent.isSideEffect({ id: null, tool, action: { _tag: "Shell", command } })
}

/**
 * `assistant` messages: one Messages API message (or one of its content blocks).
 *
 * @since 0.4.0
 * @category schemas
 */
export const AssistantMessage = Schema.Struct({
  type: Schema.Literal("assistant"),
  message: Schema.Struct({
    id: optional(Schema.String),
    model: optional(Schema.String),
    content: Schema.Array(ContentBlock)
  }),
  parent_tool_use_id: optional(NullableString),
  session_id: optional(Schema.String)
})

/**
 * `user` messages: the prompt, or the results of tool calls.
 *
 * @since 0.4.0
 * @category schemas
 */
export const UserMessage = Schema.Struct({
  type: Schema.Literal("user"),
  message: Schema.Struct({ content: Schema.Union(Schema.String, Schema.Array(ContentBlock)) }),
  parent_tool_use_id: optional(NullableString),
  session_id: optional(Schema.String)
})

/**
 * `stream_event` messages, present when partial messages are on.
 *
 * @since 0.4.0
 * @category schemas
 */
export const StreamEvent = Schema.Struct({
  type: Schema.Literal("stream_event"),
  event: Schema.Struct({ type: Schema.String }),
  parent_tool_use_id: optional(NullableString),
  session_id: optional(Schema.String)
})

/**
 * The final `result` message.
 *
 * @since 0.4.0
 * @category schemas
 */
export const ResultMessage = Schema.Struct({
  type: Schema.Literal("result"),
  subtype: Schema.String,
  is_error: Schema.Boolean,
  num_turns: optional(Count),
  result: optional(Schema.String),
  session_id: optional(Schema.String),
  total_cost_usd: optional(Count),
  usage: optional(Schema.Struct({
    input_tokens: Count,
    output_tokens: Count,
    cache_creation_input_tokens: optional(Schema.NullOr(Count)),
    cache_read_input_tokens: optional(Schema.NullOr(Count))
  })),
  permission_denials: optional(Schema.Array(Schema.Struct({ tool_name: Schema.String, tool_use_id: optional(Schema.String) }))),
  errors: optional(Schema.Array(Schema.String))
})

const known = ["system", "assistant", "user", "stream_event", "result"] as const
type Known = (typeof known)[number]

const decoders: Record<Known, (input: unknown) => Either.Either<Message, ParseResult.ParseError>> = {
  system: Schema.decodeUnknownEither(SystemMessage),
  assistant: Schema.decodeUnknownEither(AssistantMessage),
  user: Schema.decodeUnknownEither(UserMessage),
  stream_event: Schema.decodeUnknownEither(StreamEvent),
  result: Schema.decodeUnknownEither(ResultMessage)
}

/** A decoded message of a known type. */
type Message =
  | typeof SystemMessage.Type
  | typeof AssistantMessage.Type
  | typeof UserMessage.Type
  | typeof StreamEvent.Type
  | typeof ResultMessage.Type
const isKnown = (type: string | null): type is Known => (known as ReadonlyArray<string | null>).includes(type)

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
  readonly model: string | null
  readonly usage: AgentStream.Usage | null
  readonly costUsd: number | null
  readonly result: AgentStream.Result | null
  /** Whether partial messages are on: a `stream_event` has been seen. */
  readonly partials: boolean
  /** The id of the main agent's last message, to tell a new request from another block of the same one. */
  readonly lastMessageId: string | null
  readonly awaitingFirstChunk: boolean
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
  model: null,
  usage: null,
  costUsd: null,
  result: null,
  partials: false,
  lastMessageId: null,
  awaitingFirstChunk: false
}

const reasonOf = (error: ParseResult.ParseError): string => {
  const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  return first === undefined ? "does not match its documented shape" : `${first.path.map(String).join(".") || "the line"}: ${first.message}`
}

type Step = { readonly state: State; readonly signals: ReadonlyArray<AgentStream.Signal> }

const requestStarted = (state: State, signals: Array<AgentStream.Signal>, chunkArrived: boolean): State => {
  signals.push({ _tag: "RequestStarted" })
  if (chunkArrived) signals.push({ _tag: "FirstChunk" })
  return { ...state, tally: AgentStream.count(state.tally, "requests"), awaitingFirstChunk: !chunkArrived }
}

const toolCalls = (state: State, blocks: ReadonlyArray<typeof ContentBlock.Type>, signals: Array<AgentStream.Signal>): State => {
  let tally = state.tally
  for (const block of blocks) {
    if (block.type === "tool_use") {
      signals.push({ _tag: "ToolRequested", tool: AgentStream.word(block.name) ?? "(unnamed)", callId: AgentStream.word(block.id), sideEffect: sideEffectOf(block.name, block.input) })
      tally = AgentStream.count(tally, "toolRequests")
    } else if (block.type === "tool_result") {
      const failed = block.is_error === true
      signals.push({ _tag: failed ? "ToolFailed" : "ToolCompleted", callId: AgentStream.word(block.tool_use_id) })
      tally = AgentStream.count(tally, failed ? "toolFailed" : "toolCompleted")
    }
  }
  return { ...state, tally }
}

const apply = (state: State, message: Message, signals: Array<AgentStream.Signal>): State => {
  switch (message.type) {
    case "system":
      return message.subtype === "init"
        ? { ...state, sessionId: AgentStream.word(message.session_id) ?? state.sessionId, model: AgentStream.word(message.model) ?? state.model }
        : state
    case "stream_event": {
      const main = message.parent_tool_use_id === undefined || message.parent_tool_use_id === null
      const next = { ...state, partials: true }
      if (!main) return next
      if (message.event.type === "message_start") return requestStarted(next, signals, false)
      if (next.awaitingFirstChunk && (message.event.type === "content_block_start" || message.event.type === "content_block_delta")) {
        signals.push({ _tag: "FirstChunk" })
        return { ...next, awaitingFirstChunk: false }
      }
      return next
    }
    case "assistant": {
      const main = message.parent_tool_use_id === undefined || message.parent_tool_use_id === null
      let next: State = { ...state, model: state.model ?? AgentStream.word(message.message.model) }
      if (main && !next.partials) {
        const id = message.message.id ?? null
        if (id === null || id !== next.lastMessageId) next = requestStarted(next, signals, true)
        next = { ...next, lastMessageId: id }
      }
      return toolCalls(next, message.message.content, signals)
    }
    case "user":
      return typeof message.message.content === "string" ? state : toolCalls(state, message.message.content, signals)
    case "result": {
      if (state.result !== null) {
        return { ...state, tally: AgentStream.error(state.tally, `a second result line (subtype ${message.subtype}) after the first; the first is kept`) }
      }
      let tally = state.tally
      for (const denial of message.permission_denials ?? []) {
        signals.push({ _tag: "ToolRejected", callId: AgentStream.word(denial.tool_use_id) })
        tally = AgentStream.count(tally, "toolRejected")
      }
      for (const text of message.errors ?? []) tally = AgentStream.error(tally, text)
      signals.push({ _tag: "StreamCompleted" })
      const usage = message.usage
      return {
        ...state,
        tally,
        sessionId: state.sessionId ?? AgentStream.word(message.session_id),
        costUsd: message.total_cost_usd ?? null,
        usage: usage === undefined ? null : {
          inputTokens: usage.input_tokens,
          outputTokens: usage.output_tokens,
          cachedInputTokens: usage.cache_read_input_tokens ?? null,
          cacheCreationInputTokens: usage.cache_creation_input_tokens ?? null
        },
        result: {
          ok: !message.is_error && message.subtype === "success",
          subtype: AgentStream.clip(message.subtype, 80),
          text: message.result === undefined ? null : AgentStream.clip(message.result),
          turns: message.num_turns ?? null
        }
      }
    }
  }
}

/**
 * Reads one line of the stream (without its newline). Never fails: see the module's comment.
 *
 * @since 0.4.0
 * @category constructors
 */
export const step = (state: State, line: string): Step =>
  AgentStream.stepWith(state, line, {
    noun: "message",
    decode: (type, value) => {
      if (!isKnown(type)) return undefined
      const decoded = decoders[type](value)
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
export const summary = (state: State): AgentStream.Summary => AgentStream.summaryOf("claude-code", state)

/**
 * Reads a whole stream: its signals in order, and its summary.
 *
 * @since 0.4.0
 * @category constructors
 */
export const decode = (text: string): { readonly signals: ReadonlyArray<AgentStream.Signal>; readonly summary: AgentStream.Summary } =>
  AgentStream.decodeWith(text, { initial, step, summarise: summary })
