/**
 * What the PostgreSQL suites share: the server they use, a client on a schema of its own, the
 * skip when the server does not answer, the raw side's commit, and the count of queries every `pg`
 * client of this process sends while a function runs (ours through its pool, raw directly, a
 * competitor through its own).
 */
import pg from "pg"
import type { RawRow } from "../storage/events.js"
import type { Skipped } from "./Pair.js"

/** `RATCHET_DATABASE_URL`, or the local server of the developer guide. */
export const databaseUrl = (): string => process.env["RATCHET_DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

/** A connected client, its `search_path` set to `schema` when given. */
export const connect = async (url: string, schema?: string): Promise<pg.Client> => {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 3_000,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` })
  })
  await client.connect()
  return client
}

/** A connected administrative client, or the suite's one-line skip naming the server (without its credentials). */
export const connectOrSkip = async (url: string): Promise<pg.Client | Skipped> => {
  try {
    return await connect(url)
  } catch (error) {
    const shown = url.replace(/\/\/[^@/]*@/, "//…@")
    return { _tag: "Skipped", reason: `PostgreSQL is unreachable at ${shown} (${error instanceof Error ? error.message : String(error)})` }
  }
}

let counted: Map<string, number> | undefined
let counting = false

/** The queries sent while `f` runs, by text (whitespace collapsed), with how often each was sent. */
export const countQueries = async (f: () => Promise<void>): Promise<ReadonlyMap<string, number>> => {
  if (!counting) {
    counting = true
    const query = pg.Client.prototype.query as (...args: Array<unknown>) => unknown
    pg.Client.prototype.query = function(this: pg.Client, ...args: Array<unknown>) {
      const first = args[0]
      const text = typeof first === "string" ? first : (first as { text?: unknown } | undefined)?.text
      if (counted !== undefined && typeof text === "string") {
        const key = text.replace(/\s+/g, " ").trim()
        counted.set(key, (counted.get(key) ?? 0) + 1)
      }
      return query.apply(this, args)
    } as typeof pg.Client.prototype.query
  }
  counted = new Map()
  try {
    await f()
    return counted
  } finally {
    counted = undefined
  }
}

/** How many queries a count holds. */
export const totalOf = (queries: ReadonlyMap<string, number>): number => [...queries.values()].reduce((a, b) => a + b, 0)

/**
 * The raw side's commit: `rows` into the `ratchet_events` of `client`'s schema in one transaction
 * (`BEGIN`, one multi-row INSERT, `COMMIT`).
 */
export const commitRows = async (client: pg.Client, rows: ReadonlyArray<RawRow>): Promise<void> => {
  const values: Array<unknown> = []
  const tuples: Array<string> = []
  for (const row of rows) {
    const at = values.length
    tuples.push(`($${at + 1}, $${at + 2}, 'main', $${at + 3}, $${at + 4}, $${at + 5}, $${at + 6}, $${at + 7}, $${at + 8}, $${at + 9})`)
    values.push(row.lsn, row.streamId, row.version, row.type, row.typeVersion, row.payload, row.epoch, row.operationId, row.recordedAt)
  }
  await client.query("BEGIN")
  try {
    await client.query(
      `INSERT INTO ratchet_events (lsn, stream_id, branch, version, type, type_version, payload, epoch, operation_id, recorded_at)
       VALUES ${tuples.join(", ")}`,
      values
    )
    await client.query("COMMIT")
  } catch (error) {
    await client.query("ROLLBACK")
    throw error
  }
}
