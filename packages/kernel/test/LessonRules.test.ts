/**
 * The evaluator's thresholds at their boundaries (the issue's "Done when"): two runs with the same
 * fingerprint verify, one run failing twice does not; three eligible unassisted successes in scope
 * over a clock moved seven days expire a probationary lesson, two successes or six days do not; an
 * injected, assisted, ineligible, out-of-scope or earlier success never counts; time alone and a
 * proposal alone move nothing. Then the guard's reproduction, how a success stands, the edge table
 * against one written by hand, `evolve`'s bookkeeping, and properties over arbitrary orders.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import type * as Lesson from "../src/Lesson.js"
import * as LessonDecider from "../src/LessonDecider.js"
import type * as LessonEvent from "../src/LessonEvent.js"
import * as LessonRules from "../src/LessonRules.js"
import {
  agent,
  alice,
  body,
  control,
  DAY,
  evaluate,
  failure,
  guardCheck,
  LESSON,
  propose,
  proposed,
  reach,
  recordFailure,
  recordGuard,
  recordSuccess,
  run,
  statusOf,
  step,
  success,
  system,
  T0,
  verifier
} from "./lessons.js"

const encodeView = Schema.encodeSync(LessonRules.View)
const decodeView = Schema.decodeUnknownEither(LessonRules.View)

const candidate = () => step(LessonRules.initial, propose())
const view = (state: LessonRules.State): LessonRules.View => state as LessonRules.View

/** The transitions `command` decides against `state`, as [from, to, rule]. */
const transitions = (state: LessonRules.State, command: LessonDecider.Command) =>
  Either.getOrThrow(LessonDecider.decide(command, state)).flatMap((event) =>
    event._tag === "LessonTransitioned" ? [[event.from, event.to, event.rule] as const] : []
  )

