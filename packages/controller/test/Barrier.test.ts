/**
 * The snapshot barrier (seed 002, "Verify"): a verifier holding a context sees an unchanged
 * episode while the three mutators that come from outside the run land mid-verify — a rewind
 * forking a new branch, a cancel during VERIFYING, and recovery resolving a dispatched intent of
 * an attempt the verifier is reading. Each test parks the verifier on a rendezvous (a Deferred,
 * not a sleep), fires the mutator, releases the verifier, and compares the view it held with a
 * copy taken when it entered. There is deliberately no concurrent-retry test: VERIFYING is entered
 * only when every step is terminal, so such a test would pass against no barrier at all.
 *
 * Run on SQLite and, when it is reachable, PostgreSQL.
 *
 * The run's history is appended through the store as a runner writes it (the kernel deciding
 * every lifecycle event): attempt 1 of the step dispatched its side effect and its runner died;
 * recovery failed the attempt without knowing the effect's outcome (the intent stays Dispatched,
 * for a late probe to resolve), attempt 2 succeeded, and the task entered VERIFYING.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import { PostgresStore } from "@ratchet/storage-postgres"
import { SqliteStore } from "@ratchet/storage-sqlite"
import { describePostgres, testSchemaName, testUrl } from "@ratchet/testkit/Postgres"
import * as EpisodeView from "@ratchet/verifier/EpisodeView"
import * as Signing from "@ratchet/testkit/Signing"
import * as Verifier from "@ratchet/verifier/Verifier"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { afterAll } from "vitest"
import * as Controller from "../src/Controller.js"
import * as ProjectApprovers from "../src/ProjectApprovers.js"
import * as Verify from "../src/Verify.js"
import type * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-barrier-")

const person: Event.Actor = { kind: "user", id: "ana" }
const runner: Event.Actor = { kind: "runner", id: "runner-1" }
/** The verifier of record: a person (approver "ci") whose key signs the pass. */
const verifierOfRecord: Event.Actor = { kind: "user", id: "ci" }
const asVerifier: Controller.Invocation = { actor: verifierOfRecord, signer: Signing.signerOf(Signing.keyOf(7), "ci") }
/** The person who approves the contract, with their key. */
const asPerson: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(6), person.id) }

