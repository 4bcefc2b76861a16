/**
 * The attempt machine: one try at one step of a plan.
 *
 * The state set is closed — hosts and plans never extend it — and `transition` accepts exactly
 * the normative table below and rejects everything else with a typed `IllegalTransition`:
 *
 * | from      | cause                                  | to              |
 * |-----------|----------------------------------------|-----------------|
 * | `Pending` | `Admit`                                | `Running`       |
 * | `Pending` | `Cancel { intentDispatched: false }`   | `Cancelled`     |
 * | `Pending` | `TimeOut` (queue deadline)             | `TimedOut`      |
 * | `Running` | `Succeed`                              | `Succeeded`     |
 * | `Running` | `Fail`                                 | `Failed`        |
 * | `Running` | `TimeOut` (step deadline)              | `TimedOut`      |
 * | `Running` | `Cancel { intentDispatched: false }`   | `Cancelled`     |
 * | `Running` | `Cancel { intentDispatched: true }`    | `Indeterminate` |
 *
 * Nothing leaves a terminal state. `Cancelled` and `Indeterminate` are kept apart on purpose:
 * cancelling is a decision, indeterminacy is an unknown, and operations alert on the
 * `Indeterminate` count. The split is therefore an explicit input of the `Cancel` cause (read from
 * the intent record, see `Intent.attemptCancelCause`), never guessed from where the cancel came from.
 *
 * The switches below have no default arm so that adding a state or a cause fails to compile here.
 * Pure: no I/O, no clock, never throws for a well-typed input.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { absurd } from "effect/Function"
import * as Schema from "effect/Schema"

/**
 * Every attempt state, in lifecycle order.
 *
 * @since 0.1.0
 * @category models
 */
export const states = [
  "Pending",
  "Running",
  "Succeeded",
  "Failed",
  "Indeterminate",
  "Cancelled",
  "TimedOut"
] as const

/**
 * The closed attempt state. `Indeterminate` means the attempt stopped while a dispatched side
 * effect had not resolved and nobody can say what happened; `Cancelled` means it stopped by
 * decision with nothing external outstanding.
 *
 * @since 0.1.0
 * @category schemas
 */
export const State = Schema.Literal(...states)

/**
 * @since 0.1.0
 * @category models
 */
export type State = typeof State.Type

/**
 * The states nothing leaves.
 *
 * @since 0.1.0
 * @category models
 */
export const terminalStates: ReadonlyArray<State> = [
  "Succeeded",
  "Failed",
  "Indeterminate",
  "Cancelled",
  "TimedOut"
]

/**
 * Whether no cause can move the attempt any more; a retry is a successor attempt, not a transition.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTerminal = (state: State): boolean => {
  switch (state) {
    case "Pending":
    case "Running":
      return false
    case "Succeeded":
    case "Failed":
    case "Indeterminate":
    case "Cancelled":
    case "TimedOut":
      return true
  }
  return absurd(state)
}

/**
 * The attempt was admitted and starts running.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Admit = Schema.TaggedStruct("Admit", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Admit extends Schema.Schema.Type<typeof Admit> {}

/**
 * The run was cancelled. `intentDispatched` is the deciding fact read from the intent record:
 * whether a side effect of this attempt was dispatched and has not resolved.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Cancel = Schema.TaggedStruct("Cancel", { intentDispatched: Schema.Boolean })

/**
 * @since 0.1.0
 * @category models
 */
export interface Cancel extends Schema.Schema.Type<typeof Cancel> {}

/**
 * A deadline passed: the queue deadline for a pending attempt, the step deadline for a running one.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TimeOut = Schema.TaggedStruct("TimeOut", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface TimeOut extends Schema.Schema.Type<typeof TimeOut> {}

/**
 * The attempt completed without error.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Succeed = Schema.TaggedStruct("Succeed", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Succeed extends Schema.Schema.Type<typeof Succeed> {}

/**
 * The attempt completed with an error.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Fail = Schema.TaggedStruct("Fail", {})

/**
 * @since 0.1.0
 * @category models
 */
export interface Fail extends Schema.Schema.Type<typeof Fail> {}

