/**
 * Packaging smoke test for `@ratchet/kernel`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball, so it sees exactly what a user sees: the entry point
 * resolves to the built `dist/`, a transition computes, and `internal/*` stays closed.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import { Attempt } from "@ratchet/kernel"
import * as Either from "effect/Either"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/kernel smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/kernel")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const result = Attempt.transition("Pending", { _tag: "Admit" })
if (!Either.isEither(result) || !Either.isRight(result) || result.right !== "Running") {
  fail(`Attempt.transition("Pending", { _tag: "Admit" }) should be Right("Running"), got ${JSON.stringify(result)}`)
}

const internal = await import("@ratchet/kernel/internal/anything").then(
  () => "importable",
  (error) => (error?.code === "ERR_PACKAGE_PATH_NOT_EXPORTED" ? "closed" : `failing with ${error?.code ?? error}`)
)
if (internal !== "closed") fail(`@ratchet/kernel/internal/* should not be exported, but it is ${internal}`)

console.log('Attempt.transition("Pending", Admit) = Right("Running"); internal/* is closed')
