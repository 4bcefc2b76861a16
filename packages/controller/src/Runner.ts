/**
 * The run engine: executes an approved plan's steps, in `needs` order, as attempts whose side
 * effects are intents written before they start and resolved after they end, under the task's
 * writer lease. It is what the daemonless runner process (`apps/runner`) runs, and it returns as
 * soon as the run has no work it can do by itself: every step done (the task is VERIFYING), a
 * manual step awaiting its worker, the task BLOCKED, PAUSED or CANCELLED.
 *
 * Every durable boundary is one append (ADR 0011):
 * 1. attempt start: `AttemptScheduled`, `AttemptTransitioned` Pending → Running, `IntentRecorded`;
 * 2. dispatch: `IntentDispatched`, written before the child process starts;
 * 3. result: `CommandExited`, `IntentResolved`, the attempt's end and what the kernel decides
 *    about it (a successor, or BLOCKED), or a scope violation's block;
 * 4. step boundary: `BoundaryRecorded` and a `step` checkpoint (the tree it observed is stored as
 *    a blob under the boundary's `dirtyDigest` first: a manual step's changes are checked against
 *    the boundary recorded when it opened, see {@link StepScope}).
 *
 * At every start it first recovers what a dead runner left open (see {@link RunState}'s table): an
 * attempt with no dispatched intent is cancelled cleanly; a dispatched, unresolved one is probed,
 * re-run when idempotent, or left Indeterminate with the task BLOCKED for a person to settle. A
 * non-idempotent side effect is never re-run silently.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import * as Attempt from "@ratchet/kernel/Attempt"
import type * as Event from "@ratchet/kernel/Event"
import * as Intent from "@ratchet/kernel/Intent"
import type * as Plan from "@ratchet/kernel/Plan"
import * as Task from "@ratchet/kernel/Task"
import * as LeaseError from "@ratchet/lease/LeaseError"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Owner from "@ratchet/lease/Owner"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import { Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as Projection from "./Projection.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as RunReport from "./RunReport.js"
import * as RunRequest from "./RunRequest.js"
import * as RunState from "./RunState.js"
import * as Scope from "./Scope.js"
import * as StepProcess from "./StepProcess.js"
import * as StepScope from "./StepScope.js"
import * as TaskBranch from "./TaskBranch.js"
import * as WorkTree from "./WorkTree.js"

/**
 * The named durable boundaries a fault can be injected at (a test facility: the runner kills
 * itself with SIGKILL there when `RATCHET_FAULT` names one).
 *
 * @since 0.1.0
 * @category models
 */
export const faultPoints = [
  "attempt-started",
  "intent-dispatched",
  "child-started",
  "child-exited",
  "intent-resolved",
  "before-checkpoint",
  "after-checkpoint"
] as const

/**
 * @since 0.1.0
 * @category models
 */
export type FaultPoint = (typeof faultPoints)[number]

/**
 * What the runner reports as it works, for a terminal or as NDJSON.
 *
 * @since 0.1.0
 * @category models
 */
export type Progress =
  | { readonly type: "run"; readonly taskId: string; readonly runId: string; readonly steps: number; readonly started: boolean; readonly epoch: number }
  | { readonly type: "recovered"; readonly taskId: string; readonly stepId: string; readonly attempt: number; readonly decision: string }
  | { readonly type: "orphan"; readonly taskId: string; readonly stepId: string; readonly pgid: number }
  | { readonly type: "tick"; readonly taskId: string; readonly stepId: string; readonly attempt: number; readonly elapsedMs: number }
  | {
    readonly type: "step"
    readonly taskId: string
    readonly stepId: string
    readonly index: number
    readonly total: number
    readonly attempt: number
    readonly command: string | null
  }
  | { readonly type: "output"; readonly taskId: string; readonly stepId: string; readonly stream: "stdout" | "stderr"; readonly text: string }
  | {
    readonly type: "step-end"
    readonly taskId: string
    readonly stepId: string
    readonly attempt: number
    readonly state: Attempt.State
    readonly exitCode: number | null
    readonly durationMs: number
    readonly changedPaths: ReadonlyArray<string>
  }

/**
 * Why the runner stopped.
 *
 * @since 0.1.0
 * @category models
 */
export type Stop = "verifying" | "awaiting_worker" | "blocked" | "paused" | "cancelled"

