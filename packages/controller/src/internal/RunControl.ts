/**
 * Run control: pause, resume (a run paused at a step boundary continues only on the tree and the
 * contract it paused on), cancel, reopen, and the request that asks a live runner to cancel or
 * pause. A cancel or a reopen without a runner closes what the run left open in the same append.
 * Every write goes through the command handler (`UseCase.write`).
 *
 * @since 0.2.0
 * @internal
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Progress from "@ratchet/kernel/Progress"
import * as Task from "@ratchet/kernel/Task"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as RunRequest from "../RunRequest.js"
import * as WorkTree from "../WorkTree.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { project, models, projectId, summaryOf, viewOf, write, requireText, authority, personOf, receipt, runEventsOf, runRows, underSessionLease } = kit

  const pause: Controller.Service["pause"] = (taskId, reason, invocation) =>
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

  const resume: Controller.Service["resume"] = (taskId, invocation) =>
    write(taskId, invocation, (aggregate, at) => {
      const task = aggregate as Task.Task
      return task.state === "REOPENED"
        ? Effect.succeed([{ _tag: "ResumeInterview", actor: invocation.actor, at } satisfies Task.Command])
        : resumeRun(task, at, invocation.actor)
    })

  const requestStop: Controller.Service["requestStop"] = (taskId, input, invocation) =>
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
        return yield* UseCase.heldLease(taskId, null, row)
      }
      return { task: yield* viewOf(current), acknowledged }
    })

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

  /**
   * Cancels; a cancel written under the lease (`--lease-epoch`) releases it in the same append, so a
   * cancelled task is never left holding a lease that only a takeover could end.
   */
  const cancel: Controller.Service["cancel"] = (taskId, reason, given) =>
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

  const reopen: Controller.Service["reopen"] = (taskId, input, given) =>
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

  return { pause, resume, cancel, requestStop, reopen } satisfies Pick<Controller.Service, "pause" | "resume" | "cancel" | "requestStop" | "reopen">
}
