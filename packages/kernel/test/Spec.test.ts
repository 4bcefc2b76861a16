/**
 * The spec contract: strict decoding with every issue listed, the semantic projection and its
 * omission rule, digest sensitivity to each semantic field and insensitivity to editorial text.
 * Expected projections, canonical texts and issue lists are written by hand; expected digests come
 * from the peer implementation's conformance vector or from `sha256sum` over the hand-written text.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as Digest from "../src/Digest.js"
import * as Spec from "../src/Spec.js"

const vectorDigest = "sha256:e33553ac8e334a18186c49a081e9abddd26b77409ded3949cad3072b5a541128"

/** The conformance vector's fields, as a camelCase spec. */
const vectorSpec: Spec.Spec = {
  goal: "Preserve semantic task state",
  nonGoals: ["Implement the Controller"],
  constraints: ["No target repository writes"],
  context: { relevantPaths: ["docs/research/phase-0"] },
  acceptanceCriteria: [{ id: "AC-001", outcome: "round-trip is lossless", required: true }],
  execution: { allowedScope: ["docs/research/phase-0"], retry: { maxSuccessors: 5 } }
}

/** A spec using every field. */
const full: Spec.Spec = {
  goal: "Ship the importer",
  nonGoals: ["Rewrite the exporter"],
  constraints: ["No network access"],
  decisions: ["Use a streaming parser"],
  context: { relevantPaths: ["src/import"], verifiedFacts: ["Node 20 is available"] },
  acceptanceCriteria: [
    {
      id: "AC-001",
      outcome: "imports a CSV",
      required: true,
      verify: { command: "npm test", expectExitCode: 0, timeoutSeconds: 600 }
    },
    {
      id: "AC-002",
      outcome: "docs updated",
      required: false,
      manual: { procedure: "read the README", observer: "maintainer" }
    }
  ],
  execution: {
    allowedScope: ["src/**"],
    forbiddenScope: ["src/legacy/**"],
    testPolicy: "tests first",
    retry: { maxSuccessors: 3 }
  }
}

const fullCanonical = `{"acceptance_criteria":[{"id":"AC-001","outcome":"imports a CSV","required":true,` +
  `"verify":{"command":"npm test","expect_exit_code":0,"timeout_seconds":600}},{"id":"AC-002",` +
  `"manual":{"observer":"maintainer","procedure":"read the README"},"outcome":"docs updated","required":false}],` +
  `"constraints":["No network access"],"context":{"relevant_paths":["src/import"],` +
  `"verified_facts":["Node 20 is available"]},"decisions":["Use a streaming parser"],` +
  `"execution":{"allowed_scope":["src/**"],"forbidden_scope":["src/legacy/**"],"retry":{"max_successors":3},` +
  `"test_policy":"tests first"},"goal":"Ship the importer","non_goals":["Rewrite the exporter"]}`
// printf '%s' "$fullCanonical" | sha256sum
const fullDigest = "sha256:4dc04e445fd424651f844fb38c0bd2f54c7ad140807ee2a171b3e13c811862d7"

const minimal = { goal: "g", acceptanceCriteria: [{ id: "AC-001", outcome: "o", required: true }] }

const issues = (input: unknown): ReadonlyArray<Spec.Issue> => {
  const result = Spec.decode(input)
  if (Either.isRight(result)) throw new Error("expected the spec to be rejected")
  expect(result.left._tag).toBe("@ratchet/kernel/SpecInvalid")
  return result.left.issues
}

const paths = (input: unknown): ReadonlyArray<string> => issues(input).map((issue) => issue.path)

