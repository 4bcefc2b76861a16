/**
 * Faults of the SQLite store, caused for real: each one must surface as a typed `StorageError` (or
 * `InvalidRequest`) a person can act on, never as a defect, and every event committed before it
 * must still be there and readable.
 *
 * What each group proves, and what it does not:
 * - classify: the mapping from better-sqlite3's result codes to reasons, from hand-written fake
 *   driver errors (no database), including the rejected set (codes that must NOT be mistaken for
 *   a unique violation, non-Error values).
 * - corrupted file: a file that is not a database, and a store whose header or schema page was
 *   overwritten, fail to open with `Corrupt` and are not modified by the attempt. Those two damage
 *   a *copy*: they prove that damage is reported, not that events survive it (an image without its
 *   header has nothing left to read). The page test is the one about survival: it overwrites, byte
 *   for byte, the b-tree leaf page that holds only the newest events (found by walking the file's
 *   b-tree, so it is deterministic), and shows the older events still read back, the newer ones
 *   fail `Corrupt` instead of being skipped or invented.
 * - read-only: root ignores file permissions, so when the test runs as root (as CI does) the
 *   OS-level cases drop this process's effective uid and gid to nobody (65534) around the store,
 *   and restore them after; as any other user chmod alone does it. A read-only file opens and
 *   reads, and its append fails `ReadOnly`; a read-only directory cannot even be opened (SQLite
 *   must create the WAL index beside the file) and fails `ReadOnly`. The in-process case uses `PRAGMA query_only`, which makes SQLite answer
 *   SQLITE_READONLY on the store's own connection, to show the append writes nothing and the
 *   store recovers once writable again.
 * - full disk: `PRAGMA max_page_count` caps the file at its current size; SQLite then answers
 *   SQLITE_FULL exactly as on a full disk.
 * - damaged rows: JSON edited by hand in the event log and in a task summary.
 * - newer schema: a recorded schema version above this build's.
 * - hostile requests: identifiers, numbers and sizes no caller should send.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import * as Migrations from "@ratchet/storage/Migrations"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as StorageError from "@ratchet/storage/StorageError"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SqliteStore from "../src/SqliteStore.js"

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const filename = "store.db"
const projectId = "p1"

const directories: Array<string> = []
const freshDirectory = (): string => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-faults-"))
  directories.push(directory)
  return directory
}
afterAll(() => {
  for (const directory of directories) {
    fs.chmodSync(directory, 0o700)
    fs.rmSync(directory, { recursive: true, force: true })
  }
})

const open = (directory: string) => SqliteStore.layer({ directory, filename })

/** Runs `effect` against the store in `directory`, opened for the effect and closed after it. */
const withStore = <A, E>(directory: string, effect: Effect.Effect<A, E, SqliteStore.Services>) =>
  Effect.provide(effect, open(directory))

const actor = { kind: "agent", id: "faults" } as const

const taskCreated = (taskId: string): Event.Event =>
  Event.make<typeof Event.TaskCreated.Type>({
    _tag: "TaskCreated",
    actor: { kind: "user", id: "faults" },
    at: 1,
    taskId,
    projectId,
    goal: "Show that every storage fault is typed",
    slug: taskId
  })

const questionAsked = (n: number, text = `Question ${n}?`): Event.Event =>
  Event.make<typeof Event.QuestionAsked.Type>({
    _tag: "QuestionAsked",
    actor,
    at: 1 + n,
    questionId: `q${n}`,
    text,
    blocking: false
  })

const intentRecorded = (n: number, description: string): Event.Event =>
  Event.make<typeof Event.IntentRecorded.Type>({
    _tag: "IntentRecorded",
    actor,
    at: 1 + n,
    intentId: `intent-${n}`,
    runId: "run-1",
    stepId: "step-1",
    attempt: 1,
    description
  })

/** Appends `events` to a new stream, one append each, and returns the stored LSNs. */
const appendEach = (streamId: string, events: ReadonlyArray<Event.Event>) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const lsns: Array<number> = []
    for (const [index, event] of events.entries()) {
      const result = yield* store.append({
        projectId,
        streamId,
        expectedVersion: index,
        epoch: null,
        operationId: `${streamId}-${index}`,
        events: [event]
      })
      lsns.push(result.lastLsn)
    }
    return lsns
  })

/** A new stream of a task and `questions` questions: `1 + questions` events. */
const task = (streamId: string, questions: number) =>
  appendEach(streamId, [taskCreated(streamId), ...Array.from({ length: questions }, (_, n) => questionAsked(n + 1))])

const readAll = (streamId: string, range: { readonly fromLsn?: number; readonly toLsn?: number } = {}) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(Stream.runCollect(store.read({ streamId, ...range })), Chunk.toReadonlyArray))

/** Reads a stream to its end or its first failure: the events yielded, then the failure if any. */
const readUntilFailure = (streamId: string) =>
  Effect.flatMap(EventStore.EventStore, (store) =>
    Effect.map(Stream.runCollect(Stream.either(store.read({ streamId }))), (chunk) => {
      const items = Chunk.toReadonlyArray(chunk)
      const events = items.flatMap((item) => Either.isRight(item) ? [item.right] : [])
      const failure = items.flatMap((item) => Either.isLeft(item) ? [item.left] : [])[0]
      return { events, failure }
    }))

