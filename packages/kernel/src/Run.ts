/**
 * The run as a decider, beside the task's: the attempts of a run's steps, their intents and their
 * workers' turns, `evolve` folding the run-level events into them, and `decide` turning each run
 * command (start a step, resolve its effect, dispatch or resolve a worker's tool call, settle,
 * cancel, time out, record a turn, recover) into the events to append or a typed refusal. Every
 * transition goes through the `Attempt` and `Intent` machines; nothing here copies their rules.
 *
 * The state is what storage keeps as read models (a row per attempt and per intent, each with the
 * log position of its last change), so the store only persists what `evolve` produces and a cold
 * re-fold equals the stored rows. `evolve` is generic over extra fields a store keeps on each row
 * (its stream and branch): an update keeps them, a new row takes them from `base`.
 *
 * The boundaries a runner writes around a command (ADR 0011, merged by ADR 0020):
 * - **before the effect**, one append: the attempt scheduled (unless verification scheduled it),
 *   admitted (Pending → Running), its intent recorded and dispatched ({@link Command} `StartStep`);
 * - **after the effect**, one append: the command's exit, the intent resolved, the attempt's end
 *   (`FinishStep`), with the task's decision about a failure and the step boundary beside it.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Attempt from "./Attempt.js"
import type * as Event from "./Event.js"
import * as Intent from "./Intent.js"
import * as Turn from "./Turn.js"

// ---------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------

/**
 * One attempt of a step: its state, its worker's turn region, and the log position (LSN) of its
 * last transition (its schedule, or a change of state; a turn event is not a transition).
 *
 * @since 0.2.0
 * @category models
 */
export interface AttemptView {
  readonly runId: string
  readonly stepId: string
  readonly attempt: number
  readonly state: Attempt.State
  readonly turn: Turn.State
  readonly updatedLsn: number
}

/**
 * One intent: the write-ahead record of one side effect of an attempt.
 *
 * @since 0.2.0
 * @category models
 */
export interface IntentView {
  readonly intentId: string
  readonly runId: string
  readonly stepId: string
  readonly attempt: number
  readonly state: Intent.StateName
  readonly outcome: Intent.Outcome | null
  readonly updatedLsn: number
}

/**
 * A run's attempts (by {@link key}) and intents (by id), with whatever extra fields `B` a store
 * keeps on each row.
 *
 * @since 0.2.0
 * @category models
 */
export interface State<B extends object = object> {
  readonly attempts: ReadonlyMap<string, AttemptView & B>
  readonly intents: ReadonlyMap<string, IntentView & B>
}

/**
 * No attempt, no intent.
 *
 * @since 0.2.0
 * @category constructors
 */
export const initial: State = { attempts: new Map(), intents: new Map() }

/**
 * How the note of a refused tool call (`RefuseEffect`) starts, so that the refusals noted on an
 * attempt can be counted and bounded (ADR 0040's amendment).
 *
 * @since 0.4.0
 * @category constants
 */
export const refusalNotePrefix = "tool call refused: "

/**
 * The key of an attempt in {@link State.attempts}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const key = (runId: string, stepId: string, attempt: number): string => JSON.stringify([runId, stepId, attempt])

/**
 * What one event changes in a run: one attempt (by {@link key}) or one intent (by id), as the whole
 * new row, or nothing (`null`).
 *
 * @since 0.3.0
 * @category models
 */
export type Change<B extends object = object> =
  | { readonly _tag: "Attempt"; readonly key: string; readonly row: AttemptView & B }
  | { readonly _tag: "Intent"; readonly key: string; readonly row: IntentView & B }

/**
 * The row one event at log position `lsn` changes, read against `state`; {@link evolve} and
 * {@link fold} write it. Like `Task.evolve`, it trusts what it is given (events were decided before
 * they were stored): an event about an attempt or intent the state never saw changes nothing.
 * A new row takes the extra fields from `base`; a changed one keeps its own.
 *
 * @since 0.3.0
 * @category transitions
 */
