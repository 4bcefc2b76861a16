/**
 * `ratchet verify`: one verification pass over a VERIFYING task's frozen episode.
 *
 * 1. Read the episode: the snapshot LSN the task entered VERIFYING at and the view frozen there.
 * 2. Observe the work tree (the evidence names the tree it ran against).
 * 3. Run the verifiers over the criteria asked for (all by default), storing evidence as blobs.
 *    Nothing is held while they run: no lease, no transaction. A cancel or a rewind may land
 *    meanwhile; the held view cannot change (it is frozen), and step 4 notices.
 * 4. Record the pass — one append: `VerificationRecorded` with the verdicts and the conclusion
 *    over every verdict of the episode; for BLOCKED the task's block; for REVISE the block, the
 *    successor attempts of the steps behind the failure and the way back to RUNNING — only if the
 *    task is still VERIFYING in the same episode on the same branch. Otherwise the pass is
 *    reported and nothing is written: its verdicts are about an episode the task has left.
 *    A pass whose checks changed the hosts' configuration (`HostConfiguration`) blocks the task
 *    instead, whatever it concluded: a later agent's host would read what they wrote.
 *
 * The verifier of record is the person whose approval key the invocation carries (the observer, for
 * a manual check), and their key signs every verdict of the pass; without a key the verdicts are
 * recorded unsigned and never count. Someone who did the run's work as themselves (a manual step
 * they marked done) cannot be it: that is self-verification, and the gate holds.
 *
 * @since 0.1.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import type * as Event from "@ratchet/kernel/Event"
import type * as Run from "@ratchet/kernel/Run"
import * as Task from "@ratchet/kernel/Task"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Evidence from "@ratchet/verifier/Evidence"
import * as EpisodeView from "@ratchet/verifier/EpisodeView"
import * as Verification from "@ratchet/verifier/Verification"
import type * as Verifier from "@ratchet/verifier/Verifier"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { describeOwner, heldLease, Project } from "./Controller.js"
import type * as Controller from "./Controller.js"
import * as CommandHandler from "./CommandHandler.js"
import * as ControllerError from "./ControllerError.js"
import * as Episode from "./Episode.js"
import * as GitSettings from "./GitSettings.js"
import * as HostConfiguration from "./HostConfiguration.js"
import * as LessonFacts from "./LessonFacts.js"
import * as Projection from "./Projection.js"
import * as ProjectApprovers from "./ProjectApprovers.js"
import * as Revision from "./Revision.js"
import * as RunReport from "./RunReport.js"
import * as Signed from "./Signed.js"
import * as TaskBranch from "./TaskBranch.js"
import * as VerificationReport from "./VerificationReport.js"
import * as WorkTree from "./WorkTree.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly taskId: string
  /** Only these criteria (ids); all of them when empty. */
  readonly acs: ReadonlyArray<string>
  readonly invocation: Controller.Invocation
  readonly onProgress?: (progress: Verification.Progress) => Effect.Effect<void>
  /** Runs between the verifiers and the record: a test's rendezvous. */
  readonly beforeRecord?: Effect.Effect<void>
  /** What the task blocks on when the checks changed git's settings (the loop's look, ADR 0045), or null. */
  readonly gitSettings?: (() => Event.Blocker | null) | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Result {
  readonly taskId: string
  readonly runId: string
  readonly branch: string
  readonly snapshotLsn: number
  readonly results: ReadonlyArray<Verification.CriterionResult>
  readonly conclusion: Verification.Conclusion
  /** The LSN of the recorded pass, or null when nothing was recorded. */
  readonly recordedLsn: number | null
  /** Why nothing was recorded (the task left the episode meanwhile), or null. */
  readonly notRecorded: string | null
  /** The task's state after the pass. */
  readonly state: Task.State
  /** The workers of the episode: none of them can be the verifier of record. */
  readonly workers: ReadonlyArray<Event.Actor>
  readonly warnings: ReadonlyArray<string>
}

