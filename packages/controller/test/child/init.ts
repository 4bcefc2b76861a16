/**
 * Initialises the checkout named by argv[2] and prints the result as one JSON line, for the test
 * of processes initialising one checkout at once.
 */
import * as Effect from "effect/Effect"
import * as Workspace from "../../src/Workspace.js"

Effect.runPromise(Workspace.make.init(process.argv[2] ?? ".")).then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
