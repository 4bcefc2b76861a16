/**
 * The runner's writes: every one through the command handler, under the run's lease epoch, against
 * the stream as the runner's last write left it. The runner holds the lease, so nobody else appends
 * to the task while it runs and that state is right: a steady run reads nothing back (a stream that
 * moved anyway is read afresh by the handler and decided again).
 *
 * A write the store fences (another runner took the lease over) is the run's `LeaseLost`: the run
 * stops at once, and the command it was running is stopped with it.
 *
 * @since 0.2.0
 */
import type * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseError from "@ratchet/lease/LeaseError"
import type * as EventStore from "@ratchet/storage/EventStore"
import type * as ReadModel from "@ratchet/storage/ReadModel"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as CommandHandler from "./CommandHandler.js"
import * as ControllerError from "./ControllerError.js"

/**
 * What a runner's write fails with.
 *
 * @since 0.2.0
 * @category models
 */
export type WriteError = Exclude<CommandHandler.HandleError, ControllerError.LeaseConflict> | LeaseError.LeaseLost

/**
 * @since 0.2.0
 * @category models
 */
export interface Writer {
  /** The stream as the last write left it (or as it was read when the run began). */
  readonly current: () => CommandHandler.Read
  /** Decides `decide`'s commands and facts against the current stream and appends them as one transaction. */
  readonly write: <E = never, R = never>(
    decide: (read: CommandHandler.Read, at: number) => Effect.Effect<ReadonlyArray<Decider.Command | Event.Event>, E, R> | ReadonlyArray<Decider.Command | Event.Event>,
    trailing?: (at: number) => ReadonlyArray<Event.Event>
  ) => Effect.Effect<CommandHandler.Handled, WriteError | E, R | EventStore.EventStore | ReadModel.ReadModels>
}

/**
 * A writer for `taskId` on `branch` under `epoch`, starting from `initial`; `lost` is completed
 * when the store says the lease is no longer this run's.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (input: {
  readonly projectId: string
  readonly taskId: string
  readonly branch: string
  readonly epoch: number
  readonly initial: CommandHandler.Read
  readonly lost: Deferred.Deferred<never, LeaseError.LeaseLost>
}): Writer => {
  let known = input.initial
  return {
    current: () => known,
    write: (decide, trailing) =>
      CommandHandler.handle({
        projectId: input.projectId,
        streamId: input.taskId,
        branch: input.branch,
        epoch: input.epoch,
        // A stream that moved is read again as the run reads it at its start: its frontier.
        withRun: "frontier",
        known,
        decide: (read, at) => {
          const decided = decide(read, at)
          return Effect.isEffect(decided) ? decided : Effect.succeed(decided)
        },
        trailing: trailing === undefined ? undefined : (_task, at) => trailing(at),
        describeHolder: () => "another writer"
      }).pipe(
        Effect.tap((handled) =>
          Effect.sync(() => {
            known = handled.after
          })
        ),
        Effect.catchIf((error): error is ControllerError.LeaseConflict => error instanceof ControllerError.LeaseConflict, (conflict) => {
          const lost = new LeaseError.LeaseLost({
            projectId: input.projectId,
            taskId: input.taskId,
            epoch: input.epoch,
            currentEpoch: conflict.epoch,
            held: conflict.held
          })
          return Effect.zipRight(Deferred.fail(input.lost, lost), Effect.fail(lost))
        })
      )
  }
}
