/**
 * `ratchet run --until-verified` (ADR 0041): the run, its verification and its revisions, with
 * nobody at the terminal. It composes the use cases that already exist, and adds no rule:
 *
 * 1. `Runner.run` runs the plan's steps until the task is VERIFYING (or stops: a manual step, a
 *    block, a pause, a cancel — then the loop stops with it);
 * 2. `Verify.verify` verifies every criterion as the unattended verifier, whose key (ADR 0018:
 *    unsigned verdicts never count) signs each verdict. The verifier is not the worker: the
 *    runner works as `runner:<id>`, the verifier as the approver its key names;
 * 3. the pass concludes as it does for a person:
 *    - APPROVED → `Completion.complete` under the same key, as `ratchet done` does: COMPLETED;
 *    - REVISE → the pass already scheduled the successors of the steps behind the failure and put
 *      the task back to RUNNING; the loop runs them (their envelopes carry the failures,
 *      `Revision`) and verifies again;
 *    - BLOCKED (a check that did not conclude, the successor budget spent, the same failure's
 *      fingerprint again, no progress) or HELD (a manual criterion nobody can judge here) → the
 *      loop stops for a person.
 *
 * git's settings for the workspace are snapshot before any child runs and compared after each run
 * and each verification pass, and whenever the loop ends (ADR 0045, `GitSettings`): a change blocks
 * the task, naming it, before any git runs outside the sandbox.
 *
 * The loop is bounded by the kernel's successor budget (at most 5 per task): every REVISE that goes
 * on spends one, so it ends. {@link maxRounds} is a second bound, should a rule ever let it not.
 *
 * @since 0.5.0
 */