describe("LessonRules: a candidate becomes verified only on evidence", () => {
  it("the same fingerprint in two independent runs verifies it", () => {
    const state = run(candidate(), [recordFailure(failure("r-a", T0 + 1)), recordFailure(failure("r-b", T0 + 2))])
    expect(statusOf(state)).toBe("verified")
    expect(view(state).failureRuns).toEqual(["r-a", "r-b"])
  })

  it("one run failing twice the same way does not: it is probationary", () => {
    const state = run(candidate(), [recordFailure(failure("r-a", T0 + 1)), recordFailure(failure("r-a", T0 + 2, { attempt: 2 }))])
    expect(statusOf(state)).toBe("probationary")
    expect(view(state).failures).toBe(2)
    expect(view(state).failureRuns).toEqual(["r-a"])
  })

  it("both runs' failures arriving at once go straight to verified, by two_runs", () => {
    const decided = Either.getOrThrow(
      LessonDecider.decide(recordFailure(failure("r-b", T0 + 2)), run(candidate(), [recordFailure(failure("r-a", T0 + 1))]))
    )
    expect(decided.map((event) => event._tag)).toEqual(["LessonFailureObserved", "LessonTransitioned"])
    expect(decided[1]).toMatchObject({ from: "probationary", to: "verified", rule: "two_runs", ruleVersion: "ratchet-lessons/1", runIds: ["r-a", "r-b"] })
  })

  it("creating a candidate verifies nothing, whatever evidence its text cites, however long it waits", () => {
    const cited = body({ evidenceRefs: ["run:r-a", "run:r-b", "run:r-c"], fingerprints: [failure("x", 0).fingerprint.key] })
    const state = step(LessonRules.initial, propose(system, cited))
    expect(statusOf(state)).toBe("candidate")
    for (const at of [T0, T0 + 7 * DAY, T0 + 1000 * DAY]) expect(transitions(state, evaluate(at))).toEqual([])
  })

  it("reproducible guard evidence verifies it: failing before the fix, passing after, on two trees", () => {
    const state = run(candidate(), [recordGuard(guardCheck("before", "c1", 1))])
    expect(statusOf(state)).toBe("candidate")
    expect(transitions(state, recordGuard(guardCheck("after", "c2", 0)))).toEqual([["candidate", "verified", "guard_reproduced"]])
    const decided = Either.getOrThrow(LessonDecider.decide(recordGuard(guardCheck("after", "c2", 0)), state))
    expect(decided[1]).toMatchObject({ runIds: ["g-before-c1", "g-after-c2"] })
  })

  it.each([
    ["only a failing before-check", [guardCheck("before", "c1", 1), guardCheck("before", "c3", 2)]],
    ["only a passing after-check", [guardCheck("after", "c2", 0)]],
    ["before and after on the same tree", [guardCheck("before", "c1", 1), guardCheck("after", "c1", 0)]],
    ["a before-check that passed too (flaky)", [guardCheck("before", "c1", 1), guardCheck("before", "c4", 0), guardCheck("after", "c2", 0)]],
    ["an after-check that failed too (flaky)", [guardCheck("before", "c1", 1), guardCheck("after", "c4", 1), guardCheck("after", "c2", 0)]],
    ["checks that never answered (killed)", [guardCheck("before", "c1", null), guardCheck("after", "c2", null)]]
  ])("guard evidence that is not reproducible verifies nothing: %s", (_, checks) => {
    expect(statusOf(run(candidate(), checks.map((check) => recordGuard(check))))).toBe("candidate")
  })

  it("a killed check neither counts nor contradicts", () => {
    const state = run(candidate(), [recordGuard(guardCheck("before", "c1", null)), recordGuard(guardCheck("before", "c1", 1))])
    expect(view(state).guardContradicted).toBe(false)
    expect(statusOf(step(state, recordGuard(guardCheck("after", "c2", 0))))).toBe("verified")
  })

  it("editing the guard discards the old guard's checks; editing anything else keeps them", () => {
    const checked = run(candidate(), [recordGuard(guardCheck("before", "c1", 1))])
    const other = body({ trigger: "counting rows in the report" })
    const kept = step(checked, control("Edit", checked, { edited: other }))
    expect(view(kept).guardBefore).toEqual([{ commit: "c1", runId: "g-before-c1" }])
    const guard = { description: "a test of the header row", command: "npm test -- header" }
    const reset = step(checked, control("Edit", checked, { edited: body({ guard }) }))
    expect(view(reset).guardBefore).toEqual([])
    const flaky = run(candidate(), [recordGuard(guardCheck("after", "c1", 1))])
    expect(view(flaky).guardContradicted).toBe(true)
    expect(view(step(flaky, control("Edit", flaky, { edited: body({ guard }) }))).guardContradicted).toBe(false)
    const otherCommand = { description: body().guard!.description, command: "npm test -- rows" }
    expect(view(step(checked, control("Edit", checked, { edited: body({ guard: otherCommand }) }))).guardBefore).toEqual([])
    const unguarded = step(checked, control("Edit", checked, { edited: body({ guard: null }) }))
    expect(view(unguarded).guardBefore).toEqual([])
  })

  it("verification wins over expiry when both hold", () => {
    const state = run(candidate(), [
      recordFailure(failure("r-a", T0 + 1)),
      recordSuccess(success("r-s1", T0 + 2)),
      recordSuccess(success("r-s2", T0 + 3)),
      recordSuccess(success("r-s3", T0 + 4))
    ])
    expect(transitions(state, recordFailure(failure("r-b", T0 + 1), verifier, T0 + 8 * DAY))).toEqual([["probationary", "verified", "two_runs"]])
  })
})

