/**
 * Packaging smoke test for `@ratchet/testkit`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball (with `@ratchet/storage`'s and `@ratchet/kernel`'s
 * beside it and the `effect` peers, but not the optional `vitest` and `@effect/vitest` peers), so it
 * sees exactly what a user sees outside a test runner.
 *
 * The promise checked: the package root loads with no vitest anywhere, and only
 * `@ratchet/testkit/vitest` needs it. A resolve hook refuses every `vitest` and `@effect/vitest`
 * import, so the check holds even where vitest happens to be installed; then the root's builders,
 * random histories, signing keys and conformance checks are used, and `@ratchet/testkit/vitest`
 * must fail on exactly that refusal.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import { register } from "node:module"
import { Event } from "@ratchet/kernel"
import * as fc from "effect/FastCheck"
import * as Either from "effect/Either"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/testkit smoke: ${problem}`)
  process.exit(1)
}

const refusal = "refused by the testkit smoke: vitest is not available outside the test runner"
const hook = `export async function resolve(specifier, context, next) {
  if (/^(vitest|@effect\\/vitest)(\\/|$)/.test(specifier)) throw new Error(${JSON.stringify(refusal)} + " (" + specifier + ")")
  return next(specifier, context)
}`
register(`data:text/javascript,${encodeURIComponent(hook)}`)

const entry = import.meta.resolve("@ratchet/testkit")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

/** @type {typeof import("@ratchet/testkit")} */
const testkit = await import("@ratchet/testkit").catch((error) =>
  fail(`importing the package root outside vitest failed: ${error instanceof Error ? error.message : String(error)}`)
)
const names = Object.keys(testkit).sort().join(", ")
const expected = "Events, Histories, LessonChecks, Lessons, Signing, StandIn, StorageChecks, StorageChild, StorageFaults"
if (names !== expected) fail(`the root should export exactly ${expected}, got ${names}`)
const { Events, Histories, Signing, StorageChecks } = testkit

const created = Event.decode(JSON.parse(JSON.stringify(Events.taskCreated({ taskId: "t", projectId: "p" }))))
if (Either.isLeft(created)) fail(`Events.taskCreated should build an event the kernel decodes, got ${created.left.message}`)

const scripts = fc.sample(Histories.arbitrary({ maxSteps: 5 }), { numRuns: 20, seed: 42 })
if (scripts.some((script) => script.steps.length < 1 || script.steps.length > 5)) {
  fail(`Histories.arbitrary({ maxSteps: 5 }) should give 1 to 5 steps, got ${scripts.map((script) => script.steps.length).join(",")}`)
}

const key = Signing.keyOf(7)
const statement = Buffer.from("smoke")
const signature = (await import("node:crypto")).sign(null, statement, key.privateKey).toString("base64url")
if (!Signing.verify(key.key, statement, signature) || Signing.verify(Signing.keyOf(8).key, statement, signature)) {
  fail("Signing.verify should accept the signer's key and refuse another's")
}

const checks = StorageChecks.checks()
const ids = new Set(checks.map((check) => check.id))
if (checks.length < 20 || ids.size !== checks.length || StorageChecks.processChecks.length === 0) {
  fail(`StorageChecks should list the conformance checks with distinct ids, got ${checks.length} (${ids.size} distinct) and ${StorageChecks.processChecks.length} process checks`)
}

const vitestEntry = await import("@ratchet/testkit/vitest").then(
  () => "loaded",
  (error) => (error instanceof Error ? error.message : String(error))
)
if (!vitestEntry.includes(refusal)) {
  fail(`@ratchet/testkit/vitest should be the entry point that needs vitest, but importing it ${vitestEntry === "loaded" ? "loaded without it" : `failed otherwise: ${vitestEntry}`}`)
}

console.log(
  `the root loads with vitest refused (${checks.length} storage checks, ${StorageChecks.processChecks.length} process checks, event builders, histories, signing keys); @ratchet/testkit/vitest needs vitest`
)
