/**
 * The lesson checks fail against lesson stores that break a promise, each bug caught by the check
 * that names it, and pass against the sound reference store. Each broken store is the in-memory
 * store with one method decorated.
 */
import { describe, expect, it } from "@effect/vitest"
import * as LessonStore from "@ratchet/storage/LessonStore"
import * as MemoryLessonStore from "@ratchet/storage/MemoryLessonStore"
import * as LessonChecks from "@ratchet/testkit/LessonChecks"
import * as StorageChecks from "@ratchet/testkit/StorageChecks"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"

type Decorate = (store: LessonStore.Service) => LessonStore.Service

const cases: ReadonlyArray<{ readonly bug: string; readonly check: string; readonly decorate: Decorate }> = [
  {
    bug: "appends at whatever version the stream is at",
    check: "lesson.expected-version",
    decorate: (store) => ({
      ...store,
      append: (request) =>
        Effect.flatMap(store.read(request.lessonId), (events) => store.append({ ...request, expectedVersion: events.length }))
    })
  },
  {
    bug: "writes a replayed operation again",
    check: "lesson.operation",
    decorate: (store) => {
      let n = 0
      return { ...store, append: (request) => store.append({ ...request, operationId: `${request.operationId}-${(n += 1)}` }) }
    }
  },
  {
    bug: "stores a stream that does not begin with a proposal as an empty lesson",
    check: "lesson.invalid",
    decorate: (store) => ({
      ...store,
      append: (request) => request.events[0]?._tag === "LessonProposed" ? store.append(request) : Effect.succeed({ lessonId: request.lessonId, version: 1, replayed: false })
    })
  },
  {
    bug: "ignores the fingerprints asked for",
    check: "lesson.search",
    decorate: (store) => ({ ...store, search: (request) => store.search({ ...request, fingerprints: [] }) })
  },
  {
    bug: "searches every status",
    check: "lesson.search",
    decorate: (store) => ({ ...store, search: (request) => store.search({ ...request, statuses: [...request.statuses, "candidate"] }) })
  },
  {
    bug: "keeps a read model that lags its stream",
    check: "lesson.append",
    decorate: (store) => ({ ...store, get: (lessonId) => Effect.map(store.get(lessonId), (row) => row === null ? null : { ...row, version: row.version - 1 }) })
  }
]

const byId = (id: string) => {
  const found = LessonChecks.checks.find((check) => check.id === id)
  if (found === undefined) throw new Error(`no lesson check ${id}`)
  return found
}

const run = (id: string, decorate: Decorate) =>
  Effect.exit(Effect.provideService(byId(id).run, LessonStore.LessonStore, decorate(MemoryLessonStore.make())))

describe("the lesson checks catch broken lesson stores", () => {
  for (const { bug, check, decorate } of cases) {
    it.live(`${check} fails against a store that ${bug}`, () =>
      Effect.gen(function*() {
        const broken = yield* run(check, decorate)
        const failure = Exit.isFailure(broken) ? Cause.failureOption(broken.cause) : Option.none()
        expect(Option.isSome(failure) && failure.value instanceof StorageChecks.ConformanceViolation, Exit.isSuccess(broken) ? "it passed" : Cause.pretty(broken.cause)).toBe(true)
        const sound = yield* run(check, (store) => store)
        expect(Exit.isSuccess(sound), Exit.isFailure(sound) ? Cause.pretty(sound.cause) : "").toBe(true)
      }))
  }
})