describe("Spec conformance", () => {
  it("digests the vector's fields to the peer implementation's digest", () => {
    expect(Spec.digest(vectorSpec)).toBe(vectorDigest)
  })

  it("projects the vector's fields to the vector itself", () => {
    expect(Spec.projection(vectorSpec)).toStrictEqual({
      goal: "Preserve semantic task state",
      non_goals: ["Implement the Controller"],
      constraints: ["No target repository writes"],
      context: { relevant_paths: ["docs/research/phase-0"] },
      acceptance_criteria: [{ id: "AC-001", outcome: "round-trip is lossless", required: true }],
      execution: { allowed_scope: ["docs/research/phase-0"], retry: { max_successors: 5 } }
    })
  })

  it("decodes the vector's fields unchanged", () => {
    expect(Spec.decode(vectorSpec)).toStrictEqual(Either.right(vectorSpec))
  })

  it("projects every field with snake_case keys", () => {
    expect(Spec.projection(full)).toStrictEqual({
      goal: "Ship the importer",
      non_goals: ["Rewrite the exporter"],
      constraints: ["No network access"],
      decisions: ["Use a streaming parser"],
      context: { relevant_paths: ["src/import"], verified_facts: ["Node 20 is available"] },
      acceptance_criteria: [
        {
          id: "AC-001",
          outcome: "imports a CSV",
          required: true,
          verify: { command: "npm test", expect_exit_code: 0, timeout_seconds: 600 }
        },
        { id: "AC-002", outcome: "docs updated", required: false, manual: { procedure: "read the README", observer: "maintainer" } }
      ],
      execution: {
        allowed_scope: ["src/**"],
        forbidden_scope: ["src/legacy/**"],
        test_policy: "tests first",
        retry: { max_successors: 3 }
      }
    })
    expect(Digest.canonicalize(Spec.projection(full))).toStrictEqual(Either.right(fullCanonical))
    expect(Spec.digest(full)).toBe(fullDigest)
    expect(Spec.decode(full)).toStrictEqual(Either.right(full))
  })
})

describe("Spec.decode accepted inputs", () => {
  it.each([
    ["the minimal spec", minimal],
    ["a three-digit id and a longer one", {
      goal: "g",
      acceptanceCriteria: [{ id: "AC-000", outcome: "o", required: true }, { id: "AC-12345", outcome: "p", required: false }]
    }],
    ["neither verify nor manual (the gate holds later)", minimal],
    ["expectExitCode bounds", {
      goal: "g",
      acceptanceCriteria: [
        { id: "AC-001", outcome: "o", required: true, verify: { command: "c", expectExitCode: 0, timeoutSeconds: 1 } },
        { id: "AC-002", outcome: "o", required: true, verify: { command: "c", expectExitCode: 255, timeoutSeconds: 86_400 } }
      ]
    }],
    ["a task type", { ...minimal, taskType: "bugfix" }],
    ["a task type of 64 characters with digits, - and _", { ...minimal, taskType: `9a-b_${"c".repeat(59)}` }],
    ["retry bounds", { ...minimal, execution: { retry: { maxSuccessors: 0 } } }],
    ["retry upper bound", { ...minimal, execution: { retry: { maxSuccessors: 5 } } }],
    ["empty arrays and objects", { ...minimal, nonGoals: [], decisions: [], context: {}, execution: { allowedScope: [] } }],
    ["an oversized goal", { ...minimal, goal: "x".repeat(1_000_000) }],
    ["non-ASCII text", { ...minimal, goal: "지속 가능한 상태 😀" }],
    ["scope entries that stay inside the repository", {
      ...minimal,
      execution: {
        allowedScope: ["src", "src/**/*.ts", "./docs", "a/b..c/d", "..foo", "foo..", ".hidden/x", "*", "a/./b"],
        forbiddenScope: ["secrets/**"]
      }
    }]
  ])("accepts %s", (_name, input) => {
    expect(Spec.decode(input)).toStrictEqual(Either.right(input))
  })
})

