/**
 * Properties of the task decider over random command sequences.
 *
 * A sequence starts from a task `reach`ed through real commands (any of the 15 states, or no task)
 * and feeds random commands, one at a time, to `decide` against the running state. The command
 * arbitrary is written by hand over all 24 tags, with plausible and implausible arguments: receipts
 * bound to the digest current when the command is sent (often) or to the wrong subject, actor,
 * channel or digest; current or stale run digests; verdicts by the worker or by a verifier, stale,
 * INDETERMINATE or without evidence. Over every sequence:
 *
 * (a) terminal states absorb: once COMPLETED or CANCELLED, every later command is rejected and the
 *     state never changes;
 * (b) every state change `evolve` makes from `decide`'s events is an edge of the lifecycle, checked
 *     against an adjacency list written out here from the seed (independently of `Task.edges`);
 * (c) the cold fold of all events equals the incremental state, and `Task.replay` accepts the log;
 * (d) `decide` never throws;
 * (e) the version equals the number of events.
 *
 * Besides, `replay` is checked against a hand model on random raw event logs and on hand-made
 * corrupt histories.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import type * as Digest from "../src/Digest.js"
import type * as Event from "../src/Event.js"
import * as Spec from "../src/Spec.js"
import * as Task from "../src/Task.js"
import {
  agent,
  asTask,
  cmd,
  type Command,
  fakeDigest,
  pass,
  planFor,
  reach,
  reachAll,
  lazily,
  receipt,
  type Run,
  runner,
  runs,
  SAMPLE_EVENTS,
  specA,
  specB,
  specWith,
  start,
  STATES,
  user,
  verifier
} from "./fixtures.js"
import * as fc from "fast-check"

type State = Task.State
type Tag = Command["_tag"]

/** The legal destinations of each state: the seed's diagram plus ADR 0003, written out again. */
const LEGAL: Record<State, ReadonlyArray<State>> = {
  INITIALIZING: ["INTERVIEWING", "CANCELLED"],
  INTERVIEWING: ["SPEC_READY", "PAUSED", "CANCELLED"],
  SPEC_READY: ["SPEC_APPROVED", "CANCELLED"],
  SPEC_APPROVED: ["PREFLIGHT", "SPEC_READY", "CANCELLED"],
  PREFLIGHT: ["PLAN_READY", "REOPENED", "SPEC_READY", "CANCELLED"],
  PLAN_READY: ["PLAN_APPROVED", "SPEC_READY", "CANCELLED"],
  PLAN_APPROVED: ["RUNNING", "SPEC_READY", "PLAN_READY", "CANCELLED"],
  RUNNING: ["VERIFYING", "REOPENED", "PAUSED", "BLOCKED", "FAILED", "CANCELLED"],
  VERIFYING: ["COMPLETED", "REOPENED", "BLOCKED", "FAILED", "CANCELLED"],
  COMPLETED: [],
  REOPENED: ["INTERVIEWING", "SPEC_READY", "CANCELLED"],
  PAUSED: ["INTERVIEWING", "RUNNING", "CANCELLED"],
  BLOCKED: ["RUNNING", "VERIFYING", "REOPENED", "CANCELLED"],
  FAILED: ["REOPENED", "CANCELLED"],
  CANCELLED: []
}

const legal = (from: State, to: State): boolean => LEGAL[from].includes(to)

// ---------------------------------------------------------------------------------------------
// The command arbitrary
// ---------------------------------------------------------------------------------------------

type ReceiptRecipe =
  | { readonly kind: "valid" }
  | {
    readonly kind: "odd"
    readonly subject: Event.ReceiptSubject | "right"
    readonly actor: "user" | "agent"
    readonly channel: "terminal" | "pipe"
    readonly bound: boolean
  }
  | { readonly kind: "none" }

const receiptRecipe: fc.Arbitrary<ReceiptRecipe> = fc.oneof(
  { arbitrary: fc.constant({ kind: "valid" as const }), weight: 6 },
  {
    arbitrary: fc.record({
      kind: fc.constant("odd" as const),
      subject: fc.constantFrom<Event.ReceiptSubject | "right">("right", "restatement", "spec", "plan", "reopen", "scope"),
      actor: fc.constantFrom("user" as const, "agent" as const),
      channel: fc.constantFrom("terminal" as const, "pipe" as const),
      bound: fc.boolean()
    }),
    weight: 2
  },
  { arbitrary: fc.constant({ kind: "none" as const }), weight: 1 }
)

