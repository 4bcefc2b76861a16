/**
 * What the SQLite suites share: one engine per `synchronous` setting in a temporary directory, the
 * pragmas our store's connection reads back, and the raw side — a better-sqlite3 copy of
 * `ratchet_events`, made from its migration statement, written one transaction per commit with the
 * same pragmas as ours.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import type * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { eventTableStatements, type RawRow } from "../storage/events.js"
import type { Pair, Prepared } from "./Pair.js"

/** The two settings every SQLite suite measures at. */
export type Synchronous = "FULL" | "NORMAL"

/** The pairs and facts of one `synchronous` setting, and how to close what it opened. */
export interface Engine {
  readonly pairs: ReadonlyArray<Pair>
  readonly facts: Record<string, string>
  readonly close: () => Promise<void>
}

/**
 * The suite's preparation: a temporary directory, an engine at FULL then at NORMAL opened by
 * `open`, and the SQLite version beside `facts`. Whatever was opened is closed when one fails.
 */
export const prepareBySynchronous = async (
  prefix: string,
  open: (directory: string, synchronous: Synchronous) => Promise<Engine>,
  facts: Readonly<Record<string, string>> = {}
): Promise<Prepared> => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const engines: Array<Engine> = []
  try {
    engines.push(await open(directory, "FULL"))
    engines.push(await open(directory, "NORMAL"))
  } catch (error) {
    for (const opened of engines) await opened.close()
    fs.rmSync(directory, { recursive: true, force: true })
    throw error
  }
  const probe = new Database(":memory:")
  const version = String((probe.prepare("SELECT sqlite_version() AS v").get() as { v: string }).v)
  probe.close()
  return {
    _tag: "Prepared",
    pairs: engines.flatMap((engine) => engine.pairs),
    facts: { "SQLite": version, ...facts, ...Object.assign({}, ...engines.map((engine) => engine.facts)) },
    close: async () => {
      for (const engine of engines) await engine.close()
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }
}

/** The values of `names` as the connection of `runtime` reads them back (`PRAGMA <name>`). */
export const pragmasOf = <Name extends string>(
  runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>,
  names: ReadonlyArray<Name>
): Promise<Record<Name, string>> =>
  runtime.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const values: Partial<Record<Name, string>> = {}
    for (const name of names) {
      const rows = yield* sql.unsafe<Record<string, unknown>>(`PRAGMA ${name}`)
      values[name] = String(Object.values(rows[0] ?? {})[0])
    }
    return values as Record<Name, string>
  }))

/** The raw side: a copy of `ratchet_events`, written by plain better-sqlite3. */
export interface RawLog {
  /** Writes `rows` in one transaction (`BEGIN IMMEDIATE`, one INSERT per row, `COMMIT`). */
  readonly commit: (rows: ReadonlyArray<RawRow>) => void
  readonly close: () => void
}

/**
 * Opens the raw side's database at `file`, in WAL mode with the given pragmas (`name = value`, as
 * ours reads them back), and creates its `ratchet_events` from the migration statement.
 */
export const openRawLog = (file: string, pragmas: Readonly<Record<string, string>>): RawLog => {
  const raw = new Database(file)
  raw.pragma("journal_mode = WAL")
  for (const [name, value] of Object.entries(pragmas)) raw.pragma(`${name} = ${value}`)
  for (const statement of eventTableStatements("sqlite")) raw.exec(statement)
  const insert = raw.prepare(
    `INSERT INTO ratchet_events (lsn, stream_id, branch, version, type, type_version, payload, epoch, operation_id, recorded_at)
     VALUES (?, ?, 'main', ?, ?, ?, ?, ?, ?, ?)`
  )
  const begin = raw.prepare("BEGIN IMMEDIATE")
  const commit = raw.prepare("COMMIT")
  return {
    commit: (rows) => {
      begin.run()
      try {
        for (const row of rows) {
          insert.run(row.lsn, row.streamId, row.version, row.type, row.typeVersion, row.payload, row.epoch, row.operationId, row.recordedAt)
        }
        commit.run()
      } catch (error) {
        if (raw.inTransaction) raw.exec("ROLLBACK")
        throw error
      }
    },
    close: () => raw.close()
  }
}
