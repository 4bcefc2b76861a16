/**
 * The command table: every `ratchet` command once, with its arguments, its help and what it runs.
 * Each command is a thin transport over the controller: it decodes arguments, calls one controller
 * operation and shapes the result for a person (text) or a program (`--json`).
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import type * as ApproverKey from "@ratchet/controller/ApproverKey"
import * as ContractFile from "@ratchet/controller/ContractFile"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Completion from "@ratchet/controller/Completion"
import * as Workspace from "@ratchet/controller/Workspace"
import * as ClaudeCode from "@ratchet/host-claude-code/ClaudeCode"
import * as Codex from "@ratchet/host-codex/Codex"
import * as HostAdapter from "@ratchet/host/HostAdapter"
import type * as HostSandbox from "@ratchet/host/HostSandbox"
import * as Stats from "@ratchet/controller/Stats"
import * as Verify from "@ratchet/controller/Verify"
import type * as Digest from "@ratchet/kernel/Digest"
import * as KernelEvent from "@ratchet/kernel/Event"
import type * as Spec from "@ratchet/kernel/Spec"
import * as Task from "@ratchet/kernel/Task"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Signed from "@ratchet/controller/Signed"
import * as Approval from "./Approval.js"
import * as Approvers from "./ApproverCommands.js"
import { type CommandSpec, type Env, invocation, leaseEpoch, ok, type Outcome, str, taskArg, writtenJson, writtenText } from "./Command.js"
import type { Parsed } from "./Args.js"
import * as Hook from "./Hook.js"
import type * as HookSettings from "./HookSettings.js"
import * as Render from "./Render.js"
import * as RunnerProcess from "./RunnerProcess.js"
import * as Store from "./Store.js"
import * as Terminal from "./Terminal.js"
import * as VerifyRender from "./VerifyRender.js"

export type { CommandSpec, Env, Outcome } from "./Command.js"

/**
 * The hosts' sandbox warnings for the project in `cwd` (SandboxStatus, loaded on demand). A check
 * that cannot run is itself a warning: `status` never fails for it.
 */
const sandboxWarnings = (cwd: string): Effect.Effect<ReadonlyArray<HostSandbox.Warning>> =>
  Effect.flatMap(Workspace.make.locate(cwd), (project) =>
    Effect.flatMap(Effect.promise(() => import("./SandboxStatus.js")), (module) => module.warnings(project.root))).pipe(
      Effect.catchAllCause((cause) =>
        Effect.succeed([{
          host: "ratchet",
          file: cwd,
          missing: "a check of the hosts' sandboxes",
          detail: `the check could not run (${(Cause.squash(cause) instanceof Error ? (Cause.squash(cause) as Error).message : String(Cause.squash(cause))).slice(0, 200)}); the task state above is unaffected.`,
          fix: "Run ratchet status again; report it if it persists."
        }]))
    )

/** One sandbox warning, for a person: the host and what is missing, why, and the fix. */
const warningText = (warning: HostSandbox.Warning, style: Render.Style): string =>
  `${style.yellow("warning")}: ${warning.host}: ${Render.visible(warning.missing)} missing in ${Render.visible(warning.file)}\n  ${Render.visible(warning.detail)}\n  fix: ${Render.visible(warning.fix)}`

/** What `hooks install|uninstall` did, for a person. */
const hooksText = (action: "install" | "uninstall", change: HookSettings.Change, style: Render.Style): string => {
  const lines = [
    change.hooksChanged
      ? `${action === "install" ? "Installed" : "Removed"} Ratchet's hooks ${action === "install" ? "in" : "from"} ${change.file} (${change.entries} of ours now).`
      : `${change.file} already ${action === "install" ? "has Ratchet's hooks" : "has none of Ratchet's hooks"}${change.changed ? "" : "; nothing changed"}.`
  ]
  if (change.sandbox.changed) {
    lines.push(action === "install"
      ? `Set ${change.host === "codex" ? "Codex's workspace-write sandbox" : "Claude Code's sandbox"} in ${change.sandbox.file} so the agent's commands cannot write Ratchet's store${change.host === "codex" ? " or the approval key" : ", the approval key or .ratchet/"}.`
      : `Removed the sandbox settings Ratchet had set in ${change.sandbox.file}.`)
  }
  for (const note of change.sandbox.notes) lines.push(`${style.yellow("note")}: ${note}`)
  if (action === "install" && change.changed) {
    lines.push(`The host reads them when a session starts; /hooks shows the hooks${change.host === "codex" ? " (Codex asks you to review new hooks there before it runs them, and reads .codex/ only in a trusted project)" : ", /sandbox the sandbox"}.`)
  }
  return lines.join("\n")
}


const controller = Controller.Controller

/** `--ac AC-001,AC-002` as ids, trimmed; an `--ac` that names none is an error, not "all of them". */
const acList = (parsed: Parsed): Effect.Effect<ReadonlyArray<string>, ControllerError.InvalidRequest> => {
  const raw = parsed.options["ac"]
  if (typeof raw !== "string") return Effect.succeed([])
  const ids = raw.split(",").map((id) => id.trim()).filter((id) => id !== "")
  return ids.length > 0
    ? Effect.succeed(ids)
    : Effect.fail(
      new ControllerError.InvalidRequest({
        field: "--ac",
        reason: `${JSON.stringify(raw.slice(0, 40))} names no criterion.`,
        fix: "Name criteria by id, comma-separated (--ac AC-001,AC-002), or leave --ac out for all of them."
      })
    )
}

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

/** The host adapters `ratchet hook <host>` answers for. */
const adapters: Readonly<Record<string, HostAdapter.HostAdapter>> = { [ClaudeCode.name]: ClaudeCode.adapter, [Codex.name]: Codex.adapter }

/**
 * Every command, in the order `ratchet --help` lists them.
 *
 * @since 0.1.0
 * @category commands
 */
