/**
 * The turn region of a streaming agent attempt: five flags that live for one request iteration.
 *
 * | event                    | effect                                                           |
 * |--------------------------|------------------------------------------------------------------|
 * | `turnStarted`            | clears `toolRejected`, `toolUsed`, `toolFailed`, `streamReadComplete`; keeps `waitingForFirstChunk` |
 * | `firstChunkAwaitStarted` | `waitingForFirstChunk = true`                                    |
 * | `firstChunkAwaitEnded`   | `waitingForFirstChunk = false`                                   |
 * | `toolRejected`           | `toolRejected = true`                                            |
 * | `toolUsed`               | `toolUsed = true`                                                |
 * | `toolFailed`             | `toolFailed = true`                                              |
 * | `streamReadCompleted`    | `streamReadComplete = true`                                      |
 *
 * `turnStarted` keeps `waitingForFirstChunk` deliberately: the per-request reset it models never
 * cleared that flag, so a chunk loop that breaks on its first chunk leaves it set, and graceful
 * abort timing depends on that. Turn events have no guard and `next` never rejects: the loop and
 * the tools write these flags in every phase, after an abort and after the stream has ended. The
 * turn holds no phase; the host tracks phases elsewhere, and no other event changes the turn.
 *
 * Values are immutable: `next` returns a new frozen state and never touches its input.
 * The switch has no default arm so that adding an event fails to compile here.
 *
 * @since 0.1.0
 */
import { absurd } from "effect/Function"
import * as Schema from "effect/Schema"

/**
 * The five turn flags.
 *
 * @since 0.1.0
 * @category schemas
 */
export const State = Schema.Struct({
  waitingForFirstChunk: Schema.Boolean,
  toolRejected: Schema.Boolean,
  toolUsed: Schema.Boolean,
  toolFailed: Schema.Boolean,
  streamReadComplete: Schema.Boolean
})

/**
 * @since 0.1.0
 * @category models
 */
export interface State extends Schema.Schema.Type<typeof State> {}

/**
 * The turn before any event: every flag false.
 *
 * @since 0.1.0
 * @category constructors
 */
export const initial: State = Object.freeze({
  waitingForFirstChunk: false,
  toolRejected: false,
  toolUsed: false,
  toolFailed: false,
  streamReadComplete: false
})

/**
 * Every turn event tag.
 *
 * @since 0.1.0
 * @category models
 */
export const eventTags = [
  "turnStarted",
  "firstChunkAwaitStarted",
  "firstChunkAwaitEnded",
  "toolRejected",
  "toolUsed",
  "toolFailed",
  "streamReadCompleted"
] as const

/**
 * A new request iteration begins.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnStarted = Schema.TaggedStruct("turnStarted", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface TurnStarted extends Schema.Schema.Type<typeof TurnStarted> {}

/**
 * The loop starts waiting for the first chunk of the response stream.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FirstChunkAwaitStarted = Schema.TaggedStruct("firstChunkAwaitStarted", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface FirstChunkAwaitStarted extends Schema.Schema.Type<typeof FirstChunkAwaitStarted> {}

/**
 * The loop stops waiting for the first chunk.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FirstChunkAwaitEnded = Schema.TaggedStruct("firstChunkAwaitEnded", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface FirstChunkAwaitEnded extends Schema.Schema.Type<typeof FirstChunkAwaitEnded> {}

/**
 * A tool call was rejected in this turn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolRejected = Schema.TaggedStruct("toolRejected", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolRejected extends Schema.Schema.Type<typeof ToolRejected> {}

/**
 * A tool was used in this turn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolUsed = Schema.TaggedStruct("toolUsed", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolUsed extends Schema.Schema.Type<typeof ToolUsed> {}

/**
 * A tool failed in this turn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolFailed = Schema.TaggedStruct("toolFailed", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolFailed extends Schema.Schema.Type<typeof ToolFailed> {}

/**
 * The response stream was read to its end.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamReadCompleted = Schema.TaggedStruct("streamReadCompleted", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface StreamReadCompleted extends Schema.Schema.Type<typeof StreamReadCompleted> {}

/**
 * A turn event. Plain objects such as `{ _tag: "toolUsed" }` are events; decode untrusted input
 * with this schema first.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Event = Schema.Union(
  TurnStarted,
  FirstChunkAwaitStarted,
  FirstChunkAwaitEnded,
  ToolRejected,
  ToolUsed,
  ToolFailed,
  StreamReadCompleted
)

/**
 * @since 0.1.0
 * @category models
 */
export type Event =
  | TurnStarted
  | FirstChunkAwaitStarted
  | FirstChunkAwaitEnded
  | ToolRejected
  | ToolUsed
  | ToolFailed
  | StreamReadCompleted

/**
 * Applies one event. Total: every event is accepted in every state.
 *
 * @since 0.1.0
 * @category transitions
 */
export const next = (state: State, event: Event): State => {
  switch (event._tag) {
    case "turnStarted":
      return Object.freeze({
        waitingForFirstChunk: state.waitingForFirstChunk,
        toolRejected: false,
        toolUsed: false,
        toolFailed: false,
        streamReadComplete: false
      })
    case "firstChunkAwaitStarted":
      return Object.freeze({ ...state, waitingForFirstChunk: true })
    case "firstChunkAwaitEnded":
      return Object.freeze({ ...state, waitingForFirstChunk: false })
    case "toolRejected":
      return Object.freeze({ ...state, toolRejected: true })
    case "toolUsed":
      return Object.freeze({ ...state, toolUsed: true })
    case "toolFailed":
      return Object.freeze({ ...state, toolFailed: true })
    case "streamReadCompleted":
      return Object.freeze({ ...state, streamReadComplete: true })
  }
  return absurd(event)
}

/**
 * Applies events in order, starting from `from` (the initial turn by default).
 *
 * @since 0.1.0
 * @category transitions
 */
export const fold = (events: Iterable<Event>, from: State = initial): State => {
  let state = from
  for (const event of events) {
    state = next(state, event)
  }
  return state
}

const same = (a: State, b: State): boolean =>
  a.waitingForFirstChunk === b.waitingForFirstChunk &&
  a.toolRejected === b.toolRejected &&
  a.toolUsed === b.toolUsed &&
  a.toolFailed === b.toolFailed &&
  a.streamReadComplete === b.streamReadComplete

/**
 * The events of `events` that change the turn when applied in order from `from`; an event that
 * leaves every flag as it was is left out. Folding the result from `from` ends where folding all of
 * `events` does, so a log that keeps only these loses nothing of the turn.
 *
 * @since 0.1.0
 * @category transitions
 */
export const changes = (from: State, events: Iterable<Event>): ReadonlyArray<Event> => {
  const kept: Array<Event> = []
  let state = from
  for (const event of events) {
    const after = next(state, event)
    if (same(after, state)) continue
    kept.push(event)
    state = after
  }
  return kept
}
