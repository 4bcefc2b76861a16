/**
 * Verification and completion: `verify` runs the acceptance criteria's verifiers against the run's
 * frozen episode, signed by the person at the terminal, and `done` completes a verified task in
 * one transaction. Both are controller use cases run over the store's verification services.
 *
 * @since 0.2.0
 */
import * as Completion from "@ratchet/controller/Completion"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Documents from "@ratchet/controller/Documents"
import * as Signed from "@ratchet/controller/Signed"
import * as Verify from "@ratchet/controller/Verify"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Approval from "./Approval.js"
import { acList, type CommandSpec, controller, invocation, leaseEpoch, ok, type Outcome, str, taskArg } from "./Command.js"
import * as Render from "./Render.js"
import * as Store from "./Store.js"
import * as Terminal from "./Terminal.js"
import * as VerifyRender from "./VerifyRender.js"

/**
 * `RATCHET_FAULT=done:<point>` (a test facility): the completion kills this process with SIGKILL
 * at that point, as a crash would.
 */
const completionFault = (point: Completion.FaultPoint) =>
  Effect.sync(() => {
    if (process.env["RATCHET_FAULT"] === `done:${point}`) process.kill(process.pid, "SIGKILL")
  })

/** A `RATCHET_FAULT=done:<point>` naming no point is refused: a typo would silently test nothing. */
const checkCompletionFault = (): Effect.Effect<void, ControllerError.InvalidRequest> => {
  const fault = process.env["RATCHET_FAULT"]
  if (fault === undefined || !fault.startsWith("done:")) return Effect.void
  const point = fault.slice("done:".length)
  return (Completion.faultPoints as ReadonlyArray<string>).includes(point)
    ? Effect.void
    : Effect.fail(
      new ControllerError.InvalidRequest({
        field: "RATCHET_FAULT",
        reason: `${JSON.stringify(point.slice(0, 40))} is not a completion fault point.`,
        fix: `Use one of ${Completion.faultPoints.map((known) => `done:${known}`).join(", ")}, or unset RATCHET_FAULT.`
      })
    )
}

/**
 * `ratchet verify`.
 *
 * @since 0.2.0
 * @category commands
 */
export const verify: CommandSpec = {
  name: "verify",
  usage: "ratchet verify <task> [--ac <ids>]",
  summary: "Verify the acceptance criteria against the run's frozen episode (VERIFYING)",
  description: [
    "Runs every verifier that applies to each acceptance criterion (all of them, or those named by --ac), in the workspace: the command verifier runs verify.command with its timeout and records the exit code, the output as blobs and the tree it ran against; a junit report is read case by case; artifacts are hashed; a manual criterion asks you, on an interactive terminal, what you observed. Each criterion gets a verdict, PASS, FAIL, INDETERMINATE or NOT_RUN, with its evidence, the spec digest and you as the verifier of record; a command that cannot start is NOT_RUN, never FAIL, and INDETERMINATE never counts as PASS. On a terminal it first asks your approval key's passphrase and signs every verdict with your key: only verdicts signed by one of the project's approvers count (off a terminal, or without a key, they are recorded unsigned and the pass concludes HELD).",
    "The pass concludes over every counted verdict of this episode: APPROVED when the completion gate is CLEAR (then ratchet done); REVISE when a required criterion FAILED (the steps behind it get successor attempts within the retry budget and the task is RUNNING again: revise the work, then ratchet run; with the budget spent it BLOCKS for a reopen); BLOCKED (missing_evidence) when a check did not conclude (NOT_RUN, INDETERMINATE); HELD when verdicts are still missing: a criterion not yet verified, a manual criterion with no terminal to ask, unsigned verdicts, or only verdicts of someone who worked on the run as themselves (a manual step they marked done); the task stays VERIFYING for another pass. Starting the runner does not make you its steps' worker: you may verify what the runner did.",
    "Exit 0 for APPROVED, 3 for REVISE, BLOCKED or HELD, 4 when the task left VERIFYING while the verifiers ran (cancelled, rewound): the pass is then reported and not recorded."
  ].join(" "),
  positionals: [taskArg],
  options: {
    ac: { type: "string", valueName: "<ids>", description: "Only these criteria, comma-separated (e.g. AC-001,AC-003); earlier verdicts of this episode still count for the others." },
    ...leaseEpoch
  },
  examples: ["ratchet verify t-3f9a1c2b", "ratchet verify t-3f9a1c2b --ac AC-002", "ratchet verify t-3f9a1c2b --json | jq .outcome"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.gen(function*() {
        const acs = yield* acList(parsed)
        // The verifier of record signs the pass: their key is unlocked before any check runs.
        const signer = Terminal.channel() === "terminal" ? (yield* Approval.unlock("sign this pass's verdicts")) ?? undefined : undefined
        const by = invocation(parsed, env, signer)
        const person = Signed.personOf(by)
        if (!env.json) {
          env.write(`Verifying ${str(parsed, "task")} as ${person.kind}:${Render.visible(person.id)}${signer === undefined ? env.style.yellow(" (unsigned: these verdicts will not count; verify on a terminal with your approval key)") : ""}\n`)
        }
        const result = yield* Verify.verify({
          taskId: str(parsed, "task"),
          acs,
          invocation: by,
          onProgress: (event) => Effect.sync(() => {
            if (!env.json) env.write(VerifyRender.progress(event, env.style))
          })
        }).pipe(Effect.provide(Layer.merge(Store.verification(c.project), VerifyRender.observer(person))))
        const exit = result.notRecorded !== null ? 4 : result.conclusion.outcome === "APPROVED" && result.state !== "BLOCKED" ? 0 : 3
        return {
          exit,
          json: Documents.verification(result, signer !== undefined),
          text: VerifyRender.verified(result, env.style)
        } satisfies Outcome
      }))
}

/**
 * `ratchet done`.
 *
 * @since 0.2.0
 * @category commands
 */
export const done: CommandSpec = {
  name: "done",
  usage: "ratchet done <task>",
  summary: "Complete a verified task atomically (VERIFYING → COMPLETED)",
  description: [
    "Checks the completion gate for the current spec digest (every required criterion PASS in this episode, by an identity other than the worker, with evidence; no open blocker): HOLD lists what is missing, exit 3.",
    "Then writes the final run.md and verification.md, and commits in one transaction the completion record, the terminal checkpoint and the lease release; COMPLETED is printed only after a fresh read confirms them. The transaction takes the lease and gives it back; a writer that holds the lease passes --lease-epoch, and its lease is the one released. A HOLD also follows when the work tree changed since the checks ran (stale evidence). Running it again on a COMPLETED task confirms and writes nothing; after a crash it finishes what was left (nothing is ever half-done)."
  ].join(" "),
  positionals: [taskArg],
  options: { ...leaseEpoch },
  examples: ["ratchet done t-3f9a1c2b", "ratchet done t-3f9a1c2b --json | jq .completedLsn"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(
        Effect.zipRight(
          checkCompletionFault(),
          Completion.complete({ taskId: str(parsed, "task"), invocation: invocation(parsed, env), fault: completionFault }).pipe(
            Effect.provide(Store.verification(c.project))
          )
        ),
        (result) => ok(Documents.completion(result), VerifyRender.completed(result, env.style))
      ))
}
