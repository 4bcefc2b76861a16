/**
 * `ratchet lessons …` (issue 21, ADR 0037): what failures taught, kept so that only evidence
 * promotes it. Reading (`list`, `show`, `query`) and proposing (`propose`) are anyone's; a
 * person's controls (`pin`, `reject`, `deprecate`, `supersede`, `edit`) are shown, confirmed and
 * signed at an interactive terminal with the approval key, exactly as an approval is
 * (`Approval.confirm`), and refused by the kernel otherwise. Each handler is one call to the
 * controller's `LessonControls`.
 *
 * @since 0.3.0
 */
import * as LessonControls from "@ratchet/controller/LessonControls"
import * as LessonFile from "@ratchet/controller/LessonFile"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Lesson from "@ratchet/kernel/Lesson"
import type * as LessonRules from "@ratchet/kernel/LessonRules"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Approval from "./Approval.js"
import type { Parsed, PositionalSpec } from "./Args.js"
import { type CommandSpec, controller, type Env, invocation, ok, resolve, str } from "./Command.js"
import * as Render from "./Render.js"
import * as Store from "./Store.js"

const lessonArg: PositionalSpec = { name: "lesson", description: "The lesson id (ratchet lessons list shows them)", required: true }

const reasonOption = {
  reason: { type: "string", valueName: "<text>", description: "Why (at most 400 characters, one line); recorded with the control." }
} as const

/** The lesson as a document: its row and, when asked, its fold. */
const lessonJson = (view: LessonRules.View) => ({
  id: view.id,
  status: view.status,
  revision: view.revision,
  summary: Lesson.summary(view.body),
  body: view.body,
  proposedBy: view.proposedBy,
  createdAt: new Date(view.createdAt).toISOString(),
  changedAt: new Date(view.changedAt).toISOString(),
  supersededBy: view.supersededBy,
  failureRuns: view.failureRuns,
  successes: view.successes.map((success) => ({ runId: success.runId, at: new Date(success.at).toISOString() }))
})

const line = (lesson: { readonly id: string; readonly status: string; readonly summary: string }, env: Env): string =>
  `${lesson.id}  ${env.style.bold(lesson.status)}  ${Render.visible(lesson.summary)}`

/** The statuses `--status` names (comma-separated), or a usage error naming the unknown one. */
export const statusesOf = (raw: unknown): Either.Either<ReadonlyArray<Lesson.Status>, ControllerError.InvalidRequest> => {
  if (typeof raw !== "string") return Either.right([])
  const names = raw.split(",").map((name) => name.trim()).filter((name) => name !== "")
  const unknown = names.filter((name) => !(Lesson.statuses as ReadonlyArray<string>).includes(name))
  if (names.length === 0 || unknown.length > 0) {
    return Either.left(
      new ControllerError.InvalidRequest({
        field: "--status",
        reason: `${JSON.stringify((unknown[0] ?? raw).slice(0, 40))} is not a lesson status.`,
        fix: `Use one or more of ${Lesson.statuses.join(", ")}, comma-separated.`
      })
    )
  }
  return Either.right(names as ReadonlyArray<Lesson.Status>)
}

/** `--reason`, checked as the kernel records it (`Lesson.Summary`), or the control's own words. */
export const reasonOf = (parsed: Parsed, control: string): Either.Either<string, ControllerError.InvalidRequest> => {
  const raw = parsed.options["reason"]
  const reason = typeof raw === "string" ? raw : `${control} by a person at a terminal`
  return Either.mapLeft(Schema.decodeUnknownEither(Lesson.Summary)(reason), (error) =>
    new ControllerError.InvalidRequest({
      field: "--reason",
      reason: `${error.message.split("\n").at(-1)?.trim() ?? "is not a valid reason"}.`,
      fix: "Say why in at most 400 characters on one line, with no control characters."
    }))
}

const fromEither = <A, E>(either: Either.Either<A, E>): Effect.Effect<A, E> => Either.match(either, { onLeft: Effect.fail, onRight: Effect.succeed })

/** Runs `use` with the lessons' services for the invocation's project. */
const withLessons = <A, E>(use: Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof Store.lessons>>>) =>
  Effect.flatMap(controller, (c) => Effect.provide(use, Store.lessons(c.project)))

/**
 * `ratchet lessons list`.
 *
 * @since 0.3.0
 * @category commands
 */