const SPECS: ReadonlyArray<Spec.Spec> = [
  specA,
  specB,
  specWith({ maxSuccessors: 1 }),
  specWith({ allowedScope: [] }),
  specWith({ goal: "Another goal", maxSuccessors: 0 })
]

// Plans are decoded once per (spec, variant); specs are compared by identity, as SPECS are shared.
const planCache = new Map<Spec.Spec, Map<number, ReturnType<typeof planFor>>>()
const cachedPlan = (spec: Spec.Spec, variant: number) => {
  const byVariant = planCache.get(spec) ?? new Map<number, ReturnType<typeof planFor>>()
  planCache.set(spec, byVariant)
  const plan = byVariant.get(variant) ?? planFor(spec, variant)
  byVariant.set(variant, plan)
  return plan
}

type VerdictPattern = "pass" | "worker" | "indeterminate" | "fail" | "not_run" | "stale" | "no_evidence" | "none"

type Recipe =
  | { readonly tag: "CreateTask" }
  | { readonly tag: "BeginInterview"; readonly initialized: boolean; readonly writable: boolean }
  | { readonly tag: "AskQuestion"; readonly q: string; readonly blocking: boolean }
  | { readonly tag: "AnswerQuestion"; readonly q: string }
  | { readonly tag: "Restate"; readonly text: string }
  | { readonly tag: "ApproveRestatement"; readonly receipt: ReceiptRecipe }
  | { readonly tag: "CloseBrief" }
  | { readonly tag: "ResumeInterview" }
  | { readonly tag: "ProposeSpec"; readonly spec: number }
  | { readonly tag: "ApproveSpec"; readonly receipt: ReceiptRecipe }
  | { readonly tag: "RecordPreflight"; readonly wrong: boolean }
  | { readonly tag: "ProposePlan"; readonly bound: boolean; readonly variant: number }
  | { readonly tag: "ApprovePlan"; readonly receipt: ReceiptRecipe }
  | { readonly tag: "StartRun"; readonly bound: boolean; readonly held: boolean }
  | { readonly tag: "RecordAttemptFailure"; readonly known: boolean; readonly fp: string; readonly progressed: boolean }
  | { readonly tag: "EnterVerification"; readonly pending: boolean }
  | { readonly tag: "Complete"; readonly verdicts: VerdictPattern }
  | { readonly tag: "Block"; readonly category: Event.Blocker["category"] }
  | { readonly tag: "Unblock"; readonly to: "RUNNING" | "VERIFYING"; readonly codeChanged: boolean; readonly pending: boolean }
  | { readonly tag: "Fail" }
  | { readonly tag: "Reopen"; readonly receipt: ReceiptRecipe }
  | { readonly tag: "Pause"; readonly reason: boolean }
  | { readonly tag: "Resume" }
  | { readonly tag: "Cancel" }

