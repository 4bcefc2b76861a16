/**
 * The runner's look at git's settings at each step's end (ADR 0045), over a real SQLite store, a
 * real git checkout and the real runner, from a hand-written table of a two-step plan whose first
 * step does something to the checkout:
 * - accepted: nothing to git's settings (both steps run, the task is VERIFYING); a change with no
 *   look (a plain run does not watch);
 * - rejected: `info/attributes` changed, or a `commondir` written, blocks the task in the step's
 *   own end (`scope_violation`, naming the file), and the second step never starts; a step that
 *   also leaves its scope blocks once, git's settings said first and the scope after.
 * And a verification pass after it, whose check changes `info/attributes`: with the look the pass
 * is recorded and the task blocks on git's settings in the same record; without it, it does not.
 * And the loop's look when it ends (`UntilVerified.watched`), from a table: a loop that returns,
 * fails, dies (a defect) or is interrupted after a change blocks the task (the first three end
 * BLOCKED, the failure said too); with nothing changed the outcome, failure or defect is the loop's own.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as EventStore from "@ratchet/storage/EventStore"
import type * as ReadModel from "@ratchet/storage/ReadModel"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Signing from "@ratchet/testkit/Signing"
import * as Builtin from "@ratchet/verifier/Builtin"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Controller from "../src/Controller.js"
import * as GitSettings from "../src/GitSettings.js"
import * as Runner from "../src/Runner.js"
import * as UntilVerified from "../src/UntilVerified.js"
import * as Verify from "../src/Verify.js"
import type * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-gitsettings-run-")

const person: Event.Actor = { kind: "user", id: "ana" }
const asPerson: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(6), person.id) }
const runner: Event.Actor = { kind: "runner", id: "runner-1" }

const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", ...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })

const specOf = (check: string) => [
  "---",
  "goal: Make the date test deterministic",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: The date test passes in every timezone",
  "    required: true",
  `    verify: { command: ${JSON.stringify(check)} }`,
  "execution:",
  "  allowedScope: [\"test/**\"]",
  "---",
  ""
].join("\n")

const planOf = (first: string) =>
  [
    "steps:",
    "  - id: first",
    "    title: First",
    "    acRefs: [AC-001]",
    `    run: { command: ${JSON.stringify(first)} }`,
    "  - id: second",
    "    title: Second",
    "    acRefs: [AC-001]",
    "    needs: [first]",
    "    run: { command: \"echo two > test/two.txt\" }",
    ""
  ].join("\n")

/** A checkout and a store, a task driven to PLAN_APPROVED with `first` as its first step, and a runner over it. */
const scenario = <A = null>(
  first: string,
  watched: boolean,
  check = "true",
  after?: (task: { readonly taskId: string; readonly root: string; readonly before: GitSettings.Snapshot; readonly outcome: Runner.Outcome }) => Effect.Effect<A, never, Controller.Project | EventStore.EventStore | ReadModel.ReadModels>
) => {
  // In a directory of its own, so that what a step copies beside it (`../common-copy`) is removed with it.
  const root = path.join(temp(), "repo")
  fs.mkdirSync(path.join(root, "test"), { recursive: true })
  fs.writeFileSync(path.join(root, "test", "date.test.js"), "// the date test\n")
  fs.writeFileSync(path.join(root, "README.md"), "# A project\n")
  git(root, "init", "-q")
  git(root, "add", "-A")
  git(root, "commit", "-q", "-m", "start")
  const home = temp()
  const project: Workspace.Located = {
    root,
    projectFile: path.join(root, ".ratchet", "project.json"),
    project: { schemaVersion: 1, projectId: "prj-gitsettings", displayName: "gitsettings", createdAt: "2026-12-06T00:00:00.000Z" },
    workspaceId: "ws-here",
    git: true
  }
  const store = SqliteStore.layer({ directory: home })
  const leases = LeaseManager.layer({ heartbeatMs: 60_000, graceMs: 120_000 }).pipe(Layer.provide(store))
  const layer = Layer.provideMerge(Controller.layer, Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, project)))
  const body = Effect.gen(function*() {
    const c = yield* Controller.Controller
    const files = temp()
    yield* c.approvers.register(asPerson.signer!)
    git(root, "add", ".ratchet/approvers.json")
    git(root, "commit", "-q", "-m", "approvers")
    const taskId = (yield* c.createTask({ goal: "Make the date test deterministic" }, asPerson)).task.taskId
    const approve = (subject: "restatement" | "spec" | "plan") =>
      Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, asPerson))
    yield* c.restate(taskId, "Freeze the clock in the date test.", asPerson)
    yield* approve("restatement")
    yield* c.closeBrief(taskId, asPerson)
    fs.writeFileSync(path.join(files, "spec.md"), specOf(check))
    yield* c.proposeSpec(taskId, path.join(files, "spec.md"), asPerson)
    yield* approve("spec")
    yield* c.preflight(taskId, asPerson)
    fs.writeFileSync(path.join(files, "plan.yaml"), planOf(first))
    yield* c.proposePlan(taskId, path.join(files, "plan.yaml"), asPerson)
    yield* approve("plan")
    // Taken as the loop takes it: before any step runs.
    const before = GitSettings.snapshot(root, process.env)
    const outcome = yield* Runner.run({
      taskId,
      takeover: false,
      actor: runner,
      home,
      gitSettings: watched ? GitSettings.look(before, taskId, process.env) : undefined
    })
    const look = watched ? GitSettings.look(before, taskId, process.env) : undefined
    // A verification pass when the run reached VERIFYING: its checks run workspace code too.
    const verified = outcome.state === "VERIFYING"
      ? yield* Verify.verify({ taskId, acs: [], invocation: asPerson, gitSettings: look }).pipe(Effect.provide(Builtin.layer))
      : null
    const extra = after === undefined ? null : yield* after({ taskId, root, before, outcome })
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect((yield* EventStore.EventStore).read({ streamId: taskId })))
    const started = events.flatMap(({ event }) => (event._tag === "AttemptTransitioned" && event.to === "Running" ? [event.stepId] : []))
    const blocked = events.flatMap(({ event }) => (event._tag === "TaskBlocked" ? [event.blocker] : []))
    return { outcome, started, blocked, verified, extra }
  })
  return Effect.provide(body, layer)
}

