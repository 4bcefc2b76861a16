/**
 * The command verifier: runs a criterion's `verify.command` with `sh -c` in the workspace, in a
 * process group of its own, with its timeout (`timeoutSeconds`, default 600, never past the
 * context's deadline). Evidence: the exit code or signal, the duration, stdout and stderr as
 * blobs, the last lines inline, and the work tree it ran against.
 *
 * Verdicts: the expected exit code → PASS; another exit code → FAIL; a timeout or a signal →
 * INDETERMINATE (the check did not finish, which says nothing about the criterion); a command that
 * could not start (spawn failed, or the shell's 126/127 "not executable"/"not found" when those
 * are not the expected code) → NOT_RUN. A command that cannot start is never a FAIL.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import type * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import type * as Evidence from "./Evidence.js"
import type * as Verifier from "./Verifier.js"

/** Default timeout of a verify command, in seconds. */
export const defaultTimeoutSeconds = 600

/** Output kept per stream; beyond it the blob holds the first part and says it was cut. */
const maxOutputBytes = 16 * 1024 * 1024

/** How long output may still arrive after the shell exited, before its pipes are closed. */
const drainMs = 500

/** How long a command gets between SIGTERM and SIGKILL when its time is up. */
const killGraceMs = 2_000

/**
 * What running a command observed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ran {
  readonly startedAt: number
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly durationMs: number
  readonly stdout: Uint8Array
  readonly stderr: Uint8Array
  readonly notStarted: string | null
}

const collector = () => {
  const chunks: Array<Buffer> = []
  let size = 0
  let cut = false
  return {
    push: (chunk: Buffer) => {
      if (size >= maxOutputBytes) {
        cut = true
        return
      }
      const room = maxOutputBytes - size
      chunks.push(room >= chunk.length ? chunk : chunk.subarray(0, room))
      if (room < chunk.length) cut = true
      size += Math.min(room, chunk.length)
    },
    bytes: (): Uint8Array => {
      const all = Buffer.concat(chunks)
      return cut ? Buffer.concat([all, Buffer.from(`\n[ratchet: output cut at ${maxOutputBytes} bytes]\n`)]) : all
    }
  }
}

/** The unattended verifier's variables (ADR 0041): its key, its passphrase and where that is. */
const verifierVariables = ["RATCHET_VERIFIER_KEY", "RATCHET_VERIFIER_PASSPHRASE", "RATCHET_VERIFIER_PASSPHRASE_FILE"]

/**
 * The environment a check runs in: this process's, with `RATCHET_VERIFYING=1` and without the test
 * facility `RATCHET_FAULT`, which names a crash point of Ratchet's own, not of the check, nor the
 * verifier's variables: a check's output is stored as evidence and shown to the next agent.
 */
const checkEnvironment = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, RATCHET_VERIFYING: "1" }
  delete env["RATCHET_FAULT"]
  for (const name of verifierVariables) delete env[name]
  return env
}

/**
 * What starts a check's program: given `sh -c <command>` and the directory, the program to spawn
 * instead (the unattended loop runs every check in its sandbox, ADR 0043). The program it returns
 * must keep its children in its process group, or end them when it ends.
 *
 * @since 0.5.0
 * @category models
 */
export type Launcher = (
  argv: { readonly file: string; readonly args: ReadonlyArray<string> },
  cwd: string
) => { readonly file: string; readonly args: ReadonlyArray<string> }

/**
 * Runs `command` with `sh -c` in `cwd`; never fails (a spawn error is `notStarted`). The child
 * and everything it starts are killed when the timeout passes or the effect is interrupted.
 * `launcher`, when given, says what runs `sh -c <command>` (a sandbox).
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (
  command: string,
  options: { readonly cwd: string; readonly timeoutMs: number; readonly launcher?: Launcher | undefined }
): Effect.Effect<Ran> =>
  Effect.async<Ran>((resume) => {
    const startedAt = Date.now()
    const out = collector()
    const err = collector()
    let timedOut = false
    let settled = false
    const shell = { file: "sh", args: ["-c", command] }
    const argv = options.launcher === undefined ? shell : options.launcher(shell, options.cwd)
    const child = spawn(argv.file, [...argv.args], {
      cwd: options.cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: checkEnvironment()
    })
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, signal)
      } catch {
        // Already gone.
      }
    }
    let hardKill: NodeJS.Timeout | undefined
    let drain: NodeJS.Timeout | undefined
    let exited = false
    const timer = setTimeout(() => {
      // A shell that already exited did not time out, whatever still holds its pipes.
      if (exited) return
      timedOut = true
      killGroup("SIGTERM")
      hardKill = setTimeout(() => killGroup("SIGKILL"), killGraceMs)
    }, Math.max(0, options.timeoutMs))
    const finish = (ran: Omit<Ran, "startedAt" | "durationMs" | "stdout" | "stderr" | "timedOut">) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (hardKill !== undefined) clearTimeout(hardKill)
      if (drain !== undefined) clearTimeout(drain)
      resume(Effect.succeed({
        ...ran,
        startedAt,
        timedOut,
        durationMs: Date.now() - startedAt,
        stdout: out.bytes(),
        stderr: err.bytes()
      }))
    }
    child.stdout.on("data", out.push)
    child.stderr.on("data", err.push)
    child.on("error", (error) => finish({ exitCode: null, signal: null, notStarted: error.message }))
    // When the shell exits, whatever it left behind in its group goes with it: a background child
    // still holding the output pipes would otherwise keep the check waiting until its timeout. One
    // that left the group (setsid) cannot be killed from here: after a short drain the pipes are
    // closed on our side and the check ends with the shell's exit.
    child.on("exit", (code, signal) => {
      exited = true
      killGroup("SIGKILL")
      drain = setTimeout(() => {
        child.stdout.destroy()
        child.stderr.destroy()
        finish({ exitCode: code, signal, notStarted: null })
      }, drainMs)
    })
    child.on("close", (code, signal) => {
      killGroup("SIGKILL")
      finish({ exitCode: code, signal, notStarted: null })
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      killGroup("SIGKILL")
    })
  })

/** The last `lines` lines of the output, at most 2 000 characters. */
export const tailOf = (stdout: Uint8Array, stderr: Uint8Array, lines = 20): string => {
  const out = new TextDecoder().decode(stdout)
  const err = new TextDecoder().decode(stderr)
  // stderr starts on a line of its own, without a blank line before it (or before everything).
  const text = out === "" || err === "" || out.endsWith("\n") ? `${out}${err}` : `${out}\n${err}`
  const tail = text.trimEnd().split("\n").slice(-lines).join("\n")
  return tail.length > 2_000 ? tail.slice(-2_000) : tail
}

