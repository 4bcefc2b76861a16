/**
 * `ratchet mcp`: the MCP server of `@ratchet/host-mcp` over standard input and output, wired to
 * the located project's controller and store as every other command is, with runs started as
 * detached runners.
 *
 * The command loads this module with a dynamic `import()`, and the bundle keeps it (and the MCP
 * SDK it pulls in) in a chunk of its own, so `ratchet hook …` and the other commands never parse
 * the SDK: the hook path runs on every tool call of an agent and must stay fast.
 *
 * @since 0.1.0
 */
import * as Controller from "@ratchet/controller/Controller"
import type * as Workspace from "@ratchet/controller/Workspace"
import * as Identity from "@ratchet/host-mcp/Identity"
import * as McpError from "@ratchet/host-mcp/McpError"
import * as McpServer from "@ratchet/host-mcp/McpServer"
import * as RunStarter from "@ratchet/host-mcp/RunStarter"
import * as Lessons from "@ratchet/memory/Lessons"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { UsageError } from "./Args.js"
import * as RunnerProcess from "./RunnerProcess.js"
import * as Store from "./Store.js"

declare const __RATCHET_VERSION__: string | undefined

/** The version the server reports: the bundle's, as `ratchet --version` prints it. */
const version = typeof __RATCHET_VERSION__ === "string" ? __RATCHET_VERSION__ : "0.0.0-source"

/** A run started over MCP: the runner in its own session, acting for the agent. */
const starter = RunStarter.layer((request) =>
  RunnerProcess.detached([request.taskId, "-C", request.cwd], request.taskId, { RATCHET_ACTOR: `${request.actor.kind}:${request.actor.id}` }).pipe(
    Effect.mapError((error) => new McpError.RunNotStarted({ taskId: request.taskId, reason: error.message }))
  )
)

/**
 * The services the tools run with: the verification services of `project` (its store, leases and
 * verifiers) and, over the same store, the lessons service (`lessons_query`, `lesson_propose`).
 */
const servedWithLessons = (project: Workspace.Located) => Layer.provideMerge(Lessons.layer, Store.verification(project))

/**
 * Serves until standard input ends, after one line on standard error naming the project and the
 * store served (and how that store was chosen). Fails only before serving, when `RATCHET_ACTOR`
 * is malformed.
 *
 * @since 0.1.0
 * @category commands
 */
export const serve = Effect.gen(function*() {
  const identity = yield* Either.match(Identity.of(process.env["RATCHET_ACTOR"]), {
    onLeft: ({ fix, reason }) => Effect.fail(new UsageError({ command: "mcp", field: "RATCHET_ACTOR", reason, fix })),
    onRight: Effect.succeed
  })
  if (identity.ignored !== null) {
    process.stderr.write(
      `ratchet mcp: RATCHET_ACTOR names ${identity.ignored.kind}:${identity.ignored.id}, but an MCP client is an agent; writing as ${identity.actor.kind}:${identity.actor.id} (set RATCHET_ACTOR=agent:<id> to name it).\n`
    )
  }
  const c = yield* Controller.Controller
  const project = c.project
  // Chosen before the controller opened it (main.ts); a command in a project always chooses.
  const choice = Store.current()
  const store = choice === null ? `${Store.engine() === "postgres" ? "PostgreSQL" : `SQLite ${Store.home()}/ratchet.db`}` : `${Store.describe(choice)} (${Store.origin(choice)})`
  const overridden = choice !== null && choice.source !== "record" && choice.record !== null && Store.describe(choice.record.record) !== Store.describe(choice)
    ? `; this checkout's record names ${Store.describe(choice.record.record)}`
    : ""
  // One line on standard error, before the protocol starts: what an MCP client's log shows.
  process.stderr.write(
    `ratchet mcp: serving project ${project.project.projectId} (${project.project.displayName}) at ${project.root} from the store ${store}${overridden}
`
  )
  const where = {
    store,
    otherwise: "start ratchet mcp with --home <dir> (or RATCHET_HOME, or RATCHET_DATABASE_URL for PostgreSQL) naming the store that has it"
  }
  yield* McpServer.serveStdio({ version, caller: { actor: identity.actor }, where }).pipe(
    Effect.provide(Layer.merge(servedWithLessons(project), starter))
  )
})
