/**
 * Content digests: `sha256:` followed by the lowercase hex SHA-256 of the UTF-8 bytes of a value's
 * canonical JSON text (RFC 8785, the JSON Canonicalization Scheme).
 *
 * Canonical text has object keys sorted by UTF-16 code units, no insignificant whitespace, strings
 * escaped as ECMAScript `JSON.stringify` escapes them, and numbers in ECMAScript Number-to-String
 * form (`-0` becomes `0`, `1e21` becomes `1e+21`). Two values that mean the same JSON document
 * therefore always produce the same digest, whatever their key order.
 *
 * Canonicalization is total over JSON and refuses everything else rather than guessing: `NaN`,
 * `Infinity`, `undefined` (including an `undefined`-valued object property, which `JSON.stringify`
 * would silently drop and so let two different inputs share a digest), functions, symbols, bigints,
 * non-plain objects (class instances, `Date`, `Map`, `Set`), accessor properties, symbol-keyed
 * properties, cycles, strings or keys with lone surrogates (they have no UTF-8 encoding) and nesting
 * deeper than {@link maxDepth}. The depth bound keeps hostile input from exhausting the stack.
 *
 * Hashing uses `@noble/hashes`, so the module runs in any JavaScript runtime and performs no I/O.
 *
 * @since 0.1.0
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * A `sha256:`-prefixed digest: exactly 64 lowercase hexadecimal characters after the prefix.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Digest = Schema.String.pipe(
  Schema.pattern(/^sha256:[0-9a-f]{64}$/, {
    message: (issue) =>
      `expected a digest: "sha256:" followed by 64 lowercase hexadecimal characters, got ${
        JSON.stringify(issue.actual)
      }`
  }),
  Schema.brand("@ratchet/kernel/Digest"),
  Schema.annotations({ identifier: "Digest" })
)

/**
 * @since 0.1.0
 * @category models
 */
export type Digest = typeof Digest.Type

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * A string that canonical JSON can carry: it has no lone surrogate, so it has a UTF-8 encoding.
 * Documents that are digested use it for every string field, which makes their digest total.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CanonicalString = Schema.String.pipe(
  Schema.filter((s) =>
    loneSurrogate.test(s)
      ? "expected a well-formed Unicode string, got one with a lone surrogate (it has no UTF-8 encoding)"
      : undefined
  ),
  Schema.annotations({ identifier: "CanonicalString" })
)

/**
 * The deepest nesting of arrays and objects that {@link canonicalize} accepts.
 *
 * @since 0.1.0
 * @category encoding
 */
export const maxDepth = 1000

/**
 * The value at `path` (a JSON Pointer, RFC 6901; `""` is the whole value) has no canonical JSON form.
 *
 * @since 0.1.0
 * @category errors
 */
export class NotCanonicalizable extends Schema.TaggedError<NotCanonicalizable>()(
  "@ratchet/kernel/NotCanonicalizable",
  { path: Schema.String, reason: Schema.String }
) {
  override get message(): string {
    const where = this.path === "" ? "the root value" : `the value at ${this.path}`
    return `cannot digest ${where}: ${this.reason}; digests are taken over plain JSON data only, so replace it with a JSON value`
  }
}

