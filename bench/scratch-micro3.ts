import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
const n = 5000
const rt = ManagedRuntime.make(SqliteClient.layer({ filename: ":memory:" }))
const run = async (label: string, f: () => Promise<void>) => {
  await f()
  const c = process.cpuUsage()
  await f()
  const u = process.cpuUsage(c)
  console.log(`${label.padEnd(50)} ${((u.user + u.system) / n).toFixed(1)} µs/statement`)
}
await run("@effect/sql sql`SELECT ?` (in one Effect)", () => rt.runPromise(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let i = 0; i < n; i++) yield* sql`SELECT ${i} AS v`
})))
await run("@effect/sql inside withTransaction", () => rt.runPromise(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() { for (let i = 0; i < n; i++) yield* sql`SELECT ${i} AS v` }))
})))
await run("@effect/sql withTracerEnabled(false)", () => rt.runPromise(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (let i = 0; i < n; i++) yield* sql`SELECT ${i} AS v`
}).pipe(Effect.withTracerEnabled(false))))
const db = new Database(":memory:")
const s = db.prepare("SELECT ? AS v")
await run("better-sqlite3 prepared .all", async () => { for (let i = 0; i < n; i++) s.all(i) })
await rt.dispose()
