/**
 * The operator's figures over a real SQLite store: attempts by state (Indeterminate first, zero
 * counts included), open intents by the age of their last change, the oldest ones, and the
 * optional project filter. The store stamps `recordedAt` with the Effect clock, so the TestClock
 * sets every age.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Events from "@ratchet/testkit/Events"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { tempDirFactory } from "./tempDirs.js"
import * as Stats from "../src/Stats.js"

const temp = tempDirFactory("ratchet-stats-home-")
const store = () => SqliteStore.layer({ directory: temp() })

const minute = 60_000
const hour = 60 * minute
const day = 24 * hour

const digest = (c: string) => `sha256:${c.repeat(64)}`

const runStarted = (runId: string): Event.Event =>
  ({
    _tag: "RunStarted",
    version: 1,
    actor: Events.actors.runner,
    at: Events.defaultAt,
    runId,
    specDigest: digest("a"),
    planDigest: digest("b"),
    leaseEpoch: 1
  }) as Event.Event

let operations = 0

/** Appends `events` to a task's main branch at its current head, creating the stream if new. */
const append = (projectId: string, streamId: string, events: ReadonlyArray<Event.Event>) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const head = yield* store.head(streamId)
    return yield* store.append({
      projectId,
      streamId,
      expectedVersion: head?.version ?? 0,
      epoch: null,
      operationId: `op-${++operations}`,
      events
    })
  })

const createTask = (projectId: string, taskId: string) =>
  append(projectId, taskId, [Events.taskCreated({ taskId, projectId }), runStarted("r-1")])

/** Schedules `stepId` attempt 1 and walks it through `path` (each state from the one before). */
const attempt = (
  projectId: string,
  taskId: string,
  stepId: string,
  path: ReadonlyArray<Stats.AttemptState>
) => {
  const events: Array<Event.Event> = [Events.attemptScheduled("r-1", stepId, 1)]
  let from: Stats.AttemptState = "Pending"
  for (const to of path) {
    events.push(Events.attemptTransitioned({ runId: "r-1", stepId, attempt: 1, from, to }))
    from = to
  }
  return append(projectId, taskId, events)
}

const recordIntent = (projectId: string, taskId: string, intentId: string, stepId = "s-1") =>
  append(projectId, taskId, [Events.intentRecorded(intentId, { runId: "r-1", stepId, attempt: 1 })])

const counts = (stats: Stats.Stats) => stats.attempts.map((entry) => [entry.state, entry.count])
const buckets = (stats: Stats.Stats) => Object.fromEntries(stats.openIntents.byAge.map((entry) => [entry.bucket, entry.count]))

