/**
 * The runner's wiring: the store this invocation uses (SQLite in `$RATCHET_HOME` by default,
 * PostgreSQL when `RATCHET_DATABASE_URL` is set), the lease manager with the project's settings,
 * the located project, and the readers of the agent hosts' streams (ADR 0039). Apps only wire;
 * this is the wiring.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import type * as AgentHost from "@ratchet/controller/AgentHost"
import * as Controller from "@ratchet/controller/Controller"
import * as StoreMark from "@ratchet/controller/StoreMark"
import type * as Workspace from "@ratchet/controller/Workspace"
import * as AgentStream from "@ratchet/host/AgentStream"
import * as StreamJson from "@ratchet/host-claude-code/StreamJson"
import * as ExecJson from "@ratchet/host-codex/ExecJson"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Lessons from "@ratchet/memory/Lessons"
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
  // Guarded like every command's store: refused when it is behind what this checkout saw it
  // commit, and each append (one a step, in a steady run) moves the checkout's mark (ADR 0023).
  const guard = { localDir: project.localDir, location: StoreMark.locationOf(home()) }
  const store = (process.env["RATCHET_DATABASE_URL"] ?? "") === ""
    ? StoreMark.guard(SqliteStore.layerConfig, guard)
    : StoreMark.guard(PostgresStore.layerConfig, guard)
  const leases = LeaseManager.layerConfig(project.project.lease ?? {}).pipe(Layer.provide(store))
  // The lessons service: a step that fails, or an attempt recovery leaves Indeterminate, is a
  // failure the lessons are told about (LessonFacts).
  return Layer.mergeAll(Layer.provideMerge(Lessons.layer, store), leases, Layer.succeed(Controller.Project, project))
}

/**
 * The stream readers of the hosts whose agent steps this runner starts: Claude Code's
 * `stream-json` and Codex's `exec --json`.
 *
 * @since 0.4.0
 * @category configuration
 */
export const agentHosts: AgentHost.Decoders = {
  "claude-code": AgentStream.decoder(StreamJson.decode),
  codex: AgentStream.decoder(ExecJson.decode)
}
