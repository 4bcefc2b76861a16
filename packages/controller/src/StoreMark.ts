/**
 * The store's high-water mark as this workspace saw it: the last append it saw committed, kept in
 * the checkout's own directory, outside the store (ADR 0023).
 *
 * A store can go back without saying so. SQLite keeps every commit since its last checkpoint only
 * in `ratchet.db-wal`; after a crash, a deleted, truncated or damaged WAL rolls the database back
 * to an older state, which it then serves as if nothing had happened, and a deleted `ratchet.db`
 * is created afresh, empty, by the next command. A store restored from an older backup (or a
 * dropped PostgreSQL schema, created again by the migrations) does the same. Believed, such a
 * store makes a run start a plain step again whose effect already happened.
 *
 * So every append this process commits moves the mark (the stream, branch, LSN and operation id of
 * its last event), and every command that opens the store for a project checks, before it reads or
 * writes anything, that the event at the mark's LSN is there with that operation id. If it is not,
 * the command refuses with {@link StoreBehind}, naming what was lost and how to go on; a missing or
 * empty SQLite file is refused before it is opened, so it is never created again behind the user's
 * back. `ratchet init --force` forgets the mark, which is how a person deliberately starts over.
 *
 * Cost: the mark is written after the commit, as a small file written aside and renamed over the
 * old one, never synced. One append (one step of a steady run) adds a read, a write and a rename of
 * a few hundred bytes and no fsync. Unsynced is enough for what it guards against: a lost WAL
 * after a process crash leaves the page cache, and with it the mark, intact; a power loss may
 * lose the mark's last update, which only makes the check weaker, never wrong, because the mark
 * is only ever written after the commit it names was durable.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as EventStore from "@ratchet/storage/EventStore"
import type { StorageError } from "@ratchet/storage/StorageError"

/**
 * The last append this workspace saw committed to one store.
 *
 * @since 0.2.0
 * @category models
 */
