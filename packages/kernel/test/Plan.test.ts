/**
 * Plans: strict decoding, every load error named by step and field, the deterministic topological
 * order, the semantic projection (titles are editorial) and digest sensitivity. Expected issue
 * lists, orders and projections are written by hand; expected digests come from `sha256sum` over
 * hand-written canonical text.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Digest from "../src/Digest.js"
import * as Plan from "../src/Plan.js"
import * as Spec from "../src/Spec.js"

const spec: Spec.Spec = {
  goal: "Ship the importer",
  acceptanceCriteria: [
    { id: "AC-001", outcome: "imports a CSV", required: true },
    { id: "AC-002", outcome: "rejects bad rows", required: true },
    { id: "AC-003", outcome: "is fast", required: false }
  ]
}
// printf '%s' '{"acceptance_criteria":[{"id":"AC-001",...}],"goal":"Ship the importer"}' | sha256sum
const specDigest = "sha256:d73d79806e734419da4f42859c6d19d381ae1bc56e966c7ae04343c0a68bc747" as Digest.Digest
const otherDigest = `sha256:${"0".repeat(64)}` as Digest.Digest

const plan: Plan.Plan = {
  specDigest,
  stepStates: ["queued", "blocked-on-review"],
  steps: [
    { id: "setup", title: "Install dependencies", acRefs: [], run: { command: "npm ci" }, idempotent: true },
    {
      id: "parse",
      title: "Write the parser",
      acRefs: ["AC-001"],
      run: { command: "npm test -- parse" },
      needs: ["setup"],
      timeoutSeconds: 600,
      probe: { command: "test -f src/parse.ts" },
      state: "queued"
    },
    {
      id: "validate",
      title: "Validate rows",
      acRefs: ["AC-002", "AC-003"],
      manual: { instructions: "feed a bad CSV" },
      needs: ["setup"]
    },
    {
      id: "docs",
      title: "Document it",
      acRefs: [],
      manual: { instructions: "write docs" },
      needs: ["validate", "parse"],
      state: "blocked-on-review"
    }
  ]
}

const planCanonical = `{"spec_digest":"${specDigest}","step_states":["queued","blocked-on-review"],"steps":[` +
  `{"id":"setup","idempotent":true,"run":{"command":"npm ci"}},` +
  `{"ac_refs":["AC-001"],"id":"parse","needs":["setup"],"probe":{"command":"test -f src/parse.ts"},` +
  `"run":{"command":"npm test -- parse"},"state":"queued","timeout_seconds":600},` +
  `{"ac_refs":["AC-002","AC-003"],"id":"validate","manual":{"instructions":"feed a bad CSV"},"needs":["setup"]},` +
  `{"id":"docs","manual":{"instructions":"write docs"},"needs":["validate","parse"],"state":"blocked-on-review"}]}`
// printf '%s' "$planCanonical" | sha256sum
const planDigest = "sha256:82958af4a6df12d51cb751f1f8f9438a0f09cec3ad4bc3d773465734d9bd03ea" as Digest.Digest

type RawStep = { readonly id: string; readonly [key: string]: unknown }

const step = (id: string, extra: Record<string, unknown> = {}): RawStep => ({
  id,
  title: `Step ${id}`,
  acRefs: [],
  run: { command: `make ${id}` },
  ...extra
})

/** A plan over `spec` whose first step covers both required criteria. */
const planOf = (...steps: ReadonlyArray<RawStep>) => ({
  specDigest,
  steps: steps.map((s, i) => (i === 0 ? { ...s, acRefs: ["AC-001", "AC-002", ...(s["acRefs"] as Array<string>)] } : s))
})

const issues = (input: unknown, against: Spec.Spec = spec): ReadonlyArray<Spec.Issue> => {
  const result = Plan.decode(input, against)
  if (Either.isRight(result)) throw new Error("expected the plan to be rejected")
  expect(result.left._tag).toBe("@ratchet/kernel/PlanInvalid")
  return result.left.issues
}

