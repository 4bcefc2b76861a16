/**
 * The event catalogue: every fact the task aggregate records, as one `effect/Schema` union.
 *
 * Events are the authority (state is a fold of them), so their shapes are versioned. Each event
 * carries `_tag` (its type) and `version`. Decoding is total: an unknown type, a version newer than
 * this kernel understands, or a malformed body is a typed {@link EventDecodeError} naming what was
 * wrong — never a crash — so an old binary reading a newer log stops with a clear message instead of
 * folding garbage.
 *
 * Time (`at`, epoch milliseconds) and identities arrive from the caller; the kernel reads no clock.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as AgentStep from "./AgentStep.js"
import * as Approvers from "./Approvers.js"
import * as Digest from "./Digest.js"
import * as Plan from "./Plan.js"
import * as Signature from "./Signature.js"
import * as Spec from "./Spec.js"
import * as Turn from "./Turn.js"

// ---------------------------------------------------------------------------------------------
// Shared value shapes
// ---------------------------------------------------------------------------------------------

/**
 * The 15 canonical task states of the lifecycle (seed 004). Public stage names (`brief`,
 * `contract`, …) are aliases over these; see `Task.stageOf`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TaskState = Schema.Literal(
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
)

/**
 * @since 0.1.0
 * @category models
 */
export type TaskState = typeof TaskState.Type

/**
 * Epoch milliseconds, supplied by the caller's clock.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Timestamp = Schema.Int.pipe(Schema.nonNegative())

const NonEmpty = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096))
const Text = Schema.String.pipe(Schema.maxLength(65_536))

/**
 * Who did something. `user` is a person at a terminal; `agent` is an AI worker inside a host
 * session; `runner` executes plan steps; `verifier` judges acceptance criteria; `system` is
 * Ratchet itself (recovery, reconciliation).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Actor = Schema.Struct({
  kind: Schema.Literal("user", "agent", "runner", "verifier", "system"),
  id: NonEmpty
})

/**
 * @since 0.1.0
 * @category models
 */
export type Actor = typeof Actor.Type

/**
 * What a receipt approves. A receipt for one subject never counts for another.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReceiptSubject = Schema.Literal("restatement", "spec", "plan", "reopen", "scope", "resolution", "unblock", "rewind")

/**
 * @since 0.1.0
 * @category models
 */
export type ReceiptSubject = typeof ReceiptSubject.Type

const receiptFields = {
  subject: ReceiptSubject,
  digest: Digest.Digest,
  actor: Actor,
  /** How the approval was given, e.g. `terminal` (an interactive TTY prompt). */
  channel: NonEmpty,
  at: Timestamp
}

/**
 * A person's approval, bound to the exact digest they were shown and signed with their approval
 * key (`Authority`). Only a receipt signed by one of the project's approvers, over the digest that
 * is current now, counts; nothing written in a project file, a host session or an earlier
 * revision substitutes for it. `signature` is `null` on a receipt written without a key (and on
 * every receipt an older Ratchet wrote): it is kept, and never counts.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Receipt = Schema.Struct({ ...receiptFields, signature: Schema.NullOr(Signature.Signature) })

/** A receipt as version 1 of the events carrying one stored it: without a signature. */
const ReceiptV1 = Schema.Struct(receiptFields)

/**
 * @since 0.1.0
 * @category models
 */
export type Receipt = typeof Receipt.Type

/**
 * Why a task cannot move, who can move it and what they must do (seed 004, §7).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Blocker = Schema.Struct({
  category: Schema.Literal(
    "missing_evidence",
    "missing_dependency",
    "missing_authority",
    "decision_needed",
    "verification_failed",
    "scope_violation",
    "retry_budget_spent",
    "repeated_failure",
    "no_progress"
  ),
  owner: Schema.Literal("user", "agent", "system"),
  requiredAction: NonEmpty,
  lastEvidence: Schema.optional(Schema.Array(NonEmpty))
})

/**
 * @since 0.1.0
 * @category models
 */
export type Blocker = typeof Blocker.Type

/**
 * A read-only look at the repository taken before planning: what the contract assumed and what is
 * actually there. Any `missingPaths` or `invalidScopes` is a wrong assumption.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PreflightObservation = Schema.Struct({
  head: Schema.NullOr(NonEmpty),
  dirtyPaths: Schema.Array(NonEmpty),
  missingPaths: Schema.Array(NonEmpty),
  invalidScopes: Schema.Array(NonEmpty)
})

/**
 * @since 0.1.0
 * @category models
 */
