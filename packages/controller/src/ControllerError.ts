/**
 * The controller's own refusals: what the kernel, the store and the lease cannot say because they
 * do not know the request came from a person at a command line. Each message names the thing, the
 * reason and the next action.
 *
 * Every failure a controller command can end in has an {@link ExitClass}, so every transport maps
 * it the same way: the CLI to its exit code, the MCP server to its error kind.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * No task with this id in this project.
 *
 * @since 0.1.0
 * @category errors
 */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()("@ratchet/controller/TaskNotFound", {
  taskId: Schema.String,
  projectId: Schema.String
}) {
  override get message(): string {
    return `No task "${this.taskId}" in project ${this.projectId}. List this project's tasks with: ratchet task list`
  }
}

/**
 * Another writer holds the task's lease, or the epoch this command presented is no longer the
 * held one. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class LeaseConflict extends Schema.TaggedError<LeaseConflict>()("@ratchet/controller/LeaseConflict", {
  taskId: Schema.String,
  /** The epoch this command presented (`--lease-epoch`), if any. */
  presented: Schema.NullOr(Schema.Int),
  /** The lease as the store holds it now. */
  epoch: Schema.NullOr(Schema.Int),
  held: Schema.Boolean,
  holder: Schema.NullOr(Schema.String),
  deadline: Schema.NullOr(Schema.Int),
  /**
   * The one command that takes the held lease over once its grace has passed: a runner's is taken
   * over by a run, which continues from where it died (ADR 0022), anyone else's by `lease takeover`.
   */
  takeover: Schema.optional(Schema.String)
}) {
  override get message(): string {
    if (this.held && this.presented === null) {
      return `Task ${this.taskId} is leased to ${this.holder ?? "another writer"} (epoch ${this.epoch}); nothing was written. ` +
        `Wait for it to finish (ratchet lease show ${this.taskId}), pass --lease-epoch ${this.epoch} if this process works ` +
        `under that lease, or, if it died, once its grace deadline${
          this.deadline === null ? "" : ` (${new Date(this.deadline).toISOString()})`
        } has passed, take it over: ${this.takeover ?? `ratchet lease takeover ${this.taskId}`}`
    }
    return `Task ${this.taskId}: lease epoch ${this.presented ?? "none"} is not the held one (${
      this.held ? `epoch ${this.epoch} is held by ${this.holder ?? "another writer"}` : "no lease is held now"
    }); nothing was written. Read the lease with: ratchet lease show ${this.taskId}`
  }
}

/**
 * The task kept moving under this command: every retry found a newer version. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class WriteConflict extends Schema.TaggedError<WriteConflict>()("@ratchet/controller/WriteConflict", {
  taskId: Schema.String,
  attempts: Schema.Int
}) {
  override get message(): string {
    return `Task ${this.taskId} changed under this command ${this.attempts} times in a row; nothing was written. ` +
      `Read it (ratchet status ${this.taskId}) and run the command again.`
  }
}

/**
 * A request the controller refuses before it reaches the kernel: a bad argument, or an approval
 * that does not match what the person was shown.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("@ratchet/controller/InvalidRequest", {
  field: Schema.String,
  reason: Schema.String,
  fix: Schema.String
}) {
  override get message(): string {
    return `${this.field}: ${this.reason} ${this.fix}`
  }
}

/**
 * How a transport should classify a failure: the brief's exit codes (`invalid` 2, `hold` 3,
 * `conflict` 4, `unexpected` 1).
 *
 * @since 0.1.0
 * @category models
 */
export type ExitClass = "invalid" | "hold" | "conflict" | "unexpected"

const conflictTags: ReadonlySet<string> = new Set([
  "@ratchet/controller/LeaseConflict",
  "@ratchet/controller/WriteConflict",
  "@ratchet/controller/CheckoutBusy",
  "@ratchet/lease/LeaseHeld",
  "@ratchet/lease/NotHolder",
  "@ratchet/lease/LeaseLost",
  "@ratchet/lease/LeaseContention",
  "@ratchet/lease/TakeoverTooEarly",
  "@ratchet/lease/CheckpointMismatch",
  "@ratchet/storage/VersionConflict",
  "@ratchet/storage/StaleEpoch",
  "@ratchet/storage/LeaseNotExpired",
  "@ratchet/storage/LessonVersionConflict"
])

const invalidTags: ReadonlySet<string> = new Set([
  "@ratchet/controller/TaskNotFound",
  "@ratchet/controller/ApproverKeyError",
  "@ratchet/kernel/ApproversChainError",
  "@ratchet/controller/InvalidRequest",
  "@ratchet/controller/ContractFileError",
  "@ratchet/controller/ProjectNotInitialised",
  "@ratchet/controller/InvalidProjectFile",
  "@ratchet/controller/ProjectFileTooNew",
  "@ratchet/controller/StoreBehind",
  "@ratchet/controller/CheckoutLockUnavailable",
  "@ratchet/kernel/SpecInvalid",
  "@ratchet/kernel/PlanInvalid",
  "@ratchet/kernel/LessonInvalid",
  "@ratchet/kernel/LessonCommandRefused",
  "@ratchet/lease/LeaseNotHeld",
  "@ratchet/lease/TaskNotFound",
  "@ratchet/lease/InvalidOwner",
  "@ratchet/lease/InvalidLeaseSettings",
  "@ratchet/storage/InvalidRequest",
  "@ratchet/storage/BranchNotFound"
])

/**
 * The exit class of any failure a controller command can end in. A kernel refusal is invalid for
 * the task's state, except a stale digest (someone else moved the task), which is a conflict; a
 * HOLD is a HOLD unless one of its reasons is a stale digest (a conflict too); a store written by
 * a newer Ratchet is invalid (upgrade), not unexpected, and so is a store behind what the checkout
 * saw it commit (`StoreBehind`: restore it, or start over with `ratchet init --force`).
 *
 * @since 0.1.0
 * @category models
 */
export const exitClassOf = (error: unknown): ExitClass => {
  const tag = typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : ""
  if (tag === "@ratchet/kernel/TaskCommandHeld") {
    // A HOLD because what was presented is stale (someone changed the spec or plan after it was
    // shown) is a conflict, as the brief counts a stale revision; any other HOLD is a HOLD.
    const reasons = (error as { readonly gate?: { readonly reasons?: ReadonlyArray<{ readonly code?: string }> } }).gate?.reasons ?? []
    return reasons.some((reason) => reason.code === "stale_digest") ? "conflict" : "hold"
  }
  if (tag === "@ratchet/kernel/TaskCommandRefused") {
    return (error as { readonly code?: string }).code === "stale_digest" ? "conflict" : "invalid"
  }
  if (tag === "@ratchet/storage/StorageError") {
    return (error as { readonly reason?: { readonly _tag?: string } }).reason?._tag === "SchemaTooNew" ? "invalid" : "unexpected"
  }
  if (conflictTags.has(tag)) return "conflict"
  if (invalidTags.has(tag)) return "invalid"
  return "unexpected"
}
