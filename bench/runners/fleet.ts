/**
 * A fleet of runners on one PostgreSQL store, for the runners benchmark and the profile tool: batches
 * of tasks at PLAN_APPROVED in projects of their own, each with clones of its repository (one per
 * runner, each with its own `RATCHET_HOME`, as on separate machines), the runner processes, and the
 * check of a round's stored log.
 *
 * A batch is made through the controller in this process: a git repository with its project file
 * committed, the tasks driven to PLAN_APPROVED (brief, restatement approved, spec approved,
 * preflight, plan approved: the calls the CLI makes, with the approvals' channel `terminal` as a
 * person at a terminal gives them), the approvers committed, then the clones.
 *
 * The check of a round reads the rows of `ratchet_events` as stored: every task is VERIFYING and
 * every step's attempt started once and succeeded once (a step started twice is a step run twice);
 * replaying its lease events, no acquisition finds the lease held and epochs follow one another;
 * every event under a lease carries the epoch held then (an append under a stale epoch would show
 * here); the events of one epoch were written by the runner that acquired it; one runner finished
 * each task. It also counts each runner's steps (its succeeded attempts).
 */
import * as Controller from "@ratchet/controller/Controller"
import * as Workspace from "@ratchet/controller/Workspace"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import type * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as Signing from "@ratchet/testkit/Signing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type pg from "pg"
import { git, gitRepository } from "../startup/processes.js"

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))
/** The runner bundle (build it first: `node apps/runner/build.mjs`). */
export const runnerBin = path.join(repositoryRoot, "apps", "runner", "bin", "ratchet-runner.mjs")

const user: Event.Actor = { kind: "user", id: "bench" }
/** The person's approval key: approvals count only when signed by a registered approver (ADR 0018). */
const signer = Signing.signerOf(Signing.keyOf(1), user.id)

const specText = [
  "---",
  "goal: \"Make the flaky date test deterministic\"",
  "nonGoals:",
  "  - \"Rewrite the date library\"",
  "constraints:",
  "  - \"No new runtime dependencies\"",
  "context:",
  "  relevantPaths:",
  "    - \"test/date.test.js\"",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: The date test passes in every timezone",
  "    required: true",
  "    verify:",
  "      command: node --version",
  "execution:",
  "  allowedScope:",
  "    - \"test/**\"",
  "---",
  "# The date test",
  "",
  "It fails at midnight UTC; freeze the clock.",
  ""
].join("\n")

/** A plan of `steps` command steps, each running `command`. */
const planText = (steps: number, command: string) =>
  [
    "steps:",
    ...Array.from({ length: steps }, (_, i) =>
      [
        `  - id: step-${i + 1}`,
        `    title: "Step ${i + 1}"`,
        "    acRefs: [AC-001]",
        "    run:",
        `      command: ${JSON.stringify(command)}`
      ].join("\n")),
    ""
  ].join("\n")

/** A project of tasks at PLAN_APPROVED and the clones its runners work in. */
export interface Batch {
  readonly projectId: string
  readonly tasks: ReadonlyArray<string>
  readonly clones: ReadonlyArray<{ readonly cwd: string; readonly home: string }>
}

