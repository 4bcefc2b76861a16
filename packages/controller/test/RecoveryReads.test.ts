/**
 * What a runner reads when it starts after a crash, over a real SQLite store, a real git checkout
 * and the real runner: a task RUNNING whose last attempt a killed runner left Running with a
 * dispatched intent, under a lease whose grace has passed, after a long history of failed attempts
 * of the same step. The runner takes the lease over, marks the attempt Indeterminate, blocks the
 * task and writes its report.
 *
 * The store's services are wrapped to count the rows they hand back (events read, attempts,
 * intents, checkpoints, summaries, leases). The count must not depend on the history's length —
 * the same for 60 failed attempts as for 240 — and no read may return every attempt, intent or
 * event of the branch (`snapshot`, `attempts`, `rebuild`, a read from the branch's first event).
 * The same holds for what a person then reads: the task's status, its gate, the run page's window.
 * Rows, not time: the test holds on a loaded machine.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Events from "@ratchet/testkit/Events"
import * as Signing from "@ratchet/testkit/Signing"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Controller from "../src/Controller.js"
import * as ProjectApprovers from "../src/ProjectApprovers.js"
import * as Runner from "../src/Runner.js"
import * as RunReport from "../src/RunReport.js"
import * as WorkTree from "../src/WorkTree.js"
import type * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-recovery-reads-")

const person: Event.Actor = { kind: "user", id: "ana" }
const asPerson: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(6), person.id) }
const runner: Event.Actor = { kind: "runner", id: "runner-1" }

const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", ...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })

/** Rows the store's services handed back, and which reads returned them. */
interface Tally {
  rows: number
  readonly reads: Array<string>
}

/**
 * The store's services, each read counted into `tally`: the rows it returns (an event read counts
 * its events), and its name; a read of events from the branch's start is named `read-all`.
 */
const counting = (tally: Tally) =>
  Layer.effectContext(Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const models = yield* ReadModel.ReadModels
    const seen = (name: string, rows: number) =>
      Effect.sync(() => {
        tally.rows += rows
        tally.reads.push(name)
      })
    const counted = <A, E>(name: string, effect: Effect.Effect<A, E>, rows: (a: A) => number) => Effect.tap(effect, (a) => seen(name, rows(a)))
    const counter: EventStore.Service = {
      ...store,
      read: (request) =>
        Stream.unwrap(Effect.as(
          // The project's approvers chain is read whole by design (it is short): named apart.
          seen((request.fromLsn ?? 0) <= 1 ? (request.streamId.startsWith("approvers.") ? "read-approvers" : "read-all") : "read", 0),
          Stream.tap(store.read(request), () => Effect.sync(() => (tally.rows += 1)))
        ))
    }
    const sizes = (state: { readonly attempts: ReadonlyMap<string, unknown>; readonly intents: ReadonlyMap<string, unknown> }) =>
      state.attempts.size + state.intents.size
    const models_: ReadModel.Service = {
      taskSummary: (...args) => counted("taskSummary", models.taskSummary(...args), (row) => (row === null ? 0 : 1)),
      listTasks: (...args) => counted("listTasks", models.listTasks(...args), (rows) => rows.length),
      attempts: (...args) => counted("attempts", models.attempts(...args), (rows) => rows.length),
      openIntents: (...args) => counted("openIntents", models.openIntents(...args), (rows) => rows.length),
      lease: (...args) => counted("lease", models.lease(...args), (row) => (row === null ? 0 : 1)),
      checkpoints: (...args) => counted("checkpoints", models.checkpoints(...args), (rows) => rows.length),
      runFrontier: (...args) => counted("runFrontier", models.runFrontier(...args), sizes),
      snapshot: (...args) => counted("snapshot", models.snapshot(...args), (state) => sizes(state) + state.checkpoints.length),
      rebuild: (...args) => counted("rebuild", models.rebuild(...args), (state) => sizes(state) + state.checkpoints.length)
    }
    return Context.make(EventStore.EventStore, counter).pipe(
      Context.add(ReadModel.ReadModels, models_),
      Context.add(LeaseStore.LeaseStore, yield* LeaseStore.LeaseStore),
      Context.add(BlobStore.BlobStore, yield* BlobStore.BlobStore)
    )
  }))