export const commands: ReadonlyArray<CommandSpec> = [
  {
    name: "init",
    usage: "ratchet init [--name <text>]",
    summary: "Make this checkout a Ratchet project and open the runtime store",
    description:
      "Creates .ratchet/project.json at the top of the git work tree (commit it: its stable projectId is shared by every clone) and this checkout's workspace id, kept in the git directory (a clone or a git worktree is a new workspace, a renamed folder is not). Opens the runtime store ($RATCHET_HOME/ratchet.db, or PostgreSQL when RATCHET_DATABASE_URL is set) and applies its migrations. Idempotent: an existing project file is never rewritten.",
    positionals: [],
    options: { name: { type: "string", valueName: "<text>", description: "The project's display name (default: the directory name)." } },
    examples: ["ratchet init", "ratchet init --name \"Payments service\""],
    needs: "standalone",
    // Run by the entry point, which owns the store wiring.
    run: () => Effect.die(new Error("init is run by the entry point"))
  },
  {
    name: "task create",
    usage: "ratchet task create --goal <text> [--slug <slug>]",
    summary: "Create a task and begin its interview",
    description:
      "Creates a task (INITIALIZING), runs the setup check and moves it to INTERVIEWING in one transaction. Prints the new task id.",
    positionals: [],
    options: {
      goal: { type: "string", required: true, valueName: "<text>", description: "What the task must achieve, in one sentence." },
      slug: { type: "string", valueName: "<slug>", description: "A short name for the task's directory under .ratchet/tasks/: 1 to 40 lowercase letters, digits and dashes (default: made from the goal)." }
    },
    examples: ["ratchet task create --goal \"Make the flaky date test deterministic\""],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(
          c.createTask({ goal: str(parsed, "goal"), slug: parsed.options["slug"] as string | undefined }, { actor: env.actor }),
          (written) => ok(writtenJson(written), writtenText(written, env, `Created task ${written.task.taskId}`))
        ))
  },
  {
    name: "task list",
    usage: "ratchet task list",
    summary: "List this project's tasks, newest first",
    description: "One line per task: id, state, whether a writer holds its lease, goal.",
    positionals: [],
    options: {},
    examples: ["ratchet task list", "ratchet task list --json"],
    needs: "project",
    run: (_parsed, env) =>
      Effect.flatMap(controller, (c) => Effect.map(c.listTasks, (views) => ok({ tasks: views }, Render.taskList(views, env.style))))
  },
  {
    name: "status",
    usage: "ratchet status [<task>]",
    summary: "Show a task's state, revisions, digests, lease, blockers and allowed actions",
    description:
      "Without a task, lists the project's tasks. The allowed lines are the commands the task's state accepts now. Reads the stored read models: as fast at a million events as at ten. Warns (warnings in --json: host, file, missing, detail, fix) when a host whose Ratchet hooks are installed would run the agent without its own sandbox keeping Ratchet's store, the approval key and .ratchet/ out of reach: Claude Code's sandbox off or its denyWrite/denyRead and permissions.deny rules missing, Codex's sandbox_mode unset or danger-full-access, or the store inside a root workspace-write lets commands write (see docs/guides/security.md).",
    positionals: [{ ...taskArg, required: false }],
    options: {},
    examples: ["ratchet status t-3f9a1c2b", "ratchet status t-3f9a1c2b --json", "ratchet status --json"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.zipWith(
          parsed.positionals["task"] === undefined
            ? Effect.map(c.listTasks, (views) => ({ json: { tasks: views } as Record<string, unknown>, text: Render.taskList(views, env.style) }))
            : Effect.map(c.status(str(parsed, "task")), (view) => ({ json: { task: view } as Record<string, unknown>, text: Render.task(view, env.style) })),
          // The store's approvers against the committed file: while they disagree, no gate passes.
          Effect.zip(sandboxWarnings(env.cwd), Effect.map(c.approvers.list, (listing) => listing.length > 0 ? listing.warning : null)),
          (shown, [warnings, approvers]) =>
            ok({ ...shown.json, warnings, ...(approvers === null ? {} : { approvers }) }, [
              shown.text,
              ...warnings.map((warning) => warningText(warning, env.style)),
              ...(approvers === null ? [] : [env.style.yellow(`warning: ${Render.visible(approvers)}`)])
            ].join("\n")),
          { concurrent: true }
        ))
  },
  {
    name: "brief ask",
    usage: "ratchet brief <task> ask <text> [--blocking]",
    summary: "Ask a question of the brief",
    description: "Records a question (Q-1, Q-2, …). A blocking question must be answered before the brief can close.",
    positionals: [taskArg, { name: "text", description: "The question", required: true }],
    options: { blocking: { type: "boolean", description: "The brief cannot close until this is answered." }, ...leaseEpoch },
    examples: ["ratchet brief t-3f9a1c2b ask \"Which timezone do the tests run in?\" --blocking"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(
          c.ask(str(parsed, "task"), { text: str(parsed, "text"), blocking: parsed.options["blocking"] === true }, invocation(parsed, env)),
          (written) => ok(writtenJson(written, { questionId: written.questionId }), writtenText(written, env, `Asked ${written.questionId}`))
        ))
  },
  {
    name: "brief answer",
    usage: "ratchet brief <task> answer <questionId> <text> --source user|code|research",
    summary: "Answer a question of the brief",
    description: "Records the answer and where it came from: user (a person said so), code (read in the repository) or research (found elsewhere). Each question, answer and restatement is a new revision of the brief.",
    positionals: [taskArg, { name: "questionId", description: "The question, e.g. Q-1", required: true }, {
      name: "text",
      description: "The answer",
      required: true
    }],
    options: {
      source: { type: "string", required: true, choices: ["user", "code", "research"], valueName: "user|code|research", description: "Where the answer comes from: user, code or research." },
      ...leaseEpoch
    },
    examples: ["ratchet brief t-3f9a1c2b answer Q-1 \"UTC, set by the test runner\" --source user"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(
          c.answer(
            str(parsed, "task"),
            { questionId: str(parsed, "questionId"), text: str(parsed, "text"), source: str(parsed, "source") as "user" | "code" | "research" },
            invocation(parsed, env)
          ),
          (written) => ok(writtenJson(written), writtenText(written, env, `Answered ${str(parsed, "questionId")}`))
        ))
  },
  {
    name: "brief restate",
    usage: "ratchet brief <task> restate <sentence>",
    summary: "Restate the goal in one sentence",
    description: "Records the restatement the user then approves (ratchet approve <task> restatement). A new restatement needs a new approval.",
    positionals: [taskArg, { name: "sentence", description: "The goal restated in one sentence", required: true }],
    options: { ...leaseEpoch },
    examples: ["ratchet brief t-3f9a1c2b restate \"Freeze the clock in the date test so it passes in any timezone.\""],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(
          c.restate(str(parsed, "task"), str(parsed, "sentence"), invocation(parsed, env)),
          (written) => ok(writtenJson(written), writtenText(written, env, "Restated"))
        ))
  },
  {
    name: "brief close",
    usage: "ratchet brief <task> close",
    summary: "Close the brief (runs the closure audit)",
    description:
      "Closes the brief when no blocking question is open and the restatement is approved by the user; otherwise HOLD (exit 3) listing what is open. The task stays INTERVIEWING until its spec is proposed.",
    positionals: [taskArg],
    options: { ...leaseEpoch },
    examples: ["ratchet brief t-3f9a1c2b close"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(c.closeBrief(str(parsed, "task"), invocation(parsed, env)), (written) =>
          ok(writtenJson(written), writtenText(written, env, "Brief closed")))
      )
  },
  {
    name: "spec",
    usage: "ratchet spec <task> --file <spec.md>",
    summary: "Propose the spec (the contract) from a Markdown file with YAML front matter",
    description:
      "The front matter holds the semantic fields (goal, nonGoals, constraints, decisions, context, acceptanceCriteria, execution), decoded strictly: unknown keys are errors. The body is editorial: changing only the body keeps the digest and changes nothing downstream. A semantic change voids the spec approval and marks the plan stale. Nothing in the file counts as approval. ratchet digest <spec.md> prints the digest without proposing it.",
    positionals: [taskArg],
    options: { file: { type: "string", required: true, valueName: "<spec.md>", description: "The spec file (at most 1 MiB, UTF-8)." }, ...leaseEpoch },
    examples: ["ratchet spec t-3f9a1c2b --file spec.md"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(c.proposeSpec(str(parsed, "task"), resolve(env, str(parsed, "file")), invocation(parsed, env)), (written) => {
          const headline = written.events.length === 0
            ? `Spec unchanged (digest ${written.digest}): its semantic fields are the same, so nothing downstream changes`
            : `Spec proposed: ${written.digest}${written.changed.length === 0 ? "" : ` (changed: ${written.changed.join(", ")})`}`
          const stale = written.events.includes("PlanMarkedStale")
            ? "\nThe spec approval is void and the plan is stale: approve the new spec, then propose and approve a plan for it."
            : ""
          return ok(writtenJson(written, { digest: written.digest, changed: written.changed }), writtenText(written, env, headline) + stale)
        }))
  },
  {
    name: "plan",
    usage: "ratchet plan <task> --file <plan.yaml>",
    summary: "Propose the plan from a YAML file",
    description:
      "A YAML mapping: steps, each { id, title, acRefs, run: { command } | manual: { instructions }, needs, timeoutSeconds, idempotent, probe }, and optional stepStates. The plan is bound to the current spec digest (leave specDigest out of the file). Every required acceptance criterion must be in some step's acRefs; an unknown criterion, step or state is an error naming it. Needs a preflight of the current spec that found nothing wrong, else HOLD (exit 3). A step's title is editorial: retitling keeps the digest.",
    positionals: [taskArg],
    options: { file: { type: "string", required: true, valueName: "<plan.yaml>", description: "The plan file (at most 1 MiB, UTF-8)." }, ...leaseEpoch },
    examples: ["ratchet plan t-3f9a1c2b --file plan.yaml"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(c.proposePlan(str(parsed, "task"), resolve(env, str(parsed, "file")), invocation(parsed, env)), (written) =>
          ok(
            writtenJson(written, { digest: written.digest }),
            writtenText(written, env, written.events.length === 0 ? `Plan unchanged (${written.digest})` : `Plan proposed: ${written.digest}`)
          ))
      )
  },
  {
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
          return ok(writtenJson(written, { subject, digest }), writtenText(written, env, `Approved the ${subject} ${digest}`))
        }))
  },
  ...Approvers.commands,
  {
    name: "preflight",
    usage: "ratchet preflight <task>",
    summary: "Inspect the repository read-only and record what is there",
    description:
      "After SPEC_APPROVED: records git HEAD, the dirty paths, whether the spec's relevantPaths exist and whether its scopes name paths that exist. A missing path or an invalid scope is recorded as a wrong assumption: proposing a plan then HOLDs (exit 3) until the contract is corrected (ratchet reopen) or a new preflight finds nothing wrong.",
    positionals: [taskArg],
    options: { ...leaseEpoch },
    examples: ["ratchet preflight t-3f9a1c2b"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(c.preflight(str(parsed, "task"), invocation(parsed, env)), (written) => {
          const o = written.observation
          const facts = [
            `head ${o.head ?? "(no commit)"}; ${o.dirtyPaths.length} dirty path(s)`,
            ...o.missingPaths.map((p) => `missing: ${p}`),
            ...o.invalidScopes.map((p) => `invalid scope: ${p}`)
          ].join("\n")
          return ok(writtenJson(written, { observation: o }), `${writtenText(written, env, "Preflight recorded")}\n${facts}`)
        }))
  },
  {
    name: "run",
    usage: "ratchet run <task> [--takeover] [--detach] | ratchet run --any [--takeover-expired]",
    summary: "Execute the approved plan's steps (PLAN_APPROVED → RUNNING → VERIFYING)",
    description: [
      "Starts the runner, a process that lives only while the run has work: it passes the run-start gate (current contract and plan digests, scope, the writer lease taken by the runner), then runs each step in `needs` order as attempts. A command step's side effect is an intent recorded before the child starts and resolved after it exits (exit code, duration, output as blobs, the paths it changed); a failure gets a successor attempt within the retry budget, a repeated failure, no progress or a spent budget BLOCKS; a path changed outside the scope BLOCKS naming it.",
      "It stops when every step is done (VERIFYING), at a manual step (finish it with ratchet step done), or when the task blocks, pauses or is cancelled. At every start it recovers what a dead runner left open (docs/guides/recovery.md). Progress goes to the terminal (step n of m, attempt, live output); with --json, NDJSON events and a final result line.",
      "Exit 0 when it stopped as planned (VERIFYING, a manual step, a pause or a cancel), 3 when the task is BLOCKED, 4 when another writer holds the lease. Ctrl-C pauses after the current step; a second Ctrl-C stops at once."
    ].join(" "),
    positionals: [{ name: "task", description: "The task id (omit with --any)", required: false }],
    options: {
      any: { type: "boolean", description: "Take this project's runnable tasks (PLAN_APPROVED or RUNNING, lease free) one after another until none is left." },
      takeover: { type: "boolean", description: "Take the lease over from a dead runner (only strictly after its grace)." },
      "takeover-expired": { type: "boolean", description: "With --any: also take tasks whose runner's lease expired, waiting for live runners' leases to expire or their work to end." },
      detach: { type: "boolean", description: "Start the runner in its own session with its log under $RATCHET_HOME/logs/ and return at once." }
    },
    examples: ["ratchet run t-3f9a1c2b", "ratchet run t-3f9a1c2b --detach && ratchet status t-3f9a1c2b", "ratchet run --any --takeover-expired --json"],
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
        if (typeof task === "string") {
          // Refused here rather than in a detached runner's log, where nobody would see it.
          const view = yield* Effect.flatMap(controller, (c) => c.status(task))
          if (view.state !== "PLAN_APPROVED" && view.state !== "RUNNING") {
            return yield* new Task.Refused({
              code: view.terminal ? "terminal_state" : view.state === "PAUSED" ? "task_paused" : "forbidden_transition",
              command: "Run",
              state: view.state,
              reason: `a run executes a task that is PLAN_APPROVED or RUNNING; this one is ${view.state}.`,
              action: view.next
            })
          }
        }
        const args = [
          ...(typeof task === "string" ? [task] : ["--any"]),
          ...(parsed.options["takeover"] === true ? ["--takeover"] : []),
          ...(parsed.options["takeover-expired"] === true ? ["--takeover-expired"] : []),
          "-C",
          env.cwd
        ]
        if (parsed.options["detach"] === true) {
          const started = yield* RunnerProcess.detached(args, typeof task === "string" ? task : "any")
          return ok(
            { detached: true, pid: started.pid, log: started.log },
            `Runner started (pid ${started.pid}); its log: ${started.log}\nWatch it with: ratchet status ${typeof task === "string" ? task : "<task>"}`
          )
        }
        const code = yield* RunnerProcess.foreground(env.json ? [...args, "--json"] : args)
        return { exit: code, json: null, text: null } satisfies Outcome
      })
  },
  {
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
          const exit = result.notRecorded !== null ? 4 : result.conclusion.outcome === "APPROVED" ? 0 : 3
          return {
            exit,
            json: {
              taskId: result.taskId,
              runId: result.runId,
              branch: result.branch,
              snapshotLsn: result.snapshotLsn,
              outcome: result.conclusion.outcome,
              signed: signer !== undefined,
              recorded: result.notRecorded === null,
              recordedLsn: result.recordedLsn,
              notRecorded: result.notRecorded,
              state: result.state,
              gate: result.conclusion.gate,
              blocker: result.conclusion.blocker,
              stepsToRevise: result.conclusion.stepsToRevise,
              workers: result.workers,
              criteria: result.results.map((r) => ({
                acId: r.acId,
                required: r.required,
                verdict: r.verdict.verdict,
                evidenceRefs: r.verdict.evidenceRefs,
                verifier: r.verdict.verifier,
                judgements: r.judgements.map((j) => ({ verifier: j.verifier, verdict: j.verdict, reason: j.reason }))
              })),
              warnings: result.warnings
            },
            text: VerifyRender.verified(result, env.style)
          } satisfies Outcome
        }))
  },
  {
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
          (result) => ok({ ...result, state: "COMPLETED" }, VerifyRender.completed(result, env.style))
        ))
  },
  {
    name: "evidence",
    usage: "ratchet evidence <task> [--ac <ids>] [--show-output]",
    summary: "Show the verdicts of the current verification episode and their evidence",
    description:
      "For each acceptance criterion: the verdict that counts (this episode, the current spec digest, an independent verifier) and every verdict recorded, each with its evidence records: the command and its exit, the tree it ran against, JUnit cases, artifact hashes, a person's observation. Output bodies (stdout, stderr, reports) stay in the blob store unless --show-output loads them (the first 64 KiB of each). Writes nothing.",
    positionals: [taskArg],
    options: {
      ac: { type: "string", valueName: "<ids>", description: "Only these criteria, comma-separated." },
      "show-output": { type: "boolean", description: "Load and print the output bodies the evidence refers to." }
    },
    examples: ["ratchet evidence t-3f9a1c2b", "ratchet evidence t-3f9a1c2b --ac AC-001 --show-output", "ratchet evidence t-3f9a1c2b --json | jq '.criteria[].counted.verdict'"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.gen(function*() {
          const shown = yield* Verify.evidenceOf(str(parsed, "task"), yield* acList(parsed))
          const showOutput = parsed.options["show-output"] === true
          const bodies: Record<string, { readonly text: string; readonly size: number; readonly truncated: boolean }> = {}
          if (showOutput) {
            for (const criterion of shown.criteria) {
              for (const { evidence } of criterion.verdicts) {
                for (const { record } of evidence) {
                  for (const body of VerifyRender.bodiesOf(record)) {
                    if (bodies[body.ref] === undefined) bodies[body.ref] = yield* Verify.body(body.ref, 64 * 1024)
                  }
                }
              }
            }
          }
          const lines = [
            `${shown.taskId}: ${env.style.bold(shown.state)} — run ${shown.runId}, episode at LSN ${shown.snapshotLsn}, spec ${shown.specDigest.slice(0, 19)}`
          ]
          for (const criterion of shown.criteria) {
            lines.push(`${criterion.acId}${criterion.required ? "" : " (optional)"}: ${criterion.counted?.verdict ?? "not verified"} — ${Render.visible(criterion.outcome)}`)
            for (const { verdict, evidence } of criterion.verdicts) {
              lines.push(`  ${verdict.verdict} by ${verdict.verifier.kind}:${Render.visible(verdict.verifier.id)} at ${new Date(verdict.at).toISOString()}${verdict === criterion.counted ? " (counts)" : ""}`)
              for (const { ref, record } of evidence) {
                lines.push(VerifyRender.evidence(ref, record, env.style))
                for (const body of showOutput ? VerifyRender.bodiesOf(record) : []) {
                  const loaded = bodies[body.ref]
                  if (loaded === undefined) continue
                  lines.push(`      --- ${body.label} (${loaded.size} bytes${loaded.truncated ? ", first 64 KiB" : ""}) ---`)
                  lines.push(...Render.visible(loaded.text).trimEnd().split("\n").map((line) => `      ${line}`))
                }
              }
            }
          }
          return ok({ ...shown, ...(showOutput ? { bodies } : {}) }, lines.join("\n"))
        }).pipe(Effect.provide(Store.verification(c.project))))
  },
  {
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
              ? ok(writtenJson(written), writtenText(written, env, `Step ${str(parsed, "step")} done`))
              : {
                exit: 3,
                json: writtenJson(written, { blocker }),
                text: writtenText(
                  written,
                  env,
                  `Step ${str(parsed, "step")} done, and the task is BLOCKED (${blocker.category}):\n${Render.visible(blocker.requiredAction)}`
                )
              }
          }
        ))
  },
  {
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
          ok(writtenJson(written), writtenText(written, env, "Paused"))).pipe(
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
                    const json = { taskId: stopped.task.taskId, state: stopped.task.state, requested: true, acknowledged: stopped.acknowledged, task: stopped.task }
                    const line = `${stopped.task.taskId}: ${env.style.bold(stopped.task.state)}`
                    if (stopped.acknowledged) return Effect.succeed(ok(json, `Paused by its runner\n${line}\nnext: ${Render.visible(stopped.task.next)}`))
                    if (stopped.task.lease.status !== "free") {
                      return Effect.succeed(ok(json, `Pause requested: the runner pauses after the current step.\n${line}`))
                    }
                    // The runner ended its run first (a manual step, a block, every step done).
                    return stopped.task.state === "RUNNING"
                      ? Effect.map(c.pause(str(parsed, "task"), parsed.options["reason"] as string | undefined, invocation(parsed, env)), (written) =>
                        ok(writtenJson(written), writtenText(written, env, "Paused")))
                      : Effect.succeed(ok(json, `The run stopped before it could pause: the task is ${stopped.task.state}.\nnext: ${Render.visible(stopped.task.next)}`))
                  }
                )
            )
          )
      )
  },
  {
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
            return Effect.succeed(ok(writtenJson(written), writtenText(written, env, written.task.state === "BLOCKED" ? "Resumed, then blocked: the checkout changed while paused" : "Resumed")))
          }
          // The run continues from its recorded next step, in the runner, on this terminal.
          if (!env.json) process.stderr.write(`${writtenText(written, env, "Resumed")}\n`)
          const args = [written.task.taskId, "-C", env.cwd, ...(env.json ? ["--json"] : [])]
          return Effect.map(RunnerProcess.foreground(args), (code): Outcome => ({ exit: code, json: null, text: null }))
        }))
  },
  {
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
          ok(writtenJson(written), writtenText(written, env, "Cancelled (terminal)"))).pipe(
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
                        { taskId: stopped.task.taskId, state: stopped.task.state, requested: true, acknowledged: true, task: stopped.task },
                        `Cancelled by its runner (terminal)\n${stopped.task.taskId}: ${env.style.bold(stopped.task.state)}\nnext: ${Render.visible(stopped.task.next)}`
                      ))
                      // The runner ended its run first and let the lease go: cancel directly.
                      : Effect.map(c.cancel(str(parsed, "task"), str(parsed, "reason"), invocation(parsed, env)), (written) =>
                        ok(writtenJson(written), writtenText(written, env, "Cancelled (terminal)")))
                )
            )
          )
      )
  },
  {
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
          return ok(writtenJson(written), writtenText(written, env, "Reopened"))
        }))
  },
  {
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
            return ok(writtenJson(written, { settled: { stepId: step, outcome } }), writtenText(written, env, `Step ${step} settled as ${outcome}`))
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
          return ok(writtenJson(written), writtenText(written, env, "Unblocked"))
        }))
  },
  {
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
            writtenJson(written, { branch: written.branch, parent: written.parent, atLsn: written.atLsn }),
            `${writtenText(written, env, `Rewound to LSN ${written.atLsn}: now on branch ${written.branch} (forked from ${written.parent})`)}\nthe old history: ratchet log ${written.task.taskId} --branch ${written.parent}`
          )))
  },
  {
    name: "gate",
    usage: "ratchet gate <task> [--to <STATE>]",
    summary: "Explain the gate for the next transition (writes nothing)",
    description:
      "Evaluates the gate between the task's state and --to (default: the next state on the lifecycle) as this caller would meet it, and prints CLEAR or HOLD with every reason and required action; writes nothing. An approval gate is evaluated without a receipt; the run-start gate counts the lease as held only when --lease-epoch presents the held epoch. Exit 0 for CLEAR (or a transition no gate guards), 3 for HOLD, 2 when the lifecycle has no such transition, so `ratchet gate T --to RUNNING && …` only goes on when it may.",
    positionals: [taskArg],
    options: {
      to: { type: "string", choices: Task.states, valueName: "<STATE>", description: "The target state, e.g. RUNNING (default: the next one on the lifecycle)." },
      ...leaseEpoch
    },
    examples: ["ratchet gate t-3f9a1c2b", "ratchet gate t-3f9a1c2b --to RUNNING --json"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.map(
          c.gate(str(parsed, "task"), parsed.options["to"] as Task.State | undefined, invocation(parsed, env)),
          (explained): Outcome => ({
            exit: explained.decision === "HOLD" ? 3 : explained.decision === "FORBIDDEN" ? 2 : 0,
            json: { ...explained },
            text: Render.explanation(explained, env.style)
          })
        ))
  },
  {
    name: "log",
    usage: "ratchet log <task> [--branch <name>] [--branches]",
    summary: "Print the task's event history (on its current branch, or another)",
    description:
      "One line per event: LSN, time, type, actor, lease epoch. With --json: NDJSON, one object per event (lsn, at, type, actor, epoch, event). A rewound task lives on the branch its rewind forked; the older branches stay readable with --branch, and --branches lists them (name, parent, fork LSN, which one is current).",
    positionals: [taskArg],
    options: {
      branch: { type: "string", valueName: "<name>", description: "Read this branch (default: the task's current one)." },
      branches: { type: "boolean", description: "List the task's branches instead of events." }
    },
    examples: ["ratchet log t-3f9a1c2b", "ratchet log t-3f9a1c2b --json | jq .type", "ratchet log t-3f9a1c2b --branches", "ratchet log t-3f9a1c2b --branch main"],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c) =>
        Effect.gen(function*() {
          if (parsed.options["branches"] === true) {
            const listed = yield* c.branches(str(parsed, "task"))
            const rows = listed.branches.map((b) => ({ ...b, current: b.branch === listed.current }))
            return ok(
              { taskId: str(parsed, "task"), current: listed.current, branches: rows },
              rows.map((b) => `${b.current ? "*" : " "} ${Render.visible(b.branch)}${b.parent === null ? "" : `  forked from ${Render.visible(b.parent)} at LSN ${b.forkLsn}`}  ${new Date(b.createdAt).toISOString()}`).join("\n")
            )
          }
          const branch = parsed.options["branch"]
          if (typeof branch === "string") {
            const listed = yield* c.branches(str(parsed, "task"))
            if (!listed.branches.some((b) => b.branch === branch)) {
              return yield* new ControllerError.InvalidRequest({
                field: "--branch",
                reason: `task ${str(parsed, "task")} has no branch ${JSON.stringify(branch.slice(0, 80))} (it has ${listed.branches.map((b) => b.branch).join(", ")}).`,
                fix: `List them with: ratchet log ${str(parsed, "task")} --branches`
              })
            }
          }
          const events = yield* c.log(str(parsed, "task"), typeof branch === "string" ? branch : undefined)
          yield* Stream.runForEachChunk(events, (chunk) =>
            Effect.sync(() => {
              const lines = Chunk.toReadonlyArray(chunk).map((stored) =>
                env.json ? JSON.stringify(Render.logRecord(stored, KernelEvent.encode)) : Render.logLine(stored)
              )
              env.write(lines.join("\n") + "\n")
            }))
          return { exit: 0, json: null, text: null } satisfies Outcome
        }))
  },
  ...(["show", "acquire", "heartbeat", "release", "takeover"] as const).map((verb): CommandSpec => ({
    name: `lease ${verb}`,
    usage: verb === "heartbeat" || verb === "release"
      ? `ratchet lease ${verb} <task> --epoch <n>`
      : verb === "show"
      ? "ratchet lease show <task>"
      : `ratchet lease ${verb} <task> [--host <name>] [--session <ref>]`,
    summary: {
      show: "Show who holds the task's writer lease, its epoch and deadlines",
      acquire: "Take the task's writer lease (fails while another writer holds it, even expired)",
      heartbeat: "Prove the holder of the lease at --epoch is alive",
      release: "Release the lease held at --epoch",
      takeover: "Take the lease over, only strictly after its grace deadline"
    }[verb],
    description: {
      show: "Read-only. An expired lease is still held: only an explicit takeover moves it.",
      acquire:
        "Prints the epoch: pass it as --lease-epoch to every write under the lease, and run ratchet lease heartbeat at the printed interval so the grace deadline never passes. While the lease is held, a write without --lease-epoch is refused (exit 4), yours included. A lease that is held, even expired, cannot be acquired: the refusal names the holder (exit 4); see ratchet lease takeover.",
      heartbeat: "Moves the grace deadline forward. A lease that was taken over is reported lost (exit 4).",
      release: "Only the held epoch releases the lease.",
      takeover:
        "Allowed only strictly after the holder's grace deadline (last heartbeat + grace, by the store's clock) and after the last checkpoint is verified against the stream head. Bumps the epoch, so the old holder's late writes are rejected, and records who was displaced."
    }[verb],
    positionals: [taskArg],
    options: verb === "heartbeat" || verb === "release"
      ? { epoch: { type: "string", required: true, valueName: "<n>", integer: { min: 1, max: 2 ** 31 - 1 }, description: "The epoch you hold." } }
      : verb === "show"
      ? {}
      : {
        host: { type: "string", valueName: "<name>", description: "Who holds it: cli (default), runner, claude-code, codex, …" },
        session: { type: "string", valueName: "<ref>", description: "The host session's reference, if any." }
      },
    examples: verb === "heartbeat" || verb === "release" ? [`ratchet lease ${verb} t-3f9a1c2b --epoch 2`] : [`ratchet lease ${verb} t-3f9a1c2b`],
    needs: "project",
    run: (parsed, env) =>
      Effect.flatMap(controller, (c): Effect.Effect<Outcome, unknown> => {
        const taskId = str(parsed, "task")
        const identity: Controller.LeaseIdentity = {
          host: (parsed.options["host"] as string | undefined) ?? "cli",
          sessionRef: parsed.options["session"] as string | undefined,
          actor: env.actor
        }
        switch (verb) {
          case "show":
            return Effect.map(c.lease.show(taskId), (o) => ok({ lease: o }, `${taskId}: ${Render.lease(o, env.style)}`))
          case "acquire":
            return Effect.map(c.lease.acquire(taskId, identity), (lease) =>
              ok({ lease }, `Acquired the lease of ${taskId} at epoch ${lease.epoch}; write with --lease-epoch ${lease.epoch}, heartbeat every ${lease.heartbeatMs} ms (grace ${lease.graceMs} ms).`))
          case "heartbeat":
            return Effect.map(c.lease.heartbeat(taskId, parsed.options["epoch"] as number), (lease) =>
              ok({ lease }, `Heartbeat: ${taskId} epoch ${lease.epoch}, grace deadline ${new Date(lease.deadline).toISOString()}.`))
          case "release":
            return Effect.map(c.lease.release(taskId, parsed.options["epoch"] as number, env.actor), () =>
              ok({ released: true, taskId, epoch: parsed.options["epoch"] }, `Released the lease of ${taskId} (epoch ${String(parsed.options["epoch"])}).`))
          case "takeover":
            return Effect.map(c.lease.takeover(taskId, identity), (t) =>
              ok(
                { lease: t.lease, displaced: t.displaced, displacedEpoch: t.displacedEpoch, checkpoint: t.checkpoint },
                `Took over the lease of ${taskId}: epoch ${t.displacedEpoch} → ${t.lease.epoch}, displaced ${Controller.describeOwner(t.displaced)}.`
              ))
        }
      })
  })),
  {
    name: "stats",
    usage: "ratchet stats",
    summary: "Count attempts by state and open intents by age across the store (Indeterminate first)",
    description:
      "The figures an operator alerts on, read from the stored read models of every project in the store (not only this one's): attempts by state, Indeterminate first (an Indeterminate attempt waits for a person, so it is expected to stay near zero), and the open intents (Pending or Dispatched) by the age of their last change (<1m, 1m-1h, 1h-1d, >1d) with the ten oldest. Writes nothing.",
    positionals: [],
    options: {},
    examples: ["ratchet stats", "ratchet stats --json | jq '.attempts[0].count'"],
    needs: "project",
    run: () =>
      Effect.map(
        Stats.collect().pipe(Effect.provide(Store.store())),
        (stats) => ok({ scope: "store", ...stats }, Render.visible(Stats.text(stats, "every project in the store")))
      )
  },
  {
    name: "hook",
    usage: "ratchet hook <host>",
    summary: "Answer one hook call of an agent host (Claude Code, Codex) in the host's own protocol",
    description: [
      "Reads one hook payload on standard input and answers it the way the host expects (the host runs this; you rarely do). A tool call is judged by the guard against the task in progress in the project the session was started in: the one at or above the host's project directory (Claude Code's CLAUDE_PROJECT_DIR) or, without it, this command's working directory, never the payload's cwd; a call whose cwd is outside that project, or has control characters, is denied. The acts only a person may do (ratchet approve, approver, reopen, unblock, rewind, verify, lessons pin|reject|supersede, hooks) are denied in every state, however they are launched and wherever the command names them; Ratchet's runtime store and .ratchet/ are never written, or handed to a program, by a tool; a command Ratchet cannot read completely (code given to an interpreter, a shell reading a pipe, a computed program name, more than 64 KiB) is denied while a task is in progress and asked about otherwise; file writes (and shell commands that write) are denied unless the task is RUNNING, no other owner holds its lease and every path is inside the spec's allowedScope and outside its forbiddenScope; destructive commands (rm -rf, git reset --hard, git push --force) are asked about. A stop is blocked once while required criteria are unverified. Every other event passes.",
      "The task is RATCHET_TASK when set, else the project's only task that has not ended, else the only one with a run in progress; with several, writes are denied until RATCHET_TASK names one. Outside a Ratchet project only person-only acts and writes to the store are denied, and commands Ratchet cannot read are asked about.",
      "When the payload cannot be read or Ratchet cannot decide, a tool call is blocked (exit 2, the reason on standard error) and any other event goes on with a one-line warning. While a manual step awaits its worker, the session is that worker: it takes the task's writer lease (another session observes, its writes denied), each file-changing call it is allowed is recorded as an intent of the step's attempt before it runs and resolved when it ends, what its events tell of its turn (a prompt, a call used, failed or denied, a stop) is recorded in the attempt when it changes a flag, and SessionEnd releases the lease (docs/guides/claude-code.md). Nothing else is written, and nothing when the payload does not decode. --json changes nothing: the answer is always the host's protocol. Hosts: claude-code, codex (Codex cannot ask, so an ask is a denial saying what the user would have been asked)."
    ].join(" "),
    positionals: [{ name: "host", description: "The host whose payload this is: claude-code or codex", required: true }],
    options: {},
    examples: ["ratchet hook claude-code", "ratchet hook codex"],
    needs: "standalone",
    run: (parsed, env) =>
      Effect.gen(function*() {
        const host = str(parsed, "host")
        const adapter = adapters[host]
        if (adapter === undefined) {
          return yield* new ControllerError.InvalidRequest({ field: "host", reason: `${JSON.stringify(host.slice(0, 40))} is not a host Ratchet has an adapter for.`, fix: `Use one of: ${Object.keys(adapters).join(", ")}.` })
        }
        const raw = yield* Effect.promise(() => Hook.readStdin(HostAdapter.maxPayloadBytes).catch(() => ""))
        const reply = yield* Hook.answer(adapter, raw, { directory: env.cwd, environment: process.env })
        if (reply.stdout !== "") process.stdout.write(reply.stdout)
        if (reply.stderr !== "") process.stderr.write(reply.stderr)
        return { exit: reply.exitCode, json: null, text: null } satisfies Outcome
      })
  },
  ...(["install", "uninstall"] as const).map((action): CommandSpec => ({
    name: `hooks ${action}`,
    usage: `ratchet hooks ${action} <host> [--scope project|user]${action === "install" ? " [--command <text>]" : ""}`,
    summary: action === "install"
      ? "Register Ratchet's hooks in a host's settings and set the host's sandbox (.claude/settings.json, .codex/hooks.json and config.toml)"
      : "Remove Ratchet's hooks and sandbox settings from a host's settings, leaving everything else",
    description: action === "install"
      ? "Merges Ratchet's hook entries (ratchet hook <host>, 10 s timeout) into the host's settings: Claude Code's .claude/settings.json (SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure, Stop, SubagentStop, SessionEnd) or Codex's .codex/hooks.json (the same but PostToolUseFailure; SessionEnd within Codex's 3 s cap). --scope project (the default) writes the file beside .ratchet/; --scope user writes the user's (~/.claude/settings.json or CLAUDE_CONFIG_DIR; ~/.codex/hooks.json or CODEX_HOME). Every other hook and setting is kept; running it again changes nothing; a changed --command replaces our entries. A file that is not JSON, or whose hooks are not the host's shape, is refused and left as it was. The host reads its settings when a session starts (/hooks shows them; Codex asks you to review new hooks there before it runs them). It also sets the host's own sandbox so that the agent's commands cannot write Ratchet's store ($RATCHET_HOME), the approval key or the project's .ratchet/ (ADR 0017, docs/guides/security.md): Claude Code: sandbox.enabled true, sandbox.allowUnsandboxedCommands false, sandbox.filesystem.denyWrite and denyRead, and Edit(…)/Read(…) rules in permissions.deny, recorded in ratchet-sandbox.json beside the settings; Codex: sandbox_mode = \"workspace-write\" in config.toml beside hooks.json (unless it is read-only) and, when the store or key is under /tmp or $TMPDIR, exclude_slash_tmp or exclude_tmpdir_env_var in [sandbox_workspace_write], each line marked with a comment. What merging cannot do (a writable_roots entry holding the store) is printed as a note. A config.toml that is not TOML is refused untouched."
      : "Removes exactly the hook entries that run ratchet hook <host> from the host's settings file of --scope (project by default, or user), keeping every other hook and setting; groups and events left empty are removed. Removes the sandbox settings install added too: Claude Code's from its ratchet-sandbox.json record (booleans put back as they were, unless changed since), Codex's config.toml lines marked as Ratchet's (replaced values restored). Without any of ours it changes nothing.",
    positionals: [{ name: "host", description: "The host: claude-code or codex", required: true }],
    options: {
      scope: { type: "string", valueName: "<scope>", choices: ["project", "user"], description: "project (the repository's settings file, default) or user (the user's)." },
      ...(action === "install" ? { command: { type: "string", valueName: "<text>", description: "The command the host runs (default: ratchet hook <host>); use an absolute path when ratchet is not on the host's PATH." } } : {})
    },
    examples: action === "install"
      ? ["ratchet hooks install claude-code", "ratchet hooks install codex", "ratchet hooks install claude-code --scope user", "ratchet hooks install claude-code --command \"/opt/ratchet/bin/ratchet hook claude-code\""]
      : ["ratchet hooks uninstall claude-code", "ratchet hooks uninstall claude-code --scope user --json"],
    needs: "standalone",
    run: (parsed, env) =>
      Effect.map(
        // Loaded on demand: the TOML reader stays out of every other command's start-up.
        Effect.flatMap(Effect.promise(() => import("./HookSettings.js")), (settings) => settings.apply({
          action,
          host: str(parsed, "host"),
          scope: parsed.options["scope"] === "user" ? "user" : "project",
          command: typeof parsed.options["command"] === "string" ? parsed.options["command"] : undefined,
          cwd: env.cwd
        })),
        (change) => ok({ ...change }, hooksText(action, change, env.style))
      )
  })),
  {
    name: "mcp",
    usage: "ratchet mcp",
    summary: "Serve this project to an agent as an MCP server over standard input and output",
    description: [
      "A Model Context Protocol server for the project in the current directory (or -C): the agent's host starts it (claude mcp add ratchet -- ratchet mcp; Codex: [mcp_servers.ratchet] in ~/.codex/config.toml) and talks to it on standard input and output until it closes them. Its tools read a task (task_list, task_status, task_gate, task_log a page at a time, task_evidence, run_check), create one (task_create), ask and answer the brief's questions (brief_ask, brief_answer), propose the spec or the plan from a file in the workspace (spec_propose, plan_propose) and start an approved plan's run in the background (run_start); each answers with the JSON of the matching command's --json. Its resources are ratchet://task/<id> and its /spec, /plan and /log.",
      "No tool approves anything: approvals, reopening a FAILED task, settling a step, rewinding, verification and ratchet done stay at a terminal (an agent that did the work cannot verify it). Everything it writes is recorded as an agent: RATCHET_ACTOR=agent:<id> names it, anything else is agent:mcp. A refusal is a tool error carrying the message this CLI would print. Standard output carries only the protocol; messages go to standard error. See docs/guides/mcp.md."
    ].join(" "),
    positionals: [],
    options: {},
    examples: ["ratchet mcp", "ratchet mcp -C ~/src/payments"],
    needs: "project",
    run: () =>
      // Loaded on demand: the MCP SDK is bundled apart and parsed only by this command (see Mcp.ts).
      Effect.flatMap(Effect.promise(() => import("./Mcp.js")), (mcp) => Effect.as(mcp.serve, { exit: 0, json: null, text: null } satisfies Outcome))
  },
  {
    name: "digest",
    usage: "ratchet digest <file> [--spec <spec.md>]",
    summary: "Print the semantic digest of a spec or plan file, or the canonical digest of a JSON file",
    description:
      "spec.md → the digest of its semantic fields (the body does not count); plan.yaml → its plan digest (needs specDigest in the file or --spec); file.json → the canonical digest of its value. Opens no store.",
    positionals: [{ name: "file", description: "A .md, .yaml/.yml or .json file", required: true }],
    options: { spec: { type: "string", valueName: "<spec.md>", description: "The spec a plan file is for, when the plan has no specDigest." } },
    examples: ["ratchet digest spec.md", "ratchet digest plan.yaml --spec spec.md"],
    needs: "standalone",
    run: (parsed, env) =>
      Effect.gen(function*() {
        const file = resolve(env, str(parsed, "file"))
        const bytes = yield* ContractFile.readBounded(file)
        const specPath = parsed.options["spec"]
        let spec: Spec.Spec | undefined
        if (typeof specPath === "string") {
          const specFile = resolve(env, specPath)
          const document = yield* Either.match(ContractFile.decodeSpec(specFile, yield* ContractFile.readBounded(specFile)), {
            onLeft: Effect.fail,
            onRight: Effect.succeed
          })
          spec = document.semantic
        }
        const result = yield* Either.match(ContractFile.digestOf(file, bytes, spec === undefined ? {} : { spec }), {
          onLeft: Effect.fail,
          onRight: Effect.succeed
        })
        return ok({ file, kind: result.kind, digest: result.digest }, result.digest)
      })
  }
]

