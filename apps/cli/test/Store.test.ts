/**
 * The store's environment, checked before anything is opened: an invalid PostgreSQL schema name is
 * the caller's input (a usage error, exit 2) naming the variable; with SQLite it names nothing.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Store from "../src/Store.js"

const saved = { ...process.env }

afterEach(() => {
  for (const name of ["RATCHET_DATABASE_URL", "RATCHET_DATABASE_SCHEMA", "RATCHET_HOME"]) {
    if (saved[name] === undefined) delete process.env[name]
    else process.env[name] = saved[name]
  }
})

describe("Store.checkEnvironment: RATCHET_DATABASE_SCHEMA", () => {
  const withStore = (url: string | undefined, schema: string) => {
    delete process.env["RATCHET_HOME"]
    if (url === undefined) delete process.env["RATCHET_DATABASE_URL"]
    else process.env["RATCHET_DATABASE_URL"] = url
    process.env["RATCHET_DATABASE_SCHEMA"] = schema
    return Store.checkEnvironment("status")
  }

  it.each(["Bad-Schema", "1st", "", "a".repeat(64), "x;drop"])("%j is a usage error naming the variable", (schema) => {
    const error = withStore("postgres://127.0.0.1/test", schema)
    expect(error?._tag).toBe("@ratchet/cli/UsageError")
    expect(error?.field).toBe("RATCHET_DATABASE_SCHEMA")
    expect(error?.message).toContain("is not a lowercase PostgreSQL identifier")
  })

  it("a valid name, or any name without a PostgreSQL store, is fine", () => {
    expect(withStore("postgres://127.0.0.1/test", "ratchet_e2e")).toBeNull()
    expect(withStore(undefined, "Bad-Schema")).toBeNull()
  })
})
