/**
 * Who holds a lease: the checkout (workspace id), the host (`cli`, `runner`, `claude-code`, …),
 * the process, and the host's own session reference if it has one.
 *
 * A pid alone is not an identity: the operating system reuses pids, so a new process could be
 * mistaken for a dead holder. The owner therefore carries the process's start time too, and two
 * owners are the same only if every field matches.
 *
 * @since 0.1.0
 */
import * as Event from "@ratchet/kernel/Event"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category models
 */
export type Owner = Event.LeaseOwner

/**
 * @since 0.1.0
 * @category models
 */
export interface Identity {
  readonly workspaceId: string
  readonly host: string
  readonly sessionRef?: string | undefined
}

/**
 * An owner that cannot be recorded, naming the field.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidOwner extends Schema.TaggedError<InvalidOwner>()("@ratchet/lease/InvalidOwner", {
  detail: Schema.String
}) {
  override get message(): string {
    return `Invalid lease owner: ${this.detail}. An owner needs a non-empty workspaceId and host (e.g. "cli", "runner").`
  }
}

/**
 * When this process started, in epoch milliseconds: stable for the life of the process, and
 * different for a later process that is given the same pid.
 */
const processStartedAt = (): number => Math.round(performance.timeOrigin)

/**
 * The owner for this process.
 *
 * @since 0.1.0
 * @category constructors
 */
export const current = (identity: Identity): Effect.Effect<Owner, InvalidOwner> =>
  make({ ...identity, pid: process.pid, processStartedAt: processStartedAt() })

/**
 * An owner from its fields, decoded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (input: unknown): Effect.Effect<Owner, InvalidOwner> =>
  Either.match(Schema.decodeUnknownEither(Event.LeaseOwner, { onExcessProperty: "error" })(input), {
    onLeft: (error) => Effect.fail(new InvalidOwner({ detail: ParseResult.TreeFormatter.formatErrorSync(error) })),
    onRight: Effect.succeed
  })

/**
 * Whether two owners are the same process of the same host in the same checkout.
 *
 * @since 0.1.0
 * @category predicates
 */
export const same = (a: Owner, b: Owner): boolean =>
  a.workspaceId === b.workspaceId && a.host === b.host && a.pid === b.pid &&
  a.processStartedAt === b.processStartedAt && a.sessionRef === b.sessionRef

/**
 * A line for people: `runner (pid 4242, started 2026-12-02T10:00:00.000Z) in workspace ws-1`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describe = (owner: Owner): string => {
  const started = Number.isFinite(owner.processStartedAt) && Math.abs(owner.processStartedAt) < 8.64e15
    ? new Date(owner.processStartedAt).toISOString()
    : String(owner.processStartedAt)
  const session = owner.sessionRef === undefined ? "" : `, session ${owner.sessionRef}`
  return `${owner.host} (pid ${owner.pid}, started ${started}${session}) in workspace ${owner.workspaceId}`
}

/**
 * The one command that takes over the lease `owner` holds on `taskId`, once its grace has passed.
 * A runner's lease is taken over by a run (`ratchet run --takeover`), which continues from wherever
 * the dead runner left the task (ADR 0022): `ratchet lease takeover` would hand it to a process
 * that ends at once. Any other holder's (a script's, a host session's) by `ratchet lease takeover`,
 * whose new holder then works under the epoch it prints.
 *
 * @since 0.2.0
 * @category formatting
 */
export const takeoverCommand = (taskId: string, owner: Owner | null): string =>
  owner?.host === "runner" ? `ratchet run ${taskId} --takeover` : `ratchet lease takeover ${taskId}`
