/**
 * Kernel fold: events folded per second over a task history of a million events, by the kernel's
 * `Task.fold` against a hand-written minimal reducer of the same machine.
 *
 * The history is the one the read and recovery benchmarks store (reads/history.ts): the lifecycle
 * prefix the kernel decides, then the run loop's events, attempt after attempt, nine events each;
 * 1,000,000 events in all. Reads do not fold it: `ratchet status` and the controller read the task
 * summary the store keeps. The kernel's fold is what the store runs over each append's events
 * (`ReadModel.fold` folds the summary with `Task.fold`) and what a cold rebuild or `ratchet log`'s
 * checks (`Task.replay`, the same loop) run over a whole history.
 *
 * The hand-written reducer is a plain `switch` over the same event tags that mutates one object in
 * place: the lower bound of a fold in JavaScript, with none of the kernel's immutability. The
 * kernel's `Task.evolve` returns a new task value for every event (a spread of about twenty
 * fields); `Task.fold` calls it only for the events that move the lifecycle and counts the
 * run-level facts, which change only the version (see `TaskFold`). Before anything is timed the
 * suite checks that both end in the same state on every field the task view shows (state, version,
 * revisions, digests, run, blockers, …).
 *
 * Pair: `fold/task-evolve-10^6`, time per fold of the whole history; target: at least half the
 * hand-written reducer's events per second, i.e. a time ratio of at most 2.
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import type { Pair, Prepared, Skipped, Suite } from "../lib/Pair.js"
import { events as historyEvents, wanted } from "../reads/history.js"

const pairId = "fold/task-evolve-10^6"

/** How many events the folded history holds. */
const length = 1_000_000

/** The state the hand-written reducer keeps: the fields the comparison reads. */
interface Hand {
  taskId: string
  projectId: string
  goal: string
  slug: string
  state: Task.State
  version: number
  pausedFrom: "INTERVIEWING" | "RUNNING" | null
  briefRevision: number
  questions: Array<{ questionId: string; blocking: boolean; answered: boolean }>
  restatementDigest: string | null
  restatementApproved: boolean
  briefClosed: boolean
  specRevision: number | null
  specDigest: string | null
  specApproved: string | null
  preflightSpecDigest: string | null
  planRevision: number | null
  planDigest: string | null
  planApproved: string | null
  planStale: boolean
  runId: string | null
  leaseEpoch: number | null
  successorsUsed: number
  failures: number
  blockers: number
}

/** The same machine as `Task.evolve`, written by hand: one mutable object, one switch. */
const handFold = (events: ReadonlyArray<Event.Event>): Hand | null => {
  let s: Hand | null = null
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!
    if (s === null) {
      if (event._tag !== "TaskCreated") continue
      s = {
        taskId: event.taskId,
        projectId: event.projectId,
        goal: event.goal,
        slug: event.slug,
        state: "INITIALIZING",
        version: 1,
        pausedFrom: null,
        briefRevision: 0,
        questions: [],
        restatementDigest: null,
        restatementApproved: false,
        briefClosed: false,
        specRevision: null,
        specDigest: null,
        specApproved: null,
        preflightSpecDigest: null,
        planRevision: null,
        planDigest: null,
        planApproved: null,
        planStale: false,
        runId: null,
        leaseEpoch: null,
        successorsUsed: 0,
        failures: 0,
        blockers: 0
      }
      continue
    }
    s.version++
    switch (event._tag) {
      case "InterviewBegun":
        s.state = "INTERVIEWING"
        break
      case "InterviewResumed":
        s.state = "INTERVIEWING"
        s.briefClosed = false
        break
      case "QuestionAsked": {
        s.briefRevision++
        s.briefClosed = false
        s.questions = s.questions.filter((q) => q.questionId !== event.questionId)
        s.questions.push({ questionId: event.questionId, blocking: event.blocking, answered: false })
        break
      }
      case "QuestionAnswered":
        s.briefRevision++
        for (const q of s.questions) if (q.questionId === event.questionId) q.answered = true
        break
      case "RestatementProposed":
        s.briefRevision++
        s.briefClosed = false
        s.restatementDigest = event.digest
        s.restatementApproved = false
        break
      case "RestatementApproved":
        if (s.restatementDigest !== null) s.restatementApproved = true
        break
      case "BriefClosed":
        s.briefClosed = true
        break
      case "SpecProposed":
        s.state = "SPEC_READY"
        s.specRevision = event.revision
        s.specDigest = event.digest
        s.specApproved = null
        break
      case "SpecApproved":
        s.state = "SPEC_APPROVED"
        if (s.specDigest !== null) s.specApproved = event.digest
        break
      case "PlanMarkedStale":
        if (s.planDigest !== null) {
          s.planStale = true
          s.planApproved = null
        }
        break
      case "PreflightRecorded":
        s.state = "PREFLIGHT"
        s.preflightSpecDigest = event.specDigest
        break
      case "PlanProposed":
        s.state = "PLAN_READY"
        s.planRevision = event.revision
        s.planDigest = event.digest
        s.planApproved = null
        s.planStale = false
        break
      case "PlanApproved":
        s.state = "PLAN_APPROVED"
        if (s.planDigest !== null) s.planApproved = event.digest
        break
      case "RunStarted":
        s.state = "RUNNING"
        s.runId = event.runId
        s.leaseEpoch = event.leaseEpoch
        break
      case "AttemptFailed":
        s.failures++
        break
      case "SuccessorGranted":
        s.successorsUsed = event.successorsUsed
        break
      case "TaskBlocked":
        s.state = "BLOCKED"
        s.blockers++
        break
      case "TaskUnblocked":
        s.state = event.to
        s.blockers = 0
        break
      case "VerificationStarted":
        s.state = "VERIFYING"
        break
      case "TaskCompleted":
        s.state = "COMPLETED"
        break
      case "TaskFailed":
        s.state = "FAILED"
        break
      case "TaskReopened":
        s.state = "REOPENED"
        s.blockers = 0
        s.runId = null
        s.leaseEpoch = null
        break
      case "TaskPaused":
        s.state = "PAUSED"
        s.pausedFrom = event.from
        break
      case "TaskResumed":
        s.state = event.to
        s.pausedFrom = null
        break
      case "TaskCancelled":
        s.state = "CANCELLED"
        break
      default:
        // Run-level facts: the lifecycle state does not change.
        break
    }
  }
  return s
}

