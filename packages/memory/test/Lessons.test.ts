/**
 * The lessons service over the SQLite store (a fresh directory, removed after the file) and over
 * the in-memory lesson store.
 */
import { MemoryLessonStore } from "@ratchet/storage"
import { SqliteStore } from "@ratchet/storage-sqlite"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { suite } from "./suite.js"

const directories: Array<string> = []
afterAll(() => directories.forEach((directory) => rmSync(directory, { recursive: true, force: true })))

suite("Lessons over SQLite", () => {
  const directory = mkdtempSync(join(tmpdir(), "ratchet-memory-"))
  directories.push(directory)
  return SqliteStore.layer({ directory })
})

suite("Lessons over the in-memory lesson store", () => MemoryLessonStore.layer)
