/**
 * One runner per checkout. Two runners in one work tree would each see the other's changes as
 * their own step's (and block on a scope violation that is not theirs, or hide one), so a runner
 * holds a lock on the checkout for as long as it lives: a file under `$RATCHET_HOME/run/` named
 * after the checkout's real path, holding the runner's pid, the machine's boot and the runner's
 * start time (a pid is reused: a process that has the number now is not the runner). A lock whose
 * process is gone (a runner killed with SIGKILL, a reboot, a pid given to another process since) is
 * stale and taken over. A lock that cannot be written at all (a read-only or full disk) refuses the
 * run: a runner never goes on unlocked. So is, for a
 * runner taking a lease over (`--takeover`), the lock of a runner that is stopped (SIGSTOP, or
 * suspended with its terminal): the takeover fences every write it would make when it goes on,
 * and it would otherwise hold its successor out for as long as it stays stopped.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { alive, bootId, stat } from "./internal/processes.js"

/**
 * Another live runner works in this checkout.
 *
 * @since 0.1.0
 * @category errors
 */
export class CheckoutBusy extends Schema.TaggedError<CheckoutBusy>()("@ratchet/controller/CheckoutBusy", {
  root: Schema.String,
  pid: Schema.Int
}) {
  override get message(): string {
    return `Another runner (pid ${this.pid}) is running in this checkout (${this.root}); two runners in one work tree would take each other's changes for their own. Wait for it to finish (ratchet status), or run the other task from another clone.`
  }
}

/**
 * The lock file cannot be written: the run is refused rather than run unlocked.
 *
 * @since 0.2.0
 * @category errors
 */
export class CheckoutLockUnavailable extends Schema.TaggedError<CheckoutLockUnavailable>()("@ratchet/controller/CheckoutLockUnavailable", {
  file: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `The checkout lock ${this.file} cannot be written (${this.reason}), so this runner cannot make sure it is the only one in this work tree; nothing was run. Make $RATCHET_HOME/run writable (or free space on its disk), then run again.`
  }
}

/** The pid of the live runner holding `file`, or null when it is free or stale (see the module comment). */
const holder = (file: string, takeover: boolean): number | null => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8").slice(0, 128)
  } catch {
    return null
  }
  // "<pid> <boot>" (an older Ratchet's) or "<pid> <boot> <start time>".
  const match = /^(\d{1,10}) (\S{1,64})(?: (\d{1,20}))?$/.exec(text.trim())
  if (match === null || match[2] !== bootId()) return null
  const pid = Number(match[1])
  if (pid === process.pid || !alive(pid)) return null
  const process_ = stat(pid)
  // The number was given to another process since the runner that wrote it ended.
  if (match[3] !== undefined && process_ !== null && process_.startTicks !== match[3]) return null
  // A zombie (killed, not yet reaped by its parent, as a loaded machine leaves it for a while) has
  // ended: it holds nothing, though its number and start time still match.
  if (process_ !== null && (process_.state === "Z" || process_.state === "X")) return null
  const state = takeover ? process_?.state : undefined
  return state === "T" || state === "t" ? null : pid
}

/**
 * Holds the lock on the checkout at `root` for the scope, or fails with {@link CheckoutBusy};
 * `takeover` (a runner taking a lease over) also takes it from a stopped runner.
 *
 * @since 0.1.0
 * @category constructors
 */
export const hold = (
  home: string,
  root: string,
  options: { readonly takeover?: boolean } = {}
): Effect.Effect<void, CheckoutBusy | CheckoutLockUnavailable, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend((): Effect.Effect<string, CheckoutBusy | CheckoutLockUnavailable> => {
      const directory = path.join(home, "run")
      try {
        fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
      } catch (error) {
        return Effect.fail(new CheckoutLockUnavailable({ file: directory, reason: (error as NodeJS.ErrnoException).code ?? String(error) }))
      }
      let real = root
      try {
        real = fs.realpathSync(root)
      } catch {
        // A checkout that cannot be resolved is locked by the path given.
      }
      const file = path.join(directory, `checkout-${createHash("sha256").update(real).digest("hex").slice(0, 16)}.lock`)
      const mine = `${process.pid} ${bootId()} ${stat(process.pid)?.startTicks ?? "0"}`
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          fs.writeFileSync(file, mine, { flag: "wx", mode: 0o600 })
          return Effect.succeed(file)
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code
          if (code !== "EEXIST") return Effect.fail(new CheckoutLockUnavailable({ file, reason: code ?? String(error) }))
        }
        const pid = holder(file, options.takeover === true)
        if (pid !== null) return Effect.fail(new CheckoutBusy({ root: real, pid }))
        // Stale: its runner is gone. Remove it and try again (another runner may win the retry).
        try {
          fs.rmSync(file, { force: true })
        } catch (error) {
          return Effect.fail(new CheckoutLockUnavailable({ file, reason: (error as NodeJS.ErrnoException).code ?? String(error) }))
        }
      }
      return Effect.fail(new CheckoutBusy({ root: real, pid: 0 }))
    }),
    (file) =>
      Effect.sync(() => {
        try {
          if (fs.readFileSync(file, "utf8").startsWith(`${process.pid} `)) fs.rmSync(file, { force: true })
        } catch {
          // Already gone.
        }
      })
  ).pipe(Effect.asVoid)
