/**
 * The approvers chain: a hand-written table of chains the kernel must accept (with the approvers
 * they leave) and of chains it must refuse (with the entry at fault and why), hostile files
 * included, and how a file's chain compares with the one a store recorded.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Approvers from "../src/Approvers.js"
import * as Keys from "./keys.js"

const PROJECT = "p-1"

/** A chain built entry by entry, each linked to the one before and signed by `by`. */
const chain = (
  steps: ReadonlyArray<{ readonly op: "add" | "remove"; readonly who: Approvers.Approver; readonly by: Keys.TestKey }>,
  project = PROJECT
): ReadonlyArray<Approvers.Entry> => {
  const entries: Array<Approvers.Entry> = []
  for (const [index, step] of steps.entries()) {
    const prev = entries.at(-1)
    entries.push(
      Keys.signEntry(step.by, project, {
        seq: index + 1,
        op: step.op,
        approver: step.who,
        at: 1_000 + index,
        prev: prev === undefined ? null : Approvers.entryDigest(prev)
      })
    )
  }
  return entries
}

const alice = Keys.aliceApprover
const vera = Keys.veraApprover
const mallory: Approvers.Approver = { id: "mallory", key: Keys.mallory.key }

const genesis = chain([{ op: "add", who: alice, by: Keys.alice }])
const withVera = chain([{ op: "add", who: alice, by: Keys.alice }, { op: "add", who: vera, by: Keys.alice }])

