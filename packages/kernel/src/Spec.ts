/**
 * The contract of a task: its semantic fields (goal, non-goals, constraints, decisions, context,
 * acceptance criteria, execution policy) and the digest that an approval is bound to.
 *
 * `decode` is strict: an unknown key is an error, every string must be well-formed Unicode, and
 * the cross-field rules hold — acceptance-criterion ids are unique, a criterion has `verify` or
 * `manual` but not both (neither is allowed here; the gate holds such a criterion until evidence
 * arrives), and scope entries are relative POSIX paths or globs that stay inside the repository.
 * A rejection lists every issue with its path, so one round of fixes is enough.
 *
 * The digest is taken over the semantic projection (snake_case keys, the peer implementation's
 * wire names). In the projection an absent optional field, an empty array and an object left
 * empty are all omitted, so `decisions: []` and no decisions digest alike; array order is kept
 * because it is meaning. Defaults are not filled in: an explicit `expectExitCode: 0` differs from
 * an absent one, which at worst asks for one needless re-approval. The Markdown body of a
 * `Document` is editorial and never reaches the digest. Parsing YAML or Markdown is not the
 * kernel's job; the controller hands `decode` plain data.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Digest from "./Digest.js"
import * as Glob from "./Glob.js"

const Text = Digest.CanonicalString
const NonEmptyText = Text.pipe(Schema.nonEmptyString())
const Texts = Schema.Array(Text).annotations({ title: "an array of strings" })

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const ScopeEntry = (field: string) =>
  Text.pipe(
    Schema.filter((entry) => {
      const problem = Glob.problem(entry)
      return problem === undefined
        ? undefined
        : `${field} entry ${JSON.stringify(entry)} ${problem}; use a path or glob relative to the repository root that stays inside it`
    })
  )

const ScopeEntries = (field: string) =>
  Schema.Array(ScopeEntry(field)).annotations({ title: "an array of relative paths or globs" })

/**
 * A file an acceptance criterion's command produces, optionally with the SHA-256 it must have
 * (64 lowercase hex digits).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Artifact = Schema.Struct({
  path: ScopeEntry("verify.artifacts[].path"),
  sha256: optional(
    Schema.String.pipe(
      Schema.pattern(/^[0-9a-f]{64}$/, {
        message: (issue) => `expected 64 lowercase hex digits (a SHA-256), got ${JSON.stringify(issue.actual)}`
      })
    )
  )
}).annotations({ identifier: "Artifact" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Artifact extends Schema.Schema.Type<typeof Artifact> {}

/**
 * An automated check of an acceptance criterion: a command and the exit code that means "holds"
 * (0 when absent).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Verify = Schema.Struct({
  command: NonEmptyText,
  expectExitCode: optional(Schema.Int.pipe(Schema.between(0, 255))),
  timeoutSeconds: optional(Schema.Int.pipe(Schema.positive(), Schema.lessThanOrEqualTo(86_400))),
  /** A JUnit XML report the command writes: every test case in it is evidence, and any failure fails. */
  junit: optional(ScopeEntry("verify.junit")),
  /** Files the command produces, hashed after it ran; with `sha256`, a different hash fails. */
  artifacts: optional(Schema.Array(Artifact))
}).annotations({ identifier: "Verify" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Verify extends Schema.Schema.Type<typeof Verify> {}

/**
 * A human check of an acceptance criterion: what to do and who observes it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Manual = Schema.Struct({ procedure: NonEmptyText, observer: NonEmptyText }).annotations({
  identifier: "Manual"
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Manual extends Schema.Schema.Type<typeof Manual> {}

/**
 * One acceptance criterion (AC). `verify` and `manual` exclude each other.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AcceptanceCriterion = Schema.Struct({
  id: Text.pipe(
    Schema.pattern(/^AC-[0-9]{3,}$/, {
      message: (issue) =>
        `expected an acceptance criterion id like "AC-001" ("AC-" and at least three digits), got ${
          JSON.stringify(issue.actual)
        }`
    })
  ),
  outcome: NonEmptyText,
  required: Schema.Boolean,
  verify: optional(Verify),
  manual: optional(Manual)
}).annotations({ identifier: "AcceptanceCriterion" }).pipe(
  Schema.filter((ac) =>
    ac.verify !== undefined && ac.manual !== undefined
      ? `acceptance criterion ${ac.id} has both verify and manual; keep exactly one way to check it`
      : undefined
  )
)

/**
 * @since 0.1.0
 * @category models
 */
export interface AcceptanceCriterion extends Schema.Schema.Type<typeof AcceptanceCriterion> {}

const AcceptanceCriteria = Schema.Array(AcceptanceCriterion).pipe(
  Schema.minItems(1, { message: () => "a spec needs at least one acceptance criterion" }),
  Schema.filter((acs) => {
    const first = new Map<string, number>()
    const issues: Array<Schema.FilterIssue> = []
    acs.forEach((ac, index) => {
      const earlier = first.get(ac.id)
      if (earlier === undefined) first.set(ac.id, index)
      else {
        issues.push({
          path: [index, "id"],
          message:
            `duplicate acceptance criterion id ${ac.id} (first declared at /acceptanceCriteria/${earlier}); give each criterion its own id`
        })
      }
    })
    return issues
  })
)

/**
 * What the agent may know up front: paths worth reading and facts already verified.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Context = Schema.Struct({ relevantPaths: optional(Texts), verifiedFacts: optional(Texts) }).annotations({
  identifier: "Context"
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Context extends Schema.Schema.Type<typeof Context> {}

/**
 * The retry budget: how many successor attempts a task may spend (the lifecycle caps it at 5).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Retry = Schema.Struct({ maxSuccessors: Schema.Int.pipe(Schema.between(0, 5)) }).annotations({
  identifier: "Retry"
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Retry extends Schema.Schema.Type<typeof Retry> {}

/**
 * The execution policy: where the agent may and may not write, how it tests, how often it retries.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Execution = Schema.Struct({
  allowedScope: optional(ScopeEntries("execution.allowedScope")),
  forbiddenScope: optional(ScopeEntries("execution.forbiddenScope")),
  testPolicy: optional(Text),
  retry: optional(Retry)
}).annotations({ identifier: "Execution" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Execution extends Schema.Schema.Type<typeof Execution> {}

/** The form a task type takes, as every error about one names it. */
const taskTypeForm = "1 to 64 characters from a-z 0-9 _ -, starting with a letter or digit, such as bugfix or feature"

const emptyTaskType = `a task type is empty; give one (${taskTypeForm}), or leave the field out`

/**
 * A kind of task (`bugfix`, `migration`, …): 1 to 64 characters from `a-z 0-9 _ -`, starting with
 * a letter or digit. A spec may name its task's; a lesson's scope may name the kinds it applies to.
 *
 * @since 0.4.0
 * @category schemas
 */
export const TaskType = Schema.String.annotations({
  // A YAML `taskType:` with nothing after it is null: say that it is empty, not "expected string".
  message: (issue) =>
    issue.actual === null || issue.actual === undefined
      ? emptyTaskType
      : `expected a task type (${taskTypeForm}), got ${typeof issue.actual === "object" ? "a list or mapping" : `the ${typeof issue.actual} ${String(issue.actual).slice(0, 80)}`}`
}).pipe(
  Schema.filter((value) => value.trim() === "" ? emptyTaskType : undefined),
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: (issue) => `expected a task type (${taskTypeForm}), got ${JSON.stringify(String(issue.actual).slice(0, 80))}`
  })
)

