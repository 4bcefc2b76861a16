/**
 * The wiring: which store layer backs this invocation (SQLite in `$RATCHET_HOME` by default,
 * PostgreSQL when `RATCHET_DATABASE_URL` is set), the lease manager with the project's settings,
 * and the controller for the located project. Apps only wire; this is the wiring.
 *
 * Which store, for a command run in a project, is chosen once by {@link choose}, in this order:
 * `--home` (`ratchet mcp`), the environment (`RATCHET_HOME`, `RATCHET_DATABASE_URL`), the
 * checkout's record of the store `ratchet init` opened (`StoreRecord`), the default `~/.ratchet`
 * (ADR 0029). The choice is written back into this process's environment, so everything after it
 * (the store layers, the runner a command starts, the guard's idea of the store's directory)
 * reads the same store.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as StoreMark from "@ratchet/controller/StoreMark"
import type * as Workspace from "@ratchet/controller/Workspace"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Lessons from "@ratchet/memory/Lessons"
import type * as LessonStore from "@ratchet/storage/LessonStore"
import type * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Builtin from "@ratchet/verifier/Builtin"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Either from "effect/Either"
import { UsageError } from "./Args.js"
import * as StoreRecord from "./StoreRecord.js"

/**
 * Which engine this invocation uses, for messages.
 *
 * @since 0.1.0
 * @category models
 */
export const engine = (): "postgres" | "sqlite" =>
  (process.env["RATCHET_DATABASE_URL"] ?? "") === "" ? "sqlite" : "postgres"

/**
 * `$RATCHET_HOME` with `~` expanded: the SQLite store's directory, and where runner logs and
 * requests to runners live on every engine.
 *
 * @since 0.1.0
 * @category configuration
 */
export const home = (): string => expand(process.env["RATCHET_HOME"] ?? "~/.ratchet")

/** `~` and `~/…` expanded. */
const expand = (raw: string): string => raw === "~" ? os.homedir() : raw.startsWith("~/") ? path.join(os.homedir(), raw.slice(2)) : raw

/**
 * The PostgreSQL store, imported when a command first uses it: the bundle keeps it (with `pg` and
 * `@effect/sql-pg`) in a chunk of its own, so a command on SQLite, `ratchet hook` above all, never
 * parses or evaluates the driver.
 */
const postgresLayer: typeof PostgresStore.layerConfig = Layer.unwrapEffect(
  Effect.map(Effect.promise(() => import("@ratchet/storage-postgres/PostgresStore")), (module) => module.layerConfig)
)

/**
 * The store services for this invocation.
 *
 * @since 0.1.0
 * @category layers
 */
export const store = () => engine() === "postgres" ? postgresLayer : SqliteStore.layerConfig

/**
 * Which store this invocation opens, as the workspace's store mark names it.
 *
 * @since 0.2.0
 * @category configuration
 */
export const location = (): StoreMark.Location => StoreMark.locationOf(home())

/**
 * The store services for a command on `project`: refused when the store is behind what this
 * checkout saw it commit (a lost SQLite WAL, a deleted database), and every append moves the
 * checkout's mark (ADR 0023).
 *
 * @since 0.2.0
 * @category layers
 */
export const guarded = (project: Workspace.Located) => guardedAt(project.localDir)

/**
 * {@link guarded} for a checkout's own directory (`undefined`: not a project yet, nothing to check).
 *
 * @since 0.2.0
 * @category layers
 */
export const guardedAt = (localDir: string | undefined) => {
  const options = { localDir, location: location() }
  // Guarded engine by engine: each keeps its own layer's type.
  return engine() === "postgres" ? StoreMark.guard(postgresLayer, options) : StoreMark.guard(SqliteStore.layerConfig, options)
}

/**
 * The controller of `project`, over the store with the project's lease settings.
 *
 * @since 0.1.0
 * @category layers
 */
export const controller = (project: Workspace.Located) => {
  const services = guarded(project)
  const leases = LeaseManager.layerConfig(project.project.lease ?? {}).pipe(Layer.provide(services))
  return Controller.layer.pipe(
    Layer.provide(Layer.mergeAll(services, leases, Layer.succeed(Controller.Project, project)))
  )
}

/**
 * `services` (a store layer, which provides a `LessonStore`) with the `Lessons` service over it:
 * what the controller records a run's failures and successes through, and what the lessons
 * commands, the hooks and MCP read and change lessons through.
 *
 * @since 0.3.0
 * @category layers
 */
