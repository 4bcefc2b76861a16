/**
 * Long task histories for the benchmarks that read, recover or fold them, and stores holding them.
 *
 * A history is what a real Ratchet writes for one task: the kernel decides the lifecycle prefix
 * (created, interviewed, restated and approved, spec proposed and approved, preflight, plan
 * proposed and approved, run started under a writer lease), then the run loop's facts, attempt
 * after attempt of the plan's command step, nine events each, exactly as `Runner.ts` appends them:
 * `AttemptScheduled`, `AttemptTransitioned` Pending → Running, `IntentRecorded`, `IntentDispatched`,
 * `CommandExited`, `IntentResolved`, `AttemptTransitioned` Running → Failed, `BoundaryRecorded`
 * and a `step` checkpoint. It ends as a runner killed with SIGKILL leaves a task: its last attempt
 * Running with a dispatched, unresolved intent, under a lease nobody heartbeats (its grace is 1 ms,
 * so it has expired by the time anyone looks). The attempt, intent and checkpoint read models grow
 * with the history (one row each per attempt); the task summary does not.
 *
 * Stores are written through the real `EventStore.append` of `SqliteStore.layer`, in appends of
 * {@link batchSize} events, so every read model is the one the store maintains. Building a store of
 * a million events takes a while, so built stores are kept in the system's temporary directory,
 * keyed by a digest of what they hold and of the kernel and storage sources that wrote them.
 */
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import * as Task from "@ratchet/kernel/Task"
import * as EventStore from "@ratchet/storage/EventStore"
import * as Migrations from "@ratchet/storage/Migrations"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Events from "@ratchet/testkit/Events"
import * as Signing from "@ratchet/testkit/Signing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))

/** Raise when the histories below change: the stores built from the previous ones are rebuilt. */
const historyVersion = 1

/** Events per append when a store is built. */
export const batchSize = 1_000

/** The lease epoch the dead runner held. */
export const deadEpoch = 1

/** The plan's command step: neither idempotent nor probed, so recovery must block on it. */
export const stepId = "build"

const runner = Events.actors.runner
const user = Events.actors.user
const agent = Events.actors.agent
const system = Events.actors.system

const must = <A, E extends { readonly message: string }>(either: Either.Either<A, E>): A =>
  Either.getOrElse(either, (error) => {
    throw new Error(`the benchmark history is invalid: ${error.message}`)
  })

/**
 * What a history's task is doing when it ends: `dead-runner`, a runner killed with SIGKILL in the
 * middle of the command step (recovery's case); `awaiting-worker`, the run's command step done
 * after its failed attempts and the plan's manual step open, awaiting the worker a host session
 * becomes (the hook's worker path), its lease released.
 */
export type Ending = "dead-runner" | "awaiting-worker"

/** The plan's manual step (the `awaiting-worker` histories' plan only). */
export const manualStepId = "edit"

interface Contract {
  readonly spec: Spec.Spec
  readonly plan: Plan.Plan
  readonly digests: { readonly specDigest: Digest.Digest; readonly planDigest: Digest.Digest }
}
const contracts = new Map<Ending, Contract>()
const contractOf = (ending: Ending = "dead-runner"): Contract => {
  const known = contracts.get(ending)
  if (known !== undefined) return known
  const spec = must(Spec.decode({
    goal: "Keep the nightly build green",
    acceptanceCriteria: [{ id: "AC-001", outcome: "the build passes", required: true, verify: { command: "true" } }],
    execution: { allowedScope: ["src/**"] }
  }))
  const steps: Array<unknown> = [{ id: stepId, title: "Build", acRefs: ["AC-001"], run: { command: "true" } }]
  if (ending === "awaiting-worker") {
    steps.push({ id: manualStepId, title: "Fix the build", acRefs: ["AC-001"], manual: { instructions: "Fix src/ so the build passes." } })
  }
  const plan = must(Plan.decode({ specDigest: Spec.digest(spec), steps }, spec))
  const made = { spec, plan, digests: { specDigest: Spec.digest(spec), planDigest: Plan.digest(plan) } }
  contracts.set(ending, made)
  return made
}

let approverKey: Signing.TestKey | undefined
// Made on first use, not at import.
const approver = (): Signing.TestKey => (approverKey ??= Signing.keyOf(1))

/** The project's approvers (the user alone), as the decider is given them. */
const authorityOf = (key: TaskKey) => Signing.authorityFor(key.projectId, [{ id: user.id, key: approver().key }])