/**
 * The contract's semantic fields. Decode input with {@link decode}, which also rejects unknown keys.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Spec = Schema.Struct({
  goal: Text.pipe(Schema.trimmed(), Schema.nonEmptyString()),
  nonGoals: optional(Texts),
  constraints: optional(Texts),
  decisions: optional(Texts),
  context: optional(Context),
  acceptanceCriteria: AcceptanceCriteria,
  execution: optional(Execution),
  /** The kind of task (`bugfix`, `feature`, …): lessons scoped to task types apply by it. */
  taskType: optional(TaskType)
}).annotations({ identifier: "Spec" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Spec extends Schema.Schema.Type<typeof Spec> {}

/**
 * A spec document: the semantic fields and the editorial Markdown body, which no digest sees.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Document = Schema.Struct({ semantic: Spec, body: Schema.String }).annotations({ identifier: "Document" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Document extends Schema.Schema.Type<typeof Document> {}

/**
 * One validation problem: a JSON Pointer into the input (`""` is the whole input) and what is wrong.
 *
 * @since 0.1.0
 * @category models
 */
export const Issue = Schema.Struct({ path: Schema.String, message: Schema.String })

/**
 * @since 0.1.0
 * @category models
 */
export interface Issue extends Schema.Schema.Type<typeof Issue> {}

/**
 * Renders issues one per line, the root as "(root)", for error messages.
 *
 * @since 0.1.0
 * @category encoding
 */
export const formatIssues = (issues: ReadonlyArray<Issue>): string =>
  issues.map((issue) => `  ${issue.path === "" ? "(root)" : issue.path}: ${issue.message}`).join("\n")

/**
 * Converts a schema parse error into issues with JSON Pointer paths.
 *
 * @since 0.1.0
 * @category encoding
 */
export const issuesOf = (error: ParseResult.ParseError): ReadonlyArray<Issue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    path: issue.path.map((segment) => `/${String(segment).replaceAll("~", "~0").replaceAll("/", "~1")}`).join(""),
    message: issue.message
  }))

