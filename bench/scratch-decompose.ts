import * as SqlClient from "@effect/sql/SqlClient"
import * as SqlDialect from "@ratchet/storage/SqlDialect"
import * as EventStore from "@ratchet/storage/EventStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { appendRequest, taskCreated, type StreamCursor } from "./storage/events.js"

const sync = (process.env["SYNC"] ?? "NORMAL") as "NORMAL"
const n = Number(process.env["N"] ?? 500)
const batch = Number(process.env["BATCH"] ?? 1)
let capture: Array<{ sql: string; args: Array<unknown> }> | undefined
const probe = new Database(":memory:")
const proto = Object.getPrototypeOf(probe.prepare("SELECT 1"))
for (const method of ["run", "all", "get"] as const) {
  const original = proto[method]
  proto[method] = function (this: { source: string }, ...args: Array<unknown>) {
    capture?.push({ sql: this.source, args })
    return original.apply(this, args)
  }
}
const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-decompose-"))
const open = async (name: string) => {
  const runtime = ManagedRuntime.make(SqliteStore.layer({ directory, filename: name, synchronous: sync }))
  const store = await runtime.runPromise(EventStore.EventStore)
  await runtime.runPromise(store.append({ projectId: "bench", streamId: "s", expectedVersion: 0, epoch: null, operationId: "c", events: [taskCreated("s")] }))
  return { runtime, store }
}
const cpu = async (label: string, f: () => Promise<void>) => {
  const c = process.cpuUsage(); const t = performance.now()
  await f()
  const u = process.cpuUsage(c)
  console.log(`${label.padEnd(40)} cpu ${((u.user + u.system) / 1000 / n).toFixed(3)} ms/append, wall ${((performance.now() - t) / n).toFixed(3)}`)
}
const ours = await open("ours.db")
const replayRaw = await open("raw.db"); await replayRaw.runtime.dispose()
const replayFx = await open("fx.db")
const cursor: StreamCursor = { streamId: "s", version: 1, next: 0 }
const requests = Array.from({ length: n }, (_, i) => appendRequest(cursor, batch, `op-${i}`))
// capture statements of ours
const captured: Array<Array<{ sql: string; args: Array<unknown> }>> = []
await cpu("ours (EventStore.append)", () => ours.runtime.runPromise(Effect.gen(function*() {
  for (const request of requests) {
    capture = []
    yield* ours.store.append(request)
    captured.push(capture)
  }
  capture = undefined
})))
// raw replay of the same statements with better-sqlite3
const db = new Database(path.join(directory, "raw.db"))
db.pragma("journal_mode = WAL"); db.pragma(`synchronous = ${sync}`)
const cache = new Map<string, Database.Statement>()
const stmt = (sql: string) => { let s = cache.get(sql); if (!s) { s = db.prepare(sql); cache.set(sql, s) } return s }
await cpu("same statements, raw better-sqlite3", async () => {
  for (const statements of captured) {
    for (const { sql, args } of statements) {
      const s = stmt(sql)
      if (s.reader) s.all(...args); else s.run(...args)
    }
  }
})
// replay through @effect/sql with the dialect's transaction
await cpu("same statements, @effect/sql + dialect", () => replayFx.runtime.runPromise(Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const dialect = yield* SqlDialect.SqlDialect
  for (const statements of captured) {
    const inner = statements.filter((s) => !/^(BEGIN|COMMIT|ROLLBACK)/.test(s.sql))
    yield* dialect.writeTransaction("append", Effect.forEach(inner, ({ sql: text, args }) => sql.unsafe(text, args), { discard: true }))
  }
})))
db.close()
await ours.runtime.dispose(); await replayFx.runtime.dispose()
fs.rmSync(directory, { recursive: true })
