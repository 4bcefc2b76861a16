/**
 * `ratchet hook <host>` for the runner's own agent (ADR 0040): a session whose environment claims
 * to be the agent of an agent step's attempt (`AgentFence.claimOf`: `RATCHET_RUN`,
 * `RATCHET_ATTEMPT` or `RATCHET_CAPABILITY` set) is judged here and never as an interactive
 * session's worker: it neither takes nor heartbeats the task's lease (the runner holds it).
 *
 * - The claim is checked against the store (`Controller.agentCall.fence`): the open attempt, the
 *   capability's digest as that attempt's intent, the runner's current lease epoch. A claim that is
 *   broken or refused, or that cannot be checked, denies every tool call with the reason (fail
 *   closed), and records nothing: nothing it says can be trusted.
 * - A Bash command that starts a host's CLI (`claude`, `codex`: a nested agent, which would run
 *   without the run's fence) or that cannot be read completely is denied (`NestedAgent`).
 * - The agent's tool call is judged by the shared guard against the task's contract, as any
 *   session's is (scope, the store, person-only acts such as `ratchet approve`). A question the
 *   guard would ask a person is a denial: nobody is there to answer. A denial is noted on the
 *   attempt with its reason (`RefuseEffect`) before it is answered.
 * - An allowed side-effecting call is recorded and dispatched as an intent of the attempt before
 *   it runs (`DispatchEffect`), under the runner's epoch; its end resolves it (`ResolveEffect`).
 *   A call that cannot be recorded is denied.
 * - Every other event (a start, a prompt, a stop, the end) is allowed and writes nothing: the
 *   runner records the agent's turn from its stream, and decides when the attempt ends.
 *
 * @since 0.4.0
 */
import * as AgentFence from "@ratchet/controller/AgentFence"
import * as AgentRefusals from "@ratchet/controller/AgentRefusals"
import * as Controller from "@ratchet/controller/Controller"
import * as HostConfiguration from "@ratchet/controller/HostConfiguration"
import * as HostSession from "@ratchet/controller/HostSession"
import * as HostView from "@ratchet/controller/HostView"
import * as Guard from "@ratchet/host/Guard"
import type * as HostEvent from "@ratchet/host/HostEvent"
import * as NestedAgent from "@ratchet/host/NestedAgent"
import * as ToolIntent from "@ratchet/host/ToolIntent"
import * as Effect from "effect/Effect"
import * as os from "node:os"
import * as path from "node:path"
import * as Store from "./Store.js"

const allow: Guard.Decision = { _tag: "Allow" }

const deny = (reason: string, fix: string): Guard.Decision => ({ _tag: "Deny", reason, fix })

const temporary = (): ReadonlyArray<string> => [...new Set([os.tmpdir(), "/tmp", "/var/tmp"].map((directory) => path.resolve(directory)))]

/** What a refused claim's denial tells the agent to do. */
const notTheAgent = "Only the agent the runner started for an open attempt acts as one; a person starts the work with ratchet run in a terminal."


/**
 * The guard's decision about the agent's call, with the task's contract and no other lease holder;
 * first, a command that starts a host's CLI (a nested agent, unfenced) or cannot be read is denied.
 */
const guarded = (event: HostEvent.HostEvent & { readonly _tag: "ToolCallRequested" }, root: string, task: HostView.HostTask): Guard.Decision => {
  const nested = NestedAgent.refusal(event.call)
  if (nested !== null) return deny(nested.reason, nested.fix)
  const decision = Guard.decide(event.call, {
    root,
    cwd: event.session.cwd,
    storeDirectory: path.resolve(Store.home()),
    home: os.homedir(),
    temporary: temporary(),
    // The runner holds the lease for this very agent: there is no other holder to defer to.
    task: { taskId: task.taskId, state: task.state, allowedScope: task.allowedScope, forbiddenScope: task.forbiddenScope, leaseHolder: null },
    ambiguous: [],
    // The hosts' configuration is the run's too, as `.ratchet/` is: a setting written there
    // (`disableAllHooks`, a hook of its own) or an MCP server named in `.mcp.json` would outlive
    // the attempt and run the next one unfenced (ADR 0040's amendment, ADR 0043's last amendment).
    protectedDirectories: HostConfiguration.directories,
    protectedFiles: HostConfiguration.files
  })
  return decision._tag === "Ask"
    ? deny(decision.reason.replace(/ Allow it\?$/, ""), "Nobody is there to allow it: an unattended agent does not do it. A person may, in a terminal.")
    : decision
}

/**
 * The decision about `event` of a session whose environment made `read` (not `None`), in the
 * project at `root` (inside the project's services). Fails only where the caller's adapter answers
 * closed.
 *
 * @since 0.4.0
 */
export const judge = (event: HostEvent.HostEvent, read: AgentFence.Read & { readonly _tag: "Claim" | "Broken" }, root: string) =>
  Effect.gen(function*() {
    const requested = event._tag === "ToolCallRequested"
    const ending = event._tag === "ToolCallCompleted" || event._tag === "ToolCallFailed"
    if (!requested && !ending) return allow
    if (read._tag === "Broken") return requested ? deny(`${read.reason}.`, notTheAgent) : allow
    const controller = yield* Controller.Controller
    const verdict = yield* controller.agentCall.fence(read.claim)
    if (verdict._tag === "Refused") return requested ? deny(`${verdict.reason}.`, notTheAgent) : allow
    const actor = HostSession.actorOf(event.session)
    if (event._tag === "ToolCallCompleted" || event._tag === "ToolCallFailed") {
      if (event.call.id === null || !ToolIntent.isSideEffect(event.call)) return allow
      yield* controller.agentCall.ended(verdict, {
        sessionRef: HostSession.sessionRef(event.session),
        callId: event.call.id,
        outcome: event._tag === "ToolCallCompleted" ? "Succeeded" : "Failed"
      }, actor)
      return allow
    }
    if (event._tag !== "ToolCallRequested") return allow
    const selection = yield* HostView.select(read.claim.taskId)
    if (selection._tag !== "One") return deny(`task ${read.claim.taskId} could not be read for its contract.`, notTheAgent)
    const description = ToolIntent.describe(event.call)
    const judged = guarded(event, root, selection.task)
    const sideEffect = ToolIntent.isSideEffect(event.call)
    const decision = judged._tag === "Allow" && sideEffect && event.call.id === null
      ? deny(
        `the host gave this call no id, so it cannot be recorded as the work of step ${read.claim.stepId} before it runs.`,
        "Update the host: its hook payloads carry tool_use_id."
      )
      : judged
    if (decision._tag === "Deny") {
      // The refusal is part of the record, with its reason; the call is refused whether or not it could be written.
      // Named by its call id, so the check at the agent's end knows the hooks refused it (`AgentHooksRan`).
      const noted = yield* controller.agentCall.refused(verdict, { description: AgentRefusals.describeCall(event.call.id, description), reason: decision.reason }, actor)
        .pipe(Effect.either)
      return noted._tag === "Right" ? decision : deny(`${decision.reason} (The refusal could not be recorded: ${messageOf(noted.left)})`, decision.fix)
    }
    if (!sideEffect || event.call.id === null) return decision
    // The step's work: recorded before it runs, or not run at all (a failure here is the adapter's closed answer).
    yield* controller.agentCall.started(verdict, { sessionRef: HostSession.sessionRef(event.session), callId: event.call.id, description }, actor)
    return decision
  })

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : String(error)
