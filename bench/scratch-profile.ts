import * as EventStore from "@ratchet/storage/EventStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { appendRequest, taskCreated, type StreamCursor } from "./storage/events.js"

const counts = new Map<string, number>()
let counting = false
const probe = new Database(":memory:")
const proto = Object.getPrototypeOf(probe.prepare("SELECT 1"))
for (const method of ["run", "all", "get", "iterate"] as const) {
  const original = proto[method]
  proto[method] = function (this: { source: string }, ...args: Array<unknown>) {
    if (counting) counts.set(this.source.replace(/\s+/g, " ").slice(0, 110), (counts.get(this.source.replace(/\s+/g, " ").slice(0, 110)) ?? 0) + 1)
    return original.apply(this, args)
  }
}
const execOriginal = Database.prototype.exec
Database.prototype.exec = function (this: Database.Database, sql: string) {
  if (counting) counts.set(`exec: ${sql}`, (counts.get(`exec: ${sql}`) ?? 0) + 1)
  return execOriginal.call(this, sql)
}
const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-profile-"))
const runtime = ManagedRuntime.make(SqliteStore.layer({ directory, synchronous: (process.env["SYNC"] ?? "NORMAL") as "NORMAL" }))
const store = await runtime.runPromise(EventStore.EventStore)
await runtime.runPromise(store.append({ projectId: "bench", streamId: "s", expectedVersion: 0, epoch: null, operationId: "c", events: [taskCreated("s")] }))
const cursor: StreamCursor = { streamId: "s", version: 1, next: 0 }
const n = Number(process.env["N"] ?? 10)
const batch = Number(process.env["BATCH"] ?? 1)
counting = process.env["COUNT"] === "1"
import * as inspector from "node:inspector/promises"
const session = new inspector.Session()
session.connect()
const profiling = process.env["PROF"] === "1"
if (profiling) { await session.post("Profiler.enable"); await session.post("Profiler.start") }
const cpu0 = process.cpuUsage()
const start = performance.now()
await runtime.runPromise(Effect.gen(function*() {
  for (let i = 0; i < n; i++) yield* store.append(appendRequest(cursor, batch, `op-${i}`))
}))
const ms = (performance.now() - start) / n
const cpu = process.cpuUsage(cpu0)
console.log(`cpu ms/append ${((cpu.user + cpu.system) / 1000 / n).toFixed(3)} (user ${(cpu.user/1000/n).toFixed(3)})`)
if (profiling) { const { profile } = await session.post("Profiler.stop"); fs.writeFileSync("/tmp/ratchet-faults-exp/append.cpuprofile", JSON.stringify(profile)) }
counting = false
console.log(`ms/append ${ms.toFixed(3)}`)
for (const [sql, count] of [...counts.entries()].sort((a, b) => b[1] - a[1])) console.log(String(count / n).padStart(6), sql)
await runtime.dispose()
fs.rmSync(directory, { recursive: true })
