/**
 * The task lifecycle (seed 004): 15 canonical states, the edge table, and the task aggregate as a
 * decider — `decide(command, state)` returns the events to append or a typed rejection, and
 * `evolve(state, event)` folds one event into the state. Both are pure and total.
 *
 * The edge table is the seed's diagram plus the invalidation edges its §6 implies (ADR 0003):
 * a new semantic spec revision takes SPEC_APPROVED, PREFLIGHT, PLAN_READY or PLAN_APPROVED back to
 * SPEC_READY, a new plan revision takes PLAN_APPROVED back to PLAN_READY, and a cancel reaches
 * CANCELLED from every state that is not terminal.
 *
 * Rules the decider keeps that the edge table alone cannot:
 * - PAUSED returns only to the state it paused from; FAILED reopens only with a user receipt;
 *   CANCELLED and COMPLETED never change again.
 * - An attempt's failure never makes the task FAILED: it earns a successor attempt, or BLOCKED when
 *   the budget (at most 5 per task) is spent, the failure repeats or nothing progressed.
 * - Gated transitions evaluate a {@link Gate}; a HOLD is returned as {@link Held}, a domain result.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as Authority from "./Authority.js"
import * as Digest from "./Digest.js"
import * as Event from "./Event.js"
import * as Gate from "./Gate.js"
import * as Plan from "./Plan.js"
import * as Spec from "./Spec.js"
import * as TaskFold from "./TaskFold.js"

// ---------------------------------------------------------------------------------------------
// States and edges
// ---------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category schemas
 */
export const State = Event.TaskState

/**
 * @since 0.1.0
 * @category models
 */
export type State = Event.TaskState

/**
 * @since 0.1.0
 * @category models
 */
export const states: ReadonlyArray<State> = State.literals

/**
 * States nothing leaves.
 *
 * @since 0.1.0
 * @category models
 */
export const terminalStates: ReadonlyArray<State> = ["COMPLETED", "CANCELLED"]

/**
 * @since 0.1.0
 * @category guards
 */
export const isTerminal = (state: State): boolean => state === "COMPLETED" || state === "CANCELLED"

/**
 * Why an edge exists: the seed's forward path, a back edge, an invalidation (ADR 0003) or a cancel.
 *
 * @since 0.1.0
 * @category models
 */
export type EdgeKind = "forward" | "back" | "pause" | "block" | "fail" | "invalidation" | "cancel"

/**
 * @since 0.1.0
 * @category models
 */
export interface Edge {
  readonly from: State
  readonly to: State
  readonly kind: EdgeKind
}

const cancellable: ReadonlyArray<State> = [
  "INITIALIZING",
  "INTERVIEWING",
  "SPEC_READY",
  "SPEC_APPROVED",
  "PREFLIGHT",
  "PLAN_READY",
  "PLAN_APPROVED",
  "RUNNING",
  "VERIFYING",
  "REOPENED",
  "PAUSED",
  "BLOCKED",
  "FAILED"
]

/**
 * Every legal state change of the task lifecycle.
 *
 * @since 0.1.0
 * @category models
 */
export const edges: ReadonlyArray<Edge> = [
  { from: "INITIALIZING", to: "INTERVIEWING", kind: "forward" },
  { from: "INTERVIEWING", to: "SPEC_READY", kind: "forward" },
  { from: "SPEC_READY", to: "SPEC_APPROVED", kind: "forward" },
  { from: "SPEC_APPROVED", to: "PREFLIGHT", kind: "forward" },
  { from: "PREFLIGHT", to: "PLAN_READY", kind: "forward" },
  { from: "PLAN_READY", to: "PLAN_APPROVED", kind: "forward" },
  { from: "PLAN_APPROVED", to: "RUNNING", kind: "forward" },
  { from: "RUNNING", to: "VERIFYING", kind: "forward" },
  { from: "VERIFYING", to: "COMPLETED", kind: "forward" },
  { from: "PREFLIGHT", to: "REOPENED", kind: "back" },
  { from: "RUNNING", to: "REOPENED", kind: "back" },
  { from: "VERIFYING", to: "REOPENED", kind: "back" },
  { from: "REOPENED", to: "INTERVIEWING", kind: "back" },
  { from: "REOPENED", to: "SPEC_READY", kind: "back" },
  { from: "INTERVIEWING", to: "PAUSED", kind: "pause" },
  { from: "RUNNING", to: "PAUSED", kind: "pause" },
  { from: "PAUSED", to: "INTERVIEWING", kind: "pause" },
  { from: "PAUSED", to: "RUNNING", kind: "pause" },
  { from: "RUNNING", to: "BLOCKED", kind: "block" },
  { from: "VERIFYING", to: "BLOCKED", kind: "block" },
  { from: "BLOCKED", to: "RUNNING", kind: "block" },
  { from: "BLOCKED", to: "VERIFYING", kind: "block" },
  { from: "BLOCKED", to: "REOPENED", kind: "back" },
  { from: "RUNNING", to: "FAILED", kind: "fail" },
  { from: "VERIFYING", to: "FAILED", kind: "fail" },
  { from: "FAILED", to: "REOPENED", kind: "back" },
  { from: "SPEC_APPROVED", to: "SPEC_READY", kind: "invalidation" },
  { from: "PREFLIGHT", to: "SPEC_READY", kind: "invalidation" },
  { from: "PLAN_READY", to: "SPEC_READY", kind: "invalidation" },
  { from: "PLAN_APPROVED", to: "SPEC_READY", kind: "invalidation" },
  { from: "PLAN_APPROVED", to: "PLAN_READY", kind: "invalidation" },
  ...cancellable.map((from): Edge => ({ from, to: "CANCELLED", kind: "cancel" }))
]

