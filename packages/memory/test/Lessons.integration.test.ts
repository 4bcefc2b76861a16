/**
 * The lessons service over the PostgreSQL store on the test server, in a schema of its own dropped
 * after the file. Without a server it fails under CI=true and is skipped (one line) otherwise.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { PostgresStore } from "@ratchet/storage-postgres"
import { describePostgres, testSchemaName, testUrl } from "@ratchet/testkit/Postgres"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { afterAll } from "vitest"
import { suite } from "./suite.js"

const url = testUrl()
const schemas: Array<string> = []

afterAll(async () => {
  if (schemas.length === 0) return
  await Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.forEach(schemas, (schema) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`, { discard: true })).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
      )
  )
})

await describePostgres("the PostgreSQL test server", () => {
  suite("Lessons over PostgreSQL", () => {
    const schema = testSchemaName()
    schemas.push(schema)
    return PostgresStore.layer({ url: Redacted.make(url), schema, maxConnections: 4 })
  })
})
