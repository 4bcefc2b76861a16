/**
 * The envelope of a successor a failed verification scheduled (ADR 0041): the failures and their
 * fingerprint in the text ahead of the prompt and in `RATCHET_REVISION`, bounded; and nothing of
 * the kind for an attempt no REVISE scheduled. A hand table of revisions.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import * as Either from "effect/Either"
import { spawnSync } from "node:child_process"
import { runningTask } from "./fixtures/runningTask.js"
import * as AgentEnvelope from "../src/AgentEnvelope.js"

const spec: Spec.Spec = Either.getOrThrow(Spec.decode({
  goal: "Make the flag say fixed",
  acceptanceCriteria: [{ id: "AC-001", outcome: "The flag says fixed.", required: true, verify: { command: "grep -qx fixed flag.txt" } }],
  execution: { allowedScope: ["flag.txt"] }
}))
const plan = Either.getOrThrow(Plan.decode({
  specDigest: Spec.digest(spec),
  steps: [{ id: "impl", title: "Fix it", acRefs: ["AC-001"], agent: { host: "codex", prompt: "Fix the flag." } }]
}, spec))
const step = plan.steps[0]!
const task = runningTask(spec, plan)

const fingerprint = "fp:exit:1:0123456789abcdef"
const envelopeOf = (revision: AgentEnvelope.Revision | null) => {
  const made = AgentEnvelope.make(task, step, 2, revision)
  if (typeof made === "string") throw new Error(made)
  return made
}

describe("AgentEnvelope with a revision", () => {
  it("an attempt no REVISE scheduled says nothing of one", () => {
    const envelope = envelopeOf(null)
    expect(envelope.revision).toBeUndefined()
    expect(AgentEnvelope.promptOf(envelope)).not.toContain("failed verification")
    expect(AgentEnvelope.environmentOf(envelope)["RATCHET_REVISION"]).toBeUndefined()
  })

  it("a successor reads the failures and the fingerprint ahead of the prompt, and in RATCHET_REVISION", () => {
    const envelope = envelopeOf({
      fingerprint,
      failures: [{ acId: "AC-001", verdict: "FAIL", excerpt: "the check ended exit:1: expected fixed\ngot broken\n" }]
    })
    const text = AgentEnvelope.promptOf(envelope)
    expect(text).toContain(
      [
        `This attempt revises work that failed verification (fingerprint ${fingerprint}). Fix what failed; the same failure again blocks the task:`,
        "- AC-001 FAIL: the check ended exit:1: expected fixed | got broken",
        "",
        "The step:",
        "Fix the flag."
      ].join("\n")
    )
    expect(text.endsWith("The step:\nFix the flag.")).toBe(true)
    expect(JSON.parse(AgentEnvelope.environmentOf(envelope)["RATCHET_REVISION"]!)).toStrictEqual({
      fingerprint,
      failures: [{ acId: "AC-001", verdict: "FAIL", excerpt: "the check ended exit:1: expected fixed\ngot broken" }]
    })
  })

  // failures given → listed, left out; excerpt length given → kept
  it.each([
    [1, 1, 0, 10, 10],
    [20, 20, 0, 400, 400],
    [21, 20, 1, 401, 400],
    [50, 20, 30, 5000, 400]
  ])("%i failures → %i listed, %i left out; an excerpt of %i characters keeps %i", (given, listed, leftOut, length, kept) => {
    const envelope = envelopeOf({
      fingerprint,
      failures: Array.from({ length: given }, (_, i) => ({ acId: `AC-${i}`, verdict: "FAIL", excerpt: "e".repeat(length) }))
    })
    expect(envelope.revision!.failures).toHaveLength(listed)
    expect(envelope.revision!.failuresLeftOut).toBe(leftOut)
    expect(envelope.revision!.failures[0]!.excerpt).toHaveLength(kept)
    const text = AgentEnvelope.promptOf(envelope)
    if (leftOut > 0) expect(text).toContain(`- and ${leftOut} more; ratchet evidence t-1 lists them all`)
    else expect(text).not.toContain("more; ratchet evidence")
    // Still one process argument, with the largest prompt a plan may hold.
    expect(Buffer.byteLength(AgentEnvelope.promptOf({ ...envelope, prompt: "p".repeat(65_536) }))).toBeLessThan(128 * 1024)
  })

  // a check's output → how the successor reads it (control characters written out, as `ratchet` shows them)
  it.each<[string, string, string]>([
    ["a NUL byte", "bad\u0000byte", "bad\\u{0}byte"],
    ["an escape sequence", "\u001b[31mred\u001b[0m", "\\u{1b}[31mred\\u{1b}[0m"],
    ["a bidirectional override", "bidi\u202eevil", "bidi\\u{202e}evil"],
    ["a DEL and a C1 control", "a\u007fb\u0085c", "a\\u{7f}b\\u{85}c"],
    ["a tab, kept", "tab\there", "tab\there"],
    ["plain text, kept", "expected fixed", "expected fixed"]
  ])("%s in a check's output is shown visibly, and the host can still be started", (_, output, shown) => {
    const envelope = envelopeOf({ fingerprint, failures: [{ acId: "AC-001", verdict: "FAIL", excerpt: `the check ended exit:1: ${output}` }] })
    expect(envelope.revision!.failures[0]!.excerpt).toBe(`the check ended exit:1: ${shown}`)
    const text = AgentEnvelope.promptOf(envelope)
    expect(text).toContain(`- AC-001 FAIL: the check ended exit:1: ${shown}`)
    for (const raw of ["\u0000", "\u001b", "\u202e"]) expect(text).not.toContain(raw)
    // The prompt is a process argument a real spawn accepts.
    const started = spawnSync(process.execPath, ["-e", "0", ...AgentEnvelope.argsOf({ host: "codex", prompt: "x" } as never, text)])
    expect(started.error).toBeUndefined()
    expect(started.status).toBe(0)
  })

  // step prompt bytes, excerpt → revision failures shown (all, some, none), cut or not
  it.each<[string, number, string, "all" | "some" | "none", boolean]>([
    ["a small prompt keeps every failure", 1_000, "e", "all", false],
    ["a large prompt loses failures from the last", 115_000, "e", "some", false],
    ["multi-byte excerpts count in bytes", 100_000, "€", "some", false],
    ["a prompt over the bound loses every failure, then is cut", 125_000, "e", "none", true]
  ])("%s", (_, promptBytes, char, shown, cut) => {
    const envelope = envelopeOf({
      fingerprint,
      failures: Array.from({ length: 20 }, (_, i) => ({ acId: `AC-${i}`, verdict: "FAIL", excerpt: char.repeat(400) }))
    })
    const text = AgentEnvelope.promptOf({ ...envelope, prompt: "p".repeat(promptBytes) })
    expect(Buffer.byteLength(text, "utf8")).toBeLessThanOrEqual(AgentEnvelope.maxPromptBytes)
    expect(AgentEnvelope.maxPromptBytes).toBeLessThan(128 * 1024)
    const listed = text.split("\n").filter((line) => /^- AC-\d+ FAIL: /.test(line)).length
    if (shown === "all") expect(listed).toBe(20)
    if (shown === "some") expect(listed).toBeGreaterThan(0)
    if (shown === "some") expect(listed).toBeLessThan(20)
    if (shown === "none") expect(listed).toBe(0)
    if (shown !== "all") expect(text).toContain(`- and ${20 - listed} more; ratchet evidence t-1 lists them all`)
    expect(text.includes("[ratchet: the prompt was cut to fit one argument]")).toBe(cut)
    if (!cut) expect(text.endsWith(`The step:\n${"p".repeat(promptBytes)}`)).toBe(true)
    expect(text).not.toContain("\uFFFD")
  })

  // text, bound → cut at a character boundary
  it.each<[string, number, string]>([
    ["abc", 10, "abc"],
    ["€".repeat(100), 60, "€".repeat(3)],
    ["a€".repeat(50), 60, "a€a€a"]
  ])("cutToBytes(%j, %i) keeps whole characters", (text, max, kept) => {
    const cut = AgentEnvelope.cutToBytes(text, max)
    expect(Buffer.byteLength(cut, "utf8")).toBeLessThanOrEqual(Math.max(max, Buffer.byteLength(text)))
    if (kept === text) expect(cut).toBe(text)
    else expect(cut).toBe(`${kept}\n[ratchet: the prompt was cut to fit one argument]`)
  })
})