const recipes: Record<Tag, fc.Arbitrary<Recipe>> = {
  CreateTask: fc.constant({ tag: "CreateTask" }),
  BeginInterview: fc.record({ tag: fc.constant("BeginInterview" as const), initialized: fc.boolean(), writable: fc.boolean() }),
  AskQuestion: fc.record({ tag: fc.constant("AskQuestion" as const), q: fc.constantFrom("q1", "q2"), blocking: fc.boolean() }),
  AnswerQuestion: fc.record({ tag: fc.constant("AnswerQuestion" as const), q: fc.constantFrom("q1", "q2", "q9") }),
  Restate: fc.record({ tag: fc.constant("Restate" as const), text: fc.constantFrom("One.", "Two.") }),
  ApproveRestatement: fc.record({ tag: fc.constant("ApproveRestatement" as const), receipt: receiptRecipe }),
  CloseBrief: fc.constant({ tag: "CloseBrief" }),
  ResumeInterview: fc.constant({ tag: "ResumeInterview" }),
  ProposeSpec: fc.record({ tag: fc.constant("ProposeSpec" as const), spec: fc.nat({ max: SPECS.length - 1 }) }),
  ApproveSpec: fc.record({ tag: fc.constant("ApproveSpec" as const), receipt: receiptRecipe }),
  RecordPreflight: fc.record({ tag: fc.constant("RecordPreflight" as const), wrong: fc.boolean() }),
  ProposePlan: fc.record({ tag: fc.constant("ProposePlan" as const), bound: fc.boolean(), variant: fc.nat({ max: 2 }) }),
  ApprovePlan: fc.record({ tag: fc.constant("ApprovePlan" as const), receipt: receiptRecipe }),
  StartRun: fc.record({ tag: fc.constant("StartRun" as const), bound: fc.boolean(), held: fc.boolean() }),
  RecordAttemptFailure: fc.record({
    tag: fc.constant("RecordAttemptFailure" as const),
    known: fc.boolean(),
    fp: fc.constantFrom("fp-1", "fp-2", "fp-3", "fp-4", "fp-5", "fp-6", "fp-7"),
    progressed: fc.boolean()
  }),
  EnterVerification: fc.record({ tag: fc.constant("EnterVerification" as const), pending: fc.boolean() }),
  Complete: fc.record({
    tag: fc.constant("Complete" as const),
    verdicts: fc.constantFrom<VerdictPattern>(
      "pass",
      "pass",
      "pass",
      "worker",
      "indeterminate",
      "fail",
      "not_run",
      "stale",
      "no_evidence",
      "none"
    )
  }),
  Block: fc.record({
    tag: fc.constant("Block" as const),
    category: fc.constantFrom<Event.Blocker["category"]>(
      "missing_evidence",
      "missing_dependency",
      "missing_authority",
      "decision_needed",
      "verification_failed",
      "scope_violation",
      "retry_budget_spent",
      "repeated_failure",
      "no_progress"
    )
  }),
  Unblock: fc.record({
    tag: fc.constant("Unblock" as const),
    to: fc.constantFrom("RUNNING" as const, "VERIFYING" as const),
    codeChanged: fc.boolean(),
    pending: fc.boolean()
  }),
  Fail: fc.constant({ tag: "Fail" }),
  Reopen: fc.record({ tag: fc.constant("Reopen" as const), receipt: receiptRecipe }),
  Pause: fc.record({ tag: fc.constant("Pause" as const), reason: fc.boolean() }),
  Resume: fc.constant({ tag: "Resume" }),
  Cancel: fc.constant({ tag: "Cancel" })
}

const TAGS = Object.keys(recipes) as ReadonlyArray<Tag>

/**
 * The commands a person or runner would plausibly send in each state, from the seed. A guided step
 * draws from these, so random walks get deep into the lifecycle; an unguided step draws any tag.
 */
const PLAUSIBLE: Record<State | "ABSENT", ReadonlyArray<Tag>> = {
  ABSENT: ["CreateTask"],
  INITIALIZING: ["BeginInterview"],
  INTERVIEWING: ["AskQuestion", "AnswerQuestion", "Restate", "ApproveRestatement", "ApproveRestatement", "CloseBrief", "CloseBrief", "ProposeSpec", "ProposeSpec", "Pause"],
  SPEC_READY: ["ApproveSpec", "ApproveSpec", "ApproveSpec", "ProposeSpec"],
  SPEC_APPROVED: ["RecordPreflight", "RecordPreflight", "RecordPreflight", "ProposeSpec"],
  PREFLIGHT: ["ProposePlan", "ProposePlan", "ProposePlan", "RecordPreflight", "Reopen", "ProposeSpec"],
  PLAN_READY: ["ApprovePlan", "ApprovePlan", "ApprovePlan", "ProposePlan", "ProposeSpec"],
  PLAN_APPROVED: ["StartRun", "StartRun", "StartRun", "ProposePlan", "ProposeSpec"],
  RUNNING: ["RecordAttemptFailure", "RecordAttemptFailure", "EnterVerification", "EnterVerification", "Block", "Fail", "Reopen", "Pause"],
  VERIFYING: ["Complete", "Complete", "Complete", "Block", "Fail", "Reopen"],
  COMPLETED: TAGS,
  REOPENED: ["ResumeInterview", "ProposeSpec"],
  PAUSED: ["Resume"],
  BLOCKED: ["Unblock", "Unblock", "Reopen"],
  FAILED: ["Reopen"],
  CANCELLED: TAGS
}

const subjectDigest = (task: Task.Task | null, subject: Event.ReceiptSubject): Digest.Digest => {
  switch (subject) {
    case "restatement":
      return task?.brief.restatement?.digest ?? fakeDigest("1")
    case "spec":
    case "reopen":
      return task?.spec?.digest ?? fakeDigest("2")
    case "plan":
      return task?.plan?.digest ?? fakeDigest("3")
    case "scope":
      return fakeDigest("4")
    case "resolution":
      return fakeDigest("5")
    case "unblock":
      return fakeDigest("6")
    case "rewind":
      return fakeDigest("7")
  }
}

