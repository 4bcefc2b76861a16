/**
 * Builders shared by the task, gate and event tests: actors, receipts, a valid spec and plan,
 * command constructors with the actor and time filled in, and `reach`, which drives a task to any
 * of the 15 lifecycle states through real commands. Every step of `reach` is decided and folded by
 * the kernel itself, so a state reached here is a state the kernel can actually be in; nothing is
 * assembled by hand. A step the kernel rejects fails the test with the rejection's message.
 */
import * as Either from "effect/Either"
import * as Digest from "../src/Digest.js"
import * as Event from "../src/Event.js"
import * as Plan from "../src/Plan.js"
import * as Spec from "../src/Spec.js"
import * as Task from "../src/Task.js"
import * as Keys from "./keys.js"

export const TASK_ID = "t-1"
export const PROJECT_ID = "p-1"

/** A fixed logical time for commands; tests never read a clock. */
export const NOW = 5_000

/** alice is an approver of the project (her key is `Keys.alice`); vera verifies (`Keys.vera`). */
export const user: Event.Actor = { kind: "user", id: "alice" }
export const agent: Event.Actor = { kind: "agent", id: "agent-1" }
export const runner: Event.Actor = { kind: "runner", id: "runner-1" }
export const verifier: Event.Actor = { kind: "user", id: "vera" }
export const system: Event.Actor = { kind: "system", id: "ratchet" }

/** A syntactically valid digest made of one repeated hex character, for facts that are not hashed. */
export const fakeDigest = (hex: string): Digest.Digest => Digest.Digest.make(`sha256:${hex.repeat(64 / hex.length)}`)

/** Whom the tests' project trusts: alice and vera. */
export const authority = Keys.authorityFor(PROJECT_ID)

/** The revision a receipt for `subject` is signed at when none is given: 1 for a spec or a plan. */
const defaultRevision = (subject: Event.ReceiptSubject): number | null => (subject === "spec" || subject === "plan" ? 1 : null)

/**
 * A receipt for task `TASK_ID`, signed by alice's key over its final content (after `overrides`),
 * unless `overrides.signature` says otherwise or `signer`/`revision` are given.
 */
export const receipt = (
  subject: Event.ReceiptSubject,
  digest: Digest.Digest,
  overrides: Partial<Event.Receipt> = {},
  options: { readonly signer?: Keys.TestKey; readonly revision?: number | null; readonly taskId?: string } = {}
): Event.Receipt => {
  const { signature, ...rest } = overrides
  const unsigned = { subject, digest, actor: user, channel: "terminal", at: NOW, ...rest }
  if (signature !== undefined) return { ...unsigned, signature }
  return Keys.signReceipt(
    options.signer ?? Keys.alice,
    PROJECT_ID,
    options.taskId ?? TASK_ID,
    options.revision === undefined ? defaultRevision(subject) : options.revision,
    unsigned
  )
}

// ---------------------------------------------------------------------------------------------
// Spec and plan
// ---------------------------------------------------------------------------------------------

export const makeSpec = (input: unknown): Spec.Spec => Either.getOrThrow(Spec.decode(input))

export interface SpecOptions {
  readonly goal?: string
  readonly maxSuccessors?: number
  readonly allowedScope?: ReadonlyArray<string>
  readonly constraints?: ReadonlyArray<string>
}

/** AC-001 is required (checked by a command), AC-002 is optional. */
export const specWith = (options: SpecOptions = {}): Spec.Spec =>
  makeSpec({
    goal: options.goal ?? "Add a --json flag to the status command",
    ...(options.constraints === undefined ? {} : { constraints: options.constraints }),
    acceptanceCriteria: [
      {
        id: "AC-001",
        outcome: "status --json prints one JSON document",
        required: true,
        verify: { command: "npm test -- status" }
      },
      { id: "AC-002", outcome: "the guide mentions the flag", required: false }
    ],
    execution: {
      allowedScope: options.allowedScope ?? ["src/**"],
      ...(options.maxSuccessors === undefined ? {} : { retry: { maxSuccessors: options.maxSuccessors } })
    }
  })

/** The spec every `reach` uses unless told otherwise. */
export const specA = specWith()
/** A semantic change of `specA`: one more constraint. */
export const specB = specWith({ constraints: ["keep the human output unchanged"] })

