/**
 * The intent machine against its table: `Pending → Dispatched → Resolved(outcome)` and
 * `Pending → Abandoned`, nothing else. Tables are written by hand, never derived from
 * `Intent.transition`; the rejected set is asserted alongside the accepted one.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as Intent from "../src/Intent.js"

type State = Intent.State
type Cause = Intent.Cause

const pending: State = { _tag: "Pending" }
const dispatched: State = { _tag: "Dispatched" }
const resolvedOk: State = { _tag: "Resolved", outcome: "Succeeded" }
const resolvedErr: State = { _tag: "Resolved", outcome: "Failed" }
const abandoned: State = { _tag: "Abandoned" }

const ALL_STATES: ReadonlyArray<State> = [pending, dispatched, resolvedOk, resolvedErr, abandoned]

const dispatch: Cause = { _tag: "Dispatch" }
const resolveOk: Cause = { _tag: "Resolve", outcome: "Succeeded" }
const resolveErr: Cause = { _tag: "Resolve", outcome: "Failed" }
const abandon: Cause = { _tag: "Abandon" }

const ALL_CAUSES: ReadonlyArray<Cause> = [dispatch, resolveOk, resolveErr, abandon]

type Expected = { readonly to: State } | { readonly reject: Intent.RejectionReason }
const to = (state: State): Expected => ({ to: state })
const terminal: Expected = { reject: "terminal_state" }
const forbidden: Expected = { reject: "forbidden_transition" }

// Every state (Resolved with both outcomes) x every cause (Resolve with both outcomes).
const TABLE: ReadonlyArray<readonly [State, Cause, Expected]> = [
  [pending, dispatch, to({ _tag: "Dispatched" })],
  [pending, resolveOk, forbidden],
  [pending, resolveErr, forbidden],
  [pending, abandon, to({ _tag: "Abandoned" })],

  [dispatched, dispatch, forbidden],
  [dispatched, resolveOk, to({ _tag: "Resolved", outcome: "Succeeded" })],
  [dispatched, resolveErr, to({ _tag: "Resolved", outcome: "Failed" })],
  [dispatched, abandon, forbidden],

  [resolvedOk, dispatch, terminal],
  [resolvedOk, resolveOk, terminal],
  [resolvedOk, resolveErr, terminal],
  [resolvedOk, abandon, terminal],

  [resolvedErr, dispatch, terminal],
  [resolvedErr, resolveOk, terminal],
  [resolvedErr, resolveErr, terminal],
  [resolvedErr, abandon, terminal],

  [abandoned, dispatch, terminal],
  [abandoned, resolveOk, terminal],
  [abandoned, resolveErr, terminal],
  [abandoned, abandon, terminal]
]

const LEGAL_NAME_PAIRS: ReadonlyArray<readonly [Intent.StateName, Intent.StateName]> = [
  ["Pending", "Dispatched"],
  ["Pending", "Abandoned"],
  ["Dispatched", "Resolved"]
]

const show = (value: State | Cause): string =>
  "outcome" in value ? `${value._tag}(${value.outcome})` : value._tag

const causeArb: fc.Arbitrary<Cause> = fc.constantFrom(...ALL_CAUSES)

const messageOf = (from: State, cause: Cause): string => {
  const result = Intent.transition(from, cause)
  if (Either.isRight(result)) throw new Error(`expected ${show(from)} + ${show(cause)} to be rejected`)
  return result.left.message
}

describe("Intent", () => {
  describe("states", () => {
    it("names the four states in lifecycle order", () => {
      expect(Intent.stateNames).toEqual(["Pending", "Dispatched", "Resolved", "Abandoned"])
    })

    it.each([
      [pending, true, false],
      [dispatched, true, false],
      [resolvedOk, false, true],
      [resolvedErr, false, true],
      [abandoned, false, true]
    ] as const)("%j: isOpen %s, isTerminal %s", (state, open, isTerminal) => {
      expect(Intent.isOpen(state)).toBe(open)
      expect(Intent.isTerminal(state)).toBe(isTerminal)
    })

    it("constructors build frozen plain states and causes", () => {
      expect(Intent.pending).toEqual({ _tag: "Pending" })
      expect(Intent.dispatched).toEqual({ _tag: "Dispatched" })
      expect(Intent.resolved("Failed")).toEqual({ _tag: "Resolved", outcome: "Failed" })
      expect(Intent.abandoned).toEqual({ _tag: "Abandoned" })
      expect(Intent.dispatch).toEqual({ _tag: "Dispatch" })
      expect(Intent.resolve("Succeeded")).toEqual({ _tag: "Resolve", outcome: "Succeeded" })
      expect(Intent.abandon).toEqual({ _tag: "Abandon" })
      for (
        const value of [
          Intent.pending,
          Intent.dispatched,
          Intent.resolved("Succeeded"),
          Intent.abandoned,
          Intent.dispatch,
          Intent.resolve("Failed"),
          Intent.abandon
        ]
      ) {
        expect(Object.isFrozen(value)).toBe(true)
      }
    })
  })

  describe("transition table (every state x every cause)", () => {
    it("has 20 hand-written rows covering each pair once", () => {
      expect(new Set(TABLE.map(([from, cause]) => `${show(from)}/${show(cause)}`)).size).toBe(20)
    })

    it.each(TABLE.map(([from, cause, expected]) => [show(from), show(cause), from, cause, expected] as const))(
      "%s + %s",
      (_from, _cause, from, cause, expected) => {
        const result = Intent.transition(from, cause)
        if ("to" in expected) {
          expect(result).toEqual(Either.right(expected.to))
          if (Either.isRight(result)) expect(Object.isFrozen(result.right)).toBe(true)
        } else {
          if (Either.isRight(result)) throw new Error(`expected a rejection, got ${show(result.right)}`)
          const error = result.left
          expect(error).toBeInstanceOf(Intent.IllegalTransition)
          expect(error._tag).toBe("@ratchet/kernel/IllegalIntentTransition")
          expect(error.from).toEqual(from)
          expect(error.cause).toEqual(cause)
          expect(error.reason).toBe(expected.reject)
        }
      }
    )
  })

  describe("legal (from, to) state-name pairs", () => {
    it("some cause moves `from` to `to` iff the pair is in the hand-written legal set", () => {
      const legal = new Set(LEGAL_NAME_PAIRS.map(([from, to]) => `${from}->${to}`))
      const names: ReadonlyArray<Intent.StateName> = ["Pending", "Dispatched", "Resolved", "Abandoned"]
      let accepted = 0
      for (const fromName of names) {
        for (const toName of names) {
          const reachable = ALL_STATES.filter((s) => s._tag === fromName).some((from) =>
            ALL_CAUSES.some((cause) => {
              const result = Intent.transition(from, cause)
              return Either.isRight(result) && result.right._tag === toName
            })
          )
          expect({ pair: `${fromName}->${toName}`, reachable }).toEqual({
            pair: `${fromName}->${toName}`,
            reachable: legal.has(`${fromName}->${toName}`)
          })
          if (reachable) accepted++
        }
      }
      expect(accepted).toBe(3)
    })

    it("resolving keeps the outcome the cause carried", () => {
      expect(Intent.transition(dispatched, Intent.resolve("Failed"))).toEqual(
        Either.right({ _tag: "Resolved", outcome: "Failed" })
      )
      expect(Intent.transition(dispatched, Intent.resolve("Succeeded"))).toEqual(
        Either.right({ _tag: "Resolved", outcome: "Succeeded" })
      )
    })
  })

  describe("rejection messages name the state, the cause, the reason and the fix", () => {
    it("abandoning a dispatched intent explains the effect may have started", () => {
      expect(messageOf(dispatched, abandon)).toBe(
        "Intent in state Dispatched cannot take Abandon (forbidden_transition): the effect may have started once the intent was dispatched; resolve it with its outcome, or let recovery mark the attempt Indeterminate"
      )
    })

    it("dispatching twice says dispatch is written once", () => {
      expect(messageOf(dispatched, dispatch)).toBe(
        "Intent in state Dispatched cannot take Dispatch (forbidden_transition): the intent was already dispatched and dispatch is written once, before the effect starts; resolve it when the effect ends"
      )
    })

    it("resolving a pending intent says to dispatch first", () => {
      expect(messageOf(pending, resolveErr)).toBe(
        "Intent in state Pending cannot take Resolve { outcome: Failed } (forbidden_transition): a pending intent was never dispatched, so its effect cannot have an outcome; dispatch it before starting the effect"
      )
    })

    it("a terminal intent points at a new intent", () => {
      expect(messageOf(resolvedOk, abandon)).toBe(
        "Intent in state Resolved(Succeeded) cannot take Abandon (terminal_state): Resolved is terminal and a terminal intent never changes; record a new intent for a new effect"
      )
      expect(messageOf(abandoned, resolveOk)).toBe(
        "Intent in state Abandoned cannot take Resolve { outcome: Succeeded } (terminal_state): Abandoned is terminal and a terminal intent never changes; record a new intent for a new effect"
      )
    })

    it("round-trips the error through its schema", () => {
      const error = new Intent.IllegalTransition({ from: resolvedErr, cause: dispatch, reason: "terminal_state" })
      const encoded = Schema.encodeSync(Intent.IllegalTransition)(error)
      expect(encoded).toEqual({
        _tag: "@ratchet/kernel/IllegalIntentTransition",
        from: { _tag: "Resolved", outcome: "Failed" },
        cause: { _tag: "Dispatch" },
        reason: "terminal_state"
      })
      expect(Schema.decodeUnknownSync(Intent.IllegalTransition)(encoded).message).toBe(error.message)
    })
  })

  describe("properties", () => {
    const stateArb: fc.Arbitrary<State> = fc.constantFrom(...ALL_STATES)

    it("a random cause sequence never leaves a terminal state and never resolves a pending intent", () => {
      fc.assert(
        fc.property(stateArb, fc.array(causeArb, { maxLength: 30 }), (start, causes) => {
          let state = start
          for (const cause of causes) {
            const result = Intent.transition(state, cause)
            if (Either.isLeft(result)) {
              if (JSON.stringify(result.left.from) !== JSON.stringify(state)) return false
              continue
            }
            if (state._tag === "Resolved" || state._tag === "Abandoned") return false
            if (state._tag === "Pending" && result.right._tag === "Resolved") return false
            state = result.right
          }
          return true
        })
      )
    })

    it("a terminal state rejects every cause with terminal_state", () => {
      fc.assert(
        fc.property(fc.constantFrom(resolvedOk, resolvedErr, abandoned), causeArb, (state, cause) => {
          const result = Intent.transition(state, cause)
          return Either.isLeft(result) && result.left.reason === "terminal_state"
        })
      )
    })
  })

  describe("attemptCancelCause", () => {
    it.each([
      ["no intents", [], false],
      ["only pending intents", [pending, pending], false],
      ["one dispatched intent", [dispatched], true],
      ["a dispatched intent that then resolved", [resolvedOk], false],
      ["an abandoned intent", [abandoned], false],
      ["mixed, with one still dispatched", [resolvedErr, pending, dispatched, abandoned], true],
      ["mixed, none dispatched", [resolvedErr, pending, resolvedOk, abandoned], false]
    ] as const)("%s → Cancel { intentDispatched: %s }", (_name, intents, expected) => {
      expect(Intent.attemptCancelCause(intents)).toEqual({ _tag: "Cancel", intentDispatched: expected })
    })

    it("reads the state a dispatched intent reaches once it resolves", () => {
      const walked = Intent.transition(pending, dispatch).pipe(
        Either.flatMap((state) => Intent.transition(state, resolveOk)),
        Either.getOrThrow
      )
      expect(Intent.attemptCancelCause([walked])).toEqual({ _tag: "Cancel", intentDispatched: false })
    })
  })

  describe("decoding", () => {
    const decodeState = Schema.decodeUnknownEither(Intent.State)
    const decodeCause = Schema.decodeUnknownEither(Intent.Cause)
    const expectParseError = (result: Either.Either<unknown, ParseResult.ParseError>) => {
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(ParseResult.isParseError(result.left)).toBe(true)
    }

    it("accepts well-formed plain states and causes", () => {
      for (const state of ALL_STATES) expect(decodeState(state)).toEqual(Either.right(state))
      for (const cause of ALL_CAUSES) expect(decodeCause(cause)).toEqual(Either.right(cause))
      for (const name of Intent.stateNames) {
        expect(Schema.decodeUnknownEither(Intent.StateName)(name)).toEqual(Either.right(name))
      }
    })

    it.each([
      ["Resolved without an outcome", { _tag: "Resolved" }],
      ["an unknown outcome", { _tag: "Resolved", outcome: "Unknown" }],
      ["an outcome of the wrong type", { _tag: "Resolved", outcome: true }],
      ["an unknown tag", { _tag: "Running" }],
      ["a bare state name", "Pending"],
      ["null", null],
      ["a huge tag", { _tag: "P".repeat(1_000_000) }]
    ])("rejects a state with %s", (_name, input) => {
      expectParseError(decodeState(input))
    })

    it.each([
      ["Resolve without an outcome", { _tag: "Resolve" }],
      ["an unknown outcome", { _tag: "Resolve", outcome: "Maybe" }],
      ["an unknown tag", { _tag: "Retry" }],
      ["a state instead of a cause", { _tag: "Dispatched" }],
      ["undefined", undefined],
      ["a huge string", "x".repeat(1_000_000)]
    ])("rejects a cause with %s", (_name, input) => {
      expectParseError(decodeCause(input))
    })

    it("rejects anything that is not a state name", () => {
      expectParseError(Schema.decodeUnknownEither(Intent.StateName)("Open"))
    })

    it("never throws on arbitrary input", () => {
      fc.assert(
        fc.property(fc.anything(), (input) => {
          const s = decodeState(input)
          const c = decodeCause(input)
          return (Either.isRight(s) || ParseResult.isParseError(s.left)) &&
            (Either.isRight(c) || ParseResult.isParseError(c.left))
        })
      )
    })
  })
})
