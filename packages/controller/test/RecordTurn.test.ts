/**
 * The worker's turn, recorded by the controller over a real SQLite store: a task RUNNING with a
 * manual step awaiting its worker (a host session holding the lease), and what `recordTurn` and
 * `toolCall.ended` append to the step's attempt — only what changes a flag, only in the attempt
 * the caller saw awaiting, only under the worker's lease — and what they refuse.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import * as Turn from "@ratchet/kernel/Turn"
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
import type * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-turn-")

const person: Event.Actor = { kind: "user", id: "ana" }
const asPerson: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(6), person.id) }
const session: Event.Actor = { kind: "agent", id: "claude-code:s-1" }
const epoch = 1
const asWorker: Controller.Invocation = { actor: session, leaseEpoch: epoch }

const project = (root: string): Workspace.Located => ({
  root,
  projectFile: path.join(root, ".ratchet", "project.json"),
  project: { schemaVersion: 1, projectId: "prj-turn", displayName: "test", createdAt: "2026-12-04T00:00:00.000Z" },
  workspaceId: "ws-turn",
  git: false
})

const layer = () => {
  const root = temp()
  // The spec's allowed scope must name a path the checkout holds.
  fs.mkdirSync(path.join(root, "test"))
  const store = SqliteStore.layer({ directory: temp() })
  const leases = LeaseManager.layer({ heartbeatMs: 60_000, graceMs: 120_000 }).pipe(Layer.provide(store))
  return Layer.mergeAll(
    Controller.layer.pipe(Layer.provide(Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, project(root))))),
    store
  )
}

const write = (dir: string, name: string, lines: ReadonlyArray<string>) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, lines.join("\n"))
  return file
}

/**
 * A task RUNNING with its first manual step (`fix`) awaiting its worker: attempt 1 Running, the
 * lease held at `epoch` by the host session.
 */
const awaitingWorker = Effect.gen(function*() {
  const c = yield* Controller.Controller
  const store = yield* EventStore.EventStore
  const models = yield* ReadModel.ReadModels
  const files = temp()
  yield* c.approvers.register(asPerson.signer!)
  const taskId = (yield* c.createTask({ goal: "Make the date test deterministic" }, asPerson)).task.taskId
  const approve = (subject: "restatement" | "spec" | "plan") =>
    Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, asPerson))
  yield* c.restate(taskId, "Freeze the clock in the date test.", asPerson)
  yield* approve("restatement")
  yield* c.closeBrief(taskId, asPerson)
  yield* c.proposeSpec(taskId, write(files, "spec.md", [
    "---",
    "goal: Make the date test deterministic",
    "acceptanceCriteria:",
    "  - id: AC-001",
    "    outcome: The date test passes in every timezone",
    "    required: true",
    "    verify: { command: \"true\" }",
    "execution:",
    "  allowedScope: [\"test/**\"]",
    "---",
    ""
  ]), asPerson)
  yield* approve("spec")
  yield* c.preflight(taskId, asPerson)
  yield* c.proposePlan(taskId, write(files, "plan.yaml", [
    "steps:",
    "  - id: fix",
    "    title: Freeze the clock",
    "    acRefs: [AC-001]",
    "    manual: { instructions: \"Freeze the clock in test/date.test.js\" }",
    "  - id: docs",
    "    title: Say so in the notes",
    "    acRefs: [AC-001]",
    "    manual: { instructions: \"Add a line to NOTES.md\" }",
    ""
  ]), asPerson)
  yield* approve("plan")
  const runId = "run-turn"
  let at = Date.now()
  const meta = () => ({ version: 1 as const, actor: session, at: ++at })
  const summary = yield* models.taskSummary(taskId)
  const task = summary!.task
  const started = Either.getOrThrow(Task.decide({
    _tag: "StartRun",
    actor: session,
    at: ++at,
    runId,
    specDigest: task.spec!.digest,
    planDigest: task.plan!.digest,
    lease: { held: true, epoch },
    authority: yield* ProjectApprovers.authority("prj-turn", c.project.root)
  }, task))
  yield* store.append({
    projectId: "prj-turn",
    streamId: taskId,
    expectedVersion: summary!.version,
    epoch,
    operationId: "op-start",
    events: [
      {
        ...meta(),
        _tag: "LeaseAcquired",
        epoch,
        owner: { workspaceId: "ws-turn", host: "claude-code", pid: process.pid, processStartedAt: 1, sessionRef: "claude-code:s-1" },
        heartbeatMs: 60_000,
        graceMs: 120_000
      },
      ...started,
      { ...meta(), _tag: "CheckpointRecorded", kind: "run_start", runId },
      { ...meta(), _tag: "AttemptScheduled", runId, stepId: "fix", attempt: 1 },
      { ...meta(), _tag: "AttemptTransitioned", runId, stepId: "fix", attempt: 1, from: "Pending", to: "Running" }
    ]
  })
  const fix = (yield* models.attempts(taskId)).find((row) => row.stepId === "fix")!
  return { c, store, models, taskId, runId, scheduledLsn: fix.updatedLsn }
})

