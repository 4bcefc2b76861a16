/**
 * Canonical JSON and digests. Expected canonical texts are written by hand from RFC 8785 and the
 * ECMAScript Number-to-String rules; expected SHA-256 values come from the conformance vector of the
 * peer implementation and from the standard `sha256sum` tool, never from the code under test.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as fc from "fast-check"
import * as Digest from "../src/Digest.js"

const canonical = (value: unknown): string => {
  const result = Digest.canonicalize(value)
  if (Either.isLeft(result)) throw new Error(`expected a canonical form, got ${result.left.message}`)
  return result.right
}

const rejection = (value: unknown): Digest.NotCanonicalizable => {
  const result = Digest.canonicalize(value)
  if (Either.isRight(result)) throw new Error(`expected a rejection, got ${result.right}`)
  return result.left
}

/** The peer implementation's conformance vector, verbatim. */
const vector = {
  goal: "Preserve semantic task state",
  non_goals: ["Implement the Controller"],
  constraints: ["No target repository writes"],
  context: { relevant_paths: ["docs/research/phase-0"] },
  acceptance_criteria: [{ id: "AC-001", outcome: "round-trip is lossless", required: true }],
  execution: { allowed_scope: ["docs/research/phase-0"], retry: { max_successors: 5 } }
}
const vectorDigest = "sha256:e33553ac8e334a18186c49a081e9abddd26b77409ded3949cad3072b5a541128"
const vectorCanonical =
  `{"acceptance_criteria":[{"id":"AC-001","outcome":"round-trip is lossless","required":true}],` +
  `"constraints":["No target repository writes"],"context":{"relevant_paths":["docs/research/phase-0"]},` +
  `"execution":{"allowed_scope":["docs/research/phase-0"],"retry":{"max_successors":5}},` +
  `"goal":"Preserve semantic task state","non_goals":["Implement the Controller"]}`

const nested = (depth: number, make: (inner: unknown) => unknown): unknown => {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = make(value)
  return value
}

describe("Digest conformance vector", () => {
  it("matches the peer implementation", () => {
    expect(Digest.of(vector)).toStrictEqual(Either.right(vectorDigest))
  })

  it("has the hand-written canonical text", () => {
    expect(canonical(vector)).toBe(vectorCanonical)
    expect(Digest.ofCanonical(vectorCanonical)).toBe(vectorDigest)
  })

  it("does not depend on key order", () => {
    const reordered = {
      execution: { retry: { max_successors: 5 }, allowed_scope: ["docs/research/phase-0"] },
      acceptance_criteria: [{ required: true, outcome: "round-trip is lossless", id: "AC-001" }],
      context: { relevant_paths: ["docs/research/phase-0"] },
      constraints: ["No target repository writes"],
      non_goals: ["Implement the Controller"],
      goal: "Preserve semantic task state"
    }
    expect(Digest.of(reordered)).toStrictEqual(Either.right(vectorDigest))
  })

  it("changes when array order changes (order is meaning)", () => {
    expect(canonical([1, 2])).toBe("[1,2]")
    expect(Digest.of([1, 2])).not.toStrictEqual(Digest.of([2, 1]))
  })
})

