/**
 * The attempt machine against its normative table. Every table here is written by hand from the
 * table in the module's specification, never derived from `Attempt.transition`, so a missing or
 * extra arm shows up as a disagreement. The rejected set is asserted as carefully as the accepted
 * set: a permissive catch-all would pass an accept-only test.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as Attempt from "../src/Attempt.js"

type State = Attempt.State
type Cause = Attempt.Cause

const ALL_STATES: ReadonlyArray<State> = [
  "Pending",
  "Running",
  "Succeeded",
  "Failed",
  "Indeterminate",
  "Cancelled",
  "TimedOut"
]

const admit: Cause = { _tag: "Admit" }
const cancelClean: Cause = { _tag: "Cancel", intentDispatched: false }
const cancelDispatched: Cause = { _tag: "Cancel", intentDispatched: true }
const timeOut: Cause = { _tag: "TimeOut" }
const succeed: Cause = { _tag: "Succeed" }
const fail: Cause = { _tag: "Fail" }

const ALL_CAUSES: ReadonlyArray<Cause> = [admit, cancelClean, cancelDispatched, timeOut, succeed, fail]

type Expected = { readonly to: State } | { readonly reject: Attempt.RejectionReason }

const to = (state: State): Expected => ({ to: state })
const terminal: Expected = { reject: "terminal_state" }
const forbidden: Expected = { reject: "forbidden_transition" }

// 7 states x 6 causes = 42 rows, written out from the seed's table.
const TABLE: ReadonlyArray<readonly [State, Cause, Expected]> = [
  ["Pending", admit, to("Running")],
  ["Pending", cancelClean, to("Cancelled")],
  ["Pending", cancelDispatched, forbidden],
  ["Pending", timeOut, to("TimedOut")],
  ["Pending", succeed, forbidden],
  ["Pending", fail, forbidden],

  ["Running", admit, forbidden],
  ["Running", cancelClean, to("Cancelled")],
  ["Running", cancelDispatched, to("Indeterminate")],
  ["Running", timeOut, to("TimedOut")],
  ["Running", succeed, to("Succeeded")],
  ["Running", fail, to("Failed")],

  ["Succeeded", admit, terminal],
  ["Succeeded", cancelClean, terminal],
  ["Succeeded", cancelDispatched, terminal],
  ["Succeeded", timeOut, terminal],
  ["Succeeded", succeed, terminal],
  ["Succeeded", fail, terminal],

  ["Failed", admit, terminal],
  ["Failed", cancelClean, terminal],
  ["Failed", cancelDispatched, terminal],
  ["Failed", timeOut, terminal],
  ["Failed", succeed, terminal],
  ["Failed", fail, terminal],

  ["Indeterminate", admit, terminal],
  ["Indeterminate", cancelClean, terminal],
  ["Indeterminate", cancelDispatched, terminal],
  ["Indeterminate", timeOut, terminal],
  ["Indeterminate", succeed, terminal],
  ["Indeterminate", fail, terminal],

  ["Cancelled", admit, terminal],
  ["Cancelled", cancelClean, terminal],
  ["Cancelled", cancelDispatched, terminal],
  ["Cancelled", timeOut, terminal],
  ["Cancelled", succeed, terminal],
  ["Cancelled", fail, terminal],

  ["TimedOut", admit, terminal],
  ["TimedOut", cancelClean, terminal],
  ["TimedOut", cancelDispatched, terminal],
  ["TimedOut", timeOut, terminal],
  ["TimedOut", succeed, terminal],
  ["TimedOut", fail, terminal]
]

// The seed's legal (from, to) set, exactly.
const LEGAL_PAIRS: ReadonlyArray<readonly [State, State]> = [
  ["Pending", "Running"],
  ["Pending", "Cancelled"],
  ["Pending", "TimedOut"],
  ["Running", "Succeeded"],
  ["Running", "Failed"],
  ["Running", "TimedOut"],
  ["Running", "Cancelled"],
  ["Running", "Indeterminate"]
]

const label = (cause: Cause): string =>
  cause._tag === "Cancel" ? `Cancel{intentDispatched:${cause.intentDispatched}}` : cause._tag

const causeArb: fc.Arbitrary<Cause> = fc.constantFrom(...ALL_CAUSES)

describe("Attempt", () => {
  describe("states", () => {
    it("lists the seven closed states in lifecycle order", () => {
      expect(Attempt.states).toEqual(ALL_STATES)
    })

    it("lists exactly the terminal states", () => {
      expect([...Attempt.terminalStates].sort()).toEqual(
        ["Cancelled", "Failed", "Indeterminate", "Succeeded", "TimedOut"]
      )
    })

    it.each([
      ["Pending", false],
      ["Running", false],
      ["Succeeded", true],
      ["Failed", true],
      ["Indeterminate", true],
      ["Cancelled", true],
      ["TimedOut", true]
    ] as const)("isTerminal(%s) is %s", (state, expected) => {
      expect(Attempt.isTerminal(state)).toBe(expected)
    })
  })

  describe("transition table (every state x every cause)", () => {
    it("has 42 hand-written rows covering each pair once", () => {
      expect(TABLE).toHaveLength(42)
      const keys = new Set(TABLE.map(([from, cause]) => `${from}/${label(cause)}`))
      expect(keys.size).toBe(42)
    })

    it.each(TABLE.map(([from, cause, expected]) => [from, label(cause), cause, expected] as const))(
      "%s + %s",
      (from, _label, cause, expected) => {
        const result = Attempt.transition(from, cause)
        if ("to" in expected) {
          expect(result).toEqual(Either.right(expected.to))
        } else {
          if (Either.isRight(result)) throw new Error(`expected a rejection, got ${result.right}`)
          const error = result.left
          expect(error).toBeInstanceOf(Attempt.IllegalTransition)
          expect(error._tag).toBe("@ratchet/kernel/IllegalAttemptTransition")
          expect(error.from).toBe(from)
          expect(error.cause).toEqual(cause)
          expect(error.reason).toBe(expected.reject)
        }
      }
    )
  })

  describe("the seed's targeted cases", () => {
    it("cancelling a running attempt with no dispatched intent yields Cancelled", () => {
      expect(Attempt.transition("Running", { _tag: "Cancel", intentDispatched: false })).toEqual(
        Either.right("Cancelled")
      )
    })

    it("cancelling a running attempt with a dispatched intent yields Indeterminate", () => {
      expect(Attempt.transition("Running", { _tag: "Cancel", intentDispatched: true })).toEqual(
        Either.right("Indeterminate")
      )
    })
  })

  describe("legal (from, to) pairs", () => {
    it("some cause reaches `to` from `from` iff the pair is in the hand-written legal set", () => {
      const legal = new Set(LEGAL_PAIRS.map(([from, to]) => `${from}->${to}`))
      let accepted = 0
      let rejected = 0
      for (const from of ALL_STATES) {
        for (const target of ALL_STATES) {
          const reachable = ALL_CAUSES.some((cause) => {
            const result = Attempt.transition(from, cause)
            return Either.isRight(result) && result.right === target
          })
          expect({ pair: `${from}->${target}`, reachable }).toEqual({
            pair: `${from}->${target}`,
            reachable: legal.has(`${from}->${target}`)
          })
          if (reachable) accepted++
          else rejected++
        }
      }
      expect(accepted).toBe(8)
      expect(rejected).toBe(41)
    })
  })

  describe("rejection messages name the state, the cause, the reason and the fix", () => {
    const messageOf = (from: State, cause: Cause): string => {
      const result = Attempt.transition(from, cause)
      if (Either.isRight(result)) throw new Error(`expected ${from} + ${label(cause)} to be rejected`)
      return result.left.message
    }

    it("a terminal attempt points at a successor attempt", () => {
      expect(messageOf("Succeeded", admit)).toBe(
        "Attempt in state Succeeded cannot take Admit (terminal_state): Succeeded is terminal and a terminal attempt never changes; start a successor attempt instead"
      )
      expect(messageOf("Indeterminate", cancelDispatched)).toBe(
        "Attempt in state Indeterminate cannot take Cancel { intentDispatched: true } (terminal_state): Indeterminate is terminal and a terminal attempt never changes; start a successor attempt instead"
      )
      expect(messageOf("Cancelled", cancelClean)).toBe(
        "Attempt in state Cancelled cannot take Cancel { intentDispatched: false } (terminal_state): Cancelled is terminal and a terminal attempt never changes; start a successor attempt instead"
      )
    })

    it("admitting a running attempt says admission happens once", () => {
      expect(messageOf("Running", admit)).toBe(
        "Attempt in state Running cannot take Admit (forbidden_transition): the attempt was already admitted and admission happens once; let it succeed, fail, time out or be cancelled"
      )
    })

    it("a dispatched-intent cancel of a pending attempt points at the intent record", () => {
      expect(messageOf("Pending", cancelDispatched)).toBe(
        "Attempt in state Pending cannot take Cancel { intentDispatched: true } (forbidden_transition): a pending attempt has not started, so it cannot have dispatched an intent; check the intent record and cancel with intentDispatched false"
      )
    })

    it("completing a pending attempt says to admit it first", () => {
      expect(messageOf("Pending", succeed)).toBe(
        "Attempt in state Pending cannot take Succeed (forbidden_transition): a Pending attempt has not run, so it cannot complete; admit it first"
      )
      expect(messageOf("Pending", fail)).toBe(
        "Attempt in state Pending cannot take Fail (forbidden_transition): a Pending attempt has not run, so it cannot complete; admit it first"
      )
    })

    it("every rejection in the table has a message naming its state and cause tag", () => {
      for (const [from, cause, expected] of TABLE) {
        if ("to" in expected) continue
        const message = messageOf(from, cause)
        expect(message).toContain(`state ${from}`)
        expect(message).toContain(cause._tag)
        expect(message).toContain(expected.reject)
      }
    })
  })

  describe("IllegalTransition", () => {
    it("round-trips through its schema, so it can be persisted and sent", () => {
      const error = new Attempt.IllegalTransition({ from: "Failed", cause: cancelDispatched, reason: "terminal_state" })
      const encoded = Schema.encodeSync(Attempt.IllegalTransition)(error)
      expect(encoded).toEqual({
        _tag: "@ratchet/kernel/IllegalAttemptTransition",
        from: "Failed",
        cause: { _tag: "Cancel", intentDispatched: true },
        reason: "terminal_state"
      })
      const decoded = Schema.decodeUnknownSync(Attempt.IllegalTransition)(encoded)
      expect(decoded).toBeInstanceOf(Attempt.IllegalTransition)
      expect(decoded.message).toBe(error.message)
    })
  })

  describe("constructors", () => {
    it("build the plain cause objects", () => {
      expect(Attempt.admit).toEqual({ _tag: "Admit" })
      expect(Attempt.cancel(false)).toEqual({ _tag: "Cancel", intentDispatched: false })
      expect(Attempt.cancel(true)).toEqual({ _tag: "Cancel", intentDispatched: true })
      expect(Attempt.timeOut).toEqual({ _tag: "TimeOut" })
      expect(Attempt.succeed).toEqual({ _tag: "Succeed" })
      expect(Attempt.fail).toEqual({ _tag: "Fail" })
    })

    it("are immutable", () => {
      for (const cause of [Attempt.admit, Attempt.cancel(true), Attempt.timeOut, Attempt.succeed, Attempt.fail]) {
        expect(Object.isFrozen(cause)).toBe(true)
      }
    })

    it("drive the machine like plain objects do", () => {
      expect(Attempt.transition("Pending", Attempt.admit)).toEqual(Either.right("Running"))
      expect(Attempt.transition("Running", Attempt.cancel(true))).toEqual(Either.right("Indeterminate"))
      expect(Attempt.transition("Running", Attempt.timeOut)).toEqual(Either.right("TimedOut"))
      expect(Attempt.transition("Running", Attempt.succeed)).toEqual(Either.right("Succeeded"))
      expect(Attempt.transition("Running", Attempt.fail)).toEqual(Either.right("Failed"))
    })
  })

  describe("properties", () => {
    it("a terminal state absorbs any sequence of causes", () => {
      fc.assert(
        fc.property(
          fc.constantFrom<State>("Succeeded", "Failed", "Indeterminate", "Cancelled", "TimedOut"),
          fc.array(causeArb, { maxLength: 30 }),
          (start, causes) => {
            for (const cause of causes) {
              const result = Attempt.transition(start, cause)
              if (Either.isRight(result)) return false
              if (result.left.reason !== "terminal_state" || result.left.from !== start) return false
            }
            return true
          }
        )
      )
    })

    it("from Pending, Indeterminate is reached only by a dispatched-intent Cancel applied to Running", () => {
      fc.assert(
        fc.property(fc.array(causeArb, { maxLength: 30 }), (causes) => {
          let state: State = "Pending"
          for (const cause of causes) {
            const result = Attempt.transition(state, cause)
            if (Either.isLeft(result)) continue
            if (result.right === "Indeterminate") {
              const viaDispatchedCancel = state === "Running" && cause._tag === "Cancel" && cause.intentDispatched
              if (!viaDispatchedCancel) return false
            }
            if (cause._tag === "Cancel" && !cause.intentDispatched && result.right === "Indeterminate") return false
            state = result.right
          }
          return true
        })
      )
    })

    it("once a random walk reaches a terminal state it stays there", () => {
      fc.assert(
        fc.property(fc.array(causeArb, { maxLength: 30 }), (causes) => {
          let state: State = "Pending"
          let reachedTerminal: State | undefined
          for (const cause of causes) {
            const result = Attempt.transition(state, cause)
            if (Either.isRight(result)) state = result.right
            if (reachedTerminal !== undefined && state !== reachedTerminal) return false
            if (reachedTerminal === undefined && ["Succeeded", "Failed", "Indeterminate", "Cancelled", "TimedOut"].includes(state)) {
              reachedTerminal = state
            }
          }
          return true
        })
      )
    })
  })

  describe("decoding causes and states", () => {
    const decodeCause = Schema.decodeUnknownEither(Attempt.Cause)
    const decodeState = Schema.decodeUnknownEither(Attempt.State)

    it.each([
      [{ _tag: "Admit" }],
      [{ _tag: "Cancel", intentDispatched: true }],
      [{ _tag: "Cancel", intentDispatched: false }],
      [{ _tag: "TimeOut" }],
      [{ _tag: "Succeed" }],
      [{ _tag: "Fail" }]
    ])("accepts the plain object %j", (input) => {
      expect(decodeCause(input)).toEqual(Either.right(input))
    })

    it.each([
      ["missing intentDispatched", { _tag: "Cancel" }],
      ["intentDispatched of the wrong type", { _tag: "Cancel", intentDispatched: "true" }],
      ["intentDispatched null", { _tag: "Cancel", intentDispatched: null }],
      ["an unknown tag", { _tag: "Retry" }],
      ["a differently cased tag", { _tag: "cancel", intentDispatched: true }],
      ["no tag", { intentDispatched: true }],
      ["null", null],
      ["undefined", undefined],
      ["a bare tag string", "Admit"],
      ["a number", 42],
      ["an array", [{ _tag: "Admit" }]],
      ["a huge string", "x".repeat(1_000_000)],
      ["a huge tag", { _tag: "A".repeat(1_000_000) }]
    ])("rejects %s with a ParseError", (_name, input) => {
      const result = decodeCause(input)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(ParseResult.isParseError(result.left)).toBe(true)
    })

    it("never throws on arbitrary input, and whatever it accepts is a well-formed cause", () => {
      fc.assert(
        fc.property(
          fc.oneof(
            fc.anything(),
            fc.record({
              _tag: fc.constantFrom("Admit", "Cancel", "TimeOut", "Succeed", "Fail", "Other"),
              intentDispatched: fc.anything()
            }, { requiredKeys: [] })
          ),
          (input) => {
            const result = decodeCause(input)
            if (Either.isLeft(result)) return ParseResult.isParseError(result.left)
            const cause = result.right
            return cause._tag === "Cancel" ? typeof cause.intentDispatched === "boolean" : true
          }
        )
      )
    })

    it("accepts every state name and rejects anything else", () => {
      for (const state of ALL_STATES) expect(decodeState(state)).toEqual(Either.right(state))
      for (const input of ["pending", "Done", "", null, 0, { _tag: "Pending" }]) {
        const result = decodeState(input)
        expect(Either.isLeft(result)).toBe(true)
      }
    })
  })
})
