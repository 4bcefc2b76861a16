/**
 * The trace span of one append, as the command handler opens it (`ratchet.store.append`), and how
 * an engine adds what the append cost it (statements, commits, the path it took) to that span and
 * to no other: an append made outside the handler (a lease's, an approvers' entry) runs inside
 * whatever span is current, a run's or a command's, which must not be labelled a database call.
 *
 * @since 0.4.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * The name of an append's span.
 *
 * @since 0.4.0
 */
export const name = "ratchet.store.append"

/**
 * Sets `attributes` on the current span when it is an append's; nothing otherwise.
 *
 * @since 0.4.0
 * @category combinators
 */
export const annotate = (attributes: Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Option.isSome(span) && span.value.name === name
      ? Effect.sync(() => {
        for (const [key, value] of Object.entries(attributes)) span.value.attribute(key, value)
      })
      : Effect.void)
