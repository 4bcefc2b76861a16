/**
 * The canonical command API: every use case of a task's lifecycle once, as typed commands and
 * typed results. The `ratchet` CLI, the MCP server and the host hooks are thin transports over it.
 *
 * Every write goes through the one command handler (`CommandHandler`): read the task summary (a
 * read model, O(1) in history) and the lease, let the kernel decide the command, append what it
 * decided with the expected stream version and the presented lease epoch, and decide again if the
 * task moved in between. The store checks both in the append's own transaction, so a refusal here
 * has written nothing. After a write, the task's projections (`.ratchet/tasks/…/*.md`) are
 * rewritten; a projection that cannot be written is a warning, never a failed command, because the
 * store is the authority and the next write rewrites it.
 *
 * Writes present no lease epoch unless the invocation carries one (`--lease-epoch`): a task whose
 * lease another writer holds is a {@link ControllerError.LeaseConflict} naming the holder.
 *
 * This module is the service's shape and its assembly. The use cases live in modules of one family
 * each, over a shared kit (`internal/UseCase`: the `write` and `command` helpers over the handler,
 * the task's reads and views, signed receipts): the brief (`internal/Brief`), the contract
 * (`internal/Contract`), approvals (`internal/Approvals`), run control (`internal/RunControl`),
 * steps (`internal/Steps`), a host session's turns (`internal/HostTurns`), history
 * (`internal/History`), the lease (`internal/Leases`) and the reads (`internal/Queries`).
 *
 * @since 0.1.0
 */
import type * as Approvers from "@ratchet/kernel/Approvers"
import type * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import type * as KernelSpec from "@ratchet/kernel/Spec"
import type * as Task from "@ratchet/kernel/Task"
import type * as Turn from "@ratchet/kernel/Turn"
import type * as LeaseError from "@ratchet/lease/LeaseError"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import type * as Owner from "@ratchet/lease/Owner"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Stream from "effect/Stream"
import type * as AgentFence from "./AgentFence.js"
import type * as ApproverCommands from "./ApproverCommands.js"
import type * as ApproverKey from "./ApproverKey.js"
import type * as ContractFile from "./ContractFile.js"
import type * as ControllerError from "./ControllerError.js"
import type * as Explain from "./Explain.js"
import * as AgentCalls from "./internal/AgentCalls.js"
import * as Approvals from "./internal/Approvals.js"
import * as Brief from "./internal/Brief.js"
import * as Contract from "./internal/Contract.js"
import * as History from "./internal/History.js"
import * as HostTurns from "./internal/HostTurns.js"
import * as Leases from "./internal/Leases.js"
import * as Queries from "./internal/Queries.js"
import * as RunControl from "./internal/RunControl.js"
import * as Steps from "./internal/Steps.js"
import * as UseCase from "./internal/UseCase.js"
import type * as Preflight from "./Preflight.js"
import type * as Projection from "./Projection.js"
import type * as TaskView from "./TaskView.js"
import type * as Workspace from "./Workspace.js"

/**
 * The project this controller serves: the located checkout (its root, project file and workspace).
 *
 * @since 0.1.0
 * @category services
 */
export class Project extends Context.Tag("@ratchet/controller/Project")<Project, Workspace.Located>() {}

/**
 * Who is asking, and under which lease epoch (when the caller works under a lease it holds).
 *
 * @since 0.1.0
 * @category models
 */
export interface Invocation {
  readonly actor: Event.Actor
  readonly leaseEpoch?: number | undefined
  /**
   * The person's unlocked approval key, for the person-only acts of this invocation (approvals,
   * reopening a FAILED task, settling a step, lifting a person's blocker, rewinding). Such an act
   * is recorded as the key's approver (`user:<id>`), whatever `actor` says; without a key its
   * receipt is unsigned, and the kernel's gate holds it.
   */
  readonly signer?: ApproverKey.Signer | undefined
}

/**
 * The result of a write: the task after it, what was appended, and what could not be projected.
 *
 * @since 0.1.0
 * @category models
 */
export interface Written {
  readonly task: TaskView.TaskView
  readonly events: ReadonlyArray<Event.Event["_tag"]>
  readonly firstLsn: number | null
  readonly lastLsn: number | null
  readonly projection: string | null
  readonly warnings: ReadonlyArray<string>
}

/**
 * What an approval shows the person before they type the digest's first characters.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalSubject {
  readonly taskId: string
  readonly subject: "restatement" | "spec" | "plan" | "reopen" | "resolution" | "unblock" | "rewind"
  readonly digest: Digest.Digest
  /** The thing approved, as text: the restatement, or the rendered spec or plan. */
  readonly text: string
}

