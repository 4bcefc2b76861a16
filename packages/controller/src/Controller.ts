/**
 * The canonical command API: every use case of a task's lifecycle once, as typed commands and
 * typed results. The `ratchet` CLI, the MCP server and the host hooks are thin transports over it.
 *
 * Every write is the same loop, the one the durability model describes: read the task summary (a
 * read model, O(1) in history) and the lease, let the kernel decide the command, append what it
 * decided with the expected stream version and the presented lease epoch, and re-decide if the
 * task moved in between. The store checks both in the append's own transaction, so a refusal here
 * has written nothing. After a write, the task's projections (`.ratchet/tasks/…/*.md`) are
 * rewritten; a projection that cannot be written is a warning, never a failed command, because the
 * store is the authority and the next write rewrites it.
 *
 * Writes present no lease epoch unless the invocation carries one (`--lease-epoch`): a task whose
 * lease another writer holds is a {@link ControllerError.LeaseConflict} naming the holder.
 *
 * @since 0.1.0
 */
import type * as Approvers from "@ratchet/kernel/Approvers"
import * as Authority from "@ratchet/kernel/Authority"
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Gate from "@ratchet/kernel/Gate"
import * as KernelPlan from "@ratchet/kernel/Plan"
import * as KernelSpec from "@ratchet/kernel/Spec"
import * as Task from "@ratchet/kernel/Task"
import * as Turn from "@ratchet/kernel/Turn"
import * as LeaseError from "@ratchet/lease/LeaseError"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Owner from "@ratchet/lease/Owner"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as ApproverCommands from "./ApproverCommands.js"
import * as CommandHandler from "./CommandHandler.js"
import type * as ApproverKey from "./ApproverKey.js"
import * as ContractFile from "./ContractFile.js"
import * as ControllerError from "./ControllerError.js"
import * as Episode from "./Episode.js"
import * as Explain from "./Explain.js"
import * as Preflight from "./Preflight.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as Projection from "./Projection.js"
import * as RunReport from "./RunReport.js"
import * as RunRequest from "./RunRequest.js"
import * as Progress from "@ratchet/kernel/Progress"
import * as Signed from "./Signed.js"
import * as StaleEvidence from "./StaleEvidence.js"
import * as StepScope from "./StepScope.js"
import * as TaskBranch from "./TaskBranch.js"
import * as TaskView from "./TaskView.js"
import * as WorkTree from "./WorkTree.js"
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
export const confirmationLength = 8

/**
 * The characters a person types to confirm `digest`: the first {@link confirmationLength} hex
 * characters after `sha256:`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const confirmationOf = (digest: string): string =>
  digest.slice(digest.indexOf(":") + 1, digest.indexOf(":") + 1 + confirmationLength)

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

const TaskIdSchema = EventStore.Id

/**
 * A new task id: `t-` and 8 hex characters (32 random bits; the stream id must be unique across the
 * store, and ids are typed by people).
 *
 * @since 0.1.0
 * @category constructors
 */
export const newTaskId = (): string => `t-${crypto.randomUUID().replace(/-/g, "").slice(0, 8)}`

/**
 * A file-name-safe slug of a goal: lowercase ASCII letters and digits joined by `-`, at most 40
 * characters; `task` when nothing is left.
 *
 * @since 0.1.0
 * @category constructors
 */
export const slugOf = (goal: string): string => {
  const slug = goal
    .normalize("NFKD")
    // Drop the combining marks NFKD split off, so "Ünïcödé" slugs as "unicode".
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40)
    .replace(/-+$/, "")
  return slug.length === 0 ? "task" : slug
}

const validSlug = /^[a-z0-9][a-z0-9-]{0,39}$/