/**
 * The verdict of one run against the expected exit code, with its reason.
 *
 * @since 0.1.0
 * @category constructors
 */
export const judge = (
  ran: Pick<Ran, "exitCode" | "signal" | "timedOut" | "notStarted">,
  expected: number,
  timeoutSeconds: number
): { readonly verdict: Verifier.Judgement["verdict"]; readonly reason: string } => {
  if (ran.notStarted !== null) {
    return { verdict: "NOT_RUN", reason: `the command could not start (${ran.notStarted}); fix the command or the environment and verify again.` }
  }
  if (ran.timedOut) {
    return {
      verdict: "INDETERMINATE",
      reason: `the command did not finish within ${timeoutSeconds} s; raise verify.timeout_seconds or make the check faster, then verify again.`
    }
  }
  if (ran.exitCode === null) {
    return { verdict: "INDETERMINATE", reason: `the command was ended by ${ran.signal ?? "a signal"}; verify again.` }
  }
  if (ran.exitCode === expected) return { verdict: "PASS", reason: `exit ${ran.exitCode}, as expected.` }
  if ((ran.exitCode === 126 || ran.exitCode === 127) && expected !== 126 && expected !== 127) {
    return {
      verdict: "NOT_RUN",
      reason: `the shell could not run the command (exit ${ran.exitCode}: ${
        ran.exitCode === 127 ? "command not found" : "not executable"
      }); fix the command or install what it needs, then verify again.`
    }
  }
  return { verdict: "FAIL", reason: `exit ${ran.exitCode}, expected ${expected}.` }
}

/**
 * The command verifier whose checks `options.launcher` starts (see {@link Launcher}).
 *
 * @since 0.5.0
 * @category constructors
 */
export const make = (options: { readonly launcher?: Launcher | undefined } = {}): Verifier.Verifier => ({
  name: "command",
  appliesTo: (criterion: Spec.AcceptanceCriterion) => criterion.verify !== undefined,
  verify: (criterion, ctx) =>
    Effect.gen(function*() {
      const verify = criterion.verify!
      const timeoutSeconds = verify.timeoutSeconds ?? defaultTimeoutSeconds
      const expected = verify.expectExitCode ?? 0
      const timeoutMs = Math.max(0, Math.min(timeoutSeconds * 1_000, ctx.deadline - Date.now()))
      const ran = yield* run(verify.command, { cwd: ctx.workspace.root, timeoutMs, launcher: options.launcher })
      const stdoutRef = ran.stdout.length > 0 ? yield* ctx.blobs.put(ran.stdout) : null
      const stderrRef = ran.stderr.length > 0 ? yield* ctx.blobs.put(ran.stderr) : null
      const judged = judge(ran, expected, timeoutSeconds)
      const evidence: Evidence.Evidence = {
        _tag: "command",
        acId: criterion.id,
        specDigest: ctx.specDigest,
        snapshotLsn: ctx.snapshotLsn,
        verifier: ctx.verifier,
        at: Date.now(),
        command: verify.command,
        expectExitCode: expected,
        tree: ctx.workspace.tree,
        startedAt: ran.startedAt,
        exitCode: ran.exitCode,
        signal: ran.signal,
        timedOut: ran.timedOut,
        durationMs: ran.durationMs,
        stdoutRef,
        stderrRef,
        outputTail: tailOf(ran.stdout, ran.stderr),
        notStarted: ran.notStarted
      }
      return { verifier: "command", verdict: judged.verdict, reason: judged.reason, evidence: [evidence] }
    })
})

/**
 * The command verifier, its checks started directly.
 *
 * @since 0.1.0
 * @category constructors
 */
export const verifier: Verifier.Verifier = make()
