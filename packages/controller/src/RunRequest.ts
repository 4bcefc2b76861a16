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
  at: Schema.Int,
  /**
   * The lease epoch of the run it is for: a runner acts only on a request for its own epoch (or
   * for none, as its own Ctrl-C writes), and drops one left for an earlier run.
   */
  epoch: Schema.optional(Schema.Int)
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

/** The most a request file may hold; a request is a few hundred bytes. */
const maxRequestBytes = 64 * 1024

/** What {@link readBounded} returns for a file that cannot be a request. */
const damaged = Symbol("damaged")

/**
 * The text of the request file at `file`: `null` when there is none (or it cannot be opened),
 * `damaged` when it is not a regular file (a symbolic link, a FIFO, a device, a directory) or
 * is larger than any request. Opened without following a symbolic link and without blocking, and
 * read only up to the limit, so neither a FIFO nor a link to `/dev/zero` stalls a runner's poll.
 */
const readBounded = (file: string): string | typeof damaged | null => {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | (fs.constants.O_NOFOLLOW ?? 0))
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ELOOP" ? damaged : null
  }
  try {
    if (!fs.fstatSync(fd).isFile()) return damaged
    const buffer = Buffer.alloc(maxRequestBytes + 1)
    let length = 0
    while (length < buffer.length) {
      const read = fs.readSync(fd, buffer, length, buffer.length - length, null)
      if (read === 0) break
      length += read
    }
    return length > maxRequestBytes ? damaged : buffer.toString("utf8", 0, length)
  } catch {
    return damaged
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The pending request for `taskId`, if any. An unreadable or malformed file is ignored (and
 * removed): a request is a doorbell, and a damaged one must not stop a run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (home: string, taskId: string): Request | null => {
  const text = readBounded(fileOf(home, taskId))
  if (text === null) return null
  if (text === damaged) {
    clear(home, taskId)
    return null
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
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

/**
 * Removes `taskId`'s request only if it is still `request` (a newer one written meanwhile, say a
 * cancel after a pause, stays for the runner to see).
 *
 * @since 0.1.0
 * @category constructors
 */
export const clearIf = (home: string, taskId: string, request: Request): void => {
  const current = read(home, taskId)
  if (current !== null && current.kind === request.kind && current.at === request.at && current.epoch === request.epoch) {
    clear(home, taskId)
  }
}

/**
 * Whether `request` is for the run holding the lease at `epoch`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isFor = (request: Request, epoch: number): boolean => request.epoch === undefined || request.epoch === epoch
