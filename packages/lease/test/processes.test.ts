/**
 * The lease between real OS processes, on SQLite and on PostgreSQL:
 *
 * - a holder killed with SIGKILL is not replaced by its silence: its lease stays held, and
 *   expired, until an explicit takeover after the grace deadline;
 * - a zombie (stopped with SIGSTOP past its grace, taken over, resumed with SIGCONT) tries to
 *   write and to heartbeat: both are refused, and nothing of it lands after the takeover;
 * - 8 processes contend for one task for 200 tenures (acquire or take over, write, release or
 *   abandon); a checker reading the log proves no two holders were ever valid and every
 *   committed event carried the current epoch, and that each process's beliefs match the log.
 *
 * Children are `test/child/leaseChild.ts` started through tsx; they report on stdout as JSON
 * lines. PostgreSQL runs when reachable (see DEVELOPERS.md) and is required when CI=true.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@ratchet/storage/EventStore"
import type * as LeaseStore from "@ratchet/storage/LeaseStore"
import type * as ReadModel from "@ratchet/storage/ReadModel"
import { SqliteStore } from "@ratchet/storage-sqlite"
import { describePostgres, testUrl } from "@ratchet/testkit/Postgres"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import * as LeaseManager from "../src/LeaseManager.js"
import * as Owner from "../src/Owner.js"
import * as LeaseLog from "./leaseLog.js"
import { B, createTask, freshSchema, postgresStore, PROJECT, tempHome } from "./fixtures.js"

const childScript = fileURLToPath(new URL("./child/leaseChild.ts", import.meta.url))

type Report = Record<string, unknown> & { readonly pid: number; readonly event: string }

/** A child process and its JSON reports. */
class Child {
  readonly reports: Array<Report> = []
  readonly exited: Promise<number | null>
  private stderr = ""
  private waiters: Array<() => void> = []

  constructor(readonly process: ChildProcessWithoutNullStreams) {
    createInterface({ input: process.stdout }).on("line", (line) => {
      try {
        this.reports.push(JSON.parse(line) as Report)
      } catch {
        this.stderr += `(stdout) ${line}\n`
      }
      for (const wake of this.waiters.splice(0)) wake()
    })
    process.stderr.on("data", (chunk: Buffer) => (this.stderr += chunk.toString()))
    this.exited = new Promise((resolve) => process.once("exit", (code) => {
      for (const wake of this.waiters.splice(0)) wake()
      resolve(code)
    }))
  }

  get pid(): number {
    return this.process.pid!
  }

  /** The first report matching `predicate`, waiting up to `timeoutMs` for it. */
  async next(predicate: (report: Report) => boolean, timeoutMs = 60_000): Promise<Report> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = this.reports.find(predicate)
      if (found !== undefined) return found
      if (this.process.exitCode !== null || this.process.signalCode !== null || Date.now() > deadline) {
        throw new Error(`child ${this.pid} did not report as expected (exit ${this.process.exitCode ?? this.process.signalCode}); reports: ${JSON.stringify(this.reports)}; stderr: ${this.stderr}`)
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
  }

  get diagnostics(): string {
    return this.stderr
  }
}

interface Engine {
  /** The store's layer for this (parent) process. */
  readonly layer: Layer.Layer<EventStore.EventStore | ReadModel.ReadModels | LeaseStore.LeaseStore, unknown>
  /** What a child needs in its environment to open the same store. */
  readonly env: Readonly<Record<string, string>>
}