/**
 * @since 0.1.0
 * @category guards
 */
export const isEdge = (from: State, to: State): boolean => edges.some((edge) => edge.from === from && edge.to === to)

/**
 * The public stage names people type, over the canonical states (seed 004, §5). `done` is the
 * completion transaction and `resume` is an action, so neither is a state of its own.
 *
 * @since 0.1.0
 * @category models
 */
export type Stage = "setup" | "brief" | "contract" | "plan" | "impl" | "verify" | "done" | "held"

/**
 * @since 0.1.0
 * @category constructors
 */
export const stageOf = (state: State): Stage => {
  switch (state) {
    case "INITIALIZING":
      return "setup"
    case "INTERVIEWING":
      return "brief"
    case "SPEC_READY":
    case "SPEC_APPROVED":
      return "contract"
    case "PREFLIGHT":
    case "PLAN_READY":
    case "PLAN_APPROVED":
      return "plan"
    case "RUNNING":
      return "impl"
    case "VERIFYING":
      return "verify"
    case "COMPLETED":
      return "done"
    case "REOPENED":
    case "PAUSED":
    case "BLOCKED":
    case "FAILED":
    case "CANCELLED":
      return "held"
  }
}

/**
 * The most successor attempts any task may have, whatever its spec asks for.
 *
 * @since 0.1.0
 * @category models
 */
export const maxSuccessorsPerTask = 5

// ---------------------------------------------------------------------------------------------
// The aggregate
// ---------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category models
 */
export interface Question {
  readonly questionId: string
  readonly text: string
  readonly blocking: boolean
  readonly answer: { readonly text: string; readonly source: "user" | "code" | "research" } | null
}

/**
 * The task as the decider sees it. `version` is the number of events folded (the stream version).
 *
 * @since 0.1.0
 * @category models
 */
export interface Task {
  readonly _tag: "Task"
  readonly version: number
  readonly taskId: string
  readonly projectId: string
  readonly goal: string
  readonly slug: string
  readonly state: State
  readonly pausedFrom: "INTERVIEWING" | "RUNNING" | null
  readonly brief: {
    readonly revision: number
    readonly questions: ReadonlyArray<Question>
    readonly restatement: { readonly text: string; readonly digest: Digest.Digest; readonly approved: boolean } | null
    readonly closed: boolean
  }
  readonly spec: {
    readonly revision: number
    readonly digest: Digest.Digest
    readonly spec: Spec.Spec
    readonly approvedDigest: Digest.Digest | null
    /** The receipt the approval was recorded with, checked again before a run and a completion. */
    readonly approval: Event.Receipt | null
  } | null
  readonly preflight: { readonly specDigest: Digest.Digest; readonly observation: Event.PreflightObservation } | null
  readonly plan: {
    readonly revision: number
    readonly digest: Digest.Digest
    readonly plan: Plan.Plan
    readonly approvedDigest: Digest.Digest | null
    /** The receipt the approval was recorded with, checked again before a run and a completion. */
    readonly approval: Event.Receipt | null
    readonly stale: boolean
  } | null
  readonly run: {
    readonly runId: string
    readonly specDigest: Digest.Digest
    readonly planDigest: Digest.Digest
    readonly leaseEpoch: number
  } | null
  readonly successorsUsed: number
  readonly failureFingerprints: ReadonlyArray<string>
  readonly blockers: ReadonlyArray<Event.Blocker>
}

/**
 * The task aggregate as a schema, so a stored snapshot of it (the store's task summary) is decoded
 * at the boundary like any other persisted shape.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TaskSchema = Schema.Struct({
  _tag: Schema.Literal("Task"),
  version: Schema.Int,
  taskId: Schema.String,
  projectId: Schema.String,
  goal: Schema.String,
  slug: Schema.String,
  state: State,
  pausedFrom: Schema.NullOr(Schema.Literal("INTERVIEWING", "RUNNING")),
  brief: Schema.Struct({
    revision: Schema.Int,
    questions: Schema.Array(Schema.Struct({
      questionId: Schema.String,
      text: Schema.String,
      blocking: Schema.Boolean,
      answer: Schema.NullOr(Schema.Struct({ text: Schema.String, source: Schema.Literal("user", "code", "research") }))
    })),
    restatement: Schema.NullOr(Schema.Struct({ text: Schema.String, digest: Digest.Digest, approved: Schema.Boolean })),
    closed: Schema.Boolean
  }),
  spec: Schema.NullOr(Schema.Struct({
    revision: Schema.Int,
    digest: Digest.Digest,
    spec: Spec.Spec,
    approvedDigest: Schema.NullOr(Digest.Digest),
    approval: Schema.NullOr(Event.Receipt)
  })),
  preflight: Schema.NullOr(Schema.Struct({ specDigest: Digest.Digest, observation: Event.PreflightObservation })),
  plan: Schema.NullOr(Schema.Struct({
    revision: Schema.Int,
    digest: Digest.Digest,
    plan: Plan.Plan,
    approvedDigest: Schema.NullOr(Digest.Digest),
    approval: Schema.NullOr(Event.Receipt),
    stale: Schema.Boolean
  })),
  run: Schema.NullOr(Schema.Struct({
    runId: Schema.String,
    specDigest: Digest.Digest,
    planDigest: Digest.Digest,
    leaseEpoch: Schema.Int
  })),
  successorsUsed: Schema.Int,
  failureFingerprints: Schema.Array(Schema.String),
  blockers: Schema.Array(Event.Blocker)
})

// The schema and the interface describe the same value; either drifting fails to compile here.
const _schemaIsTask = (value: typeof TaskSchema.Type): Task => value
const _taskIsSchema = (value: Task): typeof TaskSchema.Type => value
void _schemaIsTask
void _taskIsSchema

/**
 * Before the first event.
 *
 * @since 0.1.0
 * @category models
 */
