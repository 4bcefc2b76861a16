/**
 * The run engine: executes an approved plan's steps, in `needs` order, as attempts whose side
 * effects are intents written before they start and resolved after they end, under the task's
 * writer lease. It is what the daemonless runner process (`apps/runner`) runs, and it returns as
 * soon as the run has no work it can do by itself: every step done (the task is VERIFYING), a
 * manual step awaiting its worker, the task BLOCKED, PAUSED or CANCELLED.
 *
 * Every write goes through the command handler (`RunWriter`), decided by the kernel (the task's
 * and the run's deciders), and every durable boundary is one transaction (ADR 0011, ADR 0020):
 * 1. before a command runs: its attempt scheduled and admitted, its intent recorded and dispatched
 *    (`StartStep`);
 * 2. after it ended: its exit, the intent's resolution and the attempt's end (`FinishStep`), what
 *    the kernel decides about the task (a block, a failure counted), the step boundary with its
 *    checkpoint, and, when the plan already says what runs next, that step's start. In a steady
 *    run each step therefore costs one commit.
 *
 * The tree a boundary observed is the tree the next command starts from, so a step costs one look
 * at the work tree; it is stored as a blob under the boundary's `dirtyDigest` (a manual step's
 * changes are checked against the boundary recorded when it opened, see {@link StepScope}).
 *
 * At every start it first recovers what a dead runner left open (`RunRecovery`).
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import type * as AgentStep from "@ratchet/kernel/AgentStep"
import * as Decider from "@ratchet/kernel/Decider"
import type * as Event from "@ratchet/kernel/Event"
import type * as Plan from "@ratchet/kernel/Plan"
import * as PlanProgress from "@ratchet/kernel/Progress"
import * as Task from "@ratchet/kernel/Task"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as AgentFence from "./AgentFence.js"
import * as AgentStepEnd from "./AgentStepEnd.js"
import * as CommandHandler from "./CommandHandler.js"
import * as GitSettings from "./GitSettings.js"
import { Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as Projection from "./Projection.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as Runnable from "./Runnable.js"
import * as RunLease from "./RunLease.js"
import * as AgentLessons from "./AgentLessons.js"
import * as LessonFacts from "./LessonFacts.js"
import * as Revision from "./Revision.js"
import * as RunRecovery from "./RunRecovery.js"
import * as RunReport from "./RunReport.js"
import * as RunAgentStep from "./RunAgentStep.js"
import * as RunRequest from "./RunRequest.js"
import * as RunStep from "./RunStep.js"
import * as RunWriter from "./RunWriter.js"
import * as StepScope from "./StepScope.js"
import * as TaskBranch from "./TaskBranch.js"
import * as Tracing from "./Tracing.js"
import * as WorkTree from "./WorkTree.js"

export {
  /** @since 0.1.0 */
  faultPoints
} from "./RunnerModel.js"
export type {
  /** @since 0.1.0 */
  FaultPoint
} from "./RunnerModel.js"

export type {
  /** @since 0.1.0 */
  Options,
  /** @since 0.1.0 */
  Outcome,
  /** @since 0.1.0 */
  Progress,
  /** @since 0.1.0 */
  RunError,
  /** @since 0.1.0 */
  Stop
} from "./RunnerModel.js"
import type { Options, Outcome, RunError, Stop } from "./RunnerModel.js"

/** How often, at most, the task's projections are rewritten while steps run (always when the run stops). */
const projectEveryMs = 5_000

const newId = (prefix: string) => `${prefix}-${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`

/** A step whose start a write committed, and whose command runs next. */
interface Started {
  readonly step: Plan.Step
  readonly command: string
  readonly attempt: number
  readonly intentId: string
  readonly index: number
  /** An agent step's capability: only in its agent's environment; its digest is `intentId` (AgentFence). */
  readonly capability?: string | undefined
}

