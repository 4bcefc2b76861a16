/**
 * A manual step is held to the scope when it ends, over a real SQLite store, real git checkouts
 * and the real runner: the runner stops at the step (recording the tree at its start), the test
 * changes files as a worker would, and `stepDone` compares the tree now with that start. A path
 * outside `allowedScope` or inside `forbiddenScope` ends the attempt (Succeeded, as a command
 * step's) and blocks the task `scope_violation` in the same append; paths inside let the run go
 * on. The start is the right one after a pause the runner recorded, for a successor attempt, and
 * when the runner stopped before recording it; a session's tool calls change nothing about the
 * check; another checkout is refused; gitignored paths are not seen (a known gap).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import * as Run from "@ratchet/kernel/Run"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Signing from "@ratchet/testkit/Signing"
import * as Controller from "../src/Controller.js"
import * as ProjectApprovers from "../src/ProjectApprovers.js"
import * as Runner from "../src/Runner.js"
import * as RunRequest from "../src/RunRequest.js"
import * as StepScope from "../src/StepScope.js"
import * as WorkTree from "../src/WorkTree.js"
import type * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-stepdone-")

const person: Event.Actor = { kind: "user", id: "ana" }
const asPerson: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(6), person.id) }
const runner: Event.Actor = { kind: "runner", id: "runner-1" }
const agent: Event.Actor = { kind: "agent", id: "claude-code:s-1" }

const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", ...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })

/** Writes `text` to `file` under `root`, creating its directory. */
const put = (root: string, file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  fs.writeFileSync(path.join(root, file), text)
}

/** A git checkout with one commit: the date test, a README, a LICENSE, notes, and `build/` ignored. */
const checkout = () => {
  const root = temp()
  put(root, "test/date.test.js", "// the date test\n")
  put(root, "README.md", "# A project\n")
  put(root, "LICENSE", "MIT\n")
  put(root, "NOTES.md", "notes\n")
  put(root, ".gitignore", "build/\n")
  git(root, "init", "-q")
  git(root, "add", "-A")
  git(root, "commit", "-q", "-m", "start")
  return root
}

const projectAt = (root: string, workspaceId: string): Workspace.Located => ({
  root,
  projectFile: path.join(root, ".ratchet", "project.json"),
  project: { schemaVersion: 1, projectId: "prj-stepdone", displayName: "stepdone", createdAt: "2026-12-05T00:00:00.000Z" },
  workspaceId,
  git: true
})

/** The controller and what the runner needs, over the store in `home`, for the checkout at `root`. */
const layerOf = (root: string, home: string, workspaceId = "ws-here") => {
  const store = SqliteStore.layer({ directory: home })
  const leases = LeaseManager.layer({ heartbeatMs: 60_000, graceMs: 120_000 }).pipe(Layer.provide(store))
  return Layer.provideMerge(Controller.layer, Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, projectAt(root, workspaceId))))
}

interface Scope {
  readonly allowed: ReadonlyArray<string>
  readonly forbidden?: ReadonlyArray<string>
}

const specOf = (scope: Scope) =>
  [
    "---",
    "goal: Make the date test deterministic",
    "acceptanceCriteria:",
    "  - id: AC-001",
    "    outcome: The date test passes in every timezone",
    "    required: true",
    "    verify: { command: \"true\" }",
    "execution:",
    `  allowedScope: ${JSON.stringify(scope.allowed)}`,
    ...(scope.forbidden === undefined ? [] : [`  forbiddenScope: ${JSON.stringify(scope.forbidden)}`]),
    "---",
    ""
  ].join("\n")

const manual = ["  - id: fix", "    title: Freeze the clock", "    acRefs: [AC-001]", "    manual: { instructions: \"Freeze the clock in test/date.test.js\" }"]
const finish = ["  - id: finish", "    title: Record it", "    acRefs: [AC-001]", "    needs: [fix]", "    run: { command: \"echo done > test/finished.txt\" }"]
/** A command step before the manual one. */
const prepare = ["  - id: prepare", "    title: Prepare", "    acRefs: [AC-001]", "    run: { command: \"echo ready > test/ready.txt\" }"]

