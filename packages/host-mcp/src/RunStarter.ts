/**
 * How the MCP server starts a run. A run is executed by the runner, a process of its own that
 * outlives the tool call (the server's standard output belongs to the protocol, so the runner
 * cannot be handed the terminal as `ratchet run` does in the foreground). Where the runner's
 * program is and how it is spawned is the transport's knowledge: the CLI provides the real
 * starter (a detached runner with its log under `$RATCHET_HOME/logs/`); tests provide a double.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { RunNotStarted } from "./McpError.js"

/**
 * What to start: one task's run in the checkout at `cwd`, on behalf of `actor` (the runner acts
 * as `runner:<actor id>`, so the agent that started the run is one of its workers and cannot be
 * its verifier of record).
 *
 * @since 0.1.0
 * @category models
 */
export interface Request {
  readonly taskId: string
  readonly cwd: string
  readonly actor: Event.Actor
}

/**
 * A runner that was started: its process id and where its output goes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Started {
  readonly pid: number
  readonly log: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly start: (request: Request) => Effect.Effect<Started, RunNotStarted>
}

/**
 * @since 0.1.0
 * @category services
 */
export class RunStarter extends Context.Tag("@ratchet/host-mcp/RunStarter")<RunStarter, Service>() {}

/**
 * The starter `start` as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (start: Service["start"]): Layer.Layer<RunStarter> => Layer.succeed(RunStarter, { start })
