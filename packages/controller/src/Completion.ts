/**
 * `ratchet done`: the atomic completion of a verified task, in the brief's order.
 *
 * 1. The gate: the kernel decides `Complete` over the episode's verdicts (current digest, newest
 *    per criterion, never the worker's own). CLEAR is the READY_TO_COMPLETE gate; HOLD says why.
 * 2. The final `run.md` and `verification.md` are written (their content is final; the state they
 *    name is still VERIFYING, and the store remains the authority).
 * 3. One transaction, through the command handler (`CommandHandler`): the lease taken for this
 *    write (`LeaseAcquired`, unless the caller holds it and presents its epoch), `TaskCompleted`
 *    (the completion record), then, as the handler's trailing events, the `terminal` checkpoint
 *    and `LeaseReleased`. So there is no moment at which the task is COMPLETED under an active
 *    lease, or the lease released on a task that is not. A task that moved in between is decided
 *    again (up to the handler's attempts); a lease another writer took meanwhile is a
 *    `LeaseConflict` naming it.
 * 4. A fresh read must show COMPLETED, the terminal checkpoint and no held lease; only then is
 *    COMPLETED reported, and the projections are rewritten with it.
 *
 * Replaying `done` on a COMPLETED task reconciles: it confirms step 4 and rewrites the projections,
 * writing nothing to the store. A crash anywhere leaves either the task VERIFYING with the lease
 * free (before or inside the transaction: it rolled back; `done` again completes it) or COMPLETED
 * with the lease released (after the commit: `done` again confirms it).
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Owner from "@ratchet/lease/Owner"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as CommandHandler from "./CommandHandler.js"
import { describeOwner, heldLease, Project } from "./Controller.js"
import type * as Controller from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as Episode from "./Episode.js"
import * as LessonFacts from "./LessonFacts.js"
import * as Projection from "./Projection.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as RunReport from "./RunReport.js"
import * as StaleEvidence from "./StaleEvidence.js"
import * as TaskBranch from "./TaskBranch.js"
import * as VerificationReport from "./VerificationReport.js"

/**
 * Where a test may stop the completion (the CLI kills itself with SIGKILL there when
 * `RATCHET_FAULT` names `done:<point>`).
 *
 * @since 0.1.0
 * @category models
 */
export const faultPoints = ["after-projection", "after-commit"] as const

/**
 * @since 0.1.0
 * @category models
 */
export type FaultPoint = (typeof faultPoints)[number]

/**
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly taskId: string
  readonly runId: string
  readonly branch: string
  /** True when the task was already COMPLETED and this call only confirmed it. */
  readonly reconciled: boolean
  readonly completedLsn: number | null
  readonly verdicts: ReadonlyArray<Event.AcVerdict>
  readonly projection: string | null
  readonly warnings: ReadonlyArray<string>
}

/** The completion HOLD for evidence that is not current (see {@link StaleEvidence.check}). */
const staleEvidence = (task: Task.Task, episode: Episode.Episode) =>
  Effect.flatMap(Project, (project) =>
    Effect.flatMap(ProjectApprovers.counting(task.projectId, project.root), (authority) => StaleEvidence.check(task, episode, project.root, authority)))

/**
 * Completes `taskId` (see the module comment).
 *
 * @since 0.1.0
 * @category constructors
 */
export const complete = (options: CompleteOptions) =>
  Effect.withSpan(completeIn(options), "ratchet.complete", { attributes: { "ratchet.task": options.taskId } })

interface CompleteOptions {
  readonly taskId: string
  readonly invocation: Controller.Invocation
  readonly fault?: (point: FaultPoint) => Effect.Effect<void>
}

