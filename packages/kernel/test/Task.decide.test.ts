/**
 * The task decider, command by command and state by state.
 *
 * The first table is written by hand: for every command tag and every one of the 15 states, what
 * `decide` must answer — accepted (the state it leads to and the events it emits), refused (the
 * refusal code) or held (the gate's reason codes). Each state is reached through real commands
 * (`reach` in the fixtures), never assembled, and each command is the "right" one for its tag (a
 * receipt bound to the current digest, the current digests for a run, an independent PASS with
 * evidence), so a refusal says the state forbids it, not that the arguments were poor.
 *
 * The scenarios after the table pin the rules the edge table alone cannot express: the forbidden
 * transitions of seed 004 §10 with their reasons, receipts for reopening a FAILED task, the retry
 * budget, pause/resume, invalidation, independent verification and the brief's closure audit.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type * as Digest from "../src/Digest.js"
import * as Event from "../src/Event.js"
import * as Gate from "../src/Gate.js"
import * as Plan from "../src/Plan.js"
import * as Spec from "../src/Spec.js"
import * as Task from "../src/Task.js"
import {
  agent,
  approvePlanNow,
  approveRestatementNow,
  approveSpecNow,
  asTask,
  cmd,
  completeNow,
  type Command,
  drive,
  fakeDigest,
  makePlan,
  makeSpec,
  NOW,
  pass,
  planDigestOf,
  planFor,
  reach,
  reachAll,
  lazily,
  receipt,
  type Run,
  runner,
  SAMPLE_EVENTS,
  specA,
  specB,
  specDigestOf,
  STATES,
  specWith,
  startRunNow,
  system,
  TASK_ID,
  user,
  verifier
} from "./fixtures.js"
import * as Keys from "./keys.js"

type State = Task.State
type Tag = Command["_tag"]
type EventTag = Event.Event["_tag"]

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const refusedOf = (decision: Task.Decision): Task.Refused => {
  if (Either.isRight(decision)) throw new Error(`expected a refusal, got events ${tags(decision.right).join(", ")}`)
  if (decision.left._tag !== "@ratchet/kernel/TaskCommandRefused") {
    throw new Error(`expected a refusal, got a HOLD: ${decision.left.message}`)
  }
  return decision.left
}

const heldOf = (decision: Task.Decision): Task.Held => {
  if (Either.isRight(decision)) throw new Error(`expected a HOLD, got events ${tags(decision.right).join(", ")}`)
  if (decision.left._tag !== "@ratchet/kernel/TaskCommandHeld") {
    throw new Error(`expected a HOLD, got a refusal: ${decision.left.message}`)
  }
  return decision.left
}

const eventsOf = (decision: Task.Decision): ReadonlyArray<Event.Event> => {
  if (Either.isLeft(decision)) throw new Error(`expected events, got ${decision.left.message}`)
  return decision.right
}

const tags = (events: ReadonlyArray<Event.Event>): ReadonlyArray<EventTag> => events.map((event) => event._tag)

const codes = (held: Task.Held): ReadonlyArray<Gate.ReasonCode> => held.gate.reasons.map((reason) => reason.code)

const after = (run: Run, command: Command): Task.Task =>
  asTask(eventsOf(Task.decide(command, run.aggregate)).reduce(Task.evolve, run.aggregate))

const only = <E extends Event.Event["_tag"]>(events: ReadonlyArray<Event.Event>, tag: E): Extract<Event.Event, { _tag: E }> => {
  const found = events.filter((event) => event._tag === tag)
  expect(found).toHaveLength(1)
  return found[0] as Extract<Event.Event, { _tag: E }>
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

type Expected =
  | { readonly kind: "accepted"; readonly state: State; readonly events: ReadonlyArray<EventTag> }
  | { readonly kind: "refused"; readonly code: Task.RefusalCode; readonly special?: true }
  | { readonly kind: "held"; readonly reasons: ReadonlyArray<Gate.ReasonCode> }

const ok = (state: State, ...events: ReadonlyArray<EventTag>): Expected => ({ kind: "accepted", state, events })
const held = (...reasons: ReadonlyArray<Gate.ReasonCode>): Expected => ({ kind: "held", reasons })
/** Refused through the generic "this state does not take that command" path. */
const FT: Expected = { kind: "refused", code: "forbidden_transition" }
/** Refused as forbidden_transition with a reason of its own (asserted in the scenarios below). */
const FTx: Expected = { kind: "refused", code: "forbidden_transition", special: true }
const TS: Expected = { kind: "refused", code: "terminal_state" }
const TP: Expected = { kind: "refused", code: "task_paused" }
const EX: Expected = { kind: "refused", code: "task_exists" }
const CC: Expected = { kind: "refused", code: "contract_change_requires_reopen" }
const UQ: Expected = { kind: "refused", code: "unknown_question" }

/**
 * The command each row sends, built from the task as `reach` left it: receipts by a person on a
 * terminal for the current digest, the current digests for a run, a PASS with evidence by an
 * independent verifier. `ProposeSpec` sends a semantic change (specB) and `ProposePlan` a new
 * method (plan variant 1), so an accepted proposal is visible as events.
 */
const canonical = (tag: Tag, task: Task.Task | null): Command => {
  const specDigest = task?.spec?.digest ?? fakeDigest("a")
  const planDigest = task?.plan?.digest ?? fakeDigest("b")
  switch (tag) {
    case "CreateTask":
      return cmd.createTask()
    case "BeginInterview":
      return cmd.beginInterview()
    case "AskQuestion":
      return cmd.askQuestion("q1", true)
    case "AnswerQuestion":
      return cmd.answerQuestion("q1")
    case "Restate":
      return cmd.restate()
    case "ApproveRestatement":
      return cmd.approveRestatement(
        receipt("restatement", task?.brief.restatement?.digest ?? Task.restatementDigest("Status prints JSON when asked."))
      )
    case "CloseBrief":
      return cmd.closeBrief()
    case "ResumeInterview":
      return cmd.resumeInterview()
    case "ProposeSpec":
      return cmd.proposeSpec(specB)
    case "ApproveSpec":
      return cmd.approveSpec(receipt("spec", specDigest))
    case "RecordPreflight":
      return cmd.recordPreflight()
    case "ProposePlan":
      return cmd.proposePlan(planFor(task?.spec?.spec ?? specA, 1))
    case "ApprovePlan":
      return cmd.approvePlan(receipt("plan", planDigest))
    case "StartRun":
      return cmd.startRun(specDigest, planDigest)
    case "RecordAttemptFailure":
      return cmd.recordAttemptFailure("fp-new")
    case "EnterVerification":
      return cmd.enterVerification()
    case "Complete":
      return cmd.complete([pass("AC-001", specDigest)])
    case "Block":
      return cmd.block()
    case "Unblock":
      return cmd.unblock("RUNNING")
    case "Fail":
      return cmd.fail()
    case "Reopen":
      return cmd.reopen(null)
    case "Pause":
      return cmd.pause()
    case "Resume":
      return cmd.resume()
    case "Cancel":
      return cmd.cancel()
  }
}

