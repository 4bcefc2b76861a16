/**
 * The plan of a task: the steps that make the approved spec's acceptance criteria hold, bound to
 * the digest of that spec.
 *
 * `decode` is strict like `Spec.decode` (unknown keys are errors, every issue is listed) and then
 * validates the plan against its spec, each issue naming the step and the field: duplicate step
 * ids, `needs` naming an unknown step, cycles in `needs` (the cycle is spelled out), `acRefs`
 * naming a criterion the spec does not have, a required criterion no step covers, a step `state`
 * outside the plan's declared `stepStates` (step states are an open set declared as data), and a
 * `specDigest` that is not the digest of the spec at hand (a stale plan).
 *
 * The digest is taken over the semantic projection, with the same omission rule as the spec's.
 * An agent step's host, prompt, model and limits are all semantic: changing any of them changes
 * the digest, so an approval no longer matches. A step's title is editorial and is left out, so retitling a step keeps the plan's approval.
 * The agent profile (`AgentProfile`: the implementer host, the unattended verifier, the loop until
 * verified) is semantic too.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as AgentProfile from "./AgentProfile.js"
import * as AgentStep from "./AgentStep.js"
import * as Digest from "./Digest.js"
import * as Spec from "./Spec.js"

const Text = Digest.CanonicalString
const NonEmptyText = Text.pipe(Schema.nonEmptyString())

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const Texts = Schema.Array(Text).annotations({ title: "an array of strings" })

const Command = Schema.Struct({ command: NonEmptyText }).annotations({ identifier: "Command" })

/**
 * A step id: lowercase letters, digits and dashes, starting with a letter or digit, at most 64
 * characters, so it is safe in a file name and a CLI argument.
 *
 * @since 0.1.0
 * @category schemas
 */
export const StepId = Text.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9-]{0,63}$/, {
    message: (issue) =>
      `expected a step id of lowercase letters, digits and "-" (starting with a letter or digit, at most 64 characters), got ${
        JSON.stringify(issue.actual)
      }`
  })
)

