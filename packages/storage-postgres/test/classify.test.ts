/**
 * The SQLSTATE/errno → StorageError mapping, from fake driver errors shaped like `pg`'s (a
 * `DatabaseError` carries the SQLSTATE in `code`; a socket error carries an errno in `code`),
 * wrapped the way `@effect/sql-pg` wraps them. No database.
 */
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import * as StorageError from "@ratchet/storage/StorageError"
import { PostgresStore } from "../src/index.js"

/** A `pg` DatabaseError as the driver builds it. */
const databaseError = (code: string, message: string): Error =>
  Object.assign(new Error(message), { name: "error", severity: "ERROR", code })

const wrapped = (cause: unknown, message = "Failed to execute statement") => new SqlError({ cause, message })

type Tag = StorageError.Reason["_tag"]

// Written by hand from the PostgreSQL manual's appendix A (error codes) and Node's errno list.
const sqlstates: ReadonlyArray<readonly [code: string, name: string, expected: Tag]> = [
  ["40001", "serialization_failure", "Serialization"],
  ["40P01", "deadlock_detected", "Serialization"],
  ["23505", "unique_violation", "UniqueViolation"],
  ["55P03", "lock_not_available", "LockTimeout"],
  ["57014", "query_canceled", "LockTimeout"],
  ["25006", "read_only_sql_transaction", "ReadOnly"],
  ["42501", "insufficient_privilege", "ReadOnly"],
  ["53100", "disk_full", "Full"],
  ["08000", "connection_exception", "Connection"],
  ["08003", "connection_does_not_exist", "Connection"],
  ["08006", "connection_failure", "Connection"],
  ["08001", "sqlclient_unable_to_establish_sqlconnection", "Connection"],
  ["08P01", "protocol_violation", "Connection"],
  ["57P01", "admin_shutdown", "Connection"],
  ["57P02", "crash_shutdown", "Connection"],
  ["57P03", "cannot_connect_now", "Connection"],
  ["53300", "too_many_connections", "Connection"],
  ["XX001", "data_corrupted", "Corrupt"],
  ["XX002", "index_corrupted", "Corrupt"],
  // The rejected set: codes near the mapped ones that must stay Unknown.
  ["XX000", "internal_error", "Unknown"],
  ["23503", "foreign_key_violation", "Unknown"],
  ["23502", "not_null_violation", "Unknown"],
  ["40002", "transaction_integrity_constraint_violation", "Unknown"],
  ["40003", "statement_completion_unknown", "Unknown"],
  ["42P01", "undefined_table", "Unknown"],
  ["42601", "syntax_error", "Unknown"],
  ["53200", "out_of_memory", "Unknown"],
  ["55000", "object_not_in_prerequisite_state", "Unknown"],
  ["57000", "operator_intervention", "Unknown"],
  ["22P02", "invalid_text_representation", "Unknown"],
  ["28P01", "invalid_password", "Unknown"],
  ["3D000", "invalid_catalog_name", "Unknown"],
  ["P0001", "raise_exception", "Unknown"]
]

const errnos: ReadonlyArray<readonly [code: string, expected: Tag]> = [
  ["ECONNREFUSED", "Connection"],
  ["ECONNRESET", "Connection"],
  ["ECONNABORTED", "Connection"],
  ["EPIPE", "Connection"],
  ["ETIMEDOUT", "Connection"],
  ["EHOSTUNREACH", "Connection"],
  ["ENETUNREACH", "Connection"],
  ["ENOTFOUND", "Connection"],
  ["EAI_AGAIN", "Connection"],
  ["ENOENT", "Unknown"],
  ["EACCES", "Unknown"],
  ["ERR_INVALID_ARG_TYPE", "Unknown"]
]

