/**
 * The local task claims (ADR 0042): a claim excludes a second claim of the same task in this
 * process until released; tasks and projects are independent; a wait lasts its timeout (there is no
 * other process to announce work).
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as TaskClaims from "../src/TaskClaims.js"

it.effect("a local claim excludes a second one of the same task until released", () =>
  Effect.gen(function*() {
    const claims = yield* TaskClaims.TaskClaims
    expect(yield* claims.tryClaim("p", "t")).toBe(true)
    expect(yield* claims.tryClaim("p", "t")).toBe(false)
    expect(yield* claims.tryClaim("p", "u")).toBe(true)
    expect(yield* claims.tryClaim("q", "t")).toBe(true)
    yield* claims.release("p", "t")
    expect(yield* claims.tryClaim("p", "t")).toBe(true)
    yield* claims.release("p", "nothing")
    expect(yield* claims.tryClaim("p", "u")).toBe(false)
  }).pipe(Effect.provide(TaskClaims.layerLocal)))

it.effect("a local wait lasts its timeout, announced or not", () =>
  Effect.gen(function*() {
    const claims = yield* TaskClaims.TaskClaims
    yield* claims.announce("p")
    const waiting = yield* Effect.fork(claims.awaitWork("p", "1 second"))
    yield* TestClock.adjust("999 millis")
    expect(yield* Fiber.poll(waiting)).toMatchObject({ _tag: "None" })
    yield* TestClock.adjust("1 millis")
    expect(yield* Fiber.poll(waiting)).toMatchObject({ _tag: "Some" })
  }).pipe(Effect.provide(TaskClaims.layerLocal)))
