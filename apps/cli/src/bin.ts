/**
 * The process behind the `ratchet` bin: runs the arguments and sets the exit code.
 *
 * `ratchet hook <host>` as the hosts run it loads only the hook's modules (HookEntry); every other
 * command loads the command table (main).
 *
 * @since 0.1.0
 */
import * as Tracing from "@ratchet/controller/Tracing"
import { isHostCall } from "./HookEntry.js"

// A reader that stops early (`ratchet log <task> --json | head -1`) closes the pipe: stop quietly,
// as Unix tools do, instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
  process.exit(typeof process.exitCode === "number" ? process.exitCode : 0)
})

const argv = process.argv.slice(2)
const exitCode: Promise<number> = isHostCall(argv, process.env)
  ? import("./HookEntry.js").then((entry) => entry.run(argv[1] as string))
  : import("./main.js").then((main) => main.run(argv))

exitCode.then(
  (code) => {
    process.exitCode = code
    // With traces exported, a collector that sent its headers and never its body holds a socket
    // open after the exporter's last flush (it does not read bodies): once the answer is written
    // out, nothing else may keep this process alive.
    if (Tracing.exporting(process.env)) Tracing.exitOnceWritten(code)
  },
  (error: unknown) => {
    // A bug escaped the command's own error handling: its message always, its stack only on request.
    const verbose = process.argv.includes("--verbose")
    const text = error instanceof Error ? (verbose ? error.stack ?? error.message : error.message) : String(error)
    process.stderr.write(`error: unexpected: ${text}\n${verbose ? "" : "Run again with --verbose for the full cause.\n"}`)
    process.exitCode = 1
  }
)
