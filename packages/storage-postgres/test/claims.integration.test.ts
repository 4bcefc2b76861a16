/**
 * PostgreSQL's task claims (ADR 0042). Two stores over one schema stand for two runner processes:
 * a claim one holds the other cannot take, until it is released or the holder's store (its
 * session) closes; the holder may take it again; claims of other tasks, projects or schemas are
 * independent; an announcement wakes a waiter of the same project, and only of that project, and
 * one sent while nobody waits is kept for the next wait.
 */
import { expect, it } from "@effect/vitest"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as TaskClaims from "@ratchet/storage/TaskClaims"
import { describePostgres, testUrl } from "@ratchet/testkit/Postgres"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as TestServices from "effect/TestServices"
import * as PostgresClaims from "../src/PostgresClaims.js"
import { PostgresStore } from "../src/index.js"
import { schemasDroppedAfterAll } from "./schemas.js"

const url = testUrl()
const freshSchema = schemasDroppedAfterAll()

/** One process's claims over `schema`, open until `scope` closes. */
const claimsIn = (schema: string, scope: Scope.Scope): Effect.Effect<TaskClaims.Service, unknown> =>
  Effect.map(
    Layer.buildWithScope(PostgresStore.layer({ url: Redacted.make(url), schema, maxConnections: 2 }), scope),
    (context) => Context.get(context, TaskClaims.TaskClaims)
  )

/** Whether `effect` finishes within `ms` of real time. */
const within = <A, E>(ms: number, effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.timeoutOption(effect, ms), Option.isSome).pipe(TestServices.provideLive)

