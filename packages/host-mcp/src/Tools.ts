/**
 * The MCP server's tools: each one decodes its arguments with an effect `Schema` and makes one
 * controller call, the one the matching `ratchet` command makes, answering with the JSON document
 * that command prints with `--json`.
 *
 * What an agent may do here is what an agent may do at all: read a task (status, gate, log,
 * evidence, its run), create one, ask and answer the brief's questions, propose a spec or a plan
 * from a file in the workspace, start a run, read the lessons for its task and propose a lesson
 * (a candidate: no tool changes a lesson's status). No tool approves anything, reopens a FAILED
 * task, settles a step, rewinds, unblocks or completes: those are a person's acts, typed at a
 * terminal and recorded as receipts, and an agent that could call them could approve its own
 * work. The kernel would refuse an agent's receipt anyway; leaving the tools out means an agent is
 * never even offered the move.
 *
 * Arguments are decoded strictly (an unknown field is an error, every string and list has a limit,
 * nothing may nest deeper than 8 levels), so a malformed or hostile call is refused naming the
 * field before anything is read or written.
 * Every failure, the controller's or the decoding's, is a tool error whose text is the error's
 * message (the field, the reason and the fix), never a protocol error or a crash.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Documents from "@ratchet/controller/Documents"
import * as Runnable from "@ratchet/controller/Runnable"
import * as TaskLessons from "@ratchet/controller/TaskLessons"
import * as TaskReads from "@ratchet/controller/TaskReads"
import * as Verify from "@ratchet/controller/Verify"
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import * as Lessons from "@ratchet/memory/Lessons"
import type * as BlobStore from "@ratchet/storage/BlobStore"
import type * as EventStore from "@ratchet/storage/EventStore"
import type * as ReadModel from "@ratchet/storage/ReadModel"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import { bounded } from "./internal/bounded.js"
import * as JsonSchema from "./internal/jsonSchema.js"
import { bodyOf, LessonText } from "./internal/lessonText.js"
import { InvalidArguments, UnknownTool } from "./McpError.js"
import * as RunStarter from "./RunStarter.js"
import * as ToolOutput from "./ToolOutput.js"

/**
 * The services the tools run with: the controller of the located project, the store it works
 * over (which the controller's reads, `Verify` and `TaskReads`, read; no tool reads it itself),
 * the lessons service over the same store, and the starter of runners.
 *
 * @since 0.1.0
 * @category models
 */
export type Services =
  | Controller.Controller
  | Controller.Project
  | EventStore.EventStore
  | ReadModel.ReadModels
  | BlobStore.BlobStore
  | Lessons.Lessons
  | RunStarter.RunStarter

/**
 * Who is calling: the agent every write is recorded as (see `Identity`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Caller {
  readonly actor: Event.Actor
}

/**
 * What a tool answers: the document, whether it is a tool error, and the text the agent reads
 * (the document as JSON, or the error's message).
 *
 * @since 0.1.0
 * @category models
 */
export interface Answer {
  readonly isError: boolean
  readonly text: string
  readonly document: Documents.Document
}

/**
 * A tool as `tools/list` describes it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Descriptor {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: { readonly type: "object"; readonly [key: string]: unknown }
  /** The document every answer carries as `structuredContent`, refusals included (`ToolOutput`). */
  readonly outputSchema: { readonly type: "object"; readonly [key: string]: unknown }
  readonly annotations: {
    readonly title: string
    readonly readOnlyHint: boolean
    readonly destructiveHint: boolean
    readonly idempotentHint: boolean
    readonly openWorldHint: boolean
  }
}

/**
 * One tool: its description, and its call over decoded arguments.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool {
  readonly descriptor: Descriptor
  /** The `ratchet` command whose `--json` document the tool answers with (the tool's name when none does). */
  readonly command: string
  readonly run: (args: unknown, caller: Caller) => Effect.Effect<{ readonly exitCode: number; readonly body: Documents.Document }, unknown, Services>
}

/** How long a string argument may be: far above anything the controller accepts, far below harm. */
const limits = { id: 200, text: 65_536, path: 4_096 } as const


