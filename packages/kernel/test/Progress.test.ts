/**
 * The run's pure state: a step's standing from its attempt and intent rows (every attempt state,
 * the latest attempt chosen by number), the next step in `needs` order, the pending steps, the
 * recovery decision table for an attempt a dead runner left open, a probe's verdict, and failure
 * fingerprints. Every table here is written by hand from the module's documented table, and each
 * asserts the rejected answers as well as the accepted ones; hostile output (megabytes, control
 * characters, lone surrogates) must never throw.
 */
import * as Digest from "../src/Digest.js"
import type * as Attempt from "../src/Attempt.js"
import type * as Plan from "../src/Plan.js"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Progress from "../src/Progress.js"

/** A command step (or a manual one), built by hand as a decoded plan would hold it. */
const step = (
  id: string,
  extra: {
    readonly needs?: ReadonlyArray<string>
    readonly manual?: boolean
    readonly idempotent?: boolean
    readonly probe?: string
  } = {}
): Plan.Step => ({
  id,
  title: `Step ${id}`,
  acRefs: [],
  ...(extra.manual === true ? { manual: { instructions: "do it by hand" } } : { run: { command: `echo ${id}` } }),
  ...(extra.needs === undefined ? {} : { needs: extra.needs }),
  ...(extra.idempotent === undefined ? {} : { idempotent: extra.idempotent }),
  ...(extra.probe === undefined ? {} : { probe: { command: extra.probe } })
})

const planOf = (...steps: ReadonlyArray<Plan.Step>): Plan.Plan => ({ specDigest: Digest.ofCanonical("spec"), steps })

/** An attempt row; its last transition at LSN `lsn` (10 unless said: before the intents' 20). */
const attempt = (stepId: string, number: number, state: Attempt.State, lsn = 10): Progress.AttemptInfo => ({ stepId, attempt: number, state, updatedLsn: lsn })

const intent = (
  intentId: string,
  state: Progress.IntentInfo["state"],
  outcome: Progress.IntentInfo["outcome"] = null,
  stepId = "a",
  number = 1,
  lsn = 20
): Progress.IntentInfo => ({ intentId, stepId, attempt: number, state, outcome, updatedLsn: lsn })

// ---------------------------------------------------------------------------------------------
// recoveryOf
// ---------------------------------------------------------------------------------------------