describe("Spec.decode rejected inputs", () => {
  it.each([null, [], 42, "goal", true, undefined])("rejects %j as the whole document with one clear issue", (input) => {
    expect(issues(input)).toStrictEqual([{ path: "", message: `Expected Spec, actual ${input === undefined ? "undefined" : JSON.stringify(input)}` }])
  })

  const form = "1 to 64 characters from a-z 0-9 _ -, starting with a letter or digit, such as bugfix or feature"
  const empty = `a task type is empty; give one (${form}), or leave the field out`
  it.each([
    // `taskType:` with nothing after it (YAML null), and `taskType: ""`: said to be empty.
    ["given with nothing (null)", null, empty],
    ["empty", "", empty],
    ["only spaces", "  ", empty],
    ["capitals", "Bugfix", `expected a task type (${form}), got "Bugfix"`],
    ["a space", "bug fix", `expected a task type (${form}), got "bug fix"`],
    ["a leading dash", "-bugfix", `expected a task type (${form}), got "-bugfix"`],
    ["65 characters", "a".repeat(65), `expected a task type (${form}), got "${"a".repeat(65)}"`],
    ["a path", "../bugfix", `expected a task type (${form}), got "../bugfix"`],
    ["a number", 7, `expected a task type (${form}), got the number 7`],
    ["a list", ["bugfix"], `expected a task type (${form}), got a list or mapping`]
  ])("rejects a task type %s, naming the field, the reason and the form", (_name, taskType, message) => {
    expect(issues({ ...minimal, taskType })).toStrictEqual([{ path: "/taskType", message }])
  })

  it("lists an unknown key at the top level and inside nested objects", () => {
    const found = issues({
      ...minimal,
      extra: 1,
      context: { relevantPaths: [], paths: [] },
      acceptanceCriteria: [{ id: "AC-001", outcome: "o", required: true, verfy: { command: "x" } }],
      execution: { retry: { maxSuccessors: 1, backoff: 2 } }
    })
    expect(found.map((issue) => issue.path).sort()).toStrictEqual([
      "/acceptanceCriteria/0/verfy",
      "/context/paths",
      "/execution/retry/backoff",
      "/extra"
    ])
    expect(found.find((issue) => issue.path === "/extra")?.message).toBe(
      `is unexpected, expected: "goal" | "nonGoals" | "constraints" | "decisions" | "context" | "acceptanceCriteria" | "execution" | "taskType"`
    )
  })

  it("rejects a missing goal and missing criteria", () => {
    expect(issues({})).toStrictEqual([
      { path: "/goal", message: "is missing" },
      { path: "/acceptanceCriteria", message: "is missing" }
    ])
  })

  it.each([
    ["a number", 5, "Expected string, actual 5"],
    ["an empty string", "", `Expected a non empty string, actual ""`],
    ["leading whitespace", " g", `Expected a string with no leading or trailing whitespace, actual " g"`],
    ["only whitespace", "  ", `Expected a string with no leading or trailing whitespace, actual "  "`],
    ["a lone surrogate", "a\uD800", "expected a well-formed Unicode string, got one with a lone surrogate (it has no UTF-8 encoding)"]
  ])("rejects a goal that is %s", (_name, goal, message) => {
    expect(issues({ ...minimal, goal })).toStrictEqual([{ path: "/goal", message }])
  })

  it("rejects an explicit undefined for an optional field (absent and undefined are not conflated)", () => {
    expect(issues({ ...minimal, nonGoals: undefined })).toStrictEqual([
      { path: "/nonGoals", message: "Expected an array of strings, actual undefined" }
    ])
  })

  it("rejects wrong types in every list and nested object", () => {
    expect(paths({
      ...minimal,
      nonGoals: ["a", 3],
      constraints: "x",
      decisions: [null],
      context: { relevantPaths: "x", verifiedFacts: [1] },
      execution: { allowedScope: "src", forbiddenScope: [2], testPolicy: 1, retry: { maxSuccessors: "5" } }
    })).toStrictEqual([
      "/nonGoals/1",
      "/constraints",
      "/decisions/0",
      "/context/relevantPaths",
      "/context/verifiedFacts/0",
      "/execution/allowedScope",
      "/execution/forbiddenScope/0",
      "/execution/testPolicy",
      "/execution/retry/maxSuccessors"
    ])
  })

  it("names the expected shape of a nested value of the wrong type", () => {
    expect(issues({
      ...minimal,
      context: [],
      acceptanceCriteria: ["AC-001", { id: "AC-002", outcome: "o", required: true, verify: "npm test", manual: 1 }],
      execution: { retry: 5, allowedScope: "src" }
    })).toStrictEqual([
      { path: "/context", message: "Expected Context, actual []" },
      { path: "/acceptanceCriteria/0", message: `Expected AcceptanceCriterion, actual "AC-001"` },
      { path: "/acceptanceCriteria/1/verify", message: `Expected Verify, actual "npm test"` },
      { path: "/acceptanceCriteria/1/manual", message: "Expected Manual, actual 1" },
      { path: "/execution/allowedScope", message: `Expected an array of relative paths or globs, actual "src"` },
      { path: "/execution/retry", message: "Expected Retry, actual 5" }
    ])
    expect(issues({ ...minimal, execution: null })).toStrictEqual([
      { path: "/execution", message: "Expected Execution, actual null" }
    ])
  })

  it("rejects an empty criteria list with a message saying one is needed", () => {
    expect(issues({ ...minimal, acceptanceCriteria: [] })).toStrictEqual([
      { path: "/acceptanceCriteria", message: "a spec needs at least one acceptance criterion" }
    ])
  })

  it.each(["AC-1", "AC-01", "ac-001", "AC001", "AC-001 ", "AC-00a", "XAC-001", ""])("rejects the criterion id %j", (id) => {
    expect(issues({ ...minimal, acceptanceCriteria: [{ id, outcome: "o", required: true }] })).toStrictEqual([{
      path: "/acceptanceCriteria/0/id",
      message: `expected an acceptance criterion id like "AC-001" ("AC-" and at least three digits), got ${JSON.stringify(id)}`
    }])
  })

  it("lists every bad field of a criterion", () => {
    expect(paths({
      goal: "g",
      acceptanceCriteria: [
        { id: "AC-001", outcome: "", required: "yes", verify: { command: "", expectExitCode: 256, timeoutSeconds: 0 } },
        { id: "AC-002", outcome: "o", required: true, verify: { expectExitCode: -1, timeoutSeconds: 86_401 } },
        { id: "AC-003", outcome: "o", required: true, verify: { command: "c", expectExitCode: 1.5, timeoutSeconds: 1.5 } },
        { id: "AC-004", outcome: "o", required: true, manual: { procedure: "", observer: "" } },
        { id: "AC-005", outcome: "o", required: true, manual: { procedure: "p" } },
        { outcome: "o", required: true }
      ]
    })).toStrictEqual([
      "/acceptanceCriteria/0/outcome",
      "/acceptanceCriteria/0/required",
      "/acceptanceCriteria/0/verify/command",
      "/acceptanceCriteria/0/verify/expectExitCode",
      "/acceptanceCriteria/0/verify/timeoutSeconds",
      "/acceptanceCriteria/1/verify/command",
      "/acceptanceCriteria/1/verify/expectExitCode",
      "/acceptanceCriteria/1/verify/timeoutSeconds",
      "/acceptanceCriteria/2/verify/expectExitCode",
      "/acceptanceCriteria/2/verify/timeoutSeconds",
      "/acceptanceCriteria/3/manual/procedure",
      "/acceptanceCriteria/3/manual/observer",
      "/acceptanceCriteria/4/manual/observer",
      "/acceptanceCriteria/5/id"
    ])
  })

  it("rejects a criterion with both verify and manual, naming it", () => {
    expect(issues({
      goal: "g",
      acceptanceCriteria: [
        { id: "AC-001", outcome: "o", required: true, verify: { command: "c" } },
        { id: "AC-007", outcome: "o", required: true, verify: { command: "c" }, manual: { procedure: "p", observer: "q" } }
      ]
    })).toStrictEqual([{
      path: "/acceptanceCriteria/1",
      message: "acceptance criterion AC-007 has both verify and manual; keep exactly one way to check it"
    }])
  })

  it("rejects duplicate criterion ids, naming the id and where it was first declared", () => {
    expect(issues({
      goal: "g",
      acceptanceCriteria: [
        { id: "AC-001", outcome: "a", required: true },
        { id: "AC-002", outcome: "b", required: true },
        { id: "AC-001", outcome: "c", required: false },
        { id: "AC-002", outcome: "d", required: false },
        { id: "AC-001", outcome: "e", required: false }
      ]
    })).toStrictEqual([
      {
        path: "/acceptanceCriteria/2/id",
        message: "duplicate acceptance criterion id AC-001 (first declared at /acceptanceCriteria/0); give each criterion its own id"
      },
      {
        path: "/acceptanceCriteria/3/id",
        message: "duplicate acceptance criterion id AC-002 (first declared at /acceptanceCriteria/1); give each criterion its own id"
      },
      {
        path: "/acceptanceCriteria/4/id",
        message: "duplicate acceptance criterion id AC-001 (first declared at /acceptanceCriteria/0); give each criterion its own id"
      }
    ])
  })

  const fix = "use a path or glob relative to the repository root that stays inside it"
  it.each([
    ["/etc/passwd", "is absolute (it starts with \"/\")"],
    ["/", "is absolute (it starts with \"/\")"],
    ["..", "escapes the repository (it has a \"..\" segment)"],
    ["../x", "escapes the repository (it has a \"..\" segment)"],
    ["a/../../b", "escapes the repository (it has a \"..\" segment)"],
    ["a/..", "escapes the repository (it has a \"..\" segment)"],
    ["a\\b", "contains a backslash (scope entries use \"/\" separators)"],
    ["..\\x", "contains a backslash (scope entries use \"/\" separators)"],
    ["a\0b", "contains a NUL character"],
    ["", "is empty"]
  ])("rejects the scope entry %j, naming the entry and the field", (entry, problem) => {
    expect(issues({ ...minimal, execution: { allowedScope: ["ok", entry] } })).toStrictEqual([{
      path: "/execution/allowedScope/1",
      message: `execution.allowedScope entry ${JSON.stringify(entry)} ${problem}; ${fix}`
    }])
    expect(issues({ ...minimal, execution: { forbiddenScope: [entry] } })).toStrictEqual([{
      path: "/execution/forbiddenScope/0",
      message: `execution.forbiddenScope entry ${JSON.stringify(entry)} ${problem}; ${fix}`
    }])
  })

  it("lists every issue of a document with many problems at once", () => {
    expect(paths({
      goal: "",
      extra: true,
      decisions: [1],
      acceptanceCriteria: [{ id: "AC-1", outcome: "o", required: true }],
      execution: { allowedScope: ["/abs", "../up"], retry: { maxSuccessors: 6 } }
    })).toStrictEqual([
      "/extra",
      "/goal",
      "/decisions/0",
      "/acceptanceCriteria/0/id",
      "/execution/allowedScope/0",
      "/execution/allowedScope/1",
      "/execution/retry/maxSuccessors"
    ])
  })

  it("has a message counting and listing the issues and saying what to do", () => {
    const one = Spec.decode(null)
    const two = Spec.decode({ goal: 1 })
    expect(Either.isLeft(one) && one.left.message).toBe(
      "the spec is invalid (1 issue); fix each one and submit the spec again:\n  (root): Expected Spec, actual null"
    )
    expect(Either.isLeft(two) && two.left.message).toBe(
      "the spec is invalid (2 issues); fix each one and submit the spec again:\n" +
        "  /goal: Expected string, actual 1\n" +
        "  /acceptanceCriteria: is missing"
    )
  })

  it("escapes JSON Pointer segments in issue paths", () => {
    expect(paths({ ...minimal, "a/b~c": 1 })).toStrictEqual(["/a~1b~0c"])
  })
})

