/**
 * A durable step on PostgreSQL: what one side-effecting step of the run engine costs us, against
 * the raw two-commit floor on the same server and a DBOS Transact step.
 *
 * Ours is the runner's four appends of one command step through `EventStore.append` of
 * `PostgresStore.layer` (see `steps.ts`); the effect is a no-op on every side. Pairs:
 * - `step/postgres/raw`: the same nine events, byte for byte, in two transactions on one `pg`
 *   client (`BEGIN; INSERT … VALUES (…) ×4; COMMIT`, then the same with the five events after the
 *   effect) into a copy of `ratchet_events` made from its migration statement;
 * - `step/postgres/dbos`: one `DBOS.runStep` of a DBOS workflow (see `dbos.ts`).
 *
 * Every side has a schema of its own in the database named by `RATCHET_DATABASE_URL` (default: the
 * local development server of DEVELOPERS.md), dropped at the end; the server's settings apply to
 * all alike and are printed. When PostgreSQL does not answer, the suite is skipped with one line
 * saying so.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as EventStore from "@ratchet/storage/EventStore"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as crypto from "node:crypto"
import type { Pair, Prepared, Skipped, Suite } from "../lib/Pair.js"
import { commitRows, connect, connectOrSkip, countQueries, databaseUrl, totalOf } from "../lib/postgres.js"
import { eventTableStatements } from "../storage/events.js"
import * as Dbos from "./dbos.js"
import { cursorOf, epoch, oursSteps, rawCommits, runningTask, type StepCursor, stepAppends } from "./steps.js"
import { versions } from "./versions.js"

/** @see the module comment */
export const suite: Suite = {
  name: "Durable step (PostgreSQL)",
  prepare: async (): Promise<Prepared | Skipped> => {
    const url = databaseUrl()
    const admin = await connectOrSkip(url)
    if ("_tag" in admin) return admin
    const suffix = crypto.randomBytes(4).toString("hex")
    const schemas = { ours: `ratchet_bench_step_ours_${suffix}`, raw: `ratchet_bench_step_raw_${suffix}`, dbos: `ratchet_bench_step_dbos_${suffix}` }
    const setting = async (name: string) => String((await admin.query(`SHOW ${name}`)).rows[0]?.[name] ?? "?")
    const facts: Record<string, string> = {
      "PostgreSQL": await setting("server_version"),
      "synchronous_commit": await setting("synchronous_commit"),
      "fsync": await setting("fsync"),
      "versions": versions(["pg", "@dbos-inc/dbos-sdk"])
    }

    const closers: Array<() => Promise<unknown>> = [async () => {
      for (const schema of Object.values(schemas)) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await admin.end()
    }]
    const close = async () => {
      for (const closer of closers.reverse()) await closer()
    }
    try {
      // ---- ours: the runner's four appends per step -----------------------------------------
      const runtime = ManagedRuntime.make(PostgresStore.layer({ url, schema: schemas.ours, maxConnections: 4 }))
      closers.push(() => runtime.dispose())
      const store = await runtime.runPromise(EventStore.EventStore)
      const ours = oursSteps((effect) => runtime.runPromise(effect), store)
      const oursSide = ours.side
      let operation = 0

      // ---- raw: the same events in two transactions -------------------------------------------
      await admin.query(`CREATE SCHEMA ${schemas.raw}`)
      const raw = await connect(url, schemas.raw)
      closers.push(() => raw.end())
      for (const statement of eventTableStatements("pg")) await raw.query(statement)
      let rawLsn = 0
      const rawStreams = new Map<string, StepCursor>()
      const rawSide = (name: string) => async (_round: number, operations: number) => {
        let stream = rawStreams.get(name)
        if (stream === undefined) {
          stream = cursorOf(runningTask(name))
          rawStreams.set(name, stream)
        }
        for (let i = 0; i < operations; i++) {
          for (const events of rawCommits(stepAppends(stream))) {
            const operationId = `op-${name}-${operation++}`
            const now = Date.now()
            await commitRows(raw, events.map((event) => ({
              lsn: ++rawLsn,
              streamId: name,
              version: ++stream.version,
              type: event._tag,
              typeVersion: event.version,
              payload: JSON.stringify(event),
              epoch,
              operationId,
              recordedAt: now
            })))
          }
        }
      }

      // ---- checks and counts -------------------------------------------------------------------
      await ours.cursor("count")
      const oursQueries = totalOf(await countQueries(() => oursSide("count")(0, 1)))
      const rawQueries = totalOf(await countQueries(() => rawSide("count")(0, 1)))
      const stored = await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ payload: string }>`SELECT payload FROM ratchet_events WHERE stream_id = ${"count"} ORDER BY lsn DESC LIMIT 9`))
      const expected = stepAppends(cursorOf(runningTask("count"))).flat().map((event) => JSON.stringify(event))
      if (stored.map((row) => row.payload).reverse().join("\n") !== expected.join("\n")) {
        throw new Error("our store's payloads are not the raw side's JSON.stringify(event); the pair would compare different bytes")
      }
      // ---- DBOS, opened after the counts above (its background polling would be counted in them) ----
      const dbos = await Dbos.open(url, schemas.dbos)
      closers.push(() => dbos.close())
      let workflow = 0
      const dbosSide = (_round: number, operations: number) => dbos.run(`bench-${suffix}-${workflow++}`, operations)

      const dbosQueries = totalOf(await countQueries(() => dbos.run(`bench-${suffix}-count`, 10)))
      facts["queries per step"] = `ours ${oursQueries} (4 appends), raw ${rawQueries} (2 commits); per 10-step workflow: DBOS ${dbosQueries}`
      facts["steps per round"] = "one DBOS workflow per round, of as many steps as the round has"

      const pair = (baseline: string, side: Pair["raw"], target: number, targetText: string | undefined): Pair => ({
        id: `step/postgres/${baseline}`,
        operation: "one durable step",
        ours: oursSide(baseline),
        raw: side,
        operationsPerRound: 20,
        eventsPerOperation: 9,
        target,
        baseline: baseline === "raw" ? "raw 2 commits" : baseline,
        targetText
      })
      return {
        _tag: "Prepared",
        pairs: [
          pair("raw", rawSide("raw"), Number.POSITIVE_INFINITY, "none (floor of the DBOS target)"),
          pair("dbos", dbosSide, 0.5, undefined)
        ],
        facts,
        close
      }
    } catch (error) {
      await close()
      throw error
    }
  }
}
