/**
 * SQLite: our durable append against raw `better-sqlite3` inserts, in the same run.
 *
 * Pairs, each at `synchronous=FULL` (the store's default: every commit is fsynced) and at
 * `synchronous=NORMAL` (WAL commits are not fsynced; a power loss may drop the newest commits,
 * never corrupt the file):
 * - one event per append: `EventStore.append` of one event vs `BEGIN IMMEDIATE; INSERT; COMMIT`;
 * - 100 events per append: one `EventStore.append` of 100 events vs one transaction of 100 inserts.
 *
 * Both sides use their own file in the same temporary directory (same disk), WAL, the same
 * `synchronous` and busy timeout. The raw side reads the pragmas back from our store's own
 * connection and applies the same values, so a change of the store's settings cannot silently make
 * the comparison unfair; the report prints them.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as EventStore from "@ratchet/storage/EventStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as path from "node:path"
import type { Pair, Prepared, Suite } from "../lib/Pair.js"
import { type Engine, openRawLog, pragmasOf, prepareBySynchronous, type Synchronous } from "../lib/sqlite.js"
import { count, total } from "../lib/statements.js"
import { appendRequest, attemptTransitioned, type StreamCursor, taskCreated } from "./events.js"

const busyTimeoutMs = 5_000

/** Fails unless our store wrote, for the first timed event of `streamId`, the bytes the raw side inserts. */
const sameBytes = async (runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>, streamId: string) => {
  const rows = await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ payload: string }>`SELECT payload FROM ratchet_events WHERE stream_id = ${streamId} ORDER BY lsn DESC LIMIT 1`))
  if (rows[0]?.payload !== JSON.stringify(attemptTransitioned(0))) {
    throw new Error("our store's payload is not the raw side's JSON.stringify(event); the pair would compare different bytes")
  }
}

const engine = async (directory: string, synchronous: Synchronous): Promise<Engine> => {
  const runtime = ManagedRuntime.make(
    SqliteStore.layer({ directory, filename: `ours-${synchronous}.db`, synchronous, busyTimeoutMs })
  )
  const store = await runtime.runPromise(EventStore.EventStore)
  const pragmas = await pragmasOf(runtime, ["journal_mode", "synchronous", "busy_timeout", "page_size", "wal_autocheckpoint", "foreign_keys"])
  if (pragmas.journal_mode !== "wal") throw new Error(`our store is not in WAL mode (${pragmas.journal_mode})`)

  const raw = openRawLog(path.join(directory, `raw-${synchronous}.db`), {
    synchronous: pragmas.synchronous,
    busy_timeout: pragmas.busy_timeout,
    wal_autocheckpoint: pragmas.wal_autocheckpoint,
    foreign_keys: pragmas.foreign_keys
  })
  let rawLsn = 0

  const streams = new Map<string, StreamCursor>()
  const cursor = async (name: string): Promise<StreamCursor> => {
    const existing = streams.get(name)
    if (existing !== undefined) return existing
    const created: StreamCursor = { streamId: name, version: 0, next: 0 }
    await runtime.runPromise(store.append({
      projectId: "bench",
      streamId: name,
      expectedVersion: 0,
      epoch: null,
      operationId: `${name}-create`,
      events: [taskCreated(name)]
    }))
    created.version = 1
    streams.set(name, created)
    return created
  }
  const rawCursors = new Map<string, StreamCursor>()
  const rawCursor = (name: string): StreamCursor => {
    const existing = rawCursors.get(name)
    if (existing !== undefined) return existing
    const created: StreamCursor = { streamId: name, version: 1, next: 0 }
    rawCursors.set(name, created)
    return created
  }

  let operation = 0
  const oursSide = (name: string, eventsPerAppend: number) => async (_round: number, operations: number) => {
    const stream = await cursor(name)
    await runtime.runPromise(Effect.gen(function*() {
      for (let i = 0; i < operations; i++) {
        yield* store.append(appendRequest(stream, eventsPerAppend, `${name}-${operation++}`))
      }
    }))
  }
  const rawSide = (name: string, eventsPerAppend: number) => (_round: number, operations: number) => {
    const stream = rawCursor(name)
    for (let i = 0; i < operations; i++) {
      const request = appendRequest(stream, eventsPerAppend, `${name}-${operation++}`)
      const now = Date.now()
      let version = request.expectedVersion
      // A hand-written store would serialise the event as it is; the bytes equal ours (checked below).
      raw.commit(request.events.map((event) => ({
        lsn: ++rawLsn,
        streamId: request.streamId,
        version: ++version,
        type: event._tag,
        typeVersion: event.version,
        payload: JSON.stringify(event),
        epoch: null,
        operationId: request.operationId,
        recordedAt: now
      })))
    }
    return Promise.resolve()
  }

  // The statements one append issues on each side (BEGIN and COMMIT included), on streams of their own.
  const statements: Record<string, string> = {}
  for (const events of [1, 100]) {
    await cursor(`count-${events}`)
    const oursStatements = await count(() => oursSide(`count-${events}`, events)(0, 1))
    const rawStatements = await count(() => rawSide(`count-${events}`, events)(0, 1))
    statements[`${synchronous} statements per append of ${events}`] = `ours ${total(oursStatements)}, raw ${total(rawStatements)}`
    if (events === 1) await sameBytes(runtime, "count-1")
    if (synchronous === "FULL" && events === 1) {
      statements["FULL statements of our append of 1"] = [...oursStatements.entries()]
        .map(([sql, times]) => `${times}× ${sql.slice(0, 60)}`)
        .join(" | ")
    }
  }

  const pairs: Array<Pair> = [
    {
      id: `sqlite/append-1/${synchronous}`,
      operation: `append 1 event (synchronous=${synchronous})`,
      ours: oursSide(`one-${synchronous}`, 1),
      raw: rawSide(`one-${synchronous}`, 1),
      operationsPerRound: synchronous === "FULL" ? 200 : 1_000,
      eventsPerOperation: 1,
      target: 1.3
    },
    {
      id: `sqlite/append-100/${synchronous}`,
      operation: `append 100 events (synchronous=${synchronous})`,
      ours: oursSide(`batch-${synchronous}`, 100),
      raw: rawSide(`batch-${synchronous}`, 100),
      operationsPerRound: synchronous === "FULL" ? 20 : 40,
      eventsPerOperation: 100,
      target: 1.3
    }
  ]
  return {
    pairs,
    facts: {
      ...Object.fromEntries(Object.entries(pragmas).map(([key, value]) => [`${synchronous} ${key}`, value])),
      ...statements
    },
    close: async () => {
      raw.close()
      await runtime.dispose()
    }
  }
}

/** @see the module comment */
export const suite: Suite = {
  name: "SQLite",
  prepare: (): Promise<Prepared> => prepareBySynchronous("ratchet-bench-sqlite-", engine)
}
