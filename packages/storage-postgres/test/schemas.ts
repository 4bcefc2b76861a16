/**
 * A schema of its own per test, on the test server: every schema handed out by the returned
 * function is dropped after the file that called {@link schemasDroppedAfterAll}.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { testSchemaName, testUrl } from "@ratchet/testkit/Postgres"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { afterAll } from "vitest"

export const schemasDroppedAfterAll = (): (() => string) => {
  const schemas: Array<string> = []
  afterAll(async () => {
    if (schemas.length === 0) return
    await Effect.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.forEach(schemas, (schema) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`, { discard: true })).pipe(
          Effect.provide(PgClient.layer({ url: Redacted.make(testUrl()), maxConnections: 1 }))
        )
    )
  })
  return () => {
    const schema = testSchemaName()
    schemas.push(schema)
    return schema
  }
}
