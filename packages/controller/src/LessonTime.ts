/**
 * The lessons' clock (ADR 0037). A lesson expires only after three counted successes *and* seven
 * days (ADR 0031), so an end-to-end test of expiry needs days to pass between two commands. The
 * lessons' use cases read time from Effect's `Clock`; this module is the one place that may move
 * that clock forward, by `RATCHET_LESSONS_CLOCK_OFFSET_MS` milliseconds, and only for lessons: a
 * task's events, leases and gates keep the real time.
 *
 * The offset is honoured only forward (0 to 366 days) and never silently: every process that
 * honours it says so in one warning line on stderr, so a moved clock is visible in any log. A
 * value that is not such a number is ignored with a warning (recording a lesson never changes a
 * lifecycle outcome) and refused by the `ratchet lessons` commands, which read it with
 * {@link offset}. Moving the clock cannot promote a lesson (only failures in two runs or a
 * reproduced guard do) and cannot expire one without its three unassisted successes.
 *
 * @since 0.3.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ControllerError from "./ControllerError.js"

/**
 * The variable that moves the lessons' clock forward.
 *
 * @since 0.3.0
 * @category constants
 */
export const variable = "RATCHET_LESSONS_CLOCK_OFFSET_MS"

/** The largest offset honoured: a year and a day. */
const maxOffsetMs = 366 * 24 * 60 * 60 * 1000

/**
 * The offset `env` asks for: 0 when the variable is unset or blank, or why it is refused.
 *
 * @since 0.3.0
 * @category constructors
 */
export const offset = (env: Readonly<Record<string, string | undefined>> = process.env): Either.Either<number, ControllerError.InvalidRequest> => {
  const raw = (env[variable] ?? "").trim()
  if (raw === "") return Either.right(0)
  const value = /^[0-9]{1,12}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value > maxOffsetMs) {
    return Either.left(
      new ControllerError.InvalidRequest({
        field: variable,
        reason: `${JSON.stringify(raw.slice(0, 40))} is not a whole number of milliseconds from 0 to ${maxOffsetMs} (366 days); the lessons' clock only moves forward.`,
        fix: `Unset ${variable}, or give milliseconds, e.g. ${variable}=${7 * 24 * 60 * 60 * 1000} for seven days.`
      })
    )
  }
  return Either.right(value)
}

/** `base`, `ms` later. */
const shifted = (base: Clock.Clock, ms: number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => base.unsafeCurrentTimeMillis() + ms,
  unsafeCurrentTimeNanos: () => base.unsafeCurrentTimeNanos() + BigInt(ms) * 1_000_000n,
  currentTimeMillis: Effect.sync(() => base.unsafeCurrentTimeMillis() + ms),
  currentTimeNanos: Effect.sync(() => base.unsafeCurrentTimeNanos() + BigInt(ms) * 1_000_000n),
  sleep: (duration) => base.sleep(duration)
})

let announced = false

/**
 * Runs `effect` with the clock moved forward by `ms` (nothing changes at 0), saying so once per
 * process on stderr.
 *
 * @since 0.3.0
 * @category combinators
 */
export const moved = (ms: number) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  ms === 0 ? effect : Effect.clockWith((base) =>
    Effect.zipRight(
      Effect.sync(() => {
        if (announced) return
        announced = true
        process.stderr.write(`warning: ${variable} moves the lessons' clock ${ms} ms forward (a test setting); tasks keep the real time.\n`)
      }),
      Effect.withClock(effect, shifted(base, ms))
    ))

/**
 * Runs `effect` on the lessons' clock as the environment sets it; an offset that is refused is
 * reported on stderr and ignored (see the module comment).
 *
 * @since 0.3.0
 * @category combinators
 */
export const onLessonsClock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Either.match(offset(), {
    onLeft: (refused) =>
      Effect.zipRight(Effect.sync(() => process.stderr.write(`warning: ${refused.reason} Ignored. Fix: ${refused.fix}\n`)), effect),
    onRight: (ms) => moved(ms)(effect)
  })