describe("LessonRules: a lesson expires only when outlived", () => {
  const probationary = () => run(candidate(), [recordFailure(failure("r-a", T0 + 1))])
  const successes = (count: number, from = T0 + 10) =>
    Array.from({ length: count }, (_, index) => recordSuccess(success(`r-s${index}`, from + index)))

  it("three eligible unassisted successes in scope over a clock moved seven days expire a probationary lesson", () => {
    const state = run(probationary(), successes(3))
    expect(statusOf(state)).toBe("probationary")
    const decided = Either.getOrThrow(LessonDecider.decide(evaluate(T0 + 7 * DAY), state))
    expect(decided).toEqual([
      {
        _tag: "LessonTransitioned",
        version: 1,
        actor: LessonRules.evaluator,
        at: T0 + 7 * DAY,
        lessonId: LESSON,
        from: "probationary",
        to: "expired",
        rule: "outlived",
        ruleVersion: LessonRules.ruleVersion,
        runIds: ["r-s2", "r-s1", "r-s0"]
      }
    ])
  })

  it("a candidate expires the same way", () => {
    expect(transitions(run(candidate(), successes(3)), evaluate(T0 + 7 * DAY))).toEqual([["candidate", "expired", "outlived"]])
  })

  it("the third success arriving after seven days expires it in the same decision", () => {
    const state = run(probationary(), successes(2))
    expect(transitions(state, recordSuccess(success("r-late", T0 + 7 * DAY)))).toEqual([["probationary", "expired", "outlived"]])
  })

  it("two successes do not, however long it waits", () => {
    const state = run(probationary(), successes(2))
    for (const at of [T0 + 7 * DAY, T0 + 365 * DAY]) expect(transitions(state, evaluate(at))).toEqual([])
  })

  it("six days do not; seven days less a millisecond do not; seven days do", () => {
    const state = run(probationary(), successes(3))
    expect(transitions(state, evaluate(T0 + 6 * DAY))).toEqual([])
    expect(transitions(state, evaluate(T0 + 7 * DAY - 1))).toEqual([])
    expect(transitions(state, evaluate(T0 + 7 * DAY))).toEqual([["probationary", "expired", "outlived"]])
  })

  it("time alone never expires a lesson", () => {
    for (const at of [T0 + 7 * DAY, T0 + 10_000 * DAY]) {
      expect(transitions(candidate(), evaluate(at))).toEqual([])
      expect(transitions(probationary(), evaluate(at))).toEqual([])
    }
  })

  it("three successes of one run are one", () => {
    const same = [T0 + 10, T0 + 11, T0 + 12].map((at) => recordSuccess(success("r-s", at)))
    expect(transitions(run(probationary(), same), evaluate(T0 + 8 * DAY))).toEqual([])
  })

  it.each([
    ["ineligible", { eligible: false }, "ineligible"],
    ["shown the lesson (injected)", { shown: ["L-0", LESSON] }, "shown"],
    ["assisted", { assisted: true }, "assisted"],
    ["outside its paths", { scope: { paths: ["src/billing/a.ts"], taskType: "bugfix" } }, "out_of_scope"],
    ["of another task type", { scope: { paths: ["src/report/rows.ts"], taskType: "feature" } }, "out_of_scope"],
    ["of no task type", { scope: { paths: ["src/report/rows.ts"], taskType: null } }, "out_of_scope"],
    ["that changed nothing", { scope: { paths: [], taskType: "bugfix" } }, "out_of_scope"],
    ["from before the lesson", { at: T0 - 1 }, "before_lesson"]
  ] as const)("a success %s does not count", (_, overrides, standing) => {
    const facts = [0, 1, 2].map((index) => success(`r-x${index}`, T0 + 10 + index, overrides as Partial<Lesson.Exposure>))
    const decided = Either.getOrThrow(LessonDecider.decide(recordSuccess(facts[0]!), probationary()))
    expect(decided[0]).toMatchObject({ _tag: "LessonSuccessObserved", standing })
    const state = run(probationary(), facts.map((fact) => recordSuccess(fact, system, T0 + 10)))
    expect(view(state).successes).toEqual([])
    expect(transitions(state, evaluate(T0 + 8 * DAY))).toEqual([])
  })

  it("a recurrence after the successes keeps it: only successes after the last failure count", () => {
    const recurred = run(probationary(), [...successes(3), recordFailure(failure("r-a", T0 + 100, { attempt: 2 }))])
    expect(statusOf(recurred)).toBe("probationary")
    expect(transitions(recurred, evaluate(T0 + 8 * DAY))).toEqual([])
    const outlived = run(recurred, successes(3, T0 + 200))
    expect(transitions(outlived, evaluate(T0 + 8 * DAY))).toEqual([["probationary", "expired", "outlived"]])
  })

  it("a success at the very time of the last recurrence is not after it", () => {
    const same = run(probationary(), [recordSuccess(success("r-edge", T0 + 1)), ...successes(2, T0 + 10)])
    expect(transitions(same, evaluate(T0 + 8 * DAY))).toEqual([])
    const after = run(probationary(), [recordSuccess(success("r-edge", T0 + 2)), ...successes(2, T0 + 10)])
    expect(transitions(after, evaluate(T0 + 8 * DAY))).toEqual([["probationary", "expired", "outlived"]])
  })

  it("a lesson proposed at time zero counts its successes from time zero", () => {
    const zero = step(LessonRules.initial, { ...propose(), at: 0 })
    const state = run(zero, [0, 1, 2].map((at) => recordSuccess(success(`r-z${at}`, at))))
    expect(view(state).successes.map((s) => s.at)).toEqual([2, 1, 0])
    expect(transitions(state, evaluate(7 * DAY))).toEqual([["candidate", "expired", "outlived"]])
  })

  it("a failure recorded late but older than the successes does not discount them", () => {
    const state = run(candidate(), [...successes(3, T0 + 50), recordFailure(failure("r-a", T0 + 20), undefined, T0 + 60)])
    expect(transitions(state, evaluate(T0 + 8 * DAY))).toEqual([["probationary", "expired", "outlived"]])
  })

  it("verified, enforced and compiled lessons never expire", () => {
    for (const where of ["verified", "enforced", "compiled"] as const) {
      const state = run(reach(where), successes(5, T0 + 100))
      expect(transitions(state, evaluate(T0 + 30 * DAY))).toEqual([])
      expect(statusOf(state)).toBe(where)
    }
  })
})

