/**
 * Shared fixtures of the verifier tests: an in-memory blob store, the actors, a spec and plan
 * written out as literals, a task log with a run (failed attempts, settled, abandoned and
 * dispatched intents, command exits, boundaries) frozen by a VerificationStarted at LSN 580, more
 * log above that snapshot, temporary workspaces, and a verifier context built from the episode.
 *
 * Nothing here computes an expected value: the tests write those out by hand.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import type * as Plan from "@ratchet/kernel/Plan"
import type * as Spec from "@ratchet/kernel/Spec"
import * as BlobStore from "@ratchet/storage/BlobStore"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as Events from "@ratchet/testkit/Events"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as EpisodeView from "../src/EpisodeView.js"
import type * as Evidence from "../src/Evidence.js"
import type * as Verifier from "../src/Verifier.js"

// ---------------------------------------------------------------------------------------------
// Blobs
// ---------------------------------------------------------------------------------------------

/** An in-memory blob store: sha256 → bytes, with every `put` recorded in order. */
export interface MemoryBlobs extends BlobStore.Service {
  readonly stored: Map<string, Uint8Array>
  readonly puts: Array<string>
}

const blobRef = /^sha256:[0-9a-f]{64}$/

export const memoryBlobs = (): MemoryBlobs => {
  const stored = new Map<string, Uint8Array>()
  const puts: Array<string> = []
  return {
    stored,
    puts,
    put: (bytes) =>
      Effect.sync(() => {
        const ref = `sha256:${createHash("sha256").update(bytes).digest("hex")}`
        stored.set(ref, Uint8Array.from(bytes))
        puts.push(ref)
        return ref as BlobStore.BlobRef
      }),
    get: (ref) =>
      Effect.suspend((): Effect.Effect<Uint8Array, BlobStore.BlobNotFound | BlobStore.InvalidBlobRef> => {
        if (!blobRef.test(ref)) return Effect.fail(new BlobStore.InvalidBlobRef({ ref }))
        const bytes = stored.get(ref)
        return bytes === undefined ? Effect.fail(new BlobStore.BlobNotFound({ ref })) : Effect.succeed(Uint8Array.from(bytes))
      }),
    has: (ref) =>
      Effect.suspend(() => blobRef.test(ref) ? Effect.succeed(stored.has(ref)) : Effect.fail(new BlobStore.InvalidBlobRef({ ref })))
  }
}

export const utf8 = (bytes: Uint8Array): string => new TextDecoder().decode(bytes)

/** The text of a blob in `blobs`, or a thrown error when there is none. */
export const blobText = (blobs: MemoryBlobs, ref: string | null): string => {
  const bytes = ref === null ? undefined : blobs.stored.get(ref)
  if (bytes === undefined) throw new Error(`no blob ${ref} in the test store`)
  return utf8(bytes)
}

// sha256 of "hello\n", "oops\n" and "built\n", taken with sha256sum.
export const HELLO_SHA = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
export const OOPS_SHA = "fe19778cf1ce280658154f2b9c01ffbccd825a23460141dcf3794e7a2c0eb629"
export const BUILT_SHA = "56f6e6304d02d413bb7d5d463ac5cdc58551266dc7269b467fc385815f39b913"

// ---------------------------------------------------------------------------------------------
// Identities, digests, contract
// ---------------------------------------------------------------------------------------------

export const alice: Event.Actor = { kind: "user", id: "alice" }
export const bob: Event.Actor = { kind: "user", id: "bob" }
export const verifier1: Event.Actor = { kind: "verifier", id: "verifier-1" }
export const runner1: Event.Actor = { kind: "runner", id: "runner-1" }
export const runner2: Event.Actor = { kind: "runner", id: "runner-2" }
export const runner3: Event.Actor = { kind: "runner", id: "runner-3" }
export const agent1: Event.Actor = { kind: "agent", id: "agent-1" }
export const system: Event.Actor = { kind: "system", id: "ratchet" }

const digest = (hex: string): Digest.Digest => Digest.Digest.make(`sha256:${hex.repeat(64)}`)

export const SPEC_DIGEST = digest("a")
export const PLAN_DIGEST = digest("b")
export const OTHER_SPEC_DIGEST = digest("c")
export const SPEC2_DIGEST = digest("d")
export const PLAN2_DIGEST = digest("e")
export const DIRTY1 = digest("1")
export const DIRTY2 = digest("2")
export const DIRTY3 = digest("3")
export const REF1 = digest("4")
export const REF2 = digest("5")
export const REF3 = digest("6")
export const REF4 = digest("7")
export const REF5 = digest("8")

