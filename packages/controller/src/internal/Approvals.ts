/**
 * Approvals: what approving a restatement, a spec, a plan or a reopen shows the person, and the
 * approval itself as a receipt (signed with the invocation's key when it carries one) that the
 * kernel judges; and the project's approvers (`ApproverCommands`, on the approvers stream). Every
 * task write goes through the command handler (`UseCase.command`).
 *
 * @since 0.2.0
 * @internal
 */
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import * as EventStore from "@ratchet/storage/EventStore"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ApproverCommands from "../ApproverCommands.js"
import type * as Controller from "../Controller.js"
import * as ControllerError from "../ControllerError.js"
import * as Projection from "../Projection.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { project, store, projectId, summaryOf, command, authority, personOf, receipt } = kit

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

  const approvalSubject: Controller.Service["approvalSubject"] = (taskId, subject) =>
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

  const approve: Controller.Service["approve"] = (taskId, input, invocation) =>
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

  const withStore = <A, E>(effect: Effect.Effect<A, E, EventStore.EventStore>) => Effect.provideService(effect, EventStore.EventStore, store)

  const approvers: Controller.Service["approvers"] = {
    list: withStore(ApproverCommands.list(projectId, project.root)),
    writeBack: withStore(ApproverCommands.writeBack(projectId, project.root)),
    register: (signer) => Effect.flatMap(Clock.currentTimeMillis, (at) => withStore(ApproverCommands.register(projectId, project.root, signer, at))),
    add: (signer, approver) => Effect.flatMap(Clock.currentTimeMillis, (at) => withStore(ApproverCommands.add(projectId, project.root, signer, approver, at))),
    remove: (signer, id) => Effect.flatMap(Clock.currentTimeMillis, (at) => withStore(ApproverCommands.remove(projectId, project.root, signer, id, at))),
    adoption: withStore(ApproverCommands.adoption(projectId, project.root)),
    trust: (actor, confirmedHead) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => withStore(ApproverCommands.trust(projectId, project.root, actor, at, confirmedHead)))
  }

  return { approvalSubject, approve, approvers } satisfies Pick<Controller.Service, "approvalSubject" | "approve" | "approvers">
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
