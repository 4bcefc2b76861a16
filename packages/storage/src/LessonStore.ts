/**
 * The lesson store port (ADR 0033): where the streams of lessons (`Lesson.streamOf`, ADR 0031) and
 * their read model live.
 *
 * A lesson is not part of any task, so its events do not go through the `EventStore`: they have a
 * catalogue of their own (`LessonEvent`), no branches, no lease and no global LSN. Each lesson is
 * one stream with its own version. An append is one transaction that is conditional two ways:
 * - on the **expected version** of the stream (stale → {@link VersionConflict} naming the current
 *   version; the caller reads again, decides again and retries);
 * - on the **operation id** (an id already committed with the same request returns the first
 *   result and writes nothing; with a different request → `EventStore.OperationReused`).
 * A stream's project is fixed by its first event. In the same transaction the lesson's read model
 * ({@link StoredLesson}: its fold, status, revision, fingerprints, scope and the text to search) is
 * rewritten, so a read never sees events without their read model or the reverse.
 *
 * {@link Service.search} is the store's half of the lessons query: a project's lessons in the
 * given statuses, each with whether one of its fingerprints is among those asked for and its
 * full-text rank for the words asked for (SQLite FTS5 `bm25`, PostgreSQL `ts_rank` over a
 * `tsvector` with a GIN index), best first. The scope filter (globs) is the caller's, with the
 * kernel's `Glob`.
 *
 * @since 0.3.0
 */
import type * as Lesson from "@ratchet/kernel/Lesson"
import type * as LessonEvent from "@ratchet/kernel/LessonEvent"
import type * as LessonRules from "@ratchet/kernel/LessonRules"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { InvalidRequest, OperationReused } from "./EventStore.js"
import type { StorageError } from "./StorageError.js"

/**
 * @since 0.3.0
 * @category models
 */
export interface AppendRequest {
  readonly projectId: string
  readonly lessonId: string
  /** The stream version the caller decided against; 0 creates the lesson. */
  readonly expectedVersion: number
  /** Makes the append idempotent: a replay returns the first result and writes nothing. */
  readonly operationId: string
  readonly events: ReadonlyArray<LessonEvent.Event>
}

/**
 * @since 0.3.0
 * @category models
 */
export interface AppendResult {
  readonly lessonId: string
  /** The stream version after the append. */
  readonly version: number
  /** True when this operation id had already been committed and nothing was written now. */
  readonly replayed: boolean
}

/**
 * One lesson event as stored.
 *
 * @since 0.3.0
 * @category models
 */
export interface StoredEvent {
  readonly lessonId: string
  readonly projectId: string
  /** The event's position in the lesson's stream (1-based). */
  readonly version: number
  readonly operationId: string
  /** Epoch milliseconds by the store's clock when the event was committed. */
  readonly recordedAt: number
  readonly event: LessonEvent.Event
}

/**
 * A lesson's read model row: the fold of its stream and the columns the reads filter on.
 *
 * @since 0.3.0
 * @category models
 */
export interface StoredLesson {
  readonly id: string
  readonly projectId: string
  readonly status: Lesson.Status
  readonly revision: number
  /** The stream version the row was folded at. */
  readonly version: number
  readonly summary: string
  readonly view: LessonRules.View
}

/**
 * @since 0.3.0
 * @category models
 */
export interface ListRequest {
  readonly projectId?: string | undefined
  /** Every status when empty or absent. */
  readonly statuses?: ReadonlyArray<Lesson.Status> | undefined
}

/**
 * @since 0.3.0
 * @category models
 */
export interface SearchRequest {
  readonly projectId: string
  readonly statuses: ReadonlyArray<Lesson.Status>
  /** Fingerprint keys; a lesson carrying one of them ranks before every lesson that does not. */
  readonly fingerprints: ReadonlyArray<string>
  /** Free text; only its words (letters and digits) are searched, any of them matching. */
  readonly text: string
}

/**
 * @since 0.3.0
 * @category models
 */
export interface SearchHit {
  readonly lesson: StoredLesson
  readonly fingerprintMatch: boolean
  /** The full-text rank, higher is better; 0 when no word matched. */
  readonly rank: number
}

/**
 * The lesson's stream moved since the caller read it.
 *
 * @since 0.3.0
 * @category errors
 */
export class VersionConflict extends Schema.TaggedError<VersionConflict>()("@ratchet/storage/LessonVersionConflict", {
  lessonId: Schema.String,
  expected: Schema.Number,
  actual: Schema.Number
}) {
  override get message(): string {
    return `Lesson ${this.lessonId} is at version ${this.actual}, not ${this.expected}: another writer appended first. Read the lesson again and decide against version ${this.actual}.`
  }
}

/**
 * @since 0.3.0
 * @category models
 */
export type AppendError = VersionConflict | OperationReused | InvalidRequest | StorageError

/**
 * @since 0.3.0
 * @category models
 */
export interface Service {
  /** Appends a batch atomically, with the lesson's read model, or not at all. */
  readonly append: (request: AppendRequest) => Effect.Effect<AppendResult, AppendError>
  /** The events of a lesson's stream in order; empty for a lesson that does not exist. */
  readonly read: (lessonId: string) => Effect.Effect<ReadonlyArray<StoredEvent>, InvalidRequest | StorageError>
  /** The lesson's read model, or null. */
  readonly get: (lessonId: string) => Effect.Effect<StoredLesson | null, InvalidRequest | StorageError>
  /** Lessons by project and status, newest change first. */
  readonly list: (request: ListRequest) => Effect.Effect<ReadonlyArray<StoredLesson>, InvalidRequest | StorageError>
  /** A project's lessons in the statuses asked for, fingerprint matches first, then by full-text rank. */
  readonly search: (request: SearchRequest) => Effect.Effect<ReadonlyArray<SearchHit>, InvalidRequest | StorageError>
}

/**
 * @since 0.3.0
 * @category services
 */
export class LessonStore extends Context.Tag("@ratchet/storage/LessonStore")<LessonStore, Service>() {}

/**
 * The words of `text` the full-text search looks for: lower-cased runs of letters and digits, at
 * most 32 of at most 64 characters each. Nothing else reaches an FTS5 `MATCH` or a `tsquery`, so
 * no query syntax can be injected through a task's text.
 *
 * @since 0.3.0
 * @category constructors
 */
export const searchWords = (text: string): ReadonlyArray<string> => {
  const words = text.toLowerCase().slice(0, 16_384).match(/[\p{L}\p{N}]+/gu) ?? []
  return [...new Set(words.map((word) => word.slice(0, 64)))].slice(0, 32)
}
