/**
 * A string argument of at most `max` characters, described for the client: the tools' one shape of
 * a bounded string, so a schema-checking client refuses what the server would.
 *
 * @internal
 */
import * as Schema from "effect/Schema"

/** @internal */
export const bounded = (max: number, description: string) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `is longer than ${max} characters` })).annotations({ description })