describe("Progress.recoveryOf", () => {
  const plain = step("a")
  const idempotent = step("a", { idempotent: true })
  const probed = step("a", { probe: "test -f done" })
  const both = step("a", { probe: "test -f done", idempotent: true })
  const notIdempotent = step("a", { idempotent: false })
  const manual = step("a", { manual: true })
  const { run: _run, ...bare } = plain
  const agent: Plan.Step = { ...bare, agent: { host: "codex", prompt: "make the test pass" } }

  const dispatched = intent("i-1", "Dispatched")
  const pending = intent("i-0", "Pending")
  const resolvedOk = intent("i-2", "Resolved", "Succeeded")
  const resolvedFailed = intent("i-3", "Resolved", "Failed")
  const abandoned = intent("i-4", "Abandoned")

  /** (case, step, intents, expected recovery): the module's table, row by row. */
  const table: ReadonlyArray<readonly [string, Plan.Step, ReadonlyArray<Progress.IntentInfo>, Progress.Recovery]> = [
    // A manual step's open attempt awaits its worker, unless a tool call of its worker was
    // dispatched and never ended: then nobody knows whether it happened.
    ["manual, no intents", manual, [], { _tag: "AwaitWorker" }],
    ["manual, only resolved and abandoned intents", manual, [resolvedOk, resolvedFailed, abandoned], { _tag: "AwaitWorker" }],
    ["manual, a pending intent", manual, [pending], { _tag: "AwaitWorker" }],
    ["manual, a dispatched intent", manual, [dispatched], { _tag: "Indeterminate", intentId: "i-1" }],
    ["manual, dispatched among resolved ones", manual, [resolvedOk, dispatched], { _tag: "Indeterminate", intentId: "i-1" }],
    // An agent step is never re-run: nothing dispatched is a clean cancel, a dispatched call that
    // did not resolve leaves the attempt Indeterminate.
    ["agent, no intents", agent, [], { _tag: "CancelClean" }],
    ["agent, only settled and pending intents", agent, [resolvedOk, abandoned, pending], { _tag: "CancelClean" }],
    ["agent, a dispatched intent", agent, [dispatched], { _tag: "Indeterminate", intentId: "i-1" }],
    ["agent, dispatched among resolved ones", agent, [resolvedFailed, dispatched], { _tag: "Indeterminate", intentId: "i-1" }],
    // Nothing dispatched: nothing external happened.
    ["no intents", plain, [], { _tag: "CancelClean" }],
    ["no intents, probe declared", probed, [], { _tag: "CancelClean" }],
    ["no intents, idempotent", idempotent, [], { _tag: "CancelClean" }],
    ["only a pending intent", plain, [pending], { _tag: "CancelClean" }],
    ["only a pending intent, probe declared", probed, [pending], { _tag: "CancelClean" }],
    ["only resolved intents", plain, [resolvedOk, resolvedFailed], { _tag: "CancelClean" }],
    ["only an abandoned intent", plain, [abandoned], { _tag: "CancelClean" }],
    ["resolved, abandoned and pending", probed, [resolvedOk, abandoned, pending], { _tag: "CancelClean" }],
    // One dispatched and unresolved.
    ["dispatched, probe", probed, [dispatched], { _tag: "Probe", command: "test -f done", intentId: "i-1" }],
    ["dispatched, probe and idempotent: the probe wins", both, [dispatched], { _tag: "Probe", command: "test -f done", intentId: "i-1" }],
    ["dispatched, idempotent", idempotent, [dispatched], { _tag: "Rerun", intentId: "i-1" }],
    ["dispatched, neither", plain, [dispatched], { _tag: "Indeterminate", intentId: "i-1" }],
    ["dispatched, idempotent: false is neither", notIdempotent, [dispatched], { _tag: "Indeterminate", intentId: "i-1" }],
    ["dispatched among settled ones", plain, [resolvedOk, abandoned, pending, dispatched], { _tag: "Indeterminate", intentId: "i-1" }],
    ["dispatched among settled ones, idempotent", idempotent, [abandoned, dispatched, resolvedFailed], { _tag: "Rerun", intentId: "i-1" }]
  ]

  it.each(table)("%s", (_, target, intents, expected) => {
    expect(Progress.recoveryOf(target, intents)).toEqual(expected)
  })

  it("each recovery is reached only by its rows (the rejected set)", () => {
    const tags = ["AwaitWorker", "CancelClean", "Probe", "Rerun", "Indeterminate"] as const
    for (const tag of tags) {
      const accepted = table.filter(([, , , expected]) => expected._tag === tag).map(([name]) => name)
      const rejected = table.filter(([, , , expected]) => expected._tag !== tag).map(([name]) => name)
      expect(accepted.length, tag).toBeGreaterThan(0)
      for (const [name, target, intents] of table) {
        const actual = Progress.recoveryOf(target, intents)._tag
        if (rejected.includes(name)) expect(actual, `${name} must not be ${tag}`).not.toBe(tag)
      }
    }
  })

  it("property: without a dispatched intent a command step is always cancelled cleanly", () => {
    const settled = fc.record({
      intentId: fc.string(),
      stepId: fc.constant("a"),
      attempt: fc.constant(1),
      state: fc.constantFrom("Pending" as const, "Resolved" as const, "Abandoned" as const),
      outcome: fc.constantFrom("Succeeded" as const, "Failed" as const, null),
      updatedLsn: fc.nat()
    })
    fc.assert(
      fc.property(fc.array(settled, { maxLength: 8 }), fc.constantFrom(plain, idempotent, probed, both), (intents, target) => {
        expect(Progress.recoveryOf(target, intents)).toEqual({ _tag: "CancelClean" })
      })
    )
  })
})

// ---------------------------------------------------------------------------------------------
// probeVerdict
// ---------------------------------------------------------------------------------------------

describe("Progress.probeVerdict", () => {
  const table: ReadonlyArray<readonly [number | null, "happened" | "not_happened" | "unknown"]> = [
    [0, "happened"],
    [1, "not_happened"],
    [2, "unknown"],
    [127, "unknown"],
    [126, "unknown"],
    [255, "unknown"],
    [null, "unknown"],
    [-1, "unknown"],
    [Number.NaN, "unknown"],
    [0.5, "unknown"]
  ]
  it.each(table)("exit %s → %s", (code, expected) => {
    expect(Progress.probeVerdict(code)).toBe(expected)
  })
})