/** The typed failure of an exit; fails the test on success or on a defect. */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got success: ${JSON.stringify(exit.value)}`)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw new Error(`expected a typed failure, got a defect:\n${Cause.pretty(exit.cause)}`)
  return failure.value
}

/** What each reason's message must tell a person to do (from the port's advice, by hand). */
const advice: Readonly<Record<StorageError.Reason["_tag"], RegExp>> = {
  Connection: /Check that the store is reachable/,
  LockTimeout: /retry, or find the process that holds it/,
  Serialization: /safe to retry/,
  UniqueViolation: /read the current state before writing again/,
  ReadOnly: /Make the store writable by this user/,
  Full: /Free disk space \(or raise the database's size limit\)/,
  Corrupt: /restore the store from a backup/,
  SchemaTooNew: /upgrade Ratchet\. Nothing was written/,
  Unknown: /--verbose/
}

/** Asserts a `StorageError` of `reason` (and `code`, when given) whose message says what to do. */
const expectStorageError = (
  error: unknown,
  reason: StorageError.Reason["_tag"],
  code?: string | null
): StorageError.StorageError => {
  expect(error).toBeInstanceOf(StorageError.StorageError)
  const storageError = error as StorageError.StorageError
  expect(storageError._tag).toBe("@ratchet/storage/StorageError")
  expect(storageError.reason._tag).toBe(reason)
  if (code !== undefined) expect(storageError.reason.code).toBe(code)
  expect(storageError.message).toMatch(advice[reason])
  return storageError
}

const filesOf = (directory: string): ReadonlyArray<string> => fs.readdirSync(directory).sort()

/** The main file's bytes; only meaningful after the store is closed (the WAL folded back). */
const imageOf = (directory: string): Buffer => fs.readFileSync(path.join(directory, filename))

// ---------------------------------------------------------------------------------------------
// classify: fake driver errors, no database
// ---------------------------------------------------------------------------------------------

/** better-sqlite3 throws `SqliteError`, an Error with the extended result code in `code`. */
const sqliteError = (code: string, message: string): Error => Object.assign(new Error(message), { name: "SqliteError", code })
/** What `@effect/sql-sqlite-node` fails with: the driver's error as the `cause` of an `SqlError`. */
const wrapped = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })
/** What Node's fs fails with. */
const errnoError = (code: string, message: string): Error => Object.assign(new Error(`${code}: ${message}`), { code })

describe("classify maps driver failures to StorageError (fake errors, no database)", () => {
  type Row = readonly [name: string, cause: unknown, reason: StorageError.Reason["_tag"], code: string | null, retryable: boolean]
  const rows: ReadonlyArray<Row> = [
    ["SQLITE_BUSY", wrapped(sqliteError("SQLITE_BUSY", "database is locked")), "LockTimeout", "SQLITE_BUSY", true],
    ["SQLITE_BUSY_TIMEOUT", wrapped(sqliteError("SQLITE_BUSY_TIMEOUT", "database is locked")), "LockTimeout", "SQLITE_BUSY_TIMEOUT", true],
    ["SQLITE_BUSY_RECOVERY", wrapped(sqliteError("SQLITE_BUSY_RECOVERY", "database is locked")), "LockTimeout", "SQLITE_BUSY_RECOVERY", true],
    // A stale snapshot is not a lock held too long: the transaction lost a race and is safe to
    // run again at once, which is what Serialization says (LockTimeout would send a person
    // looking for a process that holds the lock).
    ["SQLITE_BUSY_SNAPSHOT", wrapped(sqliteError("SQLITE_BUSY_SNAPSHOT", "database is locked")), "Serialization", "SQLITE_BUSY_SNAPSHOT", true],
    ["SQLITE_LOCKED", wrapped(sqliteError("SQLITE_LOCKED", "database table is locked")), "LockTimeout", "SQLITE_LOCKED", true],
    ["SQLITE_FULL", wrapped(sqliteError("SQLITE_FULL", "database or disk is full")), "Full", "SQLITE_FULL", false],
    ["SQLITE_READONLY", wrapped(sqliteError("SQLITE_READONLY", "attempt to write a readonly database")), "ReadOnly", "SQLITE_READONLY", false],
    ["SQLITE_READONLY_DIRECTORY", wrapped(sqliteError("SQLITE_READONLY_DIRECTORY", "attempt to write a readonly database")), "ReadOnly", "SQLITE_READONLY_DIRECTORY", false],
    ["SQLITE_READONLY_DBMOVED", wrapped(sqliteError("SQLITE_READONLY_DBMOVED", "attempt to write a readonly database")), "ReadOnly", "SQLITE_READONLY_DBMOVED", false],
    ["SQLITE_CORRUPT", wrapped(sqliteError("SQLITE_CORRUPT", "database disk image is malformed")), "Corrupt", "SQLITE_CORRUPT", false],
    ["SQLITE_CORRUPT_INDEX", wrapped(sqliteError("SQLITE_CORRUPT_INDEX", "database disk image is malformed")), "Corrupt", "SQLITE_CORRUPT_INDEX", false],
    ["SQLITE_NOTADB", wrapped(sqliteError("SQLITE_NOTADB", "file is not a database")), "Corrupt", "SQLITE_NOTADB", false],
    ["SQLITE_CONSTRAINT_UNIQUE", wrapped(sqliteError("SQLITE_CONSTRAINT_UNIQUE", "UNIQUE constraint failed: ratchet_events.stream_id")), "UniqueViolation", "SQLITE_CONSTRAINT_UNIQUE", false],
    ["SQLITE_CONSTRAINT_PRIMARYKEY", wrapped(sqliteError("SQLITE_CONSTRAINT_PRIMARYKEY", "UNIQUE constraint failed: ratchet_events.lsn")), "UniqueViolation", "SQLITE_CONSTRAINT_PRIMARYKEY", false],
    // Other constraints are not "a row with this key already exists".
    ["SQLITE_CONSTRAINT_CHECK", wrapped(sqliteError("SQLITE_CONSTRAINT_CHECK", "CHECK constraint failed: id = 1")), "Unknown", "SQLITE_CONSTRAINT_CHECK", false],
    ["SQLITE_CONSTRAINT_FOREIGNKEY", wrapped(sqliteError("SQLITE_CONSTRAINT_FOREIGNKEY", "FOREIGN KEY constraint failed")), "Unknown", "SQLITE_CONSTRAINT_FOREIGNKEY", false],
    ["SQLITE_CONSTRAINT_NOTNULL", wrapped(sqliteError("SQLITE_CONSTRAINT_NOTNULL", "NOT NULL constraint failed: ratchet_events.payload")), "Unknown", "SQLITE_CONSTRAINT_NOTNULL", false],
    ["SQLITE_CANTOPEN", wrapped(sqliteError("SQLITE_CANTOPEN", "unable to open database file")), "Connection", "SQLITE_CANTOPEN", true],
    ["SQLITE_MISMATCH (no reason of its own)", wrapped(sqliteError("SQLITE_MISMATCH", "datatype mismatch")), "Unknown", "SQLITE_MISMATCH", false],
    ["SQLITE_IOERR_WRITE", wrapped(sqliteError("SQLITE_IOERR_WRITE", "disk I/O error")), "Unknown", "SQLITE_IOERR_WRITE", false],
    ["an unwrapped SqliteError", sqliteError("SQLITE_FULL", "database or disk is full"), "Full", "SQLITE_FULL", false],
    ["a plain object with a code", { code: "SQLITE_READONLY", message: "attempt to write a readonly database" }, "ReadOnly", "SQLITE_READONLY", false],
    ["a code two causes deep", wrapped(new Error("statement failed", { cause: sqliteError("SQLITE_CORRUPT", "database disk image is malformed") })), "Corrupt", "SQLITE_CORRUPT", false],
    ["ENOSPC from the file system", errnoError("ENOSPC", "no space left on device, write"), "Full", "ENOSPC", false],
    ["EROFS from the file system", errnoError("EROFS", "read-only file system, mkdir"), "ReadOnly", "EROFS", false],
    ["EACCES from the file system", errnoError("EACCES", "permission denied, mkdir"), "ReadOnly", "EACCES", false],
    ["an Error without a code", new Error("something broke"), "Unknown", null, false],
    ["a SqlError without a driver cause", new SqlError({ cause: undefined, message: "Failed to execute statement" }), "Unknown", null, false],
    ["a string", "boom", "Unknown", null, false],
    ["null", null, "Unknown", null, false],
    ["undefined", undefined, "Unknown", null, false],
    ["a number", 42, "Unknown", null, false],
    ["an empty object", {}, "Unknown", null, false],
    ["a non-string code", { code: 5, message: "SQLITE_BUSY as a number" }, "Unknown", null, false]
  ]

  it.each(rows)("%s", (_name, cause, reason, code, retryable) => {
    const error = SqliteStore.classify("append", cause)
    expectStorageError(error, reason, code)
    expect(error.operation).toBe("append")
    expect(error.isRetryable).toBe(retryable)
    expect(error.message).toMatch(/^Storage append failed/)
  })

  it("keeps the driver's own words in the detail", () => {
    const error = SqliteStore.classify("read", wrapped(sqliteError("SQLITE_CORRUPT", "database disk image is malformed")))
    expect(error.reason.detail).toContain("database disk image is malformed")
    expect(error.message).toContain("[SQLITE_CORRUPT]")
    expect(SqliteStore.classify("read", "boom").reason.detail).toContain("boom")
  })

  it("passes a StorageError through unchanged", () => {
    const original = StorageError.make("migrate", StorageError.SchemaTooNew.make({ code: null, detail: "version 99" }))
    expect(SqliteStore.classify("append", original)).toBe(original)
  })
})

// ---------------------------------------------------------------------------------------------
// A corrupted database file
// ---------------------------------------------------------------------------------------------

/** Reads a SQLite varint at `offset`. */
const varint = (image: Uint8Array, offset: number): { readonly value: number; readonly next: number } => {
  let value = 0
  for (let index = 0; index < 8; index++) {
    const byte = image[offset + index] ?? 0
    value = value * 128 + (byte & 0x7f)
    if ((byte & 0x80) === 0) return { value, next: offset + index + 1 }
  }
  return { value: value * 256 + (image[offset + 8] ?? 0), next: offset + 9 }
}

/** The page size recorded in a database header (the value 1 means 65536). */
const pageSizeOf = (image: Buffer): number => image.readUInt16BE(16) === 1 ? 65_536 : image.readUInt16BE(16)

interface Leaf {
  readonly page: number
  readonly rowids: ReadonlyArray<number>
}

/** The leaf pages of the table b-tree rooted at `root`, in key order, with the rowids each holds. */
const leavesOf = (image: Buffer, pageSize: number, root: number): ReadonlyArray<Leaf> => {
  const start = (root - 1) * pageSize
  const header = root === 1 ? 100 : start
  const type = image[header]
  const cells = image.readUInt16BE(header + 3)
  if (type === 0x0d) {
    const rowids: Array<number> = []
    for (let cell = 0; cell < cells; cell++) {
      const size = varint(image, start + image.readUInt16BE(header + 8 + 2 * cell))
      rowids.push(varint(image, size.next).value)
    }
    return [{ page: root, rowids }]
  }
  if (type === 0x05) {
    const children: Array<number> = []
    for (let cell = 0; cell < cells; cell++) children.push(image.readUInt32BE(start + image.readUInt16BE(header + 12 + 2 * cell)))
    children.push(image.readUInt32BE(header + 8))
    return children.flatMap((child) => leavesOf(image, pageSize, child))
  }
  throw new Error(`page ${root} is not a table b-tree page (type byte ${String(type)})`)
}

describe("a corrupted database file", () => {
  it.effect("a file that is not a database: opening fails Corrupt (SQLITE_NOTADB) and leaves the file alone", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      const text = "These are somebody's notes, not a Ratchet store.\n".repeat(200)
      fs.writeFileSync(path.join(directory, filename), text)
      const exit = yield* Effect.exit(withStore(directory, EventStore.EventStore))
      expectStorageError(failureOf(exit), "Corrupt", "SQLITE_NOTADB")
      expect(imageOf(directory).toString("utf8")).toBe(text)
    }))

  it.effect("a copy whose header or schema page was overwritten fails to open Corrupt; the original still reads", () =>
    Effect.gen(function*() {
      const original = freshDirectory()
      const before = yield* withStore(original, Effect.zipRight(task("t1", 4), readAll("t1")))
      expect(before.map((stored) => stored.lsn)).toEqual([1, 2, 3, 4, 5])

      // The first 16 bytes are the magic string "SQLite format 3\0".
      const header = freshDirectory()
      const headerImage = Buffer.from(imageOf(original))
      headerImage.fill(0x5a, 0, 16)
      fs.writeFileSync(path.join(header, filename), headerImage)
      const headerExit = yield* Effect.exit(withStore(header, readAll("t1")))
      expectStorageError(failureOf(headerExit), "Corrupt", "SQLITE_NOTADB")
      expect(imageOf(header).equals(headerImage)).toBe(true)

      // Page 1 after the 100-byte header holds sqlite_schema: the table definitions.
      const schema = freshDirectory()
      const schemaImage = Buffer.from(imageOf(original))
      const pageSize = pageSizeOf(schemaImage)
      schemaImage.fill(0xa5, 100, pageSize)
      fs.writeFileSync(path.join(schema, filename), schemaImage)
      const schemaExit = yield* Effect.exit(withStore(schema, readAll("t1")))
      const schemaError = expectStorageError(failureOf(schemaExit), "Corrupt")
      expect(schemaError.reason.code).toMatch(/^SQLITE_(CORRUPT|NOTADB)/)

      const after = yield* withStore(original, readAll("t1"))
      expect(after).toEqual(before)
    }))

  it.effect("a damaged page of newer events: the older events still read back, the damaged ones fail Corrupt", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      const description = (n: number) => `Run the migration step ${n}: `.padEnd(1_500, "x")
      const setup = yield* withStore(
        directory,
        Effect.gen(function*() {
          const early = yield* task("early", 4)
          const late = yield* appendEach("late", [
            taskCreated("late"),
            ...Array.from({ length: 40 }, (_, n) => intentRecorded(n + 1, description(n + 1)))
          ])
          const sql = yield* SqlClient.SqlClient
          const root = yield* sql<{ rootpage: number }>`SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = 'ratchet_events'`
          return { early, late, root: root[0]?.rootpage ?? 0, earlyEvents: yield* readAll("early") }
        })
      )
      // Closing the only connection folded the WAL back into the file: the image is complete.
      expect(filesOf(directory)).not.toContain(`${filename}-wal`)
      const image = imageOf(directory)
      const pageSize = pageSizeOf(image)
      const leaves = leavesOf(image, pageSize, setup.root)
      const stored = leaves.flatMap((leaf) => leaf.rowids)
      expect(stored).toEqual([...setup.early, ...setup.late])
      expect(leaves.length).toBeGreaterThanOrEqual(3)
      const damaged = leaves[leaves.length - 1]!
      const firstDamaged = Math.min(...damaged.rowids)
      expect(firstDamaged).toBeGreaterThan(Math.max(...setup.early))
      expect(damaged.rowids.every((lsn) => setup.late.includes(lsn))).toBe(true)

      image.fill(0xa5, (damaged.page - 1) * pageSize, damaged.page * pageSize)
      fs.writeFileSync(path.join(directory, filename), image)

      yield* withStore(
        directory,
        Effect.gen(function*() {
          // The older stream never touches the damaged page.
          expect(yield* readAll("early")).toEqual(setup.earlyEvents)
          // The newer stream up to the damaged page reads back whole.
          const intact = yield* readAll("late", { toLsn: firstDamaged - 1 })
          expect(intact.map((event) => event.lsn)).toEqual(setup.late.filter((lsn) => lsn < firstDamaged))
          // Reading into the damaged page is a typed Corrupt error, never a defect or a silent gap.
          const exit = yield* Effect.exit(readAll("late"))
          expectStorageError(failureOf(exit), "Corrupt", "SQLITE_CORRUPT")
        })
      )
    }))
})

// ---------------------------------------------------------------------------------------------
// A read-only store
// ---------------------------------------------------------------------------------------------

const isRoot = process.getuid?.() === 0
const nobody = 65_534

/**
 * Runs `effect` with this process's effective user and group set to nobody (65534) when it runs
 * as root, so that file permissions apply to it; as any other user they apply already. The ids
 * are restored however the effect ends (the real and saved ids stay root, which is what lets the
 * effective ones come back). vitest runs each test file in a process of its own, and the tests of
 * a file one at a time, so nothing else runs as nobody meanwhile.
 */
const asUnprivileged = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  isRoot
    ? Effect.acquireUseRelease(
      Effect.sync(() => {
        process.setegid?.(nobody)
        process.seteuid?.(nobody)
        expect(process.geteuid?.()).toBe(nobody)
      }),
      () => effect,
      () =>
        Effect.sync(() => {
          process.seteuid?.(0)
          process.setegid?.(0)
        })
    )
    : effect

describe("a read-only store", () => {
  it.effect("a read-only file: the store opens and reads, the append fails ReadOnly and writes nothing", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      const before = yield* withStore(directory, Effect.zipRight(task("t1", 3), readAll("t1")))
      const image = imageOf(directory)
      fs.chmodSync(path.join(directory, filename), 0o444)
      // The directory stays writable (SQLite keeps the WAL index beside the file); only the file is read-only.
      fs.chmodSync(directory, 0o777)

      yield* asUnprivileged(withStore(
        directory,
        Effect.gen(function*() {
          const store = yield* EventStore.EventStore
          expect(yield* readAll("t1")).toEqual(before)
          expect(yield* store.head("t1")).toMatchObject({ version: 4, lastLsn: 4 })
          const exit = yield* Effect.exit(store.append({
            projectId,
            streamId: "t1",
            expectedVersion: 4,
            epoch: null,
            operationId: "t1-read-only",
            events: [questionAsked(4)]
          }))
          const error = expectStorageError(failureOf(exit), "ReadOnly")
          expect(error.reason.code).toMatch(/^SQLITE_READONLY/)
          expect(yield* readAll("t1")).toEqual(before)
        })
      ))

      fs.chmodSync(path.join(directory, filename), 0o644)
      expect(imageOf(directory).equals(image)).toBe(true)
      const after = yield* withStore(directory, readAll("t1"))
      expect(after).toEqual(before)
    }))

  it.effect("a read-only directory and file: opening fails ReadOnly; once writable again every event reads back", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      const before = yield* withStore(directory, Effect.zipRight(task("t1", 3), readAll("t1")))
      const image = imageOf(directory)
      const files = filesOf(directory)
      fs.chmodSync(path.join(directory, filename), 0o444)
      fs.chmodSync(directory, 0o555)

      const exit = yield* asUnprivileged(Effect.exit(withStore(directory, readAll("t1"))))
      const error = expectStorageError(failureOf(exit), "ReadOnly")
      expect(error.reason.code).toMatch(/^SQLITE_READONLY/)

      fs.chmodSync(directory, 0o700)
      fs.chmodSync(path.join(directory, filename), 0o644)
      expect(imageOf(directory).equals(image)).toBe(true)
      expect(filesOf(directory)).toEqual(files)
      const after = yield* withStore(directory, readAll("t1"))
      expect(after).toEqual(before)
    }))

  it.effect("a connection SQLite holds read-only (query_only): append fails ReadOnly, reads go on, writable again resumes", () =>
    withStore(
      freshDirectory(),
      Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        const sql = yield* SqlClient.SqlClient
        yield* task("t1", 2)
        const before = yield* readAll("t1")
        yield* sql`PRAGMA query_only = ON`
        const request: EventStore.AppendRequest = {
          projectId,
          streamId: "t1",
          expectedVersion: 3,
          epoch: null,
          operationId: "t1-while-read-only",
          events: [questionAsked(3)]
        }
        const exit = yield* Effect.exit(store.append(request))
        expectStorageError(failureOf(exit), "ReadOnly", "SQLITE_READONLY")
        expect(yield* readAll("t1")).toEqual(before)
        expect(yield* store.head("t1")).toMatchObject({ version: 3, lastLsn: 3 })

        yield* sql`PRAGMA query_only = OFF`
        const retried = yield* store.append(request)
        expect(retried).toEqual({ streamId: "t1", branch: "main", version: 4, firstLsn: 4, lastLsn: 4, replayed: false })
      })
    ))
})

// ---------------------------------------------------------------------------------------------
// A full disk
// ---------------------------------------------------------------------------------------------

describe("a full disk (PRAGMA max_page_count)", () => {
  it.effect("the append fails Full and writes nothing; earlier events read back; with room again appends resume", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      const big = Array.from({ length: 10 }, (_, n) => questionAsked(10 + n, `Why is the disk full ${n}? `.padEnd(4_000, "?")))
      const before = yield* withStore(
        directory,
        Effect.gen(function*() {
          const store = yield* EventStore.EventStore
          const sql = yield* SqlClient.SqlClient
          yield* task("t1", 3)
          const before = yield* readAll("t1")
          const pages = (yield* sql<{ page_count: number }>`PRAGMA page_count`)[0]?.page_count ?? 0
          yield* sql.unsafe(`PRAGMA max_page_count = ${pages}`)
          const request: EventStore.AppendRequest = {
            projectId,
            streamId: "t1",
            expectedVersion: 4,
            epoch: null,
            operationId: "t1-big",
            events: big
          }
          const exit = yield* Effect.exit(store.append(request))
          expectStorageError(failureOf(exit), "Full", "SQLITE_FULL")
          expect(yield* readAll("t1")).toEqual(before)
          expect(yield* store.head("t1")).toMatchObject({ version: 4, lastLsn: 4 })
          expect((yield* ReadModel.ReadModels.pipe(Effect.flatMap((models) => models.taskSummary("t1"))))?.version).toBe(4)

          yield* sql.unsafe(`PRAGMA max_page_count = 1073741823`)
          // The same operation id was never recorded, so it is a first attempt, not a replay.
          const retried = yield* store.append(request)
          expect(retried).toEqual({ streamId: "t1", branch: "main", version: 14, firstLsn: 5, lastLsn: 14, replayed: false })
          return before
        })
      )
      const after = yield* withStore(directory, readAll("t1"))
      expect(after.slice(0, 4)).toEqual(before)
      expect(after.map((stored) => stored.lsn)).toEqual(Array.from({ length: 14 }, (_, index) => index + 1))
    }))
})

// ---------------------------------------------------------------------------------------------
// Rows damaged by hand
// ---------------------------------------------------------------------------------------------

describe("rows damaged by hand", () => {
  it.effect("damaged event JSON: the stream yields the events before it, then fails Corrupt naming the LSN", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      const { damagedLsn, other } = yield* withStore(
        directory,
        Effect.gen(function*() {
          const a = yield* task("a", 4)
          yield* task("b", 2)
          const other = yield* readAll("b")
          const sql = yield* SqlClient.SqlClient
          const damagedLsn = a[2]!
          yield* sql`UPDATE ratchet_events SET payload = ${"{\"_tag\":"} WHERE lsn = ${damagedLsn}`
          return { damagedLsn, other }
        })
      )
      yield* withStore(
        directory,
        Effect.gen(function*() {
          const { events, failure } = yield* readUntilFailure("a")
          expect(events.map((stored) => stored.lsn)).toEqual([1, 2])
          const error = expectStorageError(failure, "Corrupt")
          expect(error.message).toContain(`LSN ${damagedLsn}`)
          expect(error.message).toContain("stream a")
          // A range that stops before the damage reads whole; the other stream is untouched.
          expect((yield* readAll("a", { toLsn: damagedLsn - 1 })).map((stored) => stored.lsn)).toEqual([1, 2])
          expect(yield* readAll("b")).toEqual(other)
          // A rebuild from the log cannot fold past the damage either.
          const rebuilt = yield* Effect.exit(ReadModel.ReadModels.pipe(Effect.flatMap((models) => models.rebuild("a"))))
          expect(expectStorageError(failureOf(rebuilt), "Corrupt").message).toContain(`LSN ${damagedLsn}`)
        })
      )
    }))

  it.effect("a payload that parses but is no event (unknown type) is Corrupt too, naming the LSN", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      yield* withStore(
        directory,
        Effect.gen(function*() {
          yield* task("a", 2)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ratchet_events SET payload = ${"{\"_tag\":\"Nope\",\"version\":1}"} WHERE lsn = 3`
        })
      )
      const { events, failure } = yield* withStore(directory, readUntilFailure("a"))
      expect(events.map((stored) => stored.lsn)).toEqual([1, 2])
      expect(expectStorageError(failure, "Corrupt").message).toContain("LSN 3")
    }))

  it.effect("a damaged task summary: taskSummary fails Corrupt naming the stream; the log and other tasks are fine", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      const { events, summaryB } = yield* withStore(
        directory,
        Effect.gen(function*() {
          yield* task("a", 2)
          yield* task("b", 2)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ratchet_task_summaries SET summary = ${"{\"projectId\":"} WHERE stream_id = 'a'`
          const models = yield* ReadModel.ReadModels
          return { events: yield* readAll("a"), summaryB: yield* models.taskSummary("b") }
        })
      )
      yield* withStore(
        directory,
        Effect.gen(function*() {
          const models = yield* ReadModel.ReadModels
          const store = yield* EventStore.EventStore
          const exit = yield* Effect.exit(models.taskSummary("a"))
          const error = expectStorageError(failureOf(exit), "Corrupt")
          expect(error.message).toContain("stream a")
          expect(yield* models.taskSummary("b")).toEqual(summaryB)
          expect(yield* readAll("a")).toEqual(events)
          // An append would fold onto the damaged row: it refuses, and writes nothing.
          const append = yield* Effect.exit(store.append({
            projectId,
            streamId: "a",
            expectedVersion: 3,
            epoch: null,
            operationId: "a-after-damage",
            events: [questionAsked(3)]
          }))
          expectStorageError(failureOf(append), "Corrupt")
          expect(yield* store.head("a")).toMatchObject({ version: 3, lastLsn: 3 })
          // The log is intact, so a rebuild still folds the task.
          const rebuilt = yield* models.rebuild("a")
          expect(rebuilt.summary?.version).toBe(3)
        })
      )
    }))
})

// ---------------------------------------------------------------------------------------------
// A store written by a newer schema
// ---------------------------------------------------------------------------------------------

describe("a store written by a newer schema", () => {
  it.effect("opening fails SchemaTooNew and writes nothing; the events are intact", () =>
    Effect.gen(function*() {
      const directory = freshDirectory()
      const before = yield* withStore(
        directory,
        Effect.gen(function*() {
          yield* task("t1", 2)
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ratchet_schema SET version = 99 WHERE id = 1`
          return yield* readAll("t1")
        })
      )
      const image = imageOf(directory)
      const files = filesOf(directory)

      for (let attempt = 0; attempt < 2; attempt++) {
        const exit = yield* Effect.exit(withStore(directory, readAll("t1")))
        const error = expectStorageError(failureOf(exit), "SchemaTooNew")
        expect(error.message).toContain("99")
        expect(imageOf(directory).equals(image)).toBe(true)
        expect(filesOf(directory)).toEqual(files)
      }

      // Put the version back by hand, through a bare client: every event is still there.
      const after = yield* Effect.provide(
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          yield* sql`UPDATE ratchet_schema SET version = ${Migrations.latestVersion} WHERE id = 1`
        }),
        SqliteClient.layer({ filename: path.join(directory, filename) })
      ).pipe(Effect.zipRight(withStore(directory, readAll("t1"))))
      expect(after).toEqual(before)
    }))
})

