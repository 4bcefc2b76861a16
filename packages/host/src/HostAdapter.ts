/**
 * The contract a host adapter fulfils: decode the host's raw payload into a {@link HostEvent},
 * and turn the guard's decision about it back into the host's protocol (what to print, which exit
 * code). The adapter knows its host; the guard and the controller never do.
 *
 * Failing closed and failing open are the adapter's to express, because only it knows what its
 * host does with an exit code: when the payload cannot be read or Ratchet cannot decide, a tool
 * call must be blocked (closed), while any other event must go on with a one-line warning (open).
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Guard from "./Guard.js"
import type * as HostEvent from "./HostEvent.js"

/**
 * A payload the adapter cannot read: which field, why, and what would fix it.
 *
 * @since 0.1.0
 * @category errors
 */
export class HostDecodeError extends Schema.TaggedError<HostDecodeError>()("@ratchet/host/HostDecodeError", {
  host: Schema.String,
  field: Schema.String,
  reason: Schema.String,
  /** The event the payload names, when that much could be read (to fail closed on tool calls). */
  event: Schema.NullOr(Schema.String)
}) {
  override get message(): string {
    return `${this.host} hook payload: ${this.field}: ${this.reason}`
  }
}

/**
 * What the hook process answers: its standard output, standard error and exit code.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reply {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
}

/**
 * A host adapter.
 *
 * @since 0.1.0
 * @category models
 */
export interface HostAdapter {
  /** The host's name as users type it (`ratchet hook <name>`). */
  readonly name: string
  /** Whether the host honours "ask" (show the user a prompt); when not, the adapter denies instead. */
  readonly canAsk: boolean
  /**
   * The environment variable in which the host tells its hooks the project root where the session
   * started (Claude Code's `CLAUDE_PROJECT_DIR`), when it has one. Without it the hook's own working
   * directory, which the host chose, is where the project is looked for (see `ProjectRoot`); the
   * payload's `cwd` never is.
   */
  readonly projectVariable?: string
  /** The raw payload (the hook's standard input) as a typed event. */
  readonly decode: (raw: string) => Effect.Effect<HostEvent.HostEvent, HostDecodeError>
  /**
   * The answer to an event the guard judged (an Allow for events it does not judge). `context`, when
   * given, is advisory text for the agent's context (the lessons for its task, ADR 0038), given at
   * a session's start and at a prompt: the adapter puts it where its host adds text to the agent's
   * context for that event (Claude Code's and Codex's `hookSpecificOutput.additionalContext`), and
   * leaves it out where the host has no such place.
   */
  readonly reply: (event: HostEvent.HostEvent, decision: Guard.Decision, context?: string | null) => Reply
  /**
   * The answer when Ratchet could not judge: `event` is the host's event name when known.
   * Closed (blocking) for tool calls, open (a warning) for everything else.
   */
  readonly failure: (event: string | null, problem: string) => Reply
  /**
   * For an adapter whose hooks are not installed on the end of every call (ADR 0030): whether the
   * host's own record of the session (`StopRequested.transcript`) shows that a call of the main
   * agent's current turn ran and ended without an error, which no hook then reported. Asked at
   * the main agent's stop, and only when the worker's turn has no `toolUsed` yet. Never fails: a
   * record that cannot be read, or is not as expected, tells nothing (false), since a turn record
   * never changes an answer. An adapter whose hooks see every call's end leaves it out.
   */
  readonly callEndedInTurn?: (transcript: string) => Effect.Effect<boolean>
}

/**
 * The largest payload an adapter reads; larger input is a failure (closed for tool calls).
 * A Write of a large file legitimately carries the whole file, so this is generous.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxPayloadBytes = 16 * 1024 * 1024
