import { prepare } from "../packages/storage/src/internal/appendRequest.js"
import { decodeSummary } from "../packages/storage/src/internal/rows.js"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"
import { appendRequest, taskCreated, type StreamCursor } from "./storage/events.js"
const n = 3000
const time = (label: string, f: () => void) => {
  for (let i = 0; i < 200; i++) f()
  const c = process.cpuUsage()
  for (let i = 0; i < n; i++) f()
  const u = process.cpuUsage(c)
  console.log(`${label.padEnd(50)} ${((u.user + u.system) / n).toFixed(1)} µs`)
}
const cursor: StreamCursor = { streamId: "s", version: 1, next: 0 }
const one = appendRequest(cursor, 1, "x")
const hundred = appendRequest(cursor, 100, "y")
time("prepare (validate+encode+json+decode+digest) 1 event", () => Effect.runSync(prepare(one)))
time("prepare 100 events (per event)", () => Effect.runSync(prepare(hundred)))
const summary = ReadModel.fold([{ lsn: 1, projectId: "bench", streamId: "s", branch: "main", version: 1, epoch: null, operationId: "c", recordedAt: 1, event: taskCreated("s") }]).summary
const text = JSON.stringify(summary)
console.log("summary bytes", text.length)
time("decodeSummary (small task)", () => Effect.runSync(decodeSummary("append", "s", "main", text)))
time("JSON.parse summary", () => JSON.parse(text))
time("Effect.runSync(Effect.gen 12 yields)", () => Effect.runSync(Effect.gen(function*() { for (let i = 0; i < 12; i++) yield* Effect.succeed(i) })))