/** The revision a receipt for `subject` is bound to: the spec's or the plan's current one. */
const subjectRevision = (task: Task.Task | null, subject: Event.ReceiptSubject): number | null =>
  subject === "spec" ? task?.spec?.revision ?? 1 : subject === "plan" ? task?.plan?.revision ?? 1 : null

const receiptFor = (r: ReceiptRecipe, subject: Event.ReceiptSubject, task: Task.Task | null): Event.Receipt | null => {
  switch (r.kind) {
    case "none":
      return null
    case "valid":
      return receipt(subject, subjectDigest(task, subject), {}, { revision: subjectRevision(task, subject) })
    case "odd": {
      const actual = r.subject === "right" ? subject : r.subject
      return receipt(actual, r.bound ? subjectDigest(task, subject) : fakeDigest("9"), {
        actor: r.actor === "user" ? user : agent,
        channel: r.channel
      }, { revision: subjectRevision(task, subject) })
    }
  }
}

const verdictsFor = (pattern: VerdictPattern, task: Task.Task | null): ReadonlyArray<Event.AcVerdict> => {
  const digest = task?.spec?.digest ?? fakeDigest("2")
  switch (pattern) {
    case "pass":
      return [pass("AC-001", digest)]
    case "worker":
      return [pass("AC-001", digest, { verifier: runner })]
    case "indeterminate":
      return [pass("AC-001", digest, { verdict: "INDETERMINATE" })]
    case "fail":
      return [pass("AC-001", digest, { verdict: "FAIL" })]
    case "not_run":
      return [pass("AC-001", digest, { verdict: "NOT_RUN" })]
    case "stale":
      return [pass("AC-001", fakeDigest("8"))]
    case "no_evidence":
      return [pass("AC-001", digest, { evidenceRefs: [] })]
    case "none":
      return []
  }
}

/** Builds the command a recipe describes, against the task as it is when the command is sent. */
const materialize = (r: Recipe, aggregate: Task.Aggregate): Command => {
  const task = aggregate._tag === "Task" ? aggregate : null
  switch (r.tag) {
    case "CreateTask":
      return cmd.createTask()
    case "BeginInterview":
      return cmd.beginInterview(r.initialized, r.writable)
    case "AskQuestion":
      return cmd.askQuestion(r.q, r.blocking)
    case "AnswerQuestion":
      return cmd.answerQuestion(r.q)
    case "Restate":
      return cmd.restate(r.text)
    case "ApproveRestatement":
      return cmd.approveRestatement(
        receiptFor(r.receipt, "restatement", task) ?? receipt("restatement", fakeDigest("5"), { actor: agent })
      )
    case "CloseBrief":
      return cmd.closeBrief()
    case "ResumeInterview":
      return cmd.resumeInterview()
    case "ProposeSpec":
      return cmd.proposeSpec(SPECS[r.spec]!)
    case "ApproveSpec":
      return cmd.approveSpec(receiptFor(r.receipt, "spec", task) ?? receipt("spec", fakeDigest("5"), { channel: "pipe" }))
    case "RecordPreflight":
      return cmd.recordPreflight(r.wrong ? { invalidScopes: ["lib/**"] } : {})
    case "ProposePlan":
      return cmd.proposePlan(cachedPlan(r.bound ? task?.spec?.spec ?? specA : specA, r.variant))
    case "ApprovePlan":
      return cmd.approvePlan(receiptFor(r.receipt, "plan", task) ?? receipt("scope", fakeDigest("5")))
    case "StartRun":
      return cmd.startRun(
        r.bound ? task?.spec?.digest ?? fakeDigest("2") : fakeDigest("6"),
        r.bound ? task?.plan?.digest ?? fakeDigest("3") : fakeDigest("7"),
        { held: r.held, epoch: 1 }
      )
    case "RecordAttemptFailure":
      return cmd.recordAttemptFailure(r.fp, r.progressed, r.known ? "build" : "deploy")
    case "EnterVerification":
      return cmd.enterVerification(r.pending ? ["docs"] : [])
    case "Complete":
      return cmd.complete(verdictsFor(r.verdicts, task), [runner])
    case "Block":
      return cmd.block(r.category)
    case "Unblock":
      return cmd.unblock(r.to, { codeChanged: r.codeChanged, pendingSteps: r.pending ? ["docs"] : [] })
    case "Fail":
      return cmd.fail()
    case "Reopen":
      return cmd.reopen(receiptFor(r.receipt, "reopen", task))
    case "Pause":
      return cmd.pause(r.reason ? "a break" : undefined)
    case "Resume":
      return cmd.resume()
    case "Cancel":
      return cmd.cancel()
  }
}