export const makePlan = (input: unknown, spec: Spec.Spec): Plan.Plan => Either.getOrThrow(Plan.decode(input, spec))

/** A valid plan for `spec`; `variant` changes a semantic field (the build command), so digests differ. */
export const planFor = (spec: Spec.Spec, variant = 0): Plan.Plan =>
  makePlan(
    {
      specDigest: Spec.digest(spec),
      steps: [
        {
          id: "build",
          title: "Build the flag",
          acRefs: ["AC-001"],
          run: { command: variant === 0 ? "npm run build" : `npm run build -- --variant ${variant}` }
        },
        { id: "docs", title: "Document it", acRefs: ["AC-002"], needs: ["build"], manual: { instructions: "edit the guide" } }
      ]
    },
    spec
  )

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export type Command = Task.Command

const meta = (actor: Event.Actor = user, at: number = NOW) => ({ actor, at })

/** The run every `reach` starts. */
export const RUN_ID = "run-1"

/**
 * A PASS verdict for `TASK_ID`'s run `RUN_ID`, by vera, signed with her key over its final content
 * (after `overrides`), unless `overrides.signature` says otherwise or `signer` is given.
 */
export const pass = (
  acId: string,
  specDigest: Digest.Digest,
  overrides: Partial<Event.AcVerdict> = {},
  options: { readonly signer?: Keys.TestKey; readonly runId?: string } = {}
): Event.AcVerdict => {
  const { signature, ...rest } = overrides
  const unsigned = { acId, verdict: "PASS" as const, evidenceRefs: [`ev-${acId}`], specDigest, verifier, at: NOW, ...rest }
  if (signature !== undefined) return { ...unsigned, signature }
  return Keys.signVerdict(options.signer ?? Keys.vera, PROJECT_ID, TASK_ID, options.runId ?? RUN_ID, unsigned)
}