import * as AgentProfile from "@ratchet/kernel/AgentProfile"
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Builtin from "@ratchet/verifier/Builtin"
import type * as Verification from "@ratchet/verifier/Verification"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as ApproverKey from "./ApproverKey.js"
import * as ChildSandbox from "./ChildSandbox.js"
import * as CommandHandler from "./CommandHandler.js"
import * as Completion from "./Completion.js"
import { describeOwner, Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as GitSettings from "./GitSettings.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as Runner from "./Runner.js"
import * as TaskBranch from "./TaskBranch.js"
import * as VerifierKey from "./VerifierKey.js"
import * as Verify from "./Verify.js"
import * as GitEnvironment from "./internal/gitEnvironment.js"

/**
 * Whether the approved plan's `profile` asks `ratchet run` to loop until verified.
 *
 * @since 0.5.0
 * @category guards
 */
export const policy = (profile: AgentProfile.Profile | undefined): boolean => AgentProfile.untilVerified(profile)

/**
 * The most rounds (a run, then a verification) one loop makes: the first, one per successor the
 * budget allows, and one to spare.
 *
 * @since 0.5.0
 * @category models
 */
export const maxRounds = Task.maxSuccessorsPerTask + 2

/**
 * One verification pass the loop made.
 *
 * @since 0.5.0
 * @category models
 */
export interface Pass {
  readonly round: number
  readonly outcome: Verification.Conclusion["outcome"]
  readonly state: Task.State
  readonly blocker: Event.Blocker | null
}

/**
 * Why the loop stopped: the runner's reasons, and `completed`.
 *
 * @since 0.5.0
 * @category models
 */
export type Stop = Runner.Stop | "completed"

/**
 * @since 0.5.0
 * @category models
 */
export interface Outcome extends Omit<Runner.Outcome, "stop"> {
  readonly stop: Stop
  readonly passes: ReadonlyArray<Pass>
}

/**
 * @since 0.5.0
 * @category models
 */
export interface Options {
  readonly run: Runner.Options
  /** The unattended verifier's unlocked key (`VerifierKey.unlock`). */
  readonly verifier: ApproverKey.Signer
  /** The runner's invoker (its actor is `runner:<id>`): the verifier must be someone else. */
  readonly invoker: Event.Actor
  /** The public key of the invoker's own approval key (`VerifierKey.personKeyOf`): never the verifier's. */
  readonly personKey: string | null
  /**
   * The sandbox every agent, step, probe and check of the loop runs in (ADR 0043): the runner holds
   * the verifier's unlocked key, so nothing it starts may see it. Required: no loop runs without one.
   */
  readonly sandbox: ChildSandbox.Sandbox
  readonly onPass?: ((pass: Pass) => void) | undefined
}

/**
 * The agent profile of `taskId`'s plan (`AgentProfile`), or undefined when it has no plan or no
 * profile: whether the plan asks for the loop, and whose key must verify.
 *
 * @since 0.5.0
 * @category constructors
 */
export const profileOf = (taskId: string) => Effect.map(taskOf(taskId), (task) => task?.plan?.plan.profile)

const taskOf = (taskId: string) =>
  Effect.gen(function*() {
    const models = yield* ReadModel.ReadModels
    const summary = yield* models.taskSummary(taskId, yield* TaskBranch.of(taskId))
    return summary?.task
  })

/**
 * Runs, verifies and revises `options.run.taskId` until it is COMPLETED or needs a person.
 *
 * @since 0.5.0
 * @category constructors
 */
export const run = (options: Options) =>
  Effect.withSpan(
    // The runner's own git runs in the sandbox too: a clean filter the agent configured would
    // otherwise read the verifier's files from outside it (ADR 0043's amendment).
    Effect.flatMap(Project, (project) => {
      // git's settings are read-only for everything in the loop's sandbox, so nothing the agent
      // runs can plant a program a later git runs outside it.
      // `.git` is pinned in place (a mount point cannot be renamed): defence in depth (ADR 0045).
      const sandbox: ChildSandbox.Sandbox = {
        ...options.sandbox,
        readOnly: ChildSandbox.gitSettingsOf(project.root, process.env),
        pinned: ChildSandbox.gitPinsOf(project.root)
      }
      // What git would read as settings, before any child runs: a renamed `.git`, a `commondir` or a
      // settings file the mounts could not cover is seen at the next boundary (ADR 0045).
      const settings = GitSettings.snapshot(project.root, process.env)
      return GitEnvironment.confined((argv, cwd) => ChildSandbox.wrapShortLived(sandbox, argv, cwd), watched(settings, { taskId: options.run.taskId, actor: options.run.actor }, loop({ ...options, sandbox }, settings)))
    }),
    "ratchet.until-verified",
    { attributes: { "ratchet.task": options.run.taskId } }
  )

/**
 * When git's settings differ from `settings`: the task blocked on it (from RUNNING or VERIFYING;
 * a task already stopped keeps its state, and the outcome still says so) and the loop's outcome,
 * or null when nothing changed. Only file-system reads and the store: no git runs here.
 *
 * The comparison comes first and nothing after it can fail: a look that throws counts as a change
 * (it cannot say that nothing changed), and a store that fails or dies while the block is recorded
 * (or the task read back) leaves the outcome saying what changed and why it is not recorded.
 */
const settingsChanged = (settings: GitSettings.Snapshot, of: Watched, passes: ReadonlyArray<Pass>) =>
  Effect.gen(function*() {
    const compared = yield* Effect.exit(Effect.sync(() => GitSettings.compare(settings, GitSettings.snapshot(settings.root, process.env))))
    const changes: ReadonlyArray<GitSettings.Change> = Exit.isSuccess(compared)
      ? compared.value
      : [{ key: `the look at git's settings for ${settings.root}`, before: "taken when the loop started", after: `failed: ${causeText(compared.cause)}` }]
    if (changes.length === 0) return null
    const taskId = of.taskId
    const blocker = GitSettings.blocker(taskId, changes)
    // The block is recorded when it can be; when it cannot (another writer holds the lease, the
    // store refuses or dies) the outcome still says what changed, with why it is not recorded.
    const recorded = yield* Effect.exit(Effect.gen(function*() {
      const project = yield* Project
      return yield* CommandHandler.handle({
        projectId: project.project.projectId,
        streamId: taskId,
        branch: yield* TaskBranch.of(taskId),
        epoch: null,
        decide: (read, at) => {
          const task = read.summary?.task
          if (task === undefined || (task.state !== "RUNNING" && task.state !== "VERIFYING")) return Effect.succeed([])
          return Effect.succeed([{ _tag: "Block", actor: of.actor, at, blocker } satisfies Task.Command])
        },
        describeHolder: (held) => describeOwner(held.owner)
      })
    }))
    const readBack = Exit.isSuccess(recorded) ? null : yield* Effect.exit(taskOf(taskId))
    const task = Exit.isSuccess(recorded) ? recorded.value.task : readBack !== null && Exit.isSuccess(readBack) ? readBack.value : undefined
    return {
      taskId,
      runId: task?.run?.runId ?? null,
      state: task?.state ?? "BLOCKED",
      stop: "blocked",
      blocker,
      message: Exit.isSuccess(recorded) ? blocker.requiredAction : `${blocker.requiredAction} (The block could not be recorded: ${causeText(recorded.cause)})`,
      awaiting: null,
      passes
    } satisfies Outcome
  })

/** What a failure, a defect or an interruption says, in one short line. */
const causeText = (cause: Cause.Cause<unknown>): string => {
  const squashed = Cause.squash(cause)
  const text = typeof squashed === "object" && squashed !== null && "message" in squashed ? String((squashed as { message: unknown }).message) : String(squashed)
  return text.length <= 500 ? text : `${text.slice(0, 499)}…`
}

/**
 * Whose loop is watched: its task, and the actor its block is recorded as (the runner).
 *
 * @since 0.5.0
 * @category models
 */
export interface Watched {
  readonly taskId: string
  readonly actor: Event.Actor
}

/**
 * `loop`, watched at its end whatever the outcome (ADR 0045): a loop that ended with git's settings
 * changed since `settings` ends BLOCKED on them; one that failed too still records the block and
 * reports it with the failure; one interrupted records it on its way out (uninterruptibly).
 *
 * @since 0.5.0
 * @category constructors
 */
export const watched = <E, R>(settings: GitSettings.Snapshot, of: Watched, loop: Effect.Effect<Outcome, E, R>) =>
  loop.pipe(
    Effect.flatMap((outcome) =>
      GitSettings.isBlocker(outcome.blocker)
        ? Effect.succeed(outcome)
        : Effect.map(settingsChanged(settings, of, outcome.passes), (changed) => changed ?? outcome)
    ),
    // Every end that is not an outcome — a failure, a defect (a Die that `catchAll` would miss) —
    // is looked at, uninterruptibly; an interruption alone is left to `onExit` below.
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.uninterruptible(Effect.flatMap(settingsChanged(settings, of, []), (changed) =>
          changed === null
            ? Effect.failCause(cause)
            : Effect.succeed({ ...changed, message: `${changed.message} (The loop also failed: ${causeText(cause)})` })))
    ),
    // An interruption (a signal, a lost race) cannot be turned into an outcome: the block is still
    // recorded, uninterruptibly, so the person's next look at the task says not to run git.
    Effect.onExit((exit) =>
      Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? Effect.ignore(settingsChanged(settings, of, [])) : Effect.void
    )
  )