/**
 * How many characters of the digest's hex a person types to approve.
 *
 * @since 0.1.0
 * @category constants
 */
export const confirmationLength: number = Approvals.confirmationLength

/**
 * The characters a person types to confirm `digest`: the first {@link confirmationLength} hex
 * characters after `sha256:`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const confirmationOf: (digest: string) => string = Approvals.confirmationOf


/**
 * @since 0.1.0
 * @category models
 */
export type ReadError = ControllerError.TaskNotFound | ControllerError.InvalidRequest | EventStore.InvalidRequest | StorageError

/**
 * @since 0.1.0
 * @category models
 */
export type WriteError =
  | ReadError
  | Task.Refused
  | Task.Held
  | ControllerError.LeaseConflict
  | ControllerError.WriteConflict
  | EventStore.AppendError

/**
 * What a change of the project's approvers can fail with.
 *
 * @since 0.2.0
 * @category models
 */
export type ApproverError =
  | ControllerError.InvalidRequest
  | Approvers.ChainError
  | EventStore.AppendError
  | EventStore.InvalidRequest
  | StorageError

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly project: Workspace.Located
  /** Creates a task and begins its interview (after the setup check), in one append. */
  readonly createTask: (input: { readonly goal: string; readonly slug?: string | undefined }, invocation: Invocation) => Effect.Effect<Written, WriteError>
  readonly listTasks: Effect.Effect<ReadonlyArray<TaskView.TaskView>, EventStore.InvalidRequest | StorageError>
  readonly status: (taskId: string) => Effect.Effect<TaskView.TaskView, ReadError>
  readonly ask: (taskId: string, input: { readonly text: string; readonly blocking: boolean }, invocation: Invocation) => Effect.Effect<Written & { readonly questionId: string }, WriteError>
  readonly answer: (
    taskId: string,
    input: { readonly questionId: string; readonly text: string; readonly source: "user" | "code" | "research" },
    invocation: Invocation
  ) => Effect.Effect<Written, WriteError>
  readonly restate: (taskId: string, text: string, invocation: Invocation) => Effect.Effect<Written, WriteError>
  readonly closeBrief: (taskId: string, invocation: Invocation) => Effect.Effect<Written, WriteError>
  /** Proposes the spec read from `file`; an editorial-only change appends nothing. */
  readonly proposeSpec: (taskId: string, file: string, invocation: Invocation) => Effect.Effect<
    Written & { readonly digest: Digest.Digest; readonly changed: ReadonlyArray<KernelSpec.SemanticField> },
    WriteError | ContractFile.ContractFileError
  >
  readonly proposePlan: (taskId: string, file: string, invocation: Invocation) => Effect.Effect<
    Written & { readonly digest: Digest.Digest },
    WriteError | ContractFile.ContractFileError
  >
  readonly preflight: (taskId: string, invocation: Invocation) => Effect.Effect<
    Written & { readonly observation: Event.PreflightObservation },
    WriteError | Preflight.PreflightError
  >
  /**
   * What approving `subject` would approve, to show before asking for the confirmation; the
   * kernel's refusal when the task's state allows no such approval (nothing is shown then).
   */
  readonly approvalSubject: (
    taskId: string,
    subject: Exclude<ApprovalSubject["subject"], "resolution" | "unblock" | "rewind">
  ) => Effect.Effect<ApprovalSubject, ReadError | Task.Refused>
  /**
   * Records a receipt for `subject` at `digest` (the one the person was shown) on `channel`; the
   * kernel judges it (only a user on a terminal, only the current digest).
   */
  readonly approve: (
    taskId: string,
    input: { readonly subject: "restatement" | "spec" | "plan"; readonly digest: Digest.Digest; readonly channel: string },
    invocation: Invocation
  ) => Effect.Effect<Written, WriteError>
  readonly pause: (taskId: string, reason: string | undefined, invocation: Invocation) => Effect.Effect<Written, WriteError>
  /** Leaves PAUSED, or resumes the interview out of REOPENED. */
  readonly resume: (taskId: string, invocation: Invocation) => Effect.Effect<Written, WriteError>
  readonly cancel: (taskId: string, reason: string, invocation: Invocation) => Effect.Effect<Written, WriteError>
  /**
   * Asks the live runner holding the task's lease to cancel now or pause at its next step
   * boundary (see `RunRequest`), and waits up to `waitMs` for it to record that. `home` is
   * `$RATCHET_HOME`, where the runner looks for requests.
   */
  readonly requestStop: (
    taskId: string,
    input: { readonly kind: "cancel" | "pause"; readonly reason: string; readonly home: string; readonly waitMs: number },
    invocation: Invocation
  ) => Effect.Effect<{ readonly task: TaskView.TaskView; readonly acknowledged: boolean }, ReadError | ControllerError.LeaseConflict>
  /**
   * Ends a manual step's open attempt (Succeeded), with an optional note from its worker. What
   * changed in the checkout since the step started is held to the contract's scope in the same
   * append (StepScope): a path outside it blocks the task `scope_violation`, changes that cannot be
   * computed block it `decision_needed`, and a step started in another checkout is refused.
   */
  readonly stepDone: (
    taskId: string,
    input: { readonly stepId: string; readonly note: string | undefined },
    invocation: Invocation
  ) => Effect.Effect<Written, WriteError>
  /** What a person settles for an Indeterminate step: the text shown and the digest a receipt binds. */
  /**
   * A host session's tool call while a manual step awaits its worker (the session holding the
   * lease is that worker): `started` records and dispatches the call's intent in the step's open
   * attempt before the call runs, `ended` resolves it. The intent is keyed by the session and the
   * host's call id ({@link toolIntentId}), so a repeated hook writes nothing twice; nothing is
   * written when no manual step awaits or the intent is unknown (`intentId` is then null).
   */
  readonly toolCall: {
    readonly started: (
      taskId: string,
      input: { readonly sessionRef: string; readonly callId: string; readonly description: string },
      invocation: Invocation
    ) => Effect.Effect<Written & { readonly intentId: string | null }, WriteError>
    /**
     * `turn` is what the call's end reports of the worker's turn: the events that change the
     * intent's attempt's flags are appended with the resolution, in the attempt the call belonged
     * to (nothing when the intent is not resolved now).
     */
    readonly ended: (
      taskId: string,
      input: {
        readonly sessionRef: string
        readonly callId: string
        readonly outcome: "Succeeded" | "Failed"
        readonly turn: ReadonlyArray<Turn.Event>
      },
      invocation: Invocation
    ) => Effect.Effect<Written & { readonly intentId: string | null }, WriteError>
  }
  /**
   * The runner's agent's tool calls (ADR 0040). `fence` checks a session's claim to be the
   * runner's agent of an attempt against the store (`AgentFence.check`): the verdict `Agent`
   * carries the runner's epoch, which the other three present. `started` records and dispatches
   * an allowed side-effecting call as an intent of the attempt before it runs (once, however many
   * hooks report it), `ended` resolves it (`intentId` null when it was not recorded), `refused`
   * notes a call the guard denied on the attempt, with the reason.
   */
  readonly agentCall: {
    readonly fence: (claim: AgentFence.Claim) => Effect.Effect<AgentFence.Verdict, ReadError>
    readonly started: (
      agent: AgentFence.Verdict & { readonly _tag: "Agent" },
      input: { readonly sessionRef: string; readonly callId: string; readonly description: string },
      actor: Event.Actor
    ) => Effect.Effect<{ readonly events: ReadonlyArray<string>; readonly intentId: string }, WriteError>
    readonly ended: (
      agent: AgentFence.Verdict & { readonly _tag: "Agent" },
      input: { readonly sessionRef: string; readonly callId: string; readonly outcome: "Succeeded" | "Failed" },
      actor: Event.Actor
    ) => Effect.Effect<{ readonly events: ReadonlyArray<string>; readonly intentId: string | null }, WriteError>
    readonly refused: (
      agent: AgentFence.Verdict & { readonly _tag: "Agent" },
      input: { readonly description: string; readonly reason: string },
      actor: Event.Actor
    ) => Effect.Effect<{ readonly events: ReadonlyArray<string> }, WriteError>
  }
  /**
   * What the worker's host reported of its current turn (a prompt started one, a tool was used,
   * failed or rejected, the stream was read to its end), recorded as `TurnRecorded` events in the
   * open attempt of the manual step awaiting its worker: the kernel's turn region of that attempt.
   * The turn is the worker's, so the invocation presents its lease epoch, and `attempt` names the
   * attempt the caller saw awaiting: when another awaits by the time of the write (the step was
   * marked done and the run went on), nothing is recorded. Only the events that change the
   * attempt's flags are appended (`Turn.changes`); nothing is written when none does (`attempt` is
   * then null in the result).
   */
  readonly recordTurn: (
    taskId: string,
    input: { readonly attempt: { readonly stepId: string; readonly attempt: number }; readonly events: ReadonlyArray<Turn.Event> },
    invocation: Invocation
  ) => Effect.Effect<Written & { readonly attempt: { readonly stepId: string; readonly attempt: number } | null }, WriteError>
  readonly settlementSubject: (
    taskId: string,
    stepId: string,
    outcome: "succeeded" | "failed"
  ) => Effect.Effect<ApprovalSubject & { readonly intentId: string; readonly attempt: number }, ReadError>
  /**
   * Settles a step left Indeterminate (its effect was dispatched and its outcome never recorded):
   * a person's decision, on a terminal, recorded with a receipt, and the task back to RUNNING.
   */
  readonly settle: (
    taskId: string,
    input: {
      readonly stepId: string
      readonly outcome: "succeeded" | "failed"
      readonly confirmation: { readonly digest: Digest.Digest; readonly channel: string }
    },
    invocation: Invocation
  ) => Effect.Effect<Written, WriteError>
  /** Reopens; out of FAILED only with a receipt (`confirmation`) given on a terminal. */
  readonly reopen: (
    taskId: string,
    input: { readonly reason: string; readonly confirmation?: { readonly digest: Digest.Digest; readonly channel: string } | undefined },
    invocation: Invocation
  ) => Effect.Effect<Written, WriteError>
  /**
   * What lifting the task's blockers to `to` would approve, when one of them only a person lifts
   * (a scope violation, a decision: `Gate.personalBlockers`); `null` when none is.
   */
  readonly unblockSubject: (taskId: string, to: "RUNNING" | "VERIFYING") => Effect.Effect<ApprovalSubject | null, ReadError>
  /**
   * Back to RUNNING or VERIFYING; a blocker only a person lifts needs their `confirmation` of the
   * {@link Service.unblockSubject} digest, signed with their key.
   */
  readonly unblock: (
    taskId: string,
    input: {
      readonly to: "RUNNING" | "VERIFYING"
      readonly resolution: string
      readonly confirmation?: { readonly digest: Digest.Digest; readonly channel: string } | undefined
    },
    invocation: Invocation
  ) => Effect.Effect<Written, WriteError | Preflight.PreflightError>
  /** The gate as this caller would meet it: `leaseEpoch` is the lease it presents, if any. */
  readonly gate: (
    taskId: string,
    to: Task.State | undefined,
    options?: { readonly leaseEpoch?: number | undefined }
  ) => Effect.Effect<Explain.Explanation, ReadError | Preflight.PreflightError>
  /** The task's branches and which one it lives on. */
  readonly branches: (taskId: string) => Effect.Effect<{ readonly current: string; readonly branches: ReadonlyArray<EventStore.Branch> }, ReadError>
  /** What rewinding to `toLsn` approves: the task, the branch it leaves and the position kept. */
  readonly rewindSubject: (taskId: string, toLsn: number) => Effect.Effect<ApprovalSubject, ReadError | Task.Refused>
  /**
   * Forks the task's current branch at `toLsn` into a new branch the task lives on from now (from
   * PAUSED, BLOCKED, FAILED or VERIFYING); the old branch stays readable. A person's act: the
   * `confirmation` of the {@link Service.rewindSubject} digest, on a terminal, signed with an
   * approver's key, and recorded on the new branch (`TaskRewound`).
   */
  readonly rewind: (
    taskId: string,
    toLsn: number,
    invocation: Invocation,
    confirmation: { readonly digest: Digest.Digest; readonly channel: string }
  ) => Effect.Effect<Written & { readonly branch: string; readonly parent: string; readonly atLsn: number }, WriteError | EventStore.BranchExists>
  readonly log: (taskId: string, branch?: string) => Effect.Effect<
    Stream.Stream<EventStore.StoredEvent, EventStore.BranchNotFound | EventStore.InvalidRequest | StorageError>,
    ReadError
  >
  /** The project's approvers (`ratchet approver …`): see `ApproverCommands`. */
  readonly approvers: {
    readonly list: Effect.Effect<ApproverCommands.Listing, EventStore.InvalidRequest | StorageError>
    readonly writeBack: Effect.Effect<void, EventStore.InvalidRequest | StorageError | Projection.ProjectionError>
    readonly register: (signer: ApproverKey.Signer) => Effect.Effect<
      { readonly registered: boolean; readonly approver: Approvers.Approver; readonly warnings: ReadonlyArray<string> },
      ApproverError
    >
    readonly add: (signer: ApproverKey.Signer, approver: Approvers.Approver) => Effect.Effect<{ readonly warnings: ReadonlyArray<string> }, ApproverError>
    readonly remove: (signer: ApproverKey.Signer, id: string) => Effect.Effect<{ readonly warnings: ReadonlyArray<string> }, ApproverError>
    readonly adoption: Effect.Effect<ApproverCommands.Adoption, ApproverError>
    readonly trust: (
      actor: Event.Actor,
      confirmedHead: string | null
    ) => Effect.Effect<{ readonly taken: number; readonly approvers: ReadonlyArray<Approvers.Approver> }, ApproverError>
  }
  readonly lease: {
    readonly show: (taskId: string) => Effect.Effect<LeaseManager.Observation, ReadError>
    /** Refused (`terminal_state`) on a terminal task. */
    readonly acquire: (
      taskId: string,
      identity: LeaseIdentity
    ) => Effect.Effect<LeaseManager.Lease, ReadError | Task.Refused | LeaseManager.AcquireError | Owner.InvalidOwner>
    readonly heartbeat: (
      taskId: string,
      epoch: number
    ) => Effect.Effect<LeaseManager.Lease, ReadError | LeaseError.LeaseLost | LeaseError.LeaseNotHeld>
    readonly release: (
      taskId: string,
      epoch: number,
      actor: Event.Actor
    ) => Effect.Effect<void, ReadError | LeaseManager.ReleaseError | LeaseError.LeaseLost>
    /** Refused (`terminal_state`) on a terminal task. */
    readonly takeover: (
      taskId: string,
      identity: LeaseIdentity
    ) => Effect.Effect<LeaseManager.Takeover, ReadError | Task.Refused | LeaseManager.TakeoverError | Owner.InvalidOwner>
  }
}