await describePostgres("task claims on PostgreSQL (ADR 0042)", () => {
  it.scopedLive("a claim excludes other processes until released, and its holder may take it again", () =>
    Effect.gen(function*() {
      const schema = freshSchema()
      const scope = yield* Effect.scope
      const a = yield* claimsIn(schema, scope)
      const b = yield* claimsIn(schema, scope)
      expect(yield* a.tryClaim("p", "t1")).toBe(true)
      expect(yield* b.tryClaim("p", "t1")).toBe(false)
      // other tasks, other projects: independent
      expect(yield* b.tryClaim("p", "t2")).toBe(true)
      expect(yield* b.tryClaim("q", "t1")).toBe(true)
      expect(yield* a.tryClaim("p", "t2")).toBe(false)
      yield* a.release("p", "t1")
      expect(yield* b.tryClaim("p", "t1")).toBe(true)
      expect(yield* a.tryClaim("p", "t1")).toBe(false)
      yield* b.release("p", "t1")
      expect(yield* a.tryClaim("p", "t1")).toBe(true)
      // releasing what one does not hold changes nothing
      yield* b.release("p", "t1")
      expect(yield* b.tryClaim("p", "t1")).toBe(false)
    }))

  it.scopedLive("a claim is not re-entrant: the holder's second claim is refused, and one release frees the task for another process", () =>
    Effect.gen(function*() {
      const schema = freshSchema()
      const scope = yield* Effect.scope
      const a = yield* claimsIn(schema, scope)
      const b = yield* claimsIn(schema, scope)
      expect(yield* a.tryClaim("p", "t")).toBe(true)
      // PostgreSQL's advisory locks stack within a session; a claim must not.
      expect(yield* a.tryClaim("p", "t")).toBe(false)
      yield* a.release("p", "t")
      expect(yield* b.tryClaim("p", "t")).toBe(true)
    }))

  it.scopedLive("a claims session that dies is replaced: its claims end, and the next claims reserve a new session", () =>
    Effect.gen(function*() {
      const schema = freshSchema()
      const scope = yield* Effect.scope
      const a = yield* claimsIn(schema, scope)
      const b = yield* claimsIn(schema, scope)
      expect(yield* a.tryClaim("p", "t1")).toBe(true)
      // End a's session from outside (a server restart, an idle timeout, a proxy dropping it).
      const killer = yield* Effect.map(
        Layer.buildWithScope(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }), scope),
        (context) => Context.get(context, PgClient.PgClient)
      )
      const ended = yield* killer<{ ended: boolean }>`SELECT pg_terminate_backend(pid) AS ended FROM pg_locks
        WHERE locktype = 'advisory' AND objsubid = 1 AND granted
          AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(${`${schema}/p/t1`}, 0)`
      expect(ended.map((row) => row.ended)).toEqual([true])
      // Its claim ended with its session.
      expect(yield* b.tryClaim("p", "t1")).toBe(true)
      // The first call on the dead session fails; the next reserves a new one and works.
      const first = yield* Effect.either(a.tryClaim("p", "t2"))
      if (first._tag === "Left") expect(first.left.reason._tag).toBe("Connection")
      expect(yield* a.tryClaim("p", "t3")).toBe(true)
      expect(yield* a.tryClaim("p", "t1")).toBe(false)
      expect(yield* b.tryClaim("p", "t3")).toBe(false)
    }))

  it.scopedLive("with a session URL the claims hold their locks on sessions of that URL's own pool", () =>
    Effect.gen(function*() {
      const schema = freshSchema()
      const scope = yield* Effect.scope
      const context = yield* Layer.buildWithScope(
        PostgresStore.layer({ url: Redacted.make(url), schema, maxConnections: 2, sessionUrl: Redacted.make(url) }),
        scope
      )
      const claims = Context.get(context, TaskClaims.TaskClaims)
      expect(yield* claims.tryClaim("p", "t")).toBe(true)
      const pg = Context.get(context, PgClient.PgClient)
      const holders = yield* pg<{ application_name: string }>`SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
          AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(${`${schema}/p/t`}, 0)`
      expect(holders.map((row) => row.application_name)).toEqual(["ratchet-claims"])
    }))

  it.scopedLive("a session URL that is not a postgres:// URL is refused naming it", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const built = yield* Effect.either(Layer.buildWithScope(
        PostgresStore.layer({ url: Redacted.make(url), schema: freshSchema(), sessionUrl: "mysql://localhost/x" }),
        scope
      ))
      expect(built._tag).toBe("Left")
      expect(String(built._tag === "Left" ? built.left : "")).toContain("sessionUrl")
    }))

  it("a channel is a valid identifier for any schema, and two long schema names sharing a prefix get two channels", () => {
    const long = "s".repeat(60)
    expect(PostgresClaims.channelOf("ratchet")).toBe("ratchet_work_ratchet")
    expect(PostgresClaims.channelOf(`${long}a`)).not.toBe(PostgresClaims.channelOf(`${long}b`))
    for (const schema of [`${long}a`, `${"é".repeat(40)}`, "ratchet"]) {
      expect(Buffer.byteLength(PostgresClaims.channelOf(schema), "utf8")).toBeLessThanOrEqual(63)
    }
  })

  it.scopedLive("the same task in another schema is another claim", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const a = yield* claimsIn(freshSchema(), scope)
      const b = yield* claimsIn(freshSchema(), scope)
      expect(yield* a.tryClaim("p", "t")).toBe(true)
      expect(yield* b.tryClaim("p", "t")).toBe(true)
    }))

  it.scopedLive("a process's claims end with its session", () =>
    Effect.gen(function*() {
      const schema = freshSchema()
      const scope = yield* Effect.scope
      const holderScope = yield* Scope.make()
      const holder = yield* claimsIn(schema, holderScope)
      const other = yield* claimsIn(schema, scope)
      expect(yield* holder.tryClaim("p", "t")).toBe(true)
      expect(yield* other.tryClaim("p", "t")).toBe(false)
      yield* Scope.close(holderScope, Exit.void)
      // The server ends the closed session (and drops its locks) a moment after the client leaves.
      const claimed = yield* other.tryClaim("p", "t").pipe(
        Effect.filterOrFail((won) => won, () => "still held"),
        Effect.retry(Schedule.spaced("50 millis").pipe(Schedule.upTo("10 seconds"))),
        Effect.orElseSucceed(() => false)
      )
      expect(claimed).toBe(true)
    }))

  it.scopedLive("an announcement wakes a waiter of its project only, and one sent before the wait is kept", () =>
    Effect.gen(function*() {
      const schema = freshSchema()
      const scope = yield* Effect.scope
      const waiter = yield* claimsIn(schema, scope)
      const other = yield* claimsIn(schema, scope)
      // Nothing announced: the wait lasts its timeout.
      expect(yield* within(300, waiter.awaitWork("p", "10 seconds"))).toBe(false)
      // Another project's announcement does not wake it; this project's does.
      const waiting = yield* Effect.fork(waiter.awaitWork("p", "20 seconds"))
      yield* Effect.sleep("200 millis")
      yield* other.announce("q")
      expect(yield* within(500, Fiber.join(waiting))).toBe(false)
      yield* other.announce("p")
      expect(yield* within(5_000, Fiber.join(waiting))).toBe(true)
      // Announced while nobody waits: the next wait returns at once.
      yield* other.announce("p")
      yield* Effect.sleep("300 millis")
      expect(yield* within(1_000, waiter.awaitWork("p", "20 seconds"))).toBe(true)
      // ... and only once.
      expect(yield* within(300, waiter.awaitWork("p", "10 seconds"))).toBe(false)
    }))
})
