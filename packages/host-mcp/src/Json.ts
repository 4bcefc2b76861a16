/**
 * The JSON documents the tools answer with: the ones `ratchet <command> --json` prints, field for
 * field (`{ ok, command, exitCode, … }`), so an agent reads the same shapes over MCP as a script
 * reads from the CLI, and the docs describe one format. The CLI's own copies live beside its
 * command table; the end-to-end test compares the two outputs for the same task.
 *
 * @since 0.1.0
 */
import type * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as KernelEvent from "@ratchet/kernel/Event"
import type * as EventStore from "@ratchet/storage/EventStore"

/**
 * A JSON object.
 *
 * @since 0.1.0
 * @category models
 */
export type Document = Record<string, unknown>

/**
 * The CLI's exit code for each class of failure (brief, "CLI conventions").
 *
 * @since 0.1.0
 * @category constants
 */
export const exitCodeOf: Readonly<Record<ControllerError.ExitClass, number>> = { unexpected: 1, invalid: 2, hold: 3, conflict: 4 }

/**
 * A finished command's document: `ok` is whether its exit code is 0 (a HOLD answered as a result,
 * such as the gate's, is not ok and still not an error).
 *
 * @since 0.1.0
 * @category constructors
 */
export const success = (command: string, exitCode: number, body: Document): Document => ({ ok: exitCode === 0, command, exitCode, ...body })

/**
 * The error as a JSON value: its tag, its message and its fields (never a stack or a cause).
 *
 * @since 0.1.0
 * @category constructors
 */
export const error = (value: unknown): Document => {
  if (typeof value === "object" && value !== null) {
    const fields: Document = {}
    for (const [key, field] of Object.entries(value)) {
      if (key !== "stack" && key !== "cause") fields[key] = field
    }
    return { ...fields, _tag: (value as { _tag?: unknown })._tag ?? "Error", message: messageOf(value) }
  }
  return { _tag: "Error", message: String(value) }
}

/**
 * The message of a failure: the controller's errors name the field, the reason and the fix.
 *
 * @since 0.1.0
 * @category constructors
 */
export const messageOf = (value: unknown): string =>
  typeof value === "object" && value !== null && "message" in value && typeof value.message === "string" ? value.message : String(value)

/**
 * A failed command's document, with the exit code its error class maps to.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failure = (command: string, value: unknown): Document => ({
  ok: false,
  command,
  exitCode: exitCodeOf[ControllerError.exitClassOf(value)],
  error: error(value)
})

/**
 * What a write answers with (`ratchet task create --json`, `brief ask`, `spec`, …).
 *
 * @since 0.1.0
 * @category constructors
 */
export const written = (result: Controller.Written, extra: Document = {}): Document => ({
  ...extra,
  taskId: result.task.taskId,
  state: result.task.state,
  events: result.events,
  firstLsn: result.firstLsn,
  lastLsn: result.lastLsn,
  projection: result.projection,
  warnings: result.warnings,
  task: result.task
})

/**
 * One event of the log as `ratchet log <task> --json` prints it (one NDJSON line).
 *
 * @since 0.1.0
 * @category constructors
 */
export const logRecord = (stored: EventStore.StoredEvent): Document => ({
  lsn: stored.lsn,
  at: new Date(stored.event.at).toISOString(),
  recordedAt: new Date(stored.recordedAt).toISOString(),
  type: stored.event._tag,
  actor: stored.event.actor,
  epoch: stored.epoch,
  version: stored.version,
  branch: stored.branch,
  operationId: stored.operationId,
  event: KernelEvent.encode(stored.event)
})