export const list: CommandSpec = {
  name: "lessons list",
  usage: "ratchet lessons list [--status <s>[,<s>…]]",
  summary: "List this project's lessons and their status",
  description:
    "One line per lesson: id, status, summary (the rule, when it applies, what it corrects). A failure no live lesson carries proposes a candidate; the same failure in a second run verifies it; three unassisted successes in its scope over seven days expire it. Only a person's signed control pins, rejects, deprecates, supersedes or edits one.",
  positionals: [],
  options: { status: { type: "string", valueName: "<s>", description: `Only these statuses: ${Lesson.statuses.join(", ")} (comma-separated).` } },
  examples: ["ratchet lessons list", "ratchet lessons list --status verified,enforced --json"],
  needs: "project",
  run: (parsed, env) =>
    withLessons(Effect.gen(function*() {
      const rows = yield* LessonControls.list(yield* fromEither(statusesOf(parsed.options["status"])))
      const lessons = rows.map((row) => ({ id: row.id, status: row.status, revision: row.revision, summary: row.summary }))
      return ok({ lessons }, lessons.length === 0 ? "No lessons yet." : lessons.map((lesson) => line(lesson, env)).join("\n"))
    }))
}

/**
 * `ratchet lessons show`.
 *
 * @since 0.3.0
 * @category commands
 */
export const show: CommandSpec = {
  name: "lessons show",
  usage: "ratchet lessons show <lesson>",
  summary: "Show one lesson: its text, status, evidence and history",
  description:
    "The lesson's text (scope, trigger, wrong assumption, actual rule, root cause, guard, fingerprints, evidence references), its status and revision, the runs that failed its way and the successes counted against it, then every event of its stream: who proposed it, each fact recorded, each transition with the rule and rule version behind it, each person's signed control.",
  positionals: [lessonArg],
  options: {},
  examples: ["ratchet lessons show fp-3f9a1c2b4d5e6f70"],
  needs: "project",
  run: (parsed) =>
    withLessons(Effect.map(LessonControls.show(str(parsed, "lesson")), ({ events, lesson }) => {
      const view = lesson.view
      const history = events.map((stored) => ({
        version: stored.version,
        type: stored.event._tag,
        at: new Date(stored.event.at).toISOString(),
        actor: stored.event.actor,
        // Why the status moved: the rule and its version, or the person's reason.
        change: stored.event._tag === "LessonTransitioned"
          ? { from: stored.event.from, to: stored.event.to, rule: stored.event.rule, ruleVersion: stored.event.ruleVersion, runIds: stored.event.runIds }
          : stored.event._tag === "LessonControlled"
          ? { from: stored.event.from, to: stored.event.to, reason: stored.event.reason }
          : null
      }))
      return ok(
        { lesson: lessonJson(view), events: history },
        [
          `${view.id}: ${view.status}, revision ${view.revision}`,
          Render.visible(Lesson.summary(view.body)),
          "",
          Render.visible(LessonFile.bodyYaml(view.body).trimEnd()),
          "",
          `failure runs: ${view.failureRuns.length === 0 ? "none" : view.failureRuns.join(", ")}`,
          `counted successes: ${view.successes.length === 0 ? "none" : view.successes.map((s) => s.runId).join(", ")}`,
          "",
          ...history.map((h) =>
            `${h.version}  ${h.at}  ${h.type}  ${h.actor.kind}:${Render.visible(h.actor.id)}${
              h.change === null ? "" : `  ${h.change.from} → ${h.change.to} (${"rule" in h.change ? `${h.change.rule}, ${h.change.ruleVersion}` : Render.visible(h.change.reason)})`
            }`
          )
        ].join("\n")
      )
    }))
}

/**
 * `ratchet lessons query`.
 *
 * @since 0.3.0
 * @category commands
 */
export const query: CommandSpec = {
  name: "lessons query",
  usage: "ratchet lessons query --task <task>",
  summary: "The few verified lessons that apply to a task",
  description:
    "What an agent working on the task is handed: this project's verified and enforced lessons (never candidates, never compiled ones), those carrying one of the task's failure fingerprints first, kept only when their scope covers the paths the task's spec names and its task type, ranked by the words of its goal and criteria; at most three, each summary at most 400 characters. While the task is RUNNING they are recorded as shown to its run (recorded: true), as the hooks and MCP record theirs: whoever reads them may pass them on, so the run's success counts as helped by them, never toward expiring them.",
  positionals: [],
  options: { task: { type: "string", required: true, valueName: "<task>", description: "The task the lessons are for.", complete: "task" } },
  examples: ["ratchet lessons query --task t-3f9a1c2b", "ratchet lessons query --task t-3f9a1c2b --json"],
  needs: "project",
  run: (parsed, env) =>
    withLessons(Effect.map(LessonControls.query(str(parsed, "task")), (found) =>
      ok(
        { taskId: found.taskId, lessons: found.lessons, recorded: found.recorded },
        found.lessons.length === 0
          ? `No verified lesson applies to ${found.taskId}.`
          : found.lessons.map((lesson) => line(lesson, env)).join("\n")
      )))
}

