/**
 * The wiring: which store layer backs this invocation (SQLite in `$RATCHET_HOME` by default,
 * PostgreSQL when `RATCHET_DATABASE_URL` is set), the lease manager with the project's settings,
 * and the controller for the located project. Apps only wire; this is the wiring.
 *
 * @since 0.1.0
 */
import * as Controller from "@ratchet/controller/Controller"
import type * as Workspace from "@ratchet/controller/Workspace"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Layer from "effect/Layer"

/**
 * Which engine this invocation uses, for messages.
 *
 * @since 0.1.0
 * @category models
 */
export const engine = (): "postgres" | "sqlite" =>
  (process.env["RATCHET_DATABASE_URL"] ?? "") === "" ? "sqlite" : "postgres"

/**
 * The store services for this invocation.
 *
 * @since 0.1.0
 * @category layers
 */
export const store = () => engine() === "postgres" ? PostgresStore.layerConfig : SqliteStore.layerConfig

/**
 * The controller of `project`, over the store with the project's lease settings.
 *
 * @since 0.1.0
 * @category layers
 */
export const controller = (project: Workspace.Located) => {
  const services = store()
  const leases = LeaseManager.layerConfig(project.project.lease ?? {}).pipe(Layer.provide(services))
  return Controller.layer.pipe(
    Layer.provide(Layer.mergeAll(services, leases, Layer.succeed(Controller.Project, project)))
  )
}
