#!/usr/bin/env node
/**
 * `npm run demo`: one task driven from brief to verified completion through the real kernel and
 * the embedded SQLite store, printing every decision, every HOLD a person would meet, and what
 * the store holds at the end.
 *
 * Each step reads the task's summary (a read model, O(1) in history), lets the kernel decide the
 * command, and appends the events with the expected version, so this is the same loop the
 * controller runs. Approvals are receipts a person gives on a terminal; here the script gives
 * them itself, as the person "demo", and says so — the CLI takes them interactively.
 *
 * The store lives in $RATCHET_HOME when it is set, otherwise in a fresh temporary directory.
 */
import { spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as Chunk from "effect/Chunk"
import { Spec, Plan, Task } from "@ratchet/kernel"
import { EventStore, ReadModel } from "@ratchet/storage"
import { SqliteStore } from "@ratchet/storage-sqlite"

const home = process.env["RATCHET_HOME"] ?? fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-demo-"))
const taskId = `demo-${randomUUID().slice(0, 8)}`
const projectId = "demo-project"

const person = /** @type {const} */ ({ kind: "user", id: "demo" })
const agent = /** @type {const} */ ({ kind: "agent", id: "agent-1" })
const runner = /** @type {const} */ ({ kind: "runner", id: "runner-1" })
const verifier = /** @type {const} */ ({ kind: "verifier", id: "verifier-1" })

let clock = Date.now()
const at = () => (clock += 1)

/**
 * A receipt as the CLI records one after a person typed the digest's first characters.
 *
 * @param {"restatement" | "spec" | "plan"} subject
 * @param {string} digest
 */
const receipt = (subject, digest) => ({
  subject,
  digest: /** @type {any} */ (digest),
  actor: person,
  channel: "terminal",
  at: at()
})

const line = (/** @type {string} */ text) => console.log(text)

const program = Effect.gen(function*() {
  const store = yield* EventStore.EventStore
  const models = yield* ReadModel.ReadModels

  /** The aggregate and its stream version, read from the task summary. */
  const current = Effect.map(models.taskSummary(taskId), (summary) =>
    summary === null
      ? { aggregate: Task.initial, version: 0 }
      : { aggregate: /** @type {Task.Aggregate} */ (summary.task), version: summary.version })

  /**
   * Decide a command against the stored state and append what it decides; print a HOLD or a
   * refusal instead when the kernel says no.
   *
   * @param {string} label
   * @param {Task.Command} command
   * @param {{ epoch?: number | null, extra?: ReadonlyArray<any> }} [options]
   */
  const step = (label, command, options = {}) =>
    Effect.gen(function*() {
      const { aggregate, version } = yield* current
      const decision = Task.decide(command, aggregate)
      if (Either.isLeft(decision)) {
        const rejection = decision.left
        if (rejection._tag === "@ratchet/kernel/TaskCommandHeld") {
          line(`  HOLD  ${label}`)
          for (const reason of rejection.gate.reasons) line(`        - ${reason.code}: ${reason.message}`)
          for (const action of rejection.gate.requiredActions) {
            line(`        → ${action.description}${action.command === undefined ? "" : `: ${action.command}`}`)
          }
        } else {
          line(`  NO    ${label}: ${rejection.message}`)
        }
        return false
      }
      const events = [...decision.right, ...(options.extra ?? [])]
      const result = yield* store.append({
        projectId,
        streamId: taskId,
        expectedVersion: version,
        epoch: options.epoch ?? null,
        operationId: randomUUID(),
        events
      })
      const names = events.map((event) => event._tag).join(", ") || "(no change)"
      const state = (yield* current).aggregate
      line(
        `  ok    ${label} → ${state._tag === "Task" ? state.state : "?"}   [lsn ${result.firstLsn}–${result.lastLsn}: ${names}]`
      )
      return true
    })

  /** Append run-level facts under the lease, with no lifecycle decision. */
  const facts = (/** @type {string} */ label, /** @type {number} */ epoch, /** @type {ReadonlyArray<any>} */ events) =>
    Effect.gen(function*() {
      const { version } = yield* current
      const result = yield* store.append({
        projectId,
        streamId: taskId,
        expectedVersion: version,
        epoch,
        operationId: randomUUID(),
        events
      })
      line(`  ok    ${label}   [lsn ${result.firstLsn}–${result.lastLsn}: ${events.map((e) => e._tag).join(", ")}]`)
    })

  line(`Ratchet demo — task ${taskId}, store ${home}`)
  line("")
  line("brief")
  yield* step("create the task", { _tag: "CreateTask", taskId, projectId, goal: "Make the flaky date test deterministic", slug: "flaky-date-test", actor: person, at: at() })
  yield* step("begin the interview (setup check)", { _tag: "BeginInterview", projectInitialized: true, storeWritable: true, actor: person, at: at() })
  yield* step("the agent asks a blocking question", { _tag: "AskQuestion", questionId: "Q-1", text: "Which timezone do the tests run in?", blocking: true, actor: agent, at: at() })
  yield* step("close the brief too early", { _tag: "CloseBrief", actor: agent, at: at() })
  yield* step("answer it", { _tag: "AnswerQuestion", questionId: "Q-1", answer: "UTC, set by the test runner", source: "user", actor: person, at: at() })
  const restatement = "Freeze the clock in the date test so it passes in any timezone."
  yield* step("restate the goal", { _tag: "Restate", text: restatement, actor: agent, at: at() })
  yield* step("the agent tries to approve it", { _tag: "ApproveRestatement", receipt: { ...receipt("restatement", Task.restatementDigest(restatement)), actor: agent }, actor: agent, at: at() })
  yield* step("a person approves it (simulated terminal receipt)", { _tag: "ApproveRestatement", receipt: receipt("restatement", Task.restatementDigest(restatement)), actor: person, at: at() })
  yield* step("close the brief", { _tag: "CloseBrief", actor: agent, at: at() })

  line("")
  line("contract")
  const spec = Either.getOrThrow(Spec.decode({
    goal: "Make the flaky date test deterministic",
    nonGoals: ["Rewrite the date library"],
    constraints: ["No new runtime dependencies"],
    acceptanceCriteria: [
      { id: "AC-001", outcome: "The date test passes in every timezone", required: true, verify: { command: "node --version", expectExitCode: 0, timeoutSeconds: 60 } }
    ],
    execution: { allowedScope: ["test/**"], retry: { maxSuccessors: 2 } }
  }))
  yield* step("propose the spec", { _tag: "ProposeSpec", spec, actor: agent, at: at() })
  yield* step("approve the spec (simulated terminal receipt)", { _tag: "ApproveSpec", receipt: receipt("spec", Spec.digest(spec)), actor: person, at: at() })
  line(`        spec digest ${Spec.digest(spec)}`)

  line("")
  line("plan")
  yield* step("preflight the repository", { _tag: "RecordPreflight", observation: { head: "0000000", dirtyPaths: [], missingPaths: [], invalidScopes: [] }, actor: runner, at: at() })
  const plan = Either.getOrThrow(Plan.decode({
    specDigest: Spec.digest(spec),
    steps: [{ id: "check-node", title: "Check the toolchain", acRefs: ["AC-001"], run: { command: "node --version" }, timeoutSeconds: 60 }]
  }, spec))
  yield* step("propose the plan", { _tag: "ProposePlan", plan, actor: agent, at: at() })
  yield* step("approve the plan (simulated terminal receipt)", { _tag: "ApprovePlan", receipt: receipt("plan", Plan.digest(plan)), actor: person, at: at() })

  line("")
  line("impl")
  const runId = `run-${randomUUID().slice(0, 8)}`
  const owner = { workspaceId: "demo-workspace", host: "runner", pid: process.pid, processStartedAt: clock }
  const startRun = /** @type {(held: boolean) => Task.Command} */ (held) => ({ _tag: "StartRun", runId, specDigest: Spec.digest(spec), planDigest: Plan.digest(plan), lease: { held, epoch: 1 }, actor: runner, at: at() })
  yield* step("start the run without the writer lease", startRun(false))
  yield* step("take the lease and start the run in one transaction", startRun(true), {
    epoch: 1,
    extra: [{ _tag: "LeaseAcquired", version: 1, actor: runner, at: at(), epoch: 1, owner, heartbeatMs: 2000, graceMs: 6000 }]
  })
  yield* facts("checkpoint the run start", 1, [{ _tag: "CheckpointRecorded", version: 1, actor: runner, at: at(), kind: "run_start", runId }])
  const attempt = { runId, stepId: "check-node", attempt: 1 }
  yield* facts("schedule and admit attempt 1", 1, [
    { _tag: "AttemptScheduled", version: 1, actor: runner, at: at(), ...attempt },
    { _tag: "AttemptTransitioned", version: 1, actor: runner, at: at(), ...attempt, from: "Pending", to: "Running" },
    { _tag: "IntentRecorded", version: 1, actor: runner, at: at(), intentId: "intent-1", ...attempt, description: "node --version" }
  ])
  yield* facts("intent dispatched, durably, before the command starts", 1, [{ _tag: "IntentDispatched", version: 1, actor: runner, at: at(), intentId: "intent-1" }])
  const child = spawnSync(process.execPath, ["--version"], { encoding: "utf8" })
  line(`        ran: node --version → exit ${child.status}, ${child.stdout.trim()}`)
  yield* facts("intent resolved, attempt succeeded", 1, [
    { _tag: "IntentResolved", version: 1, actor: runner, at: at(), intentId: "intent-1", outcome: child.status === 0 ? "Succeeded" : "Failed", resultRefs: [] },
    { _tag: "AttemptTransitioned", version: 1, actor: runner, at: at(), ...attempt, from: "Running", to: child.status === 0 ? "Succeeded" : "Failed" },
    { _tag: "CheckpointRecorded", version: 1, actor: runner, at: at(), kind: "step", runId }
  ])

  line("")
  line("verify")
  const { version } = yield* current
  yield* step("enter verification (every step terminal)", { _tag: "EnterVerification", pendingSteps: [], snapshotLsn: version, actor: runner, at: at() }, { epoch: 1 })
  /** @type {(by: typeof runner | typeof verifier) => import("@ratchet/kernel/Event").AcVerdict} */
  const verdict = (by) => ({ acId: "AC-001", verdict: "PASS", evidenceRefs: ["evidence:node-version"], specDigest: Spec.digest(spec), verifier: by, at: at() })
  yield* step("complete on the worker's own word", { _tag: "Complete", verdicts: [verdict(runner)], workers: [runner], actor: runner, at: at() }, { epoch: 1 })
  yield* step("complete on an independent verifier's evidence, releasing the lease in the same transaction", {
    _tag: "Complete",
    verdicts: [verdict(runner), verdict(verifier)],
    workers: [runner],
    actor: verifier,
    at: at()
  }, {
    epoch: 1,
    extra: [
      { _tag: "CheckpointRecorded", version: 1, actor: verifier, at: at(), kind: "terminal", runId },
      { _tag: "LeaseReleased", version: 1, actor: verifier, at: at(), epoch: 1 }
    ]
  })

  line("")
  line("what the store holds")
  const summary = yield* models.taskSummary(taskId)
  const lease = yield* models.lease(projectId, taskId)
  const checkpoints = yield* models.checkpoints(taskId)
  const stored = yield* models.snapshot(taskId)
  const rebuilt = yield* models.rebuild(taskId)
  const log = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: taskId })))
  const same = JSON.stringify([...stored.attempts.values(), ...stored.intents.values(), stored.summary]) ===
    JSON.stringify([...rebuilt.attempts.values(), ...rebuilt.intents.values(), rebuilt.summary])
  line(`  state ${summary?.task.state}, version ${summary?.version}, ${log.length} events in the log`)
  line(`  terminal checkpoint: ${checkpoints.some((c) => c.kind === "terminal") ? "yes" : "no"}, lease held: ${lease?.held ? "yes" : "no"}`)
  line(`  COMPLETED is shown only because a fresh read confirms both: ${summary?.task.state === "COMPLETED" && checkpoints.some((c) => c.kind === "terminal") && lease?.held === false ? "yes" : "no"}`)
  line(`  read models equal a cold rebuild from the log: ${same ? "yes" : "NO"}`)
  line("")
  line(`The store is in ${home} (ratchet.db, blobs/). Run again to add another task to it.`)
})

Effect.runPromise(Effect.provide(program, SqliteStore.layer({ directory: home }))).catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
})