// Reached on first use, so a kernel that cannot reach a state fails a property, not the collection.
const START: Record<State, Run> = reachAll()
const PAUSED_IN_INTERVIEW: Run = lazily(() => reach("PAUSED", { pausedFrom: "INTERVIEWING" }))

const origin: fc.Arbitrary<Run> = fc.oneof(
  { arbitrary: fc.constant(start), weight: 1 },
  { arbitrary: fc.constantFrom(...STATES).map((state) => START[state]), weight: 8 },
  { arbitrary: fc.constant(PAUSED_IN_INTERVIEW), weight: 1 }
)

interface Step {
  readonly command: Command
  readonly before: Task.Aggregate
  readonly decision: Task.Decision
  readonly after: Task.Aggregate
}

/** Feeds each drawn recipe to `decide` against the running state; a throw fails the property. */
const play = (
  from: Run,
  draw: (aggregate: Task.Aggregate, index: number) => Recipe | null
): { readonly steps: ReadonlyArray<Step>; readonly run: Run } => {
  let run = from
  const steps: Array<Step> = []
  for (let index = 0; ; index++) {
    const r = draw(run.aggregate, index)
    if (r === null) break
    const command = materialize(r, run.aggregate)
    let decision: Task.Decision
    try {
      decision = Task.decide(command, run.aggregate)
    } catch (defect) {
      throw new Error(`decide threw on ${command._tag}: ${String(defect)}`)
    }
    const events = Either.isRight(decision) ? decision.right : []
    const next = events.reduce(Task.evolve, run.aggregate)
    steps.push({ command, before: run.aggregate, decision, after: next })
    run = { aggregate: next, events: [...run.events, ...events] }
  }
  return { steps, run }
}

const stateOf = (aggregate: Task.Aggregate): State | null => (aggregate._tag === "Task" ? aggregate.state : null)

/**
 * A random walk of up to 40 commands, each drawn when it is sent: four in five from the commands
 * plausible in the task's current state, the rest from all 24 tags.
 */
const walk = (from: Run, g: fc.GeneratorValue) => {
  const length = g(fc.integer, { min: 1, max: 40 })
  return play(from, (aggregate, index) => {
    if (index >= length) return null
    const guided = g(fc.nat, { max: 4 }) > 0
    const tags = guided ? PLAUSIBLE[aggregate._tag === "Task" ? aggregate.state : "ABSENT"] : TAGS
    const tag = tags[g(fc.nat, { max: tags.length - 1 })]!
    return g(() => recipes[tag])
  })
}

/** Feeds a fixed list of recipes. */
const playAll = (from: Run, recipeList: ReadonlyArray<Recipe>) =>
  play(from, (_, index) => recipeList[index] ?? null)

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