export const change = <B extends object>(state: State<B>, event: Event.Event, lsn: number, base: B): Change<B> | null => {
  switch (event._tag) {
    case "AttemptScheduled":
      return {
        _tag: "Attempt",
        key: key(event.runId, event.stepId, event.attempt),
        row: {
          ...base,
          runId: event.runId,
          stepId: event.stepId,
          attempt: event.attempt,
          state: "Pending",
          turn: Turn.initial,
          updatedLsn: lsn
        }
      }
    case "AttemptTransitioned": {
      const k = key(event.runId, event.stepId, event.attempt)
      const known = state.attempts.get(k)
      return {
        _tag: "Attempt",
        key: k,
        row: {
          ...base,
          ...known,
          runId: event.runId,
          stepId: event.stepId,
          attempt: event.attempt,
          state: event.to,
          turn: known?.turn ?? Turn.initial,
          updatedLsn: lsn
        }
      }
    }
    case "TurnRecorded": {
      const k = key(event.runId, event.stepId, event.attempt)
      const known = state.attempts.get(k)
      // Only an attempt the run scheduled has a turn; the turn is not a transition.
      if (known === undefined) return null
      return { _tag: "Attempt", key: k, row: { ...known, turn: Turn.next(known.turn, event.turn) } }
    }
    case "IntentRecorded":
      return {
        _tag: "Intent",
        key: event.intentId,
        row: {
          ...base,
          intentId: event.intentId,
          runId: event.runId,
          stepId: event.stepId,
          attempt: event.attempt,
          state: "Pending",
          outcome: null,
          updatedLsn: lsn
        }
      }
    case "IntentDispatched":
    case "IntentResolved":
    case "IntentAbandoned": {
      const known = state.intents.get(event.intentId)
      if (known === undefined) return null
      const next: Intent.StateName = event._tag === "IntentDispatched" ? "Dispatched" : event._tag === "IntentResolved" ? "Resolved" : "Abandoned"
      return {
        _tag: "Intent",
        key: event.intentId,
        row: { ...known, state: next, outcome: event._tag === "IntentResolved" ? event.outcome : null, updatedLsn: lsn }
      }
    }
    default:
      return null
  }
}

/**
 * Folds one event at log position `lsn`: the state with {@link change}'s row written into a copy of
 * its map. Rows an event does not touch are returned as the same objects, so a store can tell which
 * rows to write by identity.
 *
 * @since 0.2.0
 * @category transitions
 */
export const evolve = <B extends object>(state: State<B>, event: Event.Event, lsn: number, base: B): State<B> => {
  const changed = change(state, event, lsn, base)
  if (changed === null) return state
  return changed._tag === "Attempt"
    ? { ...state, attempts: new Map(state.attempts).set(changed.key, changed.row) }
    : { ...state, intents: new Map(state.intents).set(changed.key, changed.row) }
}

/**
 * The cold fold of a run from `events`, each at its position: the same state as {@link evolve}
 * event by event, written into two maps of its own instead of a copy of a map per event.
 *
 * @since 0.2.0
 * @category transitions
 */