/**
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly taskId: string
  readonly runId: string | null
  readonly state: Task.State
  readonly stop: Stop
  /** One sentence for people: what happened and what to do next. */
  readonly message: string
  readonly blocker: Event.Blocker | null
  readonly awaiting: { readonly stepId: string; readonly attempt: number; readonly instructions: string } | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly taskId: string
  /** Take the lease over from a holder whose grace has passed (never from a live one). */
  readonly takeover: boolean
  readonly actor: Event.Actor
  /** `$RATCHET_HOME`, where requests from other terminals arrive. */
  readonly home: string
  readonly onProgress?: ((progress: Progress) => void) | undefined
  /** Called at each durable boundary; the runner process kills itself at the configured one. */
  readonly fault?: ((point: FaultPoint) => void) | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type RunError =
  | ControllerError.TaskNotFound
  | ControllerError.InvalidRequest
  | Task.Refused
  | Task.Held
  | LeaseManager.AcquireError
  | LeaseManager.TakeoverError
  | LeaseError.LeaseLost
  | Owner.InvalidOwner
  | EventStore.AppendError
  | EventStore.InvalidRequest
  | StorageError
  | WorkTree.WorkTreeError

/** How often a long step reports that it is still running (elapsed time). */
const tickMs = 5_000

/** How often a running child's runner looks for a cancel request. */
const requestPollMs = 200

/** How long recovery waits for a dead runner's command that is still running, when its step has no timeout. */
const orphanWaitSeconds = 600

/** The timeout of a recovery probe when its step declares none. */
const defaultProbeTimeoutMs = 60_000

const newId = (prefix: string) => `${prefix}-${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`

/** The identity of this runner process as a lease owner. */
const ownerOf = (workspaceId: string) =>
  Owner.current({ workspaceId, host: "runner", sessionRef: os.hostname().slice(0, 200) || "unknown-host" })

/**
 * Runs `options.taskId` until it has no work the runner can do by itself.
 *
 * @since 0.1.0
 * @category constructors
 */
