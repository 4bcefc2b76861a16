/**
 * Builders shared by the lesson tests: a valid lesson text, failures, successes and guard checks
 * with their fields filled in, a person's receipts signed with alice's real key, and `reach`, which
 * drives a lesson to any of its nine statuses through real commands decided and folded by the
 * kernel itself (a refused step fails the test with the refusal's message). Times are logical:
 * `T0` is when every lesson here is proposed, `DAY` a day of milliseconds.
 */
import * as Either from "effect/Either"
import * as Authority from "../src/Authority.js"
import type * as Digest from "../src/Digest.js"
import type * as Event from "../src/Event.js"
import type * as Fingerprint from "../src/Fingerprint.js"
import * as Lesson from "../src/Lesson.js"
import * as LessonDecider from "../src/LessonDecider.js"
import type * as LessonEvent from "../src/LessonEvent.js"
import * as LessonRules from "../src/LessonRules.js"
import * as Keys from "./keys.js"

export const PROJECT = "p-1"
export const LESSON = "L-1"
export const T0 = 1_000_000
export const DAY = 24 * 60 * 60 * 1000

export const alice: Event.Actor = { kind: "user", id: "alice" }
export const agent: Event.Actor = { kind: "agent", id: "claude" }
export const runner: Event.Actor = { kind: "runner", id: "runner-1" }
export const verifier: Event.Actor = { kind: "verifier", id: "verifier-1" }
export const system: Event.Actor = { kind: "system", id: "controller" }

export const authority = Keys.authorityFor(PROJECT)

/**
 * The fingerprint of step `test` exiting 1 with "FAIL src/report.test.ts / expected 2 rows, got 3"
 * (written out, so that loading these builders runs no kernel code; `Fingerprint.test.ts` checks
 * `Fingerprint.of` gives exactly this).
 */
export const FP: Fingerprint.Fingerprint = {
  subject: "test",
  ending: "exit:1",
  digest: "8edb9c7448663896",
  key: "fp:exit:1:8edb9c7448663896"
}
/** Step `build` exiting 2 with "tsc: cannot find module". */
export const OTHER_FP: Fingerprint.Fingerprint = {
  subject: "build",
  ending: "exit:2",
  digest: "059bb2ba8f6b716b",
  key: "fp:exit:2:059bb2ba8f6b716b"
}

export const decodeBody = (input: unknown): Lesson.Body => Either.getOrThrow(Lesson.decodeBody(input))

/** A lesson about the report's row count, scoped to `src/report/**` in bugfix tasks, with a guard. */
export const BODY: Lesson.Body = {
  scope: { projectId: PROJECT, paths: ["src/report/**"], taskTypes: ["bugfix"] },
  trigger: "changing how the report counts rows",
  wrongAssumption: "the header row is not counted",
  actualRule: "the report counts the header row; subtract one when comparing with the data",
  rootCause: "the CSV writer emits the header through the same path as the rows",
  guard: { description: "a test that counts rows of a two-row report", command: "npm test -- report-rows" },
  fingerprints: [FP.key],
  evidenceRefs: ["blob:sha256:aa"]
}

/** {@link BODY} with `overrides`, decoded as a person's file would be. */
export const body = (overrides: Record<string, unknown> = {}): Lesson.Body => decodeBody({ ...BODY, ...overrides })

/** The digest of {@link BODY}'s guard, which a guard check names. */
export const guardDigest = (): Digest.Digest => Lesson.guardDigest(BODY.guard!)

/** A failure of run `runId` at `at` carrying `FP`. */
export const failure = (runId: string, at: number, overrides: Partial<Lesson.Failure> = {}): Lesson.Failure => ({
  runId,
  attempt: 1,
  projectId: PROJECT,
  taskId: `t-${runId}`,
  workspaceId: "ws-1",
  phase: "VERIFYING",
  stepId: null,
  acId: "AC-001",
  trigger: "npm test -- report",
  wrongAssumption: null,
  actualRule: null,
  category: "verification_failed",
  fingerprint: FP,
  evidenceRefs: [`blob:${runId}`],
  at,
  ...overrides
})