export const withLessons = <ROut, E, RIn>(services: Layer.Layer<ROut | LessonStore.LessonStore, E, RIn>) => Layer.provideMerge(Lessons.layer, services)

/**
 * What `ratchet lessons …` works with: the store with the `Lessons` service over it, and the project.
 *
 * @since 0.3.0
 * @category layers
 */
export const lessons = (project: Workspace.Located) => Layer.merge(withLessons(guarded(project)), Layer.succeed(Controller.Project, project))

/**
 * The services `verify`, `done` and `evidence` work with (besides the controller): the store with
 * its blobs, the lease manager, the project and the built-in verifiers.
 *
 * @since 0.1.0
 * @category layers
 */
export const verification = (project: Workspace.Located) => {
  const services = withLessons(guarded(project))
  const leases = LeaseManager.layerConfig(project.project.lease ?? {}).pipe(Layer.provide(services))
  return Layer.mergeAll(services, leases, Layer.succeed(Controller.Project, project), Builtin.layer)
}

/**
 * What a host hook works with: the verification services (to read the task as `HostView` does)
 * and, over the same store, the controller (to take the session's lease and record its tool calls).
 *
 * @since 0.1.0
 * @category layers
 */
export const session = (project: Workspace.Located) => Layer.provideMerge(Controller.layer, verification(project))

/** Variables that must be integers when set, with the range the store or the lease accepts. */
const integers: ReadonlyArray<readonly [string, number, number]> = [
  ["RATCHET_LEASE_HEARTBEAT_MS", 1, 2_147_483_647],
  ["RATCHET_LEASE_GRACE_MS", 1, 2_147_483_647],
  ["RATCHET_SQLITE_BUSY_TIMEOUT_MS", 0, 2_147_483_647]
]

/**
 * The store's environment, checked before anything is opened: a blank or relative `RATCHET_HOME`
 * would open (and create) a store in whatever directory the command ran in, and a malformed number
 * or URL is the caller's input, so each is a usage error naming the variable, not an unexpected one.
 *
 * @since 0.1.0
 * @category configuration
 */
export const checkEnvironment = (command: string): UsageError | null => {
  const bad = (field: string, reason: string, fix: string) => new UsageError({ command, field, reason, fix })
  const home = process.env["RATCHET_HOME"]
  if (home !== undefined && !(home.startsWith("/") || home === "~" || home.startsWith("~/"))) {
    return bad(
      "RATCHET_HOME",
      home.trim() === "" ? "is set but empty." : `${JSON.stringify(home.slice(0, 80))} is not an absolute path.`,
      "Set it to an absolute directory (or ~/…), or unset it for ~/.ratchet."
    )
  }
  const url = process.env["RATCHET_DATABASE_URL"]
  if (url !== undefined && url !== "" && !/^postgres(ql)?:\/\/[^\s]+$/.test(url)) {
    return bad("RATCHET_DATABASE_URL", "is not a postgres:// URL.", "Set it to postgres://user@host:port/database, or unset it for SQLite.")
  }
  const sessionUrl = process.env["RATCHET_DATABASE_SESSION_URL"]
  if (sessionUrl !== undefined && sessionUrl !== "" && !/^postgres(ql)?:\/\/[^\s]+$/.test(sessionUrl)) {
    return bad(
      "RATCHET_DATABASE_SESSION_URL",
      "is not a postgres:// URL.",
      "Set it to postgres://user@host:port/database (the server itself or a session-mode pool), or unset it to hold claims over RATCHET_DATABASE_URL."
    )
  }
  // The PostgreSQL schema's rule (as PostgresStore applies it), checked here so a bad name is the
  // caller's input (exit 2) rather than a failure of the store it would open.
  const schema = process.env["RATCHET_DATABASE_SCHEMA"]
  if (url !== undefined && url !== "" && schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    return bad(
      "RATCHET_DATABASE_SCHEMA",
      `${JSON.stringify(schema.slice(0, 80))} is not a lowercase PostgreSQL identifier (a-z, 0-9 and _, not starting with a digit, at most 63 characters).`,
      "Set it to a name such as ratchet, or unset it for public."
    )
  }
  const synchronous = process.env["RATCHET_SQLITE_SYNCHRONOUS"]
  if (synchronous !== undefined && synchronous !== "FULL" && synchronous !== "NORMAL") {
    return bad("RATCHET_SQLITE_SYNCHRONOUS", `${JSON.stringify(synchronous.slice(0, 40))} is not FULL or NORMAL.`, "Set it to FULL (the default) or NORMAL.")
  }
  for (const [name, min, max] of integers) {
    const raw = process.env[name]
    if (raw === undefined) continue
    const value = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN
    if (!(value >= min && value <= max)) {
      return bad(name, `${JSON.stringify(raw.slice(0, 40))} is not an integer from ${min} to ${max}.`, `Fix or unset ${name}.`)
    }
  }
  return null
}

