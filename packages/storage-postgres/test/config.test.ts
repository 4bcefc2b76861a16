/**
 * Configuration errors that need no database: a malformed URL or schema is a ConfigError naming
 * the field (or the environment variable) and the expected form, never echoing a password; a
 * server that refuses the connection is a StorageError a person can act on.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { PostgresStore } from "../src/index.js"

const open = <A, E>(layer: Layer.Layer<A, E>) => Effect.flip(Effect.scoped(Layer.build(layer)))

const fromEnv = (values: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(values))))

describe("PostgresStore configuration", () => {
  const malformed: ReadonlyArray<readonly [url: string, says: string]> = [
    ["not a url", "is not a URL"],
    ["", "is not a URL"],
    ["mysql://ratchet:s3cret@db.example/ratchet", `has the scheme "mysql:" instead of postgres:`],
    ["http://db.example:5432/ratchet", `has the scheme "http:" instead of postgres:`],
    ["postgres:///ratchet", "names no host"]
  ]

  it.effect.each(malformed)("layer({ url: %j }) fails: url %s", ([url, says]) =>
    Effect.gen(function*() {
      const error = yield* open(PostgresStore.layer({ url }))
      expect(error).toMatchObject({ _tag: "ConfigError", _op: "InvalidData", path: ["url"] })
      expect(String(error)).toContain(`url ${says}; expected a PostgreSQL URL of the form postgres://user:password@host:5432/database`)
      expect(String(error)).not.toContain("s3cret")
    }))

  it.effect("accepts a redacted URL and still never echoes it", () =>
    Effect.gen(function*() {
      const error = yield* open(PostgresStore.layer({ url: Redacted.make("mysql://ratchet:s3cret@db/ratchet") }))
      expect(String(error)).toContain("url has the scheme")
      expect(String(error)).not.toContain("s3cret")
    }))

  const schemas: ReadonlyArray<string> = ["Ratchet", "has-dash", "1starts_with_digit", "", "a".repeat(64), "quo\"te", "semi;colon"]

  it.effect.each(schemas)("refuses the schema %j", (schema) =>
    Effect.gen(function*() {
      const error = yield* open(PostgresStore.layer({ url: "postgres://127.0.0.1/test", schema }))
      expect(String(error)).toContain("schema must be a lowercase PostgreSQL identifier")
    }))

  it.effect.each([0, -1, 1.5, Number.NaN])("refuses maxConnections %s", (maxConnections) =>
    Effect.gen(function*() {
      const error = yield* open(PostgresStore.layer({ url: "postgres://127.0.0.1/test", maxConnections }))
      expect(String(error)).toContain("maxConnections must be a positive integer")
    }))

  it.effect("layerConfig names RATCHET_DATABASE_URL when it is missing", () =>
    Effect.gen(function*() {
      const error = yield* open(PostgresStore.layerConfig).pipe(fromEnv({}))
      expect(error).toMatchObject({ _tag: "ConfigError", _op: "MissingData", path: ["RATCHET_DATABASE_URL"] })
      expect(String(error)).toContain("RATCHET_DATABASE_URL")
    }))

  it.effect("layerConfig names RATCHET_DATABASE_URL and the expected form when it is malformed", () =>
    Effect.gen(function*() {
      const error = yield* open(PostgresStore.layerConfig).pipe(
        fromEnv({ RATCHET_DATABASE_URL: "sqlite:///home/me/.ratchet/ratchet.db" })
      )
      expect(error).toMatchObject({ _tag: "ConfigError", _op: "InvalidData", path: ["RATCHET_DATABASE_URL"] })
      expect(String(error)).toContain(
        `RATCHET_DATABASE_URL has the scheme "sqlite:" instead of postgres:; expected a PostgreSQL URL of the form postgres://user:password@host:5432/database`
      )
    }))

  it.effect("layerConfig names RATCHET_DATABASE_SCHEMA when the schema is malformed", () =>
    Effect.gen(function*() {
      const error = yield* open(PostgresStore.layerConfig).pipe(
        fromEnv({ RATCHET_DATABASE_URL: "postgres://127.0.0.1/test", RATCHET_DATABASE_SCHEMA: "Not-Valid" })
      )
      expect(String(error)).toContain("RATCHET_DATABASE_SCHEMA must be a lowercase PostgreSQL identifier")
    }))

  it.effect("a server that refuses the connection is a retryable Connection StorageError", () =>
    Effect.gen(function*() {
      // Port 1 is never a PostgreSQL server; the refusal comes from this machine's own network stack.
      const error = yield* open(PostgresStore.layer({ url: "postgres://ratchet:s3cret@127.0.0.1:1/test" }))
      expect(error).toMatchObject({
        _tag: "@ratchet/storage/StorageError",
        operation: "connect",
        reason: { _tag: "Connection", code: "ECONNREFUSED" }
      })
      expect(String(error)).not.toContain("s3cret")
    }))
})