export type PreflightObservation = typeof PreflightObservation.Type

const verdictFields = {
  acId: NonEmpty,
  verdict: Schema.Literal("PASS", "FAIL", "INDETERMINATE", "NOT_RUN"),
  evidenceRefs: Schema.Array(NonEmpty),
  /** The spec digest the evidence was taken against; evidence from a stale digest never counts. */
  specDigest: Digest.Digest,
  verifier: Actor,
  at: Timestamp
}

/**
 * One acceptance criterion's verdict as the completion gate consumes it. It counts only when the
 * verifier of record signed it with an approver's key (`Authority`); `signature` is `null` on a
 * verdict recorded without one (an agent's pass, a pass off a terminal, an older Ratchet's).
 *
 * @since 0.1.0
 * @category schemas
 */
export const AcVerdict = Schema.Struct({ ...verdictFields, signature: Schema.NullOr(Signature.Signature) })

/** A verdict as version 1 of the events carrying one stored it: without a signature. */
const AcVerdictV1 = Schema.Struct(verdictFields)

/**
 * @since 0.1.0
 * @category models
 */
export type AcVerdict = typeof AcVerdict.Type

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

const common = { actor: Actor, at: Timestamp }

const event = <Tag extends string, Fields extends Schema.Struct.Fields>(tag: Tag, fields: Fields) =>
  Schema.TaggedStruct(tag, { version: Schema.Literal(1), ...common, ...fields })

/** An event type at version 2: its version 1 is decoded through {@link legacy} and upcast. */
const event2 = <Tag extends string, Fields extends Schema.Struct.Fields>(tag: Tag, fields: Fields) =>
  Schema.TaggedStruct(tag, { version: Schema.Literal(2), ...common, ...fields })