export interface Absent {
  readonly _tag: "Absent"
  readonly version: 0
}

/**
 * @since 0.1.0
 * @category models
 */
export type Aggregate = Absent | Task

/**
 * @since 0.1.0
 * @category constructors
 */
export const initial: Aggregate = { _tag: "Absent", version: 0 }

/**
 * Folds one event. Events are facts already decided, so `evolve` applies them without judging
 * them; {@link replay} is the checked fold for reading a log. (Written in `TaskFold`, beside the
 * whole-history fold.)
 *
 * @since 0.1.0
 * @category transitions
 */
export const evolve: (aggregate: Aggregate, event: Event.Event) => Aggregate = TaskFold.evolve

/**
 * A log that does not fold: an event the state could not have produced.
 *
 * @since 0.1.0
 * @category errors
 */
export class CorruptHistory extends Schema.TaggedError<CorruptHistory>()("@ratchet/kernel/CorruptHistory", {
  position: Schema.Int,
  event: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `The task history does not fold at event #${this.position} (${this.event}): ${this.detail}. The log was written by something other than this kernel or was damaged; restore it from a backup.`
  }
}

/**
 * The checked fold: every state change must be an edge of the lifecycle and the first event must
 * create the task. Use it when reading a log from storage; {@link evolve} trusts its input.
 *
 * @since 0.1.0
 * @category transitions
 */
export const replay = (
  events: Iterable<Event.Event>,
  from: Aggregate = initial
): Either.Either<Aggregate, CorruptHistory> =>
  TaskFold.foldChecked(events, from, (before, after, event, position) => {
    if (before._tag === "Absent" && event._tag !== "TaskCreated") {
      return new CorruptHistory({ position, event: event._tag, detail: "the first event of a task must be TaskCreated" })
    }
    if (before._tag === "Task" && event._tag === "TaskCreated") {
      return new CorruptHistory({ position, event: event._tag, detail: "the task was already created" })
    }
    if (before._tag === "Task" && after._tag === "Task" && after.state !== before.state && !isEdge(before.state, after.state)) {
      return new CorruptHistory({
        position,
        event: event._tag,
        detail: `${before.state} → ${after.state} is not an edge of the lifecycle`
      })
    }
    return null
  })

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

interface Meta {
  readonly actor: Event.Actor
  readonly at: number
}

/**
 * Every command the task aggregate decides. Facts that live outside the task stream (the lease
 * as observed, the repository, which steps are terminal, verdicts) arrive inside the command, read
 * by the caller in the same transaction that appends the result.
 *
 * @since 0.1.0
 * @category models
 */
export type Command =
  | Meta & { readonly _tag: "CreateTask"; readonly taskId: string; readonly projectId: string; readonly goal: string; readonly slug: string }
  | Meta & { readonly _tag: "BeginInterview"; readonly projectInitialized: boolean; readonly storeWritable: boolean }
  | Meta & { readonly _tag: "AskQuestion"; readonly questionId: string; readonly text: string; readonly blocking: boolean }
  | Meta & {
    readonly _tag: "AnswerQuestion"
    readonly questionId: string
    readonly answer: string
    readonly source: "user" | "code" | "research"
  }
  | Meta & { readonly _tag: "Restate"; readonly text: string }
  | Meta & { readonly _tag: "ApproveRestatement"; readonly receipt: Event.Receipt; readonly authority: Authority.Authority }
  | Meta & { readonly _tag: "CloseBrief" }
  | Meta & { readonly _tag: "ResumeInterview" }
  | Meta & { readonly _tag: "ProposeSpec"; readonly spec: Spec.Spec }
  | Meta & { readonly _tag: "ApproveSpec"; readonly receipt: Event.Receipt; readonly authority: Authority.Authority }
  | Meta & { readonly _tag: "RecordPreflight"; readonly observation: Event.PreflightObservation }
  | Meta & { readonly _tag: "ProposePlan"; readonly plan: Plan.Plan }
  | Meta & { readonly _tag: "ApprovePlan"; readonly receipt: Event.Receipt; readonly authority: Authority.Authority }
  | Meta & {
    readonly _tag: "StartRun"
    readonly runId: string
    readonly specDigest: Digest.Digest
    readonly planDigest: Digest.Digest
    readonly lease: { readonly held: boolean; readonly epoch: number }
    readonly authority: Authority.Authority
  }
  | Meta & {
    readonly _tag: "RecordAttemptFailure"
    readonly stepId: string
    readonly attempt: number
    readonly fingerprint: string
    readonly progressed: boolean
  }
  | Meta & { readonly _tag: "EnterVerification"; readonly pendingSteps: ReadonlyArray<string>; readonly snapshotLsn: number }
  | Meta & {
    readonly _tag: "Complete"
    readonly verdicts: ReadonlyArray<Event.AcVerdict>
    readonly workers: ReadonlyArray<Event.Actor>
    readonly authority: Authority.Authority
  }
  | Meta & { readonly _tag: "Block"; readonly blocker: Event.Blocker }
  | Meta & {
    readonly _tag: "Unblock"
    readonly to: "RUNNING" | "VERIFYING"
    readonly resolution: string
    readonly codeChanged: boolean
    readonly pendingSteps: ReadonlyArray<string>
    /** A person's signed receipt: needed when a blocker only a person lifts is open (`Gate.personalBlockers`). */
    readonly receipt: Event.Receipt | null
    readonly authority: Authority.Authority
  }
  | Meta & { readonly _tag: "Fail"; readonly reason: string; readonly evidenceRefs: ReadonlyArray<string> }
  | Meta & {
    readonly _tag: "Reopen"
    readonly reason: string
    readonly receipt: Event.Receipt | null
    readonly authority: Authority.Authority
  }
  | Meta & { readonly _tag: "Pause"; readonly reason?: string }
  | Meta & { readonly _tag: "Resume" }
  | Meta & { readonly _tag: "Cancel"; readonly reason: string }