const fix1 = { stepId: "fix", attempt: 1 }
const ev = (tag: Turn.Event["_tag"]): Turn.Event => ({ _tag: tag })

const turnOf = (models: ReadModel.Service, taskId: string, stepId = "fix") =>
  Effect.map(models.attempts(taskId), (rows) => rows.find((row) => row.stepId === stepId)?.turn)

describe("Controller.recordTurn", () => {
  it.effect("appends only the events that change the awaited attempt's flags, under the worker's lease", () =>
    Effect.gen(function*() {
      const { c, models, scheduledLsn, taskId } = yield* awaitingWorker
      const before = (yield* c.status(taskId)).version
      const first = yield* c.recordTurn(taskId, { attempt: fix1, events: [ev("toolUsed"), ev("toolUsed"), ev("toolRejected")] }, asWorker)
      expect(first.events).toEqual(["TurnRecorded", "TurnRecorded"])
      expect(first.attempt).toEqual(fix1)
      expect(yield* turnOf(models, taskId)).toEqual({ ...Turn.initial, toolUsed: true, toolRejected: true })
      // The turn is not a transition: the attempt's LSN is still its last transition's.
      expect((yield* models.attempts(taskId)).find((row) => row.stepId === "fix")?.updatedLsn).toBe(scheduledLsn)
      expect((yield* c.status(taskId)).version).toBe(before + 2)

      // no news: nothing written
      const again = yield* c.recordTurn(taskId, { attempt: fix1, events: [ev("toolUsed"), ev("toolRejected")] }, asWorker)
      expect(again.events).toEqual([])
      expect(again.attempt).toBeNull()
      expect((yield* c.status(taskId)).version).toBe(before + 2)

      // a new turn keeps the wait for the first chunk and clears the rest
      const next = yield* c.recordTurn(taskId, { attempt: fix1, events: [ev("firstChunkAwaitStarted"), ev("turnStarted"), ev("turnStarted")] }, asWorker)
      expect(next.events).toEqual(["TurnRecorded", "TurnRecorded"])
      expect(yield* turnOf(models, taskId)).toEqual({ ...Turn.initial, waitingForFirstChunk: true })
      const log = yield* Effect.flatMap(c.log(taskId), Stream.runCollect).pipe(Effect.map(Chunk.toReadonlyArray))
      expect(log.filter((stored) => stored.event._tag === "TurnRecorded").map((stored) =>
        stored.event._tag === "TurnRecorded" ? [stored.event.turn._tag, stored.event.stepId, stored.event.attempt, stored.event.actor.id, stored.epoch] : null
      )).toEqual([
        ["toolUsed", "fix", 1, "claude-code:s-1", epoch],
        ["toolRejected", "fix", 1, "claude-code:s-1", epoch],
        ["firstChunkAwaitStarted", "fix", 1, "claude-code:s-1", epoch],
        ["turnStarted", "fix", 1, "claude-code:s-1", epoch]
      ])
      expect(yield* models.snapshot(taskId)).toEqual(yield* models.rebuild(taskId))
    }).pipe(Effect.provide(layer())))

  it.effect("refuses without the worker's epoch and with a stale one, and writes nothing", () =>
    Effect.gen(function*() {
      const { c, taskId } = yield* awaitingWorker
      const before = (yield* c.status(taskId)).version
      const unleased = yield* Effect.flip(c.recordTurn(taskId, { attempt: fix1, events: [ev("toolUsed")] }, { actor: session }))
      expect(unleased).toMatchObject({ _tag: "@ratchet/controller/InvalidRequest", field: "--lease-epoch" })
      expect(unleased.message).toContain("presents no lease epoch")
      const stale = yield* Effect.flip(c.recordTurn(taskId, { attempt: fix1, events: [ev("toolUsed")] }, { actor: session, leaseEpoch: epoch + 1 }))
      expect(stale._tag).toBe("@ratchet/controller/LeaseConflict")
      expect(stale.message).toContain("lease epoch 2 is not the held one")
      expect((yield* c.status(taskId)).version).toBe(before)
    }).pipe(Effect.provide(layer())))

  it.effect("records nothing in an attempt other than the one the caller saw awaiting, nor when nothing awaits", () =>
    Effect.gen(function*() {
      const { c, models, runId, store, taskId } = yield* awaitingWorker
      const before = (yield* c.status(taskId)).version
      for (const attempt of [{ stepId: "fix", attempt: 2 }, { stepId: "docs", attempt: 1 }]) {
        const other = yield* c.recordTurn(taskId, { attempt, events: [ev("toolUsed")] }, asWorker)
        expect(other.events).toEqual([])
        expect(other.attempt).toBeNull()
      }
      // The step is done (as `ratchet step done` ends it); the next manual step has no attempt yet.
      yield* store.append({
        projectId: "prj-turn",
        streamId: taskId,
        expectedVersion: before,
        epoch,
        operationId: "op-done",
        events: [{ version: 1, actor: session, at: Date.now(), _tag: "AttemptTransitioned", runId, stepId: "fix", attempt: 1, from: "Running", to: "Succeeded" }]
      })
      const late = yield* c.recordTurn(taskId, { attempt: fix1, events: [ev("toolUsed")] }, asWorker)
      expect(late.events).toEqual([])
      expect((yield* c.status(taskId)).version).toBe(before + 1)
      expect(yield* turnOf(models, taskId)).toEqual(Turn.initial)
    }).pipe(Effect.provide(layer())))
})