/** @since 0.1.0 @category schemas */
export const TaskCreated = event("TaskCreated", {
  taskId: NonEmpty,
  projectId: NonEmpty,
  goal: NonEmpty,
  slug: NonEmpty
})
/** @since 0.1.0 @category schemas */
export const InterviewBegun = event("InterviewBegun", {})
/** @since 0.1.0 @category schemas */
export const QuestionAsked = event("QuestionAsked", {
  questionId: NonEmpty,
  text: NonEmpty,
  blocking: Schema.Boolean
})
/** @since 0.1.0 @category schemas */
export const QuestionAnswered = event("QuestionAnswered", {
  questionId: NonEmpty,
  answer: Text,
  source: Schema.Literal("user", "code", "research")
})
/** @since 0.1.0 @category schemas */
export const RestatementProposed = event("RestatementProposed", { text: NonEmpty, digest: Digest.Digest })
/** @since 0.1.0 @category schemas */
export const RestatementApproved = event2("RestatementApproved", { digest: Digest.Digest, receipt: Receipt })
/** @since 0.1.0 @category schemas */
export const BriefClosed = event("BriefClosed", { briefRevision: Schema.Int })
/** @since 0.1.0 @category schemas */
export const InterviewResumed = event("InterviewResumed", {})
/** @since 0.1.0 @category schemas */
export const SpecProposed = event("SpecProposed", {
  revision: Schema.Int,
  digest: Digest.Digest,
  spec: Spec.Spec,
  /** True when this revision voided an earlier approval (a semantic change after approval). */
  voidedApproval: Schema.Boolean
})
/** @since 0.1.0 @category schemas */
export const SpecApproved = event2("SpecApproved", {
  revision: Schema.Int,
  digest: Digest.Digest,
  receipt: Receipt
})
/** @since 0.1.0 @category schemas */
export const PlanMarkedStale = event("PlanMarkedStale", {
  planRevision: Schema.Int,
  planDigest: Digest.Digest,
  /** The spec digest that superseded the one the plan was bound to. */
  specDigest: Digest.Digest
})
/** @since 0.1.0 @category schemas */
export const PreflightRecorded = event("PreflightRecorded", {
  specDigest: Digest.Digest,
  observation: PreflightObservation
})
/** @since 0.1.0 @category schemas */
export const PlanProposed = event("PlanProposed", {
  revision: Schema.Int,
  digest: Digest.Digest,
  plan: Plan.Plan
})
/** @since 0.1.0 @category schemas */
export const PlanApproved = event2("PlanApproved", {
  revision: Schema.Int,
  digest: Digest.Digest,
  receipt: Receipt
})
/** @since 0.1.0 @category schemas */
export const RunStarted = event("RunStarted", {
  runId: NonEmpty,
  specDigest: Digest.Digest,
  planDigest: Digest.Digest,
  leaseEpoch: Schema.Int
})
/** @since 0.1.0 @category schemas */
export const AttemptFailed = event("AttemptFailed", {
  runId: NonEmpty,
  stepId: NonEmpty,
  attempt: Schema.Int,
  /** Normalised exit code and output tail: equal fingerprints mean the same failure again. */
  fingerprint: NonEmpty,
  progressed: Schema.Boolean
})
/** @since 0.1.0 @category schemas */
export const SuccessorGranted = event("SuccessorGranted", {
  runId: NonEmpty,
  stepId: NonEmpty,
  successorsUsed: Schema.Int,
  successorBudget: Schema.Int
})
/** @since 0.1.0 @category schemas */
export const TaskBlocked = event("TaskBlocked", { from: TaskState, blocker: Blocker })
/** @since 0.1.0 @category schemas */
export const TaskUnblocked = event2("TaskUnblocked", {
  to: Schema.Literal("RUNNING", "VERIFYING"),
  resolution: NonEmpty,
  /** A person's signed receipt, when a blocker only a person lifts was open (a scope violation, a decision). */
  receipt: Schema.NullOr(Receipt)
})
/** @since 0.1.0 @category schemas */
export const VerificationStarted = event("VerificationStarted", {
  runId: NonEmpty,
  snapshotLsn: Schema.Int
})
/** @since 0.1.0 @category schemas */
export const TaskCompleted = event2("TaskCompleted", {
  runId: NonEmpty,
  specDigest: Digest.Digest,
  planDigest: Digest.Digest,
  verdicts: Schema.Array(AcVerdict)
})
/** @since 0.1.0 @category schemas */
export const TaskFailed = event("TaskFailed", {
  from: TaskState,
  reason: NonEmpty,
  evidenceRefs: Schema.Array(NonEmpty)
})
/** @since 0.1.0 @category schemas */
export const TaskReopened = event2("TaskReopened", {
  from: TaskState,
  reason: NonEmpty,
  receipt: Schema.optional(Receipt)
})
/** @since 0.1.0 @category schemas */
export const TaskPaused = event("TaskPaused", {
  from: Schema.Literal("INTERVIEWING", "RUNNING"),
  reason: Schema.optional(NonEmpty)
})
/** @since 0.1.0 @category schemas */
export const TaskResumed = event("TaskResumed", { to: Schema.Literal("INTERVIEWING", "RUNNING") })
/** @since 0.1.0 @category schemas */
export const TaskCancelled = event("TaskCancelled", { from: TaskState, reason: NonEmpty })

// Run-level facts: attempts, intents, checkpoints and the writer lease. They share the task's
// stream (so one conditional append covers them and the task together) and leave the task's
// lifecycle state alone; the store's read models are built from them.

/**
 * Who holds a writer lease: the checkout, the host and the process (pid and its start time, so a
 * reused pid is not mistaken for the holder), plus the host's own session reference if any.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LeaseOwner = Schema.Struct({
  workspaceId: NonEmpty,
  host: NonEmpty,
  pid: Schema.Int,
  processStartedAt: Schema.Int,
  sessionRef: Schema.optional(NonEmpty)
})

/**
 * @since 0.1.0
 * @category models
 */
export type LeaseOwner = typeof LeaseOwner.Type

const AttemptState = Schema.Literal("Pending", "Running", "Succeeded", "Failed", "Indeterminate", "Cancelled", "TimedOut")

