/**
 * The intent machine: the write-ahead record of one external side effect of an attempt.
 *
 * | from         | cause                 | to                    |
 * |--------------|-----------------------|-----------------------|
 * | `Pending`    | `Dispatch`            | `Dispatched`          |
 * | `Pending`    | `Abandon`             | `Abandoned`           |
 * | `Dispatched` | `Resolve { outcome }` | `Resolved(outcome)`   |
 *
 * Everything else is rejected with a typed `IllegalTransition`; `Resolved` and `Abandoned` are
 * terminal. `Dispatched` is written durably *before* the effect starts and `Resolved` after it
 * ends, so an intent left `Dispatched` is the one fact that tells "we don't know what happened"
 * from "nothing happened". That is why a dispatched intent can never be abandoned: the effect may
 * already be running. `attemptCancelCause` turns that fact into the attempt's `Cancel` cause.
 *
 * The switches have no default arm so that adding a state or a cause fails to compile here.
 * Pure: no I/O, no clock, never throws for a well-typed input.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { absurd } from "effect/Function"
import * as Schema from "effect/Schema"
import * as Attempt from "./Attempt.js"

/**
 * How a dispatched effect ended: it completed, with (`Failed`) or without (`Succeeded`) an error.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Outcome = Schema.Literal("Succeeded", "Failed")

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = typeof Outcome.Type

/**
 * Recorded, not started.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Pending = Schema.TaggedStruct("Pending", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Pending extends Schema.Schema.Type<typeof Pending> {}

/**
 * Durably recorded as about to start; the effect may have happened, partly or fully.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Dispatched = Schema.TaggedStruct("Dispatched", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Dispatched extends Schema.Schema.Type<typeof Dispatched> {}

/**
 * The effect ended and its outcome is known.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Resolved = Schema.TaggedStruct("Resolved", { outcome: Outcome })

/**
 * @since 0.1.0
 * @category models
 */
export interface Resolved extends Schema.Schema.Type<typeof Resolved> {}

/**
 * Dropped before dispatch; the effect never started.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Abandoned = Schema.TaggedStruct("Abandoned", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Abandoned extends Schema.Schema.Type<typeof Abandoned> {}

/**
 * The state of one intent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const State = Schema.Union(Pending, Dispatched, Resolved, Abandoned)

/**
 * @since 0.1.0
 * @category models
 */
export type State = Pending | Dispatched | Resolved | Abandoned

/**
 * Every intent state name, in lifecycle order.
 *
 * @since 0.1.0
 * @category models
 */
export const stateNames = ["Pending", "Dispatched", "Resolved", "Abandoned"] as const

/**
 * The name (`_tag`) of an intent state.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StateName = Schema.Literal(...stateNames)

/**
 * @since 0.1.0
 * @category models
 */
export type StateName = typeof StateName.Type

/**
 * @since 0.1.0
 * @category constructors
 */
export const pending: Pending = Object.freeze({ _tag: "Pending" })

/**
 * @since 0.1.0
 * @category constructors
 */
export const dispatched: Dispatched = Object.freeze({ _tag: "Dispatched" })

/**
 * @since 0.1.0
 * @category constructors
 */
export const resolved = (outcome: Outcome): Resolved => Object.freeze({ _tag: "Resolved", outcome })

/**
 * @since 0.1.0
 * @category constructors
 */
export const abandoned: Abandoned = Object.freeze({ _tag: "Abandoned" })

/**
 * The effect is about to start; written durably before it does.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Dispatch = Schema.TaggedStruct("Dispatch", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Dispatch extends Schema.Schema.Type<typeof Dispatch> {}

/**
 * The effect ended with the given outcome.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Resolve = Schema.TaggedStruct("Resolve", { outcome: Outcome })

/**
 * @since 0.1.0
 * @category models
 */
export interface Resolve extends Schema.Schema.Type<typeof Resolve> {}

/**
 * The effect will not be started.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Abandon = Schema.TaggedStruct("Abandon", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Abandon extends Schema.Schema.Type<typeof Abandon> {}

/**
 * Why an intent changes state. Plain objects such as `{ _tag: "Resolve", outcome: "Failed" }` are
 * causes; decode untrusted input with this schema first.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Cause = Schema.Union(Dispatch, Resolve, Abandon)

/**
 * @since 0.1.0
 * @category models
 */
