/**
 * The reads of a task: its view, the project's tasks, the gate as a caller would meet it, its log
 * and its branches. They come from the read models (and the log), so they write nothing.
 *
 * @since 0.2.0
 * @internal
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Controller from "../Controller.js"
import * as Episode from "../Episode.js"
import * as Explain from "../Explain.js"
import * as TaskBranch from "../TaskBranch.js"
import * as UseCase from "./UseCase.js"

/**
 * The use cases of this family over the shared kit (`UseCase`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (kit: UseCase.Kit) => {
  const { store, models, leases, projectId, summaryOf, key, viewOf, authority, pendingStepsOf, codeChangedOf } = kit

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
          Effect.map((found) => ({ runId: found.runId, verdicts: found.verdicts, workers: found.view.workers })),
          Effect.provideService(EventStore.EventStore, store),
          Effect.catchTags({
            "@ratchet/controller/InvalidRequest": () => Effect.succeed(undefined),
            "@ratchet/storage/BranchNotFound": () => Effect.succeed(undefined)
          })
        )
        : undefined
      return Explain.explain(summary.task, to, {
        authority: yield* authority,
        episode,
        now: yield* Clock.currentTimeMillis,
        // The caller holds the lease only when it presents the held epoch (as its writes would).
        leaseHeld: observation.status !== "free" && options?.leaseEpoch !== undefined && observation.epoch === options.leaseEpoch,
        pendingSteps,
        codeChanged
      })
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
