/**
 * The hook's own way in: `ratchet hook <host>` exactly as the hosts run it (no option, no
 * `RATCHET_ACTOR`) starts here, without the command table, the parser or any other command's
 * modules, because a host starts it on every tool call of an agent and a person feels each
 * millisecond of it (issue 19). Anything else about the hook (`--help`, `-C`, a mistyped host, an
 * actor to check, a working directory that is gone) goes through `main` as every command does, so
 * its answers and errors stay the ones `ratchet hook --help` documents.
 *
 * @since 0.3.0
 */
import type * as HostAdapter from "@ratchet/host/HostAdapter"
import * as ClaudeCode from "@ratchet/host-claude-code/ClaudeCode"
import * as Codex from "@ratchet/host-codex/Codex"
import * as HostAdapterLimits from "@ratchet/host/HostAdapter"
import * as Tracing from "@ratchet/controller/Tracing"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import * as Hook from "./Hook.js"

/**
 * The host adapters `ratchet hook <host>` answers for.
 *
 * @since 0.3.0
 */
export const adapters: Readonly<Record<string, HostAdapter.HostAdapter>> = { [ClaudeCode.name]: ClaudeCode.adapter, [Codex.name]: Codex.adapter }

/**
 * The adapter for `host`, or undefined (never an inherited member: `constructor` is no host).
 *
 * @since 0.3.0
 */
export const adapterFor = (host: string): HostAdapter.HostAdapter | undefined => Object.hasOwn(adapters, host) ? adapters[host] : undefined

/**
 * Reads one payload on standard input, answers it in `adapter`'s protocol on standard output and
 * error, and resolves to the exit code the host reads. Never fails (Hook.answer).
 *
 * @since 0.3.0
 */
export const answerStandardInput = (adapter: HostAdapter.HostAdapter, directory: string): Effect.Effect<number> =>
  Effect.gen(function*() {
    const raw = yield* Effect.promise(() => Hook.readStdin(HostAdapterLimits.maxPayloadBytes).catch(() => ""))
    const reply = yield* Hook.answer(adapter, raw, { directory, environment: process.env })
    if (reply.stdout !== "") process.stdout.write(reply.stdout)
    if (reply.stderr !== "") process.stderr.write(reply.stderr)
    return reply.exitCode
  })

/** The directory this process runs in, or null when it was deleted under it. */
const workingDirectory = (): string | null => {
  try {
    return path.resolve(process.cwd())
  } catch {
    return null
  }
}

/**
 * Whether `argv` (the arguments after `ratchet`) is the hook as a host runs it, for this entry.
 *
 * @since 0.3.0
 */
export const isHostCall = (argv: ReadonlyArray<string>, environment: Readonly<Record<string, string | undefined>>): boolean =>
  argv.length === 2 && argv[0] === "hook" && !(argv[1] as string).startsWith("-") && environment["RATCHET_ACTOR"] === undefined

/**
 * Runs `ratchet hook <host>` and resolves to its exit code; what this entry does not answer goes
 * to `main`.
 *
 * @since 0.3.0
 */
export const run = async (host: string): Promise<number> => {
  const adapter = adapterFor(host)
  const directory = workingDirectory()
  if (adapter === undefined || directory === null) return (await import("./main.js")).run(["hook", host])
  // Exported only when the OTEL_* variables ask for it; otherwise the span goes nowhere (Tracing).
  const answered = Effect.tap(answerStandardInput(adapter, directory), (exitCode) => Effect.annotateCurrentSpan("ratchet.exit_code", exitCode))
  return Effect.runPromise(Tracing.root(`ratchet hook ${host}`, { "ratchet.host": host }, answered).pipe(Effect.provide(Tracing.layer("ratchet-hook"))))
}