// ---------------------------------------------------------------------------------------------
// Which store: --home, the environment, the checkout's record, the default (ADR 0029)
// ---------------------------------------------------------------------------------------------

/**
 * What chose the store: the first of `--home`, `RATCHET_HOME` and `RATCHET_DATABASE_URL` that
 * was given, else the checkout's record, else the default.
 *
 * @since 0.2.0
 * @category models
 */
export type Source = "--home" | "RATCHET_HOME" | "RATCHET_DATABASE_URL" | "record" | "default"

/**
 * The store an invocation uses.
 *
 * @since 0.2.0
 * @category models
 */
export interface Choice {
  /** The home, absolute: the SQLite store's directory, and where runner logs and requests live. */
  readonly home: string
  /** PostgreSQL, or `null` for SQLite in the home. */
  readonly database: StoreRecord.Database | null
  readonly source: Source
  /** The checkout's record, when it has one, whether it was followed or overridden. */
  readonly record: { readonly file: string; readonly record: StoreRecord.StoreRecord } | null
}

let chosen: Choice | null = null

/**
 * The store {@link choose} chose for this invocation, or `null` before it did (a command outside
 * a project uses the environment as it is).
 *
 * @since 0.2.0
 * @category configuration
 */
export const current = (): Choice | null => chosen

const given = (name: string): string | undefined => {
  const value = process.env[name]
  return value === undefined || value === "" ? undefined : value
}

/** The store as a person recognises it: `SQLite /home/ana/.ratchet/ratchet.db`, `PostgreSQL postgres://…`. */
export const describe = (choice: Pick<Choice, "home" | "database">): string =>
  choice.database === null
    ? `SQLite ${path.join(choice.home, "ratchet.db")}`
    : `PostgreSQL ${StoreRecord.redact(choice.database.url)?.url ?? "(RATCHET_DATABASE_URL)"} schema ${choice.database.schema ?? "public"}`

/**
 * What chose the store, as a phrase: `from RATCHET_HOME`, `from this checkout's record …`.
 *
 * @since 0.2.0
 * @category configuration
 */
export const origin = (choice: Choice): string =>
  choice.source === "record"
    ? `from this checkout's record ${choice.record?.file ?? ""}`
    : choice.source === "default"
    ? "the default: no --home, RATCHET_HOME, RATCHET_DATABASE_URL or record of this checkout names one"
    : choice.database !== null && choice.source !== "RATCHET_DATABASE_URL"
    ? `from ${choice.source} and RATCHET_DATABASE_URL`
    : `from ${choice.source}`

/** The stores this checkout's mark says it has used, other than `key`. */
const otherStoresSeen = (localDir: string, key: string): ReadonlyArray<string> =>
  Object.keys(StoreMark.read(StoreMark.fileOf(localDir))).filter((seen) => seen !== key)

/**
 * Chooses the store for a command run in the checkout of `localDir` (see the module comment) and
 * writes the choice into this process's environment. Refused, with nothing opened, when:
 *
 * - `--home` is not an absolute directory (or `~/…`);
 * - the checkout's record cannot be read (a record that is skipped would send the command to the
 *   default store);
 * - the SQLite store the record names does not exist, or the default one does not while this
 *   checkout has used another: an empty store is never created in its place (`creating`, for
 *   `ratchet init --force`, allows it).
 *
 * @since 0.2.0
 * @category configuration
 */
