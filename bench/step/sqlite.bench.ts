/**
 * A durable step on SQLite: what one side-effecting step of the run engine costs us, against the
 * raw two-commit floor on the same engine, a LangGraph node and an `@effect/workflow` activity.
 *
 * Ours is the runner's four appends of one command step through `EventStore.append` of
 * `SqliteStore.layer` (see `steps.ts`); the effect is a no-op on every side. Pairs, each at
 * `synchronous=FULL` (our store's default) and at `synchronous=NORMAL` (the compile-time default
 * of better-sqlite3, so what LangGraph's and Effect's SQLite storage run at unless told otherwise):
 * - `step/sqlite/<sync>/raw`: the same nine events, byte for byte, in two better-sqlite3
 *   transactions (`BEGIN IMMEDIATE; INSERT ×4; COMMIT`, then `… INSERT ×5; COMMIT`) into a copy of
 *   `ratchet_events` made from its migration statement;
 * - `step/sqlite/<sync>/langgraph`: one LangGraph node with `SqliteSaver`, `durability: "sync"`;
 * - `step/sqlite/<sync>/effect-workflow`: one activity of an `@effect/workflow` workflow on the
 *   cluster's SQL message storage.
 *
 * Every side has its own file in one temporary directory (same disk), in WAL mode, with the
 * `synchronous` and `busy_timeout` our store's connection reads back: they are set on each
 * competitor's own connection, read back from it and printed, and a mismatch fails the suite.
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
import * as EffectWorkflow from "./effectWorkflow.js"
import * as LangGraph from "./langgraph.js"
import { cursorOf, epoch, oursSteps, rawCommits, runningTask, type StepCursor, stepAppends } from "./steps.js"
import { versions } from "./versions.js"

const busyTimeoutMs = 5_000

type Runtime = ManagedRuntime.ManagedRuntime<SqlClient.SqlClient | EventStore.EventStore, unknown>

const synchronousName = (value: string) => ({ "0": "OFF", "1": "NORMAL", "2": "FULL", "3": "EXTRA" })[value] ?? value

const shown = (pragmas: Readonly<Record<string, string>>) =>
  Object.entries(pragmas).map(([key, value]) => `${key}=${key === "synchronous" ? synchronousName(value) : value}`).join(", ")

/** Fails unless `side`'s connection reads back the journal mode, `synchronous` and busy timeout ours does. */
const sameSettings = (side: string, ours: Readonly<Record<string, string>>, theirs: Readonly<Record<string, string>>) => {
  for (const name of ["journal_mode", "synchronous", "busy_timeout"]) {
    if (ours[name] !== theirs[name]) throw new Error(`${side}'s ${name} is ${theirs[name]}, ours is ${ours[name]}: the pair would not compare like with like`)
  }
}

