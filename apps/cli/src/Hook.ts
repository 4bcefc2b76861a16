/**
 * `ratchet hook <host>`: one hook payload on standard input, one answer in the host's protocol.
 *
 * The payload is decoded by the host's adapter; a tool call is judged by the shared guard against
 * the workspace's task (read through the controller's `HostView`), a stop by whether required
 * criteria are still unverified; every other event passes. Nothing here writes the store.
 *
 * Whatever goes wrong (a payload that does not decode, a store that cannot be read, a bug) becomes
 * the adapter's failure answer: closed (blocking) for tool calls, open (a warning) elsewhere. No
 * stack trace reaches the host.
 */
import * as Controller from "@ratchet/controller/Controller"
import * as HostView from "@ratchet/controller/HostView"
import * as Workspace from "@ratchet/controller/Workspace"
import * as Guard from "@ratchet/host/Guard"
import type * as HostAdapter from "@ratchet/host/HostAdapter"
import type * as HostEvent from "@ratchet/host/HostEvent"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as os from "node:os"
import * as path from "node:path"
import * as Store from "./Store.js"

/** The task's view for the guard, or null when the workspace is not a Ratchet project. */
const workspaceOf = (cwd: string) =>
  Effect.gen(function*() {
    const located = yield* Workspace.make.locate(cwd).pipe(
      Effect.map((project): Workspace.Located | null => project),
      Effect.catchTag("@ratchet/controller/ProjectNotInitialised", () => Effect.succeed(null))
    )
    if (located === null) return { root: cwd, selection: { _tag: "None" } as HostView.Selection }
    const problem = Store.checkEnvironment("hook")
    if (problem !== null) return yield* Effect.fail(problem)
    const preferred = process.env["RATCHET_TASK"]
    const selection = yield* HostView.select(preferred === undefined || preferred === "" ? null : preferred).pipe(Effect.provide(Store.verification(located)))
    return { root: located.root, selection }
  })

const temporary = (): ReadonlyArray<string> => [...new Set([os.tmpdir(), "/tmp", "/var/tmp"].map((directory) => path.resolve(directory)))]

/** What the guard judges a tool call by, for the session's working directory. */
const guardContext = (session: HostEvent.Session) =>
  Effect.gen(function*() {
    const cwd = path.resolve(session.cwd)
    const { root, selection } = yield* workspaceOf(cwd)
    const task: Guard.Task | null = selection._tag === "One"
      ? {
        taskId: selection.task.taskId,
        state: selection.task.state,
        allowedScope: selection.task.allowedScope,
        forbiddenScope: selection.task.forbiddenScope,
        leaseHolder: selection.task.leaseHolder === null || selection.task.leaseHolder.sessionRef === `${session.host}:${session.sessionId}`
          ? null
          : Controller.describeOwner(selection.task.leaseHolder)
      }
      : null
    return {
      context: {
        root,
        cwd,
        storeDirectory: path.resolve(Store.home()),
        home: os.homedir(),
        temporary: temporary(),
        task,
        ambiguous: selection._tag === "Ambiguous" ? selection.candidates.map((candidate) => `${candidate.taskId} ${candidate.state}`) : []
      } satisfies Guard.Context,
      selection
    }
  })

/** The guard's decision about `event`; events it does not judge are allowed. */
const judge = (adapter: HostAdapter.HostAdapter, event: HostEvent.HostEvent) =>
  Effect.gen(function*() {
    switch (event._tag) {
      case "ToolCallRequested": {
        const { context } = yield* guardContext(event.session)
        const decision = Guard.decide(event.call, context)
        // A host that cannot ask gets a denial that says what the user would have been asked.
        return decision._tag === "Ask" && !adapter.canAsk
          ? { _tag: "Deny", reason: decision.reason.replace(/ Allow it\?$/, ""), fix: "If that is what you want, run it yourself in a terminal." } as const
          : decision
      }
      case "StopRequested": {
        // A subagent's stop ends its part, not the session's work: only the main agent is held.
        if (event.continuing || event.subagent) return Guard.stop(null, true)
        const { selection } = yield* guardContext(event.session)
        return Guard.stop(selection._tag === "One" ? selection.task : null, false)
      }
      default:
        return { _tag: "Allow" } as const
    }
  })

const nameOf = (event: HostEvent.HostEvent): string =>
  event._tag === "ToolCallRequested" ? (event.permissionPrompt ? "PermissionRequest" : "PreToolUse") : event._tag === "StopRequested" ? "Stop" : event._tag

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : String(error)

/**
 * The answer to one raw payload. Never fails: every failure is the adapter's failure answer.
 */
export const answer = (adapter: HostAdapter.HostAdapter, raw: string): Effect.Effect<HostAdapter.Reply> =>
  adapter.decode(raw).pipe(
    Effect.matchEffect({
      onFailure: (error) => Effect.succeed(adapter.failure(error.event, error.message)),
      onSuccess: (event) =>
        judge(adapter, event).pipe(
          Effect.map((decision) => adapter.reply(event, decision)),
          Effect.catchAllCause((cause) => {
            const failure = Cause.failureOption(cause)
            const problem = failure._tag === "Some" ? messageOf(failure.value) : `unexpected: ${messageOf(Cause.squash(cause))}`
            return Effect.succeed(adapter.failure(nameOf(event), problem))
          })
        )
    })
  )

/**
 * Reads standard input to its end, up to `limit` bytes (one more tells that it was larger).
 */
export const readStdin = (limit: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    process.stdin.on("data", (chunk: Buffer) => {
      if (size > limit) return
      chunks.push(chunk)
      size += chunk.length
    })
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    process.stdin.on("error", reject)
  })
