/**
 * The wiring: which store layer backs this invocation (SQLite in `$RATCHET_HOME` by default,
 * PostgreSQL when `RATCHET_DATABASE_URL` is set), the lease manager with the project's settings,
 * and the controller for the located project. Apps only wire; this is the wiring.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import * as Controller from "@ratchet/controller/Controller"
import * as StoreMark from "@ratchet/controller/StoreMark"
import type * as Workspace from "@ratchet/controller/Workspace"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import type * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Builtin from "@ratchet/verifier/Builtin"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { UsageError } from "./Args.js"

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
export const home = (): string => {
  const raw = process.env["RATCHET_HOME"] ?? "~/.ratchet"
  return raw === "~" ? os.homedir() : raw.startsWith("~/") ? path.join(os.homedir(), raw.slice(2)) : raw
}

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
 * The services `verify`, `done` and `evidence` work with (besides the controller): the store with
 * its blobs, the lease manager, the project and the built-in verifiers.
 *
 * @since 0.1.0
 * @category layers
 */
export const verification = (project: Workspace.Located) => {
  const services = guarded(project)
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
