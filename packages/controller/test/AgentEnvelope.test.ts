/**
 * The envelope of an agent step's attempt and the command line that starts its host: what the
 * prompt and the variables say (task, run, digests, scope, criteria with their evidence, attempt,
 * successors left, protocol), the bounds that keep it one argument, the hosts' documented flags
 * (Claude Code's stream with partial messages; Codex's workspace-write sandbox, never full
 * access), and where the program is found — from a hand table of environments, accepted and refused.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import type * as Task from "@ratchet/kernel/Task"
import * as Either from "effect/Either"
import { runningTask } from "./fixtures/runningTask.js"
import * as AgentEnvelope from "../src/AgentEnvelope.js"

const spec: Spec.Spec = Either.getOrThrow(Spec.decode({
  goal: "Add a --json flag to list",
  acceptanceCriteria: [
    { id: "AC-001", outcome: "list --json prints JSON.", required: true, verify: { command: "npm test -- list" } },
    { id: "AC-002", outcome: "The docs name the flag.", required: false, manual: { procedure: "read the docs", observer: "a reviewer" } },
    { id: "AC-003", outcome: "Not this step's.", required: true, verify: { command: "true", expectExitCode: 0 } }
  ],
  execution: { allowedScope: ["src/**", "test/**"], forbiddenScope: ["src/secrets/**"], retry: { maxSuccessors: 3 } }
}))

const plan = Either.getOrThrow(Plan.decode({
  specDigest: Spec.digest(spec),
  steps: [
    { id: "impl", title: "Implement", acRefs: ["AC-001", "AC-002"], agent: { host: "claude-code", prompt: "Add the flag.\nThen test it.", model: "claude-sonnet-4-5", maxTurns: 20 } },
    { id: "other", title: "Other", acRefs: ["AC-003"], run: { command: "true" } }
  ]
}, spec))
const step = plan.steps[0]!

const taskOf = (successorsUsed: number): Task.Task => runningTask(spec, plan, { version: 12, slug: "add-json", successorsUsed })

const envelopeOf = (successorsUsed = 1, attempt = 2) => {
  const made = AgentEnvelope.make(taskOf(successorsUsed), step, attempt)
  if (typeof made === "string") throw new Error(made)
  return made
}

describe("AgentEnvelope.make", () => {
  it("says who works on what under which contract", () => {
    const envelope = envelopeOf()
    expect(envelope).toMatchObject({
      protocol: 1,
      taskId: "t-1",
      runId: "run-1",
      stepId: "impl",
      stepTitle: "Implement",
      attempt: 2,
      successorsLeft: 2,
      specDigest: Spec.digest(spec),
      planDigest: Plan.digest(plan),
      allowedScope: ["src/**", "test/**"],
      forbiddenScope: ["src/secrets/**"],
      host: "claude-code",
      prompt: "Add the flag.\nThen test it.",
      criteriaLeftOut: 0
    })
    // Only the criteria the step names, each with the evidence it expects.
    expect(envelope.criteria).toStrictEqual([
      { id: "AC-001", outcome: "list --json prints JSON.", required: true, evidence: "the command `npm test -- list` exits 0" },
      { id: "AC-002", outcome: "The docs name the flag.", required: false, evidence: "a person's check, recorded with its evidence" }
    ])
  })

  // successors used → left (the spec allows 3, the lifecycle at most 5; never negative)
  it.each([[0, 3], [1, 2], [3, 0], [7, 0]])("with %i successors used, %i are left", (used, left) => {
    expect(envelopeOf(used).successorsLeft).toBe(left)
  })

  it("refuses a step that is not an agent step, and a task without a run", () => {
    expect(AgentEnvelope.make(taskOf(0), plan.steps[1]!, 1)).toBe("step other is not an agent step")
    expect(AgentEnvelope.make({ ...taskOf(0), run: null }, step, 1)).toBe("task t-1 has no run, spec or plan")
  })

  it("lists at most the limit of criteria, clipped, and says how many it left out", () => {
    const many = Array.from({ length: 45 }, (_, i) => ({ id: `AC-${String(i + 1).padStart(3, "0")}`, outcome: "x".repeat(1000), required: true, verify: { command: "true" } }))
    const big = { ...spec, acceptanceCriteria: many } as Spec.Spec
    const bigStep = { ...step, acRefs: many.map((ac) => ac.id) }
    const base = taskOf(0)
    const made = AgentEnvelope.make({ ...base, spec: { ...base.spec!, spec: big } }, bigStep, 1)
    if (typeof made === "string") throw new Error(made)
    expect(made.criteria).toHaveLength(AgentEnvelope.limits.criteria)
    expect(made.criteria[0]!.outcome).toHaveLength(AgentEnvelope.limits.criterionText)
    expect(made.criteriaLeftOut).toBe(5)
    expect(AgentEnvelope.promptOf(made)).toContain("- and 5 more; the spec lists them all")
  })
})

describe("AgentEnvelope.promptOf and environmentOf", () => {
  it("puts the envelope ahead of the approved prompt, which comes last and unchanged", () => {
    const text = AgentEnvelope.promptOf(envelopeOf())
    expect(text.startsWith("Ratchet agent step (protocol 1)\n")).toBe(true)
    expect(text.endsWith("The step:\nAdd the flag.\nThen test it.")).toBe(true)
    for (
      const part of [
        `attempt 2, of task t-1 in run run-1`,
        `spec ${Spec.digest(spec)}, plan ${Plan.digest(plan)}`,
        "- AC-001 (required): list --json prints JSON. Evidence: the command `npm test -- list` exits 0.",
        "- AC-002: The docs name the flag.",
        "change only `src/**`, `test/**`; never `src/secrets/**`",
        "You cannot approve, verify or complete anything",
        "2 successor attempts may follow"
      ]
    ) expect(text).toContain(part)
    expect(text).not.toContain("AC-003")
    // The text cannot be read as a flag by the host's parser.
    expect(text.startsWith("-")).toBe(false)
  })

  it("stays within one process argument for the largest prompt a plan may hold", () => {
    const huge = { ...envelopeOf(), prompt: "p".repeat(65_536), goal: "g".repeat(AgentEnvelope.limits.criterionText) }
    expect(Buffer.byteLength(AgentEnvelope.promptOf(huge))).toBeLessThan(128 * 1024)
  })

  it("gives the variables a hook reads without parsing prose", () => {
    expect(AgentEnvelope.environmentOf(envelopeOf())).toStrictEqual({
      RATCHET_PROTOCOL: "1",
      RATCHET_TASK: "t-1",
      RATCHET_RUN: "run-1",
      RATCHET_STEP: "impl",
      RATCHET_ATTEMPT: "2",
      RATCHET_SUCCESSORS_LEFT: "2",
      RATCHET_SPEC_DIGEST: Spec.digest(spec),
      RATCHET_PLAN_DIGEST: Plan.digest(plan),
      RATCHET_ALLOWED_SCOPE: "[\"src/**\",\"test/**\"]",
      RATCHET_FORBIDDEN_SCOPE: "[\"src/secrets/**\"]",
      RATCHET_ACCEPTANCE: "[\"AC-001\",\"AC-002\"]"
    })
  })
})

describe("AgentEnvelope.argsOf", () => {
  it("starts Claude Code in print mode with the stream, partial messages, edits accepted, model and turns", () => {
    expect(AgentEnvelope.argsOf(step.agent!, "PROMPT")).toStrictEqual([
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      "--permission-mode",
      "acceptEdits",
      "--model",
      "claude-sonnet-4-5",
      "--max-turns",
      "20",
      "PROMPT"
    ])
    expect(AgentEnvelope.argsOf({ host: "claude-code", prompt: "x" }, "PROMPT")).not.toContain("--model")
  })

  it("starts Codex with its JSON events in the workspace-write sandbox, never with full access", () => {
    const args = AgentEnvelope.argsOf({ host: "codex", prompt: "x", model: "gpt-5-codex", maxTurns: 9 }, "PROMPT")
    expect(args).toStrictEqual(["exec", "--json", "--sandbox", "workspace-write", "--model", "gpt-5-codex", "PROMPT"])
    expect(args.join(" ")).not.toMatch(/danger-full-access|--full-auto|--dangerously/)
  })

  it("describes the intent by host, model and the prompt's first line", () => {
    expect(AgentEnvelope.describe(step.agent!)).toBe("agent claude-code (claude-sonnet-4-5): Add the flag.")
    expect(AgentEnvelope.describe({ host: "codex", prompt: "\n\n  Fix it  \nmore" })).toBe("agent codex: Fix it")
  })
})

describe("AgentEnvelope.programOf", () => {
  const executables = new Set(["/usr/local/bin/claude", "/opt/codex/bin/codex", "/home/a/bin/claude"])
  const isExecutable = (file: string) => executables.has(file)

  // host, environment → the program, or the words of the problem
  it.each([
    ["claude-code", { PATH: "/usr/bin:/usr/local/bin" }, { file: "/usr/local/bin/claude" }],
    ["claude-code", { PATH: "/home/a/bin:/usr/local/bin" }, { file: "/home/a/bin/claude" }],
    ["claude-code", { PATH: "/usr/bin", RATCHET_CLAUDE_BIN: "/home/a/bin/claude" }, { file: "/home/a/bin/claude" }],
    ["claude-code", { PATH: "/usr/local/bin", RATCHET_CLAUDE_BIN: "" }, { file: "/usr/local/bin/claude" }],
    ["codex", { PATH: "/usr/bin", RATCHET_CODEX_BIN: "/opt/codex/bin/codex" }, { file: "/opt/codex/bin/codex" }]
  ] as const)("%s with %j is found", (host, env, found) => {
    expect(AgentEnvelope.programOf(host, env, isExecutable)).toStrictEqual(found)
  })

  it.each([
    ["claude-code", { PATH: "/usr/bin" }, "the claude program is not on PATH; install it, or set RATCHET_CLAUDE_BIN to its full path"],
    ["codex", {}, "the codex program is not on PATH; install it, or set RATCHET_CODEX_BIN to its full path"],
    // A relative or empty PATH entry would resolve in the workspace, which the agent writes.
    ["claude-code", { PATH: ":bin:./local" }, "not on PATH"],
    ["claude-code", { PATH: "/usr/local/bin", RATCHET_CLAUDE_BIN: "/usr/bin/claude" }, "RATCHET_CLAUDE_BIN=\"/usr/bin/claude\" is not an executable file"],
    ["codex", { PATH: "/opt/codex/bin", RATCHET_CODEX_BIN: "codex" }, "RATCHET_CODEX_BIN=\"codex\" is not an absolute path"]
  ] as const)("%s with %j is refused: %s", (host, env, words) => {
    const found = AgentEnvelope.programOf(host, env, (file) => executables.has(file) || file === "bin/claude" || file === "local/claude")
    expect("problem" in found && found.problem).toContain(words)
  })
})
