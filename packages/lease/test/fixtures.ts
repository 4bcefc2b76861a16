/**
 * Shared by the lease tests: stores in temporary directories, task streams, owners.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import * as StorageError from "@ratchet/storage/StorageError"
import { PostgresStore } from "@ratchet/storage-postgres"
import { SqliteStore } from "@ratchet/storage-sqlite"
import { testSchemaName, testUrl } from "@ratchet/testkit/Postgres"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import { afterAll } from "vitest"
import type * as Owner from "../src/Owner.js"

const roots: Array<string> = []
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true })
})

/** A fresh `$RATCHET_HOME`, removed after the file. */
export const tempHome = (): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-lease-"))
  roots.push(root)
  return path.join(root, "home")
}

const schemas: Array<string> = []
afterAll(async () => {
  if (schemas.length === 0) return
  await Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.forEach(schemas, (schema) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`, { discard: true })).pipe(
        Effect.provide(PgClient.layer({ url: Redacted.make(testUrl()), maxConnections: 1 }))
      )
  )
})

/** A schema of its own on the test PostgreSQL server, dropped after the file. */
export const freshSchema = (prefix: string): string => {
  const schema = testSchemaName(prefix)
  schemas.push(schema)
  return schema
}

/** A PostgreSQL store in a fresh schema of the test server. */
export const postgresStore = (schema: string, maxConnections = 4) =>
  PostgresStore.layer({ url: Redacted.make(testUrl()), schema, maxConnections })

/** A SQLite store in a fresh directory. */
export const sqliteStore = () => SqliteStore.layer({ directory: tempHome() })

export const PROJECT = "p-lease"

export const owner = (host: string, pid: number): Owner.Owner => ({
  workspaceId: "ws-1",
  host,
  pid,
  processStartedAt: 1_700_000_000_000 + pid
})

export const A = owner("runner", 101)
export const B = owner("runner", 202)

const system: Event.Actor = { kind: "system", id: "test" }

/** Creates the task's stream (a lease needs a task to fence). */
export const createTask = (taskId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    store.append({
      projectId: PROJECT,
      streamId: taskId,
      expectedVersion: 0,
      epoch: null,
      operationId: `create-${taskId}`,
      events: [
        Event.make<typeof Event.TaskCreated.Type>({
          _tag: "TaskCreated",
          actor: system,
          at: 0,
          taskId,
          projectId: PROJECT,
          goal: "hold the lease",
          slug: "lease"
        })
      ]
    }))

/** A run-level event to write under a lease. */
export const checkpoint = (runId: string, kind: "run_start" | "step" | "terminal" = "step"): Event.Event =>
  Event.make<typeof Event.CheckpointRecorded.Type>({ _tag: "CheckpointRecorded", actor: system, at: 0, kind, runId })

/** Appends `events` at the head of the task with `epoch`. */
export const writeAtHead = (taskId: string, epoch: number | null, events: ReadonlyArray<Event.Event>, operationId: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const head = yield* store.head(taskId)
    return yield* store.append({
      projectId: PROJECT,
      streamId: taskId,
      expectedVersion: head?.version ?? 0,
      epoch,
      operationId,
      events
    })
  })

/**
 * The context's lease store as seen across a network that `partitioned` can cut: while it is
 * true, heartbeats fail with a retryable connection error and never reach the store.
 */
export const partitionable = (partitioned: Ref.Ref<boolean>) =>
  Effect.map(LeaseStore.LeaseStore, (real): LeaseStore.Service => ({
    now: real.now,
    heartbeat: (request) =>
      Effect.flatMap(Ref.get(partitioned), (down) =>
        down
          ? Effect.fail(StorageError.make("heartbeat", { _tag: "Connection", code: "ECONNRESET", detail: "partitioned" }))
          : real.heartbeat(request))
  }))