export const TASK_ID = "t-1"
export const RUN_ID = "run-1"
export const SNAPSHOT = 580

export const ac001: Spec.AcceptanceCriterion = {
  id: "AC-001",
  outcome: "the build succeeds",
  required: true,
  verify: { command: "npm run build" }
}
export const ac002: Spec.AcceptanceCriterion = {
  id: "AC-002",
  outcome: "status --json prints one JSON document",
  required: true,
  verify: { command: "npm test", junit: "reports/junit.xml" }
}
export const ac003: Spec.AcceptanceCriterion = {
  id: "AC-003",
  outcome: "the guide mentions the flag",
  required: false,
  manual: { procedure: "Read docs/guide.md and find --json", observer: "tech writer" }
}

export const spec: Spec.Spec = {
  goal: "Add a --json flag to the status command",
  nonGoals: ["YAML output"],
  constraints: ["keep the human output unchanged"],
  decisions: ["print with JSON.stringify"],
  context: { relevantPaths: ["src/status.ts"], verifiedFacts: ["status prints a table today"] },
  acceptanceCriteria: [ac001, ac002, ac003],
  execution: { allowedScope: ["src/**", "docs/**"], forbiddenScope: ["dist/**"] }
}

export const plan: Plan.Plan = {
  specDigest: SPEC_DIGEST,
  steps: [
    { id: "build", title: "Add the flag", acRefs: ["AC-001"], run: { command: "npm run build" } },
    { id: "test", title: "Test the output", acRefs: ["AC-001", "AC-002"], run: { command: "npm test" } },
    { id: "docs", title: "Document the flag", acRefs: ["AC-003"], manual: { instructions: "Describe --json in docs/guide.md" } }
  ]
}

// ---------------------------------------------------------------------------------------------
// The log
// ---------------------------------------------------------------------------------------------

const m = (actor: Event.Actor, at: number) => ({ actor, at })
const v1 = (actor: Event.Actor, at: number) => ({ version: 1 as const, actor, at })

/** The stored form of `[lsn, event]` pairs read through branch `main`. */
export const stored = (entries: ReadonlyArray<readonly [number, Event.Event]>): Array<EventStore.StoredEvent> =>
  entries.map(([lsn, event], index) => ({
    lsn,
    projectId: "p-1",
    streamId: TASK_ID,
    branch: "main",
    version: index + 1,
    epoch: null,
    operationId: `op-${lsn}`,
    recordedAt: 1_700_000_000_000 + lsn,
    event
  }))

const b1 = { runId: RUN_ID, stepId: "build", attempt: 1 }
const b2 = { runId: RUN_ID, stepId: "build", attempt: 2 }
const t1 = { runId: RUN_ID, stepId: "test", attempt: 1 }
const t2 = { runId: RUN_ID, stepId: "test", attempt: 2 }
const t3 = { runId: RUN_ID, stepId: "test", attempt: 3 }
const d1 = { runId: RUN_ID, stepId: "docs", attempt: 1 }
const digests = { specDigest: SPEC_DIGEST, planDigest: PLAN_DIGEST }

/** From TaskCreated to the run's lifecycle events: LSN 10 to 80. */
const lifecycle = (): Array<readonly [number, Event.Event]> => [
  [10, Events.taskCreated({ taskId: TASK_ID, projectId: "p-1" }, m(alice, 100))],
  [20, Events.interviewBegun(m(alice, 110))],
  [30, { _tag: "SpecProposed", ...v1(agent1, 120), revision: 1, digest: SPEC_DIGEST, spec, voidedApproval: false }],
  [40, {
    _tag: "SpecApproved",
    ...v1(alice, 130),
    version: 2,
    revision: 1,
    digest: SPEC_DIGEST,
    receipt: { subject: "spec", digest: SPEC_DIGEST, actor: alice, channel: "terminal", at: 130, signature: null }
  }],
  [50, {
    _tag: "PreflightRecorded",
    ...v1(agent1, 140),
    specDigest: SPEC_DIGEST,
    observation: { head: "c0ffee0", dirtyPaths: [], missingPaths: [], invalidScopes: [] }
  }],
  [60, { _tag: "PlanProposed", ...v1(agent1, 150), revision: 1, digest: PLAN_DIGEST, plan }],
  [70, {
    _tag: "PlanApproved",
    ...v1(alice, 160),
    version: 2,
    revision: 1,
    digest: PLAN_DIGEST,
    receipt: { subject: "plan", digest: PLAN_DIGEST, actor: alice, channel: "terminal", at: 160, signature: null }
  }],
  [80, { _tag: "RunStarted", ...v1(runner1, 170), runId: RUN_ID, specDigest: SPEC_DIGEST, planDigest: PLAN_DIGEST, leaseEpoch: 1 }]
]