describe("Task.decide over random command sequences", () => {
  it("(a) terminal states absorb: every later command is rejected and the state stays", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { steps } = walk(from, g)
        for (const step of steps) {
          const before = stateOf(step.before)
          if (before === "COMPLETED" || before === "CANCELLED") {
            expect(Either.isLeft(step.decision), `${step.command._tag} in ${before}`).toBe(true)
            expect(stateOf(step.after)).toBe(before)
          }
        }
      }),
      { numRuns: runs(200) }
    )
  })

  it("(a) from COMPLETED and CANCELLED, every command is refused, as terminal_state unless it is CreateTask", () => {
    fc.assert(
      fc.property(fc.constantFrom<State>("COMPLETED", "CANCELLED"), fc.array(fc.oneof(...TAGS.map((tag) => recipes[tag]))), (state, commands) => {
        for (const r of commands) {
          const decision = Task.decide(materialize(r, START[state].aggregate), START[state].aggregate)
          expect(Either.isLeft(decision)).toBe(true)
          if (Either.isLeft(decision)) {
            expect(decision.left._tag).toBe("@ratchet/kernel/TaskCommandRefused")
            if (decision.left._tag === "@ratchet/kernel/TaskCommandRefused") {
              expect(decision.left.code).toBe(r.tag === "CreateTask" ? "task_exists" : "terminal_state")
            }
          }
        }
      }),
      { numRuns: runs(200) }
    )
  })

  it("(b) every state change evolve makes from decided events is an edge of the lifecycle", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { steps } = walk(from, g)
        for (const step of steps) {
          if (Either.isLeft(step.decision)) continue
          let aggregate = step.before
          for (const event of step.decision.right) {
            const next = Task.evolve(aggregate, event)
            const a = stateOf(aggregate)
            const b = stateOf(next)
            if (a === null) expect(b === null || b === "INITIALIZING").toBe(true)
            else if (b !== a) expect(legal(a, b!), `${a} → ${b} by ${event._tag}`).toBe(true)
            aggregate = next
          }
        }
      }),
      { numRuns: runs(200) }
    )
  })

  it("(c) the cold fold equals the incremental state, and replay accepts every decided history", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { run } = walk(from, g)
        expect(Task.fold(run.events)).toEqual(run.aggregate)
        expect(Task.replay(run.events)).toEqual(Either.right(run.aggregate))
      }),
      { numRuns: runs(200) }
    )
  })

  it("(d) decide never throws, and every rejection is a typed Refused or Held for the current state", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { steps } = walk(from, g)
        for (const step of steps) {
          if (Either.isRight(step.decision)) continue
          const rejection = step.decision.left
          expect(stateOf(step.after)).toBe(stateOf(step.before))
          if (rejection._tag === "@ratchet/kernel/TaskCommandRefused") {
            expect(rejection.state).toBe(stateOf(step.before))
            expect(rejection.command).toBe(step.command._tag)
            expect(rejection.action).toMatch(/ratchet|Create a new task/)
          } else {
            expect(rejection._tag).toBe("@ratchet/kernel/TaskCommandHeld")
            expect(rejection.gate.decision).toBe("HOLD")
            expect(rejection.gate.reasons.length).toBeGreaterThan(0)
            expect(rejection.gate.from).toBe(stateOf(step.before))
            expect(rejection.gate.boundTo.taskVersion).toBe(step.before.version)
          }
        }
      }),
      { numRuns: runs(200) }
    )
  })

  it("(e) the version equals the number of events", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { run, steps } = walk(from, g)
        expect(run.aggregate.version).toBe(run.events.length)
        for (const step of steps) {
          const emitted = Either.isRight(step.decision) ? step.decision.right.length : 0
          expect(step.after.version).toBe(step.before.version + emitted)
        }
      }),
      { numRuns: runs(200) }
    )
  })

  it("an attempt failure never makes the task FAILED: it stays RUNNING or blocks", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { steps } = walk(from, g)
        for (const step of steps) {
          if (step.command._tag !== "RecordAttemptFailure" || Either.isLeft(step.decision)) continue
          expect(step.decision.right.some((event) => event._tag === "TaskFailed")).toBe(false)
          expect(["RUNNING", "BLOCKED"]).toContain(stateOf(step.after))
        }
      }),
      { numRuns: runs(200) }
    )
  })

  it("no task ever uses more than 5 successors, nor more than its spec allows", () => {
    fc.assert(
      fc.property(fc.constantFrom(...SPECS.filter((spec) => (spec.execution?.allowedScope ?? []).length > 0)), fc.array(recipes.RecordAttemptFailure, { maxLength: 12 }), (spec, failures) => {
        const { run } = playAll(reach("RUNNING", { spec }), failures)
        const task = asTask(run.aggregate)
        expect(task.successorsUsed).toBeLessThanOrEqual(Math.min(spec.execution?.retry?.maxSuccessors ?? 5, 5))
      }),
      { numRuns: runs(200) }
    )
  })

  it("a run starts only on the approved digests it was asked for, with the lease held", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { steps } = walk(from, g)
        for (const step of steps) {
          if (Either.isLeft(step.decision) || !step.decision.right.some((event) => event._tag === "RunStarted")) continue
          const task = asTask(step.before)
          const command = step.command
          if (command._tag !== "StartRun") throw new Error(`RunStarted from ${command._tag}`)
          expect(task.state).toBe("PLAN_APPROVED")
          expect(command.lease.held).toBe(true)
          expect(command.specDigest).toBe(task.spec?.digest)
          expect(command.planDigest).toBe(task.plan?.digest)
          expect(task.spec?.approvedDigest).toBe(task.spec?.digest)
          expect(task.plan?.approvedDigest).toBe(task.plan?.digest)
          expect(task.plan?.plan.specDigest).toBe(task.spec?.digest)
        }
      }),
      { numRuns: runs(200) }
    )
  })

  it("a task completes only with an independent PASS with evidence for the current spec", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { steps } = walk(from, g)
        for (const step of steps) {
          if (Either.isLeft(step.decision) || !step.decision.right.some((event) => event._tag === "TaskCompleted")) continue
          const task = asTask(step.before)
          const command = step.command
          if (command._tag !== "Complete") throw new Error(`TaskCompleted from ${command._tag}`)
          const independent = command.verdicts.filter((verdict) =>
            verdict.acId === "AC-001" &&
            verdict.verdict === "PASS" &&
            verdict.evidenceRefs.length > 0 &&
            verdict.specDigest === task.spec?.digest &&
            verdict.verifier.id === verifier.id
          )
          expect(independent.length).toBeGreaterThan(0)
        }
      }),
      { numRuns: runs(200) }
    )
  })

  it("a paused task resumes to the state it paused from", () => {
    fc.assert(
      fc.property(origin, fc.gen(), (from, g) => {
        const { steps } = walk(from, g)
        for (const step of steps) {
          if (Either.isLeft(step.decision)) continue
          for (const event of step.decision.right) {
            if (event._tag === "TaskResumed") expect(event.to).toBe(asTask(step.before).pausedFrom)
          }
        }
      }),
      { numRuns: runs(200) }
    )
  })
})

