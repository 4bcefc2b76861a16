/**
 * Many runners on PostgreSQL: steps per second with 1, 2 and 4 runner processes sharing one store,
 * over many small tasks.
 *
 * One operation is one step run to its end (a `true` command: the figure is the runner's own work
 * per step, the appends, intents, checks and checkpoints around a command that costs nothing).
 * One round is a batch of tasks at PLAN_APPROVED, each with a plan of {@link stepsPerTask} steps,
 * in a project of its own; the side starts its runners (`ratchet-runner --any --json`, the runner
 * bundle, each in its own clone of the project's repository with its own `RATCHET_HOME`, as on
 * separate machines) at once and waits for all of them to exit, which they do when no task is left
 * that they can run. Time per step is the batch's wall-clock time divided by its steps, so a ratio
 * of times is the inverse of the ratio of steps per second. Runner start-up is inside the time: it
 * is what a person who starts runners waits for.
 *
 * Pairs: 2 runners vs 1 (target: at least 1.6× the steps per second, a time ratio ≤ 0.625) and
 * 4 runners vs 1 (informational: the machine has 2 cores).
 *
 * Every batch is made before anything is timed (the pairs cannot prepare a round between two timed
 * ones): a git repository with its project file committed, the tasks driven to PLAN_APPROVED
 * through the controller in this process (brief, restatement approved, spec approved, preflight,
 * plan approved: the calls the CLI makes, with the approvals' channel `terminal` as a person at a
 * terminal gives them), and the clones. Only the batches of the pairs the filter keeps are made.
 *
 * After each round the log is checked, from the rows of `ratchet_events` as stored: every task is
 * VERIFYING and ran every step once; replaying its lease events, no acquisition finds the lease
 * held and epochs follow one another; every event under a lease carries the epoch held then (an
 * append under a stale epoch would show here); the events of one epoch were written by the runner
 * that acquired it; and one runner finished each task. Any finding fails the suite.
 *
 * When PostgreSQL does not answer, the suite is skipped with one line saying so.
 */
import * as Controller from "@ratchet/controller/Controller"
import * as Workspace from "@ratchet/controller/Workspace"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as Signing from "@ratchet/testkit/Signing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { spawn } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Pair, Prepared, Side, Skipped, Suite } from "../lib/Pair.js"
import { connectOrSkip, databaseUrl } from "../lib/postgres.js"
import { cleanEnv, git, gitRepository, runOk } from "../startup/processes.js"

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))
const runnerBin = path.join(repositoryRoot, "apps", "runner", "bin", "ratchet-runner.mjs")

/** Steps in each task's plan. */
const stepsPerTask = 6
/**
 * Tasks in a timed round: a multiple of 4, so the warm-up round (a quarter) is whole tasks. Kept
 * small because every round needs fresh tasks made before timing (7 rounds: 116 tasks for the two
 * pairs); each runner still works through several tasks' lease, run and release.
 */
const tasksPerRound = 4
/** How many tasks are driven to PLAN_APPROVED at once while preparing. */
const setupConcurrency = 4

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

const planText = [
  "steps:",
  ...Array.from({ length: stepsPerTask }, (_, i) => [
    `  - id: step-${i + 1}`,
    `    title: "Step ${i + 1}"`,
    "    acRefs: [AC-001]",
    "    run:",
    "      command: \"true\""
  ].join("\n")),
  ""
].join("\n")

/** A project of tasks at PLAN_APPROVED and the clones its runners work in. */
interface Batch {
  readonly projectId: string
  readonly tasks: ReadonlyArray<string>
  readonly clones: ReadonlyArray<{ readonly cwd: string; readonly home: string }>
}

/** One row of `ratchet_events`, as stored. */
interface Row {
  readonly lsn: number
  readonly streamId: string
  readonly epoch: number | null
  readonly event: {
    readonly _tag: string
    readonly actor: Event.Actor
    readonly epoch?: number
    readonly owner?: Event.LeaseOwner
    readonly stepId?: string
  }
}

/**
 * What is wrong with one task's log (see the module comment); `runners` maps the pid of each runner
 * of the round to its actor id.
 */
const leaseProblems = (taskId: string, log: ReadonlyArray<Row>, runners: ReadonlyMap<number, string>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  let epoch = 0
  let held = false
  const holderOf = new Map<number, string>()
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
    if (row.epoch !== null) {
      const holder = holderOf.get(row.epoch)
      if (holder !== undefined && event.actor.kind === "runner" && event.actor.id !== holder) {
        problems.push(`${at}: ${event._tag} under epoch ${row.epoch} of ${holder} was written by ${event.actor.id}`)
      }
    }
  }
  if (held) problems.push(`${taskId}: the lease is still held after the runners exited`)
  const finished = log.filter((row) => row.event._tag === "AttemptTransitioned" && (row.event as { to?: string }).to === "Succeeded").length
  if (finished !== stepsPerTask) problems.push(`${taskId}: ${finished} attempts succeeded, expected ${stepsPerTask} (one per step)`)
  return problems
}