const commandExited = (
  intentId: string,
  target: { readonly runId: string; readonly stepId: string; readonly attempt: number },
  exit: {
    readonly exitCode: number | null
    readonly signal: string | null
    readonly durationMs: number
    readonly timedOut: boolean
    readonly stdoutRef: string | null
    readonly stderrRef: string | null
    readonly outputTail: string
    readonly changedPaths: ReadonlyArray<string>
  },
  at: number
): Event.Event => ({ _tag: "CommandExited", ...v1(runner1, at), intentId, ...target, ...exit })

const boundary = (head: string, dirtyPaths: ReadonlyArray<string>, dirtyDigest: string, nextStep: string | null, at: number): Event.Event => ({
  ...Events.boundaryRecorded(RUN_ID, digests, nextStep, m(runner1, at)),
  head,
  dirtyPaths,
  dirtyDigest
})

/**
 * The task's log up to and including the snapshot (LSN 580, VerificationStarted):
 * - build#1 failed (exit 2, fingerprinted, noted), build#2 by runner-2 succeeded;
 * - test#1 went Indeterminate (system) and alice settled its dispatched intent;
 * - test#2 timed out (SIGKILL), with a second intent abandoned while pending;
 * - test#3 succeeded, leaving one intent dispatched and one pending;
 * - docs#1 was a manual step reported done by agent-1;
 * - three boundaries (LSN 250, 520, 570).
 */
