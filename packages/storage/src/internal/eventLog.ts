/**
 * Reading the log: a stream's branches, the segments a branch is made of, the paged stream
 * of its events, and the read models folded from such a stream.
 *
 * A branch B forked from P at LSN L sees P's visible events up to L, then its own. Walking the
 * parents from B to the main branch gives one segment per branch, each bounded by the smallest
 * fork point below it, so the segments cover disjoint, increasing LSN ranges and reading them in
 * order yields the branch in LSN order. An event's stored `version` is its position on every
 * branch that can see it (the prefix before it is the same history), so versions need no
 * recounting.
 *
 * The newest bound of a read is the branch's `last_lsn` when the read starts, so a read is a
 * stable view even while writers append.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as EventStore from "../EventStore.js"
import * as ReadModel from "../ReadModel.js"
import type * as StorageError from "../StorageError.js"
import { type Db, rows } from "./db.js"
import { folding } from "./foldReadModels.js"
import { corrupt, decodeEvent, int, intOrNull, type Row } from "./rows.js"

/** Events per page of a read. */
export const pageSize = 500

export interface BranchRow {
  readonly branch: string
  readonly parent: string | null
  readonly forkLsn: number | null
  readonly version: number
  readonly lastLsn: number
  readonly createdAt: number
}

export interface StreamBranches {
  readonly projectId: string
  readonly branches: ReadonlyMap<string, BranchRow>
}

const decodeBranch = (operation: string, streamId: string, row: Row): Effect.Effect<BranchRow, StorageError.StorageError> => {
  const branch = row["branch"]
  const parent = row["parent"] ?? null
  const value: BranchRow = {
    branch: typeof branch === "string" ? branch : "",
    parent: typeof parent === "string" ? parent : null,
    forkLsn: intOrNull(row["fork_lsn"]),
    version: int(row["version"]),
    lastLsn: int(row["last_lsn"]),
    createdAt: int(row["created_at"])
  }
  const intact = typeof branch === "string" && (parent === null || typeof parent === "string") &&
    (value.parent === null) === (value.forkLsn === null) &&
    [value.version, value.lastLsn, value.createdAt, value.forkLsn ?? 0].every(Number.isSafeInteger)
  return intact
    ? Effect.succeed(value)
    : Effect.fail(corrupt(operation, `a branch row of stream ${streamId} is damaged`))
}

/**
 * Every branch of a stream (main first, then by creation) with the stream's project, or `null` when
 * the stream does not exist.
 */
export const loadBranches = (
  db: Db,
  operation: string,
  streamId: string
): Effect.Effect<StreamBranches | null, StorageError.StorageError> =>
  Effect.gen(function*() {
    const found = yield* rows(
      db,
      operation,
      db.sql`SELECT s.project_id, b.branch, b.parent, b.fork_lsn, b.version, b.last_lsn, b.created_at
        FROM ratchet_streams s JOIN ratchet_branches b ON b.stream_id = s.stream_id
        WHERE s.stream_id = ${streamId}
        ORDER BY CASE WHEN b.parent IS NULL THEN 0 ELSE 1 END, b.created_at, b.branch`
    )
    const first = found[0]
    if (first === undefined) return null
    const projectId = first["project_id"]
    if (typeof projectId !== "string") return yield* corrupt(operation, `the stream row of ${streamId} is damaged`)
    const branches = new Map<string, BranchRow>()
    for (const row of found) {
      const branch = yield* decodeBranch(operation, streamId, row)
      branches.set(branch.branch, branch)
    }
    return { projectId, branches }
  })

/** One branch's own events up to `upTo`. */
export interface Segment {
  readonly branch: string
  readonly upTo: number
}

/** The segments of `branch`, oldest ancestor first. */
export const segments = (
  operation: string,
  streamId: string,
  stream: StreamBranches,
  branch: string
): Effect.Effect<ReadonlyArray<Segment>, EventStore.BranchNotFound | StorageError.StorageError> => {
  const target = stream.branches.get(branch)
  if (target === undefined) return Effect.fail(new EventStore.BranchNotFound({ streamId, branch }))
  const out: Array<Segment> = []
  const seen = new Set<string>()
  let current: BranchRow | undefined = target
  let upTo = target.lastLsn
  while (current !== undefined) {
    if (seen.has(current.branch)) {
      return Effect.fail(corrupt(operation, `the branches of stream ${streamId} form a cycle at ${current.branch}`))
    }
    seen.add(current.branch)
    out.push({ branch: current.branch, upTo })
    if (current.parent === null) break
    upTo = Math.min(upTo, current.forkLsn ?? upTo)
    const parent: BranchRow | undefined = stream.branches.get(current.parent)
    if (parent === undefined) {
      return Effect.fail(corrupt(operation, `branch ${current.branch} of stream ${streamId} names a missing parent`))
    }
    current = parent
  }
  return Effect.succeed(out.reverse())
}

export interface Range {
  /** Inclusive. */
  readonly fromLsn: number
  /** Inclusive. */
  readonly toLsn: number
}

/**
 * The events of `segments` within `range`, paged by LSN, labelled with `label` as the branch they
 * are read through.
 */
export const events = (
  db: Db,
  operation: string,
  streamId: string,
  projectId: string,
  label: string,
  parts: ReadonlyArray<Segment>,
  range: Range
): Stream.Stream<EventStore.StoredEvent, StorageError.StorageError> => {
  const columns = { projectId, streamId, branch: label }
  const segment = (part: Segment): Stream.Stream<EventStore.StoredEvent, StorageError.StorageError> => {
    const upTo = Math.min(part.upTo, range.toLsn)
    const start = range.fromLsn - 1
    if (upTo <= start) return Stream.empty
    // Pages are fetched raw and decoded one event at a time, so the events before a damaged one
    // are still delivered before the stream fails.
    return Stream.paginateChunkEffect(start, (after) =>
      Effect.map(
        rows(
          db,
          operation,
          db.sql`SELECT lsn, version, payload, epoch, operation_id, recorded_at FROM ratchet_events
            WHERE stream_id = ${streamId} AND branch = ${part.branch} AND lsn > ${after} AND lsn <= ${upTo}
            ORDER BY lsn LIMIT ${pageSize}`
        ),
        (page) => {
          const last = int(page[page.length - 1]?.["lsn"])
          const more = page.length === pageSize && Number.isSafeInteger(last) && last > after && last < upTo
          return [Chunk.unsafeFromArray(page), more ? Option.some(last) : Option.none()] as const
        }
      )).pipe(Stream.mapEffect((row) => decodeEvent(operation, columns, row)))
  }
  return Stream.flatMap(Stream.fromIterable(parts), segment)
}

/**
 * The read models after `events`, from `from`: `ReadModel.fold` over a stream, a chunk at a time,
 * on one working copy (no map copied per event or per chunk), for a rebuild, a fork or a
 * migration's refold, whose histories may be long.
 */
export const foldReadModels = <E, R>(
  events: Stream.Stream<EventStore.StoredEvent, E, R>,
  from: ReadModel.Snapshot = ReadModel.empty
): Effect.Effect<ReadModel.Snapshot, E, R> =>
  Effect.suspend(() => {
    const working = folding(from)
    return Effect.map(
      Stream.runForEachChunk(events, (chunk) => Effect.sync(() => working.add(Chunk.toReadonlyArray(chunk)))),
      working.result
    )
  })