/** Makes batches in `root`, through `runtime`'s store (see the module comment). */
export const batchMaker = (options: {
  readonly root: string
  readonly runtime: ManagedRuntime.ManagedRuntime<PostgresStore.Services, unknown>
  readonly env: NodeJS.ProcessEnv
  readonly stepsPerTask: number
  readonly command: string
  readonly concurrency: number
}) => {
  const { env, root, runtime } = options
  const specFile = path.join(root, "spec.md")
  const planFile = path.join(root, `plan-${options.stepsPerTask}.yaml`)
  fs.writeFileSync(specFile, specText)
  fs.writeFileSync(planFile, planText(options.stepsPerTask, options.command))
  const approveIn = (c: Controller.Service, taskId: string, subject: "restatement" | "spec" | "plan") =>
    Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, { actor: user, signer }))
  let made = 0
  return async (tasks: number, runners: number): Promise<Batch> => {
    const directory = path.join(root, `batch-${++made}`)
    const repo = path.join(directory, "repo")
    await gitRepository(repo, env, {
      "README.md": "# A repository for the runners benchmark\n",
      "test/date.test.js": "// a flaky date test\n"
    })
    const project = await Effect.runPromise(Effect.flatMap(Workspace.make.init(repo, { displayName: `bench-${made}` }), () => Workspace.make.locate(repo)))
    await git(repo, env, ["add", ".ratchet/project.json"])
    await git(repo, env, ["commit", "-q", "-m", "ratchet project"])
    const controller = Controller.layer.pipe(Layer.provide(Layer.mergeAll(
      LeaseManager.layerConfig(project.project.lease ?? {}),
      Layer.succeed(Controller.Project, project)
    )))
    const ids = await runtime.runPromise(Effect.flatMap(Controller.Controller, (c) =>
      Effect.zipRight(
        c.approvers.register(signer),
        Effect.forEach(Array.from({ length: tasks }, (_, i) => i), (i) =>
          Effect.gen(function*() {
            const invocation = { actor: user }
            const taskId = (yield* c.createTask({ goal: `Runner task ${i + 1}` }, invocation)).task.taskId
            yield* c.restate(taskId, "Freeze the clock in the date test so it passes in any timezone.", invocation)
            yield* approveIn(c, taskId, "restatement")
            yield* c.closeBrief(taskId, invocation)
            yield* c.proposeSpec(taskId, specFile, invocation)
            yield* approveIn(c, taskId, "spec")
            yield* c.preflight(taskId, invocation)
            yield* c.proposePlan(taskId, planFile, invocation)
            const approved = yield* approveIn(c, taskId, "plan")
            if (approved.task.state !== "PLAN_APPROVED") return yield* Effect.dieMessage(`${taskId} is ${approved.task.state}`)
            return taskId
          }), { concurrency: options.concurrency })
      )).pipe(Effect.provide(controller)))
    // the approvers the registration wrote are committed too: every clone must trust the same people
    await git(repo, env, ["add", ".ratchet/approvers.json"])
    await git(repo, env, ["commit", "-q", "-m", "ratchet approvers"])
    const clones = []
    for (let i = 0; i < runners; i++) {
      const cwd = path.join(directory, `clone-${i + 1}`)
      const home = path.join(directory, `home-${i + 1}`)
      fs.mkdirSync(home)
      await git(directory, env, ["clone", "-q", repo, cwd])
      clones.push({ cwd, home })
    }
    return { projectId: project.project.projectId, tasks: ids, clones }
  }
}

/** A runner process and the task ids it finished (from its `--json` outcome) once it exits 0. */
export interface Started {
  readonly pid: number
  readonly actor: string
  readonly finished: Promise<ReadonlyArray<string>>
}

/**
 * Starts `ratchet-runner --any --json` in `clone` as `actor`, with `nodeArgs` before the bundle
 * (e.g. `--cpu-prof`); `bin` is another bundle to run (default: this tree's).
 */
export const startRunner = (
  clone: Batch["clones"][number],
  env: NodeJS.ProcessEnv,
  actor: string,
  nodeArgs: ReadonlyArray<string> = [],
  bin: string = runnerBin
): Started => {
  const child = spawn(process.execPath, [...nodeArgs, bin, "--any", "--json"], {
    cwd: clone.cwd,
    env: { ...env, RATCHET_HOME: clone.home, RATCHET_ACTOR: `user:${actor}` },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const out: Array<Buffer> = []
  const err: Array<Buffer> = []
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
  child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
  const finished = new Promise<ReadonlyArray<string>>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code) => {
      const lines = Buffer.concat(out).toString("utf8").split("\n").filter((line) => line.trim() !== "")
      if (code !== 0) {
        reject(new Error(`runner in ${clone.cwd} exited ${code}: ${Buffer.concat(err).toString("utf8").slice(0, 1000)} ${lines.slice(-3).join("\n")}`))
        return
      }
      const last = JSON.parse(lines[lines.length - 1] ?? "{}") as { outcomes?: ReadonlyArray<{ taskId?: string; stop?: string }> }
      resolve((last.outcomes ?? []).filter((outcome) => outcome.stop === "verifying").map((outcome) => outcome.taskId ?? "?"))
    })
  })
  if (child.pid === undefined) throw new Error("the runner did not start")
  return { pid: child.pid, actor, finished }
}

/** One row of `ratchet_events`, as stored. */
interface Row {
  readonly lsn: number
  readonly epoch: number | null
  readonly event: {
    readonly _tag: string
    readonly actor: Event.Actor
    readonly epoch?: number
    readonly owner?: Event.LeaseOwner
    readonly stepId?: string
    readonly to?: string
  }
}

