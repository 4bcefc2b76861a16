/**
 * The commands that drive a task's run: `run` (the runner, in the foreground or detached), `step
 * done` for a manual step, and `pause`, `resume` and `cancel`. A pause or cancel of a task whose
 * live runner holds the lease is handed to that runner, which acts at its next step boundary.
 *
 * @since 0.2.0
 */
import * as ChildSandbox from "@ratchet/controller/ChildSandbox"
import type * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Documents from "@ratchet/controller/Documents"
import * as Runnable from "@ratchet/controller/Runnable"
import * as UntilVerified from "@ratchet/controller/UntilVerified"
import * as VerifierKey from "@ratchet/controller/VerifierKey"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Parsed } from "./Args.js"
import { type CommandSpec, controller, invocation, leaseEpoch, ok, type Outcome, str, taskArg, writtenText } from "./Command.js"
import * as Render from "./Render.js"
import * as RunnerProcess from "./RunnerProcess.js"
import * as Store from "./Store.js"

/** `--no-color` passed on to the runner, which writes the run's progress to this terminal. */
const noColor = (parsed: Parsed): ReadonlyArray<string> => parsed.options["no-color"] === true ? ["--no-color"] : []

/**
 * Whether the runner will loop until verified: `--until-verified`, or the approved plan's
 * `profile.untilVerified` of the task (of any runnable task with `--any`). Only then is the
 * verifier's passphrase looked at (ADR 0041's second amendment): a plain run never reads its file
 * nor refuses its variable.
 */
const loopRuns = (flag: boolean, task: string | null, c: Controller.Service) => {
  if (flag) return Effect.succeed(true)
  const asks = (id: string) => Effect.map(UntilVerified.profileOf(id), UntilVerified.policy)
  const answer = task !== null
    ? asks(task)
    : Effect.flatMap(c.listTasks, (views) =>
      Effect.map(
        Effect.forEach(views.filter((view) => view.state === "PLAN_APPROVED" || view.state === "RUNNING"), (view) => asks(view.taskId)),
        (answers) => answers.some((yes) => yes)
      ))
  return answer.pipe(Effect.provide(Store.verification(c.project)))
}

/**
 * The verifier's passphrase when the loop runs, from the file `RATCHET_VERIFIER_PASSPHRASE_FILE`
 * names (outside the workspace and `$RATCHET_HOME`, yours alone), read here so that its content
 * goes to the runner over a pipe: no process started from here holds the passphrase or the file's
 * name (ADR 0041, amended). `RATCHET_VERIFIER_PASSPHRASE` refuses the run. Null when the loop does
 * not run or the file's variable is not set.
 */
const verifierPassphrase = (loop: boolean, project: string): Effect.Effect<string | null, ControllerError.InvalidRequest> => {
  if (!loop) return Effect.succeed(null)
  // A passphrase in a variable is refused outright: /proc/<pid>/environ shows it to the agent.
  const inVariable = VerifierKey.variableRefusal(process.env)
  if (inVariable !== null) return Effect.fail(inVariable)
  const file = process.env[VerifierKey.variables.passphraseFile] ?? ""
  if (file === "") return Effect.succeed(null)
  const read = VerifierKey.readPassphraseFile(file, placesOf(project))
  return Either.isLeft(read) ? Effect.fail(read.left) : Effect.succeed(read.right)
}

/** Where a passphrase file may not be: the project's workspace and $RATCHET_HOME. */
const placesOf = (project: string): VerifierKey.Places => ({ workspace: project, home: Store.home() })

/**
 * `ratchet run`.
 *
 * @since 0.2.0
 * @category commands
 */
