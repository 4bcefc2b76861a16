/**
 * The storage conformance suite against the SQLite store: each group of checks gets a fresh
 * directory (with blob corruption through the files), and each multi-process check a fresh
 * directory that the child processes (test/child.ts) open too. The directories are removed after
 * the file.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqliteStore } from "@ratchet/storage-sqlite"
import { StorageFaults } from "@ratchet/testkit"
import { StorageConformance } from "@ratchet/testkit/vitest"
import { afterAll } from "@effect/vitest"
import * as Layer from "effect/Layer"

const directories: Array<string> = []
const fresh = () => {
  const directory = mkdtempSync(join(tmpdir(), "ratchet-sqlite-conformance-"))
  directories.push(directory)
  return directory
}
afterAll(() => directories.forEach((directory) => rmSync(directory, { recursive: true, force: true })))

StorageConformance.suite("@ratchet/storage-sqlite", () => {
  const directory = fresh()
  return Layer.merge(SqliteStore.layer({ directory }), StorageFaults.fileBlobs(directory))
}, {
  processes: {
    share: () => {
      const directory = fresh()
      return {
        layer: SqliteStore.layer({ directory }),
        child: StorageConformance.tsxChild(new URL("./child.ts", import.meta.url), { RATCHET_CONFORMANCE_DIRECTORY: directory })
      }
    }
  }
})
