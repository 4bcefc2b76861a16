/**
 * A task's stream as one decider: the task's lifecycle (`Task`) and its run (`Run`) share the
 * stream, so one decision may hold both (a step's failure and the successor or the block the
 * lifecycle decides about it; a cancel and the attempts it closes), and one append covers it.
 *
 * `decide` takes a task command or a run command; `decideAll` decides a sequence, each against the
 * state the ones before it leave, and takes facts a caller already holds as events (a lease event,
 * a boundary) in their place. `evolve` folds one event into both halves at its log position. The
 * store only persists what this produces.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"
import type * as Event from "./Event.js"
import * as Run from "./Run.js"
import * as Task from "./Task.js"

/**
 * The stream's state: the task and its run's attempts and intents.
 *
 * @since 0.2.0
 * @category models
 */
export interface State {
  readonly task: Task.Aggregate
  readonly run: Run.State
}

/**
 * Before the first event.
 *
 * @since 0.2.0
 * @category constructors
 */
export const initial: State = { task: Task.initial, run: Run.initial }

/**
 * A task command or a run command.
 *
 * @since 0.2.0
 * @category models
 */
export type Command = Task.Command | Run.Command

/**
 * Why a command is refused or held.
 *
 * @since 0.2.0
 * @category models
 */
export type Rejection = Task.Rejection | Run.Refused

const runTags: ReadonlySet<string> = new Set<Run.Command["_tag"]>([
  "StartStep",
  "FinishStep",
  "DispatchEffect",
  "RefuseEffect",
  "ResolveEffect",
  "EndAttempt",
  "CloseRun",
  "RecordTurn",
  "RecoverAttempt"
])

/**
 * Whether `command` is one of the run's.
 *
 * @since 0.2.0
 * @category guards
 */
export const isRunCommand = (command: Command): command is Run.Command => runTags.has(command._tag)

/**
 * Decides one command against the stream's state.
 *
 * @since 0.2.0
 * @category transitions
 */
export const decide = (command: Command, state: State): Either.Either<ReadonlyArray<Event.Event>, Rejection> =>
  isRunCommand(command) ? Run.decide(command, state.run) : Task.decide(command, state.task)

/**
 * Folds one event at log position `lsn` into the task and its run.
 *
 * @since 0.2.0
 * @category transitions
 */
export const evolve = (state: State, event: Event.Event, lsn: number): State => ({
  task: Task.evolve(state.task, event),
  run: Run.evolve(state.run, event, lsn, {})
})

/**
 * Whether `item` is an event (a fact given as it is) rather than a command: events carry their
 * version.
 *
 * @since 0.2.0
 * @category guards
 */
export const isEvent = (item: Command | Event.Event): item is Event.Event => "version" in item

/**
 * Decides `items` one after another, each against the state the ones before it leave; an event
 * among them is taken as it is, in its place. Positions are counted from `lsn` (the log position
 * the first event will get), so the state after is what the store will hold once they are appended.
 *
 * @since 0.2.0
 * @category transitions
 */
export const decideAll = (
  items: ReadonlyArray<Command | Event.Event>,
  state: State,
  lsn: number
): Either.Either<{ readonly events: ReadonlyArray<Event.Event>; readonly state: State }, Rejection> => {
  let current = state
  let position = lsn
  const events: Array<Event.Event> = []
  const take = (event: Event.Event) => {
    events.push(event)
    current = evolve(current, event, position++)
  }
  for (const item of items) {
    if (isEvent(item)) {
      take(item)
      continue
    }
    const decision = decide(item, current)
    if (Either.isLeft(decision)) return Either.left(decision.left)
    for (const event of decision.right) take(event)
  }
  return Either.right({ events, state: current })
}