describe("Controller.toolCall.ended", () => {
  it.effect("resolves the call's intent with what it tells of the turn, in one append, and only once", () =>
    Effect.gen(function*() {
      const { c, models, taskId } = yield* awaitingWorker
      const call = { sessionRef: "claude-code:s-1", callId: "toolu_1" }
      const opened = yield* c.toolCall.started(taskId, { ...call, description: "Edit: test/date.test.js" }, asWorker)
      expect(opened.events).toEqual(["IntentRecorded", "IntentDispatched"])
      const ended = yield* c.toolCall.ended(taskId, { ...call, outcome: "Failed", turn: [ev("toolUsed"), ev("toolFailed")] }, asWorker)
      expect(ended.intentId).toBe(opened.intentId)
      expect(ended.events).toEqual(["IntentResolved", "TurnRecorded", "TurnRecorded"])
      expect(ended.firstLsn).not.toBeNull()
      expect((ended.lastLsn ?? 0) - (ended.firstLsn ?? 0)).toBe(2)
      expect(yield* turnOf(models, taskId)).toEqual({ ...Turn.initial, toolUsed: true, toolFailed: true })
      // the hook repeated: the intent is resolved, the flags set; nothing is written
      const repeated = yield* c.toolCall.ended(taskId, { ...call, outcome: "Failed", turn: [ev("toolUsed"), ev("toolFailed")] }, asWorker)
      expect(repeated.events).toEqual([])
      expect(repeated.intentId).toBeNull()
      // a call that opened no intent tells the turn nothing here (the hook records it with recordTurn)
      const unknown = yield* c.toolCall.ended(taskId, { ...call, callId: "toolu_other", outcome: "Succeeded", turn: [ev("toolRejected")] }, asWorker)
      expect(unknown.events).toEqual([])
      expect(yield* turnOf(models, taskId)).toEqual({ ...Turn.initial, toolUsed: true, toolFailed: true })
    }).pipe(Effect.provide(layer())))
})