export const run: CommandSpec = {
  name: "run",
  usage: "ratchet run <task> [--takeover] [--until-verified] [--detach] | ratchet run --any [--takeover-expired]",
  summary: "Execute the approved plan's steps (PLAN_APPROVED → RUNNING → VERIFYING)",
  description: [
    "Starts the runner, a process that lives only while the run has work: it passes the run-start gate (current contract and plan digests, scope, the writer lease taken by the runner), then runs each step in `needs` order as attempts. A command step's side effect is an intent recorded before the child starts and resolved after it exits (exit code, duration, output as blobs, the paths it changed); a failure gets a successor attempt within the retry budget, a repeated failure, no progress or a spent budget BLOCKS; a path changed outside the scope BLOCKS naming it.",
    "It stops when every step is done (VERIFYING), at a manual step (finish it with ratchet step done), or when the task blocks, pauses or is cancelled. At every start it recovers what a dead runner left open (docs/guides/recovery.md). Progress goes to the terminal (step n of m, attempt, live output); with --json, NDJSON events and a final result line.",
    "With --until-verified nobody needs to be there for the rest: at VERIFYING the runner verifies every criterion as the unattended verifier (an approver key of its own, never yours nor that of the approver of the task's spec or plan: RATCHET_VERIFIER_KEY, with its passphrase in the file RATCHET_VERIFIER_PASSPHRASE_FILE names, read by ratchet run and handed to the runner over a pipe, never in a process's environment; RATCHET_VERIFIER_PASSPHRASE is refused, as every process of your user can read another's environment), signing each verdict; a REVISE runs the successor attempts it scheduled (an agent's envelope names the failures and their fingerprint) and verifies again; an APPROVED pass completes the task as ratchet done does. It stops BLOCKED when the successor budget is spent or the same failure's fingerprint repeats, and for a person when the verification holds (a manual criterion). Every agent, step and check it starts runs in a bubblewrap sandbox (its own PID namespace, the key and passphrase files hidden; ADR 0043): without a usable verifier key, or without a working bwrap (sudo apt-get install bubblewrap; RATCHET_BWRAP_BIN names another), it is refused before anything runs.",
    "Exit 0 when it stopped as planned (VERIFYING, a manual step, a pause or a cancel; with --until-verified, COMPLETED), 3 when the task is BLOCKED (or, with --until-verified, left VERIFYING for a person), 4 when another writer holds the lease. Ctrl-C pauses after the current step; a second Ctrl-C stops at once."
  ].join(" "),
  positionals: [{ name: "task", description: "The task id (omit with --any)", required: false }],
  options: {
    any: { type: "boolean", description: "Take this project's runnable tasks (PLAN_APPROVED or RUNNING, lease free) one after another until none is left." },
    takeover: {
      type: "boolean",
      description:
        "Take the lease over from a dead runner (only strictly after its grace) and continue from where it died: its steps are recovered, or a task it left VERIFYING, BLOCKED or PAUSED is handed on with the lease released."
    },
    "until-verified": {
      type: "boolean",
      description:
        "Verify, revise and complete without a person: verify as the unattended verifier (RATCHET_VERIFIER_KEY and RATCHET_VERIFIER_PASSPHRASE_FILE, set on this command line only), run the successors a REVISE schedules, complete an APPROVED task; BLOCKED when the budget is spent or a failure repeats."
    },
    "takeover-expired": { type: "boolean", description: "With --any: also take tasks whose runner's lease expired, waiting for live runners' leases to expire or their work to end." },
    detach: { type: "boolean", description: "Start the runner in its own session with its log under $RATCHET_HOME/logs/ and return at once." }
  },
  examples: [
    "ratchet run t-3f9a1c2b",
    "ratchet run t-3f9a1c2b --until-verified",
    "ratchet run t-3f9a1c2b --detach && ratchet status t-3f9a1c2b", "ratchet run --any --takeover-expired --json"],
  needs: "project",
  run: (parsed, env) =>
    Effect.gen(function*() {
      const task = parsed.positionals["task"]
      const any = parsed.options["any"] === true
      const misuse = (reason: string, fix: string) => new ControllerError.InvalidRequest({ field: "task", reason, fix })
      if (any === (typeof task === "string")) {
        return yield* misuse(any ? "give a task or --any, not both." : "name the task to run, or pass --any.", "See ratchet run --help.")
      }
      if (parsed.options["takeover-expired"] === true && !any) {
        return yield* misuse("--takeover-expired goes with --any.", `For one task use --takeover: ratchet run ${typeof task === "string" ? task : "<task>"} --takeover`)
      }
      if (parsed.options["takeover"] === true && any) {
        return yield* misuse("--takeover names one task's lease.", "With --any use --takeover-expired.")
      }
      if (parsed.options["until-verified"] === true && any) {
        return yield* misuse("--until-verified names one task.", "Run one task at a time with it: ratchet run <task> --until-verified")
      }
      const c = yield* controller
      const loop = yield* loopRuns(parsed.options["until-verified"] === true, typeof task === "string" ? task : null, c)
      const passphrase = yield* verifierPassphrase(loop, c.project.root)
      // The flag, or one task whose approved plan's profile asks for the loop: refused here, before
      // anything runs (a detached runner's refusal would be in its log only).
      if (parsed.options["until-verified"] === true || (loop && typeof task === "string")) {
        // Refused here, before anything runs, rather than unsigned later (fail closed, ADR 0041).
        const unlocked = VerifierKey.unlock(process.env, passphrase, placesOf(c.project.root))
        if (Either.isLeft(unlocked)) return yield* Effect.fail(unlocked.left)
        // So is a loop whose children cannot be sandboxed (ADR 0043); the runner checks again.
        const sandbox = ChildSandbox.make(process.env, [])
        if (Either.isLeft(sandbox)) return yield* Effect.fail(sandbox.left)
      }
      if (typeof task === "string") {
        // Refused here rather than in a detached runner's log, where nobody would see it.
        yield* Effect.flatMap(c.status(task), (view) =>
          // With --until-verified a VERIFYING task is verified (and revised) rather than refused.
          parsed.options["until-verified"] === true && view.state === "VERIFYING" && parsed.options["takeover"] !== true
            ? Effect.void
            : Runnable.check(view, parsed.options["takeover"] === true))
      }
      const args = [
        ...(typeof task === "string" ? [task] : ["--any"]),
        ...(parsed.options["takeover"] === true ? ["--takeover"] : []),
        ...(parsed.options["until-verified"] === true ? ["--until-verified"] : []),
        ...(parsed.options["takeover-expired"] === true ? ["--takeover-expired"] : []),
        "-C",
        env.cwd
      ]
      if (parsed.options["detach"] === true) {
        const started = yield* RunnerProcess.detached(args, typeof task === "string" ? task : "any", {}, passphrase)
        return ok(
          Documents.detachedRun(typeof task === "string" ? task : null, started),
          `Runner started (pid ${started.pid}); its log: ${started.log}\nWatch it with: ratchet status ${typeof task === "string" ? task : "<task>"}`
        )
      }
      const code = yield* RunnerProcess.foreground([...args, ...(env.json ? ["--json"] : []), ...noColor(parsed)], passphrase)
      return { exit: code, json: null, text: null } satisfies Outcome
    })
}

