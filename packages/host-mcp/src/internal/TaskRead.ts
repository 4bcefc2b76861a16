/**
 * The task aggregate on its current branch, for what the controller's views do not carry (the
 * rendered spec and plan, the run's attempts). Read from the stored read model, like the
 * controller's own reads, and refused the same way for another project's task.
 */
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as TaskBranch from "@ratchet/controller/TaskBranch"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"

/** The task `taskId` of this project with the branch it lives on, or `TaskNotFound`. */
export const taskOf = (taskId: string) =>
  Effect.gen(function*() {
    const project = yield* Controller.Project
    const projectId = project.project.projectId
    // The controller's status validates the id and names a malformed one as such.
    yield* Effect.flatMap(Controller.Controller, (c) => c.status(taskId))
    const models = yield* ReadModel.ReadModels
    const branch = yield* TaskBranch.of(taskId)
    const summary = yield* models.taskSummary(taskId, branch)
    if (summary === null || summary.projectId !== projectId) return yield* new ControllerError.TaskNotFound({ taskId, projectId })
    return { task: summary.task, branch }
  })
