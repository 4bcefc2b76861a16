/**
 * An append request, checked and encoded before its transaction starts.
 *
 * Each event must be a catalogue event as `Event.decode` will read it back (no unknown fields, no
 * newer version), checked with the schema's validator rather than a full decode so that a large
 * batch costs little; its stored form is its JSON text. A refused event is an `InvalidRequest`
 * naming `events[i]`, with the decoder's reason cut short.
 *
 * The request digest (`sha256p:`) is the SHA-256 of the canonical JSON (`Digest.canonicalize`) of
 * `{ projectId, streamId, branch, expectedVersion, epoch }` followed by each event's stored JSON
 * text, length-prefixed: the strings the store keeps anyway, so no event is parsed back or
 * canonicalised on the way in. Equal digests mean the same request; a replayed operation id whose
 * digest differs is compared by content (`SqlAppend.sameRequest`), which also covers digests
 * recorded in the older form (`sha256:` of the whole request's canonical JSON).
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
    for (const [index, event] of input.entries()) {
      if (!isEvent(event)) return yield* invalid(`events[${index}]`, refusal(event))
      const payload = JSON.stringify(event)
      events.push(event)
      payloads.push(payload)
    }
    const header = yield* Either.mapLeft(
      Digest.canonicalize({ projectId, streamId, branch, expectedVersion, epoch }),
      (error) => invalid("request", `cannot be digested: ${error.message}`)
    )
    const hash = createHash("sha256").update(header, "utf8")
    for (const payload of payloads) hash.update(`\n${payload.length}:`, "utf8").update(payload, "utf8")
    const digest = `sha256p:${hash.digest("hex")}`
    return { projectId, streamId, branch, expectedVersion, epoch, operationId, events, payloads, digest }
  })
