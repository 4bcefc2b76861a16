/**
 * Steps: a manual step marked done (its changes held to the scope in the same append), an
 * Indeterminate step settled by a person, and a blocked task's blockers lifted. Every write goes
 * through the command handler (`UseCase.write` / `UseCase.command`).
 *
 * @since 0.2.0
 * @internal
 */
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Gate from "@ratchet/kernel/Gate"
import * as Progress from "@ratchet/kernel/Progress"
import * as Task from "@ratchet/kernel/Task"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as Effect from "effect/Effect"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as StepScope from "../StepScope.js"
import * as Approvals from "./Approvals.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { project, blobs, summaryOf, write, command, requireText, authority, personOf, receipt, requireSigned, runEventsOf, streamEventsOf, runRows, unsettledStepOf, underSessionLease, pendingStepsOf, codeChangedOf } = kit

  const stepDone: Controller.Service["stepDone"] = (taskId, input, invocation) =>
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
                  ? `step ${step.id} ${step.agent === undefined ? "runs a command" : "is an agent step"}; the runner records its end, not a person.`
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

  const settlementSubject: Controller.Service["settlementSubject"] = (taskId, stepId, outcome) =>
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

  const settle: Controller.Service["settle"] = (taskId, input, given) =>
    write(taskId, { ...given, actor: personOf(given) }, (aggregate, at) =>
      Effect.gen(function*() {
        const invocation = { ...given, actor: personOf(given) }
        const task = aggregate as Task.Task
        const found = yield* unsettled(task, input.stepId)
        const digest = settlementDigest(taskId, found.intentId, input.outcome)
        const fix = `run ratchet unblock ${taskId} --resolve ${input.stepId} ${input.outcome} and type the digest's first ${Approvals.confirmationLength} characters`
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

  /** The text and digest a person confirms to lift `blockers` to `to`. */
  const unblockShown = (task: Task.Task, to: "RUNNING" | "VERIFYING"): Controller.ApprovalSubject => ({
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

  const unblockSubject: Controller.Service["unblockSubject"] = (taskId, to) =>
    Effect.map(summaryOf(taskId), (summary) =>
      summary.task.state === "BLOCKED" && summary.task.blockers.some((blocker) => Gate.personalBlockers.includes(blocker.category))
        ? unblockShown(summary.task, to)
        : null)

  const unblock: Controller.Service["unblock"] = (taskId, input, given) =>
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

  return { stepDone, settlementSubject, settle, unblockSubject, unblock } satisfies Pick<Controller.Service, "stepDone" | "settlementSubject" | "settle" | "unblockSubject" | "unblock">
}
