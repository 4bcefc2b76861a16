/**
 * The acts only a person may do on a task, each shown first and confirmed at an interactive
 * terminal with the person's approval key: approving the restatement, the spec or the plan,
 * reopening (from FAILED), lifting a blocker or settling an Indeterminate step, and rewinding. The
 * approver key and the project's approvers are `ApproverCommands`.
 *
 * @since 0.2.0
 */
import type * as ApproverKey from "@ratchet/controller/ApproverKey"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Documents from "@ratchet/controller/Documents"
import type * as Digest from "@ratchet/kernel/Digest"
import * as Effect from "effect/Effect"
import * as Approval from "./Approval.js"
import { type CommandSpec, controller, invocation, leaseEpoch, ok, str, taskArg, writtenText } from "./Command.js"

/**
 * `ratchet approve`.
 *
 * @since 0.2.0
 * @category commands
 */
export const approve: CommandSpec = {
  name: "approve",
  usage: "ratchet approve <task> restatement|spec|plan",
  summary: "Approve the restatement, the spec or the plan (interactive)",
  description:
    "Shows what is approved and its digest, asks you to type the digest's first 8 hex characters (the 8 after sha256:; anything else approves nothing), then your approval key's passphrase: the receipt (the digest, you, the channel, the time) is signed with your key, and only a receipt signed by one of the project's approvers counts (ratchet approver init makes and registers your key). Needs an interactive terminal: without one, or without a key, the result is HOLD (exit 3) with the reason (approval_requires_terminal, receipt_unsigned). RATCHET_ACTOR does not make anyone a person: the key does.",
  positionals: [taskArg, { name: "subject", description: "What to approve", required: true, choices: ["restatement", "spec", "plan"] }],
  options: { ...leaseEpoch },
  examples: ["ratchet approve t-3f9a1c2b spec"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.gen(function*() {
        const taskId = str(parsed, "task")
        const subject = str(parsed, "subject") as "restatement" | "spec" | "plan"
        const shown = yield* c.approvalSubject(taskId, subject)
        // Off a terminal, or without a key, nobody is asked: the kernel's gate refuses the
        // unsigned receipt and says why.
        const { channel, digest, signer } = yield* Approval.give(shown)
        const written = yield* c.approve(taskId, { subject, digest, channel }, invocation(parsed, env, signer))
        return ok(Documents.written(written, { subject, digest }), writtenText(written, env, `Approved the ${subject} ${digest}`))
      }))
}

/**
 * `ratchet reopen`.
 *
 * @since 0.2.0
 * @category commands
 */
export const reopen: CommandSpec = {
  name: "reopen",
  usage: "ratchet reopen <task> --reason <text>",
  summary: "Reopen the contract (from PREFLIGHT, RUNNING, VERIFYING, BLOCKED or FAILED)",
  description:
    "Moves the task to REOPENED, from where the spec is revised or the interview resumed. Out of FAILED it needs your confirmation on an interactive terminal and your approval key's passphrase, recorded as a signed receipt like an approval.",
  positionals: [taskArg],
  options: { reason: { type: "string", required: true, valueName: "<text>", description: "What must change." }, ...leaseEpoch },
  examples: ["ratchet reopen t-3f9a1c2b --reason \"src/legacy does not exist; the scope was wrong\""],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.gen(function*() {
        const taskId = str(parsed, "task")
        const view = yield* c.status(taskId)
        let confirmation: { readonly digest: Digest.Digest; readonly channel: string } | undefined
        let signer: ApproverKey.Signer | undefined
        if (view.state === "FAILED") {
          const given = yield* Approval.give(yield* c.approvalSubject(taskId, "reopen"))
          confirmation = { digest: given.digest, channel: given.channel }
          signer = given.signer
        }
        const written = yield* c.reopen(taskId, { reason: str(parsed, "reason"), confirmation }, invocation(parsed, env, signer))
        return ok(Documents.written(written), writtenText(written, env, "Reopened"))
      }))
}

/**
 * `ratchet unblock`, and `--resolve` to settle an Indeterminate step.
 *
 * @since 0.2.0
 * @category commands
 */
