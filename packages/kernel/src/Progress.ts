/**
 * Where a run stands, from its attempts and intents: which steps are done, which one runs next,
 * what recovery does with an attempt a dead runner left open, and the fingerprint of a failure.
 * Pure functions over the run's attempts and intents (`Run.State`, or a store's rows of it), so the
 * runner and `ratchet status` agree and the recovery table in the docs is one function.
 *
 * Recovery, for an attempt left open (Pending or Running) when its runner died:
 *
 * | the attempt's intents | the step declares | recovery |
 * |---|---|---|
 * | none dispatched | — | cancel it cleanly (nothing external happened); a successor runs |
 * | one dispatched, unresolved | `probe` | run the probe: exit 0 → resolved Succeeded; exit 1 → resolved Failed, successor; else unknown (as below) |
 * | one dispatched, unresolved | `idempotent: true` | close it as superseded; a successor re-runs the step |
 * | one dispatched, unresolved | neither | Indeterminate; the task BLOCKS until a person settles it (`ratchet unblock --resolve`) |
 *
 * A manual step's open attempt awaits its worker, unless the worker (a host session holding the
 * lease) dispatched a tool call and died before it ended: its effect may have happened, so the
 * attempt is Indeterminate as above (a manual step declares neither a probe nor idempotence).
 * An agent step's open attempt is cancelled cleanly when its agent dispatched nothing, and is
 * Indeterminate when it dispatched a call that did not resolve: an agent is never silently re-run
 * (its plan cannot declare a probe or idempotence).
 *
 * @since 0.1.0
 */
import type * as Attempt from "./Attempt.js"
import * as Digest from "./Digest.js"
import type * as Event from "./Event.js"
import * as Plan from "./Plan.js"
import type * as Task from "./Task.js"

/**
 * An attempt as the run sees it (a read-model row of the current run).
 *
 * @since 0.1.0
 * @category models
 */
export interface AttemptInfo {
  readonly stepId: string
  readonly attempt: number
  readonly state: Attempt.State
  /** The LSN of the attempt's last transition. */
  readonly updatedLsn: number
}

/**
 * An intent as the run sees it. `settled` marks a resolution a person gave on a terminal.
 *
 * @since 0.1.0
 * @category models
 */
export interface IntentInfo {
  readonly intentId: string
  readonly stepId: string
  readonly attempt: number
  readonly state: "Pending" | "Dispatched" | "Resolved" | "Abandoned"
  readonly outcome: "Succeeded" | "Failed" | null
  /** The LSN of the intent's last change (its resolution, once resolved). */
  readonly updatedLsn: number
}

/**
 * A step's standing in the run.
 *
 * - `NotStarted`: no attempt yet.
 * - `Scheduled`: its latest attempt is Pending with no intent: a successor scheduled by verification
 *   (REVISE) for the runner to admit. A runner never leaves such an attempt (it schedules and
 *   admits an attempt in one append), so it is not something to recover.
 * - `Open`: its latest attempt is Running, or Pending with an intent.
 * - `Done`: its latest attempt Succeeded, or was Indeterminate and a person settled it as succeeded:
 *   the intents resolved after the attempt became Indeterminate (the settlement's) all Succeeded.
 *   Resolutions from before (a manual step's worker's calls that ended, some failed) do not count:
 *   the settlement decides.
 * - `Unsettled`: its latest attempt is Indeterminate with a dispatched intent nobody resolved.
 * - `Retry`: its latest attempt ended without success; a successor is due (within the budget).
 *
 * @since 0.1.0
 * @category models
 */
export type StepStatus =
  | { readonly _tag: "NotStarted" }
  | { readonly _tag: "Scheduled"; readonly attempt: number }
  | { readonly _tag: "Open"; readonly attempt: number; readonly state: Attempt.State }
  | { readonly _tag: "Done"; readonly attempt: number }
  | { readonly _tag: "Unsettled"; readonly attempt: number; readonly intentId: string }
  | { readonly _tag: "Retry"; readonly attempt: number; readonly state: Attempt.State }

const intentsOf = (intents: ReadonlyArray<IntentInfo>, stepId: string, attempt: number) =>
  intents.filter((intent) => intent.stepId === stepId && intent.attempt === attempt)

/**
 * The standing of one step.
 *
 * @since 0.1.0
 * @category constructors
 */
