/**
 * The whole-history fold of the task (`Task.fold`, `Task.replay`, `TaskFold`), which builds the
 * task again only before an event that changes more than its version, against `Task.evolve`
 * folded event by event and against the checked fold as it was written before (a reference copy
 * below):
 *
 * - on valid histories: a task reached through real commands, then a random walk of commands the
 *   decider accepts, one at a time against the running state, with the run's facts (every
 *   run-level tag of the catalogue) interleaved at random, folded whole or from a prefix's state;
 * - on raw logs of any events in any order, valid or not, from no task or from a reached one;
 * - by hand: which tags count only as a version (a table written out here, every tag of the
 *   catalogue on one side or the other), what the fold returns unchanged, and the positions the
 *   checked fold reports after runs of skipped facts.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type * as Event from "../src/Event.js"
import type * as Plan from "../src/Plan.js"
import type * as Spec from "../src/Spec.js"
import * as Task from "../src/Task.js"
import * as TaskFold from "../src/TaskFold.js"
import {
  approvePlanNow,
  approveRestatementNow,
  approveSpecNow,
  asTask,
  cmd,
  completeNow,
  planFor,
  reachAll,
  runs,
  SAMPLE_EVENTS,
  specA,
  specB,
  STATES,
  startRunNow
} from "./fixtures.js"
import * as fc from "fast-check"

type Tag = Event.Event["_tag"]

/**
 * Every tag of the catalogue: true for those that, on an existing task, change nothing but its
 * version (the run's facts, and a second TaskCreated), false for those that move the lifecycle.
 * Written out here rather than read from the module under test.
 */
const VERSION_ONLY: { readonly [T in Tag]: boolean } = {
  TaskCreated: true,
  InterviewBegun: false,
  QuestionAsked: false,
  QuestionAnswered: false,
  RestatementProposed: false,
  RestatementApproved: false,
  BriefClosed: false,
  InterviewResumed: false,
  SpecProposed: false,
  SpecApproved: false,
  PlanMarkedStale: false,
  PreflightRecorded: false,
  PlanProposed: false,
  PlanApproved: false,
  RunStarted: false,
  AttemptFailed: false,
  SuccessorGranted: false,
  TaskBlocked: false,
  TaskUnblocked: false,
  VerificationStarted: false,
  TaskCompleted: false,
  TaskFailed: false,
  TaskReopened: false,
  TaskPaused: false,
  TaskResumed: false,
  TaskCancelled: false,
  AttemptScheduled: true,
  AttemptTransitioned: true,
  IntentRecorded: true,
  IntentDispatched: true,
  IntentResolved: true,
  IntentAbandoned: true,
  CheckpointRecorded: true,
  LeaseAcquired: true,
  LeaseTakenOver: true,
  LeaseReleased: true,
  CommandExited: true,
  BoundaryRecorded: true,
  AttemptNoted: true,
  IntentSettled: true,
  VerificationRecorded: true,
  TurnRecorded: true,
  TaskRewound: true,
  ApproversEntryRecorded: true,
  TraceRecorded: true,
  AgentReported: true
}

const TAGS = Object.keys(VERSION_ONLY) as ReadonlyArray<Tag>
const RUN_LEVEL: ReadonlyArray<Event.Event> = TAGS.filter((tag) => VERSION_ONLY[tag] && tag !== "TaskCreated").map((tag) => SAMPLE_EVENTS[tag])

/** Every sample event, with the variants of the ones whose direction is a field. */
const ANY_EVENT: ReadonlyArray<Event.Event> = [
  ...Object.values(SAMPLE_EVENTS),
  { ...SAMPLE_EVENTS.TaskUnblocked, to: "VERIFYING" },
  { ...SAMPLE_EVENTS.TaskResumed, to: "RUNNING" },
  { ...SAMPLE_EVENTS.TaskPaused, from: "RUNNING" }
]

const REACHED = reachAll()