/**
 * A controller for the context's project over the context's store and lease manager.
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
  const store = yield* EventStore.EventStore
  const blobs = yield* BlobStore.BlobStore
  const models = yield* ReadModel.ReadModels
  const leases = yield* LeaseManager.LeaseManager
  const projectId = project.project.projectId

  const checkId = (taskId: string) =>
    Either.isRight(Schema.decodeUnknownEither(TaskIdSchema)(taskId))
      ? Effect.succeed(taskId)
      : Effect.fail(
        new ControllerError.InvalidRequest({
          field: "task",
          reason: `${JSON.stringify(taskId.slice(0, 140))} is not a task id (1 to 128 characters from A-Z a-z 0-9 . _ : -).`,
          fix: "List this project's tasks with: ratchet task list"
        })
      )

  /** The branch a task lives on (the one created last; see TaskBranch). */
  const branchOf = (taskId: string) => Effect.map(store.branches(taskId), TaskBranch.current)

  /** The stored summary of a task of this project, on its current branch, or `TaskNotFound`. */
  const summaryOf = (taskId: string) =>
    Effect.gen(function*() {
      yield* checkId(taskId)
      const summary = yield* models.taskSummary(taskId, yield* branchOf(taskId))
      if (summary === null || summary.projectId !== projectId) {
        return yield* new ControllerError.TaskNotFound({ taskId, projectId })
      }
      return summary
    })

  const key = (taskId: string, branch?: string): LeaseManager.Key => ({ projectId, taskId, branch })

  /** The lease key of a task on its current branch (where the lease manager appends). */
  const keyOn = (taskId: string) => Effect.map(branchOf(taskId), (branch) => key(taskId, branch))

  const viewOf = (summary: ReadModel.TaskSummary) =>
    Effect.map(leases.observe(key(summary.streamId)), (lease) =>
      TaskView.make(summary.task, { version: summary.version, lastLsn: summary.lastLsn, branch: summary.branch }, lease))

  const project_ = (task: Task.Task) =>
    Projection.write(project.root, task).pipe(
      Effect.map((written) => ({ directory: written.directory as string | null, warnings: [] as ReadonlyArray<string> })),
      Effect.catchAll((error) => Effect.succeed({ directory: null, warnings: [error.message] }))
    )

  /**
   * A write through the one command handler (`CommandHandler`): decide `build`'s commands against
   * the stored task and append them under the expected version and the invocation's epoch,
   * deciding again when the task moved; then rewrite the task's projections.
   */
  const write = <E, R>(
    taskId: string | null,
    invocation: Invocation,
    build: (aggregate: Task.Aggregate, at: number) => Effect.Effect<ReadonlyArray<Task.Command | Event.Event>, E, R>,
    streamId: string = taskId ?? "",
    /** Events appended after the decided ones, in the same transaction (a lease release). */
    trailing: (state: Task.Task, at: number) => ReadonlyArray<Event.Event> = () => []
  ): Effect.Effect<Written, WriteError | E, R> =>
    Effect.gen(function*() {
      // A task of another project, or none, is named before anything is decided.
      const known = taskId === null ? null : yield* summaryOf(taskId)
      const handled = yield* CommandHandler.handle({
        projectId,
        streamId,
        branch: known?.branch ?? EventStore.mainBranch,
        epoch: invocation.leaseEpoch ?? null,
        decide: (read, at) => build(read.summary?.task ?? Task.initial, at),
        trailing,
        describeHolder: (lease) => describeOwner(lease.owner)
      }).pipe(
        Effect.provideService(EventStore.EventStore, store),
        Effect.provideService(ReadModel.ReadModels, models),
        Effect.catchTag("@ratchet/kernel/RunCommandRefused", (refused) => Effect.die(refused))
      )
      const after = handled.after.summary as ReadModel.TaskSummary
      if (handled.appended === null) {
        return { task: yield* viewOf(after), events: [], firstLsn: null, lastLsn: null, projection: null, warnings: [] } satisfies Written
      }
      const projected = yield* project_(after.task)
      return {
        task: yield* viewOf(after),
        events: handled.events.map((event) => event._tag),
        firstLsn: handled.appended.firstLsn,
        lastLsn: handled.appended.lastLsn,
        projection: projected.directory,
        warnings: projected.warnings
      } satisfies Written
    })

  /** A write of one command built from the existing task. */
  const command = <E = never, R = never>(
    taskId: string,
    invocation: Invocation,
    build: (task: Task.Task, meta: { readonly actor: Event.Actor; readonly at: number }) => Effect.Effect<Task.Command, E, R> | Task.Command
  ) =>
    write(taskId, invocation, (aggregate, at) => {
      if (aggregate._tag === "Absent") return Effect.die(new Error("summaryOf returned an absent task"))
      const built = build(aggregate, { actor: invocation.actor, at })
      return Effect.isEffect(built) ? Effect.map(built, (c) => [c]) : Effect.succeed([built])
    })

  /** Non-blank text of at most 4096 characters, trimmed, or an `InvalidRequest` naming `field`. */
  const requireText = (field: string, value: string, fix: string) => {
    const text = value.trim()
    return text.length === 0 || text.length > 4096
      ? Effect.fail(
        new ControllerError.InvalidRequest({
          field,
          reason: text.length === 0 ? "is empty." : `has ${text.length} characters; at most 4096.`,
          fix
        })
      )
      : Effect.succeed(text)
  }

  const createTask: Service["createTask"] = (input, invocation) => {
    const goal = input.goal.trim()
    if (goal.length === 0 || goal.length > 4096) {
      return Effect.fail(
        new ControllerError.InvalidRequest({
          field: "--goal",
          reason: goal.length === 0 ? "the goal is empty." : `the goal has ${goal.length} characters; at most 4096.`,
          fix: `Say in one sentence what the task must achieve: ratchet task create --goal "…"`
        })
      )
    }
    const slug = input.slug ?? slugOf(goal)
    if (!validSlug.test(slug)) {
      return Effect.fail(
        new ControllerError.InvalidRequest({
          field: "--slug",
          reason: `${JSON.stringify(slug.slice(0, 60))} is not a slug.`,
          fix: "Use 1 to 40 lowercase letters, digits and dashes, starting with a letter or digit, or leave it out."
        })
      )
    }
    const taskId = newTaskId()
    const meta = (at: number) => ({ actor: invocation.actor, at })
    return write(null, invocation, (_aggregate, at) =>
      Effect.succeed<ReadonlyArray<Task.Command>>([
        { _tag: "CreateTask", ...meta(at), taskId, projectId, goal, slug },
        // The setup check: this controller exists only for an initialised project on an open store.
        { _tag: "BeginInterview", ...meta(at), projectInitialized: true, storeWritable: true }
      ]), taskId)
  }

  const listTasks: Service["listTasks"] = Effect.flatMap(
    TaskBranch.summaries(projectId).pipe(
      Effect.provideService(EventStore.EventStore, store),
      Effect.provideService(ReadModel.ReadModels, models)
    ),
    (summaries) => Effect.forEach(summaries, viewOf)
  )

  const status: Service["status"] = (taskId) => Effect.flatMap(summaryOf(taskId), viewOf)

  const ask: Service["ask"] = (taskId, input, invocation) =>
    Effect.gen(function*() {
      const text = yield* requireText("<text>", input.text, `Ask a question: ratchet brief ${taskId} ask "…"`)
      let questionId = ""
      const written = yield* command(taskId, invocation, (task, meta) => {
        questionId = `Q-${task.brief.questions.length + 1}`
        return { _tag: "AskQuestion", ...meta, questionId, text, blocking: input.blocking }
      })
      return { ...written, questionId }
    })

  const answer: Service["answer"] = (taskId, input, invocation) =>
    Effect.flatMap(
      // A blank answer would count as answered and let the closure audit pass with nothing said.
      requireText("<text>", input.text, `Answer it: ratchet brief ${taskId} answer ${input.questionId} "…" --source user|code|research`),
      (text) =>
        command(taskId, invocation, (_task, meta) => ({
          _tag: "AnswerQuestion",
          ...meta,
          questionId: input.questionId,
          answer: text,
          source: input.source
        }))
    )

  const restate: Service["restate"] = (taskId, text, invocation) =>
    Effect.flatMap(
      requireText("<sentence>", text, `Restate the goal in one sentence: ratchet brief ${taskId} restate "…"`),
      (sentence) => command(taskId, invocation, (_task, meta) => ({ _tag: "Restate", ...meta, text: sentence }))
    )

  const closeBrief: Service["closeBrief"] = (taskId, invocation) =>
    command(taskId, invocation, (_task, meta) => ({ _tag: "CloseBrief", ...meta }))

  const proposeSpec: Service["proposeSpec"] = (taskId, file, invocation) =>
    Effect.gen(function*() {
      yield* summaryOf(taskId)
      const bytes = yield* ContractFile.readBounded(file)
      const document = yield* Either.match(ContractFile.decodeSpec(file, bytes), { onLeft: Effect.fail, onRight: Effect.succeed })
      const digest = KernelSpec.digest(document.semantic)
      let changed: ReadonlyArray<KernelSpec.SemanticField> = []
      const written = yield* command(taskId, invocation, (task, meta) => {
        changed = task.spec === null ? [] : KernelSpec.semanticChanges(task.spec.spec, document.semantic)
        return { _tag: "ProposeSpec", ...meta, spec: document.semantic }
      })
      return { ...written, digest, changed }
    })

  const proposePlan: Service["proposePlan"] = (taskId, file, invocation) =>
    Effect.gen(function*() {
      // An unknown task is named before the file is read.
      yield* summaryOf(taskId)
      const bytes = yield* ContractFile.readBounded(file)
      let digest: Digest.Digest | undefined
      const written = yield* command(taskId, invocation, (task, meta): Effect.Effect<
        Task.Command,
        ContractFile.ContractFileError | ControllerError.InvalidRequest
      > => {
        const spec = task.spec
        if (spec === null) {
          return Effect.fail(
            new ControllerError.InvalidRequest({
              field: "task",
              reason: `task ${taskId} has no spec yet; a plan is made for an approved spec.`,
              fix: `Propose the spec first: ratchet spec ${taskId} --file spec.md`
            })
          )
        }
        return Either.match(ContractFile.decodePlan(file, bytes, spec.spec), {
          onLeft: (error) => Effect.fail(error),
          onRight: (plan) => {
            digest = KernelPlan.digest(plan)
            return Effect.succeed<Task.Command>({ _tag: "ProposePlan", ...meta, plan })
          }
        })
      })
      // The write decided a plan (or failed): the digest was set by then.
      return { ...written, digest: digest as Digest.Digest }
    })

  const preflight: Service["preflight"] = (taskId, invocation) =>
    Effect.gen(function*() {
      let observation: Event.PreflightObservation | null = null
      const written = yield* command(taskId, invocation, (task, meta) =>
        task.spec === null
          ? Effect.succeed<Task.Command>({
            _tag: "RecordPreflight",
            ...meta,
            observation: { head: null, dirtyPaths: [], missingPaths: [], invalidScopes: [] }
          })
          : Effect.map(Preflight.inspect(project.root, task.spec.spec), (seen): Task.Command => {
            observation = seen
            return { _tag: "RecordPreflight", ...meta, observation: seen }
          }))
      return { ...written, observation: observation ?? { head: null, dirtyPaths: [], missingPaths: [], invalidScopes: [] } }
    })

  /**
   * The kernel's refusal of approving `subject` in the task's state, or `null`. Decided with a probe
   * receipt that is never judged: only a refusal (which depends on the state alone) is taken from
   * the decision, never a HOLD (which depends on the receipt).
   */
  const approvalRefusal = (task: Task.Task, subject: "restatement" | "spec" | "plan", at: number): Task.Refused | null => {
    const digest = (subject === "restatement" ? task.brief.restatement?.digest : subject === "spec" ? task.spec?.digest : task.plan?.digest) ??
      (`sha256:${"0".repeat(64)}` as Digest.Digest)
    const actor: Event.Actor = { kind: "user", id: "approval-probe" }
    const probe = {
      actor,
      at,
      receipt: { subject, digest, actor, channel: "terminal", at, signature: null },
      authority: { projectId, approvers: [], verify: () => false }
    }
    const decision = Task.decide(
      subject === "restatement"
        ? { _tag: "ApproveRestatement", ...probe }
        : subject === "spec"
        ? { _tag: "ApproveSpec", ...probe }
        : { _tag: "ApprovePlan", ...probe },
      task
    )
    return Either.isLeft(decision) && decision.left._tag === "@ratchet/kernel/TaskCommandRefused" ? decision.left : null
  }

  const approvalSubject: Service["approvalSubject"] = (taskId, subject) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      const task = summary.task
      // The lifecycle is asked first, so nobody is shown (and types the confirmation of) an
      // approval the state refuses anyway: a terminal task, a spec approved while INTERVIEWING.
      if (subject !== "reopen") {
        const refusal = approvalRefusal(task, subject, yield* Clock.currentTimeMillis)
        if (refusal !== null) return yield* refusal
      }
      const missing = (what: string, fix: string) =>
        Effect.fail(new ControllerError.InvalidRequest({ field: "subject", reason: `task ${taskId} has no ${what} to approve.`, fix }))
      switch (subject) {
        case "restatement":
          return task.brief.restatement === null
            ? yield* missing("restatement", `Restate the goal first: ratchet brief ${taskId} restate "…"`)
            : { taskId, subject, digest: task.brief.restatement.digest, text: task.brief.restatement.text }
        case "spec":
          return task.spec === null
            ? yield* missing("spec", `Propose one first: ratchet spec ${taskId} --file spec.md`)
            : { taskId, subject, digest: task.spec.digest, text: Projection.render(task)["spec.md"] ?? "" }
        case "plan":
          return task.plan === null
            ? yield* missing("plan", `Propose one first: ratchet plan ${taskId} --file plan.yaml`)
            : { taskId, subject, digest: task.plan.digest, text: Projection.render(task)["plan.md"] ?? "" }
        case "reopen":
          return task.spec === null
            ? yield* missing("spec", "A task without a spec has nothing to reopen.")
            : { taskId, subject, digest: task.spec.digest, text: `Reopen task ${taskId} (${task.state}): ${task.goal}` }
      }
    })

  /** Whom the project trusts now, as the store recorded it (the authority every gate is given). */
  const authority = ProjectApprovers.authority(projectId).pipe(Effect.provideService(EventStore.EventStore, store))

  const personOf = Signed.personOf

  /** A receipt of this project, signed with the invocation's key when it carries one (`Signed.receipt`). */
  const receipt = (
    taskId: string,
    revision: number | null,
    input: { readonly subject: Event.ReceiptSubject; readonly digest: Digest.Digest; readonly channel: string },
    invocation: Invocation,
    at: number
  ): Event.Receipt => Signed.receipt(projectId, taskId, revision, input, invocation, at)

  /** A person-only act that needs no receipt in the kernel is refused here unless it is signed. */
  const requireSigned = (taskId: string, what: string, given: Event.Receipt, fix: string) =>
    Effect.flatMap(authority, (trusted) => {
      const standing = Authority.ofReceipt(trusted, taskId, null, given)
      return standing._tag === "Signed"
        ? Effect.void
        : Effect.fail(
          new ControllerError.InvalidRequest({
            field: "approval key",
            reason: Authority.explain(what, standing),
            fix: trusted.approvers.length === 0
              ? `This project has no approvers yet: create your approval key and register it (ratchet approver init), then ${fix}`
              : `${fix[0]?.toUpperCase() ?? ""}${fix.slice(1)}, in a terminal, with your approval key's passphrase.`
          })
        )
    })

  const approve: Service["approve"] = (taskId, input, invocation) =>
    Effect.flatMap(authority, (trusted) =>
      command(taskId, { ...invocation, actor: personOf(invocation) }, (task, meta) => {
        const revision = input.subject === "spec" ? task.spec?.revision ?? null : input.subject === "plan" ? task.plan?.revision ?? null : null
        const given = receipt(taskId, revision, input, invocation, meta.at)
        switch (input.subject) {
          case "restatement":
            return { _tag: "ApproveRestatement", ...meta, receipt: given, authority: trusted }
          case "spec":
            return { _tag: "ApproveSpec", ...meta, receipt: given, authority: trusted }
          case "plan":
            return { _tag: "ApprovePlan", ...meta, receipt: given, authority: trusted }
        }
      }))

  const pause: Service["pause"] = (taskId, reason, invocation) =>
    Effect.flatMap(
      reason === undefined ? Effect.succeed(undefined) : requireText("--reason", reason, "Say why, or leave --reason out."),
      (text) =>
        Effect.flatMap(underSessionLease(taskId, invocation), ({ invocation: leased, released }) =>
          write(
            taskId,
            leased,
            (_aggregate, at) => Effect.succeed([{ _tag: "Pause", actor: invocation.actor, at, ...(text === undefined ? {} : { reason: text }) } satisfies Task.Command]),
            taskId,
            (_state, at) => released === undefined ? [] : [{ _tag: "LeaseReleased", version: 1, actor: invocation.actor, at, epoch: released }]
          ))
    )

  const resume: Service["resume"] = (taskId, invocation) =>
    write(taskId, invocation, (aggregate, at) => {
      const task = aggregate as Task.Task
      return task.state === "REOPENED"
        ? Effect.succeed([{ _tag: "ResumeInterview", actor: invocation.actor, at } satisfies Task.Command])
        : resumeRun(task, at, invocation.actor)
    })

  /** The stored events of a run, from its start, on the task's current branch. */
  const runEventsOf = (taskId: string, runId: string) =>
    Effect.flatMap(branchOf(taskId), (branch) => RunReport.runEvents(taskId, runId, branch)).pipe(
      Effect.provideService(EventStore.EventStore, store),
      Effect.provideService(ReadModel.ReadModels, models),
      Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed([] as ReadonlyArray<EventStore.StoredEvent>))
    )

  /** Every stored event of a task, in order, on its current branch (ancestors' events included). */
  const streamEventsOf = (taskId: string) =>
    Effect.flatMap(branchOf(taskId), (branch) => Stream.runCollect(store.read({ streamId: taskId, branch }))).pipe(
      Effect.map((events) => Chunk.toReadonlyArray(events)),
      Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed([] as ReadonlyArray<EventStore.StoredEvent>))
    )

  /** The current run's attempts and intents, as the run state reads them. */
  const runRows = (task: Task.Task) =>
    Effect.gen(function*() {
      const runId = task.run?.runId
      const snapshot = yield* models.snapshot(task.taskId, yield* branchOf(task.taskId))
      return {
        attempts: [...snapshot.attempts.values()].filter((row) => row.runId === runId),
        intents: [...snapshot.intents.values()].filter((row) => row.runId === runId)
      }
    })

  /** The current run's step whose outcome awaits a person, or null. */
  const unsettledStepOf = (task: Task.Task) =>
    task.plan === null || task.run === null
      ? Effect.succeed(null)
      : Effect.map(runRows(task), ({ attempts, intents }) =>
        Progress.unsettledStep((task.plan as NonNullable<Task.Task["plan"]>).plan, attempts, intents))

  const requestStop: Service["requestStop"] = (taskId, input, invocation) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      const reason = yield* requireText("--reason", input.reason, `Say why: ratchet ${input.kind} ${taskId} --reason "…"`)
      const lease = yield* models.lease(projectId, taskId)
      if (lease === null || !lease.held || lease.owner.host !== "runner") {
        return yield* new ControllerError.InvalidRequest({
          field: "task",
          reason: `no runner holds task ${taskId}'s lease, so there is no run to ${input.kind}.`,
          fix: `Run ratchet ${input.kind} ${taskId} without a runner (it writes directly), or see ratchet status ${taskId}.`
        })
      }
      RunRequest.write(input.home, taskId, { kind: input.kind, reason, actor: invocation.actor, at: yield* Clock.currentTimeMillis, epoch: lease.epoch })
      const wanted: ReadonlyArray<Task.State> = input.kind === "cancel" ? ["CANCELLED"] : ["PAUSED", "CANCELLED"]
      const deadline = (yield* Clock.currentTimeMillis) + input.waitMs
      let current = summary
      while ((yield* Clock.currentTimeMillis) < deadline) {
        current = yield* summaryOf(taskId)
        const row = yield* models.lease(projectId, taskId)
        if (wanted.includes(current.task.state) || row === null || !row.held || row.epoch !== lease.epoch) break
        yield* Effect.sleep("100 millis")
      }
      // Read again after the loop, the lease first: the runner's last append (its state and the
      // lease's release together) may have landed between the loop's two reads, and a release seen
      // here is then always seen with the state it was written with.
      const row = yield* models.lease(projectId, taskId)
      current = yield* summaryOf(taskId)
      const stillHeld = row !== null && row.held && row.epoch === lease.epoch
      const acknowledged = wanted.includes(current.task.state)
      if (!acknowledged && stillHeld && input.kind === "cancel") {
        // The runner did not answer in time: it is dead (recovery after its grace) or hung.
        return yield* heldLease(taskId, null, row)
      }
      return { task: yield* viewOf(current), acknowledged }
    })

  /**
   * The epoch of the lease a host session of this workspace holds on the task, or undefined: the
   * session is the manual step's worker, and its worker's `ratchet step done` (run from the
   * session, or by the person beside it) ends the step under that lease and releases it.
   */
  const sessionLeaseOf = (taskId: string) =>
    Effect.map(models.lease(projectId, taskId), (row) =>
      row !== null && row.held && isHostSession(row.owner) && row.owner.workspaceId === project.workspaceId ? row.epoch : undefined)

  /**
   * `invocation`, presenting the lease of a host session of this workspace when it presents none,
   * and that lease's release to append with the write (`trailing`): a person's `step done`, pause
   * or cancel ends the session's turn as the worker rather than being refused by its lease.
   */
  const underSessionLease = (taskId: string, invocation: Invocation) =>
    invocation.leaseEpoch !== undefined
      ? Effect.succeed({ invocation, released: undefined as number | undefined })
      : Effect.map(Effect.zipRight(summaryOf(taskId), sessionLeaseOf(taskId)), (epoch) => ({
        invocation: epoch === undefined ? invocation : { ...invocation, leaseEpoch: epoch },
        released: epoch
      }))

  const stepDone: Service["stepDone"] = (taskId, input, invocation) =>
    Effect.flatMap(
      Effect.all([
        input.note === undefined ? Effect.succeed(undefined) : requireText("--note", input.note, "Say what was done, or leave --note out."),
        underSessionLease(taskId, invocation)
      ]),
      ([note, { invocation: leased, released: sessionEpoch }]) =>
        write(taskId, leased, (aggregate, at) =>
          Effect.gen(function*() {
            const task = aggregate as Task.Task
            const step = task.plan?.plan.steps.find((candidate) => candidate.id === input.stepId)
            if (task.state !== "RUNNING" || task.run === null || step === undefined) {
              return yield* new ControllerError.InvalidRequest({
                field: "step",
                reason: step === undefined && task.plan !== null
                  ? `step ${JSON.stringify(input.stepId.slice(0, 64))} is not in task ${taskId}'s plan (${task.plan.plan.steps.map((s) => s.id).join(", ")}).`
                  : `task ${taskId} is ${task.state}; a step is marked done while the task is RUNNING.`,
                fix: `See the task with: ratchet status ${taskId}`
              })
            }
            const { attempts, intents } = yield* runRows(task)
            const status = Progress.statusOf(step.id, attempts, intents)
            if (step.manual === undefined || status._tag !== "Open") {
              return yield* new ControllerError.InvalidRequest({
                field: "step",
                reason: step.manual === undefined
                  ? `step ${step.id} runs a command; the runner records its end, not a person.`
                  : `step ${step.id} has no attempt awaiting its worker (it is ${status._tag}).`,
                fix: `Start or continue the run with: ratchet run ${taskId}`
              })
            }
            // Tool calls of the worker whose end was never reported: declined at the host's own
            // permission prompt (the hook that opened them runs before it), or their end hook did
            // not run. The worker says the step is done with the tree as it is; they are closed
            // (the kernel resolves a dispatched intent, it never abandons one) and the note says so.
            const open = intents.filter((intent) => intent.stepId === step.id && intent.attempt === status.attempt && intent.state === "Dispatched")
            const runId = task.run.runId
            // What the worker changed since the step started is held to the scope as a command's
            // changes are: a violation ends the attempt and blocks the task in this same append.
            const verdict = yield* StepScope.check({
              events: yield* streamEventsOf(taskId),
              runId,
              stepId: step.id,
              attempt: status.attempt,
              root: project.root,
              workspaceId: project.workspaceId,
              scope: { allowed: task.spec?.spec.execution?.allowedScope ?? [], forbidden: task.spec?.spec.execution?.forbiddenScope ?? [] }
            }).pipe(Effect.provideService(BlobStore.BlobStore, blobs))
            if (verdict._tag === "OtherCheckout") {
              return yield* new ControllerError.InvalidRequest({
                field: "step",
                reason: `step ${step.id} started in another checkout of this project (workspace ${verdict.owner.workspaceId}, whose runner ran on ${verdict.owner.sessionRef ?? verdict.owner.host}); the files of this checkout say nothing about what the step changed there.`,
                fix: `Run ratchet step done ${taskId} ${step.id} in the checkout where the run stopped at it.`
              })
            }
            const meta = { version: 1 as const, actor: invocation.actor, at }
            return [
              ...open.map((intent) => ({ _tag: "IntentResolved", ...meta, intentId: intent.intentId, outcome: "Failed", resultRefs: [] }) satisfies Event.Event),
              ...(open.length === 0 ? [] : [{
                _tag: "AttemptNoted",
                ...meta,
                runId,
                stepId: step.id,
                attempt: status.attempt,
                note: `closed when the step was marked done, their end never reported (declined at the host's prompt, or the end hook did not run): ${open.slice(0, 20).map((intent) => intent.intentId).join(", ")}`
              } satisfies Event.Event]),
              { _tag: "AttemptTransitioned", ...meta, runId, stepId: step.id, attempt: status.attempt, from: status.state, to: "Succeeded" },
              ...(note === undefined ? [] : [{ _tag: "AttemptNoted", ...meta, runId, stepId: step.id, attempt: status.attempt, note } satisfies Event.Event]),
              ...StepScope.commands(verdict, { actor: invocation.actor, at }, taskId, step.id)
            ] satisfies ReadonlyArray<Event.Event | Task.Command>
          }), taskId, (_state, at) =>
          sessionEpoch === undefined ? [] : [{ _tag: "LeaseReleased", version: 1, actor: invocation.actor, at, epoch: sessionEpoch }])
    )

  /** The manual step awaiting its worker in the current run, with its open attempt, or null. */
  const awaitingOf = (task: Task.Task) =>
    task.state !== "RUNNING" || task.plan === null || task.run === null
      ? Effect.succeed(null)
      : Effect.map(runRows(task), ({ attempts, intents }) => {
        const awaiting = Progress.awaitingWorker((task.plan as NonNullable<Task.Task["plan"]>).plan, attempts, intents)
        if (awaiting === null) return null
        const row = attempts.find((candidate) => candidate.stepId === awaiting.step.id && candidate.attempt === awaiting.attempt)
        return {
          runId: (task.run as NonNullable<Task.Task["run"]>).runId,
          stepId: awaiting.step.id,
          attempt: awaiting.attempt,
          intents,
          turn: row?.turn ?? Turn.initial
        }
      })

  const toolCall: Service["toolCall"] = {
    started: (taskId, input, invocation) =>
      Effect.gen(function*() {
        const intentId = toolIntentId(input.sessionRef, input.callId)
        let recorded: string | null = null
        const written = yield* write(taskId, invocation, (aggregate, at) =>
          Effect.map(awaitingOf(aggregate as Task.Task), (awaiting): ReadonlyArray<Event.Event> => {
            recorded = null
            // Nothing awaits a worker (or the hook repeated itself): the call is not a step's work.
            if (awaiting === null || awaiting.intents.some((intent) => intent.intentId === intentId)) return []
            recorded = intentId
            const meta = { version: 1 as const, actor: invocation.actor, at }
            const description = input.description.trim().slice(0, 4000) || "(a tool call)"
            return [
              { _tag: "IntentRecorded", ...meta, intentId, runId: awaiting.runId, stepId: awaiting.stepId, attempt: awaiting.attempt, description },
              { _tag: "IntentDispatched", ...meta, intentId }
            ]
          }))
        return { ...written, intentId: recorded }
      }),
    ended: (taskId, input, invocation) =>
      Effect.gen(function*() {
        const intentId = toolIntentId(input.sessionRef, input.callId)
        let resolved: string | null = null
        const written = yield* write(taskId, invocation, (aggregate, at) =>
          Effect.map(
            aggregate._tag === "Task" && aggregate.run !== null
              ? runRows(aggregate)
              : Effect.succeed({ attempts: [] as ReadonlyArray<ReadModel.AttemptRow>, intents: [] as ReadonlyArray<ReadModel.IntentRow> }),
            ({ attempts, intents }): ReadonlyArray<Event.Event> => {
              // Unknown (not a step's work), already resolved, or its attempt already decided by
              // recovery (Indeterminate, awaiting a person's settlement): then the call's end is late.
              resolved = null
              const intent = intents.find((row) => row.intentId === intentId && row.state === "Dispatched")
              const attempt = intent === undefined
                ? undefined
                : attempts.find((row) => row.stepId === intent.stepId && row.attempt === intent.attempt && (row.state === "Running" || row.state === "Pending"))
              if (intent === undefined || attempt === undefined) return []
              resolved = intentId
              return [
                { _tag: "IntentResolved", version: 1, actor: invocation.actor, at, intentId, outcome: input.outcome, resultRefs: [] },
                ...turnEvents(invocation.actor, at, intent, Turn.changes(attempt.turn, input.turn))
              ]
            }
          ))
        return { ...written, intentId: resolved }
      })
  }

  const recordTurn: Service["recordTurn"] = (taskId, input, invocation) =>
    Effect.gen(function*() {
      if (invocation.leaseEpoch === undefined) {
        return yield* new ControllerError.InvalidRequest({
          field: "--lease-epoch",
          reason: `a turn is recorded by the worker holding task ${taskId}'s writer lease, and this invocation presents no lease epoch.`,
          fix: `Present the epoch the worker holds (ratchet lease ${taskId} shows it).`
        })
      }
      let recorded: { readonly stepId: string; readonly attempt: number } | null = null
      const written = yield* write(taskId, invocation, (aggregate, at) =>
        Effect.map(awaitingOf(aggregate as Task.Task), (awaiting): ReadonlyArray<Event.Event> => {
          // Decided again after a conflict: only the last decision counts.
          recorded = null
          if (awaiting === null || awaiting.stepId !== input.attempt.stepId || awaiting.attempt !== input.attempt.attempt) return []
          // The turn is its flags: an event that changes none is no news, and is not appended, so
          // a worker's hundredth tool call of a turn (or a repeated hook) writes nothing.
          const news = Turn.changes(awaiting.turn, input.events)
          if (news.length > 0) recorded = input.attempt
          return turnEvents(invocation.actor, at, { runId: awaiting.runId, ...input.attempt }, news)
        }))
      return { ...written, attempt: recorded }
    })

  /** The Indeterminate step a settlement is about, with its unresolved intent. */
  const unsettled = (task: Task.Task, stepId: string) =>
    Effect.gen(function*() {
      const { attempts, intents } = yield* runRows(task)
      const status = Progress.statusOf(stepId, attempts, intents)
      if (task.state !== "BLOCKED" || task.run === null || status._tag !== "Unsettled") {
        return yield* new ControllerError.InvalidRequest({
          field: "--resolve",
          reason: `step ${JSON.stringify(stepId.slice(0, 64))} of task ${task.taskId} has no Indeterminate attempt awaiting a decision${task.state === "BLOCKED" ? "" : ` (the task is ${task.state})`}.`,
          fix: `See the task with: ratchet status ${task.taskId}`
        })
      }
      const intent = intents.find((row) => row.intentId === status.intentId)
      // A manual step's worker may have left several tool calls open: one decision settles them all.
      const open = intents.filter((row) => row.stepId === stepId && row.attempt === status.attempt && row.state === "Dispatched").map((row) => row.intentId)
      return { runId: task.run.runId, attempt: status.attempt, intentId: status.intentId, intent, open }
    })

  const settlementDigest = (taskId: string, intentId: string, outcome: "succeeded" | "failed") =>
    Digest.ofCanonical(JSON.stringify({ resolution: { taskId, intentId, outcome } }))

  const settlementSubject: Service["settlementSubject"] = (taskId, stepId, outcome) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      const found = yield* unsettled(summary.task, stepId)
      const events = yield* runEventsOf(taskId, found.runId)
      const descriptions = found.open.map((intentId) => {
        const recorded = events.find((stored) => stored.event._tag === "IntentRecorded" && stored.event.intentId === intentId)
        return recorded?.event._tag === "IntentRecorded" ? recorded.event.description : "(unknown)"
      })
      return {
        taskId,
        subject: "resolution" as const,
        digest: settlementDigest(taskId, found.intentId, outcome),
        intentId: found.intentId,
        attempt: found.attempt,
        text: [
          descriptions.length === 1
            ? `Step ${stepId}, attempt ${found.attempt}, started this side effect and its runner died before recording how it ended:`
            : `Step ${stepId}, attempt ${found.attempt}, started these side effects and its worker went away before recording how they ended:`,
          "",
          ...descriptions.map((description) => `  ${description}`),
          "",
          outcome === "succeeded"
            ? "You declare that it HAPPENED: the step counts as done and the run continues after it."
            : "You declare that it did NOT happen (or must be redone): a successor attempt runs the step again."
        ].join("\n")
      }
    })

  const settle: Service["settle"] = (taskId, input, given) =>
    write(taskId, { ...given, actor: personOf(given) }, (aggregate, at) =>
      Effect.gen(function*() {
        const invocation = { ...given, actor: personOf(given) }
        const task = aggregate as Task.Task
        const found = yield* unsettled(task, input.stepId)
        const digest = settlementDigest(taskId, found.intentId, input.outcome)
        const fix = `run ratchet unblock ${taskId} --resolve ${input.stepId} ${input.outcome} and type the digest's first ${confirmationLength} characters`
        if (invocation.actor.kind !== "user" || input.confirmation.channel !== "terminal" || input.confirmation.digest !== digest) {
          return yield* new ControllerError.InvalidRequest({
            field: "--resolve",
            reason: invocation.actor.kind !== "user"
              ? `settling an Indeterminate step is a person's decision; ${invocation.actor.kind}:${invocation.actor.id} cannot make it.`
              : input.confirmation.channel !== "terminal"
              ? "settling an Indeterminate step needs your confirmation on an interactive terminal."
              : "the confirmation does not match this decision (the task moved since it was shown).",
            fix: `${fix[0]?.toUpperCase()}${fix.slice(1)}, in a terminal.`
          })
        }
        const resolution = receipt(taskId, null, { subject: "resolution", digest, channel: input.confirmation.channel }, given, at)
        yield* requireSigned(taskId, "The settlement", resolution, fix)
        const trusted = yield* authority
        const lifted = receipt(
          taskId,
          null,
          { subject: "unblock", digest: Gate.unblockDigest(taskId, "RUNNING", task.blockers), channel: input.confirmation.channel },
          given,
          at
        )
        const outcome = input.outcome === "succeeded" ? "Succeeded" as const : "Failed" as const
        const meta = { version: 1 as const, actor: invocation.actor, at }
        const { attempts, intents } = yield* runRows(task)
        const pendingSteps = task.plan === null ? [] : Progress.pendingSteps(task.plan.plan, attempts, intents)
        return [
          ...found.open.map((intentId) => ({ _tag: "IntentResolved", ...meta, intentId, outcome, resultRefs: [] }) satisfies Event.Event),
          {
            _tag: "IntentSettled",
            ...meta,
            version: 2,
            intentId: found.intentId,
            runId: found.runId,
            stepId: input.stepId,
            attempt: found.attempt,
            outcome,
            receipt: resolution
          },
          {
            _tag: "Unblock",
            actor: invocation.actor,
            at,
            to: "RUNNING",
            resolution: `step ${input.stepId} settled as ${input.outcome} by ${invocation.actor.id}`,
            codeChanged: false,
            pendingSteps,
            receipt: lifted,
            authority: trusted
          }
        ] satisfies ReadonlyArray<Task.Command | Event.Event>
      }))

  /**
   * Resumes. A run paused at a step boundary continues only on the work tree and contract it
   * paused on: the HEAD, the dirty paths and their contents, and the digests are compared with
   * the boundary recorded at the pause, and any difference blocks the task, naming it.
   */
  const resumeRun = (task: Task.Task, at: number, actor: Event.Actor) =>
    Effect.gen(function*() {
      const resumed: Task.Command = { _tag: "Resume", actor, at }
      if (task.state !== "PAUSED" || task.pausedFrom !== "RUNNING" || task.run === null) return [resumed]
      const events = yield* runEventsOf(task.taskId, task.run.runId)
      const boundaries = events.flatMap((stored) => (stored.event._tag === "BoundaryRecorded" ? [stored.event] : []))
      const last = boundaries.at(-1)
      if (last === undefined) return [resumed]
      const now = yield* WorkTree.observe(project.root).pipe(
        Effect.mapError((error) =>
          new ControllerError.InvalidRequest({ field: "workspace", reason: error.message, fix: "Fix git in this checkout, then resume again." }))
      )
      const found = [...WorkTree.differences(last, now)]
      if (task.spec !== null && task.spec.digest !== last.specDigest) found.push(`the spec digest changed from ${last.specDigest} to ${task.spec.digest}`)
      if (task.plan !== null && task.plan.digest !== last.planDigest) found.push(`the plan digest changed from ${last.planDigest} to ${task.plan.digest}`)
      if (found.length === 0) return [resumed]
      const block = Progress.decisionNeeded(
        { actor, at },
        `The checkout changed while the run was paused: ${found.join("; ")}. Restore it, or accept the change: ratchet unblock ${task.taskId} --to RUNNING --resolution "…" (or ratchet reopen ${task.taskId} --reason "…").`,
        found.slice(0, 20)
      )
      return [resumed, block]
    })

  /**
   * Cancels; a cancel written under the lease (`--lease-epoch`) releases it in the same append, so a
   * cancelled task is never left holding a lease that only a takeover could end.
   */
  /**
   * The events that close what the current run left open, when a cancel or a reopen ends it
   * without a runner: pending intents abandoned, open attempts Cancelled, or Indeterminate when
   * their intent was dispatched (its effect may have happened).
   */
  const closingOf = (task: Task.Task, at: number) =>
    task.run === null
      ? Effect.succeed([] as ReadonlyArray<Event.Event>)
      : Effect.map(runRows(task), ({ attempts, intents }) => {
        const runId = (task.run as NonNullable<Task.Task["run"]>).runId
        const meta = { version: 1 as const, actor: { kind: "system", id: "ratchet" } as Event.Actor, at }
        const events: Array<Event.Event> = []
        for (const attempt of attempts) {
          if (attempt.state !== "Pending" && attempt.state !== "Running") continue
          const own = intents.filter((intent) => intent.stepId === attempt.stepId && intent.attempt === attempt.attempt)
          for (const intent of own) {
            if (intent.state === "Pending") {
              events.push({ _tag: "IntentAbandoned", ...meta, intentId: intent.intentId, reason: "the run ended before it was dispatched" })
            }
          }
          const dispatched = own.some((intent) => intent.state === "Dispatched")
          events.push({
            _tag: "AttemptTransitioned",
            ...meta,
            runId,
            stepId: attempt.stepId,
            attempt: attempt.attempt,
            from: attempt.state,
            to: attempt.state === "Pending" ? "Cancelled" : dispatched ? "Indeterminate" : "Cancelled"
          })
        }
        return events as ReadonlyArray<Event.Event>
      })

  const cancel: Service["cancel"] = (taskId, reason, given) =>
    Effect.flatMap(Effect.zip(requireText("--reason", reason, `Say why: ratchet cancel ${taskId} --reason "…"`), underSessionLease(taskId, given)), ([text, { invocation }]) =>
      write(
        taskId,
        invocation,
        (aggregate, at) =>
          Effect.map(
            aggregate._tag === "Task" && !Task.isTerminal(aggregate.state) ? closingOf(aggregate, at) : Effect.succeed([] as ReadonlyArray<Event.Event>),
            (closing): ReadonlyArray<Task.Command | Event.Event> => [
              ...closing.map((event) => ({ ...event, actor: invocation.actor })),
              { _tag: "Cancel", actor: invocation.actor, at, reason: text }
            ]
          ),
        taskId,
        (_state, at) =>
          invocation.leaseEpoch === undefined
            ? []
            : [{ _tag: "LeaseReleased", version: 1, actor: invocation.actor, at, epoch: invocation.leaseEpoch }]
      ))

  const reopen: Service["reopen"] = (taskId, input, given) =>
    Effect.flatMap(Effect.zip(requireText("--reason", input.reason, `Say what must change: ratchet reopen ${taskId} --reason "…"`), authority), ([reason, trusted]) =>
      write(taskId, given, (aggregate, at) => {
        const task = aggregate as Task.Task
        // Out of FAILED the reopen is a person's act (their signed receipt); otherwise anyone's.
        const invocation = input.confirmation === undefined ? given : { ...given, actor: personOf(given) }
        const reopened: Task.Command = {
          _tag: "Reopen",
          actor: invocation.actor,
          at,
          reason,
          receipt: input.confirmation === undefined
            ? null
            : receipt(taskId, null, { subject: "reopen", ...input.confirmation }, given, at),
          authority: trusted
        }
        // A reopen ends the run: what it left open is closed first (a refused reopen writes nothing).
        return Effect.map(closingOf(task, at), (closing): ReadonlyArray<Task.Command | Event.Event> => [
          ...closing.map((event) => ({ ...event, actor: invocation.actor })),
          reopened
        ])
      }))

  /** Plan steps the current run has not done (Progress: succeeded, or settled as succeeded). */
  const pendingStepsOf = (task: Task.Task) =>
    task.plan === null || task.run === null
      ? Effect.succeed(task.plan?.plan.steps.map((step) => step.id) ?? [])
      : Effect.map(runRows(task), ({ attempts, intents }) => Progress.pendingSteps((task.plan as NonNullable<Task.Task["plan"]>).plan, attempts, intents))

  /**
   * Whether the code changed, for an unblock: the work tree now against the tree the run recorded
   * at its last step boundary (HEAD, and a digest over the dirty paths and their contents). A task
   * whose run recorded no boundary yet falls back to the conservative reading of ADR 0009: any
   * uncommitted change outside `.ratchet/` counts.
   */
  const codeChangedOf = (task: Task.Task) =>
    Effect.gen(function*() {
      if (task.spec === null) return false
      const branch = yield* branchOf(task.taskId)
      const runId = task.run?.runId ?? null
      const last = (yield* models.checkpoints(task.taskId, branch))
        .filter((row) => row.kind === "step" && row.runId === runId)
        .reduce<ReadModel.CheckpointRow | null>((max, row) => (max === null || row.lsn > max.lsn ? row : max), null)
      const recorded = last === null ? [] : Chunk.toReadonlyArray(
        yield* Stream.runCollect(store.read({ streamId: task.taskId, branch, fromLsn: Math.max(1, last.lsn - 1), toLsn: last.lsn })).pipe(
          Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed(Chunk.empty<EventStore.StoredEvent>()))
        )
      )
      const boundary = recorded.map((stored) => stored.event).find((event) => event._tag === "BoundaryRecorded")
      if (boundary === undefined || boundary._tag !== "BoundaryRecorded") {
        const observed = yield* Preflight.inspect(project.root, task.spec.spec)
        return observed.dirtyPaths.some((path) => !path.startsWith(".ratchet/"))
      }
      const now = yield* WorkTree.observe(project.root).pipe(
        Effect.mapError((error) =>
          new Preflight.PreflightError({ operation: error.operation, path: error.root, reason: error.reason, fix: "Check that git works in this checkout (git status), then run the command again." }))
      )
      return now.head !== boundary.head || WorkTree.dirtyDigest(now) !== boundary.dirtyDigest
    })

  /** The text and digest a person confirms to lift `blockers` to `to`. */
  const unblockShown = (task: Task.Task, to: "RUNNING" | "VERIFYING"): ApprovalSubject => ({
    taskId: task.taskId,
    subject: "unblock",
    digest: Gate.unblockDigest(task.taskId, to, task.blockers),
    text: [
      `Lift what blocks task ${task.taskId} and return it to ${to}:`,
      "",
      ...task.blockers.map((blocker) => `  ${blocker.category}: ${blocker.requiredAction}`),
      "",
      task.blockers.some((blocker) => blocker.category === "scope_violation")
        ? "You accept the change outside the approved scope (or confirm it was undone)."
        : "You confirm the decision the run asked for."
    ].join("\n")
  })

  const unblockSubject: Service["unblockSubject"] = (taskId, to) =>
    Effect.map(summaryOf(taskId), (summary) =>
      summary.task.state === "BLOCKED" && summary.task.blockers.some((blocker) => Gate.personalBlockers.includes(blocker.category))
        ? unblockShown(summary.task, to)
        : null)

  const unblock: Service["unblock"] = (taskId, input, given) =>
    Effect.flatMap(Effect.zip(requireText("--resolution", input.resolution, "Say what resolved the blocker."), authority), ([resolution, trusted]) =>
      command(taskId, input.confirmation === undefined ? given : { ...given, actor: personOf(given) }, (task, meta) =>
        Effect.gen(function*() {
          // A step whose effect's outcome nobody knows is settled by a person first: unblocking
          // around it would leave the run with a step it may neither re-run nor count as done.
          const unsettled = yield* unsettledStepOf(task)
          if (unsettled !== null) {
            return yield* new ControllerError.InvalidRequest({
              field: "--to",
              reason: `step ${unsettled.id} was started and its outcome was never recorded (Indeterminate); the run cannot go on around it.`,
              fix: `Check whether its effect happened, then: ratchet unblock ${taskId} --resolve ${unsettled.id} succeeded|failed`
            })
          }
          const pendingSteps = yield* pendingStepsOf(task)
          const codeChanged = yield* codeChangedOf(task)
          const lifted = input.confirmation === undefined
            ? null
            : receipt(taskId, null, { subject: "unblock", ...input.confirmation }, given, meta.at)
          return { _tag: "Unblock", ...meta, to: input.to, resolution, codeChanged, pendingSteps, receipt: lifted, authority: trusted } satisfies Task.Command
        })))

  const gate: Service["gate"] = (taskId, to, options) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      const observation = yield* leases.observe(key(taskId))
      const pendingSteps = yield* pendingStepsOf(summary.task)
      const codeChanged = summary.task.state === "BLOCKED" ? yield* codeChangedOf(summary.task) : false
      // A completion is explained on the verdicts `ratchet done` would decide on.
      const episode = summary.task.state === "VERIFYING"
        ? yield* Episode.current(summary.task, summary.branch).pipe(
          Effect.provideService(EventStore.EventStore, store),
          Effect.catchTags({
            "@ratchet/controller/InvalidRequest": () => Effect.succeed(undefined),
            "@ratchet/storage/BranchNotFound": () => Effect.succeed(undefined)
          })
        )
        : undefined
      const trusted = yield* authority
      const now = yield* Clock.currentTimeMillis
      const explained = Explain.explain(summary.task, to, {
        authority: trusted,
        episode: episode && { runId: episode.runId, verdicts: episode.verdicts, workers: episode.view.workers },
        now,
        // The caller holds the lease only when it presents the held epoch (as its writes would).
        leaseHeld: observation.status !== "free" && options?.leaseEpoch !== undefined && observation.epoch === options.leaseEpoch,
        pendingSteps,
        codeChanged
      })
      // And on the evidence `ratchet done` checks after the gate: current, and readable.
      if (episode === undefined || explained.to !== "COMPLETED" || explained.decision !== "CLEAR") return explained
      const stale = yield* StaleEvidence.check(summary.task, episode, project.root, trusted).pipe(
        Effect.provideService(BlobStore.BlobStore, blobs),
        Effect.catchTag("@ratchet/controller/WorkTreeError", (error) =>
          Effect.fail(new Preflight.PreflightError({ operation: error.operation, path: error.root, reason: error.reason, fix: "Check that git works in this checkout (git status)." })))
      )
      return stale === null ? explained : Explain.held(explained, stale.gate(now, summary.version))
    })

  const log: Service["log"] = (taskId, branch) =>
    Effect.map(summaryOf(taskId), (summary) => store.read({ streamId: taskId, branch: branch ?? summary.branch }))

  const branches: Service["branches"] = (taskId) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      const all = yield* store.branches(taskId)
      return { current: summary.branch, branches: all }
    })

  /**
   * Why the task cannot be rewound to `toLsn` now, checked before a person is asked to confirm it:
   * the state (no step may be running), the position (an earlier event that ends an append), and
   * no step awaiting a person's settlement.
   */
  const rewindable = (summary: ReadModel.TaskSummary, toLsn: number) =>
    Effect.gen(function*() {
      const task = summary.task
      const taskId = task.taskId
      if (task.state !== "PAUSED" && task.state !== "BLOCKED" && task.state !== "FAILED" && task.state !== "VERIFYING") {
        return yield* new Task.Refused({
          code: Task.isTerminal(task.state) ? "terminal_state" : "forbidden_transition",
          command: "Rewind",
          state: task.state,
          reason: `a task is rewound from PAUSED, BLOCKED, FAILED or VERIFYING (where no step runs); this one is ${task.state}.`,
          action: Task.nextStep(task)
        })
      }
      if (!Number.isInteger(toLsn) || toLsn < 1 || toLsn >= summary.lastLsn) {
        return yield* new ControllerError.InvalidRequest({
          field: "--to",
          reason: `${toLsn} is not an earlier position of task ${taskId} on branch ${summary.branch} (its last LSN is ${summary.lastLsn}).`,
          fix: `Pick the LSN of an event from: ratchet log ${taskId}`
        })
      }
      const unsettled = yield* unsettledStepOf(task)
      if (unsettled !== null) {
        return yield* new ControllerError.InvalidRequest({
          field: "--to",
          reason: `step ${unsettled.id} was started and its outcome was never recorded; rewinding past it would re-run or forget an effect nobody has judged.`,
          fix: `Settle it first: ratchet unblock ${taskId} --resolve ${unsettled.id} succeeded|failed`
        })
      }
      // A position between the events of one append would split what was written together (an
      // exit and its resolution, a failure and its successor): only the end of an append will do.
      const around = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(store.read({ streamId: taskId, branch: summary.branch, fromLsn: toLsn }), 2)).pipe(
        Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed(Chunk.empty<EventStore.StoredEvent>()))
      ))
      const at = around[0]
      if (at === undefined || at.lsn !== toLsn || (around[1] !== undefined && around[1].operationId === at.operationId)) {
        return yield* new ControllerError.InvalidRequest({
          field: "--to",
          reason: at === undefined || at.lsn !== toLsn
            ? `${toLsn} is not the LSN of an event on branch ${summary.branch} of task ${taskId}.`
            : `${toLsn} is inside one append (operation ${at.operationId}); a rewind keeps or drops an append whole.`,
          fix: `Pick the last LSN of an append from: ratchet log ${taskId} --json (events of one append share an operationId)`
        })
      }
    })

  /** What a person confirms to rewind: bound to the task, the branch it leaves, its head and the LSN kept. */
  const rewindShown = (summary: ReadModel.TaskSummary, toLsn: number): ApprovalSubject => ({
    taskId: summary.streamId,
    subject: "rewind",
    digest: Digest.ofCanonical(JSON.stringify({ rewind: { taskId: summary.streamId, branch: summary.branch, lastLsn: summary.lastLsn, toLsn } })),
    text: [
      `Rewind task ${summary.streamId} (${summary.task.state}) to LSN ${toLsn}.`,
      `The events after it (up to LSN ${summary.lastLsn}) stay on branch ${summary.branch}, readable with ratchet log ${summary.streamId} --branch ${summary.branch};`,
      "the task continues on a new branch from the state it had right after that event."
    ].join("\n")
  })

  const rewindSubject: Service["rewindSubject"] = (taskId, toLsn) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      yield* rewindable(summary, toLsn)
      return rewindShown(summary, toLsn)
    })

  const rewind: Service["rewind"] = (taskId, toLsn, invocation, confirmation) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      // Going back may redo side effects and undo decisions: a person's act, at a terminal,
      // signed with their approval key.
      const person = personOf(invocation)
      const fix = `run ratchet rewind ${taskId} --to ${toLsn} yourself`
      if (person.kind !== "user" || confirmation.channel !== "terminal") {
        return yield* new ControllerError.InvalidRequest({
          field: "rewind",
          reason: person.kind !== "user"
            ? `a rewind is a person's decision; ${person.kind}:${person.id} cannot make it.`
            : "a rewind needs you at an interactive terminal.",
          fix: `Run ratchet rewind ${taskId} --to ${toLsn} yourself, in a terminal.`
        })
      }
      const lease = yield* models.lease(projectId, taskId)
      if (lease !== null && lease.held && invocation.leaseEpoch !== lease.epoch) {
        return yield* heldLease(taskId, invocation.leaseEpoch ?? null, lease)
      }
      yield* rewindable(summary, toLsn)
      const shown = rewindShown(summary, toLsn)
      if (confirmation.digest !== shown.digest) {
        return yield* new ControllerError.InvalidRequest({
          field: "confirmation",
          reason: "the confirmation does not match this rewind (the task moved since it was shown).",
          fix: `Run ratchet rewind ${taskId} --to ${toLsn} again.`
        })
      }
      const at = yield* Clock.currentTimeMillis
      const signed = receipt(taskId, null, { subject: "rewind", digest: shown.digest, channel: confirmation.channel }, invocation, at)
      yield* requireSigned(taskId, "The rewind", signed, fix)
      const existing = yield* store.branches(taskId)
      let number = existing.length
      let name = `rewind-${number}`
      while (existing.some((branch) => branch.branch === name)) name = `rewind-${++number}`
      const forked = yield* store.fork({ streamId: taskId, from: summary.branch, atLsn: toLsn, branch: name }).pipe(
        Effect.catchTag("@ratchet/storage/InvalidRequest", (error) =>
          Effect.fail(new ControllerError.InvalidRequest({
            field: "--to",
            reason: `${toLsn} is not the LSN of an event on branch ${summary.branch} of task ${taskId} (${error.reason}).`,
            fix: `Pick the LSN of an event from: ratchet log ${taskId}`
          })))
      )
      // Who rewound, and on what authority, is the new branch's first fact.
      const forkedHead = yield* summaryOf(taskId)
      const recorded = yield* store.append({
        projectId,
        streamId: taskId,
        branch: forked.branch,
        expectedVersion: forkedHead.version,
        epoch: lease !== null && lease.held ? lease.epoch : null,
        operationId: `op-${crypto.randomUUID()}`,
        events: [{ _tag: "TaskRewound", version: 1, actor: person, at, parent: summary.branch, atLsn: toLsn, receipt: signed }]
      })
      const after = yield* summaryOf(taskId)
      const projected = yield* project_(after.task)
      return {
        task: yield* viewOf(after),
        events: ["TaskRewound"],
        firstLsn: recorded.firstLsn,
        lastLsn: recorded.lastLsn,
        projection: projected.directory,
        warnings: projected.warnings,
        branch: forked.branch,
        parent: summary.branch,
        atLsn: toLsn
      }
    })

  const withStore = <A, E>(effect: Effect.Effect<A, E, EventStore.EventStore>) => Effect.provideService(effect, EventStore.EventStore, store)

  const approvers: Service["approvers"] = {
    list: withStore(ApproverCommands.list(projectId, project.root)),
    writeBack: withStore(ApproverCommands.writeBack(projectId, project.root)),
    register: (signer) => Effect.flatMap(Clock.currentTimeMillis, (at) => withStore(ApproverCommands.register(projectId, project.root, signer, at))),
    add: (signer, approver) => Effect.flatMap(Clock.currentTimeMillis, (at) => withStore(ApproverCommands.add(projectId, project.root, signer, approver, at))),
    remove: (signer, id) => Effect.flatMap(Clock.currentTimeMillis, (at) => withStore(ApproverCommands.remove(projectId, project.root, signer, id, at))),
    adoption: withStore(ApproverCommands.adoption(projectId, project.root)),
    trust: (actor, confirmedHead) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => withStore(ApproverCommands.trust(projectId, project.root, actor, at, confirmedHead)))
  }

  const owner = (identity: LeaseIdentity) =>
    Owner.current({
      workspaceId: project.workspaceId,
      host: identity.host,
      ...(identity.sessionRef === undefined ? {} : { sessionRef: identity.sessionRef })
    })

  /**
   * The held lease at `epoch` as the lease manager's value, for a process other than its taker (a
   * script's `ratchet lease heartbeat`): the epoch is the capability, the owner is the row's. A
   * lease no longer held is `LeaseLost` for a heartbeat and `LeaseNotHeld` for a release.
   */
  const heldAt = (taskId: string, epoch: number, operation: "heartbeat" | "release") =>
    Effect.gen(function*() {
      const row = yield* models.lease(projectId, taskId)
      if (row === null && operation === "heartbeat") {
        return yield* new ControllerError.InvalidRequest({
          field: "--epoch",
          reason: `task ${taskId} has never been leased, so there is no epoch ${epoch} to heartbeat.`,
          fix: `Take the lease first: ratchet lease acquire ${taskId}`
        })
      }
      if (row === null || !row.held) {
        return yield* operation === "heartbeat"
          ? Effect.fail(new LeaseError.LeaseLost({ projectId, taskId, epoch, currentEpoch: row?.epoch ?? null, held: false }))
          : Effect.fail(new LeaseError.LeaseNotHeld({ projectId, taskId, operation, lastEpoch: row?.epoch ?? null }))
      }
      if (epoch > row.epoch) {
        return yield* new ControllerError.InvalidRequest({
          field: "--epoch",
          reason: `epoch ${epoch} has never been issued for task ${taskId}; the lease is held at epoch ${row.epoch}.`,
          fix: `Pass the epoch ratchet lease acquire printed; read the lease with: ratchet lease show ${taskId}`
        })
      }
      return {
        projectId,
        taskId,
        branch: EventStore.mainBranch,
        epoch,
        owner: row.owner,
        heartbeatMs: leases.settings.heartbeatMs,
        graceMs: row.graceMs,
        acquiredAt: row.acquiredAt,
        heartbeatAt: row.heartbeatAt,
        deadline: row.heartbeatAt + row.graceMs
      } satisfies LeaseManager.Lease
    })

  /**
   * The task, unless it is terminal: nothing writes to a terminal task, so nobody takes its lease
   * (a release stays allowed, to clean up).
   */
  const notTerminal = (taskId: string, command: string) =>
    Effect.flatMap(summaryOf(taskId), ({ task }) =>
      Task.isTerminal(task.state)
        ? Effect.fail(
          new Task.Refused({
            code: "terminal_state",
            command,
            state: task.state,
            reason: `a ${task.state === "CANCELLED" ? "cancelled" : "completed"} task is terminal: nothing writes to it, so no writer takes its lease.`,
            action: "Create a new task to do this work again: ratchet task create --goal \"…\""
          })
        )
        : Effect.succeed(task))

  const lease: Service["lease"] = {
    show: (taskId) => Effect.flatMap(summaryOf(taskId), () => leases.observe(key(taskId))),
    acquire: (taskId, identity) =>
      Effect.gen(function*() {
        yield* notTerminal(taskId, "AcquireLease")
        return yield* leases.acquire(yield* keyOn(taskId), yield* owner(identity), { actor: identity.actor })
      }),
    heartbeat: (taskId, epoch) =>
      Effect.gen(function*() {
        yield* summaryOf(taskId)
        return yield* leases.heartbeat(yield* heldAt(taskId, epoch, "heartbeat"))
      }),
    release: (taskId, epoch, actor) =>
      Effect.gen(function*() {
        yield* summaryOf(taskId)
        yield* leases.release(yield* heldAt(taskId, epoch, "release"), { actor })
      }),
    takeover: (taskId, identity) =>
      Effect.gen(function*() {
        yield* notTerminal(taskId, "TakeOverLease")
        return yield* leases.takeover(yield* keyOn(taskId), yield* owner(identity), { actor: identity.actor })
      })
  }

  return {
    project,
    createTask,
    listTasks,
    status,
    ask,
    answer,
    restate,
    closeBrief,
    proposeSpec,
    proposePlan,
    preflight,
    approvalSubject,
    approve,
    pause,
    resume,
    cancel,
    requestStop,
    stepDone,
    toolCall,
    recordTurn,
    settlementSubject,
    settle,
    reopen,
    unblockSubject,
    unblock,
    gate,
    branches,
    rewindSubject,
    rewind,
    log,
    approvers,
    lease
  } satisfies Service
})