const loop = (options: Options, settings: GitSettings.Snapshot) =>
  Effect.gen(function*() {
    const project = yield* Project
    const taskId = options.run.taskId
    const task = yield* taskOf(taskId)
    // Refused before anything runs: a key the gates would not count, or the key of someone who
    // works for the run or set its contract, is no verifier.
    const approvedBy = [task?.spec?.approval, task?.plan?.approval].flatMap((receipt) => (receipt === null || receipt === undefined ? [] : [receipt.actor.id]))
    const refused = VerifierKey.refusal(
      options.verifier,
      { invoker: options.invoker, personKey: options.personKey, approvedBy },
      yield* ProjectApprovers.authority(project.project.projectId, project.root)
    )
    if (refused !== null) return yield* refused
    const profile = task?.plan?.plan.profile
    if (profile?.verifier !== undefined && profile.verifier !== options.verifier.id) {
      return yield* new ControllerError.InvalidRequest({
        field: "RATCHET_VERIFIER_KEY",
        reason: `the approved plan's profile names ${profile.verifier} as the unattended verifier, and this key is ${options.verifier.id}'s.`,
        fix: `Set RATCHET_VERIFIER_KEY to ${profile.verifier}'s key (and its passphrase), or change the plan's profile.verifier and approve the plan again.`
      })
    }
    const invocation = { actor: { kind: "user", id: options.verifier.id } satisfies Event.Actor, signer: options.verifier }
    const passes: Array<Pass> = []
    const watchedOf: Watched = { taskId, actor: options.run.actor }
    let takeover = options.run.takeover
    const sandbox = options.sandbox
    const verifiers = Builtin.layerWith({ launcher: (argv, cwd) => ChildSandbox.wrap(sandbox, argv, cwd) })
    // A task an earlier run left VERIFYING (and whose lease is free) is verified first, not run.
    let verifyFirst = task?.state === "VERIFYING" && !takeover
    for (let round = 1; round <= maxRounds; round++) {
      if (!verifyFirst) {
        const ran = yield* Runner.run({ ...options.run, takeover, sandbox, gitSettings: GitSettings.look(settings, taskId, process.env) })
        // A step boundary: what the run's children did to git's settings ends the loop here.
        const changed = yield* settingsChanged(settings, watchedOf, passes)
        if (changed !== null) return changed
        if (ran.stop !== "verifying" || ran.state !== "VERIFYING") return { ...ran, passes } satisfies Outcome
      }
      verifyFirst = false
      takeover = false
      const verified = yield* Verify.verify({ taskId, acs: [], invocation, gitSettings: GitSettings.look(settings, taskId, process.env) }).pipe(
        Effect.provide(verifiers)
      )
      const pass: Pass = { round, outcome: verified.conclusion.outcome, state: verified.state, blocker: verified.conclusion.blocker }
      passes.push(pass)
      options.onPass?.(pass)
      // The checks ran workspace code: before completing or revising, the same look.
      const checked = yield* settingsChanged(settings, watchedOf, passes)
      if (checked !== null) return checked
      const base = { taskId, runId: verified.runId, awaiting: null, passes }
      if (verified.notRecorded !== null) {
        return { ...base, state: verified.state, stop: "verifying", blocker: null, message: verified.notRecorded } satisfies Outcome
      }
      if (verified.conclusion.outcome === "APPROVED" && verified.state === "VERIFYING") {
        yield* Completion.complete({ taskId, invocation })
        return {
          ...base,
          state: "COMPLETED",
          stop: "completed",
          blocker: null,
          message: `Verified by ${options.verifier.id} and completed after ${round} round${round === 1 ? "" : "s"}.`
        } satisfies Outcome
      }
      if (verified.state === "RUNNING") continue
      const blocker = verified.conclusion.blocker
      return {
        ...base,
        state: verified.state,
        stop: verified.state === "BLOCKED" ? "blocked" : "verifying",
        blocker,
        message: blocker?.requiredAction ??
          `Verification concluded ${verified.conclusion.outcome}; the task stays ${verified.state} for a person: ratchet evidence ${taskId}`
      } satisfies Outcome
    }
    return yield* Effect.dieMessage(`ratchet run --until-verified made ${maxRounds} rounds on ${taskId} without an end; the successor budget should have ended it`)
  })
