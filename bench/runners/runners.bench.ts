/**
 * Many runners on PostgreSQL: steps per second with 1, 2 and 4 runner processes sharing one store,
 * over many small tasks, and one runner's step against the durable step of benchmark 2.
 *
 * One operation is one step run to its end (a `true` command: the figure is the runner's own work
 * per step, the appends, intents, checks and checkpoints around a command that costs nothing).
 * One round is a batch of {@link tasksPerRound} tasks at PLAN_APPROVED, each with a plan of
 * {@link stepsPerTask} steps, in a project of its own; the side starts its runners
 * (`ratchet-runner --any --json`, the runner bundle, each in its own clone of the project's
 * repository with its own `RATCHET_HOME`, as on separate machines; see `fleet.ts`) at once and waits
 * for all of them to exit, which they do when no task is left that they can run. Time per step is
 * the batch's wall-clock time divided by its steps, so a ratio of times is the inverse of the ratio
 * of steps per second. Runner start-up is inside the time: it is what a person who starts runners
 * waits for.
 *
 * Pairs:
 * - `runners/2-vs-1`: 2 runners against 1 (target: at least 1.7× the steps per second, a time ratio
 *   ≤ 1 / 1.7);
 * - `runners/4-vs-1`: 4 runners against 1 (target: at least 2.2×, a time ratio ≤ 1 / 2.2);
 * - `runners/1-vs-step`: one runner's time per step against benchmark 2's durable PostgreSQL step
 *   (the run engine's four appends of one command step, `bench/step/steps.ts`, on this suite's
 *   store; target ≤ 2×).
 *
 * Every batch is made before anything is timed (the pairs cannot prepare a round between two timed
 * ones). After each round the stored log is checked (`fleet.ts`: every task VERIFYING, every step
 * started and succeeded once, the lease events replay with no two holders, every event under the
 * epoch held then, one runner finished each task), and in a round of several runners every runner
 * must have run at least {@link minimumShare} of the steps. Any finding fails the suite.
 *
 * When PostgreSQL does not answer, the suite is skipped with one line saying so.
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Pair, Prepared, Side, Skipped, Suite } from "../lib/Pair.js"
import { connectOrSkip, databaseUrl } from "../lib/postgres.js"
import { cleanEnv, runOk } from "../startup/processes.js"
import { oursSteps } from "../step/steps.js"
import { type Batch, batchMaker, checkRound, startRunner } from "./fleet.js"

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))

/** Steps in each task's plan. */
const stepsPerTask = 20
/** Tasks in a timed round: a multiple of 4, so the warm-up round (a quarter) is whole tasks. */
const tasksPerRound = 16
/** How many tasks are driven to PLAN_APPROVED at once while preparing. */
const setupConcurrency = 4
/** The least share of a round's steps every runner of several must have run. */
const minimumShare = 0.2

const wantedBy = (filters: ReadonlyArray<string>) => (id: string) => filters.length === 0 || filters.some((filter) => id.includes(filter))

const loadAverage = () => os.loadavg().map((load) => load.toFixed(2)).join(" ")

