/**
 * The blob store as files: `<root>/<first two hex digits>/<remaining 62>` for each
 * `sha256:<64 hex>` reference, the layout the SQLite default keeps under `$RATCHET_HOME/blobs/`.
 *
 * - `put` is atomic and deduplicating: bytes are written to a temp file in the shard directory
 *   (created `0600`, exclusively), fsynced, renamed over the final name, and the directory is
 *   fsynced so the rename survives a crash; a blob already present is not written again. A crash
 *   at any point leaves either no blob or the whole blob, never a partial one under its name.
 * - `get` re-hashes what it reads: bytes that no longer match their reference are a `Corrupt`
 *   storage error, never returned.
 * - A reference is checked against `sha256:` + 64 lowercase hex digits before it touches the file
 *   system, so no reference can name a path outside the root (`..`, `/`, separators, uppercase
 *   aliases and oversized strings are all `InvalidBlobRef`).
 * - Directories are created `0700` and files `0600`: blobs hold prompts and command output.
 *
 * File-system errors map to `StorageError` reasons: ENOSPC/EDQUOT → Full, EACCES/EROFS/EPERM →
 * ReadOnly, anything else → Unknown.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash, randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as BlobStore from "./BlobStore.js"
import * as StorageError from "./StorageError.js"

const refPattern = /^sha256:[0-9a-f]{64}$/

/** The longest reference quoted back in an `InvalidBlobRef`; hostile input is cut, not echoed. */
const shownRefLength = 256

const errnoOf = (cause: unknown): string | null => {
  if (typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string") {
    return cause.code
  }
  return null
}

/**
 * Maps a file-system failure to the port's error.
 *
 * @since 0.1.0
 * @category errors
 */
export const classify = (operation: string, cause: unknown): StorageError.StorageError => {
  const code = errnoOf(cause)
  const detail = cause instanceof Error ? cause.message : String(cause)
  switch (code) {
    case "ENOSPC":
    case "EDQUOT":
      return StorageError.make(operation, StorageError.Full.make({ code, detail }), cause)
    case "EACCES":
    case "EROFS":
    case "EPERM":
      return StorageError.make(operation, StorageError.ReadOnly.make({ code, detail }), cause)
    default:
      return StorageError.make(operation, StorageError.Unknown.make({ code, detail }), cause)
  }
}

const attempt = <A>(operation: string, run: () => Promise<A>): Effect.Effect<A, StorageError.StorageError> =>
  Effect.tryPromise({ try: run, catch: (cause) => classify(operation, cause) })

const hexOf = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

const syncDirectory = async (directory: string): Promise<void> => {
  const handle = await fs.open(directory, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

const exists = async (file: string): Promise<boolean> => {
  try {
    await fs.stat(file)
    return true
  } catch (cause) {
    if (errnoOf(cause) === "ENOENT") return false
    throw cause
  }
}

/**
 * A blob store rooted at `directory`, which is created (`0700`) when missing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (directory: string): Effect.Effect<BlobStore.Service, StorageError.StorageError> =>
  Effect.gen(function*() {
    const root = path.resolve(directory)
    yield* attempt("blob.open", () => fs.mkdir(root, { recursive: true, mode: 0o700 }))

    const locate = (ref: unknown): Effect.Effect<{ readonly ref: string; readonly file: string }, BlobStore.InvalidBlobRef> => {
      if (typeof ref !== "string" || !refPattern.test(ref)) {
        const text = typeof ref === "string" ? ref : String(ref)
        return Effect.fail(
          new BlobStore.InvalidBlobRef({
            ref: text.length > shownRefLength ? `${text.slice(0, shownRefLength)}…` : text
          })
        )
      }
      const hex = ref.slice("sha256:".length)
      return Effect.succeed({ ref, file: path.join(root, hex.slice(0, 2), hex.slice(2)) })
    }

    const write = async (hex: string, bytes: Uint8Array): Promise<void> => {
      const shard = path.join(root, hex.slice(0, 2))
      const file = path.join(shard, hex.slice(2))
      if (await exists(file)) return
      const created = await fs.mkdir(shard, { recursive: true, mode: 0o700 })
      const temp = path.join(shard, `.tmp-${randomUUID()}`)
      let renamed = false
      try {
        const handle = await fs.open(temp, "wx", 0o600)
        try {
          await handle.writeFile(bytes)
          await handle.sync()
        } finally {
          await handle.close()
        }
        await fs.rename(temp, file)
        renamed = true
        await syncDirectory(shard)
        if (created !== undefined) await syncDirectory(root)
      } finally {
        if (!renamed) await fs.rm(temp, { force: true }).catch(() => undefined)
      }
    }

    const put: BlobStore.Service["put"] = (bytes) =>
      Effect.suspend(() => {
        const hex = hexOf(bytes)
        return Effect.as(attempt("blob.put", () => write(hex, bytes)), BlobStore.BlobRef.make(`sha256:${hex}`))
      })

    const get: BlobStore.Service["get"] = (input) =>
      Effect.gen(function*() {
        const { file, ref } = yield* locate(input)
        const read = yield* Effect.tryPromise({
          try: () => fs.readFile(file),
          catch: (cause) => errnoOf(cause) === "ENOENT" ? new BlobStore.BlobNotFound({ ref }) : classify("blob.get", cause)
        })
        const bytes = new Uint8Array(read.buffer, read.byteOffset, read.byteLength)
        if (`sha256:${hexOf(bytes)}` !== ref) {
          return yield* StorageError.make(
            "blob.get",
            StorageError.Corrupt.make({
              code: null,
              detail: `blob ${ref} (file ${path.relative(root, file)} under ${root}) no longer matches its hash`
            })
          )
        }
        return bytes
      })

    const has: BlobStore.Service["has"] = (input) =>
      Effect.flatMap(locate(input), ({ file }) => attempt("blob.has", () => exists(file)))

    return { put, get, has }
  })

/**
 * `BlobStore` as files under `directory`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (directory: string): Layer.Layer<BlobStore.BlobStore, StorageError.StorageError> =>
  Layer.effect(BlobStore.BlobStore, make(directory))
