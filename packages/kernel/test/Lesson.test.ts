/**
 * The lesson's shapes at the boundary: a lesson file is written by anyone and read back into an
 * agent's prompt, so each hostile input (oversized text, path traversal and absolute paths in scope
 * globs, control and bidirectional-override characters, a status smuggled into the text, too many
 * items, malformed ids and fingerprints) is refused with an issue naming the field, the reason and
 * the fix. Then the facts' cross-field rules, the digest a receipt binds, the summary an agent is
 * shown, and the lesson events' total decoding.
 */
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Lesson from "../src/Lesson.js"
import * as LessonEvent from "../src/LessonEvent.js"
import { BODY, body, failure, FP, guardCheck, LESSON, proposed, shown, success, T0 } from "./lessons.js"

const minimal = { scope: { projectId: "p-1" }, trigger: "when counting rows", actualRule: "the header counts" }

/** The issues decoding `input` as a body reports, as "path: message". */
const issuesOf = (input: unknown): ReadonlyArray<string> =>
  Either.match(Lesson.decodeBody(input), {
    onLeft: (error) => error.issues.map((issue) => `${issue.path}: ${issue.message}`),
    onRight: () => []
  })

const withField = (path: ReadonlyArray<string | number>, value: unknown): unknown => {
  const copy = structuredClone(minimal) as Record<string, unknown>
  let cursor = copy as Record<string | number, unknown>
  for (const key of path.slice(0, -1)) {
    cursor[key] ??= typeof path[path.indexOf(key) + 1] === "number" ? [] : {}
    cursor = cursor[key] as Record<string | number, unknown>
  }
  cursor[path[path.length - 1]!] = value
  return copy
}