export const run = (
  options: Options
): Effect.Effect<Outcome, RunError, Project | EventStore.EventStore | ReadModel.ReadModels | BlobStore.BlobStore | LeaseManager.LeaseManager> =>
  Effect.scoped(Effect.gen(function*() {
    const project = yield* Project
    const store = yield* EventStore.EventStore
    const models = yield* ReadModel.ReadModels
    const blobs = yield* BlobStore.BlobStore
    const leases = yield* LeaseManager.LeaseManager
    const projectId = project.project.projectId
    const root = project.root
    const taskId = options.taskId
    const actor = options.actor
    const progress = options.onProgress ?? (() => {})
    const fault = options.fault ?? (() => {})
    // The branch the task lives on (a rewind forks a new one); a run writes only there.
    const branch = TaskBranch.current(yield* store.branches(taskId))
    const key: LeaseManager.Key = { projectId, taskId, branch }
    // Where step commands write their output (and pid files) on this machine.
    const outputDir = path.join(options.home, "output")

    const summaryOf = Effect.gen(function*() {
      const summary = yield* models.taskSummary(taskId, branch)
      if (summary === null || summary.projectId !== projectId) return yield* new ControllerError.TaskNotFound({ taskId, projectId })
      return summary
    })

    const first = yield* summaryOf
    const startState = first.task.state
    if (startState !== "PLAN_APPROVED" && startState !== "RUNNING") {
      return yield* new Task.Refused({
        code: Task.isTerminal(startState) ? "terminal_state" : startState === "PAUSED" ? "task_paused" : "forbidden_transition",
        command: "Run",
        state: startState,
        reason: `a run executes a task that is PLAN_APPROVED or RUNNING; this one is ${startState}.`,
        action: Task.nextStep(first.task)
      })
    }

    // ---- the lease ------------------------------------------------------------------------------
    const owner = yield* ownerOf(project.workspaceId)
    const observed = yield* leases.observe(key)
    const released = yield* Ref.make(false)
    let started = false
    let lease: LeaseManager.Lease
    if (options.takeover && observed.status !== "free") {
      lease = (yield* leases.takeover(key, owner, { actor })).lease
    } else if (startState === "PLAN_APPROVED" && observed.status === "free" && first.task.spec !== null && first.task.plan !== null) {
      // A fresh run: the lease and the run start (with its checkpoint) in one append, so a run is
      // never started without its lease nor a lease taken for a run that never started.
      const at = yield* Clock.currentTimeMillis
      const epoch = (observed.epoch ?? 0) + 1
      const runId = newId("run")
      const decided = Task.decide({
        _tag: "StartRun",
        actor,
        at,
        runId,
        specDigest: first.task.spec.digest,
        planDigest: first.task.plan.digest,
        lease: { held: true, epoch },
        authority: yield* ProjectApprovers.authority(projectId)
      }, first.task)
      if (Either.isLeft(decided)) return yield* decided.left
      yield* store.append({
        projectId,
        streamId: taskId,
        branch,
        expectedVersion: first.version,
        epoch,
        operationId: newId("op"),
        events: [
          {
            _tag: "LeaseAcquired",
            version: 1,
            actor,
            at,
            epoch,
            owner,
            heartbeatMs: leases.settings.heartbeatMs,
            graceMs: leases.settings.graceMs
          },
          ...decided.right,
          { _tag: "CheckpointRecorded", version: 1, actor, at, kind: "run_start", runId }
        ]
      }).pipe(
        Effect.catchTag("@ratchet/storage/StaleEpoch", () => Effect.flatMap(leases.acquire(key, owner, { actor }), () => Effect.void)),
        Effect.catchTag("@ratchet/storage/VersionConflict", () => Effect.flatMap(leases.acquire(key, owner, { actor }), () => Effect.void))
      )
      // The same owner's held lease, as the lease manager's value (acquire is reentrant for it).
      lease = yield* leases.acquire(key, owner, { actor })
      started = true
    } else {
      lease = yield* leases.acquire(key, owner, { actor })
    }
    // A request for this run that it did not act on (it blocked, or ended, first) goes with it.
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        const left = RunRequest.read(options.home, taskId)
        // An epoch-less one (a Ctrl-C of this runner's own) is this run's too.
        if (left !== null && (left.epoch === undefined || left.epoch === lease.epoch)) RunRequest.clearIf(options.home, taskId, left)
      })
    )
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        if (yield* Ref.get(released)) return
        yield* leases.release(lease, { actor }).pipe(Effect.catchAll(() => Effect.void))
      })
    )

    // The heartbeat: a lost lease stops the run at its next write (the store fences it anyway).
    const lost = yield* Deferred.make<never, LeaseError.LeaseLost>()
    // A lease this run released itself (with a cancel) is not lost: the heartbeat just stops.
    yield* Effect.sleep(Duration.millis(lease.heartbeatMs)).pipe(
      Effect.zipRight(Effect.flatMap(Ref.get(released), (done) => (done ? Effect.never : leases.heartbeat(lease)))),
      Effect.tap((next) => Effect.sync(() => {
        lease = next
      })),
      Effect.catchTag("@ratchet/storage/StorageError", () => Effect.void),
      Effect.forever,
      Effect.catchAll((error) =>
        Effect.flatMap(Ref.get(released), (done) => (error._tag === "@ratchet/lease/LeaseLost" && !done ? Deferred.fail(lost, error) : Effect.void))
      ),
      Effect.forkScoped
    )

    // ---- appends --------------------------------------------------------------------------------
    const epoch = lease.epoch
    const meta = (at: number) => ({ version: 1 as const, actor, at })

    /** One transaction: `build`'s events against the fresh task, under the lease. */
    const append = (build: (task: Task.Task, at: number) => Effect.Effect<ReadonlyArray<Event.Event>, Task.Refused | Task.Held> | ReadonlyArray<Event.Event>) =>
      Effect.gen(function*() {
        const summary = yield* summaryOf
        const at = yield* Clock.currentTimeMillis
        const built = build(summary.task, at)
        const events = Effect.isEffect(built) ? yield* built : built
        if (events.length === 0) return summary
        yield* store.append({
          projectId,
          streamId: taskId,
          branch,
          expectedVersion: summary.version,
          epoch,
          operationId: newId("op"),
          events
        }).pipe(
          Effect.tapErrorTag("@ratchet/storage/StaleEpoch", (stale) =>
            Deferred.fail(lost, new LeaseError.LeaseLost({ projectId, taskId, epoch, currentEpoch: stale.current, held: stale.held })))
        )
        return yield* summaryOf
      })

    /** The kernel's events for `commands`, decided one after another from `task`. */
    const decideAll = (task: Task.Task, commands: ReadonlyArray<Task.Command>) => {
      let state: Task.Aggregate = task
      const events: Array<Event.Event> = []
      for (const command of commands) {
        const decision = Task.decide(command, state)
        if (Either.isLeft(decision)) return Effect.fail(decision.left)
        for (const event of decision.right) {
          events.push(event)
          state = Task.evolve(state, event)
        }
      }
      return Effect.succeed(events as ReadonlyArray<Event.Event>)
    }

    /** The attempt transition event, checked against the attempt machine. */
    const transition = (runId: string, stepId: string, attempt: number, from: Attempt.State, cause: Attempt.Cause, at: number): Event.Event => {
      const to = Either.getOrThrowWith(Attempt.transition(from, cause), (error) => error)
      return { _tag: "AttemptTransitioned", ...meta(at), runId, stepId, attempt, from, to }
    }

    /** The intent resolution, checked against the intent machine. */
    const resolution = (intentId: string, outcome: Intent.Outcome, resultRefs: ReadonlyArray<string>, at: number): Event.Event => {
      Either.getOrThrowWith(Intent.transition(Intent.dispatched, Intent.resolve(outcome)), (error) => error)
      return { _tag: "IntentResolved", ...meta(at), intentId, outcome, resultRefs }
    }

    const runOf = (task: Task.Task) => {
      if (task.run === null || task.plan === null || task.spec === null) {
        return Effect.dieMessage(`task ${taskId} is ${task.state} without a run, plan or spec`)
      }
      return Effect.succeed({ run: task.run, plan: task.plan.plan, spec: task.spec })
    }

    const rowsOf = (runId: string) =>
      Effect.gen(function*() {
        const snapshot = yield* models.snapshot(taskId, branch)
        const attempts = [...snapshot.attempts.values()].filter((row) => row.runId === runId)
        const intents = [...snapshot.intents.values()].filter((row) => row.runId === runId)
        return { attempts, intents }
      })

    const project_ = (task: Task.Task) =>
      Effect.gen(function*() {
        const report = yield* RunReport.render(task, branch).pipe(Effect.catchAll(() => Effect.succeed(null)))
        yield* Projection.write(root, task, report).pipe(Effect.catchAll(() => Effect.void))
      })

    // ---- recovery -------------------------------------------------------------------------------
    const waitForOrphan = (intentId: string, step: Plan.Step) =>
      Effect.gen(function*() {
        const pgid = StepProcess.orphan(outputDir, intentId)
        if (pgid === null) return
        progress({ type: "orphan", taskId, stepId: step.id, pgid })
        const limit = (step.timeoutSeconds ?? orphanWaitSeconds) * 1000
        const started = yield* Clock.currentTimeMillis
        while (StepProcess.orphan(outputDir, intentId) !== null) {
          if ((yield* Clock.currentTimeMillis) - started > limit) {
            StepProcess.killGroup(pgid)
            break
          }
          yield* Effect.sleep(Duration.millis(requestPollMs))
        }
      }).pipe(Effect.ensuring(Effect.sync(() => StepProcess.discard(outputDir, intentId))))

    const recover = (task: Task.Task) =>
      Effect.gen(function*() {
        if (task.state !== "RUNNING") return
        const { plan, run: current } = yield* runOf(task)
        const { attempts, intents } = yield* rowsOf(current.runId)
        for (const step of plan.steps) {
          const status = RunState.statusOf(step.id, attempts, intents)
          if (status._tag !== "Open") continue
          const own = intents.filter((intent) => intent.stepId === step.id && intent.attempt === status.attempt)
          const decision = RunState.recoveryOf(step, own)
          // A dead runner's command may still be running on this machine: nothing about its effect
          // is decided before it ends (within its timeout, after which its group is killed).
          if (decision._tag === "Probe" || decision._tag === "Rerun" || decision._tag === "Indeterminate") {
            yield* waitForOrphan(decision.intentId, step)
          }
          const runId = current.runId
          const attempt = status.attempt
          const note = (at: number, text: string): Event.Event => ({ _tag: "AttemptNoted", ...meta(at), runId, stepId: step.id, attempt, note: text })
          switch (decision._tag) {
            case "AwaitWorker":
              continue
            case "CancelClean":
              yield* append((_task, at) => [
                ...own.filter((intent) => intent.state === "Pending").map((intent): Event.Event => ({
                  _tag: "IntentAbandoned",
                  ...meta(at),
                  intentId: intent.intentId,
                  reason: "the runner stopped before dispatching it; nothing external happened"
                })),
                transition(runId, step.id, attempt, status.state, Attempt.cancel(false), at),
                note(at, "recovered: the runner stopped before the side effect was dispatched; cancelled cleanly, a successor runs")
              ])
              break
            case "Rerun":
              yield* append((_task, at) => [
                resolution(decision.intentId, "Failed", [], at),
                transition(runId, step.id, attempt, status.state, Attempt.fail, at),
                note(at, "recovered: the side effect was dispatched and its outcome is unknown; the step is idempotent, so a successor re-runs it")
              ])
              break
            case "Probe": {
              const probe = StepProcess.start({
                command: decision.command,
                cwd: root,
                timeoutMs: step.timeoutSeconds === undefined ? defaultProbeTimeoutMs : step.timeoutSeconds * 1000,
                env: StepProcess.environment({ taskId, stepId: step.id, attempt }),
                directory: outputDir,
                name: `${decision.intentId}.probe`
              })
              const ended = yield* probe.exit
              const verdict = ended.timedOut || ended.spawnError !== null ? "unknown" : RunState.probeVerdict(ended.exitCode)
              if (verdict === "happened") {
                yield* append((_task, at) => [
                  resolution(decision.intentId, "Succeeded", [], at),
                  transition(runId, step.id, attempt, status.state, Attempt.succeed, at),
                  note(at, "recovered: the probe exited 0, so the side effect happened; resolved as succeeded")
                ])
              } else if (verdict === "not_happened") {
                yield* append((_task, at) => [
                  resolution(decision.intentId, "Failed", [], at),
                  transition(runId, step.id, attempt, status.state, Attempt.fail, at),
                  note(at, "recovered: the probe exited 1, so the side effect did not happen; a successor runs")
                ])
              } else {
                yield* indeterminate(runId, step, attempt, status.state, decision.intentId,
                  `the probe could not tell (${ended.timedOut ? "it timed out" : ended.spawnError ?? `exit ${ended.exitCode ?? ended.signal}`})`)
              }
              break
            }
            case "Indeterminate":
              yield* indeterminate(runId, step, attempt, status.state, decision.intentId, "the step is neither idempotent nor probed")
              break
          }
          progress({ type: "recovered", taskId, stepId: step.id, attempt, decision: decision._tag })
        }
      })

    const indeterminate = (
      runId: string,
      step: Plan.Step,
      attempt: number,
      from: Attempt.State,
      intentId: string,
      why: string
    ) =>
      append((task, at) =>
        Effect.map(
          decideAll(task, [RunState.decisionNeeded(
            { actor, at },
            `Step ${step.id} was started and its runner died before recording the outcome (${why}). Check whether its effect happened, then: ratchet unblock ${taskId} --resolve ${step.id} succeeded|failed`,
            [intentId]
          )]),
          (blocked) => [
            transition(runId, step.id, attempt, from, Attempt.cancel(true), at),
            { _tag: "AttemptNoted", ...meta(at), runId, stepId: step.id, attempt, note: `recovered: Indeterminate; ${why}` } satisfies Event.Event,
            ...blocked
          ]
        )
      )

    // ---- one step -------------------------------------------------------------------------------
    const boundary = (task: Task.Task, nextStep: string | null) =>
      Effect.gen(function*() {
        const { run: current } = yield* runOf(task)
        const tree = yield* WorkTree.observe(root)
        // The tree itself, under the reference that equals the boundary's `dirtyDigest`: a manual
        // step's worker is held to the scope against it when the step is marked done (StepScope).
        yield* StepScope.storeTree(tree)
        fault("before-checkpoint")
        const after = yield* append((fresh, at) => [
          {
            _tag: "BoundaryRecorded",
            ...meta(at),
            runId: current.runId,
            head: tree.head,
            dirtyPaths: [...tree.dirty.keys()],
            dirtyDigest: WorkTree.dirtyDigest(tree),
            specDigest: fresh.spec?.digest ?? current.specDigest,
            planDigest: fresh.plan?.digest ?? current.planDigest,
            nextStep
          },
          { _tag: "CheckpointRecorded", ...meta(at), kind: "step", runId: current.runId }
        ])
        fault("after-checkpoint")
        yield* project_(after.task)
        return after
      })

    const runStep = (task: Task.Task, step: Plan.Step, command: string, attempt: number, index: number, total: number, scheduled: boolean) =>
      Effect.gen(function*() {
        const { run: current, spec } = yield* runOf(task)
        const runId = current.runId
        const intentId = newId("in")
        yield* append((_task, at) => [
          // A successor verification scheduled is admitted as it is; any other attempt starts here.
          ...(scheduled ? [] : [{ _tag: "AttemptScheduled", ...meta(at), runId, stepId: step.id, attempt } satisfies Event.Event]),
          transition(runId, step.id, attempt, "Pending", Attempt.admit, at),
          { _tag: "IntentRecorded", ...meta(at), intentId, runId, stepId: step.id, attempt, description: command.slice(0, 65_536) }
        ])
        fault("attempt-started")
        progress({ type: "step", taskId, stepId: step.id, index, total, attempt, command })
        const before = yield* WorkTree.observe(root)
        yield* append((_task, at) => [{ _tag: "IntentDispatched", ...meta(at), intentId }])
        fault("intent-dispatched")
        const child = StepProcess.start({
          command,
          cwd: root,
          timeoutMs: step.timeoutSeconds === undefined ? null : step.timeoutSeconds * 1000,
          env: StepProcess.environment({ taskId, stepId: step.id, attempt }),
          directory: outputDir,
          name: intentId,
          onOutput: (stream, text) => progress({ type: "output", taskId, stepId: step.id, stream, text })
        })
        fault("child-started")
        // While the child runs, a cancel from another terminal (or a lost lease) stops it.
        let cancelRequest: RunRequest.Request | null = null
        const startedAt = yield* Clock.currentTimeMillis
        let lastTick = startedAt
        const watch = Effect.gen(function*() {
          while (true) {
            yield* Effect.sleep(Duration.millis(requestPollMs))
            const now = yield* Clock.currentTimeMillis
            if (now - lastTick >= tickMs) {
              lastTick = now
              progress({ type: "tick", taskId, stepId: step.id, attempt, elapsedMs: now - startedAt })
            }
            const request = RunRequest.read(options.home, taskId)
            if (request !== null && request.kind === "cancel" && RunRequest.isFor(request, epoch)) {
              cancelRequest = request
              child.cancel()
              return
            }
            if (yield* Deferred.isDone(lost)) {
              child.cancel()
              return
            }
          }
        })
        const ended = yield* Effect.raceFirst(child.exit, Effect.zipRight(watch, Effect.never)).pipe(
          Effect.onInterrupt(() => Effect.sync(() => child.cancel()))
        )
        fault("child-exited")
        // The command's end is known now and must be recorded whatever fails next: a work tree that
        // cannot be read blocks the task (its scope cannot be checked), and output that cannot be
        // stored keeps its tail inline.
        const observed = yield* Effect.either(
          Effect.flatMap(WorkTree.observe(root), (after) => WorkTree.changedBetween(root, before, after))
        )
        const changedPaths = Either.getOrElse(observed, () => [] as ReadonlyArray<string>)
        const unobserved = Either.isLeft(observed) ? observed.left.message : null
        const put = (bytes: Uint8Array) =>
          bytes.length === 0 ? Effect.succeed(null) : blobs.put(bytes).pipe(Effect.map((ref): string | null => ref), Effect.catchAll(() => Effect.succeed(null)))
        const stdoutRef = yield* put(ended.stdout)
        const stderrRef = yield* put(ended.stderr)
        const output = `${Buffer.from(ended.stdout).toString("utf8")}\n${Buffer.from(ended.stderr).toString("utf8")}`
        const outputTail = output.slice(-4000)
        const succeeded = ended.exitCode === 0 && !ended.timedOut && !ended.cancelled && ended.spawnError === null
        const violations = Scope.violations(changedPaths, spec.spec.execution?.allowedScope ?? [], spec.spec.execution?.forbiddenScope ?? [])
        const attemptEnd: Attempt.Cause = ended.cancelled
          ? Attempt.cancel(true)
          : ended.timedOut
          ? Attempt.timeOut
          : succeeded
          ? Attempt.succeed
          : Attempt.fail
        const endState = Either.getOrThrow(Attempt.transition("Running", attemptEnd))
        const cancelled = cancelRequest as RunRequest.Request | null
        const result = yield* append((fresh, at) => {
          const facts: ReadonlyArray<Event.Event> = [
            {
              _tag: "CommandExited",
              ...meta(at),
              intentId,
              runId,
              stepId: step.id,
              attempt,
              exitCode: ended.exitCode,
              signal: ended.signal,
              durationMs: ended.durationMs,
              timedOut: ended.timedOut,
              stdoutRef,
              stderrRef,
              outputTail: ended.spawnError === null ? outputTail : `could not start: ${ended.spawnError}`,
              changedPaths
            },
            resolution(intentId, succeeded ? "Succeeded" : "Failed", [stdoutRef, stderrRef].flatMap((ref) => (ref === null ? [] : [ref])), at),
            transition(runId, step.id, attempt, "Running", attemptEnd, at)
          ]
          const commands: Array<Task.Command> = []
          if (cancelled !== null) {
            commands.push({ _tag: "Cancel", actor: cancelled.actor, at, reason: cancelled.reason })
          } else if (unobserved !== null) {
            commands.push(RunState.decisionNeeded(
              { actor, at },
              `Step ${step.id} ended (${ended.exitCode === null ? "killed" : `exit ${ended.exitCode}`}) but the work tree could not be read afterwards, so its scope was not checked: ${unobserved}. Fix the checkout, check what the step changed, then: ratchet unblock ${taskId} --to RUNNING --resolution "…"`,
              [intentId]
            ))
          } else if (violations.length > 0) {
            commands.push({ _tag: "Block", actor, at, blocker: StepScope.blocker(taskId, step.id, violations) })
          } else if (!succeeded) {
            const fingerprint = RunState.fingerprint({
              stepId: step.id,
              exitCode: ended.exitCode,
              signal: ended.signal,
              timedOut: ended.timedOut,
              output: ended.spawnError ?? output
            })
            commands.push({
              _tag: "RecordAttemptFailure",
              actor,
              at,
              stepId: step.id,
              attempt,
              fingerprint,
              // The same failure again is caught first (repeated_failure); a new one progressed.
              progressed: changedPaths.length > 0 || !fresh.failureFingerprints.includes(fingerprint)
            })
          }
          return Effect.map(decideAll(fresh, commands), (decided) =>
            cancelled === null ? [...facts, ...decided] : [...facts, ...decided, { _tag: "LeaseReleased", ...meta(at), epoch } satisfies Event.Event])
        })
        if (cancelled !== null) {
          yield* Ref.set(released, true)
          RunRequest.clearIf(options.home, taskId, cancelled)
        }
        fault("intent-resolved")
        progress({
          type: "step-end",
          taskId,
          stepId: step.id,
          attempt,
          state: endState,
          exitCode: ended.exitCode,
          durationMs: ended.durationMs,
          changedPaths
        })
        return result
      })

    // ---- the loop -------------------------------------------------------------------------------
    const outcome = (task: Task.Task, stop: Stop, message: string, awaiting: Outcome["awaiting"] = null): Outcome => ({
      taskId,
      runId: task.run?.runId ?? null,
      state: task.state,
      stop,
      message,
      blocker: task.blockers.at(-1) ?? null,
      awaiting
    })

    const loop = Effect.gen(function*() {
      let begun = yield* summaryOf
      if (begun.task.state === "PLAN_APPROVED") {
        // The lease came by a takeover (or after a lost race): start the run under it now.
        const runId = newId("run")
        const authority = yield* ProjectApprovers.authority(projectId)
        begun = yield* append((fresh, at) =>
          Effect.map(
            decideAll(fresh, [{
              _tag: "StartRun",
              actor,
              at,
              runId,
              specDigest: fresh.spec?.digest ?? ("" as never),
              planDigest: fresh.plan?.digest ?? ("" as never),
              lease: { held: true, epoch },
              authority
            }]),
            (events) => [...events, { _tag: "CheckpointRecorded", ...meta(at), kind: "run_start", runId } satisfies Event.Event]
          ))
        started = true
      }
      const runInfo = yield* runOf(begun.task)
      progress({ type: "run", taskId, runId: runInfo.run.runId, steps: runInfo.plan.steps.length, started, epoch })
      yield* recover(begun.task)
      while (true) {
        const summary = yield* summaryOf
        const task = summary.task
        switch (task.state) {
          case "BLOCKED":
            yield* project_(task)
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
        const { plan, run: current } = yield* runOf(task)
        const { attempts, intents } = yield* rowsOf(current.runId)
        const next = RunState.next(plan, attempts, intents)
        const found = RunRequest.read(options.home, taskId)
        // A request left for an earlier run (its runner died before acting on it) is dropped.
        if (found !== null && !RunRequest.isFor(found, epoch)) RunRequest.clearIf(options.home, taskId, found)
        const request = found !== null && RunRequest.isFor(found, epoch) ? found : null
        if (request !== null) {
          const nextStep = next._tag === "Step" ? next.step.id : null
          if (request.kind === "pause") {
            yield* boundary(task, nextStep)
            const paused = yield* append((fresh, at) =>
              decideAll(fresh, [{ _tag: "Pause", actor: request.actor, at, reason: request.reason }]))
            RunRequest.clearIf(options.home, taskId, request)
            yield* project_(paused.task)
            return outcome(paused.task, "paused", `Paused before ${nextStep ?? "verification"}. Continue with: ratchet resume ${taskId}`)
          }
          const cancelled = yield* append((fresh, at) =>
            Effect.map(decideAll(fresh, [{ _tag: "Cancel", actor: request.actor, at, reason: request.reason }]), (events) => [
              ...events,
              { _tag: "LeaseReleased", ...meta(at), epoch } satisfies Event.Event
            ]))
          yield* Ref.set(released, true)
          RunRequest.clearIf(options.home, taskId, request)
          yield* project_(cancelled.task)
          return outcome(cancelled.task, "cancelled", "Cancelled.")
        }
        if (next._tag === "AllDone") {
          // The episode ends with the tree verification starts from: a step boundary, unless the
          // last thing written already is one (a manual step's worker, for one, wrote after it).
          const checkpoints = yield* models.checkpoints(taskId, branch)
          const lastBoundary = checkpoints.filter((row) => row.kind === "step" && row.runId === current.runId).reduce((max, row) => Math.max(max, row.lsn), 0)
          const settled = lastBoundary === summary.lastLsn ? summary : yield* boundary(task, null)
          const entered = yield* append((fresh, at) =>
            decideAll(fresh, [{ _tag: "EnterVerification", actor, at, pendingSteps: [], snapshotLsn: settled.lastLsn }]))
          yield* project_(entered.task)
          return outcome(entered.task, "verifying", `Every step is done; the task is VERIFYING. Next, verify its acceptance criteria as someone other than the worker (ratchet verify ${taskId}), then complete it (ratchet done ${taskId}).`)
        }
        const { step, status, index } = next
        if (status._tag === "Unsettled") {
          return outcome(task, "blocked", `Step ${step.id} awaits a decision: ratchet unblock ${taskId} --resolve ${step.id} succeeded|failed`)
        }
        if (status._tag === "Open") {
          // Only a manual step's attempt stays open after recovery: it awaits its worker.
          const instructions = step.manual?.instructions ?? ""
          return outcome(task, "awaiting_worker", `Step ${step.id} is manual and awaits its worker. When it is done: ratchet step done ${taskId} ${step.id} --note "…"`, {
            stepId: step.id,
            attempt: status.attempt,
            instructions
          })
        }
        const scheduled = status._tag === "Scheduled"
        const attempt = status._tag === "NotStarted" ? 1 : scheduled ? status.attempt : status.attempt + 1
        if (step.run === undefined) {
          const runId = current.runId
          const opened = yield* append((_task, at) => [
            ...(scheduled ? [] : [{ _tag: "AttemptScheduled", ...meta(at), runId, stepId: step.id, attempt } satisfies Event.Event]),
            transition(runId, step.id, attempt, "Pending", Attempt.admit, at)
          ])
          progress({ type: "step", taskId, stepId: step.id, index, total: plan.steps.length, attempt, command: null })
          const atBoundary = yield* boundary(opened.task, step.id)
          return outcome(atBoundary.task, "awaiting_worker", `Step ${step.id} is manual and awaits its worker. When it is done: ratchet step done ${taskId} ${step.id} --note "…"`, {
            stepId: step.id,
            attempt,
            instructions: step.manual?.instructions ?? ""
          })
        }
        const after = yield* runStep(task, step, step.run.command, attempt, index, plan.steps.length, scheduled)
        if (after.task.state === "CANCELLED") {
          yield* project_(after.task)
          return outcome(after.task, "cancelled", "Cancelled while a step ran: its attempt is Indeterminate (its effect may have half happened).")
        }
        const rows = yield* rowsOf(current.runId)
        const statusAfter = RunState.next(plan, rows.attempts, rows.intents)
        yield* boundary(after.task, statusAfter._tag === "Step" ? statusAfter.step.id : null)
      }
    })

    return yield* Effect.raceFirst(loop, Deferred.await(lost))
  }))