/**
 * Reads the task on its current branch, or fails with `TaskNotFound`.
 */
const taskOf = (projectId: string, taskId: string) =>
  Effect.gen(function*() {
    const models = yield* ReadModel.ReadModels
    const branch = yield* TaskBranch.of(taskId)
    const summary = yield* models.taskSummary(taskId, branch)
    if (summary === null || summary.projectId !== projectId) return yield* new ControllerError.TaskNotFound({ taskId, projectId })
    return { summary, branch }
  })

/** The task moved on while its verdicts were being reached: they are reported, not recorded. */
class NotRecorded extends Data.TaggedError("NotRecorded")<{
  readonly reason: string
  readonly state: Task.State
  readonly conclusion: Verification.Conclusion
}> {}

/**
 * REVISE: the steps behind the failed criteria get successor attempts, within the task's budget,
 * and the task goes back to RUNNING through BLOCKED (the lifecycle's own edges: VERIFYING →
 * BLOCKED for the failure, BLOCKED → RUNNING for the revision), all in the pass's transaction.
 * Each successor is scheduled (a Pending attempt the runner admits as it is). When the budget
 * cannot cover them, the task stays BLOCKED (`retry_budget_spent`): the contract or the plan must
 * change, through a reopen.
 */
const revise = (
  task: Task.Task,
  run: Run.State,
  episode: Episode.Episode,
  steps: ReadonlyArray<string>,
  actor: Event.Actor,
  at: number,
  authority: Authority.Authority,
  failure: { readonly fingerprint: string | null; readonly earlier: ReadonlyArray<string> }
) =>
{
    const runId = task.run!.runId
    const budget = Math.min(task.spec?.spec.execution?.retry?.maxSuccessors ?? Task.maxSuccessorsPerTask, Task.maxSuccessorsPerTask)
    const fingerprinted = failure.fingerprint === null ? {} : { lastEvidence: [failure.fingerprint] }
    // The kernel's no-progress rule, for a revision: the tree the run left is one an earlier failed
    // verification already judged, so running the same steps again would fail the same way.
    const tree = episode.view.refs.at(-1)
    const same = tree === undefined ? undefined : episode.revisedTrees.find((earlier) => earlier.head === tree.head && earlier.dirtyDigest === tree.dirtyDigest)
    if (same !== undefined) {
      return {
        blocker: {
          category: "no_progress",
          owner: "user",
          requiredAction: `A required criterion failed again on the very tree an earlier verification (episode at LSN ${same.snapshotLsn}) failed: the revision changed nothing. Change the plan or the contract: ratchet reopen ${task.taskId} --reason "…"`
        } satisfies Event.Blocker,
        unblock: [] as ReadonlyArray<Task.Command>,
        successors: [] as ReadonlyArray<Event.Event>
      }
    }
    // Seed 004: the same failure again ends the loop (ADR 0041), after no progress (the more
    // specific reason when the tree is also unchanged). A revision that failed exactly as
    // an earlier one of this run did will fail so again; a person changes the plan or the contract.
    if (failure.fingerprint !== null && failure.earlier.includes(failure.fingerprint)) {
      return {
        blocker: {
          category: "repeated_failure",
          owner: "user",
          requiredAction: `The revision failed verification the same way again (fingerprint ${failure.fingerprint}). Change the plan or the contract: ratchet reopen ${task.taskId} --reason "…"`,
          ...fingerprinted
        } satisfies Event.Blocker,
        unblock: [] as ReadonlyArray<Task.Command>,
        successors: [] as ReadonlyArray<Event.Event>
      }
    }
    if (steps.length === 0 || task.successorsUsed + steps.length > budget) {
      return {
        blocker: {
          category: "retry_budget_spent",
          owner: "user",
          requiredAction: steps.length === 0
            ? `A required criterion failed and no step of the plan serves it; change the plan or the contract: ratchet reopen ${task.taskId} --reason "…"`
            : `A required criterion failed; revising ${steps.join(", ")} needs ${steps.length} successor attempt${steps.length === 1 ? "" : "s"} and ${
              budget - task.successorsUsed
            } of ${budget} are left. Change the plan or the contract: ratchet reopen ${task.taskId} --reason "…"`,
          ...fingerprinted
        } satisfies Event.Blocker,
        unblock: [] as ReadonlyArray<Task.Command>,
        successors: [] as ReadonlyArray<Event.Event>
      }
    }
    const latest = (stepId: string) =>
      [...run.attempts.values()].filter((row) => row.runId === runId && row.stepId === stepId).reduce((max, row) => Math.max(max, row.attempt), 0)
    const successors: Array<Event.Event> = steps.flatMap((stepId, i): ReadonlyArray<Event.Event> => [
      { _tag: "SuccessorGranted", version: 1, actor, at, runId, stepId, successorsUsed: task.successorsUsed + i + 1, successorBudget: budget },
      { _tag: "AttemptScheduled", version: 1, actor, at, runId, stepId, attempt: latest(stepId) + 1 }
    ])
    const unblock: ReadonlyArray<Task.Command> = [{
      _tag: "Unblock",
      actor,
      at,
      to: "RUNNING",
      resolution: `revise ${steps.join(", ")}: successor attempt${steps.length === 1 ? "" : "s"} scheduled by verification`,
      codeChanged: false,
      pendingSteps: steps,
      // A failed criterion's blocker is the agent's to work off: lifting it takes no receipt.
      receipt: null,
      authority
    }]
    return { blocker: null, unblock, successors }
  }

