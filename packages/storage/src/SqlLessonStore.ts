/**
 * The lesson store (`LessonStore`) over `@effect/sql`, written once for both engines.
 *
 * An append is one write transaction of the engine's dialect (SQLite `BEGIN IMMEDIATE`;
 * PostgreSQL row locks), in this order:
 * 1. the request is validated, its events encoded and the request digested before it starts;
 * 2. a known operation id with the same digest returns the first result and writes nothing; with
 *    another digest it is `OperationReused`;
 * 3. the lesson's read-model row gives the stream's version and project (it is written in the
 *    same transaction as every event, so it is the stream's head): another project is
 *    `InvalidRequest`, another version `VersionConflict`;
 * 4. the events are folded onto the stored view (`LessonRules.evolve`): a stream must begin with a
 *    proposal; then the events, the operation and the read model — the row, its fingerprints and
 *    its full-text entry when the text changed — are written.
 * Two writers that pass step 3 together collide on the events' primary key; the loser's
 * transaction is run again once, and then sees the winner (a conflict or a replay).
 *
 * Full-text search goes through the dialect: SQLite's FTS5 table `ratchet_lessons_fts` (kept by
 * hand, ranked by `bm25`), PostgreSQL's generated `tsvector` column with a GIN index (ranked by
 * `ts_rank`). Only the words of `LessonStore.searchWords` reach either query.
 *
 * @since 0.3.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Lesson from "@ratchet/kernel/Lesson"
import * as LessonEvent from "@ratchet/kernel/LessonEvent"
import * as LessonRules from "@ratchet/kernel/LessonRules"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as EventStore from "./EventStore.js"
import { type Db, rows, run } from "./internal/db.js"
import { byRelevance, checkId, checkLessonId, checkList, folded, type Prepared, prepare, searchText } from "./internal/lessonAppend.js"
import { corrupt, int, type Row } from "./internal/rows.js"
import * as LessonStore from "./LessonStore.js"
import * as SqlDialect from "./SqlDialect.js"
import * as StorageError from "./StorageError.js"

/** A replayed operation id: carried out of the transaction as a failure so that it rolls back. */
class Replayed extends Data.TaggedError("@ratchet/storage/SqlLessonStore/Replayed")<{
  readonly result: LessonStore.AppendResult
}> {}

const encodeView = Schema.encodeSync(LessonRules.View)
const decodeView = Schema.decodeUnknownEither(LessonRules.View)

const lessonOf = (operation: string, row: Row): Effect.Effect<LessonStore.StoredLesson, StorageError.StorageError> => {
  const id = String(row["lesson_id"])
  let parsed: unknown
  try {
    parsed = JSON.parse(String(row["view"]))
  } catch (error) {
    return Effect.fail(corrupt(operation, `the read model of lesson ${id} (ratchet_lessons.view) is not JSON`, error))
  }
  const view = decodeView(parsed)
  const version = int(row["version"])
  if (Either.isLeft(view) || !Number.isSafeInteger(version) || view.right.id !== id) {
    return Effect.fail(corrupt(operation, `the read model of lesson ${id} (ratchet_lessons) is damaged`))
  }
  return Effect.succeed({
    id,
    projectId: String(row["project_id"]),
    status: view.right.status,
    revision: view.right.revision,
    version,
    summary: String(row["summary"]),
    view: view.right
  })
}

const eventOf = (operation: string, row: Row): Effect.Effect<LessonStore.StoredEvent, StorageError.StorageError> => {
  const lessonId = String(row["lesson_id"])
  let parsed: unknown
  try {
    parsed = JSON.parse(String(row["payload"]))
  } catch (error) {
    return Effect.fail(corrupt(operation, `an event of lesson ${lessonId} (ratchet_lesson_events) is not JSON`, error))
  }
  const event = LessonEvent.decode(parsed)
  if (Either.isLeft(event)) {
    return Effect.fail(corrupt(operation, `event ${String(row["version"])} of lesson ${lessonId} does not decode: ${event.left.message}`))
  }
  return Effect.succeed({
    lessonId,
    projectId: String(row["project_id"]),
    version: int(row["version"]),
    operationId: String(row["operation_id"]),
    recordedAt: int(row["recorded_at"]),
    event: event.right
  })
}

const isUnique = (error: unknown): boolean =>
  error instanceof StorageError.StorageError && error.reason._tag === "UniqueViolation"