/** @since 0.1.0 @category schemas */
export const AttemptScheduled = event("AttemptScheduled", { runId: NonEmpty, stepId: NonEmpty, attempt: Schema.Int })
/** @since 0.1.0 @category schemas */
export const AttemptTransitioned = event("AttemptTransitioned", {
  runId: NonEmpty,
  stepId: NonEmpty,
  attempt: Schema.Int,
  from: AttemptState,
  to: AttemptState
})
/** @since 0.1.0 @category schemas */
export const IntentRecorded = event("IntentRecorded", {
  intentId: NonEmpty,
  runId: NonEmpty,
  stepId: NonEmpty,
  attempt: Schema.Int,
  /** What the side effect is, for people and recovery: a command line, a tool call, a URL. */
  description: Text
})
/** @since 0.1.0 @category schemas */
export const IntentDispatched = event("IntentDispatched", { intentId: NonEmpty })
/** @since 0.1.0 @category schemas */
export const IntentResolved = event("IntentResolved", {
  intentId: NonEmpty,
  outcome: Schema.Literal("Succeeded", "Failed"),
  resultRefs: Schema.Array(NonEmpty)
})
/** @since 0.1.0 @category schemas */
export const IntentAbandoned = event("IntentAbandoned", { intentId: NonEmpty, reason: NonEmpty })
/** @since 0.1.0 @category schemas */
export const CheckpointRecorded = event("CheckpointRecorded", {
  kind: Schema.Literal("run_start", "step", "terminal"),
  runId: NonEmpty
})
/** @since 0.1.0 @category schemas */
export const LeaseAcquired = event("LeaseAcquired", {
  epoch: Schema.Int,
  owner: LeaseOwner,
  heartbeatMs: Schema.Int,
  graceMs: Schema.Int
})
/** @since 0.1.0 @category schemas */
export const LeaseTakenOver = event("LeaseTakenOver", {
  epoch: Schema.Int,
  owner: LeaseOwner,
  displaced: LeaseOwner,
  heartbeatMs: Schema.Int,
  graceMs: Schema.Int
})
/** @since 0.1.0 @category schemas */
export const LeaseReleased = event("LeaseReleased", { epoch: Schema.Int })

/**
 * A W3C trace id: 32 lowercase hexadecimal digits, not all zero.
 *
 * @since 0.4.0
 * @category schemas
 */
export const TraceId = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{32}$/),
  Schema.filter((id) => !/^0+$/.test(id), { message: () => "a trace id of zeros names no trace" })
)

/**
 * A W3C span id: 16 lowercase hexadecimal digits, not all zero.
 *
 * @since 0.4.0
 * @category schemas
 */
export const SpanId = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{16}$/),
  Schema.filter((id) => !/^0+$/.test(id), { message: () => "a span id of zeros names no span" })
)

/**
 * The trace a process that holds the lease exports its spans under (ADR 0036): written once by
 * each runner of the run, after its lease, only when traces are exported, so a page can link a run
 * to its traces in a trace viewer. `spanId` is that runner's run span.
 *
 * @since 0.4.0
 * @category schemas
 */
export const TraceRecorded = event("TraceRecorded", { runId: NonEmpty, epoch: Schema.Int, traceId: TraceId, spanId: SpanId })

/**
 * What a step's command did, recorded in the same append as the intent's resolution: the exit code
 * (or the signal that ended it), how long it ran, whether its timeout ended it, its output as blob
 * references with the last lines inline (the failure fingerprint is taken over them), and the paths
 * it changed according to git.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CommandExited = event("CommandExited", {
  intentId: NonEmpty,
  runId: NonEmpty,
  stepId: NonEmpty,
  attempt: Schema.Int,
  exitCode: Schema.NullOr(Schema.Int),
  signal: Schema.NullOr(NonEmpty),
  durationMs: Schema.Int.pipe(Schema.nonNegative()),
  timedOut: Schema.Boolean,
  stdoutRef: Schema.NullOr(NonEmpty),
  stderrRef: Schema.NullOr(NonEmpty),
  outputTail: Text,
  changedPaths: Schema.Array(NonEmpty)
})

/** A count a host reports (tokens): finite and not negative. */
const Count = Schema.Number.pipe(Schema.finite(), Schema.nonNegative())

/**
 * What an agent step's host said about its attempt, recorded in the same append as the process's
 * `CommandExited` (ADR 0039): the host's session id and model when it names them, the token usage
 * and the cost when it reports them, its own end of the answer (`result`, null when the stream
 * ended without one), how many lines were read, malformed or of a type the decoder does not know,
 * the transcript (the host's whole stdout) as a blob reference, and why the attempt did not
 * succeed according to the stream (null when it did).
 *
 * @since 0.4.0
 * @category schemas
 */
