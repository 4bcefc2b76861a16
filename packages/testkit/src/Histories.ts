/**
 * Random task histories that a real Ratchet could have written, for properties over a store.
 *
 * A history is not a list of arbitrary events: every lifecycle event comes from `Task.decide`
 * accepting a command against the state folded so far, and the run-level facts (attempts,
 * intents, checkpoints, the writer lease) follow their own rules (an attempt transitions from the
 * state it is in, an intent is dispatched only while pending, a lease epoch goes up by one). So a
 * history exercises what stores really see: long interviews, approvals bound to digests, runs,
 * blocks, reopens, cancels, and leases taken, taken over and released.
 *
 * The randomness is a {@link Script} of plain numbers (fast-check shrinks it well); {@link next}
 * turns one number and the events so far into the next unit of events, deterministically. How the
 * units are batched into appends and where a branch forks are also in the script, and the driver
 * (the conformance suite) applies them.
 *
 * @since 0.1.0
 */
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import * as Task from "@ratchet/kernel/Task"
import * as Turn from "@ratchet/kernel/Turn"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Events from "./Events.js"
import * as Signing from "./Signing.js"

/**
 * The randomness of one history.
 *
 * @since 0.1.0
 * @category models
 */
export interface Script {
  /** One number per unit: it picks the command or fact, and (after a fork) the branch. */
  readonly steps: ReadonlyArray<number>
  /** How many units each append carries, used in turn (a lease change always ends an append). */
  readonly batches: ReadonlyArray<number>
  /** Fork after `afterStep` units, at the event chosen by `at` (taken modulo the choices). */
  readonly fork: { readonly afterStep: number; readonly at: number } | null
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const arbitrary = (options: { readonly maxSteps?: number } = {}): fc.Arbitrary<Script> => {
  const maxSteps = options.maxSteps ?? 60
  return fc.record({
    steps: fc.array(fc.nat({ max: 1_000 }), { minLength: 1, maxLength: maxSteps, size: "max" }),
    batches: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 8 }),
    fork: fc.option(fc.record({ afterStep: fc.nat({ max: maxSteps }), at: fc.nat() }), { nil: null, freq: 3 })
  })
}

// ---------------------------------------------------------------------------------------------
// What a history knows
// ---------------------------------------------------------------------------------------------

/**
 * The task-wide writer lease as the events so far left it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lease {
  readonly epoch: number
  readonly held: boolean
  readonly owner: Event.LeaseOwner | null
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const leaseOf = (events: Iterable<Event.Event>): Lease => {
  let lease: Lease = { epoch: 0, held: false, owner: null }
  for (const event of events) {
    switch (event._tag) {
      case "LeaseAcquired":
      case "LeaseTakenOver":
        lease = { epoch: event.epoch, held: true, owner: event.owner }
        break
      case "LeaseReleased":
        lease = { ...lease, held: false }
        break
      default:
        break
    }
  }
  return lease
}

/**
 * The epoch an append presents when the lease is as given: the held epoch, or none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const presentedEpoch = (lease: Lease): number | null => (lease.held ? lease.epoch : null)

/**
 * @since 0.1.0
 * @category guards
 */
export const isLeaseEvent = (event: Event.Event): boolean =>
  event._tag === "LeaseAcquired" || event._tag === "LeaseTakenOver" || event._tag === "LeaseReleased"

/**
 * What {@link next} needs to know.
 *
 * @since 0.1.0
 * @category models
 */
export interface Context {
  readonly projectId: string
  readonly taskId: string
  /** The events of the branch the unit goes to, in order. */
  readonly branch: ReadonlyArray<Event.Event>
  /** The task-wide lease. */
  readonly lease: Lease
  /** Whether lease facts may be chosen. */
  readonly leases: boolean
  /** A number no earlier unit of this history was given: ids and logical times derive from it. */
  readonly serial: number
}

// ---------------------------------------------------------------------------------------------
// Contracts the commands refer to
// ---------------------------------------------------------------------------------------------

const must = <A, E extends { readonly message: string }>(either: Either.Either<A, E>): A =>
  Either.getOrElse(either, (error) => {
    throw new Error(`the history fixtures are invalid: ${error.message}`)
  })