export const fold = (events: Iterable<{ readonly event: Event.Event; readonly lsn: number }>): State => {
  const attempts = new Map<string, AttemptView>()
  const intents = new Map<string, IntentView>()
  const state: State = { attempts, intents }
  for (const { event, lsn } of events) {
    const changed = change(state, event, lsn, {})
    if (changed === null) continue
    if (changed._tag === "Attempt") attempts.set(changed.key, changed.row)
    else intents.set(changed.key, changed.row)
  }
  return state
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export type {
  /** @since 0.2.0 */
  Command,
  /** @since 0.2.0 */
  Exit,
  /** @since 0.2.0 */
  Recovery
} from "./RunCommand.js"
import type { Command, Meta } from "./RunCommand.js"

/**
 * Why the run refuses a command: no such attempt or intent, or a transition its machine forbids.
 *
 * @since 0.2.0
 * @category errors
 */
export class Refused extends Schema.TaggedError<Refused>()("@ratchet/kernel/RunCommandRefused", {
  command: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.command} refused: ${this.reason}`
  }
}

/**
 * @since 0.2.0
 * @category models
 */
export type Decision = Either.Either<ReadonlyArray<Event.Event>, Refused>

const meta = (command: Meta) => ({ actor: command.actor, at: command.at, version: 1 as const })

const refuse = (command: Command, reason: string): Decision => Either.left(new Refused({ command: command._tag, reason }))

/** `TurnRecorded` for each of `events` that changes `attempt`'s turn (the kernel keeps only those). */
const turnsRecorded = (
  command: Meta & { readonly runId: string; readonly stepId: string; readonly attempt: number },
  attempt: { readonly turn: Turn.State },
  events: Iterable<Turn.Event>
): ReadonlyArray<Event.Event> =>
  Turn.changes(attempt.turn, events).map((turn): Event.Event => ({
    _tag: "TurnRecorded",
    ...meta(command),
    runId: command.runId,
    stepId: command.stepId,
    attempt: command.attempt,
    turn
  }))

/** An attempt's transition by `cause`, through the attempt machine. */
const transitioned = (
  command: Meta & { readonly _tag: string },
  attempt: { readonly stepId: string; readonly attempt: number; readonly state: Attempt.State },
  cause: Attempt.Cause
): Either.Either<Event.Event, Refused> =>
  Either.mapBoth(Attempt.transition(attempt.state, cause), {
    onLeft: (error) => new Refused({ command: command._tag, reason: error.message }),
    onRight: (to): Event.Event => ({
      _tag: "AttemptTransitioned",
      ...meta(command),
      runId: command.runId,
      stepId: attempt.stepId,
      attempt: attempt.attempt,
      from: attempt.state,
      to
    })
  })

/** An intent's change by `cause`, through the intent machine. */
const intentChanged = (command: Meta & { readonly _tag: string }, intent: IntentView, cause: Intent.Cause): Either.Either<void, Refused> => {
  const from: Intent.State = intent.state === "Resolved"
    ? Intent.resolved(intent.outcome ?? "Failed")
    : intent.state === "Pending"
    ? Intent.pending
    : intent.state === "Dispatched"
    ? Intent.dispatched
    : Intent.abandoned
  return Either.mapBoth(Intent.transition(from, cause), {
    onLeft: (error) => new Refused({ command: command._tag, reason: `intent ${intent.intentId}: ${error.message}` }),
    onRight: () => undefined
  })
}

const all = (parts: ReadonlyArray<Either.Either<Event.Event | ReadonlyArray<Event.Event>, Refused>>): Decision => {
  const events: Array<Event.Event> = []
  for (const part of parts) {
    if (Either.isLeft(part)) return Either.left(part.left)
    if (Array.isArray(part.right)) events.push(...part.right)
    else events.push(part.right as Event.Event)
  }
  return Either.right(events)
}

/**
 * Decides a run command against the run's state.
 *
 * @since 0.2.0
 * @category transitions
 */
export const decide = (command: Command, state: State<object>): Decision => {
  switch (command._tag) {
    case "StartStep": {
      const k = key(command.runId, command.stepId, command.attempt)
      const known = state.attempts.get(k)
      if (command.scheduled ? known?.state !== "Pending" : known !== undefined) {
        return refuse(
          command,
          command.scheduled
            ? `attempt ${command.attempt} of step ${command.stepId} was not scheduled (it is ${known?.state ?? "absent"}).`
            : `attempt ${command.attempt} of step ${command.stepId} already exists (${known?.state}).`
        )
      }
      if (command.effect !== null && state.intents.has(command.effect.intentId)) {
        return refuse(command, `intent ${command.effect.intentId} already exists.`)
      }
      const scheduled: ReadonlyArray<Event.Event> = command.scheduled
        ? []
        : [{ _tag: "AttemptScheduled", ...meta(command), runId: command.runId, stepId: command.stepId, attempt: command.attempt }]
      const effect = command.effect
      return all([
        Either.right(scheduled),
        transitioned(command, { stepId: command.stepId, attempt: command.attempt, state: "Pending" }, Attempt.admit),
        Either.right(
          effect === null ? [] : [
            {
              _tag: "IntentRecorded",
              ...meta(command),
              intentId: effect.intentId,
              runId: command.runId,
              stepId: command.stepId,
              attempt: command.attempt,
              description: effect.description.slice(0, 65_536)
            },
            { _tag: "IntentDispatched", ...meta(command), intentId: effect.intentId }
          ] satisfies ReadonlyArray<Event.Event>
        )
      ])
    }
    case "FinishStep": {
      const attempt = state.attempts.get(key(command.runId, command.stepId, command.attempt))
      const intent = state.intents.get(command.intentId)
      if (attempt === undefined) return refuse(command, `attempt ${command.attempt} of step ${command.stepId} does not exist.`)
      if (intent === undefined) return refuse(command, `intent ${command.intentId} does not exist.`)
      const outcome: Intent.Outcome = command.outcome === "Succeeded" ? "Succeeded" : "Failed"
      const cause = command.outcome === "Succeeded"
        ? Attempt.succeed
        : command.outcome === "TimedOut"
        ? Attempt.timeOut
        : command.outcome === "Cancelled"
        ? Attempt.cancel(true)
        : Attempt.fail
      return all([
        Either.map(intentChanged(command, intent, Intent.resolve(outcome)), () => [
          {
            _tag: "CommandExited",
            ...meta(command),
            intentId: command.intentId,
            runId: command.runId,
            stepId: command.stepId,
            attempt: command.attempt,
            ...command.exit,
            changedPaths: [...command.exit.changedPaths]
          },
          { _tag: "IntentResolved", ...meta(command), intentId: command.intentId, outcome, resultRefs: [...command.resultRefs] }
        ] satisfies ReadonlyArray<Event.Event>),
        transitioned(command, attempt, cause)
      ])
    }
    case "DispatchEffect": {
      const attempt = state.attempts.get(key(command.runId, command.stepId, command.attempt))
      if (attempt === undefined || attempt.state !== "Running") {
        return refuse(command, `attempt ${command.attempt} of step ${command.stepId} is not running (${attempt?.state ?? "absent"}).`)
      }
      if (state.intents.has(command.intentId)) return refuse(command, `intent ${command.intentId} already exists.`)
      return Either.right([
        {
          _tag: "IntentRecorded",
          ...meta(command),
          intentId: command.intentId,
          runId: command.runId,
          stepId: command.stepId,
          attempt: command.attempt,
          description: command.description.slice(0, 65_536)
        },
        { _tag: "IntentDispatched", ...meta(command), intentId: command.intentId }
      ])
    }
    case "RefuseEffect": {
      const attempt = state.attempts.get(key(command.runId, command.stepId, command.attempt))
      // Only a running attempt has a worker whose call could be refused; a late hook of an ended
      // attempt is not recorded against it.
      if (attempt === undefined || attempt.state !== "Running") {
        return refuse(command, `attempt ${command.attempt} of step ${command.stepId} is not running (${attempt?.state ?? "absent"}).`)
      }
      const note = `${refusalNotePrefix}${command.description.trim().slice(0, 2000) || "(a tool call)"} — ${command.reason.trim().slice(0, 4000)}`
      return Either.right([
        { _tag: "AttemptNoted", ...meta(command), runId: command.runId, stepId: command.stepId, attempt: command.attempt, note },
        ...turnsRecorded(command, attempt, [{ _tag: "toolRejected" }])
      ])
    }
    case "ResolveEffect": {
      const intent = state.intents.get(command.intentId)
      if (intent === undefined) return refuse(command, `intent ${command.intentId} does not exist.`)
      return Either.map(intentChanged(command, intent, Intent.resolve(command.outcome)), () => [
        { _tag: "IntentResolved", ...meta(command), intentId: command.intentId, outcome: command.outcome, resultRefs: [...command.resultRefs] }
      ])
    }
    case "EndAttempt": {
      const attempt = state.attempts.get(key(command.runId, command.stepId, command.attempt))
      if (attempt === undefined) return refuse(command, `attempt ${command.attempt} of step ${command.stepId} does not exist.`)
      return Either.map(transitioned(command, attempt, command.cause), (event) => [event])
    }
    case "CloseRun": {
      const events: Array<Event.Event> = []
      for (const attempt of state.attempts.values()) {
        if (attempt.runId !== command.runId || (attempt.state !== "Pending" && attempt.state !== "Running")) continue
        const own = [...state.intents.values()].filter((intent) =>
          intent.runId === command.runId && intent.stepId === attempt.stepId && intent.attempt === attempt.attempt
        )
        for (const intent of own) {
          if (intent.state === "Pending") {
            events.push({ _tag: "IntentAbandoned", ...meta(command), intentId: intent.intentId, reason: command.reason })
          }
        }
        // A pending attempt never started: nothing it dispatched can be outstanding.
        const dispatched = attempt.state === "Running" && own.some((intent) => intent.state === "Dispatched")
        const closed = transitioned(command, attempt, Attempt.cancel(dispatched))
        if (Either.isLeft(closed)) return Either.left(closed.left)
        events.push(closed.right)
      }
      return Either.right(events)
    }
    case "RecordTurn": {
      const attempt = state.attempts.get(key(command.runId, command.stepId, command.attempt))
      if (attempt === undefined) return refuse(command, `attempt ${command.attempt} of step ${command.stepId} does not exist.`)
      return Either.right(turnsRecorded(command, attempt, command.events))
    }
    case "RecoverAttempt": {
      const attempt = state.attempts.get(key(command.runId, command.stepId, command.attempt))
      if (attempt === undefined || (attempt.state !== "Pending" && attempt.state !== "Running")) {
        return refuse(command, `attempt ${command.attempt} of step ${command.stepId} is not open (${attempt?.state ?? "absent"}).`)
      }
      const own = [...state.intents.values()].filter((intent) =>
        intent.runId === command.runId && intent.stepId === command.stepId && intent.attempt === command.attempt
      )
      const noted: Event.Event = {
        _tag: "AttemptNoted",
        ...meta(command),
        runId: command.runId,
        stepId: command.stepId,
        attempt: command.attempt,
        note: command.note
      }
      const recovery = command.recovery
      if (recovery._tag === "CancelClean") {
        const dispatched = own.find((intent) => intent.state === "Dispatched")
        if (dispatched !== undefined) {
          return refuse(command, `intent ${dispatched.intentId} was dispatched: its effect may have happened, so the attempt cannot be cancelled cleanly.`)
        }
        return all([
          Either.right(own.filter((intent) => intent.state === "Pending").map((intent): Event.Event => ({
            _tag: "IntentAbandoned",
            ...meta(command),
            intentId: intent.intentId,
            reason: recovery.reason
          }))),
          transitioned(command, attempt, Attempt.cancel(false)),
          Either.right(noted)
        ])
      }
      const intent = own.find((candidate) => candidate.intentId === recovery.intentId)
      if (intent === undefined) return refuse(command, `intent ${recovery.intentId} is not one of attempt ${command.attempt} of step ${command.stepId}.`)
      if (recovery._tag === "Indeterminate") {
        if (intent.state !== "Dispatched") return refuse(command, `intent ${intent.intentId} is ${intent.state}, not dispatched: its outcome is not in doubt.`)
        return all([transitioned(command, attempt, Attempt.cancel(true)), Either.right(noted)])
      }
      return all([
        Either.map(intentChanged(command, intent, Intent.resolve(recovery.outcome)), (): Event.Event => ({
          _tag: "IntentResolved",
          ...meta(command),
          intentId: intent.intentId,
          outcome: recovery.outcome,
          resultRefs: []
        })),
        transitioned(command, attempt, recovery.outcome === "Succeeded" ? Attempt.succeed : Attempt.fail),
        Either.right(noted)
      ])
    }
  }
}
