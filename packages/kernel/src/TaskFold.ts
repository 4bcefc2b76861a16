/**
 * How events fold into the task aggregate: `evolve`, one event at a time, and the whole-history
 * fold that `Task.fold` and `Task.replay` run.
 *
 * A task's stream holds its run's facts too (attempts, intents, checkpoints, leases, turns), and in
 * a long run they are nearly every event: a history of a million events holds a few dozen that
 * move the lifecycle. On a task, `evolve` answers each run-level fact with the same task and the
 * version one higher. {@link foldChecked} therefore counts them and builds the task again only
 * before an event that changes more than the version, and once at the end, instead of copying the
 * task's twenty-odd fields for every event. Nothing is updated in place: the values it returns or
 * hands to its check are those folding `evolve` event by event gives.
 *
 * The task's model, its states and edges and the checked fold's error live in `Task`, which
 * re-exports everything here under its own name.
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import type * as Event from "./Event.js"
import type { Aggregate, State, Task } from "./Task.js"

const at = (task: Task, state: State): Task => ({ ...task, state })

/**
 * Folds one event. Events are facts already decided, so `evolve` applies them without judging
 * them; `Task.replay` is the checked fold for reading a log.
 *
 * @since 0.3.0
 * @category transitions
 */
export const evolve = (aggregate: Aggregate, event: Event.Event): Aggregate => {
  if (aggregate._tag === "Absent") {
    if (event._tag !== "TaskCreated") return aggregate
    return {
      _tag: "Task",
      version: 1,
      taskId: event.taskId,
      projectId: event.projectId,
      goal: event.goal,
      slug: event.slug,
      state: "INITIALIZING",
      pausedFrom: null,
      brief: { revision: 0, questions: [], restatement: null, closed: false },
      spec: null,
      preflight: null,
      plan: null,
      run: null,
      successorsUsed: 0,
      failureFingerprints: [],
      blockers: []
    }
  }
  const task: Task = { ...aggregate, version: aggregate.version + 1 }
  switch (event._tag) {
    case "TaskCreated":
      return task
    case "InterviewBegun":
      return at(task, "INTERVIEWING")
    case "InterviewResumed":
      return { ...at(task, "INTERVIEWING"), brief: { ...task.brief, closed: false } }
    case "QuestionAsked":
      return {
        ...task,
        brief: {
          ...task.brief,
          revision: task.brief.revision + 1,
          closed: false,
          questions: [
            ...task.brief.questions.filter((question) => question.questionId !== event.questionId),
            { questionId: event.questionId, text: event.text, blocking: event.blocking, answer: null }
          ]
        }
      }
    case "QuestionAnswered":
      return {
        ...task,
        brief: {
          ...task.brief,
          revision: task.brief.revision + 1,
          questions: task.brief.questions.map((question) =>
            question.questionId === event.questionId
              ? { ...question, answer: { text: event.answer, source: event.source } }
              : question
          )
        }
      }
    case "RestatementProposed":
      return {
        ...task,
        brief: {
          ...task.brief,
          revision: task.brief.revision + 1,
          closed: false,
          restatement: { text: event.text, digest: event.digest, approved: false }
        }
      }
    case "RestatementApproved":
      return {
        ...task,
        brief: {
          ...task.brief,
          restatement: task.brief.restatement === null ? null : { ...task.brief.restatement, approved: true }
        }
      }
    case "BriefClosed":
      return { ...task, brief: { ...task.brief, closed: true } }
    case "SpecProposed":
      return {
        ...at(task, "SPEC_READY"),
        spec: { revision: event.revision, digest: event.digest, spec: event.spec, approvedDigest: null, approval: null }
      }
    case "SpecApproved":
      return {
        ...at(task, "SPEC_APPROVED"),
        spec: task.spec === null ? null : { ...task.spec, approvedDigest: event.digest, approval: event.receipt }
      }
    case "PlanMarkedStale":
      return { ...task, plan: task.plan === null ? null : { ...task.plan, stale: true, approvedDigest: null, approval: null } }
    case "PreflightRecorded":
      return { ...at(task, "PREFLIGHT"), preflight: { specDigest: event.specDigest, observation: event.observation } }
    case "PlanProposed":
      return {
        ...at(task, "PLAN_READY"),
        plan: { revision: event.revision, digest: event.digest, plan: event.plan, approvedDigest: null, approval: null, stale: false }
      }
    case "PlanApproved":
      return {
        ...at(task, "PLAN_APPROVED"),
        plan: task.plan === null ? null : { ...task.plan, approvedDigest: event.digest, approval: event.receipt }
      }
    case "RunStarted":
      return {
        ...at(task, "RUNNING"),
        run: {
          runId: event.runId,
          specDigest: event.specDigest,
          planDigest: event.planDigest,
          leaseEpoch: event.leaseEpoch
        }
      }
    case "AttemptFailed":
      return { ...task, failureFingerprints: [...task.failureFingerprints, event.fingerprint] }
    case "SuccessorGranted":
      return { ...task, successorsUsed: event.successorsUsed }
    case "TaskBlocked":
      return { ...at(task, "BLOCKED"), blockers: [...task.blockers, event.blocker] }
    case "TaskUnblocked":
      return { ...at(task, event.to), blockers: [] }
    case "VerificationStarted":
      return at(task, "VERIFYING")
    case "TaskCompleted":
      return at(task, "COMPLETED")
    case "TaskFailed":
      return at(task, "FAILED")
    case "TaskReopened":
      return { ...at(task, "REOPENED"), blockers: [], run: null }
    case "TaskPaused":
      return { ...at(task, "PAUSED"), pausedFrom: event.from }
    case "TaskResumed":
      return { ...at(task, event.to), pausedFrom: null }
    case "TaskCancelled":
      return at(task, "CANCELLED")
    case "AttemptScheduled":
    case "AttemptTransitioned":
    case "IntentRecorded":
    case "IntentDispatched":
    case "IntentResolved":
    case "IntentAbandoned":
    case "CheckpointRecorded":
    case "LeaseAcquired":
    case "LeaseTakenOver":
    case "LeaseReleased":
    case "CommandExited":
    case "BoundaryRecorded":
    case "AttemptNoted":
    case "IntentSettled":
    case "VerificationRecorded":
    case "TurnRecorded":
    case "TaskRewound":
    case "ApproversEntryRecorded":
    case "TraceRecorded":
    case "AgentReported":
      // Run-level facts share the stream but not the lifecycle state.
      return task
  }
}