describe("Spec schemas", () => {
  it("Document holds the semantic fields and the body, and nothing else", () => {
    const decodeDocument = Schema.decodeUnknownEither(Spec.Document, { onExcessProperty: "error" })
    const document = { semantic: vectorSpec, body: "# Title" }
    expect(decodeDocument(document)).toStrictEqual(Either.right(document))
    for (const [input, message] of [
      [5, "Expected Document, actual 5"],
      [{ semantic: vectorSpec }, "[\"body\"]\n   └─ is missing"],
      [{ body: "" }, "[\"semantic\"]\n   └─ is missing"],
      [{ ...document, title: "t" }, "[\"title\"]\n   └─ is unexpected"]
    ] as const) {
      const result = decodeDocument(input)
      expect(Either.isLeft(result) && ParseResult.TreeFormatter.formatErrorSync(result.left)).toContain(message)
    }
  })

  it("Issue is a path and a message", () => {
    expect(Schema.is(Spec.Issue)({ path: "/goal", message: "is missing" })).toBe(true)
    expect(Schema.is(Spec.Issue)({ path: "/goal" })).toBe(false)
    expect(Schema.is(Spec.Issue)({ message: "is missing" })).toBe(false)
  })
})

describe("Spec documents", () => {
  it("the editorial body never changes the digest", () => {
    const a: Spec.Document = { semantic: full, body: "# Importer\n\nSome prose." }
    const b: Spec.Document = { semantic: full, body: "# Importer (rewritten)\n\nEntirely different prose, same contract." }
    expect(Spec.documentDigest(a)).toBe(fullDigest)
    expect(Spec.documentDigest(b)).toBe(fullDigest)
  })

  it("the semantic fields do", () => {
    const doc: Spec.Document = { semantic: { ...full, goal: "Ship the exporter" }, body: "# Importer\n\nSome prose." }
    expect(Spec.documentDigest(doc)).not.toBe(fullDigest)
  })

  it("editorial independence holds for any body", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (x, y) => {
        expect(Spec.documentDigest({ semantic: vectorSpec, body: x })).toBe(vectorDigest)
        expect(Spec.documentDigest({ semantic: vectorSpec, body: y })).toBe(vectorDigest)
      })
    )
  })
})

