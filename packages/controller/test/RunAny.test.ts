/**
 * `RunAny.loop` (ADR 0042) over a real SQLite store and its in-process claims: two loops started
 * together over four approved tasks run every task once between them, each running some; a task
 * whose claim another holder has is never run, and a loop without `takeoverExpired` ends rather
 * than waiting for it; how the loop treats each failure of a run, from a hand-written table: "another
 * runner has it" and "the task moved on" go on to the next task, anything else ends the loop; an
 * outcome `stopsAfter` names ends it too (git's settings changed, ADR 0045).
 *
 * The `run` given to the loop stands in for the run engine: it records the task and cancels it as a
 * person would, so the task leaves the runnable set as a finished run's does.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as TaskClaims from "@ratchet/storage/TaskClaims"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Signing from "@ratchet/testkit/Signing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Controller from "../src/Controller.js"
import * as RunAny from "../src/RunAny.js"
import type * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-runany-")

const person: Event.Actor = { kind: "user", id: "ana" }
const asPerson: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(6), person.id) }

const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", ...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })

const checkout = () => {
  const root = temp()
  fs.mkdirSync(path.join(root, "test"))
  fs.writeFileSync(path.join(root, "test", "date.test.js"), "// the date test\n")
  git(root, "init", "-q")
  git(root, "add", "-A")
  git(root, "commit", "-q", "-m", "start")
  return root
}

const projectAt = (root: string): Workspace.Located => ({
  root,
  projectFile: path.join(root, ".ratchet", "project.json"),
  project: { schemaVersion: 1, projectId: "prj-runany", displayName: "runany", createdAt: "2026-12-06T00:00:00.000Z" },
  workspaceId: "ws-here",
  git: true
})

const layerOf = () => {
  const root = checkout()
  const store = SqliteStore.layer({ directory: temp() })
  const leases = LeaseManager.layer({ heartbeatMs: 60_000, graceMs: 120_000 }).pipe(Layer.provide(store))
  return Layer.provideMerge(Controller.layer, Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, projectAt(root))))
}

const spec = [
  "---",
  "goal: Make the date test deterministic",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: The date test passes in every timezone",
  "    required: true",
  "    verify: { command: \"true\" }",
  "execution:",
  "  allowedScope: [\"test/**\"]",
  "---",
  ""
].join("\n")
const plan = ["steps:", "  - id: one", "    title: One", "    acRefs: [AC-001]", "    run: { command: \"true\" }", ""].join("\n")

/** `count` tasks driven to PLAN_APPROVED, oldest first. */
const approvedTasks = (count: number) =>
  Effect.gen(function*() {
    const c = yield* Controller.Controller
    const files = temp()
    fs.writeFileSync(path.join(files, "spec.md"), spec)
    fs.writeFileSync(path.join(files, "plan.yaml"), plan)
    yield* c.approvers.register(asPerson.signer!)
    const ids: Array<string> = []
    for (let i = 0; i < count; i++) {
      const taskId = (yield* c.createTask({ goal: `Task ${i + 1}` }, asPerson)).task.taskId
      const approve = (subject: "restatement" | "spec" | "plan") =>
        Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, asPerson))
      yield* c.restate(taskId, "Freeze the clock in the date test.", asPerson)
      yield* approve("restatement")
      yield* c.closeBrief(taskId, asPerson)
      yield* c.proposeSpec(taskId, path.join(files, "spec.md"), asPerson)
      yield* approve("spec")
      yield* c.preflight(taskId, asPerson)
      yield* c.proposePlan(taskId, path.join(files, "plan.yaml"), asPerson)
      yield* approve("plan")
      ids.push(taskId)
    }
    return ids
  })

/** A stand-in for the run engine: records the task, takes a moment, and cancels it as a person would. */
const recordingRun = (ran: Array<readonly [string, string]>, loop: string) => (taskId: string) =>
  Effect.gen(function*() {
    ran.push([loop, taskId])
    yield* Effect.sleep("40 millis")
    const c = yield* Controller.Controller
    yield* c.cancel(taskId, "run by the test", asPerson)
    return taskId
  })