const completeIn = (options: CompleteOptions) =>
  Effect.gen(function*() {
    const project = yield* Project
    const models = yield* ReadModel.ReadModels
    const leases = yield* LeaseManager.LeaseManager
    const projectId = project.project.projectId
    const { taskId, invocation } = options
    const fault = options.fault ?? (() => Effect.void)
    const warnings: Array<string> = []

    const read = Effect.gen(function*() {
      const branch = yield* TaskBranch.of(taskId)
      const summary = yield* models.taskSummary(taskId, branch)
      if (summary === null || summary.projectId !== projectId) return yield* new ControllerError.TaskNotFound({ taskId, projectId })
      return { summary, branch }
    })

    /** Writes every projection of `task`, with `episode`'s verification; a failure is a warning. */
    const projectAll = (task: Task.Task, branch: string, episode: Episode.Episode) =>
      Effect.gen(function*() {
        const evidence = yield* VerificationReport.loadAll(episode.verdicts.flatMap((verdict) => verdict.evidenceRefs))
        const runMd = yield* RunReport.render(task, branch)
        const authority = yield* ProjectApprovers.counting(projectId, project.root)
        const written = yield* Projection.write(project.root, task, runMd, VerificationReport.render(task, episode, evidence, authority))
        return written.directory as string
      }).pipe(Effect.catchAll((error) =>
        Effect.sync(() => {
          warnings.push(`The projections were not written: ${error.message}`)
          return null
        })
      ))

    /** The fresh read that must confirm a completion before it is reported. */
    const confirm = Effect.gen(function*() {
      const { summary, branch } = yield* read
      const task = summary.task
      const runId = task.run?.runId ?? null
      const terminal = runId !== null && (yield* models.checkpoints(taskId, branch, { runId, kind: "terminal", last: 1 })).length > 0
      const lease = yield* models.lease(projectId, taskId)
      if (task.state !== "COMPLETED" || !terminal || (lease !== null && lease.held)) {
        return yield* Effect.dieMessage(
          `task ${taskId} is not confirmed complete: state ${task.state}, terminal checkpoint ${terminal ? "present" : "missing"}, lease ${
            lease !== null && lease.held ? "held" : "free"
          }`
        )
      }
      return { task, branch }
    })

    const completedResult = (task: Task.Task, branch: string, reconciled: boolean, completedLsn: number | null) =>
      Effect.gen(function*() {
        const episode = yield* Episode.current(task, branch)
        const projection = yield* projectAll(task, branch, episode)
        return {
          taskId,
          runId: task.run?.runId ?? "",
          branch,
          reconciled,
          completedLsn,
          // The verdicts the completion rests on (as the completion record holds them).
          verdicts: [...Episode.counted(task, episode, yield* ProjectApprovers.counting(projectId, project.root)).values()],
          projection,
          warnings
        } satisfies Result
      })

    const { branch } = yield* read
    // The epoch the completion writes under: the caller's, when it holds the lease and presents it
    // (the transaction releases that one), or the next one, taken and given back in the same
    // transaction. Each decision checks it against the lease as it stands then.
    const presented = invocation.leaseEpoch ?? null
    const lease = yield* models.lease(projectId, taskId)
    const epoch = presented ?? (lease?.epoch ?? 0) + 1
    let runId = ""
    const handled = yield* CommandHandler.handle({
      projectId,
      streamId: taskId,
      branch,
      epoch,
      decide: (current, at) =>
        Effect.gen(function*() {
          const task = current.summary?.task
          if (task === undefined) return yield* new ControllerError.TaskNotFound({ taskId, projectId })
          // Already COMPLETED (this call replays one that committed): nothing to decide, confirm it.
          if (task.state === "COMPLETED") return []
          if (task.state !== "VERIFYING" || task.run === null) {
            return yield* new Task.Refused({
              code: Task.isTerminal(task.state) ? "terminal_state" : "forbidden_transition",
              command: "Complete",
              state: task.state,
              reason: `a task completes from VERIFYING, through the completion gate; this one is ${task.state}.`,
              action: Task.nextStep(task)
            })
          }
          const version = current.summary?.version ?? 0
          runId = task.run.runId
          const episode = yield* Episode.current(task, branch)
          // 1. The gate.
          const authority = yield* ProjectApprovers.authority(projectId, project.root)
          const complete: Task.Command = {
            _tag: "Complete",
            actor: invocation.actor,
            at,
            verdicts: episode.verdicts,
            workers: episode.view.workers,
            authority
          }
          const decided = Task.decide(complete, task)
          if (Either.isLeft(decided)) return yield* decided.left
          // Current evidence: every command the verdicts rest on ran against the tree that is here now.
          const stale = yield* staleEvidence(task, episode)
          if (stale !== null) return yield* new Task.Held({ command: "Complete", gate: stale.gate(at, version) })
          // The lease: this write takes it and gives it back in the same transaction, unless the
          // caller holds it (and presents its epoch): then the transaction releases that one.
          const now = yield* models.lease(projectId, taskId)
          if (now !== null && now.held && presented !== now.epoch) {
            return yield* heldLease(taskId, presented, now)
          }
          const holding = presented !== null
          if ((holding && (now === null || !now.held)) || (!holding && (now?.epoch ?? 0) + 1 !== epoch)) {
            return yield* new ControllerError.LeaseConflict({ taskId, presented, epoch: now?.epoch ?? null, held: false, holder: null, deadline: null })
          }
          // 2. The final projections.
          yield* projectAll(task, branch, episode)
          yield* fault("after-projection")
          // 3. One transaction: the lease taken (unless held), the completion record, and (as the
          // handler's trailing events) the terminal checkpoint and the lease's release.
          const owner = yield* Owner.current({ workspaceId: project.workspaceId, host: "cli", sessionRef: os.hostname().slice(0, 200) || "unknown-host" })
          return [
            ...(holding ? [] : [{
              _tag: "LeaseAcquired",
              version: 1,
              actor: invocation.actor,
              at,
              epoch,
              owner,
              heartbeatMs: leases.settings.heartbeatMs,
              graceMs: leases.settings.graceMs
            } satisfies Event.Event]),
            complete
          ]
        }),
      trailing: (_task, at) => [
        { _tag: "CheckpointRecorded", version: 1, actor: invocation.actor, at, kind: "terminal", runId },
        { _tag: "LeaseReleased", version: 1, actor: invocation.actor, at, epoch }
      ],
      describeHolder: (held) => describeOwner(held.owner)
    }).pipe(Effect.catchTag("@ratchet/kernel/RunCommandRefused", (refused) => Effect.die(refused)))
    if (handled.appended === null) {
      const confirmed = yield* confirm
      return yield* completedResult(confirmed.task, confirmed.branch, true, null)
    }
    yield* fault("after-commit")
    // 4. The fresh read.
    const confirmed = yield* confirm
    // A verified completion is a success the lessons count; recording it never changes the result.
    const episode = yield* Episode.current(confirmed.task, confirmed.branch).pipe(Effect.option)
    yield* LessonFacts.completed({
      task: confirmed.task,
      runId,
      changedPaths: episode._tag === "Some" ? episode.value.view.attempts.flatMap((attempt) => attempt.command?.changedPaths ?? []) : []
    })
    return yield* completedResult(confirmed.task, confirmed.branch, false, handled.appended.lastLsn)
  })
