/**
 * `ratchet hook <host>`: one hook payload on standard input, one answer in the host's protocol.
 *
 * The payload is decoded by the host's adapter; a tool call is judged by the shared guard against
 * the workspace's task (read through the controller's `HostView`), a stop by whether required
 * criteria are still unverified; every other event passes.
 *
 * The project is looked for where the host started the session (`ProjectRoot`): the host's project
 * variable (Claude Code's `CLAUDE_PROJECT_DIR`) or this process's working directory — never the
 * payload's `cwd`, which the agent moves. The payload's `cwd` only resolves a call's relative
 * paths, and the guard denies a call whose `cwd` is outside the project root or unprintable.
 *
 * While a manual step awaits its worker, the session is that worker (`HostSession`): it takes the
 * task's lease, opens an intent for each side-effecting call it is allowed before the call runs,
 * resolves it when the call ends, records what its events tell of its turn in the step's attempt
 * (`TurnReport`), and releases the lease when the session ends. Nothing else is written, and
 * nothing at all when the payload does not decode.
 *
 * At a session's start and at each prompt, for a task in RUNNING, the lessons that apply to it go
 * into the agent's context (`HookLessons`, ADR 0038), each recorded as shown to the run before it is
 * shown. Lessons are advice: a hook that cannot read or record them still answers, without them.
 *
 * A session whose environment claims to be the runner's agent of an agent step (ADR 0040) is
 * judged by `HookAgent` instead: its claim checked against the store, its calls held to the
 * contract and recorded in that attempt under the runner's lease, and nothing else.
 *
 * Whatever goes wrong (a payload that does not decode, a store that cannot be read, a bug) becomes
 * the adapter's failure answer: closed (blocking) for tool calls, open (a warning) elsewhere. No
 * stack trace reaches the host.
 */
import * as AgentFence from "@ratchet/controller/AgentFence"
import * as Controller from "@ratchet/controller/Controller"
import * as HostSession from "@ratchet/controller/HostSession"
import * as HostView from "@ratchet/controller/HostView"
import * as Workspace from "@ratchet/controller/Workspace"
import * as Guard from "@ratchet/host/Guard"
import type * as HostAdapter from "@ratchet/host/HostAdapter"
import type * as HostEvent from "@ratchet/host/HostEvent"
import * as ProjectRoot from "@ratchet/host/ProjectRoot"
import * as ToolIntent from "@ratchet/host/ToolIntent"
import * as TurnReport from "@ratchet/host/TurnReport"
import type * as Event from "@ratchet/kernel/Event"
import * as Turn from "@ratchet/kernel/Turn"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as os from "node:os"
import * as path from "node:path"
import * as Store from "./Store.js"

/** The Ratchet project at or above `directory`, or null. */
const projectAt = (directory: string) =>
  Workspace.make.locate(directory).pipe(
    Effect.map((project): Workspace.Located | null => project),
    Effect.catchTag("@ratchet/controller/ProjectNotInitialised", () => Effect.succeed(null))
  )

/**
 * The project a call belongs to: the one the session was started in (at or above `start`); when
 * `start` is in none, the one the host's reported `cwd` is in, if that lies below `start`. Outside
 * any project the root is `start` itself.
 */
const locate = (start: string, reported: string) =>
  Effect.gen(function*() {
    const located = (yield* projectAt(start)) ?? (ProjectRoot.below(start, reported) ? yield* projectAt(path.resolve(reported)) : null)
    if (located === null) return { root: start, located: null }
    const problem = Store.checkEnvironment("hook")
    if (problem !== null) return yield* Effect.fail(problem)
    // The project's store, as every command in it chooses it (the checkout's record when the
    // host's environment names none), so the guard protects the store that is in use.
    yield* Store.choose(located.localDir)
    return { root: located.root, located }
  })

const preferredTask = (): string | null => {
  const preferred = process.env["RATCHET_TASK"]
  return preferred === undefined || preferred === "" ? null : preferred
}

const temporary = (): ReadonlyArray<string> => [...new Set([os.tmpdir(), "/tmp", "/var/tmp"].map((directory) => path.resolve(directory)))]

/**
 * What the guard judges a tool call by. `holder` is the other owner of the lease as the session's
 * standing found it (undefined: as the view read it, this session's own lease not counted).
 */
