/**
 * A lesson store in memory: the reference the conformance suite checks itself against, and the
 * store of fast tests above storage. It keeps every promise of `LessonStore` in one process
 * (appends are atomic because they never yield between reading and writing). Its full-text rank
 * is a plain count of the words asked that the lesson's text holds — the same order of relevance
 * the SQL stores give for simple texts, not their scores.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as EventStore from "./EventStore.js"
import { byRelevance, checkId, checkLessonId, checkList, folded, prepare, searchText } from "./internal/lessonAppend.js"
import * as LessonStore from "./LessonStore.js"
import * as Lesson from "@ratchet/kernel/Lesson"

/**
 * A fresh, empty store. `now` is its clock (the time it records events at).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (now: () => number = Date.now): LessonStore.Service => {
  const streams = new Map<string, Array<LessonStore.StoredEvent>>()
  const lessons = new Map<string, LessonStore.StoredLesson>()
  const operations = new Map<string, { readonly lessonId: string; readonly digest: string; readonly version: number }>()

  const append: LessonStore.Service["append"] = (request) =>
    Effect.flatMap(prepare(request), (prepared) =>
      Effect.suspend((): Effect.Effect<LessonStore.AppendResult, LessonStore.AppendError> => {
        const known = operations.get(request.operationId)
        if (known !== undefined) {
          return known.lessonId === request.lessonId && known.digest === prepared.digest
            ? Effect.succeed({ lessonId: request.lessonId, version: known.version, replayed: true })
            : Effect.fail(new EventStore.OperationReused({ operationId: request.operationId, streamId: Lesson.streamOf(request.lessonId) }))
        }
        const before = lessons.get(request.lessonId) ?? null
        if (before !== null && before.projectId !== request.projectId) {
          const refused = folded(before.view, request)
          if (Either.isLeft(refused)) return Effect.fail(refused.left)
        }
        const current = before?.version ?? 0
        if (current !== request.expectedVersion) {
          return Effect.fail(new LessonStore.VersionConflict({ lessonId: request.lessonId, expected: request.expectedVersion, actual: current }))
        }
        const view = folded(before?.view ?? null, request)
        if (Either.isLeft(view)) return Effect.fail(view.left)
        const at = now()
        const stream = streams.get(request.lessonId) ?? []
        request.events.forEach((event, index) =>
          stream.push({ lessonId: request.lessonId, projectId: request.projectId, version: current + index + 1, operationId: request.operationId, recordedAt: at, event })
        )
        streams.set(request.lessonId, stream)
        const version = current + request.events.length
        operations.set(request.operationId, { lessonId: request.lessonId, digest: prepared.digest, version })
        lessons.set(request.lessonId, {
          id: request.lessonId,
          projectId: request.projectId,
          status: view.right.status,
          revision: view.right.revision,
          version,
          summary: Lesson.summary(view.right.body),
          view: view.right
        })
        return Effect.succeed({ lessonId: request.lessonId, version, replayed: false })
      }))

  const list: LessonStore.Service["list"] = (request) =>
    Effect.map(checkList(request), (statuses) =>
      [...lessons.values()]
        .filter((lesson) => request.projectId === undefined || lesson.projectId === request.projectId)
        .filter((lesson) => statuses.length === 0 || statuses.includes(lesson.status))
        .sort((a, b) => b.view.changedAt - a.view.changedAt || (a.id < b.id ? -1 : 1)))

  return {
    append,
    read: (lessonId) => Effect.map(checkLessonId(lessonId), () => [...(streams.get(lessonId) ?? [])]),
    get: (lessonId) => Effect.map(checkLessonId(lessonId), () => lessons.get(lessonId) ?? null),
    list,
    search: (request) =>
      Effect.gen(function*() {
        yield* checkId(EventStore.Id, "projectId", request.projectId)
        if (request.statuses.length === 0) return []
        const found = yield* list({ projectId: request.projectId, statuses: request.statuses })
        const words = LessonStore.searchWords(request.text)
        return found
          .map((lesson): LessonStore.SearchHit => {
            const own = new Set(LessonStore.searchWords(searchText(lesson.view.body)))
            return {
              lesson,
              fingerprintMatch: lesson.view.body.fingerprints.some((key) => request.fingerprints.includes(key)),
              rank: words.filter((word) => own.has(word)).length
            }
          })
          .sort(byRelevance)
      })
  }
}

/**
 * A fresh in-memory `LessonStore`.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<LessonStore.LessonStore> = Layer.sync(LessonStore.LessonStore, () => make())
