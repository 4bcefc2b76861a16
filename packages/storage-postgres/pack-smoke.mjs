/**
 * Packaging smoke test for `@ratchet/storage-postgres`. `tools/pack-check.mjs` runs it inside an
 * empty project that installed the packed tarball (with `@ratchet/storage`'s and
 * `@ratchet/kernel`'s beside it, `@effect/sql-pg` and `pg` from the registry, and the `effect`
 * peers), so it sees exactly what a user sees: the entry point resolves to the built `dist/`, the
 * whole index loads with the PostgreSQL driver, configuration mistakes are refused naming the
 * variable before any connection is tried, and driver failures are classified. No database.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import { PostgresStore } from "@ratchet/storage-postgres"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/storage-postgres smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/storage-postgres")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

/**
 * Build a layer and return why it failed, or `built` when it did not.
 *
 * @param {Layer.Layer<unknown, unknown>} layer
 */
const refusal = (layer) =>
  Effect.runPromise(
    Layer.build(layer).pipe(
      Effect.scoped,
      Effect.match({ onFailure: (error) => String(error), onSuccess: () => "built" }),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))
    )
  )

const wrongScheme = await refusal(PostgresStore.layer({ url: "mysql://ratchet@db:3306/ratchet" }))
if (!wrongScheme.includes("url") || !wrongScheme.includes("postgres://")) {
  fail(`a mysql:// URL should be refused naming url and the expected form, got ${wrongScheme}`)
}

const unset = await refusal(PostgresStore.layerConfig)
if (!unset.includes(PostgresStore.urlVariable)) {
  fail(`layerConfig without ${PostgresStore.urlVariable} should fail naming it, got ${unset}`)
}

const serialization = PostgresStore.classify("append", { code: "40001", message: "could not serialize access" })
if (serialization.reason._tag !== "Serialization" || !serialization.isRetryable) {
  fail(`SQLSTATE 40001 should be a retryable Serialization error, got ${serialization.message}`)
}

console.log(
  `a mysql:// URL and a missing ${PostgresStore.urlVariable} are refused before connecting; SQLSTATE 40001 is a retryable Serialization error`
)
