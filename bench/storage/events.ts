/**
 * The events both sides of a storage pair write, and the raw side's copy of the event table.
 *
 * Ours appends kernel events through `EventStore.append`; raw inserts the very bytes ours stores
 * (the event's JSON; each suite reads a stored payload back and checks it) into a table created from the same migration statement as `ratchet_events`
 * (same columns, same UNIQUE constraint, same index), so the only difference between the sides is
 * what our store does around the insert.
 *
 * The measured event is an `AttemptTransitioned`: the run loop's most frequent write, which also
 * touches a read model (the attempt row) besides the task summary.
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as Migrations from "@ratchet/storage/Migrations"

const actor = { kind: "runner", id: "bench-runner" } as const

// Written in the catalogue's field order (`_tag`, `version`, `actor`, `at`, then the body), the
// order the catalogue's encoder gives, so the JSON is the same whichever way a store serialises.

/** The first event of a stream (written during setup, never timed). */
export const taskCreated = (streamId: string): Event.Event => ({
  _tag: "TaskCreated",
  version: 1,
  actor: { kind: "user", id: "bench" },
  at: 1_700_000_000_000,
  taskId: streamId,
  projectId: "bench",
  goal: "Measure the cost of a durable append against a raw insert",
  slug: "bench"
})

/** The `index`th timed event of a stream. */
export const attemptTransitioned = (index: number): Event.Event => ({
  _tag: "AttemptTransitioned",
  version: 1,
  actor,
  at: 1_700_000_000_000 + index,
  runId: "run-1",
  stepId: `step-${index % 16}`,
  attempt: 1,
  from: "Pending",
  to: "Running"
})

/** One row of `ratchet_events`, as the raw side writes it. */
export interface RawRow {
  readonly lsn: number
  readonly streamId: string
  readonly version: number
  readonly type: string
  readonly typeVersion: number
  readonly payload: string
  readonly epoch: number | null
  readonly operationId: string
  readonly recordedAt: number
}

/** The `ratchet_events` table and its index, from the migration itself, for a dialect. */
export const eventTableStatements = (dialect: Migrations.Dialect): ReadonlyArray<string> => {
  const statements = Migrations.migrations[0]?.statements[dialect] ?? []
  const picked = statements.filter((statement) =>
    /^CREATE TABLE ratchet_events\b/.test(statement) || /^CREATE INDEX ratchet_events_stream\b/.test(statement)
  )
  if (picked.length !== 2) throw new Error(`expected the ratchet_events table and index in migration 1 (${dialect})`)
  return picked
}

/** A stream written by one side of a pair: its id and its current version. */
export interface StreamCursor {
  readonly streamId: string
  version: number
  next: number
}

/** One append request of `count` timed events on `cursor`'s stream (advances the cursor). */
export const appendRequest = (cursor: StreamCursor, count: number, operationId: string): EventStore.AppendRequest => {
  const events: Array<Event.Event> = []
  for (let i = 0; i < count; i++) events.push(attemptTransitioned(cursor.next++))
  const request: EventStore.AppendRequest = {
    projectId: "bench",
    streamId: cursor.streamId,
    expectedVersion: cursor.version,
    epoch: null,
    operationId,
    events
  }
  cursor.version += count
  return request
}
