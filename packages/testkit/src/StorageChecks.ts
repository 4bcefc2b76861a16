/**
 * The checks of the storage conformance suite, as plain Effects over the storage port.
 *
 * Each {@link Check} states one promise of `@ratchet/storage` (an append is atomic, a stale epoch
 * never lands, a read model equals its cold rebuild, …), drives the store through the port only,
 * and fails with a {@link ConformanceViolation} naming the promise and what the store did instead.
 * An unexpected store error fails the check with that error. Keeping the checks here, apart from
 * the vitest wiring in `StorageConformance`, lets a check be run against a deliberately broken
 * store to show that it would catch the bug.
 *
 * Every check works in streams and projects of its own (random ids), so checks may share a store
 * with each other and with whatever else is in it.
 *
 * The checks live by promise family under `internal/checks/` (appends, fencing, the log's order,
 * read models, blobs, task claims, processes); this module is the catalogue and the public surface.
 *
 * @since 0.1.0
 */
import { appendAtomic, appendCreates, concurrentInProcess, invalidIds, invalidShapes, projectFixed, unknownBranch, versionConflict } from "./internal/checks/Appends.js"
import { checks as claimChecks } from "./internal/checks/Claims.js"
import { blobDedup, blobHostile, blobMissing, blobRoundTrip, blobVerify } from "./internal/checks/Blobs.js"
import { leaseAcquire, leaseAcrossBranches, leaseDeadline, leaseHeartbeat, leaseHeld, leaseRelease, leaseTakeover } from "./internal/checks/Fencing.js"
import type { Check, ProcessCheck } from "./internal/checks/Kit.js"
import { forkErrors, forkNested, forkReads, lsnConcurrent, lsnGlobal, operationReplay, operationReused, readPaging, readRange } from "./internal/checks/Log.js"
import { processesFencingRace, processesOpen, processesStaleEpoch, processesVersionRace } from "./internal/checks/Processes.js"
import { type HistoryOptions, listTasks, readModelsForks, readModelsRandom, readModelsScripted, runFrontierScripted } from "./internal/checks/ReadModels.js"

/**
 * A promise the store broke (`ConformanceViolation`), and the structural difference of two values
 * the checks report (`difference`).
 *
 * @since 0.1.0
 * @category errors
 */
export { ConformanceViolation, difference } from "./internal/checks/Kit.js"
/**
 * One in-process check, and one that starts real OS processes against a shared store.
 *
 * @since 0.1.0
 * @category models
 */
export type { Check, ProcessCheck } from "./internal/checks/Kit.js"
/**
 * Read models against a cold fold of the log, and random task histories run through the store.
 *
 * @since 0.1.0
 * @category testing
 */
export { defaultHistoryRuns, expectReadModelsMatchLog, readModelsRandom, runHistory } from "./internal/checks/ReadModels.js"
/**
 * How many random histories `readmodels.random` runs.
 *
 * @since 0.1.0
 * @category models
 */
export type { HistoryOptions } from "./internal/checks/ReadModels.js"

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

/**
 * Every in-process check, in the order the suite runs them (`readmodels.random` is built from the
 * number of runs, see {@link readModelsRandom}).
 *
 * @since 0.1.0
 * @category testing
 */
export const checks = (options: { readonly histories?: HistoryOptions | undefined } = {}): ReadonlyArray<Check> => [
  appendCreates,
  appendAtomic,
  versionConflict,
  concurrentInProcess,
  projectFixed,
  unknownBranch,
  invalidIds,
  invalidShapes,
  leaseAcquire,
  leaseHeld,
  leaseTakeover,
  leaseRelease,
  leaseAcrossBranches,
  leaseDeadline,
  leaseHeartbeat,
  operationReplay,
  operationReused,
  lsnGlobal,
  lsnConcurrent,
  readRange,
  readPaging,
  forkReads,
  forkNested,
  forkErrors,
  readModelsScripted,
  readModelsForks,
  runFrontierScripted,
  listTasks,
  readModelsRandom(options.histories),
  blobRoundTrip,
  blobDedup,
  blobMissing,
  blobHostile,
  blobVerify,
  ...claimChecks
]

/**
 * Every multi-process check.
 *
 * @since 0.1.0
 * @category testing
 */
export const processChecks: ReadonlyArray<ProcessCheck> = [
  processesOpen,
  processesVersionRace,
  processesStaleEpoch,
  processesFencingRace
]
