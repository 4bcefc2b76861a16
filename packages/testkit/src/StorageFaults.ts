/**
 * Faults the conformance suite cannot cause through the storage port, so a backend provides them.
 *
 * The blob store promises that `get` verifies the bytes it returns against their reference. The
 * only way to prove it is to damage stored bytes behind the store's back, which depends on where
 * the engine keeps them: files under a directory, a table row. A backend therefore merges a
 * `StorageFaults` service into the layer it gives the suite:
 *
 * ```ts
 * () => { const directory = fresh(); return Layer.merge(MyStore.layer({ directory }), StorageFaults.fileBlobs(directory)) }
 * ```
 *
 * {@link fileBlobs} covers any store that keeps each blob in a file whose path ends with the
 * blob's hex digest (however it shards directories); other stores write their own `corruptBlob`.
 *
 * @since 0.1.0
 */
import { readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Changes the stored bytes of `ref` (same length or not) without going through the store. */
  readonly corruptBlob: (ref: string) => Effect.Effect<void, unknown>
}

/**
 * @since 0.1.0
 * @category services
 */
export class StorageFaults extends Context.Tag("@ratchet/testkit/StorageFaults")<StorageFaults, Service>() {}

const findBlobFile = async (directory: string, hex: string): Promise<string | undefined> => {
  const entries = await readdir(directory, { withFileTypes: true, recursive: true })
  for (const entry of entries) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    if (path.replace(/[/\\]/g, "").endsWith(hex)) return path
  }
  return undefined
}

/**
 * Corrupts file-backed blobs: finds the file under `directory` whose path, without separators,
 * ends with the reference's hex digest, and flips the bits of its first byte (or writes one byte
 * into an empty file).
 *
 * @since 0.1.0
 * @category layers
 */
export const fileBlobs = (directory: string): Layer.Layer<StorageFaults> =>
  Layer.succeed(StorageFaults, {
    corruptBlob: (ref) =>
      Effect.tryPromise(async () => {
        const hex = ref.replace(/^sha256:/, "")
        const path = await findBlobFile(directory, hex)
        if (path === undefined) throw new Error(`no file under ${directory} ends with ${hex}`)
        const bytes = await readFile(path)
        const damaged = bytes.length === 0 ? Buffer.from([0x2a]) : Buffer.from(bytes)
        if (bytes.length > 0) damaged[0] = (damaged[0] ?? 0) ^ 0xff
        await writeFile(path, damaged)
      })
  })