/**
 * Runs one verification pass (see the module comment).
 *
 * @since 0.1.0
 * @category constructors
 */
export const verify = (options: Options) =>
  Effect.withSpan(verifyIn(options), "ratchet.verify", { attributes: { "ratchet.task": options.taskId } })

const verifyIn = (options: Options) =>
  Effect.gen(function*() {
    const project = yield* Project
    const blobs = yield* BlobStore.BlobStore
    const projectId = project.project.projectId
    const { taskId, invocation } = options
    const { summary, branch } = yield* taskOf(projectId, taskId)
    const task = summary.task
    if (task.state !== "VERIFYING") {
      return yield* new Task.Refused({
        code: Task.isTerminal(task.state) ? "terminal_state" : "forbidden_transition",
        command: "Verify",
        state: task.state,
        reason: task.state === "BLOCKED"
          ? "a BLOCKED task is verified again only after its blocker is resolved."
          : `verification runs while the task is VERIFYING (every step done); this one is ${task.state}.`,
        action: Task.nextStep(task)
      })
    }
    // A writer holding the lease would refuse the record: say so before the checks run, not after.
    const lease = yield* ReadModel.ReadModels.pipe(Effect.flatMap((models) => models.lease(projectId, taskId)))
    if (lease !== null && lease.held && invocation.leaseEpoch !== lease.epoch) {
      return yield* heldLease(taskId, invocation.leaseEpoch ?? null, lease)
    }
    const spec = task.spec!
    const criteria = options.acs.length === 0
      ? spec.spec.acceptanceCriteria
      : spec.spec.acceptanceCriteria.filter((ac) => options.acs.includes(ac.id))
    const unknown = options.acs.filter((id) => !spec.spec.acceptanceCriteria.some((ac) => ac.id === id))
    if (unknown.length > 0) {
      return yield* new ControllerError.InvalidRequest({
        field: "--ac",
        reason: `${unknown.join(", ")} ${unknown.length === 1 ? "is not a criterion" : "are not criteria"} of the approved spec.`,
        fix: `Use one of ${spec.spec.acceptanceCriteria.map((ac) => ac.id).join(", ")}, or leave --ac out to verify them all.`
      })
    }
    const episode = yield* Episode.current(task, branch)
    const observed = yield* WorkTree.observe(project.root)
    const tree = { head: observed.head, dirtyDigest: WorkTree.dirtyDigest(observed) }
    const warnings: Array<string> = []
    const last = episode.view.refs[episode.view.refs.length - 1]
    if (last !== undefined && (last.head !== tree.head || last.dirtyDigest !== tree.dirtyDigest)) {
      warnings.push(
        `The work tree is not the one the run's last step left (${
          last.head !== tree.head ? `HEAD ${last.head?.slice(0, 12) ?? "none"} → ${tree.head?.slice(0, 12) ?? "none"}` : ""
        }${last.head !== tree.head && last.dirtyDigest !== tree.dirtyDigest ? "; " : ""}${
          last.dirtyDigest !== tree.dirtyDigest ? "its uncommitted changes differ" : ""
        }); the evidence names the tree it ran against.`
      )
    }
    const now = yield* Clock.currentTimeMillis
    const results = yield* Verification.run({
      criteria,
      ctx: {
        run: episode.runId,
        episode: episode.view,
        blobs,
        deadline: now + 24 * 60 * 60 * 1000,
        snapshotLsn: episode.snapshotLsn,
        specDigest: spec.digest,
        verifier: Signed.personOf(invocation),
        workspace: { root: project.root, tree }
      },
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress })
    })
    // A check that writes into the checkout changes the tree its own evidence names, and
    // `ratchet done` compares the two: say so now, naming what changed.
    const afterChecks = yield* WorkTree.observe(project.root)
    if (afterChecks.head !== observed.head || WorkTree.dirtyDigest(afterChecks) !== tree.dirtyDigest) {
      const changed = [...new Set([...afterChecks.dirty.keys(), ...observed.dirty.keys()])]
        .filter((path) => afterChecks.dirty.get(path) !== observed.dirty.get(path))
      warnings.push(
        `The checks changed the work tree (${changed.slice(0, 10).join(", ")}${changed.length > 10 ? ", …" : ""}${
          afterChecks.head !== observed.head ? `${changed.length > 0 ? "; " : ""}HEAD moved` : ""
        }); ratchet done holds until the tree is the one the checks ran against. Keep what checks write out of git's view (.gitignore).`
      )
    }
    // The hosts' configuration the checks wrote (gitignored files under `.claude/` and `.codex/`
    // included) would be read by the next agent step's host: the pass blocks instead (ADR 0043's
    // amendment), whatever it concludes.
    const hostChanged = HostConfiguration.among(yield* WorkTree.changedBetween(project.root, observed, afterChecks))
    if (options.beforeRecord !== undefined) yield* options.beforeRecord
    // A criterion nobody could judge here (a manual check with no person to ask) has no verdict to
    // record: it is still to be verified (HELD), not a check that failed to conclude (BLOCKED).
    const verdicts = results
      .map((result) => result.verdict)
      .filter((verdict) => !(verdict.verdict === "NOT_RUN" && verdict.evidenceRefs.length === 0))
      .map((verdict) => Signed.verdict(projectId, taskId, episode.runId, verdict, invocation))
    const authority = yield* ProjectApprovers.authority(projectId, project.root)
    // The failure's fingerprint, and those of the run's earlier REVISE passes (ADR 0041).
    const failure = {
      fingerprint: Revision.fingerprintOf(
        results.filter((result) => result.verdict.verdict === "FAIL").map((result) =>
          Revision.failureOf(result.verdict, result.judgements.flatMap((judgement) => judgement.evidence))
        )
      ),
      earlier: (yield* Revision.passesOf(taskId, branch, episode.runId)).filter((pass) => pass.snapshotLsn < episode.snapshotLsn).map((pass) => pass.fingerprint)
    }

    // ---- the record ---------------------------------------------------------------------------
    // Decided through the command handler against the task as it is when the verdicts are written:
    // a task that moved on (rewound, re-run, a new episode) meanwhile keeps its verdicts unwritten.
    let recordedBlocker: Event.Blocker | null = null
    let conclusion: Verification.Conclusion | null = null
    let verdictsSoFar: ReadonlyArray<Event.AcVerdict> = episode.verdicts
    const concludeOver = (all: ReadonlyArray<Event.AcVerdict>, version: number, at: number) =>
      Verification.conclude({
        taskId,
        spec: spec.spec,
        specDigest: spec.digest,
        episode: episode.view,
        verdicts: all,
        authority,
        // The approvals the episode rests on: a VERIFYING task has both a spec and a plan.
        approvals: Task.approvals(task)!,
        gateContext: {
          taskId,
          from: "VERIFYING",
          evaluatedAt: at,
          boundTo: { taskVersion: version, specDigest: spec.digest, planDigest: task.plan?.digest ?? null }
        }
      })
    const handled = yield* CommandHandler.handle({
      projectId,
      streamId: taskId,
      branch,
      epoch: invocation.leaseEpoch ?? null,
      withRun: true,
      decide: (read, at) =>
        Effect.gen(function*() {
          const now = read.summary?.task
          const version = read.summary?.version ?? 0
          if (now === undefined) return yield* new ControllerError.TaskNotFound({ taskId, projectId })
          const current = yield* TaskBranch.of(taskId)
          if (current !== branch) {
            return yield* new NotRecorded({
              reason: `task ${taskId} was rewound onto branch ${current} while verifying; these verdicts are about branch ${branch} and were not recorded.`,
              state: now.state,
              conclusion: concludeOver([...episode.verdicts, ...verdicts], version, at)
            })
          }
          if (now.state !== "VERIFYING" || now.run?.runId !== episode.runId || now.spec?.digest !== spec.digest) {
            return yield* new NotRecorded({
              reason: `task ${taskId} became ${now.state} while verifying; the verdicts were not recorded.`,
              state: now.state,
              conclusion: concludeOver([...episode.verdicts, ...verdicts], version, at)
            })
          }
          const again = yield* Episode.current(now, branch)
          if (again.snapshotLsn !== episode.snapshotLsn) {
            return yield* new NotRecorded({
              reason: `task ${taskId} entered a new verification episode (LSN ${again.snapshotLsn}) meanwhile; verify again.`,
              state: now.state,
              conclusion: concludeOver([...episode.verdicts, ...verdicts], version, at)
            })
          }
          verdictsSoFar = again.verdicts
          const concluded = concludeOver([...again.verdicts, ...verdicts], version, at)
          conclusion = concluded
          const recorded: Event.Event = {
            _tag: "VerificationRecorded",
            version: 2,
            actor: Signed.personOf(invocation),
            at,
            runId: episode.runId,
            snapshotLsn: episode.snapshotLsn,
            outcome: concluded.outcome,
            verdicts
          }
          // A REVISE schedules its successors (revise); when the checks changed the hosts'
          // configuration the task then blocks on that too, so that the run, once unblocked,
          // revises the work rather than finding the same tree again. A pass that does not go
          // back to RUNNING (APPROVED, or a revision whose budget is spent) blocks on it alone.
          const revision = concluded.outcome === "REVISE" && concluded.blocker !== null
            ? revise(now, read.run, again, concluded.stepsToRevise, invocation.actor, at, authority, failure)
            : null
          // git's settings changed by the checks come first: no git may run until a person looked.
          const settings = options.gitSettings?.() ?? null
          const hostBlocker = hostChanged.length === 0 ? null : HostConfiguration.blocker(taskId, hostChanged)
          const blocksOn = settings === null ? hostBlocker : GitSettings.merged(settings, hostBlocker)
          const hostBlock = blocksOn === null ? null : { _tag: "Block", actor: invocation.actor, at, blocker: blocksOn } satisfies Task.Command
          if (hostBlock !== null && (revision === null || revision.unblock.length === 0)) {
            recordedBlocker = hostBlock.blocker
            return [recorded, hostBlock]
          }
          // What the task blocks on as recorded: a REVISE whose retry budget is spent blocks on that.
          recordedBlocker = concluded.blocker
          if (concluded.blocker === null) return [recorded]
          const blocker = revision?.blocker ?? concluded.blocker
          recordedBlocker = hostBlock?.blocker ?? blocker
          return [
            recorded,
            { _tag: "Block", actor: invocation.actor, at, blocker } satisfies Task.Command,
            ...(revision?.unblock ?? []),
            ...(revision?.successors ?? []),
            ...(hostBlock === null ? [] : [hostBlock])
          ]
        }),
      describeHolder: (held) => describeOwner(held.owner)
    }).pipe(
      Effect.map((done) => Either.right(done)),
      Effect.catchTag("NotRecorded", (notRecorded) => Effect.succeed(Either.left(notRecorded))),
      Effect.catchTag("@ratchet/kernel/RunCommandRefused", (refused) => Effect.die(refused))
    )
    if (Either.isLeft(handled)) {
      return {
        taskId,
        runId: episode.runId,
        branch,
        snapshotLsn: episode.snapshotLsn,
        results,
        conclusion: handled.left.conclusion,
        recordedLsn: null,
        notRecorded: handled.left.reason,
        state: handled.left.state,
        workers: episode.view.workers,
        warnings
      } satisfies Result
    }
    const after = handled.right.task
    // What failed teaches the lessons; recording them never changes this pass's result.
    yield* LessonFacts.verificationEnded({ actor: LessonFacts.verifier, task: after, runId: episode.runId, results })
    const evidence = yield* VerificationReport.loadAll([...verdictsSoFar, ...verdicts].flatMap((v) => v.evidenceRefs))
    const episodeAfter = yield* Episode.current(after, branch)
    const report = VerificationReport.render(after, episodeAfter, evidence, authority)
    const runMd = yield* RunReport.render(after, branch).pipe(Effect.catchAll(() => Effect.succeed(null)))
    yield* Projection.write(project.root, after, runMd, report).pipe(
      Effect.catchAll((error) => Effect.sync(() => warnings.push(error.message)))
    )
    const concluded = conclusion as Verification.Conclusion | null
    if (concluded === null) return yield* Effect.dieMessage("a verification recorded without a conclusion")
    const blocker = recordedBlocker as Event.Blocker | null
    return {
      taskId,
      runId: episode.runId,
      branch,
      snapshotLsn: episode.snapshotLsn,
      results,
      // Reported as recorded, so the next action shown is the one the task's state accepts.
      conclusion: blocker === concluded.blocker ? concluded : { ...concluded, blocker },
      recordedLsn: handled.right.appended?.lastLsn ?? null,
      notRecorded: null,
      state: after.state,
      workers: episode.view.workers,
      warnings
    } satisfies Result
  })

