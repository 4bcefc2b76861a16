/**
 * What each tool answers, as effect `Schema`s of its document and as the `outputSchema` the tool
 * declares. Every tool answers with a document (`structuredContent`), the JSON `ratchet <command>
 * --json` prints, so every tool declares the shape of it, and the MCP SDK's client checks each
 * answer against it.
 *
 * A document is `{ ok, command, exitCode, … }` around either the command's body or, when the call
 * was refused, its `error` (`{ _tag, message, …fields }`), and a client validates both against
 * the one schema the tool lists. So the schema declares and requires the envelope, and says with
 * `anyOf` that the rest is either the body (every field with its type) or an `error` with `ok`
 * false.
 * A HOLD of `task_gate` is a body with `ok` false and exit code 3: an answer, not an error.
 *
 * The schemas describe the documents the controller's `Documents` builds (the same builders the
 * CLI prints through); the tests check the controller's view types against them when they compile
 * and validate every tool's real answers against them with a strict validator. They are open: a field added to a document does not make an older client refuse it.
 *
 * @since 0.2.0
 */
import * as Event from "@ratchet/kernel/Event"
import * as Gate from "@ratchet/kernel/Gate"
import * as Lesson from "@ratchet/kernel/Lesson"
import * as Task from "@ratchet/kernel/Task"
import * as Evidence from "@ratchet/verifier/Evidence"
import * as Schema from "effect/Schema"
import * as JsonSchema from "./internal/jsonSchema.js"

const State = Schema.Literal(...Task.states)

/**
 * The stages a task view names, in lifecycle order (the tests check it is every `Task.Stage`).
 *
 * @since 0.2.0
 * @category constants
 */
export const stages = ["setup", "brief", "contract", "plan", "impl", "verify", "done", "held"] as const satisfies ReadonlyArray<Task.Stage>

const NullableString = Schema.NullOr(Schema.String)
const NullableInt = Schema.NullOr(Schema.Int)

/**
 * A task's status view: `ratchet status <task> --json`'s `task`, and each of `task list`'s.
 *
 * @since 0.2.0
 * @category schemas
 */
export const TaskViewDocument = Schema.Struct({
  taskId: Schema.String,
  projectId: Schema.String,
  slug: Schema.String,
  goal: Schema.String,
  state: State,
  stage: Schema.Literal(...stages),
  terminal: Schema.Boolean.annotations({ description: "The task has ended (COMPLETED, FAILED or CANCELLED)." }),
  pausedFrom: Schema.NullOr(Schema.Literal("INTERVIEWING", "RUNNING")),
  version: Schema.Int,
  lastLsn: Schema.Int,
  branch: Schema.String.annotations({ description: "The branch of the task's history it lives on: main until a rewind forks another." }),
  revisions: Schema.Struct({ brief: Schema.Int, spec: NullableInt, plan: NullableInt }),
  digests: Schema.Struct({
    restatement: NullableString,
    spec: NullableString,
    specApproved: NullableString,
    plan: NullableString,
    planApproved: NullableString
  }),
  brief: Schema.Struct({
    questions: Schema.Int,
    openBlocking: Schema.Array(Schema.String),
    restatementApproved: Schema.Boolean,
    closed: Schema.Boolean
  }),
  planStale: Schema.Boolean,
  preflight: Schema.NullOr(Event.PreflightObservation),
  lease: Schema.Struct({
    status: Schema.Literal("free", "held", "expired"),
    epoch: NullableInt,
    holder: Schema.NullOr(Event.LeaseOwner),
    heartbeatAt: Schema.NullOr(Schema.Number),
    deadline: Schema.NullOr(Schema.Number),
    now: Schema.Number,
    takeover: Schema.NullOr(Schema.Struct({ command: Schema.String, allowedAfter: Schema.Number, allowedNow: Schema.Boolean }))
  }),
  blockers: Schema.Array(Event.Blocker),
  next: Schema.String.annotations({ description: "The one next step the lifecycle expects, as a sentence with its command." }),
  actions: Schema.Array(Schema.Struct({ command: Schema.String, description: Schema.String })).annotations({
    description: "Every action the state allows; those marked interactive are the user's, at a terminal."
  })
})