/**
 * Stable codes of a refused command. `stale_digest` and `stale_version` are conflicts (someone
 * else moved the task); the rest are invalid requests for the current state.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RefusalCode = Schema.Literal(
  "task_exists",
  "task_not_found",
  "forbidden_transition",
  "terminal_state",
  "stale_digest",
  "unknown_question",
  "contract_change_requires_reopen",
  "task_paused",
  "unknown_step"
)

/**
 * @since 0.1.0
 * @category models
 */
export type RefusalCode = typeof RefusalCode.Type

/**
 * A command the lifecycle does not allow in the current state, with the reason and what to do.
 *
 * @since 0.1.0
 * @category errors
 */
export class Refused extends Schema.TaggedError<Refused>()("@ratchet/kernel/TaskCommandRefused", {
  code: RefusalCode,
  command: Schema.String,
  state: Schema.NullOr(State),
  reason: Schema.String,
  action: Schema.String
}) {
  override get message(): string {
    return `${this.command} refused${this.state === null ? "" : ` in ${this.state}`}: ${this.reason} ${this.action}`
  }
}

/**
 * A gated command whose gate said HOLD. A domain result: the gate lists why and what to do.
 *
 * @since 0.1.0
 * @category errors
 */
export class Held extends Schema.TaggedError<Held>()("@ratchet/kernel/TaskCommandHeld", {
  command: Schema.String,
  gate: Gate.Gate
}) {
  override get message(): string {
    return `${this.command} is on HOLD: ${this.gate.reasons.map((reason) => reason.message).join(" ")}`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export type Rejection = Refused | Held

/**
 * @since 0.1.0
 * @category models
 */
export type Decision = Either.Either<ReadonlyArray<Event.Event>, Rejection>

const refuse = (
  command: Command,
  state: State | null,
  code: RefusalCode,
  reason: string,
  action: string
): Decision => Either.left(new Refused({ code, command: command._tag, state, reason, action }))

const emit = (...events: ReadonlyArray<Event.Event>): Decision => Either.right(events)

const meta = (command: Command) => ({ actor: command.actor, at: command.at, version: 1 as const })

/** The same, for the event types at version 2 (those carrying a signed receipt or verdicts). */
const meta2 = (command: Command) => ({ actor: command.actor, at: command.at, version: 2 as const })

const binding = (task: Task): Gate.Binding => ({
  taskVersion: task.version,
  specDigest: task.spec?.digest ?? null,
  planDigest: task.plan?.digest ?? null
})

const context = (task: Task, command: Command): Gate.Context => ({
  taskId: task.taskId,
  from: task.state,
  evaluatedAt: command.at,
  boundTo: binding(task)
})

const gated = (command: Command, gate: Gate.Gate, onClear: () => Decision): Decision =>
  Gate.isClear(gate) ? onClear() : Either.left(new Held({ command: command._tag, gate }))

/** The message for a command that the current state does not accept. */
const forbidden = (task: Task, command: Command, wanted: string): Decision => {
  if (isTerminal(task.state)) {
    return refuse(
      command,
      task.state,
      "terminal_state",
      task.state === "CANCELLED"
        ? "a cancelled task is terminal and is never reopened."
        : "a completed task is terminal.",
      "Create a new task to do this work again: ratchet task create --goal \"…\""
    )
  }
  if (task.state === "PAUSED") {
    return refuse(
      command,
      task.state,
      "task_paused",
      `the task is paused (from ${task.pausedFrom ?? "unknown"}); ${wanted}.`,
      `Resume it first: ratchet resume ${task.taskId}`
    )
  }
  return refuse(command, task.state, "forbidden_transition", `${wanted}.`, nextStep(task))
}

/**
 * What a person would do next from the task's state, as a sentence with the `ratchet` command.
 *
 * @since 0.1.0
 * @category constructors
 */
export const nextStep = (task: Task): string => {
  const id = task.taskId
  switch (task.state) {
    case "INITIALIZING":
      return `Begin the interview: ratchet task create finishes setup, or run ratchet status ${id}.`
    case "INTERVIEWING":
      return task.brief.closed
        ? `Propose the spec: ratchet spec ${id} --file spec.md`
        : `Finish the brief, then close it: ratchet brief ${id} close`
    case "SPEC_READY":
      return `Approve the spec: ratchet approve ${id} spec`
    case "SPEC_APPROVED":
      return `Inspect the repository: ratchet preflight ${id}`
    case "PREFLIGHT":
      return `Propose the plan: ratchet plan ${id} --file plan.yaml`
    case "PLAN_READY":
      return `Approve the plan: ratchet approve ${id} plan`
    case "PLAN_APPROVED":
      return `Start the run: ratchet run ${id}`
    case "RUNNING":
      return `Let the run finish its steps: ratchet run ${id}`
    case "VERIFYING":
      return `Verify the acceptance criteria: ratchet verify ${id}`
    case "REOPENED":
      return `Revise the spec (ratchet spec ${id} --file spec.md) or resume the interview (ratchet resume ${id}).`
    case "PAUSED":
      return `Resume the task: ratchet resume ${id}`
    case "BLOCKED":
      return `Resolve the blocker, then: ratchet unblock ${id} --to RUNNING|VERIFYING, or ratchet reopen ${id} --reason "…"`
    case "FAILED":
      return `Reopen with a receipt: ratchet reopen ${id} --reason "…" (needs your confirmation on a terminal)`
    case "COMPLETED":
    case "CANCELLED":
      return `Nothing: the task is terminal. Create a new task to do more.`
  }
}

/**
 * The digest a restatement receipt binds to: the sha256 of `{"restatement":<text>}` with the text
 * serialised by `JSON.stringify`, which escapes lone surrogates, so any string has a digest.
 *
 * @since 0.1.0
 * @category constructors
 */
export const restatementDigest = (text: string): Digest.Digest =>
  Digest.ofCanonical(`{"restatement":${JSON.stringify(text)}}`)

const successorBudget = (task: Task): number =>
  Math.min(task.spec?.spec.execution?.retry?.maxSuccessors ?? maxSuccessorsPerTask, maxSuccessorsPerTask)

/**
 * Decides a command against the current state: the events to append, or why not.
 *
 * @since 0.1.0
 * @category transitions
 */
export const decide = (command: Command, aggregate: Aggregate): Decision => {
  if (aggregate._tag === "Absent") {
    return command._tag === "CreateTask"
      ? emit({
        _tag: "TaskCreated",
        ...meta(command),
        taskId: command.taskId,
        projectId: command.projectId,
        goal: command.goal,
        slug: command.slug
      })
      : refuse(command, null, "task_not_found", "the task does not exist.", "List tasks with: ratchet task list")
  }
  const task = aggregate
  const id = task.taskId
  switch (command._tag) {
    case "CreateTask":
      return refuse(command, task.state, "task_exists", `task ${id} already exists.`, `Read it with: ratchet status ${id}`)

    case "BeginInterview":
      if (task.state !== "INITIALIZING") return forbidden(task, command, "the interview begins once, from INITIALIZING")
      return gated(
        command,
        Gate.setup(context(task, command), {
          projectInitialized: command.projectInitialized,
          storeWritable: command.storeWritable
        }),
        () => emit({ _tag: "InterviewBegun", ...meta(command) })
      )

    case "AskQuestion":
      if (task.state !== "INTERVIEWING") return forbidden(task, command, "questions are asked while INTERVIEWING")
      return emit({
        _tag: "QuestionAsked",
        ...meta(command),
        questionId: command.questionId,
        text: command.text,
        blocking: command.blocking
      })

    case "AnswerQuestion":
      if (task.state !== "INTERVIEWING") return forbidden(task, command, "questions are answered while INTERVIEWING")
      if (!task.brief.questions.some((question) => question.questionId === command.questionId)) {
        return refuse(
          command,
          task.state,
          "unknown_question",
          `question ${command.questionId} was never asked on task ${id}.`,
          `See the open questions with: ratchet status ${id}`
        )
      }
      return emit({
        _tag: "QuestionAnswered",
        ...meta(command),
        questionId: command.questionId,
        answer: command.answer,
        source: command.source
      })

    case "Restate":
      if (task.state !== "INTERVIEWING") return forbidden(task, command, "the goal is restated while INTERVIEWING")
      return emit({ _tag: "RestatementProposed", ...meta(command), text: command.text, digest: restatementDigest(command.text) })

    case "ApproveRestatement": {
      if (task.state !== "INTERVIEWING") return forbidden(task, command, "a restatement is approved while INTERVIEWING")
      const restatement = task.brief.restatement
      if (restatement === null) {
        return refuse(
          command,
          task.state,
          "forbidden_transition",
          "there is no restatement to approve.",
          `Restate the goal first: ratchet brief ${id} restate "<one sentence>"`
        )
      }
      return gated(
        command,
        Gate.restatementApproval(context(task, command), { digest: restatement.digest, receipt: command.receipt, authority: command.authority }),
        () => emit({ _tag: "RestatementApproved", ...meta2(command), digest: restatement.digest, receipt: command.receipt })
      )
    }

    case "CloseBrief":
      if (task.state !== "INTERVIEWING") return forbidden(task, command, "the brief is closed while INTERVIEWING")
      return gated(
        command,
        Gate.briefClosure(context(task, command), {
          questions: task.brief.questions.map((question) => ({
            questionId: question.questionId,
            text: question.text,
            blocking: question.blocking,
            answered: question.answer !== null
          })),
          restatement: task.brief.restatement
        }),
        () => emit({ _tag: "BriefClosed", ...meta(command), briefRevision: task.brief.revision })
      )

    case "ResumeInterview":
      if (task.state !== "REOPENED") return forbidden(task, command, "the interview resumes from REOPENED")
      return emit({ _tag: "InterviewResumed", ...meta(command) })

    case "ProposeSpec":
      return proposeSpec(task, command)

    case "ApproveSpec": {
      if (task.state !== "SPEC_READY" || task.spec === null) {
        return forbidden(task, command, "a spec is approved from SPEC_READY")
      }
      const spec = task.spec
      return gated(
        command,
        Gate.specApproval(context(task, command), {
          specDigest: spec.digest,
          revision: spec.revision,
          receipt: command.receipt,
          authority: command.authority
        }),
        () => emit({ _tag: "SpecApproved", ...meta2(command), revision: spec.revision, digest: spec.digest, receipt: command.receipt })
      )
    }

    case "RecordPreflight":
      if ((task.state !== "SPEC_APPROVED" && task.state !== "PREFLIGHT") || task.spec === null) {
        return forbidden(task, command, "preflight inspects the repository after the spec is approved")
      }
      return emit({
        _tag: "PreflightRecorded",
        ...meta(command),
        specDigest: task.spec.digest,
        observation: command.observation
      })

    case "ProposePlan":
      return proposePlan(task, command)

    case "ApprovePlan": {
      if (task.state !== "PLAN_READY" || task.plan === null) {
        return forbidden(task, command, "a plan is approved from PLAN_READY")
      }
      const plan = task.plan
      return gated(
        command,
        Gate.planApproval(context(task, command), {
          planDigest: plan.digest,
          revision: plan.revision,
          stale: plan.stale,
          receipt: command.receipt,
          authority: command.authority
        }),
        () => emit({ _tag: "PlanApproved", ...meta2(command), revision: plan.revision, digest: plan.digest, receipt: command.receipt })
      )
    }

    case "StartRun": {
      if (task.state === "INTERVIEWING" || task.state === "SPEC_READY") {
        return refuse(
          command,
          task.state,
          "forbidden_transition",
          `${task.state} → RUNNING skips the approved contract and plan; nothing runs before both are approved.`,
          nextStep(task)
        )
      }
      if (task.state !== "PLAN_APPROVED" || task.spec === null || task.plan === null) {
        return forbidden(task, command, "a run starts from PLAN_APPROVED")
      }
      const spec = task.spec
      const plan = task.plan
      return gated(
        command,
        Gate.runStart(context(task, command), {
          currentSpecDigest: spec.digest,
          approvedSpecDigest: spec.approvedDigest,
          currentPlanDigest: plan.digest,
          approvedPlanDigest: plan.approvedDigest,
          planStale: plan.stale || plan.plan.specDigest !== spec.digest,
          requestedSpecDigest: command.specDigest,
          requestedPlanDigest: command.planDigest,
          allowedScope: spec.spec.execution?.allowedScope ?? [],
          leaseHeld: command.lease.held,
          approvals: approvalsOf(spec, plan),
          authority: command.authority
        }),
        () =>
          emit({
            _tag: "RunStarted",
            ...meta(command),
            runId: command.runId,
            specDigest: spec.digest,
            planDigest: plan.digest,
            leaseEpoch: command.lease.epoch
          })
      )
    }

    case "RecordAttemptFailure":
      return recordAttemptFailure(task, command)

    case "EnterVerification": {
      if (task.state !== "RUNNING" || task.run === null) {
        return forbidden(task, command, "verification is entered from RUNNING")
      }
      const run = task.run
      return gated(
        command,
        Gate.verificationEntry(context(task, command), { pendingSteps: command.pendingSteps }),
        () => emit({ _tag: "VerificationStarted", ...meta(command), runId: run.runId, snapshotLsn: command.snapshotLsn })
      )
    }

    case "Complete": {
      if (task.state !== "VERIFYING" || task.spec === null || task.plan === null || task.run === null) {
        return forbidden(task, command, "only VERIFYING → COMPLETED, through the completion gate, completes a task")
      }
      const spec = task.spec
      const plan = task.plan
      const run = task.run
      const facts: Gate.VerdictFacts = {
        taskId: task.taskId,
        runId: run.runId,
        currentSpecDigest: spec.digest,
        workers: command.workers,
        authority: command.authority
      }
      return gated(
        command,
        Gate.completion(context(task, command), {
          ...facts,
          requiredAcs: spec.spec.acceptanceCriteria.filter((ac) => ac.required).map((ac) => ac.id),
          verdicts: command.verdicts,
          openBlockers: task.blockers.length,
          approvals: approvalsOf(spec, plan)
        }),
        () =>
          emit({
            _tag: "TaskCompleted",
            ...meta2(command),
            runId: run.runId,
            specDigest: spec.digest,
            planDigest: plan.digest,
            verdicts: Gate.countedVerdicts(facts, command.verdicts)
          })
      )
    }

    case "Block":
      if (task.state !== "RUNNING" && task.state !== "VERIFYING") {
        return forbidden(task, command, "a task blocks while RUNNING or VERIFYING")
      }
      return emit({ _tag: "TaskBlocked", ...meta(command), from: task.state, blocker: command.blocker })

    case "Unblock":
      if (task.state !== "BLOCKED") return forbidden(task, command, "only a BLOCKED task is unblocked")
      return gated(
        command,
        Gate.unblock(context(task, command), {
          to: command.to,
          blockers: task.blockers,
          codeChanged: command.codeChanged,
          pendingSteps: command.pendingSteps,
          receipt: command.receipt,
          authority: command.authority
        }),
        () => emit({ _tag: "TaskUnblocked", ...meta2(command), to: command.to, resolution: command.resolution, receipt: command.receipt })
      )

    case "Fail":
      if (task.state !== "RUNNING" && task.state !== "VERIFYING") {
        return forbidden(task, command, "a task fails only from RUNNING or VERIFYING, when its run cannot be recovered")
      }
      return emit({
        _tag: "TaskFailed",
        ...meta(command),
        from: task.state,
        reason: command.reason,
        evidenceRefs: command.evidenceRefs
      })

    case "Reopen":
      return reopen(task, command)

    case "Pause":
      if (task.state !== "INTERVIEWING" && task.state !== "RUNNING") {
        return forbidden(task, command, "a task pauses from INTERVIEWING or RUNNING")
      }
      return emit({
        _tag: "TaskPaused",
        ...meta(command),
        from: task.state,
        ...(command.reason === undefined ? {} : { reason: command.reason })
      })

    case "Resume":
      if (task.state !== "PAUSED" || task.pausedFrom === null) {
        return task.state === "BLOCKED" || task.state === "REOPENED"
          ? refuse(command, task.state, "forbidden_transition", `a ${task.state} task is resumed by resolving why it stopped.`, nextStep(task))
          : forbidden(task, command, "only a PAUSED task resumes")
      }
      return emit({ _tag: "TaskResumed", ...meta(command), to: task.pausedFrom })

    case "Cancel":
      if (isTerminal(task.state)) return forbidden(task, command, "a terminal task cannot be cancelled")
      return emit({ _tag: "TaskCancelled", ...meta(command), from: task.state, reason: command.reason })
  }
}

const proposeSpec = (task: Task, command: Extract<Command, { _tag: "ProposeSpec" }>): Decision => {
  const digest = Spec.digest(command.spec)
  const revision = (task.spec?.revision ?? 0) + 1
  const proposed = (voidedApproval: boolean): Event.Event => ({
    _tag: "SpecProposed",
    ...meta(command),
    revision,
    digest,
    spec: command.spec,
    voidedApproval
  })
  switch (task.state) {
    case "INTERVIEWING":
      return gated(
        command,
        Gate.specProposal(context(task, command), { briefClosed: task.brief.closed }),
        () => emit(proposed(false))
      )
    case "REOPENED": {
      // A reopen exists to change the contract: even an unchanged spec needs approving again. A
      // new contract also makes the plan (and its approval) stale, as it would before a reopen.
      const voided = proposed(task.spec?.approvedDigest != null)
      const plan = task.plan
      return plan === null || plan.stale || task.spec?.digest === digest
        ? emit(voided)
        : emit(voided, {
          _tag: "PlanMarkedStale",
          ...meta(command),
          planRevision: plan.revision,
          planDigest: plan.digest,
          specDigest: digest
        })
    }
    case "SPEC_READY":
      return task.spec !== null && task.spec.digest === digest ? emit() : emit(proposed(false))
    case "SPEC_APPROVED":
    case "PREFLIGHT":
    case "PLAN_READY":
    case "PLAN_APPROVED": {
      // Editorial-only edits keep the digest and change nothing downstream.
      if (task.spec !== null && task.spec.digest === digest) return emit()
      const plan = task.plan
      return plan === null || plan.stale
        ? emit(proposed(true))
        : emit(proposed(true), {
          _tag: "PlanMarkedStale",
          ...meta(command),
          planRevision: plan.revision,
          planDigest: plan.digest,
          specDigest: digest
        })
    }
    case "RUNNING":
    case "VERIFYING":
    case "BLOCKED":
    case "FAILED":
      return refuse(
        command,
        task.state,
        "contract_change_requires_reopen",
        "the contract cannot change under a run.",
        `Reopen the task first: ratchet reopen ${task.taskId} --reason "<what changes>"`
      )
    case "INITIALIZING":
    case "PAUSED":
    case "COMPLETED":
    case "CANCELLED":
      return forbidden(task, command, "a spec is proposed after the brief is closed")
  }
}

const proposePlan = (task: Task, command: Extract<Command, { _tag: "ProposePlan" }>): Decision => {
  if (
    (task.state !== "PREFLIGHT" && task.state !== "PLAN_READY" && task.state !== "PLAN_APPROVED") ||
    task.spec === null
  ) {
    return forbidden(task, command, "a plan is proposed after preflight of the approved spec")
  }
  const digest = Plan.digest(command.plan)
  // Re-proposing the plan under review changes nothing. In PREFLIGHT there is no plan under review:
  // a plan left from before a reopen is proposed again, for the contract approved since.
  if (task.state !== "PREFLIGHT" && task.plan !== null && task.plan.digest === digest && !task.plan.stale) return emit()
  const spec = task.spec
  return gated(
    command,
    Gate.planProposal(context(task, command), {
      currentSpecDigest: spec.digest,
      preflight: task.preflight === null
        ? null
        : {
          specDigest: task.preflight.specDigest,
          missingPaths: task.preflight.observation.missingPaths,
          invalidScopes: task.preflight.observation.invalidScopes
        },
      planSpecDigest: command.plan.specDigest
    }),
    () =>
      emit({
        _tag: "PlanProposed",
        ...meta(command),
        revision: (task.plan?.revision ?? 0) + 1,
        digest,
        plan: command.plan
      })
  )
}

const recordAttemptFailure = (
  task: Task,
  command: Extract<Command, { _tag: "RecordAttemptFailure" }>
): Decision => {
  if (task.state !== "RUNNING" || task.run === null) {
    return forbidden(task, command, "attempt failures are recorded while RUNNING")
  }
  if (!(task.plan?.plan.steps ?? []).some((step) => step.id === command.stepId)) {
    return refuse(
      command,
      task.state,
      "unknown_step",
      `step "${command.stepId}" is not in the approved plan.`,
      `See the plan's steps with: ratchet status ${task.taskId}`
    )
  }
  const run = task.run
  const failed: Event.Event = {
    _tag: "AttemptFailed",
    ...meta(command),
    runId: run.runId,
    stepId: command.stepId,
    attempt: command.attempt,
    fingerprint: command.fingerprint,
    progressed: command.progressed
  }
  const budget = successorBudget(task)
  const block = (category: Event.Blocker["category"], requiredAction: string): Decision =>
    emit(failed, {
      _tag: "TaskBlocked",
      ...meta(command),
      from: "RUNNING",
      blocker: { category, owner: "user", requiredAction, lastEvidence: [command.fingerprint] }
    })
  if (task.failureFingerprints.includes(command.fingerprint)) {
    return block(
      "repeated_failure",
      `Step ${command.stepId} failed the same way again; change the plan or the contract (ratchet reopen ${task.taskId}).`
    )
  }
  if (!command.progressed) {
    return block(
      "no_progress",
      `Step ${command.stepId} made no progress; change the plan or the contract (ratchet reopen ${task.taskId}).`
    )
  }
  if (task.successorsUsed >= budget) {
    return block(
      "retry_budget_spent",
      `All ${budget} successor attempts are spent; change the plan or the contract (ratchet reopen ${task.taskId}).`
    )
  }
  return emit(failed, {
    _tag: "SuccessorGranted",
    ...meta(command),
    runId: run.runId,
    stepId: command.stepId,
    successorsUsed: task.successorsUsed + 1,
    successorBudget: budget
  })
}

const approvalsOf = (spec: NonNullable<Task["spec"]>, plan: NonNullable<Task["plan"]>): Gate.Approvals => ({
  spec: { digest: spec.digest, revision: spec.revision, receipt: spec.approval },
  plan: { digest: plan.digest, revision: plan.revision, receipt: plan.approval }
})

/**
 * The approvals a run rests on, as the task holds them (`Gate.Approvals`), or null before the
 * task has both a spec and a plan.
 *
 * @since 0.2.0
 * @category getters
 */
export const approvals = (task: Task): Gate.Approvals | null =>
  task.spec === null || task.plan === null ? null : approvalsOf(task.spec, task.plan)

const reopen = (task: Task, command: Extract<Command, { _tag: "Reopen" }>): Decision => {
  const reopened = (): Decision =>
    emit({
      _tag: "TaskReopened",
      ...meta2(command),
      from: task.state,
      reason: command.reason,
      ...(command.receipt === null ? {} : { receipt: command.receipt })
    })
  switch (task.state) {
    case "PREFLIGHT":
    case "RUNNING":
    case "VERIFYING":
    case "BLOCKED":
      return reopened()
    case "FAILED": {
      if (task.spec === null) return forbidden(task, command, "a failed task without a spec cannot be reopened")
      return gated(
        command,
        Gate.reopenFromFailed(context(task, command), {
          specDigest: task.spec.digest,
          receipt: command.receipt,
          authority: command.authority
        }),
        reopened
      )
    }
    case "INITIALIZING":
    case "INTERVIEWING":
    case "SPEC_READY":
    case "SPEC_APPROVED":
    case "PLAN_READY":
    case "PLAN_APPROVED":
    case "REOPENED":
    case "PAUSED":
    case "COMPLETED":
    case "CANCELLED":
      return forbidden(
        task,
        command,
        "a task reopens from PREFLIGHT, RUNNING, VERIFYING, BLOCKED or (with a receipt) FAILED; before that, revise the spec instead"
      )
  }
}

/**
 * Decides and folds in one step: the new state and the events, or the rejection.
 *
 * @since 0.1.0
 * @category transitions
 */
export const handle = (
  command: Command,
  aggregate: Aggregate
): Either.Either<{ readonly state: Aggregate; readonly events: ReadonlyArray<Event.Event> }, Rejection> =>
  Either.map(decide(command, aggregate), (events) => ({ state: events.reduce(evolve, aggregate), events }))

/**
 * The cold fold: the state after every event, from nothing or from `from`. The same value as
 * folding {@link evolve} event by event, without building a task for each of the run-level facts
 * that make up most of a long history (see `TaskFold`).
 *
 * @since 0.1.0
 * @category transitions
 */
export const fold = (events: Iterable<Event.Event>, from: Aggregate = initial): Aggregate => TaskFold.fold(events, from)