/**
 * The verifiers' service, for callers that name its type.
 *
 * @since 0.1.0
 * @category models
 */
export type Verifiers = Verifier.Verifiers

/**
 * The evidence of one criterion in the current episode: the verdict that counts and every verdict
 * recorded, each with its evidence records (loaded; bodies stay blobs).
 *
 * @since 0.1.0
 * @category models
 */
export interface CriterionEvidence {
  readonly acId: string
  readonly outcome: string
  readonly required: boolean
  readonly counted: Event.AcVerdict | null
  readonly verdicts: ReadonlyArray<{
    readonly verdict: Event.AcVerdict
    readonly evidence: ReadonlyArray<{ readonly ref: string; readonly record: Evidence.Evidence | null }>
  }>
}

/**
 * The evidence of the current episode of `taskId`, for all criteria or those in `acs`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const evidenceOf = (taskId: string, acs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const project = yield* Project
    const blobs = yield* BlobStore.BlobStore
    const { summary, branch } = yield* taskOf(project.project.projectId, taskId)
    const task = summary.task
    const spec = task.spec
    if (spec === null) {
      return yield* new ControllerError.InvalidRequest({ field: "task", reason: `task ${taskId} has no spec yet, so no evidence.`, fix: Task.nextStep(task) })
    }
    const unknown = acs.filter((id) => !spec.spec.acceptanceCriteria.some((ac) => ac.id === id))
    if (unknown.length > 0) {
      return yield* new ControllerError.InvalidRequest({
        field: "--ac",
        reason: `${unknown.join(", ")} ${unknown.length === 1 ? "is not a criterion" : "are not criteria"} of the approved spec.`,
        fix: `Use one of ${spec.spec.acceptanceCriteria.map((ac) => ac.id).join(", ")}, or leave --ac out.`
      })
    }
    const episode = yield* Episode.current(task, branch)
    const authority = yield* ProjectApprovers.counting(project.project.projectId, project.root)
    const counted = Verification.counted(episode.verdicts, {
      taskId,
      runId: episode.runId,
      currentSpecDigest: spec.digest,
      workers: episode.view.workers,
      authority
    })
    const criteria: Array<CriterionEvidence> = []
    for (const ac of spec.spec.acceptanceCriteria) {
      if (acs.length > 0 && !acs.includes(ac.id)) continue
      const verdicts: Array<CriterionEvidence["verdicts"][number]> = []
      for (const verdict of episode.verdicts.filter((v) => v.acId === ac.id)) {
        const records: Array<{ readonly ref: string; readonly record: Evidence.Evidence | null }> = []
        for (const ref of verdict.evidenceRefs) {
          const loaded = yield* Evidence.load(blobs, ref).pipe(Effect.option)
          records.push({ ref, record: loaded._tag === "Some" ? loaded.value : null })
        }
        verdicts.push({ verdict, evidence: records })
      }
      criteria.push({ acId: ac.id, outcome: ac.outcome, required: ac.required, counted: counted.get(ac.id) ?? null, verdicts })
    }
    return {
      taskId,
      state: task.state,
      branch,
      runId: episode.runId,
      snapshotLsn: episode.snapshotLsn,
      specDigest: spec.digest,
      workers: episode.view.workers,
      // What the run's agent was shown of the project's lessons: an assisted success (ADR 0038).
      lessons: episode.view.lessons,
      assisted: EpisodeView.assisted(episode.view),
      criteria
    }
  })

/**
 * What {@link evidenceOf} shows: the episode and each criterion's evidence.
 *
 * @since 0.2.0
 * @category models
 */