/**
 * Why an attempt changes state. Plain objects such as `{ _tag: "Cancel", intentDispatched: true }`
 * are causes; decode untrusted input with this schema first.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Cause = Schema.Union(Admit, Cancel, TimeOut, Succeed, Fail)

/**
 * @since 0.1.0
 * @category models
 */
export type Cause = Admit | Cancel | TimeOut | Succeed | Fail

/**
 * @since 0.1.0
 * @category constructors
 */
export const admit: Admit = Object.freeze({ _tag: "Admit" })

/**
 * Builds the cancel cause from the intent record's answer, never from the drop site.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cancel = (intentDispatched: boolean): Cancel => Object.freeze({ _tag: "Cancel", intentDispatched })

/**
 * @since 0.1.0
 * @category constructors
 */
export const timeOut: TimeOut = Object.freeze({ _tag: "TimeOut" })

/**
 * @since 0.1.0
 * @category constructors
 */
export const succeed: Succeed = Object.freeze({ _tag: "Succeed" })

/**
 * @since 0.1.0
 * @category constructors
 */
export const fail: Fail = Object.freeze({ _tag: "Fail" })

/**
 * Why a transition was rejected: the attempt is already terminal, or the cause does not apply to
 * a live attempt in that state.
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

const describeCause = (cause: Cause): string =>
  cause._tag === "Cancel" ? `Cancel { intentDispatched: ${cause.intentDispatched} }` : cause._tag

const guidance = (from: State, cause: Cause, reason: RejectionReason): string => {
  if (reason === "terminal_state") {
    return `${from} is terminal and a terminal attempt never changes; start a successor attempt instead`
  }
  if (cause._tag === "Admit") {
    return "the attempt was already admitted and admission happens once; let it succeed, fail, time out or be cancelled"
  }
  if (cause._tag === "Cancel") {
    return "a pending attempt has not started, so it cannot have dispatched an intent; check the intent record and cancel with intentDispatched false"
  }
  return `a ${from} attempt has not run, so it cannot complete; admit it first`
}

/**
 * The cause does not apply to the attempt's state. Carries the state, the cause (with its
 * `intentDispatched` flag when it is a `Cancel`) and the reason code.
 *
 * @since 0.1.0
 * @category errors
 */
export class IllegalTransition extends Schema.TaggedError<IllegalTransition>()(
  "@ratchet/kernel/IllegalAttemptTransition",
  { from: State, cause: Cause, reason: RejectionReason }
) {
  override get message(): string {
    return `Attempt in state ${this.from} cannot take ${describeCause(this.cause)} (${this.reason}): ${
      guidance(this.from, this.cause, this.reason)
    }`
  }
}

const reject = (from: State, cause: Cause, reason: RejectionReason): Either.Either<State, IllegalTransition> =>
  Either.left(new IllegalTransition({ from, cause, reason }))

/**
 * Applies one cause to an attempt state, exactly per the normative table in this module's header.
 *
 * @since 0.1.0
 * @category transitions
 */
export const transition = (from: State, cause: Cause): Either.Either<State, IllegalTransition> => {
  switch (from) {
    case "Pending":
      switch (cause._tag) {
        case "Admit":
          return Either.right("Running")
        case "Cancel":
          // A pending attempt has not started, so a dispatched intent here is a bookkeeping error.
          return cause.intentDispatched ? reject(from, cause, "forbidden_transition") : Either.right("Cancelled")
        case "TimeOut":
          return Either.right("TimedOut")
        case "Succeed":
        case "Fail":
          return reject(from, cause, "forbidden_transition")
      }
      return absurd(cause)
    case "Running":
      switch (cause._tag) {
        case "Succeed":
          return Either.right("Succeeded")
        case "Fail":
          return Either.right("Failed")
        case "TimeOut":
          return Either.right("TimedOut")
        case "Cancel":
          return Either.right(cause.intentDispatched ? "Indeterminate" : "Cancelled")
        case "Admit":
          return reject(from, cause, "forbidden_transition")
      }
      return absurd(cause)
    case "Succeeded":
    case "Failed":
    case "Indeterminate":
    case "Cancelled":
    case "TimedOut":
      return reject(from, cause, "terminal_state")
  }
  return absurd(from)
}
