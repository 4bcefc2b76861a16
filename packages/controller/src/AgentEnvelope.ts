/**
 * The envelope of an agent step's attempt, and the command line that starts its host headless
 * (ADR 0039). The envelope is what the worker must know about the contract it works under: the task
 * and run, the approved spec and plan digests, the allowed and forbidden scope, the step with the
 * acceptance criteria it serves and the evidence each expects, the attempt number and the successor
 * attempts left, and the protocol version. It reaches the host twice: as text ahead of the step's
 * prompt (what the model reads) and as `RATCHET_*` variables (what a hook or a tool the agent runs
 * reads, without parsing prose).
 *
 * Everything here is a pure function of the task and the step (and, for a successor a failed
 * verification scheduled, of that failure: ADR 0041; and of the lessons the runner recorded as
 * shown to the attempt: ADR 0038's amendment), so the same attempt always gets the same envelope;
 * the program's lookup takes the environment and a file test as arguments.
 *
 * The host's flags are the ones its documentation names:
 * - Claude Code: `claude -p --output-format stream-json --verbose --include-partial-messages
 *   --permission-mode acceptEdits [--model M] [--max-turns N] <prompt>` (print mode; the stream
 *   with partial messages, so the first chunk of each request is seen; edits in the workspace
 *   accepted without a person, other tools held by the host's own permission rules);
 * - Codex: `codex exec --json --sandbox workspace-write [--model M] <prompt>` (never
 *   `danger-full-access`; `codex exec` has no turn limit, so `maxTurns` is not passed to it).
 *
 * The program is `RATCHET_CLAUDE_BIN` / `RATCHET_CODEX_BIN` when set, else `claude` / `codex` on
 * `PATH`; a missing or non-executable one is a reason naming the variable.
 *
 * @since 0.4.0
 */
import * as path from "node:path"
import type * as AgentStep from "@ratchet/kernel/AgentStep"
import type * as Plan from "@ratchet/kernel/Plan"
import * as Task from "@ratchet/kernel/Task"
import * as Projection from "./Projection.js"

/**
 * The version of what the envelope says and how (its text and its variables); a host hook or tool
 * checks it before it trusts the variables.
 *
 * @since 0.4.0
 * @category models
 */
export const protocolVersion = 1

/**
 * The most acceptance criteria the envelope lists, and the longest text it keeps of each: the
 * prompt is one argument of a process, which the operating system bounds (128 KiB on Linux), and
 * the step's own prompt may already use 64 KiB of it.
 *
 * @since 0.4.0
 * @category models
 */
export const limits = { criteria: 40, criterionText: 400, scopeEntries: 100, failures: 20, failureExcerpt: 400 } as const

/**
 * The most lessons the envelope carries, and the most bytes of UTF-8 their lines take together
 * (about 512 tokens, the hooks' budget): a lesson is advice, and the step's own prompt needs the
 * room. Lessons come most relevant first; those past either bound are left out from the last,
 * and the envelope says how many.
 *
 * @since 0.6.0
 * @category models
 */
export const lessonLimits = { count: 5, bytes: 2048 } as const

/**
 * The most bytes of UTF-8 the whole prompt argument may take: Linux refuses a single argument
 * over 128 KiB (`MAX_ARG_STRLEN`), and the margin leaves room for whatever the host adds. Over it,
 * the revision's failures are cut first (they are in `ratchet evidence` in full), then the text.
 *
 * @since 0.5.0
 * @category models
 */
export const maxPromptBytes = 120 * 1024

/**
 * The verification failure a successor attempt revises (ADR 0041): the pass's fingerprint and, for
 * each criterion that did not pass, its verdict and a short excerpt of its evidence (the check's
 * exit and the last lines of its output). The worker reads what failed instead of guessing.
 *
 * @since 0.5.0
 * @category models
 */