/** Event by event: the fold the fast one must equal. */
const byEvolve = (events: ReadonlyArray<Event.Event>, from: Task.Aggregate = Task.initial): Task.Aggregate =>
  events.reduce(Task.evolve, from)

/** The checked fold as it was written before the fast fold: `evolve` and the checks on every event. */
const replayByEvolve = (
  events: ReadonlyArray<Event.Event>,
  from: Task.Aggregate = Task.initial
): Either.Either<Task.Aggregate, { readonly position: number; readonly event: string; readonly detail: string }> => {
  let aggregate = from
  for (const [index, event] of events.entries()) {
    const position = index + 1
    if (aggregate._tag === "Absent" && event._tag !== "TaskCreated") {
      return Either.left({ position, event: event._tag, detail: "the first event of a task must be TaskCreated" })
    }
    if (aggregate._tag === "Task" && event._tag === "TaskCreated") {
      return Either.left({ position, event: event._tag, detail: "the task was already created" })
    }
    const next = Task.evolve(aggregate, event)
    if (aggregate._tag === "Task" && next._tag === "Task" && next.state !== aggregate.state && !Task.isEdge(aggregate.state, next.state)) {
      return Either.left({ position, event: event._tag, detail: `${aggregate.state} → ${next.state} is not an edge of the lifecycle` })
    }
    aggregate = next
  }
  return Either.right(aggregate)
}

