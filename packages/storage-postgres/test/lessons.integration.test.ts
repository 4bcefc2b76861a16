/**
 * Lessons in a PostgreSQL store (ADR 0033), against the test server: a store at the previous
 * schema (version 5, before the lesson tables) opens migrated with every row it held, and its
 * lessons are searched through the generated `tsvector` column and its GIN index.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { expect, it } from "@effect/vitest"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LessonStore from "@ratchet/storage/LessonStore"
import * as Migrations from "@ratchet/storage/Migrations"
import * as Events from "@ratchet/testkit/Events"
import * as Lessons from "@ratchet/testkit/Lessons"
import { describePostgres, testUrl } from "@ratchet/testkit/Postgres"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { PostgresStore } from "../src/index.js"
import { schemasDroppedAfterAll } from "./schemas.js"

const url = testUrl()
const freshSchema = schemasDroppedAfterAll()
const storeIn = (schema: string) => PostgresStore.layer({ url: Redacted.make(url), schema, maxConnections: 4 })

const withAdmin = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))

const lessonTables = ["ratchet_lesson_fingerprints", "ratchet_lessons", "ratchet_lesson_operations", "ratchet_lesson_events"]

await describePostgres("lessons in the PostgreSQL store", () => {
  it.effect("migrates a version-5 store to the lesson tables and keeps every row it held", () =>
    Effect.gen(function*() {
      const schema = freshSchema()
      const events = [Events.taskCreated({ taskId: "t-1", projectId: "p-1" }), Events.interviewBegun()]
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        yield* store.append({ projectId: "p-1", streamId: "t-1", expectedVersion: 0, epoch: null, operationId: "op-1", events })
      }).pipe(Effect.provide(storeIn(schema))))
      const before = yield* withAdmin((admin) =>
        Effect.gen(function*() {
          for (const table of lessonTables) yield* admin`DROP TABLE ${admin(schema)}.${admin(table)}`
          yield* admin`UPDATE ${admin(schema)}.ratchet_schema SET version = 5`
          return yield* admin`SELECT lsn, stream_id, payload FROM ${admin(schema)}.ratchet_events ORDER BY lsn`
        })
      )
      yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        const read = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: "t-1" })))
        expect(read.map((stored) => stored.event)).toEqual(events)
        const lessons = yield* LessonStore.LessonStore
        expect(yield* lessons.list({})).toEqual([])
        yield* lessons.append({ projectId: "p-1", lessonId: "L-1", expectedVersion: 0, operationId: "op-l", events: [Lessons.proposed("L-1", Lessons.body("p-1"))] })
      }).pipe(Effect.provide(storeIn(schema))))
      const after = yield* withAdmin((admin) =>
        Effect.all({
          events: admin`SELECT lsn, stream_id, payload FROM ${admin(schema)}.ratchet_events ORDER BY lsn`,
          version: admin<{ readonly version: number }>`SELECT version FROM ${admin(schema)}.ratchet_schema`,
          lessons: admin`SELECT lesson_id, status FROM ${admin(schema)}.ratchet_lessons`,
          searched: admin`SELECT lesson_id FROM ${admin(schema)}.ratchet_lessons WHERE search @@ to_tsquery('english', 'header')`,
          index: admin`SELECT indexdef FROM pg_indexes WHERE schemaname = ${schema} AND indexname = 'ratchet_lessons_search'`
        })
      )
      expect(after.events).toEqual(before)
      expect(Number(after.version[0]?.version)).toBe(Migrations.latestVersion)
      expect(after.lessons).toEqual([{ lesson_id: "L-1", status: "candidate" }])
      expect(after.searched).toEqual([{ lesson_id: "L-1" }])
      expect(String(after.index[0]?.["indexdef"])).toContain("USING gin (search)")
    }))

  it.effect("a verified lesson is found by its words, and a candidate is not", () =>
    Effect.gen(function*() {
      const schema = freshSchema()
      const fp = Lessons.fingerprint("test", 1, "expected 2 rows, got 3")
      const verified = Lessons.history("L-2", Lessons.body("p-2"), [
        Lessons.failure("p-2", "run-1", fp, Lessons.T0 + 1),
        Lessons.failure("p-2", "run-2", fp, Lessons.T0 + 2)
      ])
      yield* Effect.scoped(Effect.gen(function*() {
        const lessons = yield* LessonStore.LessonStore
        yield* lessons.append({ projectId: "p-2", lessonId: "L-2", expectedVersion: 0, operationId: "op-1", events: verified })
        yield* lessons.append({ projectId: "p-2", lessonId: "L-3", expectedVersion: 0, operationId: "op-2", events: [Lessons.proposed("L-3", Lessons.body("p-2"))] })
        const hits = yield* lessons.search({ projectId: "p-2", statuses: ["verified"], fingerprints: [], text: "the header rows" })
        expect(hits.map((hit) => hit.lesson.id)).toEqual(["L-2"])
        expect(hits[0]!.rank).toBeGreaterThan(0)
      }).pipe(Effect.provide(storeIn(schema))))
    }))
})
