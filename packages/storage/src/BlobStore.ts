/**
 * The blob store port: large bodies (prompts, outputs, command logs) addressed by content.
 *
 * A blob's reference is `sha256:<64 hex>` of its bytes, so `put` is naturally deduplicating and
 * idempotent, and `get` verifies what it returns: bytes whose hash no longer matches their
 * reference are a `Corrupt` storage error, never silently returned. References are validated
 * before use, so no reference can name anything outside the store (no path, no `..`).
 *
 * `get` is lazy by construction (an Effect that reads when run); readers that need no text never
 * pay for it.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { StorageError } from "./StorageError.js"

/**
 * A blob reference: `sha256:` and 64 lowercase hex digits.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BlobRef = Schema.String.pipe(
  Schema.pattern(/^sha256:[0-9a-f]{64}$/),
  Schema.brand("@ratchet/storage/BlobRef"),
  Schema.annotations({ message: () => "expected a blob reference: sha256: followed by 64 lowercase hex digits" })
)

/**
 * @since 0.1.0
 * @category models
 */
export type BlobRef = typeof BlobRef.Type

/**
 * @since 0.1.0
 * @category errors
 */
export class BlobNotFound extends Schema.TaggedError<BlobNotFound>()("@ratchet/storage/BlobNotFound", {
  ref: Schema.String
}) {
  override get message(): string {
    return `No blob ${this.ref} in the store. It was never written here, or the store was pruned; re-run the step that produced it.`
  }
}

/**
 * @since 0.1.0
 * @category errors
 */
export class InvalidBlobRef extends Schema.TaggedError<InvalidBlobRef>()("@ratchet/storage/InvalidBlobRef", {
  ref: Schema.String
}) {
  override get message(): string {
    const shown = this.ref.length > 80 ? `${this.ref.slice(0, 80)}…` : this.ref
    return `"${shown}" is not a blob reference (expected sha256: followed by 64 lowercase hex digits).`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Stores the bytes (atomically; a no-op when they are already stored) and returns their ref. */
  readonly put: (bytes: Uint8Array) => Effect.Effect<BlobRef, StorageError>
  /** Reads and verifies the bytes of a ref. */
  readonly get: (ref: string) => Effect.Effect<Uint8Array, BlobNotFound | InvalidBlobRef | StorageError>
  readonly has: (ref: string) => Effect.Effect<boolean, InvalidBlobRef | StorageError>
}

/**
 * @since 0.1.0
 * @category services
 */
export class BlobStore extends Context.Tag("@ratchet/storage/BlobStore")<BlobStore, Service>() {}