const TaskId = bounded(limits.id, "The task id, e.g. t-3f9a1c2b (task_list shows them).")

/** The input schema as JSON Schema any client accepts (see internal/jsonSchema.ts). */
const jsonSchemaOf = (schema: Schema.Schema.Any): Descriptor["inputSchema"] => ({ ...JsonSchema.of(schema, "input"), type: "object" })

/** What a tool takes, as a line of its refusals: `{ taskId: string, limit?: integer }`. */
const synopsisOf = (tool: string, inputSchema: Descriptor["inputSchema"]): string => {
  const properties = Object.entries((inputSchema["properties"] ?? {}) as Record<string, { readonly type?: unknown; readonly enum?: unknown }>)
  const required = (inputSchema["required"] ?? []) as ReadonlyArray<string>
  const synopsis = properties.map(([name, property]) =>
    `${name}${required.includes(name) ? "" : "?"}: ${Array.isArray(property.enum) ? property.enum.map((value) => JSON.stringify(value)).join("|") : String(property.type ?? "value")}`
  )
  return properties.length === 0 ? `${tool} takes no arguments.` : `${tool} takes { ${synopsis.join(", ")} } and nothing else.`
}

/**
 * The first decoding issue as the field it concerns and why, its text bounded (a value may be
 * huge). A union's alternatives (a literal's values, an optional field's `undefined`) are issues
 * of their own: they are read together as one "Expected a | b, actual x".
 */
const invalidArguments = (tool: string, inputSchema: Descriptor["inputSchema"], error: ParseResult.ParseError): InvalidArguments => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const first = issues[0]
  const field = first === undefined || first.path.length === 0 ? "arguments" : first.path.map(String).join(".")
  const same = issues.filter((issue) => first !== undefined && issue.path.join("\u0000") === first.path.join("\u0000"))
  const expected = same.flatMap((issue) => {
    const match = /^Expected (.*), actual (.*)$/s.exec(issue.message)
    return match === null || match[1] === "undefined" ? [] : [{ expected: match[1] as string, actual: match[2] as string }]
  })
  const message = expected.length > 1
    ? `Expected ${[...new Set(expected.map((e) => e.expected))].join(" | ")}, actual ${expected[0]?.actual ?? ""}`
    : expected.length === 1 && first?.message.startsWith("Expected undefined") === true
    ? `Expected ${expected[0]?.expected}, actual ${expected[0]?.actual}`
    : first?.message ?? "do not decode"
  return new InvalidArguments({
    tool,
    field,
    reason: `${message.length > 200 ? `${message.slice(0, 200)}…` : message}.`,
    fix: synopsisOf(tool, inputSchema)
  })
}

/** How deep arguments may nest: no tool's go past two levels (a list of criteria). */
const maxDepth = 8

/**
 * The path to the first value of `args` nested deeper than {@link maxDepth}, or `null`. Walked
 * with a stack of its own rather than by recursion: a hostile value may nest deeper than the call
 * stack (which decoding, and formatting its error, would otherwise exhaust).
 */
const tooDeep = (args: unknown): ReadonlyArray<string> | null => {
  const pending: Array<{ readonly value: unknown; readonly path: ReadonlyArray<string> }> = [{ value: args, path: [] }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== "object" || next.value === null) continue
    if (next.path.length > maxDepth) return next.path
    for (const [key, child] of Object.entries(next.value)) pending.push({ value: child, path: [...next.path, key] })
  }
  return null
}

/** No arguments at all: any field is unexpected (an empty `Struct` would let every field through). */
const NoArguments = Schema.Record({ key: Schema.String, value: Schema.Never.annotations({ message: () => "is unexpected" }) })