/**
 * Who takes a lease from a transport: the host (`cli`, `claude-code`, …) and its session, in this
 * checkout's workspace and this process.
 *
 * @since 0.1.0
 * @category models
 */
export interface LeaseIdentity {
  readonly host: string
  readonly sessionRef?: string | undefined
  readonly actor: Event.Actor
}

/**
 * @since 0.1.0
 * @category services
 */
export class Controller extends Context.Tag("@ratchet/controller/Controller")<Controller, Service>() {}

/**
 * A new task id: `t-` and 8 hex characters (32 random bits; the stream id must be unique across the
 * store, and ids are typed by people).
 *
 * @since 0.1.0
 * @category constructors
 */
export const newTaskId: () => string = Brief.newTaskId

/**
 * A file-name-safe slug of a goal: lowercase ASCII letters and digits joined by `-`, at most 40
 * characters; `task` when nothing is left.
 *
 * @since 0.1.0
 * @category constructors
 */
export const slugOf: (goal: string) => string = Brief.slugOf

/**
 * Whether a lease owner is a host session (a Claude Code or Codex session as a manual step's
 * worker): its session reference is `<host>:<session id>` and it is not a runner.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isHostSession: (owner: Event.LeaseOwner) => boolean = UseCase.isHostSession

/**
 * The intent id of a host session's tool call: stable for the session and the host's call id, so
 * the hook of the call's end finds the intent its start recorded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolIntentId: (sessionRef: string, callId: string) => string = UseCase.toolIntentId

/**
 * The refusal of a write to a task whose lease someone else holds (the caller presented `presented`,
 * or no epoch): names the holder and when its grace ends.
 *
 * @since 0.1.0
 * @category constructors
 */
