/**
 * What the lifecycle tells the lessons (ADR 0037), over the in-memory lesson store: a failure no
 * live lesson carries proposes a candidate and observes it (probationary); the same run failing
 * again does not verify it, another run — in another workspace, whose output names its own root —
 * does; a completion in scope is a counted success, out of scope it is not; only FAIL,
 * INDETERMINATE and NOT_RUN with evidence are failures of a verification. Recording never fails
 * its caller: without a `Lessons` service nothing is recorded, and a service that fails is one
 * warning line. `clip` and the lessons' clock offset from tables written by hand.
 */
import type * as Task from "@ratchet/kernel/Task"
import * as Lessons from "@ratchet/memory/Lessons"
import * as MemoryLessonStore from "@ratchet/storage/MemoryLessonStore"
import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Project } from "../src/Controller.js"
import * as LessonFacts from "../src/LessonFacts.js"
import type * as Workspace from "../src/Workspace.js"

const located = (root: string, workspaceId: string): Workspace.Located => ({
  root,
  projectFile: `${root}/.ratchet/project.json`,
  project: { schemaVersion: 1, projectId: "prj-1", displayName: "p", createdAt: "2026-01-01T00:00:00.000Z" } as unknown as Workspace.Located["project"],
  workspaceId,
  git: true
})

// A task as the facts read it: its id, its spec's allowed scope and criteria, its plan's steps.
const task = (taskId: string): Task.Task =>
  ({
    taskId,
    spec: { spec: { execution: { allowedScope: ["test/**"] }, acceptanceCriteria: [{ id: "AC-001", outcome: "The date test passes" }] } },
    plan: { plan: { steps: [{ id: "fix", run: { command: "npm test" } }] } }
  }) as unknown as Task.Task

const lessonsLayer = Layer.provideMerge(Lessons.layer, MemoryLessonStore.layer)
const at = (root: string, workspaceId: string) => Layer.merge(lessonsLayer, Layer.succeed(Project, located(root, workspaceId)))

const verification = (root: string, runId: string, taskId: string) =>
  LessonFacts.verificationEnded({
    actor: LessonFacts.verifier,
    task: task(taskId),
    runId,
    results: [
      { acId: "AC-001", verdict: { verdict: "FAIL", evidenceRefs: ["sha256:e1"] }, judgements: [{ verifier: "command", verdict: "FAIL", reason: `exit 1 in ${root}/test/date.test.js:12` }] },
      { acId: "AC-002", verdict: { verdict: "PASS", evidenceRefs: [] }, judgements: [] },
      { acId: "AC-003", verdict: { verdict: "NOT_RUN", evidenceRefs: [] }, judgements: [] }
    ]
  })

const listAll = Effect.flatMap(Lessons.Lessons, (lessons) => lessons.list({ projectId: "prj-1" }))

