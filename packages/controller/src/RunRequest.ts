/**
 * Requests to a live runner from another terminal: cancel the run now, or pause it at the next
 * step boundary. The runner holds the task's writer lease, so nobody else may write the task's
 * stream; a request is therefore a small file beside the store (`$RATCHET_HOME/run/<task>.json`,
 * written atomically) that the runner polls while it works and acts on under its own lease. The
 * durable record is what the runner then appends (`TaskCancelled`, `TaskPaused`); the file is only
 * the doorbell, removed once acted on (ADR 0011).
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as KernelEvent from "@ratchet/kernel/Event"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Request = Schema.Struct({
  kind: Schema.Literal("cancel", "pause"),
  reason: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096)),
  actor: KernelEvent.Actor,
  at: Schema.Int
})

/**
 * @since 0.1.0
 * @category models
 */
export type Request = typeof Request.Type

/**
 * Where requests for the runners of this store live.
 *
 * @since 0.1.0
 * @category constructors
 */
export const directoryOf = (home: string): string => path.join(home, "run")

const fileOf = (home: string, taskId: string) => path.join(directoryOf(home), `${taskId}.json`)

/**
 * Writes a request for `taskId`'s runner (replacing an earlier one: a cancel wins over a pause
 * because the caller writes the stronger request last).
 *
 * @since 0.1.0
 * @category constructors
 */
export const write = (home: string, taskId: string, request: Request): void => {
  fs.mkdirSync(directoryOf(home), { recursive: true, mode: 0o700 })
  const target = fileOf(home, taskId)
  const temp = `${target}.${process.pid}.tmp`
  fs.writeFileSync(temp, JSON.stringify(request), { mode: 0o600 })
  fs.renameSync(temp, target)
}

/**
 * The pending request for `taskId`, if any. An unreadable or malformed file is ignored (and
 * removed): a request is a doorbell, and a damaged one must not stop a run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (home: string, taskId: string): Request | null => {
  let text: string
  try {
    text = fs.readFileSync(fileOf(home, taskId), "utf8")
  } catch {
    return null
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text.slice(0, 64 * 1024))
  } catch {
    clear(home, taskId)
    return null
  }
  const decoded = Schema.decodeUnknownEither(Request)(parsed)
  if (Either.isLeft(decoded)) {
    clear(home, taskId)
    return null
  }
  return decoded.right
}

/**
 * Removes `taskId`'s request once it was acted on.
 *
 * @since 0.1.0
 * @category constructors
 */
export const clear = (home: string, taskId: string): void => {
  try {
    fs.rmSync(fileOf(home, taskId), { force: true })
  } catch {
    // Already gone.
  }
}
