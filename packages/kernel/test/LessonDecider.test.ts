/**
 * The lesson decider against a table written by hand: for every status a lesson can be in (and no
 * lesson at all) and every command, the events it decides and the status they leave, or the code
 * it refuses with. Every state is reached through real commands (`reach`), and every command is
 * given by the actor entitled to it with a valid receipt, so a refusal here is the status's doing.
 * Then who may do what: only a person's signed control moves a status, only Ratchet's observers
 * record facts, anyone proposes; and each receipt defect, each bad fact.
 */
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import type * as Event from "../src/Event.js"
import * as Lesson from "../src/Lesson.js"
import * as LessonDecider from "../src/LessonDecider.js"
import * as LessonRules from "../src/LessonRules.js"
import * as Keys from "./keys.js"
import {
  agent,
  alice,
  BODY,
  authority,
  body,
  control,
  DAY,
  evaluate,
  failure,
  FP,
  guardCheck,
  LESSON,
  OTHER_FP,
  propose,
  reach,
  receipt,
  recordFailure,
  recordGuard,
  recordShown,
  recordSuccess,
  runner,
  shown,
  statusOf,
  step,
  success,
  system,
  T0,
  verifier
} from "./lessons.js"

type Where = Lesson.Status | "absent"
type Outcome = { readonly events: ReadonlyArray<string>; readonly status: Where } | { readonly refused: LessonDecider.RefusalCode }

const wheres: ReadonlyArray<Where> = [
  "absent",
  "candidate",
  "probationary",
  "verified",
  "enforced",
  "compiled",
  "expired",
  "rejected",
  "superseded",
  "deprecated"
]

const ok = (status: Where, ...events: ReadonlyArray<string>): Outcome => ({ events, status })
const no = (refused: LessonDecider.RefusalCode): Outcome => ({ refused })

const OBSERVED = "LessonFailureObserved"
const SUCCEEDED = "LessonSuccessObserved"
const CHECKED = "LessonGuardChecked"
const MOVED = "LessonTransitioned"
const CONTROLLED = "LessonControlled"