export interface Revision {
  /** The failure's fingerprint: the same fingerprint after this attempt blocks the task. */
  readonly fingerprint: string
  readonly failures: ReadonlyArray<{ readonly acId: string; readonly verdict: string; readonly excerpt: string }>
}

/**
 * A lesson as the store gives it for the task (`Lessons.Applicable`): what the envelope is made from.
 *
 * @since 0.6.0
 * @category models
 */
export interface LessonInput {
  readonly id: string
  readonly status: string
  readonly summary: string
}

/**
 * A lesson as the envelope carries it: its id, its status, and its text on one line with control
 * and bidirectional characters written out (`Projection.visible`).
 *
 * @since 0.6.0
 * @category models
 */
export interface EnvelopeLesson {
  readonly id: string
  readonly status: string
  readonly text: string
}

/**
 * One acceptance criterion the step serves, with the evidence it expects.
 *
 * @since 0.4.0
 * @category models
 */
export interface Criterion {
  readonly id: string
  readonly outcome: string
  readonly required: boolean
  /** How it is checked: the command and the exit code that means it holds, or a person's check. */
  readonly evidence: string
}

/**
 * @since 0.4.0
 * @category models
 */
export interface Envelope {
  readonly protocol: typeof protocolVersion
  readonly taskId: string
  readonly runId: string
  readonly stepId: string
  readonly stepTitle: string
  readonly attempt: number
  /** Successor attempts the task may still be granted if this one fails. */
  readonly successorsLeft: number
  readonly specDigest: string
  readonly planDigest: string
  readonly goal: string
  readonly allowedScope: ReadonlyArray<string>
  readonly forbiddenScope: ReadonlyArray<string>
  readonly criteria: ReadonlyArray<Criterion>
  /** Criteria the step names that the list leaves out (over {@link limits}). */
  readonly criteriaLeftOut: number
  readonly host: AgentStep.Host
  readonly prompt: string
  /** The verification failure this attempt revises; absent on an attempt no REVISE scheduled. */
  readonly revision?: Revision & { readonly failuresLeftOut: number }
  /** The lessons shown to this attempt (ADR 0038's amendment); absent when there are none. */
  readonly lessons?: { readonly shown: ReadonlyArray<EnvelopeLesson>; readonly leftOut: number }
}

const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/** A lesson's line in the prompt: what {@link lessonLimits}' byte bound counts. */
const lessonLine = (lesson: EnvelopeLesson): string => `- [${lesson.id}, ${lesson.status}] ${lesson.text}`

/**
 * The lessons an envelope carries of `lessons` (most relevant first), within {@link lessonLimits}:
 * each on one line (a lesson is anyone's text: its whitespace folded, so it cannot pass for another
 * part of the prompt, and its control characters written out), as many whole ones as fit, and how
 * many were left out. What the runner records as shown is exactly `shown`.
 *
 * @since 0.6.0
 * @category constructors
 */
export const lessonsOf = (lessons: ReadonlyArray<LessonInput>): { readonly shown: ReadonlyArray<EnvelopeLesson>; readonly leftOut: number } => {
  const shown: Array<EnvelopeLesson> = []
  let bytes = 0
  for (const lesson of lessons.slice(0, lessonLimits.count)) {
    const line = (text: string) => clip(Projection.visible(text.replace(/\s+/g, " ").trim()), limits.criterionText)
    const kept = { id: line(lesson.id), status: line(lesson.status), text: line(lesson.summary) }
    const size = Buffer.byteLength(`${lessonLine(kept)}\n`, "utf8")
    if (bytes + size > lessonLimits.bytes) break
    bytes += size
    shown.push(kept)
  }
  return { shown, leftOut: lessons.length - shown.length }
}

/**
 * The envelope of attempt `attempt` of agent step `step` of `task`, or why there is none (the task
 * has no run, spec or plan, or the step is not an agent step).
 *
 * @since 0.4.0
 * @category constructors
 */