const plans = {
  /** `fix` (manual), then `finish` (a command). */
  fixThenFinish: ["steps:", ...manual, ...finish, ""].join("\n"),
  /** `prepare` (a command), then `fix`, then `finish`. */
  prepared: ["steps:", ...prepare, ...manual.slice(0, 3), "    needs: [prepare]", manual[3], ...finish, ""].join("\n")
}

/**
 * A fresh checkout (`before` runs in it first: a tree already dirty when the run starts) and
 * store, and the services over them.
 */
const worldOf = (options: { readonly before?: (root: string) => void; readonly workspaceId?: string } = {}) => {
  const root = checkout()
  options.before?.(root)
  const home = temp()
  return { root, home, layer: layerOf(root, home, options.workspaceId) }
}

/** A task of `world` driven to PLAN_APPROVED with `scope` and `plan`, and its runner. */
const planned = (world: { readonly home: string }, options: { readonly scope?: Scope; readonly plan?: string } = {}) =>
  Effect.gen(function*() {
    const c = yield* Controller.Controller
    const files = temp()
    yield* c.approvers.register(asPerson.signer!)
    // The approvers file is committed, as the person is told to: the trees below are the step's.
    git(c.project.root, "add", ".ratchet/approvers.json")
    git(c.project.root, "commit", "-q", "-m", "approvers")
    const taskId = (yield* c.createTask({ goal: "Make the date test deterministic" }, asPerson)).task.taskId
    const approve = (subject: "restatement" | "spec" | "plan") =>
      Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, asPerson))
    yield* c.restate(taskId, "Freeze the clock in the date test.", asPerson)
    yield* approve("restatement")
    yield* c.closeBrief(taskId, asPerson)
    fs.writeFileSync(path.join(files, "spec.md"), specOf(options.scope ?? { allowed: ["test/**"] }))
    yield* c.proposeSpec(taskId, path.join(files, "spec.md"), asPerson)
    yield* approve("spec")
    yield* c.preflight(taskId, asPerson)
    fs.writeFileSync(path.join(files, "plan.yaml"), options.plan ?? plans.fixThenFinish)
    yield* c.proposePlan(taskId, path.join(files, "plan.yaml"), asPerson)
    yield* approve("plan")
    const run = (fault?: (point: Runner.FaultPoint) => void) => Runner.run({ taskId, takeover: false, actor: runner, home: world.home, fault })
    return { c, taskId, run }
  })

type Services = Layer.Layer.Success<ReturnType<typeof layerOf>>

/** Runs `body` over `world`'s services, with a task of it driven to PLAN_APPROVED (see {@link planned}). */
const scenario = <A, E>(
  world: ReturnType<typeof worldOf>,
  options: { readonly scope?: Scope; readonly plan?: string },
  body: (task: ReturnType<typeof worldOf> & Effect.Effect.Success<ReturnType<typeof planned>>) => Effect.Effect<A, E, Services>
) => Effect.provide(Effect.flatMap(planned(world, options), (task) => body({ ...world, ...task })), world.layer)

const eventsOf = (taskId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) => Stream.runCollect(store.read({ streamId: taskId }))).pipe(Effect.map(Chunk.toReadonlyArray))

const transitionsOf = (events: ReadonlyArray<EventStore.StoredEvent>) =>
  events.flatMap(({ event }) => (event._tag === "AttemptTransitioned" ? [`${event.stepId}#${event.attempt}:${event.from}→${event.to}`] : []))

/** The events of the last append. */
const lastAppend = (events: ReadonlyArray<EventStore.StoredEvent>) => {
  const last = events.at(-1)!
  return events.filter((stored) => stored.operationId === last.operationId).map((stored) => stored.event)
}

/** The blob holding the tree `boundary` recorded, as a file of the SQLite layout's blob store. */
const blobFileOf = (home: string, boundary: StepScope.Boundary) => {
  const hex = boundary.dirtyDigest.slice("sha256:".length)
  return path.join(home, "blobs", hex.slice(0, 2), hex.slice(2))
}