/** The table, by hand: one row per command, one cell per status. */
const table: ReadonlyArray<{
  readonly command: string
  readonly make: (state: LessonRules.State) => LessonDecider.Command
  readonly outcomes: Readonly<Record<Where, Outcome>>
}> = [
  {
    command: "Propose (an agent, no fingerprint)",
    make: () => propose(agent, body({ fingerprints: [] })),
    outcomes: {
      absent: ok("candidate", "LessonProposed"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "RecordFailure (a new run)",
    make: () => recordFailure(failure("r-new", T0 + 10)),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("probationary", OBSERVED, MOVED),
      probationary: ok("verified", OBSERVED, MOVED),
      verified: ok("verified", OBSERVED),
      enforced: ok("enforced", OBSERVED),
      compiled: ok("compiled", OBSERVED),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "RecordSuccess",
    make: () => recordSuccess(success("r-new", T0 + 10)),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("candidate", SUCCEEDED),
      probationary: ok("probationary", SUCCEEDED),
      verified: ok("verified", SUCCEEDED),
      enforced: ok("enforced", SUCCEEDED),
      compiled: ok("compiled", SUCCEEDED),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "RecordGuardCheck",
    make: () => recordGuard(guardCheck("before", "c1", 1)),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("candidate", CHECKED),
      probationary: ok("probationary", CHECKED),
      verified: ok("verified", CHECKED),
      enforced: ok("enforced", CHECKED),
      compiled: ok("compiled", CHECKED),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "RecordShown",
    make: () => recordShown(shown("r-new", T0 + 10)),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("candidate", "LessonShown"),
      probationary: ok("probationary", "LessonShown"),
      verified: ok("verified", "LessonShown"),
      enforced: ok("enforced", "LessonShown"),
      compiled: ok("compiled", "LessonShown"),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "Propose (an agent, naming a fingerprint)",
    make: () => propose(agent),
    outcomes: {
      absent: no("observed_fingerprints_only"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Propose (a person, naming a fingerprint, from no observed failure)",
    make: () => propose(alice, BODY, null),
    outcomes: {
      absent: no("observed_fingerprints_only"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Propose (Ratchet's observer, naming a fingerprint, from no observed failure)",
    make: () => propose(system, BODY, null),
    outcomes: {
      absent: no("observed_fingerprints_only"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Propose (an agent's run, from a failure Ratchet observed in it)",
    make: () => propose(agent, BODY, failure("r-seen", T0)),
    outcomes: {
      absent: ok("candidate", "LessonProposed"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Propose (from an observed failure, naming another fingerprint)",
    make: () => propose(system, body({ fingerprints: [OTHER_FP.key] })),
    outcomes: {
      absent: no("fingerprint_mismatch"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Propose (from an observed failure, naming its fingerprint and another)",
    make: () => propose(system, body({ fingerprints: [FP.key, OTHER_FP.key] })),
    outcomes: {
      absent: no("fingerprint_mismatch"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Propose (from an observed failure, naming no fingerprint)",
    make: () => propose(system, body({ fingerprints: [] })),
    outcomes: {
      absent: no("fingerprint_mismatch"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Propose (from a failure observed in another project)",
    make: () => propose(system, BODY, failure("r-seen", T0, { projectId: "p-other" })),
    outcomes: {
      absent: no("wrong_project"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Propose (Ratchet's observer, naming a fingerprint)",
    make: () => propose(system),
    outcomes: {
      absent: ok("candidate", "LessonProposed"),
      candidate: no("lesson_exists"),
      probationary: no("lesson_exists"),
      verified: no("lesson_exists"),
      enforced: no("lesson_exists"),
      compiled: no("lesson_exists"),
      expired: no("lesson_exists"),
      rejected: no("lesson_exists"),
      superseded: no("lesson_exists"),
      deprecated: no("lesson_exists")
    }
  },
  {
    command: "Evaluate (an agent asks)",
    make: () => evaluate(T0 + 30 * DAY, agent),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: no("person_only"),
      probationary: no("person_only"),
      verified: no("person_only"),
      enforced: no("person_only"),
      compiled: no("person_only"),
      expired: no("person_only"),
      rejected: no("person_only"),
      superseded: no("person_only"),
      deprecated: no("person_only")
    }
  },
  {
    command: "Evaluate (a day on)",
    make: () => evaluate(T0 + DAY),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("candidate"),
      probationary: ok("probationary"),
      verified: ok("verified"),
      enforced: ok("enforced"),
      compiled: ok("compiled"),
      expired: ok("expired"),
      rejected: ok("rejected"),
      superseded: ok("superseded"),
      deprecated: ok("deprecated")
    }
  },
  {
    command: "Inspect",
    make: () => ({ _tag: "Inspect", actor: agent, at: T0 + 10 }),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("candidate", "LessonInspected"),
      probationary: ok("probationary", "LessonInspected"),
      verified: ok("verified", "LessonInspected"),
      enforced: ok("enforced", "LessonInspected"),
      compiled: ok("compiled", "LessonInspected"),
      expired: ok("expired", "LessonInspected"),
      rejected: ok("rejected", "LessonInspected"),
      superseded: ok("superseded", "LessonInspected"),
      deprecated: ok("deprecated", "LessonInspected")
    }
  },
  {
    command: "Pin",
    make: (state) => control("Pin", state),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("enforced", CONTROLLED),
      probationary: ok("enforced", CONTROLLED),
      verified: ok("enforced", CONTROLLED),
      enforced: no("forbidden_transition"),
      compiled: no("forbidden_transition"),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "Reject",
    make: (state) => control("Reject", state),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("rejected", CONTROLLED),
      probationary: ok("rejected", CONTROLLED),
      verified: ok("rejected", CONTROLLED),
      enforced: ok("rejected", CONTROLLED),
      compiled: no("forbidden_transition"),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "Deprecate",
    make: (state) => control("Deprecate", state),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: no("forbidden_transition"),
      probationary: no("forbidden_transition"),
      verified: ok("deprecated", CONTROLLED),
      enforced: ok("deprecated", CONTROLLED),
      compiled: ok("deprecated", CONTROLLED),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "Supersede",
    make: (state) => control("Supersede", state),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("superseded", CONTROLLED),
      probationary: ok("superseded", CONTROLLED),
      verified: ok("superseded", CONTROLLED),
      enforced: ok("superseded", CONTROLLED),
      compiled: ok("superseded", CONTROLLED),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "Compile",
    make: (state) => control("Compile", state),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: no("forbidden_transition"),
      probationary: no("forbidden_transition"),
      verified: no("forbidden_transition"),
      enforced: ok("compiled", CONTROLLED),
      compiled: no("forbidden_transition"),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  },
  {
    command: "Edit",
    make: (state) => control("Edit", state),
    outcomes: {
      absent: no("lesson_not_found"),
      candidate: ok("candidate", "LessonEdited"),
      probationary: ok("probationary", "LessonEdited"),
      verified: ok("verified", "LessonEdited"),
      enforced: ok("enforced", "LessonEdited"),
      compiled: ok("compiled", "LessonEdited"),
      expired: no("terminal_status"),
      rejected: no("terminal_status"),
      superseded: no("terminal_status"),
      deprecated: no("terminal_status")
    }
  }
]

const outcomeOf = (state: LessonRules.State, command: LessonDecider.Command): Outcome =>
  Either.match(LessonDecider.decide(command, state), {
    onLeft: (refused) => ({ refused: refused.code }),
    onRight: (events) => ({ events: events.map((event) => event._tag), status: statusOf(events.reduce(LessonRules.evolve, state)) })
  })

describe("LessonDecider.decide: the transition table", () => {
  // States are reached inside the tests, not while they are collected: the kernel runs only in tests.
  for (const row of table) {
    it.each(wheres)(`${row.command} on %s`, (where) => {
      const state = reach(where)
      expect(outcomeOf(state, row.make(state))).toEqual(row.outcomes[where])
    })
  }

  it("the accepted set: exactly the status changes of the rules' edge table (nothing else moves a lesson)", () => {
    const moves = new Set<string>()
    for (const row of table) {
      for (const where of wheres) {
        const outcome = row.outcomes[where]
        if ("status" in outcome && outcome.status !== where && where !== "absent") moves.add(`${where} → ${outcome.status}`)
      }
    }
    // By hand: what the person's controls and a second run's failure move, and nothing more.
    expect([...moves].sort()).toEqual([
      "candidate → enforced",
      "candidate → probationary",
      "candidate → rejected",
      "candidate → superseded",
      "compiled → deprecated",
      "compiled → superseded",
      "enforced → compiled",
      "enforced → deprecated",
      "enforced → rejected",
      "enforced → superseded",
      "probationary → enforced",
      "probationary → rejected",
      "probationary → superseded",
      "probationary → verified",
      "verified → deprecated",
      "verified → enforced",
      "verified → rejected",
      "verified → superseded"
    ])
  })

  it("every refusal names its command, the lesson and its status, a reason and a fix", () => {
    const refused = LessonDecider.decide(control("Compile", reach("verified")), reach("verified"))
    expect(Either.isLeft(refused)).toBe(true)
    const error = Either.getLeft(refused).pipe((option) => (option._tag === "Some" ? option.value : null))!
    expect(error._tag).toBe("@ratchet/kernel/LessonCommandRefused")
    expect(error.message).toBe(
      "Compile refused for lesson L-1 (verified): a verified lesson cannot be moved by compile to compiled. Only an enforced lesson is compiled: pin it first (ratchet lessons pin L-1)."
    )
    const absent = LessonDecider.decide(evaluate(T0), LessonRules.initial)
    expect(Either.getLeft(absent).pipe((option) => (option._tag === "Some" ? option.value.message : ""))).toBe(
      "Evaluate refused: there is no such lesson. List the project's lessons with ratchet lessons list."
    )
  })
})

const refusal = (state: LessonRules.State, command: LessonDecider.Command): LessonDecider.Refused => {
  const decided = LessonDecider.decide(command, state)
  if (Either.isRight(decided)) throw new Error(`${command._tag} was accepted: ${JSON.stringify(decided.right.map((event) => event._tag))}`)
  return decided.left
}

describe("LessonDecider: only a person changes a status or the text", () => {
  const others: ReadonlyArray<Event.Actor> = [agent, runner, verifier, system]
  const allowed: ReadonlyArray<readonly ["Pin" | "Reject" | "Deprecate" | "Supersede" | "Compile" | "Edit", Lesson.Status, string]> = [
    ["Pin", "verified", "ratchet lessons pin L-1"],
    ["Reject", "candidate", "ratchet lessons reject L-1"],
    ["Deprecate", "verified", "ratchet lessons deprecate L-1"],
    ["Supersede", "candidate", "ratchet lessons supersede L-1 --by <lesson>"],
    ["Compile", "enforced", "ratchet lessons compile L-1 --guard <reference>"],
    ["Edit", "candidate", "ratchet lessons edit L-1 --file lesson.yaml"]
  ]
  for (const [tag, where, command] of allowed) {
    it.each(others)(`${tag} by %o is person_only, naming the command a person runs`, (actor) => {
      const state = reach(where)
      const refused = refusal(state, control(tag, state, { actor }))
      expect(refused.code).toBe("person_only")
      expect(refused.reason).toContain(`${actor.kind} "${actor.id}" asked to ${tag.toLowerCase()} it`)
      expect(refused.fix).toBe(`A person runs ${command} at a terminal. An agent may propose a lesson (its text), never change one.`)
    })
    it(`${tag} by alice with her signed receipt is accepted`, () => {
      const state = reach(where)
      expect(Either.isRight(LessonDecider.decide(control(tag, state), state))).toBe(true)
    })
  }

  it("an agent asking to pin a terminal lesson hears first that nothing moves it", () => {
    expect(refusal(reach("rejected"), control("Pin", reach("rejected"), { actor: agent })).code).toBe("terminal_status")
  })

  it("a person asking for a control the status forbids is told so before being asked to sign", () => {
    const state = reach("enforced")
    const unsigned = { ...control("Pin", state), receipt: null } as LessonDecider.Command
    const refused = refusal(state, unsigned)
    expect(refused.code).toBe("forbidden_transition")
    expect(refused.fix).toBe("Nothing to do: a pin makes a lesson enforced, and this one is enforced already.")
  })

  it.each([
    ["Deprecate", "candidate", "A lesson that was never verified is not deprecated but rejected: ratchet lessons reject L-1."],
    ["Reject", "compiled", "A compiled lesson lives on as a guard in the code: deprecate it (ratchet lessons deprecate L-1) and remove the guard."]
  ] as const)("%s of a %s lesson says what to do instead", (tag, where, fix) => {
    const state = reach(where)
    expect(refusal(state, control(tag, state)).fix).toBe(fix)
  })

  it("a terminal lesson never changes again, and says to propose anew", () => {
    const refused = refusal(reach("expired"), control("Edit", reach("expired")))
    expect(refused.reason).toBe("a expired lesson never changes again.")
    expect(refused.fix).toBe("Propose a new candidate if it matters again.")
  })
})

describe("LessonDecider: a person's receipt", () => {
  const verified = () => reach("verified") as LessonRules.View
  const pin = (r: Lesson.Receipt | null, overrides: Partial<LessonDecider.Signed> = {}): LessonDecider.Command => ({
    _tag: "Pin",
    actor: alice,
    at: T0 + 5,
    reason: "confirmed",
    authority,
    receipt: r,
    ...overrides
  })

  it("is required", () => {
    const state = verified()
    const refused = refusal(state, pin(null))
    expect(refused.code).toBe("receipt_required")
    expect(refused.message).toBe(
      "Pin refused for lesson L-1 (verified): no receipt was signed for this pin. Run ratchet lessons pin L-1 at a terminal with your approval key."
    )
  })

  it.each([
    ["control", { control: "reject" }, "the receipt's control is \"reject\", not \"pin\""],
    ["lessonId", { lessonId: "L-9" }, "the receipt's lessonId is \"L-9\", not \"L-1\""],
    ["revision", { revision: 2 }, "the receipt's revision is 2, not 1"],
    ["digest", { digest: `sha256:${"0".repeat(64)}` }, `the receipt's digest is "sha256:${"0".repeat(64)}", not "sha256:`],
    ["target", { target: "L-2" }, "the receipt's target is \"L-2\", not null"],
    ["actor", { actor: { kind: "user", id: "vera" } }, "the receipt names user \"vera\", not user \"alice\" who asked."],
    ["actor kind", { actor: { kind: "agent", id: "alice" } }, "the receipt names agent \"alice\", not user \"alice\" who asked."]
  ] as const)("is for this act: another %s is receipt_mismatch", (_, overrides, reason) => {
    const state = verified()
    const refused = refusal(state, pin(receipt(state, "pin", overrides as Partial<Lesson.Receipt>)))
    expect(refused.code).toBe("receipt_mismatch")
    expect(refused.reason).toContain(reason)
    expect(refused.fix).toBe("Review the lesson as it is now (ratchet lessons show L-1) and run ratchet lessons pin L-1 again.")
  })

  it("comes from a terminal", () => {
    const state = verified()
    const refused = refusal(state, pin(receipt(state, "pin", { channel: "mcp" })))
    expect(refused.code).toBe("approval_requires_terminal")
    expect(refused.reason).toBe("the receipt came through \"mcp\"; a person's control is only taken on an interactive terminal.")
    expect(refused.fix).toBe("Run ratchet lessons pin L-1 in a terminal, not from a script or an agent.")
  })

  it.each([
    ["unsigned", (state: LessonRules.View) => receipt(state, "pin", {}, null), "receipt_unsigned", "carries no approver's signature"],
    ["signed by a key nobody registered", (state: LessonRules.View) => receipt(state, "pin", {}, Keys.mallory), "approver_unknown", "which is not one of this project's approvers"],
    ["signed by vera's key though it names alice", (state: LessonRules.View) => receipt(state, "pin", {}, Keys.vera), "signature_invalid", "names someone other than vera"],
    ["altered after signing", (state: LessonRules.View) => ({ ...receipt(state, "pin"), at: T0 + 99 }), "signature_invalid", "does not match its signature by alice"]
  ] as const)("counts only when signed by an approver: %s is %s", (_, make, code, reason) => {
    const state = verified()
    const refused = refusal(state, pin(make(state)))
    expect(refused.code).toBe(code)
    expect(refused.reason).toContain(reason)
    expect(refused.reason).toContain("The pin receipt")
    expect(refused.fix).toBe("Do it again yourself, on a terminal, with your approval key: ratchet lessons pin L-1.")
  })

  it("in a project with no approvers, says to register a key first", () => {
    const state = verified()
    const refused = refusal(state, pin(receipt(state, "pin"), { authority: Keys.authorityFor("p-1", []) }))
    expect(refused.code).toBe("approver_unknown")
    expect(refused.fix).toBe(
      "This project has no approvers yet: create your approval key and register it (ratchet approver init), then do it again."
    )
  })

  it("a receipt signed for another project does not count here", () => {
    const state = verified()
    expect(refusal(state, pin(receipt(state, "pin"), { authority: Keys.authorityFor("p-2") })).code).toBe("signature_invalid")
  })

  it("the accepted control records the receipt and the reason, by the person", () => {
    const state = verified()
    const r = receipt(state, "pin")
    expect(LessonDecider.decide(pin(r), state)).toEqual(
      Either.right([{ _tag: "LessonControlled", version: 1, actor: alice, at: T0 + 5, lessonId: LESSON, from: "verified", to: "enforced", reason: "confirmed", receipt: r }])
    )
  })
})

describe("LessonDecider: supersede, compile and edit", () => {
  it("a lesson is superseded by another live lesson, which it records", () => {
    const state = reach("verified")
    const done = step(state, control("Supersede", state)) as LessonRules.View
    expect(done.supersededBy).toBe("L-2")
    expect(done.compiledAs).toBeNull()
  })

  it.each([
    ["itself", { id: LESSON, status: "verified" }, "a lesson cannot supersede itself."],
    ["a rejected lesson", { id: "L-2", status: "rejected" }, "lesson L-2 is rejected, so it replaces nothing."],
    ["an expired lesson", { id: "L-2", status: "expired" }, "lesson L-2 is expired, so it replaces nothing."]
  ] as const)("but not by %s", (_, by, reason) => {
    const state = reach("candidate")
    const command = { ...control("Supersede", state), by } as LessonDecider.Command
    const refused = refusal(state, command)
    expect(refused.code).toBe("bad_replacement")
    expect(refused.reason).toBe(reason)
    expect(refused.fix).toBe("Supersede it by a live lesson that says better what this one says.")
  })

  it("a compiled lesson records the guard it became", () => {
    const state = reach("enforced")
    const done = step(state, control("Compile", state)) as LessonRules.View
    expect(done.compiledAs).toBe("test/report-rows.test.ts")
    expect(done.supersededBy).toBeNull()
  })

  it("an edit replaces the text, bumps the revision and keeps the status; the receipt binds the new text", () => {
    const state = reach("verified") as LessonRules.View
    const edited = body({ trigger: "counting report rows" })
    const done = step(state, control("Edit", state, { edited })) as LessonRules.View
    expect(done.body).toEqual(edited)
    expect(done.revision).toBe(2)
    expect(done.status).toBe("verified")
    // A receipt for the old text does not approve the new one.
    const stale = { ...control("Edit", state, { edited }), receipt: receipt(state, "edit") } as LessonDecider.Command
    expect(refusal(state, stale).code).toBe("receipt_mismatch")
    // And a receipt given at revision 1 no longer counts at revision 2.
    const again = { ...control("Pin", done), receipt: receipt(state, "pin") } as LessonDecider.Command
    expect(refusal(done, again).reason).toContain("the receipt's revision is 1, not 2")
  })

  it("an edit never moves a lesson to another project", () => {
    const state = reach("candidate")
    const moved = body({ scope: { projectId: "p-2" } })
    const refused = refusal(state, control("Edit", state, { edited: moved }))
    expect(refused.code).toBe("wrong_project")
    expect(refused.reason).toBe("the edit moves the lesson to project p-2; it belongs to p-1.")
    expect(refused.fix).toBe("Keep scope.projectId as it is; propose a lesson in the other project instead.")
  })
})

describe("LessonDecider: facts", () => {
  const kinds: ReadonlyArray<readonly [Event.Actor, boolean]> = [[alice, false], [agent, false], [runner, true], [verifier, true], [system, true]]
  it.each(kinds)("%o records facts: %s", (actor, accepted) => {
    const state = reach("candidate")
    for (
      const command of [
        recordFailure(failure("r-x", T0 + 1), actor),
        recordSuccess(success("r-x", T0 + 1), actor),
        recordGuard(guardCheck("after", "c2", 0), actor),
        recordShown(shown("r-x", T0 + 1), actor)
      ]
    ) {
      const decided = LessonDecider.decide(command, state)
      expect(Either.isRight(decided), command._tag).toBe(accepted)
      if (Either.isLeft(decided)) {
        expect(decided.left.code).toBe("not_an_observer")
        expect(decided.left.reason).toBe(`${actor.kind} "${actor.id}" cannot record a fact: only Ratchet's runner, verifier or controller observes runs.`)
        expect(decided.left.fix).toBe("Facts come from runs Ratchet executed; an agent may propose a lesson's text instead.")
      }
    }
  })

  it("a lesson shown records the status it was shown in, and moves nothing", () => {
    for (const where of ["candidate", "verified", "enforced"] as const) {
      const state = reach(where)
      const decided = Either.getOrThrow(LessonDecider.decide(recordShown(shown("r-x", T0 + 1, { stepId: "fix", attempt: 2, via: "mcp" })), state))
      expect(decided).toEqual([{
        _tag: "LessonShown",
        version: 1,
        actor: system,
        at: T0 + 1,
        lessonId: LESSON,
        shown: shown("r-x", T0 + 1, { stepId: "fix", attempt: 2, via: "mcp" }),
        status: where
      }])
    }
  })

  it.each(["user", "agent", "runner", "verifier", "system"] as const)("anyone proposes (%s), and the proposal is a candidate", (kind) => {
    // A text names no fingerprint (the table's rows show the refusal when it does, for every actor).
    const state = step(LessonRules.initial, propose({ kind, id: "x" }, body({ fingerprints: [] }), null))
    expect(statusOf(state)).toBe("candidate")
    expect((state as LessonRules.View).proposedBy).toEqual({ kind, id: "x" })
  })

  it.each([
    ["a failure", recordFailure(failure("r-x", T0 + 1, { projectId: "p-2" }))],
    ["a success", recordSuccess(success("r-x", T0 + 1, { projectId: "p-2" }))],
    ["a guard check", recordGuard(guardCheck("before", "c1", 1, { projectId: "p-2" }))],
    ["a lesson shown", recordShown(shown("r-x", T0 + 1, { projectId: "p-2" }))]
  ])("%s from another project is refused", (_, command) => {
    const refused = refusal(reach("candidate"), command)
    expect(refused.code).toBe("wrong_project")
    expect(refused.reason).toBe("the fact is from project p-2, the lesson belongs to p-1.")
    expect(refused.fix).toBe("Record a fact only on the lessons of its own project.")
  })

  it("a failure with another fingerprint is not this lesson's", () => {
    const refused = refusal(reach("candidate"), recordFailure(failure("r-x", T0 + 1, { fingerprint: OTHER_FP })))
    expect(refused.code).toBe("fingerprint_mismatch")
    expect(refused.reason).toBe(`the failure's fingerprint ${OTHER_FP.key} is not one of the lesson's (${body().fingerprints[0]}).`)
    expect(refused.fix).toBe(
      "Record a failure only on the lessons whose fingerprints it carries; a person may add a fingerprint by editing the lesson."
    )
    // A second fingerprint comes only from a person's signed edit.
    const candidate = reach("candidate")
    const two = step(candidate, control("Edit", candidate, { edited: body({ fingerprints: [body().fingerprints[0], OTHER_FP.key] }) }))
    expect(refusal(two, recordFailure(failure("r-x", T0 + 1, { fingerprint: { ...OTHER_FP, key: `fp:exit:9:${"0".repeat(16)}`, ending: "exit:9", digest: "0".repeat(16) } }))).reason)
      .toContain(`(${body().fingerprints[0]}, ${OTHER_FP.key})`)
    const bare = step(LessonRules.initial, propose(agent, body({ fingerprints: [] })))
    expect(refusal(bare, recordFailure(failure("r-x", T0 + 1))).reason).toContain("is not one of the lesson's (none)")
  })

  it("a guard check needs a guard, and the lesson's current one", () => {
    const bare = step(LessonRules.initial, propose(system, body({ guard: null })))
    const none = refusal(bare, recordGuard(guardCheck("before", "c1", 1)))
    expect(none.code).toBe("no_guard")
    expect(none.reason).toBe("the lesson proposes no guard to check.")
    expect(none.fix).toBe("A person adds one by editing the lesson (ratchet lessons edit L-1 --file lesson.yaml).")
    const other = Lesson.guardDigest({ description: "another guard", command: null })
    const stale = refusal(reach("candidate"), recordGuard(guardCheck("before", "c1", 1, { guardDigest: other })))
    expect(stale.code).toBe("stale_guard")
    expect(stale.reason).toBe(`the check ran guard ${other}, but the lesson's guard is now ${Lesson.guardDigest(body().guard!)}.`)
    expect(stale.fix).toBe("Run the lesson's current guard and record that check.")
  })

  it("a fact on no lesson or a terminal one says what to do", () => {
    const none = refusal(LessonRules.initial, recordFailure(failure("r-x", T0 + 1)))
    expect(none.message).toBe("RecordFailure refused: there is no such lesson. Record facts only about a lesson that was proposed.")
    const closed = refusal(reach("rejected"), recordSuccess(success("r-x", T0 + 1)))
    expect(closed.message).toBe(
      "RecordSuccess refused for lesson L-1 (rejected): a rejected lesson takes no more facts. Propose a new candidate if the failure matters again."
    )
  })

  it("proposing twice is refused", () => {
    expect(refusal(reach("candidate"), propose()).message).toBe(
      "Propose refused for lesson L-1 (candidate): a lesson with this id exists already. Propose it under a new id, or edit the existing one."
    )
  })

  it("the evaluator, not the recorder, makes a transition, with the rule's version", () => {
    const decided = LessonDecider.decide(recordFailure(failure("r-x", T0 + 5), runner), reach("candidate"))
    expect(decided).toEqual(
      Either.right([
        { _tag: "LessonFailureObserved", version: 1, actor: runner, at: T0 + 5, lessonId: LESSON, failure: failure("r-x", T0 + 5) },
        {
          _tag: "LessonTransitioned",
          version: 1,
          actor: { kind: "system", id: "lesson-evaluator" },
          at: T0 + 5,
          lessonId: LESSON,
          from: "candidate",
          to: "probationary",
          rule: "observed",
          ruleVersion: "ratchet-lessons/1",
          runIds: ["r-x"]
        }
      ])
    )
  })
})