const spawnChild = (engine: Engine, role: string, env: Record<string, string>): Child =>
  new Child(
    spawn(process.execPath, ["--conditions=@ratchet/source", "--import", "tsx", childScript, role], {
      env: { ...process.env, ...engine.env, LEASE_PROJECT: PROJECT, LEASE_NAME: role, ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
  )

const parentOf = (engine: Engine, settings: { readonly heartbeatMs: number; readonly graceMs: number }) =>
  ManagedRuntime.make(Layer.provideMerge(LeaseManager.layer(settings), engine.layer))

const logOf = (taskId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => Stream.runCollect(store.read({ streamId: taskId }))).pipe(
    Effect.map(Chunk.toReadonlyArray)
  )

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until the lease of `taskId` is past its deadline, by the store's clock. */
const untilExpired = (runtime: ManagedRuntime.ManagedRuntime<LeaseManager.LeaseManager, unknown>, taskId: string) =>
  runtime.runPromise(
    Effect.flatMap(LeaseManager.LeaseManager, (leases) =>
      leases.observe({ projectId: PROJECT, taskId }).pipe(
        Effect.repeat({ until: (seen) => seen.status !== "held", schedule: Schedule.spaced("50 millis") })
      ))
  )

const suite = (makeEngine: () => Engine) => {
  it("a holder killed with SIGKILL keeps its lease until an explicit takeover after the grace deadline", async () => {
    const engine = makeEngine()
    // A grace long enough that the refusals below come well inside it even on a loaded machine.
    const settings = { heartbeatMs: 100, graceMs: 4_000 }
    const parent = parentOf(engine, settings)
    const key = { projectId: PROJECT, taskId: "t-kill" }
    try {
      await parent.runPromise(createTask("t-kill"))
      const holder = spawnChild(engine, "holder", {
        LEASE_TASK: "t-kill",
        LEASE_HEARTBEAT_MS: String(settings.heartbeatMs),
        LEASE_GRACE_MS: String(settings.graceMs)
      })
      await holder.next((r) => r.event === "wrote" && r["ok"] === true)
      holder.process.kill("SIGKILL")
      await holder.exited
      const leases = await parent.runPromise(LeaseManager.LeaseManager)

      const seen = await parent.runPromise(leases.observe(key))
      expect(seen).toMatchObject({ epoch: 1, holder: { pid: holder.pid } })
      const acquire = await parent.runPromise(Effect.flip(leases.acquire(key, B)))
      expect(acquire).toMatchObject({ _tag: "@ratchet/lease/LeaseHeld", holder: { pid: holder.pid } })
      // Inside the grace (its last heartbeat was at most ~100 ms before it died), by the store's clock.
      const early = await parent.runPromise(Effect.flip(leases.takeover(key, B)))
      expect(early._tag).toBe("@ratchet/lease/TakeoverTooEarly")
      expect(early._tag === "@ratchet/lease/TakeoverTooEarly" && early.now <= early.deadline).toBe(true)

      // Past the deadline, the lease is expired but still held: silence alone hands nothing over.
      await untilExpired(parent, "t-kill")
      await sleep(settings.graceMs)
      expect(await parent.runPromise(leases.observe(key))).toMatchObject({ status: "expired", epoch: 1, holder: { pid: holder.pid } })

      const took = await parent.runPromise(leases.takeover(key, B))
      expect(took).toMatchObject({ displacedEpoch: 1, displaced: { pid: holder.pid }, lease: { epoch: 2, owner: B } })
      const log = await parent.runPromise(logOf("t-kill"))
      const takeoverAt = log.find((stored) => stored.event._tag === "LeaseTakenOver")!.lsn
      expect(log.filter((stored) => stored.epoch === 1 && stored.lsn > takeoverAt)).toEqual([])
      expect(LeaseLog.check(log).violations).toEqual([])
    } finally {
      await parent.dispose()
    }
  }, 120_000)

  it("a zombie stopped past its grace and taken over is refused when it resumes: nothing of it lands", async () => {
    const engine = makeEngine()
    const settings = { heartbeatMs: 200, graceMs: 800 }
    const parent = parentOf(engine, settings)
    const key = { projectId: PROJECT, taskId: "t-zombie" }
    try {
      await parent.runPromise(createTask("t-zombie"))
      const zombie = spawnChild(engine, "zombie", {
        LEASE_TASK: "t-zombie",
        LEASE_HEARTBEAT_MS: String(settings.heartbeatMs),
        LEASE_GRACE_MS: String(settings.graceMs)
      })
      const ready = await zombie.next((r) => r.event === "ready")
      // Stopped between transactions: it reports `ready` after its last commit and then waits.
      zombie.process.kill("SIGSTOP")
      await untilExpired(parent, "t-zombie")
      const leases = await parent.runPromise(LeaseManager.LeaseManager)
      const took = await parent.runPromise(leases.takeover(key, B))
      expect(took).toMatchObject({ displacedEpoch: 1, displaced: { pid: zombie.pid } })

      zombie.process.stdin.write("resume\n")
      zombie.process.kill("SIGCONT")
      const resumed = await zombie.next((r) => r.event === "resumed")
      expect(resumed["write"]).toEqual({ ok: false, tag: "@ratchet/storage/StaleEpoch" })
      expect(resumed["heartbeat"]).toBe("@ratchet/lease/LeaseLost")
      // It was taken over, by B, who holds it now: not "released".
      expect(resumed["message"]).toContain(`this holder had epoch 1 but it was taken over at epoch 2 by ${Owner.describe(B)}, which holds it now.`)
      expect(resumed["message"]).not.toContain("has been released")
      expect(await zombie.exited).toBe(0)

      const log = await parent.runPromise(logOf("t-zombie"))
      const takeoverAt = log.find((stored) => stored.event._tag === "LeaseTakenOver")!.lsn
      const ofZombie = log.filter((stored) => stored.epoch === 1 && stored.event._tag === "CheckpointRecorded")
      expect(ofZombie.map((stored) => stored.lsn)).toEqual(ready["lsns"])
      expect(ofZombie.every((stored) => stored.lsn < takeoverAt)).toBe(true)
      expect(log.some((stored) => stored.event._tag === "CheckpointRecorded" && stored.event.runId === "zombie-late")).toBe(false)
      expect(await parent.runPromise(leases.observe(key))).toMatchObject({ status: "held", epoch: 2, holder: B })
      expect(LeaseLog.check(log).violations).toEqual([])
    } finally {
      await parent.dispose()
    }
  }, 120_000)

  it("8 processes contend for one task for 200 tenures: never two holders, every event under the current epoch", async () => {
    const engine = makeEngine()
    const target = 200
    const settings = { heartbeatMs: 20, graceMs: 60 }
    const parent = parentOf(engine, settings)
    try {
      await parent.runPromise(createTask("t-race"))
      const children = Array.from({ length: 8 }, () =>
        spawnChild(engine, "contender", {
          LEASE_TASK: "t-race",
          LEASE_TARGET: String(target),
          LEASE_HEARTBEAT_MS: String(settings.heartbeatMs),
          LEASE_GRACE_MS: String(settings.graceMs)
        }))
      const codes = await Promise.all(children.map((child) => child.exited))
      expect(codes, children.map((child) => child.diagnostics).join("\n")).toEqual(children.map(() => 0))

      const tenures: Array<LeaseLog.Tenure> = children.flatMap((child) =>
        child.reports.filter((r) => r.event === "tenure").map((r) => {
          const writes = r["writes"] as ReadonlyArray<{ readonly ok: boolean; readonly lsn?: number; readonly tag?: string }>
          const stale = r["stale"] as { readonly ok?: boolean } | null
          return {
            pid: r.pid,
            epoch: r["epoch"] as number,
            lsns: writes.flatMap((write) => (write.ok ? [write.lsn!] : [])),
            staleWriteAccepted: stale !== null && stale.ok === true
          }
        }))
      const log = await parent.runPromise(logOf("t-race"))
      const summary = LeaseLog.check(log, tenures)
      expect(summary.violations).toEqual([])
      expect(summary.holders.length).toBeGreaterThanOrEqual(target)
      // Every tenure the log records was reported by the process that held it, and the race
      // exercised both ways of taking the lease and more than one contender.
      expect(tenures.length).toBe(summary.holders.length)
      expect(new Set(summary.holders.map((holder) => holder.by))).toEqual(new Set(["acquire", "takeover"]))
      expect(new Set(summary.holders.map((holder) => holder.pid)).size).toBeGreaterThan(1)
      expect(summary.writes).toBeGreaterThanOrEqual(target)
    } finally {
      await parent.dispose()
    }
  }, 600_000)
}

describe("SQLite", () => {
  suite(() => {
    const home = tempHome()
    return { layer: SqliteStore.layer({ directory: home }), env: { LEASE_ENGINE: "sqlite", LEASE_HOME: home } }
  })
})

await describePostgres("PostgreSQL", () => {
  suite(() => {
    const schema = freshSchema("ratchet_lease")
    return { layer: postgresStore(schema), env: { LEASE_ENGINE: "postgres", LEASE_URL: testUrl(), LEASE_SCHEMA: schema } }
  })
})