type Edit = readonly [name: string, field: Spec.SemanticField, edit: (spec: Spec.Spec) => Spec.Spec]

const [ac1, ac2] = full.acceptanceCriteria as readonly [Spec.AcceptanceCriterion, Spec.AcceptanceCriterion]
const withAc1 = (s: Spec.Spec, ac: Spec.AcceptanceCriterion): Spec.Spec => ({ ...s, acceptanceCriteria: [ac, ac2] })
const withAc2 = (s: Spec.Spec, ac: Spec.AcceptanceCriterion): Spec.Spec => ({ ...s, acceptanceCriteria: [ac1, ac] })
const verify1 = ac1.verify!
const manual2 = ac2.manual!
const context = full.context!
const execution = full.execution!

const edits: ReadonlyArray<Edit> = [
  ["goal", "goal", (s) => ({ ...s, goal: "Ship the exporter" })],
  ["a non-goal's text", "nonGoals", (s) => ({ ...s, nonGoals: ["Rewrite the importer"] })],
  ["an added non-goal", "nonGoals", (s) => ({ ...s, nonGoals: ["Rewrite the exporter", "Add a GUI"] })],
  ["removed non-goals", "nonGoals", ({ nonGoals: _, ...s }) => s],
  ["a constraint", "constraints", (s) => ({ ...s, constraints: ["No disk access"] })],
  ["a decision", "decisions", (s) => ({ ...s, decisions: ["Use a DOM parser"] })],
  ["context.relevantPaths", "context", (s) => ({ ...s, context: { ...context, relevantPaths: ["src/export"] } })],
  ["context.verifiedFacts", "context", (s) => ({ ...s, context: { ...context, verifiedFacts: ["Node 22 is available"] } })],
  ["an AC id", "acceptanceCriteria", (s) => withAc1(s, { ...ac1, id: "AC-003" })],
  ["an AC outcome", "acceptanceCriteria", (s) => withAc1(s, { ...ac1, outcome: "imports a TSV" })],
  ["an AC required flag", "acceptanceCriteria", (s) => withAc1(s, { ...ac1, required: false })],
  ["an AC verify command", "acceptanceCriteria", (s) => withAc1(s, { ...ac1, verify: { ...verify1, command: "npm run test" } })],
  ["an AC verify exit code", "acceptanceCriteria", (s) => withAc1(s, { ...ac1, verify: { ...verify1, expectExitCode: 1 } })],
  ["an AC verify timeout", "acceptanceCriteria", (s) => withAc1(s, { ...ac1, verify: { ...verify1, timeoutSeconds: 601 } })],
  ["an added AC verify junit report", "acceptanceCriteria", (s) => withAc1(s, { ...ac1, verify: { ...verify1, junit: "reports/junit.xml" } })],
  ["an added AC verify artifact", "acceptanceCriteria", (s) => withAc1(s, { ...ac1, verify: { ...verify1, artifacts: [{ path: "dist/app.js" }] } })],
  [
    "an AC verify artifact hash",
    "acceptanceCriteria",
    (s) => withAc1(s, { ...ac1, verify: { ...verify1, artifacts: [{ path: "dist/app.js", sha256: "a".repeat(64) }] } })
  ],
  ["an AC verify removed", "acceptanceCriteria", (s) => withAc1(s, { id: ac1.id, outcome: ac1.outcome, required: true })],
  ["an AC manual procedure", "acceptanceCriteria", (s) => withAc2(s, { ...ac2, manual: { ...manual2, procedure: "read the docs" } })],
  ["an AC manual observer", "acceptanceCriteria", (s) => withAc2(s, { ...ac2, manual: { ...manual2, observer: "user" } })],
  ["the AC order", "acceptanceCriteria", (s) => ({ ...s, acceptanceCriteria: [ac2, ac1] })],
  ["an added AC", "acceptanceCriteria", (s) => ({ ...s, acceptanceCriteria: [ac1, ac2, { id: "AC-003", outcome: "x", required: true }] })],
  ["execution.allowedScope", "execution", (s) => ({ ...s, execution: { ...execution, allowedScope: ["src/import/**"] } })],
  ["execution.forbiddenScope", "execution", (s) => ({ ...s, execution: { ...execution, forbiddenScope: ["src/**/legacy"] } })],
  ["execution.testPolicy", "execution", (s) => ({ ...s, execution: { ...execution, testPolicy: "tests after" } })],
  ["execution.retry", "execution", (s) => ({ ...s, execution: { ...execution, retry: { maxSuccessors: 4 } } })],
  ["an added task type", "taskType", (s) => ({ ...s, taskType: "bugfix" })]
]