/**
 * Runs `options.taskId` until it has no work the runner can do by itself.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (
  options: Options
): Effect.Effect<Outcome, RunError, Project | EventStore.EventStore | ReadModel.ReadModels | BlobStore.BlobStore | LeaseManager.LeaseManager> =>
  Effect.withSpan(runScoped(options), "ratchet.run", { attributes: { "ratchet.task": options.taskId, "ratchet.takeover": options.takeover } })

const runScoped = (
  options: Options
): Effect.Effect<Outcome, RunError, Project | EventStore.EventStore | ReadModel.ReadModels | BlobStore.BlobStore | LeaseManager.LeaseManager> =>
  Effect.scoped(Effect.gen(function*() {
    const project = yield* Project
    const store = yield* EventStore.EventStore
    const models = yield* ReadModel.ReadModels
    const projectId = project.project.projectId
    const root = project.root
    const taskId = options.taskId
    const actor = options.actor
    const progress = options.onProgress ?? (() => {})
    const fault = options.fault ?? (() => {})
    // The branch the task lives on (a rewind forks a new one); a run writes only there.
    const branch = TaskBranch.current(yield* store.branches(taskId))
    // Where step commands write their output (and pid files) on this machine.
    const outputDir = path.join(options.home, "output")

    // The run's frontier, not every attempt and intent of the branch: a start after a crash reads
    // what recovery and the next step need, whatever the length of the task's history.
    const first = yield* CommandHandler.read(projectId, taskId, branch, "frontier")
    if (first.summary === null || first.summary.projectId !== projectId) return yield* new ControllerError.TaskNotFound({ taskId, projectId })
    const firstTask = first.summary.task
    const startState = firstTask.state
    // A dead runner's lease on a task it left VERIFYING, BLOCKED or PAUSED is taken over to hand it on (ADR 0022).
    const observedLease = yield* LeaseManager.LeaseManager.pipe(Effect.flatMap((leases) => leases.observe({ projectId, taskId, branch })))
    yield* Runnable.admit(startState, Task.isTerminal(startState), options.takeover, observedLease.status, Task.nextStep(firstTask), observedLease.holder?.host)
    // A step this runner cannot run is refused before the lease is taken, never skipped.
    const agentHosts = options.agentHosts ?? {}
    const unsupported = Runnable.unsupportedStep(taskId, firstTask.plan?.plan ?? null, Object.keys(agentHosts) as Array<AgentStep.Host>)
    if (unsupported !== null) return yield* unsupported

    // ---- the lease ------------------------------------------------------------------------------
    const held = yield* RunLease.take({
      projectId,
      taskId,
      branch,
      first: { ...first, summary: first.summary },
      takeover: options.takeover,
      actor,
      home: options.home,
      root: project.root,
      workspaceId: project.workspaceId,
      runId: () => newId("run")
    })
    const { lost, released } = held
    let started = held.started

    // ---- writes ---------------------------------------------------------------------------------
    const epoch = held.epoch
    const meta = (at: number) => ({ version: 1 as const, actor, at })
    // Taking the lease wrote to the stream: the run starts from what is stored now.
    const writer = RunWriter.make({
      projectId,
      taskId,
      branch,
      epoch,
      initial: held.initial ?? (yield* CommandHandler.read(projectId, taskId, branch, "frontier")),
      lost
    })
    const taskNow = () => writer.current().summary?.task ?? firstTask

    const runOf = (task: Task.Task) => {
      if (task.run === null || task.plan === null || task.spec === null) {
        return Effect.dieMessage(`task ${taskId} is ${task.state} without a run, plan or spec`)
      }
      return Effect.succeed({ run: task.run, plan: task.plan.plan, spec: task.spec })
    }

    // The projections are a view for people: rewritten when the run stops, and at most once a
    // five seconds while it runs (each rewrite reads the run's events and syncs directories).
    let projectedAt = 0
    const project_ = (task: Task.Task, force: boolean) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        if (!force && now - projectedAt < projectEveryMs) return
        projectedAt = now
        const report = yield* RunReport.render(task, branch).pipe(Effect.catchAll(() => Effect.succeed(null)))
        yield* Projection.write(root, task, report).pipe(Effect.catchAll(() => Effect.void))
      })

    /** The step boundary over `tree` and its checkpoint: where a rewind can return to. */
    const boundaryOf = (task: Task.Task, tree: WorkTree.Observation, nextStep: string | null, at: number): ReadonlyArray<Event.Event> => {
      const current = task.run as NonNullable<Task.Task["run"]>
      return [
        {
          _tag: "BoundaryRecorded",
          ...meta(at),
          runId: current.runId,
          head: tree.head,
          dirtyPaths: [...tree.dirty.keys()],
          dirtyDigest: WorkTree.dirtyDigest(tree),
          specDigest: task.spec?.digest ?? current.specDigest,
          planDigest: task.plan?.digest ?? current.planDigest,
          nextStep
        },
        { _tag: "CheckpointRecorded", ...meta(at), kind: "step", runId: current.runId }
      ]
    }

    /**
     * What starts `step` as its attempt `attempt`: scheduled unless verification scheduled it,
     * admitted, and for a command its intent recorded and dispatched.
     */
    const startOf = (runId: string, step: Plan.Step, status: PlanProgress.StepStatus, index: number, at: number) => {
      const scheduled = status._tag === "Scheduled"
      const attempt = status._tag === "NotStarted" ? 1 : scheduled ? status.attempt : status.attempt + 1
      const command = step.run?.command ?? (step.agent === undefined ? null : RunAgentStep.describe(step.agent))
      // An agent's intent id is its capability's digest, so a hook can tell the runner's agent (ADR 0040).
      const capability = step.agent === undefined ? undefined : AgentFence.newCapability()
      const intentId = capability === undefined ? newId("in") : AgentFence.intentIdOf(capability)
      const item: Decider.Command = {
        _tag: "StartStep",
        actor,
        at,
        runId,
        stepId: step.id,
        attempt,
        scheduled,
        effect: command === null ? null : { intentId, description: command }
      }
      return { item, step, attempt, started: command === null ? null : { step, command, attempt, intentId, index, capability } satisfies Started }
    }

    /** Whether the run should stop before starting another step: a request for it is waiting. */
    const requested = () => {
      const found = RunRequest.read(options.home, taskId)
      return found !== null && RunRequest.isFor(found, epoch)
    }

    const outcome = (task: Task.Task, stop: Stop, message: string, awaiting: Outcome["awaiting"] = null): Outcome => ({
      taskId,
      runId: task.run?.runId ?? null,
      state: task.state,
      stop,
      message,
      blocker: task.blockers.at(-1) ?? null,
      awaiting
    })

    const awaitingWorker = (task: Task.Task, step: Plan.Step, attempt: number) =>
      outcome(task, "awaiting_worker", `Step ${step.id} is manual and awaits its worker. When it is done: ratchet step done ${taskId} ${step.id} --note "…"`, {
        stepId: step.id,
        attempt,
        instructions: step.manual?.instructions ?? ""
      })

    // ---- the loop -------------------------------------------------------------------------------
    const loop = Effect.gen(function*() {
      const landed = taskNow()
      if (options.takeover && landed.state !== "PLAN_APPROVED" && landed.state !== "RUNNING") {
        // Nothing to run: the lease is released as this run ends; the task goes on with its next step.
        yield* project_(landed, true)
        const handed = Runnable.handedOn(landed, epoch)
        return outcome(landed, handed.stop, handed.message)
      }
      if (taskNow().state === "PLAN_APPROVED") {
        // The lease came by a takeover (or after a lost race): start the run under it now.
        const runId = newId("run")
        const authority = yield* ProjectApprovers.authority(projectId, project.root)
        yield* writer.write(({ summary }, at) => {
          const fresh = summary?.task ?? firstTask
          return [
            {
              _tag: "StartRun",
              actor,
              at,
              runId,
              specDigest: fresh.spec?.digest ?? ("" as never),
              planDigest: fresh.plan?.digest ?? ("" as never),
              lease: { held: true, epoch },
              authority
            },
            { _tag: "CheckpointRecorded", ...meta(at), kind: "run_start", runId } satisfies Event.Event
          ]
        })
        started = true
      }
      const begun = yield* runOf(taskNow())
      const runId = begun.run.runId
      progress({ type: "run", taskId, runId, steps: begun.plan.steps.length, started, epoch })
      yield* Effect.annotateCurrentSpan({ "ratchet.run": runId, "ratchet.epoch": epoch, "ratchet.started": started })
      // Each runner of the run says which trace it exports under, so the run page can link to it.
      const trace = yield* Tracing.exported()
      if (Option.isSome(trace)) yield* writer.write((_, at) => [{ _tag: "TraceRecorded", ...meta(at), runId, epoch, ...trace.value } satisfies Event.Event])
      if (taskNow().state === "RUNNING") {
        yield* RunRecovery.recover({
          root,
          taskId,
          actor,
          outputDir,
          writer,
          onOrphan: (stepId, pgid) => progress({ type: "orphan", taskId, stepId, pgid }),
          onRecovered: (stepId, attempt, decision) => progress({ type: "recovered", taskId, stepId, attempt, decision }),
          sandbox: options.sandbox
        }, begun.plan, runId)
      }
      // The tree the next command starts from: observed once here, then at each boundary. Stored
      // as a blob, as every boundary's tree is (a manual step's worker is held to it).
      let tree = yield* WorkTree.observe(root)
      yield* StepScope.storeTree(tree)
      // The last boundary this runner wrote, when nothing was written after it.
      let boundaryLsn: number | null = null
      // A step whose start the last write committed.
      let next: Started | null = null
      while (true) {
        const task = taskNow()
        switch (task.state) {
          case "BLOCKED":
            fault("task-blocked")
            yield* project_(task, true)
            return outcome(task, "blocked", task.blockers.at(-1)?.requiredAction ?? Task.nextStep(task))
          case "CANCELLED":
            return outcome(task, "cancelled", "The task was cancelled.")
          case "PAUSED":
            return outcome(task, "paused", `Paused. Continue with: ratchet resume ${taskId}`)
          case "RUNNING":
            break
          default:
            return outcome(task, task.state === "VERIFYING" ? "verifying" : "blocked", Task.nextStep(task))
        }
        const { plan, spec } = yield* runOf(task)
        if (next === null) {
          const { attempts, intents } = RunRecovery.rowsOf(writer.current().run, runId)
          const found = PlanProgress.next(plan, attempts, intents)
          const waiting = RunRequest.read(options.home, taskId)
          // A request left for an earlier run (its runner died before acting on it) is dropped.
          if (waiting !== null && !RunRequest.isFor(waiting, epoch)) RunRequest.clearIf(options.home, taskId, waiting)
          const request = waiting !== null && RunRequest.isFor(waiting, epoch) ? waiting : null
          if (request !== null) {
            const nextStep = found._tag === "Step" ? found.step.id : null
            if (request.kind === "pause") {
              const paused = yield* writer.write(({ summary }, at) => [
                ...boundaryOf(summary?.task ?? task, tree, nextStep, at),
                { _tag: "Pause", actor: request.actor, at, reason: request.reason }
              ])
              RunRequest.clearIf(options.home, taskId, request)
              yield* project_(paused.task, true)
              return outcome(paused.task, "paused", `Paused before ${nextStep ?? "verification"}. Continue with: ratchet resume ${taskId}`)
            }
            const cancelled = yield* writer.write(
              (_read, at) => [{ _tag: "Cancel", actor: request.actor, at, reason: request.reason }],
              (at) => [{ _tag: "LeaseReleased", ...meta(at), epoch }]
            )
            yield* Ref.set(released, true)
            RunRequest.clearIf(options.home, taskId, request)
            yield* project_(cancelled.task, true)
            return outcome(cancelled.task, "cancelled", "Cancelled.")
          }
          if (found._tag === "AllDone") {
            // The episode ends with the tree verification starts from: a step boundary, unless the
            // last thing written already is one (a manual step's worker, for one, wrote after it).
            const lastLsn = writer.current().summary?.lastLsn ?? 0
            if (boundaryLsn !== lastLsn) {
              // The run's latest step boundary alone (an index seek), not every checkpoint of the branch.
              const latest = yield* models.checkpoints(taskId, branch, { runId, kind: "step", last: 1 })
              const stored = latest[0]?.lsn ?? 0
              if (stored !== lastLsn) {
                const settled = yield* writer.write(({ summary }, at) => boundaryOf(summary?.task ?? task, tree, null, at))
                boundaryLsn = settled.appended?.lastLsn ?? null
              } else boundaryLsn = stored
            }
            const snapshotLsn = boundaryLsn ?? lastLsn
            const entered = yield* writer.write((_read, at) => [{ _tag: "EnterVerification", actor, at, pendingSteps: [], snapshotLsn }])
            fault("verification-entered")
            yield* project_(entered.task, true)
            return outcome(entered.task, "verifying", `Every step is done; the task is VERIFYING. Next, verify its acceptance criteria as someone other than the worker (ratchet verify ${taskId}), then complete it (ratchet done ${taskId}).`)
          }
          const { index, status, step } = found
          // Refused before the run started; checked again so that no agent step ever opens as manual.
          if (step.agent !== undefined && agentHosts[step.agent.host] === undefined) return yield* Runnable.agentStepRefused(taskId, step, index)
          if (status._tag === "Unsettled") {
            return outcome(task, "blocked", `Step ${step.id} awaits a decision: ratchet unblock ${taskId} --resolve ${step.id} succeeded|failed`)
          }
          if (status._tag === "Open") {
            // Only a manual step's attempt stays open after recovery: it awaits its worker.
            yield* project_(task, true)
            return awaitingWorker(task, step, status.attempt)
          }
          // A manual step opens with a boundary right after it: its worker is held to the scope
          // from that tree (StepScope).
          let begin: ReturnType<typeof startOf> | null = null
          const opened = yield* writer.write(({ summary }, at) => {
            begin = startOf(runId, step, status, index, at)
            return step.run === undefined ? [begin.item, ...boundaryOf(summary?.task ?? task, tree, step.id, at)] : [begin.item]
          })
          const chosen = begin as ReturnType<typeof startOf> | null
          if (chosen === null) return yield* Effect.dieMessage("a step start that decided nothing")
          progress({ type: "step", taskId, stepId: step.id, index, total: plan.steps.length, attempt: chosen.attempt, command: chosen.started?.command ?? null })
          if (chosen.started === null) {
            yield* project_(opened.task, true)
            return awaitingWorker(opened.task, step, chosen.attempt)
          }
          fault("step-started")
          next = chosen.started
        } else {
          progress({ type: "step", taskId, stepId: next.step.id, index: next.index, total: plan.steps.length, attempt: next.attempt, command: next.command })
        }

        // ---- one command: run it, then record its end, the boundary and what starts next --------
        const current = next
        next = null
        const stepContext: RunStep.Context = {
          root,
          taskId,
          home: options.home,
          outputDir,
          epoch,
          lost,
          onOutput: (stream, text) => progress({ type: "output", taskId, stepId: current.step.id, stream, text }),
          onTick: (elapsedMs) => progress({ type: "tick", taskId, stepId: current.step.id, attempt: current.attempt, elapsedMs }),
          sandbox: options.sandbox
        }
        const stepInput = { ...current, before: tree, started: () => fault("child-started"), exited: () => fault("child-exited") }
        // An agent step never runs as a shell command, whatever this runner reads.
        const agent = current.step.agent
        const ran = yield* (agent === undefined
          ? RunStep.execute(stepContext, stepInput)
          : RunAgentStep.execute(stepContext, {
            ...stepInput,
            task: taskNow(),
            decoder: agentHosts[agent.host],
            hooks: options.agentHooks?.[agent.host],
            // A successor a failed verification scheduled is told what failed (ADR 0041).
            revision: yield* Revision.forStep(taskId, branch, runId, current.step, current.attempt),
            // The lessons that apply, recorded as shown to this attempt before it starts (ADR 0038's amendment).
            lessons: (yield* AgentLessons.forAttempt({ task: taskNow(), runId, stepId: current.step.id, attempt: current.attempt })).lessons
          })).pipe(Effect.withSpan("ratchet.attempt", {
          attributes: {
            "ratchet.task": taskId,
            "ratchet.run": runId,
            "ratchet.step": current.step.id,
            "ratchet.attempt": current.attempt,
            "ratchet.intent": current.intentId
          }
        }))
        const after = ran.after
        // The calls the hooks refused, as the refusals noted on the attempt name them (ADR 0040's amendment).
        const refusedCalls = yield* AgentStepEnd.refusedCalls(store, ran, { projectId, taskId, branch, runId })
        // The step as finished: an agent's, failed when its calls ran without the run's hooks.
        let checked: typeof ran = ran
        let following: ReturnType<typeof startOf> | null = null
        const finished = yield* writer.write((read, at) => {
          following = null
          const fresh = read.summary?.task ?? task
          const settled = AgentStepEnd.settle(ran, read.run, refusedCalls, { runId, actor, at })
          checked = settled.checked
          const unreported = settled.unreported
          const stepEnd = [...unreported, ...RunAgentStep.finish(checked, {
            runId,
            taskId,
            actor,
            at,
            task: fresh,
            allowedScope: spec.spec.execution?.allowedScope ?? [],
            forbiddenScope: spec.spec.execution?.forbiddenScope ?? []
          })]
          // A cancelled step ends the run; a tree that could not be read has no boundary.
          if (ran.cancelled !== null || Either.isLeft(after)) return stepEnd
          // git's settings a child changed block the task here (ADR 0045), said first in a block
          // the step's end makes anyway; a task the kernel blocks by itself keeps its blocker.
          const settings = options.gitSettings?.() ?? null
          const foldOf = (items: typeof stepEnd) => Decider.decideAll(items, { task: fresh, run: read.run }, (read.summary?.lastLsn ?? 0) + 1)
          const folded = settings === null ? null : foldOf(stepEnd)
          const ended = settings === null
            ? stepEnd
            : stepEnd.some((item) => item._tag === "Block")
            ? stepEnd.map((item) => (item._tag === "Block" ? { ...item, blocker: GitSettings.merged(settings, item.blocker) } : item))
            : folded !== null && Either.isRight(folded) && folded.right.state.task._tag === "Task" && folded.right.state.task.state === "RUNNING"
            ? [...stepEnd, { _tag: "Block", actor, at, blocker: settings } satisfies Task.Command]
            : stepEnd
          // What comes next, as the state will be once the step's end is folded.
          const interim = foldOf(ended)
          if (Either.isLeft(interim)) return ended
          const then = interim.right.state.task
          const rows = RunRecovery.rowsOf(interim.right.state.run, runId)
          const upcoming = then._tag === "Task" && then.state === "RUNNING" ? PlanProgress.next(plan, rows.attempts, rows.intents) : null
          const nextStep = upcoming?._tag === "Step" ? upcoming.step.id : null
          const boundary = boundaryOf(then._tag === "Task" ? then : fresh, after.right, nextStep, at)
          const startable = upcoming?._tag === "Step" &&
            (upcoming.status._tag === "NotStarted" || upcoming.status._tag === "Scheduled" || upcoming.status._tag === "Retry")
          if (!startable || requested()) return [...ended, ...boundary]
          following = startOf(runId, upcoming.step, upcoming.status, upcoming.index, at)
          // A command's start comes after the checkpoint (a rewind to it keeps nothing dispatched);
          // a manual step's opening comes before its boundary (the tree its worker starts from).
          return following.started === null ? [...ended, following.item, ...boundary] : [...ended, ...boundary, following.item]
        }, ran.cancelled === null ? undefined : (at) => [{ _tag: "LeaseReleased", ...meta(at), epoch }])
        fault("step-finished")
        // A failed command teaches the lessons; recording it never changes the run.
        if (!RunStep.succeeded(ran) && ran.cancelled === null) yield* LessonFacts.stepFailed(ran, { actor, task: finished.task, runId })
        if (Either.isRight(after)) tree = after.right
        const startedNext = following as ReturnType<typeof startOf> | null
        boundaryLsn = startedNext === null && Either.isRight(after) && ran.cancelled === null ? finished.appended?.lastLsn ?? null : null
        progress({
          type: "step-end",
          taskId,
          stepId: current.step.id,
          attempt: current.attempt,
          state: RunAgentStep.endOf(checked),
          exitCode: ran.ended.exitCode,
          durationMs: ran.ended.durationMs,
          changedPaths: ran.changedPaths
        })
        if (ran.cancelled !== null) {
          yield* Ref.set(released, true)
          RunRequest.clearIf(options.home, taskId, ran.cancelled)
        }
        if (finished.task.state === "CANCELLED") {
          yield* project_(finished.task, true)
          return outcome(finished.task, "cancelled", "Cancelled while a step ran: its attempt is Indeterminate (its effect may have half happened).")
        }
        if (startedNext !== null) {
          if (startedNext.started === null) {
            // The next step is manual: it opened with this write, and awaits its worker.
            yield* project_(finished.task, true)
            return awaitingWorker(finished.task, startedNext.step, startedNext.attempt)
          }
          fault("step-started")
          next = startedNext.started
        }
        yield* project_(finished.task, false)
      }
    })

    return yield* Effect.raceFirst(loop, Deferred.await(lost))
  }))