describe("Stats.collect", () => {
  it.effect("an empty store: every state and bucket at zero, in order", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(5 * day)
      const stats = yield* Stats.collect()
      expect(stats).toEqual({
        attempts: [
          { state: "Indeterminate", count: 0 },
          { state: "Running", count: 0 },
          { state: "Pending", count: 0 },
          { state: "TimedOut", count: 0 },
          { state: "Failed", count: 0 },
          { state: "Cancelled", count: 0 },
          { state: "Succeeded", count: 0 }
        ],
        tasks: 0,
        unsettled: [],
        openIntents: {
          total: 0,
          byAge: [
            { bucket: "<1m", count: 0 },
            { bucket: "1m-1h", count: 0 },
            { bucket: "1h-1d", count: 0 },
            { bucket: ">1d", count: 0 }
          ],
          oldest: []
        },
        at: 5 * day
      })
      const text = Stats.text(stats, "every project in the store")
      expect(text).toContain("Attempts by state (0 task(s), every project in the store):")
      expect(text).not.toContain("waiting for a person")
      expect(text).not.toContain("Oldest open intents")
      expect(text.indexOf("Indeterminate")).toBeLessThan(text.indexOf("Running"))
    }).pipe(Effect.provide(store())))

  it.effect("counts attempts by state and open intents by age across two projects", () =>
    Effect.gen(function*() {
      // Day 0: both projects' tasks, their attempts and the oldest intents.
      yield* TestClock.setTime(1_000)
      yield* createTask("p-1", "t-1")
      yield* createTask("p-1", "t-2")
      yield* createTask("p-2", "t-3")
      yield* attempt("p-1", "t-1", "s-1", ["Running", "Indeterminate"])
      yield* attempt("p-1", "t-1", "s-2", ["Running", "Succeeded"])
      yield* attempt("p-1", "t-1", "s-3", [])
      yield* attempt("p-1", "t-2", "s-1", ["Running"])
      yield* attempt("p-1", "t-2", "s-2", ["Running", "Failed"])
      yield* attempt("p-2", "t-3", "s-1", ["Running", "Indeterminate"])
      yield* attempt("p-2", "t-3", "s-2", ["Running", "TimedOut"])
      yield* attempt("p-2", "t-3", "s-3", ["Cancelled"])
      yield* recordIntent("p-1", "t-1", "i-old")
      yield* recordIntent("p-2", "t-3", "i-later")
      yield* recordIntent("p-1", "t-2", "i-resolved")
      yield* append("p-1", "t-2", [Events.intentResolved("i-resolved", "Succeeded")])
      yield* recordIntent("p-2", "t-3", "i-abandoned")
      yield* append("p-2", "t-3", [Events.intentAbandoned("i-abandoned")])

      const now = 2 * day + 1_000
      // Two hours ago: an intent that stays Pending.
      yield* TestClock.setTime(now - 2 * hour)
      yield* recordIntent("p-1", "t-2", "i-hours", "s-1")
      // Five minutes ago: recorded and dispatched.
      yield* TestClock.setTime(now - 5 * minute)
      yield* recordIntent("p-2", "t-3", "i-minutes", "s-2")
      yield* append("p-2", "t-3", [Events.intentDispatched("i-minutes")])
      // Thirty seconds ago: the day-0 intent of t-3 is dispatched, which makes its age 30s.
      yield* TestClock.setTime(now - 30_000)
      yield* append("p-2", "t-3", [Events.intentDispatched("i-later")])
      // Ten seconds ago: a new one.
      yield* TestClock.setTime(now - 10_000)
      yield* recordIntent("p-1", "t-1", "i-new", "s-3")
      yield* TestClock.setTime(now)

      // recordedAt is the store's clock, here the TestClock.
      const events = yield* EventStore.EventStore
      const recorded = Chunk.toReadonlyArray(yield* Stream.runCollect(events.read({ streamId: "t-1" })))
      expect(recorded.find((stored) => stored.event._tag === "TaskCreated")?.recordedAt).toBe(1_000)
      expect(recorded.at(-1)?.recordedAt).toBe(now - 10_000)

      const all = yield* Stats.collect()
      expect(counts(all)).toEqual([
        ["Indeterminate", 2],
        ["Running", 1],
        ["Pending", 1],
        ["TimedOut", 1],
        ["Failed", 1],
        ["Cancelled", 1],
        ["Succeeded", 1]
      ])
      expect(all.tasks).toBe(3)
      expect(all.at).toBe(now)
      expect(all.openIntents.total).toBe(5)
      expect(buckets(all)).toEqual({ "<1m": 2, "1m-1h": 1, "1h-1d": 1, ">1d": 1 })
      // Oldest first; the age is that of the intent's last change (i-later was dispatched 30s ago).
      expect(all.openIntents.oldest).toEqual([
        { taskId: "t-1", intentId: "i-old", stepId: "s-1", attempt: 1, state: "Pending", ageMs: now - 1_000 },
        { taskId: "t-2", intentId: "i-hours", stepId: "s-1", attempt: 1, state: "Pending", ageMs: 2 * hour },
        { taskId: "t-3", intentId: "i-minutes", stepId: "s-2", attempt: 1, state: "Dispatched", ageMs: 5 * minute },
        { taskId: "t-3", intentId: "i-later", stepId: "s-1", attempt: 1, state: "Dispatched", ageMs: 30_000 },
        { taskId: "t-1", intentId: "i-new", stepId: "s-3", attempt: 1, state: "Pending", ageMs: 10_000 }
      ])
      const text = Stats.text(all, "every project in the store")
      expect(text).toContain("Attempts by state (3 task(s), every project in the store):")
      expect(all.unsettled).toEqual([{ taskId: "t-3", stepId: "s-1", attempt: 1, intentId: "i-later" }])
      expect(text).toContain("waiting for a person: ratchet unblock t-3 --resolve s-1 succeeded|failed")
      expect(text).toContain("Open intents by age (5):")
      expect(text).toContain("2d  t-1  step s-1 attempt 1  i-old (Pending)")

      // One project at a time: its tasks, attempts and intents only.
      const first = yield* Stats.collect({ projectId: "p-1" })
      expect(counts(first)).toEqual([
        ["Indeterminate", 1],
        ["Running", 1],
        ["Pending", 1],
        ["TimedOut", 0],
        ["Failed", 1],
        ["Cancelled", 0],
        ["Succeeded", 1]
      ])
      expect(first.tasks).toBe(2)
      expect(buckets(first)).toEqual({ "<1m": 1, "1m-1h": 0, "1h-1d": 1, ">1d": 1 })
      expect(first.openIntents.oldest.map((intent) => intent.intentId)).toEqual(["i-old", "i-hours", "i-new"])

      const second = yield* Stats.collect({ projectId: "p-2" })
      expect(counts(second)).toEqual([
        ["Indeterminate", 1],
        ["Running", 0],
        ["Pending", 0],
        ["TimedOut", 1],
        ["Failed", 0],
        ["Cancelled", 1],
        ["Succeeded", 0]
      ])
      expect(second.tasks).toBe(1)
      expect(buckets(second)).toEqual({ "<1m": 1, "1m-1h": 1, "1h-1d": 0, ">1d": 0 })
      expect(second.openIntents.oldest.map((intent) => intent.intentId)).toEqual(["i-minutes", "i-later"])

      const none = yield* Stats.collect({ projectId: "p-none" })
      expect(none.tasks).toBe(0)
      expect(none.attempts.every((entry) => entry.count === 0)).toBe(true)
      expect(none.openIntents.total).toBe(0)
    }).pipe(Effect.provide(store())))

  it.effect("names at most ten open intents, oldest first", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(0)
      yield* createTask("p-1", "t-many")
      for (let i = 0; i < 12; i++) {
        yield* TestClock.setTime(i * minute)
        yield* recordIntent("p-1", "t-many", `i-${String(i).padStart(2, "0")}`)
      }
      yield* TestClock.setTime(12 * minute)
      const stats = yield* Stats.collect()
      expect(stats.openIntents.total).toBe(12)
      expect(stats.openIntents.oldest.map((intent) => [intent.intentId, intent.ageMs])).toEqual(
        Array.from({ length: 10 }, (_, i) => [`i-${String(i).padStart(2, "0")}`, (12 - i) * minute])
      )
      // 12..1 minutes: every one is at least a minute old, none an hour.
      expect(buckets(stats)).toEqual({ "<1m": 0, "1m-1h": 12, "1h-1d": 0, ">1d": 0 })
    }).pipe(Effect.provide(store())))
})

describe("Stats.bucketOf", () => {
  it("puts each boundary in the older bucket", () => {
    expect([0, minute - 1, minute, hour - 1, hour, day - 1, day].map(Stats.bucketOf)).toEqual([
      "<1m",
      "<1m",
      "1m-1h",
      "1m-1h",
      "1h-1d",
      "1h-1d",
      ">1d"
    ])
  })
})