/** The user's signed receipt for `subject` of `key`'s task at `revision` (null for a restatement). */
const receipt = (key: TaskKey, subject: Event.ReceiptSubject, digest: Digest.Digest, revision: number | null, at: number): Event.Receipt =>
  Signing.receipt(approver(), key.projectId, key.taskId, revision, { subject, digest, actor: user, channel: "terminal", at })

/** One append of a history: its events and the lease epoch it presents. */
export interface Batch {
  readonly epoch: number | null
  readonly events: ReadonlyArray<Event.Event>
}

/** The identity of one task of a history. */
export interface TaskKey {
  readonly projectId: string
  readonly taskId: string
}

const runIdOf = (taskId: string) => `run-${taskId}`

/**
 * The lifecycle prefix, decided by the kernel: two appends (the interview to the approved plan;
 * the lease, the run start and its checkpoint).
 */
const prefix = (key: TaskKey, at: number, ending: Ending): ReadonlyArray<Batch> => {
  const { plan, spec } = contractOf(ending)
  let aggregate: Task.Aggregate = Task.initial
  const decide = (command: Task.Command): ReadonlyArray<Event.Event> => {
    const events = must(Task.decide(command, aggregate))
    for (const event of events) aggregate = Task.evolve(aggregate, event)
    return events
  }
  const task = () => aggregate as Task.Task
  const first: Array<Event.Event> = [
    ...decide({ _tag: "CreateTask", actor: user, at, taskId: key.taskId, projectId: key.projectId, goal: "Keep the nightly build green", slug: "nightly" }),
    ...decide({ _tag: "BeginInterview", actor: user, at, projectInitialized: true, storeWritable: true }),
    ...decide({ _tag: "Restate", actor: agent, at, text: "Make the nightly build pass again." })
  ]
  first.push(...decide({
    _tag: "ApproveRestatement",
    actor: user,
    at,
    receipt: receipt(key, "restatement", task().brief.restatement!.digest, null, at),
    authority: authorityOf(key)
  }))
  first.push(...decide({ _tag: "CloseBrief", actor: user, at }))
  first.push(...decide({ _tag: "ProposeSpec", actor: agent, at, spec }))
  first.push(...decide({
    _tag: "ApproveSpec",
    actor: user,
    at,
    receipt: receipt(key, "spec", task().spec!.digest, task().spec!.revision, at),
    authority: authorityOf(key)
  }))
  first.push(...decide({
    _tag: "RecordPreflight",
    actor: system,
    at,
    observation: { head: "abc123", dirtyPaths: [], missingPaths: [], invalidScopes: [] }
  }))
  first.push(...decide({ _tag: "ProposePlan", actor: agent, at, plan }))
  first.push(...decide({
    _tag: "ApprovePlan",
    actor: user,
    at,
    receipt: receipt(key, "plan", task().plan!.digest, task().plan!.revision, at),
    authority: authorityOf(key)
  }))
  const runId = runIdOf(key.taskId)
  const second: Array<Event.Event> = [
    Events.leaseAcquired(deadEpoch, Events.owner("dead-runner"), { heartbeatMs: 1, graceMs: 1 }, { at }),
    ...decide({
      _tag: "StartRun",
      actor: runner,
      at,
      runId,
      specDigest: task().spec!.digest,
      planDigest: task().plan!.digest,
      lease: { held: true, epoch: deadEpoch },
      authority: authorityOf(key)
    }),
    Events.checkpointRecorded("run_start", runId, { at })
  ]
  return [{ epoch: null, events: first }, { epoch: deadEpoch, events: second }]
}

/** The nine events of one failed (or, with `succeeded`, successful) attempt, as the runner appends them. */
const attemptCycle = (key: TaskKey, attempt: number, at: number, ending: Ending = "dead-runner", succeeded = false): ReadonlyArray<Event.Event> => {
  const { digests } = contractOf(ending)
  const runId = runIdOf(key.taskId)
  const target = { runId, stepId, attempt }
  const intentId = `in-${attempt}`
  const meta = { at: at + attempt }
  return [
    Events.attemptScheduled(runId, stepId, attempt, meta),
    Events.attemptTransitioned({ ...target, from: "Pending", to: "Running" }, meta),
    Events.intentRecorded(intentId, { ...target, description: "true" }, meta),
    Events.intentDispatched(intentId, meta),
    Events.commandExited(intentId, target, { exitCode: succeeded ? 0 : 1 }, meta),
    Events.intentResolved(intentId, succeeded ? "Succeeded" : "Failed", [], meta),
    Events.attemptTransitioned({ ...target, from: "Running", to: succeeded ? "Succeeded" : "Failed" }, meta),
    Events.boundaryRecorded(runId, digests, succeeded ? manualStepId : stepId, meta),
    Events.checkpointRecorded("step", runId, meta)
  ]
}