const guardContext = (
  session: HostEvent.Session,
  root: string,
  selection: HostView.Selection,
  holder?: Event.LeaseOwner | null
): Guard.Context => {
  const sessionRef = HostSession.sessionRef(session)
  const other = (owner: Event.LeaseOwner | null) => owner === null || owner.sessionRef === sessionRef ? null : Controller.describeOwner(owner)
  const task: Guard.Task | null = selection._tag === "One"
    ? {
      taskId: selection.task.taskId,
      state: selection.task.state,
      allowedScope: selection.task.allowedScope,
      forbiddenScope: selection.task.forbiddenScope,
      leaseHolder: other(holder === undefined ? selection.task.leaseHolder : holder)
    }
    : null
  return {
    root,
    // As the host reports it: the guard judges whether it may resolve anything.
    cwd: session.cwd,
    storeDirectory: path.resolve(Store.home()),
    home: os.homedir(),
    temporary: temporary(),
    task,
    ambiguous: selection._tag === "Ambiguous" ? selection.candidates.map((candidate) => `${candidate.taskId} ${candidate.state}`) : []
  }
}

/** The decision as the host can take it: a host that cannot ask gets a denial saying what it would have asked. */
const forHost = (adapter: HostAdapter.HostAdapter, decision: Guard.Decision): Guard.Decision =>
  decision._tag === "Ask" && !adapter.canAsk
    ? { _tag: "Deny", reason: decision.reason.replace(/ Allow it\?$/, ""), fix: "If that is what you want, run it yourself in a terminal." }
    : decision

/**
 * A tool call about to run, in a Ratchet project. While a manual step awaits its worker, a
 * side-effecting call makes the session the worker (it takes the lease, or observes its holder);
 * an allowed call of the worker opens its intent before it runs, so the record holds the side
 * effect whatever happens next. Recording that fails blocks the call (the adapter fails closed).
 */
const requested = (adapter: HostAdapter.HostAdapter, event: HostEvent.HostEvent & { readonly _tag: "ToolCallRequested" }, root: string) =>
  Effect.gen(function*() {
    const selection = yield* HostView.select(preferredTask())
    const task = selection._tag === "One" ? selection.task : null
    const sideEffect = ToolIntent.isSideEffect(event.call)
    // A side-effecting call while a worker is awaited (or the lease is held) decides the session's
    // standing; any call of the session that holds the lease keeps it alive.
    const attending = task !== null && ((sideEffect && (task.awaiting !== null || task.leaseHolder !== null)) || ownsLease(task, event.session))
    const standing = attending && task !== null ? yield* HostSession.attend(task, event.session) : null
    const decision = yield* admitted(adapter, event, root, selection, task, sideEffect, standing)
    // A call the worker is refused is part of its turn.
    if (decision._tag === "Deny") yield* reportTurn(task, event.session, standing?.ours ?? null, TurnReport.eventsOf(event, decision))
    return decision
  })

/** The decision about a call to run, with its intent opened when it is an allowed call of the step's worker. */
const admitted = (
  adapter: HostAdapter.HostAdapter,
  event: HostEvent.HostEvent & { readonly _tag: "ToolCallRequested" },
  root: string,
  selection: HostView.Selection,
  task: HostView.HostTask | null,
  sideEffect: boolean,
  standing: HostSession.Standing | null
) =>
  Effect.gen(function*() {
    const decision = forHost(adapter, Guard.decide(event.call, guardContext(event.session, root, selection, standing === null ? undefined : standing.holder)))
    if (decision._tag !== "Allow" || task === null || task.awaiting === null || !sideEffect) return decision
    // The step's work: recorded before it runs, or not run at all.
    if (event.call.id === null) {
      return deny(
        `the host gave this call no id, so it cannot be recorded as step ${task.awaiting.stepId}'s work before it runs.`,
        "Update the host (its hook payloads carry tool_use_id), or do the step's work yourself and finish it with ratchet step done."
      )
    }
    if (standing === null || standing.ours === null) {
      return deny(
        `this session could not take task ${task.taskId}'s writer lease, so the call cannot be recorded as step ${task.awaiting.stepId}'s work before it runs.`,
        `Try the call again; ratchet lease ${task.taskId} shows who holds the lease.`
      )
    }
    const controller = yield* Controller.Controller
    yield* controller.toolCall.started(
      task.taskId,
      { sessionRef: HostSession.sessionRef(event.session), callId: event.call.id, description: ToolIntent.describe(event.call) },
      { actor: HostSession.actorOf(event.session), leaseEpoch: standing.ours }
    )
    return decision
  })

const deny = (reason: string, fix: string): Guard.Decision => ({ _tag: "Deny", reason, fix })

