import * as Event from "@ratchet/kernel/Event"
import * as Digest from "@ratchet/kernel/Digest"
import * as Schema from "effect/Schema"
import { attemptTransitioned } from "./storage/events.js"
const n = 5000
const time = (label: string, f: () => void) => {
  for (let i = 0; i < 300; i++) f()
  const c = process.cpuUsage()
  for (let i = 0; i < n; i++) f()
  const u = process.cpuUsage(c)
  console.log(`${label.padEnd(50)} ${((u.user + u.system) / n).toFixed(1)} µs`)
}
const e = attemptTransitioned(1)
const encode = Schema.encodeEither(Event.Event)
const enc = (encode(e) as { right: unknown }).right
const text = JSON.stringify(enc)
time("Schema.encodeEither(Event.Event)", () => encode(e))
time("JSON.stringify", () => JSON.stringify(enc))
time("JSON.parse", () => JSON.parse(text))
time("Event.decode", () => Event.decode(JSON.parse(text)))
time("Digest.of(request-shaped doc, 1 event)", () => Digest.of({ projectId: "bench", streamId: "s", branch: "main", expectedVersion: 3, epoch: null, events: [enc] }))