describe("LessonRules.inScope and standingOf", () => {
  const scope = (paths: ReadonlyArray<string>, taskTypes: ReadonlyArray<string>): Lesson.Scope => ({ projectId: "p-1", paths, taskTypes })
  const table: ReadonlyArray<readonly [string, Lesson.Scope, Partial<Lesson.Exposure>, boolean]> = [
    ["no globs, no types: every run of the project", scope([], []), {}, true],
    ["another project", scope([], []), { projectId: "p-2" }, false],
    ["a changed path under a glob", scope(["src/report/**"], []), {}, true],
    ["a changed path named by a plain directory", scope(["src/report"], []), {}, true],
    ["one of several paths under one of several globs", scope(["docs", "src/**/rows.ts"], []), { scope: { paths: ["a.md", "src/report/rows.ts"], taskType: null } }, true],
    ["no changed path under the globs", scope(["docs/**"], []), {}, false],
    ["no changed path at all", scope(["src/**"], []), { scope: { paths: [], taskType: "bugfix" } }, false],
    ["the task type among the types", scope([], ["feature", "bugfix"]), {}, true],
    ["another task type", scope([], ["feature"]), {}, false],
    ["no task type where types are named", scope([], ["bugfix"]), { scope: { paths: ["src/report/rows.ts"], taskType: null } }, false],
    ["the path in scope but not the type", scope(["src/**"], ["feature"]), {}, false],
    ["the type in scope but not the path", scope(["lib/**"], ["bugfix"]), {}, false]
  ]
  it.each(table)("%s → %s", (_, lessonScope, overrides, expected) => {
    expect(LessonRules.inScope(lessonScope, success("r-1", T0, overrides))).toBe(expected)
  })

  it("the first reason a success does not count is the one recorded", () => {
    const lesson = view(candidate())
    expect(LessonRules.standingOf(lesson, success("r", T0 - 1, { eligible: false, shown: [LESSON], assisted: true }))).toBe("ineligible")
    expect(LessonRules.standingOf(lesson, success("r", T0 - 1, { shown: [LESSON], assisted: true }))).toBe("shown")
    expect(LessonRules.standingOf(lesson, success("r", T0 - 1, { assisted: true, projectId: "p-9" }))).toBe("assisted")
    expect(LessonRules.standingOf(lesson, success("r", T0 - 1, { projectId: "p-9" }))).toBe("out_of_scope")
    expect(LessonRules.standingOf(lesson, success("r", T0 - 1))).toBe("before_lesson")
    expect(LessonRules.standingOf(lesson, success("r", T0))).toBe("counted")
    expect(LessonRules.standingOf(lesson, success("r", T0, { shown: ["L-other"] }))).toBe("counted")
  })
})

