/**
 * How a runner holds a task's writer lease for a run: taken (a fresh run's lease and the run's
 * start in one append, a takeover of a dead holder's, or an acquisition), kept alive by a heartbeat
 * while the run lasts, and released when it ends — unless the run released it itself with a cancel.
 * A lease the heartbeat finds taken over is `lost`: the run stops at once.
 *
 * @since 0.2.0
 */
import * as os from "node:os"
import type * as Event from "@ratchet/kernel/Event"
import type * as Task from "@ratchet/kernel/Task"
import type * as LeaseError from "@ratchet/lease/LeaseError"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Owner from "@ratchet/lease/Owner"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as CommandHandler from "./CommandHandler.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as RunRequest from "./RunRequest.js"

/**
 * A lease the run holds.
 *
 * @since 0.2.0
 * @category models
 */
export interface Held {
  readonly epoch: number
  /** Whether taking it started the run too (a fresh run). */
  readonly started: boolean
  /** The stream after the fresh run's append, or null (then the run reads it). */
  readonly initial: CommandHandler.Read | null
  /** Completed when the lease is lost. */
  readonly lost: Deferred.Deferred<never, LeaseError.LeaseLost>
  /** Set once the run released the lease itself (a cancel): nothing is released on exit. */
  readonly released: Ref.Ref<boolean>
}

/** The identity of this runner process as a lease owner. */
const ownerOf = (workspaceId: string) =>
  Owner.current({ workspaceId, host: "runner", sessionRef: os.hostname().slice(0, 200) || "unknown-host" })

/** The run started by a fresh runner lost a race for the task: it takes the lease the usual way. */
class Raced {
  readonly _tag = "Raced"
}

/**
 * Takes the lease of `taskId` on `branch` for a run (see the module comment), in the caller's scope.
 *
 * @since 0.2.0
 * @category constructors
 */
export const take = (input: {
  readonly projectId: string
  readonly taskId: string
  readonly branch: string
  /** The stream as the run first read it. */
  readonly first: CommandHandler.Read & { readonly summary: { readonly task: Task.Task } }
  /** Take the lease over from a holder whose grace has passed (never from a live one). */
  readonly takeover: boolean
  readonly actor: Event.Actor
  readonly home: string
  /** The checkout's root, whose committed approvers file the run's gate checks the store against. */
  readonly root: string
  readonly workspaceId: string
  readonly runId: () => string
}) =>
  Effect.gen(function*() {
    const leases = yield* LeaseManager.LeaseManager
    const { actor, branch, first, projectId, taskId } = input
    const firstTask = first.summary.task
    const key: LeaseManager.Key = { projectId, taskId, branch }
    const owner = yield* ownerOf(input.workspaceId)
    const observed = yield* leases.observe(key)
    const released = yield* Ref.make(false)
    let initial: CommandHandler.Read | null = null
    let lease: LeaseManager.Lease
    if (input.takeover && observed.status !== "free") {
      lease = (yield* leases.takeover(key, owner, { actor })).lease
    } else if (firstTask.state === "PLAN_APPROVED" && observed.status === "free" && firstTask.spec !== null && firstTask.plan !== null) {
      // A fresh run: the lease and the run start (with its checkpoint) in one append, so a run is
      // never started without its lease nor a lease taken for a run that never started.
      const epoch = (observed.epoch ?? 0) + 1
      const runId = input.runId()
      const authority = yield* ProjectApprovers.authority(projectId, input.root)
      const spec = firstTask.spec
      const plan = firstTask.plan
      initial = yield* CommandHandler.handle({
        projectId,
        streamId: taskId,
        branch,
        epoch,
        withRun: "frontier",
        known: first,
        decide: (read, at) =>
          read.summary?.version !== first.summary.version
            ? Effect.fail(new Raced())
            : Effect.succeed([
              {
                _tag: "LeaseAcquired",
                version: 1,
                actor,
                at,
                epoch,
                owner,
                heartbeatMs: leases.settings.heartbeatMs,
                graceMs: leases.settings.graceMs
              } satisfies Event.Event,
              { _tag: "StartRun", actor, at, runId, specDigest: spec.digest, planDigest: plan.digest, lease: { held: true, epoch }, authority },
              { _tag: "CheckpointRecorded", version: 1, actor, at, kind: "run_start", runId } satisfies Event.Event
            ]),
        describeHolder: () => "another writer"
      }).pipe(
        Effect.map((handled): CommandHandler.Read | null => handled.after),
        Effect.catchTags({ Raced: () => Effect.succeed(null), "@ratchet/controller/LeaseConflict": () => Effect.succeed(null) })
      )
      // The same owner's held lease, as the lease manager's value (acquire is reentrant for it).
      lease = yield* leases.acquire(key, owner, { actor })
    } else {
      lease = yield* leases.acquire(key, owner, { actor })
    }
    const epoch = lease.epoch
    // A request for this run that it did not act on (it blocked, or ended, first) goes with it.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        const left = RunRequest.read(input.home, taskId)
        // An epoch-less one (a Ctrl-C of this runner's own) is this run's too.
        if (left !== null && (left.epoch === undefined || left.epoch === epoch)) RunRequest.clearIf(input.home, taskId, left)
      })
    )
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        if (yield* Ref.get(released)) return
        yield* leases.release(lease, { actor }).pipe(Effect.catchAll(() => Effect.void))
      })
    )

    // The heartbeat: a lost lease stops the run at its next write (the store fences it anyway).
    const lost = yield* Deferred.make<never, LeaseError.LeaseLost>()
    // A lease this run released itself (with a cancel) is not lost: the heartbeat just stops.
    yield* Effect.sleep(Duration.millis(lease.heartbeatMs)).pipe(
      Effect.zipRight(Effect.flatMap(Ref.get(released), (done) => (done ? Effect.never : leases.heartbeat(lease)))),
      Effect.tap((next) => Effect.sync(() => {
        lease = next
      })),
      Effect.catchTag("@ratchet/storage/StorageError", () => Effect.void),
      Effect.forever,
      Effect.catchAll((error) =>
        Effect.flatMap(Ref.get(released), (done) => (error._tag === "@ratchet/lease/LeaseLost" && !done ? Deferred.fail(lost, error) : Effect.void))
      ),
      Effect.forkScoped
    )
    return { epoch, started: initial !== null, initial, lost, released } satisfies Held
  })
