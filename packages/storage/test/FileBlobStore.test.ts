/**
 * The file blob store on a temporary directory: round trip, deduplication, the on-disk layout and
 * permissions, hash verification of tampered files, hostile references that must never reach the
 * file system, missing blobs, and the errno → reason mapping.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as BlobStore from "../src/BlobStore.js"
import * as FileBlobStore from "../src/FileBlobStore.js"
import type * as StorageError from "../src/StorageError.js"

const roots: Array<string> = []
const tempRoot = (): string => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-blobs-"))
  roots.push(directory)
  return path.join(directory, "nested", "blobs")
}
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true })
})

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
// SHA-256 of "hello", computed independently of the store.
const helloRef = "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

const fileOf = (root: string, ref: string): string => path.join(root, ref.slice(7, 9), ref.slice(9))
const modeOf = (file: string): number => fs.statSync(file).mode & 0o777

const withStore = <A, E>(root: string, use: (store: BlobStore.Service) => Effect.Effect<A, E>) =>
  Effect.flatMap(FileBlobStore.make(root), use)

describe("FileBlobStore", () => {
  it.effect("stores bytes under their SHA-256 and reads them back", () => {
    const root = tempRoot()
    return withStore(root, (store) =>
      Effect.gen(function*() {
        const ref = yield* store.put(bytes("hello"))
        expect(ref).toBe(helloRef)
        expect(yield* store.get(ref)).toEqual(bytes("hello"))
        expect(yield* store.has(ref)).toBe(true)
        expect(fs.readFileSync(fileOf(root, ref), "utf8")).toBe("hello")
        const empty = yield* store.put(new Uint8Array())
        expect(empty).toBe(`sha256:${createHash("sha256").update("").digest("hex")}`)
        expect(yield* store.get(empty)).toEqual(new Uint8Array())
        const binary = Uint8Array.from({ length: 70_000 }, (_, index) => (index * 7) % 256)
        expect(yield* store.get(yield* store.put(binary))).toEqual(binary)
      }))
  })

  it.effect("deduplicates: a second put of the same bytes writes nothing and returns the same ref", () => {
    const root = tempRoot()
    return withStore(root, (store) =>
      Effect.gen(function*() {
        const first = yield* store.put(bytes("same"))
        const before = fs.statSync(fileOf(root, first))
        const second = yield* store.put(bytes("same"))
        expect(second).toBe(first)
        expect(fs.statSync(fileOf(root, first)).ino).toBe(before.ino)
        expect(fs.readdirSync(path.join(root, first.slice(7, 9)))).toEqual([first.slice(9)])
      }))
  })

  it.effect("creates directories 0700 and files 0600, leaving no temp files", () => {
    const root = tempRoot()
    return withStore(root, (store) =>
      Effect.gen(function*() {
        const ref = yield* store.put(bytes("secret prompt"))
        expect(modeOf(root)).toBe(0o700)
        expect(modeOf(path.dirname(fileOf(root, ref)))).toBe(0o700)
        expect(modeOf(fileOf(root, ref))).toBe(0o600)
        expect(fs.readdirSync(path.dirname(fileOf(root, ref))).filter((name) => name.startsWith("."))).toEqual([])
      }))
  })

  it.effect("refuses a tampered file as Corrupt, and never returns its bytes", () => {
    const root = tempRoot()
    return withStore(root, (store) =>
      Effect.gen(function*() {
        const ref = yield* store.put(bytes("hello"))
        fs.chmodSync(fileOf(root, ref), 0o600)
        fs.writeFileSync(fileOf(root, ref), "hellO")
        const error = yield* Effect.flip(store.get(ref))
        expect(error._tag).toBe("@ratchet/storage/StorageError")
        const storageError = error as StorageError.StorageError
        expect(storageError.reason._tag).toBe("Corrupt")
        expect(storageError.message).toContain(ref)
        expect(storageError.isRetryable).toBe(false)
      }))
  })

  it.effect("refuses hostile references before touching the file system", () => {
    const root = tempRoot()
    const hex = helloRef.slice(7)
    const hostile: ReadonlyArray<string> = [
      "",
      "../x",
      "sha256:../../etc/passwd",
      `sha256:${hex.toUpperCase()}`,
      `SHA256:${hex}`,
      `sha256:${hex.slice(1)}`,
      `sha256:${hex}0`,
      `sha256:${hex}/`,
      `sha256:${hex}\n`,
      `sha256:${hex.slice(0, 2)}/${hex.slice(2, 63)}`,
      `/etc/passwd`,
      path.join(root, hex.slice(0, 2), hex.slice(2)),
      `sha1:${hex.slice(0, 40)}`,
      hex,
      `sha256:${"g".repeat(64)}`,
      `sha256:${hex}\u0000`,
      "sha256:" + "a".repeat(10 * 1024 * 1024)
    ]
    return withStore(root, (store) =>
      Effect.gen(function*() {
        yield* store.put(bytes("hello"))
        for (const ref of hostile) {
          const attempts: ReadonlyArray<Effect.Effect<unknown, BlobStore.BlobNotFound | BlobStore.InvalidBlobRef | StorageError.StorageError>> = [
            store.get(ref),
            store.has(ref)
          ]
          for (const attempt of attempts) {
            const error = yield* Effect.flip(attempt)
            expect(error._tag).toBe("@ratchet/storage/InvalidBlobRef")
            expect(error.message.length).toBeLessThan(200)
            expect((error as BlobStore.InvalidBlobRef).ref.length).toBeLessThanOrEqual(257)
          }
        }
      }))
  })

  it.effect("reports a missing blob as BlobNotFound, and has() as false", () => {
    const root = tempRoot()
    const absent = `sha256:${"0".repeat(64)}`
    return withStore(root, (store) =>
      Effect.gen(function*() {
        expect(yield* Effect.flip(store.get(absent))).toEqual(new BlobStore.BlobNotFound({ ref: absent }))
        expect(yield* store.has(absent)).toBe(false)
      }))
  })

  it.effect("reuses an existing root and reads what another instance wrote", () => {
    const root = tempRoot()
    return Effect.gen(function*() {
      const ref = yield* withStore(root, (store) => store.put(bytes("shared")))
      expect(yield* withStore(root, (store) => store.get(ref))).toEqual(bytes("shared"))
    })
  })

  it.effect("fails with ReadOnly when the root cannot be written", () => {
    const root = tempRoot()
    fs.mkdirSync(root, { recursive: true, mode: 0o700 })
    fs.chmodSync(root, 0o500)
    const restore = Effect.sync(() => fs.chmodSync(root, 0o700))
    return Effect.gen(function*() {
      // Root ignores permission bits; the mapping is still checked below from fake errors.
      if (process.getuid?.() === 0) return
      const error = yield* Effect.flip(withStore(root, (store) => store.put(bytes("nope"))))
      expect(error.reason._tag).toBe("ReadOnly")
      expect(error.reason.code).toBe("EACCES")
    }).pipe(Effect.ensuring(restore))
  })
})

describe("FileBlobStore.classify", () => {
  // Written by hand: errno → the reason a person acts on.
  const table: ReadonlyArray<readonly [string | undefined, string]> = [
    ["ENOSPC", "Full"],
    ["EDQUOT", "Full"],
    ["EACCES", "ReadOnly"],
    ["EROFS", "ReadOnly"],
    ["EPERM", "ReadOnly"],
    ["EIO", "Unknown"],
    ["ENOENT", "Unknown"],
    [undefined, "Unknown"]
  ]

  it("maps errno codes to reasons and keeps the code and message", () => {
    for (const [code, reason] of table) {
      const cause = Object.assign(new Error(`failed with ${code ?? "nothing"}`), code === undefined ? {} : { code })
      const error = FileBlobStore.classify("blob.put", cause)
      expect([error.reason._tag, error.reason.code, error.operation, error.reason.detail]).toEqual([
        reason,
        code ?? null,
        "blob.put",
        `failed with ${code ?? "nothing"}`
      ])
    }
    expect(FileBlobStore.classify("blob.get", "text").reason).toEqual({ _tag: "Unknown", code: null, detail: "text" })
  })
})