export const AgentReported = event("AgentReported", {
  intentId: NonEmpty,
  runId: NonEmpty,
  stepId: NonEmpty,
  attempt: Schema.Int,
  host: Schema.Literal(...AgentStep.hosts),
  sessionId: Schema.NullOr(NonEmpty),
  model: Schema.NullOr(NonEmpty),
  usage: Schema.NullOr(Schema.Struct({
    inputTokens: Count,
    outputTokens: Count,
    cachedInputTokens: Schema.NullOr(Count),
    cacheCreationInputTokens: Schema.NullOr(Count)
  })),
  costUsd: Schema.NullOr(Count),
  result: Schema.NullOr(Schema.Struct({
    ok: Schema.Boolean,
    subtype: NonEmpty,
    text: Schema.NullOr(Text),
    turns: Schema.NullOr(Schema.Int.pipe(Schema.nonNegative()))
  })),
  lines: Schema.Int.pipe(Schema.nonNegative()),
  malformedLines: Schema.Int.pipe(Schema.nonNegative()),
  unknownEvents: Schema.Int.pipe(Schema.nonNegative()),
  transcriptRef: Schema.NullOr(NonEmpty),
  reason: Schema.NullOr(Text)
})

/**
 * The workspace and the contract as a run saw them at a step boundary, beside the `step`
 * checkpoint it belongs to: resume compares them with what is there now.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BoundaryRecorded = event("BoundaryRecorded", {
  runId: NonEmpty,
  head: Schema.NullOr(NonEmpty),
  /** The dirty paths outside `.ratchet/`, sorted. */
  dirtyPaths: Schema.Array(NonEmpty),
  /** A digest over the dirty paths and their contents, so an edit of an already dirty file shows. */
  dirtyDigest: NonEmpty,
  specDigest: Digest.Digest,
  planDigest: Digest.Digest,
  /** The step the run continues with, or null when every step is done. */
  nextStep: Schema.NullOr(NonEmpty)
})

/**
 * A note on an attempt: what a person or agent said when it finished a manual step, or what
 * recovery decided about it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AttemptNoted = event("AttemptNoted", {
  runId: NonEmpty,
  stepId: NonEmpty,
  attempt: Schema.Int,
  note: Text
})

/**
 * A person's decision about a dispatched intent whose outcome nobody recorded (the runner died
 * after starting its effect), given on a terminal and bound by its receipt to the intent.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IntentSettled = event2("IntentSettled", {
  intentId: NonEmpty,
  runId: NonEmpty,
  stepId: NonEmpty,
  attempt: Schema.Int,
  outcome: Schema.Literal("Succeeded", "Failed"),
  receipt: Receipt
})

/**
 * One event of an attempt's turn region (`Turn`): what the worker's host reported of its current
 * turn (a prompt started it, a tool was used, failed or rejected, the stream was read to its end).
 * It changes only the attempt's turn flags, never the attempt's or the task's state.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TurnRecorded = event("TurnRecorded", {
  runId: NonEmpty,
  stepId: NonEmpty,
  attempt: Schema.Int,
  turn: Turn.Event
})

/**
 * One pass of verification over the run's frozen episode (`snapshotLsn`): a verdict per acceptance
 * criterion it judged, and the outcome. `APPROVED` means the completion gate was CLEAR for the spec
 * digest the verdicts name (the READY_TO_COMPLETE gate); `REVISE` that a required criterion FAILED;
 * `BLOCKED` that a check could not conclude (INDETERMINATE or NOT_RUN) or a PASS has no evidence;
 * `HELD` that some required criterion has no independent verdict yet (not verified, or verified
 * only by a worker), which more verification can supply without blocking the task.
 *
 * @since 0.1.0
 * @category schemas
 */
export const VerificationRecorded = event2("VerificationRecorded", {
  runId: NonEmpty,
  snapshotLsn: Schema.Int,
  outcome: Schema.Literal("APPROVED", "REVISE", "BLOCKED", "HELD"),
  verdicts: Schema.Array(AcVerdict)
})

/**
 * A rewind: the task now lives on `branch`, forked from `parent` at `atLsn`, by the person whose
 * signed receipt (subject `rewind`) it carries. Written on the new branch right after the fork.
 *
 * @since 0.2.0
 * @category schemas
 */
