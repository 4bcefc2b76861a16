/**
 * A step's command as a child process: `/bin/sh -c <command>` in the workspace, in its own process
 * group (so a cancel or a timeout stops everything it started, and a runner killed with SIGKILL
 * does not take it down: its effect runs to its end, which is what recovery must reason about),
 * with its output captured (bounded: the first and the last bytes are kept) and streamed to the
 * caller line by line.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import * as Effect from "effect/Effect"

/**
 * How a command ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface Exit {
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly cancelled: boolean
  /** The command could not be started at all (the shell missing, the directory gone). */
  readonly spawnError: string | null
  readonly durationMs: number
  readonly stdout: Uint8Array
  readonly stderr: Uint8Array
}

/**
 * A started command: its pid (the process group's id too), how to stop it, and its end.
 *
 * @since 0.1.0
 * @category models
 */
export interface Running {
  readonly pid: number | null
  /** Kills the whole process group; the end then reports `cancelled`. */
  readonly cancel: () => void
  readonly exit: Effect.Effect<Exit>
}

/**
 * The most output kept per stream: the first half and the last half of this many bytes.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxCapturedBytes = 8 * 1024 * 1024

/** Keeps the head and the tail of a stream within `limit` bytes. */
class Capture {
  private head: Array<Buffer> = []
  private headBytes = 0
  private tail: Array<Buffer> = []
  private tailBytes = 0
  private dropped = 0
  constructor(private readonly limit: number) {}
  add(chunk: Buffer) {
    const half = this.limit / 2
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes)
      this.head.push(take)
      this.headBytes += take.length
      chunk = chunk.subarray(take.length)
    }
    if (chunk.length === 0) return
    this.tail.push(chunk)
    this.tailBytes += chunk.length
    while (this.tailBytes > half && this.tail.length > 0) {
      const first = this.tail[0] as Buffer
      const excess = this.tailBytes - half
      if (first.length <= excess) {
        this.tail.shift()
        this.tailBytes -= first.length
        this.dropped += first.length
      } else {
        this.tail[0] = first.subarray(excess)
        this.tailBytes -= excess
        this.dropped += excess
      }
    }
  }
  bytes(): Uint8Array {
    const marker = this.dropped > 0 ? [Buffer.from(`\n… ${this.dropped} bytes not kept …\n`)] : []
    return Buffer.concat([...this.head, ...marker, ...this.tail])
  }
}

const killGroup = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}

/**
 * Starts `command`. `onOutput` receives each chunk of stdout and stderr as it arrives.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (input: {
  readonly command: string
  readonly cwd: string
  readonly timeoutMs: number | null
  readonly env: NodeJS.ProcessEnv
  readonly onOutput?: ((stream: "stdout" | "stderr", chunk: string) => void) | undefined
}): Running => {
  const started = Date.now()
  const stdout = new Capture(maxCapturedBytes)
  const stderr = new Capture(maxCapturedBytes)
  let timedOut = false
  let cancelled = false
  let spawnError: string | null = null
  const child = spawn("/bin/sh", ["-c", input.command], {
    cwd: input.cwd,
    env: input.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"]
  })
  const pid = child.pid ?? null
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout.add(chunk)
    input.onOutput?.("stdout", chunk.toString("utf8"))
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr.add(chunk)
    input.onOutput?.("stderr", chunk.toString("utf8"))
  })
  const timer = input.timeoutMs === null ? null : setTimeout(() => {
    timedOut = true
    if (pid !== null) killGroup(pid, "SIGKILL")
  }, input.timeoutMs)
  const ended = new Promise<Exit>((resolve) => {
    const finish = (exitCode: number | null, signal: string | null) => {
      if (timer !== null) clearTimeout(timer)
      // Whatever the shell left behind in its group goes with it.
      if (pid !== null) killGroup(pid, "SIGKILL")
      resolve({
        exitCode,
        signal,
        timedOut,
        cancelled,
        spawnError,
        durationMs: Date.now() - started,
        stdout: stdout.bytes(),
        stderr: stderr.bytes()
      })
    }
    child.on("error", (error) => {
      spawnError = error.message
      finish(null, null)
    })
    // `close` waits for the output pipes as well as the exit.
    child.on("close", (code, signal) => finish(code, signal))
  })
  return {
    pid,
    cancel: () => {
      cancelled = true
      if (pid !== null) killGroup(pid, "SIGKILL")
    },
    exit: Effect.promise(() => ended)
  }
}

/**
 * The environment a step runs with: the runner's, without Ratchet's own test facilities and with
 * `RATCHET_TASK`, `RATCHET_STEP` and `RATCHET_ATTEMPT` set, so a command can tell where it runs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const environment = (context: { readonly taskId: string; readonly stepId: string; readonly attempt: number }): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env["RATCHET_FAULT"]
  env["RATCHET_TASK"] = context.taskId
  env["RATCHET_STEP"] = context.stepId
  env["RATCHET_ATTEMPT"] = String(context.attempt)
  return env
}
