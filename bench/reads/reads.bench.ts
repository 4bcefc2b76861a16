/**
 * Reads against history: `ratchet status` and the controller's task read, on one task of 10², 10⁴
 * and 10⁶ events. Target: the read at 10⁶ events within 1.2× of the read at 10².
 *
 * Each size is a SQLite store of its own holding one task of that many events (reads/history.ts:
 * the kernel-decided lifecycle prefix, then the run loop's events attempt after attempt, ending
 * RUNNING with an open attempt), written through `EventStore.append` in appends of 1,000 events,
 * so the read models (task summary, attempts, intents, checkpoints, lease) are the store's own.
 * The stores are built once and kept (see `cachedStore`); the suite prints how long a build took.
 *
 * Pairs (baseline: the same read on the 10²-event store):
 * - `reads/controller-status-10^4` and `reads/controller-status-10^6`: `Controller.status(taskId)`
 *   in this process (the controller over `SqliteStore.layer` and the lease manager, as the CLI
 *   wires it), 200 reads per round;
 * - `reads/cli-status-10^6`: `ratchet status <task> --json` as a spawned process of the bundled
 *   CLI (built first from the current source), waited to exit, 3 per round.
 *
 * PostgreSQL is not measured here: building a million-event store through the append path takes
 * minutes per run there, and the read issues the same statements on both engines.
 */
import * as Controller from "@ratchet/controller/Controller"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Pair, Prepared, Skipped, Suite } from "../lib/Pair.js"
import { cleanEnv, type Command, run, runOk } from "../startup/processes.js"
import { cachedStore, wanted } from "./history.js"
import { buildBundles, cliBin, project } from "./world.js"

const projectId = "bench-reads"
const sizes = [100, 10_000, 1_000_000] as const
type Size = (typeof sizes)[number]
const label: Record<Size, string> = { 100: "10^2", 10_000: "10^4", 1_000_000: "10^6" }
const taskIdOf = (size: Size) => `t-reads-${size}`

const pairIds = ["reads/controller-status-10^4", "reads/controller-status-10^6", "reads/cli-status-10^6"] as const

const megabytes = (directory: string) =>
  `${(fs.readdirSync(directory).filter((name) => name.startsWith("ratchet.db")).reduce((sum, name) => sum + fs.statSync(path.join(directory, name)).size, 0) / 2 ** 20).toFixed(0)} MiB`

/** @see the module comment */
export const suite: Suite = {
  name: "Reads against history",
  prepare: async (): Promise<Prepared | Skipped> => {
    if (!wanted(pairIds)) return { _tag: "Skipped", reason: "no pair of this suite matches the filter" }
    const env = cleanEnv()
    await buildBundles(env, ["cli"])
    const facts: Record<string, string> = {}
    const stores = new Map<Size, string>()
    for (const size of sizes) {
      const built = await cachedStore(`reads-${label[size]}`, [{ projectId, taskId: taskIdOf(size), length: size }])
      stores.set(size, built.directory)
      const db = new Database(path.join(built.directory, "ratchet.db"), { readonly: true })
      const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n
      facts[`store ${label[size]}`] = `${count("ratchet_events")} events, ${count("ratchet_attempts")} attempt rows, ${count("ratchet_checkpoints")} checkpoints, ${megabytes(built.directory)}; ${
        built.builtMs === null ? "built earlier (cached)" : `built now in ${(built.builtMs / 1000).toFixed(0)} s`
      }`
      db.close()
    }

    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-bench-reads-")))
    const runtimes: Array<ManagedRuntime.ManagedRuntime<Controller.Controller, unknown>> = []
    const close = async () => {
      for (const runtime of runtimes) await runtime.dispose()
      fs.rmSync(root, { recursive: true, force: true })
    }
    try {
      const repo = path.join(root, "repo")
      const located = await project(repo, env, projectId)

      // The controller over each store, wired as the CLI wires it (apps/cli/src/Store.ts).
      const controllers = new Map<Size, Controller.Service>()
      const controllerRuntimes = new Map<Size, ManagedRuntime.ManagedRuntime<Controller.Controller, unknown>>()
      for (const size of sizes) {
        const services = SqliteStore.layer({ directory: stores.get(size)! })
        const leases = LeaseManager.layer().pipe(Layer.provide(services))
        const runtime = ManagedRuntime.make(
          Controller.layer.pipe(Layer.provide(Layer.mergeAll(services, leases, Layer.succeed(Controller.Project, located))))
        )
        runtimes.push(runtime)
        controllerRuntimes.set(size, runtime)
        const controller = await runtime.runPromise(Controller.Controller)
        controllers.set(size, controller)
        const view = await runtime.runPromise(controller.status(taskIdOf(size)))
        if (view.version !== size || view.state !== "RUNNING") {
          throw new Error(`the task of ${label[size]} reads as ${view.state} at version ${view.version}, expected RUNNING at ${size}`)
        }
      }
      const controllerSide = (size: Size) => async (_round: number, operations: number) => {
        const controller = controllers.get(size)!
        const taskId = taskIdOf(size)
        await controllerRuntimes.get(size)!.runPromise(Effect.gen(function*() {
          for (let i = 0; i < operations; i++) yield* controller.status(taskId)
        }))
      }

      const statusCommand = (size: Size): Command => ({
        file: process.execPath,
        args: [cliBin, "status", taskIdOf(size), "--json"],
        cwd: repo,
        env: { ...env, RATCHET_HOME: stores.get(size)! }
      })
      for (const size of [100, 1_000_000] as const) {
        const shown = JSON.parse((await runOk(statusCommand(size))).stdout) as { task?: { version?: number } }
        if (shown.task?.version !== size) throw new Error(`ratchet status --json showed version ${shown.task?.version}, expected ${size}`)
      }
      const cliSide = (size: Size) => async (_round: number, operations: number) => {
        for (let i = 0; i < operations; i++) {
          const ran = await run(statusCommand(size))
          if (ran.code !== 0) throw new Error(`ratchet status exited ${ran.code}: ${ran.stderr.slice(0, 500)}`)
        }
      }

      const versus = { baseline: "10^2 events", target: 1.2, eventsPerOperation: 1 }
      const pairs: ReadonlyArray<Pair> = [
        {
          id: pairIds[0],
          operation: "Controller.status of a task of 10^4 events",
          ours: controllerSide(10_000),
          raw: controllerSide(100),
          operationsPerRound: 200,
          ...versus
        },
        {
          id: pairIds[1],
          operation: "Controller.status of a task of 10^6 events",
          ours: controllerSide(1_000_000),
          raw: controllerSide(100),
          operationsPerRound: 200,
          ...versus
        },
        {
          id: pairIds[2],
          operation: "ratchet status <task> --json, one process, task of 10^6 events",
          ours: cliSide(1_000_000),
          raw: cliSide(100),
          operationsPerRound: 3,
          ...versus
        }
      ]
      facts["stores kept in"] = "the system's temporary directory (ratchet-bench-histories), rebuilt when the kernel or storage sources change"
      return { _tag: "Prepared", pairs, facts, close }
    } catch (error) {
      await close()
      throw error
    }
  }
}