/** An eligible, unassisted success of run `runId` at `at`, in the lesson's scope. */
export const success = (runId: string, at: number, overrides: Partial<Lesson.Exposure> = {}): Lesson.Exposure => ({
  runId,
  projectId: PROJECT,
  taskId: `t-${runId}`,
  workspaceId: "ws-1",
  shown: [],
  assisted: false,
  eligible: true,
  scope: { paths: ["src/report/rows.ts"], taskType: "bugfix" },
  at,
  ...overrides
})

/** A check of the lesson's guard on `side` at `commit` that exited `exitCode`. */
export const guardCheck = (
  side: "before" | "after",
  commit: string,
  exitCode: number | null,
  overrides: Partial<Lesson.GuardCheck> = {}
): Lesson.GuardCheck => ({
  runId: `g-${side}-${commit}`,
  projectId: PROJECT,
  guardDigest: guardDigest(),
  side,
  commit,
  exitCode,
  evidenceRefs: [],
  at: T0 + 1,
  ...overrides
})

/** A receipt for `control` of `lesson` as it is, signed by `signer` (alice unless told). */
export const receipt = (
  lesson: LessonRules.View,
  control: Lesson.Control,
  overrides: Partial<Omit<Lesson.Receipt, "signature">> = {},
  signer: Keys.TestKey | null = Keys.alice
): Lesson.Receipt => {
  const unsigned: Omit<Lesson.Receipt, "signature"> = {
    control,
    lessonId: lesson.id,
    revision: lesson.revision,
    digest: Lesson.digest(lesson.body),
    target: null,
    actor: alice,
    channel: "terminal",
    at: T0,
    ...overrides
  }
  return {
    ...unsigned,
    signature: signer === null
      ? null
      : Keys.sign(signer, "ratchet/lesson-receipt/1", Authority.lessonReceiptFields(PROJECT, unsigned))
  }
}

type Signed = "Pin" | "Reject" | "Deprecate" | "Supersede" | "Compile" | "Edit"

/**
 * A person's control `tag` of `state` by alice with a valid receipt; `replacement` and `guardRef`
 * fill the targets, `edited` the edit's new text.
 */
export const control = (
  tag: Signed,
  state: LessonRules.State,
  options: { readonly actor?: Event.Actor; readonly at?: number; readonly edited?: Lesson.Body } = {}
): LessonDecider.Command => {
  const lesson = state as LessonRules.View
  const at = options.at ?? T0 + 1
  const actor = options.actor ?? alice
  const base = { actor, at, reason: "a person's judgement", authority }
  const name = lesson._tag === "Lesson" ? lesson : { ...fresh(), _tag: "Lesson" as const }
  switch (tag) {
    case "Supersede":
      return { ...base, _tag: tag, by: { id: "L-2", status: "verified" }, receipt: receipt(name, "supersede", { target: "L-2" }) }
    case "Compile":
      return { ...base, _tag: tag, guardRef: "test/report-rows.test.ts", receipt: receipt(name, "compile", { target: "test/report-rows.test.ts" }) }
    case "Edit": {
      const edited = options.edited ?? body({ actualRule: "the report counts the header row" })
      return { ...base, _tag: tag, body: edited, receipt: receipt(name, "edit", { digest: Lesson.digest(edited) }) }
    }
    case "Pin":
    case "Reject":
    case "Deprecate":
      return { ...base, _tag: tag, receipt: receipt(name, tag === "Pin" ? "pin" : tag === "Reject" ? "reject" : "deprecate") }
  }
}

/** A lesson as proposed, for receipts on a lesson that does not exist. */
const fresh = () => LessonRules.fold([proposed()]) as LessonRules.View

/** The event of `LESSON`'s proposal at `T0` by `by`. */
export const proposed = (by: Event.Actor = system, text: Lesson.Body = BODY): LessonEvent.Event => ({
  _tag: "LessonProposed",
  version: 1,
  actor: by,
  at: T0,
  lessonId: LESSON,
  body: text
})

/** Decides `command` against `state` and folds what it decides; fails the test on a refusal. */
export const step = (state: LessonRules.State, command: LessonDecider.Command): LessonRules.State => {
  const decided = LessonDecider.decide(command, state)
  if (Either.isLeft(decided)) throw new Error(`${command._tag} was refused: ${decided.left.message}`)
  return decided.right.reduce(LessonRules.evolve, state)
}

