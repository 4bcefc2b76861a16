/**
 * An append request, checked and encoded before its transaction starts.
 *
 * Each event must be a catalogue event as `Event.decode` will read it back (no unknown fields, no
 * newer version), checked with the schema's validator rather than a full decode so that a large
 * batch costs little; its stored form is its JSON text. A refused event is an `InvalidRequest`
 * naming `events[i]`, with the decoder's reason cut short.
 *
 * The request digest is the SHA-256 of the canonical JSON (`Digest.canonicalize`) of
 * `{ projectId, streamId, branch, expectedVersion, epoch, events }`, events in their stored JSON
 * form; a replayed operation id is accepted only with the same digest.
 *
 * @internal
 */
import * as Digest from "@ratchet/kernel/Digest"
import * as Event from "@ratchet/kernel/Event"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import * as EventStore from "../EventStore.js"
import * as validate from "./validate.js"

export interface Prepared {
  readonly projectId: string
  readonly streamId: string
  readonly branch: string
  readonly expectedVersion: number
  readonly epoch: number | null
  readonly operationId: string
  /** The events, checked against the catalogue. */
  readonly events: ReadonlyArray<Event.Event>
  /** The stored JSON text of each event. */
  readonly payloads: ReadonlyArray<string>
  readonly digest: string
}

// The catalogue has no transformations, so a value that passes the type-side check with excess
// properties refused is exactly what `Event.decode` accepts from its JSON.
const isEvent = Schema.is(Event.Event, { onExcessProperty: "error" })

/** Reasons quote the offending input; a hostile event must not become a megabyte-long message. */
const maxReason = 600

const invalid = (field: string, reason: string) =>
  new EventStore.InvalidRequest({ field, reason: reason.length > maxReason ? `${reason.slice(0, maxReason)}…` : reason })

const refusal = (event: unknown): string =>
  Either.match(Event.decode(event), {
    onLeft: (error) => `is not an event this store can read back: ${error.message}`,
    onRight: () => "is not an event this store can read back"
  })

/** Validates, encodes and digests an append request. */
export const prepare = (request: EventStore.AppendRequest): Effect.Effect<Prepared, EventStore.InvalidRequest> =>
  Effect.gen(function*() {
    const projectId = yield* validate.id("projectId", request.projectId)
    const streamId = yield* validate.id("streamId", request.streamId)
    const branch = yield* validate.branch("branch", request.branch)
    const operationId = yield* validate.id("operationId", request.operationId)
    const expectedVersion = yield* validate.integer("expectedVersion", request.expectedVersion, 0)
    const epoch = request.epoch === null ? null : yield* validate.integer("epoch", request.epoch, 0)
    const input: unknown = request.events
    if (!Array.isArray(input) || input.length === 0) {
      return yield* invalid("events", "must be a non-empty array of events")
    }
    const events: Array<Event.Event> = []
    const payloads: Array<string> = []
    const documents: Array<unknown> = []
    for (const [index, event] of input.entries()) {
      if (!isEvent(event)) return yield* invalid(`events[${index}]`, refusal(event))
      const payload = JSON.stringify(event)
      events.push(event)
      payloads.push(payload)
      documents.push(JSON.parse(payload))
    }
    const canonical = yield* Either.mapLeft(
      Digest.canonicalize({ projectId, streamId, branch, expectedVersion, epoch, events: documents }),
      (error) => invalid("events", `cannot be digested: ${error.message}`)
    )
    const digest = `sha256:${createHash("sha256").update(canonical, "utf8").digest("hex")}`
    return { projectId, streamId, branch, expectedVersion, epoch, operationId, events, payloads, digest }
  })