export const make = (
  task: Task.Task,
  step: Plan.Step,
  attempt: number,
  revision: Revision | null = null,
  lessons: ReadonlyArray<LessonInput> = []
): Envelope | string => {
  if (step.agent === undefined) return `step ${step.id} is not an agent step`
  if (task.run === null || task.spec === null || task.plan === null) return `task ${task.taskId} has no run, spec or plan`
  const spec = task.spec.spec
  const budget = Math.min(spec.execution?.retry?.maxSuccessors ?? Task.maxSuccessorsPerTask, Task.maxSuccessorsPerTask)
  const named = spec.acceptanceCriteria.filter((ac) => step.acRefs.includes(ac.id))
  const carried = lessonsOf(lessons)
  return {
    protocol: protocolVersion,
    taskId: task.taskId,
    runId: task.run.runId,
    stepId: step.id,
    stepTitle: clip(step.title, limits.criterionText),
    attempt,
    successorsLeft: Math.max(0, budget - task.successorsUsed),
    specDigest: task.spec.digest,
    planDigest: task.plan.digest,
    goal: clip(spec.goal, limits.criterionText),
    allowedScope: (spec.execution?.allowedScope ?? []).slice(0, limits.scopeEntries),
    forbiddenScope: (spec.execution?.forbiddenScope ?? []).slice(0, limits.scopeEntries),
    criteria: named.slice(0, limits.criteria).map((ac) => ({
      id: ac.id,
      outcome: clip(ac.outcome, limits.criterionText),
      required: ac.required,
      evidence: ac.verify !== undefined
        ? clip(`the command \`${ac.verify.command}\` exits ${ac.verify.expectExitCode ?? 0}`, limits.criterionText)
        : "a person's check, recorded with its evidence"
    })),
    criteriaLeftOut: Math.max(0, named.length - limits.criteria),
    host: step.agent.host,
    prompt: step.agent.prompt,
    ...(revision === null ? {} : {
      revision: {
        // A check's output is anyone's text: control characters are written out (`\u{0}`), so a
        // NUL byte cannot make the prompt an argument no process can be started with.
        fingerprint: clip(Projection.visible(revision.fingerprint), limits.criterionText),
        failures: revision.failures.slice(0, limits.failures).map((failure) => ({
          acId: clip(Projection.visible(failure.acId), limits.criterionText),
          verdict: Projection.visible(failure.verdict),
          excerpt: clip(Projection.visible(failure.excerpt.trim()), limits.failureExcerpt)
        })),
        failuresLeftOut: Math.max(0, revision.failures.length - limits.failures)
      }
    }),
    // No lessons, no heading: the envelope is as it was before lessons reached it.
    ...(carried.shown.length === 0 ? {} : { lessons: carried })
  }
}

/** What a successor is told about the verification it revises (nothing for another attempt). */
const revisionLines = (envelope: Envelope, shown: number): ReadonlyArray<string> => {
  if (envelope.revision === undefined) return []
  const failures = envelope.revision.failures.slice(0, shown)
  const leftOut = envelope.revision.failuresLeftOut + envelope.revision.failures.length - failures.length
  return [
    `This attempt revises work that failed verification (fingerprint ${envelope.revision.fingerprint}). Fix what failed; the same failure again blocks the task:`,
    ...failures.map((failure) => `- ${failure.acId} ${failure.verdict}: ${failure.excerpt.replace(/\s*\n\s*/g, " | ")}`),
    ...(leftOut > 0 ? [`- and ${leftOut} more; ratchet evidence ${envelope.taskId} lists them all`] : []),
    ""
  ]
}

/** The lessons shown to the attempt, under their heading (nothing when there are none). */
const lessonLines = (envelope: Envelope): ReadonlyArray<string> => {
  if (envelope.lessons === undefined) return []
  const { leftOut, shown } = envelope.lessons
  return [
    "Lessons from earlier runs of this project that apply to this task (verified by reproducible evidence; follow them where they apply, they are advice, not part of the contract):",
    ...shown.map(lessonLine),
    ...(leftOut > 0 ? [`- and ${leftOut} more left out; ratchet lessons query ${envelope.taskId} lists those that apply`] : []),
    ""
  ]
}

