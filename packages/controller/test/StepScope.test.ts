/**
 * The pieces of a manual step's scope check, each from tables written by hand: which boundary is
 * an attempt's start (and which ones never are), whose lease wrote it, the blocker a violation
 * raises, and the tree a boundary names through the blob store (a real one, on disk).
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import * as BlobStore from "@ratchet/storage/BlobStore"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as FileBlobStore from "@ratchet/storage/FileBlobStore"
import * as Effect from "effect/Effect"
import type * as Scope from "../src/Scope.js"
import * as StepScope from "../src/StepScope.js"
import * as WorkTree from "../src/WorkTree.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-stepscope-")

const actor: Event.Actor = { kind: "runner", id: "runner-1" }
const digest = `sha256:${"a".repeat(64)}`

/** A stored event at `version` (LSNs far apart, as other streams' events interleave). */
const stored = (version: number, event: Record<string, unknown>, epoch: number | null = 4): EventStore.StoredEvent => ({
  lsn: version * 10,
  projectId: "prj-scope",
  streamId: "t-scope",
  branch: "main",
  version,
  epoch,
  operationId: `op-${version}`,
  recordedAt: version,
  event: { version: 1, actor, at: version, ...event } as Event.Event
})

const opened = (version: number, stepId: string, attempt: number, runId = "run-1") =>
  stored(version, { _tag: "AttemptTransitioned", runId, stepId, attempt, from: "Pending", to: "Running" })
const ended = (version: number, stepId: string, attempt: number, runId = "run-1") =>
  stored(version, { _tag: "AttemptTransitioned", runId, stepId, attempt, from: "Running", to: "Succeeded" })
const boundary = (version: number, nextStep: string | null, runId = "run-1", epoch = 4) =>
  stored(version, {
    _tag: "BoundaryRecorded",
    runId,
    head: `head-${version}`,
    dirtyPaths: [],
    dirtyDigest: digest,
    specDigest: digest,
    planDigest: digest,
    nextStep
  }, epoch)
const note = (version: number, stepId: string, attempt: number) =>
  stored(version, { _tag: "AttemptNoted", runId: "run-1", stepId, attempt, note: "a note" })

const fix = (attempt: number) => ({ runId: "run-1", stepId: "fix", attempt })

describe("StepScope.startOf", () => {
  // [what, the stream, the attempt asked about, the start's version and kind, or null]
  const table: ReadonlyArray<readonly [string, ReadonlyArray<EventStore.StoredEvent>, ReturnType<typeof fix>, readonly [number, "opened" | "before"] | null]> = [
    ["the boundary recorded right after the attempt opened", [opened(5, "fix", 1), boundary(6, "fix")], fix(1), [6, "opened"]],
    [
      "not a pause's later boundary, which holds the worker's changes: the previous step's end instead",
      [boundary(3, "fix"), opened(5, "fix", 1), note(6, "fix", 1), boundary(7, "fix")],
      fix(1),
      [3, "before"]
    ],
    [
      "the runner stopped between opening and recording: the run's last boundary before the attempt",
      [boundary(2, "prepare"), ended(3, "prepare", 1), boundary(4, "fix"), opened(5, "fix", 1)],
      fix(1),
      [4, "before"]
    ],
    [
      "a successor's own boundary, not its predecessor's",
      [opened(2, "fix", 1), boundary(3, "fix"), note(4, "fix", 1), opened(8, "fix", 2), boundary(9, "fix")],
      fix(2),
      [9, "opened"]
    ],
    [
      "the predecessor's, asked about the predecessor",
      [opened(2, "fix", 1), boundary(3, "fix"), note(4, "fix", 1), opened(8, "fix", 2), boundary(9, "fix")],
      fix(1),
      [3, "opened"]
    ],
    ["an event missing between them (a gap in versions): not right after", [boundary(1, "fix"), opened(5, "fix", 1), boundary(7, "fix")], fix(1), [1, "before"]],
    ["another run's boundary never counts", [boundary(3, "fix", "run-0"), opened(5, "fix", 1), boundary(6, "fix", "run-0")], fix(1), null],
    ["no boundary at all (the first step, its runner stopped before recording it)", [opened(5, "fix", 1)], fix(1), null],
    ["an attempt that never opened", [boundary(3, "fix"), boundary(4, "fix")], fix(1), null],
    ["another step's opening is not this step's", [opened(5, "review", 1), boundary(6, "review")], fix(1), null],
    ["another attempt's opening is not this attempt's", [opened(5, "fix", 1), boundary(6, "fix")], fix(2), null]
  ]
  for (const [what, events, at, expected] of table) {
    it(what, () => {
      const start = StepScope.startOf(events, at)
      expect(start === null ? null : [start.boundary.head, start.kind]).toEqual(expected === null ? null : [`head-${expected[0]}`, expected[1]])
      if (start !== null) expect(start.lsn).toBe(expected![0] * 10)
    })
  }
})

describe("StepScope.ownerAt", () => {
  const owner = (workspaceId: string): Event.LeaseOwner => ({ workspaceId, host: "runner", pid: 1, processStartedAt: 1, sessionRef: "box" })
  const events = [
    stored(1, { _tag: "LeaseAcquired", epoch: 1, owner: owner("ws-a"), heartbeatMs: 1, graceMs: 1 }),
    stored(2, { _tag: "LeaseReleased", epoch: 1 }),
    stored(3, { _tag: "LeaseTakenOver", epoch: 2, owner: owner("ws-b"), displaced: owner("ws-a"), heartbeatMs: 1, graceMs: 1 })
  ]
  it("names the owner of the lease written at an epoch, acquired or taken over", () => {
    expect(StepScope.ownerAt(events, 1)?.workspaceId).toBe("ws-a")
    expect(StepScope.ownerAt(events, 2)?.workspaceId).toBe("ws-b")
  })
  it("names nobody for an epoch no lease event holds, or for no epoch", () => {
    expect(StepScope.ownerAt(events, 3)).toBeNull()
    expect(StepScope.ownerAt(events, null)).toBeNull()
    expect(StepScope.ownerAt([], 1)).toBeNull()
  })
})