/** A checkout with one commit, and the services over a fresh store, every read counted into `tally`. */
const worldOf = (tally: Tally) => {
  const root = temp()
  fs.mkdirSync(path.join(root, "src"))
  fs.writeFileSync(path.join(root, "src", "index.ts"), "export {}\n")
  git(root, "init", "-q")
  git(root, "add", "-A")
  git(root, "commit", "-q", "-m", "start")
  const home = temp()
  const project: Workspace.Located = {
    root,
    projectFile: path.join(root, ".ratchet", "project.json"),
    project: { schemaVersion: 1, projectId: "prj-recovery", displayName: "recovery", createdAt: "2026-12-05T00:00:00.000Z" },
    workspaceId: "ws-here",
    git: true
  }
  const store = counting(tally).pipe(Layer.provide(SqliteStore.layer({ directory: home })))
  const leases = LeaseManager.layer({ heartbeatMs: 60_000, graceMs: 120_000 }).pipe(Layer.provide(store))
  return { root, home, layer: Layer.provideMerge(Controller.layer, Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, project))) }
}

const spec = [
  "---",
  "goal: Keep the nightly build green",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: the build passes",
  "    required: true",
  "    verify: { command: \"true\" }",
  "execution:",
  "  allowedScope: [\"src/**\"]",
  "---",
  ""
].join("\n")

/** One command step, neither idempotent nor probed: recovery must block on it. */
const plan = ["steps:", "  - id: build", "    title: Build", "    acRefs: [AC-001]", "    run: { command: \"true\" }", ""].join("\n")

/**
 * A task of `world` approved, then the log a runner killed with SIGKILL leaves after `failed`
 * failed attempts of `build`: each started, ended Failed, its boundary and checkpoint recorded;
 * then attempt `failed + 1` started, its intent dispatched, nothing after. The dead runner's lease
 * has a grace of 1 ms, so it has expired by the time the next runner looks. Every event is the
 * kernel's own decision, appended in one batch.
 */