/**
 * `ratchet step done`.
 *
 * @since 0.2.0
 * @category commands
 */
export const stepDone: CommandSpec = {
  name: "step done",
  usage: "ratchet step done <task> <step> [--note <text>]",
  summary: "Finish a manual step's attempt (the run continues with ratchet run)",
  description:
    "A manual step is work done by a person, or by the agent in a host session; the runner stops there with the step's attempt awaiting its worker. This records the attempt as Succeeded, with your note; the next ratchet run continues after it. What changed in the checkout since the step started is held to the spec's scope like a command step's changes: a path outside allowedScope or inside forbiddenScope BLOCKS the task as scope_violation, naming it (exit 3); gitignored paths are not seen. Run it in the checkout where the run stopped at the step. When a host session of this checkout holds the task's lease as the step's worker, the step ends under that lease and releases it; tool calls of the session whose end was never reported (declined at the host's own prompt) are closed, and the note lists them.",
  positionals: [taskArg, { name: "step", description: "The manual step's id", required: true }],
  options: { note: { type: "string", valueName: "<text>", description: "What was done, for the run's record." }, ...leaseEpoch },
  examples: ["ratchet step done t-3f9a1c2b review --note \"reviewed with the API team\" && ratchet run t-3f9a1c2b"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(
        c.stepDone(str(parsed, "task"), { stepId: str(parsed, "step"), note: parsed.options["note"] as string | undefined }, invocation(parsed, env)),
        (written): Outcome => {
          // The step's end is recorded either way; a task it blocked (a path outside the scope,
          // changes that could not be checked) is a HOLD, so `… && ratchet run` stops there.
          const blocker = written.task.state === "BLOCKED" ? written.task.blockers.at(-1) ?? null : null
          return blocker === null
            ? ok(Documents.written(written), writtenText(written, env, `Step ${str(parsed, "step")} done`))
            : {
              exit: 3,
              json: Documents.written(written, { blocker }),
              text: writtenText(
                written,
                env,
                `Step ${str(parsed, "step")} done, and the task is BLOCKED (${blocker.category}):\n${Render.visible(blocker.requiredAction)}`
              )
            }
        }
      ))
}