/** A tool from its schema and its call; the arguments reach `run` decoded. */
const define = <A, I>(spec: {
  readonly name: keyof typeof ToolOutput.bodies
  readonly command?: string
  readonly title: string
  readonly description: string
  readonly readOnly: boolean
  readonly idempotent?: boolean
  readonly input: Schema.Schema<A, I>
  readonly run: (args: A, caller: Caller) => Effect.Effect<{ readonly exitCode: number; readonly body: Documents.Document }, unknown, Services>
}): Tool => {
  const inputSchema = jsonSchemaOf(spec.input)
  const decode = Schema.decodeUnknownEither(spec.input, { onExcessProperty: "error", errors: "first" })
  return {
    command: spec.command ?? spec.name,
    descriptor: {
      name: spec.name,
      title: spec.title,
      description: spec.description,
      inputSchema,
      outputSchema: ToolOutput.outputSchema(ToolOutput.bodies[spec.name]),
      annotations: {
        title: spec.title,
        readOnlyHint: spec.readOnly,
        destructiveHint: false,
        idempotentHint: spec.idempotent ?? spec.readOnly,
        openWorldHint: false
      }
    },
    run: (args, caller) =>
      Effect.suspend(() => {
        const deep = tooDeep(args)
        if (deep !== null) {
          return Effect.fail(
            new InvalidArguments({ tool: spec.name, field: deep[0] ?? "arguments", reason: `nests deeper than ${maxDepth} levels.`, fix: synopsisOf(spec.name, inputSchema) })
          )
        }
        return Either.match(decode(args ?? {}), {
          onLeft: (error) => Effect.fail(invalidArguments(spec.name, inputSchema, error)),
          onRight: (decoded) => spec.run(decoded, caller)
        })
      })
  }
}

const ok = (body: Documents.Document) => Effect.succeed({ exitCode: 0, body })

/**
 * `file` resolved against the workspace root, refused when it (or the file a symbolic link there
 * leads to) is outside the workspace: the server reads files for an agent, and an agent's reach
 * through it stays inside the checkout it works in.
 */
const workspaceFile = (file: string) =>
  Effect.flatMap(Controller.Project, (project) =>
    Effect.suspend(() => {
      const roots = [project.root, realOrSelf(project.root)]
      const inside = (candidate: string) =>
        roots.some((root) => {
          const relative = path.relative(root, candidate)
          return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
        })
      const outside = (how: string) =>
        Effect.fail(
          new ControllerError.InvalidRequest({
            field: "file",
            reason: `${JSON.stringify(file.slice(0, 200))} ${how} the workspace ${project.root}.`,
            fix: "Write the file inside the workspace and pass its path (relative to the workspace root, or absolute)."
          })
        )
      const resolved = path.resolve(project.root, file)
      if (!inside(resolved)) return outside("is outside")
      // A missing file is the controller's to report; an existing one must really be inside.
      if (!inside(realOrSelf(resolved))) return outside("leads (through a symbolic link) outside")
      return Effect.succeed(resolved)
    }))

/** The path with its symbolic links resolved, or as given when it does not exist. */
const realOrSelf = (file: string): string => {
  try {
    return fs.realpathSync(file)
  } catch {
    return file
  }
}

const pageLimit = { default: 100, max: 500 } as const

/** How much of each evidence body `showOutput` loads, as `ratchet evidence --show-output` does. */
const bodyBytes = 64 * 1024

/**
 * Every tool, in the order `tools/list` gives them.
 *
 * @since 0.1.0
 * @category constants
 */