export const TaskRewound = event("TaskRewound", {
  parent: NonEmpty,
  atLsn: Schema.Int,
  receipt: Receipt
})

/**
 * One entry of a project's approvers chain (`Approvers`), as the store records it. It lives on the
 * project's approvers stream ({@link approversStreamOf}), never on a task's.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ApproversEntryRecorded = event("ApproversEntryRecorded", { entry: Approvers.Entry })

/**
 * The stream a store records a project's approvers chain on: beside the project's tasks, under an
 * id no task id can take (task ids are `t-…`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const approversStreamOf = (projectId: string): string => `approvers.${projectId}`

/**
 * Every task event, as one union. The store keeps `_tag` as the event type and `version` beside it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Event = Schema.Union(
  TaskCreated,
  InterviewBegun,
  QuestionAsked,
  QuestionAnswered,
  RestatementProposed,
  RestatementApproved,
  BriefClosed,
  InterviewResumed,
  SpecProposed,
  SpecApproved,
  PlanMarkedStale,
  PreflightRecorded,
  PlanProposed,
  PlanApproved,
  RunStarted,
  AttemptFailed,
  SuccessorGranted,
  TaskBlocked,
  TaskUnblocked,
  VerificationStarted,
  TaskCompleted,
  TaskFailed,
  TaskReopened,
  TaskPaused,
  TaskResumed,
  TaskCancelled,
  AttemptScheduled,
  AttemptTransitioned,
  IntentRecorded,
  IntentDispatched,
  IntentResolved,
  IntentAbandoned,
  CheckpointRecorded,
  LeaseAcquired,
  LeaseTakenOver,
  LeaseReleased,
  CommandExited,
  BoundaryRecorded,
  AttemptNoted,
  IntentSettled,
  VerificationRecorded,
  TurnRecorded,
  TaskRewound,
  ApproversEntryRecorded,
  TraceRecorded,
  AgentReported
)

/**
 * @since 0.1.0
 * @category models
 */
export type Event = typeof Event.Type

/**
 * The event type names, with the newest version of each this kernel understands.
 *
 * @since 0.1.0
 * @category models
 */
export const catalogue: Readonly<Record<Event["_tag"], number>> = {
  TaskCreated: 1,
  InterviewBegun: 1,
  QuestionAsked: 1,
  QuestionAnswered: 1,
  RestatementProposed: 1,
  RestatementApproved: 2,
  BriefClosed: 1,
  InterviewResumed: 1,
  SpecProposed: 1,
  SpecApproved: 2,
  PlanMarkedStale: 1,
  PreflightRecorded: 1,
  PlanProposed: 1,
  PlanApproved: 2,
  RunStarted: 1,
  AttemptFailed: 1,
  SuccessorGranted: 1,
  TaskBlocked: 1,
  TaskUnblocked: 2,
  VerificationStarted: 1,
  TaskCompleted: 2,
  TaskFailed: 1,
  TaskReopened: 2,
  TaskPaused: 1,
  TaskResumed: 1,
  TaskCancelled: 1,
  AttemptScheduled: 1,
  AttemptTransitioned: 1,
  IntentRecorded: 1,
  IntentDispatched: 1,
  IntentResolved: 1,
  IntentAbandoned: 1,
  CheckpointRecorded: 1,
  LeaseAcquired: 1,
  LeaseTakenOver: 1,
  LeaseReleased: 1,
  CommandExited: 1,
  BoundaryRecorded: 1,
  AttemptNoted: 1,
  IntentSettled: 2,
  VerificationRecorded: 2,
  TurnRecorded: 1,
  TaskRewound: 1,
  ApproversEntryRecorded: 1,
  TraceRecorded: 1,
  AgentReported: 1
}

/**
 * Events carry their type's current version implicitly when built through {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export type Input<E extends Event = Event> = E extends unknown ? Omit<E, "version"> : never

/**
 * Builds an event of the current version of its type.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <E extends Event>(input: Input<E>): E => ({ ...input, version: catalogue[input._tag] }) as unknown as E

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/**
 * A stored or received event this kernel cannot read. `reason` tells which:
 * - `unknown_type`: the `_tag` is not in the catalogue (written by a newer Ratchet, or not ours);
 * - `newer_version`: the type is known but its version is newer than this kernel understands;
 * - `malformed`: the type and version are known but the body does not match the schema.
 *
 * @since 0.1.0
 * @category errors
 */