export const unblock: CommandSpec = {
  name: "unblock",
  usage: "ratchet unblock <task> --to RUNNING|VERIFYING --resolution <text> | ratchet unblock <task> --resolve <step> succeeded|failed",
  summary: "Resolve a blocked task, or settle a step whose outcome is unknown",
  description: [
    "Back to RUNNING, or to VERIFYING only when the missing evidence or dependency is supplied with no code change. When the contract must change, use ratchet reopen. A blocker only a person lifts (a scope violation, a decision the run asked for) needs your confirmation on an interactive terminal and your approval key's passphrase: the receipt is signed.",
    "With --resolve: a step whose side effect was dispatched and whose runner died before recording the outcome is Indeterminate, and the task BLOCKED until a person decides. Check whether the effect happened, then settle it: succeeded (the step counts as done) or failed (a successor attempt runs it again). This is your decision, typed on an interactive terminal and signed with your approval key; the task goes back to RUNNING."
  ].join(" "),
  positionals: [taskArg, { name: "outcome", description: "With --resolve: what happened", required: false, choices: ["succeeded", "failed"] }],
  options: {
    to: { type: "string", choices: ["RUNNING", "VERIFYING"], valueName: "RUNNING|VERIFYING", description: "Where the task goes." },
    resolution: { type: "string", valueName: "<text>", description: "What resolved the blocker." },
    resolve: { type: "string", valueName: "<step>", description: "Settle this Indeterminate step (then give succeeded or failed)." },
    ...leaseEpoch
  },
  examples: [
    "ratchet unblock t-3f9a1c2b --to RUNNING --resolution \"the staging database is back\"",
    "ratchet unblock t-3f9a1c2b --resolve deploy succeeded"
  ],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.gen(function*() {
        const taskId = str(parsed, "task")
        const step = parsed.options["resolve"]
        const outcome = parsed.positionals["outcome"]
        const usage = (field: string, reason: string, fix: string) => new ControllerError.InvalidRequest({ field, reason, fix })
        if (typeof step === "string") {
          if (outcome !== "succeeded" && outcome !== "failed") {
            return yield* usage("outcome", "--resolve needs what happened: succeeded or failed.", `ratchet unblock ${taskId} --resolve ${step} succeeded|failed`)
          }
          if (parsed.options["to"] !== undefined || parsed.options["resolution"] !== undefined) {
            return yield* usage("--resolve", "--resolve settles a step and always returns to RUNNING; --to and --resolution do not apply.", `ratchet unblock ${taskId} --resolve ${step} ${outcome}`)
          }
          const { channel, digest, signer } = yield* Approval.give(yield* c.settlementSubject(taskId, step, outcome))
          const written = yield* c.settle(taskId, { stepId: step, outcome, confirmation: { digest, channel } }, invocation(parsed, env, signer))
          return ok(Documents.written(written, { settled: { stepId: step, outcome } }), writtenText(written, env, `Step ${step} settled as ${outcome}`))
        }
        if (outcome !== undefined) {
          return yield* usage("outcome", `${JSON.stringify(String(outcome))} goes with --resolve <step>.`, `ratchet unblock ${taskId} --resolve <step> ${String(outcome)}`)
        }
        const to = parsed.options["to"]
        const resolution = parsed.options["resolution"]
        if (typeof to !== "string" || typeof resolution !== "string") {
          return yield* usage(typeof to !== "string" ? "--to" : "--resolution", "unblock needs --to and --resolution (or --resolve <step> succeeded|failed).", `ratchet unblock ${taskId} --to RUNNING --resolution "…"`)
        }
        // A blocker only a person lifts is lifted with their signed confirmation.
        const shown = yield* c.unblockSubject(taskId, to as "RUNNING" | "VERIFYING")
        const given = shown === null ? null : yield* Approval.give(shown)
        const written = yield* c.unblock(
          taskId,
          { to: to as "RUNNING" | "VERIFYING", resolution, confirmation: given === null ? undefined : { digest: given.digest, channel: given.channel } },
          invocation(parsed, env, given?.signer)
        )
        return ok(Documents.written(written), writtenText(written, env, "Unblocked"))
      }))
}

/**
 * `ratchet rewind`.
 *
 * @since 0.2.0
 * @category commands
 */
export const rewind: CommandSpec = {
  name: "rewind",
  usage: "ratchet rewind <task> --to <lsn>",
  summary: "Fork the task's history at an earlier position and continue from there",
  description:
    "From PAUSED, BLOCKED, FAILED or VERIFYING (no step runs), by a person at an interactive terminal who confirms it and signs it with their approval key (recorded on the new branch as TaskRewound): forks the task's current branch at the event with that LSN into a new branch (rewind-1, rewind-2, …), and the task lives on it from now: its state is what it was right after that event. The LSN must end an append (events written together are kept or dropped together), and a step whose outcome awaits a decision must be settled first. Nothing is deleted: the old branch stays readable with ratchet log <task> --branch <name>. A rewind to the middle of a step is recovered like a crash when the run continues: a side effect already dispatched is never re-run silently.",
  positionals: [taskArg],
  options: {
    to: { type: "string", required: true, valueName: "<lsn>", integer: { min: 1, max: Number.MAX_SAFE_INTEGER }, description: "The LSN of the last event to keep (see ratchet log)." },
    ...leaseEpoch
  },
  examples: ["ratchet rewind t-3f9a1c2b --to 42"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(
        Effect.flatMap(c.rewindSubject(str(parsed, "task"), parsed.options["to"] as number), (shown) =>
          Effect.flatMap(Approval.give(shown), ({ channel, digest, signer }) =>
            c.rewind(str(parsed, "task"), parsed.options["to"] as number, invocation(parsed, env, signer), { digest, channel }))),
        (written) =>
        ok(
          Documents.written(written, { branch: written.branch, parent: written.parent, atLsn: written.atLsn }),
          `${writtenText(written, env, `Rewound to LSN ${written.atLsn}: now on branch ${written.branch} (forked from ${written.parent})`)}\nthe old history: ratchet log ${written.task.taskId} --branch ${written.parent}`
        )))
}