const startBoundaryOf = (events: ReadonlyArray<EventStore.StoredEvent>, attempt = 1) => {
  const run = events.find((stored) => stored.event._tag === "RunStarted")!.event as Event.Event & { readonly runId: string }
  return StepScope.startOf(events, { runId: run.runId, stepId: "fix", attempt })
}

/**
 * Writes the log a runner from before ADR 0020 left when it was killed between opening `fix` and
 * recording the boundary after it: the run started, each of `stepsBefore` (command steps) ran and
 * ended with its boundary, and `fix` opened; then its lease was released as a takeover would find
 * it. The events are the kernel's own decisions, appended in the old order.
 */
const legacyRun = (world: { readonly taskId: string; readonly c: Controller.Service }, options: { readonly stepsBefore: ReadonlyArray<string> }) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const projectId = world.c.project.project.projectId
    const summary = (yield* world.c.status(world.taskId))
    const authority = yield* ProjectApprovers.authority(projectId, world.c.project.root)
    const tree = yield* WorkTree.observe(world.c.project.root)
    const at = Date.now()
    const meta = { version: 1 as const, actor: runner, at }
    const owner = { workspaceId: "ws-here", host: "runner", sessionRef: "legacy", pid: 1, processStartedAt: at }
    const task = (yield* ReadModel.ReadModels.pipe(Effect.flatMap((models) => models.taskSummary(world.taskId))))!
    const runId = "run-legacy"
    const items: Array<Decider.Command | Event.Event> = [
      { _tag: "LeaseAcquired", ...meta, epoch: 1, owner, heartbeatMs: 60_000, graceMs: 120_000 },
      {
        _tag: "StartRun",
        actor: runner,
        at,
        runId,
        specDigest: task.task.spec!.digest,
        planDigest: task.task.plan!.digest,
        lease: { held: true, epoch: 1 },
        authority
      },
      { _tag: "CheckpointRecorded", ...meta, kind: "run_start", runId }
    ]
    const boundary = (nextStep: string): ReadonlyArray<Event.Event> => [
      {
        _tag: "BoundaryRecorded",
        ...meta,
        runId,
        head: tree.head,
        dirtyPaths: [...tree.dirty.keys()],
        dirtyDigest: WorkTree.dirtyDigest(tree),
        specDigest: task.task.spec!.digest,
        planDigest: task.task.plan!.digest,
        nextStep
      },
      { _tag: "CheckpointRecorded", ...meta, kind: "step", runId }
    ]
    for (const stepId of options.stepsBefore) {
      items.push(
        { _tag: "StartStep", actor: runner, at, runId, stepId, attempt: 1, scheduled: false, effect: { intentId: `in-${stepId}`, description: stepId } },
        {
          _tag: "FinishStep",
          actor: runner,
          at,
          runId,
          stepId,
          attempt: 1,
          intentId: `in-${stepId}`,
          exit: { exitCode: 0, signal: null, durationMs: 1, timedOut: false, stdoutRef: null, stderrRef: null, outputTail: "", changedPaths: [] },
          outcome: "Succeeded",
          resultRefs: []
        },
        ...boundary("fix")
      )
    }
    items.push({ _tag: "StartStep", actor: runner, at, runId, stepId: "fix", attempt: 1, scheduled: false, effect: null })
    const decided = Either.getOrThrow(Decider.decideAll(items, { task: task.task, run: Run.initial }, task.lastLsn + 1))
    yield* store.append({
      projectId,
      streamId: world.taskId,
      expectedVersion: summary.version,
      epoch: 1,
      operationId: "op-legacy",
      events: [...decided.events, { _tag: "LeaseReleased", ...meta, epoch: 1 }]
    })
  })