const schemas: Array<string> = []
afterAll(async () => {
  if (schemas.length === 0) return
  await Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.forEach(schemas, (schema) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`, { discard: true })).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(testUrl()), maxConnections: 1 }))
      )
  )
})

/** A git checkout with one commit: the workspace the verifier observes. */
const checkout = (): Workspace.Located => {
  const root = temp()
  fs.mkdirSync(path.join(root, "test"))
  fs.writeFileSync(path.join(root, "test", "date.test.js"), "// the date test\n")
  const git = (...args: Array<string>) => execFileSync("git", args, { cwd: root, stdio: "ignore" })
  git("init", "-q")
  git("-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "start")
  return {
    root,
    projectFile: path.join(root, ".ratchet", "project.json"),
    project: { schemaVersion: 1, projectId: "prj-barrier", displayName: "barrier", createdAt: "2026-12-03T00:00:00.000Z" },
    workspaceId: "ws-barrier",
    git: true
  }
}

/**
 * The parked verifier: when it starts, it copies the episode it was given, signals `entered`,
 * and waits for `release`; then it reports what it held.
 */
const parked = (entered: Deferred.Deferred<Verifier.VerifierCtx>, release: Deferred.Deferred<void>) => {
  const held: { ctx: Verifier.VerifierCtx | null; atEntry: EpisodeView.EpisodeView | null } = { ctx: null, atEntry: null }
  const verifier: Verifier.Verifier = {
    name: "parked",
    appliesTo: () => true,
    verify: (criterion, ctx) =>
      Effect.gen(function*() {
        held.ctx = ctx
        held.atEntry = structuredClone(ctx.episode) as EpisodeView.EpisodeView
        yield* Deferred.succeed(entered, ctx)
        yield* Deferred.await(release)
        return {
          verifier: "parked",
          verdict: "PASS" as const,
          reason: "the parked verifier passes once released.",
          evidence: [{
            _tag: "manual" as const,
            acId: criterion.id,
            specDigest: ctx.specDigest,
            snapshotLsn: ctx.snapshotLsn,
            verifier: ctx.verifier,
            at: 1,
            procedure: "wait for the rendezvous",
            observer: "the test",
            result: "pass" as const,
            note: "",
            channel: "terminal" as const
          }]
        }
      })
  }
  return { verifier, held }
}

const specFile = (dir: string) => {
  const file = path.join(dir, "spec.md")
  fs.writeFileSync(
    file,
    [
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
      "# Notes",
      ""
    ].join("\n")
  )
  return file
}

const planFile = (dir: string) => {
  const file = path.join(dir, "plan.yaml")
  fs.writeFileSync(
    file,
    ["steps:", "  - id: freeze", "    title: Freeze the clock", "    acRefs: [AC-001]", "    run:", "      command: \"true\"", ""].join("\n")
  )
  return file
}

/** The lifecycle to PLAN_APPROVED through the controller, then the run to VERIFYING through the store. */
const toVerifying = (project: Workspace.Located) =>
  Effect.gen(function*() {
    const c = yield* Controller.Controller
    const store = yield* EventStore.EventStore
    const models = yield* ReadModel.ReadModels
    const files = temp()
    // The person is the project's first approver and signs the verifier of record in.
    yield* c.approvers.register(asPerson.signer!)
    yield* c.approvers.add(asPerson.signer!, { id: "ci", key: asVerifier.signer!.key })
    const taskId = (yield* c.createTask({ goal: "Make the date test deterministic" }, asPerson)).task.taskId
    yield* c.restate(taskId, "Freeze the clock in the date test.", asPerson)
    const approve = (subject: "restatement" | "spec" | "plan") =>
      Effect.flatMap(c.approvalSubject(taskId, subject), (shown) =>
        c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, asPerson))
    yield* approve("restatement")
    yield* c.closeBrief(taskId, asPerson)
    yield* c.proposeSpec(taskId, specFile(files), asPerson)
    yield* approve("spec")
    yield* c.preflight(taskId, asPerson)
    yield* c.proposePlan(taskId, planFile(files), asPerson)
    yield* approve("plan")

    const epoch = 1
    const runId = "run-barrier"
    let at = Date.now()
    const meta = () => ({ version: 1 as const, actor: runner, at: ++at })
    const append = (build: (task: Task.Task) => ReadonlyArray<Event.Event>) =>
      Effect.gen(function*() {
        const summary = yield* models.taskSummary(taskId)
        if (summary === null) return yield* Effect.dieMessage("no task")
        return yield* store.append({
          projectId: project.project.projectId,
          streamId: taskId,
          expectedVersion: summary.version,
          epoch,
          operationId: `op-${crypto.randomUUID()}`,
          events: build(summary.task)
        })
      })
    const authority = yield* ProjectApprovers.authority(project.project.projectId, project.root)
    const decide = (command: Task.Command, task: Task.Task) =>
      Either.getOrThrowWith(Task.decide(command, task), (rejection) => new Error(rejection.message))
    const step = { runId, stepId: "freeze" }
    yield* append((task) => [
      { ...meta(), _tag: "LeaseAcquired", epoch, owner: { workspaceId: "ws-barrier", host: "runner", pid: process.pid, processStartedAt: 1 }, heartbeatMs: 60_000, graceMs: 60_000 },
      ...decide({
        _tag: "StartRun",
        actor: runner,
        at: ++at,
        runId,
        specDigest: task.spec!.digest,
        planDigest: task.plan!.digest,
        lease: { held: true, epoch },
        authority
      }, task),
      { ...meta(), _tag: "CheckpointRecorded", kind: "run_start", runId }
    ])
    // Attempt 1 dispatched its effect; then its runner died.
    yield* append(() => [
      { ...meta(), _tag: "AttemptScheduled", ...step, attempt: 1 },
      { ...meta(), _tag: "AttemptTransitioned", ...step, attempt: 1, from: "Pending", to: "Running" },
      { ...meta(), _tag: "IntentRecorded", intentId: "i-1", ...step, attempt: 1, description: "true" },
      { ...meta(), _tag: "IntentDispatched", intentId: "i-1" }
    ])
    // Recovery failed the attempt without knowing the effect's outcome; a probe is to resolve i-1.
    yield* append((task) => [
      { ...meta(), _tag: "AttemptTransitioned", ...step, attempt: 1, from: "Running", to: "Failed" },
      { ...meta(), _tag: "AttemptNoted", ...step, attempt: 1, note: "recovered: outcome unknown; a probe will resolve it" },
      ...decide({ _tag: "RecordAttemptFailure", actor: runner, at: ++at, stepId: "freeze", attempt: 1, fingerprint: "exit:none", progressed: true }, task)
    ])
    yield* append(() => [
      { ...meta(), _tag: "AttemptScheduled", ...step, attempt: 2 },
      { ...meta(), _tag: "AttemptTransitioned", ...step, attempt: 2, from: "Pending", to: "Running" },
      { ...meta(), _tag: "IntentRecorded", intentId: "i-2", ...step, attempt: 2, description: "true" },
      { ...meta(), _tag: "IntentDispatched", intentId: "i-2" },
      // A second effect of the same attempt (a host tool call, say) whose session ended before its
      // outcome was recorded: it stays Dispatched, for recovery to resolve.
      { ...meta(), _tag: "IntentRecorded", intentId: "i-3", ...step, attempt: 2, description: "notify the channel" },
      { ...meta(), _tag: "IntentDispatched", intentId: "i-3" }
    ])
    yield* append((task) => [
      {
        ...meta(),
        _tag: "CommandExited",
        intentId: "i-2",
        ...step,
        attempt: 2,
        exitCode: 0,
        signal: null,
        durationMs: 5,
        timedOut: false,
        stdoutRef: null,
        stderrRef: null,
        outputTail: "",
        changedPaths: []
      },
      { ...meta(), _tag: "IntentResolved", intentId: "i-2", outcome: "Succeeded", resultRefs: [] },
      { ...meta(), _tag: "AttemptTransitioned", ...step, attempt: 2, from: "Running", to: "Succeeded" },
      {
        ...meta(),
        _tag: "BoundaryRecorded",
        runId,
        head: null,
        dirtyPaths: [],
        dirtyDigest: "clean",
        specDigest: task.spec!.digest,
        planDigest: task.plan!.digest,
        nextStep: null
      },
      { ...meta(), _tag: "CheckpointRecorded", kind: "step", runId }
    ])
    const beforeVerifying = yield* models.taskSummary(taskId)
    const entered = yield* append((task) => [
      ...decide({ _tag: "EnterVerification", actor: runner, at: ++at, pendingSteps: [], snapshotLsn: beforeVerifying!.lastLsn }, task),
      { ...meta(), _tag: "LeaseReleased", epoch }
    ])
    return { taskId, runId, snapshotLsn: beforeVerifying!.lastLsn, lastRunLsn: beforeVerifying!.lastLsn, verifyingLsn: entered.lastLsn }
  })

const readAll = (taskId: string, branch?: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(Stream.runCollect(store.read({ streamId: taskId, branch })), Chunk.toReadonlyArray))

const viewAt = (taskId: string, branch: string, snapshotLsn: number) =>
  Effect.map(readAll(taskId, branch), (events) => Either.getOrThrow(EpisodeView.build({ taskId, branch, snapshotLsn, events })))

type Store = Layer.Layer<EventStore.EventStore | ReadModel.ReadModels | BlobStore.BlobStore | import("@ratchet/storage/LeaseStore").LeaseStore, unknown>

/** The controller, the store services and a verifier set holding only `verifier`, over `store`. */
const world = (store: Store, verifier: Verifier.Verifier, project: Workspace.Located) => {
  const leases = LeaseManager.layer({ heartbeatMs: 60_000, graceMs: 180_000 }).pipe(Layer.provide(store))
  const base = Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, project), Verifier.layer(verifier))
  return Layer.provideMerge(Controller.layer, base)
}

/** One barrier scenario: park the verifier, fire `mutate`, release it, and return what it saw. */
const scenario = <A, E, R>(
  makeStore: () => Store,
  mutate: (ids: { readonly taskId: string; readonly runId: string; readonly lastRunLsn: number }) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const entered = yield* Deferred.make<Verifier.VerifierCtx>()
    const release = yield* Deferred.make<void>()
    const { verifier, held } = parked(entered, release)
    const project = checkout()
    return yield* Effect.gen(function*() {
      const ids = yield* toVerifying(project)
      const verifying = yield* Effect.fork(Verify.verify({ taskId: ids.taskId, acs: [], invocation: asVerifier }))
      const ctx = yield* Deferred.await(entered)
      const mutated = yield* mutate(ids)
      yield* Deferred.succeed(release, undefined)
      const result = yield* Fiber.join(verifying)
      const c = yield* Controller.Controller
      const after = yield* c.status(ids.taskId)
      // The view rebuilt by a cold re-fold of the (longer) log at the snapshot LSN.
      const refolded = yield* viewAt(ids.taskId, ctx.episode.branch, ctx.snapshotLsn)
      // And one at the end of the log, as a verifier starting now would get it.
      const fresh = yield* viewAt(ids.taskId, ctx.episode.branch, Number.MAX_SAFE_INTEGER)
      const heldBranch = (yield* readAll(ids.taskId, ctx.episode.branch)).map((stored) => stored.event)
      const currentBranch = (yield* readAll(ids.taskId, after.branch)).map((stored) => stored.event)
      return { ids, ctx, held, mutated, result, after, refolded, fresh, heldBranch, currentBranch }
    }).pipe(Effect.provide(world(makeStore(), verifier, project)))
  })

const barrierTests = (makeStore: () => Store) => {
  it.effect("the held view counts the failed attempt and equals a cold re-fold at its LSN", () =>
    Effect.gen(function*() {
      const { ctx, held, refolded, result, ids } = yield* scenario(makeStore, () => Effect.void)
      expect(ctx.snapshotLsn).toBe(ids.lastRunLsn)
      expect(ctx.episode.attempts.map((a) => `${a.stepId}#${a.attempt}:${a.state}`)).toEqual(["freeze#1:Failed", "freeze#2:Succeeded"])
      expect(ctx.episode.usage).toMatchObject({ attempts: 2, failedAttempts: 1 })
      expect(ctx.episode.attempts[0]?.intents).toEqual([{ intentId: "i-1", description: "true", state: "Dispatched", outcome: null, settledBy: null }])
      expect(ctx.attempt).toBe(2)
      expect(ctx.episode.attempts[0]?.fingerprint).toBe("exit:none")
      expect(ctx.episode).toEqual(held.atEntry)
      expect(refolded).toEqual(ctx.episode)
      expect(Object.isFrozen(ctx.episode) && Object.isFrozen(ctx.episode.attempts) && Object.isFrozen(ctx.episode.attempts[0]?.intents)).toBe(true)
      // Nothing interfered: the pass is recorded against the snapshot.
      expect(result.notRecorded).toBeNull()
      expect(result.conclusion.outcome).toBe("APPROVED")
    }))

  it.effect("a rewind forking a new branch mid-verify: the held view is unchanged and the pass is not recorded on either branch", () =>
    Effect.gen(function*() {
      const { ctx, held, result, after, refolded, mutated, heldBranch, currentBranch } = yield* scenario(makeStore, (ids) =>
        Effect.flatMap(Controller.Controller, (c) =>
          Effect.flatMap(c.rewindSubject(ids.taskId, ids.lastRunLsn), (shown) =>
            c.rewind(ids.taskId, ids.lastRunLsn, asPerson, { digest: shown.digest, channel: "terminal" }))))
      expect(mutated.branch).toBe("rewind-1")
      expect(after.branch).toBe("rewind-1")
      expect(after.state).toBe("RUNNING")
      expect(ctx.episode.branch).toBe("main")
      expect(ctx.episode).toEqual(held.atEntry)
      expect(refolded).toEqual(ctx.episode)
      expect(result.notRecorded).toContain("rewound onto branch rewind-1")
      expect(result.recordedLsn).toBeNull()
      expect(heldBranch.map((event) => event._tag)).not.toContain("VerificationRecorded")
      expect(currentBranch.map((event) => event._tag)).not.toContain("VerificationRecorded")
      expect(currentBranch.map((event) => event._tag)).not.toContain("VerificationStarted")
    }))

  it.effect("a cancel during VERIFYING: the verifier still completes, its view unchanged, and nothing is recorded", () =>
    Effect.gen(function*() {
      const { ctx, held, result, after, refolded, heldBranch } = yield* scenario(makeStore, (ids) =>
        Effect.flatMap(Controller.Controller, (c) => c.cancel(ids.taskId, "the requirement was withdrawn", asPerson)))
      expect(after.state).toBe("CANCELLED")
      expect(result.results.map((r) => [r.acId, r.verdict.verdict])).toEqual([["AC-001", "PASS"]])
      expect(ctx.episode).toEqual(held.atEntry)
      expect(refolded).toEqual(ctx.episode)
      expect(result.notRecorded).toContain("became CANCELLED")
      expect(heldBranch.map((event) => event._tag)).not.toContain("VerificationRecorded")
    }))

  /** What a late recovery appends: the outcome of attempt 2's second effect (i-3). */
  const recover = (ids: { readonly taskId: string; readonly runId: string }) =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const head = yield* store.head(ids.taskId)
      return yield* store.append({
        projectId: "prj-barrier",
        streamId: ids.taskId,
        expectedVersion: head!.version,
        epoch: null,
        operationId: `op-${crypto.randomUUID()}`,
        events: [
          { _tag: "IntentResolved", version: 1, actor: runner, at: Date.now(), intentId: "i-3", outcome: "Failed", resultRefs: [] },
          { _tag: "AttemptNoted", version: 1, actor: runner, at: Date.now(), runId: ids.runId, stepId: "freeze", attempt: 2, note: "recovered: the notification was not sent" }
        ]
      })
    })

  it.effect("recovery resolving a dispatched intent of the very attempt the verifier reads: the held view is unchanged, a fresh view shows the outcome", () =>
    Effect.gen(function*() {
      const { ctx, held, result, refolded, fresh, heldBranch } = yield* scenario(makeStore, recover)
      expect(ctx.attempt).toBe(2)
      expect(ctx.episode).toEqual(held.atEntry)
      const read = (view: EpisodeView.EpisodeView) => view.attempts.find((a) => a.attempt === ctx.attempt)
      expect(read(ctx.episode)?.intents.map((i) => [i.intentId, i.state, i.outcome])).toEqual([["i-2", "Resolved", "Succeeded"], ["i-3", "Dispatched", null]])
      expect(refolded).toEqual(ctx.episode)
      expect(read(fresh)?.intents.map((i) => [i.intentId, i.state, i.outcome])).toEqual([["i-2", "Resolved", "Succeeded"], ["i-3", "Resolved", "Failed"]])
      expect(read(fresh)?.notes).toEqual(["recovered: the notification was not sent"])
      // The task stayed in the episode: the pass is recorded, about the snapshot it judged.
      expect(result.notRecorded).toBeNull()
      const recorded = heldBranch.find((event) => event._tag === "VerificationRecorded")
      expect(recorded).toMatchObject({ _tag: "VerificationRecorded", snapshotLsn: ctx.snapshotLsn, outcome: "APPROVED" })
    }))

  it.effect("the view is the log at the snapshot LSN, not at the moment verification starts: a recovery in between is not in it", () =>
    Effect.gen(function*() {
      const entered = yield* Deferred.make<Verifier.VerifierCtx>()
      const release = yield* Deferred.make<void>()
      const { verifier } = parked(entered, release)
      const project = checkout()
      yield* Effect.gen(function*() {
        const ids = yield* toVerifying(project)
        // Recovery lands after VERIFYING was entered and before anyone verifies.
        yield* recover(ids)
        const verifying = yield* Effect.fork(Verify.verify({ taskId: ids.taskId, acs: [], invocation: asVerifier }))
        const ctx = yield* Deferred.await(entered)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(verifying)
        expect(ctx.snapshotLsn).toBe(ids.snapshotLsn)
        const attempt2 = ctx.episode.attempts.find((a) => a.attempt === 2)
        expect(attempt2?.intents.find((i) => i.intentId === "i-3")).toMatchObject({ state: "Dispatched", outcome: null })
        expect(attempt2?.notes).toEqual([])
      }).pipe(Effect.provide(world(makeStore(), verifier, project)))
    }))
}

describe("The snapshot barrier on SQLite", () => barrierTests(() => SqliteStore.layer({ directory: temp() })))

await describePostgres("The snapshot barrier on PostgreSQL", () =>
  barrierTests(() => {
    const schema = testSchemaName("ratchet_barrier")
    schemas.push(schema)
    return PostgresStore.layer({ url: Redacted.make(testUrl()), schema, maxConnections: 4 })
  }))