export const tools: ReadonlyArray<Tool> = [
  define({
    name: "task_list",
    command: "task list",
    title: "List tasks",
    description: "Lists this project's tasks, newest first: id, state, stage, goal, lease and next step of each (the JSON of `ratchet task list --json`).",
    readOnly: true,
    input: NoArguments,
    run: () => Effect.flatMap(Controller.Controller, (c) => Effect.flatMap(c.listTasks, (views) => ok(Documents.tasks(views))))
  }),
  define({
    name: "task_status",
    command: "status",
    title: "Task status",
    description:
      "A task's state and stage, its brief, spec and plan revisions and digests (and which are approved), the writer lease, open blockers, the next step and every action the state allows (the JSON of `ratchet status <task> --json`). Actions marked interactive are the user's to take at a terminal.",
    readOnly: true,
    input: Schema.Struct({ taskId: TaskId }),
    run: ({ taskId }) => Effect.flatMap(Controller.Controller, (c) => Effect.flatMap(c.status(taskId), (view) => ok(Documents.status(view))))
  }),
  define({
    name: "task_gate",
    command: "gate",
    title: "Explain a gate",
    description:
      "Evaluates the gate between the task's state and `to` (default: the next state on the lifecycle) and explains it: decision CLEAR or HOLD with every reason and required action, or FORBIDDEN when the lifecycle has no such transition. Writes nothing. A HOLD is an answer, not an error: exitCode 3 as in `ratchet gate --json`. Approval gates are evaluated without a receipt: only the user can give one.",
    readOnly: true,
    input: Schema.Struct({
      taskId: TaskId,
      to: Schema.optional(Schema.Literal(...Task.states).annotations({ description: "The target state, e.g. RUNNING (default: the next one on the lifecycle)." }))
    }),
    run: ({ taskId, to }) =>
      Effect.flatMap(Controller.Controller, (c) =>
        Effect.map(c.gate(taskId, to), (explained) => ({ exitCode: Documents.gateExitCode(explained), body: Documents.gate(explained) })))
  }),
  define({
    name: "task_log",
    command: "log",
    title: "Task event log",
    description:
      `The task's events in order, a page at a time: each as one record of \`ratchet log <task> --json\` (lsn, at, type, actor, epoch, event). Pass the page's nextAfterLsn as afterLsn for the next page; more says whether there is one. At most ${pageLimit.max} events a page (${pageLimit.default} by default). A rewound task lives on its newest branch; older branches are read by name.`,
    readOnly: true,
    input: Schema.Struct({
      taskId: TaskId,
      afterLsn: Schema.optional(Schema.Int.pipe(Schema.nonNegative()).annotations({ description: "Only events after this LSN (the previous page's nextAfterLsn); default: from the first." })),
      limit: Schema.optional(Schema.Int.pipe(Schema.between(1, pageLimit.max)).annotations({ description: `How many events at most (1 to ${pageLimit.max}, default ${pageLimit.default}).` })),
      branch: Schema.optional(bounded(limits.id, "Read this branch (default: the task's current one)."))
    }),
    run: ({ afterLsn, branch, limit, taskId }) =>
      Effect.map(TaskReads.logPage(taskId, { afterLsn, branch, limit: limit ?? pageLimit.default }), (page) => ({
        exitCode: 0,
        body: Documents.logPage(page)
      }))
  }),
  define({
    name: "task_evidence",
    command: "evidence",
    title: "Verification evidence",
    description:
      "For each acceptance criterion of the current verification episode: the verdict that counts (this episode, the current spec digest, a verifier who did none of the work) and every verdict recorded, with its evidence records (command and exit, work tree, JUnit cases, artifact hashes, a person's observation). Output bodies stay in the store unless showOutput loads them (the first 64 KiB of each). The JSON of `ratchet evidence --json`. Writes nothing.",
    readOnly: true,
    input: Schema.Struct({
      taskId: TaskId,
      acs: Schema.optional(Schema.Array(bounded(limits.id, "A criterion id, e.g. AC-001.")).pipe(Schema.maxItems(100)).annotations({ description: "Only these criteria (default: all)." })),
      showOutput: Schema.optional(Schema.Boolean.annotations({ description: "Load the output bodies the evidence refers to." }))
    }),
    run: ({ acs, showOutput, taskId }) =>
      Effect.gen(function*() {
        const shown = yield* Verify.evidenceOf(taskId, acs ?? [])
        const bodies = showOutput === true ? yield* Verify.bodiesOf(shown, bodyBytes) : null
        return { exitCode: 0, body: Documents.evidence(shown, bodies) }
      })
  }),
  define({
    name: "task_create",
    command: "task create",
    title: "Create a task",
    description:
      "Creates a task for one goal and begins its interview (INTERVIEWING): then ask and answer the brief's questions, and propose the spec once the user has approved the restatement and the brief is closed. Recorded as written by this agent. The JSON of `ratchet task create --json`.",
    readOnly: false,
    input: Schema.Struct({
      goal: bounded(limits.text, "What the task must achieve, in one sentence (at most 4096 characters)."),
      slug: Schema.optional(bounded(limits.id, "A short name for the task's directory under .ratchet/tasks/: 1 to 40 lowercase letters, digits and dashes (default: made from the goal)."))
    }),
    run: ({ goal, slug }, caller) =>
      Effect.flatMap(Controller.Controller, (c) => Effect.flatMap(c.createTask({ goal, slug }, { actor: caller.actor }), (written) => ok(Documents.written(written))))
  }),
  define({
    name: "brief_ask",
    command: "brief ask",
    title: "Ask a brief question",
    description:
      "Records a question of the task's brief (Q-1, Q-2, …) while it is INTERVIEWING. A blocking question must be answered before the brief can close. Ask the user what the goal leaves open; record what you found yourself with brief_answer and source code or research.",
    readOnly: false,
    idempotent: false,
    input: Schema.Struct({
      taskId: TaskId,
      text: bounded(limits.text, "The question (at most 4096 characters)."),
      blocking: Schema.optional(Schema.Boolean.annotations({ description: "The brief cannot close until this is answered." }))
    }),
    run: ({ blocking, taskId, text }, caller) =>
      Effect.flatMap(Controller.Controller, (c) =>
        Effect.flatMap(c.ask(taskId, { text, blocking: blocking === true }, { actor: caller.actor }), (written) =>
          ok(Documents.written(written, { questionId: written.questionId }))))
  }),
  define({
    name: "brief_answer",
    command: "brief answer",
    title: "Answer a brief question",
    description:
      "Records the answer to a question of the brief and where it came from: user (the user said so, in their words), code (read in the repository) or research (found elsewhere). Each answer is a new revision of the brief.",
    readOnly: false,
    idempotent: false,
    input: Schema.Struct({
      taskId: TaskId,
      questionId: bounded(limits.id, "The question, e.g. Q-1."),
      text: bounded(limits.text, "The answer (at most 4096 characters)."),
      source: Schema.Literal("user", "code", "research").annotations({ description: "Where the answer comes from: user, code or research." })
    }),
    run: ({ questionId, source, taskId, text }, caller) =>
      Effect.flatMap(Controller.Controller, (c) =>
        Effect.flatMap(c.answer(taskId, { questionId, text, source }, { actor: caller.actor }), (written) => ok(Documents.written(written))))
  }),
  define({
    name: "spec_propose",
    command: "spec",
    title: "Propose the spec",
    description:
      "Proposes the task's spec (the contract) from a Markdown file in the workspace with YAML front matter: goal, nonGoals, constraints, decisions, context, acceptanceCriteria, execution, decoded strictly (an unknown key is an error naming it). The body is editorial and never changes the digest. A semantic change voids the spec approval and marks the plan stale. Only the user approves it (ratchet approve <task> spec, at a terminal); nothing in the file counts as approval.",
    readOnly: false,
    input: Schema.Struct({
      taskId: TaskId,
      file: bounded(limits.path, "The spec file, inside the workspace: relative to the workspace root, or absolute (at most 1 MiB, UTF-8).")
    }),
    run: ({ file, taskId }, caller) =>
      Effect.gen(function*() {
        const c = yield* Controller.Controller
        const written = yield* c.proposeSpec(taskId, yield* workspaceFile(file), { actor: caller.actor })
        return { exitCode: 0, body: Documents.written(written, { digest: written.digest, changed: written.changed }) }
      })
  }),
  define({
    name: "plan_propose",
    command: "plan",
    title: "Propose the plan",
    description:
      "Proposes the task's plan from a YAML file in the workspace: steps, each { id, title, acRefs, run: { command } | manual: { instructions } | agent: { host: claude-code|codex, prompt, timeoutSeconds?, model?, maxTurns? }, needs, timeoutSeconds, idempotent, probe }, optional stepStates, and an optional profile { implementer: claude-code|codex, verifier: <approver id>, untilVerified } (part of the digest). It is bound to the current spec digest (leave specDigest out). Every required acceptance criterion must be in some step's acRefs. Needs a preflight of the current spec that found nothing wrong, else HOLD. Only the user approves it (ratchet approve <task> plan, at a terminal).",
    readOnly: false,
    input: Schema.Struct({
      taskId: TaskId,
      file: bounded(limits.path, "The plan file, inside the workspace: relative to the workspace root, or absolute (at most 1 MiB, UTF-8).")
    }),
    run: ({ file, taskId }, caller) =>
      Effect.gen(function*() {
        const c = yield* Controller.Controller
        const written = yield* c.proposePlan(taskId, yield* workspaceFile(file), { actor: caller.actor })
        return { exitCode: 0, body: Documents.written(written, { digest: written.digest }) }
      })
  }),
  define({
    name: "run_start",
    command: "run",
    title: "Start a run",
    description:
      "Starts the runner for a task whose plan the user approved (PLAN_APPROVED), or continues its run (RUNNING), in the background: it passes the run-start gate, takes the writer lease and executes the plan's steps, recording every side effect before and after it happens. Returns at once with the runner's pid and log; follow it with run_check. A manual step stops the runner until its worker finishes it. As the one who started it, you are a worker of this run and cannot be its verifier.",
    readOnly: false,
    idempotent: false,
    input: Schema.Struct({ taskId: TaskId }),
    run: ({ taskId }, caller) =>
      Effect.gen(function*() {
        const c = yield* Controller.Controller
        // Refused here rather than in a detached runner's log, where the agent would not see it.
        yield* Effect.flatMap(c.status(taskId), Runnable.check)
        yield* TaskReads.runnableSteps(taskId)
        const starter = yield* RunStarter.RunStarter
        const started = yield* starter.start({ taskId, cwd: c.project.root, actor: caller.actor })
        return { exitCode: 0, body: Documents.detachedRun(taskId, started) }
      })
  }),
  define({
    name: "run_check",
    title: "Check a run",
    description:
      "Where the task's run stands: the task's status (state, lease holder, blockers, next step) and, once a run has started, each step of the plan with its attempts (state, exit code or signal, duration, changed paths, the tail of its output, notes from recovery or the worker). Writes nothing.",
    readOnly: true,
    input: Schema.Struct({ taskId: TaskId }),
    run: ({ taskId }) => Effect.map(TaskReads.runCheck(taskId), (check) => ({ exitCode: 0, body: Documents.runCheck(check) }))
  }),
  define({
    name: "lessons_query",
    title: "Lessons for a task",
    description:
      "The lessons that apply to a task: at most three verified or enforced lessons of this project whose scope covers the task's allowed scope, ranked by the task's goal and criteria, each as a summary of at most 400 characters (the rule, when it applies, what it corrects). Lessons become verified only by evidence (the same failure in two runs, or a guard that failed before a fix and passed after it). While the task is RUNNING, the lessons are recorded as shown to its run (recorded: true), so its success counts as helped by them.",
    readOnly: false,
    idempotent: true,
    input: Schema.Struct({ taskId: TaskId }),
    run: ({ taskId }) =>
      Effect.map(TaskLessons.forTask({ taskId, via: "mcp", record: true }), (result) => ({
        exitCode: 0,
        body: { taskId: result.taskId, state: result.state, runId: result.runId, recorded: result.recorded, lessons: result.lessons }
      }))
  }),
  define({
    name: "lesson_propose",
    title: "Propose a lesson",
    description:
      "Proposes a lesson for this project from what you learned: when it applies (trigger), what holds (actualRule), and optionally what was wrongly assumed, why, a guard that checks it and evidence (Ratchet ties lessons to the failures it observes itself). It is recorded as a candidate written by you. A proposal never changes a status: a lesson becomes verified only by evidence from runs, and only the user pins, rejects or retires one, at a terminal. No tool here changes a lesson's status.",
    readOnly: false,
    idempotent: false,
    input: Schema.Struct({
      lessonId: Schema.optional(bounded(64, "The lesson's id: 1 to 64 characters from A-Z a-z 0-9 . _ -, starting with a letter or digit (default: a new L-… id).")),
      lesson: LessonText.annotations({ description: "The lesson's text. It has no status: a proposal is a candidate." })
    }),
    run: ({ lesson, lessonId }, caller) =>
      Effect.gen(function*() {
        const project = yield* Controller.Project
        const lessons = yield* Lessons.Lessons
        const id = lessonId ?? `L-${randomUUID().slice(0, 8)}`
        const view = yield* lessons.propose({ actor: caller.actor, lessonId: id, body: bodyOf(lesson, project.project.projectId) })
        return { exitCode: 0, body: { lessonId: view.id, status: view.status, revision: view.revision, proposedBy: view.proposedBy, projectId: view.body.scope.projectId } }
      })
  })
]