/** Whether the lease's owner (held, or lapsed and not taken over) is this session. */
const ownsLease = (task: HostView.HostTask, session: HostEvent.Session): boolean => task.leaseOwner?.sessionRef === HostSession.sessionRef(session)

/**
 * What `events` change of the awaited attempt's turn as the view read it (`Turn.changes`): when
 * nothing, the hook writes nothing for the turn (the controller filters again at the write).
 */
const turnNews = (task: HostView.HostTask | null, events: ReadonlyArray<Turn.Event>): ReadonlyArray<Turn.Event> =>
  task === null || task.awaiting === null ? [] : Turn.changes(task.awaiting.turn, events)

/**
 * Records what `events` tell of the worker's turn (`TurnReport`) in the attempt the view saw
 * awaiting, when the session is its worker holding the lease at `epoch` and the events change the
 * turn. A turn record is an observation of the agent, not of the step's work: whatever goes wrong
 * while making it (a conflict, a lapsed lease, a bug) never changes the host's answer.
 */
const reportTurn = (
  task: HostView.HostTask | null,
  session: HostEvent.Session,
  epoch: number | null,
  events: ReadonlyArray<Turn.Event>
) => {
  const awaiting = task?.awaiting ?? null
  if (task === null || awaiting === null || epoch === null || turnNews(task, events).length === 0) return Effect.void
  return Effect.flatMap(Controller.Controller, (controller) =>
    controller.recordTurn(
      task.taskId,
      { attempt: { stepId: awaiting.stepId, attempt: awaiting.attempt }, events },
      { actor: HostSession.actorOf(session), leaseEpoch: epoch }
    )).pipe(Effect.catchAllCause(() => Effect.void))
}

/**
 * The epoch of the lease this session holds as the view read it, else null. For events that only
 * tell of the turn (the agent's stop, a stream's start or end): they neither heartbeat nor take the
 * lease, so an agent going idle lets its lease lapse as it did before turns were recorded.
 */
const heldEpoch = (task: HostView.HostTask | null, session: HostEvent.Session): number | null =>
  task !== null && task.leaseStatus === "held" && ownsLease(task, session) ? task.leaseEpoch : null

/**
 * Whether the host's own record of the session shows a call of the stopping turn that ended and
 * that no hook reported (ADR 0030: Claude Code's PostToolUse sees only the judged tools). Asked
 * only where that call's own hook would have recorded it (`ended`): the session owns the lease of
 * a task whose step awaits its worker, and the turn has no `toolUsed` yet as the view read it; and
 * only of an adapter that can tell. Whatever goes wrong tells nothing: a turn record never changes
 * the answer.
 */
const unreportedEnd = (
  adapter: HostAdapter.HostAdapter,
  task: HostView.HostTask | null,
  event: HostEvent.HostEvent & { readonly _tag: "StopRequested" }
): Effect.Effect<boolean> => {
  const read = adapter.callEndedInTurn
  const turn = task?.awaiting?.turn
  if (read === undefined || event.transcript === undefined || task === null || turn === undefined || turn.toolUsed || !ownsLease(task, event.session)) {
    return Effect.succeed(false)
  }
  return read(event.transcript).pipe(Effect.catchAllCause(() => Effect.succeed(false)))
}

/**
 * The epoch of the lease the session keeps alive (or takes back, once lapsed) to record its turn,
 * else null: when another owner holds it, or when that cannot be done (the answer stays).
 */
const attendedEpoch = (task: HostView.HostTask, session: HostEvent.Session) =>
  HostSession.attend(task, session).pipe(
    Effect.map((standing) => (standing.holder === null ? standing.ours : null)),
    Effect.catchAllCause(() => Effect.succeed(null))
  )

/**
 * A tool call that ended: the worker's intent for it (if it opened one) is resolved, with what the
 * call tells of the turn, in the attempt the call belonged to. Any other call of the worker (a
 * read, a test run) counts in the awaited attempt's turn when it changes a flag.
 */