const specInput = (extra: ReadonlyArray<string>) => ({
  goal: "Add a --json flag to the status command",
  ...(extra.length === 0 ? {} : { constraints: extra }),
  acceptanceCriteria: [
    { id: "AC-001", outcome: "status --json prints one JSON document", required: true, verify: { command: "npm test" } },
    { id: "AC-002", outcome: "the guide mentions the flag", required: false }
  ],
  execution: { allowedScope: ["src/**"], retry: { maxSuccessors: 2 } }
})

let contracts: { readonly specs: ReadonlyArray<Spec.Spec> } | undefined
// Decoded on first use, not at import, so loading this module costs nothing.
const specs = (): ReadonlyArray<Spec.Spec> => {
  contracts ??= { specs: [must(Spec.decode(specInput([]))), must(Spec.decode(specInput(["keep the human output unchanged"])))] }
  return contracts.specs
}

const plans = new WeakMap<Spec.Spec, Map<number, Plan.Plan>>()
// Plans are decoded once per spec and variant: histories propose them over and over.
const planFor = (spec: Spec.Spec, variant: number): Plan.Plan => {
  const byVariant = plans.get(spec) ?? new Map<number, Plan.Plan>()
  plans.set(spec, byVariant)
  const plan = byVariant.get(variant) ?? decodePlan(spec, variant)
  byVariant.set(variant, plan)
  return plan
}

const decodePlan = (spec: Spec.Spec, variant: number): Plan.Plan =>
  must(
    Plan.decode(
      {
        specDigest: Spec.digest(spec),
        steps: [
          { id: "build", title: "Build the flag", acRefs: ["AC-001"], run: { command: `npm run build -- --variant ${variant}` } },
          { id: "docs", title: "Document it", acRefs: ["AC-002"], needs: ["build"], manual: { instructions: "edit the guide" } }
        ]
      },
      spec
    )
  )

/** The histories' approver: alice (`Events.actors.user`), with a test key. */
let approverKey: Signing.TestKey | undefined
// Made on first use, not at import, so loading this module costs nothing.
const alice = (): Signing.TestKey => (approverKey ??= Signing.keyOf(1))

/** The project's approvers, as the histories' commands present them to the decider. */
const authorityOf = (context: Context) =>
  Signing.authorityFor(context.projectId, [{ id: Events.actors.user.id, key: alice().key }])

/** alice's signed receipt for `subject` of the history's task, at `revision`. */
const receipt = (
  context: Context,
  subject: Event.ReceiptSubject,
  digest: Digest.Digest,
  revision: number | null,
  at: number
): Event.Receipt =>
  Signing.receipt(alice(), context.projectId, context.taskId, revision, { subject, digest, actor: Events.actors.user, channel: "terminal", at })

// ---------------------------------------------------------------------------------------------
// Choosing the next unit
// ---------------------------------------------------------------------------------------------

/**
 * The commands worth trying against `task`: `progress` lists the lifecycle's forward steps, most
 * advanced first (so the first one the decider accepts moves the task furthest), `detours` the
 * rest (questions, pauses, blocks, failures, reopens, cancels).
 */
