/**
 * The MCP server: the tools and resources of this package on the official SDK's low-level
 * `Server`, over any transport (standard input and output for `ratchet mcp`, an in-memory pair in
 * tests).
 *
 * The low-level `Server` with plain JSON Schema inputs is used rather than `McpServer.registerTool`
 * with zod schemas: inferring zod's generics for a dozen tools made `tsc` run out of memory, and
 * the arguments are decoded with effect `Schema` anyway (ADR 0014). Each request runs as an effect
 * on the runtime `serve` was called in, so every call shares the services (the store, the
 * controller) the transport provided once for the whole session.
 *
 * Over standard input and output, standard output belongs to the protocol: while serving, the
 * console's `log`, `info` and `debug` write to standard error, and so does effect's logger. A
 * line that is not a JSON-RPC message is reported there and skipped; a message over 10 MiB is
 * discarded unread and answered with a JSON-RPC error (internal/lineTransport.ts); either way the
 * server goes on. It ends when standard input ends (the host closed it) or the client closes the
 * transport.
 *
 * @since 0.1.0
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Documents from "@ratchet/controller/Documents"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { LineTransport } from "./internal/lineTransport.js"
import * as Resources from "./Resources.js"
import * as Tools from "./Tools.js"

/**
 * What the server tells the host about itself, shown to the agent: what it is for and what it
 * never does.
 *
 * @since 0.1.0
 * @category constants
 */
export const instructions = [
  "Ratchet keeps the authoritative record of this repository's tasks: what was asked, what the user approved, what was done and what was verified.",
  "Read where a task stands with task_list and task_status (its next step and allowed actions), why a transition is held with task_gate, its history with task_log and its verification with task_evidence.",
  "Create a task with task_create; interview with brief_ask and brief_answer; propose the contract with spec_propose and the plan with plan_propose, from files in the workspace; start an approved plan with run_start and follow it with run_check.",
  "Read the lessons that apply to a task with lessons_query (verified by evidence from earlier runs; follow them where they apply), and propose what you learned with lesson_propose: a proposal is a candidate, and only evidence or the user changes its status.",
  "No tool approves anything: approving the restatement, the spec or the plan, reopening a FAILED task, settling a step whose outcome is unknown (unblock --resolve), rewinding and completing (done) are the user's acts, typed at a terminal and bound to the digest they saw.",
  "When a task waits for one, tell the user the command its status names; never try to run it yourself. Everything written here is recorded as you, an agent, and the identity that did the work cannot verify it."
].join(" ")

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The version the server reports (the CLI's). */
  readonly version: string
  readonly caller: Tools.Caller
  /** The store served, named in the refusals of something not found (a task in another store). */
  readonly where?: Tools.Where | undefined
}

/** The code a failed resource read is reported with: not found (MCP's -32002), invalid, or internal. */
const resourceErrorCode = (error: unknown): number => {
  const tag = (error as { readonly _tag?: unknown } | null)?._tag
  if (tag === "@ratchet/host-mcp/UnknownResource" || tag === "@ratchet/controller/TaskNotFound") return -32002
  return ControllerError.exitClassOf(error) === "unexpected" ? ErrorCode.InternalError : ErrorCode.InvalidParams
}

/** Runs `effect`; a failure or defect is thrown as a protocol error (resources have no error results). */
const orThrow = async <A>(
  run: Runtime.Runtime<Tools.Services>,
  effect: Effect.Effect<A, unknown, Tools.Services>,
  where: Tools.Where | undefined
): Promise<A> => {
  const exit = await Runtime.runPromiseExit(run)(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure)) throw new McpError(resourceErrorCode(failure.value), Documents.messageOf(Tools.withStore(failure.value, where)))
  await Runtime.runPromise(run)(Effect.logError("ratchet mcp: a request failed unexpectedly", exit.cause))
  throw new McpError(ErrorCode.InternalError, `unexpected: ${Documents.messageOf(Cause.squash(exit.cause))}`)
}

/**
 * A server with every handler registered, running its requests on `runtime`. Not connected.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options, runtime: Runtime.Runtime<Tools.Services>): Server => {
  const server = new Server(
    { name: "ratchet", title: "Ratchet", version: options.version },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false } }, instructions }
  )
  server.setRequestHandler(ListToolsRequestSchema, () => Promise.resolve({ tools: Tools.tools.map((tool) => ({ ...tool.descriptor })) }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    // Tools.call never fails: every refusal is an answer with isError.
    const answer = await Runtime.runPromise(runtime)(Tools.call(request.params.name, request.params.arguments ?? {}, options.caller, options.where))
    return { content: [{ type: "text" as const, text: answer.text }], structuredContent: answer.document, isError: answer.isError }
  })
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () =>
    Promise.resolve({ resourceTemplates: Resources.templates.map((template) => ({ ...template })) }))
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: (await orThrow(runtime, Resources.list, options.where)).map((resource) => ({ ...resource })) }))
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({ contents: [{ ...(await orThrow(runtime, Resources.read(request.params.uri), options.where)) }] }))
  // A message that does not parse, a transport failure: reported on the log, never thrown.
  server.onerror = (error) => Runtime.runFork(runtime)(Effect.logWarning(`ratchet mcp: ${Documents.messageOf(error).slice(0, 500)}`))
  return server
}

/**
 * Serves over `transport` until it closes; interrupting the effect closes it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const serve = (transport: Transport, options: Options): Effect.Effect<void, never, Tools.Services> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<Tools.Services>()
    const server = make(options, runtime)
    const closed = Effect.async<void>((resume) => {
      server.onclose = () => resume(Effect.void)
    })
    yield* Effect.promise(() => server.connect(transport))
    yield* closed.pipe(Effect.onInterrupt(() => Effect.promise(() => server.close())))
  })

/** The logger while serving over stdio: standard error, never standard output. */
const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

/**
 * Serves over this process's standard input and output until standard input ends. Standard
 * output carries only the protocol meanwhile (see the module comment).
 *
 * @since 0.1.0
 * @category constructors
 */
export const serveStdio = (
  options: Options,
  io: { readonly stdin: NodeJS.ReadableStream; readonly stdout: NodeJS.WritableStream } = { stdin: process.stdin, stdout: process.stdout }
): Effect.Effect<void, never, Tools.Services> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = { log: console.log, info: console.info, debug: console.debug }
      console.log = console.info = console.debug = (...args: Array<unknown>) => console.error(...args)
      return saved
    }),
    () =>
      Effect.gen(function*() {
        const transport = new LineTransport(io.stdin, io.stdout)
        // The transport does not end with its input: the host closing the pipe ends the server.
        const ended = () => void transport.close()
        io.stdin.once("end", ended)
        io.stdin.once("close", ended)
        yield* serve(transport, options).pipe(
          Effect.ensuring(Effect.sync(() => {
            io.stdin.off("end", ended)
            io.stdin.off("close", ended)
          }))
        )
      }),
    (saved) => Effect.sync(() => Object.assign(console, saved))
  ).pipe(Effect.provide(stderrLogger))