// what the first step does, whether the runner looks → the task's state, the steps started, what the block names
const table: ReadonlyArray<{
  readonly name: string
  readonly first: string
  readonly watched: boolean
  readonly state: string
  readonly started: ReadonlyArray<string>
  readonly names?: ReadonlyArray<string>
  readonly category?: string
}> = [
  { name: "accepted: nothing to git's settings", first: "echo one > test/one.txt", watched: true, state: "VERIFYING", started: ["first", "second"] },
  { name: "accepted: a change, and no look (a plain run)", first: "echo '* filter=x' >> .git/info/attributes", watched: false, state: "VERIFYING", started: ["first", "second"] },
  {
    name: "rejected: info/attributes changed",
    first: "mkdir -p .git/info && echo '* filter=x' >> .git/info/attributes",
    watched: true,
    state: "BLOCKED",
    started: ["first"],
    names: [path.join(".git", "info", "attributes")],
    category: "scope_violation"
  },
  {
    name: "rejected: a commondir written",
    first: "cp -r .git ../common-copy && echo \"$(cd .. && pwd)/common-copy\" > .git/commondir",
    watched: true,
    state: "BLOCKED",
    started: ["first"],
    names: [path.join(".git", "commondir")],
    category: "scope_violation"
  },
  {
    name: "rejected: a hook added by a step that also leaves its scope, said in one block",
    first: "printf '#!/bin/sh\\n' > .git/hooks/post-checkout && echo changed >> README.md",
    watched: true,
    state: "BLOCKED",
    started: ["first"],
    names: [path.join(".git", "hooks", "post-checkout"), "It also blocked on:", "README.md"],
    category: "scope_violation"
  }
]

describe("Verify.verify with a look at git's settings after its checks", () => {
  const check = "echo '* filter=x' >> .git/info/attributes"
  it.live("rejected: a check that changes info/attributes blocks the task in the pass's record, whatever it concluded", () =>
    Effect.gen(function*() {
      const { blocked, verified } = yield* scenario("echo one > test/one.txt", true, check)
      expect(verified?.conclusion.outcome).toBe("APPROVED")
      expect(verified?.state).toBe("BLOCKED")
      expect(blocked).toHaveLength(1)
      expect(GitSettings.isBlocker(blocked[0])).toBe(true)
      expect(blocked[0]!.requiredAction).toContain(path.join(".git", "info", "attributes"))
      expect(verified?.conclusion.blocker).toEqual(blocked[0])
    }), 60_000)
  it.live("accepted: the same check with no look (a person's ratchet verify)", () =>
    Effect.gen(function*() {
      const { blocked, verified } = yield* scenario("echo one > test/one.txt", false, check)
      expect(verified?.state).toBe("VERIFYING")
      expect(blocked).toEqual([])
    }), 60_000)
})