describe("LessonRules.edges", () => {
  it("is exactly the table written by hand", () => {
    const byHand = [
      "candidate → probationary by observed",
      "candidate → verified by two_runs",
      "probationary → verified by two_runs",
      "candidate → verified by guard_reproduced",
      "probationary → verified by guard_reproduced",
      "candidate → expired by outlived",
      "probationary → expired by outlived",
      "candidate → enforced by pin",
      "probationary → enforced by pin",
      "verified → enforced by pin",
      "enforced → compiled by compile",
      "candidate → rejected by reject",
      "probationary → rejected by reject",
      "verified → rejected by reject",
      "enforced → rejected by reject",
      "verified → deprecated by deprecate",
      "enforced → deprecated by deprecate",
      "compiled → deprecated by deprecate",
      "candidate → superseded by supersede",
      "probationary → superseded by supersede",
      "verified → superseded by supersede",
      "enforced → superseded by supersede",
      "compiled → superseded by supersede"
    ]
    expect(LessonRules.edges.map((edge) => `${edge.from} → ${edge.to} by ${edge.by}`).sort()).toEqual([...byHand].sort())
  })

  it("no edge leaves a terminal status, and none is made by an agent's word", () => {
    for (const edge of LessonRules.edges) {
      expect(["expired", "rejected", "superseded", "deprecated"]).not.toContain(edge.from)
      expect(["observed", "two_runs", "guard_reproduced", "outlived", "pin", "reject", "deprecate", "supersede", "compile"]).toContain(edge.by)
    }
  })
})