// ---------------------------------------------------------------------------------------------
// statusOf
// ---------------------------------------------------------------------------------------------

describe("Progress.statusOf", () => {
  /** (case, attempts, intents, expected standing of step "a"): by hand. */
  const table: ReadonlyArray<
    readonly [string, ReadonlyArray<Progress.AttemptInfo>, ReadonlyArray<Progress.IntentInfo>, Progress.StepStatus]
  > = [
    ["no attempts", [], [], { _tag: "NotStarted" }],
    ["only another step's attempts", [attempt("b", 1, "Succeeded")], [], { _tag: "NotStarted" }],
    ["Pending without an intent (scheduled by verification)", [attempt("a", 1, "Pending")], [], { _tag: "Scheduled", attempt: 1 }],
    ["Pending with a pending intent", [attempt("a", 1, "Pending")], [intent("i-1", "Pending")], { _tag: "Open", attempt: 1, state: "Pending" }],
    [
      "Pending, the only intent is another attempt's",
      [attempt("a", 1, "Succeeded"), attempt("a", 2, "Pending")],
      [intent("i-1", "Resolved", "Succeeded", "a", 1)],
      { _tag: "Scheduled", attempt: 2 }
    ],
    [
      "Pending after a success (a revision's successor)",
      [attempt("a", 1, "Succeeded"), attempt("a", 2, "Pending")],
      [],
      { _tag: "Scheduled", attempt: 2 }
    ],
    ["Running", [attempt("a", 1, "Running")], [], { _tag: "Open", attempt: 1, state: "Running" }],
    ["Succeeded", [attempt("a", 1, "Succeeded")], [], { _tag: "Done", attempt: 1 }],
    ["Failed", [attempt("a", 1, "Failed")], [], { _tag: "Retry", attempt: 1, state: "Failed" }],
    ["Cancelled", [attempt("a", 1, "Cancelled")], [], { _tag: "Retry", attempt: 1, state: "Cancelled" }],
    ["TimedOut", [attempt("a", 1, "TimedOut")], [], { _tag: "Retry", attempt: 1, state: "TimedOut" }],
    ["Indeterminate without intents", [attempt("a", 1, "Indeterminate")], [], { _tag: "Retry", attempt: 1, state: "Indeterminate" }],
    [
      "Indeterminate with a dispatched intent",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-1", "Dispatched")],
      { _tag: "Unsettled", attempt: 1, intentId: "i-1" }
    ],
    [
      "Indeterminate with one resolved Succeeded and one still dispatched",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-1", "Resolved", "Succeeded"), intent("i-2", "Dispatched")],
      { _tag: "Unsettled", attempt: 1, intentId: "i-2" }
    ],
    [
      "Indeterminate, settled as Succeeded",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-1", "Resolved", "Succeeded")],
      { _tag: "Done", attempt: 1 }
    ],
    [
      "Indeterminate, settled as Failed",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-1", "Resolved", "Failed")],
      { _tag: "Retry", attempt: 1, state: "Indeterminate" }
    ],
    [
      "Indeterminate, one settled Succeeded and one Failed",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-1", "Resolved", "Succeeded"), intent("i-2", "Resolved", "Failed")],
      { _tag: "Retry", attempt: 1, state: "Indeterminate" }
    ],
    [
      // a manual step's worker: one call failed (resolved at LSN 5), one never ended; recovery made
      // the attempt Indeterminate (LSN 10) and a person settled the open one as succeeded (LSN 20)
      "Indeterminate, settled Succeeded after an earlier call of the worker Failed",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-0", "Resolved", "Failed", "a", 1, 5), intent("i-1", "Resolved", "Succeeded")],
      { _tag: "Done", attempt: 1 }
    ],
    [
      "Indeterminate, settled Failed after an earlier call of the worker Succeeded",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-0", "Resolved", "Succeeded", "a", 1, 5), intent("i-1", "Resolved", "Failed")],
      { _tag: "Retry", attempt: 1, state: "Indeterminate" }
    ],
    [
      "Indeterminate, only resolutions from before it (nobody settled it)",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-0", "Resolved", "Succeeded", "a", 1, 5)],
      { _tag: "Retry", attempt: 1, state: "Indeterminate" }
    ],
    [
      "Indeterminate, only abandoned",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-1", "Abandoned")],
      { _tag: "Retry", attempt: 1, state: "Indeterminate" }
    ],
    [
      "Indeterminate, only pending",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-1", "Pending")],
      { _tag: "Retry", attempt: 1, state: "Indeterminate" }
    ],
    [
      "Indeterminate, the dispatched intent belongs to an earlier attempt",
      [attempt("a", 1, "Indeterminate"), attempt("a", 2, "Indeterminate")],
      [intent("i-1", "Dispatched", null, "a", 1), intent("i-2", "Resolved", "Succeeded", "a", 2)],
      { _tag: "Done", attempt: 2 }
    ],
    [
      "Indeterminate, the dispatched intent belongs to another step",
      [attempt("a", 1, "Indeterminate")],
      [intent("i-1", "Dispatched", null, "b", 1)],
      { _tag: "Retry", attempt: 1, state: "Indeterminate" }
    ],
    [
      "the latest attempt is chosen by number, not by row order",
      [attempt("a", 3, "Succeeded"), attempt("a", 1, "Failed"), attempt("a", 2, "TimedOut")],
      [],
      { _tag: "Done", attempt: 3 }
    ],
    [
      "a later failure after an earlier success",
      [attempt("a", 2, "Failed"), attempt("a", 1, "Succeeded")],
      [],
      { _tag: "Retry", attempt: 2, state: "Failed" }
    ],
    [
      "a successor running after a failure",
      [attempt("a", 1, "Failed"), attempt("b", 9, "Running"), attempt("a", 2, "Running")],
      [],
      { _tag: "Open", attempt: 2, state: "Running" }
    ]
  ]

  it.each(table)("%s", (_, attempts, intents, expected) => {
    expect(Progress.statusOf("a", attempts, intents)).toEqual(expected)
  })

  it("only Succeeded, and Indeterminate settled as succeeded, count as Done (the rejected set)", () => {
    const notDone: ReadonlyArray<Attempt.State> = ["Pending", "Running", "Failed", "Cancelled", "TimedOut", "Indeterminate"]
    for (const state of notDone) {
      expect(Progress.statusOf("a", [attempt("a", 1, state)], [])._tag, state).not.toBe("Done")
    }
    expect(Progress.statusOf("a", [attempt("a", 1, "Succeeded")], [])._tag).toBe("Done")
  })

  it("property: the row order of the attempts never changes the standing", () => {
    const states: ReadonlyArray<Attempt.State> = ["Pending", "Running", "Succeeded", "Failed", "Indeterminate", "Cancelled", "TimedOut"]
    const rows = fc.uniqueArray(
      fc.record({ stepId: fc.constantFrom("a", "b"), attempt: fc.integer({ min: 1, max: 20 }), state: fc.constantFrom(...states), updatedLsn: fc.nat() }),
      { selector: (row) => `${row.stepId}:${row.attempt}`, maxLength: 12 }
    )
    fc.assert(
      fc.property(rows, (attempts) => {
        const reversed = [...attempts].reverse()
        expect(Progress.statusOf("a", reversed, [])).toEqual(Progress.statusOf("a", attempts, []))
      })
    )
  })
})