describe("Runner.run with a look at git's settings at each step's end", () => {
  for (const row of table) {
    it.live(row.name, () =>
      Effect.gen(function*() {
        const { blocked, outcome, started, verified } = yield* scenario(row.first, row.watched)
        expect(outcome.state).toBe(row.state)
        // Nothing changed in the accepted rows' checks: a pass that concludes as it would.
        if (verified !== null) expect(verified.state).toBe("VERIFYING")
        expect(started).toEqual(row.started)
        if (row.names === undefined) {
          expect(blocked).toEqual([])
          return
        }
        expect(blocked).toHaveLength(1)
        expect(blocked[0]!.category).toBe(row.category)
        expect(GitSettings.isBlocker(blocked[0])).toBe(true)
        for (const name of row.names) expect(blocked[0]!.requiredAction).toContain(name)
        expect(outcome.blocker).toEqual(blocked[0])
      }), 60_000)
  }
})

describe("UntilVerified.watched: the look when the loop ends, whatever the outcome", () => {
  const plant = (root: string) => fs.appendFileSync(path.join(root, ".git", "info", "attributes"), "* filter=x\n")
  // what the loop does (after git's settings changed, or not) → how the watched loop ends, and whether the task blocks
  const table: ReadonlyArray<{
    readonly name: string
    readonly changed: boolean
    readonly loop: (outcome: Runner.Outcome) => Effect.Effect<UntilVerified.Outcome, { readonly _tag: "Boom"; readonly message: string }>
    readonly ends: "outcome" | "blocked" | "failed" | "died" | "interrupted"
    /** The store's branch read dies while the look records its block (the block cannot be recorded). */
    readonly storeDies?: boolean
  }> = [
    { name: "accepted: returns, nothing changed", changed: false, loop: (outcome) => Effect.succeed({ ...outcome, passes: [] }), ends: "outcome" },
    { name: "accepted: fails, nothing changed", changed: false, loop: () => Effect.fail({ _tag: "Boom", message: "boom" }), ends: "failed" },
    { name: "rejected: returns after a change", changed: true, loop: (outcome) => Effect.succeed({ ...outcome, passes: [] }), ends: "blocked" },
    { name: "rejected: fails after a change", changed: true, loop: () => Effect.fail({ _tag: "Boom", message: "boom" }), ends: "blocked" },
    { name: "accepted: dies, nothing changed", changed: false, loop: () => Effect.die(new Error("kaboom")), ends: "died" },
    { name: "rejected: dies after a change", changed: true, loop: () => Effect.die(new Error("kaboom")), ends: "blocked" },
    { name: "rejected: interrupted after a change", changed: true, loop: () => Effect.never, ends: "interrupted" },
    { name: "rejected: returns after a change, the store goes away while the block is recorded", changed: true, loop: (outcome) => Effect.succeed({ ...outcome, passes: [] }), ends: "blocked", storeDies: true }
  ]
  for (const row of table) {
    it.live(row.name, () =>
      Effect.gen(function*() {
        const { blocked, extra } = yield* scenario("echo one > test/one.txt", false, "true", ({ before, outcome, root, taskId }) =>
          Effect.gen(function*() {
            if (row.changed) plant(root)
            const store = yield* EventStore.EventStore
            const dying = { ...store, branches: () => Effect.die(new Error("the store went away")) }
            const fiber = yield* Effect.fork(
              UntilVerified.watched(before, { taskId, actor: runner }, row.loop(outcome)).pipe(row.storeDies === true ? Effect.provideService(EventStore.EventStore, dying) : (self) => self)
            )
            if (row.ends === "interrupted") {
              yield* Effect.yieldNow()
              return yield* Fiber.interrupt(fiber)
            }
            return yield* Fiber.await(fiber)
          }))
        const exit = extra!
        if (row.ends === "interrupted") expect(Exit.isInterrupted(exit)).toBe(true)
        if (row.ends === "failed") expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("boom")
        if (row.ends === "died") expect(Exit.isFailure(exit) && Cause.isDie(exit.cause) && Cause.pretty(exit.cause)).toContain("kaboom")
        if (row.ends === "outcome") expect(Exit.isSuccess(exit) && exit.value.state).toBe("VERIFYING")
        if (row.ends === "blocked") {
          expect(Exit.isSuccess(exit)).toBe(true)
          const outcome = Exit.isSuccess(exit) ? exit.value : null
          expect(outcome).toMatchObject({ state: "BLOCKED", stop: "blocked" })
          expect(GitSettings.isBlocker(outcome?.blocker)).toBe(true)
          if (row.name.includes("fails")) expect(outcome?.message).toContain("The loop also failed: boom")
          if (row.name.includes("dies")) expect(outcome?.message).toContain("The loop also failed: kaboom")
        }
        if (row.storeDies === true) {
          expect(Exit.isSuccess(exit) && exit.value.message).toContain("(The block could not be recorded: the store went away)")
          return expect(blocked).toEqual([])
        }
        expect(blocked.map(GitSettings.isBlocker)).toEqual(row.changed ? [true] : [])
      }), 60_000)
  }
})
