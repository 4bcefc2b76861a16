/**
 * The runner's wiring: the store this invocation uses (SQLite in `$RATCHET_HOME` by default,
 * PostgreSQL when `RATCHET_DATABASE_URL` is set), the lease manager with the project's settings,
 * and the located project. Apps only wire; this is the wiring.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import * as Controller from "@ratchet/controller/Controller"
import type * as Workspace from "@ratchet/controller/Workspace"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Layer from "effect/Layer"

/**
 * `$RATCHET_HOME` with `~` expanded: where requests to runners and runner logs live.
 *
 * @since 0.1.0
 * @category configuration
 */
export const home = (): string => {
  const raw = process.env["RATCHET_HOME"] ?? "~/.ratchet"
  return raw === "~" ? os.homedir() : raw.startsWith("~/") ? path.join(os.homedir(), raw.slice(2)) : raw
}

/**
 * Every service the run engine needs, for `project`.
 *
 * @since 0.1.0
 * @category layers
 */
export const services = (project: Workspace.Located) => {
  const store = (process.env["RATCHET_DATABASE_URL"] ?? "") === "" ? SqliteStore.layerConfig : PostgresStore.layerConfig
  const leases = LeaseManager.layerConfig(project.project.lease ?? {}).pipe(Layer.provide(store))
  return Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, project))
}