describe("LessonRules.evolve", () => {
  const at = (event: LessonEvent.Event, time: number) => ({ ...event, at: time })
  const success$ = (runId: string, time: number, standing: LessonEvent.Standing = "counted"): LessonEvent.Event => ({
    _tag: "LessonSuccessObserved",
    version: 1,
    actor: system,
    at: time,
    lessonId: LESSON,
    exposure: success(runId, time),
    standing
  })
  const failure$ = (runId: string, time: number): LessonEvent.Event => ({
    _tag: "LessonFailureObserved",
    version: 1,
    actor: system,
    at: time,
    lessonId: LESSON,
    failure: failure(runId, time)
  })

  it("an event before the proposal changes nothing, and a second proposal does not replace the first", () => {
    expect(LessonRules.evolve(LessonRules.initial, failure$("r-a", T0))).toEqual(LessonRules.initial)
    const first = LessonRules.fold([proposed()])
    expect(LessonRules.evolve(first, at(proposed(agent, body({ trigger: "else" })), T0 + 5))).toBe(first)
  })

  it("a proposal is a candidate at revision 1, by its proposer, created when proposed", () => {
    expect(LessonRules.fold([proposed(agent)])).toEqual({
      _tag: "Lesson",
      id: LESSON,
      status: "candidate",
      revision: 1,
      body: body(),
      proposedBy: agent,
      createdAt: T0,
      changedAt: T0,
      supersededBy: null,
      compiledAs: null,
      failureRuns: [],
      failures: 0,
      lastFailureAt: null,
      successes: [],
      guardBefore: [],
      guardAfter: [],
      guardContradicted: false,
      shownTo: []
    })
  })

  it("keeps the latest sixteen runs a lesson was shown to, oldest first, each once, and moves no status", () => {
    const shown$ = (runId: string): LessonEvent.Event => ({
      _tag: "LessonShown",
      version: 1,
      actor: system,
      at: T0 + 1,
      lessonId: LESSON,
      shown: { runId, projectId: "p-1", taskId: "t-1", stepId: null, attempt: null, via: "hook", at: T0 + 1 },
      status: "verified"
    })
    const twice = view(LessonRules.fold([proposed(), shown$("r-a"), shown$("r-b"), shown$("r-a")]))
    expect(twice.shownTo).toEqual(["r-b", "r-a"])
    expect(twice.status).toBe("candidate")
    expect(twice.changedAt).toBe(T0)
    const runs = Array.from({ length: 20 }, (_, index) => `r-${String(index).padStart(2, "0")}`)
    expect(view(LessonRules.fold([proposed(), ...runs.map(shown$)])).shownTo).toEqual(runs.slice(4))
    // A view stored before runs were recorded as shown reads as shown to none.
    const { shownTo: _, ...stored } = Schema.encodeSync(LessonRules.View)(view(LessonRules.fold([proposed(), shown$("r-a")])))
    expect(Schema.decodeUnknownSync(LessonRules.View)(stored).shownTo).toEqual([])
  })

  it("keeps the latest three counted successes, one per run at its latest, whatever the order", () => {
    const events = [success$("r-1", T0 + 5), success$("r-2", T0 + 1), success$("r-3", T0 + 9), success$("r-1", T0 + 2), success$("r-4", T0 + 7), success$("r-5", T0 + 3, "assisted")]
    expect(view(LessonRules.fold([proposed(), ...events])).successes).toEqual([
      { runId: "r-3", at: T0 + 9 },
      { runId: "r-4", at: T0 + 7 },
      { runId: "r-1", at: T0 + 5 }
    ])
    const ties = [success$("r-b", T0 + 1), success$("r-c", T0 + 1), success$("r-a", T0 + 1), success$("r-d", T0 + 1)]
    expect(view(LessonRules.fold([proposed(), ...ties])).successes.map((s) => s.runId)).toEqual(["r-a", "r-b", "r-c"])
  })

  it("keeps failure runs distinct and sorted, at most sixteen, counts every failure and the latest time", () => {
    const runs = Array.from({ length: 20 }, (_, index) => `r-${String(index).padStart(2, "0")}`).reverse()
    const state = view(LessonRules.fold([proposed(), ...runs.map((runId, index) => failure$(runId, T0 + 100 - index)), failure$("r-00", T0 + 1)]))
    expect(state.failureRuns).toEqual(runs.slice().sort().slice(0, 16))
    expect(state.failures).toBe(21)
    expect(state.lastFailureAt).toBe(T0 + 100)
  })

  it("records each guard check once, sorted by tree then run, at most sixteen a side", () => {
    const check = (side: "before" | "after", commit: string, exitCode: number, runId = `g-${side}-${commit}`): LessonEvent.Event => ({
      _tag: "LessonGuardChecked",
      version: 1,
      actor: system,
      at: T0,
      lessonId: LESSON,
      check: guardCheck(side, commit, exitCode, { runId })
    })
    const state = view(LessonRules.fold([proposed(), check("before", "c9", 1), check("before", "c1", 3), check("before", "c9", 1), check("after", "c5", 0)]))
    expect(state.guardBefore).toEqual([{ commit: "c1", runId: "g-before-c1" }, { commit: "c9", runId: "g-before-c9" }])
    expect(state.guardAfter).toEqual([{ commit: "c5", runId: "g-after-c5" }])
    expect(state.guardContradicted).toBe(false)
    const sameTree = view(LessonRules.fold([proposed(), check("before", "c1", 1, "g-z"), check("before", "c1", 1)]))
    expect(sameTree.guardBefore).toEqual([{ commit: "c1", runId: "g-before-c1" }, { commit: "c1", runId: "g-z" }])
    const many = view(LessonRules.fold([proposed(), ...Array.from({ length: 20 }, (_, index) => check("after", `c${String(index).padStart(2, "0")}`, 0))]))
    expect(many.guardAfter.map((entry) => entry.commit)).toEqual(Array.from({ length: 16 }, (_, index) => `c${String(index).padStart(2, "0")}`))
  })

  it("a transition and a control set the status and when it changed; an inspection changes nothing", () => {
    const state = run(candidate(), [recordFailure(failure("r-a", T0 + 40))])
    expect(view(state).changedAt).toBe(T0 + 40)
    const pinned = step(state, control("Pin", state, { at: T0 + 50 }))
    expect(view(pinned)).toMatchObject({ status: "enforced", changedAt: T0 + 50, supersededBy: null, compiledAs: null })
    const inspected = step(pinned, { _tag: "Inspect", actor: alice, at: T0 + 60 })
    expect(inspected).toEqual(pinned)
  })

  it("the view is a schema: a folded lesson encodes and decodes to itself", () => {
    const state = view(reach("compiled"))
    expect(Either.getOrThrow(decodeView(encodeView(state)))).toEqual(state)
  })
})

