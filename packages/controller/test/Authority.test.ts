/**
 * Person-only acts through the controller over a real SQLite store: the project's approvers (the
 * first registered on first use, others signed in and out, a chain taken from the committed file
 * only when it continues the store's or a person confirms a first one), and approvals, unblocks
 * and rewinds that count only when signed by a registered approver's key.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import type * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import { SqliteStore } from "@ratchet/storage-sqlite"
import * as Signing from "@ratchet/testkit/Signing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Controller from "../src/Controller.js"
import * as ProjectApprovers from "../src/ProjectApprovers.js"
import type * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-authority-")

const ana: Event.Actor = { kind: "user", id: "ana" }
const anaKey = Signing.signerOf(Signing.keyOf(11), "ana")
const bo = Signing.signerOf(Signing.keyOf(12), "bo")
const mallory = Signing.signerOf(Signing.keyOf(13), "ana")
const asAna: Controller.Invocation = { actor: ana, signer: anaKey }
/** The agent's shell: it claims to be ana, and has no key. */
const asAgentShell: Controller.Invocation = { actor: ana }
const projectId = "prj-authority"

const projectAt = (root: string): Workspace.Located => ({
  root,
  projectFile: path.join(root, ".ratchet", "project.json"),
  project: { schemaVersion: 1, projectId, displayName: "test", createdAt: "2026-12-05T00:00:00.000Z" },
  workspaceId: "ws-authority",
  git: false
})

/** A controller over a store in `home`, for the project checked out at `root`. */
const world = (home: string, root: string) => {
  const store = SqliteStore.layer({ directory: home })
  const leases = LeaseManager.layer({ heartbeatMs: 1_000, graceMs: 2_000 }).pipe(Layer.provide(store))
  return Layer.mergeAll(
    Controller.layer.pipe(Layer.provide(Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, projectAt(root))))),
    store
  )
}

const fresh = () => world(temp(), temp())

const codes = (error: unknown): ReadonlyArray<string> =>
  (error as { readonly _tag?: string })._tag === "@ratchet/kernel/TaskCommandHeld"
    ? (error as { readonly gate: { readonly reasons: ReadonlyArray<{ readonly code: string }> } }).gate.reasons.map((reason) => reason.code)
    : []

/** A task with a restatement waiting for its approval. */
const restated = Effect.gen(function*() {
  const c = yield* Controller.Controller
  const taskId = (yield* c.createTask({ goal: "Sign everything" }, asAna)).task.taskId
  yield* c.restate(taskId, "Every approval is signed.", asAna)
  return taskId
})

const approveRestatement = (taskId: string, invocation: Controller.Invocation) =>
  Effect.flatMap(Controller.Controller, (c) =>
    Effect.flatMap(c.approvalSubject(taskId, "restatement"), (shown) =>
      c.approve(taskId, { subject: "restatement", digest: shown.digest, channel: "terminal" }, invocation)))

