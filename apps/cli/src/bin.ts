/**
 * The process behind the `ratchet` bin: runs the arguments and sets the exit code.
 *
 * @since 0.1.0
 */
import { run } from "./main.js"

run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error: unknown) => {
    process.stderr.write(`error: unexpected: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
    process.exitCode = 1
  }
)