const list = (entries: ReadonlyArray<string>, none: string) => (entries.length === 0 ? none : entries.map((entry) => `\`${entry}\``).join(", "))

/**
 * The text the host receives: the envelope, then the step's prompt as it was approved.
 *
 * @since 0.4.0
 * @category constructors
 */
export const promptOf = (envelope: Envelope): string => {
  // Within the bound of one argument: the revision's failures go first, from the last.
  for (let shown = envelope.revision?.failures.length ?? 0; shown >= 0; shown--) {
    const text = promptText(envelope, shown)
    if (Buffer.byteLength(text, "utf8") <= maxPromptBytes) return text
  }
  return cutToBytes(promptText(envelope, 0), maxPromptBytes)
}

const cutMark = "\n[ratchet: the prompt was cut to fit one argument]"

/**
 * `text` within `max` bytes of UTF-8, cut at a character boundary with a mark saying so.
 *
 * @since 0.5.0
 * @category constructors
 */
export const cutToBytes = (text: string, max: number): string => {
  if (Buffer.byteLength(text, "utf8") <= max) return text
  const room = max - Buffer.byteLength(cutMark, "utf8")
  const bytes = Buffer.from(text, "utf8").subarray(0, Math.max(0, room))
  // A cut inside a character leaves U+FFFD at the end; drop it.
  return `${bytes.toString("utf8").replace(/\uFFFD+$/, "")}${cutMark}`
}

const promptText = (envelope: Envelope, shown: number): string =>
  [
    `Ratchet agent step (protocol ${envelope.protocol})`,
    "",
    `You are the worker of step "${envelope.stepId}" (${envelope.stepTitle}), attempt ${envelope.attempt}, of task ${envelope.taskId} in run ${envelope.runId}.`,
    `The task's goal: ${envelope.goal}`,
    `The approved contract: spec ${envelope.specDigest}, plan ${envelope.planDigest}.`,
    "",
    "Acceptance criteria this step serves, and the evidence each expects:",
    ...(envelope.criteria.length === 0 ? ["- none named by the step"] : envelope.criteria.map((ac) =>
      `- ${ac.id}${ac.required ? " (required)" : ""}: ${ac.outcome} Evidence: ${ac.evidence}.`
    )),
    ...(envelope.criteriaLeftOut > 0 ? [`- and ${envelope.criteriaLeftOut} more; the spec lists them all`] : []),
    "",
    `Scope: change only ${list(envelope.allowedScope, "what the step needs (the spec names no allowed scope)")}; never ${
      list(envelope.forbiddenScope, "Ratchet's trust files")
    }, nor .ratchet/project.json or .ratchet/approvers.json. A change outside the scope blocks the task.`,
    "You cannot approve, verify or complete anything: when you stop, the runner records what you changed, and someone other than you verifies the criteria.",
    `If this attempt fails, ${envelope.successorsLeft} successor attempt${envelope.successorsLeft === 1 ? "" : "s"} may follow; after that the task is blocked for a person.`,
    "",
    ...revisionLines(envelope, shown),
    ...lessonLines(envelope),
    "The step:",
    envelope.prompt
  ].join("\n").replaceAll("\u0000", "\\u{0}")

/**
 * The variables the host runs with: the envelope for a hook or tool to read without parsing prose.
 *
 * @since 0.4.0
 * @category constructors
 */
