/**
 * PostgresStore against the real server (see DEVELOPERS.md): append/read/replay/fencing, schema
 * isolation, migrations (a newer schema is refused and nothing is written; concurrent migrations of
 * a fresh schema both succeed), the write transaction's bounded retry, read-only snapshots, and the
 * fault case of a connection dropped in the middle of a transaction.
 *
 * Every test works in its own schema `ratchet_test_<random>`, dropped after the file, so parallel
 * runs never collide.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { expect, it } from "@effect/vitest"
import * as Event from "@ratchet/kernel/Event"
import * as Spec from "@ratchet/kernel/Spec"
import * as EventStore from "@ratchet/storage/EventStore"
import * as Migrations from "@ratchet/storage/Migrations"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as SqlDialect from "@ratchet/storage/SqlDialect"
import * as SqlStore from "@ratchet/storage/SqlStore"
import type * as StorageError from "@ratchet/storage/StorageError"
import * as Events from "@ratchet/testkit/Events"
import { describePostgres, testUrl } from "@ratchet/testkit/Postgres"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { PostgresStore } from "../src/index.js"
import { schemasDroppedAfterAll } from "./schemas.js"

const url = testUrl()
/** A schema of its own for one test; every one is dropped after the file. */
const freshSchema = schemasDroppedAfterAll()

const storeIn = (schema: string) => PostgresStore.layer({ url: Redacted.make(url), schema, maxConnections: 4 })

/** A client outside any store, for what a test does behind the store's back. */
const adminLayer = PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })

const withAdmin = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(adminLayer))

/**
 * Runs a statement on another pooled connection even inside a transaction: statements otherwise
 * pick the transaction's connection up from the fiber's context.
 */
const outsideTransaction = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.mapInputContext(effect, (context: Context.Context<never>) => Context.omit(SqlClient.TransactionConnection)(context))

/**
 * Terminates the backend running the current transaction from a second connection and waits until
 * it is gone: `pg_terminate_backend(pid, timeout)` returns only once the process has exited, so the
 * next statement deterministically meets a dead connection, without a sleep.
 */
const dropOwnConnection = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const [own] = yield* sql<{ readonly pid: number }>`SELECT pg_backend_pid() AS pid`
    const [killed] = yield* outsideTransaction(
      sql<{ readonly killed: boolean }>`SELECT pg_terminate_backend(${own!.pid}, 10000) AS killed`
    )
    expect(killed?.killed).toBe(true)
  }).pipe(Effect.orDie)


const task = (streamId: string) => ({ projectId: "p-1", streamId })

const created = (streamId: string) => Events.taskCreated({ taskId: streamId, projectId: "p-1" })

const readAll = (streamId: string, branch?: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Stream.runCollect(store.read({ streamId, branch })).pipe(Effect.map(Chunk.toReadonlyArray)))

const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

const isStorageError = (u: unknown): u is StorageError.StorageError =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "@ratchet/storage/StorageError"