/**
 * `ratchet lessons propose`.
 *
 * @since 0.3.0
 * @category commands
 */
export const propose: CommandSpec = {
  name: "lessons propose",
  usage: "ratchet lessons propose --file <lesson.yaml> [--id <id>]",
  summary: "Propose a lesson from a YAML file (it starts as a candidate)",
  description:
    `Anyone may propose, an agent included: a proposal is text, always a candidate, and only evidence (the same failure in two runs, or its guard failing before and passing after a fix) or a person's signed control moves it. The file holds scope (projectId, paths globs, taskTypes), trigger, actualRule and optionally wrongAssumption, rootCause, guard (description, command), evidenceRefs; never a status, and no fingerprints (only a failure Ratchet observed ties a new lesson to one; add one afterwards with ratchet lessons edit, which you sign). It is refused, storing nothing, when it is over ${LessonFile.maxBytes} bytes, not YAML as plain data, has unknown keys, names fingerprints, has text over its limit or with control characters, or a scope path outside the repository. The readable copy is kept at .ratchet/lessons/<id>.yaml.`,
  positionals: [],
  options: {
    file: { type: "string", required: true, valueName: "<lesson.yaml>", description: "The lesson's text as YAML.", complete: "file" },
    id: { type: "string", valueName: "<id>", description: "The lesson's id (default: l- and 12 hex digits of the text's digest)." }
  },
  examples: ["ratchet lessons propose --file lesson.yaml", "ratchet lessons propose --file lesson.yaml --id tz-in-tests"],
  needs: "project",
  run: (parsed, env) =>
    withLessons(Effect.map(
      LessonControls.propose({
        file: resolve(env, str(parsed, "file")),
        lessonId: typeof parsed.options["id"] === "string" ? parsed.options["id"] : null,
        invocation: invocation(parsed, env)
      }),
      ({ lesson, warnings }) =>
        ok(
          { lesson: lessonJson(lesson), warnings },
          [`Proposed ${lesson.id}: ${lesson.status}`, ...warnings.map((w) => env.style.yellow(`warning: ${w}`))].join("\n")
        )
    ))
}

/**
 * `ratchet lessons evaluate`.
 *
 * @since 0.3.0
 * @category commands
 */
export const evaluate: CommandSpec = {
  name: "lessons evaluate",
  usage: "ratchet lessons evaluate",
  summary: "Ask the evaluator again about every candidate and probationary lesson",
  description:
    "A lesson expires after three eligible, unassisted successes in its scope, an age of seven days and no recurrence; time alone never expires one. Successes are counted as runs complete, but the age keeps growing after the last of them: run this (from a scheduled job, say) so a lesson that has its successes expires once it is old enough. Only the kernel's rules decide; anyone may ask, and asking twice changes nothing.",
  positionals: [],
  options: {},
  examples: ["ratchet lessons evaluate", "ratchet lessons evaluate --json"],
  needs: "project",
  run: (parsed, env) =>
    withLessons(Effect.map(LessonControls.evaluate(invocation(parsed, env)), (result) =>
      ok(
        result,
        [
          `Evaluated ${result.evaluated} candidate or probationary lesson${result.evaluated === 1 ? "" : "s"}.`,
          ...result.changed.map((change) => `${change.id}: ${change.from} → ${env.style.bold(change.to)}`)
        ].join("\n")
      )))
}

