/**
 * The shared kit of the controller's use cases: the located project and the ports it writes
 * through, and the few functions every use-case family is made of.
 *
 * - `write` and `command` are the only way a use case changes a task: through the one command
 *   handler (`CommandHandler.handle`: read, decide with the kernel, append under the expected
 *   version and the invocation's lease epoch, decide again on a conflict), then the task's
 *   projections are rewritten (a projection that cannot be written is a warning: the store is the
 *   authority and the next write rewrites it).
 * - `summaryOf` and `viewOf` read a task of this project on its current branch (`TaskNotFound`
 *   for another project's or none).
 * - `authority`, `receipt` and `requireSigned` are the signed receipts of person-only acts.
 * - `runRows` reads the current run's attempts and intents (a person's step commands, which check
 *   an intent's id against every one); `frontierRows` its frontier only, which is all the kernel's
 *   `Progress` reads (the hook's worker path, the gate's pending steps, the unsettled step).
 *
 * @since 0.2.0
 * @internal
 */
import * as Authority from "@ratchet/kernel/Authority"
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Progress from "@ratchet/kernel/Progress"
import * as Task from "@ratchet/kernel/Task"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Owner from "@ratchet/lease/Owner"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as CommandHandler from "../CommandHandler.js"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as Preflight from "../Preflight.js"
import * as ProjectApprovers from "../ProjectApprovers.js"
import * as Projection from "../Projection.js"
import * as RunReport from "../RunReport.js"
import * as Signed from "../Signed.js"
import * as TaskBranch from "../TaskBranch.js"
import * as TaskView from "../TaskView.js"
import * as WorkTree from "../WorkTree.js"
import type * as Workspace from "../Workspace.js"

const TaskIdSchema = EventStore.Id

/**
 * The kit over `project` and the context's ports (see the module comment).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (project: Workspace.Located) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const blobs = yield* BlobStore.BlobStore
    const models = yield* ReadModel.ReadModels
    const leases = yield* LeaseManager.LeaseManager
    return make_(project, store, blobs, models, leases)
  })

const make_ = (
  project: Workspace.Located,
  store: EventStore.Service,
  blobs: BlobStore.Service,
  models: ReadModel.Service,
  leases: LeaseManager.Service
) => {
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
    invocation: Controller.Invocation,
    build: (aggregate: Task.Aggregate, at: number) => Effect.Effect<ReadonlyArray<Task.Command | Event.Event>, E, R>,
    streamId: string = taskId ?? "",
    /** Events appended after the decided ones, in the same transaction (a lease release). */
    trailing: (state: Task.Task, at: number) => ReadonlyArray<Event.Event> = () => []
  ): Effect.Effect<Controller.Written, Controller.WriteError | E, R> =>
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
        return { task: yield* viewOf(after), events: [], firstLsn: null, lastLsn: null, projection: null, warnings: [] } satisfies Controller.Written
      }
      const projected = yield* project_(after.task)
      return {
        task: yield* viewOf(after),
        events: handled.events.map((event) => event._tag),
        firstLsn: handled.appended.firstLsn,
        lastLsn: handled.appended.lastLsn,
        projection: projected.directory,
        warnings: projected.warnings
      } satisfies Controller.Written
    })

  /** A write of one command built from the existing task. */
  const command = <E = never, R = never>(
    taskId: string,
    invocation: Controller.Invocation,
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

  /** Whom the project trusts now, as the store recorded it (the authority every gate is given). */
  const authority = ProjectApprovers.authority(projectId, project.root).pipe(Effect.provideService(EventStore.EventStore, store))

  const personOf = Signed.personOf

  /** A receipt of this project, signed with the invocation's key when it carries one (`Signed.receipt`). */
  const receipt = (
    taskId: string,
    revision: number | null,
    input: { readonly subject: Event.ReceiptSubject; readonly digest: Digest.Digest; readonly channel: string },
    invocation: Controller.Invocation,
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

  /**
   * The current run's frontier (`ReadModel.runFrontier`): its steps' latest attempts, its open
   * attempts with every intent of theirs, and the other attempts' open or settling intents. What a
   * host session's hook reads on every tool call, so its cost grows with the run's steps and not
   * with every attempt the task ever made.
   */
  const frontierRows = (task: Task.Task) =>
    task.run === null
      ? Effect.succeed({ attempts: [] as ReadonlyArray<ReadModel.AttemptRow>, intents: [] as ReadonlyArray<ReadModel.IntentRow> })
      : Effect.gen(function*() {
        const frontier = yield* models.runFrontier(task.taskId, (task.run as NonNullable<Task.Task["run"]>).runId, yield* branchOf(task.taskId))
        return { attempts: [...frontier.attempts.values()], intents: [...frontier.intents.values()] }
      })

  /** The current run's step whose outcome awaits a person, or null. */
  const unsettledStepOf = (task: Task.Task) =>
    task.plan === null || task.run === null
      ? Effect.succeed(null)
      : Effect.map(frontierRows(task), ({ attempts, intents }) =>
        Progress.unsettledStep((task.plan as NonNullable<Task.Task["plan"]>).plan, attempts, intents))

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
  const underSessionLease = (taskId: string, invocation: Controller.Invocation) =>
    invocation.leaseEpoch !== undefined
      ? Effect.succeed({ invocation, released: undefined as number | undefined })
      : Effect.map(Effect.zipRight(summaryOf(taskId), sessionLeaseOf(taskId)), (epoch) => ({
        invocation: epoch === undefined ? invocation : { ...invocation, leaseEpoch: epoch },
        released: epoch
      }))

  /** Plan steps the current run has not done (Progress: succeeded, or settled as succeeded). */
  const pendingStepsOf = (task: Task.Task) =>
    task.plan === null || task.run === null
      ? Effect.succeed(task.plan?.plan.steps.map((step) => step.id) ?? [])
      : Effect.map(frontierRows(task), ({ attempts, intents }) => Progress.pendingSteps((task.plan as NonNullable<Task.Task["plan"]>).plan, attempts, intents))

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
      // The run's latest step boundary, by index (not every checkpoint the branch has).
      const last = runId === null ? null : (yield* models.checkpoints(task.taskId, branch, { runId, kind: "step", last: 1 }))[0] ?? null
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

  return {
    project,
    store,
    blobs,
    models,
    leases,
    projectId,
    checkId,
    branchOf,
    summaryOf,
    key,
    keyOn,
    viewOf,
    project_,
    write,
    command,
    requireText,
    authority,
    personOf,
    receipt,
    requireSigned,
    runEventsOf,
    streamEventsOf,
    runRows,
    frontierRows,
    unsettledStepOf,
    sessionLeaseOf,
    underSessionLease,
    pendingStepsOf,
    codeChangedOf
  }
}

/**
 * @since 0.2.0
 * @category models
 */
export type Kit = ReturnType<typeof make_>

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
    deadline: lease.heartbeatAt + lease.graceMs,
    takeover: Owner.takeoverCommand(taskId, lease.owner)
  })

/**
 * A lease owner in one line: host, session, workspace and pid.
 *
 * @since 0.1.0
 * @category constructors
 */
export const describeOwner = (owner: Event.LeaseOwner): string =>
  `${owner.host}${owner.sessionRef === undefined ? "" : ` session ${owner.sessionRef}`} (workspace ${owner.workspaceId}, pid ${owner.pid})`