export const cmd = {
  createTask: (actor: Event.Actor = user): Command => ({
    _tag: "CreateTask",
    ...meta(actor),
    taskId: TASK_ID,
    projectId: PROJECT_ID,
    goal: "Add a --json flag",
    slug: "json-flag"
  }),
  beginInterview: (projectInitialized = true, storeWritable = true): Command => ({
    _tag: "BeginInterview",
    ...meta(),
    projectInitialized,
    storeWritable
  }),
  askQuestion: (questionId: string, blocking: boolean, text = `question ${questionId}?`): Command => ({
    _tag: "AskQuestion",
    ...meta(agent),
    questionId,
    text,
    blocking
  }),
  answerQuestion: (questionId: string, answer = "yes", source: "user" | "code" | "research" = "user"): Command => ({
    _tag: "AnswerQuestion",
    ...meta(),
    questionId,
    answer,
    source
  }),
  restate: (text = "Status prints JSON when asked."): Command => ({ _tag: "Restate", ...meta(agent), text }),
  approveRestatement: (r: Event.Receipt): Command => ({ _tag: "ApproveRestatement", ...meta(), receipt: r, authority }),
  closeBrief: (): Command => ({ _tag: "CloseBrief", ...meta() }),
  resumeInterview: (): Command => ({ _tag: "ResumeInterview", ...meta() }),
  proposeSpec: (spec: Spec.Spec): Command => ({ _tag: "ProposeSpec", ...meta(agent), spec }),
  approveSpec: (r: Event.Receipt): Command => ({ _tag: "ApproveSpec", ...meta(), receipt: r, authority }),
  recordPreflight: (observation: Partial<Event.PreflightObservation> = {}): Command => ({
    _tag: "RecordPreflight",
    ...meta(system),
    observation: { head: "abc123", dirtyPaths: [], missingPaths: [], invalidScopes: [], ...observation }
  }),
  proposePlan: (plan: Plan.Plan): Command => ({ _tag: "ProposePlan", ...meta(agent), plan }),
  approvePlan: (r: Event.Receipt): Command => ({ _tag: "ApprovePlan", ...meta(), receipt: r, authority }),
  startRun: (
    specDigest: Digest.Digest,
    planDigest: Digest.Digest,
    lease: { readonly held: boolean; readonly epoch: number } = { held: true, epoch: 1 }
  ): Command => ({ _tag: "StartRun", ...meta(runner), runId: RUN_ID, specDigest, planDigest, lease, authority }),
  recordAttemptFailure: (fingerprint: string, progressed = true, stepId = "build", attempt = 1): Command => ({
    _tag: "RecordAttemptFailure",
    ...meta(runner),
    stepId,
    attempt,
    fingerprint,
    progressed
  }),
  enterVerification: (pendingSteps: ReadonlyArray<string> = [], snapshotLsn = 42): Command => ({
    _tag: "EnterVerification",
    ...meta(system),
    pendingSteps,
    snapshotLsn
  }),
  complete: (verdicts: ReadonlyArray<Event.AcVerdict>, workers: ReadonlyArray<Event.Actor> = [runner]): Command => ({
    _tag: "Complete",
    ...meta(system),
    verdicts,
    workers,
    authority
  }),
  block: (category: Event.Blocker["category"] = "missing_dependency"): Command => ({
    _tag: "Block",
    ...meta(system),
    blocker: { category, owner: "user", requiredAction: "install the fixture database" }
  }),
  unblock: (
    to: "RUNNING" | "VERIFYING" = "RUNNING",
    options: {
      readonly codeChanged?: boolean
      readonly pendingSteps?: ReadonlyArray<string>
      readonly receipt?: Event.Receipt | null
    } = {}
  ): Command => ({
    _tag: "Unblock",
    ...meta(),
    to,
    resolution: "the dependency is installed",
    codeChanged: options.codeChanged ?? false,
    pendingSteps: options.pendingSteps ?? [],
    receipt: options.receipt ?? null,
    authority
  }),
  fail: (): Command => ({ _tag: "Fail", ...meta(system), reason: "the branch was force-pushed", evidenceRefs: ["ev-git"] }),
  reopen: (r: Event.Receipt | null = null, reason = "the contract was wrong"): Command => ({
    _tag: "Reopen",
    ...meta(),
    reason,
    receipt: r,
    authority
  }),
  pause: (reason?: string): Command => ({ _tag: "Pause", ...meta(), ...(reason === undefined ? {} : { reason }) }),
  resume: (): Command => ({ _tag: "Resume", ...meta() }),
  cancel: (): Command => ({ _tag: "Cancel", ...meta(), reason: "no longer needed" })
} as const

// ---------------------------------------------------------------------------------------------
// Driving a task
// ---------------------------------------------------------------------------------------------

/** A command, or a command built from the task as it is when the step runs (for bound receipts). */
export type StepInput = Command | ((task: Task.Task) => Command)

export interface Run {
  readonly aggregate: Task.Aggregate
  readonly events: ReadonlyArray<Event.Event>
}

export const start: Run = { aggregate: Task.initial, events: [] }

export const asTask = (aggregate: Task.Aggregate): Task.Task => {
  if (aggregate._tag !== "Task") throw new Error("expected a created task, got Absent")
  return aggregate
}

/** Decides and folds each step in turn; a rejected step fails the calling test. */
export const drive = (steps: ReadonlyArray<StepInput>, from: Run = start): Run => {
  let run = from
  for (const step of steps) {
    const command = typeof step === "function" ? step(asTask(run.aggregate)) : step
    const decision = Task.decide(command, run.aggregate)
    if (Either.isLeft(decision)) {
      throw new Error(`fixture step ${command._tag} was rejected: ${decision.left.message}`)
    }
    run = { aggregate: decision.right.reduce(Task.evolve, run.aggregate), events: [...run.events, ...decision.right] }
  }
  return run
}

/** The current spec digest of a task that has a spec. */
export const specDigestOf = (task: Task.Task): Digest.Digest => {
  if (task.spec === null) throw new Error("the task has no spec")
  return task.spec.digest
}

/** The current plan digest of a task that has a plan. */
export const planDigestOf = (task: Task.Task): Digest.Digest => {
  if (task.plan === null) throw new Error("the task has no plan")
  return task.plan.digest
}