/** The fields both folds must agree on, from the kernel's task. */
const viewOfTask = (task: Task.Task) => ({
  taskId: task.taskId,
  projectId: task.projectId,
  goal: task.goal,
  slug: task.slug,
  state: task.state,
  version: task.version,
  pausedFrom: task.pausedFrom,
  briefRevision: task.brief.revision,
  questions: task.brief.questions.map((q) => ({ questionId: q.questionId, blocking: q.blocking, answered: q.answer !== null })),
  restatementDigest: task.brief.restatement?.digest ?? null,
  restatementApproved: task.brief.restatement?.approved ?? false,
  briefClosed: task.brief.closed,
  specRevision: task.spec?.revision ?? null,
  specDigest: task.spec?.digest ?? null,
  specApproved: task.spec?.approvedDigest ?? null,
  preflightSpecDigest: task.preflight?.specDigest ?? null,
  planRevision: task.plan?.revision ?? null,
  planDigest: task.plan?.digest ?? null,
  planApproved: task.plan?.approvedDigest ?? null,
  planStale: task.plan?.stale ?? false,
  runId: task.run?.runId ?? null,
  leaseEpoch: task.run?.leaseEpoch ?? null,
  successorsUsed: task.successorsUsed,
  failures: task.failureFingerprints.length,
  blockers: task.blockers.length
})

/** The fields both folds must agree on, from the hand-written state (in the same key order). */
const viewOfHand = (hand: Hand) => ({ ...hand, questions: hand.questions.map((q) => ({ ...q })) })

// Keeps the folds' results alive, so that no engine could drop a fold whose result is unused.
let sink: unknown = null

/** @see the module comment */
export const suite: Suite = {
  name: "Kernel fold",
  prepare: (): Promise<Prepared | Skipped> => {
    if (!wanted([pairId])) return Promise.resolve({ _tag: "Skipped", reason: "no pair of this suite matches the filter" })
    const started = performance.now()
    const events = historyEvents({ projectId: "bench-fold", taskId: "t-fold" }, length)
    const generatedMs = performance.now() - started
    if (events.length !== length) throw new Error(`the history has ${events.length} events, expected ${length}`)

    const kernel = Task.fold(events)
    const hand = handFold(events)
    if (kernel._tag !== "Task" || hand === null) throw new Error("a fold did not create the task")
    const expected = JSON.stringify(viewOfTask(kernel))
    const actual = JSON.stringify(viewOfHand(hand))
    if (expected !== actual) throw new Error(`the hand-written reducer disagrees with Task.fold:\n kernel ${expected}\n hand   ${actual}`)

    const tags = new Map<string, number>()
    for (const event of events) tags.set(event._tag, (tags.get(event._tag) ?? 0) + 1)
    const mix = [...tags.entries()].sort((a, b) => b[1] - a[1]).map(([tag, count]) => `${tag} ${count}`).join(", ")

    const pairs: ReadonlyArray<Pair> = [{
      id: pairId,
      operation: `fold ${length.toLocaleString("en-US")} events into the task`,
      ours: (_round, operations) => {
        for (let i = 0; i < operations; i++) sink = Task.fold(events)
        return Promise.resolve()
      },
      raw: (_round, operations) => {
        for (let i = 0; i < operations; i++) sink = handFold(events)
        return Promise.resolve()
      },
      baseline: "hand-written reducer",
      operationsPerRound: 3,
      eventsPerOperation: length,
      target: 2,
      targetText: "≥ 0.5× events/s"
    }]

    // Throughput of one fold each, for the facts (the pair's medians are the figures to quote).
    const rate = (fold: () => unknown) => {
      const samples: Array<number> = []
      for (let i = 0; i < 3; i++) {
        const start = performance.now()
        sink = fold()
        samples.push(performance.now() - start)
      }
      samples.sort((a, b) => a - b)
      return `${(length / (samples[1]! / 1000) / 1e6).toFixed(1)} M events/s`
    }
    const facts: Record<string, string> = {
      "history": `${length.toLocaleString("en-US")} events of one RUNNING task (generated in ${(generatedMs / 1000).toFixed(1)} s)`,
      "event mix": mix,
      "end state (both folds agree)": `${kernel.state}, version ${kernel.version}`,
      "Task.fold, median of 3 folds (before the pair)": rate(() => Task.fold(events)),
      "hand-written reducer, median of 3 folds (before the pair)": rate(() => handFold(events))
    }
    return Promise.resolve({ _tag: "Prepared", pairs, facts, close: () => Promise.resolve(void sink) })
  }
}