// ---------------------------------------------------------------------------------------------
// next and pendingSteps
// ---------------------------------------------------------------------------------------------

describe("Progress.next and pendingSteps", () => {
  const nextId = (plan: Plan.Plan, attempts: ReadonlyArray<Progress.AttemptInfo>, intents: ReadonlyArray<Progress.IntentInfo> = []) => {
    const found = Progress.next(plan, attempts, intents)
    return found._tag === "AllDone" ? "AllDone" : `${found.step.id}@${found.index}:${found.status._tag}`
  }

  it("a plan in declaration order runs step by step, then AllDone", () => {
    const plan = planOf(step("a"), step("b"), step("c"))
    expect(nextId(plan, [])).toBe("a@0:NotStarted")
    expect(nextId(plan, [attempt("a", 1, "Succeeded")])).toBe("b@1:NotStarted")
    expect(nextId(plan, [attempt("a", 1, "Succeeded"), attempt("b", 1, "Succeeded")])).toBe("c@2:NotStarted")
    const done = [attempt("a", 1, "Succeeded"), attempt("b", 1, "Succeeded"), attempt("c", 1, "Succeeded")]
    expect(Progress.next(plan, done, [])).toEqual({ _tag: "AllDone" })
    expect(Progress.pendingSteps(plan, done, [])).toEqual([])
  })

  it("a revision's scheduled successor is next, and the task is not done until it is", () => {
    const plan = planOf(step("a"), step("b", { needs: ["a"] }))
    const revised = [attempt("a", 1, "Succeeded"), attempt("b", 1, "Succeeded"), attempt("b", 2, "Pending")]
    expect(nextId(plan, revised)).toBe("b@1:Scheduled")
    expect(Progress.pendingSteps(plan, revised, [])).toEqual(["b"])
    expect(nextId(plan, [...revised.slice(0, 2), attempt("b", 2, "Succeeded")])).toBe("AllDone")
  })

  it("needs declared out of order: the needed step runs first", () => {
    // `b` is declared first but needs `a`, declared last.
    const plan = planOf(step("b", { needs: ["a"] }), step("c", { needs: ["b"] }), step("a"))
    expect(nextId(plan, [])).toBe("a@2:NotStarted")
    expect(nextId(plan, [attempt("a", 1, "Succeeded")])).toBe("b@0:NotStarted")
    expect(nextId(plan, [attempt("a", 1, "Succeeded"), attempt("b", 1, "Succeeded")])).toBe("c@1:NotStarted")
    expect(Progress.pendingSteps(plan, [attempt("a", 1, "Succeeded")], [])).toEqual(["b", "c"])
  })

  it("a diamond: the join waits for both branches", () => {
    const plan = planOf(step("a"), step("b", { needs: ["a"] }), step("c", { needs: ["a"] }), step("d", { needs: ["b", "c"] }))
    const ok = (id: string) => attempt(id, 1, "Succeeded")
    /** (done steps, expected next), by hand. */
    const table: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [[], "a@0:NotStarted"],
      [["a"], "b@1:NotStarted"],
      [["a", "c"], "b@1:NotStarted"],
      [["a", "b"], "c@2:NotStarted"],
      [["a", "b", "c"], "d@3:NotStarted"],
      [["a", "b", "c", "d"], "AllDone"]
    ]
    for (const [done, expected] of table) {
      expect(nextId(plan, done.map(ok)), done.join(",")).toBe(expected)
    }
    // The join is never next while one branch is not done (the rejected set).
    for (const done of [["a"], ["a", "b"], ["a", "c"]]) {
      expect(nextId(plan, done.map(ok))).not.toMatch(/^d@/)
    }
    expect(Progress.pendingSteps(plan, [ok("a"), ok("c")], [])).toEqual(["b", "d"])
  })

  it("a step whose need failed is not next: the failed need is (to retry)", () => {
    const plan = planOf(step("a"), step("b", { needs: ["a"] }))
    for (const state of ["Failed", "Cancelled", "TimedOut", "Indeterminate"] as const) {
      expect(nextId(plan, [attempt("a", 1, state)]), state).toBe("a@0:Retry")
    }
    expect(nextId(plan, [attempt("a", 1, "Running")])).toBe("a@0:Open")
    expect(nextId(plan, [attempt("a", 1, "Indeterminate")], [intent("i-1", "Dispatched")])).toBe("a@0:Unsettled")
    // Settled as succeeded by a person: the dependent runs.
    expect(nextId(plan, [attempt("a", 1, "Indeterminate")], [intent("i-1", "Resolved", "Succeeded")])).toBe("b@1:NotStarted")
    expect(Progress.pendingSteps(plan, [attempt("a", 1, "Failed")], [])).toEqual(["a", "b"])
  })

  it("an independent step after a blocked chain is still found", () => {
    const plan = planOf(step("b", { needs: ["a"] }), step("a", { needs: ["z"] }), step("z"), step("x"))
    expect(nextId(plan, [])).toBe("z@2:NotStarted")
    expect(nextId(plan, [attempt("z", 1, "Succeeded")])).toBe("a@1:NotStarted")
  })

  it("a done step is never next, and a step with undone needs never is", () => {
    const plan = planOf(step("a"), step("b", { needs: ["a"] }), step("c"))
    const found = Progress.next(plan, [attempt("a", 1, "Succeeded"), attempt("b", 1, "Failed")], [])
    expect(found).toMatchObject({ _tag: "Step", index: 1, status: { _tag: "Retry", attempt: 1, state: "Failed" } })
    expect(Progress.statuses(plan, [attempt("a", 1, "Succeeded")], []).map((entry) => [entry.step.id, entry.status._tag])).toEqual([
      ["a", "Done"],
      ["b", "NotStarted"],
      ["c", "NotStarted"]
    ])
  })
})