describe("StepScope.blocker", () => {
  const outside = (path: string): Scope.Violation => ({ path, reason: "outside_allowed", pattern: null })
  it("names each path and why, and the two ways on", () => {
    const blocker = StepScope.blocker("t-1", "fix", [outside("README.md"), { path: "test/fixtures/a.json", reason: "forbidden", pattern: "test/fixtures/**" }])
    expect(blocker).toEqual({
      category: "scope_violation",
      owner: "user",
      requiredAction:
        "Step fix changed paths outside the contract's scope: README.md (outside allowedScope), test/fixtures/a.json (forbidden by test/fixtures/**). Undo them (then: ratchet unblock t-1 --to RUNNING --resolution \"…\"), or widen the scope: ratchet reopen t-1 --reason \"…\"",
      lastEvidence: ["README.md", "test/fixtures/a.json"]
    })
  })
  it("names ten paths and counts the rest; the evidence lists fifty", () => {
    const many = Array.from({ length: 60 }, (_, i) => outside(`docs/${String(i).padStart(2, "0")}.md`))
    const blocker = StepScope.blocker("t-1", "fix", many)
    expect(blocker.requiredAction).toContain("docs/09.md (outside allowedScope) and 50 more.")
    expect(blocker.requiredAction).not.toContain("docs/10.md")
    expect(blocker.lastEvidence).toHaveLength(50)
  })
  it("says which paths it could not tell about", () => {
    const one = StepScope.blocker("t-1", "fix", [outside("NOTES.md"), outside("README.md")], ["NOTES.md", "test/a.js"])
    expect(one.requiredAction).toContain(
      "(one of them was already changed when the step started, and the contents then were not stored, so it counts as changed: NOTES.md)"
    )
    const two = StepScope.blocker("t-1", "fix", [outside("NOTES.md"), outside("README.md")], ["NOTES.md", "README.md"])
    expect(two.requiredAction).toContain("2 of them were already changed")
    expect(StepScope.blocker("t-1", "fix", [outside("README.md")], ["test/a.js"]).requiredAction).not.toContain("already changed")
  })
  it("keeps the action within what a blocker holds (4096 characters), whatever the paths' length", () => {
    const long = Array.from({ length: 10 }, (_, i) => outside(`${String(i)}/${"x".repeat(1000)}`))
    const blocker = StepScope.blocker("t-1", "fix", long)
    expect(blocker.requiredAction.length).toBe(4096)
    expect(blocker.requiredAction.endsWith("…")).toBe(true)
  })
})

describe("StepScope.treeAt", () => {
  const blobs = () => FileBlobStore.layer(temp())
  const tree: WorkTree.Observation = { head: "c0ffee", dirty: new Map([["NOTES.md", "1111"], ["test/a.js", "deleted"]]) }
  const recorded = (observation: WorkTree.Observation): StepScope.Boundary => ({
    _tag: "BoundaryRecorded",
    version: 1,
    actor,
    at: 1,
    runId: "run-1",
    head: observation.head,
    dirtyPaths: [...observation.dirty.keys()],
    dirtyDigest: WorkTree.dirtyDigest(observation),
    specDigest: digest as never,
    planDigest: digest as never,
    nextStep: "fix"
  })

  it.effect("reads back a stored tree exactly, through the boundary's own digest", () =>
    Effect.gen(function*() {
      yield* StepScope.storeTree(tree)
      const read = yield* StepScope.treeAt(recorded(tree))
      expect(read.exact).toBe(true)
      expect(read.tree).toEqual(tree)
    }).pipe(Effect.provide(blobs())))

  it.effect("needs no blob for a clean tree", () =>
    Effect.gen(function*() {
      const clean = { head: null, dirty: new Map<string, string>() }
      yield* StepScope.storeTree(clean)
      const read = yield* StepScope.treeAt(recorded(clean))
      expect(read).toEqual({ tree: clean, exact: true })
    }).pipe(Effect.provide(blobs())))

  it.effect("without its blob, knows the paths but not their contents", () =>
    Effect.gen(function*() {
      const read = yield* StepScope.treeAt(recorded(tree))
      expect(read.exact).toBe(false)
      expect([...read.tree.dirty.keys()]).toEqual(["NOTES.md", "test/a.js"])
      expect([...read.tree.dirty.values()]).not.toContain("1111")
    }).pipe(Effect.provide(blobs())))

  it.effect("does not take a blob whose paths are not the boundary's, nor one that is not a tree", () =>
    Effect.gen(function*() {
      const store = yield* BlobStore.BlobStore
      // A boundary claiming another path list under the digest of a stored tree.
      yield* StepScope.storeTree(tree)
      const claimed = { ...recorded(tree), dirtyPaths: ["NOTES.md", "other.md"] }
      expect((yield* StepScope.treeAt(claimed)).exact).toBe(false)
      // Bytes that are no tree, stored under their own digest.
      for (const text of ["{\"NOTES.md\":\"1111\"}", "[[\"NOTES.md\"]]", "not json", "[[\"NOTES.md\",\"1111\"],[\"test/a.js\",7]]"]) {
        const ref = yield* store.put(new TextEncoder().encode(text))
        const read = yield* StepScope.treeAt({ ...recorded(tree), dirtyDigest: ref })
        expect(read.exact).toBe(false)
      }
    }).pipe(Effect.provide(blobs())))
})
