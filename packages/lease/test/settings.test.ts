/**
 * Lease settings from the project and the environment, and owner identities: accepted and
 * rejected inputs, each rejection naming the field and the fix. Tables written by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as LeaseSettings from "../src/LeaseSettings.js"
import * as Owner from "../src/Owner.js"

const withEnv = (env: Record<string, string>) => Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

describe("LeaseSettings.fromConfig", () => {
  const accepted: ReadonlyArray<readonly [string, LeaseSettings.ProjectSettings, Record<string, string>, LeaseSettings.Settings]> = [
    ["the defaults", {}, {}, { heartbeatMs: 5_000, graceMs: 30_000 }],
    ["the project's settings", { heartbeatMs: 1_000, graceMs: 4_000 }, {}, { heartbeatMs: 1_000, graceMs: 4_000 }],
    ["the project's heartbeat with the default grace", { heartbeatMs: 10_000 }, {}, { heartbeatMs: 10_000, graceMs: 30_000 }],
    ["the environment over the project", { heartbeatMs: 1_000, graceMs: 4_000 }, { RATCHET_LEASE_HEARTBEAT_MS: "200", RATCHET_LEASE_GRACE_MS: "900" }, {
      heartbeatMs: 200,
      graceMs: 900
    }],
    ["one variable only", {}, { RATCHET_LEASE_GRACE_MS: "60000" }, { heartbeatMs: 5_000, graceMs: 60_000 }],
    ["surrounding spaces", {}, { RATCHET_LEASE_HEARTBEAT_MS: " 2000 " }, { heartbeatMs: 2_000, graceMs: 30_000 }],
    ["the reference timeline's 2 and 3", { heartbeatMs: 2, graceMs: 3 }, {}, { heartbeatMs: 2, graceMs: 3 }]
  ]
  it.each(accepted)("accepts %s", (_label, project, env, expected) =>
    Effect.runSync(LeaseSettings.fromConfig(project).pipe(withEnv(env), Effect.map((settings) => expect(settings).toEqual(expected)))))

  const rejected: ReadonlyArray<readonly [string, LeaseSettings.ProjectSettings, Record<string, string>, string]> = [
    ["a word", {}, { RATCHET_LEASE_HEARTBEAT_MS: "fast" }, "RATCHET_LEASE_HEARTBEAT_MS"],
    ["a negative number", {}, { RATCHET_LEASE_GRACE_MS: "-5" }, "RATCHET_LEASE_GRACE_MS"],
    ["a float", {}, { RATCHET_LEASE_GRACE_MS: "1.5" }, "RATCHET_LEASE_GRACE_MS"],
    ["an exponent", {}, { RATCHET_LEASE_HEARTBEAT_MS: "1e3" }, "RATCHET_LEASE_HEARTBEAT_MS"],
    ["an empty value", {}, { RATCHET_LEASE_HEARTBEAT_MS: "" }, "RATCHET_LEASE_HEARTBEAT_MS"],
    ["an oversized value", {}, { RATCHET_LEASE_GRACE_MS: "99999999999999999999" }, "RATCHET_LEASE_GRACE_MS"],
    ["zero", {}, { RATCHET_LEASE_HEARTBEAT_MS: "0" }, "RATCHET_LEASE_HEARTBEAT_MS"],
    ["more than a day", {}, { RATCHET_LEASE_GRACE_MS: "86400001" }, "RATCHET_LEASE_GRACE_MS"],
    ["a grace equal to the heartbeat, from the environment", {}, { RATCHET_LEASE_HEARTBEAT_MS: "3000", RATCHET_LEASE_GRACE_MS: "3000" }, "RATCHET_LEASE_GRACE_MS"],
    ["a grace shorter than the project's heartbeat", { heartbeatMs: 40_000 }, {}, "lease.graceMs"],
    ["a project heartbeat of zero", { heartbeatMs: 0 }, {}, "lease.heartbeatMs"]
  ]
  it.each(rejected)("rejects %s, naming %s", (_label, project, env, field) => {
    const result = Effect.runSync(Effect.either(LeaseSettings.fromConfig(project).pipe(withEnv(env))))
    expect(Either.isLeft(result)).toBe(true)
    const error = Either.isLeft(result) ? result.left : undefined
    expect(String(error?.message ?? error)).toContain(field)
  })

  it("says what to use when the grace is too short", () => {
    const result = LeaseSettings.validate({ heartbeatMs: 5_000, graceMs: 4_000 })
    expect(Either.isLeft(result) && result.left.message).toBe(
      "Invalid lease setting graceMs=4000: the grace must be longer than the heartbeat interval (heartbeatMs=5000), or one late heartbeat would let the lease be taken over; use at least 10000."
    )
  })

  it.each([
    [{}, true],
    [{ heartbeatMs: 1_000, graceMs: 9_000 }, true],
    [{ heartbeatMs: "1000" }, false],
    [{ graceMs: 0 }, false],
    [{ graceMs: 2.5 }, false],
    [{ heartbeatMs: 86_400_001 }, false],
    [null, false],
    [[1_000, 3_000], false]
  ])("decodes the project's lease block %j strictly: %s", (input, ok) => {
    expect(Either.isRight(Schema.decodeUnknownEither(LeaseSettings.ProjectSettings)(input))).toBe(ok)
  })
})

describe("Owner", () => {
  const valid = { workspaceId: "ws-1", host: "runner", pid: 4242, processStartedAt: 1_764_670_000_000 }

  it("the current process: its pid and a start time that does not change", () =>
    Effect.runSync(Effect.gen(function*() {
      const first = yield* Owner.current({ workspaceId: "ws-1", host: "cli" })
      const second = yield* Owner.current({ workspaceId: "ws-1", host: "cli" })
      expect(first.pid).toBe(process.pid)
      expect(Owner.same(first, second)).toBe(true)
      expect(Math.abs(first.processStartedAt - (Date.now() - process.uptime() * 1_000))).toBeLessThan(5_000)
    })))

  it.each([
    ["an empty workspace", { ...valid, workspaceId: "" }, "workspaceId"],
    ["an empty host", { ...valid, host: "" }, "host"],
    ["a fractional pid", { ...valid, pid: 1.5 }, "pid"],
    ["a missing start time", { workspaceId: "ws-1", host: "runner", pid: 1 }, "processStartedAt"],
    ["an unknown field", { ...valid, role: "admin" }, "role"],
    ["an empty session reference", { ...valid, sessionRef: "" }, "sessionRef"],
    ["not an object", "runner:4242", "Expected"],
    ["null", null, "Expected"]
  ])("rejects %s, naming %s", (_label, input, field) => {
    const result = Effect.runSync(Effect.either(Owner.make(input)))
    expect(Either.isLeft(result)).toBe(true)
    expect(Either.isLeft(result) && result.left.message).toContain(field)
  })

  it.each([
    ["another pid", { ...valid, pid: 4243 }],
    ["the same pid reused by a later process", { ...valid, processStartedAt: valid.processStartedAt + 1 }],
    ["another host", { ...valid, host: "claude-code" }],
    ["another checkout", { ...valid, workspaceId: "ws-2" }],
    ["a session reference", { ...valid, sessionRef: "s-1" }]
  ])("is not the same owner with %s", (_label, other) => {
    expect(Owner.same(valid, other)).toBe(false)
  })

  it("describes an owner for people, with an unrepresentable start time kept as a number", () => {
    expect(Owner.describe({ ...valid, sessionRef: "s-9" })).toBe(
      "runner (pid 4242, started 2025-12-02T10:06:40.000Z, session s-9) in workspace ws-1"
    )
    expect(Owner.describe({ ...valid, processStartedAt: 9e18 })).toContain("started 9000000000000000000")
  })
})