describe("the project's approvers", () => {
  it.effect("the first key registered is trusted on first use, recorded in the store and written to the committed file", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      expect((yield* c.approvers.list).warning).toContain("no approvers yet")
      const first = yield* c.approvers.register(anaKey)
      expect(first).toMatchObject({ registered: true, approver: { id: "ana", key: anaKey.key } })
      const listing = yield* c.approvers.list
      expect(listing.approvers).toEqual([{ id: "ana", key: anaKey.key }])
      expect(listing.file).toEqual({ _tag: "same" })
      expect(listing.warning).toBeNull()
      const file = JSON.parse(fs.readFileSync(path.join(c.project.root, ".ratchet", "approvers.json"), "utf8"))
      expect(file).toMatchObject({ schemaVersion: 1, projectId, entries: [{ seq: 1, op: "add", approver: { id: "ana" }, prev: null }] })
      // Registering again writes nothing.
      expect((yield* c.approvers.register(anaKey)).registered).toBe(false)
      expect((yield* c.approvers.list).length).toBe(1)
    }).pipe(Effect.provide(fresh())))

  it.effect("nobody else registers themselves once there is an approver: the refusal names who can add them", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(anaKey)
      const refused = yield* Effect.flip(c.approvers.register(bo))
      expect(refused.message).toContain("already has 1 approver(s) (ana)")
      expect(refused.message).toContain(`ratchet approver add bo ${bo.key}`)
      const notApprover = yield* Effect.flip(c.approvers.add(bo, { id: "eve", key: Signing.keyOf(14).key }))
      expect(notApprover.message).toContain("is not one of this project's approvers")
      expect((yield* c.approvers.list).approvers.map((a) => a.id)).toEqual(["ana"])
    }).pipe(Effect.provide(fresh())))

  it.effect("an approver signs another in and out; the last one cannot be removed", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(anaKey)
      yield* c.approvers.add(anaKey, { id: "bo", key: bo.key })
      expect((yield* c.approvers.list).approvers.map((a) => a.id)).toEqual(["ana", "bo"])
      yield* c.approvers.remove(bo, "ana")
      expect((yield* c.approvers.list).approvers.map((a) => a.id)).toEqual(["bo"])
      const last = yield* Effect.flip(c.approvers.remove(bo, "bo"))
      expect(last._tag).toBe("@ratchet/kernel/ApproversChainError")
      expect(last.message).toContain("removes the last approver")
      const unknown = yield* Effect.flip(c.approvers.remove(bo, "zed"))
      expect(unknown.message).toContain("\"zed\" is not an approver of this project")
    }).pipe(Effect.provide(fresh())))

  it.effect("another store of the same checkout takes the committed chain only when a person confirms its head", () =>
    Effect.gen(function*() {
      const root = temp()
      yield* Effect.flatMap(Controller.Controller, (c) =>
        Effect.zipRight(c.approvers.register(anaKey), c.approvers.add(anaKey, { id: "bo", key: bo.key }))).pipe(Effect.provide(world(temp(), root)))
      yield* Effect.gen(function*() {
        const c = yield* Controller.Controller
        const listing = yield* c.approvers.list
        expect(listing.approvers).toEqual([])
        expect(listing.file._tag).toBe("ahead")
        expect(listing.warning).toContain("never trusted")
        const adoption = yield* c.approvers.adoption
        expect(adoption._tag).toBe("first")
        const unconfirmed = yield* Effect.flip(c.approvers.trust(ana, null))
        expect(unconfirmed.message).toContain("confirm its head")
        const wrong = yield* Effect.flip(c.approvers.trust(ana, `sha256:${"0".repeat(64)}`))
        expect(wrong._tag).toBe("@ratchet/controller/InvalidRequest")
        expect((yield* c.approvers.list).approvers).toEqual([])
        const head = adoption._tag === "first" ? adoption.trust.head : null
        expect((yield* c.approvers.trust(ana, head)).taken).toBe(2)
        expect((yield* c.approvers.list).approvers.map((a) => a.id)).toEqual(["ana", "bo"])
        expect((yield* c.approvers.trust(ana, null)).taken).toBe(0)
      }).pipe(Effect.provide(world(temp(), root)))
    }))

  it.effect("a hand-edited file (an agent adding its own key) is never trusted: diverged, refused, and the store's approvers apply", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(anaKey)
      const file = path.join(c.project.root, ".ratchet", "approvers.json")
      const original = JSON.parse(fs.readFileSync(file, "utf8"))
      // The agent replaces the chain with one of its own making (its own genesis).
      const forged = { ...original, entries: [{ ...original.entries[0], approver: { id: "ana", key: mallory.key }, signature: { ...original.entries[0].signature, key: mallory.key } }] }
      fs.writeFileSync(file, JSON.stringify(forged))
      const listing = yield* c.approvers.list
      expect(listing.approvers).toEqual([{ id: "ana", key: anaKey.key }])
      expect(listing.warning).toContain("approvers.json")
      const trust = yield* Effect.flip(c.approvers.trust(ana, null))
      expect(trust._tag).toBe("@ratchet/kernel/ApproversChainError")
      // Garbage in the file: the store's approvers still apply, and the warning says so.
      fs.writeFileSync(file, "{\"schemaVersion\": 1, \"projectId\": ")
      expect((yield* c.approvers.list).file._tag).toBe("invalid")
      yield* c.approvers.writeBack
      expect((yield* c.approvers.list).file).toEqual({ _tag: "same" })
    }).pipe(Effect.provide(fresh())))

  it.effect("while the store's approvers and the committed file disagree, no signature counts: the refusal names both chains", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(anaKey)
      const taskId = yield* restated
      fs.rmSync(path.join(c.project.root, ".ratchet", "approvers.json"))
      const refused = yield* Effect.flip(approveRestatement(taskId, asAna))
      expect(refused._tag).toBe("@ratchet/controller/InvalidRequest")
      expect(refused.message).toContain("approvers_diverged")
      expect(refused.message).toContain("the file is missing")
      expect(refused.message).toMatch(/store holds chain sha256:[0-9a-f]{16} \(1 entry; trusts ana/)
      expect(refused.message).toContain("git log -p -- .ratchet/approvers.json")
      expect((yield* c.approvers.list).warning).toContain("approvers_diverged")
      // The person finds the store right and writes it back: the same approval counts again.
      yield* c.approvers.writeBack
      yield* approveRestatement(taskId, asAna)
    }).pipe(Effect.provide(fresh())))

  it.effect("a row written straight into the store's approvers stream breaks the chain: nobody is trusted, nothing approves", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(anaKey)
      const chain = yield* ProjectApprovers.recorded(projectId)
      // An entry signed by a key that is not an approver, appended behind the controller's back.
      const bad = { seq: 2, op: "add" as const, approver: { id: "mallory", key: mallory.key }, at: 1, prev: chain.trust.head }
      yield* ProjectApprovers.append(chain, [{ ...bad, signature: mallory.sign(new Uint8Array([1])) }], ana, 1)
      const broken = yield* ProjectApprovers.recorded(projectId)
      expect(broken.trust.approvers).toEqual([])
      expect(broken.fault?.reason).toBe("signer_not_approver")
      expect((yield* c.approvers.list).warning).toContain("does not verify")
      const taskId = yield* restated
      expect(codes(yield* Effect.flip(approveRestatement(taskId, asAna)))).toEqual(["approver_unknown"])
    }).pipe(Effect.provide(fresh())))
})