export class EventDecodeError extends Schema.TaggedError<EventDecodeError>()("@ratchet/kernel/EventDecodeError", {
  reason: Schema.Literal("not_an_object", "unknown_type", "newer_version", "malformed"),
  type: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.Number),
  detail: Schema.String
}) {
  override get message(): string {
    const what = this.type === null ? "an event without a type" : `event "${this.type}"`
    switch (this.reason) {
      case "not_an_object":
        return `Cannot decode ${what}: ${this.detail}. The stored row is damaged; restore it from a backup or re-fold from an intact copy of the log.`
      case "unknown_type":
        return `Cannot decode ${what}: the type is not in this kernel's catalogue. It was probably written by a newer Ratchet; upgrade Ratchet to read this log.`
      case "newer_version":
        return `Cannot decode ${what} version ${this.version}: this kernel understands up to version ${this.detail}. Upgrade Ratchet to read this log.`
      case "malformed":
        return `Cannot decode ${what} version ${this.version}: ${this.detail}. The stored row is damaged; restore it from a backup.`
    }
  }
}

const isKnownType = (type: string): type is Event["_tag"] => Object.prototype.hasOwnProperty.call(catalogue, type)

const members: { readonly [K in Event["_tag"]]: Schema.Schema.AnyNoContext } = {
  TaskCreated,
  InterviewBegun,
  QuestionAsked,
  QuestionAnswered,
  RestatementProposed,
  RestatementApproved,
  BriefClosed,
  InterviewResumed,
  SpecProposed,
  SpecApproved,
  PlanMarkedStale,
  PreflightRecorded,
  PlanProposed,
  PlanApproved,
  RunStarted,
  AttemptFailed,
  SuccessorGranted,
  TaskBlocked,
  TaskUnblocked,
  VerificationStarted,
  TaskCompleted,
  TaskFailed,
  TaskReopened,
  TaskPaused,
  TaskResumed,
  TaskCancelled,
  AttemptScheduled,
  AttemptTransitioned,
  IntentRecorded,
  IntentDispatched,
  IntentResolved,
  IntentAbandoned,
  CheckpointRecorded,
  LeaseAcquired,
  LeaseTakenOver,
  LeaseReleased,
  CommandExited,
  BoundaryRecorded,
  AttemptNoted,
  IntentSettled,
  VerificationRecorded,
  TurnRecorded,
  TaskRewound,
  ApproversEntryRecorded,
  TraceRecorded,
  AgentReported
}

/** How one older version of an event type is read: its own schema, then an upcast to the current. */
interface Legacy {
  readonly schema: Schema.Schema.AnyNoContext
  readonly upcast: (decoded: never) => Event
}

const older = <S extends Schema.Schema.AnyNoContext>(schema: S, upcast: (decoded: Schema.Schema.Type<S>) => Event): Legacy => ({
  schema,
  upcast: upcast as (decoded: never) => Event
})

const unsigned = <A extends object>(value: A): A & { readonly signature: null } => ({ ...value, signature: null })

/**
 * The older versions this kernel still reads, by type and version (ADR 0007). Each is written out
 * as it was released, never derived from the current one, so a change to the current schema can
 * never change how an old event reads. Version 1 of the events carrying a receipt or a verdict had
 * no signatures: they upcast with `signature: null`, which never counts as a person's act.
 */
