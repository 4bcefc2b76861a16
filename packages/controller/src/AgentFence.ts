/**
 * How a hook knows the session it answers for is the runner's own agent (ADR 0040), pure.
 *
 * The runner starts an agent step's host with the envelope's variables (`RATCHET_TASK`,
 * `RATCHET_RUN`, `RATCHET_STEP`, `RATCHET_ATTEMPT`, ADR 0039) and one more, the attempt's
 * **capability** (`RATCHET_CAPABILITY`): 32 random bytes, made for that attempt, held only in the
 * agent's environment. Its SHA-256 is the id of the attempt's intent ("the agent runs"), recorded
 * and dispatched under the runner's lease before the host starts ({@link intentIdOf}): the store
 * holds the digest, never the capability, so reading the store does not give it.
 *
 * A session's claim (its variables) is accepted ({@link check}) only when everything holds at
 * once: the task is RUNNING in that run; the attempt is open (Running); the capability's digest
 * names a dispatched intent of exactly that run, step and attempt; the task's lease is held; and
 * the intent's dispatch was written under the epoch the lease holds now (a runner whose lease was
 * taken over has lost its agent's standing with it). Anything else, or a claim that is incomplete,
 * is refused, with the reason: the hook then denies the call (fail closed).
 *
 * @since 0.4.0
 */
import { createHash, randomBytes } from "node:crypto"

/**
 * The variable the agent's capability is given in.
 *
 * @since 0.4.0
 * @category constants
 */
export const capabilityVariable = "RATCHET_CAPABILITY"

/**
 * The variables that make a session claim to be a runner's agent: any one of them present is a
 * claim, and a claim must be whole.
 *
 * @since 0.4.0
 * @category constants
 */
export const claimVariables = ["RATCHET_RUN", "RATCHET_ATTEMPT", capabilityVariable] as const

/** The prefix of an agent attempt's intent id: the rest is the capability's digest. */
const intentPrefix = "in-agent-"

/** A capability as made: 32 bytes in base64url, no padding. */
const capabilityShape = /^[A-Za-z0-9_-]{43}$/

/** Ids as the kernel's events hold them (a run, a step, a task). */
const idShape = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * A new capability for one attempt.
 *
 * @since 0.4.0
 * @category constructors
 */
export const newCapability = (): string => randomBytes(32).toString("base64url")

/**
 * The id of the intent an agent attempt with `capability` records: its SHA-256, in hex.
 *
 * @since 0.4.0
 * @category constructors
 */
export const intentIdOf = (capability: string): string => `${intentPrefix}${createHash("sha256").update(capability, "utf8").digest("hex")}`

/**
 * What a session claims to be: the runner's agent of one attempt.
 *
 * @since 0.4.0
 * @category models
 */
export interface Claim {
  readonly taskId: string
  readonly runId: string
  readonly stepId: string
  readonly attempt: number
  readonly capability: string
}

/**
 * What a session's environment says: no claim (`None`, an ordinary session), a whole claim
 * (`Claim`), or a broken one (`Broken`, refused with the reason).
 *
 * @since 0.4.0
 * @category models
 */
export type Read =
  | { readonly _tag: "None" }
  | { readonly _tag: "Claim"; readonly claim: Claim }
  | { readonly _tag: "Broken"; readonly reason: string }

const valueOf = (environment: Readonly<Record<string, string | undefined>>, name: string): string | null => {
  const value = environment[name]
  return value === undefined || value === "" ? null : value
}

/**
 * The claim `environment` makes, if any.
 *
 * @since 0.4.0
 * @category constructors
 */