export const statusOf = (
  stepId: string,
  attempts: ReadonlyArray<AttemptInfo>,
  intents: ReadonlyArray<IntentInfo>
): StepStatus => {
  let latest: AttemptInfo | undefined
  for (const attempt of attempts) {
    if (attempt.stepId === stepId && (latest === undefined || attempt.attempt > latest.attempt)) latest = attempt
  }
  if (latest === undefined) return { _tag: "NotStarted" }
  switch (latest.state) {
    case "Pending":
      return intentsOf(intents, stepId, latest.attempt).length === 0
        ? { _tag: "Scheduled", attempt: latest.attempt }
        : { _tag: "Open", attempt: latest.attempt, state: latest.state }
    case "Running":
      return { _tag: "Open", attempt: latest.attempt, state: latest.state }
    case "Succeeded":
      return { _tag: "Done", attempt: latest.attempt }
    case "Indeterminate": {
      const own = intentsOf(intents, stepId, latest.attempt)
      const unresolved = own.find((intent) => intent.state === "Dispatched")
      if (unresolved !== undefined) return { _tag: "Unsettled", attempt: latest.attempt, intentId: unresolved.intentId }
      const settled = own.filter((intent) => intent.state === "Resolved" && intent.updatedLsn > latest.updatedLsn)
      const succeeded = settled.length > 0 && settled.every((intent) => intent.outcome === "Succeeded")
      return succeeded ? { _tag: "Done", attempt: latest.attempt } : { _tag: "Retry", attempt: latest.attempt, state: latest.state }
    }
    case "Failed":
    case "Cancelled":
    case "TimedOut":
      return { _tag: "Retry", attempt: latest.attempt, state: latest.state }
  }
}

/**
 * Every step's standing, in plan order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const statuses = (
  plan: Plan.Plan,
  attempts: ReadonlyArray<AttemptInfo>,
  intents: ReadonlyArray<IntentInfo>
): ReadonlyArray<{ readonly step: Plan.Step; readonly status: StepStatus }> =>
  plan.steps.map((step) => ({ step, status: statusOf(step.id, attempts, intents) }))

/**
 * What the run does next: the first step in plan order that is not done and whose `needs` are
 * all done, or `AllDone` when every step is done.
 *
 * @since 0.1.0
 * @category constructors
 */
export const next = (
  plan: Plan.Plan,
  attempts: ReadonlyArray<AttemptInfo>,
  intents: ReadonlyArray<IntentInfo>
):
  | { readonly _tag: "AllDone" }
  | { readonly _tag: "Step"; readonly step: Plan.Step; readonly status: StepStatus; readonly index: number } =>
{
  const all = statuses(plan, attempts, intents)
  const done = new Set(all.filter((entry) => entry.status._tag === "Done").map((entry) => entry.step.id))
  const index = all.findIndex((entry) =>
    entry.status._tag !== "Done" && (entry.step.needs ?? []).every((need) => done.has(need))
  )
  const found = all[index]
  // A valid plan is acyclic, so some step that is not done has all its needs done.
  return found === undefined ? { _tag: "AllDone" } : { _tag: "Step", step: found.step, status: found.status, index }
}

/**
 * The manual step that awaits its worker: the run's next step, manual, with its attempt open (the
 * runner admitted it and nobody has marked it done), or null.
 *
 * @since 0.1.0
 * @category constructors
 */
export const awaitingWorker = (
  plan: Plan.Plan,
  attempts: ReadonlyArray<AttemptInfo>,
  intents: ReadonlyArray<IntentInfo>
): { readonly step: Plan.Step; readonly attempt: number } | null => {
  const found = next(plan, attempts, intents)
  return found._tag === "Step" && found.step.manual !== undefined && found.status._tag === "Open" ? { step: found.step, attempt: found.status.attempt } : null
}

/**
 * The steps that are not done, by id (what verification entry must see empty).
 *
 * @since 0.1.0
 * @category constructors
 */
export const pendingSteps = (
  plan: Plan.Plan,
  attempts: ReadonlyArray<AttemptInfo>,
  intents: ReadonlyArray<IntentInfo>
): ReadonlyArray<string> =>
  statuses(plan, attempts, intents).flatMap((entry) => (entry.status._tag === "Done" ? [] : [entry.step.id]))

/**
 * What recovery does with an open attempt that a dead runner left behind.
 *
 * @since 0.1.0
 * @category models
 */
export type Recovery =
  | { readonly _tag: "AwaitWorker" }
  | { readonly _tag: "CancelClean" }
  | { readonly _tag: "Probe"; readonly command: string; readonly intentId: string }
  | { readonly _tag: "Rerun"; readonly intentId: string }
  | { readonly _tag: "Indeterminate"; readonly intentId: string }

/**
 * The recovery of `step`'s open attempt, given that attempt's intents (see the module's table).
 *
 * @since 0.1.0
 * @category constructors
 */
