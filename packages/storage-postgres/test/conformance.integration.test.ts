/**
 * The storage conformance suite against PostgresStore on the test server (see DEVELOPERS.md),
 * including the multi-process checks (children run `test/child.ts`).
 *
 * Every group of checks and every multi-process check gets a schema of its own
 * (`ratchet_test_<random>`), dropped after the file. Blob corruption, which the port cannot cause,
 * is done behind the store's back by rewriting the row in `ratchet_blobs`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { describePostgres, testSchemaName, testUrl } from "@ratchet/testkit/Postgres"
import * as StorageConformance from "@ratchet/testkit/StorageConformance"
import * as StorageFaults from "@ratchet/testkit/StorageFaults"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { afterAll } from "vitest"
import { PostgresStore } from "../src/index.js"

const url = testUrl()
const schemas: Array<string> = []

const freshSchema = (): string => {
  const schema = testSchemaName()
  schemas.push(schema)
  return schema
}

const withAdmin = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))

/** Flips the first byte of a stored blob (or adds one to an empty blob), whichever way its digest is keyed. */
const blobRows = (schema: string): Layer.Layer<StorageFaults.StorageFaults> =>
  Layer.succeed(StorageFaults.StorageFaults, {
    corruptBlob: (ref) =>
      withAdmin((sql) =>
        Effect.gen(function*() {
          const hex = ref.replace(/^sha256:/, "")
          const changed = yield* sql`
            UPDATE ${sql(schema)}.ratchet_blobs
            SET bytes = CASE WHEN length(bytes) = 0 THEN '\\x00'::bytea ELSE set_byte(bytes, 0, get_byte(bytes, 0) # 255) END
            WHERE digest IN (${ref}, ${hex})
            RETURNING digest`
          if (changed.length !== 1) return yield* Effect.fail(new Error(`no blob row for ${ref} in schema ${schema}`))
        })
      )
  })

const store = (schema: string) => PostgresStore.layer({ url: Redacted.make(url), schema, maxConnections: 4 })

afterAll(async () => {
  if (schemas.length === 0) return
  await Effect.runPromise(
    withAdmin((sql) =>
      Effect.forEach(schemas, (schema) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`, { discard: true })
    )
  )
})

await describePostgres("PostgresStore conformance", () => {
  StorageConformance.suite(
    "PostgresStore",
    () => {
      const schema = freshSchema()
      return Layer.merge(store(schema), blobRows(schema))
    },
    {
      processes: {
        share: () => {
          const schema = freshSchema()
          return {
            layer: store(schema),
            child: StorageConformance.tsxChild(new URL("./child.ts", import.meta.url), {
              RATCHET_TEST_DATABASE_URL: url,
              RATCHET_TEST_SCHEMA: schema
            })
          }
        }
      }
    }
  )
})