const commandsFor = (
  task: Task.Task,
  context: Context
): { readonly progress: ReadonlyArray<Task.Command>; readonly detours: ReadonlyArray<Task.Command> } => {
  const at = Events.defaultAt + context.serial
  const user = { actor: Events.actors.user, at }
  const agent = { actor: Events.actors.agent, at }
  const system = { actor: Events.actors.system, at }
  const runner = { actor: Events.actors.runner, at }
  const question = `q${context.serial}`
  const open = task.brief.questions.find((candidate) => candidate.answer === null)
  const spec = specs()[context.serial % 2] ?? specs()[0]!
  const progress: Array<Task.Command> = []
  const detours: Array<Task.Command> = [
    { _tag: "AskQuestion", ...agent, questionId: question, text: `Question ${question}?`, blocking: context.serial % 3 === 0 },
    { _tag: "Restate", ...agent, text: `Status prints JSON when asked (${context.serial % 2}).` },
    { _tag: "ResumeInterview", ...user },
    { _tag: "ProposeSpec", ...agent, spec },
    { _tag: "RecordPreflight", ...system, observation: { head: "abc123", dirtyPaths: [], missingPaths: [], invalidScopes: [] } },
    {
      _tag: "Block",
      ...system,
      blocker: { category: "missing_dependency", owner: "user", requiredAction: "install the fixture database" }
    },
    {
      _tag: "Unblock",
      ...user,
      to: "RUNNING",
      resolution: "installed",
      codeChanged: true,
      pendingSteps: ["build"],
      receipt: null,
      authority: authorityOf(context)
    },
    { _tag: "Fail", ...system, reason: "the branch was force-pushed", evidenceRefs: ["ev-git"] },
    { _tag: "Pause", ...user },
    { _tag: "Resume", ...user },
    {
      _tag: "RecordAttemptFailure",
      ...runner,
      stepId: "build",
      attempt: context.serial,
      fingerprint: `exit-1:${context.serial % 4}`,
      progressed: context.serial % 5 !== 0
    },
  ]
  if (task.spec !== null) {
    const specDigest = task.spec.digest
    progress.push({
      _tag: "Complete",
      ...system,
      verdicts: task.run === null ? [] : [
        Signing.verdict(alice(), context.projectId, context.taskId, task.run.runId, {
          acId: "AC-001",
          verdict: "PASS",
          evidenceRefs: ["ev-AC-001"],
          specDigest,
          verifier: Events.actors.user,
          at
        })
      ],
      workers: [Events.actors.runner],
      authority: authorityOf(context)
    })
    progress.push({ _tag: "EnterVerification", ...system, pendingSteps: [], snapshotLsn: context.serial })
    if (task.plan !== null) {
      progress.push(
        {
          _tag: "StartRun",
          ...runner,
          runId: `run-${context.serial}`,
          specDigest,
          planDigest: task.plan.digest,
          lease: { held: context.lease.held, epoch: context.lease.epoch },
          authority: authorityOf(context)
        },
        {
          _tag: "ApprovePlan",
          ...user,
          receipt: receipt(context, "plan", task.plan.digest, task.plan.revision, at),
          authority: authorityOf(context)
        }
      )
    }
    progress.push(
      { _tag: "ProposePlan", ...agent, plan: planFor(task.spec.spec, context.serial % 2) },
      { _tag: "RecordPreflight", ...system, observation: { head: "abc123", dirtyPaths: [], missingPaths: [], invalidScopes: [] } },
      { _tag: "ApproveSpec", ...user, receipt: receipt(context, "spec", specDigest, task.spec.revision, at), authority: authorityOf(context) }
    )
    detours.push({
      _tag: "Reopen",
      ...user,
      reason: "the contract was wrong",
      receipt: receipt(context, "reopen", specDigest, null, at),
      authority: authorityOf(context)
    })
  }
  if (task.state !== "SPEC_READY") progress.push({ _tag: "ProposeSpec", ...agent, spec })
  progress.push({ _tag: "CloseBrief", ...user })
  if (task.brief.restatement !== null && !task.brief.restatement.approved) {
    progress.push({
      _tag: "ApproveRestatement",
      ...user,
      receipt: receipt(context, "restatement", task.brief.restatement.digest, null, at),
      authority: authorityOf(context)
    })
  }
  if (task.brief.restatement === null) {
    progress.push({ _tag: "Restate", ...agent, text: "Status prints JSON when asked." })
  }
  if (open !== undefined) {
    progress.push({ _tag: "AnswerQuestion", ...user, questionId: open.questionId, answer: "yes", source: "user" })
  }
  progress.push({ _tag: "BeginInterview", ...user, projectInitialized: true, storeWritable: true }, { _tag: "Resume", ...user })
  // Cancelling ends the lifecycle; keep it rare so most histories go further.
  if (context.serial % 11 === 10) detours.push({ _tag: "Cancel", ...user, reason: "no longer needed" })
  return { progress, detours }
}

interface Attempt {
  readonly runId: string
  readonly stepId: string
  readonly attempt: number
  readonly state: Extract<Event.Event, { readonly _tag: "AttemptTransitioned" }>["to"]
}

