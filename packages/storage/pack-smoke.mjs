/**
 * Packaging smoke test for `@ratchet/storage`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball (with `@ratchet/kernel`'s beside it and the `effect`
 * peers), so it sees exactly what a user sees: the entry point resolves to the built `dist/`, the
 * whole index loads (the SQL modules and their `@effect/*` peers included), the read models fold
 * kernel events, the typed errors explain themselves, and `internal/*` stays closed. No database.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import { Event } from "@ratchet/kernel"
import { EventStore, ReadModel } from "@ratchet/storage"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/storage smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/storage")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const actor = { kind: "user", id: "smoke" }
const owner = { workspaceId: "ws", host: "cli", pid: 4242, processStartedAt: 1_700_000_000_000 }
/**
 * @param {number} lsn
 * @param {unknown} event
 */
const stored = (lsn, event) => ({
  lsn,
  projectId: "p",
  streamId: "t",
  branch: EventStore.mainBranch,
  version: lsn,
  epoch: null,
  operationId: `op-${lsn}`,
  recordedAt: 1_700_000_000_000 + lsn,
  event
})
const snapshot = ReadModel.fold([
  stored(1, Event.make({ _tag: "TaskCreated", actor, at: 1, taskId: "t", projectId: "p", goal: "smoke", slug: "smoke" })),
  stored(2, Event.make({ _tag: "LeaseAcquired", actor, at: 2, epoch: 1, owner, heartbeatMs: 5_000, graceMs: 30_000 }))
])
if (snapshot.summary?.task.state !== "INITIALIZING" || snapshot.summary.version !== 2 || snapshot.summary.lastLsn !== 2) {
  fail(`the fold should give an INITIALIZING task at version 2, LSN 2, got ${JSON.stringify(snapshot.summary)}`)
}
if (snapshot.lease?.held !== true || snapshot.lease.epoch !== 1 || snapshot.lease.heartbeatAt !== 1_700_000_000_002) {
  fail(`folding LeaseAcquired should give a lease held at epoch 1, got ${JSON.stringify(snapshot.lease)}`)
}

const conflict = new EventStore.VersionConflict({ streamId: "t", branch: "main", expected: 1, actual: 2 })
if (conflict._tag !== "@ratchet/storage/VersionConflict" || !conflict.message.startsWith("Stream t (branch main) is at version 2, not 1")) {
  fail(`VersionConflict should explain itself, got ${conflict._tag}: ${conflict.message}`)
}

const internal = await import("@ratchet/storage/internal/anything").then(
  () => "importable",
  (error) => (error?.code === "ERR_PACKAGE_PATH_NOT_EXPORTED" ? "closed" : `failing with ${error?.code ?? error}`)
)
if (internal !== "closed") fail(`@ratchet/storage/internal/* should not be exported, but it is ${internal}`)

console.log("ReadModel.fold(TaskCreated, LeaseAcquired) = INITIALIZING task, lease held at epoch 1; VersionConflict explains itself; internal/* is closed")