const legacy: { readonly [K in Event["_tag"]]?: Readonly<Record<number, Legacy>> } = {
  RestatementApproved: {
    1: older(
      event("RestatementApproved", { digest: Digest.Digest, receipt: ReceiptV1 }),
      (e) => ({ ...e, version: 2, receipt: unsigned(e.receipt) })
    )
  },
  SpecApproved: {
    1: older(
      event("SpecApproved", { revision: Schema.Int, digest: Digest.Digest, receipt: ReceiptV1 }),
      (e) => ({ ...e, version: 2, receipt: unsigned(e.receipt) })
    )
  },
  PlanApproved: {
    1: older(
      event("PlanApproved", { revision: Schema.Int, digest: Digest.Digest, receipt: ReceiptV1 }),
      (e) => ({ ...e, version: 2, receipt: unsigned(e.receipt) })
    )
  },
  TaskUnblocked: {
    1: older(
      event("TaskUnblocked", { to: Schema.Literal("RUNNING", "VERIFYING"), resolution: NonEmpty }),
      (e) => ({ ...e, version: 2, receipt: null })
    )
  },
  TaskCompleted: {
    1: older(
      event("TaskCompleted", {
        runId: NonEmpty,
        specDigest: Digest.Digest,
        planDigest: Digest.Digest,
        verdicts: Schema.Array(AcVerdictV1)
      }),
      (e) => ({ ...e, version: 2, verdicts: e.verdicts.map(unsigned) })
    )
  },
  TaskReopened: {
    1: older(
      event("TaskReopened", { from: TaskState, reason: NonEmpty, receipt: Schema.optional(ReceiptV1) }),
      ({ receipt, ...rest }) => receipt === undefined ? { ...rest, version: 2 } : { ...rest, version: 2, receipt: unsigned(receipt) }
    )
  },
  IntentSettled: {
    1: older(
      event("IntentSettled", {
        intentId: NonEmpty,
        runId: NonEmpty,
        stepId: NonEmpty,
        attempt: Schema.Int,
        outcome: Schema.Literal("Succeeded", "Failed"),
        receipt: ReceiptV1
      }),
      (e) => ({ ...e, version: 2, receipt: unsigned(e.receipt) })
    )
  },
  VerificationRecorded: {
    1: older(
      event("VerificationRecorded", {
        runId: NonEmpty,
        snapshotLsn: Schema.Int,
        outcome: Schema.Literal("APPROVED", "REVISE", "BLOCKED", "HELD"),
        verdicts: Schema.Array(AcVerdictV1)
      }),
      (e) => ({ ...e, version: 2, verdicts: e.verdicts.map(unsigned) })
    )
  }
}

// Decoding against the one member named by `_tag` keeps errors about that event only, instead of
// one complaint per member of the union.
const decodeWith = (schema: Schema.Schema.AnyNoContext, input: unknown) =>
  Schema.decodeUnknownEither(schema as Schema.Schema<unknown, unknown>, { onExcessProperty: "error", errors: "all" })(input)

const decodeMember = (type: Event["_tag"], input: unknown) =>
  decodeWith(members[type], input) as Either.Either<Event, ParseResult.ParseError>

/**
 * The error for an event whose body does not match its schema: every issue, with the path to it.
 *
 * @since 0.3.0
 * @category errors
 */
export const malformedBody = (type: string, version: number | null, error: ParseResult.ParseError): EventDecodeError =>
  new EventDecodeError({
    reason: "malformed",
    type,
    version,
    detail: ParseResult.ArrayFormatter.formatErrorSync(error)
      .map((issue) => `${issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")}: ${issue.message}`)
      .join("; ")
  })

/**
 * Decodes one event, checking the type and version before the body so that a newer log fails with
 * "upgrade" rather than with a schema complaint.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decode = (input: unknown): Either.Either<Event, EventDecodeError> => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return Either.left(
      new EventDecodeError({
        reason: "not_an_object",
        type: null,
        version: null,
        detail: `expected an object, got ${input === null ? "null" : Array.isArray(input) ? "an array" : typeof input}`
      })
    )
  }
  const record = input as Record<string, unknown>
  const type = typeof record["_tag"] === "string" ? record["_tag"] : null
  const version = typeof record["version"] === "number" ? record["version"] : null
  if (type === null) {
    return Either.left(
      new EventDecodeError({ reason: "malformed", type: null, version, detail: "the `_tag` field is missing or not a string" })
    )
  }
  if (!isKnownType(type)) {
    return Either.left(new EventDecodeError({ reason: "unknown_type", type, version, detail: "" }))
  }
  const supported = catalogue[type]
  if (version !== null && Number.isInteger(version) && version > supported) {
    return Either.left(new EventDecodeError({ reason: "newer_version", type, version, detail: String(supported) }))
  }
  const old = version === null ? undefined : legacy[type]?.[version]
  return Either.mapLeft(
    old === undefined
      ? decodeMember(type, input)
      : Either.map(decodeWith(old.schema, input), (decoded) => old.upcast(decoded as never)),
    (error) => malformedBody(type, version, error)
  )
}

/**
 * Encodes an event to its JSON-safe stored form (the inverse of {@link decode}).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode: (event: Event) => unknown = Schema.encodeSync(Event)
