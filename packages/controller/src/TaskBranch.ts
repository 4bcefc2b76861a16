/**
 * Which branch of a task's stream is the task. A task starts on `main`; `ratchet rewind` forks a
 * new branch at an earlier position, and from then on the task lives on the branch created last,
 * while the older branches stay readable (`ratchet log --branch`). The fork in the store (its
 * parent, its LSN and when it was made) is the record of the rewind, so "created last" needs no
 * pointer that could disagree with it.
 *
 * @since 0.1.0
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"

/**
 * The current branch among a stream's branches: the one created last (ties: the greater name),
 * `main` when there are none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const current = (branches: ReadonlyArray<Pick<EventStore.Branch, "branch" | "createdAt">>): string => {
  let found: Pick<EventStore.Branch, "branch" | "createdAt"> | undefined
  for (const branch of branches) {
    if (found === undefined || branch.createdAt > found.createdAt || (branch.createdAt === found.createdAt && branch.branch > found.branch)) {
      found = branch
    }
  }
  return found?.branch ?? EventStore.mainBranch
}

/**
 * The current branch of `taskId`'s stream.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (taskId: string) => Effect.flatMap(EventStore.EventStore, (store) => Effect.map(store.branches(taskId), current))

/**
 * The task summaries of a project on each task's current branch, newest task first. The store lists
 * main-branch summaries; a task that was rewound is read again on its current branch.
 *
 * @since 0.1.0
 * @category constructors
 */
export const summaries = (projectId: string) =>
  Effect.gen(function*() {
    const models = yield* ReadModel.ReadModels
    const store = yield* EventStore.EventStore
    const listed = yield* models.listTasks(projectId)
    const out: Array<ReadModel.TaskSummary> = []
    for (const summary of listed) {
      const branches = yield* store.branches(summary.streamId)
      const branch = current(branches)
      if (branch === summary.branch) {
        out.push(summary)
        continue
      }
      const onBranch = yield* models.taskSummary(summary.streamId, branch)
      out.push(onBranch ?? summary)
    }
    return out
  })