export const approveRestatementNow = (task: Task.Task): Command => {
  if (task.brief.restatement === null) throw new Error("no restatement")
  return cmd.approveRestatement(receipt("restatement", task.brief.restatement.digest))
}
export const approveSpecNow = (task: Task.Task): Command =>
  cmd.approveSpec(receipt("spec", specDigestOf(task), {}, { revision: task.spec?.revision ?? null }))
export const approvePlanNow = (task: Task.Task): Command =>
  cmd.approvePlan(receipt("plan", planDigestOf(task), {}, { revision: task.plan?.revision ?? null }))
export const startRunNow = (task: Task.Task): Command => cmd.startRun(specDigestOf(task), planDigestOf(task))
export const completeNow = (task: Task.Task): Command => cmd.complete([pass("AC-001", specDigestOf(task))])

export interface ReachOptions {
  readonly spec?: Spec.Spec
  readonly plan?: Plan.Plan
  readonly pausedFrom?: "INTERVIEWING" | "RUNNING"
}

const stepsTo = (state: Task.State, options: ReachOptions): ReadonlyArray<StepInput> => {
  const spec = options.spec ?? specA
  const plan = options.plan ?? planFor(spec)
  const interviewing = [cmd.createTask(), cmd.beginInterview()]
  const specReady = [...interviewing, cmd.restate(), approveRestatementNow, cmd.closeBrief(), cmd.proposeSpec(spec)]
  const planApproved = [...specReady, approveSpecNow, cmd.recordPreflight(), cmd.proposePlan(plan), approvePlanNow]
  const running = [...planApproved, startRunNow]
  switch (state) {
    case "INITIALIZING":
      return [cmd.createTask()]
    case "INTERVIEWING":
      return interviewing
    case "SPEC_READY":
      return specReady
    case "SPEC_APPROVED":
      return specReady.concat([approveSpecNow])
    case "PREFLIGHT":
      return specReady.concat([approveSpecNow, cmd.recordPreflight()])
    case "PLAN_READY":
      return specReady.concat([approveSpecNow, cmd.recordPreflight(), cmd.proposePlan(plan)])
    case "PLAN_APPROVED":
      return planApproved
    case "RUNNING":
      return running
    case "VERIFYING":
      return running.concat([cmd.enterVerification()])
    case "COMPLETED":
      return running.concat([cmd.enterVerification(), completeNow])
    case "REOPENED":
      return running.concat([cmd.reopen()])
    case "PAUSED":
      return options.pausedFrom === "INTERVIEWING" ? interviewing.concat([cmd.pause()]) : running.concat([cmd.pause()])
    case "BLOCKED":
      return running.concat([cmd.block()])
    case "FAILED":
      return running.concat([cmd.fail()])
    case "CANCELLED":
      return running.concat([cmd.cancel()])
  }
}

/**
 * Drives a new task to `state` through real commands: the happy path to RUNNING, then the one
 * command that leaves it for REOPENED, PAUSED (from RUNNING unless told), BLOCKED
 * (missing_dependency), FAILED or CANCELLED.
 */
export const reach = (state: Task.State, options: ReachOptions = {}): Run & { readonly task: Task.Task } => {
  const run = drive(stepsTo(state, options))
  const task = asTask(run.aggregate)
  if (task.state !== state) throw new Error(`reach(${state}) ended in ${task.state}`)
  return { ...run, task }
}

/** A task reached through real commands. */
export type Reached = Run & { readonly task: Task.Task }

/**
 * A reached task computed on first use. Test files build these at collection time; computing them
 * only inside a test means a kernel that cannot reach the state fails that test (a mutant is
 * killed) instead of failing the file's collection, which a mutation run would not count.
 */
export const lazily = (make: () => Reached): Reached => {
  let value: Reached | undefined
  const get = (): Reached => (value ??= make())
  return {
    get aggregate() {
      return get().aggregate
    },
    get events() {
      return get().events
    },
    get task() {
      return get().task
    }
  }
}

/** Every state, each reached lazily by `reach`. */
export const reachAll = (options: ReachOptions = {}): Record<Task.State, Reached> =>
  Object.fromEntries(STATES.map((state) => [state, lazily(() => reach(state, options))])) as unknown as Record<
    Task.State,
    Reached
  >