/**
 * `ratchet pause`.
 *
 * @since 0.2.0
 * @category commands
 */
export const pause: CommandSpec = {
  name: "pause",
  usage: "ratchet pause <task> [--reason <text>]",
  summary: "Pause a task (from INTERVIEWING or RUNNING)",
  description: "A paused task refuses work until resumed; it resumes where it paused.",
  positionals: [taskArg],
  options: { reason: { type: "string", valueName: "<text>", description: "Why it is paused." }, ...leaseEpoch },
  examples: ["ratchet pause t-3f9a1c2b --reason \"waiting for the API team\""],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(c.pause(str(parsed, "task"), parsed.options["reason"] as string | undefined, invocation(parsed, env)), (written) =>
        ok(Documents.written(written), writtenText(written, env, "Paused"))).pipe(
          // A live runner holds the lease: ask it to pause at its next step boundary.
          Effect.catchTag("@ratchet/controller/LeaseConflict", (conflict) =>
            parsed.options["lease-epoch"] !== undefined
              ? Effect.fail(conflict)
              : Effect.flatMap(
                // No runner holds the lease after all: the conflict stands.
                c.requestStop(str(parsed, "task"), {
                  kind: "pause",
                  reason: (parsed.options["reason"] as string | undefined) ?? "paused from the terminal",
                  home: Store.home(),
                  waitMs: 5_000
                }, invocation(parsed, env)).pipe(Effect.catchTag("@ratchet/controller/InvalidRequest", () => Effect.fail(conflict))),
                (stopped): Effect.Effect<Outcome, Controller.WriteError> => {
                  const json = Documents.stopRequested(stopped)
                  const line = `${stopped.task.taskId}: ${env.style.bold(stopped.task.state)}`
                  if (stopped.acknowledged) return Effect.succeed(ok(json, `Paused by its runner\n${line}\nnext: ${Render.visible(stopped.task.next)}`))
                  if (stopped.task.lease.status !== "free") {
                    return Effect.succeed(ok(json, `Pause requested: the runner pauses after the current step.\n${line}`))
                  }
                  // The runner ended its run first (a manual step, a block, every step done).
                  return stopped.task.state === "RUNNING"
                    ? Effect.map(c.pause(str(parsed, "task"), parsed.options["reason"] as string | undefined, invocation(parsed, env)), (written) =>
                      ok(Documents.written(written), writtenText(written, env, "Paused")))
                    : Effect.succeed(ok(json, `The run stopped before it could pause: the task is ${stopped.task.state}.\nnext: ${Render.visible(stopped.task.next)}`))
                }
              )
          )
        )
    )
}

/**
 * `ratchet resume`.
 *
 * @since 0.2.0
 * @category commands
 */