const sameReplay = (events: ReadonlyArray<Event.Event>, from?: Task.Aggregate) => {
  const expected = replayByEvolve(events, from)
  const actual = Task.replay(events, from)
  if (Either.isRight(expected)) {
    expect(actual).toEqual(expected)
  } else {
    expect(Either.isLeft(actual)).toBe(true)
    if (Either.isLeft(actual)) {
      expect(actual.left._tag).toBe("@ratchet/kernel/CorruptHistory")
      expect({ position: actual.left.position, event: actual.left.event, detail: actual.left.detail }).toEqual(expected.left)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Valid histories: real commands, decided one at a time, with the run's facts between them
// ---------------------------------------------------------------------------------------------

const planCache = new Map<Spec.Spec, Plan.Plan>()
const planOf = (spec: Spec.Spec): Plan.Plan => {
  const plan = planCache.get(spec) ?? planFor(spec)
  planCache.set(spec, plan)
  return plan
}

/** Commands built against the task as it is when they are sent; `decide` accepts or refuses each. */
const COMMANDS: ReadonlyArray<(task: Task.Task) => Task.Command> = [
  () => cmd.askQuestion("q1", true),
  () => cmd.askQuestion("q2", false),
  () => cmd.answerQuestion("q1"),
  () => cmd.restate(),
  approveRestatementNow,
  () => cmd.closeBrief(),
  () => cmd.resumeInterview(),
  () => cmd.proposeSpec(specA),
  () => cmd.proposeSpec(specB),
  approveSpecNow,
  () => cmd.recordPreflight(),
  (task) => cmd.proposePlan(planOf(task.spec?.spec ?? specA)),
  approvePlanNow,
  startRunNow,
  () => cmd.recordAttemptFailure("fp-1"),
  () => cmd.recordAttemptFailure("fp-2"),
  () => cmd.recordAttemptFailure("fp-3", false),
  () => cmd.enterVerification(),
  completeNow,
  () => cmd.block(),
  () => cmd.unblock("RUNNING"),
  () => cmd.unblock("VERIFYING"),
  () => cmd.fail(),
  () => cmd.reopen(),
  () => cmd.pause(),
  () => cmd.resume(),
  () => cmd.cancel()
]

/** A command may need what the task lacks (a restatement, a spec): such a command is skipped. */
const attempt = (make: (task: Task.Task) => Task.Command, task: Task.Task): Task.Command | null => {
  try {
    return make(task)
  } catch {
    return null
  }
}

const validHistory = fc.record({
  from: fc.constantFrom(...STATES),
  commands: fc.array(fc.nat(COMMANDS.length - 1), { maxLength: 16 }),
  facts: fc.array(fc.tuple(fc.nat(), fc.nat(RUN_LEVEL.length - 1), fc.integer({ min: 1, max: 5 })), { maxLength: 12 })
}).map(({ commands, facts, from }) => {
  const reached = REACHED[from]
  let aggregate = reached.aggregate
  const decided: Array<Event.Event> = [...reached.events]
  // Each step takes the first command, from the drawn one on, that the decider accepts.
  for (const index of commands) {
    for (let offset = 0; offset < COMMANDS.length; offset++) {
      const command = attempt(COMMANDS[(index + offset) % COMMANDS.length]!, asTask(aggregate))
      const decision = command === null ? null : Task.decide(command, aggregate)
      if (decision === null || Either.isLeft(decision)) continue
      for (const event of decision.right) {
        decided.push(event)
        aggregate = Task.evolve(aggregate, event)
      }
      break
    }
  }
  // The run's facts go anywhere after the task's creation, in runs of one to five.
  const events = [...decided]
  for (const [at, fact, count] of facts) {
    const position = 1 + (at % events.length)
    events.splice(position, 0, ...Array.from({ length: count }, () => RUN_LEVEL[fact]!))
  }
  return events
})

describe("Task.fold on valid histories", () => {
  it("equals evolve folded event by event, whole or from a prefix's state; replay accepts it with the same task", () => {
    fc.assert(
      fc.property(validHistory, fc.nat(), (events, cut) => {
        const expected = byEvolve(events)
        expect(Task.fold(events)).toEqual(expected)
        const at = cut % (events.length + 1)
        expect(Task.fold(events.slice(at), Task.fold(events.slice(0, at)))).toEqual(expected)
        expect(Task.replay(events)).toEqual(Either.right(expected))
        expect(asTask(expected).version).toBe(events.length)
      }),
      { numRuns: runs(150) }
    )
  })
})

describe("Task.fold and Task.replay on raw logs", () => {
  const rawLog = fc.tuple(
    fc.boolean(),
    fc.array(fc.oneof(fc.constantFrom(...ANY_EVENT), fc.constantFrom(...RUN_LEVEL)), { maxLength: 24 })
  ).map(([created, rest]) => (created ? [SAMPLE_EVENTS.TaskCreated as Event.Event, ...rest] : rest))
  const origin = fc.oneof(fc.constant(Task.initial), fc.constantFrom(...STATES).map((state) => REACHED[state].aggregate))

  it("fold equals evolve folded event by event, from no task or a reached one", () => {
    fc.assert(
      fc.property(rawLog, origin, (events, from) => {
        expect(Task.fold(events, from)).toEqual(byEvolve(events, from))
      }),
      { numRuns: runs(500) }
    )
  })

  it("replay accepts and refuses what the event-by-event checked fold does, at the same position", () => {
    fc.assert(
      fc.property(rawLog, origin, (events, from) => sameReplay(events, from)),
      { numRuns: runs(500) }
    )
  })
})

// ---------------------------------------------------------------------------------------------
// By hand
// ---------------------------------------------------------------------------------------------

describe("which events count only as a version", () => {
  it.each(TAGS)("%s on a running task", (tag) => {
    const task = REACHED.RUNNING.task
    const event = SAMPLE_EVENTS[tag]
    const evolved = Task.evolve(task, event)
    if (VERSION_ONLY[tag]) {
      expect(evolved).toEqual({ ...task, version: task.version + 1 })
    }
    expect(Task.fold([event, event, event], task)).toEqual(byEvolve([event, event, event], task))
  })

  it("the events that move the lifecycle each change more than the version of some task", () => {
    const moving = TAGS.filter((tag) => !VERSION_ONLY[tag])
    // Reached tasks have their restatement approved already: one that has it only proposed.
    const restated = asTask(Task.fold([SAMPLE_EVENTS.TaskCreated, SAMPLE_EVENTS.InterviewBegun, SAMPLE_EVENTS.RestatementProposed]))
    const tasks = [...STATES.map((state) => REACHED[state].task), restated]
    for (const tag of moving) {
      const changed = tasks.some((task) =>
        JSON.stringify(Task.evolve(task, SAMPLE_EVENTS[tag])) !== JSON.stringify({ ...task, version: task.version + 1 })
      )
      expect(changed, tag).toBe(true)
    }
  })
})

describe("evolve by hand: what each event changes, and nothing else", () => {
  it("InterviewBegun moves the task to INTERVIEWING and leaves a closed brief closed", () => {
    const closed = asTask(Task.fold([SAMPLE_EVENTS.TaskCreated, SAMPLE_EVENTS.BriefClosed]))
    expect(closed.brief.closed).toBe(true)
    const begun = asTask(Task.evolve(closed, SAMPLE_EVENTS.InterviewBegun))
    expect(begun).toEqual({ ...closed, version: closed.version + 1, state: "INTERVIEWING" })
  })

  it("QuestionAnswered answers only the question it names", () => {
    const asked = Task.fold([
      SAMPLE_EVENTS.TaskCreated,
      SAMPLE_EVENTS.InterviewBegun,
      SAMPLE_EVENTS.QuestionAsked,
      { ...SAMPLE_EVENTS.QuestionAsked, questionId: "q2", text: "Which port?" }
    ])
    const answered = asTask(Task.evolve(asked, SAMPLE_EVENTS.QuestionAnswered))
    expect(answered.brief.questions.map((question) => [question.questionId, question.answer])).toEqual([
      ["q1", { text: SAMPLE_EVENTS.QuestionAnswered.answer, source: SAMPLE_EVENTS.QuestionAnswered.source }],
      ["q2", null]
    ])
  })
})

describe("the fold by hand", () => {
  const created = SAMPLE_EVENTS.TaskCreated
  const scheduled = SAMPLE_EVENTS.AttemptScheduled
  const checkpoint = SAMPLE_EVENTS.CheckpointRecorded

  it("counts every run-level fact in the version and moves the lifecycle between them", () => {
    const task = asTask(Task.fold([created, scheduled, checkpoint, SAMPLE_EVENTS.InterviewBegun, scheduled, scheduled]))
    expect(task.state).toBe("INTERVIEWING")
    expect(task.version).toBe(6)
    expect(task).toEqual(byEvolve([created, scheduled, checkpoint, SAMPLE_EVENTS.InterviewBegun, scheduled, scheduled]))
  })

  it("a lifecycle event after skipped facts sees the version they added", () => {
    const questioned = asTask(Task.fold([created, scheduled, scheduled, SAMPLE_EVENTS.InterviewBegun, SAMPLE_EVENTS.QuestionAsked]))
    expect(questioned.version).toBe(5)
    expect(questioned.brief.revision).toBe(1)
  })

  it("returns what it was given when there is nothing to fold, and a new task when there is", () => {
    const task = REACHED.RUNNING.task
    expect(Task.fold([], task)).toBe(task)
    expect(Task.fold([])).toBe(Task.initial)
    const later = Task.fold([scheduled], task)
    expect(later).not.toBe(task)
    expect(later).toEqual({ ...task, version: task.version + 1 })
    expect(task.version).toBe(REACHED.RUNNING.events.length)
  })

  it("ignores everything before the task is created, and counts nothing for it", () => {
    expect(Task.fold([scheduled, SAMPLE_EVENTS.RunStarted, checkpoint])).toBe(Task.initial)
    const task = asTask(Task.fold([scheduled, checkpoint, created, scheduled]))
    expect(task.version).toBe(2)
    expect(task.state).toBe("INITIALIZING")
  })

  it("a second TaskCreated counts as a version and changes nothing else", () => {
    const task = REACHED.RUNNING.task
    expect(Task.fold([scheduled, created, scheduled], task)).toEqual({ ...task, version: task.version + 3 })
  })

  it("a history of a thousand run-level facts keeps the task but for its version", () => {
    const facts = Array.from({ length: 1000 }, (_, index) => RUN_LEVEL[index % RUN_LEVEL.length]!)
    const task = REACHED.RUNNING.task
    expect(Task.fold(facts, task)).toEqual({ ...task, version: task.version + 1000 })
    expect(Task.fold([...facts, SAMPLE_EVENTS.VerificationStarted], task)).toEqual({ ...task, state: "VERIFYING", version: task.version + 1001 })
  })
})

describe("the checked fold by hand", () => {
  const created = SAMPLE_EVENTS.TaskCreated
  const scheduled = SAMPLE_EVENTS.AttemptScheduled

  it("reports a second TaskCreated at its position after skipped facts", () => {
    const replayed = Task.replay([created, scheduled, scheduled, scheduled, created])
    expect(Either.isLeft(replayed) && replayed.left.position).toBe(5)
    expect(Either.isLeft(replayed) && replayed.left.detail).toBe("the task was already created")
  })

  it("reports an illegal state change at its position after skipped facts", () => {
    const replayed = Task.replay([created, scheduled, SAMPLE_EVENTS.LeaseAcquired, SAMPLE_EVENTS.VerificationStarted])
    expect(Either.isLeft(replayed) && replayed.left.position).toBe(4)
    expect(Either.isLeft(replayed) && replayed.left.detail).toBe("INITIALIZING → VERIFYING is not an edge of the lifecycle")
  })

  it("refuses a run-level fact before the task, at position 1", () => {
    const replayed = Task.replay([scheduled, created])
    expect(Either.isLeft(replayed) && replayed.left.position).toBe(1)
    expect(Either.isLeft(replayed) && replayed.left.event).toBe("AttemptScheduled")
  })

  it("accepts run-level facts after a terminal state, which move nothing", () => {
    const { aggregate, events } = REACHED.CANCELLED
    expect(Task.replay([...events, scheduled, scheduled])).toEqual(Either.right({ ...asTask(aggregate), version: events.length + 2 }))
  })
})

describe("TaskFold.foldChecked", () => {
  const created = SAMPLE_EVENTS.TaskCreated
  const scheduled = SAMPLE_EVENTS.AttemptScheduled
  const begun = SAMPLE_EVENTS.InterviewBegun

  it("shows its check every event but the run-level facts on a task, with the task as evolve left it", () => {
    const seen: Array<{ position: number; tag: Tag; before: number; after: number }> = []
    const result = TaskFold.foldChecked([scheduled, created, scheduled, scheduled, begun, scheduled], Task.initial, (before, after, event, position) => {
      seen.push({ position, tag: event._tag, before: before.version, after: after.version })
      return null
    })
    expect(seen).toEqual([
      { position: 1, tag: "AttemptScheduled", before: 0, after: 0 },
      { position: 2, tag: "TaskCreated", before: 0, after: 1 },
      { position: 5, tag: "InterviewBegun", before: 3, after: 4 }
    ])
    expect(result).toEqual(Either.right(byEvolve([scheduled, created, scheduled, scheduled, begun, scheduled])))
  })

  it("hands its check the aggregate it was given when nothing was skipped before the event", () => {
    const task = REACHED.INTERVIEWING.task
    const befores: Array<Task.Aggregate> = []
    TaskFold.foldChecked([SAMPLE_EVENTS.QuestionAsked], task, (before) => {
      befores.push(before)
      return null
    })
    expect(befores).toHaveLength(1)
    expect(befores[0]).toBe(task)
  })

  it("stops at the first refusal and returns it", () => {
    const result = TaskFold.foldChecked([created, scheduled, begun, scheduled, begun], Task.initial, (_before, _after, event, position) =>
      event._tag === "InterviewBegun" ? `refused at ${position}` : null)
    expect(result).toEqual(Either.left("refused at 3"))
  })

  it("fold is foldChecked with no refusal", () => {
    const events = [created, scheduled, begun, scheduled]
    expect(TaskFold.fold(events, Task.initial)).toEqual(byEvolve(events))
    expect(TaskFold.evolve).toBe(Task.evolve)
  })
})