// ---------------------------------------------------------------------------------------------
// normaliseTail and fingerprint
// ---------------------------------------------------------------------------------------------

describe("Progress.normaliseTail", () => {
  it("keeps the last N non-empty lines", () => {
    const output = ["one", "", "two", "   ", "three", "four", "\t", ""].join("\n")
    expect(Progress.normaliseTail(output, 2)).toBe("three\nfour")
    expect(Progress.normaliseTail(output, 3)).toBe("two\nthree\nfour")
    expect(Progress.normaliseTail(output, 100)).toBe("one\ntwo\nthree\nfour")
  })

  it("keeps 20 lines by default", () => {
    const output = Array.from({ length: 50 }, (_, i) => `line ${"x".repeat(i + 1)}`).join("\n")
    const kept = Progress.normaliseTail(output).split("\n")
    expect(kept).toHaveLength(20)
    expect(kept[19]).toBe(`line ${"x".repeat(50)}`)
    expect(kept[0]).toBe(`line ${"x".repeat(31)}`)
  })

  it("replaces colour codes, tmp paths, hex ids and numbers; collapses whitespace; handles CRLF", () => {
    const table: ReadonlyArray<readonly [string, string]> = [
      ["\u001b[31mError\u001b[0m: boom", "Error: boom"],
      ["at /tmp/vitest-abc123/file.ts:12:3", "at <tmp>"],
      ["commit 3f2a9c1d4e ready", "commit <hex> ready"],
      ["took 1.25s (pid 4242)", "took <n>s (pid <n>)"],
      ["  lots    of \t space  ", "lots of space"],
      ["a\r\nb\r\n", "a\nb"]
    ]
    for (const [input, expected] of table) expect(Progress.normaliseTail(input), input).toBe(expected)
  })
})