const ended = (event: HostEvent.HostEvent & { readonly _tag: "ToolCallCompleted" | "ToolCallFailed" }) =>
  Effect.gen(function*() {
    const selection = yield* HostView.select(preferredTask())
    if (selection._tag !== "One") return
    const task = selection.task
    const turn = TurnReport.eventsOf(event, allow)
    const intent = event.call.id !== null && ToolIntent.isSideEffect(event.call) ? event.call.id : null
    // Not a worker's call: no step awaits one and the session holds no lease (taking one now would
    // only keep the runner out). A call it made while a step awaited was closed with that step.
    if (task.awaiting === null && !ownsLease(task, event.session)) return
    if (intent === null && (!ownsLease(task, event.session) || turnNews(task, turn).length === 0)) return
    const standing = yield* HostSession.attend(task, event.session)
    // Another owner holds the lease (it took over a lapsed one): its recovery decides the call.
    if (standing.holder !== null) return
    if (intent === null) return yield* reportTurn(task, event.session, standing.ours, turn)
    const controller = yield* Controller.Controller
    yield* controller.toolCall.ended(
      task.taskId,
      {
        sessionRef: HostSession.sessionRef(event.session),
        callId: intent,
        outcome: event._tag === "ToolCallCompleted" ? "Succeeded" : "Failed",
        turn
      },
      { actor: HostSession.actorOf(event.session), leaseEpoch: standing.ours ?? undefined }
    )
  })

/**
 * Runs `use` with the project's services when the call belongs to a Ratchet project (from `start`,
 * see `locate`), else `outside` with the root the guard judges by.
 */
const inProject = <A, E, R>(start: string, session: HostEvent.Session, outside: (root: string) => A, use: (root: string) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(locate(start, session.cwd), ({ located, root }) =>
    located === null ? Effect.succeed(outside(root)) : use(root).pipe(Effect.provide(Store.session(located))))

const allow: Guard.Decision = { _tag: "Allow" }

/**
 * What the hook answers: the guard's decision, and the text the host adds to the agent's context
 * (the lessons for its task), when there is any.
 */
interface Answer {
  readonly decision: Guard.Decision
  readonly context: string | null
  /** Why the context could not be given: the answer stays, with a warning. */
  readonly warning: string | null
}

/**
 * A session's start or a prompt. The session becomes the worker of a manual step awaiting one, and
 * keeps its lease alive; for a task in RUNNING, the lessons that apply go into the agent's context
 * (`HookLessons`, loaded only here), recorded as shown first. Lessons are advice: when they cannot
 * be read or recorded, the event is still allowed, without them and with a warning.
 */
const opened = (event: HostEvent.HostEvent & { readonly _tag: "SessionStarted" | "PromptSubmitted" }, start: string) =>
  inProject(start, event.session, (): Answer => ({ decision: allow, context: null, warning: null }), () =>
    Effect.gen(function*() {
      const selection = yield* HostView.select(preferredTask())
      if (selection._tag === "One" && (selection.task.awaiting !== null || ownsLease(selection.task, event.session))) {
        const standing = yield* HostSession.attend(selection.task, event.session)
        // A prompt starts the worker's next turn.
        yield* reportTurn(selection.task, event.session, standing.ours, TurnReport.eventsOf(event, allow))
      }
      if (selection._tag !== "One" || selection.task.state !== "RUNNING") return { decision: allow, context: null, warning: null }
      const task = selection.task
      return yield* Effect.promise(() => import("./HookLessons.js")).pipe(
        Effect.flatMap((lessons) => lessons.context(task, event._tag === "SessionStarted" ? "session" : "prompt")),
        Effect.map((context): Answer => ({ decision: allow, context, warning: null })),
        Effect.catchAllCause((cause) =>
          Effect.succeed<Answer>({ decision: allow, context: null, warning: `no lessons were added to the agent's context: ${causeMessage(cause)}` })
        )
      )
    }))

/** What went wrong, in one message: the failure's own, or the defect's. */
const causeMessage = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  return failure._tag === "Some" ? messageOf(failure.value) : `unexpected: ${messageOf(Cause.squash(cause))}`
}