const runLevel = (events: ReadonlyArray<Event.Event>) => {
  const attempts = new Map<string, Attempt>()
  const intents = new Map<string, "Pending" | "Dispatched" | "Resolved" | "Abandoned">()
  for (const event of events) {
    switch (event._tag) {
      case "AttemptScheduled":
        attempts.set(`${event.runId}/${event.stepId}/${event.attempt}`, {
          runId: event.runId,
          stepId: event.stepId,
          attempt: event.attempt,
          state: "Pending"
        })
        break
      case "AttemptTransitioned":
        attempts.set(`${event.runId}/${event.stepId}/${event.attempt}`, {
          runId: event.runId,
          stepId: event.stepId,
          attempt: event.attempt,
          state: event.to
        })
        break
      case "IntentRecorded":
        intents.set(event.intentId, "Pending")
        break
      case "IntentDispatched":
        intents.set(event.intentId, "Dispatched")
        break
      case "IntentResolved":
        intents.set(event.intentId, "Resolved")
        break
      case "IntentAbandoned":
        intents.set(event.intentId, "Abandoned")
        break
      default:
        break
    }
  }
  return { attempts: [...attempts.values()], intents: [...intents.entries()] }
}

/** Lease timings whose deadline is the heartbeat itself (see `factsFor`). */
const zeroGrace = { heartbeatMs: 1, graceMs: 0 } as const

const pick = <A>(items: ReadonlyArray<A>, n: number): A | undefined => items[n % Math.max(items.length, 1)]