const resolve = (env: Env, file: string): string => path.resolve(env.cwd, file)

/**
 * The command named by the leading words of `argv`, and the rest. `brief <task> <verb> …` is
 * rewritten to the `brief <verb>` command with the task first.
 *
 * @since 0.1.0
 * @category commands
 */
export const find = (argv: ReadonlyArray<string>): { readonly spec: CommandSpec; readonly rest: ReadonlyArray<string> } | null => {
  const [first, second, third, ...more] = argv
  if (first === "brief" && second !== undefined && third !== undefined && !second.startsWith("-")) {
    const spec = commands.find((c) => c.name === `brief ${third}`)
    if (spec !== undefined) return { spec, rest: [second, ...more] }
    // `ratchet brief ask --help`: help for the verb, typed without a task.
    const named = commands.find((c) => c.name === `brief ${second}`)
    const help = argv.slice(2).some((arg) => arg === "--help" || arg === "-h")
    return named === undefined || !help ? null : { spec: named, rest: argv.slice(2) }
  }
  const two = commands.find((c) => c.name === `${first} ${second}`)
  if (two !== undefined) return { spec: two, rest: argv.slice(2) }
  const one = commands.find((c) => c.name === first)
  return one === undefined ? null : { spec: one, rest: argv.slice(1) }
}