describe("approvals need a registered approver's key", () => {
  it.effect("ana's signed approval counts and is recorded as her, whatever the invocation's actor claims", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(anaKey)
      const taskId = yield* restated
      const written = yield* approveRestatement(taskId, { actor: { kind: "agent", id: "claims-to-be-someone" }, signer: anaKey })
      expect(written.events).toEqual(["RestatementApproved"])
      expect((yield* c.status(taskId)).brief.restatementApproved).toBe(true)
    }).pipe(Effect.provide(fresh())))

  it.effect("the agent's shell, with a terminal and ana's name but no key, is held: receipt_unsigned, nothing written", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(anaKey)
      const taskId = yield* restated
      const before = (yield* c.status(taskId)).version
      expect(codes(yield* Effect.flip(approveRestatement(taskId, asAgentShell)))).toEqual(["receipt_unsigned"])
      expect((yield* c.status(taskId)).version).toBe(before)
    }).pipe(Effect.provide(fresh())))

  it.effect("a key of the agent's own making (even named ana) is held: approver_unknown", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      yield* c.approvers.register(anaKey)
      const taskId = yield* restated
      expect(codes(yield* Effect.flip(approveRestatement(taskId, { actor: ana, signer: mallory })))).toEqual(["approver_unknown"])
    }).pipe(Effect.provide(fresh())))

  it.effect("with no approvers registered, nothing approves; the action says ratchet approver init", () =>
    Effect.gen(function*() {
      const taskId = yield* restated
      const held = yield* Effect.flip(approveRestatement(taskId, asAna))
      expect(codes(held)).toEqual(["approver_unknown"])
      expect(held.message).toContain("not one of this project's approvers")
    }).pipe(Effect.provide(fresh())))
})

describe("a rewind is a person's signed act, recorded on the new branch", () => {
  const paused = Effect.gen(function*() {
    const c = yield* Controller.Controller
    yield* c.approvers.register(anaKey)
    const taskId = yield* restated
    yield* c.ask(taskId, { text: "Which clock?", blocking: false }, asAna)
    yield* c.pause(taskId, "lunch", asAna)
    return taskId
  })

  it.effect("refused without a key (the agent's shell), refused for a stale confirmation, recorded with one", () =>
    Effect.gen(function*() {
      const c = yield* Controller.Controller
      const taskId = yield* paused
      const shown = yield* c.rewindSubject(taskId, 3)
      const unsigned = yield* Effect.flip(c.rewind(taskId, 3, asAgentShell, { digest: shown.digest, channel: "terminal" }))
      expect(unsigned.message).toContain("carries no approver's signature")
      const foreign = yield* Effect.flip(c.rewind(taskId, 3, { actor: ana, signer: mallory }, { digest: shown.digest, channel: "terminal" }))
      expect(foreign.message).toContain("not one of this project's approvers")
      const stale = yield* Effect.flip(c.rewind(taskId, 3, asAna, { digest: `sha256:${"1".repeat(64)}` as Digest.Digest, channel: "terminal" }))
      expect(stale.message).toContain("does not match this rewind")
      const offTerminal = yield* Effect.flip(c.rewind(taskId, 3, asAna, { digest: shown.digest, channel: "non-interactive" }))
      expect(offTerminal.message).toContain("interactive terminal")
      expect((yield* c.branches(taskId)).branches.map((b) => b.branch)).toEqual(["main"])
      const rewound = yield* c.rewind(taskId, 3, asAna, { digest: shown.digest, channel: "terminal" })
      expect(rewound.branch).toBe("rewind-1")
      expect(rewound.events).toEqual(["TaskRewound"])
      const recorded = Chunk.toReadonlyArray(yield* Stream.runCollect(yield* c.log(taskId))).at(-1)?.event
      expect(recorded?._tag).toBe("TaskRewound")
      expect(recorded?._tag === "TaskRewound" && [recorded.parent, recorded.atLsn, recorded.receipt.subject, recorded.receipt.actor, recorded.receipt.signature?.key]).toEqual([
        "main",
        3,
        "rewind",
        ana,
        anaKey.key
      ])
    }).pipe(Effect.provide(fresh())))
})