const verified = (entries: ReadonlyArray<Approvers.Entry>): Approvers.Trust => {
  const result = Approvers.verify(PROJECT, entries, Keys.verify)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

const refused = (entries: ReadonlyArray<Approvers.Entry>, project = PROJECT): Approvers.ChainError => {
  const result = Approvers.verify(project, entries, Keys.verify)
  if (Either.isRight(result)) throw new Error("expected the chain to be refused")
  return result.left
}

describe("chains the kernel accepts", () => {
  it.each([
    { label: "no chain at all: nobody", entries: [], approvers: [] },
    { label: "a genesis adding its own signer", entries: genesis, approvers: [alice] },
    { label: "an approver signing another in", entries: withVera, approvers: [alice, vera] },
    {
      label: "the second approver signing the first out",
      entries: chain([
        { op: "add", who: alice, by: Keys.alice },
        { op: "add", who: vera, by: Keys.alice },
        { op: "remove", who: alice, by: Keys.vera }
      ]),
      approvers: [vera]
    },
    {
      label: "an approver removing themselves while another remains",
      entries: chain([
        { op: "add", who: alice, by: Keys.alice },
        { op: "add", who: vera, by: Keys.alice },
        { op: "remove", who: vera, by: Keys.vera }
      ]),
      approvers: [alice]
    },
    {
      label: "a removed key coming back, signed in again",
      entries: chain([
        { op: "add", who: alice, by: Keys.alice },
        { op: "add", who: vera, by: Keys.alice },
        { op: "remove", who: vera, by: Keys.alice },
        { op: "add", who: vera, by: Keys.alice }
      ]),
      approvers: [alice, vera]
    }
  ])("$label", ({ approvers, entries }) => {
    const trust = verified(entries)
    expect(trust.approvers).toEqual(approvers)
    expect(trust.length).toBe(entries.length)
    expect(trust.head).toBe(entries.length === 0 ? null : Approvers.entryDigest(entries.at(-1)!))
  })

  it("verifies a continuation from a trust already verified", () => {
    const first = verified(genesis)
    const rest = Approvers.verify(PROJECT, withVera.slice(1), Keys.verify, first)
    expect(Either.getOrThrow(rest).approvers).toEqual([alice, vera])
  })

  it("Approvers.byKey finds the approver a key belongs to, and nobody for another key", () => {
    const trust = verified(withVera)
    expect(Approvers.byKey(trust, Keys.vera.key)).toEqual(vera)
    expect(Approvers.byKey(trust, Keys.mallory.key)).toBeUndefined()
  })
})

describe("chains the kernel refuses, naming the entry and the reason", () => {
  const [first, second] = withVera as [Approvers.Entry, Approvers.Entry]

  it.each([
    {
      label: "a genesis that removes",
      entries: chain([{ op: "remove", who: alice, by: Keys.alice }]),
      seq: 1,
      reason: "genesis_not_add"
    },
    {
      label: "a genesis adding someone other than its signer (mallory adds alice)",
      entries: chain([{ op: "add", who: alice, by: Keys.mallory }]),
      seq: 1,
      reason: "genesis_not_self_signed"
    },
    {
      label: "someone adding themselves after the genesis",
      entries: chain([{ op: "add", who: alice, by: Keys.alice }, { op: "add", who: mallory, by: Keys.mallory }]),
      seq: 2,
      reason: "signer_not_approver"
    },
    {
      label: "a removed approver still signing",
      entries: chain([
        { op: "add", who: alice, by: Keys.alice },
        { op: "add", who: vera, by: Keys.alice },
        { op: "remove", who: vera, by: Keys.alice },
        { op: "add", who: mallory, by: Keys.vera }
      ]),
      seq: 4,
      reason: "signer_not_approver"
    },
    { label: "an entry edited after signing", entries: [first, { ...second, approver: mallory }], seq: 2, reason: "bad_signature" },
    { label: "an edited time", entries: [{ ...first, at: first.at + 1 }], seq: 1, reason: "bad_signature" },
    { label: "entries out of order", entries: [second, first], seq: 2, reason: "out_of_order" },
    { label: "a dropped entry in the middle", entries: [first, { ...second, seq: 3 }], seq: 3, reason: "out_of_order" },
    { label: "a link to another entry", entries: [first, { ...second, prev: second.signature.value.length > 0 ? Approvers.entryDigest(second) : null }], seq: 2, reason: "broken_link" },
    { label: "a genesis naming a previous entry", entries: [{ ...first, prev: Approvers.entryDigest(second) }], seq: 1, reason: "broken_link" },
    {
      label: "the same id twice",
      entries: chain([{ op: "add", who: alice, by: Keys.alice }, { op: "add", who: { id: "alice", key: Keys.vera.key }, by: Keys.alice }]),
      seq: 2,
      reason: "duplicate_id"
    },
    {
      label: "the same key twice",
      entries: chain([{ op: "add", who: alice, by: Keys.alice }, { op: "add", who: { id: "alice2", key: Keys.alice.key }, by: Keys.alice }]),
      seq: 2,
      reason: "duplicate_key"
    },
    {
      label: "removing someone who is not an approver",
      entries: chain([{ op: "add", who: alice, by: Keys.alice }, { op: "remove", who: vera, by: Keys.alice }]),
      seq: 2,
      reason: "unknown_approver"
    },
    {
      label: "removing an approver under another key",
      entries: chain([
        { op: "add", who: alice, by: Keys.alice },
        { op: "add", who: vera, by: Keys.alice },
        { op: "remove", who: { id: "vera", key: Keys.mallory.key }, by: Keys.alice }
      ]),
      seq: 3,
      reason: "unknown_approver"
    },
    {
      label: "removing the last approver",
      entries: chain([{ op: "add", who: alice, by: Keys.alice }, { op: "remove", who: alice, by: Keys.alice }]),
      seq: 2,
      reason: "last_approver"
    }
  ])("$label: $reason at entry $seq", ({ entries, reason, seq }) => {
    const error = refused(entries)
    expect(error.reason).toBe(reason)
    expect(error.seq).toBe(seq)
    expect(error.message).toContain(`at entry ${seq}`)
    expect(error.message).toContain("git checkout -- .ratchet/approvers.json")
  })

  it("a chain signed for another project is a bad signature here (no moving a chain between projects)", () => {
    expect(refused(chain([{ op: "add", who: alice, by: Keys.alice }], "p-2")).reason).toBe("bad_signature")
  })

  it("refuses an entry past the bound, even one built without the schema", () => {
    const trust: Approvers.Trust = { head: Approvers.entryDigest(genesis[0]!), length: Approvers.maxEntries, approvers: [alice] }
    const next = Keys.signEntry(Keys.alice, PROJECT, { seq: Approvers.maxEntries + 1, op: "add", approver: vera, at: 1, prev: trust.head })
    const result = Approvers.extend(PROJECT, trust, next, Keys.verify)
    expect(Either.isLeft(result) && result.left.reason).toBe("too_long")
  })
})

describe("the committed file", () => {
  const decode = Schema.decodeUnknownEither(Approvers.File, { onExcessProperty: "error" })
  const file = { schemaVersion: 1, projectId: PROJECT, entries: withVera }

  it("decodes and verifies a good file", () => {
    const decoded = Either.getOrThrow(decode(JSON.parse(JSON.stringify(file))))
    expect(Either.getOrThrow(Approvers.verifyFile(PROJECT, decoded, Keys.verify)).approvers).toEqual([alice, vera])
  })

  it("refuses a file for another project before looking at its chain", () => {
    const error = Approvers.verifyFile("p-other", Either.getOrThrow(decode(file)), Keys.verify)
    expect(Either.isLeft(error) && error.left.reason).toBe("wrong_project")
    expect(Either.isLeft(error) && error.left.seq).toBe(0)
    expect(Either.isLeft(error) && error.left.message).not.toContain("at entry")
  })

  it.each([
    ["another schema version", { ...file, schemaVersion: 2 }],
    ["no project", { ...file, projectId: "" }],
    ["an extra field", { ...file, trusted: true }],
    ["an entry with an extra field", { ...file, entries: [{ ...withVera[0]!, trusted: true }] }],
    ["a zero sequence number", { ...file, entries: [{ ...withVera[0]!, seq: 0 }] }],
    ["a fractional sequence number", { ...file, entries: [{ ...withVera[0]!, seq: 1.5 }] }],
    ["an unknown operation", { ...file, entries: [{ ...withVera[0]!, op: "promote" }] }],
    ["an approver id with a colon (it would read as an actor kind)", { ...file, entries: [{ ...withVera[0]!, approver: { ...alice, id: "user:alice" } }] }],
    ["an approver id with a path", { ...file, entries: [{ ...withVera[0]!, approver: { ...alice, id: "../alice" } }] }],
    ["a negative time", { ...file, entries: [{ ...withVera[0]!, at: -1 }] }],
    ["too many entries", { ...file, entries: Array.from({ length: Approvers.maxEntries + 1 }, () => withVera[0]!) }],
    ["entries that are not a list", { ...file, entries: { 0: withVera[0] } }],
    ["null", null],
    ["a string", "approvers"]
  ])("the schema refuses %s", (_label, input) => {
    expect(Either.isLeft(decode(input))).toBe(true)
  })
})

describe("Approvers.compare: a file's chain against the one a store recorded", () => {
  const three = chain([
    { op: "add", who: alice, by: Keys.alice },
    { op: "add", who: vera, by: Keys.alice },
    { op: "remove", who: vera, by: Keys.alice }
  ])
  const other = chain([{ op: "add", who: mallory, by: Keys.mallory }])

  it.each([
    { label: "the same chain", recorded: withVera, file: withVera, expected: { _tag: "same" } },
    { label: "nothing recorded, nothing in the file", recorded: [], file: [], expected: { _tag: "same" } },
    { label: "a file continuing the record", recorded: genesis, file: three, expected: { _tag: "ahead", extra: three.slice(1) } },
    { label: "a first chain for an empty record", recorded: [], file: genesis, expected: { _tag: "ahead", extra: genesis } },
    { label: "an older file", recorded: three, file: genesis, expected: { _tag: "behind", missing: 2 } },
    { label: "a file with another genesis", recorded: genesis, file: other, expected: { _tag: "diverged", seq: 1 } },
    { label: "a file that rewrote entry 2", recorded: three, file: [three[0]!, { ...three[1]!, at: 1 }, three[2]!], expected: { _tag: "diverged", seq: 2 } }
  ])("$label", ({ expected, file, recorded }) => {
    expect(Approvers.compare(recorded, file)).toEqual(expected)
  })
})