describe("Spec digest sensitivity", () => {
  it.each(edits)("changing %s changes the digest and is reported as %s", (_name, field, edit) => {
    const edited = edit(full)
    expect(Spec.digest(edited)).not.toBe(fullDigest)
    expect(Spec.semanticChanges(full, edited)).toStrictEqual([field])
    expect(Spec.semanticChanges(edited, full)).toStrictEqual([field])
  })

  it("every edit yields a distinct digest", () => {
    const digests = new Set(edits.map(([, , edit]) => Spec.digest(edit(full))))
    expect(digests.size).toBe(edits.length)
  })

  it("reports several changed fields in declaration order", () => {
    const edited: Spec.Spec = { ...full, execution: { testPolicy: "none" }, goal: "Other", decisions: [] }
    expect(Spec.semanticChanges(full, edited)).toStrictEqual(["goal", "decisions", "execution"])
    expect(Spec.semanticChanges(full, full)).toStrictEqual([])
    expect(Spec.semanticChanges(vectorSpec, full)).toStrictEqual([
      "goal",
      "nonGoals",
      "constraints",
      "decisions",
      "context",
      "acceptanceCriteria",
      "execution"
    ])
  })

  it("an explicit default exit code is a change (defaults are not filled in)", () => {
    const explicit = withAc1(full, { ...ac1, verify: { command: "npm test", expectExitCode: 0 } })
    const implicit = withAc1(full, { ...ac1, verify: { command: "npm test" } })
    expect(Spec.digest(explicit)).not.toBe(Spec.digest(implicit))
    expect(Spec.semanticChanges(explicit, implicit)).toStrictEqual(["acceptanceCriteria"])
  })
})

