/**
 * Packaging smoke test for `@ratchet/storage-sqlite`. `tools/pack-check.mjs` runs it inside an
 * empty project that installed the packed tarball (with `@ratchet/storage`'s and
 * `@ratchet/kernel`'s beside it, `@effect/sql-sqlite-node` and `better-sqlite3` from the registry,
 * and the `effect` peers), so it sees exactly what a user sees: the entry point resolves to the
 * built `dist/`, the native driver loads, and a store opened in a temporary directory migrates,
 * takes an append, folds it into the read models and keeps a blob by its digest.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Event } from "@ratchet/kernel"
import { BlobStore, EventStore, ReadModel } from "@ratchet/storage"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Effect from "effect/Effect"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/storage-sqlite smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/storage-sqlite")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const directory = mkdtempSync(join(tmpdir(), "ratchet-sqlite-smoke-"))
const actor = { kind: "user", id: "smoke" }
const result = await Effect.runPromise(
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const appended = yield* store.append({
      projectId: "p",
      streamId: "t",
      expectedVersion: 0,
      epoch: null,
      operationId: "op-1",
      events: [Event.make({ _tag: "TaskCreated", actor, at: 1, taskId: "t", projectId: "p", goal: "smoke", slug: "smoke" })]
    })
    const summary = yield* (yield* ReadModel.ReadModels).taskSummary("t")
    const blobs = yield* BlobStore.BlobStore
    const ref = yield* blobs.put(Buffer.from("smoke"))
    const back = Buffer.from(yield* blobs.get(ref)).toString("utf8")
    return { appended, summary, ref, back }
  }).pipe(Effect.provide(SqliteStore.layer({ directory })), Effect.ensuring(Effect.sync(() => rmSync(directory, { recursive: true, force: true }))))
)
if (result.appended.version !== 1 || result.appended.replayed) {
  fail(`the first append should create the stream at version 1, got ${JSON.stringify(result.appended)}`)
}
if (result.summary?.task.state !== "INITIALIZING" || result.summary.version !== 1) {
  fail(`the read model should hold an INITIALIZING task at version 1, got ${JSON.stringify(result.summary)}`)
}
if (!result.ref.startsWith("sha256:") || result.back !== "smoke") {
  fail(`the blob should come back by its sha256 digest, got ${result.ref} holding ${JSON.stringify(result.back)}`)
}
console.log(`a store in a temporary directory took TaskCreated at version 1 (INITIALIZING) and kept a blob as ${result.ref.slice(0, 15)}…`)