/** The open attempt a killed runner leaves: admitted, its intent recorded and dispatched. */
const openAttempt = (key: TaskKey, attempt: number, at: number): ReadonlyArray<Event.Event> => {
  const runId = runIdOf(key.taskId)
  const target = { runId, stepId, attempt }
  const intentId = `in-${attempt}`
  const meta = { at: at + attempt }
  return [
    Events.attemptScheduled(runId, stepId, attempt, meta),
    Events.attemptTransitioned({ ...target, from: "Pending", to: "Running" }, meta),
    Events.intentRecorded(intentId, { ...target, description: "true" }, meta),
    Events.intentDispatched(intentId, meta)
  ]
}

/**
 * How an `awaiting-worker` history ends, after its failed attempts: the command step's successful
 * attempt (its boundary names the manual step next), the manual step's attempt opened (scheduled
 * and running, no intent: its worker's calls open them), and the dead runner's lease released, as
 * a runner that stopped at the manual step leaves it.
 */
const workerOpening = (key: TaskKey, attempt: number, at: number): ReadonlyArray<Event.Event> => {
  const runId = runIdOf(key.taskId)
  const meta = { at: at + attempt + 1 }
  const target = { runId, stepId: manualStepId, attempt: 1 }
  return [
    ...attemptCycle(key, attempt, at, "awaiting-worker", true),
    Events.attemptScheduled(runId, manualStepId, 1, meta),
    Events.attemptTransitioned({ ...target, from: "Pending", to: "Running" }, meta),
    Events.leaseReleased(deadEpoch, meta)
  ]
}

/** The number of events after the filler that a history of `ending` ends with. */
const endingLength = (ending: Ending): number => ending === "dead-runner" ? 4 : 12

/**
 * A history of exactly `length` events (at least the prefix and its ending), as appends of at
 * most {@link batchSize} events.
 */
export const history = (key: TaskKey, length: number, at = 1_700_000_000_000, ending: Ending = "dead-runner"): ReadonlyArray<Batch> => {
  const start = prefix(key, at, ending)
  const before = start.reduce((sum, batch) => sum + batch.events.length, 0)
  const room = length - before - endingLength(ending)
  if (room < 0) throw new Error(`a history needs at least ${before + 4} events`)
  const cycles = Math.floor(room / 9)
  const padding = room - cycles * 9
  const filler: Array<Event.Event> = []
  for (let attempt = 1; attempt <= cycles; attempt++) filler.push(...attemptCycle(key, attempt, at, ending))
  const last = { runId: runIdOf(key.taskId), stepId, attempt: Math.max(cycles, 1) }
  for (let i = 0; i < padding; i++) filler.push(Events.attemptNoted(last, `note ${i}`, { at }))
  filler.push(...(ending === "dead-runner" ? openAttempt(key, cycles + 1, at) : workerOpening(key, cycles + 1, at)))
  const batches: Array<Batch> = [...start]
  for (let i = 0; i < filler.length; i += batchSize) batches.push({ epoch: deadEpoch, events: filler.slice(i, i + batchSize) })
  return batches
}

/** Every event of a history, in order. */
export const events = (key: TaskKey, length: number): ReadonlyArray<Event.Event> => history(key, length).flatMap((batch) => batch.events)

/** A task of a store: its identity, its history's length and how it ends (`dead-runner` when not said). */
export type StoredTask = TaskKey & { readonly length: number; readonly ending?: Ending }

/** Writes `tasks`' histories into the SQLite store in `directory`, through `EventStore.append`. */
export const writeStore = async (directory: string, tasks: ReadonlyArray<StoredTask>): Promise<void> => {
  // NORMAL: the store is a fixture, rebuilt if a crash cut it short; the readers open it as usual.
  const runtime = ManagedRuntime.make(SqliteStore.layer({ directory, synchronous: "NORMAL" }))
  try {
    const store = await runtime.runPromise(EventStore.EventStore)
    for (const task of tasks) {
      let version = 0
      let operation = 0
      for (const batch of history(task, task.length, undefined, task.ending)) {
        const result = await runtime.runPromise(store.append({
          projectId: task.projectId,
          streamId: task.taskId,
          expectedVersion: version,
          epoch: batch.epoch,
          operationId: `${task.taskId}-${operation++}`,
          events: batch.events
        }))
        version = result.version
      }
      if (version !== task.length) throw new Error(`${task.taskId} has ${version} events, expected ${task.length}`)
    }
    await runtime.runPromise(Effect.void)
  } finally {
    await runtime.dispose()
  }
}

