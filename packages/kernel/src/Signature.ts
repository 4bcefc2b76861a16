/**
 * Signatures over what a person decided: the shapes of an approval key and of a signature, and the
 * exact bytes a person's key signs (a *statement*).
 *
 * Keys are Ed25519 (RFC 8032). A public key is written `ed25519:` followed by the unpadded
 * base64url of its 32 bytes; a signature is the unpadded base64url of its 64 bytes, together with
 * the key that made it. A statement is the UTF-8 of the canonical JSON (RFC 8785, as digests use)
 * of its fields plus a `ratchet` field naming what kind of statement it is, so a signature made
 * for one purpose (an approval) can never be presented as another (an approvers-file entry).
 *
 * The kernel does no cryptography itself: checking a signature is a {@link Verify} function the
 * caller supplies (the controller uses the platform's Ed25519). The kernel decides *what* must be
 * signed, by whom, and what a missing or wrong signature means; the primitive stays outside, so the
 * kernel loads nothing heavy and stays free of I/O.
 *
 * @since 0.2.0
 */
import { utf8ToBytes } from "@noble/hashes/utils.js"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Digest from "./Digest.js"

/**
 * An Ed25519 public key: `ed25519:` and the unpadded base64url of its 32 bytes (43 characters).
 *
 * @since 0.2.0
 * @category schemas
 */
export const Key = Schema.String.pipe(
  Schema.pattern(/^ed25519:[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/, {
    message: (issue) =>
      `expected an approval key: "ed25519:" followed by the 43-character base64url of 32 bytes, got ${
        JSON.stringify(typeof issue.actual === "string" ? issue.actual.slice(0, 80) : issue.actual)
      }`
  })
)

/**
 * @since 0.2.0
 * @category models
 */
export type Key = typeof Key.Type

/**
 * A signature and the key that made it. `value` is the unpadded base64url of the 64 signature bytes
 * (86 characters).
 *
 * @since 0.2.0
 * @category schemas
 */
export const Signature = Schema.Struct({
  key: Key,
  value: Schema.String.pipe(
    Schema.pattern(/^[A-Za-z0-9_-]{85}[AQgw]$/, {
      message: () => "expected a signature: the 86-character base64url of 64 bytes"
    })
  )
})

/**
 * @since 0.2.0
 * @category models
 */
export type Signature = typeof Signature.Type

/**
 * Checks `value` against `message` under `key`. Supplied by the caller; it must never throw (a
 * malformed key or signature is `false`).
 *
 * @since 0.2.0
 * @category models
 */
export type Verify = (key: Key, message: Uint8Array, value: string) => boolean

/**
 * What kind of statement a signature is over. Each kind has its own fields; the kind is part of
 * the signed bytes.
 *
 * @since 0.2.0
 * @category models
 */
export type Kind = "ratchet/approvers-entry/1" | "ratchet/receipt/1" | "ratchet/verdict/1" | "ratchet/lesson-receipt/1"

/**
 * The bytes a key signs for a statement of `kind` with `fields`: the canonical JSON of the fields
 * with `ratchet: kind` added. Fields are plain JSON data (strings, numbers, arrays, objects, null);
 * anything canonical JSON refuses is a defect of the caller and yields `null`, which no signature
 * matches.
 *
 * @since 0.2.0
 * @category encoding
 */
export const statement = (kind: Kind, fields: Readonly<Record<string, unknown>>): Uint8Array | null =>
  Either.match(Digest.canonicalize({ ...fields, ratchet: kind }), {
    onLeft: () => null,
    onRight: (text) => utf8ToBytes(text)
  })

/**
 * Whether `signature` is a signature of `kind`/`fields` by its own key. Never throws: a statement
 * that cannot be built, or a verifier that throws, is `false`.
 *
 * @since 0.2.0
 * @category guards
 */
export const holds = (verify: Verify, signature: Signature, kind: Kind, fields: Readonly<Record<string, unknown>>): boolean => {
  const bytes = statement(kind, fields)
  if (bytes === null) return false
  try {
    return verify(signature.key, bytes, signature.value) === true
  } catch {
    return false
  }
}

/**
 * A short, human-comparable name of a key: its first 12 base64url characters, as people compare
 * SSH fingerprints.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fingerprint = (key: Key): string => key.slice("ed25519:".length, "ed25519:".length + 12)