describe("ratchet step done holds a manual step to the scope", () => {
  it.live("a path outside allowedScope blocks scope_violation in the step's end append; the attempt is Succeeded, and undoing it lets the run go on", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), {}, (world) => Effect.gen(function*() {
        const stopped = yield* world.run()
        expect(stopped).toMatchObject({ stop: "awaiting_worker", awaiting: { stepId: "fix", attempt: 1 } })
        put(world.root, "test/date.test.js", "// frozen\n")
        fs.appendFileSync(path.join(world.root, "README.md"), "drift\n")
        put(world.root, "notes.txt", "new\n")
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: "froze the clock" }, asPerson)
        expect(done.task.state).toBe("BLOCKED")
        expect(done.events).toEqual(["AttemptTransitioned", "AttemptNoted", "TaskBlocked"])
        expect(done.task.blockers.at(-1)).toEqual({
          category: "scope_violation",
          owner: "user",
          requiredAction:
            `Step fix changed paths outside the contract's scope: README.md (outside allowedScope), notes.txt (outside allowedScope). Undo them (then: ratchet unblock ${world.taskId} --to RUNNING --resolution "…"), or widen the scope: ratchet reopen ${world.taskId} --reason "…"`,
          lastEvidence: ["README.md", "notes.txt"]
        })
        const events = yield* eventsOf(world.taskId)
        expect(lastAppend(events).map((event) => event._tag)).toEqual(["AttemptTransitioned", "AttemptNoted", "TaskBlocked"])
        expect(transitionsOf(events)).toEqual(["fix#1:Pending→Running", "fix#1:Running→Succeeded"])
        // the same blocker as a command step's: `status` and `gate` read it as they read that one
        // (lifting a scope violation is a person's signed act: the gate says so)
        const gate = yield* world.c.gate(world.taskId, "RUNNING")
        expect(gate.decision).toBe("HOLD")
        expect(gate.gate?.reasons.map((reason) => reason.code)).toEqual(["receipt_required"])

        // undone, unblocked by the person: the step counts as done (it does not run again) and the run goes on
        git(world.root, "checkout", "--", "README.md")
        fs.rmSync(path.join(world.root, "notes.txt"))
        const shown = yield* world.c.unblockSubject(world.taskId, "RUNNING")
        yield* world.c.unblock(
          world.taskId,
          { to: "RUNNING", resolution: "undid the drift", confirmation: { digest: shown!.digest, channel: "terminal" } },
          asPerson
        )
        const finished = yield* world.run()
        expect(finished.state).toBe("VERIFYING")
        expect(transitionsOf(yield* eventsOf(world.taskId))).toEqual([
          "fix#1:Pending→Running",
          "fix#1:Running→Succeeded",
          "finish#1:Pending→Running",
          "finish#1:Running→Succeeded"
        ])
      }))
    }))

  it.live("forbiddenScope, committed paths and deleted ones count; each is named with why", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), { scope: { allowed: ["test/**", "README.md"], forbidden: ["test/fixtures/**"] } }, (world) => Effect.gen(function*() {
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        put(world.root, "test/fixtures/big.json", "{}\n")
        put(world.root, "test/date.test.js", "// frozen\n")
        git(world.root, "add", "test/fixtures/big.json", "test/date.test.js")
        git(world.root, "commit", "-q", "-m", "the worker's commit")
        fs.rmSync(path.join(world.root, "LICENSE"))
        fs.appendFileSync(path.join(world.root, "README.md"), "allowed\n")
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: undefined }, asPerson)
        expect(done.events).toEqual(["AttemptTransitioned", "TaskBlocked"])
        const blocker = done.task.blockers.at(-1)!
        expect(blocker.lastEvidence).toEqual(["LICENSE", "test/fixtures/big.json"])
        expect(blocker.requiredAction).toContain("LICENSE (outside allowedScope), test/fixtures/big.json (forbidden by test/fixtures/**).")
      }))
    }))

  it.live("paths inside the scope (edited, created, committed) let the run go on to VERIFYING, and add nothing to the step's end", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), {}, (world) => Effect.gen(function*() {
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        put(world.root, "test/clock.js", "export const now = () => 0\n")
        git(world.root, "add", "test/clock.js")
        git(world.root, "commit", "-q", "-m", "a clock")
        put(world.root, "test/date.test.js", "// frozen\n")
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: "froze the clock" }, asPerson)
        expect(done.task.state).toBe("RUNNING")
        expect(done.events).toEqual(["AttemptTransitioned", "AttemptNoted"])
        expect((yield* world.run()).state).toBe("VERIFYING")
      }))
    }))

  it.live("a path already dirty at the step's start is not the step's change, unless the step edits it again", () =>
    Effect.gen(function*() {
      const dirty = (root: string) => {
        fs.appendFileSync(path.join(root, "NOTES.md"), "edited before the run\n")
        put(root, "test/date.test.js", "// half done before the run\n")
      }
      // untouched: in scope
      yield* scenario(worldOf({ before: dirty }), {}, (untouched) => Effect.gen(function*() {
        expect((yield* untouched.run()).stop).toBe("awaiting_worker")
        put(untouched.root, "test/date.test.js", "// frozen\n")
        expect((yield* untouched.c.stepDone(untouched.taskId, { stepId: "fix", note: undefined }, asPerson)).task.state).toBe("RUNNING")
      }))
      // edited again: its contents changed since the start, so it is the step's change
      yield* scenario(worldOf({ before: dirty }), {}, (edited) => Effect.gen(function*() {
        expect((yield* edited.run()).stop).toBe("awaiting_worker")
        fs.appendFileSync(path.join(edited.root, "NOTES.md"), "and during the step\n")
        const done = yield* edited.c.stepDone(edited.taskId, { stepId: "fix", note: undefined }, asPerson)
        expect(done.task.blockers.at(-1)).toMatchObject({ category: "scope_violation", lastEvidence: ["NOTES.md"] })
        expect(done.task.blockers.at(-1)!.requiredAction).not.toContain("already changed")
      }))
    }))

  it.live("without the stored tree (a run begun by an older Ratchet), a path dirty at both ends counts as changed unless the dirty contents are the same", () =>
    Effect.gen(function*() {
      const dirty = (root: string) => {
        fs.appendFileSync(path.join(root, "NOTES.md"), "edited before the run\n")
        put(root, "test/date.test.js", "// half done before the run\n")
      }
      const forget = (world: { readonly home: string; readonly taskId: string }) =>
        Effect.gen(function*() {
          const start = startBoundaryOf(yield* eventsOf(world.taskId))!
          expect(start.kind).toBe("opened")
          fs.rmSync(blobFileOf(world.home, start.boundary))
        })
      // an uncommitted edit of a dirty path: the digest differs, so NOTES.md cannot be told apart
      yield* scenario(worldOf({ before: dirty }), {}, (changed) => Effect.gen(function*() {
        expect((yield* changed.run()).stop).toBe("awaiting_worker")
        yield* forget(changed)
        put(changed.root, "test/date.test.js", "// frozen\n")
        const done = yield* changed.c.stepDone(changed.taskId, { stepId: "fix", note: undefined }, asPerson)
        expect(done.task.blockers.at(-1)).toMatchObject({ category: "scope_violation", lastEvidence: ["NOTES.md"] })
        expect(done.task.blockers.at(-1)!.requiredAction).toContain(
          "(one of them was already changed when the step started, and the contents then were not stored, so it counts as changed: NOTES.md)"
        )
      }))
      // the dirty paths untouched (the work committed as a new file): the same digest, so nothing is in doubt
      yield* scenario(worldOf({ before: dirty }), {}, (same) => Effect.gen(function*() {
        expect((yield* same.run()).stop).toBe("awaiting_worker")
        yield* forget(same)
        put(same.root, "test/clock.js", "export const now = () => 0\n")
        git(same.root, "add", "test/clock.js")
        git(same.root, "commit", "-q", "-m", "a clock")
        expect((yield* same.c.stepDone(same.taskId, { stepId: "fix", note: undefined }, asPerson)).task.state).toBe("RUNNING")
      }))
    }))

  it.live("a host session's step: its tool calls are recorded, the tree decides; the session's lease is released with the block", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), {}, (world) => Effect.gen(function*() {
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        const lease = yield* world.c.lease.acquire(world.taskId, { host: "claude-code", sessionRef: "claude-code:s-1", actor: agent })
        const asSession: Controller.Invocation = { actor: agent, leaseEpoch: lease.epoch }
        // one call that says where it writes, ended; one whose end never came; the shell wrote elsewhere too
        const edit = { sessionRef: "claude-code:s-1", callId: "toolu_1" }
        yield* world.c.toolCall.started(world.taskId, { ...edit, description: "Edit: test/date.test.js" }, asSession)
        put(world.root, "test/date.test.js", "// frozen\n")
        yield* world.c.toolCall.ended(world.taskId, { ...edit, outcome: "Succeeded", turn: [] }, asSession)
        yield* world.c.toolCall.started(world.taskId, { sessionRef: "claude-code:s-1", callId: "toolu_2", description: "Bash: npm run build" }, asSession)
        put(world.root, "dist/clock.js", "built\n")
        // the person beside the session marks it done: the session's lease is presented and released
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: "froze it" }, asPerson)
        expect(done.task.state).toBe("BLOCKED")
        expect(done.events).toEqual(["IntentResolved", "AttemptNoted", "AttemptTransitioned", "AttemptNoted", "TaskBlocked", "LeaseReleased"])
        expect(done.task.blockers.at(-1)).toMatchObject({ category: "scope_violation", lastEvidence: ["dist/clock.js"] })
        expect(done.task.lease.status).toBe("free")
        const events = yield* eventsOf(world.taskId)
        expect(lastAppend(events).map((event) => event._tag)).toEqual(done.events)
        expect(events.at(-1)!.epoch).toBe(lease.epoch)
      }))

      // the session's agent marks a step done whose writes stayed inside: the run goes on
      yield* scenario(worldOf(), {}, (inside) => Effect.gen(function*() {
        expect((yield* inside.run()).stop).toBe("awaiting_worker")
        const lease = yield* inside.c.lease.acquire(inside.taskId, { host: "claude-code", sessionRef: "claude-code:s-1", actor: agent })
        const asSession: Controller.Invocation = { actor: agent, leaseEpoch: lease.epoch }
        const edit = { sessionRef: "claude-code:s-1", callId: "toolu_1" }
        yield* inside.c.toolCall.started(inside.taskId, { ...edit, description: "Edit: test/date.test.js" }, asSession)
        put(inside.root, "test/date.test.js", "// frozen\n")
        yield* inside.c.toolCall.ended(inside.taskId, { ...edit, outcome: "Succeeded", turn: [] }, asSession)
        // as the hook's session runs it (ratchet step done through its shell): the session's lease is
        // found, presented and released, as for the person
        const done = yield* inside.c.stepDone(inside.taskId, { stepId: "fix", note: undefined }, { actor: agent })
        expect(done.task.state).toBe("RUNNING")
        expect(done.events).toEqual(["AttemptTransitioned", "LeaseReleased"])
        expect((yield* inside.run()).state).toBe("VERIFYING")
      }))
    }))

  it.live("after a pause the runner recorded while the step awaited its worker, and a resume, the start is still the tree before the worker acted", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), {}, (world) => Effect.gen(function*() {
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        put(world.root, "docs/plan.md", "written by the worker\n")
        // a Ctrl-C's request (no epoch) left for the next runner: it records a boundary and pauses
        RunRequest.write(world.home, world.taskId, { kind: "pause", reason: "lunch", actor: person, at: Date.now() })
        expect((yield* world.run()).stop).toBe("paused")
        const events = yield* eventsOf(world.taskId)
        const boundaries = events.filter((stored) => stored.event._tag === "BoundaryRecorded")
        expect(boundaries.map((stored) => (stored.event as StepScope.Boundary).dirtyPaths)).toEqual([[], ["docs/plan.md"]])
        // the resume compares with the pause's boundary: nothing changed since, so it is clean
        expect((yield* world.c.resume(world.taskId, asPerson)).task.state).toBe("RUNNING")
        expect(startBoundaryOf(events)).toMatchObject({ kind: "opened", lsn: boundaries[0]!.lsn })
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: undefined }, asPerson)
        expect(done.task.blockers.at(-1)).toMatchObject({ category: "scope_violation", lastEvidence: ["docs/plan.md"] })
      }))
    }))

  it.live("a successor attempt is held to its own start, not its predecessor's", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), {}, (world) => Effect.gen(function*() {
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        // attempt 1's worker writes outside the scope and its session ends with a call left open
        const lease = yield* world.c.lease.acquire(world.taskId, { host: "claude-code", sessionRef: "claude-code:s-1", actor: agent })
        yield* world.c.toolCall.started(world.taskId, { sessionRef: "claude-code:s-1", callId: "toolu_1", description: "Write: docs/plan.md" }, {
          actor: agent,
          leaseEpoch: lease.epoch
        })
        put(world.root, "docs/plan.md", "attempt 1\n")
        yield* world.c.lease.release(world.taskId, lease.epoch, agent)
        // recovery makes it Indeterminate; a person settles it as failed; attempt 2 opens
        expect((yield* world.run()).state).toBe("BLOCKED")
        const shown = yield* world.c.settlementSubject(world.taskId, "fix", "failed")
        yield* world.c.settle(world.taskId, { stepId: "fix", outcome: "failed", confirmation: { digest: shown.digest, channel: "terminal" } }, asPerson)
        expect((yield* world.run())).toMatchObject({ stop: "awaiting_worker", awaiting: { stepId: "fix", attempt: 2 } })
        const events = yield* eventsOf(world.taskId)
        const second = startBoundaryOf(events, 2)!
        expect(second.kind).toBe("opened")
        expect(second.boundary.dirtyPaths).toEqual(["docs/plan.md"])
        expect(second.lsn).toBeGreaterThan(startBoundaryOf(events, 1)!.lsn)
        // attempt 2 changes only what is inside: docs/plan.md, unchanged since its start, is not its change
        put(world.root, "test/date.test.js", "// frozen\n")
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: undefined }, asPerson)
        expect(done.task.state).toBe("RUNNING")
        expect(transitionsOf(yield* eventsOf(world.taskId)).slice(-2)).toEqual(["fix#2:Pending→Running", "fix#2:Running→Succeeded"])
      }))
    }))

  it.live("a manual step opens with the boundary its worker is held to in one append: no runner death separates them", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), { plan: plans.prepared }, (world) => Effect.gen(function*() {
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        const events = yield* eventsOf(world.taskId)
        const start = startBoundaryOf(events)!
        expect(start.kind).toBe("opened")
        const opening = events.find(({ event }) => event._tag === "AttemptTransitioned" && event.stepId === "fix" && event.to === "Running")!
        expect(events.find((stored) => stored.lsn === start.lsn)!.operationId).toBe(opening.operationId)
        // prepare's end, fix's opening and the boundary were one transaction
        expect(events.filter((stored) => stored.operationId === opening.operationId).map((stored) => stored.event._tag)).toEqual([
          "CommandExited",
          "IntentResolved",
          "AttemptTransitioned",
          "AttemptScheduled",
          "AttemptTransitioned",
          "BoundaryRecorded",
          "CheckpointRecorded"
        ])
      }))
    }))

  it.live("a log from a runner that opened the step and stopped before recording its tree (two appends, before ADR 0020): the start is the previous step's end, or, for a first step, nothing (decision_needed)", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), { plan: plans.prepared }, (world) => Effect.gen(function*() {
        // prepare ran and fix opened in the new shape; the old shape is that log with fix's boundary
        // left out, as a runner killed between its two appends left it
        yield* legacyRun(world, { stepsBefore: ["prepare"] })
        const events = yield* eventsOf(world.taskId)
        expect(startBoundaryOf(events)).toMatchObject({ kind: "before" })
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        put(world.root, "docs/plan.md", "outside\n")
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: undefined }, asPerson)
        expect(done.task.blockers.at(-1)).toMatchObject({ category: "scope_violation", lastEvidence: ["docs/plan.md"] })
      }))

      yield* scenario(worldOf(), {}, (first) => Effect.gen(function*() {
        yield* legacyRun(first, { stepsBefore: [] })
        expect(startBoundaryOf(yield* eventsOf(first.taskId))).toBeNull()
        expect((yield* first.run()).stop).toBe("awaiting_worker")
        put(first.root, "test/date.test.js", "// frozen\n")
        const done = yield* first.c.stepDone(first.taskId, { stepId: "fix", note: undefined }, asPerson)
        expect(done.events).toEqual(["AttemptTransitioned", "TaskBlocked"])
        expect(done.task.blockers.at(-1)).toMatchObject({ category: "decision_needed", owner: "user" })
        expect(done.task.blockers.at(-1)!.requiredAction).toContain("the work tree at the step's start was never recorded")
        expect(done.task.blockers.at(-1)!.requiredAction).toContain(`ratchet unblock ${first.taskId} --to RUNNING`)
      }))
    }))

  it.live("a checkout git cannot read: the step's end is recorded and the task blocks decision_needed, naming git's error", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), {}, (world) => Effect.gen(function*() {
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        fs.renameSync(path.join(world.root, ".git"), path.join(world.root, ".git-away"))
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: undefined }, asPerson).pipe(
          Effect.ensuring(Effect.sync(() => fs.renameSync(path.join(world.root, ".git-away"), path.join(world.root, ".git"))))
        )
        expect(done.events).toEqual(["AttemptTransitioned", "TaskBlocked"])
        expect(done.task.blockers.at(-1)).toMatchObject({ category: "decision_needed" })
        expect(done.task.blockers.at(-1)!.requiredAction).toContain("could not be checked against the scope: Cannot run git")
      }))
    }))

  it.live("is refused, writing nothing, in another checkout of the project than the one the step started in", () =>
    Effect.gen(function*() {
      const world = worldOf()
      const taskId = yield* scenario(world, {}, (task) =>
        Effect.gen(function*() {
          expect((yield* task.run()).stop).toBe("awaiting_worker")
          return task.taskId
        }))
      // the same project and store, from a checkout whose workspace is another
      const elsewhere = layerOf(world.root, world.home, "ws-elsewhere")
      const stepDone = Effect.flatMap(Controller.Controller, (c) => c.stepDone(taskId, { stepId: "fix", note: undefined }, asPerson))
      const before = yield* Effect.provide(eventsOf(taskId), elsewhere)
      const refused = yield* Effect.flip(Effect.provide(stepDone, elsewhere))
      expect(refused).toMatchObject({ _tag: "@ratchet/controller/InvalidRequest", field: "step" })
      expect(refused.message).toContain("step fix started in another checkout of this project (workspace ws-here, whose runner ran on ")
      expect(refused.message).toContain(`Run ratchet step done ${taskId} fix in the checkout where the run stopped at it.`)
      expect((yield* Effect.provide(eventsOf(taskId), elsewhere)).length).toBe(before.length)
      // in its own checkout it is done
      expect((yield* Effect.provide(stepDone, world.layer)).task.state).toBe("RUNNING")
    }))

  it.live("does not see gitignored paths: a write there, outside the scope, passes (a known gap, as for command steps)", () =>
    Effect.gen(function*() {
      yield* scenario(worldOf(), {}, (world) => Effect.gen(function*() {
        expect((yield* world.run()).stop).toBe("awaiting_worker")
        put(world.root, "build/out.js", "ignored\n")
        expect([...(yield* WorkTree.observe(world.root)).dirty.keys()]).toEqual([])
        const done = yield* world.c.stepDone(world.taskId, { stepId: "fix", note: undefined }, asPerson)
        expect(done.task.state).toBe("RUNNING")
      }))
    }))
})