const killedAfter = (world: { readonly root: string }, failed: number) =>
  Effect.gen(function*() {
    const c = yield* Controller.Controller
    const store = yield* EventStore.EventStore
    const files = temp()
    yield* c.approvers.register(asPerson.signer!)
    git(world.root, "add", ".ratchet/approvers.json")
    git(world.root, "commit", "-q", "-m", "approvers")
    const taskId = (yield* c.createTask({ goal: "Keep the nightly build green" }, asPerson)).task.taskId
    const approve = (subject: "restatement" | "spec" | "plan") =>
      Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, asPerson))
    yield* c.restate(taskId, "Make the nightly build pass again.", asPerson)
    yield* approve("restatement")
    yield* c.closeBrief(taskId, asPerson)
    fs.writeFileSync(path.join(files, "spec.md"), spec)
    yield* c.proposeSpec(taskId, path.join(files, "spec.md"), asPerson)
    yield* approve("spec")
    yield* c.preflight(taskId, asPerson)
    fs.writeFileSync(path.join(files, "plan.yaml"), plan)
    yield* c.proposePlan(taskId, path.join(files, "plan.yaml"), asPerson)
    yield* approve("plan")

    const summary = (yield* ReadModel.ReadModels.pipe(Effect.flatMap((models) => models.taskSummary(taskId))))!
    const task = summary.task
    const authority = yield* ProjectApprovers.authority(c.project.project.projectId, world.root)
    const tree = yield* WorkTree.observe(world.root)
    const at = Date.now()
    const meta = { version: 1 as const, actor: runner, at }
    const runId = "run-killed"
    const exit: Run.Exit = { exitCode: 1, signal: null, durationMs: 5, timedOut: false, stdoutRef: null, stderrRef: null, outputTail: "error", changedPaths: [] }
    const items: Array<Decider.Command | Event.Event> = [
      Events.leaseAcquired(1, Events.owner("dead-runner"), { heartbeatMs: 1, graceMs: 1 }, { at }),
      { _tag: "StartRun", actor: runner, at, runId, specDigest: task.spec!.digest, planDigest: task.plan!.digest, lease: { held: true, epoch: 1 }, authority },
      { _tag: "CheckpointRecorded", ...meta, kind: "run_start", runId }
    ]
    for (let attempt = 1; attempt <= failed; attempt++) {
      const intentId = `in-${attempt}`
      items.push(
        { _tag: "StartStep", actor: runner, at, runId, stepId: "build", attempt, scheduled: false, effect: { intentId, description: "true" } },
        { _tag: "FinishStep", actor: runner, at, runId, stepId: "build", attempt, intentId, exit, outcome: "Failed", resultRefs: [] },
        {
          _tag: "BoundaryRecorded",
          ...meta,
          runId,
          head: tree.head,
          dirtyPaths: [...tree.dirty.keys()],
          dirtyDigest: WorkTree.dirtyDigest(tree),
          specDigest: task.spec!.digest,
          planDigest: task.plan!.digest,
          nextStep: "build"
        },
        { _tag: "CheckpointRecorded", ...meta, kind: "step", runId }
      )
    }
    const open = failed + 1
    items.push({ _tag: "StartStep", actor: runner, at, runId, stepId: "build", attempt: open, scheduled: false, effect: { intentId: `in-${open}`, description: "true" } })
    const decided = Either.getOrThrow(Decider.decideAll(items, { task, run: Run.initial }, summary.lastLsn + 1))
    yield* store.append({
      projectId: c.project.project.projectId,
      streamId: taskId,
      expectedVersion: summary.version,
      epoch: 1,
      operationId: `op-killed-${failed}`,
      events: decided.events
    })
    return taskId
  })

/**
 * A world of `failed` failed attempts before the kill, the dead runner's grace passed, and `then`
 * run in it with a function that counts reads from zero again (its first call is right away).
 */
const afterKill = <A, E>(
  failed: number,
  then: (
    taskId: string,
    world: { readonly root: string; readonly home: string },
    counted: () => { readonly rows: number; readonly reads: ReadonlyArray<string> },
    reset: () => void
  ) => Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof worldOf>["layer"]>>
) =>
  Effect.gen(function*() {
    const tally: Tally = { rows: 0, reads: [] }
    const world = worldOf(tally)
    const reset = () => {
      tally.rows = 0
      tally.reads.length = 0
    }
    return yield* Effect.gen(function*() {
      const taskId = yield* killedAfter(world, failed)
      yield* Effect.sleep("5 millis")
      reset()
      return yield* then(taskId, world, () => ({ rows: tally.rows, reads: [...tally.reads] }), reset)
    }).pipe(Effect.provide(world.layer))
  })

/**
 * After the runner's recovery, what a person looking at the BLOCKED task reads: `ratchet status`
 * and `ratchet gate`'s reads (the gate's pending and unsettled steps), and the run page's last
 * window of 20 boundaries (`RunReport.recentRun`).
 */
const lookAfter = (failed: number) =>
  afterKill(failed, (taskId, world, counted, reset) =>
    Effect.gen(function*() {
      yield* Runner.run({ taskId, takeover: true, actor: runner, home: world.home })
      const c = yield* Controller.Controller
      reset()
      const view = yield* c.status(taskId)
      const gate = yield* c.gate(taskId, undefined)
      const recent = yield* RunReport.recentRun(taskId, "run-killed", 20)
      return { view, gate, recent, read: counted() }
    }))

/** A runner's start after the kill in a world of `failed` failed attempts: its outcome, and what it read. */
const recoverAfter = (failed: number) =>
  afterKill(failed, (taskId, world, counted) =>
    Effect.gen(function*() {
      const outcome = yield* Runner.run({ taskId, takeover: true, actor: runner, home: world.home })
      const read = counted()
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* EventStore.EventStore).read({ streamId: taskId })))
      const report = fs.readFileSync(path.join(world.root, ".ratchet", "tasks", fs.readdirSync(path.join(world.root, ".ratchet", "tasks"))[0]!, "run.md"), "utf8")
      return { outcome, read, events, report }
    }))