/**
 * One work item, of exactly one kind: a command (`run`), a person (`manual`) or a headless coding
 * agent (`agent`, see `AgentStep`). An agent step is never re-run on recovery, so it takes no
 * `idempotent` or `probe`, and its timeout is `agent.timeoutSeconds`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Step = Schema.Struct({
  id: StepId,
  title: NonEmptyText,
  acRefs: Texts,
  run: optional(Command),
  manual: optional(Schema.Struct({ instructions: NonEmptyText }).annotations({ identifier: "Instructions" })),
  agent: optional(AgentStep.Agent),
  needs: optional(Texts),
  timeoutSeconds: optional(Schema.Int.pipe(Schema.positive(), Schema.lessThanOrEqualTo(86_400))),
  idempotent: optional(Schema.Boolean),
  probe: optional(Command),
  state: optional(Text)
}).annotations({ identifier: "Step" }).pipe(
  Schema.filter((step) => kindProblem(step))
)

const kinds = ["run", "manual", "agent"] as const

/** Why `step` is not exactly one kind, or holds a field its kind cannot take. */
const kindProblem = (
  step: { readonly id: string; readonly idempotent?: boolean; readonly probe?: unknown; readonly timeoutSeconds?: number } & {
    readonly [K in (typeof kinds)[number]]?: unknown
  }
): string | undefined => {
  const given = kinds.filter((kind) => step[kind] !== undefined)
  if (given.length !== 1) {
    return `step "${step.id}" has ${
      given.length === 0 ? "none of run, manual and agent" : given.join(" and ")
    }; give it exactly one: a command to run, instructions for a person, or an agent's prompt`
  }
  if (step.agent !== undefined) {
    const extra = [
      step.idempotent !== undefined ? "idempotent" : null,
      step.probe !== undefined ? "probe" : null,
      step.timeoutSeconds !== undefined ? "timeoutSeconds" : null
    ].filter((field) => field !== null)
    if (extra.length > 0) {
      return `agent step "${step.id}" has ${
        extra.join(" and ")
      }; an agent step is never re-run or probed on recovery (an unresolved call makes its attempt Indeterminate), so remove idempotent and probe, and give its timeout as agent.timeoutSeconds`
    }
  }
  return undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Step extends Schema.Schema.Type<typeof Step> {}

/**
 * The kind of a step: how its work is done.
 *
 * @since 0.4.0
 * @category models
 */
export type StepKind = "command" | "manual" | "agent"

/**
 * The kind of `step`. A decoded step has exactly one kind; a hand-built one with none reads as
 * manual (nothing the runner would start).
 *
 * @since 0.4.0
 * @category guards
 */
export const kindOf = (step: Step): StepKind =>
  step.run !== undefined ? "command" : step.agent !== undefined ? "agent" : "manual"

/**
 * A plan, bound to the digest of the spec it was made for. Decode input with {@link decode}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Plan = Schema.Struct({
  specDigest: Digest.Digest,
  steps: Schema.Array(Step).pipe(Schema.minItems(1, { message: () => "a plan needs at least one step" })),
  stepStates: optional(Texts),
  profile: optional(AgentProfile.Profile)
}).annotations({ identifier: "Plan" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Plan extends Schema.Schema.Type<typeof Plan> {}

/**
 * The input is not a valid plan for the spec; `issues` lists every problem found.
 *
 * @since 0.1.0
 * @category errors
 */
export class PlanInvalid extends Schema.TaggedError<PlanInvalid>()("@ratchet/kernel/PlanInvalid", {
  issues: Schema.Array(Spec.Issue)
}) {
  override get message(): string {
    return `the plan is invalid (${this.issues.length} ${
      this.issues.length === 1 ? "issue" : "issues"
    }); fix each one and load the plan again:\n${Spec.formatIssues(this.issues)}`
  }
}

const quoted = (values: Iterable<string>): string => [...values].map((value) => JSON.stringify(value)).join(", ")

/** The first declaration of each step id; later duplicates are reported, not used. */
const firstIndex = (plan: Plan): ReadonlyMap<string, number> => {
  const index = new Map<string, number>()
  plan.steps.forEach((step, i) => {
    if (!index.has(step.id)) index.set(step.id, i)
  })
  return index
}

/** An edge of the needs graph: the needed step and the position of the entry in `needs`. */
interface Need {
  readonly target: number
  readonly at: number
}

/** The needs graph by step index. Unknown needs have no edge; they are reported on their own. */
const needsGraph = (plan: Plan, index: ReadonlyMap<string, number>): ReadonlyArray<ReadonlyArray<Need>> =>
  plan.steps.map((step) =>
    step.needs?.flatMap((need, at) => {
      const target = index.get(need)
      return target === undefined ? [] : [{ target, at }]
    }) ?? []
  )

/**
 * Every cycle that a depth-first walk of the needs graph closes, as an issue on the `needs` entry
 * that closes it. Iterative, so a long chain of steps cannot exhaust the stack.
 */
const cycles = (plan: Plan, graph: ReadonlyArray<ReadonlyArray<Need>>): ReadonlyArray<Spec.Issue> => {
  const visited = new Set<number>()
  const issues: Array<Spec.Issue> = []
  for (const root of plan.steps.keys()) {
    if (visited.has(root)) continue
    visited.add(root)
    const path: Array<{ readonly node: number; next: number }> = [{ node: root, next: 0 }]
    const onPath = new Set([root])
    while (path.length > 0) {
      const frame = path[path.length - 1]!
      const need = graph[frame.node]![frame.next++]
      if (need === undefined) {
        onPath.delete(frame.node)
        path.pop()
      } else if (onPath.has(need.target)) {
        const loop = path.slice(path.findIndex((f) => f.node === need.target)).map((f) => plan.steps[f.node]!.id)
        issues.push({
          path: `/steps/${frame.node}/needs/${need.at}`,
          message: `steps form a cycle through needs: ${
            [...loop, plan.steps[need.target]!.id].join(" → ")
          }; remove one of these needs`
        })
      } else if (!visited.has(need.target)) {
        visited.add(need.target)
        onPath.add(need.target)
        path.push({ node: need.target, next: 0 })
      }
    }
  }
  return issues
}

const validate = (plan: Plan, spec: Spec.Spec): ReadonlyArray<Spec.Issue> => {
  const issues: Array<Spec.Issue> = []
  const specDigest = Spec.digest(spec)
  if (plan.specDigest !== specDigest) {
    issues.push({
      path: "/specDigest",
      message:
        `the plan was made for spec ${plan.specDigest} but the current spec is ${specDigest}; the plan is stale, regenerate it against the current spec`
    })
  }
  const index = firstIndex(plan)
  const criteria = new Set(spec.acceptanceCriteria.map((ac) => ac.id))
  const declaredStates = new Set(plan.stepStates ?? [])
  const covered = new Set<string>()
  plan.steps.forEach((step, i) => {
    const first = index.get(step.id)!
    if (first !== i) {
      issues.push({
        path: `/steps/${i}/id`,
        message: `duplicate step id "${step.id}" (first declared at /steps/${first}); give each step its own id`
      })
    }
    ;(step.needs ?? []).forEach((need, j) => {
      if (!index.has(need)) {
        issues.push({
          path: `/steps/${i}/needs/${j}`,
          message: `step "${step.id}" needs "${need}", which is not a step of this plan`
        })
      }
    })
    step.acRefs.forEach((ref, j) => {
      covered.add(ref)
      if (!criteria.has(ref)) {
        issues.push({
          path: `/steps/${i}/acRefs/${j}`,
          message: `step "${step.id}" refers to ${JSON.stringify(ref)}, which is not an acceptance criterion of the spec (it has ${
            quoted(criteria)
          })`
        })
      }
    })
    if (step.state !== undefined && !declaredStates.has(step.state)) {
      issues.push({
        path: `/steps/${i}/state`,
        message: `step "${step.id}" has unknown state ${JSON.stringify(step.state)}; the plan's stepStates are ${
          declaredStates.size === 0 ? "not declared" : quoted(declaredStates)
        }`
      })
    }
  })
  issues.push(...cycles(plan, needsGraph(plan, index)))
  if (plan.profile !== undefined) issues.push(...AgentProfile.issues(plan.profile, plan.steps))
  for (const ac of spec.acceptanceCriteria) {
    if (ac.required && !covered.has(ac.id)) {
      issues.push({
        path: "/steps",
        message: `required acceptance criterion ${ac.id} is not covered by any step; add it to the acRefs of a step that makes it hold`
      })
    }
  }
  return issues
}

const decodePlan = Schema.decodeUnknownEither(Plan, { errors: "all", onExcessProperty: "error" })

/**
 * Decodes a plan strictly and validates it against `spec` (see the module comment); every issue is
 * reported with its path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode = (input: unknown, spec: Spec.Spec): Either.Either<Plan, PlanInvalid> => {
  // `profile:` with nothing under it reads as null; the schema alone would say "Expected Profile,
  // actual null", which names neither what is wrong nor the fix.
  if (typeof input === "object" && input !== null && "profile" in input && (input as { readonly profile: unknown }).profile === null) {
    const { profile: _, ...rest } = input as Record<string, unknown>
    const others = Either.match(decode(rest, spec), { onLeft: (invalid) => invalid.issues, onRight: () => [] })
    return Either.left(new PlanInvalid({ issues: [emptyProfile, ...others] }))
  }
  return Either.flatMap(
    Either.mapLeft(decodePlan(input), (error) => new PlanInvalid({ issues: Spec.issuesOf(error) })),
    (plan) => {
      const issues = validate(plan, spec)
      return issues.length === 0 ? Either.right(plan) : Either.left(new PlanInvalid({ issues }))
    }
  )
}

const emptyProfile: Spec.Issue = {
  path: "/profile",
  message:
    "is empty: `profile:` has nothing under it. Put implementer, verifier or untilVerified under it (indented), or remove the `profile:` line"
}

/**
 * The semantic projection of a plan: the JSON value its digest is taken over.
 *
 * @since 0.1.0
 * @category models
 */
export interface Projection {
  readonly spec_digest: string
  readonly steps: ReadonlyArray<{
    readonly id: string
    readonly ac_refs?: ReadonlyArray<string>
    readonly run?: { readonly command: string }
    readonly manual?: { readonly instructions: string }
    readonly agent?: AgentStep.Projection
    readonly needs?: ReadonlyArray<string>
    readonly timeout_seconds?: number
    readonly idempotent?: boolean
    readonly probe?: { readonly command: string }
    readonly state?: string
  }>
  readonly step_states?: ReadonlyArray<string>
  readonly profile?: AgentProfile.Projection
}

/**
 * The semantic projection of a plan; step titles are editorial and left out.
 *
 * @since 0.1.0
 * @category encoding
 */
export const projection = (plan: Plan): Projection =>
  Digest.omitEmpty({
    spec_digest: plan.specDigest,
    steps: plan.steps.map((step) =>
      Digest.omitEmpty({
        id: step.id,
        ac_refs: step.acRefs,
        run: step.run && { command: step.run.command },
        manual: step.manual && { instructions: step.manual.instructions },
        agent: step.agent && AgentStep.projection(step.agent),
        needs: step.needs,
        timeout_seconds: step.timeoutSeconds,
        idempotent: step.idempotent,
        probe: step.probe && { command: step.probe.command },
        state: step.state
      })
    ),
    step_states: plan.stepStates,
    profile: plan.profile && AgentProfile.projection(plan.profile)
  }) as unknown as Projection

/**
 * The digest of a plan's semantic projection. Total on every plan produced by {@link decode}; a
 * hand-built plan that breaks the schema is a defect and throws.
 *
 * @since 0.1.0
 * @category constructors
 */
export const digest = (plan: Plan): Digest.Digest =>
  Either.getOrThrowWith(
    Digest.of(projection(plan)),
    (error) => new Error(`Plan.digest needs a plan produced by Plan.decode: ${error.message}`)
  )

/**
 * The step ids in an order that respects `needs`; among steps ready at the same time the one
 * declared first comes first, so the order is deterministic. Every step of a decoded plan appears
 * once. In a hand-built plan, needs on unknown steps are ignored and steps on or behind a cycle
 * are left out rather than scheduled before what they need.
 *
 * @since 0.1.0
 * @category models
 */
export const topologicalOrder = (plan: Plan): ReadonlyArray<string> => {
  const graph = needsGraph(plan, firstIndex(plan))
  const waitingOn = graph.map((needs) => needs.length)
  const dependents = plan.steps.map((): Array<number> => [])
  graph.forEach((needs, i) => {
    for (const need of needs) dependents[need.target]!.push(i)
  })
  // Kept sorted by declaration index, so the head is the earliest-declared ready step.
  const ready = waitingOn.flatMap((count, i) => (count === 0 ? [i] : []))
  const order: Array<string> = []
  while (ready.length > 0) {
    const next = ready.shift()!
    order.push(plan.steps[next]!.id)
    for (const dependent of dependents[next]!) {
      if (--waitingOn[dependent]! === 0) {
        ready.push(dependent)
        ready.sort((a, b) => a - b)
      }
    }
  }
  return order
}