describe("Digest.canonicalize accepted inputs", () => {
  const table: ReadonlyArray<readonly [string, unknown, string]> = [
    ["null", null, "null"],
    ["true", true, "true"],
    ["false", false, "false"],
    ["zero", 0, "0"],
    ["negative zero", -0, "0"],
    ["negative integer", -42, "-42"],
    ["1e21", 1e21, "1e+21"],
    ["1e20 is written out", 1e20, "100000000000000000000"],
    ["0.000001", 0.000001, "0.000001"],
    ["1e-7", 1e-7, "1e-7"],
    // eslint-disable-next-line no-loss-of-precision -- the RFC 8785 input, written as published
    ["RFC 8785 333333333.33333329", 333333333.33333329, "333333333.3333333"],
    ["RFC 8785 1E30", 1e30, "1e+30"],
    ["RFC 8785 4.50", 4.5, "4.5"],
    ["RFC 8785 2e-3", 2e-3, "0.002"],
    ["RFC 8785 1e-27", 0.000000000000000000000000001, "1e-27"],
    ["max safe integer", 9007199254740991, "9007199254740991"],
    ["smallest subnormal", 5e-324, "5e-324"],
    ["empty string", "", `""`],
    ["empty array", [], "[]"],
    ["empty object", {}, "{}"],
    ["keys sorted, whitespace dropped", { b: 1, a: [true, null, "x"] }, `{"a":[true,null,"x"],"b":1}`],
    ["nested objects sorted at every level", { z: { y: 1, x: 2 }, a: [{ d: 4, c: 3 }] }, `{"a":[{"c":3,"d":4}],"z":{"x":2,"y":1}}`],
    ["upper case sorts before lower case", { b: 1, B: 2, a: 3, A: 4 }, `{"A":4,"B":2,"a":3,"b":1}`],
    ["a prefix sorts first", { ab: 1, a: 2, "": 3 }, `{"":3,"a":2,"ab":1}`],
    ["null-prototype object", Object.assign(Object.create(null) as object, { b: 2, a: 1 }), `{"a":1,"b":2}`],
    [
      "string escapes",
      "\u0000\b\t\n\f\r\"\\/é€😀\u001f\u007f",
      `"\\u0000\\b\\t\\n\\f\\r\\"\\\\/é€😀\\u001f\u007f"`
    ],
    ["a surrogate pair is kept", "\uD83D\uDE00", `"😀"`],
    [
      "RFC 8785 sorting by UTF-16 code units",
      {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\ud83d\ude00": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis"
      },
      `{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis",` +
      `"€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}`
    ],
    [
      "RFC 8785 main example",
      {
        // eslint-disable-next-line no-loss-of-precision -- the RFC 8785 input, written as published
        numbers: [333333333.33333329, 1e30, 4.50, 2e-3, 0.000000000000000000000000001],
        string: "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"/",
        literals: [null, true, false]
      },
      `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],` +
      `"string":"€$\\u000f\\nA'B\\"\\\\\\\\\\"/"}`
    ]
  ]

  it.each(table)("%s", (_name, value, text) => {
    expect(Digest.canonicalize(value)).toStrictEqual(Either.right(text))
  })

  it("accepts a shared, acyclic reference twice", () => {
    const shared = { k: 1 }
    expect(canonical({ a: shared, b: [shared] })).toBe(`{"a":{"k":1},"b":[{"k":1}]}`)
  })

  it("accepts exactly maxDepth nested arrays and objects", () => {
    expect(Digest.maxDepth).toBe(1000)
    expect(canonical(nested(1000, (inner) => [inner]))).toBe(`${"[".repeat(1000)}1${"]".repeat(1000)}`)
    expect(canonical(nested(1000, (inner) => ({ k: inner })))).toBe(`${"{\"k\":".repeat(1000)}1${"}".repeat(1000)}`)
  })

  it("ignores non-enumerable properties and non-index array properties, as JSON does", () => {
    const object = Object.defineProperty({ a: 1 }, "hidden", { value: Number.NaN, enumerable: false })
    const array = Object.assign([1, 2], { extra: Number.NaN })
    expect(canonical(object)).toBe(`{"a":1}`)
    expect(canonical(array)).toBe("[1,2]")
  })
})