/**
 * The input is not a valid spec; `issues` lists every problem found.
 *
 * @since 0.1.0
 * @category errors
 */
export class SpecInvalid extends Schema.TaggedError<SpecInvalid>()("@ratchet/kernel/SpecInvalid", {
  issues: Schema.Array(Issue)
}) {
  override get message(): string {
    return `the spec is invalid (${this.issues.length} ${
      this.issues.length === 1 ? "issue" : "issues"
    }); fix each one and submit the spec again:\n${formatIssues(this.issues)}`
  }
}

const decodeSpec = Schema.decodeUnknownEither(Spec, { errors: "all", onExcessProperty: "error" })

/**
 * Decodes and validates a spec: unknown keys are errors and every issue is reported.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode = (input: unknown): Either.Either<Spec, SpecInvalid> =>
  Either.mapLeft(decodeSpec(input), (error) => new SpecInvalid({ issues: issuesOf(error) }))

/**
 * The semantic projection of a spec: the JSON value its digest is taken over.
 *
 * @since 0.1.0
 * @category models
 */
export interface Projection {
  readonly goal: string
  readonly non_goals?: ReadonlyArray<string>
  readonly constraints?: ReadonlyArray<string>
  readonly decisions?: ReadonlyArray<string>
  readonly context?: { readonly relevant_paths?: ReadonlyArray<string>; readonly verified_facts?: ReadonlyArray<string> }
  readonly acceptance_criteria: ReadonlyArray<{
    readonly id: string
    readonly outcome: string
    readonly required: boolean
    readonly verify?: {
      readonly command: string
      readonly expect_exit_code?: number
      readonly timeout_seconds?: number
      readonly junit?: string
      readonly artifacts?: ReadonlyArray<{ readonly path: string; readonly sha256?: string }>
    }
    readonly manual?: { readonly procedure: string; readonly observer: string }
  }>
  readonly execution?: {
    readonly allowed_scope?: ReadonlyArray<string>
    readonly forbidden_scope?: ReadonlyArray<string>
    readonly test_policy?: string
    readonly retry?: { readonly max_successors: number }
  }
  readonly task_type?: string
}