/**
 * The tools' names.
 *
 * @since 0.1.0
 * @category constants
 */
export const names: ReadonlyArray<string> = tools.map((tool) => tool.descriptor.name)

/**
 * Which store the server reads and writes, for the refusals of something not found there: a
 * task in another store is not found either, and only the store's name tells the two apart.
 *
 * @since 0.2.0
 * @category models
 */
export interface Where {
  /** The store as a person recognises it, e.g. `SQLite /home/ana/.ratchet/ratchet.db (from RATCHET_HOME)`. */
  readonly store: string
  /** How to serve another store instead, e.g. `start ratchet mcp with --home <dir>`. */
  readonly otherwise: string
}

/** The refusals of something the store does not have. */
const notFound = new Set(["@ratchet/controller/TaskNotFound", "@ratchet/storage/BranchNotFound", "@ratchet/storage/BlobNotFound"])

/**
 * `error`, when it is a refusal of something not found, as a plain error of the same kind whose
 * message ends with the store it was looked for in (and that store as a field); otherwise as it is.
 *
 * @since 0.2.0
 * @category constructors
 */
export const withStore = (error: unknown, where: Where | undefined): unknown => {
  const tag = (error as { readonly _tag?: unknown } | null)?._tag
  if (where === undefined || typeof tag !== "string" || !notFound.has(tag)) return error
  const fields = Documents.error(error)
  const message = Documents.messageOf(error)
  return { ...fields, store: where.store, message: `${message}${/[.!?]$/.test(message) ? "" : "."} Looked in the store ${where.store}; to serve another, ${where.otherwise}.` }
}