/** Decides and folds every command in turn. */
export const run = (state: LessonRules.State, commands: ReadonlyArray<LessonDecider.Command>): LessonRules.State =>
  commands.reduce(step, state)

/**
 * Proposes `text` as `by`. Ratchet's observer proposes from the failure it saw (`observed`, the
 * default for the system actor: a failure of run `r-seen` carrying {@link FP}); anyone else's text
 * comes from no failure.
 */
export const propose = (
  by: Event.Actor = system,
  text: Lesson.Body = BODY,
  observed: Lesson.Failure | null = by === system ? failure("r-seen", T0) : null
): LessonDecider.Command => ({
  _tag: "Propose",
  actor: by,
  at: T0,
  lessonId: LESSON,
  body: text,
  observed
})

export const recordFailure = (f: Lesson.Failure, actor: Event.Actor = verifier, at = f.at): LessonDecider.Command => ({
  _tag: "RecordFailure",
  actor,
  at,
  failure: f
})

export const recordSuccess = (e: Lesson.Exposure, actor: Event.Actor = system, at = e.at): LessonDecider.Command => ({
  _tag: "RecordSuccess",
  actor,
  at,
  exposure: e
})

export const recordGuard = (check: Lesson.GuardCheck, actor: Event.Actor = runner, at = check.at): LessonDecider.Command => ({
  _tag: "RecordGuardCheck",
  actor,
  at,
  check
})

/** Lessons shown to run `runId` at `at` through a hook. */
export const shown = (runId: string, at: number, overrides: Partial<Lesson.Shown> = {}): Lesson.Shown => ({
  runId,
  projectId: PROJECT,
  taskId: `t-${runId}`,
  stepId: null,
  attempt: null,
  via: "hook",
  at,
  ...overrides
})

export const recordShown = (s: Lesson.Shown, actor: Event.Actor = system, at = s.at): LessonDecider.Command => ({
  _tag: "RecordShown",
  actor,
  at,
  shown: s
})

export const evaluate = (at: number, actor: Event.Actor = system): LessonDecider.Command => ({ _tag: "Evaluate", actor, at })

/** The status a lesson is in, or "absent". */
export const statusOf = (state: LessonRules.State): Lesson.Status | "absent" => (state._tag === "Lesson" ? state.status : "absent")

/**
 * `LESSON` in `status`, reached through real commands:
 * candidate (proposed), probationary (one run failed), verified (a second run failed), enforced
 * (then pinned), compiled (then compiled), expired (probationary, outlived by three successes over
 * seven days), rejected (a candidate rejected), superseded (a candidate superseded), deprecated (a
 * verified lesson deprecated).
 */
export const reach = (status: Lesson.Status | "absent"): LessonRules.State => {
  if (status === "absent") return LessonRules.initial
  const candidate = step(LessonRules.initial, propose())
  const probationary = () => step(candidate, recordFailure(failure("r-a", T0 + 1)))
  const verified = () => step(probationary(), recordFailure(failure("r-b", T0 + 2)))
  const enforced = () => {
    const state = verified()
    return step(state, control("Pin", state))
  }
  let reached: LessonRules.State
  switch (status) {
    case "candidate":
      reached = candidate
      break
    case "probationary":
      reached = probationary()
      break
    case "verified":
      reached = verified()
      break
    case "enforced":
      reached = enforced()
      break
    case "compiled": {
      const state = enforced()
      reached = step(state, control("Compile", state))
      break
    }
    case "expired":
      reached = run(probationary(), [
        recordSuccess(success("r-s1", T0 + 2)),
        recordSuccess(success("r-s2", T0 + 3)),
        recordSuccess(success("r-s3", T0 + 4)),
        evaluate(T0 + 7 * DAY)
      ])
      break
    case "rejected":
      reached = step(candidate, control("Reject", candidate))
      break
    case "superseded":
      reached = step(candidate, control("Supersede", candidate))
      break
    case "deprecated": {
      const state = verified()
      reached = step(state, control("Deprecate", state))
      break
    }
  }
  if (statusOf(reached) !== status) throw new Error(`reach(${status}) ended ${statusOf(reached)}`)
  return reached
}