// ---------------------------------------------------------------------------------------------
// replay
// ---------------------------------------------------------------------------------------------

type AnyEvent = Event.Event

/** The state each event type leads to, written out; `null` keeps the state. */
const target = (event: AnyEvent): State | null => {
  switch (event._tag) {
    case "InterviewBegun":
    case "InterviewResumed":
      return "INTERVIEWING"
    case "SpecProposed":
      return "SPEC_READY"
    case "SpecApproved":
      return "SPEC_APPROVED"
    case "PreflightRecorded":
      return "PREFLIGHT"
    case "PlanProposed":
      return "PLAN_READY"
    case "PlanApproved":
      return "PLAN_APPROVED"
    case "RunStarted":
      return "RUNNING"
    case "TaskBlocked":
      return "BLOCKED"
    case "TaskUnblocked":
      return event.to
    case "VerificationStarted":
      return "VERIFYING"
    case "TaskCompleted":
      return "COMPLETED"
    case "TaskFailed":
      return "FAILED"
    case "TaskReopened":
      return "REOPENED"
    case "TaskPaused":
      return "PAUSED"
    case "TaskResumed":
      return event.to
    case "TaskCancelled":
      return "CANCELLED"
    case "TaskCreated":
    case "QuestionAsked":
    case "QuestionAnswered":
    case "RestatementProposed":
    case "RestatementApproved":
    case "BriefClosed":
    case "PlanMarkedStale":
    case "AttemptFailed":
    case "SuccessorGranted":
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
      return null
  }
}

/** Where replay must stop, by the hand model: the 1-based position and why, or null for a clean log. */
const expectedCorruption = (events: ReadonlyArray<AnyEvent>): { readonly position: number; readonly detail: string } | null => {
  let state: State | null = null
  for (const [index, event] of events.entries()) {
    const position = index + 1
    if (state === null) {
      if (event._tag !== "TaskCreated") return { position, detail: "the first event of a task must be TaskCreated" }
      state = "INITIALIZING"
      continue
    }
    if (event._tag === "TaskCreated") return { position, detail: "the task was already created" }
    const to = target(event)
    if (to !== null && to !== state) {
      if (!legal(state, to)) return { position, detail: `${state} → ${to} is not an edge of the lifecycle` }
      state = to
    }
  }
  return null
}

const EVENT_POOL: ReadonlyArray<AnyEvent> = [
  ...Object.values(SAMPLE_EVENTS),
  { ...SAMPLE_EVENTS.TaskUnblocked, to: "VERIFYING" },
  { ...SAMPLE_EVENTS.TaskResumed, to: "RUNNING" },
  { ...SAMPLE_EVENTS.TaskPaused, from: "RUNNING" }
]