export const choose = (
  localDir: string | undefined,
  options: { readonly home?: string | undefined; readonly creating?: boolean | undefined } = {}
): Effect.Effect<Choice, ControllerError.InvalidRequest> =>
  Effect.suspend(() => {
    const flag = options.home
    if (flag !== undefined && !(path.isAbsolute(flag) || flag === "~" || flag.startsWith("~/"))) {
      return Effect.fail(
        new ControllerError.InvalidRequest({
          field: "--home",
          reason: `${JSON.stringify(flag.slice(0, 80))} is not an absolute path (an MCP client starts the server in a directory of its own choosing).`,
          fix: "Pass the store's directory as an absolute path (or ~/…)."
        })
      )
    }
    const read = localDir === undefined ? Either.right(null) : StoreRecord.read(localDir)
    if (Either.isLeft(read)) {
      return Effect.fail(
        new ControllerError.InvalidRequest({
          field: read.left.file,
          reason: `${read.left.reason}; nothing was opened.`,
          fix: "Fix or delete it, then record the store again: ratchet init, with RATCHET_HOME (or RATCHET_DATABASE_URL) naming the store."
        })
      )
    }
    const record = read.right
    const envHome = given("RATCHET_HOME")
    const envUrl = given("RATCHET_DATABASE_URL")
    const named = flag ?? envHome
    const choice: Choice = named !== undefined || envUrl !== undefined
      ? {
        home: path.resolve(expand(named ?? record?.record.home ?? "~/.ratchet")),
        database: envUrl === undefined ? null : { url: envUrl, schema: given("RATCHET_DATABASE_SCHEMA") ?? null, passwordOmitted: false },
        source: flag !== undefined ? "--home" : envHome !== undefined ? "RATCHET_HOME" : "RATCHET_DATABASE_URL",
        record
      }
      : record !== null
      ? { home: record.record.home, database: record.record.database, source: "record", record }
      : { home: path.resolve(expand("~/.ratchet")), database: null, source: "default", record }
    if (choice.database === null && options.creating !== true && (choice.source === "record" || choice.source === "default")) {
      const file = path.join(choice.home, "ratchet.db")
      const present = fs.existsSync(file)
      if (!present && choice.source === "record") {
        return Effect.fail(
          new ControllerError.InvalidRequest({
            field: "store",
            reason: `this checkout's record ${record?.file} names the store ${file}, which does not exist; it was not created.`,
            fix: "Restore it, or name the store this checkout should use (--home <dir> for ratchet mcp, or RATCHET_HOME=<dir>) and record it: ratchet init with that RATCHET_HOME."
          })
        )
      }
      const others = !present && localDir !== undefined ? otherStoresSeen(localDir, file) : []
      if (others.length > 0) {
        return Effect.fail(
          new ControllerError.InvalidRequest({
            field: "store",
            reason: `no --home, RATCHET_HOME, RATCHET_DATABASE_URL or record of this checkout names a store, the default ${file} does not exist, and this checkout has used ${others.join(", ")}; nothing was created.`,
            fix: "Name that store (--home <dir> for ratchet mcp, RATCHET_HOME=<dir>, or RATCHET_DATABASE_URL) and record it for this checkout: ratchet init run with it. To start with the default store instead: ratchet init --force."
          })
        )
      }
    }
    process.env["RATCHET_HOME"] = choice.home
    if (choice.source === "record") {
      if (choice.database === null) delete process.env["RATCHET_DATABASE_URL"]
      else {
        process.env["RATCHET_DATABASE_URL"] = choice.database.url
        if (choice.database.schema === null) delete process.env["RATCHET_DATABASE_SCHEMA"]
        else process.env["RATCHET_DATABASE_SCHEMA"] = choice.database.schema
      }
    }
    chosen = choice
    return Effect.succeed(choice)
  })

/**
 * The record of `choice` for the checkout, as `ratchet init` writes it: the home, and a
 * PostgreSQL URL without its password. `null` when the URL cannot be rewritten without it (then
 * nothing is recorded rather than a password).
 *
 * @since 0.2.0
 * @category constructors
 */
export const recordOf = (choice: Choice, now: Date = new Date()): StoreRecord.StoreRecord | null => {
  if (choice.database === null) return { version: 1, home: choice.home, database: null, recordedAt: now.toISOString() }
  const redacted = StoreRecord.redact(choice.database.url)
  if (redacted === null) return null
  return { version: 1, home: choice.home, database: { url: redacted.url, schema: choice.database.schema, passwordOmitted: redacted.passwordOmitted }, recordedAt: now.toISOString() }
}
