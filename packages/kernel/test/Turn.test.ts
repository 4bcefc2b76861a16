/**
 * The turn region: five flags, seven unguarded events. Every expected state below is written by
 * hand; the property test checks `Turn.next` against a reference model written in a different
 * style (a table of flag assignments) rather than against itself.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as Turn from "../src/Turn.js"

type State = Turn.State
type Event = Turn.Event
type Tag = Event["_tag"]
type Bit = 0 | 1

// Positional, in the order of the flag list: waitingForFirstChunk, toolRejected, toolUsed, toolFailed, streamReadComplete.
const S = (w: Bit, r: Bit, u: Bit, f: Bit, s: Bit): State => ({
  waitingForFirstChunk: w === 1,
  toolRejected: r === 1,
  toolUsed: u === 1,
  toolFailed: f === 1,
  streamReadComplete: s === 1
})

const ev = (tag: Tag): Event => ({ _tag: tag })

const ALL_TAGS: ReadonlyArray<Tag> = [
  "turnStarted",
  "firstChunkAwaitStarted",
  "firstChunkAwaitEnded",
  "toolRejected",
  "toolUsed",
  "toolFailed",
  "streamReadCompleted"
]

// Every event from the all-false turn.
const FROM_INITIAL: ReadonlyArray<readonly [Tag, State]> = [
  ["turnStarted", S(0, 0, 0, 0, 0)],
  ["firstChunkAwaitStarted", S(1, 0, 0, 0, 0)],
  ["firstChunkAwaitEnded", S(0, 0, 0, 0, 0)],
  ["toolRejected", S(0, 1, 0, 0, 0)],
  ["toolUsed", S(0, 0, 1, 0, 0)],
  ["toolFailed", S(0, 0, 0, 1, 0)],
  ["streamReadCompleted", S(0, 0, 0, 0, 1)]
]

// Every event with the other four flags already set (its own flag clear), as the seed requires,
// plus the all-set turn so clearing events show what they clear.
const FROM_OTHERS_SET: ReadonlyArray<readonly [Tag, State, State]> = [
  ["turnStarted", S(1, 1, 1, 1, 1), S(1, 0, 0, 0, 0)],
  ["turnStarted", S(0, 1, 1, 1, 1), S(0, 0, 0, 0, 0)],
  ["firstChunkAwaitStarted", S(0, 1, 1, 1, 1), S(1, 1, 1, 1, 1)],
  ["firstChunkAwaitEnded", S(0, 1, 1, 1, 1), S(0, 1, 1, 1, 1)],
  ["firstChunkAwaitEnded", S(1, 1, 1, 1, 1), S(0, 1, 1, 1, 1)],
  ["toolRejected", S(1, 0, 1, 1, 1), S(1, 1, 1, 1, 1)],
  ["toolUsed", S(1, 1, 0, 1, 1), S(1, 1, 1, 1, 1)],
  ["toolFailed", S(1, 1, 1, 0, 1), S(1, 1, 1, 1, 1)],
  ["streamReadCompleted", S(1, 1, 1, 1, 0), S(1, 1, 1, 1, 1)]
]

// Reference model: what each event assigns, and nothing else.
const ASSIGNS: Record<Tag, Partial<State>> = {
  turnStarted: { toolRejected: false, toolUsed: false, toolFailed: false, streamReadComplete: false },
  firstChunkAwaitStarted: { waitingForFirstChunk: true },
  firstChunkAwaitEnded: { waitingForFirstChunk: false },
  toolRejected: { toolRejected: true },
  toolUsed: { toolUsed: true },
  toolFailed: { toolFailed: true },
  streamReadCompleted: { streamReadComplete: true }
}
const reference = (state: State, event: Event): State => ({ ...state, ...ASSIGNS[event._tag] })

const stateArb: fc.Arbitrary<State> = fc.record({
  waitingForFirstChunk: fc.boolean(),
  toolRejected: fc.boolean(),
  toolUsed: fc.boolean(),
  toolFailed: fc.boolean(),
  streamReadComplete: fc.boolean()
})
const eventArb: fc.Arbitrary<Event> = fc.constantFrom(...ALL_TAGS).map(ev)

describe("Turn", () => {
  it("starts with every flag false, and the initial turn is immutable", () => {
    expect(Turn.initial).toEqual(S(0, 0, 0, 0, 0))
    expect(Object.isFrozen(Turn.initial)).toBe(true)
  })

  it("lists the seven event tags", () => {
    expect(Turn.eventTags).toEqual(ALL_TAGS)
  })

  describe("every event from the all-false turn", () => {
    it.each(FROM_INITIAL)("%s", (tag, expected) => {
      expect(Turn.next(S(0, 0, 0, 0, 0), ev(tag))).toEqual(expected)
      expect(Turn.next(Turn.initial, ev(tag))).toEqual(expected)
    })
  })

  describe("every event with the other four flags already set", () => {
    it.each(FROM_OTHERS_SET)("%s from %j", (tag, from, expected) => {
      expect(Turn.next(from, ev(tag))).toEqual(expected)
    })
  })

  describe("turnStarted", () => {
    it("keeps waitingForFirstChunk when it is true", () => {
      expect(Turn.next(S(1, 0, 0, 0, 0), ev("turnStarted")).waitingForFirstChunk).toBe(true)
      expect(Turn.next(S(1, 1, 0, 1, 0), ev("turnStarted"))).toEqual(S(1, 0, 0, 0, 0))
    })

    it("keeps waitingForFirstChunk when it is false", () => {
      expect(Turn.next(S(0, 0, 0, 0, 0), ev("turnStarted")).waitingForFirstChunk).toBe(false)
      expect(Turn.next(S(0, 0, 1, 0, 1), ev("turnStarted"))).toEqual(S(0, 0, 0, 0, 0))
    })

    it("keeps the flag of a chunk loop that broke on its first chunk into the next request", () => {
      const turn = Turn.fold([
        ev("turnStarted"),
        ev("firstChunkAwaitStarted"),
        // the loop broke on the first chunk: no firstChunkAwaitEnded
        ev("toolUsed"),
        ev("streamReadCompleted"),
        ev("turnStarted")
      ])
      expect(turn).toEqual(S(1, 0, 0, 0, 0))
    })
  })

  describe("no guards", () => {
    it("accepts tool writes after the stream has ended", () => {
      expect(Turn.fold([ev("streamReadCompleted"), ev("toolUsed"), ev("toolFailed")])).toEqual(S(0, 0, 1, 1, 1))
    })

    it("accepts an end of waiting with no wait started, and a tool rejection before any chunk", () => {
      expect(Turn.fold([ev("firstChunkAwaitEnded"), ev("toolRejected")])).toEqual(S(0, 1, 0, 0, 0))
    })

    it("keeps the wait flag when the turn is abandoned before the first chunk", () => {
      expect(Turn.fold([ev("turnStarted"), ev("firstChunkAwaitStarted")])).toEqual(S(1, 0, 0, 0, 0))
    })
  })

  describe("idempotence", () => {
    it.each(ALL_TAGS)("%s applied twice equals applied once, from any turn", (tag) => {
      fc.assert(
        fc.property(stateArb, (state) => {
          const once = Turn.next(state, ev(tag))
          expect(Turn.next(once, ev(tag))).toEqual(once)
        })
      )
    })
  })

  describe("immutability", () => {
    it.each(ALL_TAGS)("%s returns a new frozen turn and leaves its input alone", (tag) => {
      const input = S(0, 1, 0, 1, 0)
      const result = Turn.next(input, ev(tag))
      expect(result).not.toBe(input)
      expect(Object.isFrozen(result)).toBe(true)
      expect(input).toEqual(S(0, 1, 0, 1, 0))
    })

    it("accepts a frozen input", () => {
      expect(Turn.next(Object.freeze(S(1, 1, 1, 1, 1)), ev("turnStarted"))).toEqual(S(1, 0, 0, 0, 0))
    })
  })

  describe("fold", () => {
    it("of no events is the starting turn", () => {
      expect(Turn.fold([])).toEqual(S(0, 0, 0, 0, 0))
      expect(Turn.fold([], S(1, 0, 1, 0, 1))).toEqual(S(1, 0, 1, 0, 1))
    })

    it("starts from the initial turn by default and from `from` when given", () => {
      const events = [ev("toolUsed"), ev("firstChunkAwaitEnded")]
      expect(Turn.fold(events)).toEqual(S(0, 0, 1, 0, 0))
      expect(Turn.fold(events, S(1, 1, 0, 0, 0))).toEqual(S(0, 1, 1, 0, 0))
    })
  })

  describe("changes", () => {
    /** (case, from, events, the tags kept), written by hand. */
    const table: ReadonlyArray<readonly [string, State, ReadonlyArray<Tag>, ReadonlyArray<Tag>]> = [
      ["no events", S(0, 0, 0, 0, 0), [], []],
      ["each flag's own event from the all-false turn", S(0, 0, 0, 0, 0), ["firstChunkAwaitStarted", "toolRejected", "toolUsed", "toolFailed", "streamReadCompleted"], [
        "firstChunkAwaitStarted",
        "toolRejected",
        "toolUsed",
        "toolFailed",
        "streamReadCompleted"
      ]],
      ["a new turn and the end of a wait on the all-false turn change nothing", S(0, 0, 0, 0, 0), ["turnStarted", "firstChunkAwaitEnded"], []],
      ["an event repeated is kept once", S(0, 0, 0, 0, 0), ["toolUsed", "toolUsed", "toolUsed"], ["toolUsed"]],
      ["a flag already set is no news", S(0, 0, 1, 0, 0), ["toolUsed"], []],
      ["only the waiting flag differs", S(1, 0, 0, 0, 0), ["firstChunkAwaitStarted", "firstChunkAwaitEnded"], ["firstChunkAwaitEnded"]],
      ["only the rejected flag differs", S(0, 1, 0, 0, 0), ["toolRejected", "turnStarted"], ["turnStarted"]],
      ["only the failed flag differs", S(0, 0, 0, 1, 0), ["toolFailed", "turnStarted"], ["turnStarted"]],
      ["only the stream flag differs", S(0, 0, 0, 0, 1), ["streamReadCompleted", "turnStarted"], ["turnStarted"]],
      ["a new turn clears what the last one set, then the same flag is news again", S(0, 1, 1, 1, 1), ["toolUsed", "turnStarted", "turnStarted", "toolUsed"], [
        "turnStarted",
        "toolUsed"
      ]],
      ["a new turn keeps the wait, so it is no news on a turn that only waits", S(1, 0, 0, 0, 0), ["turnStarted"], []]
    ]

    it.each(table)("%s", (_case, from, events, kept) => {
      expect(Turn.changes(from, events.map(ev)).map((event) => event._tag)).toEqual(kept)
    })

    it("keeps what folds to the same turn, and takes any iterable", () => {
      fc.assert(
        fc.property(stateArb, fc.array(eventArb, { maxLength: 40 }), (start, events) => {
          const kept = Turn.changes(start, events)
          expect(Turn.fold(kept, start)).toEqual(Turn.fold(events, start))
          expect(kept.length).toBeLessThanOrEqual(events.length)
          // Every kept event changes the turn it is applied to.
          let state = start
          for (const event of kept) {
            const after = Turn.next(state, event)
            expect(after).not.toEqual(state)
            state = after
          }
        })
      )
      function* generated() {
        yield ev("toolUsed")
        yield ev("toolUsed")
      }
      expect(Turn.changes(S(0, 0, 0, 0, 0), generated()).map((event) => event._tag)).toEqual(["toolUsed"])
    })
  })

  describe("properties", () => {
    it("next never throws, never mutates, and agrees with the assignment table", () => {
      fc.assert(
        fc.property(stateArb, fc.array(eventArb, { maxLength: 40 }), (start, events) => {
          let state = start
          let expected = start
          for (const event of events) {
            const before = { ...state }
            const after = Turn.next(state, event)
            expect(state).toEqual(before)
            expect(Object.isFrozen(after)).toBe(true)
            expected = reference(expected, event)
            expect(after).toEqual(expected)
            state = after
          }
          expect(Turn.fold(events, start)).toEqual(expected)
        })
      )
    })
  })

  describe("decoding", () => {
    const decodeEvent = Schema.decodeUnknownEither(Turn.Event)
    const decodeState = Schema.decodeUnknownEither(Turn.State)
    const expectParseError = (result: Either.Either<unknown, ParseResult.ParseError>) => {
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(ParseResult.isParseError(result.left)).toBe(true)
    }

    it.each(ALL_TAGS)("accepts the plain event { _tag: %j }", (tag) => {
      expect(decodeEvent({ _tag: tag })).toEqual(Either.right({ _tag: tag }))
    })

    it.each([
      ["a differently cased tag", { _tag: "ToolUsed" }],
      ["the flag name instead of the event", { _tag: "streamReadComplete" }],
      ["an unknown tag", { _tag: "streamChunk" }],
      ["a tag of the wrong type", { _tag: 1 }],
      ["no tag", {}],
      ["a bare tag string", "toolUsed"],
      ["null", null],
      ["a huge string", "t".repeat(1_000_000)]
    ])("rejects an event with %s", (_name, input) => {
      expectParseError(decodeEvent(input))
    })

    it("accepts a complete turn and rejects a partial or mistyped one", () => {
      expect(decodeState(S(1, 0, 1, 0, 1))).toEqual(Either.right(S(1, 0, 1, 0, 1)))
      const { streamReadComplete: _, ...missing } = S(0, 0, 0, 0, 0)
      expectParseError(decodeState(missing))
      expectParseError(decodeState({ ...S(0, 0, 0, 0, 0), toolUsed: "false" }))
      expectParseError(decodeState({ ...S(0, 0, 0, 0, 0), waitingForFirstChunk: 0 }))
      expectParseError(decodeState(null))
    })

    it("never throws on arbitrary input", () => {
      fc.assert(
        fc.property(fc.anything(), (input) => {
          const e = decodeEvent(input)
          const s = decodeState(input)
          return (Either.isRight(e) || ParseResult.isParseError(e.left)) &&
            (Either.isRight(s) || ParseResult.isParseError(s.left))
        })
      )
    })
  })
})