const engine = async (directory: string, synchronous: Synchronous): Promise<Engine> => {
  const closers: Array<() => Promise<void>> = []
  const close = async () => {
    for (const closer of closers.reverse()) await closer()
  }
  try {
    const runtime: Runtime = ManagedRuntime.make(
      SqliteStore.layer({ directory, filename: `ours-${synchronous}.db`, synchronous, busyTimeoutMs })
    )
    closers.push(() => runtime.dispose())
    const store = await runtime.runPromise(EventStore.EventStore)
    const pragmas = await pragmasOf(runtime, ["journal_mode", "synchronous", "busy_timeout", "wal_autocheckpoint"])
    if (pragmas.journal_mode !== "wal") throw new Error(`our store is not in WAL mode (${pragmas.journal_mode})`)
    const shared = { synchronous: pragmas.synchronous, busy_timeout: pragmas.busy_timeout }

    // ---- ours: the runner's four appends per step -------------------------------------------
    const ours = oursSteps((effect) => runtime.runPromise(effect), store)
    const oursSide = ours.side
    let operation = 0

    // ---- raw: the same events in two transactions ---------------------------------------------
    const raw = openRawLog(path.join(directory, `raw-${synchronous}.db`), {
      synchronous: pragmas.synchronous,
      busy_timeout: pragmas.busy_timeout,
      wal_autocheckpoint: pragmas.wal_autocheckpoint
    })
    closers.push(() => {
      raw.close()
      return Promise.resolve()
    })
    let rawLsn = 0
    const rawStreams = new Map<string, StepCursor>()
    const rawSide = (name: string) => (_round: number, operations: number) => {
      let stream = rawStreams.get(name)
      if (stream === undefined) {
        stream = cursorOf(runningTask(name))
        rawStreams.set(name, stream)
      }
      for (let i = 0; i < operations; i++) {
        for (const events of rawCommits(stepAppends(stream))) {
          const operationId = `op-${name}-${operation++}`
          const now = Date.now()
          raw.commit(events.map((event) => ({
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
      return Promise.resolve()
    }

    // ---- LangGraph -----------------------------------------------------------------------------
    const graph = LangGraph.open(path.join(directory, `langgraph-${synchronous}.db`), shared)
    closers.push(() => graph.close())
    let thread = 0
    const langGraphSide = (_round: number, operations: number) => graph.run(`thread-${thread++}`, operations)

    // ---- @effect/workflow ------------------------------------------------------------------------
    const workflow = await EffectWorkflow.open(path.join(directory, `effect-workflow-${synchronous}.db`), shared)
    closers.push(() => workflow.close())
    let execution = 0
    const effectWorkflowSide = (_round: number, operations: number) => workflow.run(`execution-${synchronous}-${execution++}`, operations)

    // ---- checks and counts, on streams and threads of their own ------------------------------
    await ours.cursor("count")
    const oursStatements = await count(() => oursSide("count")(0, 1))
    const rawStatements = await count(() => rawSide("count")(0, 1))
    // Same bytes: the payloads our store kept for that step are the raw side's JSON of its events.
    const stored = await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ payload: string }>`SELECT payload FROM ratchet_events WHERE stream_id = ${"count"} ORDER BY lsn DESC LIMIT 9`))
    const expected = stepAppends(cursorOf(runningTask("count"))).flat().map((event) => JSON.stringify(event))
    if (stored.map((row) => row.payload).reverse().join("\n") !== expected.join("\n")) {
      throw new Error("our store's payloads are not the raw side's JSON.stringify(event); the pair would compare different bytes")
    }
    const graphStatements = await count(() => graph.run("count", 10))
    const workflowStatements = await count(() => workflow.run(`count-${synchronous}`, 10))
    sameSettings("LangGraph", pragmas, graph.pragmas())
    sameSettings("@effect/workflow", pragmas, workflow.pragmas)

    const operationsPerRound = synchronous === "FULL" ? 20 : 50
    const pair = (baseline: string, side: Pair["raw"], target: number, targetText: string | undefined): Pair => ({
      id: `step/sqlite/${synchronous}/${baseline}`,
      operation: `one durable step (synchronous=${synchronous})`,
      ours: oursSide(`${baseline}-${synchronous}`),
      raw: side,
      operationsPerRound,
      eventsPerOperation: 9,
      target,
      baseline: baseline === "raw" ? "raw 2 commits" : baseline,
      targetText
    })
    const pairs: Array<Pair> = [
      synchronous === "FULL"
        ? pair("raw", rawSide("raw-FULL"), 2.3, undefined)
        : pair("raw", rawSide("raw-NORMAL"), Number.POSITIVE_INFINITY, "none (FULL's is ≤ 2.3×)"),
      pair("langgraph", langGraphSide, 0.5, undefined),
      pair("effect-workflow", effectWorkflowSide, 0.5, undefined)
    ]
    return {
      pairs,
      facts: {
        [`${synchronous} ours`]: shown(pragmas),
        [`${synchronous} LangGraph connection`]: shown(graph.pragmas()),
        [`${synchronous} @effect/workflow connection`]: shown(workflow.pragmas),
        [`${synchronous} statements per step`]: `ours ${total(oursStatements)} (4 appends), raw ${total(rawStatements)} (2 commits); per 10-step run: LangGraph ${total(graphStatements)}, @effect/workflow ${total(workflowStatements)}`
      },
      close
    }
  } catch (error) {
    await close()
    throw error
  }
}

/** @see the module comment */
export const suite: Suite = {
  name: "Durable step (SQLite)",
  prepare: (): Promise<Prepared> =>
    prepareBySynchronous("ratchet-bench-step-", engine, {
      "versions": versions(["better-sqlite3", "@langchain/langgraph", "@langchain/langgraph-checkpoint-sqlite", "@effect/workflow", "@effect/cluster", "@effect/sql-sqlite-node"]),
      "steps per round": "one workflow (LangGraph: one invocation) per round, of as many steps as the round has"
    })
}