export const recoveryOf = (step: Plan.Step, intents: ReadonlyArray<IntentInfo>): Recovery => {
  const dispatched = intents.find((intent) => intent.state === "Dispatched")
  const kind = Plan.kindOf(step)
  switch (kind) {
    case "manual":
      return dispatched === undefined ? { _tag: "AwaitWorker" } : { _tag: "Indeterminate", intentId: dispatched.intentId }
    case "agent":
      return dispatched === undefined ? { _tag: "CancelClean" } : { _tag: "Indeterminate", intentId: dispatched.intentId }
    case "command":
      if (dispatched === undefined) return { _tag: "CancelClean" }
      if (step.probe !== undefined) return { _tag: "Probe", command: step.probe.command, intentId: dispatched.intentId }
      if (step.idempotent === true) return { _tag: "Rerun", intentId: dispatched.intentId }
      return { _tag: "Indeterminate", intentId: dispatched.intentId }
  }
}

/**
 * What a probe's exit status says about the effect: 0 it happened, 1 it did not, anything else
 * (including a probe that could not run or timed out) is unknown.
 *
 * @since 0.1.0
 * @category constructors
 */
export const probeVerdict = (exitCode: number | null): "happened" | "not_happened" | "unknown" =>
  exitCode === 0 ? "happened" : exitCode === 1 ? "not_happened" : "unknown"

/** ANSI escape sequences, which differ between a terminal run and a piped one. */
// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;?]*[ -/]*[@-~]/g

/**
 * The output tail normalised so that the same failure twice reads the same: colour codes gone,
 * hex ids, numbers (times, pids, line numbers) and temporary paths replaced by markers,
 * whitespace collapsed, the last `lines` non-empty lines kept.
 *
 * @since 0.1.0
 * @category constructors
 */
export const normaliseTail = (output: string, lines = 20): string =>
  // Only the end matters, and a step may print megabytes: normalise the last 64 KiB.
  output
    .slice(-65_536)
    .replace(ansi, "")
    .split(/\r?\n/)
    .map((line) =>
      line
        .replace(/\/tmp\/[^\s'"]*/g, "<tmp>")
        .replace(/\b[0-9a-f]{7,}\b/gi, "<hex>")
        .replace(/\d+(\.\d+)?/g, "<n>")
        .replace(/\s+/g, " ")
        .trim()
    )
    .filter((line) => line.length > 0)
    .slice(-lines)
    .join("\n")

/**
 * A failure's fingerprint: the step, how it ended (exit code, signal, timeout, or never started) and the
 * normalised tail of its output, hashed. Equal fingerprints mean the same failure again.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fingerprint = (input: {
  readonly stepId: string
  readonly exitCode: number | null
  readonly signal: string | null
  readonly timedOut: boolean
  readonly output: string
  /** The process was never started (its spawn failed): neither an exit nor a signal ended it. */
  readonly notStarted?: boolean
}): string => {
  const ending = input.notStarted === true
    ? "not_started"
    : input.timedOut
    ? "timeout"
    : input.exitCode !== null
    ? `exit:${input.exitCode}`
    : `signal:${input.signal ?? "unknown"}`
  return fingerprintKey(input.stepId, ending, normaliseTail(input.output))
}

/**
 * The fingerprint of a failure of `subject` (a step, a criterion, a check) that ended as `ending`,
 * over its already normalised `text`: `fp:<ending>:` and the first 16 hex digits of the SHA-256 of
 * the three, one per line. {@link fingerprint} and a lesson's fingerprint (`Lesson.fingerprintOf`)
 * are both this, so they compare.
 *
 * @since 0.3.0
 * @category constructors
 */
export const fingerprintKey = (subject: string, ending: string, text: string): string => {
  const digest = Digest.ofCanonical(`${subject}\n${ending}\n${text}`)
  return `fp:${ending}:${digest.slice("sha256:".length, "sha256:".length + 16)}`
}

/**
 * The first step whose outcome awaits a person (an Indeterminate attempt with a dispatched intent),
 * or null.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsettledStep = (
  plan: Plan.Plan,
  attempts: ReadonlyArray<AttemptInfo>,
  intents: ReadonlyArray<IntentInfo>
): Plan.Step | null => statuses(plan, attempts, intents).find((entry) => entry.status._tag === "Unsettled")?.step ?? null

/**
 * The command that blocks a task until a person decides: `requiredAction` says what happened and
 * the command to run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decisionNeeded = (
  meta: { readonly actor: Event.Actor; readonly at: number },
  requiredAction: string,
  lastEvidence: ReadonlyArray<string>
): Task.Command => ({
  _tag: "Block",
  actor: meta.actor,
  at: meta.at,
  blocker: { category: "decision_needed", owner: "user", requiredAction, lastEvidence }
})