export const resume: CommandSpec = {
  name: "resume",
  usage: "ratchet resume <task>",
  summary: "Resume a paused task, or resume the interview of a reopened one",
  description:
    "Out of PAUSED: back to where it paused. A run paused at a step boundary is re-verified first (the git HEAD, the dirty paths and their contents, the spec and plan digests against those recorded at the pause); a difference BLOCKS the task naming it, otherwise the runner continues from the recorded next step on this terminal (unless --no-run). Out of REOPENED: back to INTERVIEWING. A blocked task is resumed with ratchet unblock.",
  positionals: [taskArg],
  options: {
    "no-run": { type: "boolean", description: "Only record the resume; do not start the runner (continue later with ratchet run)." },
    ...leaseEpoch
  },
  examples: ["ratchet resume t-3f9a1c2b", "ratchet resume t-3f9a1c2b --no-run"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.flatMap(c.resume(str(parsed, "task"), invocation(parsed, env)), (written) => {
        const resumedRun = written.task.state === "RUNNING" && written.events.includes("TaskResumed")
        if (!resumedRun || parsed.options["no-run"] === true || parsed.options["lease-epoch"] !== undefined) {
          return Effect.succeed(ok(Documents.written(written), writtenText(written, env, written.task.state === "BLOCKED" ? "Resumed, then blocked: the checkout changed while paused" : "Resumed")))
        }
        // The run continues from its recorded next step, in the runner, on this terminal.
        if (!env.json) process.stderr.write(`${writtenText(written, env, "Resumed")}\n`)
        const args = [written.task.taskId, "-C", env.cwd, ...(env.json ? ["--json"] : []), ...noColor(parsed)]
        // A plan whose profile asks for the loop needs the verifier's passphrase here too.
        return loopRuns(false, written.task.taskId, c).pipe(
          Effect.flatMap((loop) => verifierPassphrase(loop, c.project.root)),
          Effect.flatMap((passphrase) => RunnerProcess.foreground(args, passphrase)),
          Effect.map((code): Outcome => ({ exit: code, json: null, text: null }))
        )
      }))
}

/**
 * `ratchet cancel`.
 *
 * @since 0.2.0
 * @category commands
 */
export const cancel: CommandSpec = {
  name: "cancel",
  usage: "ratchet cancel <task> --reason <text>",
  summary: "Cancel a task (terminal: it is never reopened)",
  description: "CANCELLED is terminal; to do the work again, create a new task.",
  positionals: [taskArg],
  options: { reason: { type: "string", required: true, valueName: "<text>", description: "Why it is cancelled." }, ...leaseEpoch },
  examples: ["ratchet cancel t-3f9a1c2b --reason \"superseded by t-77aa01c3\""],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.map(c.cancel(str(parsed, "task"), str(parsed, "reason"), invocation(parsed, env)), (written) =>
        ok(Documents.written(written), writtenText(written, env, "Cancelled (terminal)"))).pipe(
          // A live runner holds the lease: ask it to stop its step and cancel, and wait for it.
          Effect.catchTag("@ratchet/controller/LeaseConflict", (conflict) =>
            parsed.options["lease-epoch"] !== undefined
              ? Effect.fail(conflict)
              : Effect.flatMap(
                // No runner holds the lease after all: the conflict stands.
                c.requestStop(str(parsed, "task"), { kind: "cancel", reason: str(parsed, "reason"), home: Store.home(), waitMs: 30_000 }, invocation(parsed, env))
                  .pipe(Effect.catchTag("@ratchet/controller/InvalidRequest", () => Effect.fail(conflict))),
                (stopped): Effect.Effect<Outcome, Controller.WriteError> =>
                  stopped.acknowledged
                    ? Effect.succeed(ok(
                      Documents.stopRequested(stopped),
                      `Cancelled by its runner (terminal)\n${stopped.task.taskId}: ${env.style.bold(stopped.task.state)}\nnext: ${Render.visible(stopped.task.next)}`
                    ))
                    // The runner ended its run first and let the lease go: cancel directly.
                    : Effect.map(c.cancel(str(parsed, "task"), str(parsed, "reason"), invocation(parsed, env)), (written) =>
                      ok(Documents.written(written), writtenText(written, env, "Cancelled (terminal)")))
              )
          )
        )
    )
}