/** The fields of {@link Written}, which the writes that add their own (a question id, a digest) spread. */
const writtenFields = {
  taskId: Schema.String,
  state: State,
  events: Schema.Array(Schema.String).annotations({ description: "The types of the events this call appended, in order (empty: nothing changed)." }),
  firstLsn: NullableInt,
  lastLsn: NullableInt,
  projection: NullableString,
  warnings: Schema.Array(Schema.String),
  task: TaskViewDocument
}

/**
 * What every write answers (`Documents.written`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const Written = Schema.Struct(writtenFields)

/** One record of the log (`Documents.logRecord`). */
const LogRecord = Schema.Struct({
  lsn: Schema.Int,
  at: Schema.String,
  recordedAt: Schema.String,
  type: Schema.String.annotations({ description: "The event's type, e.g. TaskCreated." }),
  actor: Event.Actor,
  epoch: NullableInt,
  version: Schema.Int,
  branch: Schema.String,
  operationId: Schema.String,
  event: Schema.Struct({ _tag: Schema.String }).annotations({ description: "The event as stored, its fields depending on its type." })
})

/** One criterion's evidence (`Verify.CriterionEvidence`). */
const CriterionEvidence = Schema.Struct({
  acId: Schema.String,
  outcome: Schema.String,
  required: Schema.Boolean,
  counted: Schema.NullOr(Event.AcVerdict).annotations({ description: "The verdict that counts, or null when none does yet." }),
  verdicts: Schema.Array(Schema.Struct({
    verdict: Event.AcVerdict,
    evidence: Schema.Array(Schema.Struct({ ref: Schema.String, record: Schema.NullOr(Evidence.Evidence) }))
  }))
})

/**
 * A step of the run with its attempts (`TaskReads.StepCheck`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const StepCheck = Schema.Struct({
  stepId: Schema.String,
  title: Schema.String,
  kind: Schema.Literal("command", "manual", "agent"),
  status: Schema.String,
  attempts: Schema.Array(Schema.Struct({
    attempt: Schema.Int,
    state: Schema.String,
    exitCode: NullableInt,
    signal: NullableString,
    timedOut: Schema.Boolean,
    durationMs: Schema.NullOr(Schema.Number),
    changedPaths: Schema.Array(Schema.String),
    outputTail: NullableString,
    notes: Schema.Array(Schema.String)
  }))
})

/**
 * Each tool's body: the fields its document carries besides the envelope.
 *
 * @since 0.2.0
 * @category schemas
 */