// ---------------------------------------------------------------------------------------------
// Hostile requests
// ---------------------------------------------------------------------------------------------

const hostileIds: ReadonlyArray<readonly [string, unknown]> = [
  ["a slash", "a/b"],
  ["a parent directory", ".."],
  ["a path escape", "../../etc/passwd"],
  ["a NUL byte", "a\u0000b"],
  ["10k characters", "x".repeat(10_000)],
  ["129 characters", "y".repeat(129)],
  ["an emoji", "task-🚀"],
  ["an empty string", ""],
  ["a space", "a b"],
  ["a newline", "a\nb"],
  ["SQL", "a'; DROP TABLE ratchet_events; --"],
  ["a number", 42],
  ["null", null]
]

const hostileNumbers: ReadonlyArray<readonly [string, number]> = [
  ["-1", -1],
  ["0.5", 0.5],
  ["NaN", Number.NaN],
  ["Infinity", Number.POSITIVE_INFINITY],
  ["2^53", 2 ** 53]
]

const expectInvalid = (exit: Exit.Exit<unknown, unknown>, field: string) => {
  const error = failureOf(exit)
  expect(error).toBeInstanceOf(EventStore.InvalidRequest)
  expect((error as EventStore.InvalidRequest)._tag).toBe("@ratchet/storage/InvalidRequest")
  expect((error as EventStore.InvalidRequest).field).toBe(field)
  const message = (error as EventStore.InvalidRequest).message
  expect(message).toContain(field)
  // Hostile input is quoted back cut short, never whole.
  expect(message.length).toBeLessThan(2_000)
}

