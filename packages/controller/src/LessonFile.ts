/**
 * A lesson as a file a person reads and writes (ADR 0037): YAML holding exactly the lesson's text
 * (`Lesson.Body`: scope, trigger, wrongAssumption, actualRule, rootCause, guard, fingerprints,
 * evidenceRefs), and never its status, which only evidence or a person's signed control changes.
 *
 * A file given to `ratchet lessons propose|edit --file` is anybody's: it is read as a contract file
 * is (`ContractFile`: a regular file only, strict UTF-8, YAML as plain data with no tags, no
 * duplicate keys, no alias bombs), but at most {@link maxBytes} — a lesson is a few short fields —
 * and then decoded by the kernel (`Lesson.decodeBody`): unknown keys, a `status`, oversized or
 * hidden-character text, a scope glob outside the repository (`..`, absolute, a backslash) are
 * each an issue naming the field (a JSON Pointer), the reason and the fix. A refused file stores
 * nothing.
 *
 * The store keeps every lesson; the project keeps a readable copy of the lessons people proposed
 * or changed at `.ratchet/lessons/<id>.yaml` ({@link write}), its status and revision in a header
 * comment, so a lesson can be reviewed beside the code it is about.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Lesson from "@ratchet/kernel/Lesson"
import type * as LessonRules from "@ratchet/kernel/LessonRules"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { stringify } from "yaml"
import { type ContractFileError, decodeText, failure, fileIssue, readBounded } from "./internal/ContractText.js"
import { isRecord, parseYaml } from "./internal/ContractYaml.js"

/**
 * The largest lesson file read: 64 KiB.
 *
 * @since 0.3.0
 * @category constants
 */
export const maxBytes = 64 * 1024

/**
 * The directory, under the project's `.ratchet/`, holding the lessons' readable copies.
 *
 * @since 0.3.0
 * @category constants
 */
export const directory = "lessons"

/**
 * Decodes a lesson file's bytes (see the module comment).
 *
 * @since 0.3.0
 * @category decoding
 */
export const decode = (file: string, bytes: Uint8Array): Either.Either<Lesson.Body, ContractFileError> =>
  Either.gen(function*() {
    if (bytes.length > maxBytes) {
      return yield* Either.left(failure(file, "lesson", "too_large", fileIssue(`is ${bytes.length} bytes, over the limit of ${maxBytes} for a lesson file`)))
    }
    const text = yield* decodeText(file, bytes)
    const value = yield* parseYaml({ file, kind: "lesson", text, lineOffset: 0 })
    if (!isRecord(value)) {
      return yield* Either.left(failure(file, "lesson", "schema", [{
        path: "",
        message: "is not a mapping; a lesson file is a YAML mapping with scope, trigger and actualRule (and optionally wrongAssumption, rootCause, guard, fingerprints, evidenceRefs)"
      }]))
    }
    const body = Lesson.decodeBody(value)
    if (Either.isLeft(body)) return yield* Either.left(failure(file, "lesson", "schema", body.left.issues))
    return body.right
  })

/**
 * Reads and decodes the lesson file at `file`.
 *
 * @since 0.3.0
 * @category decoding
 */
export const load = (file: string): Effect.Effect<Lesson.Body, ContractFileError> =>
  Effect.flatMap(readBounded(file), (bytes) =>
    Either.match(decode(file, bytes), { onLeft: Effect.fail, onRight: Effect.succeed }))

/**
 * The lesson's text as the YAML a person edits, without status (see {@link render}).
 *
 * @since 0.3.0
 * @category encoding
 */
export const bodyYaml = (body: Lesson.Body): string =>
  stringify(
    {
      scope: body.scope,
      trigger: body.trigger,
      ...(body.wrongAssumption === null ? {} : { wrongAssumption: body.wrongAssumption }),
      actualRule: body.actualRule,
      ...(body.rootCause === null ? {} : { rootCause: body.rootCause }),
      ...(body.guard === null ? {} : { guard: body.guard.command === null ? { description: body.guard.description } : body.guard }),
      ...(body.fingerprints.length === 0 ? {} : { fingerprints: body.fingerprints }),
      ...(body.evidenceRefs.length === 0 ? {} : { evidenceRefs: body.evidenceRefs })
    },
    { lineWidth: 0 }
  )

/**
 * The readable copy of a lesson: a header comment (id, status, revision, how to change it) and its
 * text, which `ratchet lessons edit <id> --file` takes back as it is.
 *
 * @since 0.3.0
 * @category encoding
 */
export const render = (view: LessonRules.View): string =>
  [
    `# Lesson ${view.id}: ${view.status}, revision ${view.revision}.`,
    "# The store is the authority; this copy is rewritten when the lesson changes through ratchet lessons.",
    `# To change the text: edit this file, then ratchet lessons edit ${view.id} --file <this file> (at a terminal, signed).`,
    bodyYaml(view.body)
  ].join("\n")

/**
 * The path of lesson `lessonId`'s copy in the project at `root`. The id is the kernel's
 * (`Lesson.LessonId`: no separator, no `..`), so the path stays in the directory.
 *
 * @since 0.3.0
 * @category constructors
 */
export const pathOf = (root: string, lessonId: string): string => path.join(root, ".ratchet", directory, `${lessonId}.yaml`)

/**
 * Writes the readable copy of `view` (through a temporary file and a rename, so a reader never
 * sees half of it). A failure is returned as a warning sentence, never as an error: the store
 * already holds the lesson.
 *
 * @since 0.3.0
 * @category constructors
 */
export const write = (root: string, view: LessonRules.View): Effect.Effect<string | null> =>
  Effect.sync(() => {
    const target = pathOf(root, view.id)
    try {
      fs.mkdirSync(path.dirname(target), { recursive: true })
      const temporary = `${target}.${process.pid}.tmp`
      fs.writeFileSync(temporary, render(view))
      fs.renameSync(temporary, target)
      return null
    } catch (error) {
      return `the readable copy ${target} was not written (${error instanceof Error ? error.message : String(error)}); the store holds the lesson`
    }
  })