export type EvidenceView = Effect.Effect.Success<ReturnType<typeof evidenceOf>>

/**
 * An evidence body as loaded: its first bytes as text, its whole size, and whether it was cut.
 *
 * @since 0.2.0
 * @category models
 */
export interface Body {
  readonly text: string
  readonly size: number
  readonly truncated: boolean
}

/**
 * Loads an evidence body (command output, a report) by reference, at most `limit` bytes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const body = (ref: string, limit: number) =>
  Effect.flatMap(BlobStore.BlobStore, (blobs) =>
    Effect.map(blobs.get(ref), (bytes): Body => ({
      text: new TextDecoder().decode(bytes.subarray(0, limit)),
      size: bytes.length,
      truncated: bytes.length > limit
    })))

/**
 * Every output body the evidence of `shown` refers to (stdout, stderr, reports), each loaded
 * once by reference and at most `limit` bytes of it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const bodiesOf = (shown: { readonly criteria: ReadonlyArray<CriterionEvidence> }, limit: number) =>
  Effect.gen(function*() {
    const bodies: Record<string, Body> = {}
    for (const criterion of shown.criteria) {
      for (const { evidence } of criterion.verdicts) {
        for (const { record } of evidence) {
          for (const output of record === null ? [] : Evidence.bodies(record)) {
            if (bodies[output.ref] === undefined) bodies[output.ref] = yield* body(output.ref, limit)
          }
        }
      }
    }
    return bodies as Readonly<Record<string, Body>>
  })