describe("Digest.canonicalize rejected inputs", () => {
  class Point {
    constructor(readonly x: number) {}
  }
  const symbolKeyed = { a: 1, [Symbol("s")]: 2 }
  const withGetter = Object.defineProperty({}, "a", { get: () => 1, enumerable: true })
  const arrayWithGetter = Object.defineProperty([1, 2], 1, { get: () => 2, enumerable: true })
  const cyclic: { x: Array<unknown> } = { x: [] }
  cyclic.x.push(cyclic)
  const selfArray: Array<unknown> = []
  selfArray.push(1, selfArray)

  const table: ReadonlyArray<readonly [string, unknown, string, string]> = [
    ["NaN at the root", Number.NaN, "", "NaN is not a JSON number"],
    ["Infinity in an array", { a: [1, Number.POSITIVE_INFINITY] }, "/a/1", "Infinity is not a JSON number"],
    ["-Infinity", { n: Number.NEGATIVE_INFINITY }, "/n", "-Infinity is not a JSON number"],
    ["undefined at the root", undefined, "", "undefined is not a JSON value"],
    ["undefined in an array", [1, undefined], "/1", "undefined is not a JSON value"],
    ["undefined-valued property", { a: 1, b: undefined }, "/b", "undefined is not a JSON value"],
    // eslint-disable-next-line no-sparse-arrays -- the hole is the input under test
    ["array hole", [1, , 3], "/1", "an array hole is not a JSON value"],
    ["function", { f: () => 1 }, "/f", "a function is not a JSON value"],
    ["symbol value", [Symbol("s")], "/0", "a symbol is not a JSON value"],
    ["bigint", { n: 1n }, "/n", "a bigint is not a JSON number"],
    ["Date", { at: new Date(0) }, "/at", "an object that is not a plain object (a class instance, Date, Map, Set, ...) is not JSON data"],
    ["Map", [new Map()], "/0", "an object that is not a plain object (a class instance, Date, Map, Set, ...) is not JSON data"],
    ["Set", { s: new Set([1]) }, "/s", "an object that is not a plain object (a class instance, Date, Map, Set, ...) is not JSON data"],
    ["class instance", new Point(1), "", "an object that is not a plain object (a class instance, Date, Map, Set, ...) is not JSON data"],
    ["symbol-keyed property", { o: symbolKeyed }, "/o", "a symbol-keyed property is not JSON data"],
    ["accessor property", { o: withGetter }, "/o/a", "an accessor property is not plain JSON data"],
    ["accessor array element", [0, arrayWithGetter], "/1/1", "an accessor property is not plain JSON data"],
    ["cycle through an array", cyclic, "/x/0", "cycle: the value contains itself"],
    ["array containing itself", selfArray, "/1", "cycle: the value contains itself"],
    ["lone high surrogate in a string", { s: ["ok", "a\uD800b"] }, "/s/1", "the string contains a lone surrogate, which has no UTF-8 encoding"],
    ["lone high surrogate at the end", "a\uD83D", "", "the string contains a lone surrogate, which has no UTF-8 encoding"],
    ["lone low surrogate", "\uDE00a", "", "the string contains a lone surrogate, which has no UTF-8 encoding"],
    ["lone surrogate in a key", { ok: 1, "k\uDC00": 1 }, "/k\uDC00", "the property name contains a lone surrogate, which has no UTF-8 encoding"],
    ["JSON Pointer escaping of / and ~", { "a/b": { "m~n": Number.NaN } }, "/a~1b/m~0n", "NaN is not a JSON number"],
    ["the first offending value in key order", { b: Number.NaN, a: undefined }, "/a", "undefined is not a JSON value"]
  ]

  it.each(table)("%s", (_name, value, path, reason) => {
    const error = rejection(value)
    expect(error._tag).toBe("@ratchet/kernel/NotCanonicalizable")
    expect({ path: error.path, reason: error.reason }).toStrictEqual({ path, reason })
    expect(Digest.of(value)).toStrictEqual(Either.left(error))
  })

  it("rejects nesting one level deeper than maxDepth, naming where", () => {
    const arrays = rejection(nested(1001, (inner) => [inner]))
    expect(arrays.path).toBe("/0".repeat(1000))
    expect(arrays.reason).toBe("too deep: more than 1000 nested arrays or objects")
    const objects = rejection(nested(1001, (inner) => ({ k: inner })))
    expect(objects.path).toBe("/k".repeat(1000))
  })

  it("survives hostile nesting without exhausting the stack", () => {
    const error = rejection(nested(200_000, (inner) => [inner]))
    expect(error.reason).toMatch(/^too deep/)
  })

  it("has a message naming the place, the reason and the fix", () => {
    expect(rejection({ a: Number.NaN }).message).toBe(
      "cannot digest the value at /a: NaN is not a JSON number; digests are taken over plain JSON data only, so replace it with a JSON value"
    )
    expect(rejection(undefined).message).toBe(
      "cannot digest the root value: undefined is not a JSON value; digests are taken over plain JSON data only, so replace it with a JSON value"
    )
  })

  it("accepts exactly the well-formed strings (oracle: encodeURIComponent)", () => {
    const nearSurrogates = fc.integer({ min: 0xd7f0, max: 0xe010 }).map((code) => String.fromCharCode(code))
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(nearSurrogates, fc.constantFrom("a", "\uD83D\uDE00")) }), (s) => {
        let wellFormed = true
        try {
          encodeURIComponent(s)
        } catch {
          wellFormed = false
        }
        expect(Either.isRight(Digest.canonicalize(s))).toBe(wellFormed)
        expect(Either.isRight(Digest.canonicalize({ [s]: 1 }))).toBe(wellFormed)
      })
    )
  })
})