/**
 * Our own refusals are the caller's input, like the controller's invalid requests; so are the
 * kernel's refusals of a lesson (its text invalid, or a command the rules refuse).
 */
const ownInvalid = new Set([
  "@ratchet/host-mcp/InvalidArguments",
  "@ratchet/host-mcp/UnknownTool",
  "@ratchet/host-mcp/UnknownResource",
  "@ratchet/kernel/LessonInvalid",
  "@ratchet/kernel/LessonCommandRefused"
])

const failed = (command: string, refusal: unknown, where?: Where): Answer => {
  const error = withStore(refusal, where)
  const tag = (error as { readonly _tag?: unknown } | null)?._tag
  return {
    isError: true,
    text: Documents.messageOf(error),
    document: Documents.failure(command, error, typeof tag === "string" && ownInvalid.has(tag) ? Documents.exitCodeOf.invalid : undefined)
  }
}

/**
 * Calls the tool `name` with `args` for `caller`. Never fails: a refusal, a decoding error, an
 * unknown tool or a defect is an answer with `isError` (a defect's cause goes to the log, which
 * the stdio server writes to standard error). With `where`, a refusal of something not found
 * names the store it was looked for in.
 *
 * @since 0.1.0
 * @category constructors
 */
export const call = (name: string, args: unknown, caller: Caller, where?: Where): Effect.Effect<Answer, never, Services> => {
  const tool = tools.find((candidate) => candidate.descriptor.name === name)
  if (tool === undefined) return Effect.succeed(failed(name.slice(0, 80), new UnknownTool({ name, known: names })))
  return tool.run(args, caller).pipe(
    Effect.map(({ body, exitCode }): Answer => {
      const document = Documents.success(tool.command, exitCode, body)
      return { isError: false, text: JSON.stringify(document), document }
    }),
    Effect.catchAllCause((cause) => {
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure)) return Effect.succeed(failed(tool.command, failure.value, where))
      const defect = Cause.squash(cause)
      return Effect.as(
        Effect.logError(`ratchet mcp: ${name} failed unexpectedly`, cause),
        failed(tool.command, { _tag: "UnexpectedError", message: `unexpected: ${defect instanceof Error ? defect.message : String(defect)}` })
      )
    })
  )
}