describe("Lesson.decodeBody", () => {
  it("a minimal lesson reads its optional fields as null or empty", () => {
    expect(Lesson.decodeBody(minimal)).toEqual(
      Either.right({
        scope: { projectId: "p-1", paths: [], taskTypes: [] },
        trigger: "when counting rows",
        wrongAssumption: null,
        actualRule: "the header counts",
        rootCause: null,
        guard: null,
        fingerprints: [],
        evidenceRefs: []
      })
    )
    expect(Either.getOrThrow(Lesson.decodeBody({ ...minimal, guard: { description: "a test" } })).guard).toEqual({ description: "a test", command: null })
  })

  it("a full lesson reads as written", () => {
    expect(Either.getOrThrow(Lesson.decodeBody(BODY))).toEqual(BODY)
  })

  const oversized = (length: number) => "x".repeat(length)
  const hostile: ReadonlyArray<readonly [string, ReadonlyArray<string | number>, unknown, string]> = [
    ["a trigger over 400 characters", ["trigger"], oversized(401), "/trigger: is 401 characters long, over the limit of 400; shorten it to at most 400"],
    ["an actual rule over 400 characters", ["actualRule"], oversized(4000), "/actualRule: is 4000 characters long, over the limit of 400; shorten it to at most 400"],
    ["a wrong assumption over 400 characters", ["wrongAssumption"], oversized(401), "/wrongAssumption: is 401 characters long, over the limit of 400"],
    ["a root cause over 2000 characters", ["rootCause"], oversized(2001), "/rootCause: is 2001 characters long, over the limit of 2000"],
    ["a guard command over 2000 characters", ["guard"], { description: "d", command: oversized(2001) }, "/guard/command: is 2001 characters long, over the limit of 2000"],
    ["a megabyte of text", ["trigger"], oversized(1 << 20), "/trigger: is 1048576 characters long, over the limit of 400"],
    ["an empty trigger", ["trigger"], "   ", "/trigger: is empty; write what it says, or leave the field out where it is optional"],
    ["a path traversal in a scope glob", ["scope", "paths"], ["src/**", "../../etc"], "/scope/paths/1: escapes the repository (it has a \"..\" segment); use a path or glob relative to the repository root that stays inside it"],
    ["a traversal inside a glob", ["scope", "paths"], ["src/../../etc/passwd"], "/scope/paths/0: escapes the repository (it has a \"..\" segment)"],
    ["an absolute scope glob", ["scope", "paths"], ["/etc/**"], "/scope/paths/0: is absolute (it starts with \"/\"); use a path or glob relative to the repository root that stays inside it"],
    ["a backslash in a scope glob", ["scope", "paths"], ["..\\..\\etc"], "/scope/paths/0: contains a backslash (scope entries use \"/\" separators)"],
    ["a NUL in a scope glob", ["scope", "paths"], ["src\u0000"], "/scope/paths/0: holds a control or bidirectional-override character"],
    ["a scope glob over 256 characters", ["scope", "paths"], [oversized(257)], "/scope/paths/0: is 257 characters long, over the limit of 256"],
    ["a line break in a scope glob", ["scope", "paths"], ["src\n**"], "/scope/paths/0: holds a line break; write it on one line"],
    ["33 scope globs", ["scope", "paths"], Array.from({ length: 33 }, (_, i) => `d${i}`), "/scope/paths: holds 33 globs, over the limit of 32; keep the 32 that matter"],
    ["a task type with capitals", ["scope", "taskTypes"], ["BugFix"], "/scope/taskTypes/0: expected a task type (1 to 64 characters from a-z 0-9 _ -, starting with a letter or digit, such as bugfix or feature), got \"BugFix\""],
    ["17 task types", ["scope", "taskTypes"], Array.from({ length: 17 }, (_, i) => `t${i}`), "/scope/taskTypes: holds 17 task types, over the limit of 16"],
    ["a project id over 128 characters", ["scope", "projectId"], oversized(129), "/scope/projectId: is 129 characters long, over the limit of 128"],
    ["an ANSI escape in the rule", ["actualRule"], "ok\u001b[2Jcleared", "/actualRule: holds a control or bidirectional-override character, which would show differently from what it is; remove it"],
    ["a right-to-left override in the trigger", ["trigger"], "if \u202eelse", "/trigger: holds a control or bidirectional-override character"],
    ["a bidirectional isolate", ["trigger"], "a\u2066b", "/trigger: holds a control or bidirectional-override character"],
    ["a C1 control", ["trigger"], "a\u0085b", "/trigger: holds a control or bidirectional-override character"],
    ["a DEL", ["trigger"], "a\u007fb", "/trigger: holds a control or bidirectional-override character"],
    ["a lone surrogate", ["trigger"], "a\uD800b", "/trigger: expected a well-formed Unicode string"],
    ["a malformed fingerprint", ["fingerprints"], ["fp:exit:1:XYZ"], "/fingerprints/0: expected a failure fingerprint (\"fp:\" then how it ended, \":\" and 16 lowercase hex digits, as Ratchet records them), got \"fp:exit:1:XYZ\""],
    ["nine fingerprints", ["fingerprints"], Array.from({ length: 9 }, () => FP.key), "/fingerprints: holds 9 fingerprints, over the limit of 8"],
    ["65 evidence references", ["evidenceRefs"], Array.from({ length: 65 }, (_, i) => `r${i}`), "/evidenceRefs: holds 65 evidence references, over the limit of 64"],
    ["an evidence reference over 512 characters", ["evidenceRefs"], [oversized(513)], "/evidenceRefs/0: is 513 characters long, over the limit of 512"],
    ["a status in the text", ["status"], "verified", "/status: a lesson's status is not part of its text: a proposal is always a candidate, and only evidence (the evaluator) or a person's signed control (ratchet lessons pin|reject|deprecate|supersede) changes it; remove the key"],
    ["an unknown key", ["promote"], true, "/promote: is unexpected"]
  ]
  it.each(hostile)("refuses %s, naming the field, the reason and the fix", (_, path, value, expected) => {
    const issues = issuesOf(withField(path, value))
    expect(issues.length).toBeGreaterThan(0)
    expect(issues.some((issue) => issue.startsWith(expected)), issues.join("\n")).toBe(true)
  })

  it("accepts what sits exactly on the limits", () => {
    const edge = {
      ...minimal,
      trigger: "x".repeat(400),
      rootCause: "y".repeat(2000),
      scope: { projectId: "p".repeat(128), paths: Array.from({ length: 32 }, (_, i) => `a..b/${i}`), taskTypes: Array.from({ length: 16 }, (_, i) => `t${i}`) },
      fingerprints: Array.from({ length: 8 }, () => FP.key),
      evidenceRefs: Array.from({ length: 64 }, () => "r".repeat(512)),
      actualRule: "tabs\tand\nnew lines are fine"
    }
    expect(issuesOf(edge)).toEqual([])
  })

  it("reports every issue at once, and the error says to fix each", () => {
    const error = Either.getLeft(Lesson.decodeBody({ scope: { projectId: "p-1", paths: ["../x"] }, trigger: "", status: "enforced" }))
    expect(error._tag).toBe("Some")
    const invalid = (error as { value: Lesson.LessonInvalid }).value
    expect(invalid._tag).toBe("@ratchet/kernel/LessonInvalid")
    expect(invalid.issues.map((issue) => issue.path).sort()).toEqual(["/actualRule", "/scope/paths/0", "/status", "/trigger"])
    expect(invalid.message).toMatch(/^the lesson is invalid \(4 issues\); fix each one and submit it again:\n {2}\//)
    const one = (Either.getLeft(Lesson.decodeBody({ ...minimal, trigger: "" })) as { value: Lesson.LessonInvalid }).value
    expect(one.message).toBe(
      "the lesson is invalid (1 issue); fix each one and submit it again:\n  /trigger: is empty; write what it says, or leave the field out where it is optional"
    )
    expect((Either.getLeft(Lesson.decodeBody("lesson")) as { value: Lesson.LessonInvalid }).value.message).toContain("  (root): ")
  })

  it.each([
    ["L-1", true],
    ["lesson.2026_01", true],
    ["9", true],
    ["a".repeat(64), true],
    ["a".repeat(65), false],
    ["", false],
    ["../etc", false],
    [".hidden", false],
    ["a/b", false],
    ["-x", false]
  ])("a lesson id %j is valid: %s", (id, valid) => {
    expect(Either.isRight(Lesson.decodeExposure(success("r", T0, { shown: [id] })))).toBe(valid)
  })

  it("a refused id or task type is quoted, cut at 80 characters", () => {
    const long = `../${"x".repeat(200)}`
    const issues = issuesOf(withField(["scope", "taskTypes"], [long]))
    expect(issues).toEqual([
      `/scope/taskTypes/0: expected a task type (1 to 64 characters from a-z 0-9 _ -, starting with a letter or digit, such as bugfix or feature), got ${JSON.stringify(long.slice(0, 80))}`
    ])
    const shown = Either.match(Lesson.decodeExposure(success("r", T0, { shown: [long] })), { onLeft: (e) => e.issues.map((i) => i.message), onRight: () => [] })
    expect(shown).toEqual([
      `expected a lesson id (1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit; it names a file), got ${JSON.stringify(long.slice(0, 80))}`
    ])
  })
})

describe("the facts' shapes", () => {
  it("a failure, a success and a guard check as the controller records them decode", () => {
    expect(Lesson.decodeFailure(failure("r-a", T0))).toEqual(Either.right(failure("r-a", T0)))
    expect(Lesson.decodeExposure(success("r-a", T0))).toEqual(Either.right(success("r-a", T0)))
    expect(Lesson.decodeGuardCheck(guardCheck("before", "c1", 1))).toEqual(Either.right(guardCheck("before", "c1", 1)))
  })

  const failureIssues = (input: unknown) =>
    Either.match(Lesson.decodeFailure(input), { onLeft: (e) => e.issues.map((i) => `${i.path}: ${i.message}`), onRight: () => [] })

  it.each([
    ["a step's failure without its step", { category: "step_failed", stepId: null }, ": a step_failed failure names its step; set stepId"],
    ["an indeterminate attempt without its step", { category: "attempt_indeterminate", stepId: null }, ": a attempt_indeterminate failure names its step; set stepId"],
    ["a criterion's failure without its criterion", { acId: null }, ": a verification_failed failure names its criterion; set acId"],
    ["an indeterminate verification without its criterion", { category: "verification_indeterminate", acId: null }, ": a verification_indeterminate failure names its criterion; set acId"],
    ["attempt 0", { attempt: 0 }, "/attempt: "],
    ["another phase", { phase: "COMPLETED" }, "/phase: "],
    ["a fingerprint whose key is not its own fields'", { fingerprint: { ...FP, digest: "0".repeat(16) } }, "/fingerprint: key \""],
    ["a fingerprint whose subject is two lines", { fingerprint: { ...FP, subject: "a\nb" } }, "/fingerprint/subject: expected what failed"]
  ])("refuses %s", (_, overrides, expected) => {
    const issues = failureIssues({ ...failure("r-a", T0), ...overrides })
    expect(issues.some((issue) => issue.startsWith(expected)), issues.join("\n")).toBe(true)
  })

  it("accepts a preflight's wrong assumption without step or criterion, and a step's failure with its step", () => {
    expect(failureIssues({ ...failure("pre-1", T0), category: "wrong_assumption", phase: "PREFLIGHT", acId: null, attempt: null })).toEqual([])
    expect(failureIssues({ ...failure("r-a", T0), category: "step_failed", stepId: "test", acId: null })).toEqual([])
  })

  it("a success's paths stay inside the repository", () => {
    const issues = Either.match(Lesson.decodeExposure(success("r", T0, { scope: { paths: ["../../etc/passwd"], taskType: null } })), {
      onLeft: (e) => e.issues.map((i) => `${i.path}: ${i.message}`),
      onRight: () => []
    })
    expect(issues).toEqual(["/scope/paths/0: escapes the repository (it has a \"..\" segment); use a path or glob relative to the repository root that stays inside it"])
    const error = Either.getLeft(Lesson.decodeGuardCheck({ ...guardCheck("after", "c", 0), commit: "" }))
    expect((error as { value: Lesson.LessonInvalid }).value.message).toMatch(/^the guard check is invalid \(1 issue\)/)
    expect((Either.getLeft(Lesson.decodeFailure({})) as { value: Lesson.LessonInvalid }).value.message).toMatch(/^the failure is invalid/)
    expect((Either.getLeft(Lesson.decodeExposure({})) as { value: Lesson.LessonInvalid }).value.message).toMatch(/^the exposure is invalid/)
  })
})

describe("Lesson.decodeShown", () => {
  const issues = (input: unknown) =>
    Either.match(Lesson.decodeShown(input), { onLeft: (e) => e.issues.map((i) => `${i.path}: ${i.message}`), onRight: () => [] })

  it("decodes what the hook and the MCP server record, with or without the step", () => {
    expect(Lesson.decodeShown(shown("r-a", T0))).toEqual(Either.right(shown("r-a", T0)))
    expect(issues(shown("r-a", T0, { stepId: "fix", attempt: 2, via: "mcp" }))).toEqual([])
  })

  // Every channel a lesson reaches an agent by: a hook, MCP, `ratchet lessons query`, the runner's envelope.
  const channels: ReadonlyArray<Lesson.Shown["via"]> = ["hook", "mcp", "cli", "runner"]
  it.each(channels)("accepts via %s", (via) => {
    expect(issues(shown("r-a", T0, { stepId: "impl", attempt: 1, via }))).toEqual([])
  })

  it.each([
    ["another channel", { via: "prompt" }, "/via: "],
    ["attempt 0", { attempt: 0 }, "/attempt: "],
    ["an empty run", { runId: "" }, "/runId: is empty"],
    ["a run of two lines", { runId: "r\nx" }, "/runId: holds a line break"],
    ["an oversized task id", { taskId: "t".repeat(129) }, "/taskId: is 129 characters long, over the limit of 128"],
    ["a bidirectional override", { taskId: "t-\u202e1" }, "/taskId: holds a control or bidirectional-override character"],
    ["an unknown field", { status: "verified" }, "/status: "],
    ["a time that is not a number", { at: "now" }, "/at: "]
  ])("refuses %s", (_, overrides, expected) => {
    const found = issues({ ...shown("r-a", T0), ...overrides })
    expect(found.some((issue) => issue.startsWith(expected)), found.join("\n")).toBe(true)
  })

  it("refuses what is not a record at all, naming the record", () => {
    for (const input of [null, [], "shown", 42, {}]) {
      const error = Either.getLeft(Lesson.decodeShown(input))
      expect((error as { value: Lesson.LessonInvalid }).value.message).toMatch(/^the record of lessons shown is invalid/)
    }
  })
})

describe("Lesson.digest, guardDigest and summary", () => {
  it("the digest covers every field of the text, and only the text", () => {
    const base = Lesson.digest(BODY)
    expect(base).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(Lesson.digest(body())).toBe(base)
    for (
      const change of [
        { trigger: "another trigger" },
        { wrongAssumption: null },
        { actualRule: "another rule" },
        { rootCause: null },
        { guard: null },
        { fingerprints: [] },
        { evidenceRefs: [] },
        { scope: { projectId: "p-1", paths: ["src/report/**"] } }
      ]
    ) {
      expect(Lesson.digest(body(change)), JSON.stringify(change)).not.toBe(base)
    }
  })

  it("a guard's digest changes with its description or its command", () => {
    const guard = { description: "a test", command: "npm test" }
    expect(Lesson.guardDigest(guard)).toBe(Lesson.guardDigest({ ...guard }))
    expect(Lesson.guardDigest({ ...guard, command: null })).not.toBe(Lesson.guardDigest(guard))
    expect(Lesson.guardDigest({ ...guard, description: "b" })).not.toBe(Lesson.guardDigest(guard))
  })

  it("a hand-built text the schema would refuse is a defect, named as such", () => {
    expect(() => Lesson.digest({ ...BODY, trigger: "\uD800" })).toThrow("Lesson.digest needs a body produced by Lesson.decodeBody")
    expect(() => Lesson.guardDigest({ description: "\uD800", command: null })).toThrow("Lesson.guardDigest needs a guard produced by Lesson.decodeBody")
  })

  it("the summary says the rule, when it applies and what it corrects", () => {
    expect(Lesson.summary(BODY)).toBe(
      "the report counts the header row; subtract one when comparing with the data (when: changing how the report counts rows; not: the header row is not counted)"
    )
    expect(Lesson.summary(body({ wrongAssumption: null }))).toBe(
      "the report counts the header row; subtract one when comparing with the data (when: changing how the report counts rows)"
    )
  })

  it("the summary is at most 400 characters, cut with an ellipsis, never inside a surrogate pair", () => {
    const long = body({ actualRule: "r".repeat(400), trigger: "t".repeat(400), wrongAssumption: "w".repeat(400) })
    const cut = Lesson.summary(long)
    expect(cut.length).toBe(400)
    expect(cut).toBe(`${"r".repeat(400).slice(0, 399)}…`)
    const fits = body({ actualRule: "r".repeat(386), trigger: "t", wrongAssumption: null })
    expect(Lesson.summary(fits)).toBe(`${"r".repeat(386)} (when: t)`)
    expect(Lesson.summary(fits).length).toBe(396)
    const exactly = body({ actualRule: "r".repeat(390), trigger: "t", wrongAssumption: null })
    expect(Lesson.summary(exactly)).toBe(`${"r".repeat(390)} (when: t)`)
    const over = body({ actualRule: "r".repeat(391), trigger: "t", wrongAssumption: null })
    expect(Lesson.summary(over)).toBe(`${"r".repeat(391)} (when: …`)
    // A 😀 is two code units; one straddling the cut is dropped whole.
    const emoji = body({ actualRule: `${"r".repeat(398)}😀`, trigger: "t", wrongAssumption: null })
    expect(Lesson.summary(emoji)).toBe(`${"r".repeat(398)}…`)
    const emojiFits = body({ actualRule: `${"r".repeat(397)}😀`, trigger: "t", wrongAssumption: null })
    expect(Lesson.summary(emojiFits)).toBe(`${"r".repeat(397)}😀…`)
  })

  it("a lesson's stream is named apart from the tasks'", () => {
    expect(Lesson.streamOf(LESSON)).toBe("lesson.L-1")
  })
})

describe("Lesson.isTerminal", () => {
  it.each([
    ["candidate", false],
    ["probationary", false],
    ["verified", false],
    ["enforced", false],
    ["compiled", false],
    ["expired", true],
    ["rejected", true],
    ["superseded", true],
    ["deprecated", true]
  ] as const)("%s → %s", (status, terminal) => {
    expect(Lesson.isTerminal(status)).toBe(terminal)
    expect(Lesson.statuses).toContain(status)
  })
})

describe("LessonEvent.decode", () => {
  it("every event kind round-trips through its stored form", () => {
    const events: ReadonlyArray<LessonEvent.Event> = [
      proposed(),
      { _tag: "LessonFailureObserved", version: 1, actor: { kind: "verifier", id: "v" }, at: T0, lessonId: LESSON, failure: failure("r", T0) },
      { _tag: "LessonSuccessObserved", version: 1, actor: { kind: "system", id: "s" }, at: T0, lessonId: LESSON, exposure: success("r", T0), standing: "shown" },
      { _tag: "LessonGuardChecked", version: 1, actor: { kind: "runner", id: "r" }, at: T0, lessonId: LESSON, check: guardCheck("before", "c", 1) },
      { _tag: "LessonTransitioned", version: 1, actor: { kind: "system", id: "e" }, at: T0, lessonId: LESSON, from: "candidate", to: "verified", rule: "two_runs", ruleVersion: "ratchet-lessons/1", runIds: ["a", "b"] },
      { _tag: "LessonInspected", version: 1, actor: { kind: "agent", id: "a" }, at: T0, lessonId: LESSON }
    ]
    for (const event of events) {
      expect(LessonEvent.decode(JSON.parse(JSON.stringify(LessonEvent.encode(event))))).toEqual(Either.right(event))
    }
  })

  const errorOf = (input: unknown) =>
    Either.match(LessonEvent.decode(input), { onLeft: (e) => ({ reason: e.reason, type: e.type, version: e.version, detail: e.detail }), onRight: () => null })

  it.each([
    ["not an object", "text", { reason: "not_an_object", type: null, version: null, detail: "expected an object" }],
    ["null", null, { reason: "not_an_object", type: null, version: null, detail: "expected an object" }],
    ["an array", [], { reason: "not_an_object", type: null, version: null, detail: "expected an object" }],
    ["no type", { version: 1 }, { reason: "malformed", type: null, version: 1, detail: "the `_tag` field is missing or not a string" }],
    ["a task's event", { _tag: "TaskCreated", version: 1 }, { reason: "unknown_type", type: "TaskCreated", version: 1, detail: "" }],
    ["an inherited name", { _tag: "toString", version: 1 }, { reason: "unknown_type", type: "toString", version: 1, detail: "" }],
    ["a newer version", { ...proposed(), version: 2 }, { reason: "newer_version", type: "LessonProposed", version: 2, detail: "1" }]
  ])("refuses %s with a typed error", (_, input, expected) => {
    expect(errorOf(input)).toEqual(expected)
  })

  it("a malformed body names every bad field", () => {
    const error = errorOf({ ...proposed(), lessonId: "../x", body: { ...BODY, trigger: "x".repeat(401) }, extra: 1 })
    expect(error?.reason).toBe("malformed")
    expect(error?.detail).toContain("lessonId: expected a lesson id")
    expect(error?.detail).toContain("body.trigger: is 401 characters long")
    expect(error?.detail).toContain("extra: is unexpected")
    expect(errorOf({ ...proposed(), version: "1" })?.reason).toBe("malformed")
    expect(errorOf({ _tag: "LessonInspected", version: 1, actor: { kind: "agent", id: "a" }, at: T0, lessonId: LESSON })).toBeNull()
    expect(errorOf({ _tag: "LessonInspected", actor: { kind: "agent", id: "a" }, at: T0, lessonId: LESSON })?.detail).toBe("version: is missing")
    expect(errorOf({ _tag: "LessonInspected", version: 1, actor: { kind: "agent", id: "" }, at: -1, lessonId: LESSON })?.detail).toBe(
      "actor.id: Expected a string at least 1 character(s) long, actual \"\"; at: Expected a non-negative number, actual -1"
    )
  })
})