export const environmentOf = (envelope: Envelope): Readonly<Record<string, string>> => ({
  RATCHET_PROTOCOL: String(envelope.protocol),
  RATCHET_TASK: envelope.taskId,
  RATCHET_RUN: envelope.runId,
  RATCHET_STEP: envelope.stepId,
  RATCHET_ATTEMPT: String(envelope.attempt),
  RATCHET_SUCCESSORS_LEFT: String(envelope.successorsLeft),
  RATCHET_SPEC_DIGEST: envelope.specDigest,
  RATCHET_PLAN_DIGEST: envelope.planDigest,
  RATCHET_ALLOWED_SCOPE: JSON.stringify(envelope.allowedScope),
  RATCHET_FORBIDDEN_SCOPE: JSON.stringify(envelope.forbiddenScope),
  RATCHET_ACCEPTANCE: JSON.stringify(envelope.criteria.map((ac) => ac.id)),
  ...(envelope.revision === undefined ? {} : {
    RATCHET_REVISION: JSON.stringify({ fingerprint: envelope.revision.fingerprint, failures: envelope.revision.failures })
  }),
  ...(envelope.lessons === undefined ? {} : {
    RATCHET_LESSONS: JSON.stringify({ lessons: envelope.lessons.shown.map((lesson) => ({ id: lesson.id, text: lesson.text })), leftOut: envelope.lessons.leftOut })
  })
})

/**
 * The variable naming each host's program, and the program's name on `PATH`.
 *
 * @since 0.4.0
 * @category models
 */
export const programs: { readonly [H in AgentStep.Host]: { readonly variable: string; readonly name: string } } = {
  "claude-code": { variable: "RATCHET_CLAUDE_BIN", name: "claude" },
  codex: { variable: "RATCHET_CODEX_BIN", name: "codex" }
}

/**
 * The arguments that start `agent`'s host headless with `prompt` (see the module comment).
 *
 * @since 0.4.0
 * @category constructors
 */
export const argsOf = (agent: AgentStep.Agent, prompt: string): ReadonlyArray<string> => {
  const model = agent.model === undefined ? [] : ["--model", agent.model]
  switch (agent.host) {
    case "claude-code":
      return [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--permission-mode",
        "acceptEdits",
        ...model,
        ...(agent.maxTurns === undefined ? [] : ["--max-turns", String(agent.maxTurns)]),
        prompt
      ]
    case "codex":
      return ["exec", "--json", "--sandbox", "workspace-write", ...model, prompt]
  }
}

/**
 * The host's program: the variable's value when set, else the first executable `name` on `PATH`;
 * or why there is none, naming the variable.
 *
 * @since 0.4.0
 * @category constructors
 */
export const programOf = (
  host: AgentStep.Host,
  env: Readonly<Record<string, string | undefined>>,
  isExecutable: (file: string) => boolean
): { readonly file: string } | { readonly problem: string } => {
  const { name, variable } = programs[host]
  const set = env[variable]
  if (set !== undefined && set !== "") {
    if (!path.isAbsolute(set)) return { problem: `${variable}=${JSON.stringify(set.slice(0, 200))} is not an absolute path; set it to the full path of the ${name} program` }
    return isExecutable(set) ? { file: set } : { problem: `${variable}=${JSON.stringify(set.slice(0, 200))} is not an executable file; set it to the ${name} program, or unset it to use ${name} on PATH` }
  }
  for (const directory of (env["PATH"] ?? "").split(path.delimiter)) {
    // An empty or relative entry would resolve against the workspace, which the agent may write.
    if (directory === "" || !path.isAbsolute(directory)) continue
    const file = path.join(directory, name)
    if (isExecutable(file)) return { file }
  }
  return { problem: `the ${name} program is not on PATH; install it, or set ${variable} to its full path` }
}

/**
 * What the attempt's intent says it does, for people and the log.
 *
 * @since 0.4.0
 * @category constructors
 */
export const describe = (agent: AgentStep.Agent): string => {
  const first = agent.prompt.split("\n").find((line) => line.trim() !== "") ?? ""
  return `agent ${agent.host}${agent.model === undefined ? "" : ` (${agent.model})`}: ${clip(first.trim(), 200)}`
}