await describePostgres("PostgresStore (PostgreSQL on the test server)", () => {
  it.effect("appends, reads, replays, fences, and keeps read models and blobs", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const models = yield* ReadModel.ReadModels
      const blobs = yield* BlobStore.BlobStore
      const dialect = yield* SqlDialect.SqlDialect
      const streamId = "t-smoke"
      const first = {
        ...task(streamId),
        expectedVersion: 0,
        epoch: null,
        operationId: "op-create",
        events: [created(streamId)]
      }

      const appended = yield* store.append(first)
      expect(appended).toMatchObject({ streamId, branch: "main", version: 1, replayed: false })
      expect(appended.firstLsn).toBe(appended.lastLsn)

      // Replaying the operation id returns the first result and writes nothing.
      const replayed = yield* store.append(first)
      expect(replayed).toEqual({ ...appended, replayed: true })
      const reused = yield* failureOf(store.append({ ...first, events: [created(streamId), Events.interviewBegun()] }))
      expect(reused._tag).toBe("@ratchet/storage/OperationReused")

      // Acquiring the lease needs no prior epoch; afterwards an append without it is fenced off.
      const owner = Events.owner("runner-a")
      const acquired = yield* store.append({
        ...task(streamId),
        expectedVersion: 1,
        epoch: null,
        operationId: "op-lease",
        events: [Events.leaseAcquired(1, owner)]
      })
      expect(acquired.version).toBe(2)
      expect(acquired.firstLsn).toBeGreaterThan(appended.lastLsn)

      const fenced = yield* failureOf(store.append({
        ...task(streamId),
        expectedVersion: 2,
        epoch: null,
        operationId: "op-unfenced",
        events: [Events.interviewBegun()]
      }))
      expect(fenced).toMatchObject({ _tag: "@ratchet/storage/StaleEpoch", presented: null, current: 1, held: true })
      const stale = yield* failureOf(store.append({
        ...task(streamId),
        expectedVersion: 2,
        epoch: 0,
        operationId: "op-stale",
        events: [Events.interviewBegun()]
      }))
      expect(stale).toMatchObject({ _tag: "@ratchet/storage/StaleEpoch", presented: 0, current: 1, held: true })

      const checkpoint = yield* store.append({
        ...task(streamId),
        expectedVersion: 2,
        epoch: 1,
        operationId: "op-checkpoint",
        events: [Events.checkpointRecorded("run_start", "run-1"), Events.interviewBegun()]
      })
      expect(checkpoint.version).toBe(4)

      const conflict = yield* failureOf(store.append({
        ...task(streamId),
        expectedVersion: 2,
        epoch: 1,
        operationId: "op-late",
        events: [Events.interviewBegun()]
      }))
      expect(conflict).toMatchObject({ _tag: "@ratchet/storage/VersionConflict", expected: 2, actual: 4 })

      const events = yield* readAll(streamId)
      expect(events.map((stored) => stored.event._tag)).toEqual([
        "TaskCreated",
        "LeaseAcquired",
        "CheckpointRecorded",
        "InterviewBegun"
      ])
      expect(events.map((stored) => stored.version)).toEqual([1, 2, 3, 4])
      const lsns = events.map((stored) => stored.lsn)
      expect([...lsns].sort((a, b) => a - b)).toEqual(lsns)
      expect(new Set(lsns).size).toBe(lsns.length)
      expect(events[0]?.event).toEqual(created(streamId))
      expect(events.map((stored) => stored.epoch)).toEqual([null, null, 1, 1])
      for (const stored of events) {
        expect(typeof stored.lsn).toBe("number")
        expect(Number.isSafeInteger(stored.recordedAt)).toBe(true)
      }

      expect(yield* store.head(streamId)).toEqual({
        projectId: "p-1",
        streamId,
        branch: "main",
        version: 4,
        lastLsn: checkpoint.lastLsn
      })

      // Read models were written with the events and equal a cold rebuild of the log.
      const snapshot = yield* models.snapshot(streamId)
      expect(snapshot.lease).toMatchObject({ epoch: 1, held: true })
      expect(snapshot.checkpoints).toHaveLength(1)
      expect(yield* models.rebuild(streamId)).toEqual(snapshot)

      // Blobs live in the database: deduplicated, verified on read.
      const bytes = new TextEncoder().encode("a prompt worth keeping")
      const ref = yield* blobs.put(bytes)
      expect(yield* blobs.put(bytes)).toBe(ref)
      expect(yield* blobs.get(ref)).toEqual(bytes)
      expect(yield* blobs.has(ref)).toBe(true)
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ readonly n: string | number }>`SELECT count(*) AS n FROM ratchet_blobs`
      expect(Number(row?.n)).toBe(1)

      // The clock is the database's, in epoch milliseconds.
      const now = yield* dialect.now
      expect(Number.isSafeInteger(now)).toBe(true)
      expect(dialect.dialect).toBe("pg")
    }).pipe(Effect.provide(storeIn(freshSchema()))))

  it.effect("keeps every table in its own schema and migrates it to the latest version", () => {
    const schema = freshSchema()
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [path] = yield* sql<{ readonly search_path: string }>`SHOW search_path`
      expect(path?.search_path).toBe(schema)
      // A session frozen inside a transaction is ended by the server instead of holding every writer.
      const [idle] = yield* sql<{ readonly idle_in_transaction_session_timeout: string }>`SHOW idle_in_transaction_session_timeout`
      expect(idle?.idle_in_transaction_session_timeout).toBe("15s")
      const tables = yield* withAdmin((admin) =>
        admin<{ readonly table_name: string }>`
          SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`
      )
      expect(tables.map((table) => table.table_name)).toEqual(expect.arrayContaining([
        "ratchet_blobs",
        "ratchet_events",
        "ratchet_lsn",
        "ratchet_schema"
      ]))
      const [version] = yield* sql<{ readonly version: number | string }>`SELECT version FROM ratchet_schema`
      expect(Number(version?.version)).toBe(Migrations.latestVersion)
    }).pipe(Effect.provide(storeIn(schema)))
  })

  it.effect("refuses a store written by a newer schema and writes nothing", () => {
    const schema = freshSchema()
    return Effect.gen(function*() {
      // A store that a newer Ratchet migrated: everything in place, then its version moved on.
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(storeIn(schema))
        const store = Context.get(context, EventStore.EventStore)
        yield* store.append({
          ...task("t-old"),
          expectedVersion: 0,
          epoch: null,
          operationId: "op-1",
          events: [created("t-old")]
        })
      }))
      const newer = Migrations.latestVersion + 1
      const state = (admin: SqlClient.SqlClient) =>
        Effect.all({
          schema: admin`SELECT * FROM ${admin(schema)}.ratchet_schema`,
          lsn: admin`SELECT * FROM ${admin(schema)}.ratchet_lsn`,
          events: admin`SELECT lsn, payload FROM ${admin(schema)}.ratchet_events ORDER BY lsn`
        })
      const before = yield* withAdmin((admin) =>
        Effect.zipRight(admin`UPDATE ${admin(schema)}.ratchet_schema SET version = ${newer}`, state(admin))
      )

      const refused = yield* Effect.scoped(Layer.build(storeIn(schema))).pipe(Effect.flip)
      expect(isStorageError(refused) && refused.reason._tag).toBe("SchemaTooNew")
      expect(refused.message).toContain("upgrade Ratchet")

      expect(yield* withAdmin(state)).toEqual(before)
    })
  })

  it.effect("upgrades a version-1 store: its attempts gain an empty turn region, and turn events then fold into it", () => {
    const schema = freshSchema()
    const target = { runId: "r-1", stepId: "s-1", attempt: 1 }
    const initialTurn = { waitingForFirstChunk: false, toolRejected: false, toolUsed: false, toolFailed: false, streamReadComplete: false }
    return Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(storeIn(schema))
        yield* Context.get(context, EventStore.EventStore).append({
          ...task("t-1"),
          expectedVersion: 0,
          epoch: null,
          operationId: "op-1",
          events: [created("t-1"), Events.attemptScheduled("r-1", "s-1", 1)]
        })
      }))
      // The store as version 1 left it: no turn column, version 1 recorded.
      yield* withAdmin((admin) =>
        Effect.zipRight(
          admin`ALTER TABLE ${admin(schema)}.ratchet_attempts DROP COLUMN turn`,
          admin`UPDATE ${admin(schema)}.ratchet_schema SET version = 1`
        )
      )
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(storeIn(schema))
        const models = Context.get(context, ReadModel.ReadModels)
        expect((yield* models.attempts("t-1")).map((row) => row.turn)).toEqual([initialTurn])
        yield* Context.get(context, EventStore.EventStore).append({
          ...task("t-1"),
          expectedVersion: 2,
          epoch: null,
          operationId: "op-2",
          events: [Events.turnRecorded(target, { _tag: "toolFailed" })]
        })
        expect((yield* models.attempts("t-1")).map((row) => row.turn)).toEqual([{ ...initialTurn, toolFailed: true }])
        expect(yield* models.snapshot("t-1")).toEqual(yield* models.rebuild("t-1"))
      }))
      const [version] = yield* withAdmin((admin) =>
        admin<{ readonly version: number | string }>`SELECT version FROM ${admin(schema)}.ratchet_schema`
      )
      expect(Number(version?.version)).toBe(Migrations.latestVersion)
    })
  })

  it.effect("upgrades a version-2 store: summaries are folded again, and approvals an older Ratchet wrote read as unsigned", () => {
    const schema = freshSchema()
    const spec = Either.getOrThrow(Spec.decode({ goal: "ship it", acceptanceCriteria: [{ id: "AC-001", outcome: "it ships", required: true }] }))
    const digest = Spec.digest(spec)
    const actor = Events.actors.user
    const receiptV1 = { subject: "spec", digest, actor, channel: "terminal", at: 5 } as const
    return Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(storeIn(schema))
        yield* Context.get(context, EventStore.EventStore).append({
          ...task("t-1"),
          expectedVersion: 0,
          epoch: null,
          operationId: "op-1",
          events: [
            created("t-1"),
            Event.make({ _tag: "SpecProposed", actor, at: 4, revision: 1, digest, spec, voidedApproval: false }),
            Event.make({ _tag: "SpecApproved", actor, at: 5, revision: 1, digest, receipt: { ...receiptV1, signature: null } })
          ]
        })
      }))
      // The store as version 2 left it: the approval event at version 1 (no signature), and a
      // summary without the approval's receipt.
      yield* withAdmin((admin) =>
        Effect.gen(function*() {
          const v1 = JSON.stringify({ _tag: "SpecApproved", version: 1, actor, at: 5, revision: 1, digest, receipt: receiptV1 })
          yield* admin`UPDATE ${admin(schema)}.ratchet_events SET type_version = 1, payload = ${v1} WHERE type = 'SpecApproved'`
          const [row] = yield* admin<{ readonly summary: string }>`SELECT summary FROM ${admin(schema)}.ratchet_task_summaries WHERE stream_id = 't-1'`
          const old = JSON.parse(row!.summary) as { task: { spec: Record<string, unknown> } }
          delete old.task.spec["approval"]
          yield* admin`UPDATE ${admin(schema)}.ratchet_task_summaries SET summary = ${JSON.stringify(old)} WHERE stream_id = 't-1'`
          yield* admin`UPDATE ${admin(schema)}.ratchet_schema SET version = 2`
        })
      )
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(storeIn(schema))
        const models = Context.get(context, ReadModel.ReadModels)
        const summary = yield* models.taskSummary("t-1")
        expect(summary?.task.spec?.approval).toEqual({ ...receiptV1, signature: null })
        expect(yield* models.snapshot("t-1")).toEqual(yield* models.rebuild("t-1"))
      }))
      const [version] = yield* withAdmin((admin) =>
        admin<{ readonly version: number | string }>`SELECT version FROM ${admin(schema)}.ratchet_schema`
      )
      expect(Number(version?.version)).toBe(Migrations.latestVersion)
    })
  })

  it.effect("upgrades a version-4 store: the run indexes are created, and a run's frontier and checkpoints read through them", () => {
    const schema = freshSchema()
    const target = { runId: "r-1", stepId: "s-1", attempt: 1 }
    const runIndexes = ["ratchet_attempts_open", "ratchet_checkpoints_run", "ratchet_intents_attempt"]
    const indexesOf = (admin: SqlClient.SqlClient) =>
      Effect.map(
        admin<{ readonly indexname: string }>`SELECT indexname FROM pg_indexes
          WHERE schemaname = ${schema} AND indexname IN ${admin.in(runIndexes)} ORDER BY indexname`,
        (found) => found.map((row) => row.indexname)
      )
    return Effect.gen(function*() {
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(storeIn(schema))
        yield* Context.get(context, EventStore.EventStore).append({
          ...task("t-1"),
          expectedVersion: 0,
          epoch: null,
          operationId: "op-1",
          events: [created("t-1"), Events.attemptScheduled("r-1", "s-1", 1)]
        })
      }))
      expect(yield* withAdmin(indexesOf)).toEqual(runIndexes)
      // The store as version 4 left it: none of the run indexes, version 4 recorded.
      yield* withAdmin((admin) =>
        Effect.zipRight(
          Effect.forEach(runIndexes, (name) => admin`DROP INDEX ${admin(schema)}.${admin(name)}`),
          admin`UPDATE ${admin(schema)}.ratchet_schema SET version = 4`
        )
      )
      expect(yield* withAdmin(indexesOf)).toEqual([])
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(storeIn(schema))
        const models = Context.get(context, ReadModel.ReadModels)
        yield* Context.get(context, EventStore.EventStore).append({
          ...task("t-1"),
          expectedVersion: 2,
          epoch: null,
          operationId: "op-2",
          events: [
            Events.attemptTransitioned({ ...target, from: "Pending", to: "Running" }),
            Events.intentRecorded("i-1", target),
            Events.checkpointRecorded("step", "r-1")
          ]
        })
        const frontier = yield* models.runFrontier("t-1", "r-1")
        expect([...frontier.attempts.values()].map((row) => [row.stepId, row.attempt, row.state])).toEqual([["s-1", 1, "Running"]])
        expect([...frontier.intents.keys()]).toEqual(["i-1"])
        expect((yield* models.checkpoints("t-1", undefined, { runId: "r-1", kind: "step", last: 1 })).map((row) => row.kind)).toEqual(["step"])
        // The reads can seek: with sequential scans priced out, the planner names the new indexes.
        const sql = Context.get(context, SqlClient.SqlClient)
        const plan = (statement: Effect.Effect<ReadonlyArray<Record<string, unknown>>, unknown>) =>
          Effect.map(statement, (found) => found.map((row) => String(row["QUERY PLAN"])).join("; "))
        const plans = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`SET LOCAL enable_seqscan = off`
          return [
            yield* plan(sql`EXPLAIN SELECT * FROM ratchet_attempts a
              WHERE a.stream_id = 't-1' AND a.branch = 'main' AND a.run_id = 'r-1' AND a.state IN ('Pending', 'Running')`),
            yield* plan(sql`EXPLAIN SELECT * FROM ratchet_intents
              WHERE stream_id = 't-1' AND branch = 'main' AND run_id = 'r-1' AND step_id = 's-1' AND attempt = 1`),
            yield* plan(sql`EXPLAIN SELECT lsn FROM ratchet_checkpoints
              WHERE stream_id = 't-1' AND branch = 'main' AND run_id = 'r-1' AND kind = 'step' ORDER BY lsn DESC LIMIT 1`)
          ]
        }))
        expect(plans[0]).toContain("ratchet_attempts_open")
        expect(plans[1]).toContain("ratchet_intents_attempt")
        expect(plans[2]).toContain("ratchet_checkpoints_run")
      }))
      expect(yield* withAdmin(indexesOf)).toEqual(runIndexes)
      const [version] = yield* withAdmin((admin) =>
        admin<{ readonly version: number | string }>`SELECT version FROM ${admin(schema)}.ratchet_schema`
      )
      expect(Number(version?.version)).toBe(Migrations.latestVersion)
    })
  })

  it.effect("refuses a fresh schema stamped by a newer Ratchet before creating any table", () => {
    const schema = freshSchema()
    return Effect.gen(function*() {
      // Only the version table, as a newer Ratchet would create it first: nothing else may appear.
      yield* Effect.scoped(Effect.gen(function*() {
        const context = yield* Layer.build(storeIn(schema))
        const sql = Context.get(context, SqlClient.SqlClient)
        const tables = yield* sql<{ readonly table_name: string }>`
          SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema} AND table_name <> 'ratchet_schema'`
        yield* Effect.forEach(tables, (table) => sql`DROP TABLE ${sql(table.table_name)} CASCADE`, { discard: true })
        yield* sql`UPDATE ratchet_schema SET version = ${Migrations.latestVersion + 7}`
      }))

      const refused = yield* Effect.scoped(Layer.build(storeIn(schema))).pipe(Effect.flip)
      expect(isStorageError(refused) && refused.reason._tag).toBe("SchemaTooNew")
      const tables = yield* withAdmin((admin) =>
        admin<{ readonly table_name: string }>`
          SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema}`
      )
      expect(tables.map((table) => table.table_name)).toEqual(["ratchet_schema"])
    })
  })

  it.effect("lets several stores migrate one fresh schema at the same time", () => {
    const schema = freshSchema()
    return Effect.gen(function*() {
      const opened = yield* Effect.all(
        Array.from({ length: 4 }, (_, index) =>
          Effect.scoped(Effect.gen(function*() {
            const context = yield* Layer.build(storeIn(schema))
            const store = Context.get(context, EventStore.EventStore)
            return yield* store.append({
              ...task(`t-${index}`),
              expectedVersion: 0,
              epoch: null,
              operationId: `op-${index}`,
              events: [created(`t-${index}`)]
            })
          }))),
        { concurrency: "unbounded" }
      )
      expect(opened.map((result) => result.version)).toEqual([1, 1, 1, 1])
      expect(new Set(opened.map((result) => result.firstLsn)).size).toBe(4)
      const [version] = yield* withAdmin((admin) =>
        admin<{ readonly version: number | string }>`SELECT version FROM ${admin(schema)}.ratchet_schema`
      )
      expect(Number(version?.version)).toBe(Migrations.latestVersion)
    })
  })

  // Live: the retry's backoff sleeps on the real clock.
  it.live("retries a write transaction on serialisation failures, from BEGIN, at most maxAttempts times", () =>
    Effect.gen(function*() {
      const dialect = yield* SqlDialect.SqlDialect
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE probe (attempt INTEGER NOT NULL)`
      const raise = (code: string) => sql.unsafe(`DO $$ BEGIN RAISE EXCEPTION 'injected' USING ERRCODE = '${code}'; END $$`)
      const rows = Effect.map(sql<{ readonly attempt: number }>`SELECT attempt FROM probe ORDER BY attempt`, (found) =>
        found.map((row) => row.attempt))

      // Fails twice with 40001 and once with 40P01, after writing each time: only the last try commits.
      const attempts = yield* Ref.make(0)
      const transient = Effect.gen(function*() {
        const attempt = yield* Ref.updateAndGet(attempts, (n) => n + 1)
        yield* sql`INSERT INTO probe (attempt) VALUES (${attempt})`
        if (attempt <= 2) yield* raise("40001")
        if (attempt === 3) yield* raise("40P01")
        return attempt
      })
      expect(yield* dialect.writeTransaction("probe", transient)).toBe(4)
      expect(yield* rows).toEqual([4])

      // Always failing: exactly maxAttempts tries, then a typed, retryable Serialization error.
      yield* Ref.set(attempts, 0)
      const hopeless = Effect.gen(function*() {
        const attempt = yield* Ref.updateAndGet(attempts, (n) => n + 1)
        yield* sql`INSERT INTO probe (attempt) VALUES (${100 + attempt})`
        yield* raise("40001")
      })
      const exhausted = yield* Effect.flip(dialect.writeTransaction("probe", hopeless))
      expect(yield* Ref.get(attempts)).toBe(PostgresStore.maxAttempts)
      expect(exhausted).toMatchObject({ operation: "probe", reason: { _tag: "Serialization", code: "40001" } })
      expect(isStorageError(exhausted) && exhausted.isRetryable).toBe(true)
      expect(yield* rows).toEqual([4])

      // Neither a domain failure nor another SQLSTATE is retried; both roll back.
      yield* Ref.set(attempts, 0)
      const domain = Effect.zipRight(
        Effect.zipRight(Ref.update(attempts, (n) => n + 1), sql`INSERT INTO probe (attempt) VALUES (200)`),
        Effect.fail("a domain rejection" as const)
      )
      expect(yield* Effect.flip(dialect.writeTransaction("probe", domain))).toBe("a domain rejection")
      const unique = Effect.zipRight(Ref.update(attempts, (n) => n + 1), raise("23505"))
      expect(yield* Effect.flip(dialect.writeTransaction("probe", unique))).toMatchObject({
        reason: { _tag: "UniqueViolation", code: "23505" }
      })
      expect(yield* Ref.get(attempts)).toBe(2)
      expect(yield* rows).toEqual([4])
    }).pipe(Effect.provide(storeIn(freshSchema()))))

  it.effect("runs read transactions on a read-only snapshot", () =>
    Effect.gen(function*() {
      const dialect = yield* SqlDialect.SqlDialect
      const sql = yield* SqlClient.SqlClient
      const [level] = yield* dialect.readTransaction(
        "read",
        sql<{ readonly transaction_isolation: string }>`SHOW transaction_isolation`
      )
      expect(level?.transaction_isolation).toBe("repeatable read")
      const write = yield* Effect.flip(
        dialect.readTransaction("read", sql`INSERT INTO ratchet_blobs (digest, size, bytes) VALUES ('x', 0, '')`)
      )
      expect(isStorageError(write) && write.reason).toMatchObject({ _tag: "ReadOnly", code: "25006" })
    }).pipe(Effect.provide(storeIn(freshSchema()))))

  it.effect("a connection dropped after the first insert of a transaction is a typed Connection error; earlier events stay readable", () =>
    Effect.gen(function*() {
      const store = yield* EventStore.EventStore
      const dialect = yield* SqlDialect.SqlDialect
      const sql = yield* SqlClient.SqlClient
      const streamId = "t-dropped"
      const committed = yield* store.append({
        ...task(streamId),
        expectedVersion: 0,
        epoch: null,
        operationId: "op-before",
        events: [created(streamId), Events.interviewBegun()]
      })
      yield* sql`CREATE TABLE probe (id INTEGER NOT NULL)`

      const dropped = yield* Effect.flip(dialect.writeTransaction(
        "append",
        Effect.gen(function*() {
          yield* sql`INSERT INTO probe (id) VALUES (1)`
          yield* dropOwnConnection(sql)
          yield* sql`INSERT INTO probe (id) VALUES (2)`
        })
      ))
      expect(isStorageError(dropped)).toBe(true)
      expect(dropped).toMatchObject({ operation: "append", reason: { _tag: "Connection" } })
      expect(dropped.message).toContain("reachable")

      // The server rolled the transaction back; everything committed before is intact and readable.
      expect(yield* sql`SELECT id FROM probe`).toEqual([])
      const events = yield* readAll(streamId)
      expect(events.map((stored) => stored.event._tag)).toEqual(["TaskCreated", "InterviewBegun"])
      expect(yield* store.head(streamId)).toMatchObject({ version: 2, lastLsn: committed.lastLsn })
    }).pipe(Effect.provide(storeIn(freshSchema()))))

  it.effect("an append whose connection drops before COMMIT fails typed, lands nothing, and can be retried", () => {
    const schema = freshSchema()
    return Effect.gen(function*() {
      const armed = yield* Ref.make(false)
      // The engine's own dialect, with a fault injected between the append's last statement and COMMIT.
      const faultyDialect = Layer.effect(
        SqlDialect.SqlDialect,
        Effect.gen(function*() {
          const dialect = yield* SqlDialect.SqlDialect
          const sql = yield* SqlClient.SqlClient
          const fault = Effect.whenEffect(dropOwnConnection(sql), Ref.getAndSet(armed, false))
          return {
            ...dialect,
            writeTransaction: (operation, effect) => dialect.writeTransaction(operation, Effect.tap(effect, () => fault))
          } satisfies SqlDialect.Service
        })
      )
      // Fresh: layers are memoised by reference, and the engine's layer already contains SqlStore.layer.
      const faulty = Layer.fresh(SqlStore.layer).pipe(Layer.provide(faultyDialect), Layer.provide(storeIn(schema)))

      yield* Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        const streamId = "t-commit"
        const request = (version: number, operationId: string) => ({
          ...task(streamId),
          expectedVersion: version,
          epoch: null,
          operationId,
          events: version === 0 ? [created(streamId)] : [Events.interviewBegun()]
        })
        const first = yield* store.append(request(0, "op-1"))

        yield* Ref.set(armed, true)
        const dropped = yield* Effect.flip(store.append(request(1, "op-2")))
        expect(dropped).toMatchObject({ _tag: "@ratchet/storage/StorageError", reason: { _tag: "Connection" } })

        // The pool learns that the dropped connection is dead when its error event arrives, which on
        // a busy machine can be after the next call has taken it: that call fails typed, as
        // `Connection`, and the error's own advice is to retry. So do the calls below, a few times.
        const afterDrop = <A, E, R>(call: Effect.Effect<A, E, R>) =>
          Effect.retry(call, { times: 3, while: (error) => isStorageError(error) && error.reason._tag === "Connection" })
        expect(yield* afterDrop(store.head(streamId))).toMatchObject({ version: 1, lastLsn: first.lastLsn })
        expect((yield* afterDrop(readAll(streamId))).map((stored) => stored.event._tag)).toEqual(["TaskCreated"])

        // Retrying the same operation lands it once, however many tries the dead connection costs.
        const retried = yield* afterDrop(store.append(request(1, "op-2")))
        expect(retried).toMatchObject({ version: 2, replayed: false })
        expect(retried.firstLsn).toBeGreaterThan(first.lastLsn)
        expect((yield* readAll(streamId)).map((stored) => stored.version)).toEqual([1, 2])
      }).pipe(Effect.provide(faulty))
    })
  })

  it.effect("configures itself from RATCHET_DATABASE_URL and RATCHET_DATABASE_SCHEMA", () => {
    const schema = freshSchema()
    return Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [path] = yield* sql<{ readonly search_path: string }>`SHOW search_path`
      expect(path?.search_path).toBe(schema)
      const store = yield* EventStore.EventStore
      expect(yield* store.head("t-none")).toBeNull()
    }).pipe(
      Effect.provide(PostgresStore.layerConfig),
      Effect.withConfigProvider(
        ConfigProvider.fromMap(new Map([["RATCHET_DATABASE_URL", url], ["RATCHET_DATABASE_SCHEMA", schema]]))
      )
    )
  })
})
