/**
 * The episode view: the run's history folded at the snapshot LSN. The whole expected view of the
 * fixture log is written out by hand; the snapshot barrier (anything above the LSN, other runs),
 * deep freezing, and the logs that make no episode are checked against it.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as EventStore from "@ratchet/storage/EventStore"
import type * as Event from "@ratchet/kernel/Event"
import * as Turn from "@ratchet/kernel/Turn"
import * as Events from "@ratchet/testkit/Events"
import * as Either from "effect/Either"
import * as EpisodeView from "../src/EpisodeView.js"
import {
  agent1,
  alice,
  DIRTY1,
  DIRTY2,
  DIRTY3,
  episode,
  history,
  later,
  PLAN_DIGEST,
  PLAN2_DIGEST,
  REF1,
  REF2,
  REF3,
  REF4,
  REF5,
  rerun,
  runner1,
  runner2,
  runner3,
  SPEC_DIGEST,
  SPEC2_DIGEST,
  stored,
  system,
  TASK_ID,
  verifier1
} from "./fixtures.js"

const expected: EpisodeView.EpisodeView = {
  taskId: "t-1",
  branch: "main",
  runId: "run-1",
  snapshotLsn: 580,
  specDigest: SPEC_DIGEST,
  planDigest: PLAN_DIGEST,
  context: {
    goal: "Add a --json flag to the status command",
    nonGoals: ["YAML output"],
    constraints: ["keep the human output unchanged"],
    decisions: ["print with JSON.stringify"],
    relevantPaths: ["src/status.ts"],
    verifiedFacts: ["status prints a table today"],
    allowedScope: ["src/**", "docs/**"],
    forbiddenScope: ["dist/**"]
  },
  steps: [
    { stepId: "build", title: "Add the flag", acRefs: ["AC-001"], instruction: "npm run build", manual: false },
    { stepId: "test", title: "Test the output", acRefs: ["AC-001", "AC-002"], instruction: "npm test", manual: false },
    { stepId: "docs", title: "Document the flag", acRefs: ["AC-003"], instruction: "Describe --json in docs/guide.md", manual: true }
  ],
  attempts: [
    {
      stepId: "build",
      attempt: 1,
      state: "Failed",
      actor: { kind: "runner", id: "runner-1" },
      startedAt: 2000,
      endedAt: 2042,
      intents: [{ intentId: "i-1", description: "npm run build", state: "Resolved", outcome: "Failed", settledBy: null }],
      command: {
        exitCode: 2,
        signal: null,
        durationMs: 40,
        timedOut: false,
        stdoutRef: REF1,
        stderrRef: REF2,
        outputTail: "src/status.ts(3,1): error TS2304",
        changedPaths: ["src/status.ts"]
      },
      fingerprint: "exit-2:TS2304",
      notes: ["the import of formatJson was missing"],
      turn: Turn.initial
    },
    {
      stepId: "build",
      attempt: 2,
      state: "Succeeded",
      actor: { kind: "runner", id: "runner-2" },
      startedAt: 3000,
      endedAt: 3062,
      intents: [{ intentId: "i-2", description: "npm run build", state: "Resolved", outcome: "Succeeded", settledBy: null }],
      command: {
        exitCode: 0,
        signal: null,
        durationMs: 60,
        timedOut: false,
        stdoutRef: REF3,
        stderrRef: null,
        outputTail: "built",
        changedPaths: ["dist/status.js", "src/status.ts"]
      },
      fingerprint: null,
      notes: [],
      turn: Turn.initial
    },
    {
      stepId: "test",
      attempt: 1,
      state: "Indeterminate",
      actor: { kind: "runner", id: "runner-1" },
      startedAt: 4000,
      endedAt: 4100,
      intents: [{
        intentId: "i-3",
        description: "npm test",
        state: "Resolved",
        outcome: "Succeeded",
        settledBy: { kind: "user", id: "alice" }
      }],
      command: null,
      fingerprint: null,
      notes: [],
      turn: Turn.initial
    },
    {
      stepId: "test",
      attempt: 2,
      state: "TimedOut",
      actor: { kind: "runner", id: "runner-1" },
      startedAt: 5000,
      endedAt: 5107,
      intents: [
        { intentId: "i-4", description: "npm test", state: "Resolved", outcome: "Failed", settledBy: null },
        { intentId: "i-4b", description: "upload the coverage report", state: "Abandoned", outcome: null, settledBy: null }
      ],
      command: {
        exitCode: null,
        signal: "SIGKILL",
        durationMs: 100,
        timedOut: true,
        stdoutRef: null,
        stderrRef: REF4,
        outputTail: "killed after 100 ms",
        changedPaths: []
      },
      fingerprint: null,
      notes: [],
      turn: Turn.initial
    },
    {
      stepId: "test",
      attempt: 3,
      state: "Succeeded",
      actor: { kind: "runner", id: "runner-1" },
      startedAt: 6000,
      endedAt: 6208,
      intents: [
        { intentId: "i-5", description: "npm test", state: "Resolved", outcome: "Succeeded", settledBy: null },
        { intentId: "i-5b", description: "upload the coverage report", state: "Dispatched", outcome: null, settledBy: null },
        { intentId: "i-5c", description: "notify the channel", state: "Pending", outcome: null, settledBy: null }
      ],
      command: {
        exitCode: 0,
        signal: null,
        durationMs: 200,
        timedOut: false,
        stdoutRef: REF5,
        stderrRef: null,
        outputTail: "Tests 12 passed",
        changedPaths: ["reports/junit.xml"]
      },
      fingerprint: null,
      notes: [],
      turn: Turn.initial
    },
    {
      stepId: "docs",
      attempt: 1,
      state: "Succeeded",
      actor: { kind: "runner", id: "runner-1" },
      startedAt: 7000,
      endedAt: 7101,
      intents: [],
      command: null,
      fingerprint: null,
      notes: ["documented --json under Usage"],
      turn: Turn.initial
    }
  ],
  refs: [
    { lsn: 250, head: "c0ffee1", dirtyPaths: ["src/status.ts"], dirtyDigest: DIRTY1, nextStep: "test" },
    { lsn: 520, head: "c0ffee2", dirtyPaths: ["reports/junit.xml", "src/status.ts"], dirtyDigest: DIRTY2, nextStep: "docs" },
    { lsn: 570, head: "c0ffee3", dirtyPaths: ["docs/guide.md", "src/status.ts"], dirtyDigest: DIRTY3, nextStep: null }
  ],
  workers: [
    { kind: "runner", id: "runner-1" },
    { kind: "runner", id: "runner-2" },
    { kind: "system", id: "ratchet" },
    { kind: "agent", id: "agent-1" }
  ],
  lessons: [],
  usage: { attempts: 6, failedAttempts: 3, commandMs: 400, outputBlobs: 5 }
}

const build = (events: Iterable<EventStore.StoredEvent>, snapshotLsn: number) =>
  EpisodeView.build({ taskId: TASK_ID, branch: "main", snapshotLsn, events })

const unavailable = (result: Either.Either<EpisodeView.EpisodeView, EpisodeView.EpisodeUnavailable>): EpisodeView.EpisodeUnavailable => {
  if (Either.isRight(result)) throw new Error(`expected EpisodeUnavailable, got the episode of ${result.right.runId}`)
  return result.left
}

describe("EpisodeView.build", () => {
  it("folds the run at the snapshot into the view written out by hand", () => {
    expect(episode()).toStrictEqual(expected)
  })

  it("takes the events as any iterable, a generator included", () => {
    const events = history()
    function* once() {
      yield* events
    }
    expect(episode(once())).toStrictEqual(expected)
  })

  it("ignores everything above the snapshot: a longer log at the same LSN gives an equal view", () => {
    const longer = episode([...history(), ...later()])
    expect(longer).toStrictEqual(expected)
    expect(longer).toStrictEqual(episode())
    // The barrier holds facts that would have changed the view: i-5b resolved, a note, test#4, a boundary.
    const test3 = longer.attempts.find((attempt) => attempt.stepId === "test" && attempt.attempt === 3)
    expect(test3?.intents.map((intent) => intent.state)).toEqual(["Resolved", "Dispatched", "Pending"])
    expect(test3?.notes).toEqual([])
    expect(longer.attempts.length).toBe(6)
    expect(longer.refs.map((ref) => ref.lsn)).toEqual([250, 520, 570])
  })

  it("ignores events above the snapshot even when they come first (the read order does not matter for the barrier)", () => {
    expect(episode([...later().slice(0, 4), ...history()])).toStrictEqual(expected)
  })

  it("at a later LSN, takes what was written up to it", () => {
    const at620 = episode([...history(), ...later()], 620)
    expect(at620.snapshotLsn).toBe(620)
    expect(at620.usage).toEqual({ attempts: 7, failedAttempts: 3, commandMs: 400, outputBlobs: 5 })
    expect(at620.attempts.at(-1)).toEqual({
      stepId: "test",
      attempt: 4,
      state: "Pending",
      actor: { kind: "runner", id: "runner-3" },
      startedAt: 8200,
      endedAt: null,
      intents: [],
      command: null,
      fingerprint: null,
      notes: [],
      turn: Turn.initial
    })
    expect(at620.attempts[4]?.intents[1]).toEqual({
      intentId: "i-5b",
      description: "upload the coverage report",
      state: "Resolved",
      outcome: "Succeeded",
      settledBy: null
    })
    expect(at620.attempts[4]?.notes).toEqual(["recovery resolved the upload"])
    expect(at620.refs.map((ref) => [ref.lsn, ref.head])).toEqual([[250, "c0ffee1"], [520, "c0ffee2"], [570, "c0ffee3"], [620, "c0ffee4"]])
    // runner-3 only scheduled test#4: scheduling is not working on it.
    expect(at620.workers).toEqual([runner1, runner2, system, agent1])
  })

  it("at an earlier LSN, shows the run as it was then: attempts still running, fewer boundaries", () => {
    const at430 = episode(history(), 430)
    expect(at430.snapshotLsn).toBe(430)
    expect(at430.attempts.map((attempt) => [attempt.stepId, attempt.attempt, attempt.state, attempt.endedAt])).toEqual([
      ["build", 1, "Failed", 2042],
      ["build", 2, "Succeeded", 3062],
      ["test", 1, "Indeterminate", 4100],
      ["test", 2, "TimedOut", 5107],
      ["test", 3, "Running", null]
    ])
    expect(at430.refs.map((ref) => ref.lsn)).toEqual([250])
    expect(at430.usage).toEqual({ attempts: 5, failedAttempts: 3, commandMs: 200, outputBlobs: 4 })
    expect(at430.workers).toEqual([runner1, runner2, system])
  })

  it("counts a failed attempt only once it ended: one running is not failed", () => {
    const at130 = episode(history(), 130)
    expect(at130.attempts.map((attempt) => attempt.state)).toEqual(["Running"])
    expect(at130.usage).toEqual({ attempts: 1, failedAttempts: 0, commandMs: 40, outputBlobs: 2 })
    expect(at130.attempts[0]?.intents).toEqual([
      { intentId: "i-1", description: "npm run build", state: "Dispatched", outcome: null, settledBy: null }
    ])
  })

  it("after a rerun, holds only the current run: the earlier run's attempts, boundaries and stragglers stay out", () => {
    const view = episode([...history(), ...rerun()], 700)
    expect(view.runId).toBe("run-2")
    expect(view.specDigest).toBe(SPEC2_DIGEST)
    expect(view.planDigest).toBe(PLAN2_DIGEST)
    expect(view.attempts).toEqual([{
      stepId: "build",
      attempt: 1,
      state: "Pending",
      actor: { kind: "runner", id: "runner-3" },
      startedAt: 9080,
      endedAt: null,
      intents: [],
      command: null,
      fingerprint: null,
      notes: [],
      turn: Turn.initial
    }])
    expect(view.refs).toEqual([])
    // Scheduled, never admitted: nobody has worked on run-2 yet.
    expect(view.workers).toEqual([])
    expect(view.usage).toEqual({ attempts: 1, failedAttempts: 0, commandMs: 0, outputBlobs: 0 })
  })

  it("keeps the worker list free of duplicates", () => {
    expect(episode().workers).toHaveLength(4)
    // The settling user and the verifier are not workers: settling an intent is not doing the step.
    expect(episode().workers).not.toContainEqual(alice)
  })

  it("folds an attempt's recorded turn events into its turn region, and counts their reporter as a worker", () => {
    const session: Event.Actor = { kind: "agent", id: "claude-code:s-9" }
    const turn = (lsn: number, tag: Turn.Event["_tag"], runId = "run-1") =>
      [lsn, { _tag: "TurnRecorded", version: 1, actor: session, at: 8100 + lsn, runId, stepId: "test", attempt: 4, turn: { _tag: tag } }] as const
    const events = [
      ...history(),
      ...stored([
        [590, { _tag: "AttemptScheduled", version: 1, actor: verifier1, at: 8100, runId: "run-1", stepId: "test", attempt: 4 }],
        turn(600, "toolUsed"),
        turn(601, "toolRejected"),
        turn(602, "turnStarted"),
        turn(603, "toolFailed"),
        // Another run's turn, and one after the snapshot, are not this view's.
        turn(604, "streamReadCompleted", "run-0"),
        turn(700, "streamReadCompleted")
      ])
    ]
    const attempt = (view: EpisodeView.EpisodeView) => view.attempts.find((a) => a.stepId === "test" && a.attempt === 4)?.turn
    expect(attempt(episode(events, 590))).toEqual(Turn.initial)
    expect(attempt(episode(events, 601))).toEqual({ ...Turn.initial, toolUsed: true, toolRejected: true })
    expect(attempt(episode(events, 699))).toEqual({ ...Turn.initial, toolFailed: true })
    expect(attempt(episode(events, 700))).toEqual({ ...Turn.initial, toolFailed: true, streamReadComplete: true })
    expect(episode(events, 590).workers).not.toContainEqual(session)
    expect(episode(events, 600).workers).toContainEqual(session)
  })

  it("takes as workers whoever moved an attempt, not whoever only scheduled one (a REVISE's successor)", () => {
    const events = [
      ...history(),
      ...stored([
        [590, { _tag: "AttemptScheduled", version: 1, actor: verifier1, at: 8100, runId: "run-1", stepId: "test", attempt: 4 }],
        [600, { _tag: "AttemptTransitioned", version: 1, actor: runner3, at: 8200, runId: "run-1", stepId: "test", attempt: 4, from: "Pending", to: "Running" }]
      ])
    ]
    expect(episode(events, 590).workers).toEqual([runner1, runner2, system, agent1])
    expect(episode(events, 590).attempts.at(-1)?.actor).toEqual(verifier1)
    expect(episode(events, 600).workers).toEqual([runner1, runner2, system, agent1, runner3])
  })

  describe("is deeply frozen", () => {
    const view = episode()
    const attempt = view.attempts[0]!
    const frozen: ReadonlyArray<readonly [string, unknown]> = [
      ["the view", view],
      ["context", view.context],
      ["context.nonGoals", view.context.nonGoals],
      ["context.allowedScope", view.context.allowedScope],
      ["steps", view.steps],
      ["a step", view.steps[1]],
      ["a step's acRefs", view.steps[1]!.acRefs],
      ["attempts", view.attempts],
      ["an attempt", attempt],
      ["an attempt's actor", attempt.actor],
      ["an attempt's intents", attempt.intents],
      ["an intent", attempt.intents[0]],
      ["a settling actor", view.attempts[2]!.intents[0]!.settledBy],
      ["a command", attempt.command],
      ["a command's changedPaths", attempt.command!.changedPaths],
      ["an attempt's notes", attempt.notes],
      ["refs", view.refs],
      ["a ref", view.refs[0]],
      ["a ref's dirtyPaths", view.refs[0]!.dirtyPaths],
      ["workers", view.workers],
      ["a worker", view.workers[0]],
      ["usage", view.usage]
    ]
    it.each(frozen)("%s", (_label, value) => {
      expect(Object.isFrozen(value)).toBe(true)
    })

    it("assigning or pushing throws (test modules are strict)", () => {
      const loose = view as unknown as Record<string, unknown> & {
        attempts: Array<Record<string, unknown>>
        workers: Array<unknown>
        usage: Record<string, number>
        refs: Array<{ dirtyPaths: Array<string> }>
      }
      expect(() => {
        loose["runId"] = "run-9"
      }).toThrow(TypeError)
      expect(() => {
        loose.attempts[0]!["state"] = "Succeeded"
      }).toThrow(TypeError)
      expect(() => {
        loose.workers.push({ kind: "user", id: "mallory" })
      }).toThrow(TypeError)
      expect(() => {
        loose.usage["failedAttempts"] = 0
      }).toThrow(TypeError)
      expect(() => {
        loose.refs[0]!.dirtyPaths.pop()
      }).toThrow(TypeError)
      expect(view).toStrictEqual(expected)
    })

    it("freezes its own values, not the caller's events", () => {
      const events = history()
      episode(events)
      for (const { event } of events) {
        expect(Object.isFrozen(event)).toBe(false)
        expect(Object.isFrozen(event.actor)).toBe(false)
        if (event._tag === "IntentSettled") expect(Object.isFrozen(event.receipt.actor)).toBe(false)
        if (event._tag === "CommandExited") expect(Object.isFrozen(event.changedPaths)).toBe(false)
      }
    })
  })

  describe("is EpisodeUnavailable", () => {
    it("when no run had started at the LSN", () => {
      const error = unavailable(build(history(), 70))
      expect(error._tag).toBe("@ratchet/verifier/EpisodeUnavailable")
      expect(error.taskId).toBe("t-1")
      expect(error.snapshotLsn).toBe(70)
      expect(error.reason).toBe("no run had started at that position.")
      expect(error.message).toBe("No episode of task t-1 at LSN 70: no run had started at that position.")
    })

    it("when the run was reopened away by the LSN", () => {
      expect(unavailable(build([...history(), ...later()], 630)).reason).toBe("no run had started at that position.")
    })

    it("when the task does not exist at the LSN (an empty log, or every event above it)", () => {
      expect(unavailable(build([], 580)).reason).toBe("the task does not exist at that position.")
      expect(unavailable(build(history(), 5)).reason).toBe("the task does not exist at that position.")
    })

    it("when the log does not replay: a second TaskCreated below the LSN", () => {
      const error = unavailable(build([...history(), ...later()], 640))
      expect(error.reason).toBe(
        "the log does not replay: The task history does not fold at event #64 (TaskCreated): the task was already created. The log was written by something other than this kernel or was damaged; restore it from a backup."
      )
    })

    it("when the log does not replay: an event before TaskCreated", () => {
      const events = stored([
        [1, { _tag: "RunStarted", version: 1, actor: runner1, at: 1, runId: "run-1", specDigest: SPEC_DIGEST, planDigest: PLAN_DIGEST, leaseEpoch: 1 }]
      ])
      expect(unavailable(build(events, 10)).reason).toContain("the first event of a task must be TaskCreated")
    })

    it("when the log does not replay: a state change that is no edge of the lifecycle", () => {
      const [created] = history()
      const events = [created!, ...stored([
        [20, { _tag: "RunStarted", version: 1, actor: runner1, at: 1, runId: "run-1", specDigest: SPEC_DIGEST, planDigest: PLAN_DIGEST, leaseEpoch: 1 }]
      ])]
      expect(unavailable(build(events, 20)).reason).toBe(
        "the log does not replay: The task history does not fold at event #2 (RunStarted): INITIALIZING → RUNNING is not an edge of the lifecycle. The log was written by something other than this kernel or was damaged; restore it from a backup."
      )
      // The same broken event above the snapshot is not read at all.
      expect(Either.isLeft(build(events, 10))).toBe(true)
      expect(unavailable(build(events, 10)).reason).toBe("no run had started at that position.")
    })
  })
})

describe("EpisodeView: the lessons shown to the run", () => {
  const shown = (lessonId: string, at: number, overrides: Partial<EpisodeView.Shown> = {}): EpisodeView.Shown => ({
    lessonId,
    runId: "run-1",
    status: "verified",
    via: "hook",
    at,
    stepId: null,
    attempt: null,
    ...overrides
  })
  const withShown = (entries: ReadonlyArray<EpisodeView.Shown>, snapshotLsn = 580) =>
    Either.getOrThrow(EpisodeView.build({ taskId: TASK_ID, branch: "main", snapshotLsn, events: [...history(), ...later()], shown: entries }))

  // The snapshot's last event (VerificationStarted at LSN 580) is at 8000.
  const table: ReadonlyArray<readonly [string, ReadonlyArray<EpisodeView.Shown>, ReadonlyArray<string>]> = [
    ["none shown: an unassisted run", [], []],
    ["one shown while the run went on", [shown("L-a", 2500)], ["L-a@2500"]],
    ["shown at the snapshot's last event: in", [shown("L-a", 8000)], ["L-a@8000"]],
    ["shown after it (a later pass of the run): out", [shown("L-a", 8001)], []],
    ["shown to another run: out", [shown("L-a", 2500, { runId: "run-0" })], []],
    ["shown twice: its first showing, whatever the order", [shown("L-a", 3000, { via: "mcp" }), shown("L-a", 2500)], ["L-a@2500"]],
    ["several: by id", [shown("L-c", 2100), shown("L-a", 2900), shown("L-b", 2200)], ["L-a@2900", "L-b@2200", "L-c@2100"]]
  ]
  it.each(table)("%s", (_, entries, expected) => {
    const view = withShown(entries)
    expect(view.lessons.map((lesson) => `${lesson.lessonId}@${lesson.at}`)).toEqual(expected)
    expect(EpisodeView.assisted(view)).toBe(expected.length > 0)
  })

  it("keeps the status each was shown in, how, and for which step and attempt", () => {
    const view = withShown([shown("L-a", 2500, { status: "enforced", via: "mcp", stepId: "docs", attempt: 1 })])
    expect(view.lessons).toStrictEqual([{ lessonId: "L-a", status: "enforced", via: "mcp", at: 2500, stepId: "docs", attempt: 1 }])
    expect(Object.isFrozen(view.lessons[0])).toBe(true)
  })

  it("a view built again later, with the run's later showings added, is equal", () => {
    const first = withShown([shown("L-a", 2500)])
    const again = withShown([shown("L-a", 2500), shown("L-a", 9000), shown("L-b", 9100)])
    expect(again).toStrictEqual(first)
  })
})

describe("EpisodeView.stepsFor", () => {
  const view = episode()
  it.each([
    ["AC-001", ["build", "test"]],
    ["AC-002", ["test"]],
    ["AC-003", ["docs"]],
    ["AC-999", []],
    ["AC-00", []]
  ])("%s → %j, in plan order", (acId, steps) => {
    expect(EpisodeView.stepsFor(view, acId)).toEqual(steps)
  })
})

describe("EpisodeView.attemptsOf", () => {
  const view = episode()
  it("gives a step's attempts, oldest first", () => {
    expect(EpisodeView.attemptsOf(view, "test").map((attempt) => [attempt.attempt, attempt.state])).toEqual([
      [1, "Indeterminate"],
      [2, "TimedOut"],
      [3, "Succeeded"]
    ])
    expect(EpisodeView.attemptsOf(view, "build").map((attempt) => attempt.attempt)).toEqual([1, 2])
    expect(EpisodeView.attemptsOf(view, "docs").map((attempt) => attempt.attempt)).toEqual([1])
  })

  it("gives none for a step with no attempt or no such step", () => {
    expect(EpisodeView.attemptsOf(view, "deploy")).toEqual([])
  })

  it("orders by attempt number even when a later attempt started earlier", () => {
    const events = history().filter((stored) => stored.lsn <= 80)
    const reordered = [
      ...events,
      ...stored([
        [90, { _tag: "AttemptScheduled", version: 1, actor: runner1, at: 500, runId: "run-1", stepId: "test", attempt: 2 }],
        [100, { _tag: "AttemptScheduled", version: 1, actor: runner1, at: 900, runId: "run-1", stepId: "test", attempt: 1 }]
      ])
    ]
    const view = episode(reordered, 100)
    expect(view.attempts.map((attempt) => attempt.attempt)).toEqual([2, 1])
    expect(EpisodeView.attemptsOf(view, "test").map((attempt) => attempt.attempt)).toEqual([1, 2])
  })
})

describe("EpisodeView.build with an agent's report", () => {
  it("carries what the host reported on its attempt, and nothing on the others", () => {
    const events = history()
    const at = events.findIndex((entry) => entry.event._tag === "CommandExited" && entry.event.intentId === "i-1")
    const report = Events.agentReported("i-1", { runId: "run-1", stepId: "build", attempt: 1 }, { transcriptRef: REF1 }, { actor: runner1, at: 2041 })
    events.splice(at + 1, 0, { ...events[at]!, event: report })
    const view = episode(events)
    expect(view.attempts[0]!.agent).toStrictEqual({
      host: "claude-code",
      sessionId: report.sessionId,
      model: report.model,
      usage: report.usage,
      costUsd: report.costUsd,
      result: report.result,
      transcriptRef: REF1,
      reason: null
    })
    expect(view.attempts.slice(1).every((attempt) => attempt.agent === undefined)).toBe(true)
    // The rest of the view is the same as without it.
    const { agent: _agent, ...rest } = view.attempts[0]!
    expect({ ...view, attempts: [rest, ...view.attempts.slice(1)] }).toStrictEqual(expected)
    expect(Object.isFrozen(view.attempts[0]!.agent)).toBe(true)
  })

  it("leaves out a report of another run", () => {
    const events = history()
    const at = events.findIndex((entry) => entry.event._tag === "CommandExited" && entry.event.intentId === "i-1")
    events.splice(at + 1, 0, { ...events[at]!, event: Events.agentReported("i-1", { runId: "run-0", stepId: "build", attempt: 1 }) })
    expect(episode(events)).toStrictEqual(expected)
  })
})
