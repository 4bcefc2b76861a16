/**
 * PostgreSQL's task claims (ADR 0042). Two stores over one schema stand for two runner processes:
 * a claim one holds the other cannot take, until it is released or the holder's store (its
 * session) closes; the holder may take it again; claims of other tasks, projects or schemas are
 * independent; an announcement wakes a waiter of the same project, and only of that project, and
 * one sent while nobody waits is kept for the next wait.
 */
import { expect, it } from "@effect/vitest"
import * as TaskClaims from "@ratchet/storage/TaskClaims"
import { describePostgres, testUrl } from "@ratchet/testkit/Postgres"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as TestServices from "effect/TestServices"
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
      expect(yield* other.tryClaim("p", "t")).toBe(true)
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