/** The guard's decision about `event` (events it does not judge are allowed), with what the session writes. */
const judge = (adapter: HostAdapter.HostAdapter, event: HostEvent.HostEvent, start: string) =>
  Effect.gen(function*() {
    const always = () => allow
    switch (event._tag) {
      case "ToolCallRequested":
        return yield* inProject(
          start,
          event.session,
          (root) => forHost(adapter, Guard.decide(event.call, guardContext(event.session, root, { _tag: "None" }))),
          (root) => requested(adapter, event, root)
        )
      case "ToolCallCompleted":
      case "ToolCallFailed":
        return yield* inProject(start, event.session, always, () => Effect.as(ended(event), allow))
      case "StopRequested": {
        // A subagent's stop ends its part, not the session's work: only the main agent is held,
        // and only its stop tells of the turn.
        if (event.subagent) return Guard.stop(null, true)
        return yield* inProject(start, event.session, always, () =>
          Effect.gen(function*() {
            const selection = yield* HostView.select(preferredTask())
            const task = selection._tag === "One" ? selection.task : null
            const decision = Guard.stop(task, event.continuing)
            const ended = yield* unreportedEnd(adapter, task, event)
            // A call's end that no hook reported is recorded as that call's own hook would have
            // (`ended`): under the lease the worker keeps alive; the stop alone neither heartbeats
            // nor takes it (ADR 0016).
            const epoch = ended && task !== null ? yield* attendedEpoch(task, event.session) : heldEpoch(task, event.session)
            yield* reportTurn(task, event.session, epoch, TurnReport.eventsOf(event, decision, ended))
            return decision
          }))
      }
      case "TurnStarted":
      case "FirstChunk":
      case "StreamReadCompleted":
        return yield* inProject(start, event.session, always, () =>
          Effect.gen(function*() {
            const selection = yield* HostView.select(preferredTask())
            const task = selection._tag === "One" ? selection.task : null
            yield* reportTurn(task, event.session, heldEpoch(task, event.session), TurnReport.eventsOf(event, allow))
            return allow
          }))
      case "SessionStarted":
      case "PromptSubmitted":
        // Answered with the lessons' context by `opened`.
        return allow
      case "SessionEnded":
        // Its lease is released; intents it left open stay for recovery (Indeterminate unless resolved).
        return yield* inProject(start, event.session, always, () =>
          Effect.gen(function*() {
            const selection = yield* HostView.select(preferredTask())
            if (selection._tag === "One") yield* HostSession.leave(selection.task, event.session)
            return allow
          }))
      default:
        return allow
    }
  })

const nameOf = (event: HostEvent.HostEvent): string =>
  event._tag === "ToolCallRequested" ? (event.permissionPrompt ? "PermissionRequest" : "PreToolUse") : event._tag === "StopRequested" ? "Stop" : event._tag

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" ? error.message : String(error)

/**
 * The decision about an event of a session claiming to be the runner's agent (`HookAgent`, loaded
 * only then). Outside a Ratchet project nothing can check the claim: its tool calls are denied.
 */
const agentDecision = (event: HostEvent.HostEvent, claim: AgentFence.Read & { readonly _tag: "Claim" | "Broken" }, start: string) =>
  inProject(
    start,
    event.session,
    (): Guard.Decision =>
      event._tag === "ToolCallRequested"
        ? deny("this session claims to be a runner's agent, but it is not in a Ratchet project, so the claim cannot be checked.", "Run agent steps with ratchet run in the project's checkout.")
        : allow,
    (root) => Effect.flatMap(Effect.promise(() => import("./HookAgent.js")), (agent) => agent.judge(event, claim, root))
  )

/**
 * Where the hook runs: its working directory (as the host started it, or `-C`) and its environment
 * (where the host's project variable is read).
 */
export interface Where {
  readonly directory: string
  readonly environment: Readonly<Record<string, string | undefined>>
}

/**
 * The answer to one raw payload. Never fails: every failure is the adapter's failure answer.
 */
export const answer = (adapter: HostAdapter.HostAdapter, raw: string, where: Where): Effect.Effect<HostAdapter.Reply> =>
  adapter.decode(raw).pipe(
    Effect.matchEffect({
      onFailure: (error) => Effect.succeed(adapter.failure(error.event, error.message)),
      onSuccess: (event) => {
        const start = ProjectRoot.start({ variable: adapter.projectVariable, environment: where.environment, directory: where.directory })
        if (start._tag === "Invalid") return Effect.succeed(adapter.failure(nameOf(event), start.reason))
        // The runner's agent (or a session claiming to be it) is judged by its own rules (ADR 0040).
        const claim = AgentFence.claimOf(where.environment)
        const answered: Effect.Effect<Answer, unknown> = claim._tag !== "None"
          ? Effect.map(agentDecision(event, claim, start.directory), (decision) => ({ decision, context: null, warning: null }))
          : event._tag === "SessionStarted" || event._tag === "PromptSubmitted"
          ? opened(event, start.directory)
          : Effect.map(judge(adapter, event, start.directory), (decision) => ({ decision, context: null, warning: null }))
        return answered.pipe(
          Effect.map((answer) =>
            answer.warning !== null ? adapter.failure(nameOf(event), answer.warning) : adapter.reply(event, answer.decision, answer.context)
          ),
          Effect.catchAllCause((cause) => Effect.succeed(adapter.failure(nameOf(event), causeMessage(cause))))
        )
      }
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
