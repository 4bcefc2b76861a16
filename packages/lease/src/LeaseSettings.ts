/**
 * How often a lease holder heartbeats and how long its lease stays protected after the last
 * heartbeat.
 *
 * A project sets them once (the `lease` block of `.ratchet/project.json`); one invocation
 * overrides them with `RATCHET_LEASE_HEARTBEAT_MS` and `RATCHET_LEASE_GRACE_MS`. The defaults:
 *
 * - `heartbeatMs` 5 000: a holder proves it is alive every 5 s, a cheap write;
 * - `graceMs` 30 000: a holder that stalls (a laptop lid closed, a debugger, a long GC pause) keeps
 *   its lease for 30 s after its last heartbeat before anyone may take it over; six heartbeats must
 *   be missed in a row.
 *
 * The grace must be longer than the heartbeat interval, or one late heartbeat would expose the
 * lease. An expired lease is still held: it is only taken over by an explicit `takeover`.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly heartbeatMs: number
  readonly graceMs: number
}

/**
 * @since 0.1.0
 * @category constants
 */
export const defaults: Settings = { heartbeatMs: 5_000, graceMs: 30_000 }

/** One day: a longer interval is a typo, not a policy. */
const maxMs = 86_400_000

/**
 * The lease settings as a project file writes them (both fields optional; the defaults fill in).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProjectSettings = Schema.Struct({
  heartbeatMs: Schema.optional(Schema.Int.pipe(Schema.between(1, maxMs))),
  graceMs: Schema.optional(Schema.Int.pipe(Schema.between(1, maxMs)))
})

/**
 * @since 0.1.0
 * @category models
 */
export type ProjectSettings = typeof ProjectSettings.Type

/**
 * Lease settings that cannot be used, naming where they came from.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidLeaseSettings extends Schema.TaggedError<InvalidLeaseSettings>()("@ratchet/lease/InvalidLeaseSettings", {
  /** The setting as its source names it: `RATCHET_LEASE_GRACE_MS`, `lease.graceMs`. */
  field: Schema.String,
  value: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Invalid lease setting ${this.field}=${this.value}: ${this.reason}.`
  }
}

/**
 * Checks a complete pair: both whole milliseconds between 1 and one day, the grace longer than the
 * heartbeat interval. `source` names the fields in errors (`RATCHET_LEASE_` or `lease.`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const validate = (
  settings: Settings,
  names: { readonly heartbeatMs: string; readonly graceMs: string } = { heartbeatMs: "heartbeatMs", graceMs: "graceMs" }
): Either.Either<Settings, InvalidLeaseSettings> => {
  for (const key of ["heartbeatMs", "graceMs"] as const) {
    const value = settings[key]
    if (!Number.isSafeInteger(value) || value < 1 || value > maxMs) {
      return Either.left(
        new InvalidLeaseSettings({
          field: names[key],
          value: String(value),
          reason: `expected whole milliseconds from 1 to ${maxMs} (one day)`
        })
      )
    }
  }
  if (settings.graceMs <= settings.heartbeatMs) {
    return Either.left(
      new InvalidLeaseSettings({
        field: names.graceMs,
        value: String(settings.graceMs),
        reason: `the grace must be longer than the heartbeat interval (${names.heartbeatMs}=${settings.heartbeatMs}), or one late heartbeat would let the lease be taken over; use at least ${
          settings.heartbeatMs * 2
        }`
      })
    )
  }
  return Either.right(settings)
}

const envNames = { heartbeatMs: "RATCHET_LEASE_HEARTBEAT_MS", graceMs: "RATCHET_LEASE_GRACE_MS" } as const

/** An optional whole-millisecond environment variable; a present but unreadable one is an error naming it. */
const envMs = (name: string): Config.Config<Option.Option<number>> =>
  Config.string(name).pipe(
    Config.option,
    Config.mapOrFail((raw) => {
      if (Option.isNone(raw)) return Either.right(Option.none())
      const text = raw.value.trim()
      if (!/^\d{1,9}$/.test(text)) {
        return Either.left(
          ConfigError.InvalidData([name], `${name}=${JSON.stringify(raw.value)} is not whole milliseconds: write a number such as 5000`)
        )
      }
      return Either.right(Option.some(Number(text)))
    })
  )

/**
 * The settings for this invocation: the project's (or the defaults), overridden by
 * `RATCHET_LEASE_HEARTBEAT_MS` / `RATCHET_LEASE_GRACE_MS` when set, then validated as a pair.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConfig = (
  project: ProjectSettings = {}
): Effect.Effect<Settings, InvalidLeaseSettings | ConfigError.ConfigError> =>
  Effect.gen(function*() {
    const heartbeat = yield* envMs(envNames.heartbeatMs)
    const grace = yield* envMs(envNames.graceMs)
    const settings = {
      heartbeatMs: Option.getOrElse(heartbeat, () => project.heartbeatMs ?? defaults.heartbeatMs),
      graceMs: Option.getOrElse(grace, () => project.graceMs ?? defaults.graceMs)
    }
    // Name the field by where the offending value came from.
    return yield* validate(settings, {
      heartbeatMs: Option.isSome(heartbeat) ? envNames.heartbeatMs : "lease.heartbeatMs",
      graceMs: Option.isSome(grace) ? envNames.graceMs : "lease.graceMs"
    })
  })
