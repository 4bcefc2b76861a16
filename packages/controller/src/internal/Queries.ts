/**
 * The reads of a task: its view, the project's tasks, the gate as a caller would meet it, its log
 * and its branches. They come from the read models (and the log), so they write nothing.
 *
 * @since 0.2.0
 * @internal
 */
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Controller from "../Controller.js"
import * as Episode from "../Episode.js"
import * as Explain from "../Explain.js"
import * as Preflight from "../Preflight.js"
import * as StaleEvidence from "../StaleEvidence.js"
import * as TaskBranch from "../TaskBranch.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { store, blobs, project, models, leases, projectId, summaryOf, key, viewOf, authority, pendingStepsOf, codeChangedOf } = kit

  const listTasks: Controller.Service["listTasks"] = Effect.flatMap(
    TaskBranch.summaries(projectId).pipe(
      Effect.provideService(EventStore.EventStore, store),
      Effect.provideService(ReadModel.ReadModels, models)
    ),
    (summaries) => Effect.forEach(summaries, viewOf)
  )

  const status: Controller.Service["status"] = (taskId) => Effect.flatMap(summaryOf(taskId), viewOf)

  const gate: Controller.Service["gate"] = (taskId, to, options) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      const observation = yield* leases.observe(key(taskId))
      const pendingSteps = yield* pendingStepsOf(summary.task)
      const codeChanged = summary.task.state === "BLOCKED" ? yield* codeChangedOf(summary.task) : false
      // A completion is explained on the verdicts `ratchet done` would decide on.
      const episode = summary.task.state === "VERIFYING"
        ? yield* Episode.current(summary.task, summary.branch).pipe(
          Effect.provideService(EventStore.EventStore, store),
          Effect.catchTags({
            "@ratchet/controller/InvalidRequest": () => Effect.succeed(undefined),
            "@ratchet/storage/BranchNotFound": () => Effect.succeed(undefined)
          })
        )
        : undefined
      const trusted = yield* authority
      const now = yield* Clock.currentTimeMillis
      const explained = Explain.explain(summary.task, to, {
        authority: trusted,
        episode: episode && { runId: episode.runId, verdicts: episode.verdicts, workers: episode.view.workers },
        now,
        // The caller holds the lease only when it presents the held epoch (as its writes would).
        leaseHeld: observation.status !== "free" && options?.leaseEpoch !== undefined && observation.epoch === options.leaseEpoch,
        pendingSteps,
        codeChanged
      })
      // And on the evidence `ratchet done` checks after the gate: current, and readable.
      if (episode === undefined || explained.to !== "COMPLETED" || explained.decision !== "CLEAR") return explained
      const stale = yield* StaleEvidence.check(summary.task, episode, project.root, trusted).pipe(
        Effect.provideService(BlobStore.BlobStore, blobs),
        Effect.catchTag("@ratchet/controller/WorkTreeError", (error) =>
          Effect.fail(new Preflight.PreflightError({ operation: error.operation, path: error.root, reason: error.reason, fix: "Check that git works in this checkout (git status)." })))
      )
      return stale === null ? explained : Explain.held(explained, stale.gate(now, summary.version))
    })

  const log: Controller.Service["log"] = (taskId, branch) =>
    Effect.map(summaryOf(taskId), (summary) => store.read({ streamId: taskId, branch: branch ?? summary.branch }))

  const branches: Controller.Service["branches"] = (taskId) =>
    Effect.gen(function*() {
      const summary = yield* summaryOf(taskId)
      const all = yield* store.branches(taskId)
      return { current: summary.branch, branches: all }
    })

  return { listTasks, status, gate, log, branches } satisfies Pick<Controller.Service, "listTasks" | "status" | "gate" | "log" | "branches">
}
