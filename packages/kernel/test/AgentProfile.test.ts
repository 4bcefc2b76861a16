/**
 * A plan's agent profile (ADR 0041): the accepted and the refused shapes, each refusal with its
 * path and fix, and the digest: every field is semantic, so changing who implements, who verifies
 * or whether the loop runs unattended no longer matches the approval. Written by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as AgentProfile from "../src/AgentProfile.js"
import * as Plan from "../src/Plan.js"
import * as Spec from "../src/Spec.js"

const spec: Spec.Spec = { goal: "Ship it", acceptanceCriteria: [{ id: "AC-001", outcome: "it ships", required: true }] }
const specDigest = Spec.digest(spec)

const planWith = (profile: unknown, hosts: ReadonlyArray<string> = ["codex"]) => ({
  specDigest,
  steps: [
    ...hosts.map((host, i) => ({ id: `impl-${i}`, title: "Implement", acRefs: ["AC-001"], agent: { host, prompt: "Do it." } })),
    { id: "check", title: "Check", acRefs: ["AC-001"], run: { command: "npm test" } }
  ],
  ...(profile === undefined ? {} : { profile })
})

const decode = (input: unknown) => Plan.decode(input, spec)
const digestOf = (input: unknown) => Plan.digest(Either.getOrThrow(decode(input)))
const messagesOf = (input: unknown): ReadonlyArray<string> => {
  const result = decode(input)
  if (Either.isRight(result)) throw new Error("expected the plan to be refused")
  return result.left.issues.map((issue) => `${issue.path}: ${issue.message}`)
}

describe("AgentProfile in Plan.decode", () => {
  // profile → accepted
  it.each<[string, unknown, ReadonlyArray<string>]>([
    ["no profile", undefined, ["codex"]],
    ["an empty profile", {}, ["codex"]],
    ["the implementer every agent step names", { implementer: "codex" }, ["codex", "codex"]],
    ["a verifier", { verifier: "ci-verifier" }, ["codex", "claude-code"]],
    ["the loop until verified", { untilVerified: true }, ["claude-code"]],
    ["all of them", { implementer: "claude-code", verifier: "ci.verifier_1", untilVerified: false }, ["claude-code"]],
    ["an implementer with no agent step", { implementer: "codex" }, []]
  ])("accepts %s", (_, profile, hosts) => {
    const plan = Either.getOrThrow(decode(planWith(profile, hosts)))
    expect(plan.profile).toStrictEqual(profile)
  })

  // profile, hosts → the refusal
  it.each<[string, unknown, ReadonlyArray<string>, string]>([
    [
      "an agent step on another host than the implementer",
      { implementer: "codex" },
      ["codex", "claude-code"],
      "/steps/1/agent/host: step \"impl-1\" runs on claude-code, but the profile's implementer is codex; name the same host, or leave profile.implementer out"
    ],
    ["an unknown host", { implementer: "gemini" }, ["codex"], "/profile/implementer"],
    ["a verifier that is no approver id", { verifier: "not an id" }, ["codex"], "/profile/verifier: expected an approver id"],
    ["a loop flag that is not a boolean", { untilVerified: "yes" }, ["codex"], "/profile/untilVerified"],
    ["an unknown field", { reviewer: "claude-code" }, ["codex"], "/profile/reviewer"],
    [
      "`profile:` with nothing under it (null)",
      null,
      ["codex"],
      "/profile: is empty: `profile:` has nothing under it. Put implementer, verifier or untilVerified under it (indented), or remove the `profile:` line"
    ],
    ["a profile that is a string", "codex", ["codex"], "/profile"]
  ])("refuses %s", (_, profile, hosts, expected) => {
    expect(messagesOf(planWith(profile, hosts)).some((message) => message.startsWith(expected))).toBe(true)
  })
})

describe("an empty profile with other problems", () => {
  it("names the empty profile and every other issue", () => {
    const messages = messagesOf({ ...planWith(null), steps: [] })
    expect(messages[0]).toContain("/profile: is empty")
    expect(messages.some((message) => message.startsWith("/steps"))).toBe(true)
    expect(messages.join("\n")).not.toContain("actual null")
  })
})

describe("AgentProfile in the plan's digest", () => {
  const base = digestOf(planWith({ implementer: "codex", verifier: "ci-verifier", untilVerified: true }))

  it("an absent or empty profile keeps the digest of a plan without one", () => {
    expect(digestOf(planWith({}))).toBe(digestOf(planWith(undefined)))
  })

  // change → the digest changes
  it.each<[string, unknown]>([
    ["no profile", undefined],
    ["no implementer", { verifier: "ci-verifier", untilVerified: true }],
    ["another verifier", { implementer: "codex", verifier: "other-verifier", untilVerified: true }],
    ["no verifier", { implementer: "codex", untilVerified: true }],
    ["the loop off", { implementer: "codex", verifier: "ci-verifier", untilVerified: false }],
    ["the loop unsaid", { implementer: "codex", verifier: "ci-verifier" }]
  ])("%s changes it", (_, profile) => {
    expect(digestOf(planWith(profile))).not.toBe(base)
  })

  it("the projection names every field", () => {
    expect(AgentProfile.projection({ implementer: "codex", verifier: "ci-verifier", untilVerified: true })).toStrictEqual({
      implementer: "codex",
      verifier: "ci-verifier",
      until_verified: true
    })
    expect(AgentProfile.untilVerified({ untilVerified: true })).toBe(true)
    expect(AgentProfile.untilVerified({ untilVerified: false })).toBe(false)
    expect(AgentProfile.untilVerified(undefined)).toBe(false)
  })
})
