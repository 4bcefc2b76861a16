/**
 * Whose clock judges a deadline. On PostgreSQL it is the database's: a runner whose own clock runs
 * an hour ahead (or behind) sees the same deadline as everyone else, and cannot take over early.
 * On SQLite (one machine) it is the process's clock, which a skewed process therefore moves.
 */
import { expect, it } from "@effect/vitest"
import { describePostgres } from "@ratchet/testkit/Postgres"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { describe } from "vitest"
import * as LeaseManager from "../src/LeaseManager.js"
import { A, B, createTask, freshSchema, postgresStore, PROJECT, sqliteStore } from "./fixtures.js"

const hour = 3_600_000
const settings = { heartbeatMs: 1_000, graceMs: 60_000 }
const key = { projectId: PROJECT, taskId: "t-skew" }

/** The live clock moved by `offsetMs`. */
const skewed = (offsetMs: number): Clock.Clock => {
  const live = Clock.make()
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => live.unsafeCurrentTimeMillis() + offsetMs,
    currentTimeMillis: Effect.sync(() => live.unsafeCurrentTimeMillis() + offsetMs),
    unsafeCurrentTimeNanos: () => live.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => live.unsafeCurrentTimeNanos() + BigInt(offsetMs) * 1_000_000n),
    sleep: live.sleep
  }
}

await describePostgres("PostgreSQL: the database clock", () => {
  it.live("a process an hour ahead or behind sees the database's deadline and cannot take over early", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-skew")
      const behind = yield* leases.acquire(key, A).pipe(Effect.withClock(skewed(-hour)))
      const ahead = yield* Effect.flip(leases.takeover(key, B)).pipe(Effect.withClock(skewed(hour)))
      expect(ahead._tag).toBe("@ratchet/lease/TakeoverTooEarly")
      if (ahead._tag !== "@ratchet/lease/TakeoverTooEarly") return
      // The deadline and the clock in the refusal are the database's, within a minute of real time.
      expect(Math.abs(ahead.now - Date.now())).toBeLessThan(60_000)
      expect(ahead.deadline).toBe(behind.heartbeatAt + settings.graceMs)
      expect(Math.abs(behind.heartbeatAt - Date.now())).toBeLessThan(60_000)
      const seen = yield* leases.observe(key).pipe(Effect.withClock(skewed(hour)))
      expect(seen.status).toBe("held")
    }).pipe(Effect.provide(postgresStore(freshSchema("ratchet_lease_clock"), 2))))
})

describe("SQLite: the process clock", () => {
  it.live("one machine, one clock: a process an hour ahead judges the deadline by its own clock", () =>
    Effect.gen(function*() {
      const leases = yield* LeaseManager.make(settings)
      yield* createTask("t-skew")
      yield* leases.acquire(key, A)
      expect((yield* Effect.flip(leases.takeover(key, B)))._tag).toBe("@ratchet/lease/TakeoverTooEarly")
      const took = yield* leases.takeover(key, B).pipe(Effect.withClock(skewed(hour)))
      expect(took.displaced).toEqual(A)
    }).pipe(Effect.provide(sqliteStore())))
})
