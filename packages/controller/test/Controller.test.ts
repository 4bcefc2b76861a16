/**
 * The controller's write loop over a real SQLite store: the lease it respects, the conflicts it
 * re-decides, what it refuses before the kernel, and that a refusal writes nothing.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as KernelSpec from "@ratchet/kernel/Spec"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as EventStore from "@ratchet/storage/EventStore"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Signing from "@ratchet/testkit/Signing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { tempDirFactory } from "./tempDirs.js"
import * as Controller from "../src/Controller.js"
import type * as Workspace from "../src/Workspace.js"

const factories = new Map<string, () => string>()
const temp = (prefix: string): string => {
  let make = factories.get(prefix)
  if (make === undefined) factories.set(prefix, make = tempDirFactory(prefix))
  return make()
}

const user: Event.Actor = { kind: "user", id: "ana" }
/** ana with her approval key unlocked, as a person at a terminal is. */
const asUser: Controller.Invocation = { actor: user, signer: Signing.signerOf(Signing.keyOf(5), "ana") }
const anyDigest = `sha256:${"0".repeat(64)}` as Digest.Digest

const projectAt = (root: string, projectId = "prj-test"): Workspace.Located => ({
  root,
  projectFile: path.join(root, ".ratchet", "project.json"),
  project: { schemaVersion: 1, projectId, displayName: "test", createdAt: "2026-12-03T00:00:00.000Z" },
  workspaceId: "ws-test",
  git: false
})

/** A controller over a fresh SQLite store; `home` lets two controllers share one store. */
const controllerLayer = (options: { readonly home?: string; readonly root?: string; readonly projectId?: string } = {}) => {
  const store = SqliteStore.layer({ directory: options.home ?? temp("ratchet-controller-home-") })
  const leases = LeaseManager.layer({ heartbeatMs: 1_000, graceMs: 2_000 }).pipe(Layer.provide(store))
  return Layer.mergeAll(
    Controller.layer.pipe(
      Layer.provide(Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, projectAt(options.root ?? temp("ratchet-controller-root-"), options.projectId))))
    ),
    store,
    leases
  )
}

const specFile = (dir: string, front: string, body = "# Notes\n") => {
  const file = path.join(dir, `spec-${Math.random().toString(16).slice(2)}.md`)
  fs.writeFileSync(file, `---\n${front}---\n${body}`)
  return file
}

const specFront = (extraConstraint = "") =>
  [
    "goal: Make the date test deterministic",
    "constraints:",
    "  - No new runtime dependencies",
    ...(extraConstraint === "" ? [] : [`  - ${extraConstraint}`]),
    "acceptanceCriteria:",
    "  - id: AC-001",
    "    outcome: The date test passes in every timezone",
    "    required: true",
    "    verify: { command: \"node --version\", expectExitCode: 0, timeoutSeconds: 60 }",
    "execution:",
    "  allowedScope: [\"test/**\"]",
    ""
  ].join("\n")

/** Drives a new task to SPEC_READY with `front` as its spec. */
const toSpecReady = (c: Controller.Service, dir: string) =>
  Effect.gen(function*() {
    // ana is the project's approver (registered once; already registered is fine).
    yield* c.approvers.register(asUser.signer!)
    const created = yield* c.createTask({ goal: "Make the date test deterministic" }, asUser)
    const taskId = created.task.taskId
    yield* c.restate(taskId, "Freeze the clock in the date test.", asUser)
    const shown = yield* c.approvalSubject(taskId, "restatement")
    yield* c.approve(taskId, { subject: "restatement", digest: shown.digest, channel: "terminal" }, asUser)
    yield* c.closeBrief(taskId, asUser)
    yield* c.proposeSpec(taskId, specFile(dir, specFront()), asUser)
    return taskId
  })

const versionOf = (c: Controller.Service, taskId: string) => Effect.map(c.status(taskId), (view) => view.version)