const decoded = (input: unknown): Plan.Plan => {
  const result = Plan.decode(input, spec)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

describe("Plan.decode accepted inputs", () => {
  it("accepts a plan that covers every required criterion", () => {
    expect(Plan.decode(plan, spec)).toStrictEqual(Either.right(plan))
  })

  it.each([
    ["the shortest step id", "a"],
    ["a digit first", "0-a"],
    ["64 characters", `a${"-".repeat(63)}`]
  ])("accepts %s", (_name, id) => {
    expect(Either.isRight(Plan.decode(planOf(step(id)), spec))).toBe(true)
  })

  it("accepts timeout bounds, idempotent false and a probe", () => {
    const input = planOf(
      step("a", { timeoutSeconds: 1, idempotent: false, probe: { command: "true" } }),
      step("b", { timeoutSeconds: 86_400 })
    )
    expect(Plan.decode(input, spec)).toStrictEqual(Either.right(input))
  })

  it("accepts a state among the declared states and repeated needs", () => {
    const input = { ...planOf(step("a"), step("b", { needs: ["a", "a"], state: "waiting" })), stepStates: ["waiting"] }
    expect(Either.isRight(Plan.decode(input, spec))).toBe(true)
  })

  it("needs no step for an optional criterion", () => {
    expect(Either.isRight(Plan.decode(planOf(step("a")), spec))).toBe(true)
  })
})

describe("Plan.decode schema errors", () => {
  it.each([null, [], 7, "plan"])("rejects %j as the whole document", (input) => {
    expect(issues(input)).toStrictEqual([{ path: "", message: `Expected Plan, actual ${JSON.stringify(input)}` }])
  })

  it("rejects unknown keys at every level", () => {
    expect(
      issues({ ...planOf(step("a", { extra: 1, run: { command: "x", shell: "sh" } })), version: 2 }).map((i) => i.path)
    ).toStrictEqual(["/version", "/steps/0/extra", "/steps/0/run/shell"])
  })

  it("names the expected shape of a nested value of the wrong type", () => {
    expect(issues({ specDigest: 5, steps: [5, step("a", { run: "x", manual: 1, probe: 2 })] })).toStrictEqual([
      { path: "/specDigest", message: "Expected string, actual 5" },
      { path: "/steps/0", message: "Expected Step, actual 5" },
      { path: "/steps/1/run", message: `Expected Command, actual "x"` },
      { path: "/steps/1/manual", message: "Expected Instructions, actual 1" },
      { path: "/steps/1/probe", message: "Expected Command, actual 2" }
    ])
  })

  it("rejects a missing or empty step list and a missing digest", () => {
    expect(issues({})).toStrictEqual([
      { path: "/specDigest", message: "is missing" },
      { path: "/steps", message: "is missing" }
    ])
    expect(issues({ specDigest, steps: [] })).toStrictEqual([{ path: "/steps", message: "a plan needs at least one step" }])
  })

  it("rejects a malformed spec digest", () => {
    expect(issues({ ...planOf(step("a")), specDigest: "sha256:abc" })).toStrictEqual([{
      path: "/specDigest",
      message: `expected a digest: "sha256:" followed by 64 lowercase hexadecimal characters, got "sha256:abc"`
    }])
  })

  it.each(["Build", "-a", "a_b", "a b", "", `a${"b".repeat(64)}`])("rejects the step id %j", (id) => {
    expect(issues(planOf(step(id)))).toStrictEqual([{
      path: "/steps/0/id",
      message:
        `expected a step id of lowercase letters, digits and "-" (starting with a letter or digit, at most 64 characters), got ${
          JSON.stringify(id)
        }`
    }])
  })

  it("rejects a step with both run and manual, or neither, naming the step", () => {
    const both = step("both", { manual: { instructions: "do it" } })
    const { run: _, ...neither } = step("neither")
    expect(issues(planOf(step("a"), both, neither))).toStrictEqual([
      {
        path: "/steps/1",
        message: `step "both" has run and manual; give it exactly one: a command to run, instructions for a person, or an agent's prompt`
      },
      {
        path: "/steps/2",
        message: `step "neither" has none of run, manual and agent; give it exactly one: a command to run, instructions for a person, or an agent's prompt`
      }
    ])
  })

  it("lists every bad field of a step", () => {
    expect(
      issues({ specDigest, steps: [step("a", {
        title: "",
        acRefs: "AC-001",
        run: { command: "" },
        needs: [1],
        timeoutSeconds: 0,
        idempotent: "yes",
        probe: { command: "" },
        state: 3
      })] }).map((i) => i.path)
    ).toStrictEqual([
      "/steps/0/title",
      "/steps/0/acRefs",
      "/steps/0/run/command",
      "/steps/0/needs/0",
      "/steps/0/timeoutSeconds",
      "/steps/0/idempotent",
      "/steps/0/probe/command",
      "/steps/0/state"
    ])
    expect(issues(planOf(step("a", { timeoutSeconds: 86_401 }))).map((i) => i.path)).toStrictEqual(["/steps/0/timeoutSeconds"])
    expect(issues(planOf(step("a", { timeoutSeconds: 1.5 }))).map((i) => i.path)).toStrictEqual(["/steps/0/timeoutSeconds"])
    expect(issues({ ...planOf(step("a")), stepStates: "x" })).toStrictEqual([
      { path: "/stepStates", message: `Expected an array of strings, actual "x"` }
    ])
    expect(issues(planOf(step("a", { manual: { instructions: "" } }))).map((i) => i.path)).toStrictEqual([
      "/steps/0/manual/instructions"
    ])
  })
})

describe("Plan.decode load validation", () => {
  it("rejects a stale spec digest", () => {
    expect(issues({ ...plan, specDigest: otherDigest })).toStrictEqual([{
      path: "/specDigest",
      message:
        `the plan was made for spec ${otherDigest} but the current spec is ${specDigest}; the plan is stale, regenerate it against the current spec`
    }])
  })

  it("rejects a plan after its spec changed", () => {
    const changed: Spec.Spec = { ...spec, goal: "Ship the exporter" }
    expect(issues(plan, changed).map((i) => i.path)).toStrictEqual(["/specDigest"])
  })

  it("rejects duplicate step ids, naming the id and the first declaration", () => {
    expect(issues(planOf(step("a"), step("b"), step("a"), step("b")))).toStrictEqual([
      {
        path: "/steps/2/id",
        message: `duplicate step id "a" (first declared at /steps/0); give each step its own id`
      },
      {
        path: "/steps/3/id",
        message: `duplicate step id "b" (first declared at /steps/1); give each step its own id`
      }
    ])
  })

  it("rejects needs on an unknown step, naming the step and the missing one", () => {
    expect(issues(planOf(step("a"), step("b", { needs: ["a", "c", "setup"] })))).toStrictEqual([
      { path: "/steps/1/needs/1", message: `step "b" needs "c", which is not a step of this plan` },
      { path: "/steps/1/needs/2", message: `step "b" needs "setup", which is not a step of this plan` }
    ])
  })

  it("rejects a cycle, spelling it out", () => {
    expect(issues(planOf(step("a", { needs: ["b"] }), step("b", { needs: ["c"] }), step("c", { needs: ["a"] }))))
      .toStrictEqual([{
        path: "/steps/2/needs/0",
        message: "steps form a cycle through needs: a → b → c → a; remove one of these needs"
      }])
  })

  it("rejects a step that needs itself", () => {
    expect(issues(planOf(step("a"), step("b", { needs: ["a", "b"] })))).toStrictEqual([{
      path: "/steps/1/needs/1",
      message: "steps form a cycle through needs: b → b; remove one of these needs"
    }])
  })

  it("names only the steps on the cycle, and every separate cycle", () => {
    expect(issues(planOf(
      step("root", { needs: ["x"] }),
      step("x", { needs: ["y"] }),
      step("y", { needs: ["x"] }),
      step("p", { needs: ["q", "root"] }),
      step("q", { needs: ["p"] })
    ))).toStrictEqual([
      { path: "/steps/2/needs/0", message: "steps form a cycle through needs: x → y → x; remove one of these needs" },
      { path: "/steps/4/needs/0", message: "steps form a cycle through needs: p → q → p; remove one of these needs" }
    ])
  })

  it("reports each cycle once, however the walk reaches it", () => {
    expect(issues(planOf(step("a", { needs: ["b"] }), step("b", { needs: ["b"] })))).toStrictEqual([{
      path: "/steps/1/needs/0",
      message: "steps form a cycle through needs: b → b; remove one of these needs"
    }])
    expect(issues(planOf(step("a", { needs: ["a"] }), step("b", { needs: ["a"] })))).toStrictEqual([{
      path: "/steps/0/needs/0",
      message: "steps form a cycle through needs: a → a; remove one of these needs"
    }])
  })

  it("does not mistake a diamond for a cycle", () => {
    expect(Either.isRight(Plan.decode(
      planOf(step("a"), step("b", { needs: ["a"] }), step("c", { needs: ["a"] }), step("d", { needs: ["b", "c"] })),
      spec
    ))).toBe(true)
  })

  it("handles a long chain without exhausting the stack", () => {
    const chain = Array.from({ length: 20_000 }, (_, i) => step(`s${i}`, i === 0 ? {} : { needs: [`s${i - 1}`] }))
    const closed = [{ ...chain[0]!, needs: ["s19999"] }, ...chain.slice(1)]
    expect(Either.isRight(Plan.decode(planOf(...chain), spec))).toBe(true)
    expect(issues(planOf(...closed)).map((i) => i.path)).toStrictEqual(["/steps/1/needs/0"])
    expect(Plan.topologicalOrder(decoded(planOf(...chain.slice().reverse())))).toHaveLength(20_000)
  })

  it("rejects acRefs naming a criterion the spec lacks", () => {
    expect(issues(planOf(step("a"), step("b", { acRefs: ["AC-003", "AC-009", "ac-001"] })))).toStrictEqual([
      {
        path: "/steps/1/acRefs/1",
        message: `step "b" refers to "AC-009", which is not an acceptance criterion of the spec (it has "AC-001", "AC-002", "AC-003")`
      },
      {
        path: "/steps/1/acRefs/2",
        message: `step "b" refers to "ac-001", which is not an acceptance criterion of the spec (it has "AC-001", "AC-002", "AC-003")`
      }
    ])
  })

  it("rejects a plan that leaves required criteria uncovered, naming each", () => {
    const uncovered = { specDigest, steps: [step("a", { acRefs: ["AC-003"] })] }
    expect(issues(uncovered)).toStrictEqual([
      {
        path: "/steps",
        message: "required acceptance criterion AC-001 is not covered by any step; add it to the acRefs of a step that makes it hold"
      },
      {
        path: "/steps",
        message: "required acceptance criterion AC-002 is not covered by any step; add it to the acRefs of a step that makes it hold"
      }
    ])
    const partly = { specDigest, steps: [step("a", { acRefs: ["AC-001"] }), step("b", { acRefs: ["AC-001"] })] }
    expect(issues(partly).map((i) => i.message)).toStrictEqual([
      "required acceptance criterion AC-002 is not covered by any step; add it to the acRefs of a step that makes it hold"
    ])
  })

  it("rejects a state outside the declared step states, naming the state and the step", () => {
    const declared = { ...planOf(step("a", { state: "queued" }), step("b", { state: "flaky" })), stepStates: ["queued", "done"] }
    expect(issues(declared)).toStrictEqual([{
      path: "/steps/1/state",
      message: `step "b" has unknown state "flaky"; the plan's stepStates are "queued", "done"`
    }])
    const undeclared = planOf(step("a", { state: "queued" }))
    expect(issues(undeclared)).toStrictEqual([{
      path: "/steps/0/state",
      message: `step "a" has unknown state "queued"; the plan's stepStates are not declared`
    }])
    expect(issues({ ...undeclared, stepStates: [] }).map((i) => i.path)).toStrictEqual(["/steps/0/state"])
  })

  it("lists every load issue at once, in a stable order", () => {
    const input = {
      specDigest: otherDigest,
      stepStates: ["queued"],
      steps: [
        step("a", { needs: ["b"], acRefs: ["AC-001"] }),
        step("b", { needs: ["a", "zz"], acRefs: ["AC-404"], state: "odd" }),
        step("a")
      ]
    }
    expect(issues(input).map((i) => i.path)).toStrictEqual([
      "/specDigest",
      "/steps/1/needs/1",
      "/steps/1/acRefs/0",
      "/steps/1/state",
      "/steps/2/id",
      "/steps/1/needs/0",
      "/steps"
    ])
  })

  it("has a message counting and listing the issues", () => {
    const one = Plan.decode({ ...plan, specDigest: otherDigest }, spec)
    expect(Either.isLeft(one) && one.left.message).toBe(
      "the plan is invalid (1 issue); fix each one and load the plan again:\n" +
        `  /specDigest: the plan was made for spec ${otherDigest} but the current spec is ${specDigest}; the plan is stale, regenerate it against the current spec`
    )
    const two = Plan.decode({}, spec)
    expect(Either.isLeft(two) && two.left.message).toBe(
      "the plan is invalid (2 issues); fix each one and load the plan again:\n  /specDigest: is missing\n  /steps: is missing"
    )
    const root = Plan.decode(null, spec)
    expect(Either.isLeft(root) && root.left.message).toBe(
      "the plan is invalid (1 issue); fix each one and load the plan again:\n  (root): Expected Plan, actual null"
    )
  })
})

describe("Plan.topologicalOrder", () => {
  const order = (...steps: ReadonlyArray<RawStep>) => Plan.topologicalOrder(decoded(planOf(...steps)))

  it.each([
    ["the reference plan", () => Plan.topologicalOrder(plan), ["setup", "parse", "validate", "docs"]],
    ["no needs keeps declaration order", () => order(step("c"), step("a"), step("b")), ["c", "a", "b"]],
    ["a reversed chain", () =>
      order(step("d", { needs: ["c"] }), step("c", { needs: ["b"] }), step("b", { needs: ["a"] }), step("a")), [
      "a",
      "b",
      "c",
      "d"
    ]],
    ["ready steps in declaration order", () => order(step("x", { needs: ["z"] }), step("y"), step("z")), ["y", "z", "x"]],
    ["a released step goes before later-declared ready ones", () =>
      order(step("p", { needs: ["q"] }), step("q"), step("r")), ["q", "p", "r"]],
    ["a released step goes after earlier-declared ready ones", () =>
      order(step("a"), step("b", { needs: ["c"] }), step("c"), step("d"), step("e", { needs: ["a"] })), [
      "a",
      "c",
      "b",
      "d",
      "e"
    ]],
    ["a diamond", () =>
      order(step("d", { needs: ["b", "c"] }), step("c", { needs: ["a"] }), step("b", { needs: ["a"] }), step("a")), [
      "a",
      "c",
      "b",
      "d"
    ]],
    ["repeated needs", () => order(step("b", { needs: ["a", "a"] }), step("a")), ["a", "b"]]
  ])("%s", (_name, run, expected) => {
    expect(run()).toStrictEqual(expected)
  })

  it("leaves out steps on or behind a cycle in a hand-built plan and ignores unknown needs", () => {
    const handBuilt = {
      specDigest,
      steps: [
        { id: "a", title: "A", acRefs: [], run: { command: "a" }, needs: ["b"] },
        { id: "b", title: "B", acRefs: [], run: { command: "b" }, needs: ["a"] },
        { id: "c", title: "C", acRefs: [], run: { command: "c" }, needs: ["a"] },
        { id: "d", title: "D", acRefs: [], run: { command: "d" }, needs: ["ghost"] }
      ]
    } satisfies Plan.Plan
    expect(Plan.topologicalOrder(handBuilt)).toStrictEqual(["d"])
  })
})

describe("Plan projection and digest", () => {
  it("projects with snake_case keys and without titles", () => {
    expect(Plan.projection(plan)).toStrictEqual({
      spec_digest: specDigest,
      step_states: ["queued", "blocked-on-review"],
      steps: [
        { id: "setup", run: { command: "npm ci" }, idempotent: true },
        {
          id: "parse",
          ac_refs: ["AC-001"],
          run: { command: "npm test -- parse" },
          needs: ["setup"],
          timeout_seconds: 600,
          probe: { command: "test -f src/parse.ts" },
          state: "queued"
        },
        { id: "validate", ac_refs: ["AC-002", "AC-003"], manual: { instructions: "feed a bad CSV" }, needs: ["setup"] },
        { id: "docs", manual: { instructions: "write docs" }, needs: ["validate", "parse"], state: "blocked-on-review" }
      ]
    })
    expect(Digest.canonicalize(Plan.projection(plan))).toStrictEqual(Either.right(planCanonical))
    expect(Plan.digest(plan)).toBe(planDigest)
  })

  it("a title change keeps the digest", () => {
    const retitled: Plan.Plan = { ...plan, steps: plan.steps.map((s) => ({ ...s, title: `${s.title} (renamed)` })) }
    expect(Plan.digest(retitled)).toBe(planDigest)
  })

  it("empty arrays digest like absent ones", () => {
    const withEmpties: Plan.Plan = {
      specDigest,
      stepStates: [],
      steps: [{ id: "a", title: "A", acRefs: [], run: { command: "x" }, needs: [] }]
    }
    const bare: Plan.Plan = { specDigest, steps: [{ id: "a", title: "B", acRefs: [], run: { command: "x" } }] }
    expect(Plan.projection(withEmpties)).toStrictEqual({ spec_digest: specDigest, steps: [{ id: "a", run: { command: "x" } }] })
    expect(Plan.digest(withEmpties)).toBe(Plan.digest(bare))
  })

  const [setup, parse, validate, docs] = plan.steps as readonly [Plan.Step, Plan.Step, Plan.Step, Plan.Step]
  const { run: _run, ...parseWithoutRun } = parse
  const withParse = (p: Plan.Step): Plan.Plan => ({ ...plan, steps: [setup, p, validate, docs] })
  const edits: ReadonlyArray<readonly [string, Plan.Plan]> = [
    ["specDigest", { ...plan, specDigest: otherDigest }],
    ["stepStates", { ...plan, stepStates: ["queued", "blocked-on-review", "extra"] }],
    ["stepStates order", { ...plan, stepStates: ["blocked-on-review", "queued"] }],
    ["step order", { ...plan, steps: [setup, validate, parse, docs] }],
    ["a removed step", { ...plan, steps: [setup, parse, validate] }],
    ["a step id", withParse({ ...parse, id: "parse-csv" })],
    ["acRefs", withParse({ ...parse, acRefs: ["AC-001", "AC-003"] })],
    ["run.command", withParse({ ...parse, run: { command: "npm test" } })],
    ["run replaced by manual", withParse({ ...parseWithoutRun, manual: { instructions: "npm test -- parse" } })],
    ["manual.instructions", { ...plan, steps: [setup, parse, { ...validate, manual: { instructions: "feed two bad CSVs" } }, docs] }],
    ["needs", withParse({ ...parse, needs: [] })],
    ["needs order", { ...plan, steps: [setup, parse, validate, { ...docs, needs: ["parse", "validate"] }] }],
    ["timeoutSeconds", withParse({ ...parse, timeoutSeconds: 601 })],
    ["idempotent", { ...plan, steps: [{ ...setup, idempotent: false }, parse, validate, docs] }],
    ["probe", withParse({ ...parse, probe: { command: "test -f src/parse.js" } })],
    ["state", withParse({ ...parse, state: "blocked-on-review" })]
  ]

  it.each(edits)("changing %s changes the digest", (_name, edited) => {
    expect(Plan.digest(edited)).not.toBe(planDigest)
  })

  it("every edit yields a distinct digest", () => {
    expect(new Set(edits.map(([, edited]) => Plan.digest(edited))).size).toBe(edits.length)
  })

  it("a hand-built plan that breaks the schema is a defect naming the fix", () => {
    const broken: Plan.Plan = { ...plan, steps: [{ ...setup, timeoutSeconds: Number.POSITIVE_INFINITY }] }
    let error: unknown
    try {
      Plan.digest(broken)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toBe(
      "Plan.digest needs a plan produced by Plan.decode: cannot digest the value at /steps/0/timeout_seconds: Infinity is not a JSON number; digests are taken over plain JSON data only, so replace it with a JSON value"
    )
  })
})
