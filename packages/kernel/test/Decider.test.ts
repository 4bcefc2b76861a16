/**
 * The task and its run as one decider: commands of either half, facts given as events, each
 * decided against the state the ones before leave, and the state after folded at the positions the
 * store will give the events.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Decider from "../src/Decider.js"
import type * as Event from "../src/Event.js"
import * as Run from "../src/Run.js"
import { cmd, reach } from "./fixtures.js"

const runner: Event.Actor = { kind: "runner", id: "r-1" }
const v = { version: 1 as const, actor: runner, at: 9 }

describe("Decider", () => {
  it("tells the run's commands from the task's, written out", () => {
    for (const tag of ["StartStep", "FinishStep", "DispatchEffect", "RefuseEffect", "ResolveEffect", "EndAttempt", "CloseRun", "RecordTurn", "RecoverAttempt"]) {
      expect(Decider.isRunCommand({ _tag: tag } as unknown as Decider.Command)).toBe(true)
    }
    for (const tag of ["StartRun", "Cancel", "RecordAttemptFailure", "Complete"]) {
      expect(Decider.isRunCommand({ _tag: tag } as unknown as Decider.Command)).toBe(false)
    }
  })

  it("decides a run command, a fact and a task command in one sequence, each against the state before it", () => {
    const { aggregate } = reach("RUNNING")
    const state: Decider.State = { task: aggregate, run: Run.initial }
    const decided = Decider.decideAll(
      [
        { _tag: "StartStep", actor: runner, at: 9, runId: "run-1", stepId: "build", attempt: 1, scheduled: false, effect: { intentId: "i-1", description: "npm run build" } },
        { _tag: "CheckpointRecorded", ...v, kind: "step", runId: "run-1" },
        cmd.pause()
      ],
      state,
      100
    )
    if (Either.isLeft(decided)) throw new Error(decided.left.message)
    expect(decided.right.events.map((event) => event._tag)).toEqual([
      "AttemptScheduled",
      "AttemptTransitioned",
      "IntentRecorded",
      "IntentDispatched",
      "CheckpointRecorded",
      "TaskPaused"
    ])
    // The state after is the fold at the positions the store will give them (100 onwards).
    expect(decided.right.state.run.attempts.get(Run.key("run-1", "build", 1))).toMatchObject({ state: "Running", updatedLsn: 101 })
    expect(decided.right.state.run.intents.get("i-1")).toMatchObject({ state: "Dispatched", updatedLsn: 103 })
    expect(decided.right.state.task._tag === "Task" && decided.right.state.task.state).toBe("PAUSED")
  })

  it("stops at the first refusal, of either half, and returns it", () => {
    const { aggregate } = reach("RUNNING")
    const run = Decider.decideAll([{ _tag: "ResolveEffect", actor: runner, at: 1, runId: "run-1", intentId: "nope", outcome: "Failed", resultRefs: [] }, cmd.pause()], { task: aggregate, run: Run.initial }, 1)
    expect(Either.isLeft(run) && run.left._tag).toBe("@ratchet/kernel/RunCommandRefused")
    const task = Decider.decideAll([cmd.closeBrief()], { task: aggregate, run: Run.initial }, 1)
    expect(Either.isLeft(task) && task.left._tag).toBe("@ratchet/kernel/TaskCommandRefused")
  })

  it("evolve folds an event into both halves", () => {
    const state = Decider.evolve(Decider.initial, { _tag: "AttemptScheduled", ...v, runId: "r", stepId: "s", attempt: 1 }, 4)
    expect(state.task).toBe(Decider.initial.task)
    expect(state.run.attempts.get(Run.key("r", "s", 1))?.updatedLsn).toBe(4)
  })
})