describe("RunAny.loop", () => {
  it.live("two loops started together run every task once between them, each running some", () =>
    Effect.gen(function*() {
      const tasks = yield* approvedTasks(4)
      const ran: Array<readonly [string, string]> = []
      const loop = (name: string) =>
        RunAny.loop({ takeoverExpired: false, run: recordingRun(ran, name), stopping: () => false, say: () => undefined })
      const [a, b] = yield* Effect.all([loop("a"), loop("b")], { concurrency: 2 })
      expect([...a, ...b].sort()).toEqual([...tasks].sort())
      expect(ran.map(([, taskId]) => taskId).sort()).toEqual([...tasks].sort())
      expect(a.length).toBeGreaterThan(0)
      expect(b.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(layerOf())), 60_000)

  it.live("a task another holder has claimed is never run, and without takeoverExpired the loop ends", () =>
    Effect.gen(function*() {
      const tasks = yield* approvedTasks(3)
      const claims = yield* TaskClaims.TaskClaims
      expect(yield* claims.tryClaim("prj-runany", tasks[1]!)).toBe(true)
      const ran: Array<readonly [string, string]> = []
      const outcomes = yield* RunAny.loop({ takeoverExpired: false, run: recordingRun(ran, "a"), stopping: () => false, say: () => undefined })
      expect(outcomes).toEqual([tasks[0], tasks[2]])
      expect(ran.map(([, taskId]) => taskId)).not.toContain(tasks[1])
    }).pipe(Effect.provide(layerOf())), 60_000)

  it.live("an outcome stopsAfter names ends the loop there, saying why; any other goes on", () =>
    Effect.gen(function*() {
      const tasks = yield* approvedTasks(3)
      const ran: Array<readonly [string, string]> = []
      const said: Array<string> = []
      const outcomes = yield* RunAny.loop({
        takeoverExpired: false,
        run: recordingRun(ran, "a"),
        stopping: () => false,
        say: (text) => said.push(text),
        stopsAfter: (taskId) => (taskId === tasks[1] ? "git's settings changed" : null)
      })
      expect(outcomes).toEqual([tasks[0], tasks[1]])
      expect(said).toEqual([`stopped after ${tasks[1]}: git's settings changed`])
    }).pipe(Effect.provide(layerOf())), 60_000)

  /** (a run's failure tag, whether the loop goes on to the next task). */
  const failures: ReadonlyArray<readonly [string, boolean]> = [
    ["@ratchet/lease/LeaseHeld", true],
    ["@ratchet/lease/TakeoverTooEarly", true],
    ["@ratchet/lease/LeaseContention", true],
    ["@ratchet/lease/LeaseLost", true],
    ["@ratchet/storage/StaleEpoch", true],
    ["@ratchet/storage/VersionConflict", true],
    ["@ratchet/kernel/TaskCommandRefused", true],
    ["@ratchet/kernel/TaskCommandHeld", true],
    ["@ratchet/storage/StorageError", false],
    ["@ratchet/controller/InvalidRequest", false],
    ["@ratchet/lease/LeaseReleased", false]
  ]

  it.live.each(failures)("a run failing with %s: the loop goes on to the next task: %s", ([tag, goesOn]) =>
    Effect.gen(function*() {
      const tasks = yield* approvedTasks(2)
      const ran: Array<readonly [string, string]> = []
      const said: Array<string> = []
      const recording = recordingRun(ran, "a")
      const result = yield* Effect.either(RunAny.loop({
        takeoverExpired: false,
        run: (taskId): Effect.Effect<string, { readonly _tag: string; readonly message?: string }, Controller.Controller> =>
          taskId === tasks[0] ? Effect.fail({ _tag: tag, message: `${tag} from the test` }) : recording(taskId),
        stopping: () => false,
        say: (text) => said.push(text)
      }))
      if (goesOn) {
        expect(Either.getOrThrow(result)).toEqual([tasks[1]])
      } else {
        expect(Either.isLeft(result) && result.left._tag).toBe(tag)
        expect(ran).toEqual([])
      }
      // A refusal is said, naming the task; a busy task is skipped silently.
      expect(said.some((line) => line.includes(tasks[0]!))).toBe(tag.startsWith("@ratchet/kernel/"))
    }).pipe(Effect.provide(layerOf())), 60_000)
})
