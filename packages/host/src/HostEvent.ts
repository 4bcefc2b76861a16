/**
 * What a host tells Ratchet, in Ratchet's words: the typed events every adapter decodes its host's
 * payloads into. The kernel never learns a host's name; the controller sees these events only.
 *
 * A tool call carries what it would do ({@link ToolAction}): read, write named paths, run a shell
 * command, or something else. Adapters classify their host's tools into these; the guard judges
 * the action, never the host's tool name.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The host session an event belongs to.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Session = Schema.Struct({
  /** The adapter's name (`claude-code`, `codex`, …): part of the lease owner's session reference. */
  host: Schema.String,
  sessionId: Schema.String,
  /** The working directory the host reports; the workspace is found from it. */
  cwd: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Session extends Schema.Schema.Type<typeof Session> {}

/**
 * What a tool call would do.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolAction = Schema.Union(
  Schema.TaggedStruct("Read", { paths: Schema.Array(Schema.String) }),
  Schema.TaggedStruct("Write", { paths: Schema.Array(Schema.String) }),
  Schema.TaggedStruct("Shell", { command: Schema.String }),
  Schema.TaggedStruct("Other", {})
)

/**
 * @since 0.1.0
 * @category models
 */
export type ToolAction = typeof ToolAction.Type

/**
 * One tool call: the host's id for it (when the host gives one), the host's tool name (for
 * messages) and what it would do.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: Schema.NullOr(Schema.String),
  tool: Schema.String,
  action: ToolAction
})

/**
 * @since 0.1.0
 * @category models
 */
export interface ToolCall extends Schema.Schema.Type<typeof ToolCall> {}

/**
 * The events.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HostEvent = Schema.Union(
  Schema.TaggedStruct("SessionStarted", { session: Session, source: Schema.String }),
  Schema.TaggedStruct("SessionEnded", { session: Session, reason: Schema.String }),
  Schema.TaggedStruct("PromptSubmitted", { session: Session, prompt: Schema.String }),
  /** A tool call the host asks permission for, before it runs (or asks the user to allow). */
  Schema.TaggedStruct("ToolCallRequested", { session: Session, call: ToolCall, permissionPrompt: Schema.Boolean }),
  Schema.TaggedStruct("ToolCallCompleted", { session: Session, call: ToolCall }),
  Schema.TaggedStruct("ToolCallFailed", { session: Session, call: ToolCall, error: Schema.String }),
  Schema.TaggedStruct("TurnStarted", { session: Session }),
  Schema.TaggedStruct("FirstChunk", { session: Session }),
  Schema.TaggedStruct("StreamReadCompleted", { session: Session }),
  /**
   * The agent wants to stop. `continuing` is the host saying this stop already follows a block
   * by a stop hook (Claude Code's `stop_hook_active`): a second block would loop. `transcript` is
   * where the host keeps its own record of the session (`transcript_path`), when it names one: an
   * adapter may read it for what its hooks were not installed to see (ADR 0030).
   */
  Schema.TaggedStruct("StopRequested", {
    session: Session,
    continuing: Schema.Boolean,
    subagent: Schema.Boolean,
    transcript: Schema.optionalWith(Schema.String, { exact: true })
  }),
  /** An event Ratchet does not act on (a notification, a compaction), passed through. */
  Schema.TaggedStruct("Passthrough", { session: Session, name: Schema.String })
)

/**
 * @since 0.1.0
 * @category models
 */
export type HostEvent = typeof HostEvent.Type
