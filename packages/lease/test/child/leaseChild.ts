/**
 * A lease-holding OS process for the multi-process lease tests. It opens the store the parent
 * names in its environment and plays one role, reporting on stdout as JSON lines:
 *
 * - `holder`: acquires the lease of `LEASE_TASK` and holds it with a heartbeat fiber while writing
 *   a checkpoint every 25 ms under its epoch, reporting each write, until killed or fenced.
 * - `zombie`: acquires, writes three checkpoints, heartbeats once and reports `ready`, then waits
 *   for a line on stdin (sent while it is stopped) and tries, once resumed, to write and to
 *   heartbeat under its old epoch, reporting both outcomes (and what the lost lease says).
 * - `contender`: contends for the lease until its epoch reaches `LEASE_TARGET`: acquires a free
 *   lease or takes over an expired one, writes one or two checkpoints under it, then releases it
 *   (three times in four) or abandons it; after a release it tries a stale write with the old
 *   epoch. It reports every tenure.
 *
 * Environment: `LEASE_ENGINE` (`sqlite` with `LEASE_HOME`, or `postgres` with `LEASE_URL` and
 * `LEASE_SCHEMA`), `LEASE_PROJECT`, `LEASE_TASK`, `LEASE_HEARTBEAT_MS`, `LEASE_GRACE_MS`,
 * `LEASE_TARGET` (contender), `LEASE_NAME`.
 */
import { createInterface } from "node:readline"
import * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import { PostgresStore } from "@ratchet/storage-postgres"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as LeaseManager from "../../src/LeaseManager.js"
import * as Owner from "../../src/Owner.js"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`leaseChild: ${name} is not set`)
  return value
}

const role = process.argv[2]
const projectId = env("LEASE_PROJECT")
const taskId = env("LEASE_TASK")
const key: LeaseManager.Key = { projectId, taskId }
const settings = { heartbeatMs: Number(env("LEASE_HEARTBEAT_MS")), graceMs: Number(env("LEASE_GRACE_MS")) }

const store = env("LEASE_ENGINE") === "postgres"
  ? PostgresStore.layer({ url: env("LEASE_URL"), schema: env("LEASE_SCHEMA"), maxConnections: 2 })
  : SqliteStore.layer({ directory: env("LEASE_HOME") })
const layer = Layer.provideMerge(LeaseManager.layer(settings), store)

const report = (line: Record<string, unknown>) => Effect.sync(() => process.stdout.write(`${JSON.stringify({ pid: process.pid, ...line })}\n`))

const actor: Event.Actor = { kind: "runner", id: `child-${process.pid}` }
const checkpointEvent = (runId: string): Event.Event =>
  Event.make<typeof Event.CheckpointRecorded.Type>({ _tag: "CheckpointRecorded", actor, at: Date.now(), kind: "step", runId })

/** One write at the head under `epoch`, retrying a moved head; the outcome as a report. */
const writeUnder = (epoch: number, runId: string) =>
  Effect.gen(function*() {
    const events = yield* EventStore.EventStore
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const head = yield* events.head(taskId)
      const result = yield* Effect.either(
        events.append({
          projectId,
          streamId: taskId,
          expectedVersion: head?.version ?? 0,
          epoch,
          operationId: `${runId}-${crypto.randomUUID()}`,
          events: [checkpointEvent(runId)]
        })
      )
      if (result._tag === "Right") return { ok: true as const, lsn: result.right.lastLsn }
      if (result.left._tag !== "@ratchet/storage/VersionConflict") return { ok: false as const, tag: result.left._tag }
    }
    return { ok: false as const, tag: "gave up after 50 version conflicts" }
  })

