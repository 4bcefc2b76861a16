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
import * as Effect from "effect/Effect"
import type * as ApproverKey from "./ApproverKey.js"
import * as Completion from "./Completion.js"
import { Project } from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as Runner from "./Runner.js"
import * as TaskBranch from "./TaskBranch.js"
import * as VerifierKey from "./VerifierKey.js"
import * as Verify from "./Verify.js"

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
  Effect.withSpan(loop(options), "ratchet.until-verified", { attributes: { "ratchet.task": options.run.taskId } })

const loop = (options: Options) =>
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
    let takeover = options.run.takeover
    // A task an earlier run left VERIFYING (and whose lease is free) is verified first, not run.
    let verifyFirst = task?.state === "VERIFYING" && !takeover
    for (let round = 1; round <= maxRounds; round++) {
      if (!verifyFirst) {
        const ran = yield* Runner.run({ ...options.run, takeover })
        if (ran.stop !== "verifying" || ran.state !== "VERIFYING") return { ...ran, passes } satisfies Outcome
      }
      verifyFirst = false
      takeover = false
      const verified = yield* Verify.verify({ taskId, acs: [], invocation }).pipe(Effect.provide(Builtin.layer))
      const pass: Pass = { round, outcome: verified.conclusion.outcome, state: verified.state, blocker: verified.conclusion.blocker }
      passes.push(pass)
      options.onPass?.(pass)
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
