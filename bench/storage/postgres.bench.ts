/**
 * PostgreSQL: our durable append against raw `pg` inserts, in the same run, on the same server.
 *
 * Pairs: one event per append (`EventStore.append` vs `BEGIN; INSERT; COMMIT` on one `pg`
 * client) and 100 events per append (one append vs `BEGIN; INSERT … VALUES (…), … (100 rows);
 * COMMIT`, the multi-row insert a hand-written store would send). Each side gets its own schema
 * in the database named by `RATCHET_DATABASE_URL` (default: the local development server of
 * DEVELOPERS.md); both are dropped at the end. The server's `synchronous_commit` and `fsync`
 * apply to both sides alike and are printed.
 *
 * When PostgreSQL does not answer, the suite is skipped with one line saying so.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as EventStore from "@ratchet/storage/EventStore"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as crypto from "node:crypto"
import type { Pair, Prepared, Skipped, Suite } from "../lib/Pair.js"
import { commitRows, connect, connectOrSkip, countQueries, databaseUrl, totalOf } from "../lib/postgres.js"
import { appendRequest, eventTableStatements, attemptTransitioned, type StreamCursor, taskCreated } from "./events.js"

/** @see the module comment */
export const suite: Suite = {
  name: "PostgreSQL",
  prepare: async (): Promise<Prepared | Skipped> => {
    const url = databaseUrl()
    const admin = await connectOrSkip(url)
    if ("_tag" in admin) return admin
    const suffix = crypto.randomBytes(4).toString("hex")
    const oursSchema = `ratchet_bench_ours_${suffix}`
    const rawSchema = `ratchet_bench_raw_${suffix}`
    const setting = async (name: string) => String((await admin.query(`SHOW ${name}`)).rows[0]?.[name] ?? "?")
    const facts = {
      "PostgreSQL": await setting("server_version"),
      "synchronous_commit": await setting("synchronous_commit"),
      "fsync": await setting("fsync"),
      "wal_sync_method": await setting("wal_sync_method")
    }

    const dropSchemas = async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${oursSchema} CASCADE`)
      await admin.query(`DROP SCHEMA IF EXISTS ${rawSchema} CASCADE`)
    }
    await admin.query(`CREATE SCHEMA ${rawSchema}`)
    const raw = await connect(url, rawSchema)
    for (const statement of eventTableStatements("pg")) await raw.query(statement)

    const runtime = ManagedRuntime.make(PostgresStore.layer({ url, schema: oursSchema, maxConnections: 4 }))
    const store = await runtime.runPromise(EventStore.EventStore).catch(async (error: unknown) => {
      await raw.end()
      await dropSchemas()
      await admin.end()
      throw error
    })

    let operation = 0
    const streams = new Map<string, StreamCursor>()
    const cursor = async (name: string): Promise<StreamCursor> => {
      const existing = streams.get(name)
      if (existing !== undefined) return existing
      await runtime.runPromise(store.append({
        projectId: "bench",
        streamId: name,
        expectedVersion: 0,
        epoch: null,
        operationId: `${name}-create`,
        events: [taskCreated(name)]
      }))
      const created: StreamCursor = { streamId: name, version: 1, next: 0 }
      streams.set(name, created)
      return created
    }
    const oursSide = (name: string, eventsPerAppend: number) => async (_round: number, operations: number) => {
      const stream = await cursor(name)
      await runtime.runPromise(Effect.gen(function*() {
        for (let i = 0; i < operations; i++) {
          yield* store.append(appendRequest(stream, eventsPerAppend, `${name}-${operation++}`))
        }
      }))
    }

    let rawLsn = 0
    const rawCursors = new Map<string, StreamCursor>()
    const rawSide = (name: string, eventsPerAppend: number) => async (_round: number, operations: number) => {
      let stream = rawCursors.get(name)
      if (stream === undefined) {
        stream = { streamId: name, version: 1, next: 0 }
        rawCursors.set(name, stream)
      }
      for (let i = 0; i < operations; i++) {
        const request = appendRequest(stream, eventsPerAppend, `${name}-${operation++}`)
        const now = Date.now()
        let version = request.expectedVersion
        await commitRows(raw, request.events.map((event) => ({
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
    }

    const close = async () => {
      await runtime.dispose()
      await raw.end()
      await dropSchemas()
      await admin.end()
    }

    // The queries one append sends on each side (BEGIN and COMMIT included), on streams of their own.
    const statements: Record<string, string> = {}
    try {
      for (const events of [1, 100]) {
        await cursor(`count-${events}`)
        const oursQueries = await countQueries(() => oursSide(`count-${events}`, events)(0, 1))
        const rawQueries = await countQueries(() => rawSide(`count-${events}`, events)(0, 1))
        statements[`statements per append of ${events}`] = `ours ${totalOf(oursQueries)}, raw ${totalOf(rawQueries)}`
        if (events === 1) {
          const rows = await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql<{ payload: string }>`SELECT payload FROM ratchet_events WHERE stream_id = ${"count-1"} ORDER BY lsn DESC LIMIT 1`))
          if (rows[0]?.payload !== JSON.stringify(attemptTransitioned(0))) {
            throw new Error("our store's payload is not the raw side's JSON.stringify(event); the pair would compare different bytes")
          }
          statements["statements of our append of 1"] = [...oursQueries.entries()]
            .map(([sql, times]) => `${times}× ${sql.slice(0, 60)}`)
            .join(" | ")
        }
      }
    } catch (error) {
      await close()
      throw error
    }

    const pairs: ReadonlyArray<Pair> = [
      {
        id: "postgres/append-1",
        operation: "append 1 event",
        ours: oursSide("one", 1),
        raw: rawSide("one", 1),
        operationsPerRound: 200,
        eventsPerOperation: 1,
        target: 1.3
      },
      {
        id: "postgres/append-100",
        operation: "append 100 events",
        ours: oursSide("batch", 100),
        raw: rawSide("batch", 100),
        operationsPerRound: 20,
        eventsPerOperation: 100,
        target: 1.3
      }
    ]
    return {
      _tag: "Prepared",
      pairs,
      facts: { ...facts, ...statements },
      close
    }
  }
}