/** A runner process in `clone`; resolves to the task ids it finished (from its `--json` outcome) once it exits 0. */
const runner = (clone: Batch["clones"][number], env: NodeJS.ProcessEnv): { readonly pid: number; readonly finished: Promise<ReadonlyArray<string>> } => {
  const child = spawn(process.execPath, [runnerBin, "--any", "--json"], { cwd: clone.cwd, env: { ...env, RATCHET_HOME: clone.home }, stdio: ["ignore", "pipe", "pipe"] })
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
  return { pid: child.pid, finished }
}

const wantedBy = (filters: ReadonlyArray<string>) => (id: string) => filters.length === 0 || filters.some((filter) => id.includes(filter))

/** @see the module comment */
export const suite: Suite = {
  name: "Runners on PostgreSQL",
  prepare: async (): Promise<Prepared | Skipped> => {
    // The pairs run.ts will run (the same filter and rounds as it applies): only their batches are made.
    const wanted = wantedBy(process.argv.slice(2))
    const rounds = Math.max(5, Number.parseInt(process.env["BENCH_ROUNDS"] ?? "7", 10) || 7)
    const plans = [
      { id: "runners/2-vs-1", runners: 2, target: 1 / 1.6, targetText: "≥ 1.6× steps/s" },
      { id: "runners/4-vs-1", runners: 4, target: Number.POSITIVE_INFINITY, targetText: "(informational)" }
    ].filter((plan) => wanted(plan.id))
    if (plans.length === 0) return { _tag: "Skipped", reason: "no pair of this suite matches the filter" }

    const url = databaseUrl()
    const admin = await connectOrSkip(url)
    if ("_tag" in admin) return admin
    const schema = `ratchet_bench_runners_${crypto.randomBytes(4).toString("hex")}`
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-bench-runners-")))
    const runtime = ManagedRuntime.make(PostgresStore.layer({ url, schema, maxConnections: setupConcurrency + 1 }))
    const close = async () => {
      await runtime.dispose()
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
      fs.rmSync(root, { recursive: true, force: true })
    }

    try {
      const env = cleanEnv()
      const started = performance.now()
      await runOk({ file: process.execPath, args: [path.join(repositoryRoot, "apps", "runner", "build.mjs")], cwd: repositoryRoot, env })
      await runtime.runPromise(Effect.void)
      const specFile = path.join(root, "spec.md")
      const planFile = path.join(root, "plan.yaml")
      fs.writeFileSync(specFile, specText)
      fs.writeFileSync(planFile, planText)
      const storeEnv: NodeJS.ProcessEnv = { ...env, RATCHET_DATABASE_URL: url, RATCHET_DATABASE_SCHEMA: schema }

      const approveIn = (c: Controller.Service, taskId: string, subject: "restatement" | "spec" | "plan") =>
        Effect.flatMap(c.approvalSubject(taskId, subject), (shown) =>
          c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, { actor: user, signer }))

      let made = 0
      /** A new project with `tasks` tasks at PLAN_APPROVED and `runners` clones of its repository. */
      const batch = async (tasks: number, runners: number): Promise<Batch> => {
        const directory = path.join(root, `batch-${++made}`)
        const repo = path.join(directory, "repo")
        await gitRepository(repo, storeEnv, {
          "README.md": "# A repository for the runners benchmark\n",
          "test/date.test.js": "// a flaky date test\n"
        })
        const project = await Effect.runPromise(Effect.flatMap(
          Workspace.make.init(repo, { displayName: `bench-${made}` }),
          () => Workspace.make.locate(repo)
        ))
        await git(repo, storeEnv, ["add", ".ratchet/project.json"])
        await git(repo, storeEnv, ["commit", "-q", "-m", "ratchet project"])
        const controller = Controller.layer.pipe(Layer.provide(Layer.mergeAll(
          LeaseManager.layerConfig(project.project.lease ?? {}),
          Layer.succeed(Controller.Project, project)
        )))
        const ids = await runtime.runPromise(Effect.flatMap(Controller.Controller, (c) =>
          Effect.zipRight(c.approvers.register(signer), Effect.forEach(Array.from({ length: tasks }, (_, i) => i), (i) =>
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
            }), { concurrency: setupConcurrency }))).pipe(Effect.provide(controller)))
        // the approvers the registration wrote are committed too: every clone must trust the same people
        await git(repo, storeEnv, ["add", ".ratchet/approvers.json"])
        await git(repo, storeEnv, ["commit", "-q", "-m", "ratchet approvers"])
        const clones = []
        for (let i = 0; i < runners; i++) {
          const cwd = path.join(directory, `clone-${i + 1}`)
          const home = path.join(directory, `home-${i + 1}`)
          fs.mkdirSync(home)
          await git(directory, storeEnv, ["clone", "-q", repo, cwd])
          clones.push({ cwd, home })
        }
        return { projectId: project.project.projectId, tasks: ids, clones }
      }

      const operationsPerRound = tasksPerRound * stepsPerTask
      const warmUpTasks = Math.max(1, Math.floor(operationsPerRound / 4)) / stepsPerTask
      /** The batches of one side, in the order it is called: the warm-up round's, then one per round. */
      const batches = async (runners: number): Promise<Array<Batch>> => {
        const made: Array<Batch> = [await batch(warmUpTasks, runners)]
        for (let round = 0; round < rounds; round++) made.push(await batch(tasksPerRound, runners))
        return made
      }

      const steps = { total: 0, checked: 0 }
      /** Runs `count` runners over the side's next batch, then checks its log; fails on any finding. */
      const side = (label: string, count: number, queue: Array<Batch>): Side => async (_round, operations) => {
        const current = queue.shift()
        if (current === undefined) throw new Error(`${label}: no prepared batch left (more rounds than prepared?)`)
        if (current.tasks.length * stepsPerTask !== operations) {
          throw new Error(`${label}: the prepared batch has ${current.tasks.length * stepsPerTask} steps, the round asks for ${operations}`)
        }
        const started = current.clones.slice(0, count).map((clone, i) => ({
          actor: `bench-runner-${i + 1}`,
          process: runner(clone, { ...storeEnv, RATCHET_ACTOR: `user:bench-runner-${i + 1}` })
        }))
        const finished = await Promise.all(started.map((one) => one.process.finished))
        // The checks below are inside the side's time (two queries, the same on both sides), which is
        // small next to the round's.
        const problems: Array<string> = []
        const finishers = new Map<string, number>()
        for (const ids of finished) for (const id of ids) finishers.set(id, (finishers.get(id) ?? 0) + 1)
        const states = await admin.query<{ stream_id: string; state: string }>(
          `SELECT stream_id, state FROM ${schema}.ratchet_task_summaries WHERE project_id = $1 AND branch = 'main'`,
          [current.projectId]
        )
        for (const row of states.rows) if (row.state !== "VERIFYING") problems.push(`${row.stream_id} is ${row.state}, not VERIFYING`)
        if (states.rows.length !== current.tasks.length) problems.push(`${states.rows.length} tasks in the project, expected ${current.tasks.length}`)
        const rows = await admin.query<{ lsn: string; stream_id: string; epoch: string | null; payload: string }>(
          `SELECT lsn, stream_id, epoch, payload FROM ${schema}.ratchet_events WHERE stream_id = ANY($1) AND branch = 'main' ORDER BY lsn`,
          [current.tasks]
        )
        const pids = new Map(started.map((one) => [one.process.pid, one.actor]))
        for (const taskId of current.tasks) {
          if (finishers.get(taskId) !== 1) problems.push(`${taskId}: finished by ${finishers.get(taskId) ?? 0} runners, expected exactly 1`)
          const log = rows.rows.filter((row) => row.stream_id === taskId).map((row): Row => ({
            lsn: Number(row.lsn),
            streamId: row.stream_id,
            epoch: row.epoch === null ? null : Number(row.epoch),
            event: JSON.parse(row.payload) as Row["event"]
          }))
          problems.push(...leaseProblems(taskId, log, pids))
        }
        if (problems.length > 0) {
          throw new Error(`LEASE VIOLATION or incomplete run with ${count} runner(s):\n  ${problems.slice(0, 20).join("\n  ")}`)
        }
        steps.total += operations
        steps.checked += current.tasks.length
      }

      const queues = new Map<string, { one: Array<Batch>; many: Array<Batch> }>()
      for (const plan of plans) queues.set(plan.id, { one: await batches(1), many: await batches(plan.runners) })
      const setupSeconds = (performance.now() - started) / 1000

      const pairs: ReadonlyArray<Pair> = plans.map((plan) => {
        const queue = queues.get(plan.id)!
        return {
          id: plan.id,
          operation: `one step (true) of ${tasksPerRound} tasks × ${stepsPerTask} steps, wall clock`,
          ours: side(`${plan.runners} runners`, plan.runners, queue.many),
          raw: side("1 runner", 1, queue.one),
          baseline: "1 runner",
          operationsPerRound,
          eventsPerOperation: 1,
          target: plan.target,
          targetText: plan.targetText
        }
      })
      const setting = async (name: string) => String((await admin.query(`SHOW ${name}`)).rows[0]?.[name] ?? "?")
      const facts: Record<string, string> = {
        "PostgreSQL": await setting("server_version"),
        "synchronous_commit": await setting("synchronous_commit"),
        "round": `${tasksPerRound} tasks at PLAN_APPROVED × ${stepsPerTask} steps (command: true), one project per round`,
        "runners": "ratchet-runner --any --json, each in its own clone and RATCHET_HOME",
        "setup": `${made} projects, ${setupSeconds.toFixed(0)} s (before timing)`,
        // A getter: run.ts prints the facts before the pairs run and writes them to the results file
        // after; a violation fails the suite, so a written result always says 0.
        get "lease violations"() {
          return steps.checked === 0
            ? "0 (every round is checked after it ends; a violation fails the suite)"
            : `0 (checked after every round: ${steps.checked} tasks, ${steps.total} steps)`
        }
      }
      return { _tag: "Prepared", pairs, facts, close }
    } catch (error) {
      await close()
      throw error
    }
  }
}