export const heldLease: (taskId: string, presented: number | null, lease: ReadModel.LeaseRow) => ControllerError.LeaseConflict = UseCase.heldLease

/**
 * A lease owner in one line: host, session, workspace and pid.
 *
 * @since 0.1.0
 * @category constructors
 */
export const describeOwner: (owner: Event.LeaseOwner) => string = UseCase.describeOwner

/**
 * A controller for the context's project over the context's store and lease manager: the shared
 * kit, and every use-case family's commands over it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  Service,
  never,
  Project | EventStore.EventStore | ReadModel.ReadModels | BlobStore.BlobStore | LeaseManager.LeaseManager
> = Effect.gen(function*() {
  const project = yield* Project
  const kit = yield* UseCase.make(project)
  return {
    project,
    ...Brief.make(kit),
    ...Queries.make(kit),
    ...Contract.make(kit),
    ...Approvals.make(kit),
    ...RunControl.make(kit),
    ...Steps.make(kit),
    ...HostTurns.make(kit),
    ...AgentCalls.make(kit),
    ...History.make(kit),
    ...Leases.make(kit)
  } satisfies Service
})

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Controller, never, Project | EventStore.EventStore | ReadModel.ReadModels | BlobStore.BlobStore | LeaseManager.LeaseManager> =
  Layer.effect(Controller, make)
