/**
 * The episode of a VERIFYING task as the store holds it: the branch's events, the snapshot LSN the
 * task entered VERIFYING at (the newest `VerificationStarted` of its run), the frozen
 * {@link EpisodeView.EpisodeView} built at that LSN, and the verdicts recorded in this episode so
 * far. `ratchet verify` judges it; `ratchet done` completes on its verdicts.
 *
 * The view carries the lessons shown to the run's agent (ADR 0038), read from the lessons' own
 * streams (`LessonShown`) in the store's `LessonStore`: the project's lessons whose view records
 * the run, then their showings to it. Every store layer provides a `LessonStore`; a context
 * without one (a test's bare event store) reads as none shown.
 *
 * @since 0.1.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import type * as Event from "@ratchet/kernel/Event"
import type * as Task from "@ratchet/kernel/Task"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LessonStore from "@ratchet/storage/LessonStore"
import * as EpisodeView from "@ratchet/verifier/EpisodeView"
import * as Verification from "@ratchet/verifier/Verification"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as ControllerError from "./ControllerError.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Episode {
  readonly branch: string
  readonly runId: string
  readonly snapshotLsn: number
  readonly view: EpisodeView.EpisodeView
  /** Every verdict recorded against this episode, oldest first. */
  readonly verdicts: ReadonlyArray<Event.AcVerdict>
  /**
   * The trees (HEAD and dirty digest at their last step boundary) of this run's earlier episodes
   * whose verification concluded REVISE: a revision that leaves the tree as one of them made no
   * progress.
   */
  readonly revisedTrees: ReadonlyArray<{ readonly snapshotLsn: number; readonly head: string | null; readonly dirtyDigest: string }>
  /** The passes recorded against it, oldest first. */
  readonly passes: ReadonlyArray<{ readonly lsn: number; readonly outcome: "APPROVED" | "REVISE" | "BLOCKED" | "HELD"; readonly verdicts: ReadonlyArray<Event.AcVerdict> }>
}

/**
 * Every showing of a lesson of `projectId` to `runId`, as the lessons' streams record them.
 *
 * @since 0.4.0
 * @category constructors
 */
export const lessonsShown = (projectId: string, runId: string) =>
  Effect.flatMap(Effect.serviceOption(LessonStore.LessonStore), (found) =>
    Option.match(found, {
      onNone: () => Effect.succeed<ReadonlyArray<EpisodeView.Shown>>([]),
      onSome: (lessons) =>
        Effect.gen(function*() {
          const shownTo = (yield* lessons.list({ projectId })).filter((lesson) => lesson.view.shownTo.includes(runId))
          const shown: Array<EpisodeView.Shown> = []
          for (const lesson of shownTo) {
            for (const stored of yield* lessons.read(lesson.id)) {
              const event = stored.event
              if (event._tag !== "LessonShown" || event.shown.runId !== runId) continue
              const { at, attempt, stepId, via } = event.shown
              shown.push({ lessonId: lesson.id, runId, status: event.status, via, at, stepId, attempt })
            }
          }
          return shown
        })
    }))

/**
 * Reads the episode of `task`'s current run on `branch`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const current = (task: Task.Task, branch: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: task.taskId, branch })))
    const run = task.run
    const noEpisode = (reason: string) =>
      new ControllerError.InvalidRequest({
        field: "task",
        reason,
        fix: `Let the run finish its steps first: ratchet run ${task.taskId}`
      })
    if (run === null) return yield* noEpisode(`task ${task.taskId} has no run yet, so there is nothing to verify.`)
    let snapshotLsn: number | null = null
    for (const stored of events) {
      if (stored.event._tag === "VerificationStarted" && stored.event.runId === run.runId) snapshotLsn = stored.event.snapshotLsn
    }
    if (snapshotLsn === null) return yield* noEpisode(`run ${run.runId} of task ${task.taskId} never reached VERIFYING.`)
    const shown = yield* lessonsShown(task.projectId, run.runId)
    const built = EpisodeView.build({ taskId: task.taskId, branch, snapshotLsn, events, shown })
    if (Either.isLeft(built)) return yield* Effect.die(built.left)
    const passes: Array<Episode["passes"][number]> = []
    const boundaries: Array<{ readonly lsn: number; readonly head: string | null; readonly dirtyDigest: string }> = []
    const revisedTrees: Array<Episode["revisedTrees"][number]> = []
    for (const stored of events) {
      const event = stored.event
      if (event._tag === "BoundaryRecorded" && event.runId === run.runId) {
        boundaries.push({ lsn: stored.lsn, head: event.head, dirtyDigest: event.dirtyDigest })
      }
      if (event._tag !== "VerificationRecorded" || event.runId !== run.runId) continue
      if (event.snapshotLsn === snapshotLsn) passes.push({ lsn: stored.lsn, outcome: event.outcome, verdicts: event.verdicts })
      else if (event.snapshotLsn < snapshotLsn && event.outcome === "REVISE") {
        const at = boundaries.filter((boundary) => boundary.lsn <= event.snapshotLsn).at(-1)
        if (at !== undefined) revisedTrees.push({ snapshotLsn: event.snapshotLsn, head: at.head, dirtyDigest: at.dirtyDigest })
      }
    }
    return {
      branch,
      runId: run.runId,
      snapshotLsn,
      view: built.right,
      verdicts: passes.flatMap((pass) => pass.verdicts),
      revisedTrees,
      passes
    } satisfies Episode
  })

/**
 * The verdict per criterion of `episode` that the completion gate counts for `task` (signed by one
 * of `authority`'s approvers, against the current spec, by someone who did not work on the run).
 *
 * @since 0.2.0
 * @category getters
 */
export const counted = (task: Task.Task, episode: Episode, authority: Authority.Authority): ReadonlyMap<string, Event.AcVerdict> =>
  task.spec === null
    ? new Map()
    : Verification.counted(episode.verdicts, {
      taskId: task.taskId,
      runId: episode.runId,
      currentSpecDigest: task.spec.digest,
      workers: episode.view.workers,
      authority
    })
