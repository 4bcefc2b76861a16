/**
 * A stand-in for the runner, which does not exist yet: drives a PLAN_APPROVED task to FAILED by
 * appending through the store exactly what a runner would (the kernel decides every lifecycle
 * event; the lease events are the runner's own), in three transactions:
 *
 * 1. the writer lease and the run start, together (`RunStarted` + `LeaseAcquired`, epoch 1);
 * 2. the run cannot be recovered: `Fail` (`TaskFailed`), under the lease;
 * 3. the lease released (`LeaseReleased`).
 *
 * The tests run its bundle, which their global setup builds (`harness.helper`).
 * Run as `node --conditions=@ratchet/source --import tsx fail-run.ts <repo> <taskId>` with the
 * same environment as the CLI (`RATCHET_HOME`, or `RATCHET_DATABASE_URL` and
 * `RATCHET_DATABASE_SCHEMA`). Prints one JSON line `{ ok, runId, lsns }`; any refusal is a non-zero
 * exit with the reason on stderr.
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ProjectApprovers from "@ratchet/controller/ProjectApprovers"
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

const [repo, taskId] = process.argv.slice(2)
if (repo === undefined || taskId === undefined) {
  process.stderr.write("usage: fail-run.ts <repo> <taskId>\n")
  process.exit(2)
}
const projectId = (JSON.parse(fs.readFileSync(path.join(repo, ".ratchet", "project.json"), "utf8")) as { projectId: string }).projectId
const runner: Event.Actor = { kind: "runner", id: "e2e-runner" }
const epoch = 1
const runId = `run-${randomUUID().slice(0, 8)}`
const startedAt = Date.now()

/** The kernel's events for `command`, or a thrown refusal (a bug in the scenario, not a result). */
const decide = (command: Task.Command, task: Task.Task): ReadonlyArray<Event.Event> =>
  Either.getOrThrowWith(Task.decide(command, task), (rejection) => new Error(`${command._tag}: ${rejection.message}`))

const program = Effect.gen(function*() {
  const store = yield* EventStore.EventStore
  const models = yield* ReadModel.ReadModels
  const lsns: Array<number> = []

  /** One transaction: the events built from the stored task, at its version, under the lease epoch. */
  const append = (build: (task: Task.Task) => ReadonlyArray<Event.Event>) =>
    Effect.gen(function*() {
      const summary = yield* models.taskSummary(taskId)
      if (summary === null) return yield* Effect.dieMessage(`no task ${taskId} in the store`)
      const result = yield* store.append({
        projectId,
        streamId: taskId,
        expectedVersion: summary.version,
        epoch,
        operationId: `op-${randomUUID()}`,
        events: build(summary.task)
      })
      lsns.push(result.lastLsn)
    })

  // The run start checks the approvals again, against the approvers the store trusts.
  const authority = yield* ProjectApprovers.authority(projectId, repo)
  yield* append((task) => {
    if (task.spec === null || task.plan === null) throw new Error(`task ${taskId} has no spec or plan`)
    return [
      ...decide({
        _tag: "StartRun",
        runId,
        specDigest: task.spec.digest,
        planDigest: task.plan.digest,
        lease: { held: true, epoch },
        authority,
        actor: runner,
        at: Date.now()
      }, task),
      {
        _tag: "LeaseAcquired",
        version: 1,
        actor: runner,
        at: Date.now(),
        epoch,
        owner: { workspaceId: "ws-e2e-runner", host: "runner", pid: process.pid, processStartedAt: startedAt },
        heartbeatMs: 5_000,
        graceMs: 30_000
      }
    ]
  })
  yield* append((task) =>
    decide({ _tag: "Fail", reason: "the run lineage cannot be recovered", evidenceRefs: [], actor: runner, at: Date.now() }, task)
  )
  yield* append(() => [{ _tag: "LeaseReleased", version: 1, actor: runner, at: Date.now(), epoch }])
  return lsns
})

const layer = (process.env["RATCHET_DATABASE_URL"] ?? "") === "" ? SqliteStore.layerConfig : PostgresStore.layerConfig

Effect.runPromise(Effect.provide(program, layer)).then(
  (lsns) => {
    process.stdout.write(`${JSON.stringify({ ok: true, runId, lsns })}\n`)
  },
  (error: unknown) => {
    process.stderr.write(`fail-run: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
)