/** The 15 states, in the seed's order, written out rather than read from the module under test. */
export const STATES = [
  "INITIALIZING",
  "INTERVIEWING",
  "SPEC_READY",
  "SPEC_APPROVED",
  "PREFLIGHT",
  "PLAN_READY",
  "PLAN_APPROVED",
  "RUNNING",
  "VERIFYING",
  "COMPLETED",
  "REOPENED",
  "PAUSED",
  "BLOCKED",
  "FAILED",
  "CANCELLED"
] as const satisfies ReadonlyArray<Task.State>

// ---------------------------------------------------------------------------------------------
// One valid event of each type
// ---------------------------------------------------------------------------------------------

const made = <Tag extends Event.Event["_tag"]>(
  input: Event.Input<Extract<Event.Event, { _tag: Tag }>>
): Extract<Event.Event, { _tag: Tag }> =>
  ({ ...input, version: Event.catalogue[input._tag] }) as unknown as Extract<Event.Event, { _tag: Tag }>

const sampleSpecDigest = Spec.digest(specA)
const samplePlan = planFor(specA)
const sampleReceipt = (subject: Event.ReceiptSubject, digest: Digest.Digest): Event.Receipt => receipt(subject, digest)

/** A valid event of every type of the catalogue, written out field by field. */
export const SAMPLE_EVENTS: { readonly [Tag in Event.Event["_tag"]]: Extract<Event.Event, { _tag: Tag }> } = {
  TaskCreated: made({ _tag: "TaskCreated", actor: user, at: 1, taskId: TASK_ID, projectId: PROJECT_ID, goal: "g", slug: "s" }),
  InterviewBegun: made({ _tag: "InterviewBegun", actor: user, at: 2 }),
  QuestionAsked: made({ _tag: "QuestionAsked", actor: agent, at: 3, questionId: "q1", text: "Which format?", blocking: true }),
  QuestionAnswered: made({ _tag: "QuestionAnswered", actor: user, at: 4, questionId: "q1", answer: "", source: "research" }),
  RestatementProposed: made({
    _tag: "RestatementProposed",
    actor: agent,
    at: 5,
    text: "One sentence.",
    digest: Task.restatementDigest("One sentence.")
  }),
  RestatementApproved: made({
    _tag: "RestatementApproved",
    actor: user,
    at: 6,
    digest: Task.restatementDigest("One sentence."),
    receipt: sampleReceipt("restatement", Task.restatementDigest("One sentence."))
  }),
  BriefClosed: made({ _tag: "BriefClosed", actor: user, at: 7, briefRevision: 3 }),
  InterviewResumed: made({ _tag: "InterviewResumed", actor: user, at: 8 }),
  SpecProposed: made({
    _tag: "SpecProposed",
    actor: agent,
    at: 9,
    revision: 1,
    digest: sampleSpecDigest,
    spec: specA,
    voidedApproval: false
  }),
  SpecApproved: made({
    _tag: "SpecApproved",
    actor: user,
    at: 10,
    revision: 1,
    digest: sampleSpecDigest,
    receipt: sampleReceipt("spec", sampleSpecDigest)
  }),
  PlanMarkedStale: made({
    _tag: "PlanMarkedStale",
    actor: agent,
    at: 11,
    planRevision: 1,
    planDigest: Plan.digest(samplePlan),
    specDigest: fakeDigest("c")
  }),
  PreflightRecorded: made({
    _tag: "PreflightRecorded",
    actor: system,
    at: 12,
    specDigest: sampleSpecDigest,
    observation: { head: null, dirtyPaths: ["README.md"], missingPaths: ["src/x.ts"], invalidScopes: ["lib/**"] }
  }),
  PlanProposed: made({
    _tag: "PlanProposed",
    actor: agent,
    at: 13,
    revision: 1,
    digest: Plan.digest(samplePlan),
    plan: samplePlan
  }),
  PlanApproved: made({
    _tag: "PlanApproved",
    actor: user,
    at: 14,
    revision: 1,
    digest: Plan.digest(samplePlan),
    receipt: sampleReceipt("plan", Plan.digest(samplePlan))
  }),
  RunStarted: made({
    _tag: "RunStarted",
    actor: runner,
    at: 15,
    runId: "run-1",
    specDigest: sampleSpecDigest,
    planDigest: Plan.digest(samplePlan),
    leaseEpoch: 2
  }),
  AttemptFailed: made({
    _tag: "AttemptFailed",
    actor: runner,
    at: 16,
    runId: "run-1",
    stepId: "build",
    attempt: 1,
    fingerprint: "exit-1:abc",
    progressed: false
  }),
  SuccessorGranted: made({
    _tag: "SuccessorGranted",
    actor: runner,
    at: 17,
    runId: "run-1",
    stepId: "build",
    successorsUsed: 1,
    successorBudget: 5
  }),
  TaskBlocked: made({
    _tag: "TaskBlocked",
    actor: system,
    at: 18,
    from: "RUNNING",
    blocker: { category: "missing_dependency", owner: "user", requiredAction: "install it", lastEvidence: ["ev-1"] }
  }),
  TaskUnblocked: made({ _tag: "TaskUnblocked", actor: user, at: 19, to: "RUNNING", resolution: "installed", receipt: null }),
  VerificationStarted: made({ _tag: "VerificationStarted", actor: system, at: 20, runId: "run-1", snapshotLsn: 99 }),
  TaskCompleted: made({
    _tag: "TaskCompleted",
    actor: system,
    at: 21,
    runId: "run-1",
    specDigest: sampleSpecDigest,
    planDigest: Plan.digest(samplePlan),
    verdicts: [pass("AC-001", sampleSpecDigest)]
  }),
  TaskFailed: made({ _tag: "TaskFailed", actor: system, at: 22, from: "VERIFYING", reason: "lost", evidenceRefs: ["ev-2"] }),
  TaskReopened: made({
    _tag: "TaskReopened",
    actor: user,
    at: 23,
    from: "FAILED",
    reason: "try again",
    receipt: sampleReceipt("reopen", sampleSpecDigest)
  }),
  TaskPaused: made({ _tag: "TaskPaused", actor: user, at: 24, from: "INTERVIEWING", reason: "lunch" }),
  TaskResumed: made({ _tag: "TaskResumed", actor: user, at: 25, to: "INTERVIEWING" }),
  TaskCancelled: made({ _tag: "TaskCancelled", actor: user, at: 26, from: "PAUSED", reason: "not needed" }),
  AttemptScheduled: made({ _tag: "AttemptScheduled", actor: runner, at: 27, runId: "run-1", stepId: "build", attempt: 1 }),
  AttemptTransitioned: made({
    _tag: "AttemptTransitioned",
    actor: runner,
    at: 28,
    runId: "run-1",
    stepId: "build",
    attempt: 1,
    from: "Pending",
    to: "Running"
  }),
  IntentRecorded: made({
    _tag: "IntentRecorded",
    actor: runner,
    at: 29,
    intentId: "intent-1",
    runId: "run-1",
    stepId: "build",
    attempt: 1,
    description: "npm run build"
  }),
  IntentDispatched: made({ _tag: "IntentDispatched", actor: runner, at: 30, intentId: "intent-1" }),
  IntentResolved: made({
    _tag: "IntentResolved",
    actor: runner,
    at: 31,
    intentId: "intent-1",
    outcome: "Failed",
    resultRefs: [fakeDigest("d")]
  }),
  IntentAbandoned: made({ _tag: "IntentAbandoned", actor: system, at: 32, intentId: "intent-2", reason: "never dispatched" }),
  CheckpointRecorded: made({ _tag: "CheckpointRecorded", actor: runner, at: 33, kind: "run_start", runId: "run-1" }),
  LeaseAcquired: made({
    _tag: "LeaseAcquired",
    actor: runner,
    at: 34,
    epoch: 1,
    owner: { workspaceId: "ws-1", host: "runner", pid: 4242, processStartedAt: 1000 },
    heartbeatMs: 2000,
    graceMs: 3000
  }),
  LeaseTakenOver: made({
    _tag: "LeaseTakenOver",
    actor: user,
    at: 35,
    epoch: 2,
    owner: { workspaceId: "ws-2", host: "cli", pid: 7, processStartedAt: 2000, sessionRef: "session-b" },
    displaced: { workspaceId: "ws-1", host: "runner", pid: 4242, processStartedAt: 1000 },
    heartbeatMs: 2000,
    graceMs: 3000
  }),
  LeaseReleased: made({ _tag: "LeaseReleased", actor: user, at: 36, epoch: 2 }),
  CommandExited: made({
    _tag: "CommandExited",
    actor: runner,
    at: 37,
    intentId: "i-1",
    runId: "run-1",
    stepId: "build",
    attempt: 1,
    exitCode: 2,
    signal: null,
    durationMs: 1_250,
    timedOut: false,
    stdoutRef: fakeDigest("d"),
    stderrRef: null,
    outputTail: "error: tests failed",
    changedPaths: ["src/a.ts", "test/a.test.ts"]
  }),
  BoundaryRecorded: made({
    _tag: "BoundaryRecorded",
    actor: runner,
    at: 38,
    runId: "run-1",
    head: "0123456789abcdef0123456789abcdef01234567",
    dirtyPaths: ["src/a.ts"],
    dirtyDigest: fakeDigest("e"),
    specDigest: sampleSpecDigest,
    planDigest: Plan.digest(samplePlan),
    nextStep: "docs"
  }),
  AttemptNoted: made({ _tag: "AttemptNoted", actor: user, at: 39, runId: "run-1", stepId: "docs", attempt: 1, note: "reviewed" }),
  IntentSettled: made({
    _tag: "IntentSettled",
    actor: user,
    at: 40,
    intentId: "i-1",
    runId: "run-1",
    stepId: "build",
    attempt: 1,
    outcome: "Succeeded",
    receipt: sampleReceipt("resolution", fakeDigest("f"))
  }),
  VerificationRecorded: made({
    _tag: "VerificationRecorded",
    actor: verifier,
    at: 41,
    runId: "run-1",
    snapshotLsn: 17,
    outcome: "APPROVED",
    verdicts: [pass("AC-001", sampleSpecDigest)]
  }),
  TurnRecorded: made({
    _tag: "TurnRecorded",
    actor: agent,
    at: 42,
    runId: "run-1",
    stepId: "docs",
    attempt: 1,
    turn: { _tag: "toolUsed" }
  }),
  TaskRewound: made({
    _tag: "TaskRewound",
    actor: user,
    at: 43,
    parent: "main",
    atLsn: 12,
    receipt: sampleReceipt("rewind", fakeDigest("a"))
  }),
  ApproversEntryRecorded: made({
    _tag: "ApproversEntryRecorded",
    actor: user,
    at: 44,
    entry: Keys.signEntry(Keys.alice, PROJECT_ID, {
      seq: 1,
      op: "add",
      approver: Keys.aliceApprover,
      at: 44,
      prev: null
    })
  }),
  TraceRecorded: made({
    _tag: "TraceRecorded",
    actor: runner,
    at: 45,
    runId: "run-1",
    epoch: 1,
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7"
  }),
  AgentReported: made({
    _tag: "AgentReported",
    actor: runner,
    at: 46,
    intentId: "in-1",
    runId: "run-1",
    stepId: "impl",
    attempt: 1,
    host: "claude-code",
    sessionId: "0f6c1d9e-7a51-4f0a-9d3b-2b8e4c1a7f10",
    model: "claude-sonnet-4-5-20250929",
    usage: { inputTokens: 1200, outputTokens: 340, cachedInputTokens: 9000, cacheCreationInputTokens: 5000 },
    costUsd: 0.0421,
    result: { ok: true, subtype: "success", text: "Added the flag.", turns: 3 },
    lines: 9,
    malformedLines: 0,
    unknownEvents: 0,
    transcriptRef: "sha256:0000000000000000000000000000000000000000000000000000000000000001",
    reason: null
  })
}

/**
 * How many fast-check runs a property makes: `full` in a normal test run, a tenth of it (at least
 * 10) inside a mutation run. A mutant that a property catches is almost always caught in its first
 * few runs; the full count is for the rare counterexample, which the normal run keeps looking for.
 * Stryker marks its worker processes with `STRYKER_MUTATOR_WORKER`.
 */
export const runs = (full: number): number =>
  process.env["STRYKER_MUTATOR_WORKER"] === undefined ? full : Math.max(10, Math.ceil(full / 10))