describe("Spec projection omission rule", () => {
  const withEmpties: Spec.Spec = {
    ...vectorSpec,
    decisions: [],
    context: { relevantPaths: ["docs/research/phase-0"], verifiedFacts: [] },
    execution: { allowedScope: ["docs/research/phase-0"], forbiddenScope: [], retry: { maxSuccessors: 5 } }
  }

  it("empty arrays digest like absent ones", () => {
    expect(Spec.projection(withEmpties)).toStrictEqual(Spec.projection(vectorSpec))
    expect(Spec.digest(withEmpties)).toBe(vectorDigest)
    expect(Spec.semanticChanges(vectorSpec, withEmpties)).toStrictEqual([])
  })

  it("objects left empty are omitted", () => {
    const bare: Spec.Spec = { goal: "g", acceptanceCriteria: [{ id: "AC-001", outcome: "o", required: false }] }
    const empties: Spec.Spec = {
      ...bare,
      nonGoals: [],
      constraints: [],
      decisions: [],
      context: { relevantPaths: [], verifiedFacts: [] },
      execution: { allowedScope: [], forbiddenScope: [] }
    }
    const emptyObjects: Spec.Spec = { ...bare, context: {}, execution: {} }
    const expected = { goal: "g", acceptance_criteria: [{ id: "AC-001", outcome: "o", required: false }] }
    expect(Spec.projection(bare)).toStrictEqual(expected)
    expect(Spec.projection(empties)).toStrictEqual(expected)
    expect(Spec.projection(emptyObjects)).toStrictEqual(expected)
    expect(Spec.digest(empties)).toBe(Spec.digest(bare))
    expect(Spec.semanticChanges(bare, empties)).toStrictEqual([])
  })

  it("keeps values that are not empty containers: false, zero and empty strings", () => {
    const spec: Spec.Spec = {
      goal: "g",
      nonGoals: [""],
      acceptanceCriteria: [{ id: "AC-001", outcome: "o", required: false, verify: { command: "c", expectExitCode: 0 } }],
      execution: { testPolicy: "", retry: { maxSuccessors: 0 } }
    }
    expect(Spec.projection(spec)).toStrictEqual({
      goal: "g",
      non_goals: [""],
      acceptance_criteria: [{ id: "AC-001", outcome: "o", required: false, verify: { command: "c", expect_exit_code: 0 } }],
      execution: { test_policy: "", retry: { max_successors: 0 } }
    })
  })
})

const thrown = (f: () => unknown): unknown => {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error("expected a throw")
}

describe("Spec.digest on a hand-built spec that breaks the schema", () => {
  it("is a defect naming the fix", () => {
    const broken: Spec.Spec = {
      ...minimal,
      acceptanceCriteria: [{ id: "AC-001", outcome: "o", required: true, verify: { command: "c", timeoutSeconds: Number.NaN } }]
    }
    const error = thrown(() => Spec.digest(broken))
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toBe(
      "Spec.digest needs a spec produced by Spec.decode: cannot digest the value at /acceptance_criteria/0/verify/timeout_seconds: NaN is not a JSON number; digests are taken over plain JSON data only, so replace it with a JSON value"
    )
  })
})