export type Cause = Dispatch | Resolve | Abandon

/**
 * @since 0.1.0
 * @category constructors
 */
export const dispatch: Dispatch = Object.freeze({ _tag: "Dispatch" })

/**
 * @since 0.1.0
 * @category constructors
 */
export const resolve = (outcome: Outcome): Resolve => Object.freeze({ _tag: "Resolve", outcome })

/**
 * @since 0.1.0
 * @category constructors
 */
export const abandon: Abandon = Object.freeze({ _tag: "Abandon" })

/**
 * Whether the intent may still change: `Pending` or `Dispatched`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isOpen = (state: State): boolean => {
  switch (state._tag) {
    case "Pending":
    case "Dispatched":
      return true
    case "Resolved":
    case "Abandoned":
      return false
  }
  return absurd(state)
}

/**
 * Whether nothing can move the intent any more: `Resolved` or `Abandoned`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTerminal = (state: State): boolean => !isOpen(state)

/**
 * Why a transition was rejected: the intent is already terminal, or the cause does not apply to
 * an open intent in that state.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RejectionReason = Schema.Literal("terminal_state", "forbidden_transition")

/**
 * @since 0.1.0
 * @category models
 */
export type RejectionReason = typeof RejectionReason.Type

const describeState = (state: State): string =>
  state._tag === "Resolved" ? `Resolved(${state.outcome})` : state._tag

const describeCause = (cause: Cause): string =>
  cause._tag === "Resolve" ? `Resolve { outcome: ${cause.outcome} }` : cause._tag

const guidance = (from: State, cause: Cause, reason: RejectionReason): string => {
  if (reason === "terminal_state") {
    return `${from._tag} is terminal and a terminal intent never changes; record a new intent for a new effect`
  }
  if (cause._tag === "Abandon") {
    return "the effect may have started once the intent was dispatched; resolve it with its outcome, or let recovery mark the attempt Indeterminate"
  }
  if (cause._tag === "Dispatch") {
    return "the intent was already dispatched and dispatch is written once, before the effect starts; resolve it when the effect ends"
  }
  return "a pending intent was never dispatched, so its effect cannot have an outcome; dispatch it before starting the effect"
}

/**
 * The cause does not apply to the intent's state. Carries the state, the cause and the reason code.
 *
 * @since 0.1.0
 * @category errors
 */
export class IllegalTransition extends Schema.TaggedError<IllegalTransition>()(
  "@ratchet/kernel/IllegalIntentTransition",
  { from: State, cause: Cause, reason: RejectionReason }
) {
  override get message(): string {
    return `Intent in state ${describeState(this.from)} cannot take ${describeCause(this.cause)} (${this.reason}): ${
      guidance(this.from, this.cause, this.reason)
    }`
  }
}

const reject = (from: State, cause: Cause, reason: RejectionReason): Either.Either<State, IllegalTransition> =>
  Either.left(new IllegalTransition({ from, cause, reason }))

/**
 * Applies one cause to an intent state, exactly per the table in this module's header.
 *
 * @since 0.1.0
 * @category transitions
 */
export const transition = (from: State, cause: Cause): Either.Either<State, IllegalTransition> => {
  switch (from._tag) {
    case "Pending":
      switch (cause._tag) {
        case "Dispatch":
          return Either.right(dispatched)
        case "Abandon":
          return Either.right(abandoned)
        case "Resolve":
          return reject(from, cause, "forbidden_transition")
      }
      return absurd(cause)
    case "Dispatched":
      switch (cause._tag) {
        case "Resolve":
          return Either.right(resolved(cause.outcome))
        case "Dispatch":
        case "Abandon":
          return reject(from, cause, "forbidden_transition")
      }
      return absurd(cause)
    case "Resolved":
    case "Abandoned":
      return reject(from, cause, "terminal_state")
  }
  return absurd(from)
}

/**
 * The attempt `Cancel` cause these intents justify. An intent still `Dispatched` means an external
 * effect may have happened and nobody knows its result, so the attempt must land in
 * `Indeterminate`; with none, nothing external is outstanding and the attempt is cleanly
 * `Cancelled`. Pending, resolved and abandoned intents do not count.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attemptCancelCause = (intents: ReadonlyArray<State>): Attempt.Cancel =>
  Attempt.cancel(intents.some((intent) => intent._tag === "Dispatched"))
