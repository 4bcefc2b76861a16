/**
 * Starting the runner (`apps/runner`) from the CLI. `ratchet run` does not execute steps itself:
 * it starts the runner process and, in the foreground, waits for it with the terminal handed over
 * (its progress, its exit code); with `--detach` the runner gets its own session and a log file
 * under `$RATCHET_HOME/logs/`, and the CLI returns at once. Either way, no Ratchet process outlives
 * the run's work.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Tracing from "@ratchet/controller/Tracing"
import * as VerifierKey from "@ratchet/controller/VerifierKey"
import * as Effect from "effect/Effect"
import * as Store from "./Store.js"

/**
 * The runner's bin: `RATCHET_RUNNER_BIN` when set, else the one this CLI's package carries
 * (`bin/ratchet-runner.mjs`, loading the runner bundled beside the CLI from the same sources; ADR
 * 0024). The package root is one directory above this module whether it runs bundled (`dist/`) or
 * from source (`src/`), in a checkout or installed from the tarball.
 *
 * @since 0.1.0
 * @category constructors
 */
export const bin = (): string => {
  const override = process.env["RATCHET_RUNNER_BIN"]
  if (override !== undefined && override !== "") return override
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "bin", "ratchet-runner.mjs")
}

/**
 * Where this CLI's hook is, for the runner to give an agent step's host (ADR 0040): the launcher
 * beside its bin and the bundle it runs, both by absolute path (as `ratchet hooks install` writes
 * them). The package root is found as {@link bin} finds it.
 *
 * @since 0.4.0
 * @category constructors
 */
export const hookEnvironment = (): Readonly<Record<string, string>> => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
  return { RATCHET_HOOK_LAUNCHER: path.join(root, "bin", "ratchet-hook"), RATCHET_HOOK_CLI: path.join(root, "dist", "ratchet.mjs") }
}

/** The descriptor the runner reads the verifier's passphrase from (its stdin, stdout and stderr are 0-2). */
const passphraseFd = 3

/**
 * How the runner is started: its environment never holds the verifier's passphrase nor its file's
 * name (ADR 0041, amended: every process of the user reads `/proc/<pid>/environ`); a passphrase
 * this process read goes over a pipe on descriptor 3, named by `--verifier-passphrase-fd`.
 */
const launch = (args: ReadonlyArray<string>, passphrase: string | null) => ({
  args: [bin(), ...args, ...(passphrase === null ? [] : [`--${VerifierKey.passphraseFdOption}`, String(passphraseFd)])],
  env: (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => VerifierKey.forRunner(env)
})

/** Writes `passphrase` to the child's descriptor 3 and closes it; `done` once it is written. */
const hand = (pipe: unknown, passphrase: string | null, done: () => void) => {
  if (passphrase === null || pipe === null || pipe === undefined) return done()
  const stream = pipe as NodeJS.WritableStream
  stream.on("error", () => {})
  // The file's path follows, so the runner can hide the file from the loop's sandboxed children (ADR 0043).
  const file = process.env[VerifierKey.variables.passphraseFile] ?? ""
  stream.end(VerifierKey.pipeText(passphrase, file === "" ? "" : path.resolve(file)), done)
}

/**
 * Runs the runner with `args` in the foreground, sharing this terminal; resolves to its exit code
 * (1 when it could not be started, or died of a signal).
 *
 * @since 0.1.0
 * @category constructors
 */
export const foreground = (args: ReadonlyArray<string>, passphrase: string | null = null): Effect.Effect<number> =>
  Effect.flatMap(Tracing.childEnv(process.env), (env) => Effect.async<number>((resume) => {
    const how = launch(args, passphrase)
    // The runner's spans join this command's trace when traces are exported (TRACEPARENT).
    const child = spawn(process.execPath, how.args, {
      stdio: passphrase === null ? "inherit" : ["inherit", "inherit", "inherit", "pipe"],
      env: how.env({ ...env, ...hookEnvironment() })
    })
    hand(child.stdio[passphraseFd], passphrase, () => {})
    // Ctrl-C reaches the runner too (same process group); it decides what to do, and this process
    // waits for it rather than dying first and leaving it without its terminal.
    const ignore = () => {}
    process.on("SIGINT", ignore)
    child.on("error", (error) => {
      process.off("SIGINT", ignore)
      process.stderr.write(`error: could not start the runner (${bin()}): ${error.message}\n`)
      resume(Effect.succeed(1))
    })
    child.on("exit", (code, signal) => {
      process.off("SIGINT", ignore)
      resume(Effect.succeed(code ?? (signal === "SIGINT" ? 130 : 1)))
    })
  }))

/**
 * Starts the runner with `args` in its own session, its output in a new log file; returns its pid
 * and the log's path without waiting. `env` is added to this process's environment for it (the
 * MCP server names the agent it acts for with `RATCHET_ACTOR`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const detached = (
  args: ReadonlyArray<string>,
  name: string,
  env: Readonly<Record<string, string>> = {},
  passphrase: string | null = null
): Effect.Effect<{ readonly pid: number; readonly log: string }, Error> =>
  Effect.flatMap(Tracing.childEnv(process.env), (parentEnv) => Effect.flatMap(Effect.try({
    try: () => {
      const logs = path.join(Store.home(), "logs")
      fs.mkdirSync(logs, { recursive: true, mode: 0o700 })
      const log = path.join(logs, `${name}-${new Date().toISOString().replace(/[:.]/g, "-")}.log`)
      const fd = fs.openSync(log, "a", 0o600)
      try {
        const how = launch(args, passphrase)
        const child = spawn(process.execPath, how.args, {
          stdio: passphrase === null ? ["ignore", fd, fd] : ["ignore", fd, fd, "pipe"],
          detached: true,
          env: how.env({ ...parentEnv, ...hookEnvironment(), ...env })
        })
        child.unref()
        if (child.pid === undefined) throw new Error("the runner did not start")
        return { pid: child.pid, log, pipe: child.stdio[passphraseFd] }
      } finally {
        fs.closeSync(fd)
      }
    },
    catch: (error) => (error instanceof Error ? error : new Error(String(error)))
  }), (started) =>
    // The passphrase is written before this process returns (and may exit).
    Effect.async<{ readonly pid: number; readonly log: string }>((resume) => {
      hand(started.pipe, passphrase, () => resume(Effect.succeed({ pid: started.pid, log: started.log })))
    })))