describe("Controller", () => {
  it.effect("creates a task in INTERVIEWING in one append, with a generated id and slug", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const created = yield* c.createTask({ goal: "  Fix the Flaky DATE test! " }, asUser)
      expect(created.task.taskId).toMatch(/^t-[0-9a-f]{8}$/)
      expect(created.task.slug).toBe("fix-the-flaky-date-test")
      expect(created.task.goal).toBe("Fix the Flaky DATE test!")
      expect(created.task.state).toBe("INTERVIEWING")
      expect(created.events).toEqual(["TaskCreated", "InterviewBegun"])
      expect(created.firstLsn).not.toBeNull()
      expect(created.lastLsn).toBe((created.firstLsn as number) + 1)
      const listed = yield* c.listTasks
      expect(listed.map((view) => view.taskId)).toEqual([created.task.taskId])
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("refuses an empty goal, a goal over 4096 characters and a bad slug, before writing", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const empty = yield* Effect.flip(c.createTask({ goal: "   " }, asUser))
      expect(empty._tag).toBe("@ratchet/controller/InvalidRequest")
      expect(empty.message).toContain("--goal")
      const long = yield* Effect.flip(c.createTask({ goal: "g".repeat(4097) }, asUser))
      expect(long.message).toContain("4097 characters")
      const slug = yield* Effect.flip(c.createTask({ goal: "ok", slug: "../etc" }, asUser))
      expect(slug.message).toContain("--slug")
      expect(yield* c.listTasks).toEqual([])
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("names an unknown, a hostile and another project's task id as such", () =>
    Effect.gen(function*() {
      const home = temp("ratchet-controller-shared-")
      const other = yield* Effect.flatMap(Controller.Controller, (c) => c.createTask({ goal: "theirs" }, asUser)).pipe(
        Effect.provide(controllerLayer({ home, projectId: "prj-other" }))
      )
      yield* Effect.gen(function*() {
        const c = yield* Controller.Controller
        const unknown = yield* Effect.flip(c.status("t-00000000"))
        expect(unknown._tag).toBe("@ratchet/controller/TaskNotFound")
        expect(unknown.message).toContain("ratchet task list")
        const hostile = yield* Effect.flip(c.status("../../etc/passwd"))
        expect(hostile._tag).toBe("@ratchet/controller/InvalidRequest")
        const foreign = yield* Effect.flip(c.status(other.task.taskId))
        expect(foreign._tag).toBe("@ratchet/controller/TaskNotFound")
        expect(yield* c.listTasks).toEqual([])
      }).pipe(Effect.provide(controllerLayer({ home })))
    }))

  it.effect("re-decides a write when another writer moved the task: concurrent questions get distinct ids", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const created = yield* c.createTask({ goal: "ask many" }, asUser)
      const taskId = created.task.taskId
      const asked = yield* Effect.forEach(
        [1, 2, 3, 4],
        (n) => c.ask(taskId, { text: `question ${n}`, blocking: false }, asUser),
        { concurrency: "unbounded" }
      )
      expect(new Set(asked.map((a) => a.questionId))).toEqual(new Set(["Q-1", "Q-2", "Q-3", "Q-4"]))
      const view = yield* c.status(taskId)
      expect(view.brief.questions).toBe(4)
      expect(view.version).toBe(6)
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("a refusal and a HOLD write nothing", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const created = yield* c.createTask({ goal: "refusals" }, asUser)
      const taskId = created.task.taskId
      yield* c.ask(taskId, { text: "Which timezone?", blocking: true }, asUser)
      const before = yield* versionOf(c, taskId)
      const held = yield* Effect.flip(c.closeBrief(taskId, asUser))
      expect(held._tag).toBe("@ratchet/kernel/TaskCommandHeld")
      const refused = yield* Effect.flip(c.approve(taskId, { subject: "plan", digest: KernelSpec.digest({ goal: "x", acceptanceCriteria: [] } as never), channel: "terminal" }, asUser))
      expect(refused._tag).toBe("@ratchet/kernel/TaskCommandRefused")
      const unknownQuestion = yield* Effect.flip(c.answer(taskId, { questionId: "Q-9", text: "?", source: "user" }, asUser))
      expect(unknownQuestion._tag).toBe("@ratchet/kernel/TaskCommandRefused")
      expect(yield* versionOf(c, taskId)).toBe(before)
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("an approval off a terminal is a HOLD naming approval_requires_terminal", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(asUser.signer!)
      const created = yield* c.createTask({ goal: "approve" }, asUser)
      const taskId = created.task.taskId
      yield* c.restate(taskId, "One sentence.", asUser)
      const shown = yield* c.approvalSubject(taskId, "restatement")
      const held = yield* Effect.flip(c.approve(taskId, { subject: "restatement", digest: shown.digest, channel: "non-interactive" }, asUser))
      expect(held._tag).toBe("@ratchet/kernel/TaskCommandHeld")
      expect(held._tag === "@ratchet/kernel/TaskCommandHeld" ? held.gate.reasons.map((r) => r.code) : []).toContain(
        "approval_requires_terminal"
      )
      const agent = yield* Effect.flip(
        c.approve(taskId, { subject: "restatement", digest: shown.digest, channel: "terminal" }, { actor: { kind: "agent", id: "claude" } })
      )
      expect(agent._tag === "@ratchet/kernel/TaskCommandHeld" ? agent.gate.reasons.map((r) => r.code) : []).toContain("approval_requires_user")
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("an editorial-only spec edit appends nothing; a semantic one voids the approval", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const dir = temp("ratchet-controller-specs-")
      const taskId = yield* toSpecReady(c, dir)
      const spec = yield* c.approvalSubject(taskId, "spec")
      yield* c.approve(taskId, { subject: "spec", digest: spec.digest, channel: "terminal" }, asUser)
      const editorial = yield* c.proposeSpec(taskId, specFile(dir, specFront(), "# Entirely new prose\n\nMore words.\n"), asUser)
      expect(editorial.events).toEqual([])
      expect(editorial.digest).toBe(spec.digest)
      expect(editorial.task.state).toBe("SPEC_APPROVED")
      const semantic = yield* c.proposeSpec(taskId, specFile(dir, specFront("Keep the public API")), asUser)
      expect(semantic.events).toContain("SpecProposed")
      expect(semantic.changed).toEqual(["constraints"])
      expect(semantic.task.state).toBe("SPEC_READY")
      // The approval is void: nothing approved until the new digest is.
      expect(semantic.task.digests.specApproved).toBeNull()
      expect(semantic.task.digests.spec).not.toBe(spec.digest)
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("a stale approval (the spec changed after it was shown) is refused and writes nothing", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const dir = temp("ratchet-controller-stale-")
      const taskId = yield* toSpecReady(c, dir)
      const shown = yield* c.approvalSubject(taskId, "spec")
      yield* c.proposeSpec(taskId, specFile(dir, specFront("A second constraint")), asUser)
      const before = yield* versionOf(c, taskId)
      const stale = yield* Effect.flip(c.approve(taskId, { subject: "spec", digest: shown.digest, channel: "terminal" }, asUser))
      expect(stale._tag).toBe("@ratchet/kernel/TaskCommandHeld")
      expect(stale._tag === "@ratchet/kernel/TaskCommandHeld" ? stale.gate.reasons.map((r) => r.code) : []).toContain("stale_digest")
      expect(yield* versionOf(c, taskId)).toBe(before)
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("a leased task refuses writes without the epoch, takes them with it, and rejects a stale one", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const created = yield* c.createTask({ goal: "leased" }, asUser)
      const taskId = created.task.taskId
      const never = yield* Effect.flip(c.lease.heartbeat(taskId, 1))
      expect(never._tag).toBe("@ratchet/controller/InvalidRequest")
      expect(never.message).toContain("never been leased")
      const lease = yield* c.lease.acquire(taskId, { host: "claude-code", sessionRef: "s-1", actor: user })
      expect(lease.epoch).toBe(1)
      const refused = yield* Effect.flip(c.ask(taskId, { text: "?", blocking: false }, asUser))
      expect(refused._tag).toBe("@ratchet/controller/LeaseConflict")
      expect(refused.message).toContain("claude-code session s-1")
      expect(refused.message).toContain("--lease-epoch 1")
      const stale = yield* Effect.flip(c.ask(taskId, { text: "?", blocking: false }, { actor: user, leaseEpoch: 7 }))
      expect(stale._tag).toBe("@ratchet/controller/LeaseConflict")
      const asked = yield* c.ask(taskId, { text: "?", blocking: false }, { actor: user, leaseEpoch: 1 })
      expect(asked.questionId).toBe("Q-1")
      const observed = yield* c.lease.show(taskId)
      expect(observed.status).toBe("held")
      expect(observed.holder?.sessionRef).toBe("s-1")
      yield* c.lease.heartbeat(taskId, 1)
      const wrongRelease = yield* Effect.flip(c.lease.release(taskId, 2, user))
      // Epoch 2 was never issued: a typo, not a displaced holder.
      expect(wrongRelease._tag).toBe("@ratchet/controller/InvalidRequest")
      expect(wrongRelease.message).toContain("never been issued")
      yield* c.lease.release(taskId, 1, user)
      const twice = yield* Effect.flip(c.lease.release(taskId, 1, user))
      expect(twice._tag).toBe("@ratchet/lease/LeaseNotHeld")
      const lost = yield* Effect.flip(c.lease.heartbeat(taskId, 1))
      expect(lost._tag).toBe("@ratchet/lease/LeaseLost")
      // Free again: a write with no epoch lands; one still presenting the released epoch does not.
      yield* c.ask(taskId, { text: "again", blocking: false }, asUser)
      const released = yield* Effect.flip(c.ask(taskId, { text: "late", blocking: false }, { actor: user, leaseEpoch: 1 }))
      expect(released._tag).toBe("@ratchet/controller/LeaseConflict")
      expect(released.message).toContain("no lease is held now")
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("a cancel under the lease releases it in the same append; a cancelled task's lease is not taken again", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const created = yield* c.createTask({ goal: "cancel leased" }, asUser)
      const taskId = created.task.taskId
      const lease = yield* c.lease.acquire(taskId, { host: "cli", actor: user })
      const cancelled = yield* c.cancel(taskId, "superseded", { actor: user, leaseEpoch: lease.epoch })
      expect(cancelled.events).toEqual(["TaskCancelled", "LeaseReleased"])
      expect(cancelled.task.state).toBe("CANCELLED")
      expect(cancelled.task.lease.status).toBe("free")
      const acquire = yield* Effect.flip(c.lease.acquire(taskId, { host: "cli", actor: user }))
      expect(acquire._tag).toBe("@ratchet/kernel/TaskCommandRefused")
      const takeover = yield* Effect.flip(c.lease.takeover(taskId, { host: "cli", actor: user }))
      expect(takeover._tag).toBe("@ratchet/kernel/TaskCommandRefused")
      expect(takeover.message).toContain("terminal")
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("blank text is refused naming the argument, and nothing is written", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const created = yield* c.createTask({ goal: "blank" }, asUser)
      const taskId = created.task.taskId
      const asked = yield* c.ask(taskId, { text: "Which timezone?", blocking: true }, asUser)
      const before = yield* versionOf(c, taskId)
      const table: ReadonlyArray<readonly [string, Effect.Effect<unknown, { readonly _tag: string; readonly message: string }>]> = [
        ["<text>", c.ask(taskId, { text: "  ", blocking: false }, asUser)],
        ["<text>", c.answer(taskId, { questionId: asked.questionId, text: "", source: "user" }, asUser)],
        ["<sentence>", c.restate(taskId, " \t ", asUser)],
        ["--reason", c.pause(taskId, "", asUser)],
        ["--reason", c.cancel(taskId, "   ", asUser)],
        ["--reason", c.reopen(taskId, { reason: "" }, asUser)],
        ["--resolution", c.unblock(taskId, { to: "RUNNING", resolution: "" }, asUser)]
      ]
      for (const [field, attempt] of table) {
        const error = yield* Effect.flip(attempt)
        expect(error._tag).toBe("@ratchet/controller/InvalidRequest")
        expect(error.message.startsWith(`${field}: is empty.`)).toBe(true)
      }
      expect(yield* versionOf(c, taskId)).toBe(before)
      expect((yield* c.status(taskId)).brief.openBlocking).toEqual([asked.questionId])
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("a rewind is refused where the task could move (INTERVIEWING, SPEC_READY) and writes nothing", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const created = yield* c.createTask({ goal: "Make the date test deterministic" }, asUser)
      const interviewing = yield* Effect.flip(c.rewind(created.task.taskId, 1, asUser, { digest: anyDigest, channel: "terminal" }))
      expect(interviewing).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", code: "forbidden_transition", state: "INTERVIEWING" })
      expect(interviewing.message).toContain("PAUSED, BLOCKED, FAILED or VERIFYING")
      const taskId = yield* toSpecReady(c, temp("ratchet-controller-files-"))
      const before = yield* versionOf(c, taskId)
      const specReady = yield* Effect.flip(c.rewind(taskId, 1, asUser, { digest: anyDigest, channel: "terminal" }))
      expect(specReady).toMatchObject({ code: "forbidden_transition", state: "SPEC_READY" })
      expect(yield* versionOf(c, taskId)).toBe(before)
      expect((yield* c.branches(taskId)).branches.map((b) => b.branch)).toEqual(["main"])
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("the log streams every event of the task in LSN order", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const created = yield* c.createTask({ goal: "log" }, asUser)
      yield* c.ask(created.task.taskId, { text: "?", blocking: false }, asUser)
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(yield* c.log(created.task.taskId)))
      expect(events.map((e: EventStore.StoredEvent) => e.event._tag)).toEqual(["TaskCreated", "InterviewBegun", "QuestionAsked"])
      const lsns = events.map((e) => e.lsn)
      expect([...lsns].sort((a, b) => a - b)).toEqual(lsns)
    }).pipe(Effect.provide(controllerLayer())))

  it.effect("writes the task's projections after a change, and the next change rewrites them", () =>
    Effect.gen(function*() {
      const root = temp("ratchet-controller-projections-")
      yield* Effect.gen(function*() {
        const c = yield* Controller.Controller
        const created = yield* c.createTask({ goal: "project me" }, asUser)
        const directory = path.join(root, ".ratchet", "tasks", `project-me--${created.task.taskId}`)
        expect(created.projection).toBe(directory)
        const brief = fs.readFileSync(path.join(directory, "brief.md"), "utf8")
        expect(brief).toContain("project me")
        yield* c.ask(created.task.taskId, { text: "What about leap years?", blocking: true }, asUser)
        expect(fs.readFileSync(path.join(directory, "brief.md"), "utf8")).toContain("What about leap years?")
      }).pipe(Effect.provide(controllerLayer({ root })))
    }))

  it.effect("a projection that cannot be written is a warning, not a failed command", () =>
    Effect.gen(function*() {
      const root = temp("ratchet-controller-blocked-")
      // `.ratchet` is a file: no directory can be made under it.
      fs.writeFileSync(path.join(root, ".ratchet"), "not a directory")
      yield* Effect.gen(function*() {
        const c = yield* Controller.Controller
        const created = yield* c.createTask({ goal: "warn" }, asUser)
        expect(created.task.state).toBe("INTERVIEWING")
        expect(created.projection).toBeNull()
        expect(created.warnings).toHaveLength(1)
      }).pipe(Effect.provide(controllerLayer({ root })))
    }))
})

describe("slugOf and confirmationOf", () => {
  it("slugs a goal by hand-checked examples", () => {
    const table: ReadonlyArray<readonly [string, string]> = [
      ["Make the flaky date test deterministic", "make-the-flaky-date-test-deterministic"],
      ["  Ünïcödé  ÅND  spaces ", "unicode-and-spaces"],
      ["!!!", "task"],
      ["日本語のゴール", "task"],
      ["a".repeat(60), "a".repeat(40)],
      ["word ".repeat(20), "word-word-word-word-word-word-word-word"]
    ]
    for (const [goal, slug] of table) expect(Controller.slugOf(goal)).toBe(slug)
  })

  it("takes the first 8 hex characters after the algorithm", () => {
    expect(Controller.confirmationOf("sha256:0123456789abcdef")).toBe("01234567")
  })
})