export const claimOf = (environment: Readonly<Record<string, string | undefined>>): Read => {
  if (claimVariables.every((name) => valueOf(environment, name) === null)) return { _tag: "None" }
  const named = ["RATCHET_TASK", "RATCHET_RUN", "RATCHET_STEP", "RATCHET_ATTEMPT", capabilityVariable] as const
  const missing = named.filter((name) => valueOf(environment, name) === null)
  if (missing.length > 0) return { _tag: "Broken", reason: `this session claims to be a runner's agent, but ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not set` }
  const [taskId, runId, stepId, attemptText, capability] = named.map((name) => valueOf(environment, name) as string)
  for (const [name, value] of [["RATCHET_TASK", taskId], ["RATCHET_RUN", runId], ["RATCHET_STEP", stepId]] as const) {
    if (!idShape.test(value as string)) return { _tag: "Broken", reason: `${name} is not an id (1 to 128 characters from A-Z a-z 0-9 . _ : -)` }
  }
  if (!/^[1-9][0-9]{0,8}$/.test(attemptText as string)) return { _tag: "Broken", reason: "RATCHET_ATTEMPT is not a positive whole number" }
  if (!capabilityShape.test(capability as string)) return { _tag: "Broken", reason: `${capabilityVariable} is not a capability the runner makes` }
  return {
    _tag: "Claim",
    claim: { taskId: taskId as string, runId: runId as string, stepId: stepId as string, attempt: Number(attemptText), capability: capability as string }
  }
}

/**
 * What the store says about a claim, as read in one go: the task (its state and current run), the
 * claimed attempt's row, the intent the capability's digest names (null when none has that id),
 * the epoch that intent's dispatch was written under, and the task's lease.
 *
 * @since 0.4.0
 * @category models
 */
export interface Facts {
  readonly task: { readonly state: string; readonly runId: string | null } | null
  readonly attempt: { readonly state: string } | null
  readonly intent: { readonly runId: string; readonly stepId: string; readonly attempt: number; readonly state: string } | null
  readonly dispatchEpoch: number | null
  readonly lease: { readonly status: "free" | "held" | "expired"; readonly epoch: number | null }
}

/**
 * The verdict on a claim: the runner's agent (its writes present `epoch`, the runner's), or
 * refused with the reason and what to do.
 *
 * @since 0.4.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Agent"; readonly claim: Claim; readonly intentId: string; readonly epoch: number }
  | { readonly _tag: "Refused"; readonly reason: string }

/**
 * Checks `claim` against `facts` (see the module comment), first failing rule first.
 *
 * @since 0.4.0
 * @category constructors
 */
export const check = (claim: Claim, facts: Facts): Verdict => {
  const where = `attempt ${claim.attempt} of step ${claim.stepId} in run ${claim.runId} of task ${claim.taskId}`
  const refused = (reason: string): Verdict => ({ _tag: "Refused", reason: `this session claims to be the runner's agent of ${where}, but ${reason}` })
  if (facts.task === null) return refused("there is no such task in this project's store")
  if (facts.task.state !== "RUNNING") return refused(`the task is ${facts.task.state}, not RUNNING`)
  if (facts.task.runId !== claim.runId) return refused(`the task's current run is ${facts.task.runId ?? "none"}`)
  if (facts.attempt === null) return refused("the run has no such attempt")
  if (facts.attempt.state !== "Running") return refused(`the attempt is ${facts.attempt.state}, not running`)
  const intent = facts.intent
  if (intent === null || intent.runId !== claim.runId || intent.stepId !== claim.stepId || intent.attempt !== claim.attempt) {
    return refused(`its ${capabilityVariable} is not the capability the runner gave that attempt's agent`)
  }
  if (intent.state !== "Dispatched") return refused(`the attempt's agent is no longer running (its intent is ${intent.state})`)
  if (facts.lease.status !== "held" || facts.lease.epoch === null) return refused(`the runner's writer lease is ${facts.lease.status === "held" ? "unknown" : facts.lease.status}`)
  if (facts.dispatchEpoch !== facts.lease.epoch) {
    return refused(`the agent was started under lease epoch ${facts.dispatchEpoch ?? "unknown"} and the lease is at epoch ${facts.lease.epoch} now (it was taken over)`)
  }
  return { _tag: "Agent", claim, intentId: intentIdOf(claim.capability), epoch: facts.lease.epoch }
}