// Messages `pg` and `@effect/sql-pg` produce without any code.
const messages: ReadonlyArray<readonly [message: string, expected: Tag]> = [
  ["Connection terminated unexpectedly", "Connection"],
  ["Connection terminated", "Connection"],
  ["Connection terminated due to connection timeout", "Connection"],
  ["Client has encountered a connection error and is not queryable", "Connection"],
  ["Client was closed and is not queryable", "Connection"],
  ["Connection timed out", "Connection"],
  ["timeout expired", "Connection"],
  ["timeout exceeded when trying to connect", "Connection"],
  ["Cannot use a pool after calling end on the pool", "Unknown"],
  ["Expected 1 results but got 0", "Unknown"],
  ["something else went wrong", "Unknown"]
]

describe("PostgresStore.classify", () => {
  describe("SQLSTATEs inside an SqlError", () => {
    it.each(sqlstates)("%s (%s) → %s", (code, name, expected) => {
      const error = PostgresStore.classify("append", wrapped(databaseError(code, `${name} happened`)))
      expect(error._tag).toBe("@ratchet/storage/StorageError")
      expect(error.reason._tag).toBe(expected)
      expect(error.reason.code).toBe(code)
      expect(error.reason.detail).toBe(`${name} happened`)
      expect(error.operation).toBe("append")
    })
  })

  it.each(sqlstates)("a bare driver error %s (%s) maps the same → %s", (code, name, expected) => {
    expect(PostgresStore.classify("read", databaseError(code, name)).reason._tag).toBe(expected)
  })

  describe("socket errnos", () => {
    it.each(errnos)("%s → %s", (code, expected) => {
      const socket = Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code, errno: -1, syscall: "connect" })
      const error = PostgresStore.classify("connect", wrapped(socket, "PgClient: Failed to connect"))
      expect(error.reason._tag).toBe(expected)
      expect(error.reason.code).toBe(code)
    })

    it("finds the errno inside an AggregateError (localhost resolving to two addresses)", () => {
      const refused = (address: string) =>
        Object.assign(new Error(`connect ECONNREFUSED ${address}:5432`), { code: "ECONNREFUSED" })
      const aggregate = new AggregateError([refused("::1"), refused("127.0.0.1")], "")
      const error = PostgresStore.classify("connect", wrapped(aggregate, "PgClient: Failed to connect"))
      expect(error.reason._tag).toBe("Connection")
      expect(error.reason.code).toBe("ECONNREFUSED")
      expect(error.reason.detail).toBe("connect ECONNREFUSED ::1:5432")
    })
  })

  describe("messages without a code", () => {
    it.each(messages)("%s → %s", (message, expected) => {
      const error = PostgresStore.classify("commit", wrapped(new Error(message), "Failed to execute statement"))
      expect(error.reason._tag).toBe(expected)
      expect(error.reason.code).toBeNull()
      expect(error.reason.detail).toBe(message)
    })
  })

  it("keeps the original failure as the cause", () => {
    const original = wrapped(databaseError("40001", "could not serialize access"))
    expect(PostgresStore.classify("append", original).cause).toBe(original)
  })

  it("passes a StorageError through unchanged", () => {
    const already = StorageError.make("append", StorageError.SchemaTooNew.make({ code: null, detail: "version 9" }))
    expect(PostgresStore.classify("other", already)).toBe(already)
  })

  it("maps values that are not errors to Unknown without throwing", () => {
    expect(PostgresStore.classify("x", "boom").reason).toEqual({ _tag: "Unknown", code: null, detail: "boom" })
    expect(PostgresStore.classify("x", undefined).reason._tag).toBe("Unknown")
    expect(PostgresStore.classify("x", null).reason._tag).toBe("Unknown")
    expect(PostgresStore.classify("x", { code: 40001 }).reason._tag).toBe("Unknown")
  })

  it("says what to do in its message", () => {
    const error = PostgresStore.classify("append", wrapped(databaseError("57P01", "terminating connection due to administrator command")))
    expect(error.message).toContain("append")
    expect(error.message).toContain("[57P01]")
    expect(error.message).toContain("terminating connection due to administrator command")
    expect(error.message).toContain("RATCHET_DATABASE_URL")
    expect(error.isRetryable).toBe(true)
  })
})