/** A person's control: shown, confirmed and signed at a terminal, then recorded. */
const controlCommand = (
  verb: "pin" | "reject" | "deprecate" | "supersede" | "edit",
  spec: Pick<CommandSpec, "usage" | "summary" | "description" | "examples"> & { readonly options?: CommandSpec["options"] }
): CommandSpec => ({
  name: `lessons ${verb}`,
  ...spec,
  positionals: [lessonArg],
  options: { ...spec.options, ...reasonOption },
  needs: "project",
  run: (parsed, env) =>
    withLessons(Effect.gen(function*() {
      const lessonId = str(parsed, "lesson")
      const reason = yield* fromEither(reasonOf(parsed, verb))
      const decided: LessonControls.Control = verb === "supersede"
        ? { control: "supersede", by: str(parsed, "by") }
        : verb === "edit"
        ? { control: "edit", body: yield* LessonFile.load(resolve(env, str(parsed, "file"))) }
        : { control: verb }
      const shown = yield* LessonControls.subject(lessonId, decided, invocation(parsed, env))
      const given = yield* Approval.confirm({
        heading: `You are deciding about lesson ${shown.lessonId}`,
        text: shown.text,
        digest: shown.digest,
        again: `Run ratchet lessons ${verb} ${shown.lessonId} again`,
        purpose: `sign this ${verb}`
      })
      const done = yield* LessonControls.control({
        lessonId,
        control: decided,
        reason,
        confirmation: { digest: given.digest, channel: given.channel, revision: shown.revision },
        invocation: invocation(parsed, env, given.signer)
      })
      return ok(
        { lesson: lessonJson(done.lesson), warnings: done.warnings },
        [`Lesson ${done.lesson.id}: ${shown.status} → ${env.style.bold(done.lesson.status)} (revision ${done.lesson.revision})`, ...done.warnings.map((w) => env.style.yellow(`warning: ${w}`))]
          .join("\n")
      )
    }))
})

const signed =
  "Shows the lesson and the digest the decision is bound to, asks you to type its first 8 hex characters, then your approval key's passphrase: the receipt is signed with your key, and only one signed by one of the project's approvers at an interactive terminal counts. An agent (RATCHET_ACTOR=agent:…), a script or a person without their key is refused and nothing changes."

/**
 * `ratchet lessons pin|reject|deprecate|supersede|edit`.
 *
 * @since 0.3.0
 * @category commands
 */
export const controls: ReadonlyArray<CommandSpec> = [
  controlCommand("pin", {
    usage: "ratchet lessons pin <lesson> [--reason <text>]",
    summary: "Enforce a lesson (a person's signed decision)",
    description: `Moves a candidate, probationary or verified lesson to enforced: it is served to agents whatever the evidence, and no rule moves it again. ${signed}`,
    examples: ["ratchet lessons pin fp-3f9a1c2b4d5e6f70 --reason \"we hit this every release\""]
  }),
  controlCommand("reject", {
    usage: "ratchet lessons reject <lesson> [--reason <text>]",
    summary: "Reject a lesson (a person's signed decision)",
    description: `Moves any live lesson but a compiled one to rejected, for good: it is never served again. ${signed}`,
    examples: ["ratchet lessons reject l-0123456789ab --reason \"wrong: the flake was the network\""]
  }),
  controlCommand("deprecate", {
    usage: "ratchet lessons deprecate <lesson> [--reason <text>]",
    summary: "Retire a verified, enforced or compiled lesson (signed)",
    description: `A lesson that was true and no longer is (the code changed). One never verified is rejected instead. ${signed}`,
    examples: ["ratchet lessons deprecate fp-3f9a1c2b4d5e6f70 --reason \"the legacy module is gone\""]
  }),
  controlCommand("supersede", {
    usage: "ratchet lessons supersede <lesson> --by <lesson> [--reason <text>]",
    summary: "Replace a lesson by another live one (signed)",
    description: `The lesson becomes superseded, naming its replacement, which must be live. ${signed}`,
    options: { by: { type: "string", required: true, valueName: "<lesson>", description: "The lesson that replaces it." } },
    examples: ["ratchet lessons supersede fp-3f9a1c2b4d5e6f70 --by tz-in-tests"]
  }),
  controlCommand("edit", {
    usage: "ratchet lessons edit <lesson> --file <lesson.yaml> [--reason <text>]",
    summary: "Replace a lesson's text from a YAML file (signed)",
    description: `The new text (decoded and refused exactly as ratchet lessons propose decodes a file) becomes the next revision; the status is kept, and a guard edited discards its earlier checks. The digest you confirm is the new text's. Start from the readable copy .ratchet/lessons/<id>.yaml. ${signed}`,
    options: { file: { type: "string", required: true, valueName: "<lesson.yaml>", description: "The new text as YAML.", complete: "file" } },
    examples: ["ratchet lessons edit fp-3f9a1c2b4d5e6f70 --file .ratchet/lessons/fp-3f9a1c2b4d5e6f70.yaml"]
  })
]

/**
 * Every `ratchet lessons` command, in the order help lists them.
 *
 * @since 0.3.0
 * @category commands
 */
export const commands: ReadonlyArray<CommandSpec> = [list, show, query, propose, evaluate, ...controls]
