/**
 * Conformance checks of the blob store: round trip, deduplication, missing and hostile refs,
 * verification.
 */
import { randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { StorageFaults } from "../../StorageFaults.js"
import { check, rejects, same, services, sha256, show, succeeds, tags, violation } from "./Kit.js"

// ---------------------------------------------------------------------------------------------
// Blobs
// ---------------------------------------------------------------------------------------------

export const bytesOf = (text: string) => new TextEncoder().encode(text)

export const blobRoundTrip = check(
  "blobs",
  "blob.roundtrip",
  "put returns sha256 of the bytes; get returns them; has knows them (empty, binary, 1 MiB)",
  Effect.gen(function*() {
    const promise = "blobs are content-addressed"
    const { blobs } = yield* services
    const samples: ReadonlyArray<readonly [string, Uint8Array]> = [
      ["an empty blob", new Uint8Array(0)],
      ["text", bytesOf(`prompt ${randomBytes(8).toString("hex")}`)],
      ["every byte value", Uint8Array.from({ length: 256 }, (_, i) => i)],
      ["1 MiB", new Uint8Array(randomBytes(1_048_576))]
    ]
    for (const [what, bytes] of samples) {
      const ref = yield* succeeds(promise, `put ${what}`, blobs.put(bytes))
      yield* same(promise, `the ref of ${what}`, ref, sha256(bytes))
      yield* same(promise, `has ${what}`, yield* succeeds(promise, "has", blobs.has(ref)), true)
      yield* same(promise, `the bytes of ${what}`, new Uint8Array(yield* succeeds(promise, "get", blobs.get(ref))), bytes)
    }
  }),
  60_000
)

export const blobDedup = check(
  "blobs",
  "blob.dedup",
  "putting the same bytes again, even concurrently, returns the same ref and keeps one readable copy",
  Effect.gen(function*() {
    const promise = "put is atomic and deduplicating"
    const { blobs } = yield* services
    const bytes = bytesOf(`output ${randomBytes(16).toString("hex")}\n`.repeat(100))
    const first = yield* succeeds(promise, "put", blobs.put(bytes))
    const again = yield* succeeds(promise, "put again", blobs.put(bytes))
    yield* same(promise, "the ref of the same bytes", again, first)
    const fresh = bytesOf(`log ${randomBytes(16).toString("hex")}`)
    const refs = yield* Effect.all(Array.from({ length: 8 }, () => succeeds(promise, "a concurrent put", blobs.put(fresh))), { concurrency: "unbounded" })
    yield* same(promise, "the refs of concurrent puts", new Set(refs).size, 1)
    yield* same(promise, "the bytes after concurrent puts", new Uint8Array(yield* succeeds(promise, "get", blobs.get(refs[0]!))), fresh)
    yield* same(promise, "the bytes after putting twice", new Uint8Array(yield* succeeds(promise, "get", blobs.get(first))), bytes)
  })
)

export const blobMissing = check(
  "blobs",
  "blob.missing",
  "a well-formed ref never stored: has is false, get is BlobNotFound",
  Effect.gen(function*() {
    const promise = "get of a missing blob is typed"
    const { blobs } = yield* services
    const ref = sha256(bytesOf(`never stored ${randomBytes(16).toString("hex")}`))
    yield* same(promise, "has of a missing blob", yield* succeeds(promise, "has", blobs.has(ref)), false)
    const missing = yield* rejects(promise, "get of a missing blob", blobs.get(ref), tags.BlobNotFound)
    yield* same(promise, "the BlobNotFound", missing.ref, ref)
  })
)

export const hostileRefs: ReadonlyArray<string> = [
  "",
  "sha256:",
  `sha256:${"0".repeat(63)}`,
  `sha256:${"0".repeat(65)}`,
  `sha256:${"A".repeat(64)}`,
  `SHA256:${"0".repeat(64)}`,
  `sha512:${"0".repeat(64)}`,
  `${"0".repeat(64)}`,
  "../../../../etc/passwd",
  "sha256:../../../../etc/passwd",
  `sha256:${"0".repeat(62)}/..`,
  `sha256:../${"0".repeat(61)}`,
  `sha256:${"0".repeat(64)}/../../x`,
  `sha256:${"0".repeat(64)}\n`,
  `sha256:${"0".repeat(63)}\u0000`,
  `/etc/passwd`,
  `sha256:%2e%2e%2f${"0".repeat(55)}`,
  ` sha256:${"0".repeat(64)}`
]

export const blobHostile = check(
  "blobs",
  "blob.hostile-refs",
  "a malformed or path-like ref is InvalidBlobRef for get and has, never a file access",
  Effect.gen(function*() {
    const promise = "no reference can escape the store"
    const { blobs } = yield* services
    for (const ref of hostileRefs) {
      const invalid = yield* rejects(promise, `get ${show(ref)}`, blobs.get(ref), tags.InvalidBlobRef)
      yield* same(promise, `the InvalidBlobRef of ${show(ref)}`, invalid.ref, ref)
      yield* rejects(promise, `has ${show(ref)}`, blobs.has(ref), tags.InvalidBlobRef)
    }
  })
)

export const blobVerify = check(
  "blobs",
  "blob.verify",
  "get re-hashes: bytes damaged behind the store's back are a Corrupt StorageError; other blobs stay readable",
  Effect.gen(function*() {
    const promise = "get verifies the hash"
    const { blobs } = yield* services
    const faults = yield* Effect.serviceOption(StorageFaults)
    if (Option.isNone(faults)) {
      return yield* Effect.fail(
        violation(
          promise,
          "the layer provides no StorageFaults service, so the suite cannot damage a blob to prove get verifies it. Merge StorageFaults.fileBlobs(directory) (or your own corruptBlob) into the layer, or skip the check \"blob.verify\" explicitly"
        )
      )
    }
    const damaged = bytesOf(`will be damaged ${randomBytes(16).toString("hex")}`)
    const intact = bytesOf(`stays intact ${randomBytes(16).toString("hex")}`)
    const ref = yield* succeeds(promise, "put", blobs.put(damaged))
    const other = yield* succeeds(promise, "put", blobs.put(intact))
    yield* succeeds(promise, "damaging the blob", faults.value.corruptBlob(ref))
    const error = yield* rejects(promise, "get of a damaged blob", blobs.get(ref), tags.StorageError)
    yield* same(promise, "the reason of the StorageError", error.reason._tag, "Corrupt")
    yield* same(promise, "the intact blob", new Uint8Array(yield* succeeds(promise, "get", blobs.get(other))), intact)
  })
)