// Columns, in the order of STATES:
// INITIALIZING INTERVIEWING SPEC_READY SPEC_APPROVED PREFLIGHT PLAN_READY PLAN_APPROVED RUNNING
// VERIFYING COMPLETED REOPENED PAUSED(from RUNNING) BLOCKED FAILED CANCELLED
// prettier-ignore
const TABLE: Record<Tag, readonly [Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected, Expected]> = {
  //                  IN                                  IV                                    SR                                   SA                                   PF                                   PR                                                     PA                                                     RU                                                VE                                     CO  RE                                  PS                                  BL                                  FA                                  CA
  CreateTask:         [EX,                                 EX,                                    EX,                                  EX,                                  EX,                                  EX,                                                    EX,                                                    EX,                                               EX,                                    EX, EX,                                 EX,                                 EX,                                 EX,                                 EX],
  BeginInterview:     [ok("INTERVIEWING", "InterviewBegun"), FT,                                  FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  AskQuestion:        [FT,                                 ok("INTERVIEWING", "QuestionAsked"),   FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  AnswerQuestion:     [FT,                                 UQ,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  Restate:            [FT,                                 ok("INTERVIEWING", "RestatementProposed"), FT,                              FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  ApproveRestatement: [FT,                                 FTx,                                   FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  CloseBrief:         [FT,                                 held("restatement_missing"),           FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  ResumeInterview:    [FT,                                 FT,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, ok("INTERVIEWING", "InterviewResumed"), TP,                             FT,                                 FT,                                 TS],
  ProposeSpec:        [FT,                                 held("brief_not_closed"),              ok("SPEC_READY", "SpecProposed"),    ok("SPEC_READY", "SpecProposed"),    ok("SPEC_READY", "SpecProposed"),    ok("SPEC_READY", "SpecProposed", "PlanMarkedStale"),   ok("SPEC_READY", "SpecProposed", "PlanMarkedStale"),   CC,                                               CC,                                    TS, ok("SPEC_READY", "SpecProposed", "PlanMarkedStale"), TP,                                 CC,                                 CC,                                 TS],
  ApproveSpec:        [FT,                                 FT,                                    ok("SPEC_APPROVED", "SpecApproved"), FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  RecordPreflight:    [FT,                                 FT,                                    FT,                                  ok("PREFLIGHT", "PreflightRecorded"), ok("PREFLIGHT", "PreflightRecorded"), FT,                                              FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  ProposePlan:        [FT,                                 FT,                                    FT,                                  FT,                                  ok("PLAN_READY", "PlanProposed"),    ok("PLAN_READY", "PlanProposed"),                      ok("PLAN_READY", "PlanProposed"),                      FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  ApprovePlan:        [FT,                                 FT,                                    FT,                                  FT,                                  FT,                                  ok("PLAN_APPROVED", "PlanApproved"),                   FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  StartRun:           [FT,                                 FTx,                                   FTx,                                 FT,                                  FT,                                  FT,                                                    ok("RUNNING", "RunStarted"),                           FT,                                               FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  RecordAttemptFailure:[FT,                                FT,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    ok("RUNNING", "AttemptFailed", "SuccessorGranted"), FT,                                  TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  EnterVerification:  [FT,                                 FT,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    ok("VERIFYING", "VerificationStarted"),           FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  Complete:           [FT,                                 FT,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               ok("COMPLETED", "TaskCompleted"),      TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  Block:              [FT,                                 FT,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    ok("BLOCKED", "TaskBlocked"),                     ok("BLOCKED", "TaskBlocked"),          TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  Unblock:            [FT,                                 FT,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FT,                                 TP,                                 ok("RUNNING", "TaskUnblocked"),     FT,                                 TS],
  Fail:               [FT,                                 FT,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    ok("FAILED", "TaskFailed"),                       ok("FAILED", "TaskFailed"),            TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  Reopen:             [FT,                                 FT,                                    FT,                                  FT,                                  ok("REOPENED", "TaskReopened"),      FT,                                                    FT,                                                    ok("REOPENED", "TaskReopened"),                   ok("REOPENED", "TaskReopened"),        TS, FT,                                 TP,                                 ok("REOPENED", "TaskReopened"),     held("receipt_required"),           TS],
  Pause:              [FT,                                 ok("PAUSED", "TaskPaused"),            FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    ok("PAUSED", "TaskPaused"),                       FT,                                    TS, FT,                                 TP,                                 FT,                                 FT,                                 TS],
  Resume:             [FT,                                 FT,                                    FT,                                  FT,                                  FT,                                  FT,                                                    FT,                                                    FT,                                               FT,                                    TS, FTx,                                ok("RUNNING", "TaskResumed"),       FTx,                                FT,                                 TS],
  Cancel:             [ok("CANCELLED", "TaskCancelled"),   ok("CANCELLED", "TaskCancelled"),      ok("CANCELLED", "TaskCancelled"),    ok("CANCELLED", "TaskCancelled"),    ok("CANCELLED", "TaskCancelled"),    ok("CANCELLED", "TaskCancelled"),                      ok("CANCELLED", "TaskCancelled"),                      ok("CANCELLED", "TaskCancelled"),                 ok("CANCELLED", "TaskCancelled"),      TS, ok("CANCELLED", "TaskCancelled"),   ok("CANCELLED", "TaskCancelled"),   ok("CANCELLED", "TaskCancelled"),   ok("CANCELLED", "TaskCancelled"),   TS]
}

/** What the generic refusal says the command needs: the state(s) it is taken in. */
const NEEDS: Record<Tag, string> = {
  CreateTask: "(never refused generically)",
  BeginInterview: "the interview begins once, from INITIALIZING",
  AskQuestion: "questions are asked while INTERVIEWING",
  AnswerQuestion: "questions are answered while INTERVIEWING",
  Restate: "the goal is restated while INTERVIEWING",
  ApproveRestatement: "a restatement is approved while INTERVIEWING",
  CloseBrief: "the brief is closed while INTERVIEWING",
  ResumeInterview: "the interview resumes from REOPENED",
  ProposeSpec: "a spec is proposed after the brief is closed",
  ApproveSpec: "a spec is approved from SPEC_READY",
  RecordPreflight: "preflight inspects the repository after the spec is approved",
  ProposePlan: "a plan is proposed after preflight of the approved spec",
  ApprovePlan: "a plan is approved from PLAN_READY",
  StartRun: "a run starts from PLAN_APPROVED",
  RecordAttemptFailure: "attempt failures are recorded while RUNNING",
  EnterVerification: "verification is entered from RUNNING",
  Complete: "only VERIFYING → COMPLETED, through the completion gate, completes a task",
  Block: "a task blocks while RUNNING or VERIFYING",
  Unblock: "only a BLOCKED task is unblocked",
  Fail: "a task fails only from RUNNING or VERIFYING, when its run cannot be recovered",
  Reopen:
    "a task reopens from PREFLIGHT, RUNNING, VERIFYING, BLOCKED or (with a receipt) FAILED; before that, revise the spec instead",
  Pause: "a task pauses from INTERVIEWING or RUNNING",
  Resume: "only a PAUSED task resumes",
  Cancel: "(a terminal task is refused as terminal)"
}

/** `Task.nextStep` for the states `reach` produces, written out. */
const NEXT: Record<State, string> = {
  INITIALIZING: "Begin the interview: ratchet task create finishes setup, or run ratchet status t-1.",
  INTERVIEWING: "Finish the brief, then close it: ratchet brief t-1 close",
  SPEC_READY: "Approve the spec: ratchet approve t-1 spec",
  SPEC_APPROVED: "Inspect the repository: ratchet preflight t-1",
  PREFLIGHT: "Propose the plan: ratchet plan t-1 --file plan.yaml",
  PLAN_READY: "Approve the plan: ratchet approve t-1 plan",
  PLAN_APPROVED: "Start the run: ratchet run t-1",
  RUNNING: "Let the run finish its steps: ratchet run t-1",
  VERIFYING: "Verify the acceptance criteria: ratchet verify t-1",
  COMPLETED: "Nothing: the task is terminal. Create a new task to do more.",
  REOPENED: "Revise the spec (ratchet spec t-1 --file spec.md) or resume the interview (ratchet resume t-1).",
  PAUSED: "Resume the task: ratchet resume t-1",
  BLOCKED: "Resolve the blocker, then: ratchet unblock t-1 --to RUNNING|VERIFYING, or ratchet reopen t-1 --reason \"…\"",
  FAILED: "Reopen with a receipt: ratchet reopen t-1 --reason \"…\" (needs your confirmation on a terminal)",
  CANCELLED: "Nothing: the task is terminal. Create a new task to do more."
}

const REACHED = reachAll()

const TAGS = Object.keys(TABLE) as ReadonlyArray<Tag>

const CELLS = TAGS.flatMap((tag) => STATES.map((state, column) => ({ tag, state, expected: TABLE[tag][column]! })))

describe("Task.decide: every command in every state (hand-written table)", () => {
  it("covers the 24 command tags", () => {
    expect(TAGS).toHaveLength(24)
    expect(CELLS).toHaveLength(24 * 15)
  })

  it.each(CELLS)("$tag in $state", ({ expected, state, tag }) => {
    const { aggregate, task } = REACHED[state]
    const command = canonical(tag, task)
    const decision = Task.decide(command, aggregate)
    switch (expected.kind) {
      case "accepted": {
        const events = eventsOf(decision)
        expect(tags(events)).toEqual(expected.events)
        for (const event of events) {
          expect(event.version).toBe(Event.catalogue[event._tag])
          expect(event.actor).toEqual(command.actor)
          expect(event.at).toBe(command.at)
        }
        const next = asTask(events.reduce(Task.evolve, aggregate))
        expect(next.state).toBe(expected.state)
        expect(next.version).toBe(task.version + events.length)
        if (next.state !== state) expect(Task.isEdge(state, next.state)).toBe(true)
        return
      }
      case "held": {
        const hold = heldOf(decision)
        expect(codes(hold)).toEqual(expected.reasons)
        expect(hold.command).toBe(tag)
        expect(hold.gate.decision).toBe("HOLD")
        expect(hold.gate.from).toBe(state)
        expect(hold.gate.boundTo.taskVersion).toBe(task.version)
        return
      }
      case "refused": {
        const refusal = refusedOf(decision)
        expect(refusal.code).toBe(expected.code)
        expect(refusal.command).toBe(tag)
        expect(refusal.state).toBe(state)
        expect(refusal.message).toBe(`${tag} refused in ${state}: ${refusal.reason} ${refusal.action}`)
        if (expected.special === true) return
        switch (expected.code) {
          case "forbidden_transition":
            expect(refusal.reason).toBe(`${NEEDS[tag]}.`)
            expect(refusal.action).toBe(NEXT[state])
            return
          case "task_paused":
            expect(refusal.reason).toBe(`the task is paused (from RUNNING); ${NEEDS[tag]}.`)
            expect(refusal.action).toBe("Resume it first: ratchet resume t-1")
            return
          case "terminal_state":
            expect(refusal.reason).toBe(
              state === "CANCELLED" ? "a cancelled task is terminal and is never reopened." : "a completed task is terminal."
            )
            expect(refusal.action).toBe("Create a new task to do this work again: ratchet task create --goal \"…\"")
            return
          case "task_exists":
            expect(refusal.reason).toBe("task t-1 already exists.")
            expect(refusal.action).toBe("Read it with: ratchet status t-1")
            return
          case "contract_change_requires_reopen":
            expect(refusal.reason).toBe("the contract cannot change under a run.")
            expect(refusal.action).toBe("Reopen the task first: ratchet reopen t-1 --reason \"<what changes>\"")
            return
          case "unknown_question":
            expect(refusal.reason).toBe("question q1 was never asked on task t-1.")
            expect(refusal.action).toBe("See the open questions with: ratchet status t-1")
            return
          default:
            throw new Error(`no message check for ${expected.code}`)
        }
      }
    }
  })

  it.each(TAGS)("%s on a task that does not exist", (tag) => {
    const decision = Task.decide(canonical(tag, null), Task.initial)
    if (tag === "CreateTask") {
      const events = eventsOf(decision)
      expect(events).toEqual([
        {
          _tag: "TaskCreated",
          version: 1,
          actor: user,
          at: NOW,
          taskId: "t-1",
          projectId: "p-1",
          goal: "Add a --json flag",
          slug: "json-flag"
        }
      ])
      const task = asTask(events.reduce(Task.evolve, Task.initial))
      expect(task).toEqual({
        _tag: "Task",
        version: 1,
        taskId: "t-1",
        projectId: "p-1",
        goal: "Add a --json flag",
        slug: "json-flag",
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
      })
      return
    }
    const refusal = refusedOf(decision)
    expect(refusal.code).toBe("task_not_found")
    expect(refusal.state).toBeNull()
    expect(refusal.reason).toBe("the task does not exist.")
    expect(refusal.action).toBe("List tasks with: ratchet task list")
    expect(refusal.message).toBe(`${tag} refused: the task does not exist. List tasks with: ratchet task list`)
  })
})

describe("Task.nextStep", () => {
  it.each(STATES)("in %s names the next ratchet command", (state) => {
    expect(Task.nextStep(REACHED[state].task)).toBe(NEXT[state])
  })

  it("asks for the spec once the brief is closed", () => {
    const closed = drive([cmd.restate(), approveRestatementNow, cmd.closeBrief()], REACHED.INTERVIEWING)
    expect(Task.nextStep(asTask(closed.aggregate))).toBe("Propose the spec: ratchet spec t-1 --file spec.md")
  })
})

// ---------------------------------------------------------------------------------------------
// Forbidden transitions (seed 004, §10)
// ---------------------------------------------------------------------------------------------

describe("forbidden transitions, each with its reason", () => {
  it("INTERVIEWING → RUNNING is refused as forbidden_transition", () => {
    const { aggregate } = REACHED.INTERVIEWING
    const refusal = refusedOf(Task.decide(cmd.startRun(fakeDigest("a"), fakeDigest("b")), aggregate))
    expect(refusal.code).toBe("forbidden_transition")
    expect(refusal.reason).toBe(
      "INTERVIEWING → RUNNING skips the approved contract and plan; nothing runs before both are approved."
    )
    expect(refusal.action).toBe(NEXT.INTERVIEWING)
  })

  it("SPEC_READY → RUNNING is refused as forbidden_transition, even with the current spec digest", () => {
    const { aggregate, task } = REACHED.SPEC_READY
    const refusal = refusedOf(Task.decide(cmd.startRun(specDigestOf(task), fakeDigest("b")), aggregate))
    expect(refusal.code).toBe("forbidden_transition")
    expect(refusal.reason).toBe(
      "SPEC_READY → RUNNING skips the approved contract and plan; nothing runs before both are approved."
    )
    expect(refusal.action).toBe(NEXT.SPEC_READY)
  })

  it("PLAN_APPROVED → RUNNING with a stale spec digest is held as stale_digest", () => {
    const { aggregate, task } = REACHED.PLAN_APPROVED
    const hold = heldOf(Task.decide(cmd.startRun(Spec.digest(specB), planDigestOf(task)), aggregate))
    expect(codes(hold)).toEqual(["stale_digest"])
    expect(hold.gate.kind).toBe("run_start")
    expect(hold.gate.to).toBe("RUNNING")
    expect(hold.gate.requiredActions).toEqual([
      { description: "Read the task again and start the run against the current digests", command: "ratchet status t-1" }
    ])
  })

  it("PLAN_APPROVED → RUNNING with a stale plan digest is held as stale_digest", () => {
    const { aggregate, task } = REACHED.PLAN_APPROVED
    const hold = heldOf(Task.decide(cmd.startRun(specDigestOf(task), planFor(specA, 7).specDigest), aggregate))
    expect(codes(hold)).toEqual(["stale_digest"])
  })

  it("PLAN_APPROVED → RUNNING with the digests read before a re-approval is held as stale_digest", () => {
    const old = REACHED.PLAN_APPROVED
    const oldSpec = specDigestOf(old.task)
    const oldPlan = planDigestOf(old.task)
    const reapproved = drive(
      [cmd.proposeSpec(specB), approveSpecNow, cmd.recordPreflight(), cmd.proposePlan(planFor(specB)), approvePlanNow],
      old
    )
    expect(asTask(reapproved.aggregate).state).toBe("PLAN_APPROVED")
    const hold = heldOf(Task.decide(cmd.startRun(oldSpec, oldPlan), reapproved.aggregate))
    expect(codes(hold)).toEqual(["stale_digest"])
    expect(eventsOf(Task.decide(startRunNow(asTask(reapproved.aggregate)), reapproved.aggregate))).toHaveLength(1)
  })

  it("PLAN_APPROVED → RUNNING without the writer lease is held as lease_required", () => {
    const { aggregate, task } = REACHED.PLAN_APPROVED
    const hold = heldOf(
      Task.decide(cmd.startRun(specDigestOf(task), planDigestOf(task), { held: false, epoch: 3 }), aggregate)
    )
    expect(codes(hold)).toEqual(["lease_required"])
  })

  it("PLAN_APPROVED → RUNNING without an allowed scope in the spec is held as scope_undefined", () => {
    const unscoped = specWith({ allowedScope: [] })
    const { aggregate, task } = reach("PLAN_APPROVED", { spec: unscoped })
    const hold = heldOf(Task.decide(startRunNow(task), aggregate))
    expect(codes(hold)).toEqual(["scope_undefined"])
  })

  it("a run records the digests it started against and the lease epoch", () => {
    const { aggregate, task } = REACHED.PLAN_APPROVED
    const events = eventsOf(
      Task.decide(cmd.startRun(specDigestOf(task), planDigestOf(task), { held: true, epoch: 7 }), aggregate)
    )
    const started = only(events, "RunStarted")
    expect(started).toMatchObject({
      runId: "run-1",
      specDigest: specDigestOf(task),
      planDigest: planDigestOf(task),
      leaseEpoch: 7
    })
    expect(asTask(events.reduce(Task.evolve, aggregate)).run).toEqual({
      runId: "run-1",
      specDigest: specDigestOf(task),
      planDigest: planDigestOf(task),
      leaseEpoch: 7
    })
  })

  it("VERIFYING → COMPLETED without evidence is held as missing_evidence", () => {
    const { aggregate } = REACHED.VERIFYING
    const hold = heldOf(Task.decide(cmd.complete([]), aggregate))
    expect(codes(hold)).toEqual(["missing_evidence"])
    expect(hold.gate.reasons[0]!.message).toBe("AC-001 has no verdict.")
    expect(hold.gate.requiredActions).toEqual([{ description: "Verify AC-001", command: "ratchet verify t-1 --ac AC-001" }])
    expect(hold.message).toBe("Complete is on HOLD: AC-001 has no verdict.")
  })

  it("continuing after the retry budget is spent is held as retry_budget_spent", () => {
    const blocked = drive(
      [cmd.recordAttemptFailure("fp-1"), cmd.recordAttemptFailure("fp-2"), cmd.recordAttemptFailure("fp-3")],
      reach("RUNNING", { spec: specWith({ maxSuccessors: 2 }) })
    )
    const task = asTask(blocked.aggregate)
    expect(task.state).toBe("BLOCKED")
    expect(task.blockers.map((blocker) => blocker.category)).toEqual(["retry_budget_spent"])
    const hold = heldOf(Task.decide(cmd.unblock("RUNNING"), blocked.aggregate))
    expect(codes(hold)).toEqual(["retry_budget_spent"])
    expect(hold.gate.requiredActions).toEqual([
      {
        description: "Reopen the task and change the contract or the plan",
        command: "ratchet reopen t-1 --reason \"<what must change>\""
      }
    ])
    // The way on is a reopen, which the block allows.
    expect(after(blocked, cmd.reopen()).state).toBe("REOPENED")
  })
})

// ---------------------------------------------------------------------------------------------
// FAILED, CANCELLED and reopening
// ---------------------------------------------------------------------------------------------

describe("FAILED → REOPENED needs a person's receipt on a terminal for the current spec", () => {
  const failed = REACHED.FAILED
  const digest = (): Digest.Digest => specDigestOf(failed.task)

  it("without a receipt: HOLD receipt_required", () => {
    const hold = heldOf(Task.decide(cmd.reopen(null), failed.aggregate))
    expect(codes(hold)).toEqual(["receipt_required"])
    expect(hold.gate.kind).toBe("reopen")
    expect(hold.gate.to).toBe("REOPENED")
    expect(hold.gate.requiredActions).toEqual([
      { description: "A person approves the reopen on an interactive terminal", command: "ratchet reopen t-1 --reason \"<why>\"" }
    ])
  })

  it("with an agent's receipt: HOLD approval_requires_user", () => {
    const hold = heldOf(Task.decide(cmd.reopen(receipt("reopen", digest(), { actor: agent })), failed.aggregate))
    // Signed with a person's key, the receipt still names an agent: it is not that person's act.
    expect(codes(hold)).toEqual(["approval_requires_user", "signature_invalid"])
  })

  it("with a receipt that did not come from a terminal: HOLD approval_requires_terminal", () => {
    const hold = heldOf(Task.decide(cmd.reopen(receipt("reopen", digest(), { channel: "stdin" })), failed.aggregate))
    expect(codes(hold)).toEqual(["approval_requires_terminal"])
  })

  it("with a receipt for another digest: HOLD stale_digest", () => {
    const hold = heldOf(Task.decide(cmd.reopen(receipt("reopen", Spec.digest(specB))), failed.aggregate))
    expect(codes(hold)).toEqual(["stale_digest"])
  })

  it("with a receipt for another subject: HOLD receipt_wrong_subject", () => {
    const hold = heldOf(Task.decide(cmd.reopen(receipt("spec", digest(), {}, { revision: null })), failed.aggregate))
    expect(codes(hold)).toEqual(["receipt_wrong_subject"])
  })

  it("with a valid receipt: accepted, the receipt is recorded, and both exits of REOPENED open", () => {
    const valid = receipt("reopen", digest())
    const events = eventsOf(Task.decide(cmd.reopen(valid, "the branch was lost"), failed.aggregate))
    expect(events).toEqual([
      { _tag: "TaskReopened", version: 2, actor: user, at: NOW, from: "FAILED", reason: "the branch was lost", receipt: valid }
    ])
    const reopened = { aggregate: events.reduce(Task.evolve, failed.aggregate), events: [...failed.events, ...events] }
    const task = asTask(reopened.aggregate)
    expect(task.state).toBe("REOPENED")
    expect(task.run).toBeNull()
    expect(after(reopened, cmd.resumeInterview()).state).toBe("INTERVIEWING")
    expect(after(reopened, cmd.proposeSpec(specA)).state).toBe("SPEC_READY")
  })

  it("a reopen from RUNNING needs no receipt and records none", () => {
    const events = eventsOf(Task.decide(cmd.reopen(null), REACHED.RUNNING.aggregate))
    expect(events).toEqual([
      { _tag: "TaskReopened", version: 2, actor: user, at: NOW, from: "RUNNING", reason: "the contract was wrong" }
    ])
    expect("receipt" in events[0]!).toBe(false)
  })

  it("a hand-folded FAILED task without a spec cannot be reopened", () => {
    const created = Event.make<Extract<Event.Event, { _tag: "TaskCreated" }>>({
      _tag: "TaskCreated",
      actor: user,
      at: 1,
      taskId: TASK_ID,
      projectId: "p-1",
      goal: "g",
      slug: "s"
    })
    const failedEvent = Event.make<Extract<Event.Event, { _tag: "TaskFailed" }>>({
      _tag: "TaskFailed",
      actor: system,
      at: 2,
      from: "RUNNING",
      reason: "lost",
      evidenceRefs: []
    })
    const aggregate = Task.fold([created, failedEvent])
    const refusal = refusedOf(Task.decide(cmd.reopen(null), aggregate))
    expect(refusal.code).toBe("forbidden_transition")
    expect(refusal.reason).toBe("a failed task without a spec cannot be reopened.")
  })
})

describe("CANCELLED is terminal and never reopens", () => {
  it("a reopen with a valid receipt is refused as terminal_state", () => {
    const { aggregate, task } = REACHED.CANCELLED
    const refusal = refusedOf(Task.decide(cmd.reopen(receipt("reopen", specDigestOf(task))), aggregate))
    expect(refusal.code).toBe("terminal_state")
    expect(refusal.reason).toBe("a cancelled task is terminal and is never reopened.")
    expect(refusal.message).toContain("ratchet task create")
  })

  it("a cancel records the state it cancelled from; cancelling again is refused", () => {
    const events = eventsOf(Task.decide(cmd.cancel(), REACHED.PAUSED.aggregate))
    expect(events).toEqual([
      { _tag: "TaskCancelled", version: 1, actor: user, at: NOW, from: "PAUSED", reason: "no longer needed" }
    ])
    expect(refusedOf(Task.decide(cmd.cancel(), REACHED.CANCELLED.aggregate)).code).toBe("terminal_state")
    expect(refusedOf(Task.decide(cmd.cancel(), REACHED.COMPLETED.aggregate)).reason).toBe("a completed task is terminal.")
  })
})

// ---------------------------------------------------------------------------------------------
// Attempt failures and the retry budget
// ---------------------------------------------------------------------------------------------

describe("an attempt's FAIL is not a task FAILED", () => {
  const failures = (
    spec: Spec.Spec,
    fingerprints: ReadonlyArray<string>
  ): { readonly run: Run; readonly decided: ReadonlyArray<ReadonlyArray<Event.Event>> } => {
    let run: Run = reach("RUNNING", { spec })
    const decided: Array<ReadonlyArray<Event.Event>> = []
    for (const [index, fingerprint] of fingerprints.entries()) {
      const events = eventsOf(Task.decide(cmd.recordAttemptFailure(fingerprint, true, "build", index + 1), run.aggregate))
      decided.push(events)
      run = { aggregate: events.reduce(Task.evolve, run.aggregate), events: [...run.events, ...events] }
    }
    return { run, decided }
  }

  it("a failure with progress and budget left earns a successor and stays RUNNING", () => {
    const { aggregate, task } = REACHED.RUNNING
    const events = eventsOf(Task.decide(cmd.recordAttemptFailure("fp-1", true, "build", 1), aggregate))
    expect(events).toEqual([
      {
        _tag: "AttemptFailed",
        version: 1,
        actor: runner,
        at: NOW,
        runId: "run-1",
        stepId: "build",
        attempt: 1,
        fingerprint: "fp-1",
        progressed: true
      },
      {
        _tag: "SuccessorGranted",
        version: 1,
        actor: runner,
        at: NOW,
        runId: "run-1",
        stepId: "build",
        successorsUsed: 1,
        successorBudget: 5
      }
    ])
    const next = asTask(events.reduce(Task.evolve, aggregate))
    expect(next.state).toBe("RUNNING")
    expect(next.successorsUsed).toBe(1)
    expect(next.failureFingerprints).toEqual(["fp-1"])
    expect(task.successorsUsed).toBe(0)
  })

  it.each([
    { label: "no retry policy (the cap, 5)", spec: specWith() },
    { label: "maxSuccessors 5", spec: specWith({ maxSuccessors: 5 }) }
  ])("with $label: five successors, then the sixth failure blocks as retry_budget_spent", ({ spec }) => {
    const { decided, run } = failures(spec, ["fp-1", "fp-2", "fp-3", "fp-4", "fp-5", "fp-6"])
    for (const [index, events] of decided.slice(0, 5).entries()) {
      expect(tags(events)).toEqual(["AttemptFailed", "SuccessorGranted"])
      expect(only(events, "SuccessorGranted")).toMatchObject({ successorsUsed: index + 1, successorBudget: 5 })
    }
    const last = decided[5]!
    expect(tags(last)).toEqual(["AttemptFailed", "TaskBlocked"])
    expect(only(last, "TaskBlocked")).toMatchObject({
      from: "RUNNING",
      blocker: {
        category: "retry_budget_spent",
        owner: "user",
        requiredAction:
          "All 5 successor attempts are spent; change the plan or the contract (ratchet reopen t-1).",
        lastEvidence: ["fp-6"]
      }
    })
    expect(asTask(run.aggregate).state).toBe("BLOCKED")
    expect(decided.flat().some((event) => event._tag === "TaskFailed")).toBe(false)
  })

  it("with maxSuccessors 2: the third failure blocks as retry_budget_spent", () => {
    const { decided, run } = failures(specWith({ maxSuccessors: 2 }), ["fp-1", "fp-2", "fp-3"])
    expect(decided.map(tags)).toEqual([
      ["AttemptFailed", "SuccessorGranted"],
      ["AttemptFailed", "SuccessorGranted"],
      ["AttemptFailed", "TaskBlocked"]
    ])
    expect(only(decided[1]!, "SuccessorGranted")).toMatchObject({ successorsUsed: 2, successorBudget: 2 })
    expect(only(decided[2]!, "TaskBlocked").blocker.requiredAction).toBe(
      "All 2 successor attempts are spent; change the plan or the contract (ratchet reopen t-1)."
    )
    expect(asTask(run.aggregate).state).toBe("BLOCKED")
  })

  it("with maxSuccessors 0: the first failure blocks", () => {
    const { decided } = failures(specWith({ maxSuccessors: 0 }), ["fp-1"])
    expect(only(decided[0]!, "TaskBlocked").blocker.category).toBe("retry_budget_spent")
  })

  it("a repeated fingerprint blocks as repeated_failure, whatever the budget", () => {
    const { decided, run } = failures(specA, ["fp-1", "fp-1"])
    expect(tags(decided[1]!)).toEqual(["AttemptFailed", "TaskBlocked"])
    expect(only(decided[1]!, "TaskBlocked").blocker).toEqual({
      category: "repeated_failure",
      owner: "user",
      requiredAction: "Step build failed the same way again; change the plan or the contract (ratchet reopen t-1).",
      lastEvidence: ["fp-1"]
    })
    expect(asTask(run.aggregate).state).toBe("BLOCKED")
    expect(codes(heldOf(Task.decide(cmd.unblock("RUNNING"), run.aggregate)))).toEqual(["retry_budget_spent"])
  })

  it("a failure without progress blocks as no_progress", () => {
    const events = eventsOf(Task.decide(cmd.recordAttemptFailure("fp-1", false), REACHED.RUNNING.aggregate))
    expect(tags(events)).toEqual(["AttemptFailed", "TaskBlocked"])
    expect(only(events, "TaskBlocked").blocker).toEqual({
      category: "no_progress",
      owner: "user",
      requiredAction: "Step build made no progress; change the plan or the contract (ratchet reopen t-1).",
      lastEvidence: ["fp-1"]
    })
    const blocked = { aggregate: events.reduce(Task.evolve, REACHED.RUNNING.aggregate), events }
    expect(codes(heldOf(Task.decide(cmd.unblock("RUNNING"), blocked.aggregate)))).toEqual(["retry_budget_spent"])
  })

  it("a repeated fingerprint wins over no progress, and no progress over a spent budget", () => {
    const once = failures(specWith({ maxSuccessors: 1 }), ["fp-1"]).run
    expect(only(eventsOf(Task.decide(cmd.recordAttemptFailure("fp-1", false), once.aggregate)), "TaskBlocked").blocker.category)
      .toBe("repeated_failure")
    expect(only(eventsOf(Task.decide(cmd.recordAttemptFailure("fp-2", false), once.aggregate)), "TaskBlocked").blocker.category)
      .toBe("no_progress")
    expect(only(eventsOf(Task.decide(cmd.recordAttemptFailure("fp-2", true), once.aggregate)), "TaskBlocked").blocker.category)
      .toBe("retry_budget_spent")
  })

  it("a failure of a step the plan does not have is refused as unknown_step", () => {
    const refusal = refusedOf(Task.decide(cmd.recordAttemptFailure("fp-1", true, "deploy"), REACHED.RUNNING.aggregate))
    expect(refusal.code).toBe("unknown_step")
    expect(refusal.reason).toBe("step \"deploy\" is not in the approved plan.")
    expect(refusal.action).toBe("See the plan's steps with: ratchet status t-1")
  })

  it("the budget is per task: a reopen and a new run do not refill it", () => {
    const spent = failures(specWith({ maxSuccessors: 1 }), ["fp-1", "fp-2"]).run
    expect(asTask(spent.aggregate).state).toBe("BLOCKED")
    const rerun = drive(
      [cmd.reopen(), cmd.proposeSpec(specWith({ maxSuccessors: 1 })), approveSpecNow, cmd.recordPreflight(), cmd.proposePlan(planFor(specWith({ maxSuccessors: 1 }), 2)), approvePlanNow, startRunNow],
      spent
    )
    expect(asTask(rerun.aggregate).state).toBe("RUNNING")
    const events = eventsOf(Task.decide(cmd.recordAttemptFailure("fp-9"), rerun.aggregate))
    expect(only(events, "TaskBlocked").blocker.category).toBe("retry_budget_spent")
  })

  it("a block for another reason unblocks to RUNNING", () => {
    const events = eventsOf(Task.decide(cmd.unblock("RUNNING"), REACHED.BLOCKED.aggregate))
    expect(events).toEqual([
      { _tag: "TaskUnblocked", version: 2, actor: user, at: NOW, to: "RUNNING", resolution: "the dependency is installed", receipt: null }
    ])
    const next = asTask(events.reduce(Task.evolve, REACHED.BLOCKED.aggregate))
    expect(next.state).toBe("RUNNING")
    expect(next.blockers).toEqual([])
  })
})

describe("BLOCKED → VERIFYING only for evidence or a dependency, without a code change", () => {
  const blockedInVerification = lazily(() => {
    const run = drive([cmd.block("missing_evidence")], REACHED.VERIFYING)
    return { ...run, task: asTask(run.aggregate) }
  })

  it("records the blocker and the state it blocked from", () => {
    const task = asTask(blockedInVerification.aggregate)
    expect(task.state).toBe("BLOCKED")
    expect(task.blockers).toEqual([
      { category: "missing_evidence", owner: "user", requiredAction: "install the fixture database" }
    ])
    expect(blockedInVerification.events.at(-1)).toMatchObject({ _tag: "TaskBlocked", from: "VERIFYING" })
  })

  it("with nothing changed: accepted", () => {
    expect(after(blockedInVerification, cmd.unblock("VERIFYING")).state).toBe("VERIFYING")
  })

  it("after a code change: HOLD code_changed", () => {
    const hold = heldOf(Task.decide(cmd.unblock("VERIFYING", { codeChanged: true }), blockedInVerification.aggregate))
    expect(codes(hold)).toEqual(["code_changed"])
  })

  it("with steps still open: HOLD steps_not_terminal", () => {
    const hold = heldOf(Task.decide(cmd.unblock("VERIFYING", { pendingSteps: ["docs"] }), blockedInVerification.aggregate))
    expect(codes(hold)).toEqual(["steps_not_terminal"])
  })

  it("a contract change goes through REOPENED", () => {
    expect(refusedOf(Task.decide(cmd.proposeSpec(specB), blockedInVerification.aggregate)).code).toBe(
      "contract_change_requires_reopen"
    )
    expect(after(blockedInVerification, cmd.reopen()).state).toBe("REOPENED")
  })
})

// ---------------------------------------------------------------------------------------------
// Pause and resume
// ---------------------------------------------------------------------------------------------

describe("PAUSED resumes only to where it paused from", () => {
  it.each(["INTERVIEWING", "RUNNING"] as const)("paused from %s, resumes to %s", (from) => {
    const paused = reach("PAUSED", { pausedFrom: from })
    expect(paused.task.pausedFrom).toBe(from)
    expect(paused.events.at(-1)).toEqual({ _tag: "TaskPaused", version: 1, actor: user, at: NOW, from })
    const events = eventsOf(Task.decide(cmd.resume(), paused.aggregate))
    expect(events).toEqual([{ _tag: "TaskResumed", version: 1, actor: user, at: NOW, to: from }])
    const resumed = asTask(events.reduce(Task.evolve, paused.aggregate))
    expect(resumed.state).toBe(from)
    expect(resumed.pausedFrom).toBeNull()
  })

  it("a pause records its reason when one is given", () => {
    const events = eventsOf(Task.decide(cmd.pause("lunch"), REACHED.RUNNING.aggregate))
    expect(events).toEqual([{ _tag: "TaskPaused", version: 1, actor: user, at: NOW, from: "RUNNING", reason: "lunch" }])
  })

  it("while paused, other commands are refused as task_paused naming where it paused from", () => {
    const paused = reach("PAUSED", { pausedFrom: "INTERVIEWING" })
    const refusal = refusedOf(Task.decide(cmd.askQuestion("q1", true), paused.aggregate))
    expect(refusal.code).toBe("task_paused")
    expect(refusal.reason).toBe("the task is paused (from INTERVIEWING); questions are asked while INTERVIEWING.")
  })

  it.each(["BLOCKED", "REOPENED"] as const)("a %s task is not resumed by Resume", (state) => {
    const refusal = refusedOf(Task.decide(cmd.resume(), REACHED[state].aggregate))
    expect(refusal.code).toBe("forbidden_transition")
    expect(refusal.reason).toBe(`a ${state} task is resumed by resolving why it stopped.`)
    expect(refusal.action).toBe(NEXT[state])
  })
})

// ---------------------------------------------------------------------------------------------
// Invalidation (seed 004, §6)
// ---------------------------------------------------------------------------------------------

describe("invalidation", () => {
  it.each(["PLAN_READY", "PLAN_APPROVED"] as const)(
    "a semantic spec change in %s voids the approval and marks the plan stale",
    (state) => {
      const { aggregate, task } = REACHED[state]
      const events = eventsOf(Task.decide(cmd.proposeSpec(specB), aggregate))
      expect(events).toEqual([
        {
          _tag: "SpecProposed",
          version: 1,
          actor: agent,
          at: NOW,
          revision: 2,
          digest: Spec.digest(specB),
          spec: specB,
          voidedApproval: true
        },
        {
          _tag: "PlanMarkedStale",
          version: 1,
          actor: agent,
          at: NOW,
          planRevision: 1,
          planDigest: planDigestOf(task),
          specDigest: Spec.digest(specB)
        }
      ])
      const next = asTask(events.reduce(Task.evolve, aggregate))
      expect(next.state).toBe("SPEC_READY")
      expect(next.spec).toEqual({ revision: 2, digest: Spec.digest(specB), spec: specB, approvedDigest: null, approval: null })
      expect(next.plan).toMatchObject({ revision: 1, digest: planDigestOf(task), stale: true, approvedDigest: null, approval: null })
    }
  )

  it.each(["SPEC_APPROVED", "PREFLIGHT"] as const)(
    "a semantic spec change in %s (no plan yet) voids the approval only",
    (state) => {
      const events = eventsOf(Task.decide(cmd.proposeSpec(specB), REACHED[state].aggregate))
      expect(tags(events)).toEqual(["SpecProposed"])
      expect(only(events, "SpecProposed").voidedApproval).toBe(true)
    }
  )

  it("a new spec in SPEC_READY voids nothing (nothing was approved)", () => {
    const events = eventsOf(Task.decide(cmd.proposeSpec(specB), REACHED.SPEC_READY.aggregate))
    expect(only(events, "SpecProposed")).toMatchObject({ revision: 2, voidedApproval: false })
  })

  it("a spec proposed after a reopen needs approving again, even unchanged", () => {
    const events = eventsOf(Task.decide(cmd.proposeSpec(specA), REACHED.REOPENED.aggregate))
    expect(tags(events)).toEqual(["SpecProposed"])
    expect(only(events, "SpecProposed")).toMatchObject({ revision: 2, digest: Spec.digest(specA), voidedApproval: true })
    expect(asTask(events.reduce(Task.evolve, REACHED.REOPENED.aggregate)).plan?.stale).toBe(false)
    expect(asTask(events.reduce(Task.evolve, REACHED.REOPENED.aggregate)).spec?.approvedDigest).toBeNull()
  })

  it("a new contract after a reopen marks the approved plan stale, once", () => {
    const { aggregate, task } = REACHED.REOPENED
    const events = eventsOf(Task.decide(cmd.proposeSpec(specB), aggregate))
    expect(tags(events)).toEqual(["SpecProposed", "PlanMarkedStale"])
    expect(only(events, "PlanMarkedStale")).toMatchObject({
      planRevision: 1,
      planDigest: planDigestOf(task),
      specDigest: Spec.digest(specB)
    })
    const next = asTask(events.reduce(Task.evolve, aggregate))
    expect(next.state).toBe("SPEC_READY")
    expect(next.plan?.stale).toBe(true)
    // Reopened again with the plan already stale: no second mark.
    const again = drive([cmd.proposeSpec(specB), approveSpecNow, cmd.recordPreflight(), cmd.reopen()], REACHED.REOPENED)
    expect(asTask(again.aggregate).plan?.stale).toBe(true)
    expect(asTask(again.aggregate).state).toBe("REOPENED")
    expect(tags(eventsOf(Task.decide(cmd.proposeSpec(specWith({ goal: "A third contract" })), again.aggregate)))).toEqual(["SpecProposed"])
  })

  it.each(["SPEC_READY", "SPEC_APPROVED", "PREFLIGHT", "PLAN_READY", "PLAN_APPROVED"] as const)(
    "an editorial-only re-proposal in %s (same semantic spec) emits nothing",
    (state) => {
      // A fresh decode of the same contract, with an empty list the projection omits.
      const same = makeSpec({
        goal: "Add a --json flag to the status command",
        decisions: [],
        acceptanceCriteria: specA.acceptanceCriteria,
        execution: specA.execution
      })
      expect(Spec.digest(same)).toBe(Spec.digest(specA))
      expect(eventsOf(Task.decide(cmd.proposeSpec(same), REACHED[state].aggregate))).toEqual([])
    }
  )

  it.each(["RUNNING", "VERIFYING", "BLOCKED", "FAILED"] as const)(
    "a spec change in %s is refused as contract_change_requires_reopen",
    (state) => {
      const refusal = refusedOf(Task.decide(cmd.proposeSpec(specB), REACHED[state].aggregate))
      expect(refusal.code).toBe("contract_change_requires_reopen")
      expect(refusal.action).toBe("Reopen the task first: ratchet reopen t-1 --reason \"<what changes>\"")
    }
  )

  it("a second semantic change while the plan is already stale does not mark it again", () => {
    const stale = drive([cmd.proposeSpec(specB), approveSpecNow], REACHED.PLAN_APPROVED)
    const events = eventsOf(Task.decide(cmd.proposeSpec(specWith({ goal: "Something else" })), stale.aggregate))
    expect(tags(events)).toEqual(["SpecProposed"])
    expect(only(events, "SpecProposed").voidedApproval).toBe(true)
  })

  it("the stale plan cannot be proposed again for the new spec: HOLD stale_digest", () => {
    const changed = drive([cmd.proposeSpec(specB), approveSpecNow, cmd.recordPreflight()], REACHED.PLAN_APPROVED)
    const hold = heldOf(Task.decide(cmd.proposePlan(planFor(specA)), changed.aggregate))
    expect(codes(hold)).toEqual(["stale_digest"])
    expect(after(changed, cmd.proposePlan(planFor(specB))).state).toBe("PLAN_READY")
  })

  it("a method-only change (same contract) bumps the plan revision and keeps the spec approval", () => {
    const { aggregate, task } = REACHED.PLAN_APPROVED
    const events = eventsOf(Task.decide(cmd.proposePlan(planFor(specA, 1)), aggregate))
    expect(events).toEqual([
      {
        _tag: "PlanProposed",
        version: 1,
        actor: agent,
        at: NOW,
        revision: 2,
        digest: Plan.digest(planFor(specA, 1)),
        plan: planFor(specA, 1)
      }
    ])
    const next = asTask(events.reduce(Task.evolve, aggregate))
    expect(next.state).toBe("PLAN_READY")
    expect(next.spec?.approvedDigest).toBe(specDigestOf(task))
    expect(next.plan).toMatchObject({ revision: 2, approvedDigest: null, stale: false })
    expect(next.plan?.digest).not.toBe(planDigestOf(task))
  })

  it.each(["PLAN_READY", "PLAN_APPROVED"] as const)("re-proposing the current plan in %s emits nothing", (state) => {
    expect(eventsOf(Task.decide(cmd.proposePlan(planFor(specA)), REACHED[state].aggregate))).toEqual([])
  })

  it("after a reopen, the same plan can be proposed again for the re-approved contract", () => {
    const reapproved = drive([cmd.proposeSpec(specA), approveSpecNow, cmd.recordPreflight()], REACHED.REOPENED)
    expect(asTask(reapproved.aggregate).state).toBe("PREFLIGHT")
    const events = eventsOf(Task.decide(cmd.proposePlan(planFor(specA)), reapproved.aggregate))
    expect(tags(events)).toEqual(["PlanProposed"])
    expect(only(events, "PlanProposed").revision).toBe(2)
    expect(after(reapproved, cmd.proposePlan(planFor(specA))).state).toBe("PLAN_READY")
  })

  it("after a reopen with a new contract, the old plan is held as stale_digest", () => {
    const reapproved = drive([cmd.proposeSpec(specB), approveSpecNow, cmd.recordPreflight()], REACHED.REOPENED)
    expect(codes(heldOf(Task.decide(cmd.proposePlan(planFor(specA)), reapproved.aggregate)))).toEqual(["stale_digest"])
  })

  it("a preflight that finds a wrong assumption holds the plan; the way on is a reopen from PREFLIGHT", () => {
    const wrong = drive([cmd.recordPreflight({ missingPaths: ["src/status.ts"] })], REACHED.SPEC_APPROVED)
    const hold = heldOf(Task.decide(cmd.proposePlan(planFor(specA)), wrong.aggregate))
    expect(codes(hold)).toEqual(["preflight_wrong_assumption"])
    expect(hold.gate.reasons[0]!.message).toContain("relevant path \"src/status.ts\" does not exist")
    expect(after(wrong, cmd.reopen(null, "src/status.ts does not exist")).state).toBe("REOPENED")
  })

  it("a second preflight replaces the first", () => {
    const events = eventsOf(Task.decide(cmd.recordPreflight({ head: null, dirtyPaths: ["README.md"] }), REACHED.PREFLIGHT.aggregate))
    expect(events).toEqual([
      {
        _tag: "PreflightRecorded",
        version: 1,
        actor: system,
        at: NOW,
        specDigest: specDigestOf(REACHED.PREFLIGHT.task),
        observation: { head: null, dirtyPaths: ["README.md"], missingPaths: [], invalidScopes: [] }
      }
    ])
    expect(asTask(events.reduce(Task.evolve, REACHED.PREFLIGHT.aggregate)).preflight?.observation.dirtyPaths).toEqual([
      "README.md"
    ])
  })
})

// ---------------------------------------------------------------------------------------------
// Approvals
// ---------------------------------------------------------------------------------------------

describe("approvals need a person's receipt for the current digest", () => {
  it("a spec approval by an agent is held as approval_requires_user", () => {
    const { aggregate, task } = REACHED.SPEC_READY
    const hold = heldOf(Task.decide(cmd.approveSpec(receipt("spec", specDigestOf(task), { actor: agent })), aggregate))
    expect(codes(hold)).toEqual(["approval_requires_user", "signature_invalid"])
  })

  it("a spec approval for the spec before a change is held as stale_digest", () => {
    const changed = drive([cmd.proposeSpec(specB)], REACHED.SPEC_READY)
    const hold = heldOf(Task.decide(cmd.approveSpec(receipt("spec", Spec.digest(specA), {}, { revision: 2 })), changed.aggregate))
    expect(codes(hold)).toEqual(["stale_digest"])
  })

  it("a spec approval records the revision, digest and receipt", () => {
    const { aggregate, task } = REACHED.SPEC_READY
    const r = receipt("spec", specDigestOf(task))
    expect(eventsOf(Task.decide(cmd.approveSpec(r), aggregate))).toEqual([
      { _tag: "SpecApproved", version: 2, actor: user, at: NOW, revision: 1, digest: specDigestOf(task), receipt: r }
    ])
  })

  it("a plan approval with a plan receipt for another digest is held as stale_digest", () => {
    const hold = heldOf(Task.decide(cmd.approvePlan(receipt("plan", fakeDigest("c"))), REACHED.PLAN_READY.aggregate))
    expect(codes(hold)).toEqual(["stale_digest"])
  })

  it("a plan approval records the revision, digest and receipt", () => {
    const { aggregate, task } = REACHED.PLAN_READY
    const r = receipt("plan", planDigestOf(task))
    expect(eventsOf(Task.decide(cmd.approvePlan(r), aggregate))).toEqual([
      { _tag: "PlanApproved", version: 2, actor: user, at: NOW, revision: 1, digest: planDigestOf(task), receipt: r }
    ])
  })

  it("a spec receipt does not approve the plan: receipt_wrong_subject", () => {
    const { aggregate, task } = REACHED.PLAN_READY
    const hold = heldOf(Task.decide(cmd.approvePlan(receipt("spec", planDigestOf(task))), aggregate))
    expect(codes(hold)).toEqual(["receipt_wrong_subject"])
  })
})

// ---------------------------------------------------------------------------------------------
// Verification and completion
// ---------------------------------------------------------------------------------------------

describe("VERIFYING → COMPLETED needs independent, current evidence", () => {
  const verifying = REACHED.VERIFYING
  const digest = (): Digest.Digest => specDigestOf(verifying.task)

  it("verification is entered only when every step is terminal", () => {
    const hold = heldOf(Task.decide(cmd.enterVerification(["docs"]), REACHED.RUNNING.aggregate))
    expect(codes(hold)).toEqual(["steps_not_terminal"])
    const events = eventsOf(Task.decide(cmd.enterVerification([], 99), REACHED.RUNNING.aggregate))
    expect(events).toEqual([
      { _tag: "VerificationStarted", version: 1, actor: system, at: NOW, runId: "run-1", snapshotLsn: 99 }
    ])
  })

  it("verdicts only by the worker are held as self_verification", () => {
    const hold = heldOf(
      Task.decide(cmd.complete([pass("AC-001", digest(), { verifier: runner })], [runner]), verifying.aggregate)
    )
    expect(codes(hold)).toEqual(["self_verification"])
  })

  it("INDETERMINATE never counts as PASS", () => {
    const hold = heldOf(
      Task.decide(cmd.complete([pass("AC-001", digest(), { verdict: "INDETERMINATE" })]), verifying.aggregate)
    )
    expect(codes(hold)).toEqual(["ac_not_passed"])
    expect(hold.gate.reasons[0]!.message).toBe("AC-001 is INDETERMINATE, which never counts as PASS.")
  })

  it("evidence taken against a stale digest is held as stale_evidence", () => {
    const hold = heldOf(Task.decide(cmd.complete([pass("AC-001", Spec.digest(specB))]), verifying.aggregate))
    expect(codes(hold)).toEqual(["stale_evidence"])
  })

  it("PASS without evidence refs is held as missing_evidence", () => {
    const hold = heldOf(Task.decide(cmd.complete([pass("AC-001", digest(), { evidenceRefs: [] })]), verifying.aggregate))
    expect(codes(hold)).toEqual(["missing_evidence"])
  })

  it("an independent PASS with evidence completes, recording only current verdicts", () => {
    const current = pass("AC-001", digest())
    const stale = pass("AC-002", Spec.digest(specB))
    const events = eventsOf(Task.decide(cmd.complete([current, stale]), verifying.aggregate))
    expect(events).toEqual([
      {
        _tag: "TaskCompleted",
        version: 2,
        actor: system,
        at: NOW,
        runId: "run-1",
        specDigest: digest(),
        planDigest: planDigestOf(verifying.task),
        verdicts: [current]
      }
    ])
    expect(asTask(events.reduce(Task.evolve, verifying.aggregate)).state).toBe("COMPLETED")
  })

  it("the completion record holds the verdicts the gate counted: the newest independent one per criterion", () => {
    const older = pass("AC-001", digest(), { at: NOW - 10, evidenceRefs: ["ev-old"] })
    const newest = pass("AC-001", digest(), { at: NOW - 5, evidenceRefs: ["ev-new"] })
    const byWorker = pass("AC-001", digest(), { at: NOW, verifier: runner, evidenceRefs: ["ev-self"] })
    const tieFirst = pass("AC-002", digest(), { at: NOW - 1, evidenceRefs: ["ev-tie-1"] })
    const tieLast = pass("AC-002", digest(), { at: NOW - 1, evidenceRefs: ["ev-tie-2"] })
    const events = eventsOf(Task.decide(cmd.complete([older, byWorker, newest, tieFirst, tieLast], [runner]), verifying.aggregate))
    expect(events[0]).toMatchObject({ _tag: "TaskCompleted", verdicts: [newest, tieLast] })
  })

  it("the completion record leaves out a verdict by any of several workers, and keeps a newer one given first", () => {
    const other: Event.Actor = { kind: "agent", id: "agent-9" }
    const newerFirst = pass("AC-001", digest(), { at: NOW - 1, evidenceRefs: ["ev-newer"] })
    const olderLast = pass("AC-001", digest(), { at: NOW - 9, evidenceRefs: ["ev-older"] })
    const byOtherWorker = pass("AC-001", digest(), { at: NOW, verifier: other, evidenceRefs: ["ev-other"] })
    const events = eventsOf(Task.decide(cmd.complete([newerFirst, olderLast, byOtherWorker], [runner, other]), verifying.aggregate))
    expect(events[0]).toMatchObject({ _tag: "TaskCompleted", verdicts: [newerFirst] })
  })

  it("the completion gate's HOLD is bound to the task version and digests it judged", () => {
    const hold = heldOf(Task.decide(cmd.complete([]), verifying.aggregate))
    expect(hold.gate.boundTo).toEqual({
      taskVersion: verifying.task.version,
      specDigest: digest(),
      planDigest: planDigestOf(verifying.task)
    })
    expect(hold.gate.evaluatedAt).toBe(NOW)
    expect(hold.gate.policyVersion).toBe("ratchet-lifecycle/2")
  })
})

// ---------------------------------------------------------------------------------------------
// The brief
// ---------------------------------------------------------------------------------------------

describe("the brief's closure audit", () => {
  const interviewing = REACHED.INTERVIEWING

  it("HOLDs with an open blocking question, listing it in the reasons and the required actions", () => {
    const asked = drive(
      [cmd.askQuestion("q1", true, "Which output format?"), cmd.askQuestion("q2", false), cmd.restate(), approveRestatementNow],
      interviewing
    )
    const hold = heldOf(Task.decide(cmd.closeBrief(), asked.aggregate))
    expect(hold.gate.kind).toBe("brief_closure")
    expect(hold.gate.reasons).toEqual([
      { code: "blocking_question_open", message: "Blocking question q1 is unanswered: \"Which output format?\"" }
    ])
    expect(hold.gate.requiredActions).toEqual([
      { description: "Answer question q1", command: "ratchet brief t-1 answer q1 \"<answer>\" --source user" }
    ])
    const answered = drive([cmd.answerQuestion("q1", "JSON", "user")], asked)
    expect(eventsOf(Task.decide(cmd.closeBrief(), answered.aggregate))).toEqual([
      { _tag: "BriefClosed", version: 1, actor: user, at: NOW, briefRevision: 4 }
    ])
  })

  it("HOLDs until the restatement is approved", () => {
    const restated = drive([cmd.restate()], interviewing)
    expect(codes(heldOf(Task.decide(cmd.closeBrief(), restated.aggregate)))).toEqual(["restatement_not_approved"])
  })

  it("a new restatement needs approving again and reopens the brief", () => {
    const closed = drive([cmd.restate(), approveRestatementNow, cmd.closeBrief()], interviewing)
    expect(asTask(closed.aggregate).brief.closed).toBe(true)
    const restated = drive([cmd.restate("Another sentence.")], closed)
    const task = asTask(restated.aggregate)
    expect(task.brief.closed).toBe(false)
    expect(task.brief.restatement).toEqual({
      text: "Another sentence.",
      digest: Task.restatementDigest("Another sentence."),
      approved: false
    })
    expect(codes(heldOf(Task.decide(cmd.proposeSpec(specA), restated.aggregate)))).toEqual(["brief_not_closed"])
  })

  it("a question asked after closing reopens the brief", () => {
    const closed = drive([cmd.restate(), approveRestatementNow, cmd.closeBrief()], interviewing)
    const asked = drive([cmd.askQuestion("q9", false)], closed)
    expect(asTask(asked.aggregate).brief.closed).toBe(false)
  })

  it("a restatement receipt for other words is held as stale_digest", () => {
    const restated = drive([cmd.restate("Status prints JSON.")], interviewing)
    const hold = heldOf(
      Task.decide(cmd.approveRestatement(receipt("restatement", Task.restatementDigest("Something else."))), restated.aggregate)
    )
    expect(codes(hold)).toEqual(["stale_digest"])
  })

  it("approving with nothing restated is refused, pointing at the restate command", () => {
    const refusal = refusedOf(
      Task.decide(cmd.approveRestatement(receipt("restatement", Task.restatementDigest("x"))), interviewing.aggregate)
    )
    expect(refusal.code).toBe("forbidden_transition")
    expect(refusal.reason).toBe("there is no restatement to approve.")
    expect(refusal.action).toBe("Restate the goal first: ratchet brief t-1 restate \"<one sentence>\"")
  })

  it("records questions, answers and the restatement, bumping the brief revision each time", () => {
    const run = drive(
      [
        cmd.askQuestion("q1", true, "First?"),
        cmd.askQuestion("q2", false, "Second?"),
        cmd.answerQuestion("q1", "yes", "code"),
        cmd.askQuestion("q2", true, "Second, rephrased?"),
        cmd.restate("One sentence."),
        approveRestatementNow
      ],
      interviewing
    )
    const task = asTask(run.aggregate)
    expect(task.brief.revision).toBe(5)
    expect(task.brief.questions).toEqual([
      { questionId: "q1", text: "First?", blocking: true, answer: { text: "yes", source: "code" } },
      { questionId: "q2", text: "Second, rephrased?", blocking: true, answer: null }
    ])
    expect(task.brief.restatement).toEqual({
      text: "One sentence.",
      digest: Task.restatementDigest("One sentence."),
      approved: true
    })
    expect(run.events.slice(-6).map((event) => event._tag)).toEqual([
      "QuestionAsked",
      "QuestionAsked",
      "QuestionAnswered",
      "QuestionAsked",
      "RestatementProposed",
      "RestatementApproved"
    ])
    expect(run.events.at(-1)).toEqual({
      _tag: "RestatementApproved",
      version: 2,
      actor: user,
      at: NOW,
      digest: Task.restatementDigest("One sentence."),
      receipt: receipt("restatement", Task.restatementDigest("One sentence."))
    })
  })

  it("the restatement digest is the SHA-256 of the canonical JSON of { restatement: text }", () => {
    // printf '{"restatement":"hi"}' | sha256sum
    expect(Task.restatementDigest("hi")).toBe("sha256:5a8a065313fd1d73f73111713d485a23b11e904ceee73078a2b7162dca1966a5")
    expect(Task.restatementDigest("hi")).not.toBe(Task.restatementDigest("hi "))
  })

  it("the interview begins only when the project and store are ready", () => {
    const created = reach("INITIALIZING")
    const hold = heldOf(Task.decide(cmd.beginInterview(false, false), created.aggregate))
    expect(codes(hold)).toEqual(["project_not_initialized", "store_not_writable"])
    expect(hold.gate.from).toBe("INITIALIZING")
    expect(hold.gate.to).toBe("INTERVIEWING")
  })
})

// ---------------------------------------------------------------------------------------------
// The whole path
// ---------------------------------------------------------------------------------------------

describe("the happy path from CreateTask to COMPLETED", () => {
  it("walks every forward edge, one command at a time", () => {
    const steps: ReadonlyArray<readonly [StepLike, State, ReadonlyArray<EventTag>]> = [
      [cmd.createTask(), "INITIALIZING", ["TaskCreated"]],
      [cmd.beginInterview(), "INTERVIEWING", ["InterviewBegun"]],
      [cmd.askQuestion("q1", true), "INTERVIEWING", ["QuestionAsked"]],
      [cmd.answerQuestion("q1"), "INTERVIEWING", ["QuestionAnswered"]],
      [cmd.restate(), "INTERVIEWING", ["RestatementProposed"]],
      [approveRestatementNow, "INTERVIEWING", ["RestatementApproved"]],
      [cmd.closeBrief(), "INTERVIEWING", ["BriefClosed"]],
      [cmd.proposeSpec(specA), "SPEC_READY", ["SpecProposed"]],
      [approveSpecNow, "SPEC_APPROVED", ["SpecApproved"]],
      [cmd.recordPreflight(), "PREFLIGHT", ["PreflightRecorded"]],
      [cmd.proposePlan(planFor(specA)), "PLAN_READY", ["PlanProposed"]],
      [approvePlanNow, "PLAN_APPROVED", ["PlanApproved"]],
      [startRunNow, "RUNNING", ["RunStarted"]],
      [cmd.recordAttemptFailure("fp-1"), "RUNNING", ["AttemptFailed", "SuccessorGranted"]],
      [cmd.enterVerification(), "VERIFYING", ["VerificationStarted"]],
      [(task: Task.Task) => cmd.complete([pass("AC-001", specDigestOf(task), { verifier })]), "COMPLETED", ["TaskCompleted"]]
    ]
    let aggregate: Task.Aggregate = Task.initial
    const log: Array<Event.Event> = []
    for (const [step, state, expected] of steps) {
      const command = typeof step === "function" ? step(asTask(aggregate)) : step
      const events = eventsOf(Task.decide(command, aggregate))
      expect(tags(events), command._tag).toEqual(expected)
      aggregate = events.reduce(Task.evolve, aggregate)
      log.push(...events)
      expect(asTask(aggregate).state, command._tag).toBe(state)
    }
    expect(asTask(aggregate).version).toBe(log.length)
    expect(Task.fold(log)).toEqual(aggregate)
    expect(Task.replay(log)).toEqual(Either.right(aggregate))
  })
})

type StepLike = Command | ((task: Task.Task) => Command)

// ---------------------------------------------------------------------------------------------
// handle, messages
// ---------------------------------------------------------------------------------------------

describe("Task.handle", () => {
  it("decides and folds in one step", () => {
    const { aggregate } = REACHED.RUNNING
    const handled = Task.handle(cmd.enterVerification(), aggregate)
    expect(Either.isRight(handled)).toBe(true)
    if (Either.isRight(handled)) {
      expect(tags(handled.right.events)).toEqual(["VerificationStarted"])
      expect(asTask(handled.right.state).state).toBe("VERIFYING")
    }
  })

  it("returns the rejection unchanged", () => {
    const handled = Task.handle(cmd.resume(), REACHED.RUNNING.aggregate)
    expect(Either.isLeft(handled) && handled.left._tag).toBe("@ratchet/kernel/TaskCommandRefused")
  })
})

describe("rejection types", () => {
  it("Held's message lists every reason of its gate", () => {
    const hold = heldOf(Task.decide(cmd.beginInterview(false, false), REACHED.INITIALIZING.aggregate))
    expect(hold.message).toBe(
      "BeginInterview is on HOLD: This repository has no .ratchet/project.json. The runtime store cannot be written."
    )
  })

  it("the refusal codes are the documented ones", () => {
    expect(Task.RefusalCode.literals).toEqual([
      "task_exists",
      "task_not_found",
      "forbidden_transition",
      "terminal_state",
      "stale_digest",
      "unknown_question",
      "contract_change_requires_reopen",
      "task_paused",
      "unknown_step"
    ])
  })
})

// ---------------------------------------------------------------------------------------------
// evolve details and defensive branches
// ---------------------------------------------------------------------------------------------

describe("evolve", () => {
  it("resuming the interview reopens the brief, so a spec needs a new closure audit", () => {
    const resumed = drive([cmd.resumeInterview()], REACHED.REOPENED)
    const task = asTask(resumed.aggregate)
    expect(task.state).toBe("INTERVIEWING")
    expect(task.brief.closed).toBe(false)
    expect(codes(heldOf(Task.decide(cmd.proposeSpec(specA), resumed.aggregate)))).toEqual(["brief_not_closed"])
    expect(Task.nextStep(task)).toBe(NEXT.INTERVIEWING)
  })

  it("a reopen clears the blockers and the run", () => {
    const reopened = asTask(drive([cmd.reopen()], REACHED.BLOCKED).aggregate)
    expect(REACHED.BLOCKED.task.blockers).toHaveLength(1)
    expect(reopened.blockers).toEqual([])
    expect(reopened.run).toBeNull()
  })

  it("applies approvals without judging them: an approval with nothing to approve leaves nothing approved", () => {
    const created = SAMPLE_EVENTS.TaskCreated
    const folded = asTask(
      Task.fold([
        created,
        SAMPLE_EVENTS.RestatementApproved,
        SAMPLE_EVENTS.SpecApproved,
        SAMPLE_EVENTS.PlanMarkedStale,
        SAMPLE_EVENTS.PlanApproved
      ])
    )
    expect(folded.brief.restatement).toBeNull()
    expect(folded.spec).toBeNull()
    expect(folded.plan).toBeNull()
    expect(folded.state).toBe("PLAN_APPROVED")
    expect(folded.version).toBe(5)
  })

  it("a second TaskCreated only counts as an event", () => {
    const { aggregate, task } = REACHED.RUNNING
    const next = asTask(Task.evolve(aggregate, SAMPLE_EVENTS.TaskCreated))
    expect(next).toEqual({ ...task, version: task.version + 1 })
  })

  it("the gate of an early HOLD is bound to no digest yet", () => {
    const hold = heldOf(Task.decide(cmd.closeBrief(), REACHED.INTERVIEWING.aggregate))
    expect(hold.gate.boundTo).toEqual({ taskVersion: 2, specDigest: null, planDigest: null })
    expect(hold.gate.from).toBe("INTERVIEWING")
    expect(hold.gate.evaluatedAt).toBe(NOW)
  })

  it("a spec without an execution policy defines no scope: the run is held as scope_undefined", () => {
    const bare = makeSpec({
      goal: "Add a --json flag to the status command",
      acceptanceCriteria: [{ id: "AC-001", outcome: "prints JSON", required: true }]
    })
    const plan = makePlan(
      { specDigest: Spec.digest(bare), steps: [{ id: "build", title: "Build", acRefs: ["AC-001"], run: { command: "make" } }] },
      bare
    )
    const { aggregate, task } = reach("PLAN_APPROVED", { spec: bare, plan })
    expect(codes(heldOf(Task.decide(startRunNow(task), aggregate)))).toEqual(["scope_undefined"])
  })

  it("a PAUSED task that lost where it paused from (hand-built) is refused as paused from unknown", () => {
    // evolve always records pausedFrom; this guards a state only a damaged read model could hold.
    const broken: Task.Task = { ...REACHED.PAUSED.task, pausedFrom: null }
    const refusal = refusedOf(Task.decide(cmd.resume(), broken))
    expect(refusal.code).toBe("task_paused")
    expect(refusal.reason).toBe("the task is paused (from unknown); only a PAUSED task resumes.")
  })
})

// ---------------------------------------------------------------------------------------------
// Authority: signed receipts and verdicts through the decider
// ---------------------------------------------------------------------------------------------

describe("a person's authority is a signature the agent cannot produce", () => {
  it("the task keeps the receipt each approval was recorded with, and forgets it when the approval is voided", () => {
    const { task } = REACHED.PLAN_APPROVED
    expect(task.spec?.approval?.subject).toBe("spec")
    expect(task.spec?.approval?.signature?.key).toBe(Keys.alice.key)
    expect(task.plan?.approval?.subject).toBe("plan")
    const changed = asTask(drive([cmd.proposeSpec(specB)], REACHED.PLAN_APPROVED).aggregate)
    expect(changed.spec?.approval).toBeNull()
    expect(changed.plan?.approval).toBeNull()
  })

  it("an approval with an unsigned receipt (an agent through a pseudo-terminal) is held and records nothing", () => {
    const { aggregate, task } = REACHED.PLAN_READY
    const hold = heldOf(Task.decide(cmd.approvePlan(receipt("plan", planDigestOf(task), { signature: null })), aggregate))
    expect(codes(hold)).toEqual(["receipt_unsigned"])
  })

  it("an approval signed with the agent's own key, not registered, is held as approver_unknown", () => {
    const { aggregate, task } = REACHED.PLAN_READY
    const forged = receipt("plan", planDigestOf(task), { actor: { kind: "user", id: "alice" } }, { signer: Keys.mallory })
    expect(codes(heldOf(Task.decide(cmd.approvePlan(forged), aggregate)))).toEqual(["approver_unknown"])
  })

  it("a plan 'approved' by an event written straight into the store, with an unsigned receipt, cannot run", () => {
    const { aggregate, task } = REACHED.PLAN_READY
    const plan = task.plan!
    const forged = Event.make<Extract<Event.Event, { _tag: "PlanApproved" }>>({
      _tag: "PlanApproved",
      actor: user,
      at: NOW,
      revision: plan.revision,
      digest: plan.digest,
      receipt: receipt("plan", plan.digest, { signature: null })
    })
    const approved = asTask(Task.evolve(aggregate, forged))
    expect(approved.state).toBe("PLAN_APPROVED")
    const hold = heldOf(Task.decide(startRunNow(approved), approved))
    expect(codes(hold)).toEqual(["receipt_unsigned"])
    expect(hold.gate.kind).toBe("run_start")
  })

  it("a task completed on a forged plan approval cannot complete: the completion gate checks the approvals again", () => {
    const { aggregate } = REACHED.VERIFYING
    const task = asTask(aggregate)
    const forged: Task.Task = { ...task, plan: { ...task.plan!, approval: receipt("plan", task.plan!.digest, {}, { signer: Keys.mallory }) } }
    const hold = heldOf(Task.decide(completeNow(forged), forged))
    expect(codes(hold)).toEqual(["approver_unknown"])
  })

  it("a completion records only the verdicts that count: signed, current, independent", () => {
    const { aggregate, task } = REACHED.VERIFYING
    const counted = pass("AC-001", specDigestOf(task))
    const unsigned = pass("AC-002", specDigestOf(task), { signature: null })
    const events = eventsOf(Task.decide(cmd.complete([counted, unsigned]), aggregate))
    expect(events[0]?._tag === "TaskCompleted" && events[0].verdicts).toEqual([counted])
  })

  it("an unsigned PASS (an agent's ratchet verify) never completes a task", () => {
    const { aggregate, task } = REACHED.VERIFYING
    const hold = heldOf(Task.decide(cmd.complete([pass("AC-001", specDigestOf(task), { signature: null })]), aggregate))
    expect(codes(hold)).toEqual(["verdict_unsigned"])
  })

  it("a person who marked a manual step done cannot complete on their own verdict; the runner they started does not bar them", () => {
    const { aggregate, task } = REACHED.VERIFYING
    const theirs = pass("AC-001", specDigestOf(task))
    expect(codes(heldOf(Task.decide(cmd.complete([theirs], [runner, verifier]), aggregate)))).toEqual(["self_verification"])
    expect(eventsOf(Task.decide(cmd.complete([theirs], [{ kind: "runner", id: "vera" }]), aggregate)).map((event) => event._tag)).toEqual([
      "TaskCompleted"
    ])
  })

  it("unblocking a scope violation needs the person's signed receipt for exactly it, recorded on the event", () => {
    const blocked = drive([cmd.block("scope_violation")], REACHED.RUNNING)
    const task = asTask(blocked.aggregate)
    expect(codes(heldOf(Task.decide(cmd.unblock("RUNNING"), blocked.aggregate)))).toEqual(["receipt_required"])
    const signed = receipt("unblock", Gate.unblockDigest(TASK_ID, "RUNNING", task.blockers))
    const events = eventsOf(Task.decide(cmd.unblock("RUNNING", { receipt: signed }), blocked.aggregate))
    expect(events).toEqual([
      { _tag: "TaskUnblocked", version: 2, actor: user, at: NOW, to: "RUNNING", resolution: "the dependency is installed", receipt: signed }
    ])
  })

  it("unblocking a missing dependency needs no receipt and records none", () => {
    const events = eventsOf(Task.decide(cmd.unblock("RUNNING"), REACHED.BLOCKED.aggregate))
    expect(events[0]?._tag === "TaskUnblocked" && events[0].receipt).toBeNull()
  })
})