/**
 * Whether `error` means "another runner holds this task" (skip it and try the next one).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isBusy = (error: { readonly _tag: string }): boolean =>
  error._tag === "@ratchet/lease/LeaseHeld" || error._tag === "@ratchet/lease/TakeoverTooEarly" ||
  error._tag === "@ratchet/lease/LeaseContention" || error._tag === "@ratchet/lease/LeaseLost" ||
  error._tag === "@ratchet/storage/StaleEpoch" || error._tag === "@ratchet/storage/VersionConflict"

/**
 * The project's tasks a runner could take now: PLAN_APPROVED or RUNNING, with a lease that is free
 * (or expired, when `takeoverExpired`), oldest first; and whether some runnable task is held by a
 * live runner (worth waiting for when taking over expired leases).
 *
 * @since 0.1.0
 * @category constructors
 */
export const runnable = (takeoverExpired: boolean) =>
  Effect.gen(function*() {
    const project = yield* Project
    const leases = yield* LeaseManager.LeaseManager
    const summaries = yield* TaskBranch.summaries(project.project.projectId)
    const ready: Array<{ readonly taskId: string; readonly takeover: boolean }> = []
    let held = 0
    for (const summary of [...summaries].reverse()) {
      const state = summary.task.state
      if (state !== "PLAN_APPROVED" && state !== "RUNNING") continue
      const observed = yield* leases.observe({ projectId: project.project.projectId, taskId: summary.streamId })
      if (observed.status === "free") ready.push({ taskId: summary.streamId, takeover: false })
      else if (observed.status === "expired" && takeoverExpired) ready.push({ taskId: summary.streamId, takeover: true })
      else if (observed.holder?.host === "runner") held += 1
    }
    return { ready, held }
  })