/** `TurnRecorded` events of one attempt. */
const turnEvents = (
  actor: Event.Actor,
  at: number,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number },
  turns: ReadonlyArray<Turn.Event>
): ReadonlyArray<Event.Event> =>
  turns.map((turn) => ({ _tag: "TurnRecorded", version: 1, actor, at, runId: target.runId, stepId: target.stepId, attempt: target.attempt, turn }))

/**
 * Whether a lease owner is a host session (a Claude Code or Codex session as a manual step's
 * worker): its session reference is `<host>:<session id>` and it is not a runner.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isHostSession = (owner: Event.LeaseOwner): boolean =>
  owner.host !== "runner" && owner.host !== "cli" && owner.sessionRef !== undefined && owner.sessionRef.startsWith(`${owner.host}:`)

/**
 * The intent id of a host session's tool call: stable for the session and the host's call id, so
 * the hook of the call's end finds the intent its start recorded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolIntentId = (sessionRef: string, callId: string): string =>
  `tool-${Digest.ofCanonical(`${sessionRef}\n${callId}`).slice("sha256:".length, "sha256:".length + 32)}`

/**
 * The refusal of a write to a task whose lease someone else holds (the caller presented `presented`,
 * or no epoch): names the holder and when its grace ends.
 *
 * @since 0.1.0
 * @category constructors
 */
export const heldLease = (taskId: string, presented: number | null, lease: ReadModel.LeaseRow): ControllerError.LeaseConflict =>
  new ControllerError.LeaseConflict({
    taskId,
    presented,
    epoch: lease.epoch,
    held: true,
    holder: describeOwner(lease.owner),
    deadline: lease.heartbeatAt + lease.graceMs
  })

/**
 * A lease owner in one line: host, session, workspace and pid.
 *
 * @since 0.1.0
 * @category constructors
 */
export const describeOwner = (owner: Event.LeaseOwner): string =>
  `${owner.host}${owner.sessionRef === undefined ? "" : ` session ${owner.sessionRef}`} (workspace ${owner.workspaceId}, pid ${owner.pid})`

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Controller, never, Project | EventStore.EventStore | ReadModel.ReadModels | BlobStore.BlobStore | LeaseManager.LeaseManager> =
  Layer.effect(Controller, make)
