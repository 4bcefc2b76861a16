/**
 * The handle the SQL store's internals share: the client (without result-name transforms, so
 * columns read back under the names the migrations gave them whatever the engine layer
 * configured) and the engine's classifier, through which every `SqlError` becomes a
 * `StorageError`.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type * as StorageError from "../StorageError.js"
import type { Row } from "./rows.js"

export interface Db {
  readonly sql: SqlClient.SqlClient
  readonly classify: (operation: string, cause: unknown) => StorageError.StorageError
}

/** Runs a statement, classifying its failure as `operation`. */
export const run = <A>(
  db: Db,
  operation: string,
  statement: Effect.Effect<A, SqlError>
): Effect.Effect<A, StorageError.StorageError> => Effect.mapError(statement, (error) => db.classify(operation, error))

/** Runs a query, classifying its failure as `operation`. */
export const rows = (
  db: Db,
  operation: string,
  statement: Effect.Effect<ReadonlyArray<Row>, SqlError>
): Effect.Effect<ReadonlyArray<Row>, StorageError.StorageError> => run(db, operation, statement)