/** @see the module comment */
export const suite: Suite = {
  name: "Runners on PostgreSQL",
  prepare: async (): Promise<Prepared | Skipped> => {
    // The pairs run.ts will run (the same filter and rounds as it applies): only their batches are made.
    const wanted = wantedBy(process.argv.slice(2))
    const rounds = Math.max(5, Number.parseInt(process.env["BENCH_ROUNDS"] ?? "7", 10) || 7)
    const plans = [
      { id: "runners/2-vs-1", runners: 2, target: 1 / 1.7, targetText: "≥ 1.7× steps/s" },
      { id: "runners/4-vs-1", runners: 4, target: 1 / 2.2, targetText: "≥ 2.2× steps/s" },
      { id: "runners/1-vs-step", runners: 1, target: 2, targetText: "≤ 2× bench 2's PG step" }
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
      const storeEnv: NodeJS.ProcessEnv = { ...env, RATCHET_DATABASE_URL: url, RATCHET_DATABASE_SCHEMA: schema }
      const batch = batchMaker({ root, runtime, env: storeEnv, stepsPerTask, command: "true", concurrency: setupConcurrency })

      const operationsPerRound = tasksPerRound * stepsPerTask
      const warmUpTasks = Math.max(1, Math.floor(operationsPerRound / 4)) / stepsPerTask
      /** The batches of one side, in the order it is called: the warm-up round's, then one per round. */
      const batches = async (runners: number): Promise<Array<Batch>> => {
        const made: Array<Batch> = [await batch(warmUpTasks, runners)]
        for (let round = 0; round < rounds; round++) made.push(await batch(tasksPerRound, runners))
        return made
      }

      const totals = { steps: 0, tasks: 0, twice: 0 }
      /** The smallest share of a round's steps any runner had, by number of runners. */
      const smallestShare = new Map<number, number>()
      /** Runs `count` runners over the side's next batch, then checks its log; fails on any finding. */
      const side = (label: string, count: number, queue: Array<Batch>): Side => async (_round, operations) => {
        const current = queue.shift()
        if (current === undefined) throw new Error(`${label}: no prepared batch left (more rounds than prepared?)`)
        if (current.tasks.length * stepsPerTask !== operations) {
          throw new Error(`${label}: the prepared batch has ${current.tasks.length * stepsPerTask} steps, the round asks for ${operations}`)
        }
        const fleet = current.clones.slice(0, count).map((clone, i) => startRunner(clone, storeEnv, `bench-runner-${i + 1}`))
        const finished = await Promise.all(fleet.map((one) => one.finished))
        // The check below is inside the side's time (two queries, the same on both sides), which is
        // small next to the round's.
        const check = await checkRound(admin, schema, current, fleet, finished, stepsPerTask)
        const problems = [...check.problems]
        if (count > 1) {
          for (const [actor, steps] of check.stepsBy) {
            const share = steps / operations
            smallestShare.set(count, Math.min(smallestShare.get(count) ?? 1, share))
            if (share < minimumShare) problems.push(`${actor} ran ${steps} of ${operations} steps (${(share * 100).toFixed(0)} %), under ${minimumShare * 100} %`)
          }
        }
        if (problems.length > 0) {
          throw new Error(`LEASE VIOLATION, a step run twice, an idle runner or an incomplete run with ${count} runner(s):\n  ${problems.slice(0, 20).join("\n  ")}`)
        }
        totals.steps += operations
        totals.tasks += current.tasks.length
        totals.twice += check.stepsRunTwice
      }

      // Benchmark 2's durable PostgreSQL step, on this suite's store (the baseline of runners/1-vs-step).
      const store = await runtime.runPromise(EventStore.EventStore)
      const durable = oursSteps((effect) => runtime.runPromise(effect), store)
      await durable.cursor("bench-2-step")

      const queues = new Map<string, { one: Array<Batch>; many: Array<Batch> }>()
      for (const plan of plans) queues.set(plan.id, { one: await batches(1), many: plan.runners === 1 ? [] : await batches(plan.runners) })
      const setupSeconds = (performance.now() - started) / 1000

      const pairs: ReadonlyArray<Pair> = plans.map((plan) => {
        const queue = queues.get(plan.id)!
        const operation = `one step (true) of ${tasksPerRound} tasks × ${stepsPerTask} steps, wall clock`
        return plan.runners === 1
          ? {
            id: plan.id,
            operation,
            ours: side("1 runner", 1, queue.one),
            raw: durable.side("bench-2-step"),
            baseline: "bench 2 PG step",
            operationsPerRound,
            eventsPerOperation: 1,
            target: plan.target,
            targetText: plan.targetText
          }
          : {
            id: plan.id,
            operation,
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
      const loadBefore = loadAverage()
      const facts: Record<string, string> = {
        "PostgreSQL": await setting("server_version"),
        "synchronous_commit": await setting("synchronous_commit"),
        "round": `${tasksPerRound} tasks at PLAN_APPROVED × ${stepsPerTask} steps (command: true), one project per round`,
        "runners": "ratchet-runner --any --json, each in its own clone and RATCHET_HOME; tasks claimed (ADR 0042)",
        "setup": `${queues.size} pairs' batches, ${setupSeconds.toFixed(0)} s (before timing)`,
        "CPUs": `${os.cpus().length}`,
        // Getters: run.ts prints the facts before the pairs run and writes them to the results file
        // after; a violation fails the suite, so a written result always says 0.
        get "load average (1, 5, 15 min)"() {
          return `${loadBefore} before the pairs, ${loadAverage()} now`
        },
        get "lease violations"() {
          return totals.tasks === 0
            ? "0 (every round is checked after it ends; a violation fails the suite)"
            : `0 (checked after every round: ${totals.tasks} tasks, ${totals.steps} steps)`
        },
        get "steps run twice"() {
          return `${totals.twice}`
        },
        get "smallest runner share"() {
          return smallestShare.size === 0
            ? `(every runner must run ≥ ${minimumShare * 100} % of a round's steps)`
            : [...smallestShare].map(([count, share]) => `${count} runners: ${(share * 100).toFixed(1)} %`).join(", ")
        }
      }
      return { _tag: "Prepared", pairs, facts, close }
    } catch (error) {
      await close()
      throw error
    }
  }
}