export const bodies = {
  task_list: Schema.Struct({ tasks: Schema.Array(TaskViewDocument).annotations({ description: "The project's tasks, newest first." }) }),
  task_status: Schema.Struct({ task: TaskViewDocument }),
  task_gate: Schema.Struct({
    taskId: Schema.String,
    from: State,
    to: State,
    decision: Schema.Literal("CLEAR", "HOLD", "ALLOWED", "FORBIDDEN").annotations({
      description: "CLEAR or HOLD from the gate; ALLOWED for a transition no gate guards; FORBIDDEN when the lifecycle has no such transition."
    }),
    gate: Schema.NullOr(Gate.Gate),
    explanation: Schema.String
  }),
  task_log: Schema.Struct({
    taskId: Schema.String,
    branch: Schema.String,
    events: Schema.Array(LogRecord),
    more: Schema.Boolean.annotations({ description: "Whether more events follow this page." }),
    nextAfterLsn: NullableInt.annotations({ description: "Pass it as afterLsn for the next page." })
  }),
  task_evidence: Schema.Struct({
    taskId: Schema.String,
    state: State,
    branch: Schema.String,
    runId: Schema.String,
    snapshotLsn: Schema.Int,
    specDigest: Schema.String,
    workers: Schema.Array(Event.Actor).annotations({ description: "Everyone who did work in this run: none of them may verify it." }),
    lessons: Schema.Array(Schema.Struct({
      lessonId: Schema.String,
      status: Lesson.Status,
      via: Schema.Literal("hook", "mcp", "cli", "runner"),
      at: Schema.Number,
      stepId: NullableString,
      attempt: NullableInt
    })).annotations({ description: "The lessons shown to the run's agent before its verification froze it, each at its first showing." }),
    assisted: Schema.Boolean.annotations({ description: "Whether any lesson was shown to the run: its success was helped by them." }),
    criteria: Schema.Array(CriterionEvidence),
    bodies: Schema.optional(
      Schema.Record({ key: Schema.String, value: Schema.Struct({ text: Schema.String, size: Schema.Int, truncated: Schema.Boolean }) }).annotations({
        description: "With showOutput: each output body the evidence refers to, by reference (its first 64 KiB)."
      })
    )
  }),
  task_create: Written,
  brief_ask: Schema.Struct({ questionId: Schema.String.annotations({ description: "The question's id, e.g. Q-1." }), ...writtenFields }),
  brief_answer: Written,
  spec_propose: Schema.Struct({
    digest: Schema.String.annotations({ description: "The spec's digest, which the user's approval is bound to." }),
    changed: Schema.Array(Schema.String).annotations({
      description: "The contract's fields this revision changed (goal, nonGoals, constraints, decisions, context, acceptanceCriteria, execution); any of them voids the spec's approval."
    }),
    ...writtenFields
  }),
  plan_propose: Schema.Struct({ digest: Schema.String.annotations({ description: "The plan's digest, which the user's approval is bound to." }), ...writtenFields }),
  run_start: Schema.Struct({
    detached: Schema.Literal(true),
    taskId: Schema.String,
    pid: Schema.Int.annotations({ description: "The runner's process id." }),
    log: Schema.String.annotations({ description: "The runner's log file." })
  }),
  run_check: Schema.Struct({
    task: TaskViewDocument,
    run: Schema.NullOr(Schema.Struct({
      runId: Schema.String,
      specDigest: Schema.String,
      planDigest: Schema.String,
      leaseEpoch: Schema.Int,
      steps: Schema.Array(StepCheck)
    })).annotations({ description: "The run, once one has started; null before." })
  }),
  lessons_query: Schema.Struct({
    taskId: Schema.String,
    state: State,
    runId: NullableString.annotations({ description: "The task's run while it is RUNNING, else null." }),
    recorded: Schema.Boolean.annotations({ description: "Whether the lessons are recorded as shown to the run (while the task is RUNNING)." }),
    lessons: Schema.Array(Schema.Struct({
      id: Schema.String,
      status: Lesson.Status,
      summary: Schema.String.annotations({ description: "The rule, when it applies and what it corrects: at most 400 characters." }),
      fingerprintMatch: Schema.Boolean.annotations({ description: "Whether it is about one of the task's failures." }),
      rank: Schema.Number.annotations({ description: "Its full-text rank against the task's goal and criteria." })
    })).annotations({ description: "At most three, the most relevant first." })
  }),
  lesson_propose: Schema.Struct({
    lessonId: Schema.String,
    status: Lesson.Status.annotations({ description: "Always candidate: a proposal never changes a status." }),
    revision: Schema.Int,
    proposedBy: Event.Actor,
    projectId: Schema.String
  })
} as const

/**
 * The envelope every document has.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Envelope = Schema.Struct({
  ok: Schema.Boolean.annotations({ description: "Whether exitCode is 0." }),
  command: Schema.String.annotations({ description: "The ratchet command whose --json document this is." }),
  exitCode: Schema.Int.annotations({ description: "As the command exits: 0 done, 2 invalid input, 3 HOLD, 4 conflict, 1 unexpected." })
})

/**
 * A refused call's document: the envelope and the error (`Documents.failure`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const Failure = Schema.Struct({
  ...Envelope.fields,
  ok: Schema.Literal(false),
  error: Schema.Struct({
    _tag: Schema.String.annotations({ description: "The error's kind, e.g. @ratchet/controller/TaskNotFound." }),
    message: Schema.String.annotations({ description: "What went wrong, why, and the fix." })
  }).annotations({ description: "Why the call was refused, with the error's own fields." })
})

/**
 * A tool's `outputSchema`: the envelope's fields, required, and then `anyOf` the body (its fields
 * with their types, the required ones required) or the failure (`ok` false and an `error`); see
 * the module comment. Each alternative declares the fields it requires, as strict validators
 * demand, and nothing is declared twice.
 *
 * @since 0.2.0
 * @category constructors
 */
export const outputSchema = (body: { readonly fields: Schema.Struct.Fields }): { readonly type: "object"; readonly [key: string]: unknown } => {
  const envelope = JsonSchema.of(Envelope, "output")
  const failure = JsonSchema.of(Schema.Struct({ ok: Failure.fields.ok, error: Failure.fields.error }), "output")
  return {
    type: "object",
    properties: envelope["properties"],
    required: envelope["required"],
    anyOf: [JsonSchema.of(body as Schema.Struct<Schema.Struct.Fields>, "output"), failure]
  }
}
