/**
 * Agent steps in a plan: the accepted shapes, every bound refused with its field, reason and fix,
 * the kind rules (exactly one kind; no idempotent, probe or step timeout on an agent step) and the
 * digest: every agent field is semantic, so an edit no longer matches an approval. Expected
 * messages and projections are written by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as AgentStep from "../src/AgentStep.js"
import type * as Digest from "../src/Digest.js"
import * as Plan from "../src/Plan.js"
import * as Spec from "../src/Spec.js"

const spec: Spec.Spec = { goal: "Ship it", acceptanceCriteria: [{ id: "AC-001", outcome: "it ships", required: true }] }
const specDigest = Spec.digest(spec)

const agentStep = (agent: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  specDigest,
  steps: [{ id: "impl", title: "Implement", acRefs: ["AC-001"], agent, ...extra }]
})

const decoded = (input: unknown): Plan.Plan => {
  const result = Plan.decode(input, spec)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

const issues = (input: unknown): ReadonlyArray<Spec.Issue> => {
  const result = Plan.decode(input, spec)
  if (Either.isRight(result)) throw new Error("expected the plan to be rejected")
  return result.left.issues
}

const base = { host: "claude-code", prompt: "Add a --json flag to list.\n\tKeep the text output." }

describe("AgentStep in Plan.decode: accepted", () => {
  it("accepts the smallest agent step and reads its kind", () => {
    const plan = decoded(agentStep(base))
    expect(plan.steps[0]!.agent).toStrictEqual(base)
    expect(Plan.kindOf(plan.steps[0]!)).toBe("agent")
  })

  it("accepts every optional field at its bounds, and both hosts", () => {
    for (const host of AgentStep.hosts) {
      const full = { ...base, host, timeoutSeconds: 86_400, model: "claude-opus-4-1[1m]", maxTurns: 500 }
      expect(decoded(agentStep(full)).steps[0]!.agent).toStrictEqual(full)
      const low = { ...base, host, timeoutSeconds: 1, model: "o3", maxTurns: 1 }
      expect(decoded(agentStep(low)).steps[0]!.agent).toStrictEqual(low)
    }
  })

  it("accepts a prompt of exactly the byte limit, counted in UTF-8", () => {
    // "é" is two bytes of UTF-8: the limit is on bytes, not characters.
    const prompt = "é".repeat(AgentStep.maxPromptBytes / 2)
    expect(decoded(agentStep({ ...base, prompt })).steps[0]!.agent?.prompt).toBe(prompt)
  })

  it("accepts model names of the shapes hosts use", () => {
    for (const model of ["sonnet", "gpt-5-codex", "claude-sonnet-4-5@20250929", "openai/gpt-oss:20b", "m".repeat(128)]) {
      expect(decoded(agentStep({ ...base, model })).steps[0]!.agent?.model).toBe(model)
    }
  })

  it("reads the kind of each step", () => {
    expect(Plan.kindOf({ id: "a", title: "A", acRefs: [], run: { command: "x" } })).toBe("command")
    expect(Plan.kindOf({ id: "a", title: "A", acRefs: [], manual: { instructions: "x" } })).toBe("manual")
    expect(Plan.kindOf({ id: "a", title: "A", acRefs: [], agent: { host: "codex", prompt: "x" } })).toBe("agent")
  })
})

describe("AgentStep in Plan.decode: refused", () => {
  it("refuses a missing host or prompt and an unknown key", () => {
    expect(issues(agentStep({ prompt: "x", shell: "bash" }))).toStrictEqual([
      { path: "/steps/0/agent/shell", message: `is unexpected, expected: "host" | "prompt" | "timeoutSeconds" | "model" | "maxTurns"` },
      { path: "/steps/0/agent/host", message: "is missing" }
    ])
  })

  it.each(["claude", "Codex", "", "codex\n--yolo"])("refuses the host %j, naming the two hosts", (host) => {
    expect(issues(agentStep({ ...base, host }))).toStrictEqual([{
      path: "/steps/0/agent/host",
      message: `expected the host "claude-code" or "codex", got ${JSON.stringify(host)}; name the agent program the runner starts`
    }])
  })

  it.each(["", "  \n\t "])("refuses the empty prompt %j", (prompt) => {
    expect(issues(agentStep({ ...base, prompt }))).toStrictEqual([{
      path: "/steps/0/agent/prompt",
      message: "the prompt is empty; write what the agent should do"
    }])
  })

  it("refuses a prompt one byte over the limit, saying how long it is and what to do", () => {
    const prompt = `${"é".repeat(AgentStep.maxPromptBytes / 2)}x`
    expect(issues(agentStep({ ...base, prompt }))).toStrictEqual([{
      path: "/steps/0/agent/prompt",
      message:
        "the prompt is 65537 bytes of UTF-8, more than the 65536 allowed; shorten it, or put the details in a file of the repository and name that file in the prompt"
    }])
  })

  it.each([
    ["NUL", "run\u0000rm -rf /", "U+0000", 3],
    ["carriage return", "line one\r\nline two", "U+000D", 8],
    ["escape sequence", "ok \u001b[2K\u001b[1Gapproved", "U+001B", 3],
    ["DEL", "x\u007f", "U+007F", 1],
    ["C1 control", "x\u009by", "U+009B", 1],
    ["vertical tab", "a\u000bb", "U+000B", 1]
  ])("refuses a prompt holding a %s, naming the character and where", (_name, prompt, code, offset) => {
    expect(issues(agentStep({ ...base, prompt }))).toStrictEqual([{
      path: "/steps/0/agent/prompt",
      message:
        `the prompt holds the control character ${code} at offset ${offset}; only tab and newline are allowed (write line ends as plain newlines and remove escape sequences)`
    }])
  })

  it("refuses a prompt with a lone surrogate (it has no UTF-8 form)", () => {
    expect(issues(agentStep({ ...base, prompt: "a\ud800b" })).map((i) => i.path)).toStrictEqual(["/steps/0/agent/prompt"])
  })

  it.each(["", "-m", "--dangerously-skip-permissions", "two words", "gpt\n5", "m".repeat(129), "é"])(
    "refuses the model %j, with the allowed shape and an example",
    (model) => {
      const found = issues(agentStep({ ...base, model }))
      expect(found.map((i) => i.path)).toStrictEqual(["/steps/0/agent/model"])
      expect(found[0]!.message).toContain(`expected a model name on one line`)
      expect(found[0]!.message).toContain(`got ${JSON.stringify(model.slice(0, 80))}`)
      expect(found[0]!.message).toContain(`for example "claude-sonnet-4-5"`)
    }
  )

  it.each([
    ["timeoutSeconds", 0, 86_400],
    ["timeoutSeconds", -5, 86_400],
    ["timeoutSeconds", 1.5, 86_400],
    ["timeoutSeconds", 86_401, 86_400],
    ["maxTurns", 0, 500],
    ["maxTurns", 501, 500],
    ["maxTurns", 2.25, 500]
  ])("refuses %s = %d, naming the bounds", (field, value, max) => {
    expect(issues(agentStep({ ...base, [field]: value }))).toStrictEqual([{
      path: `/steps/0/agent/${field}`,
      message: `expected ${field} to be a whole number from 1 to ${max}, got ${value}; give a positive whole number no larger than ${max}`
    }])
  })

  it("refuses a limit of the wrong type", () => {
    expect(issues(agentStep({ ...base, maxTurns: "10" }))).toStrictEqual([
      { path: "/steps/0/agent/maxTurns", message: `Expected number, actual "10"` }
    ])
  })

  it("lists every bad agent field at once", () => {
    expect(
      issues(agentStep({ host: "gemini", prompt: "\u0007", model: "-x", timeoutSeconds: 0, maxTurns: 0 })).map((i) => i.path)
    ).toStrictEqual([
      "/steps/0/agent/host",
      "/steps/0/agent/prompt",
      "/steps/0/agent/timeoutSeconds",
      "/steps/0/agent/model",
      "/steps/0/agent/maxTurns"
    ])
  })

  it("refuses an agent step that also has run or manual, naming the kinds", () => {
    expect(issues(agentStep(base, { run: { command: "make" } }))).toStrictEqual([{
      path: "/steps/0",
      message: `step "impl" has run and agent; give it exactly one: a command to run, instructions for a person, or an agent's prompt`
    }])
    expect(issues(agentStep(base, { run: { command: "make" }, manual: { instructions: "x" } }))[0]!.message).toContain(
      `has run and manual and agent;`
    )
  })

  it.each([
    [{ idempotent: true }, "idempotent"],
    [{ idempotent: false }, "idempotent"],
    [{ probe: { command: "test -f done" } }, "probe"],
    [{ timeoutSeconds: 60 }, "timeoutSeconds"],
    [{ idempotent: true, probe: { command: "x" } }, "idempotent and probe"]
  ])("refuses an agent step with %j, saying it is never re-run", (extra, named) => {
    expect(issues(agentStep(base, extra))).toStrictEqual([{
      path: "/steps/0",
      message:
        `agent step "impl" has ${named}; an agent step is never re-run or probed on recovery (an unresolved call makes its attempt Indeterminate), so remove idempotent and probe, and give its timeout as agent.timeoutSeconds`
    }])
  })
})

describe("AgentStep in the plan digest", () => {
  const full = { host: "codex", prompt: "Fix the flaky test.", timeoutSeconds: 900, model: "gpt-5-codex", maxTurns: 30 }
  const plan = decoded(agentStep(full))
  const approved: Digest.Digest = Plan.digest(plan)
  const withAgent = (agent: Record<string, unknown>) => Plan.digest(decoded(agentStep(agent)))

  it("projects every agent field in snake_case", () => {
    expect(Plan.projection(plan).steps[0]).toStrictEqual({
      id: "impl",
      ac_refs: ["AC-001"],
      agent: { host: "codex", prompt: "Fix the flaky test.", timeout_seconds: 900, model: "gpt-5-codex", max_turns: 30 }
    })
  })

  const edits: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["the prompt", { ...full, prompt: "Fix the flaky test. Then delete the tests." }],
    ["the prompt by one trailing newline", { ...full, prompt: "Fix the flaky test.\n" }],
    ["the host", { ...full, host: "claude-code" }],
    ["the model", { ...full, model: "o3" }],
    ["the model, removed", { host: "codex", prompt: "Fix the flaky test.", timeoutSeconds: 900, maxTurns: 30 }],
    ["the timeout", { ...full, timeoutSeconds: 901 }],
    ["maxTurns", { ...full, maxTurns: 31 }]
  ]

  it.each(edits)("changing %s changes the digest, so the approval no longer matches", (_name, agent) => {
    expect(withAgent(agent)).not.toBe(approved)
  })

  it("every edit yields a distinct digest", () => {
    expect(new Set(edits.map(([, agent]) => withAgent(agent))).size).toBe(edits.length)
  })

  it("a title change keeps the digest", () => {
    const retitled = { ...agentStep(full), steps: [{ ...agentStep(full).steps[0]!, title: "Renamed" }] }
    expect(Plan.digest(decoded(retitled))).toBe(approved)
  })

  it("an agent step and a manual step with the same text digest differently", () => {
    const manual = { specDigest, steps: [{ id: "impl", title: "Implement", acRefs: ["AC-001"], manual: { instructions: "Fix the flaky test." } }] }
    expect(Plan.digest(decoded(manual))).not.toBe(withAgent({ host: "codex", prompt: "Fix the flaky test." }))
  })
})

describe("AgentStep.utf8Length", () => {
  it("counts what an encoder writes, lone surrogates as U+FFFD", () => {
    expect(AgentStep.utf8Length("")).toBe(0)
    expect(AgentStep.utf8Length("a\u00e9\u20ac\u{1f600}")).toBe(1 + 2 + 3 + 4)
    expect(AgentStep.utf8Length("\ud83d")).toBe(3)
    expect(AgentStep.utf8Length("\ude00\ud83d")).toBe(6)
    // Any UTF-16 code units, lone and paired surrogates included.
    const units = fc.array(fc.oneof(fc.integer({ min: 0, max: 0xffff }), fc.integer({ min: 0xd800, max: 0xdfff })), { maxLength: 40 }).map((codes) => String.fromCharCode(...codes))
    fc.assert(fc.property(units, (text) => AgentStep.utf8Length(text) === new TextEncoder().encode(text).length))
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), (text) => AgentStep.utf8Length(text) === new TextEncoder().encode(text).length))
  })
})
