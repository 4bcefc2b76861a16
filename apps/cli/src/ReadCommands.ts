/**
 * The commands that read and write nothing: the task list and a task's status, a gate's
 * explanation, the event log and its branches, the verification evidence, and the store-wide
 * figures. Their `--json` documents are the controller's `Documents`, the ones the MCP server's
 * tools answer with.
 *
 * @since 0.2.0
 */
import * as AgentAttempts from "@ratchet/controller/AgentAttempts"
import * as Documents from "@ratchet/controller/Documents"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Stats from "@ratchet/controller/Stats"
import * as Verify from "@ratchet/controller/Verify"
import * as Workspace from "@ratchet/controller/Workspace"
import type * as HostSandbox from "@ratchet/host/HostSandbox"
import * as Task from "@ratchet/kernel/Task"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { acList, type CommandSpec, controller, invocation, leaseEpoch, ok, type Outcome, str, taskArg } from "./Command.js"
import * as Render from "./Render.js"
import * as Store from "./Store.js"
import * as VerifyRender from "./VerifyRender.js"

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

/**
 * `ratchet task list`.
 *
 * @since 0.2.0
 * @category commands
 */
export const taskList: CommandSpec = {
  name: "task list",
  usage: "ratchet task list",
  summary: "List this project's tasks, newest first",
  description: "One line per task: id, state, whether a writer holds its lease, goal.",
  positionals: [],
  options: {},
  examples: ["ratchet task list", "ratchet task list --json"],
  needs: "project",
  run: (_parsed, env) =>
    Effect.flatMap(controller, (c) => Effect.map(c.listTasks, (views) => ok(Documents.tasks(views), Render.taskList(views, env.style))))
}

/** States in which a task has a run whose attempts may be shown. */
const withRun: ReadonlyArray<string> = ["RUNNING", "VERIFYING", "BLOCKED", "PAUSED", "COMPLETED", "FAILED", "CANCELLED"]

/**
 * The agent attempts of the task's current run (turns, usage, transcript), read by index like
 * run.md's; none for a task without a run, and none (never a failure) when they cannot be read.
 */
const agentAttemptsOf = (view: { readonly taskId: string; readonly state: string }) =>
  withRun.includes(view.state)
    ? AgentAttempts.ofTaskId(view.taskId).pipe(
      Effect.provide(Store.store()),
      Effect.catchAllCause(() => Effect.succeed([] as ReadonlyArray<AgentAttempts.AgentAttempt>))
    )
    : Effect.succeed([] as ReadonlyArray<AgentAttempts.AgentAttempt>)

/**
 * `ratchet status`, with the hosts' sandbox warnings.
 *
 * @since 0.2.0
 * @category commands
 */
export const status: CommandSpec = {
  name: "status",
  usage: "ratchet status [<task>]",
  summary: "Show a task's state, revisions, digests, lease, blockers and allowed actions",
  description:
    "Without a task, lists the project's tasks. The allowed lines are the commands the task's state accepts now. Reads the stored read models: as fast at a million events as at ten. For an agent step's attempts of the current run it shows the turns, token usage, cost and transcript reference the host reported (the run's last step boundaries, read by index like run.md). Warns (warnings in --json: host, file, missing, detail, fix) when a host whose Ratchet hooks are installed would run the agent without its own sandbox keeping Ratchet's store, the approval key and .ratchet/ out of reach: Claude Code's sandbox off or its denyWrite/denyRead and permissions.deny rules missing, Codex's sandbox_mode unset or danger-full-access, or the store inside a root workspace-write lets commands write (see docs/guides/security.md).",
  positionals: [{ ...taskArg, required: false }],
  options: {},
  examples: ["ratchet status t-3f9a1c2b", "ratchet status t-3f9a1c2b --json", "ratchet status --json"],
  needs: "project",
  run: (parsed, env) =>
    Effect.flatMap(controller, (c) =>
      Effect.zipWith(
        parsed.positionals["task"] === undefined
          ? Effect.map(c.listTasks, (views) => ({ json: Documents.tasks(views), text: Render.taskList(views, env.style) }))
          : Effect.flatMap(c.status(str(parsed, "task")), (view) =>
            Effect.map(agentAttemptsOf(view), (agents) => ({
              json: { ...Documents.status(view), ...(agents.length === 0 ? {} : { agentAttempts: agents }) },
              text: [Render.task(view, env.style), ...agents.map((agent) => `agent:      ${Render.visible(AgentAttempts.line(agent))}`)].join("\n")
            }))),
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
}

/**
 * `ratchet gate`.
 *
 * @since 0.2.0
 * @category commands
 */
export const gate: CommandSpec = {
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
          exit: Documents.gateExitCode(explained),
          json: Documents.gate(explained),
          text: Render.explanation(explained, env.style)
        })
      ))
}

/**
 * `ratchet log`: NDJSON with `--json`, streamed as it is read.
 *
 * @since 0.2.0
 * @category commands
 */
export const log: CommandSpec = {
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
          const listed = Documents.branches(str(parsed, "task"), yield* c.branches(str(parsed, "task")))
          return ok(
            listed,
            listed.branches.map((b) => `${b.current ? "*" : " "} ${Render.visible(b.branch)}${b.parent === null ? "" : `  forked from ${Render.visible(b.parent)} at LSN ${b.forkLsn}`}  ${new Date(b.createdAt).toISOString()}`).join("\n")
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
              env.json ? JSON.stringify(Documents.logRecord(stored)) : Render.logLine(stored)
            )
            env.write(lines.join("\n") + "\n")
          }))
        return { exit: 0, json: null, text: null } satisfies Outcome
      }))
}

/**
 * `ratchet evidence`.
 *
 * @since 0.2.0
 * @category commands
 */
export const evidence: CommandSpec = {
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
        const bodies = showOutput ? yield* Verify.bodiesOf(shown, 64 * 1024) : null
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
                const loaded = bodies?.[body.ref]
                if (loaded === undefined) continue
                lines.push(`      --- ${body.label} (${loaded.size} bytes${loaded.truncated ? ", first 64 KiB" : ""}) ---`)
                lines.push(...Render.visible(loaded.text).trimEnd().split("\n").map((line) => `      ${line}`))
              }
            }
          }
        }
        return ok(Documents.evidence(shown, bodies), lines.join("\n"))
      }).pipe(Effect.provide(Store.verification(c.project))))
}

/**
 * `ratchet stats`.
 *
 * @since 0.2.0
 * @category commands
 */
export const stats: CommandSpec = {
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
      (stats) => ok(Documents.stats(stats), Render.visible(Stats.text(stats, "every project in the store")))
    )
}
