/**
 * Lessons in a SQLite store (ADR 0033): a store at the previous schema (version 5, before the
 * lesson tables) opens migrated with every row it held, and its lessons then persist across a
 * reopening, searched through FTS5.
 */
import { describe, expect, it } from "@effect/vitest"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LessonStore from "@ratchet/storage/LessonStore"
import * as Migrations from "@ratchet/storage/Migrations"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Events from "@ratchet/testkit/Events"
import * as Lessons from "@ratchet/testkit/Lessons"
import Database from "better-sqlite3"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as SqliteStore from "../src/SqliteStore.js"

const roots: Array<string> = []
const tempHome = (): string => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-sqlite-lessons-"))
  roots.push(directory)
  return directory
}
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true })
})

const lessonTables = ["ratchet_lessons_fts", "ratchet_lesson_fingerprints", "ratchet_lessons", "ratchet_lesson_operations", "ratchet_lesson_events"]

describe("lessons in the SQLite store", () => {
  it.effect("migrates a version-5 store to the lesson tables and keeps every row it held", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      const task = { projectId: "p-1", streamId: "t-1" }
      const events = [Events.taskCreated({ taskId: "t-1", projectId: "p-1" }), Events.interviewBegun()]
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        yield* store.append({ ...task, expectedVersion: 0, epoch: null, operationId: "op-1", events })
      }).pipe(Effect.provide(SqliteStore.layer({ directory }))))
      // What version 5 looked like: none of migration 6's tables.
      const db = new Database(path.join(directory, "ratchet.db"))
      for (const table of lessonTables) db.exec(`DROP TABLE ${table}`)
      db.prepare("UPDATE ratchet_schema SET version = 5").run()
      const before = db.prepare("SELECT lsn, stream_id, payload FROM ratchet_events ORDER BY lsn").all()
      db.close()

      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        const read = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: "t-1" })))
        expect(read.map((stored) => stored.event)).toEqual(events)
        const models = yield* ReadModel.ReadModels
        const { summary } = yield* models.snapshot("t-1")
        expect(summary?.version).toBe(2)
        const lessons = yield* LessonStore.LessonStore
        expect(yield* lessons.list({})).toEqual([])
        const body = Lessons.body("p-1")
        yield* lessons.append({ projectId: "p-1", lessonId: "L-1", expectedVersion: 0, operationId: "op-l", events: [Lessons.proposed("L-1", body)] })
      }).pipe(Effect.provide(SqliteStore.layer({ directory }))))

      const after = new Database(path.join(directory, "ratchet.db"), { readonly: true })
      expect(after.prepare("SELECT lsn, stream_id, payload FROM ratchet_events ORDER BY lsn").all()).toEqual(before)
      expect(after.prepare("SELECT version FROM ratchet_schema").get()).toEqual({ version: Migrations.latestVersion })
      expect(after.prepare("SELECT lesson_id, status FROM ratchet_lessons").all()).toEqual([{ lesson_id: "L-1", status: "candidate" }])
      expect(after.prepare("SELECT lesson_id FROM ratchet_lessons_fts WHERE ratchet_lessons_fts MATCH 'header'").all()).toEqual([
        { lesson_id: "L-1" }
      ])
      after.close()
    }))

  it.effect("a lesson persists across reopening the store, with its read model and its search entry", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      const fp = Lessons.fingerprint("test", 1, "expected 2 rows, got 3")
      const history = Lessons.history("L-2", Lessons.body("p-2"), [
        Lessons.failure("p-2", "run-1", fp, Lessons.T0 + 1),
        Lessons.failure("p-2", "run-2", fp, Lessons.T0 + 2)
      ])
      yield* Effect.scoped(Effect.gen(function*() {
        const lessons = yield* LessonStore.LessonStore
        yield* lessons.append({ projectId: "p-2", lessonId: "L-2", expectedVersion: 0, operationId: "op-1", events: history })
      }).pipe(Effect.provide(SqliteStore.layer({ directory }))))
      yield* Effect.scoped(Effect.gen(function*() {
        const lessons = yield* LessonStore.LessonStore
        expect((yield* lessons.read("L-2")).map((stored) => stored.event)).toEqual(history)
        expect((yield* lessons.get("L-2"))?.status).toBe("verified")
        const hits = yield* lessons.search({ projectId: "p-2", statuses: ["verified"], fingerprints: [], text: "the header row" })
        expect(hits.map((hit) => hit.lesson.id)).toEqual(["L-2"])
        expect(hits[0]!.rank).toBeGreaterThan(0)
      }).pipe(Effect.provide(SqliteStore.layer({ directory }))))
    }))

  it.effect("a damaged read model or event is a Corrupt storage error naming the lesson, never a crash", () =>
    Effect.gen(function*() {
      const directory = tempHome()
      const open = SqliteStore.layer({ directory })
      yield* Effect.scoped(Effect.gen(function*() {
        const lessons = yield* LessonStore.LessonStore
        yield* lessons.append({ projectId: "p-3", lessonId: "L-3", expectedVersion: 0, operationId: "op-1", events: [Lessons.proposed("L-3", Lessons.body("p-3"))] })
      }).pipe(Effect.provide(open)))
      const db = new Database(path.join(directory, "ratchet.db"))
      db.prepare(`UPDATE ratchet_lessons SET view = '{"_tag":"Lesson","status":"verified"}'`).run()
      db.prepare(`UPDATE ratchet_lesson_events SET payload = '{"_tag":"LessonPromoted","version":1}'`).run()
      db.close()
      yield* Effect.scoped(Effect.gen(function*() {
        const lessons = yield* LessonStore.LessonStore
        const row = yield* Effect.flip(lessons.get("L-3"))
        expect(row).toMatchObject({ _tag: "@ratchet/storage/StorageError", reason: { _tag: "Corrupt" } })
        expect(row.message).toContain("lesson L-3")
        const events = yield* Effect.flip(lessons.read("L-3"))
        expect(events).toMatchObject({ reason: { _tag: "Corrupt" } })
        expect(events.message).toContain("lesson L-3")
        // An append decides against the read model, so it cannot land on a damaged one either.
        const append = yield* Effect.flip(lessons.append({
          projectId: "p-3",
          lessonId: "L-3",
          expectedVersion: 1,
          operationId: "op-2",
          events: [Lessons.failureObserved("L-3", Lessons.failure("p-3", "r", Lessons.fingerprint("test", 1, "expected 2 rows, got 3"), Lessons.T0 + 1))]
        }))
        expect(append).toMatchObject({ reason: { _tag: "Corrupt" } })
      }).pipe(Effect.provide(open)))
    }))
})