describe("Progress.fingerprint", () => {
  const base = { stepId: "test", exitCode: 1, signal: null, timedOut: false, output: "" } as const

  it("is equal for outputs that differ only in numbers, hex ids, tmp paths, colour and whitespace", () => {
    const pairs: ReadonlyArray<readonly [string, string]> = [
      ["FAIL test/a.test.ts > 3 failed in 1.234s", "FAIL test/a.test.ts > 7 failed in 98.1s"],
      ["object 3f2a9c1d4e5b missing", "object 0123abcdef99 missing"],
      ["cannot open /tmp/ratchet-x1/out.log", "cannot open /tmp/other-dir/deeper/out.log"],
      ["\u001b[1;31merror\u001b[0m: boom", "error: boom"],
      ["error:   boom\n\n\n", "  error: boom"],
      ["line one\r\nline two", "line one\nline two"]
    ]
    for (const [left, right] of pairs) {
      expect(Progress.fingerprint({ ...base, output: left }), `${left} / ${right}`).toBe(Progress.fingerprint({ ...base, output: right }))
    }
  })

  it("differs for different exit codes, timeout vs exit, signals, step ids and text", () => {
    const reference = Progress.fingerprint({ ...base, output: "error: boom" })
    const others = [
      Progress.fingerprint({ ...base, exitCode: 2, output: "error: boom" }),
      Progress.fingerprint({ ...base, timedOut: true, output: "error: boom" }),
      Progress.fingerprint({ ...base, exitCode: null, signal: "SIGKILL", output: "error: boom" }),
      Progress.fingerprint({ ...base, exitCode: null, signal: "SIGTERM", output: "error: boom" }),
      Progress.fingerprint({ ...base, stepId: "build", output: "error: boom" }),
      Progress.fingerprint({ ...base, output: "error: bang" }),
      Progress.fingerprint({ ...base, output: "" })
    ]
    expect(new Set([reference, ...others]).size).toBe(others.length + 1)
  })

  it("names how the command ended", () => {
    expect(Progress.fingerprint({ ...base, exitCode: 3 })).toMatch(/^fp:exit:3:[0-9a-f]{16}$/)
    expect(Progress.fingerprint({ ...base, timedOut: true, exitCode: null, signal: "SIGKILL" })).toMatch(/^fp:timeout:[0-9a-f]{16}$/)
    expect(Progress.fingerprint({ ...base, exitCode: null, signal: "SIGKILL" })).toMatch(/^fp:signal:SIGKILL:[0-9a-f]{16}$/)
    expect(Progress.fingerprint({ ...base, exitCode: null, signal: null })).toMatch(/^fp:signal:unknown:[0-9a-f]{16}$/)
    // A process that was never started (its spawn failed) says so, not "an unknown signal".
    expect(Progress.fingerprint({ ...base, exitCode: null, signal: null, notStarted: true })).toMatch(/^fp:not_started:[0-9a-f]{16}$/)
    expect(Progress.fingerprint({ ...base, exitCode: null, signal: null, notStarted: false })).toMatch(/^fp:signal:unknown:[0-9a-f]{16}$/)
  })

  it("only the last 20 non-empty lines count", () => {
    const tail = Array.from({ length: 20 }, (_, i) => `tail line ${"z".repeat(i)}`).join("\n")
    expect(Progress.fingerprint({ ...base, output: `early noise\n${tail}` })).toBe(
      Progress.fingerprint({ ...base, output: `completely different noise\n\n${tail}` })
    )
  })

  it("property: deterministic, and insensitive to the numbers in the output", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.nat({ max: 999_999 }), fc.nat({ max: 999_999 }), (text, left, right) => {
        const words = text.replace(/[0-9a-fA-F]/g, "")
        const a = Progress.fingerprint({ ...base, output: `${words} took ${left} ms` })
        const b = Progress.fingerprint({ ...base, output: `${words} took ${right} ms` })
        expect(a).toBe(b)
        expect(Progress.fingerprint({ ...base, output: text })).toBe(Progress.fingerprint({ ...base, output: text }))
      })
    )
  })
})