describe("a runner's start after a crash reads what recovery needs, not the history", () => {
  it.live("60 and 240 failed attempts before the kill: the same rows read, and no read of every attempt, intent or event", () =>
    Effect.gen(function*() {
      const short = yield* recoverAfter(60)
      const long = yield* recoverAfter(240)
      for (const [failed, recovered] of [[60, short], [240, long]] as const) {
        expect(recovered.outcome).toMatchObject({ stop: "blocked", state: "BLOCKED" })
        // The open attempt is Indeterminate and the task blocked for a person, as the recovery table says.
        const last = recovered.events.slice(-6).map((stored) => stored.event)
        expect(last.find((event) => event._tag === "AttemptTransitioned")).toMatchObject({ attempt: failed + 1, from: "Running", to: "Indeterminate" })
        expect(last.some((event) => event._tag === "TaskBlocked")).toBe(true)
        expect(recovered.read.reads).not.toContain("snapshot")
        expect(recovered.read.reads).not.toContain("attempts")
        expect(recovered.read.reads).not.toContain("rebuild")
        expect(recovered.read.reads).not.toContain("read-all")
        // The report lists the run's last boundaries' attempts and says where the rest are.
        expect(recovered.report).toContain(`| ${failed + 1} | Indeterminate |`)
        expect(recovered.report).toContain(`| ${failed} | Failed | exit 1, 0.0 s |`)
        expect(recovered.report).toContain(`Attempts 1–${failed - RunReport.listedBoundaries(1) + 1} are not listed`)
        expect(recovered.report).not.toContain(`| ${failed - RunReport.listedBoundaries(1) + 1} | Failed |`)
      }
      expect(long.read.reads).toEqual(short.read.reads)
      expect(long.read.rows).toBe(short.read.rows)
    }), 180_000)

  it.live("a person's status, gate and run page read the same rows after 60 and 240 failed attempts, none of them all", () =>
    Effect.gen(function*() {
      const short = yield* lookAfter(60)
      const long = yield* lookAfter(240)
      for (const [failed, looked] of [[60, short], [240, long]] as const) {
        expect(looked.view.state).toBe("BLOCKED")
        expect(looked.read.reads).not.toContain("snapshot")
        expect(looked.read.reads).not.toContain("attempts")
        expect(looked.read.reads).not.toContain("read-all")
        // The window: from the 20th latest step boundary on (the one after attempt failed - 19), so
        // the last 19 failed attempts and the recovered one; earlier ones exist.
        expect(looked.recent.partial).toBe(true)
        const lines = RunReport.attemptsOf(looked.recent.events, "run-killed", looked.recent.known)
        expect(lines.map((line) => line.attempt).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => failed - 18 + i))
        expect(lines.find((line) => line.attempt === failed + 1)?.state).toBe("Indeterminate")
      }
      expect(long.read.reads).toEqual(short.read.reads)
      expect(long.read.rows).toBe(short.read.rows)
    }), 180_000)

  it.live("a run with fewer boundaries than the report lists: every attempt is listed, with how it ended", () =>
    Effect.gen(function*() {
      const recovered = yield* recoverAfter(3)
      expect(recovered.outcome).toMatchObject({ stop: "blocked", state: "BLOCKED" })
      expect(recovered.report).toContain("## build — Build: Indeterminate")
      for (const attempt of [1, 2, 3]) expect(recovered.report).toContain(`| ${attempt} | Failed | exit 1, 0.0 s |`)
      expect(recovered.report).toMatch(/\| 4 \| Indeterminate \| {2}\| {2}\| recovered: Indeterminate; the step is neither idempotent nor probed \|/)
      expect(recovered.report).not.toContain("are not listed")
    }), 60_000)
})