describe("Task.replay", () => {
  it("agrees with a hand model of the lifecycle on random raw logs", () => {
    const log = fc.tuple(fc.boolean(), fc.array(fc.constantFrom(...EVENT_POOL), { maxLength: 12 })).map(
      ([created, rest]) => (created ? [SAMPLE_EVENTS.TaskCreated as AnyEvent, ...rest] : rest)
    )
    fc.assert(
      fc.property(log, (events) => {
        const expected = expectedCorruption(events)
        const replayed = Task.replay(events)
        if (expected === null) {
          expect(replayed).toEqual(Either.right(Task.fold(events)))
        } else {
          expect(Either.isLeft(replayed)).toBe(true)
          if (Either.isLeft(replayed)) {
            expect(replayed.left.position).toBe(expected.position)
            expect(replayed.left.detail).toBe(expected.detail)
            expect(replayed.left.event).toBe(events[expected.position - 1]!._tag)
          }
        }
      }),
      { numRuns: runs(500) }
    )
  })

  it("rejects a log whose first event is not TaskCreated, at position 1", () => {
    const replayed = Task.replay([SAMPLE_EVENTS.InterviewBegun])
    expect(Either.isLeft(replayed)).toBe(true)
    if (Either.isLeft(replayed)) {
      expect(replayed.left._tag).toBe("@ratchet/kernel/CorruptHistory")
      expect(replayed.left.position).toBe(1)
      expect(replayed.left.event).toBe("InterviewBegun")
      expect(replayed.left.message).toBe(
        "The task history does not fold at event #1 (InterviewBegun): the first event of a task must be TaskCreated. The log was written by something other than this kernel or was damaged; restore it from a backup."
      )
    }
  })

  it("rejects a second TaskCreated, naming its position", () => {
    const replayed = Task.replay([SAMPLE_EVENTS.TaskCreated, SAMPLE_EVENTS.InterviewBegun, SAMPLE_EVENTS.TaskCreated])
    expect(Either.isLeft(replayed) && replayed.left.position).toBe(3)
    expect(Either.isLeft(replayed) && replayed.left.detail).toBe("the task was already created")
  })

  it("rejects an illegal state jump: TaskCreated then VerificationStarted", () => {
    const replayed = Task.replay([SAMPLE_EVENTS.TaskCreated, SAMPLE_EVENTS.VerificationStarted])
    expect(Either.isLeft(replayed)).toBe(true)
    if (Either.isLeft(replayed)) {
      expect(replayed.left.position).toBe(2)
      expect(replayed.left.event).toBe("VerificationStarted")
      expect(replayed.left.detail).toBe("INITIALIZING → VERIFYING is not an edge of the lifecycle")
      expect(replayed.left.message).toContain("event #2 (VerificationStarted)")
      expect(replayed.left.message).toContain("restore it from a backup")
    }
  })

  it("rejects anything after a terminal event", () => {
    const history = reach("CANCELLED").events
    const replayed = Task.replay([...history, SAMPLE_EVENTS.TaskReopened])
    expect(Either.isLeft(replayed) && replayed.left.position).toBe(history.length + 1)
    expect(Either.isLeft(replayed) && replayed.left.detail).toBe("CANCELLED → REOPENED is not an edge of the lifecycle")
  })

  it("continues from a folded state, counting positions from the first new event", () => {
    const { aggregate, events } = reach("RUNNING")
    expect(Task.replay([SAMPLE_EVENTS.VerificationStarted], aggregate)).toEqual(
      Either.right(Task.evolve(aggregate, SAMPLE_EVENTS.VerificationStarted))
    )
    const replayed = Task.replay([SAMPLE_EVENTS.TaskCreated], aggregate)
    expect(Either.isLeft(replayed) && replayed.left.position).toBe(1)
    expect(Task.replay(events)).toEqual(Either.right(aggregate))
  })

  it("an empty log is the absent task", () => {
    expect(Task.replay([])).toEqual(Either.right(Task.initial))
    expect(Task.fold([])).toEqual(Task.initial)
  })

  it.each([
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
    "TurnRecorded"
  ] as const)("evolve leaves a task as it was, but for its version, for the run-level fact %s", (type) => {
    const { aggregate } = reach("VERIFYING")
    // Only the stream version counts the event.
    expect(Task.evolve(aggregate, SAMPLE_EVENTS[type])).toEqual({ ...aggregate, version: aggregate.version + 1 })
  })

  it("evolve ignores anything but TaskCreated on an absent task", () => {
    expect(Task.evolve(Task.initial, SAMPLE_EVENTS.RunStarted)).toBe(Task.initial)
  })
})