/**
 * The facts that, on a task, change nothing but its version: every tag of the last group of
 * {@link evolve}'s `switch`. Only a speed-up rests on this list: an event left out of it is folded
 * by `evolve` like any other, and the fold's property tests compare it with `evolve` event by event
 * over every tag of the catalogue. `TaskCreated` is not here, though it too changes only the
 * version of a task: the checked fold must see it to refuse it.
 */
const versionOnly: ReadonlySet<Event.Event["_tag"]> = new Set<Event.Event["_tag"]>([
  "AttemptScheduled",
  "AttemptTransitioned",
  "IntentRecorded",
  "IntentDispatched",
  "IntentResolved",
  "IntentAbandoned",
  "CheckpointRecorded",
  "LeaseAcquired",
  "LeaseTakenOver",
  "LeaseReleased",
  "CommandExited",
  "BoundaryRecorded",
  "AttemptNoted",
  "IntentSettled",
  "VerificationRecorded",
  "TurnRecorded",
  "TaskRewound",
  "ApproversEntryRecorded",
  "TraceRecorded",
  "AgentReported"
])

/** The task `skipped` run-level facts later: the same task, with the version they add. */
const withVersion = (task: Task, skipped: number): Task =>
  skipped === 0 ? task : { ...task, version: task.version + skipped }

/**
 * Folds `events` into `from`, as `evolve` event by event would, and lets `check` refuse the history.
 * `check` is given every event but a run-level fact on an existing task, with the aggregate before
 * and after it and its position (counted from 1); the first value it returns other than `null`
 * ends the fold as the `Left`. A run-level fact on a task changes only the version, so no check of
 * a state change or of a task's creation can refuse it.
 *
 * @since 0.3.0
 * @category transitions
 */
export const foldChecked = <E>(
  events: Iterable<Event.Event>,
  from: Aggregate,
  check: (before: Aggregate, after: Aggregate, event: Event.Event, position: number) => E | null
): Either.Either<Aggregate, E> => {
  let aggregate = from
  // Run-level facts folded since the task was last built: each adds one to its version.
  let skipped = 0
  let position = 0
  for (const event of events) {
    position += 1
    let before = aggregate
    if (aggregate._tag === "Task") {
      if (versionOnly.has(event._tag)) {
        skipped += 1
        continue
      }
      before = withVersion(aggregate, skipped)
      skipped = 0
    }
    const after = evolve(before, event)
    const refused = check(before, after, event, position)
    if (refused !== null) return Either.left(refused)
    aggregate = after
  }
  return Either.right(aggregate._tag === "Task" ? withVersion(aggregate, skipped) : aggregate)
}

const unchecked = (): null => null

/**
 * The state after `events`, from `from`: the same value as folding {@link evolve} over them.
 *
 * @since 0.3.0
 * @category transitions
 */
export const fold = (events: Iterable<Event.Event>, from: Aggregate): Aggregate =>
  Either.merge(foldChecked<never>(events, from, unchecked))