const pointer = (segments: ReadonlyArray<string | number>): string =>
  segments.map((segment) => `/${String(segment).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("")

/** Why a value has no canonical form; the walk returns it instead of throwing. */
class Reject {
  constructor(readonly reason: string) {}
}

type Step = string | Reject

const quote = (s: string, what: string): Step =>
  loneSurrogate.test(s)
    ? new Reject(`${what} contains a lone surrogate, which has no UTF-8 encoding`)
    : JSON.stringify(s)

/**
 * Reads an own data property without running code: an accessor could throw or answer differently
 * on each read, and a missing index is an array hole, which JSON cannot express.
 */
const dataValue = (container: object, key: string): { readonly value: unknown } | Reject => {
  const descriptor = Object.getOwnPropertyDescriptor(container, key)
  if (descriptor === undefined) return new Reject("an array hole is not a JSON value")
  return "value" in descriptor
    ? { value: descriptor.value as unknown }
    : new Reject("an accessor property is not plain JSON data")
}

/**
 * Returns the RFC 8785 canonical JSON text of `value`, or the first reason (and its path) why it
 * has none.
 *
 * @since 0.1.0
 * @category encoding
 */
export const canonicalize = (value: unknown): Either.Either<string, NotCanonicalizable> => {
  // The path of the value being visited; on a rejection it names the offending value.
  const path: Array<string | number> = []
  // The containers on the current path: meeting one again is a cycle, and their count is the depth.
  const ancestors = new Set<object>()

  const walk = (v: unknown): Step => {
    switch (typeof v) {
      case "string":
        return quote(v, "the string")
      case "boolean":
        return v ? "true" : "false"
      case "number":
        // ECMAScript Number-to-String, which RFC 8785 adopts; it already writes -0 as "0".
        return Number.isFinite(v) ? JSON.stringify(v) : new Reject(`${v} is not a JSON number`)
      case "undefined":
        return new Reject("undefined is not a JSON value")
      case "bigint":
        return new Reject("a bigint is not a JSON number")
      case "symbol":
        return new Reject("a symbol is not a JSON value")
      case "function":
        return new Reject("a function is not a JSON value")
      case "object":
        return v === null ? "null" : container(v)
    }
  }

  const container = (v: object): Step => {
    if (ancestors.has(v)) return new Reject("cycle: the value contains itself")
    if (ancestors.size >= maxDepth) return new Reject(`too deep: more than ${maxDepth} nested arrays or objects`)
    ancestors.add(v)
    const text = Array.isArray(v) ? array(v) : object(v)
    ancestors.delete(v)
    return text
  }

  const member = (v: object, key: string | number): Step => {
    path.push(key)
    const read = dataValue(v, String(key))
    const text = read instanceof Reject ? read : walk(read.value)
    if (typeof text === "string") path.pop()
    return text
  }

  const array = (v: ReadonlyArray<unknown>): Step => {
    const parts: Array<string> = []
    for (let i = 0; i < v.length; i++) {
      const text = member(v, i)
      if (text instanceof Reject) return text
      parts.push(text)
    }
    return `[${parts.join(",")}]`
  }

  const object = (v: object): Step => {
    const proto: unknown = Object.getPrototypeOf(v)
    if (proto !== Object.prototype && proto !== null) {
      return new Reject("an object that is not a plain object (a class instance, Date, Map, Set, ...) is not JSON data")
    }
    if (Object.getOwnPropertySymbols(v).length > 0) return new Reject("a symbol-keyed property is not JSON data")
    // The default sort compares UTF-16 code units, exactly the order RFC 8785 prescribes.
    const keys = Object.keys(v).sort()
    const parts: Array<string> = []
    for (const key of keys) {
      path.push(key)
      const name = quote(key, "the property name")
      path.pop()
      if (name instanceof Reject) {
        path.push(key)
        return name
      }
      const text = member(v, key)
      if (text instanceof Reject) return text
      parts.push(`${name}:${text}`)
    }
    return `{${parts.join(",")}}`
  }

  const text = walk(value)
  return typeof text === "string"
    ? Either.right(text)
    : Either.left(new NotCanonicalizable({ path: pointer(path), reason: text.reason }))
}

/**
 * The digest of raw bytes, for content-addressed blobs.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ofBytes = (bytes: Uint8Array): Digest => Digest.make(`sha256:${bytesToHex(sha256(bytes))}`)

/**
 * The digest of an already-canonical JSON text: SHA-256 over its UTF-8 bytes. The text is taken as
 * given (it is not re-canonicalized); a lone surrogate in it is encoded as U+FFFD, so pass only text
 * produced by {@link canonicalize}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ofCanonical = (text: string): Digest => ofBytes(utf8ToBytes(text))

/**
 * The digest of a JSON value's canonical form.
 *
 * @since 0.1.0
 * @category constructors
 */
export const of = (value: unknown): Either.Either<Digest, NotCanonicalizable> =>
  Either.map(canonicalize(value), ofCanonical)

const isEmpty = (value: unknown): boolean =>
  value === undefined ||
  (Array.isArray(value) ? value.length === 0 : typeof value === "object" && value !== null && Object.keys(value).length === 0)

/**
 * The omission rule of semantic projections: drops fields that are absent, empty arrays and empty
 * objects, so "no decisions" and `decisions: []` share a digest. Array elements are never dropped:
 * their order and count are meaning.
 *
 * @since 0.1.0
 * @category encoding
 */
export const omitEmpty = (fields: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const kept: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) {
    if (!isEmpty(value)) kept[key] = value
  }
  return kept
}