describe("LessonRules: properties", () => {
  it("evolve keeps exactly what a plain reference computes: sorted distinct runs, the latest successes, sorted checks", () => {
    const runId = fc.constantFrom("r-a", "r-b", "r-c", "r-d", "r-e", "r-f")
    const fact = fc.oneof(
      fc.record({ kind: fc.constant("failure" as const), runId, at: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ kind: fc.constant("success" as const), runId, at: fc.integer({ min: 0, max: 50 }) }),
      fc.record({ kind: fc.constant("check" as const), runId, commit: fc.constantFrom("c1", "c2", "c3"), side: fc.constantFrom("before" as const, "after" as const) })
    )
    fc.assert(
      fc.property(fc.array(fact, { maxLength: 30 }), (facts) => {
        const events: Array<LessonEvent.Event> = [{ ...proposed(), at: 0 }]
        for (const f of facts) {
          const meta = { version: 1 as const, actor: system, at: 0, lessonId: LESSON }
          if (f.kind === "failure") events.push({ ...meta, _tag: "LessonFailureObserved", failure: failure(f.runId, f.at) })
          else if (f.kind === "success") events.push({ ...meta, _tag: "LessonSuccessObserved", exposure: success(f.runId, f.at), standing: "counted" })
          else events.push({ ...meta, _tag: "LessonGuardChecked", check: guardCheck(f.side, f.commit, f.side === "before" ? 1 : 0, { runId: f.runId }) })
        }
        const state = view(LessonRules.fold(events))
        // The references, written plainly: no comparator shared with the code under test.
        const failed = facts.flatMap((f) => (f.kind === "failure" ? [f.runId] : []))
        expect(state.failureRuns).toEqual(["r-a", "r-b", "r-c", "r-d", "r-e", "r-f"].filter((r) => failed.includes(r)))
        const best = new Map<string, number>()
        for (const f of facts) if (f.kind === "success") best.set(f.runId, Math.max(f.at, best.get(f.runId) ?? f.at))
        const ranked: Array<{ runId: string; at: number }> = []
        for (let at = 50; at >= 0; at--) {
          for (const r of ["r-a", "r-b", "r-c", "r-d", "r-e", "r-f"]) if (best.get(r) === at) ranked.push({ runId: r, at })
        }
        expect(state.successes).toEqual(ranked.slice(0, 3))
        for (const side of ["before", "after"] as const) {
          const seen: Array<{ commit: string; runId: string }> = []
          for (const commit of ["c1", "c2", "c3"]) {
            for (const r of ["r-a", "r-b", "r-c", "r-d", "r-e", "r-f"]) {
              if (facts.some((f) => f.kind === "check" && f.side === side && f.commit === commit && f.runId === r)) seen.push({ commit, runId: r })
            }
          }
          expect(side === "before" ? state.guardBefore : state.guardAfter).toEqual(seen)
        }
      })
    )
  })

  const runIds = fc.uniqueArray(fc.stringMatching(/^r-[a-z0-9]{1,6}$/), { minLength: 0, maxLength: 6 })

  it("the order in which independent runs' failures arrive does not matter", () => {
    fc.assert(
      fc.property(runIds, fc.nat({ max: 4 }), fc.infiniteStream(fc.nat()), (ids, repeats, noise) => {
        const facts = ids.flatMap((runId, index) => Array.from({ length: 1 + (index % (repeats + 1)) }, (_, k) => failure(runId, T0 + 1 + k)))
        const shuffled = [...facts].sort(() => (noise.next().value % 3) - 1)
        const a = run(candidate(), facts.map((fact) => recordFailure(fact)))
        const b = run(candidate(), shuffled.map((fact) => recordFailure(fact)))
        expect(statusOf(a)).toBe(statusOf(b))
        expect(view(a).failureRuns).toEqual(view(b).failureRuns)
        expect(statusOf(a)).toBe(ids.length >= 2 ? "verified" : ids.length === 1 ? "probationary" : "candidate")
      })
    )
  })

  it("any number of failures of one run never verifies", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 2000 * DAY }), (count, later) => {
        const state = run(candidate(), Array.from({ length: count }, (_, k) => recordFailure(failure("r-one", T0 + k, { attempt: 1 + k }))))
        expect(statusOf(state)).toBe("probationary")
        expect(transitions(state, evaluate(T0 + later))).toEqual([])
      })
    )
  })

  it("whatever facts arrive, a status moves only by a rule met or a person's receipt, and every rule's move records its version", () => {
    const fact = fc.oneof(
      fc.record({ kind: fc.constant("failure" as const), run: fc.constantFrom("r-1", "r-2", "r-3"), at: fc.integer({ min: 0, max: 10 * DAY }) }),
      fc.record({
        kind: fc.constant("success" as const),
        run: fc.constantFrom("r-4", "r-5", "r-6", "r-7"),
        at: fc.integer({ min: 0, max: 10 * DAY }),
        eligible: fc.boolean(),
        assisted: fc.boolean()
      }),
      fc.record({ kind: fc.constant("evaluate" as const), at: fc.integer({ min: 0, max: 20 * DAY }) }),
      fc.record({ kind: fc.constant("agent-pin" as const) })
    )
    fc.assert(
      fc.property(fc.array(fact, { maxLength: 25 }), (facts) => {
        let state = candidate()
        const failed = new Set<string>()
        for (const f of facts) {
          const command: LessonDecider.Command = f.kind === "failure"
            ? recordFailure(failure(f.run, T0 + f.at))
            : f.kind === "success"
            ? recordSuccess(success(f.run, T0 + f.at, { eligible: f.eligible, assisted: f.assisted }))
            : f.kind === "evaluate"
            ? evaluate(T0 + f.at)
            : control("Pin", state, { actor: agent })
          const decided = LessonDecider.decide(command, state)
          if (Either.isLeft(decided)) {
            expect(["terminal_status", "person_only"]).toContain(decided.left.code)
            continue
          }
          for (const event of decided.right) {
            if (event._tag === "LessonTransitioned") {
              expect(event.ruleVersion).toBe("ratchet-lessons/1")
              expect(event.actor).toEqual(LessonRules.evaluator)
            }
            expect(event._tag).not.toBe("LessonControlled")
          }
          if (f.kind === "failure") failed.add(f.run)
          state = decided.right.reduce(LessonRules.evolve, state)
          const status = statusOf(state)
          if (status === "verified") expect(failed.size).toBeGreaterThanOrEqual(2)
          if (status === "expired") expect(view(state).successes.length).toBe(3)
          expect(["candidate", "probationary", "verified", "expired"]).toContain(status)
        }
      })
    )
  })
})
