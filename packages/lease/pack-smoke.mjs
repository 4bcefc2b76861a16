/**
 * Packaging smoke test for `@ratchet/lease`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball (with `@ratchet/storage`'s and `@ratchet/kernel`'s
 * beside it and the `effect` peers), so it sees exactly what a user sees: the entry point resolves
 * to the built `dist/`, the settings resolve to their defaults, an owner names this process, and a
 * lease manager runs over the storage ports. The ports are in-memory stubs holding no lease, so no
 * database is needed; every method `observe` must not call dies.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import { LeaseManager, LeaseSettings, Owner } from "@ratchet/lease"
import { EventStore, LeaseStore, ReadModel } from "@ratchet/storage"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/lease smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/lease")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

// An empty configuration, so a `RATCHET_LEASE_*` variable in the caller's environment cannot move the defaults.
const settings = await Effect.runPromise(
  LeaseSettings.fromConfig().pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
)
if (settings.heartbeatMs !== 5_000 || settings.graceMs !== 30_000) {
  fail(`LeaseSettings.fromConfig() should be the defaults {heartbeatMs: 5000, graceMs: 30000}, got ${JSON.stringify(settings)}`)
}

const owner = await Effect.runPromise(Owner.current({ workspaceId: "ws", host: "cli" }))
if (owner.pid !== process.pid) fail(`Owner.current should name this process (pid ${process.pid}), got ${JSON.stringify(owner)}`)

/**
 * A stub method that must not be reached.
 *
 * @param {string} method
 */
const unused = (method) => () => Effect.dieMessage(`the smoke's stub ${method} was called`)
const now = 1_700_000_000_000
const observation = await Effect.runPromise(
  Effect.flatMap(LeaseManager.make(settings), (manager) => manager.observe({ projectId: "p", taskId: "t" })).pipe(
    Effect.provideService(EventStore.EventStore, {
      append: unused("EventStore.append"),
      read: unused("EventStore.read"),
      head: unused("EventStore.head"),
      fork: unused("EventStore.fork"),
      branches: unused("EventStore.branches")
    }),
    Effect.provideService(ReadModel.ReadModels, {
      taskSummary: unused("ReadModels.taskSummary"),
      listTasks: unused("ReadModels.listTasks"),
      attempts: unused("ReadModels.attempts"),
      openIntents: unused("ReadModels.openIntents"),
      lease: () => Effect.succeed(null),
      checkpoints: unused("ReadModels.checkpoints"),
      snapshot: unused("ReadModels.snapshot"),
      rebuild: unused("ReadModels.rebuild")
    }),
    Effect.provideService(LeaseStore.LeaseStore, { heartbeat: unused("LeaseStore.heartbeat"), now: Effect.succeed(now) })
  )
)
if (observation.status !== "free" || observation.epoch !== null || observation.holder !== null || observation.now !== now) {
  fail(`observing a task never leased should be free at epoch null by the store's clock, got ${JSON.stringify(observation)}`)
}

console.log(
  "LeaseSettings.fromConfig() = {heartbeatMs: 5000, graceMs: 30000}; Owner.current names this pid; LeaseManager.observe over stub ports = free"
)
