/**
 * The store mark against a real SQLite store in a temporary home: appends move the mark (forward
 * only), the guard refuses a store that lost the marked event, one where another event holds its
 * LSN, and a missing or empty database file (before opening it, so it is not created); forgetting
 * the mark lets the store be used as it is. The end-to-end cases (a real SIGKILL, then the WAL
 * deleted, truncated or damaged) are in the CLI's crash matrix.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@ratchet/storage/EventStore"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Events from "@ratchet/testkit/Events"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as StoreMark from "../src/StoreMark.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-store-mark-")

const projectId = "prj-1"

let operations = 0

/** One append creating `taskId`, through the guarded store. */
const createTask = (taskId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    store.append({
      projectId,
      streamId: taskId,
      expectedVersion: 0,
      epoch: null,
      operationId: `op-${++operations}`,
      events: [Events.taskCreated({ taskId, projectId })]
    }))

/** A home with its store, and a checkout directory with its mark file. */
const world = () => {
  const home = temp()
  const localDir = temp()
  const location = StoreMark.locationOf(home, {})
  const guarded = () => StoreMark.guard(SqliteStore.layer({ directory: home }), { localDir, location })
  return { home, localDir, location, file: StoreMark.fileOf(localDir), guarded }
}

const failureOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left : null))

describe("StoreMark", () => {
  it.effect("every append moves the mark, and never backwards", () =>
    Effect.gen(function*() {
      const w = world()
      expect(StoreMark.read(w.file)).toEqual({})
      const first = yield* createTask("t-1").pipe(Effect.provide(w.guarded()))
      const second = yield* createTask("t-2").pipe(Effect.provide(w.guarded()))
      const mark = StoreMark.read(w.file)[w.location.key]
      expect(mark).toMatchObject({ streamId: "t-2", branch: "main", lsn: second.lastLsn })
      expect(second.lastLsn).toBeGreaterThan(first.lastLsn)
      // An older mark from another process of the checkout does not replace a later one.
      StoreMark.record(w.file, w.location.key, { ...mark!, lsn: first.lastLsn, streamId: "t-1" })
      expect(StoreMark.read(w.file)[w.location.key]?.lsn).toBe(second.lastLsn)
    }))

  it.effect("a store that lost the marked event is refused as behind; forgetting the mark accepts it", () =>
    Effect.gen(function*() {
      const w = world()
      yield* createTask("t-1").pipe(Effect.provide(w.guarded()))
      yield* createTask("t-2").pipe(Effect.provide(w.guarded()))
      // The store goes back to before t-2 (an older copy holding only t-1), written unguarded.
      for (const name of fs.readdirSync(w.home)) fs.rmSync(path.join(w.home, name), { recursive: true, force: true })
      yield* createTask("t-1").pipe(Effect.provide(SqliteStore.layer({ directory: w.home })))
      const refused = yield* failureOf(Effect.provide(Effect.void, w.guarded()))
      expect(refused).toBeInstanceOf(StoreMark.StoreBehind)
      expect(refused).toMatchObject({ reason: "behind", mark: { streamId: "t-2" }, foundLsn: null })
      expect((refused as StoreMark.StoreBehind).message).toContain("lost committed events")
      expect((refused as StoreMark.StoreBehind).fix).toContain("ratchet init --force")
      expect(StoreMark.forget(w.file, w.location.key)).toMatchObject({ streamId: "t-2" })
      expect(yield* failureOf(Effect.provide(Effect.void, w.guarded()))).toBeNull()
    }))

  it.effect("another event at the marked LSN is a replaced store", () =>
    Effect.gen(function*() {
      const w = world()
      yield* createTask("t-1").pipe(Effect.provide(w.guarded()))
      const mark = StoreMark.read(w.file)[w.location.key]!
      StoreMark.forget(w.file, w.location.key)
      StoreMark.record(w.file, w.location.key, { ...mark, operationId: "op-from-another-store" })
      const refused = yield* failureOf(Effect.provide(Effect.void, w.guarded()))
      expect(refused).toMatchObject({ _tag: "@ratchet/controller/StoreBehind", reason: "replaced" })
    }))

  it.effect("a missing or empty database is refused before it is opened, and is not created", () =>
    Effect.gen(function*() {
      const w = world()
      yield* createTask("t-1").pipe(Effect.provide(w.guarded()))
      const db = path.join(w.home, "ratchet.db")
      for (const name of fs.readdirSync(w.home)) fs.rmSync(path.join(w.home, name), { recursive: true, force: true })
      const missing = yield* failureOf(Effect.provide(Effect.void, w.guarded()))
      expect(missing).toMatchObject({ _tag: "@ratchet/controller/StoreBehind", reason: "missing" })
      expect(fs.existsSync(db)).toBe(false)
      fs.writeFileSync(db, "")
      const empty = yield* failureOf(Effect.provide(Effect.void, w.guarded()))
      expect(empty).toMatchObject({ reason: "missing" })
      expect(fs.statSync(db).size).toBe(0)
    }))

  it.effect("without a checkout directory, or without a mark, the store is used as it is", () =>
    Effect.gen(function*() {
      const w = world()
      const plain = StoreMark.guard(SqliteStore.layer({ directory: w.home }), { localDir: undefined, location: w.location })
      yield* createTask("t-1").pipe(Effect.provide(plain))
      expect(fs.existsSync(w.file)).toBe(false)
      // A damaged mark file reads as no mark; the next append replaces it.
      fs.writeFileSync(w.file, "{ not json")
      expect(StoreMark.read(w.file)).toEqual({})
      yield* createTask("t-2").pipe(Effect.provide(w.guarded()))
      expect(StoreMark.read(w.file)[w.location.key]).toMatchObject({ streamId: "t-2" })
    }))

  it("names a PostgreSQL store by host, database and schema, never its credentials", () => {
    const location = StoreMark.locationOf("/home", {
      RATCHET_DATABASE_URL: "postgres://alice:secret@db.example:5433/ratchet",
      RATCHET_DATABASE_SCHEMA: "team"
    })
    expect(location).toEqual({ key: "postgres://db.example:5433/ratchet#team", file: null })
    expect(location.key).not.toContain("secret")
    expect(StoreMark.locationOf("/home/me/.ratchet", {})).toEqual({ key: "/home/me/.ratchet/ratchet.db", file: "/home/me/.ratchet/ratchet.db" })
  })
})
