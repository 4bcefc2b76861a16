/**
 * The blob store in the database: table `ratchet_blobs (digest, size, bytes)`, the layout the
 * PostgreSQL layer uses so that runners on other machines read the same blobs.
 *
 * - `put` is one `INSERT … ON CONFLICT (digest) DO NOTHING`: atomic, and a blob already stored is
 *   left as it is.
 * - `get` re-hashes the bytes it reads: a row whose bytes no longer match its digest is a
 *   `Corrupt` storage error, never returned.
 * - A reference is validated (`sha256:` + 64 lowercase hex) before any statement runs; it travels
 *   as a bound parameter.
 *
 * The migrations create the table; build this over a store that `SqlStore.migrate` has
 * opened (the engine layers do).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import * as BlobStore from "./BlobStore.js"
import * as SqlDialect from "./SqlDialect.js"
import * as StorageError from "./StorageError.js"

const refPattern = /^sha256:[0-9a-f]{64}$/

const shownRefLength = 256

const refOf = (bytes: Uint8Array): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

const validRef = (ref: unknown): Effect.Effect<string, BlobStore.InvalidBlobRef> => {
  if (typeof ref === "string" && refPattern.test(ref)) return Effect.succeed(ref)
  const text = typeof ref === "string" ? ref : String(ref)
  return Effect.fail(
    new BlobStore.InvalidBlobRef({ ref: text.length > shownRefLength ? `${text.slice(0, shownRefLength)}…` : text })
  )
}

const toBytes = (value: unknown): Uint8Array | null => {
  if (value instanceof Uint8Array) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
  if (value instanceof ArrayBuffer) return new Uint8Array(value)
  return null
}

/**
 * A blob store over the context's `SqlClient`, classifying failures with its `SqlDialect`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<BlobStore.Service, never, SqlClient.SqlClient | SqlDialect.SqlDialect> = Effect.gen(
  function*() {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const dialect = yield* SqlDialect.SqlDialect

    const put: BlobStore.Service["put"] = (bytes) =>
      Effect.suspend(() => {
        const ref = refOf(bytes)
        // Both drivers bind a Buffer as a BLOB / BYTEA; a view shares the caller's memory.
        const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        return sql`INSERT INTO ratchet_blobs (digest, size, bytes) VALUES (${ref}, ${bytes.byteLength}, ${buffer})
          ON CONFLICT (digest) DO NOTHING`.pipe(
          Effect.mapError((error) => dialect.classify("blob.put", error)),
          Effect.as(BlobStore.BlobRef.make(ref))
        )
      })

    const get: BlobStore.Service["get"] = (input) =>
      Effect.gen(function*() {
        const ref = yield* validRef(input)
        const rows = yield* sql<{ readonly bytes: unknown }>`SELECT bytes FROM ratchet_blobs WHERE digest = ${ref}`.pipe(
          Effect.mapError((error) => dialect.classify("blob.get", error))
        )
        const row = rows[0]
        if (row === undefined) return yield* new BlobStore.BlobNotFound({ ref })
        const bytes = toBytes(row.bytes)
        if (bytes === null || refOf(bytes) !== ref) {
          return yield* StorageError.make(
            "blob.get",
            StorageError.Corrupt.make({ code: null, detail: `blob ${ref} in ratchet_blobs no longer matches its hash` })
          )
        }
        return bytes
      })

    const has: BlobStore.Service["has"] = (input) =>
      Effect.gen(function*() {
        const ref = yield* validRef(input)
        const rows = yield* sql`SELECT 1 AS found FROM ratchet_blobs WHERE digest = ${ref}`.pipe(
          Effect.mapError((error) => dialect.classify("blob.has", error))
        )
        return rows.length > 0
      })

    return { put, get, has }
  }
)

/**
 * `BlobStore` in the database of the context's `SqlClient`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<BlobStore.BlobStore, never, SqlClient.SqlClient | SqlDialect.SqlDialect> = Layer
  .effect(BlobStore.BlobStore, make)
