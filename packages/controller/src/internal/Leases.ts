/**
 * The task's writer lease from a transport: show, acquire, heartbeat, release and take over,
 * through the lease manager (a terminal task's lease is never taken).
 *
 * @since 0.2.0
 * @internal
 */
import * as Task from "@ratchet/kernel/Task"
import * as LeaseError from "@ratchet/lease/LeaseError"
import type * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Owner from "@ratchet/lease/Owner"
import * as EventStore from "@ratchet/storage/EventStore"
import * as Effect from "effect/Effect"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { project, models, leases, projectId, summaryOf, key, keyOn } = kit

  const owner = (identity: Controller.LeaseIdentity) =>
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

  const lease: Controller.Service["lease"] = {
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

  return { lease } satisfies Pick<Controller.Service, "lease">
}
