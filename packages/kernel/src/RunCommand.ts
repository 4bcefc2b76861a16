/**
 * The run decider's commands (`Run.decide`): what a runner, a host session or recovery asks of a
 * run, and how recovery closes an open attempt. `Run` re-exports them; they live here so that the
 * decider's module is the decider.
 *
 * @since 0.5.0
 */
import type * as Attempt from "./Attempt.js"
import type * as Event from "./Event.js"
import type * as Intent from "./Intent.js"
import type * as Turn from "./Turn.js"

/**
 * What every run command carries.
 *
 * @since 0.5.0
 * @category models
 */
export interface Meta {
  readonly actor: Event.Actor
  readonly at: number
  readonly runId: string
}

/**
 * What a command exit carries into `CommandExited`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Exit {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly durationMs: number
  readonly timedOut: boolean
  readonly stdoutRef: string | null
  readonly stderrRef: string | null
  readonly outputTail: string
  readonly changedPaths: ReadonlyArray<string>
}

/**
 * Every command the run decides.
 *
 * @since 0.2.0
 * @category models
 */
export type Command =
  /**
   * A step's attempt starts: scheduled (unless verification scheduled it already, `scheduled`),
   * admitted, and, for a command, its side effect recorded and dispatched, all before it starts.
   */
  | Meta & {
    readonly _tag: "StartStep"
    readonly stepId: string
    readonly attempt: number
    readonly scheduled: boolean
    readonly effect: { readonly intentId: string; readonly description: string } | null
  }
  /**
   * The step's command ended: its exit, the intent's resolution (with the stored output as its
   * results), the attempt's end. A command stopped by a cancel ended with its effect possibly half
   * done: its attempt is Indeterminate, its intent resolved Failed.
   */
  | Meta & {
    readonly _tag: "FinishStep"
    readonly stepId: string
    readonly attempt: number
    readonly intentId: string
    readonly exit: Exit
    readonly outcome: "Succeeded" | "Failed" | "TimedOut" | "Cancelled"
    readonly resultRefs: ReadonlyArray<string>
  }
  /** A worker's side effect inside an open attempt (a host session's tool call): recorded and dispatched. */
  | Meta & { readonly _tag: "DispatchEffect"; readonly stepId: string; readonly attempt: number; readonly intentId: string; readonly description: string }
  /**
   * A worker's side effect the guard refused inside an open attempt (a runner's agent's tool call
   * outside the scope, or a person-only act): nothing was dispatched, so no intent is recorded; the
   * refusal is noted on the attempt with its reason (`AttemptNoted`), and the turn's `toolRejected`
   * flag is set when it was not already (ADR 0040).
   */
  | Meta & { readonly _tag: "RefuseEffect"; readonly stepId: string; readonly attempt: number; readonly description: string; readonly reason: string }
  /** A dispatched effect ended. */
  | Meta & { readonly _tag: "ResolveEffect"; readonly intentId: string; readonly outcome: Intent.Outcome; readonly resultRefs: ReadonlyArray<string> }
  /** An open attempt ends as the worker says (a manual step marked done: Succeeded). */
  | Meta & { readonly _tag: "EndAttempt"; readonly stepId: string; readonly attempt: number; readonly cause: Attempt.Succeed | Attempt.Fail | Attempt.TimeOut }
  /**
   * Every open attempt of the run closes (a cancel, a reopen, a timeout of the run): pending intents
   * abandoned; attempts Cancelled, or Indeterminate when one of their intents was dispatched.
   */
  | Meta & { readonly _tag: "CloseRun"; readonly reason: string }
  /** The worker's turn: only the events that change the attempt's flags are recorded. */
  | Meta & { readonly _tag: "RecordTurn"; readonly stepId: string; readonly attempt: number; readonly events: ReadonlyArray<Turn.Event> }
  /**
   * An attempt a dead runner left open is closed by the one that took its lease over, as the
   * recovery table decides (`Progress.recoveryOf`), with a note saying why.
   */
  | Meta & { readonly _tag: "RecoverAttempt"; readonly stepId: string; readonly attempt: number; readonly recovery: Recovery; readonly note: string }

/**
 * How recovery closes an open attempt.
 *
 * - `CancelClean`: nothing was dispatched, so nothing external happened: its pending intents are
 *   abandoned and the attempt Cancelled.
 * - `Resolved`: the dispatched intent's outcome is known (a probe said so, or the step is idempotent
 *   and is re-run, `Failed`): the intent is resolved and the attempt ends the same way.
 * - `Indeterminate`: the dispatched intent's outcome is unknown: the attempt is Indeterminate and
 *   the intent stays dispatched until a person settles it.
 *
 * @since 0.2.0
 * @category models
 */
export type Recovery =
  | { readonly _tag: "CancelClean"; readonly reason: string }
  | { readonly _tag: "Resolved"; readonly intentId: string; readonly outcome: Intent.Outcome }
  | { readonly _tag: "Indeterminate"; readonly intentId: string }
