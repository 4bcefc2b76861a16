/**
 * History: rewinding a task to an earlier position, a person's signed act that forks the current
 * branch and records `TaskRewound` as the new branch's first fact, through the command handler
 * (`UseCase.write`).
 *
 * @since 0.2.0
 * @internal
 */
import * as Digest from "@ratchet/kernel/Digest"
import * as Task from "@ratchet/kernel/Task"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
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
  const { store, models, projectId, summaryOf, write, personOf, receipt, requireSigned, unsettledStepOf } = kit

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
  const rewindShown = (summary: ReadModel.TaskSummary, toLsn: number): Controller.ApprovalSubject => ({
    taskId: summary.streamId,
    subject: "rewind",
    digest: Digest.ofCanonical(JSON.stringify({ rewind: { taskId: summary.streamId, branch: summary.branch, lastLsn: summary.lastLsn, toLsn } })),
    text: [
      `Rewind task ${summary.streamId} (${summary.task.state}) to LSN ${toLsn}.`,
      `The events after it (up to LSN ${summary.lastLsn}) stay on branch ${summary.branch}, readable with ratchet log ${summary.streamId} --branch ${summary.branch};`,
      "the task continues on a new branch from the state it had right after that event."
    ].join("\n")
  })

  const rewindSubject: Controller.Service["rewindSubject"] = (taskId, toLsn) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      yield* rewindable(summary, toLsn)
      return rewindShown(summary, toLsn)
    })

  const rewind: Controller.Service["rewind"] = (taskId, toLsn, invocation, confirmation) =>
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
        return yield* UseCase.heldLease(taskId, invocation.leaseEpoch ?? null, lease)
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
      // Who rewound, and on what authority, is the new branch's first fact: written through the
      // command handler on the branch the task now lives on (the fork, created last), under the
      // lease the rewind was allowed under (none when none is held).
      const written = yield* write(
        taskId,
        { ...invocation, actor: person, leaseEpoch: lease !== null && lease.held ? lease.epoch : undefined },
        () => Effect.succeed([{ _tag: "TaskRewound", version: 1, actor: person, at, parent: summary.branch, atLsn: toLsn, receipt: signed }] as const)
      )
      return { ...written, branch: forked.branch, parent: summary.branch, atLsn: toLsn }
    })

  return { rewindSubject, rewind } satisfies Pick<Controller.Service, "rewindSubject" | "rewind">
}