const sourceDigest = (): string => {
  const hash = crypto.createHash("sha256")
  const visit = (directory: string) => {
    for (const entry of fs.readdirSync(directory, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(directory, entry.name)
      if (entry.isDirectory()) visit(full)
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) hash.update(entry.name).update(fs.readFileSync(full))
    }
  }
  for (const source of ["packages/kernel/src", "packages/storage/src", "packages/storage-sqlite/src", "packages/testkit/src/Events.ts"]) {
    const full = path.join(repositoryRoot, source)
    if (fs.statSync(full).isDirectory()) visit(full)
    else hash.update(source).update(fs.readFileSync(full))
  }
  return hash.digest("hex").slice(0, 16)
}

/** Where built stores are kept between runs. */
export const cacheRoot = (): string => path.join(os.tmpdir(), "ratchet-bench-histories")

/**
 * The directory of a store holding `tasks` (its `ratchet.db`), built on first use and kept: the
 * key is a digest of the tasks, the schema version and the sources that write the store.
 * Returns the directory and whether it was built now (and how long that took).
 */
export const cachedStore = async (
  name: string,
  tasks: ReadonlyArray<StoredTask>
): Promise<{ readonly directory: string; readonly builtMs: number | null }> => {
  const key = crypto.createHash("sha256")
    .update(JSON.stringify({ name, historyVersion, tasks, batchSize, schema: Migrations.latestVersion, sources: sourceDigest() }))
    .digest("hex")
    .slice(0, 16)
  const directory = path.join(cacheRoot(), `${name}-${key}`)
  const complete = () => fs.existsSync(path.join(directory, "complete"))
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
  // Another benchmark process building the same store: wait for it rather than build it twice.
  const builder = () =>
    fs.existsSync(cacheRoot())
      ? fs.readdirSync(cacheRoot()).map((entry) => /\.building-(\d+)$/.exec(entry)?.[1]).find((pid) =>
        pid !== undefined && fs.existsSync(`${directory}.building-${pid}`) && alive(Number(pid))
      )
      : undefined
  while (!complete() && builder() !== undefined) await new Promise((resolve) => setTimeout(resolve, 1_000))
  if (complete()) return { directory, builtMs: null }
  // Older versions of this store, and builds whose process died, are of no further use.
  if (fs.existsSync(cacheRoot())) {
    for (const entry of fs.readdirSync(cacheRoot())) {
      const pid = /\.building-(\d+)$/.exec(entry)?.[1]
      if (entry.startsWith(`${name}-`) && (pid === undefined ? entry !== path.basename(directory) : !alive(Number(pid)))) {
        fs.rmSync(path.join(cacheRoot(), entry), { recursive: true, force: true })
      }
    }
  }
  const started = performance.now()
  const building = `${directory}.building-${process.pid}`
  fs.rmSync(building, { recursive: true, force: true })
  await writeStore(building, tasks)
  fs.writeFileSync(path.join(building, "complete"), `${new Date().toISOString()}\n`)
  fs.renameSync(building, directory)
  return { directory, builtMs: performance.now() - started }
}

/**
 * Whether `bench/run.ts`'s filters (its arguments) keep any of `ids`: a suite none of whose pairs
 * would run skips its preparation (building a store of a million events for nothing).
 */
export const wanted = (ids: ReadonlyArray<string>): boolean => {
  const filters = process.argv.slice(2)
  return filters.length === 0 || ids.some((id) => filters.some((filter) => id.includes(filter)))
}

/** Copies the store in `from` (the database and its WAL, if any) into `to`. */
export const copyStore = (from: string, to: string): void => {
  fs.mkdirSync(to, { recursive: true })
  for (const name of ["ratchet.db", "ratchet.db-wal", "ratchet.db-shm"]) {
    if (fs.existsSync(path.join(from, name))) fs.copyFileSync(path.join(from, name), path.join(to, name))
  }
}
