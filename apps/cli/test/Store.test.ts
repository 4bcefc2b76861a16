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

describe("Store.checkEnvironment: RATCHET_DATABASE_SESSION_URL", () => {
  const withSession = (session: string) => {
    delete process.env["RATCHET_HOME"]
    delete process.env["RATCHET_DATABASE_SCHEMA"]
    process.env["RATCHET_DATABASE_URL"] = "postgres://127.0.0.1:6432/test"
    process.env["RATCHET_DATABASE_SESSION_URL"] = session
    return Store.checkEnvironment("status")
  }
  afterEach(() => {
    if (saved["RATCHET_DATABASE_SESSION_URL"] === undefined) delete process.env["RATCHET_DATABASE_SESSION_URL"]
    else process.env["RATCHET_DATABASE_SESSION_URL"] = saved["RATCHET_DATABASE_SESSION_URL"]
  })

  it.each(["mysql://db/x", "127.0.0.1:5432", "postgres://db/x y", "postgres://"])("%j is a usage error naming the variable", (session) => {
    const error = withSession(session)
    expect(error?._tag).toBe("@ratchet/cli/UsageError")
    expect(error?.field).toBe("RATCHET_DATABASE_SESSION_URL")
    expect(error?.message).toContain("is not a postgres:// URL")
  })

  it("a postgres:// URL, or none, is fine", () => {
    expect(withSession("postgres://ratchet@db:5432/test")).toBeNull()
    expect(withSession("postgresql://db/test")).toBeNull()
    expect(withSession("")).toBeNull()
  })
})