const factsFor = (aggregate: Task.Aggregate, context: Context): ReadonlyArray<ReadonlyArray<Event.Event>> => {
  const at = { at: Events.defaultAt + context.serial }
  const n = context.serial
  const runId = aggregate._tag === "Task" && aggregate.run !== null ? aggregate.run.runId : "run-0"
  const { attempts, intents } = runLevel(context.branch)
  const stepId = n % 2 === 0 ? "build" : "docs"
  const nextAttempt = 1 + attempts.filter((a) => a.runId === runId && a.stepId === stepId).length
  const facts: Array<ReadonlyArray<Event.Event>> = [
    [Events.attemptScheduled(runId, stepId, nextAttempt, at)],
    // A run's start, as a runner that exports traces writes it: the checkpoint, then its trace.
    n % 3 === 0
      ? [
        Events.checkpointRecorded("run_start", runId, at),
        Events.traceRecorded(runId, 1, { traceId: (n + 1).toString(16).padStart(32, "0"), spanId: (n + 1).toString(16).padStart(16, "0") }, at)
      ]
      : [Events.checkpointRecorded(n % 3 === 1 ? "step" : "terminal", runId, at)]
  ]
  const live = attempts.filter((a) => a.state === "Pending" || a.state === "Running")
  const attempt = pick(live, n)
  if (attempt !== undefined) {
    const to = attempt.state === "Pending"
      ? "Running"
      : pick(["Succeeded", "Failed", "Indeterminate", "TimedOut", "Cancelled"] as const, n) ?? "Succeeded"
    facts.push([Events.attemptTransitioned({ ...attempt, from: attempt.state, to }, at)])
  }
  const target = pick(attempts, n) ?? { runId, stepId: "build", attempt: 1 }
  facts.push([Events.intentRecorded(`i-${n}`, target, at)])
  // A worker's turn events, every kind in turn, on a known attempt (or none: a turn of an attempt
  // the branch never scheduled changes no row).
  facts.push([Events.turnRecorded(target, { _tag: pick(Turn.eventTags, n) ?? "turnStarted" }, at)])
  const pending = intents.filter(([, state]) => state === "Pending").map(([id]) => id)
  const dispatched = intents.filter(([, state]) => state === "Dispatched").map(([id]) => id)
  const toDispatch = pick(pending, n)
  if (toDispatch !== undefined) facts.push([Events.intentDispatched(toDispatch, at)])
  const toResolve = pick(dispatched, n)
  if (toResolve !== undefined) {
    facts.push([Events.intentResolved(toResolve, n % 2 === 0 ? "Succeeded" : "Failed", [`out-${n}`], at)])
  }
  facts.push([
    Events.commandExited(`i-${n}`, target, { exitCode: n % 3 === 0 ? null : n % 2, changedPaths: n % 2 === 0 ? ["src/a.ts"] : [] }, at),
    // Every other exit is an agent's, whose host reported a finished stream or a truncated one.
    ...(n % 2 === 0 ? [Events.agentReported(`i-${n}`, target, n % 4 === 0 ? { host: "codex" } : { result: null }, at)] : []),
    Events.attemptNoted(target, `note ${n}`, at)
  ])
  if (aggregate._tag === "Task" && aggregate.spec !== null && aggregate.plan !== null) {
    facts.push([Events.boundaryRecorded(runId, { specDigest: aggregate.spec.digest, planDigest: aggregate.plan.digest }, n % 2 === 0 ? "docs" : null, at)])
  }
  const toSettle = pick(dispatched, n + 2)
  if (toSettle !== undefined) {
    facts.push([
      Events.intentResolved(toSettle, "Succeeded", [], { ...at, actor: Events.actors.user }),
      Events.intentSettled(toSettle, target, "Succeeded", Digest.ofCanonical(`settle ${toSettle}`), at)
    ])
  }
  if (aggregate._tag === "Task" && aggregate.spec !== null && n % 4 === 1) {
    const verdict = n % 8 === 1 ? "PASS" as const : "INDETERMINATE" as const
    facts.push([
      Events.verificationRecorded(runId, n, verdict === "PASS" ? "APPROVED" : "BLOCKED", [{
        acId: "AC-001",
        verdict,
        evidenceRefs: [`ev-${n}`],
        specDigest: aggregate.spec.digest,
        verifier: Events.actors.verifier,
        at: at.at,
        // A store keeps an unsigned verdict as it keeps any other fact; only the gates judge it.
        signature: null
      }], at)
    ])
  }
  const toAbandon = pick([...pending, ...dispatched], n + 1)
  if (toAbandon !== undefined) facts.push([Events.intentAbandoned(toAbandon, "the runner restarted", at)])
  if (context.leases) {
    const lease = context.lease
    const me = Events.owner(`w${n % 3}`, 1_000 + (n % 3))
    // A zero grace, so the takeover below is allowed once the store's clock moves past it.
    if (!lease.held) facts.push([Events.leaseAcquired(lease.epoch + 1, me, zeroGrace, at)])
    else {
      facts.push([Events.leaseReleased(lease.epoch, at)])
      if (lease.owner !== null) facts.push([Events.leaseTakenOver(lease.epoch + 1, me, lease.owner, zeroGrace, at)])
    }
  }
  return facts
}

const decided = (commands: ReadonlyArray<Task.Command>, task: Task.Task): ReadonlyArray<ReadonlyArray<Event.Event>> =>
  commands.flatMap((command) => {
    const decision = Task.decide(command, task)
    return Either.isRight(decision) && decision.right.length > 0 ? [decision.right] : []
  })

/**
 * The next unit of events: `TaskCreated` first; then, by `choice` modulo 4, a run-level fact (0),
 * the furthest forward step the decider accepts (1, 2), or any command it accepts, detours
 * included (3). A
 * choice with nothing to decide falls back to a fact, which is always possible.
 *
 * @since 0.1.0
 * @category constructors
 */
export const next = (choice: number, context: Context): ReadonlyArray<Event.Event> => {
  const aggregate = Task.fold(context.branch)
  if (aggregate._tag === "Absent") {
    return [Events.taskCreated({ taskId: context.taskId, projectId: context.projectId }, { at: Events.defaultAt + context.serial })]
  }
  const rest = Math.floor(choice / 4)
  if (choice % 4 !== 0) {
    const { detours, progress } = commandsFor(aggregate, context)
    const forward = decided(progress, aggregate)
    const unit = choice % 4 !== 3 ? forward[0] : pick([...forward, ...decided(detours, aggregate)], rest)
    if (unit !== undefined) return unit
  }
  const facts = factsFor(aggregate, context)
  return pick(facts, rest) ?? facts[0]!
}