export const Mark = Schema.Struct({
  streamId: Schema.String,
  branch: Schema.String,
  /** The last LSN of the append. */
  lsn: Schema.Int,
  operationId: Schema.String,
  /** When it was committed (ISO 8601), for the message. */
  at: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type Mark = typeof Mark.Type

const MarkFile = Schema.Struct({
  version: Schema.Literal(1),
  /** Keyed by {@link Location.key}: a workspace may use several stores (homes, engines). */
  stores: Schema.Record({ key: Schema.String, value: Mark })
})

/**
 * Which store a command opened: a key naming it without credentials (the SQLite file's absolute
 * path, or PostgreSQL's host, database and schema) and, for SQLite, the file, which is checked
 * before it is opened.
 *
 * @since 0.2.0
 * @category models
 */
export interface Location {
  readonly key: string
  readonly file: string | null
}

/**
 * The store the environment selects: PostgreSQL when `RATCHET_DATABASE_URL` is set (named by its
 * host, database and `RATCHET_DATABASE_SCHEMA`, never its credentials), else SQLite's
 * `ratchet.db` in `home` (`$RATCHET_HOME`, expanded).
 *
 * @since 0.2.0
 * @category constructors
 */
export const locationOf = (home: string, env: NodeJS.ProcessEnv = process.env): Location => {
  const url = env["RATCHET_DATABASE_URL"] ?? ""
  if (url === "") {
    const file = path.join(path.resolve(home), "ratchet.db")
    return { key: file, file }
  }
  const schema = env["RATCHET_DATABASE_SCHEMA"] ?? "public"
  try {
    const parsed = new URL(url)
    return { key: `postgres://${parsed.host}${parsed.pathname}#${schema}`, file: null }
  } catch {
    return { key: `postgres#${schema}`, file: null }
  }
}

/**
 * The store is behind what this workspace saw it commit: `missing` (no database file, or an empty
 * one), `behind` (the event the mark names is not there) or `replaced` (another event is at its
 * LSN). Nothing was written to it, and nothing else read.
 *
 * @since 0.2.0
 * @category errors
 */
export class StoreBehind extends Schema.TaggedError<StoreBehind>()("@ratchet/controller/StoreBehind", {
  reason: Schema.Literal("missing", "behind", "replaced"),
  store: Schema.String,
  mark: Mark,
  /** The stream's newest LSN in the store as it is now, or null when it has none of it. */
  foundLsn: Schema.NullOr(Schema.Int),
  fix: Schema.String
}) {
  override get message(): string {
    const seen = `this workspace saw it commit task ${this.mark.streamId} up to LSN ${this.mark.lsn} (operation ${this.mark.operationId}, ${this.mark.at})`
    const what = this.reason === "missing"
      ? `The store ${this.store} is missing or empty, but ${seen}. It was not created again.`
      : this.reason === "replaced"
      ? `The store ${this.store} is not the one ${seen}: another event is at that LSN (a database replaced or restored from elsewhere?).`
      : `The store ${this.store} lost committed events: ${seen}, and it now ends ${
        this.foundLsn === null ? `with no event of that task` : `that task at LSN ${this.foundLsn}`
      } (after a crash, a deleted, truncated or damaged ratchet.db-wal rolls SQLite back like this).`
    return `${what} Nothing was written and nothing ran, so nothing runs twice. ${this.fix}`
  }
}

/** The fix for a store that went back: restore it, or start over knowingly. */
const fixFor = (reason: StoreBehind["reason"], sqlite: boolean): string => {
  const restore = sqlite
    ? "Restore ratchet.db and ratchet.db-wal together from a backup (or put back the WAL that was removed)"
    : "Restore the store from a backup that has those events"
  const over = reason === "missing"
    ? "or, to start over with an empty store on purpose, run: ratchet init --force"
    : "or, to go on from what the store still holds (the steps that ran after it are not recorded: check the work tree before running again), run: ratchet init --force"
  return `${restore}; ${over}. See the recovery guide, "A store that went back".`
}

/**
 * The mark file of a checkout's own directory.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fileOf = (localDir: string): string => path.join(localDir, "store-mark.json")

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(MarkFile))

/**
 * Every store's mark in `file`; none when it is missing or unreadable (a damaged mark is replaced
 * by the next append: the check can only be weaker for it, never wrong).
 *
 * @since 0.2.0
 * @category constructors
 */
export const read = (file: string): Readonly<Record<string, Mark>> => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch {
    return {}
  }
  const decoded = decodeFile(text)
  return decoded._tag === "Right" ? decoded.right.stores : {}
}

/** Replaces `file` with `stores`: written aside, then renamed over it (never half written, not synced). */
const save = (file: string, stores: Readonly<Record<string, Mark>>): void => {
  const aside = `${file}.${process.pid}.tmp`
  fs.writeFileSync(aside, JSON.stringify({ version: 1, stores }), { mode: 0o600 })
  fs.renameSync(aside, file)
}

/**
 * Records `mark` for `key` unless the file already has a later one (another process of this
 * workspace wrote after us). A failure to write is ignored: the commit stands, and the check is
 * only weaker for a missing mark.
 *
 * @since 0.2.0
 * @category constructors
 */
export const record = (file: string, key: string, mark: Mark): void => {
  try {
    const stores = read(file)
    const known = stores[key]
    if (known !== undefined && known.lsn >= mark.lsn) return
    save(file, { ...stores, [key]: mark })
  } catch {
    // A read-only or full checkout: the append is committed all the same.
  }
}

/**
 * Forgets what this workspace saw of the store at `key` (`ratchet init --force`). Returns the mark
 * it forgot, or null.
 *
 * @since 0.2.0
 * @category constructors
 */
export const forget = (file: string, key: string): Mark | null => {
  const stores = read(file)
  const known = stores[key]
  if (known === undefined) return null
  const { [key]: _forgotten, ...rest } = stores
  save(file, rest)
  return known
}

/**
 * Refuses a SQLite file that is missing or empty while the workspace has a mark for it, before
 * anything opens (and so creates) it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const checkFile = (file: string, location: Location): StoreBehind | null => {
  const mark = read(file)[location.key]
  if (mark === undefined || location.file === null) return null
  let size = 0
  try {
    size = fs.statSync(location.file).size
  } catch {
    size = 0
  }
  if (size > 0) return null
  return new StoreBehind({ reason: "missing", store: location.key, mark, foundLsn: null, fix: fixFor("missing", true) })
}

/**
 * Checks the opened store against the workspace's mark: the event at the mark's LSN must be there,
 * on the mark's stream and branch, with the mark's operation id.
 *
 * @since 0.2.0
 * @category constructors
 */
export const check = (file: string, location: Location) =>
  Effect.gen(function*() {
    const mark = read(file)[location.key]
    if (mark === undefined) return
    const store = yield* EventStore.EventStore
    const found = yield* store.read({ streamId: mark.streamId, branch: mark.branch, fromLsn: mark.lsn, toLsn: mark.lsn }).pipe(
      Stream.runCollect,
      Effect.map(Chunk.toReadonlyArray),
      Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed([] as ReadonlyArray<EventStore.StoredEvent>))
    )
    const event = found.find((stored) => stored.lsn === mark.lsn)
    if (event !== undefined && event.operationId === mark.operationId) return
    const head = yield* store.head(mark.streamId, mark.branch).pipe(
      Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed(null))
    )
    const reason = event === undefined ? "behind" : "replaced"
    return yield* new StoreBehind({
      reason,
      store: location.key,
      mark,
      foundLsn: head?.lastLsn ?? null,
      fix: fixFor(reason, location.file !== null)
    })
  })

/**
 * `store` guarded by the workspace's mark: a missing SQLite file is refused before it is opened,
 * the opened store is checked against the mark, and every append it commits moves the mark.
 * Without a checkout directory (`localDir`), `store` itself.
 *
 * @since 0.2.0
 * @category layers
 */
export const guard = <ROut, E, RIn>(
  store: Layer.Layer<ROut, E, RIn>,
  options: { readonly localDir: string | undefined; readonly location: Location }
): Layer.Layer<ROut, E | StoreBehind | EventStore.InvalidRequest | StorageError, RIn> => {
  const { localDir, location } = options
  if (localDir === undefined) return store
  const file = fileOf(localDir)
  const opened = Layer.unwrapEffect(Effect.suspend(() => {
    const missing = checkFile(file, location)
    return missing === null ? Effect.succeed(store) : Effect.fail(missing)
  }))
  const guarded = Layer.flatMap(opened, (context: Context.Context<ROut>) =>
    Layer.effectContext(Effect.gen(function*() {
      const events = Context.get(context as Context.Context<EventStore.EventStore>, EventStore.EventStore)
      yield* check(file, location).pipe(Effect.provideService(EventStore.EventStore, events))
      const append: EventStore.Service["append"] = (request) =>
        Effect.tap(events.append(request), (result) =>
          Effect.sync(() =>
            record(file, location.key, {
              streamId: result.streamId,
              branch: result.branch,
              lsn: result.lastLsn,
              operationId: request.operationId,
              at: new Date().toISOString()
            })
          ))
      return Context.add(context, EventStore.EventStore, { ...events, append }) as Context.Context<ROut>
    })))
  return guarded
}
