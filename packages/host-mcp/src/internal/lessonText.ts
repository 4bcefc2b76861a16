/**
 * What `lesson_propose` takes: a lesson's text, and the body the kernel decodes from it.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import { bounded } from "./bounded.js"

/**
 * @internal
 *
 * A lesson's text as an agent proposes it: the kernel's `Lesson.Body` without the project (the
 * server's own) and without a status (a proposal is a candidate). The bounds here are the kernel's,
 * so a schema-checking client refuses what the kernel would; the kernel decodes it again, with
 * every issue named (`Lesson.decodeBody`).
 */
export const LessonText = Schema.Struct({
  scope: Schema.optional(Schema.Struct({
    paths: Schema.optional(
      Schema.Array(bounded(256, "A path or glob relative to the repository root, e.g. src/report/**.")).pipe(Schema.maxItems(32)).annotations({
        description: "Where it applies (default: every path)."
      })
    ),
    taskTypes: Schema.optional(
      Schema.Array(bounded(64, "A task type, e.g. bugfix.")).pipe(Schema.maxItems(16)).annotations({ description: "Which kinds of task it applies to (default: every kind)." })
    )
  }).annotations({ description: "Where the lesson applies, in this project." })),
  trigger: bounded(400, "When it applies: the situation an agent is in when the lesson matters (at most 400 characters)."),
  wrongAssumption: Schema.optional(bounded(400, "What was wrongly assumed (at most 400 characters).")),
  actualRule: bounded(400, "What actually holds: the rule to follow (at most 400 characters)."),
  rootCause: Schema.optional(bounded(2000, "Why it happened (at most 2000 characters).")),
  guard: Schema.optional(Schema.Struct({
    description: bounded(400, "A check that fails while the problem is there and passes once it is fixed (at most 400 characters)."),
    command: Schema.optional(bounded(2000, "The command that runs the check, when it can be automated."))
  }).annotations({ description: "A proposed guard." })),
  // No fingerprints: only Ratchet's observers and a person tie a lesson to a failure (the kernel
  // refuses an agent's proposal that names one, ADR 0038).
  evidenceRefs: Schema.optional(
    Schema.Array(bounded(512, "An evidence reference (a blob, an event, a file).")).pipe(Schema.maxItems(64)).annotations({ description: "What shows it." })
  )
})

/** @internal The lesson's text as the kernel decodes it: the server's project, optional fields left out when absent. */
export const bodyOf = (text: typeof LessonText.Type, projectId: string): Record<string, unknown> => {
  const { scope, ...rest } = text
  return Object.fromEntries(Object.entries({ scope: { ...scope, projectId }, ...rest }).filter(([, value]) => value !== undefined))
}