describe("LessonFacts", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it.effect("a failure proposes a candidate and observes it; the same run again does not verify it, another workspace's run does", () =>
    Effect.gen(function*() {
      yield* verification("/work/a", "run-1", "t-1").pipe(Effect.provide(Layer.succeed(Project, located("/work/a", "ws-a"))))
      let rows = yield* listAll
      expect(rows.map((row) => row.status)).toEqual(["probationary"])
      const id = rows[0]!.id
      expect(id).toMatch(/^fp-[0-9a-f]{16}$/)
      expect(rows[0]!.view.body.scope.paths).toEqual(["test/**"])
      expect(rows[0]!.view.proposedBy).toEqual(LessonFacts.verifier)

      yield* verification("/work/a", "run-1", "t-1").pipe(Effect.provide(Layer.succeed(Project, located("/work/a", "ws-a"))))
      rows = yield* listAll
      expect(rows.map((row) => [row.id, row.status, row.view.failures])).toEqual([[id, "probationary", 2]])

      // another checkout prints its own root: the fingerprint is the same
      yield* verification("/home/bo/b", "run-2", "t-2").pipe(Effect.provide(Layer.succeed(Project, located("/home/bo/b", "ws-b"))))
      rows = yield* listAll
      expect(rows.map((row) => [row.id, row.status])).toEqual([[id, "verified"]])
    }).pipe(Effect.provide(lessonsLayer)))

  it.effect("two runs failing the same way at once make one lesson, verified", () =>
    Effect.gen(function*() {
      yield* Effect.all([verification("/work/a", "run-1", "t-1"), verification("/work/a", "run-2", "t-2")], { concurrency: "unbounded" })
      const rows = yield* listAll
      expect(rows.map((row) => row.status)).toEqual(["verified"])
    }).pipe(Effect.provide(at("/work/a", "ws-a"))))

  it.effect("a completion in the lesson's scope is a counted success; one outside it is not", () =>
    Effect.gen(function*() {
      yield* verification("/work/a", "run-1", "t-1")
      yield* LessonFacts.completed({ task: task("t-2"), runId: "run-2", changedPaths: ["test/date.test.js", "../outside", "/abs"] })
      yield* LessonFacts.completed({ task: task("t-3"), runId: "run-3", changedPaths: ["src/other.js"] })
      const [row] = yield* listAll
      expect(row!.view.successes.map((success) => success.runId)).toEqual(["run-2"])
      expect(row!.status).toBe("probationary")
    }).pipe(Effect.provide(at("/work/a", "ws-a"))))

  it.effect("a failed step and an Indeterminate attempt are failures of their own categories", () =>
    Effect.gen(function*() {
      yield* LessonFacts.attemptIndeterminate({
        actor: { kind: "runner", id: "r" },
        task: task("t-1"),
        runId: "run-1",
        stepId: "fix",
        attempt: 1,
        intentId: "i-1",
        why: "the step is neither idempotent nor probed"
      })
      const [row] = yield* listAll
      expect(row!.status).toBe("probationary")
      expect(row!.view.body.fingerprints[0]).toMatch(/^fp:indeterminate:[0-9a-f]{16}$/)
      expect(row!.view.body.trigger).toBe("recovering step fix after its runner died: npm test")
    }).pipe(Effect.provide(at("/work/a", "ws-a"))))

  it.effect("without a Lessons service nothing is recorded and nothing fails", () =>
    verification("/work/a", "run-1", "t-1").pipe(Effect.provide(Layer.succeed(Project, located("/work/a", "ws-a")))))

  it.effect("a store that fails is one warning line, never the caller's failure", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
        lines.push(String(chunk))
        return true
      })
      const broken: Lessons.Service = {
        ...Lessons.make(MemoryLessonStore.make()),
        recordFailure: () => Effect.die(new Error("the store is gone"))
      }
      yield* verification("/work/a", "run-1", "t-1").pipe(
        Effect.provide(Layer.merge(Layer.succeed(Lessons.Lessons, broken), Layer.succeed(Project, located("/work/a", "ws-a"))))
      )
      expect(lines).toEqual(["warning: lessons: the verification failed of AC-001 was not recorded: the store is gone (the task is unaffected)\n"])
    }))
})

describe("LessonFacts.clip", () => {
  const table: ReadonlyArray<readonly [string, string, number, string]> = [
    ["short text is kept", "exit 1", 400, "exit 1"],
    ["whitespace becomes one line", "  a\n\tb  \r\n c ", 400, "a b c"],
    ["control characters are blanked", "a\u0007b\u001bc", 400, "a b c"],
    ["bidirectional overrides are blanked", "a\u202eb", 400, "a b"],
    ["a lone surrogate is replaced", "a\uD800b", 400, "a\uFFFDb"],
    ["long text is cut with an ellipsis", "abcdefghij", 5, "abcd…"],
    ["a pair is never cut", "ab\uD83D\uDE00c", 4, "ab…"],
    ["nothing left: the fallback", " \u0000 ", 400, "fallback"]
  ]
  for (const [name, text, max, expected] of table) {
    it(name, () => expect(LessonFacts.clip(text, max, "fallback")).toBe(expected))
  }
})