export const history = (): Array<EventStore.StoredEvent> =>
  stored([
    ...lifecycle(),
    [90, Events.attemptScheduled(RUN_ID, "build", 1, m(runner1, 2000))],
    [100, Events.attemptTransitioned({ ...b1, from: "Pending", to: "Running" }, m(runner1, 2001))],
    [110, Events.intentRecorded("i-1", { ...b1, description: "npm run build" }, m(runner1, 2002))],
    [120, Events.intentDispatched("i-1", m(runner1, 2003))],
    [130, commandExited("i-1", b1, {
      exitCode: 2,
      signal: null,
      durationMs: 40,
      timedOut: false,
      stdoutRef: REF1,
      stderrRef: REF2,
      outputTail: "src/status.ts(3,1): error TS2304",
      changedPaths: ["src/status.ts"]
    }, 2040)],
    [140, Events.intentResolved("i-1", "Failed", [], m(runner1, 2041))],
    [150, Events.attemptTransitioned({ ...b1, from: "Running", to: "Failed" }, m(runner1, 2042))],
    [160, { _tag: "AttemptFailed", ...v1(runner1, 2043), ...b1, fingerprint: "exit-2:TS2304", progressed: true }],
    [170, Events.attemptNoted(b1, "the import of formatJson was missing", m(runner1, 2044))],
    [180, Events.attemptScheduled(RUN_ID, "build", 2, m(runner2, 3000))],
    [190, Events.attemptTransitioned({ ...b2, from: "Pending", to: "Running" }, m(runner2, 3001))],
    [200, Events.intentRecorded("i-2", { ...b2, description: "npm run build" }, m(runner2, 3002))],
    [210, Events.intentDispatched("i-2", m(runner2, 3003))],
    [220, commandExited("i-2", b2, {
      exitCode: 0,
      signal: null,
      durationMs: 60,
      timedOut: false,
      stdoutRef: REF3,
      stderrRef: null,
      outputTail: "built",
      changedPaths: ["dist/status.js", "src/status.ts"]
    }, 3060)],
    [230, Events.intentResolved("i-2", "Succeeded", [], m(runner2, 3061))],
    [240, Events.attemptTransitioned({ ...b2, from: "Running", to: "Succeeded" }, m(runner2, 3062))],
    [250, boundary("c0ffee1", ["src/status.ts"], DIRTY1, "test", 3063)],
    [260, Events.attemptScheduled(RUN_ID, "test", 1, m(runner1, 4000))],
    [270, Events.attemptTransitioned({ ...t1, from: "Pending", to: "Running" }, m(runner1, 4001))],
    [280, Events.intentRecorded("i-3", { ...t1, description: "npm test" }, m(runner1, 4002))],
    [290, Events.intentDispatched("i-3", m(runner1, 4003))],
    [300, Events.attemptTransitioned({ ...t1, from: "Running", to: "Indeterminate" }, m(system, 4100))],
    [310, Events.intentResolved("i-3", "Succeeded", [], m(alice, 4200))],
    [320, Events.intentSettled("i-3", t1, "Succeeded", digest("9"), m(alice, 4200))],
    [330, Events.attemptScheduled(RUN_ID, "test", 2, m(runner1, 5000))],
    [340, Events.attemptTransitioned({ ...t2, from: "Pending", to: "Running" }, m(runner1, 5001))],
    [350, Events.intentRecorded("i-4", { ...t2, description: "npm test" }, m(runner1, 5002))],
    [360, Events.intentRecorded("i-4b", { ...t2, description: "upload the coverage report" }, m(runner1, 5003))],
    [370, Events.intentAbandoned("i-4b", "the runner restarted", m(system, 5004))],
    [380, Events.intentDispatched("i-4", m(runner1, 5005))],
    [390, commandExited("i-4", t2, {
      exitCode: null,
      signal: "SIGKILL",
      durationMs: 100,
      timedOut: true,
      stdoutRef: null,
      stderrRef: REF4,
      outputTail: "killed after 100 ms",
      changedPaths: []
    }, 5105)],
    [400, Events.intentResolved("i-4", "Failed", [], m(runner1, 5106))],
    [410, Events.attemptTransitioned({ ...t2, from: "Running", to: "TimedOut" }, m(runner1, 5107))],
    [420, Events.attemptScheduled(RUN_ID, "test", 3, m(runner1, 6000))],
    [430, Events.attemptTransitioned({ ...t3, from: "Pending", to: "Running" }, m(runner1, 6001))],
    [440, Events.intentRecorded("i-5", { ...t3, description: "npm test" }, m(runner1, 6002))],
    [450, Events.intentDispatched("i-5", m(runner1, 6003))],
    [460, commandExited("i-5", t3, {
      exitCode: 0,
      signal: null,
      durationMs: 200,
      timedOut: false,
      stdoutRef: REF5,
      stderrRef: null,
      outputTail: "Tests 12 passed",
      changedPaths: ["reports/junit.xml"]
    }, 6203)],
    [470, Events.intentResolved("i-5", "Succeeded", [], m(runner1, 6204))],
    [480, Events.intentRecorded("i-5b", { ...t3, description: "upload the coverage report" }, m(runner1, 6205))],
    [490, Events.intentDispatched("i-5b", m(runner1, 6206))],
    [500, Events.intentRecorded("i-5c", { ...t3, description: "notify the channel" }, m(runner1, 6207))],
    [510, Events.attemptTransitioned({ ...t3, from: "Running", to: "Succeeded" }, m(runner1, 6208))],
    [520, boundary("c0ffee2", ["reports/junit.xml", "src/status.ts"], DIRTY2, "docs", 6209)],
    [530, Events.attemptScheduled(RUN_ID, "docs", 1, m(runner1, 7000))],
    [540, Events.attemptTransitioned({ ...d1, from: "Pending", to: "Running" }, m(runner1, 7001))],
    [550, Events.attemptNoted(d1, "documented --json under Usage", m(agent1, 7100))],
    [560, Events.attemptTransitioned({ ...d1, from: "Running", to: "Succeeded" }, m(agent1, 7101))],
    [570, boundary("c0ffee3", ["docs/guide.md", "src/status.ts"], DIRTY3, null, 7102)],
    [580, { _tag: "VerificationStarted", ...v1(verifier1, 8000), runId: RUN_ID, snapshotLsn: SNAPSHOT }]
  ])

/**
 * What the log holds above the snapshot: recovery resolving the dispatched intent, a note, a new
 * attempt, a boundary (LSN 590–620), a reopen that ends the run (630), then a second TaskCreated
 * that no log can replay (640).
 */
export const later = (): Array<EventStore.StoredEvent> =>
  stored([
    [590, Events.intentResolved("i-5b", "Succeeded", [], m(system, 8100))],
    [600, Events.attemptNoted(t3, "recovery resolved the upload", m(system, 8101))],
    [610, Events.attemptScheduled(RUN_ID, "test", 4, m(runner3, 8200))],
    [620, boundary("c0ffee4", [], DIRTY1, null, 8300)],
    [630, { _tag: "TaskReopened", ...v1(alice, 8400), version: 2, from: "VERIFYING", reason: "the flag needs a short form" }],
    [640, Events.taskCreated({ taskId: TASK_ID, projectId: "p-1" }, m(alice, 8500))]
  ])