/** What a hostile request could have written: the LSN counter and the row counts of every table. */
const footprint = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tables = ["ratchet_events", "ratchet_streams", "ratchet_branches", "ratchet_operations", "ratchet_task_summaries", "ratchet_intents"]
  const counts: Record<string, unknown> = {}
  for (const table of tables) counts[table] = (yield* sql.unsafe<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))[0]?.n
  counts["lsn"] = (yield* sql<{ value: number }>`SELECT value FROM ratchet_lsn WHERE id = 1`)[0]?.value
  return counts
})

const request = (overrides: Partial<Record<keyof EventStore.AppendRequest, unknown>>): EventStore.AppendRequest =>
  ({
    projectId,
    streamId: "t1",
    expectedVersion: 3,
    epoch: null,
    operationId: "hostile",
    events: [questionAsked(3)],
    ...overrides
  }) as EventStore.AppendRequest

describe("hostile requests: InvalidRequest naming the field, never a crash, nothing stored", () => {
  it.effect("identifiers in append, read, head, fork, branches and the read models", () =>
    withStore(
      freshDirectory(),
      Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        const models = yield* ReadModel.ReadModels
        yield* task("t1", 2)
        const before = yield* footprint
        for (const [, id] of hostileIds) {
          const hostile = id as string
          expectInvalid(yield* Effect.exit(store.append(request({ streamId: hostile }))), "streamId")
          expectInvalid(yield* Effect.exit(store.append(request({ projectId: hostile }))), "projectId")
          expectInvalid(yield* Effect.exit(store.append(request({ operationId: hostile }))), "operationId")
          expectInvalid(yield* Effect.exit(store.append(request({ branch: hostile }))), "branch")
          expectInvalid(yield* Effect.exit(Stream.runCollect(store.read({ streamId: hostile }))), "streamId")
          expectInvalid(yield* Effect.exit(Stream.runCollect(store.read({ streamId: "t1", branch: hostile }))), "branch")
          expectInvalid(yield* Effect.exit(store.head(hostile)), "streamId")
          expectInvalid(yield* Effect.exit(store.head("t1", hostile)), "branch")
          expectInvalid(yield* Effect.exit(store.fork({ streamId: hostile, atLsn: 1, branch: "b" })), "streamId")
          expectInvalid(yield* Effect.exit(store.fork({ streamId: "t1", atLsn: 1, branch: hostile })), "branch")
          expectInvalid(yield* Effect.exit(store.fork({ streamId: "t1", from: hostile, atLsn: 1, branch: "b" })), "from")
          expectInvalid(yield* Effect.exit(store.branches(hostile)), "streamId")
          expectInvalid(yield* Effect.exit(models.taskSummary(hostile)), "streamId")
          expectInvalid(yield* Effect.exit(models.lease(hostile, "t1")), "projectId")
          expectInvalid(yield* Effect.exit(models.rebuild(hostile)), "streamId")
        }
        expect(yield* footprint).toEqual(before)
        expect(yield* store.branches("t1")).toHaveLength(1)
      })
    ))

  it.effect("negative, fractional and unsafe versions, epochs and LSNs", () =>
    withStore(
      freshDirectory(),
      Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        yield* task("t1", 2)
        const before = yield* footprint
        for (const [, value] of hostileNumbers) {
          expectInvalid(yield* Effect.exit(store.append(request({ expectedVersion: value }))), "expectedVersion")
          expectInvalid(yield* Effect.exit(store.append(request({ epoch: value }))), "epoch")
          expectInvalid(yield* Effect.exit(Stream.runCollect(store.read({ streamId: "t1", fromLsn: value }))), "fromLsn")
          expectInvalid(yield* Effect.exit(Stream.runCollect(store.read({ streamId: "t1", toLsn: value }))), "toLsn")
          expectInvalid(yield* Effect.exit(store.fork({ streamId: "t1", atLsn: value, branch: "b" })), "atLsn")
        }
        // LSN 0 is no event; an LSN of another stream or past the head is not visible on this branch.
        expectInvalid(yield* Effect.exit(store.fork({ streamId: "t1", atLsn: 0, branch: "b" })), "atLsn")
        expectInvalid(yield* Effect.exit(store.fork({ streamId: "t1", atLsn: 999, branch: "b" })), "atLsn")
        expect(yield* footprint).toEqual(before)
        expect(yield* store.branches("t1")).toHaveLength(1)
      })
    ))

  it.effect("events that are no events, and a 10 MB event text", () =>
    withStore(
      freshDirectory(),
      Effect.gen(function*() {
        const store = yield* EventStore.EventStore
        yield* task("t1", 2)
        const before = yield* footprint
        expectInvalid(yield* Effect.exit(store.append(request({ events: [] }))), "events")
        expectInvalid(yield* Effect.exit(store.append(request({ events: "QuestionAsked" }))), "events")
        expectInvalid(yield* Effect.exit(store.append(request({ events: null }))), "events")
        expectInvalid(yield* Effect.exit(store.append(request({ events: [{ _tag: "Nope", version: 1 }] }))), "events[0]")
        expectInvalid(yield* Effect.exit(store.append(request({ events: [questionAsked(3), null] }))), "events[1]")
        expectInvalid(
          yield* Effect.exit(store.append(request({ events: [{ ...questionAsked(3), version: 2 }] }))),
          "events[0]"
        )
        const tenMegabytes = "Why? ".repeat(2 * 1024 * 1024)
        expectInvalid(yield* Effect.exit(store.append(request({ events: [questionAsked(3, tenMegabytes)] }))), "events[0]")
        expectInvalid(
          yield* Effect.exit(store.append(request({ events: [intentRecorded(3, tenMegabytes)] }))),
          "events[0]"
        )
        expect(yield* footprint).toEqual(before)
        // The store is still usable after all of it.
        const next = yield* store.append(request({ operationId: "t1-after-hostile" }))
        expect(next).toMatchObject({ version: 4, firstLsn: 4, replayed: false })
      })
    ))
})
