/**
 * What `ratchet lessons` calls (ADR 0037), over the in-memory lesson store: a proposal from a file
 * (its id, its readable copy, another project's file and a taken id refused, storing nothing);
 * lessons read by id (a malformed or unknown id refused); and what a person is shown before a
 * control — the digest of the text the receipt binds — with the refusals no receipt could answer
 * given before anyone is asked: a table written by hand of actors, statuses and controls,
 * accepted and refused.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Event from "@ratchet/kernel/Event"
import * as Lesson from "@ratchet/kernel/Lesson"
import * as Lessons from "@ratchet/memory/Lessons"
import * as MemoryLessonStore from "@ratchet/storage/MemoryLessonStore"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { Project } from "../src/Controller.js"
import * as LessonControls from "../src/LessonControls.js"
import * as LessonFacts from "../src/LessonFacts.js"
import type * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const tempDir = tempDirFactory("ratchet-lesson-controls-")

const located = (root: string): Workspace.Located => ({
  root,
  projectFile: `${root}/.ratchet/project.json`,
  project: { schemaVersion: 1, projectId: "prj-1", displayName: "p", createdAt: "2026-01-01T00:00:00.000Z" } as unknown as Workspace.Located["project"],
  workspaceId: "ws-1",
  git: true
})

const services = (root: string) => Layer.merge(Layer.provideMerge(Lessons.layer, MemoryLessonStore.layer), Layer.succeed(Project, located(root)))

const person: Event.Actor = { kind: "user", id: "alice" }
const agent: Event.Actor = { kind: "agent", id: "claude" }

const yaml = (projectId = "prj-1", rootCause = "CI runners are in UTC") =>
  `scope:\n  projectId: ${projectId}\n  paths: ["test/**"]\ntrigger: Writing a date test\nactualRule: Freeze the clock\nrootCause: ${rootCause}\n`

const body = Either.getOrThrow(Lesson.decodeBody({ scope: { projectId: "prj-1" }, trigger: "t", actualRule: "r" }))

describe("LessonControls.propose", () => {
  it.effect("a file becomes a candidate with its readable copy; its id is the text's digest unless given", () => {
    const root = tempDir()
    return Effect.gen(function*() {
      const file = path.join(root, "lesson.yaml")
      fs.writeFileSync(file, yaml())
      const proposed = yield* LessonControls.propose({ file, lessonId: null, invocation: { actor: agent } })
      expect(proposed.lesson.status).toBe("candidate")
      expect(proposed.lesson.id).toBe(`l-${Lesson.digest(proposed.lesson.body).slice(7, 19)}`)
      expect(proposed.lesson.proposedBy).toEqual(agent)
      expect(fs.readFileSync(path.join(root, ".ratchet", "lessons", `${proposed.lesson.id}.yaml`), "utf8")).toContain("candidate, revision 1")
      const named = yield* LessonControls.propose({ file, lessonId: "tz-tests", invocation: { actor: person } })
      expect(named.lesson.id).toBe("tz-tests")
      expect((yield* LessonControls.list([])).map((row) => row.id).sort()).toEqual([proposed.lesson.id, "tz-tests"].sort())
    }).pipe(Effect.provide(services(root)))
  })

  const refused: ReadonlyArray<readonly [string, string, string | null, string]> = [
    ["another project's lesson", yaml("prj-2"), null, "scope.projectId"],
    ["an id that is a path", yaml(), "../escape", "lesson"],
    ["an id that is taken", yaml(), "taken", "--id"]
  ]
  for (const [name, text, id, field] of refused) {
    it.effect(`refuses ${name}, storing nothing new`, () => {
      const root = tempDir()
      return Effect.gen(function*() {
        const file = path.join(root, "lesson.yaml")
        fs.writeFileSync(file, yaml("prj-1", "the first"))
        yield* LessonControls.propose({ file, lessonId: "taken", invocation: { actor: person } })
        fs.writeFileSync(file, text)
        const error = yield* Effect.flip(LessonControls.propose({ file, lessonId: id, invocation: { actor: person } }))
        expect(error._tag).toBe("@ratchet/controller/InvalidRequest")
        if (error._tag === "@ratchet/controller/InvalidRequest") expect(error.field).toBe(field)
        expect((yield* LessonControls.list([])).map((row) => row.id)).toEqual(["taken"])
      }).pipe(Effect.provide(services(root)))
    })
  }
})

describe("LessonControls.show", () => {
  const refused: ReadonlyArray<readonly [string, string]> = [["", "is not a lesson id"], ["a/b", "is not a lesson id"], ["x".repeat(65), "is not a lesson id"], ["absent", "no lesson absent"]]
  for (const [id, reason] of refused) {
    it.effect(`refuses ${JSON.stringify(id.slice(0, 10))}`, () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(LessonControls.show(id))
        expect(error._tag).toBe("@ratchet/controller/InvalidRequest")
        if (error._tag === "@ratchet/controller/InvalidRequest") expect(error.reason).toContain(reason)
      }).pipe(Effect.provide(services(tempDir()))))
  }
})

describe("LessonControls.subject", () => {
  /** A lesson `id` in `status`: proposed, and moved by failures or a person's edit-free path. */
  const seed = (status: "candidate" | "probationary" | "verified") =>
    Effect.gen(function*() {
      const lessons = yield* Lessons.Lessons
      // Ratchet proposes the candidate from the first failure it observed (a text names no fingerprint).
      const failureOf = (runId: string) => ({
        runId,
        attempt: null,
        projectId: "prj-1",
        taskId: "t-1",
        workspaceId: "ws-1",
        phase: "VERIFYING",
        stepId: null,
        acId: "AC-1",
        trigger: "t",
        wrongAssumption: null,
        actualRule: null,
        category: "verification_failed",
        fingerprint: { subject: "AC-1", ending: "exit:1", digest: "0123456789abcdef", key: "fp:exit:1:0123456789abcdef" },
        evidenceRefs: [],
        at: 0
      })
      yield* lessons.propose({
        actor: LessonFacts.verifier,
        lessonId: "l1",
        body: { ...body, fingerprints: ["fp:exit:1:0123456789abcdef"] },
        observed: failureOf("run-0")
      })
      const runs = status === "candidate" ? [] : status === "probationary" ? ["run-1"] : ["run-1", "run-2"]
      for (const runId of runs) {
        yield* lessons.recordFailure({ actor: LessonFacts.verifier, failure: failureOf(runId) })
      }
    })

  // [status, actor, control, refusal code or null when the person is asked]
  const table: ReadonlyArray<readonly [Lesson.Status & ("candidate" | "probationary" | "verified"), Event.Actor, LessonControls.Control, string | null]> = [
    ["candidate", person, { control: "pin" }, null],
    ["probationary", person, { control: "pin" }, null],
    ["verified", person, { control: "pin" }, null],
    ["candidate", person, { control: "reject" }, null],
    ["verified", person, { control: "deprecate" }, null],
    ["candidate", person, { control: "deprecate" }, "forbidden_transition"],
    ["probationary", person, { control: "deprecate" }, "forbidden_transition"],
    ["candidate", person, { control: "edit", body }, null],
    ["candidate", person, { control: "supersede", by: "absent" }, "bad_replacement"],
    ["candidate", agent, { control: "pin" }, "person_only"],
    ["verified", agent, { control: "reject" }, "person_only"],
    ["candidate", { kind: "runner", id: "r" }, { control: "edit", body }, "person_only"],
    ["candidate", { kind: "system", id: "s" }, { control: "pin" }, "person_only"]
  ]
  for (const [status, actor, control, code] of table) {
    it.effect(`${actor.kind} ${control.control} on a ${status} lesson: ${code ?? "asked"}`, () =>
      Effect.gen(function*() {
        yield* seed(status)
        const shown = yield* Effect.either(LessonControls.subject("l1", control, { actor }))
        if (code === null) {
          if (Either.isLeft(shown)) throw new Error(`expected to be asked, got ${shown.left.message}`)
          expect(shown.right).toMatchObject({ lessonId: "l1", status, revision: 1, control: control.control })
          expect(shown.right.digest).toBe(Lesson.digest(control.control === "edit" ? control.body : (yield* LessonControls.show("l1")).lesson.view.body))
        } else {
          if (Either.isRight(shown)) throw new Error("expected a refusal")
          expect(shown.left).toMatchObject({ _tag: "@ratchet/kernel/LessonCommandRefused", code })
        }
      }).pipe(Effect.provide(services(tempDir()))))
  }
})