const holder = Effect.gen(function*() {
  const leases = yield* LeaseManager.LeaseManager
  const owner = yield* Owner.current({ workspaceId: "ws-test", host: env("LEASE_NAME") })
  const held = yield* leases.hold(key, owner)
  yield* report({ event: "held", epoch: held.epoch })
  for (let n = 0;; n += 1) {
    const outcome = yield* writeUnder(held.epoch, `holder-${n}`)
    yield* report({ event: "wrote", epoch: held.epoch, ...outcome })
    if (!outcome.ok) return
    yield* Effect.sleep("25 millis")
  }
}).pipe(Effect.scoped)

const zombie = Effect.gen(function*() {
  const leases = yield* LeaseManager.LeaseManager
  const owner = yield* Owner.current({ workspaceId: "ws-test", host: env("LEASE_NAME") })
  const lease = yield* leases.acquire(key, owner)
  const lsns: Array<number> = []
  for (let n = 0; n < 3; n += 1) {
    const outcome = yield* writeUnder(lease.epoch, `zombie-${n}`)
    if (outcome.ok) lsns.push(outcome.lsn)
  }
  yield* leases.heartbeat(lease)
  yield* report({ event: "ready", epoch: lease.epoch, lsns })
  // Stopped here by the parent; the line it sends while we are stopped wakes us up.
  yield* Effect.async<void>((resume) => {
    const lines = createInterface({ input: process.stdin })
    lines.once("line", () => {
      lines.close()
      resume(Effect.void)
    })
  })
  const write = yield* writeUnder(lease.epoch, "zombie-late")
  const beat = yield* Effect.either(leases.heartbeat(lease))
  yield* report({
    event: "resumed",
    write,
    heartbeat: beat._tag === "Right" ? "ok" : beat.left._tag,
    message: beat._tag === "Right" ? null : beat.left.message
  })
})

const contender = Effect.gen(function*() {
  const leases = yield* LeaseManager.LeaseManager
  const owner = yield* Owner.current({ workspaceId: "ws-test", host: env("LEASE_NAME") })
  const target = Number(env("LEASE_TARGET"))
  let tenures = 0
  for (;;) {
    const seen = yield* leases.observe(key)
    if ((seen.epoch ?? 0) >= target) break
    const taken = seen.status === "free"
      ? yield* Effect.either(leases.acquire(key, owner))
      : seen.status === "expired"
      ? yield* Effect.either(Effect.map(leases.takeover(key, owner), (took) => took.lease))
      : undefined
    if (taken !== undefined && taken._tag === "Left" && taken.left._tag === "@ratchet/lease/LeaseLost") {
      // Taken, committed, and lost before the read-back: stalled past the grace (a loaded machine),
      // a tenure of the log all the same, with nothing written under it.
      tenures += 1
      yield* report({ event: "tenure", epoch: taken.left.epoch, writes: [], released: false, stale: null, lost: true })
      continue
    }
    if (taken === undefined || taken._tag === "Left") {
      yield* Effect.sleep(`${1 + Math.floor(Math.random() * 4)} millis`)
      continue
    }
    const lease = taken.right
    tenures += 1
    const writes: Array<unknown> = []
    for (let n = 0; n < 1 + (tenures % 2); n += 1) writes.push(yield* writeUnder(lease.epoch, `c${process.pid}-e${lease.epoch}-${n}`))
    const release = Math.random() < 0.75
    let stale: unknown = null
    if (release) {
      const released = yield* Effect.either(leases.release(lease))
      if (released._tag === "Right") stale = yield* writeUnder(lease.epoch, `stale-${lease.epoch}`)
      else stale = { released: released.left._tag }
    }
    yield* report({ event: "tenure", epoch: lease.epoch, writes, released: release, stale })
  }
  yield* report({ event: "done", tenures })
})

const roles: Record<string, Effect.Effect<void, unknown, LeaseManager.LeaseManager | EventStore.EventStore>> = { holder, zombie, contender }
const program = roles[role ?? ""] ?? Effect.dieMessage(`unknown role ${role}`)

Effect.runPromise(program.pipe(Effect.provide(layer))).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`leaseChild ${role} failed: ${String(error)}\n`)
    process.exit(1)
  }
)
