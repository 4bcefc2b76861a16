/**
 * The process behind the `ratchet-runner` bin: runs the arguments and sets the exit code.
 *
 * @since 0.1.0
 */
import { run } from "./main.js"
import * as Tracing from "@ratchet/controller/Tracing"

// A reader that stops early (`ratchet run <task> --json | head -1`) closes the pipe: stop quietly,
// as Unix tools do, instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
  process.exit(typeof process.exitCode === "number" ? process.exitCode : 0)
})

run(process.argv.slice(2)).then(
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