/**
 * The run reopened and started again as run-2 (LSN 590–650), with stragglers of run-1 written
 * after it (660, 680, 690) that the view of run-2 must not take.
 */
export const rerun = (): Array<EventStore.StoredEvent> =>
  stored([
    [590, { _tag: "TaskReopened", ...v1(alice, 9000), version: 2, from: "VERIFYING", reason: "the flag needs a short form" }],
    [600, { _tag: "SpecProposed", ...v1(agent1, 9010), revision: 2, digest: SPEC2_DIGEST, spec, voidedApproval: true }],
    [610, {
      _tag: "SpecApproved",
      ...v1(alice, 9020),
    version: 2,
      revision: 2,
      digest: SPEC2_DIGEST,
      receipt: { subject: "spec", digest: SPEC2_DIGEST, actor: alice, channel: "terminal", at: 9020, signature: null }
    }],
    [620, {
      _tag: "PreflightRecorded",
      ...v1(agent1, 9030),
      specDigest: SPEC2_DIGEST,
      observation: { head: "c0ffee3", dirtyPaths: [], missingPaths: [], invalidScopes: [] }
    }],
    [630, { _tag: "PlanProposed", ...v1(agent1, 9040), revision: 2, digest: PLAN2_DIGEST, plan }],
    [640, {
      _tag: "PlanApproved",
      ...v1(alice, 9050),
    version: 2,
      revision: 2,
      digest: PLAN2_DIGEST,
      receipt: { subject: "plan", digest: PLAN2_DIGEST, actor: alice, channel: "terminal", at: 9050, signature: null }
    }],
    [650, { _tag: "RunStarted", ...v1(runner3, 9060), runId: "run-2", specDigest: SPEC2_DIGEST, planDigest: PLAN2_DIGEST, leaseEpoch: 2 }],
    [660, Events.attemptScheduled(RUN_ID, "build", 3, m(runner1, 9070))],
    [670, Events.attemptScheduled("run-2", "build", 1, m(runner3, 9080))],
    [680, boundary("c0ffee5", [], DIRTY2, "test", 9090)],
    [690, commandExited("i-5", t3, {
      exitCode: 1,
      signal: null,
      durationMs: 999,
      timedOut: false,
      stdoutRef: REF1,
      stderrRef: null,
      outputTail: "late",
      changedPaths: []
    }, 9100)],
    [700, Events.intentDispatched("i-5c", m(runner1, 9110))]
  ])

/** The episode at the snapshot, or a thrown error. */
export const episode = (events: Iterable<EventStore.StoredEvent> = history(), snapshotLsn = SNAPSHOT): EpisodeView.EpisodeView =>
  Either.getOrThrowWith(
    EpisodeView.build({ taskId: TASK_ID, branch: "main", snapshotLsn, events }),
    (error) => new Error(error.message)
  )

// ---------------------------------------------------------------------------------------------
// Workspaces and contexts
// ---------------------------------------------------------------------------------------------

const made: Array<string> = []

/** A fresh temporary directory, removed by {@link removeWorkspaces}. */
export const workspace = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-verifier-test-"))
  made.push(dir)
  return dir
}

export const removeWorkspaces = (): void => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

export const TREE: Evidence.Tree = { head: "c0ffee3", dirtyDigest: DIRTY3 }

/** A verifier context over the episode at the snapshot, working in `root`. */
export const ctxFor = (input: {
  readonly root: string
  readonly blobs: BlobStore.Service
  readonly episode?: EpisodeView.EpisodeView
  readonly deadline?: number
  readonly verifier?: Event.Actor
}): Verifier.VerifierCtx => ({
  run: RUN_ID,
  step: "test",
  attempt: 3,
  episode: input.episode ?? episode(),
  blobs: input.blobs,
  deadline: input.deadline ?? Date.now() + 60_000,
  snapshotLsn: SNAPSHOT,
  specDigest: SPEC_DIGEST,
  verifier: input.verifier ?? verifier1,
  workspace: { root: input.root, tree: TREE }
})

/** Whether a process is alive (a zombie, which nobody may reap here, counts as dead). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    // The state follows the command name in parentheses, which may itself hold spaces.
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return false
  }
}

/** Waits (polling, at most `limitMs`) until the process is gone; true when it is. */
export const gone = (pid: number, limitMs = 3_000): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const until = Date.now() + limitMs
    while (alive(pid)) {
      if (Date.now() > until) return false
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    }
    return true
  })

/** Kills a stray process a failed test may have left, quietly. */
export const reap = (pid: number): void => {
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // Already gone.
  }
}