/**
 * The lesson store over the context's `SqlClient` and `SqlDialect`; the schema must be migrated
 * (`SqlStore.migrate`, which opening a store runs).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: Effect.Effect<LessonStore.Service, never, SqlClient.SqlClient | SqlDialect.SqlDialect> = Effect.gen(
  function*() {
    const dialect = yield* SqlDialect.SqlDialect
    const db: Db = { sql: (yield* SqlClient.SqlClient).withoutTransforms(), classify: dialect.classify }
    const sql = db.sql

    const loadRow = (operation: string, lessonId: string) =>
      Effect.flatMap(
        rows(db, operation, sql`SELECT * FROM ratchet_lessons WHERE lesson_id = ${lessonId}`),
        (found) => (found[0] === undefined ? Effect.succeed(null) : lessonOf(operation, found[0]))
      )

    const saveReadModel = (
      operation: string,
      before: LessonStore.StoredLesson | null,
      view: LessonRules.View,
      version: number
    ) =>
      Effect.gen(function*() {
        const body = view.body
        const text = searchText(body)
        const columns = {
          project_id: body.scope.projectId,
          status: view.status,
          revision: view.revision,
          version,
          fingerprints: JSON.stringify(body.fingerprints),
          paths: JSON.stringify(body.scope.paths),
          task_types: JSON.stringify(body.scope.taskTypes),
          summary: Lesson.summary(body),
          search_text: text,
          view: JSON.stringify(encodeView(view)),
          created_at: view.createdAt,
          changed_at: view.changedAt
        }
        yield* run(
          db,
          operation,
          sql`INSERT INTO ratchet_lessons ${sql.insert({ lesson_id: view.id, ...columns })}
            ON CONFLICT (lesson_id) DO UPDATE SET project_id = excluded.project_id, status = excluded.status,
              revision = excluded.revision, version = excluded.version, fingerprints = excluded.fingerprints,
              paths = excluded.paths, task_types = excluded.task_types, summary = excluded.summary,
              search_text = excluded.search_text, view = excluded.view, created_at = excluded.created_at,
              changed_at = excluded.changed_at`
        )
        // The text changes only with a proposal or an edit (a new revision).
        if (before !== null && before.revision === view.revision) return
        yield* run(db, operation, sql`DELETE FROM ratchet_lesson_fingerprints WHERE lesson_id = ${view.id}`)
        for (const fingerprint of new Set(body.fingerprints)) {
          yield* run(db, operation, sql`INSERT INTO ratchet_lesson_fingerprints (fingerprint, lesson_id) VALUES (${fingerprint}, ${view.id})`)
        }
        if (dialect.dialect === "sqlite") {
          yield* run(db, operation, sql`DELETE FROM ratchet_lessons_fts WHERE lesson_id = ${view.id}`)
          yield* run(db, operation, sql`INSERT INTO ratchet_lessons_fts (lesson_id, search_text) VALUES (${view.id}, ${text})`)
        }
      })

    const attempt = (prepared: Prepared) =>
      dialect.writeTransaction(
        "lesson.append",
        Effect.gen(function*() {
          const operation = "lesson.append"
          const { request } = prepared
          const streamId = Lesson.streamOf(request.lessonId)
          const known = yield* rows(
            db,
            operation,
            sql`SELECT stream_id, request_digest, version FROM ratchet_lesson_operations WHERE operation_id = ${request.operationId}`
          )
          if (known[0] !== undefined) {
            if (known[0]["stream_id"] !== streamId || known[0]["request_digest"] !== prepared.digest) {
              return yield* new EventStore.OperationReused({ operationId: request.operationId, streamId })
            }
            return yield* new Replayed({ result: { lessonId: request.lessonId, version: int(known[0]["version"]), replayed: true } })
          }
          const before = yield* loadRow(operation, request.lessonId)
          const current = before?.version ?? 0
          // Another project's lesson is refused before its version is compared.
          if (before !== null && before.projectId !== request.projectId) yield* folded(before.view, request)
          if (current !== request.expectedVersion) {
            return yield* new LessonStore.VersionConflict({ lessonId: request.lessonId, expected: request.expectedVersion, actual: current })
          }
          const state = yield* folded(before?.view ?? null, request)
          const now = yield* dialect.now
          const version = current + request.events.length
          for (const [index, { payload, type }] of prepared.payloads.entries()) {
            yield* run(
              db,
              operation,
              sql`INSERT INTO ratchet_lesson_events (stream_id, version, lesson_id, project_id, type, type_version, payload, operation_id, recorded_at)
                VALUES (${streamId}, ${current + index + 1}, ${request.lessonId}, ${request.projectId}, ${type}, 1, ${payload},
                  ${request.operationId}, ${now})`
            )
          }
          yield* run(
            db,
            operation,
            sql`INSERT INTO ratchet_lesson_operations (operation_id, stream_id, request_digest, first_version, version)
              VALUES (${request.operationId}, ${streamId}, ${prepared.digest}, ${current + 1}, ${version})`
          )
          yield* saveReadModel(operation, before, state, version)
          return { lessonId: request.lessonId, version, replayed: false }
        })
      )

    const append: LessonStore.Service["append"] = (request) =>
      Effect.flatMap(prepare(request), (prepared) =>
        attempt(prepared).pipe(
          // A writer that passed the version check alongside another lost on the primary key: run
          // it again, and it sees the winner's commit.
          Effect.catchIf(isUnique, () => attempt(prepared)),
          Effect.catchTag("@ratchet/storage/SqlLessonStore/Replayed", (replayed) => Effect.succeed(replayed.result))
        ))

    const read: LessonStore.Service["read"] = (lessonId) =>
      Effect.flatMap(checkLessonId(lessonId), () =>
        Effect.flatMap(
          rows(
            db,
            "lesson.read",
            sql`SELECT * FROM ratchet_lesson_events WHERE stream_id = ${Lesson.streamOf(lessonId)} ORDER BY version`
          ),
          (found) => Effect.forEach(found, (row) => eventOf("lesson.read", row))
        ))

    const get: LessonStore.Service["get"] = (lessonId) =>
      Effect.flatMap(checkLessonId(lessonId), () => loadRow("lesson.get", lessonId))

    const list: LessonStore.Service["list"] = (request) =>
      Effect.gen(function*() {
        const statuses = yield* checkList(request)
        const where = [
          ...(request.projectId === undefined ? [] : [sql`project_id = ${request.projectId}`]),
          ...(statuses.length === 0 ? [] : [sql`status IN ${sql.in(statuses)}`])
        ]
        const found = yield* rows(
          db,
          "lesson.list",
          sql`SELECT * FROM ratchet_lessons WHERE ${sql.and(where)} ORDER BY changed_at DESC, lesson_id`
        )
        return yield* Effect.forEach(found, (row) => lessonOf("lesson.list", row))
      })

    const textRanks = (operation: string, projectId: string, words: ReadonlyArray<string>) => {
      if (words.length === 0) return Effect.succeed(new Map<string, number>())
      const statement = dialect.dialect === "sqlite"
        ? sql`SELECT f.lesson_id AS lesson_id, -bm25(ratchet_lessons_fts) AS score FROM ratchet_lessons_fts f
            JOIN ratchet_lessons l ON l.lesson_id = f.lesson_id
            WHERE ratchet_lessons_fts MATCH ${words.map((word) => `"${word}"`).join(" OR ")} AND l.project_id = ${projectId}`
        : sql`SELECT lesson_id, ts_rank(search, q) AS score FROM ratchet_lessons, to_tsquery('english', ${words.join(" | ")}) q
            WHERE project_id = ${projectId} AND search @@ q`
      return Effect.map(rows(db, operation, statement), (found) => new Map(found.map((row) => [String(row["lesson_id"]), Number(row["score"])])))
    }

    const search: LessonStore.Service["search"] = (request) =>
      Effect.gen(function*() {
        const operation = "lesson.search"
        yield* checkId(EventStore.Id, "projectId", request.projectId)
        if (request.statuses.length === 0) return []
        const lessons = yield* list({ projectId: request.projectId, statuses: request.statuses })
        const fingerprints = [...new Set(request.fingerprints)].slice(0, 64)
        const matched = new Set(
          fingerprints.length === 0 ? [] : (yield* rows(
            db,
            operation,
            sql`SELECT lesson_id FROM ratchet_lesson_fingerprints WHERE fingerprint IN ${sql.in(fingerprints)}`
          )).map((row) => String(row["lesson_id"]))
        )
        const ranks = yield* textRanks(operation, request.projectId, LessonStore.searchWords(request.text))
        const hits = lessons.map((lesson): LessonStore.SearchHit => ({
          lesson,
          fingerprintMatch: matched.has(lesson.id),
          rank: Number.isFinite(ranks.get(lesson.id)) ? ranks.get(lesson.id)! : 0
        }))
        return hits.sort(byRelevance)
      })

    return { append, read, get, list, search }
  }
)

/**
 * `LessonStore` from an engine's `SqlClient` and `SqlDialect`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<LessonStore.LessonStore, never, SqlClient.SqlClient | SqlDialect.SqlDialect> = Layer.effect(
  LessonStore.LessonStore,
  make
)