describe("Progress: hostile output", { timeout: 120_000 }, () => {
  const hostile: ReadonlyArray<readonly [string, string]> = [
    ["5 MB on one line", "x".repeat(5 * 1024 * 1024)],
    ["5 MB of newlines", "\n".repeat(5 * 1024 * 1024)],
    ["5 MB of hex", "abcdef0123".repeat(512 * 1024)],
    ["5 MB of digits and dots", "1.".repeat(2.5 * 1024 * 1024)],
    ["5 MB of /tmp/", "/tmp/".repeat(1024 * 1024)],
    ["an unterminated escape sequence over 5 MB", `\u001b[${"0;".repeat(2.5 * 1024 * 1024)}`],
    ["5 MB of escape starts", "\u001b[".repeat(2.5 * 1024 * 1024)],
    ["control characters", Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join("") + "\u007f\u0085\u2028\u2029"],
    ["lone surrogates", "\uD800 broken \uDFFF\n\uDBFF"],
    ["NUL bytes", "\u0000".repeat(1000)],
    ["a byte order mark and zero-width characters", "\uFEFF\u200B\u200D"]
  ]

  it.each(hostile)("%s: normaliseTail and fingerprint do not throw", (_, output) => {
    const tail = Progress.normaliseTail(output)
    expect(typeof tail).toBe("string")
    expect(tail.split("\n").length).toBeLessThanOrEqual(20)
    const print = Progress.fingerprint({ stepId: "s", exitCode: 1, signal: null, timedOut: false, output })
    expect(print).toMatch(/^fp:exit:1:[0-9a-f]{16}$/)
    expect(Progress.fingerprint({ stepId: "s", exitCode: 1, signal: null, timedOut: false, output })).toBe(print)
  })

  it("a hostile step id or signal name does not throw", () => {
    for (const text of ["\uD800", "\u0000\n\n", "x".repeat(100_000)]) {
      expect(Progress.fingerprint({ stepId: text, exitCode: null, signal: text, timedOut: false, output: text })).toMatch(/^fp:signal:/)
    }
  })
})