describe("Spec verify reports and artifacts", () => {
  const withVerify = (verify: Record<string, unknown>) => ({
    goal: "g",
    acceptanceCriteria: [{ id: "AC-001", outcome: "o", required: true, verify: { command: "npm test", ...verify } }]
  })
  const problems = (input: unknown) => {
    const decoded = Spec.decode(input)
    return Either.isLeft(decoded) ? decoded.left.issues.map((issue) => `${issue.path}: ${issue.message}`) : []
  }

  it("accepts a junit report path and artifacts with and without a hash", () => {
    const hash = "0123456789abcdef".repeat(4)
    const decoded = Spec.decode(withVerify({ junit: "reports/junit.xml", artifacts: [{ path: "dist/a.js" }, { path: "dist/b.js", sha256: hash }] }))
    expect(Either.isRight(decoded)).toBe(true)
    if (Either.isRight(decoded)) {
      expect(decoded.right.acceptanceCriteria[0]?.verify).toStrictEqual({
        command: "npm test",
        junit: "reports/junit.xml",
        artifacts: [{ path: "dist/a.js" }, { path: "dist/b.js", sha256: hash }]
      })
      expect(Spec.projection(decoded.right).acceptance_criteria).toStrictEqual([{
        id: "AC-001",
        outcome: "o",
        required: true,
        verify: { command: "npm test", junit: "reports/junit.xml", artifacts: [{ path: "dist/a.js" }, { path: "dist/b.js", sha256: hash }] }
      }])
    }
  })

  it("an empty artifact list digests like none", () => {
    const none = Spec.decode(withVerify({}))
    const empty = Spec.decode(withVerify({ artifacts: [] }))
    expect(Either.isRight(none) && Either.isRight(empty) && Spec.digest(none.right) === Spec.digest(empty.right)).toBe(true)
  })

  it.each([
    [{ junit: "/abs/junit.xml" }, "/acceptanceCriteria/0/verify/junit"],
    [{ junit: "../out/junit.xml" }, "/acceptanceCriteria/0/verify/junit"],
    [{ junit: "" }, "/acceptanceCriteria/0/verify/junit"],
    [{ artifacts: [{ path: "../secret" }] }, "/acceptanceCriteria/0/verify/artifacts/0/path"],
    [{ artifacts: [{ path: "dist/a.js", sha256: "ABC" }] }, "/acceptanceCriteria/0/verify/artifacts/0/sha256"],
    [{ artifacts: [{ path: "dist/a.js", sha256: "A".repeat(64) }] }, "/acceptanceCriteria/0/verify/artifacts/0/sha256"],
    [{ artifacts: [{ sha256: "a".repeat(64) }] }, "/acceptanceCriteria/0/verify/artifacts/0/path"],
    [{ artifacts: "dist/a.js" }, "/acceptanceCriteria/0/verify/artifacts"],
    [{ artifacts: [{ path: "dist/a.js", size: 3 }] }, "/acceptanceCriteria/0/verify/artifacts/0/size"]
  ])("rejects %j at %s", (verify, path) => {
    const found = problems(withVerify(verify))
    expect(found.length).toBeGreaterThan(0)
    expect(found.every((problem) => problem.startsWith(`${path}:`))).toBe(true)
  })

  it("a bad hash names the expected form", () => {
    expect(problems(withVerify({ artifacts: [{ path: "a", sha256: "xyz" }] })).join("\n")).toContain("64 lowercase hex digits")
  })

  it("a bad hash with extra characters before or after the 64 hex digits is refused", () => {
    const hex = "a".repeat(64)
    expect(problems(withVerify({ artifacts: [{ path: "a", sha256: `x${hex}` }] }))).toHaveLength(1)
    expect(problems(withVerify({ artifacts: [{ path: "a", sha256: `${hex}x` }] }))).toHaveLength(1)
  })

  it("names the field a bad path is in", () => {
    expect(problems(withVerify({ junit: "/abs.xml" })).join("\n")).toContain("verify.junit entry \"/abs.xml\" is absolute")
    expect(problems(withVerify({ artifacts: [{ path: "/abs" }] })).join("\n")).toContain("verify.artifacts[].path entry \"/abs\" is absolute")
  })

  it("names the expected shape of an artifact that is not an object", () => {
    expect(problems(withVerify({ artifacts: ["dist/a.js"] })).join("\n")).toContain("Artifact")
  })

  it("a path escaping the repository says so", () => {
    expect(problems(withVerify({ junit: "../x.xml" })).join("\n")).toContain("escapes the repository")
  })
})
