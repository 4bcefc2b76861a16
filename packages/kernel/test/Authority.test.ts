/**
 * How a person's act stands: a hand-written table of receipts and verdicts with the standing each
 * must get (Signed only for a registered approver's own signature over exactly the act), and the
 * sentences that explain the rest.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Authority from "../src/Authority.js"
import type * as Event from "../src/Event.js"
import type * as Lesson from "../src/Lesson.js"
import * as Signature from "../src/Signature.js"
import { fakeDigest } from "./fixtures.js"
import * as Keys from "./keys.js"

const authority = Keys.authorityFor("p-1")
const alice: Event.Actor = { kind: "user", id: "alice" }

const unsignedReceipt: Omit<Event.Receipt, "signature"> = {
  subject: "plan",
  digest: fakeDigest("a"),
  actor: alice,
  channel: "terminal",
  at: 10
}
const signedReceipt = Keys.signReceipt(Keys.alice, "p-1", "t-1", 2, unsignedReceipt)

describe("Authority.ofReceipt", () => {
  it.each([
    { label: "alice's own receipt", receipt: signedReceipt, taskId: "t-1", revision: 2, tag: "Signed" },
    { label: "no signature", receipt: { ...unsignedReceipt, signature: null }, taskId: "t-1", revision: 2, tag: "Unsigned" },
    {
      label: "signed by an unregistered key",
      receipt: Keys.signReceipt(Keys.mallory, "p-1", "t-1", 2, unsignedReceipt),
      taskId: "t-1",
      revision: 2,
      tag: "UnknownKey"
    },
    { label: "another task", receipt: signedReceipt, taskId: "t-2", revision: 2, tag: "BadSignature" },
    { label: "another revision", receipt: signedReceipt, taskId: "t-1", revision: 3, tag: "BadSignature" },
    { label: "no revision where one was signed", receipt: signedReceipt, taskId: "t-1", revision: null, tag: "BadSignature" },
    { label: "an altered digest", receipt: { ...signedReceipt, digest: fakeDigest("b") }, taskId: "t-1", revision: 2, tag: "BadSignature" },
    { label: "an altered channel", receipt: { ...signedReceipt, channel: "mcp" }, taskId: "t-1", revision: 2, tag: "BadSignature" },
    {
      label: "alice's key, but the receipt says vera",
      receipt: Keys.signReceipt(Keys.alice, "p-1", "t-1", 2, { ...unsignedReceipt, actor: { kind: "user", id: "vera" } }),
      taskId: "t-1",
      revision: 2,
      tag: "NotTheSigner"
    },
    {
      label: "alice's key, but the receipt says agent:alice",
      receipt: Keys.signReceipt(Keys.alice, "p-1", "t-1", 2, { ...unsignedReceipt, actor: { kind: "agent", id: "alice" } }),
      taskId: "t-1",
      revision: 2,
      tag: "NotTheSigner"
    },
    {
      label: "vera's key over alice's value",
      receipt: { ...signedReceipt, signature: { key: Keys.vera.key, value: signedReceipt.signature!.value } },
      taskId: "t-1",
      revision: 2,
      tag: "BadSignature"
    }
  ])("$label: $tag", ({ receipt, revision, tag, taskId }) => {
    expect(Authority.ofReceipt(authority, taskId, revision, receipt)._tag).toBe(tag)
  })

  it("names the approver whose key signed", () => {
    expect(Authority.ofReceipt(authority, "t-1", 2, signedReceipt)).toEqual({ _tag: "Signed", approver: Keys.aliceApprover })
  })

  it("the same receipt counts for nobody in a project that does not trust alice", () => {
    expect(Authority.ofReceipt(Keys.authorityFor("p-1", [Keys.veraApprover]), "t-1", 2, signedReceipt)._tag).toBe("UnknownKey")
  })

  it("a signature made for another project does not hold here", () => {
    const elsewhere = Keys.signReceipt(Keys.alice, "p-2", "t-1", 2, unsignedReceipt)
    expect(Authority.ofReceipt(authority, "t-1", 2, elsewhere)._tag).toBe("BadSignature")
  })
})

describe("Authority.ofVerdict", () => {
  const verdict: Omit<Event.AcVerdict, "signature"> = {
    acId: "AC-001",
    verdict: "PASS",
    evidenceRefs: ["ev-1", "ev-2"],
    specDigest: fakeDigest("a"),
    verifier: { kind: "user", id: "vera" },
    at: 11
  }
  const signed = Keys.signVerdict(Keys.vera, "p-1", "t-1", "run-1", verdict)

  it.each([
    { label: "vera's own verdict", value: signed, runId: "run-1", tag: "Signed" },
    { label: "no signature", value: { ...verdict, signature: null }, runId: "run-1", tag: "Unsigned" },
    { label: "another run", value: signed, runId: "run-2", tag: "BadSignature" },
    { label: "FAIL turned into PASS", value: { ...Keys.signVerdict(Keys.vera, "p-1", "t-1", "run-1", { ...verdict, verdict: "FAIL" }), verdict: "PASS" as const }, runId: "run-1", tag: "BadSignature" },
    { label: "evidence swapped", value: { ...signed, evidenceRefs: ["ev-other"] }, runId: "run-1", tag: "BadSignature" },
    { label: "evidence reordered", value: { ...signed, evidenceRefs: ["ev-2", "ev-1"] }, runId: "run-1", tag: "BadSignature" },
    { label: "another criterion", value: { ...signed, acId: "AC-002" }, runId: "run-1", tag: "BadSignature" },
    { label: "a verifier kind that is not a person", value: Keys.signVerdict(Keys.vera, "p-1", "t-1", "run-1", { ...verdict, verifier: { kind: "verifier", id: "vera" } }), runId: "run-1", tag: "NotTheSigner" },
    { label: "an unregistered key", value: Keys.signVerdict(Keys.mallory, "p-1", "t-1", "run-1", verdict), runId: "run-1", tag: "UnknownKey" }
  ])("$label: $tag", ({ runId, tag, value }) => {
    expect(Authority.ofVerdict(authority, "t-1", runId, value)._tag).toBe(tag)
  })
})

describe("Authority.explain", () => {
  it.each([
    [{ _tag: "Unsigned" } as const, "The act carries no approver's signature; only an act signed with a registered approver's key counts."],
    [
      { _tag: "UnknownKey", key: Keys.mallory.key } as const,
      `The act is signed by the key ${Keys.mallory.key.slice(8, 20)}, which is not one of this project's approvers.`
    ],
    [{ _tag: "NotTheSigner", approver: Keys.aliceApprover } as const, "The act names someone other than alice, whose key signed it."],
    [{ _tag: "BadSignature", approver: Keys.aliceApprover } as const, "The act does not match its signature by alice: it was altered after signing, or forged."]
  ])("%o", (standing, sentence) => {
    expect(Authority.explain("The act", standing)).toBe(sentence)
  })
})

describe("Authority.ofLessonReceipt", () => {
  const unsigned: Omit<Lesson.Receipt, "signature"> = {
    control: "supersede",
    lessonId: "L-1",
    revision: 3,
    digest: fakeDigest("c"),
    target: "L-2",
    actor: alice,
    channel: "terminal",
    at: 10
  }
  const sign = (key: Keys.TestKey, projectId: string, receipt: Omit<Lesson.Receipt, "signature">): Lesson.Receipt => ({
    ...receipt,
    signature: Keys.sign(key, "ratchet/lesson-receipt/1", Authority.lessonReceiptFields(projectId, receipt))
  })
  const signed = sign(Keys.alice, "p-1", unsigned)

  it.each([
    { label: "alice's own receipt", receipt: signed, tag: "Signed" },
    { label: "no signature", receipt: { ...unsigned, signature: null }, tag: "Unsigned" },
    { label: "an unregistered key", receipt: sign(Keys.mallory, "p-1", unsigned), tag: "UnknownKey" },
    { label: "another project", receipt: sign(Keys.alice, "p-2", unsigned), tag: "BadSignature" },
    ...(["control", "lessonId", "revision", "digest", "target", "channel", "at"] as const).map((field) => ({
      label: `an altered ${field}`,
      receipt: { ...signed, [field]: field === "revision" || field === "at" ? 99 : field === "digest" ? fakeDigest("d") : field === "control" ? "pin" : "other" },
      tag: "BadSignature"
    })),
    { label: "an altered actor id", receipt: { ...signed, actor: { kind: "user", id: "vera" } }, tag: "BadSignature" },
    { label: "alice's key, naming vera", receipt: sign(Keys.alice, "p-1", { ...unsigned, actor: { kind: "user", id: "vera" } }), tag: "NotTheSigner" }
  ] as ReadonlyArray<{ label: string; receipt: Lesson.Receipt; tag: string }>)("$label: $tag", ({ receipt, tag }) => {
    expect(Authority.ofLessonReceipt(authority, receipt)._tag).toBe(tag)
  })

  it("a receipt signature is never a task receipt's, nor the other way round", () => {
    const fields = Authority.lessonReceiptFields("p-1", unsigned)
    expect(fields).toEqual({
      projectId: "p-1",
      lessonId: "L-1",
      control: "supersede",
      revision: 3,
      digest: fakeDigest("c"),
      target: "L-2",
      actor: { kind: "user", id: "alice" },
      channel: "terminal",
      at: 10
    })
    expect(Signature.holds(Keys.verify, signed.signature!, "ratchet/receipt/1", fields)).toBe(false)
    expect(Signature.holds(Keys.verify, signed.signature!, "ratchet/lesson-receipt/1", fields)).toBe(true)
  })
})
