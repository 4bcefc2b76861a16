/**
 * The lessons service over the CLI's store, for the tests' set-up and their reads of what the CLI
 * wrote (`@ratchet/memory`, as the controller uses it):
 *
 * - `verified <repo> <lessonId> <glob> [taskType]`: a lesson of the repository's project scoped to
 *   `glob` (and to `taskType` when given), proposed by Ratchet and made verified by the evaluator on failures with its fingerprint in two
 *   runs (as two tasks' verifications failing the same way would record them);
 * - `show <lessonId>`: its status, the runs it was shown to and its stream's events;
 * - `as-agent <lessonId> <Pin|Reject|Deprecate>`: the control asked by an agent (no receipt): the
 *   kernel's refusal, or `{ ok: true }` if it were ever accepted.
 *
 * The tests run its bundle, which their global setup builds (`harness.helper`).
 * Run as `node --conditions=@ratchet/source --import tsx lesson-store.ts …` with the CLI's
 * environment. Prints one JSON line.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Lessons from "@ratchet/memory/Lessons"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as LessonFixtures from "@ratchet/testkit/Lessons"
import * as Signing from "@ratchet/testkit/Signing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const [verb, ...args] = process.argv.slice(2)

const projectOf = (repo: string): string =>
  (JSON.parse(fs.readFileSync(path.join(repo, ".ratchet", "project.json"), "utf8")) as { projectId: string }).projectId

const program = Effect.gen(function*() {
  const lessons = yield* Lessons.Lessons
  switch (verb) {
    case "verified": {
      const [repo, lessonId, glob, taskType] = args
      if (repo === undefined || lessonId === undefined || glob === undefined) return yield* Effect.dieMessage("usage: verified <repo> <lessonId> <glob> [taskType]")
      const projectId = projectOf(repo)
      const fingerprint = LessonFixtures.fingerprint("test", 1, `${lessonId}: expected 2 rows, got 3`)
      const body = LessonFixtures.body(projectId, {
        scope: { projectId, paths: [glob], ...(taskType === undefined ? {} : { taskTypes: [taskType] }) },
        trigger: "A test formats a date near midnight",
        wrongAssumption: "The test machine's clock is in UTC",
        actualRule: "Freeze the clock and set TZ explicitly in every date test",
        fingerprints: [fingerprint.key]
      })
      const now = Date.now()
      // Ratchet proposes the candidate from a failure it observed; two more runs verify it.
      yield* lessons.propose({ actor: LessonFixtures.actors.system, lessonId, body, observed: LessonFixtures.failure(projectId, "run-e2e-0", fingerprint, now - 1) })
      for (const [n, runId] of ["run-e2e-1", "run-e2e-2"].entries()) {
        yield* lessons.recordFailure({ actor: LessonFixtures.actors.verifier, failure: LessonFixtures.failure(projectId, runId, fingerprint, now + n) })
      }
      const shown = yield* lessons.show(lessonId)
      return { id: lessonId, status: shown?.lesson.status ?? null }
    }
    case "show": {
      const [lessonId] = args
      const shown = yield* lessons.show(lessonId ?? "")
      if (shown === null) return null
      return { status: shown.lesson.status, shownTo: shown.lesson.view.shownTo, events: shown.events.map((stored) => stored.event) }
    }
    case "as-agent": {
      const [lessonId, tag] = args
      if (lessonId === undefined || (tag !== "Pin" && tag !== "Reject" && tag !== "Deprecate")) return yield* Effect.dieMessage("usage: as-agent <lessonId> Pin|Reject|Deprecate")
      const shown = yield* lessons.show(lessonId)
      const projectId = shown?.lesson.view.body.scope.projectId ?? ""
      const authority = Signing.authorityFor(projectId, [])
      return yield* lessons.control({ _tag: tag, actor: { kind: "agent", id: "claude-code:e2e" }, lessonId, reason: "the agent says so", receipt: null, authority }).pipe(
        Effect.match({
          onFailure: (error) => ({ ok: false, tag: error._tag, code: "code" in error ? error.code : null, message: error.message }),
          onSuccess: () => ({ ok: true })
        })
      )
    }
    default:
      return yield* Effect.dieMessage("usage: lesson-store.ts verified|show|as-agent …")
  }
})

const store = (process.env["RATCHET_DATABASE_URL"] ?? "") === "" ? SqliteStore.layerConfig : PostgresStore.layerConfig

Effect.runPromise(Effect.provide(program, Layer.provideMerge(Lessons.layer, store))).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`)
  },
  (error: unknown) => {
    process.stderr.write(`lesson-store: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
)