const criterionProjection = (ac: AcceptanceCriterion) =>
  Digest.omitEmpty({
    id: ac.id,
    outcome: ac.outcome,
    required: ac.required,
    verify: ac.verify && Digest.omitEmpty({
      command: ac.verify.command,
      expect_exit_code: ac.verify.expectExitCode,
      timeout_seconds: ac.verify.timeoutSeconds,
      junit: ac.verify.junit,
      artifacts: ac.verify.artifacts?.map((artifact) => Digest.omitEmpty({ path: artifact.path, sha256: artifact.sha256 }))
    }),
    manual: ac.manual && { procedure: ac.manual.procedure, observer: ac.manual.observer }
  })

/**
 * The semantic projection of a spec (see the module comment for the omission rule).
 *
 * @since 0.1.0
 * @category encoding
 */
export const projection = (spec: Spec): Projection =>
  Digest.omitEmpty({
    goal: spec.goal,
    non_goals: spec.nonGoals,
    constraints: spec.constraints,
    decisions: spec.decisions,
    context: spec.context && Digest.omitEmpty({
      relevant_paths: spec.context.relevantPaths,
      verified_facts: spec.context.verifiedFacts
    }),
    acceptance_criteria: spec.acceptanceCriteria.map(criterionProjection),
    execution: spec.execution && Digest.omitEmpty({
      allowed_scope: spec.execution.allowedScope,
      forbidden_scope: spec.execution.forbiddenScope,
      test_policy: spec.execution.testPolicy,
      retry: spec.execution.retry && { max_successors: spec.execution.retry.maxSuccessors }
    }),
    task_type: spec.taskType
  }) as unknown as Projection

/**
 * The digest of a spec's semantic projection. Total on every spec produced by {@link decode}; a
 * hand-built spec that breaks the schema (a lone surrogate, `NaN`) is a defect and throws.
 *
 * @since 0.1.0
 * @category constructors
 */
export const digest = (spec: Spec): Digest.Digest =>
  Either.getOrThrowWith(
    Digest.of(projection(spec)),
    (error) => new Error(`Spec.digest needs a spec produced by Spec.decode: ${error.message}`)
  )

/**
 * The digest of a spec document: its semantic fields only, never the editorial body.
 *
 * @since 0.1.0
 * @category constructors
 */
export const documentDigest = (document: Document): Digest.Digest => digest(document.semantic)

/**
 * A semantic field of a spec; a change to any of them voids the spec's approval.
 *
 * @since 0.1.0
 * @category models
 */
export type SemanticField =
  | "goal"
  | "nonGoals"
  | "constraints"
  | "decisions"
  | "context"
  | "acceptanceCriteria"
  | "execution"
  | "taskType"

const projectedAs: ReadonlyArray<readonly [SemanticField, keyof Projection]> = [
  ["goal", "goal"],
  ["nonGoals", "non_goals"],
  ["constraints", "constraints"],
  ["decisions", "decisions"],
  ["context", "context"],
  ["acceptanceCriteria", "acceptance_criteria"],
  ["execution", "execution"],
  ["taskType", "task_type"]
]

/**
 * The semantic fields whose projections differ between two specs, in declaration order; empty when
 * the two specs share a digest. Used to say why an approval was voided.
 *
 * @since 0.1.0
 * @category guards
 */
export const semanticChanges = (a: Spec, b: Spec): ReadonlyArray<SemanticField> => {
  const pa = projection(a)
  const pb = projection(b)
  // Both projections are built by the same code, so equal values have equal key order and
  // JSON.stringify compares them exactly; it cannot fail on a projection.
  return projectedAs
    .filter(([, key]) => JSON.stringify(pa[key]) !== JSON.stringify(pb[key]))
    .map(([field]) => field)
}