/** What is wrong with one task's log; `runners` maps each runner's pid to its actor id. */
const leaseProblems = (taskId: string, log: ReadonlyArray<Row>, runners: ReadonlyMap<number, string>, stepsPerTask: number) => {
  const problems: Array<string> = []
  let epoch = 0
  let held = false
  const holderOf = new Map<number, string>()
  const started = new Map<string, number>()
  const succeededBy = new Map<string, number>()
  for (const row of log) {
    const event = row.event
    const at = `${taskId} lsn ${row.lsn}`
    switch (event._tag) {
      case "LeaseAcquired":
      case "LeaseTakenOver": {
        const takeover = event._tag === "LeaseTakenOver"
        if (held !== takeover || event.epoch !== epoch + 1) {
          problems.push(`${at}: ${event._tag} epoch ${event.epoch} while ${held ? `epoch ${epoch} was held` : `the lease was free at epoch ${epoch}`}`)
        }
        epoch = event.epoch ?? Number.NaN
        held = true
        const owner = event.owner === undefined ? undefined : runners.get(event.owner.pid)
        if (owner === undefined) problems.push(`${at}: epoch ${epoch} taken by pid ${event.owner?.pid}, not a runner of this round`)
        else holderOf.set(epoch, owner)
        break
      }
      case "LeaseReleased":
        if (!held || event.epoch !== epoch) problems.push(`${at}: released epoch ${event.epoch} while ${held ? epoch : "none"} was held`)
        held = false
        break
      default:
        if (held && row.epoch !== epoch) problems.push(`${at}: ${event._tag} written under epoch ${row.epoch} while epoch ${epoch} was held`)
    }
    if (event._tag === "AttemptTransitioned" && event.to === "Running") started.set(event.stepId ?? "?", (started.get(event.stepId ?? "?") ?? 0) + 1)
    if (event._tag === "AttemptTransitioned" && event.to === "Succeeded") succeededBy.set(event.actor.id, (succeededBy.get(event.actor.id) ?? 0) + 1)
    if (row.epoch !== null) {
      const holder = holderOf.get(row.epoch)
      if (holder !== undefined && event.actor.kind === "runner" && event.actor.id !== holder) {
        problems.push(`${at}: ${event._tag} under epoch ${row.epoch} of ${holder} was written by ${event.actor.id}`)
      }
    }
  }
  if (held) problems.push(`${taskId}: the lease is still held after the runners exited`)
  const succeeded = [...succeededBy.values()].reduce((a, b) => a + b, 0)
  if (succeeded !== stepsPerTask) problems.push(`${taskId}: ${succeeded} attempts succeeded, expected ${stepsPerTask} (one per step)`)
  const twice = [...started.values()].filter((count) => count > 1).length
  if (started.size !== stepsPerTask) problems.push(`${taskId}: ${started.size} steps started, expected ${stepsPerTask}`)
  return { problems, twice, succeededBy }
}

/** What a round's log says (see the module comment). */
export interface RoundCheck {
  readonly problems: ReadonlyArray<string>
  /** Succeeded attempts by runner actor id. */
  readonly stepsBy: ReadonlyMap<string, number>
  /** Steps whose attempt started more than once. */
  readonly stepsRunTwice: number
}

/** Checks the round that `started` ran over `batch` (see the module comment). */
export const checkRound = async (
  admin: pg.Client,
  schema: string,
  batch: Batch,
  started: ReadonlyArray<Started>,
  finished: ReadonlyArray<ReadonlyArray<string>>,
  stepsPerTask: number
): Promise<RoundCheck> => {
  const problems: Array<string> = []
  const finishers = new Map<string, number>()
  for (const ids of finished) for (const id of ids) finishers.set(id, (finishers.get(id) ?? 0) + 1)
  const states = await admin.query<{ stream_id: string; state: string }>(
    `SELECT stream_id, state FROM ${schema}.ratchet_task_summaries WHERE project_id = $1 AND branch = 'main'`,
    [batch.projectId]
  )
  for (const row of states.rows) if (row.state !== "VERIFYING") problems.push(`${row.stream_id} is ${row.state}, not VERIFYING`)
  if (states.rows.length !== batch.tasks.length) problems.push(`${states.rows.length} tasks in the project, expected ${batch.tasks.length}`)
  const rows = await admin.query<{ lsn: string; stream_id: string; epoch: string | null; payload: string }>(
    `SELECT lsn, stream_id, epoch, payload FROM ${schema}.ratchet_events WHERE stream_id = ANY($1) AND branch = 'main' ORDER BY lsn`,
    [batch.tasks]
  )
  const pids = new Map(started.map((one) => [one.pid, one.actor]))
  const stepsBy = new Map<string, number>(started.map((one) => [one.actor, 0]))
  let stepsRunTwice = 0
  for (const taskId of batch.tasks) {
    if (finishers.get(taskId) !== 1) problems.push(`${taskId}: finished by ${finishers.get(taskId) ?? 0} runners, expected exactly 1`)
    const log = rows.rows.filter((row) => row.stream_id === taskId).map((row): Row => ({
      lsn: Number(row.lsn),
      epoch: row.epoch === null ? null : Number(row.epoch),
      event: JSON.parse(row.payload) as Row["event"]
    }))
    const found = leaseProblems(taskId, log, pids, stepsPerTask)
    problems.push(...found.problems)
    stepsRunTwice += found.twice
    for (const [actor, count] of found.succeededBy) stepsBy.set(actor, (stepsBy.get(actor) ?? 0) + count)
  }
  if (stepsRunTwice > 0) problems.push(`${stepsRunTwice} steps were started more than once`)
  return { problems, stepsBy, stepsRunTwice }
}
