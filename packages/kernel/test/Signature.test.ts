/**
 * Signature shapes and statements: which strings are keys and signatures (accepted and rejected
 * sets written out, hostile ones included), that a statement is canonical JSON bound to its kind,
 * and that `holds` never says yes for anything but a real signature over exactly the statement.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Schema from "effect/Schema"
import * as Signature from "../src/Signature.js"
import * as Keys from "./keys.js"

const isKey = Schema.is(Signature.Key)
const isSignature = Schema.is(Signature.Signature)

describe("Signature.Key", () => {
  it("accepts the tests' real keys", () => {
    for (const key of [Keys.alice.key, Keys.vera.key, Keys.mallory.key]) expect(isKey(key)).toBe(true)
  })

  it.each([
    ["no prefix", Keys.alice.key.slice("ed25519:".length)],
    ["another algorithm", Keys.alice.key.replace("ed25519:", "ecdsa-p256:")],
    ["an upper-case prefix", Keys.alice.key.replace("ed25519:", "ED25519:")],
    ["one character short", Keys.alice.key.slice(0, -1)],
    ["one character long", `${Keys.alice.key}A`],
    ["padding", `${Keys.alice.key.slice(0, -1)}=`],
    ["standard base64 characters", `ed25519:${"+".repeat(42)}A`],
    ["a last character with bits past 32 bytes", `ed25519:${"A".repeat(42)}B`],
    ["whitespace", ` ${Keys.alice.key}`],
    ["a newline", `${Keys.alice.key}\n`],
    ["non-ASCII look-alikes", `ed25519:${"А".repeat(42)}A`],
    ["empty", ""],
    ["a huge string", `ed25519:${"A".repeat(100_000)}`]
  ])("rejects %s", (_label, value) => {
    expect(isKey(value)).toBe(false)
  })

  it("its error names what a key looks like and shows a bounded piece of the input", () => {
    const result = Schema.decodeUnknownEither(Signature.Key)(`ed25519:${"x".repeat(5_000)}`)
    expect(result._tag).toBe("Left")
    if (result._tag === "Left") {
      const text = String(result.left.message)
      expect(text).toContain("expected an approval key")
      expect(text.length).toBeLessThan(400)
    }
  })
})

describe("Signature.Signature", () => {
  const real = Keys.sign(Keys.alice, "ratchet/receipt/1", { a: 1 })

  it("accepts a real signature with its key", () => {
    expect(isSignature(real)).toBe(true)
  })

  it.each([
    ["a short value", { ...real, value: real.value.slice(0, -1) }],
    ["a long value", { ...real, value: `${real.value}A` }],
    ["a last character with bits past 64 bytes", { ...real, value: `${real.value.slice(0, -1)}B` }],
    ["padding", { ...real, value: `${real.value.slice(0, -2)}==` }],
    ["a bad key", { ...real, key: "ed25519:x" }],
    ["a missing key", { value: real.value }],
    ["a number", { ...real, value: 42 }]
  ])("rejects %s", (_label, value) => {
    expect(isSignature(value)).toBe(false)
  })
})

describe("Signature.statement", () => {
  it("is the canonical JSON of the fields with the kind, whatever the key order", () => {
    const a = Signature.statement("ratchet/receipt/1", { b: 1, a: "x" })
    const b = Signature.statement("ratchet/receipt/1", { a: "x", b: 1 })
    expect(new TextDecoder().decode(a!)).toBe('{"a":"x","b":1,"ratchet":"ratchet/receipt/1"}')
    expect(b).toEqual(a)
  })

  it("differs by kind, so a signature for one purpose is never another", () => {
    expect(Signature.statement("ratchet/verdict/1", { a: 1 })).not.toEqual(Signature.statement("ratchet/receipt/1", { a: 1 }))
  })

  it("a `ratchet` field among the fields cannot override the kind", () => {
    const text = new TextDecoder().decode(Signature.statement("ratchet/receipt/1", { ratchet: "ratchet/verdict/1" })!)
    expect(text).toBe('{"ratchet":"ratchet/receipt/1"}')
  })

  it("is null for fields canonical JSON refuses", () => {
    expect(Signature.statement("ratchet/receipt/1", { a: Number.NaN })).toBeNull()
    expect(Signature.statement("ratchet/receipt/1", { a: undefined })).toBeNull()
  })
})

describe("Signature.holds", () => {
  const fields = { task: "t-1", digest: "sha256:x" }
  const signed = Keys.sign(Keys.alice, "ratchet/receipt/1", fields)

  it("is true for a real signature over exactly the statement", () => {
    expect(Signature.holds(Keys.verify, signed, "ratchet/receipt/1", fields)).toBe(true)
  })

  it.each([
    ["another field value", { task: "t-2", digest: "sha256:x" }, "ratchet/receipt/1"],
    ["one more field", { ...fields, extra: true }, "ratchet/receipt/1"],
    ["one field less", { task: "t-1" }, "ratchet/receipt/1"],
    ["another kind", fields, "ratchet/verdict/1"]
  ] as const)("is false for %s", (_label, other, kind) => {
    expect(Signature.holds(Keys.verify, signed, kind, other)).toBe(false)
  })

  it("is false for the right value under another key", () => {
    expect(Signature.holds(Keys.verify, { ...signed, key: Keys.vera.key }, "ratchet/receipt/1", fields)).toBe(false)
  })

  it("is false when the verifier throws or answers anything but true", () => {
    const throwing: Signature.Verify = () => {
      throw new Error("no crypto")
    }
    expect(Signature.holds(throwing, signed, "ratchet/receipt/1", fields)).toBe(false)
    expect(Signature.holds((() => "yes") as unknown as Signature.Verify, signed, "ratchet/receipt/1", fields)).toBe(false)
  })

  it("is false, without calling the verifier, for fields that make no statement", () => {
    let called = false
    const spy: Signature.Verify = () => (called = true)
    expect(Signature.holds(spy, signed, "ratchet/receipt/1", { a: Number.POSITIVE_INFINITY })).toBe(false)
    expect(called).toBe(false)
  })
})

describe("Signature.fingerprint", () => {
  it("is the first 12 base64url characters after the prefix", () => {
    expect(Signature.fingerprint(Keys.alice.key)).toBe(Keys.alice.key.slice(8, 20))
    expect(Signature.fingerprint(Keys.alice.key)).toHaveLength(12)
  })
})