/** Rebuilds every object of a JSON value with its keys in an order chosen by `picks`. */
const shuffleKeys = (value: unknown, picks: ReadonlyArray<number>): unknown => {
  let n = 0
  const pick = (): number => picks.length === 0 ? 0 : picks[n++ % picks.length]!
  const go = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(go)
    if (typeof v === "object" && v !== null) {
      const keys = Object.keys(v)
      const out: Record<string, unknown> = {}
      while (keys.length > 0) {
        const [key] = keys.splice(pick() % keys.length, 1)
        // defineProperty, not `out[key] =`: a key "__proto__" (valid JSON) would set the prototype
        // instead of an own property and drop the key.
        Object.defineProperty(out, key!, { value: go((v as Record<string, unknown>)[key!]), enumerable: true, writable: true, configurable: true })
      }
      return out
    }
    return v
  }
  return go(value)
}

/** An independent, naive canonicalizer used only as an oracle for plain JSON values. */
const naive = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(naive).join(",")}]`
    : typeof v === "object" && v !== null
    ? `{${
      Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${naive((v as Record<string, unknown>)[k])}`).join(",")
    }}`
    : JSON.stringify(v)

describe("Digest properties", () => {
  const json = fc.jsonValue({ maxDepth: 4, stringUnit: "grapheme" })

  it("key order never changes the digest", () => {
    // A value with a "__proto__" key, which fast-check found once: the shuffle must keep it.
    const withProto = JSON.parse("{\"__proto__\":null,\"a\":[{\"__proto__\":1,\"b\":2}]}") as unknown
    expect(Digest.of(shuffleKeys(withProto, [1, 0]))).toStrictEqual(Digest.of(withProto))
    fc.assert(
      fc.property(json, fc.array(fc.nat()), (value, picks) => {
        expect(Digest.of(shuffleKeys(value, picks))).toStrictEqual(Digest.of(value))
      })
    )
  })

  it("canonical text round-trips through JSON.parse and agrees with a naive oracle", () => {
    fc.assert(
      fc.property(json, (value) => {
        const text = canonical(value)
        expect(text).toBe(naive(value))
        expect(JSON.parse(text)).toStrictEqual(JSON.parse(JSON.stringify(value)))
      })
    )
  })

  it("is deterministic", () => {
    fc.assert(
      fc.property(json, (value) => {
        const first = Digest.of(value)
        expect(Digest.of(value)).toStrictEqual(first)
        expect(first).toStrictEqual(Either.right(Digest.ofCanonical(canonical(value))))
      })
    )
  })
})

describe("Digest hashing", () => {
  it("hashes the UTF-8 bytes of the canonical text (values from sha256sum)", () => {
    expect(Digest.ofCanonical("")).toBe("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(Digest.ofCanonical("abc")).toBe("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(Digest.ofCanonical("é")).toBe("sha256:4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c")
    expect(Digest.ofCanonical("😀")).toBe("sha256:f0443a342c5ef54783a111b51ba56c938e474c32324d90c3a60c9c8e3a37e2d9")
  })

  it("hashes raw bytes", () => {
    expect(Digest.ofBytes(new Uint8Array())).toBe(
      "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )
    expect(Digest.ofBytes(new Uint8Array([0x61, 0x62, 0x63]))).toBe(
      "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
  })
})

describe("Digest schema", () => {
  const decode = Schema.decodeUnknownEither(Digest.Digest)
  const valid = `sha256:${"0123456789abcdef".repeat(4)}`

  it("accepts sha256: and 64 lowercase hex characters", () => {
    expect(decode(valid)).toStrictEqual(Either.right(valid))
    expect(decode(vectorDigest)).toStrictEqual(Either.right(vectorDigest))
  })

  it.each([
    ["upper-case hex", `sha256:${"0123456789ABCDEF".repeat(4)}`],
    ["63 characters", `sha256:${"a".repeat(63)}`],
    ["65 characters", `sha256:${"a".repeat(65)}`],
    ["no prefix", "a".repeat(64)],
    ["another algorithm", `sha512:${"a".repeat(64)}`],
    ["a non-hex character", `sha256:${"g".repeat(64)}`],
    ["leading text", `xsha256:${"a".repeat(64)}`],
    ["trailing newline", `sha256:${"a".repeat(64)}\n`],
    ["empty", ""]
  ])("rejects %s with a message naming the expected form and the value", (_name, input) => {
    const result = decode(input)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(ParseResult.TreeFormatter.formatErrorSync(result.left)).toBe(
        `expected a digest: "sha256:" followed by 64 lowercase hexadecimal characters, got ${JSON.stringify(input)}`
      )
    }
  })

  it("rejects non-strings, naming the expected type", () => {
    for (const input of [42, null]) {
      const result = decode(input)
      expect(Either.isLeft(result) && ParseResult.TreeFormatter.formatErrorSync(result.left)).toBe(
        `Digest\n└─ From side refinement failure\n   └─ Expected string, actual ${JSON.stringify(input)}`
      )
    }
  })

  it("is branded and named, so other schemas and JSON Schema output can refer to it", () => {
    expect(SchemaAST.getBrandAnnotation(Digest.Digest.ast)).toStrictEqual(Option.some(["@ratchet/kernel/Digest"]))
    expect(SchemaAST.getIdentifierAnnotation(Digest.Digest.ast)).toStrictEqual(Option.some("Digest"))
    expect(SchemaAST.getIdentifierAnnotation(Digest.CanonicalString.ast)).toStrictEqual(Option.some("CanonicalString"))
  })

  it("CanonicalString rejects lone surrogates with a clear message", () => {
    const decodeText = Schema.decodeUnknownEither(Digest.CanonicalString)
    expect(decodeText("a😀")).toStrictEqual(Either.right("a😀"))
    const result = decodeText("a\uD800")
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(ParseResult.TreeFormatter.formatErrorSync(result.left)).toContain(
        "expected a well-formed Unicode string, got one with a lone surrogate (it has no UTF-8 encoding)"
      )
    }
  })
})

describe("modules built on digests", () => {
  // Imported inside a test on purpose: a module that throws while loading then fails this test,
  // whereas a static import would only fail collection, which some runners do not count.
  it("Spec and Plan load and digest the conformance vector", async () => {
    const Spec = await import("../src/Spec.js")
    const Plan = await import("../src/Plan.js")
    const spec = Either.getOrThrow(Spec.decode({
      goal: "Preserve semantic task state",
      nonGoals: ["Implement the Controller"],
      constraints: ["No target repository writes"],
      context: { relevantPaths: ["docs/research/phase-0"] },
      acceptanceCriteria: [{ id: "AC-001", outcome: "round-trip is lossless", required: true }],
      execution: { allowedScope: ["docs/research/phase-0"], retry: { maxSuccessors: 5 } }
    }))
    expect(Spec.digest(spec)).toBe(vectorDigest)
    const plan = Plan.decode({
      specDigest: vectorDigest,
      steps: [{ id: "round-trip", title: "Round-trip", acRefs: ["AC-001"], run: { command: "npm test" } }]
    }, spec)
    expect(Either.isRight(plan)).toBe(true)
  })
})

describe("Digest.omitEmpty", () => {
  it("drops absent fields, empty arrays and empty objects and keeps everything else", () => {
    expect(
      Digest.omitEmpty({
        absent: undefined,
        emptyArray: [],
        emptyObject: {},
        zero: 0,
        no: false,
        empty: "",
        nil: null,
        list: [undefined, [], {}],
        object: { a: undefined }
      })
    ).toStrictEqual({ zero: 0, no: false, empty: "", nil: null, list: [undefined, [], {}], object: { a: undefined } })
  })
})
