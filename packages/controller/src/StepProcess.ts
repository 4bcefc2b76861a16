/**
 * A step's command as a child process: `/bin/sh -c <command>` in the workspace, in its own process
 * group (so a cancel or a timeout stops everything it started, and a runner killed with SIGKILL
 * does not take it down: its effect runs to its end, which is what recovery must reason about).
 * Its output goes to files, not pipes — a pipe whose reader died would kill an orphaned command
 * with SIGPIPE at its next write, half way through its effect — and the runner tails the files
 * for the live view and keeps the first and last bytes of each as the step's output. A pid file
 * beside them lets the next runner on this machine wait for an orphaned command before it
 * decides anything about its effect. It names the command by its pid, the machine's boot and the
 * process's start time: a pid is reused, and a reused one is never waited on or signalled.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { spawn } from "node:child_process"
import * as Effect from "effect/Effect"
import * as ChildSandbox from "./ChildSandbox.js"
import { alive, bootId, members, stat } from "./internal/processes.js"
import * as VerifierKey from "./VerifierKey.js"

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

/** The first and last `limit / 2` bytes of the file at `file` (with a marker for what was left out). */
const captured = (file: string, limit: number): Uint8Array => {
  let fd: number
  try {
    fd = fs.openSync(file, "r")
  } catch {
    return new Uint8Array()
  }
  try {
    const size = fs.fstatSync(fd).size
    const read = (at: number, length: number) => {
      const buffer = Buffer.alloc(length)
      let done = 0
      while (done < length) {
        const n = fs.readSync(fd, buffer, done, length - done, at + done)
        if (n === 0) break
        done += n
      }
      return buffer.subarray(0, done)
    }
    if (size <= limit) return read(0, size)
    const half = Math.floor(limit / 2)
    return Buffer.concat([read(0, half), Buffer.from(`\n… ${size - 2 * half} bytes not kept …\n`), read(size - half, half)])
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Sends `signal` (SIGKILL by default) to every process of group `pid`; a group already gone is fine.
 *
 * @since 0.1.0
 * @category constructors
 */
export const killGroup = (pid: number, signal: NodeJS.Signals = "SIGKILL"): void => {
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}

/**
 * The files a command with output name `name` uses under `directory`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const filesOf = (directory: string, name: string) => ({
  stdout: path.join(directory, `${name}.out`),
  stderr: path.join(directory, `${name}.err`),
  pid: path.join(directory, `${name}.pid`)
})

/**
 * The process group of a command started under `name` that is still running on this machine (its
 * runner died), or null: no pid file, a damaged one, another boot's, or a group that is not the
 * one the file names any more.
 *
 * The file says "<pgid> <boot id> <start time>"; the group is the command's while its leader (the
 * shell, whose pid is the group's id) is the process that started then. A process that has the
 * number now is neither waited on nor signalled. Once the shell has ended (a zombie nobody reaped,
 * or gone), so has the command: what it left running in its group is killed, as a live runner kills
 * it when the shell exits — the whole group while the zombie still holds its id, and after that only
 * the processes whose environment carries the command's mark (`RATCHET_PROCESS=<name>`, which every
 * process of the command inherits), never a group that took the number since.
 *
 * @since 0.1.0
 * @category constructors
 */
export const orphan = (directory: string, name: string): number | null => {
  let text: string
  try {
    text = fs.readFileSync(filesOf(directory, name).pid, "utf8").slice(0, 128)
  } catch {
    return null
  }
  // A pid file from before a reboot names a group that no longer exists, whatever has its number now.
  const match = /^(\d{1,10}) (\S{1,64}) (\d{1,20})$/.exec(text.trim())
  if (match === null || match[2] !== bootId()) return null
  const pgid = Number(match[1])
  if (!Number.isSafeInteger(pgid) || pgid <= 1) return null
  const leader = stat(pgid)
  if (leader !== null && leader.state !== "Z" && leader.state !== "X") {
    // A live process has the number: it is the command's shell only if it started then, leading its group.
    if (leader.startTicks !== match[3] || leader.pgrp !== pgid) return null
    return alive(-pgid) ? pgid : null
  }
  // The shell has ended: a zombie its stopped or dead runner never reaped, or gone. A live runner
  // stops what the shell left in its group the moment the shell exits; so does recovery. While the
  // zombie stands, the group is the command's; once it is gone, only processes carrying this
  // command's mark are signalled, so a group that has the number now is left alone.
  if (leader !== null) {
    if (leader.startTicks === match[3] && leader.pgrp === pgid) killGroup(pgid)
    return null
  }
  for (const member of members(pgid)) {
    if (marked(member.pid, name)) {
      try {
        process.kill(member.pid, "SIGKILL")
      } catch {
        // Ended meanwhile.
      }
    }
  }
  return null
}

/** The variable every process of a command inherits, naming the command's files (see {@link start}). */
const markVariable = "RATCHET_PROCESS"

/** Whether process `pid` carries the mark of the command named `name` in its environment. */
const marked = (pid: number, name: string): boolean => {
  let environment: Buffer
  try {
    environment = fs.readFileSync(`/proc/${pid}/environ`)
  } catch {
    return false
  }
  const entry = Buffer.from(`${markVariable}=${name}\0`)
  const at = environment.indexOf(entry)
  return at === 0 || (at > 0 && environment[at - 1] === 0)
}

/**
 * Removes what a command under `name` left in `directory` (its output files and pid file).
 *
 * @since 0.1.0
 * @category constructors
 */
export const discard = (directory: string, name: string): void => {
  const files = filesOf(directory, name)
  for (const file of [...Object.values(files), `${files.pid}.tmp`]) {
    try {
      fs.rmSync(file, { force: true })
    } catch {
      // Not a file we made (a directory, or a file where the directory should be): leave it.
    }
  }
}

/**
 * Starts `command` (or `argv`), its output in files named `name` under `directory`. `onOutput`
 * receives what it writes, as it writes it (polled every 100 ms).
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (input: {
  readonly command: string
  /**
   * The program and its arguments, started directly (no shell) when given: an agent step's host,
   * whose prompt must reach it as one argument exactly as approved. `command` then only describes it.
   */
  readonly argv?: { readonly file: string; readonly args: ReadonlyArray<string> } | undefined
  /** The most output kept per stream (default {@link maxCapturedBytes}). */
  readonly capturedBytes?: number | undefined
  readonly cwd: string
  readonly timeoutMs: number | null
  readonly env: NodeJS.ProcessEnv
  readonly directory: string
  readonly name: string
  readonly onOutput?: ((stream: "stdout" | "stderr", chunk: string) => void) | undefined
  /**
   * The loop's sandbox (ADR 0043), or none: the program then runs inside it, and the pid file
   * names the outer `bwrap`, whose group holds the whole sandboxed tree.
   */
  readonly sandbox?: ChildSandbox.Sandbox | null | undefined
}): Running => {
  const started = Date.now()
  const files = filesOf(input.directory, input.name)
  let timedOut = false
  let cancelled = false
  let spawnError: string | null = null
  let child: ReturnType<typeof spawn> | null = null
  try {
    fs.mkdirSync(input.directory, { recursive: true, mode: 0o700 })
    const out = fs.openSync(files.stdout, "w", 0o600)
    const err = fs.openSync(files.stderr, "w", 0o600)
    try {
      const argv = ChildSandbox.around(input.sandbox, input.argv ?? { file: "/bin/sh", args: ["-c", input.command] }, input.cwd)
      child = spawn(argv.file, [...argv.args], {
        cwd: input.cwd,
        env: { ...input.env, [markVariable]: input.name },
        detached: true,
        stdio: ["ignore", out, err]
      })
    } finally {
      fs.closeSync(out)
      fs.closeSync(err)
    }
    if (child.pid !== undefined) {
      // The shell was forked before spawn returned, so its start time is already there to read.
      const started = stat(child.pid)?.startTicks ?? "0"
      // Written aside and renamed into place, so a reader (a runner recovering this one) sees the
      // whole line or no file, never a pid without its boot and start time.
      const aside = `${files.pid}.tmp`
      fs.writeFileSync(aside, `${child.pid} ${bootId()} ${started}`, { mode: 0o600 })
      fs.renameSync(aside, files.pid)
    }
  } catch (error) {
    spawnError = error instanceof Error ? error.message : String(error)
  }
  const pid = child?.pid ?? null
  // The live view: what each file gained since the last look.
  const offsets = { stdout: 0, stderr: 0 }
  const tail = () => {
    if (input.onOutput === undefined) return
    for (const stream of ["stdout", "stderr"] as const) {
      try {
        const fd = fs.openSync(files[stream], "r")
        try {
          const buffer = Buffer.alloc(64 * 1024)
          let n: number
          while ((n = fs.readSync(fd, buffer, 0, buffer.length, offsets[stream])) > 0) {
            offsets[stream] += n
            input.onOutput(stream, buffer.toString("utf8", 0, n))
          }
        } finally {
          fs.closeSync(fd)
        }
      } catch {
        // Not there (yet, or any more): nothing to show.
      }
    }
  }
  const poll = setInterval(tail, 100)
  const timer = input.timeoutMs === null || pid === null ? null : setTimeout(() => {
    timedOut = true
    killGroup(pid, "SIGKILL")
  }, input.timeoutMs)
  const ended = new Promise<Exit>((resolve) => {
    let finished = false
    const finish = (exitCode: number | null, signal: string | null) => {
      if (finished) return
      finished = true
      clearInterval(poll)
      if (timer !== null) clearTimeout(timer)
      // Whatever the shell left behind in its group goes with it.
      if (pid !== null) killGroup(pid, "SIGKILL")
      tail()
      const result: Exit = {
        exitCode,
        signal,
        timedOut,
        cancelled,
        spawnError,
        durationMs: Date.now() - started,
        stdout: captured(files.stdout, input.capturedBytes ?? maxCapturedBytes),
        stderr: captured(files.stderr, maxCapturedBytes)
      }
      discard(input.directory, input.name)
      resolve(result)
    }
    if (child === null) {
      finish(null, null)
      return
    }
    child.on("error", (error) => {
      spawnError = error.message
      finish(null, null)
    })
    child.on("exit", (code, signal) => finish(code, signal))
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
  // The unattended verifier's passphrase is never a step's, nor its agent's (ADR 0041).
  const env: NodeJS.ProcessEnv = VerifierKey.strip({ ...process.env })
  delete env["RATCHET_FAULT"]
  env["RATCHET_TASK"] = context.taskId
  env["RATCHET_STEP"] = context.stepId
  env["RATCHET_ATTEMPT"] = String(context.attempt)
  return env
}
