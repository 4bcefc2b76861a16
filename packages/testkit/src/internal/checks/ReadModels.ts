/**
 * Conformance checks of the read models: scripted and random histories, forks, run frontiers and
 * task lists, each compared with a cold fold of the log.
 */
import * as Event from "@ratchet/kernel/Event"
import * as Progress from "@ratchet/kernel/Progress"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Events from "../../Events.js"
import * as Histories from "../../Histories.js"
import { type Services } from "../../StorageChild.js"
import { type Check, check, ConformanceViolation, created, encoded, expectBranch, holds, invalidField, makeIds, newStream, readAll, request, same, services, show, type StreamRef, succeeds, violation } from "./Kit.js"
import { A, lapse } from "./Fencing.js"

// ---------------------------------------------------------------------------------------------
// Read models
// ---------------------------------------------------------------------------------------------

export const sortedAttempts = (rows: Iterable<ReadModel.AttemptRow>) =>
  [...rows].sort((a, b) => ReadModel.attemptKey(a.runId, a.stepId, a.attempt).localeCompare(ReadModel.attemptKey(b.runId, b.stepId, b.attempt)))

export const intentKey = (row: ReadModel.IntentRow) => JSON.stringify([row.branch, row.intentId, row.updatedLsn])
export const sortedIntents = (rows: Iterable<ReadModel.IntentRow>) => [...rows].sort((a, b) => intentKey(a).localeCompare(intentKey(b)))

export const isOpen = (row: ReadModel.IntentRow) => row.state === "Pending" || row.state === "Dispatched"

/**
 * Checks that every read model of a branch equals the fold of the branch as read, through every
 * accessor, and that the store's own rebuild agrees.
 *
 * @since 0.1.0
 * @category testing
 */
export const expectReadModelsMatchLog = (
  stream: { readonly projectId: string; readonly streamId: string },
  branch: string
): Effect.Effect<void, ConformanceViolation, Services> =>
  Effect.gen(function*() {
    const promise = "read models equal a cold rebuild from the log"
    const { store, models } = yield* services
    const events = yield* succeeds(promise, `reading ${branch}`, readAll(store, { streamId: stream.streamId, branch }))
    const folded = ReadModel.fold(events)
    const snapshot = yield* succeeds(promise, "the snapshot", models.snapshot(stream.streamId, branch))
    yield* same(promise, `the stored read models of ${branch} (vs the fold of its events)`, snapshot, folded)
    const rebuilt = yield* succeeds(promise, "the rebuild", models.rebuild(stream.streamId, branch))
    yield* same(promise, `the store's rebuild of ${branch} (vs the fold of its events)`, rebuilt, folded)
    yield* same(promise, `taskSummary of ${branch}`, yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId, branch)), folded.summary)
    yield* same(
      promise,
      `attempts of ${branch}`,
      sortedAttempts(yield* succeeds(promise, "attempts", models.attempts(stream.streamId, branch))),
      sortedAttempts(folded.attempts.values())
    )
    yield* same(promise, `checkpoints of ${branch}`, yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, branch)), folded.checkpoints)
    yield* same(promise, "the lease", yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId)), folded.lease)
    // openIntents spans the stream's branches, so it is compared with every branch's snapshot.
    const open = yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId))
    const names = (yield* succeeds(promise, "branches", store.branches(stream.streamId))).map((b) => b.branch)
    const snapshots = yield* Effect.forEach(names, (name) => succeeds(promise, "the snapshot", models.snapshot(stream.streamId, name)))
    yield* same(
      promise,
      `openIntents of ${stream.streamId} (vs the open intents of the snapshots of ${names.join(", ")})`,
      sortedIntents(open),
      sortedIntents(snapshots.flatMap((one) => [...one.intents.values()].filter(isOpen)))
    )
    yield* expectRunReads(stream, branch, folded)
  })

/** Every run id the read models of `folded` name, and one they do not. */
export const runIdsOf = (folded: ReadModel.Snapshot): ReadonlyArray<string> => [
  ...new Set([
    ...[...folded.attempts.values()].map((row) => row.runId),
    ...[...folded.intents.values()].map((row) => row.runId),
    ...folded.checkpoints.flatMap((row) => (row.runId === null ? [] : [row.runId]))
  ]),
  "run-never-started"
]

/**
 * The narrow reads of a run equal their references over the fold of the branch: `runFrontier` of
 * every run (`ReadModel.runFrontier`), and `checkpoints` narrowed by run, kind and count
 * (`ReadModel.selectCheckpoints`). And the frontier decides like the whole run: every step's
 * standing (`Progress.statusOf`) is the same over it as over every row of the run.
 */
export const expectRunReads = (stream: StreamRef, branch: string, folded: ReadModel.Snapshot) =>
  Effect.gen(function*() {
    const promise = "a run's frontier and checkpoints are read exactly"
    const { models } = yield* services
    for (const runId of runIdsOf(folded)) {
      const stored = yield* succeeds(promise, `runFrontier of ${runId}`, models.runFrontier(stream.streamId, runId, branch))
      const expected = ReadModel.runFrontier(folded, runId)
      yield* same(
        promise,
        `runFrontier of ${runId} on ${branch} (vs ReadModel.runFrontier over the fold)`,
        { attempts: sortedAttempts(stored.attempts.values()), intents: sortedIntents(stored.intents.values()) },
        { attempts: sortedAttempts(expected.attempts.values()), intents: sortedIntents(expected.intents.values()) }
      )
      const all = { attempts: [...folded.attempts.values()].filter((row) => row.runId === runId), intents: [...folded.intents.values()].filter((row) => row.runId === runId) }
      const steps = [...new Set(all.attempts.map((row) => row.stepId))].sort()
      yield* same(
        promise,
        `the standing of each step of ${runId} on ${branch} over its frontier (vs over every row of the run)`,
        steps.map((stepId) => Progress.statusOf(stepId, [...expected.attempts.values()], [...expected.intents.values()])),
        steps.map((stepId) => Progress.statusOf(stepId, all.attempts, all.intents))
      )
      const queries: ReadonlyArray<ReadModel.CheckpointQuery> = [
        { runId },
        { runId, kind: "step" },
        { runId, kind: "step", last: 1 },
        { runId, kind: "run_start", last: 1 },
        { runId, last: 3 }
      ]
      for (const query of queries) {
        yield* same(
          promise,
          `checkpoints of ${branch} narrowed by ${show(query)} (vs ReadModel.selectCheckpoints over the fold)`,
          yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, branch, query)),
          ReadModel.selectCheckpoints(folded.checkpoints, query)
        )
      }
    }
    for (const query of [{ kind: "terminal" as const }, { last: 2 }]) {
      yield* same(
        promise,
        `checkpoints of ${branch} narrowed by ${show(query)} (vs ReadModel.selectCheckpoints over the fold)`,
        yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, branch, query)),
        ReadModel.selectCheckpoints(folded.checkpoints, query)
      )
    }
  })

export const readModelsScripted = check(
  "read models",
  "readmodels.append",
  "every append updates the task summary, attempts, open intents, lease and checkpoints it touches",
  Effect.gen(function*() {
    const promise = "read models are updated in the same transaction as the events"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "models")
    // Appends a batch and returns the LSNs its events got, in order.
    const at = (batch: ReadonlyArray<Event.Event>, expectedVersion: number, epoch: number | null = null) =>
      Effect.gen(function*() {
        const result = yield* succeeds(promise, `append at ${expectedVersion}`, store.append(request(ids, stream, expectedVersion, batch, { epoch })))
        const landed = yield* succeeds(promise, "read", readAll(store, { streamId: stream.streamId, fromLsn: result.firstLsn, toLsn: result.lastLsn }))
        yield* same(promise, `the events of the append at ${expectedVersion}`, encoded(landed.map((s) => s.event)), encoded(batch))
        return { result, lsn: landed.map((s) => s.lsn), recordedAt: landed.map((s) => s.recordedAt) }
      })
    const attempt = { streamId: stream.streamId, branch: "main", runId: "run-1", stepId: "build", attempt: 1 }
    const target = { runId: "run-1", stepId: "build", attempt: 1 }
    const turn = { waitingForFirstChunk: false, toolRejected: false, toolUsed: false, toolFailed: false, streamReadComplete: false }
    const intent = { streamId: stream.streamId, branch: "main", runId: "run-1", stepId: "build", attempt: 1 }

    const r1 = yield* at([created(stream)], 0)
    const summary1 = yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId))
    yield* same(
      promise,
      "the summary after TaskCreated",
      summary1 === null ? null : { ...summary1, task: { state: summary1.task.state, version: summary1.task.version, taskId: summary1.task.taskId } },
      { ...stream, branch: "main", version: 1, lastLsn: r1.lsn[0], task: { state: "INITIALIZING", version: 1, taskId: stream.streamId } }
    )

    const r2 = yield* at([
      Events.interviewBegun(),
      Events.attemptScheduled("run-1", "build", 1),
      Events.intentRecorded("i-1", { runId: "run-1", stepId: "build", attempt: 1 })
    ], 1)
    const summary2 = yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId))
    yield* same(promise, "the summary after InterviewBegun", [summary2?.task.state, summary2?.version, summary2?.lastLsn], ["INTERVIEWING", 4, r2.lsn[2]])
    yield* same(promise, "the attempts after AttemptScheduled", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Pending", turn, updatedLsn: r2.lsn[1] }
    ])
    const open2 = yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId))
    yield* same(promise, "the open intents after IntentRecorded", open2, [
      { ...intent, intentId: "i-1", state: "Pending", outcome: null, updatedLsn: r2.lsn[2] }
    ])

    const r3 = yield* at([
      Events.attemptTransitioned({ runId: "run-1", stepId: "build", attempt: 1, from: "Pending", to: "Running" }),
      Events.intentDispatched("i-1"),
      Events.checkpointRecorded("step", "run-1")
    ], 4)
    yield* same(promise, "the attempts after AttemptTransitioned", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Running", turn, updatedLsn: r3.lsn[0] }
    ])
    yield* same(promise, "the open intents after IntentDispatched", yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId)), [
      { ...intent, intentId: "i-1", state: "Dispatched", outcome: null, updatedLsn: r3.lsn[1] }
    ])
    yield* same(promise, "the checkpoints after CheckpointRecorded", yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId)), [
      { streamId: stream.streamId, branch: "main", lsn: r3.lsn[2], kind: "step", runId: "run-1" }
    ])

    const r4 = yield* at([
      Events.intentResolved("i-1", "Succeeded", ["out-1"]),
      Events.intentRecorded("i-2", { runId: "run-1", stepId: "build", attempt: 1 }),
      Events.leaseAcquired(1, A)
    ], 7)
    yield* same(promise, "the open intents after IntentResolved", yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId)), [
      { ...intent, intentId: "i-2", state: "Pending", outcome: null, updatedLsn: r4.lsn[1] }
    ])
    const lease4 = yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))
    const recordedAt = r4.recordedAt[2]
    yield* same(promise, "the lease after LeaseAcquired", lease4, {
      ...stream,
      epoch: 1,
      held: true,
      owner: A,
      acquiredAt: recordedAt,
      heartbeatAt: recordedAt,
      graceMs: Events.defaultTimings.graceMs,
      updatedLsn: r4.lsn[2]
    })

    // The turn region: each event sets its own flag (the attempt's LSN stays its last
    // transition's), a new turn clears four, an attempt's transition alone keeps them, and a turn
    // event naming an attempt the branch never scheduled is kept in the log but touches no row.
    yield* at([
      Events.turnRecorded(target, { _tag: "firstChunkAwaitStarted" }),
      Events.turnRecorded(target, { _tag: "toolUsed" }),
      Events.turnRecorded(target, { _tag: "toolFailed" }),
      Events.turnRecorded({ ...target, attempt: 9 }, { _tag: "toolRejected" })
    ], 10, 1)
    yield* same(promise, "the attempts after TurnRecorded", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Running", turn: { ...turn, waitingForFirstChunk: true, toolUsed: true, toolFailed: true }, updatedLsn: r3.lsn[0] }
    ])
    yield* at([
      Events.turnRecorded(target, { _tag: "turnStarted" }),
      Events.turnRecorded(target, { _tag: "streamReadCompleted" })
    ], 14, 1)
    yield* same(promise, "the attempts after a new turn", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Running", turn: { ...turn, waitingForFirstChunk: true, streamReadComplete: true }, updatedLsn: r3.lsn[0] }
    ])
    const r7t = yield* at([
      Events.attemptTransitioned({ runId: "run-1", stepId: "build", attempt: 1, from: "Running", to: "Succeeded" })
    ], 16, 1)
    yield* same(promise, "the attempts after a transition alone (the turn carried over from the stored row)", yield* succeeds(promise, "attempts", models.attempts(stream.streamId)), [
      { ...attempt, state: "Succeeded", turn: { ...turn, waitingForFirstChunk: true, streamReadComplete: true }, updatedLsn: r7t.lsn[0] }
    ])

    const r5 = yield* at([Events.intentAbandoned("i-2"), Events.leaseReleased(1)], 17, 1)
    yield* same(promise, "the open intents after IntentAbandoned", yield* succeeds(promise, "openIntents", models.openIntents(stream.streamId)), [])
    yield* same(promise, "the lease after LeaseReleased", yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId)), {
      ...stream,
      epoch: 1,
      held: false,
      owner: A,
      acquiredAt: recordedAt,
      heartbeatAt: recordedAt,
      graceMs: Events.defaultTimings.graceMs,
      updatedLsn: r5.lsn[1]
    })
    yield* expectReadModelsMatchLog(stream, "main")
  })
)

export const readModelsForks = check(
  "read models",
  "readmodels.fork",
  "a fork's read models are its own: folded from what it sees, untouched by the other branch",
  Effect.gen(function*() {
    const promise = "read models equal a cold rebuild from the log"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "models-fork")
    const first = yield* succeeds(promise, "append", store.append(request(ids, stream, 0, [
      created(stream),
      Events.interviewBegun(),
      Events.attemptScheduled("run-1", "build", 1),
      Events.intentRecorded("i-1", { runId: "run-1", stepId: "build", attempt: 1 }),
      Events.checkpointRecorded("run_start", "run-1")
    ])))
    yield* succeeds(promise, "append", store.append(request(ids, stream, 5, [
      Events.intentDispatched("i-1"),
      Events.attemptTransitioned({ runId: "run-1", stepId: "build", attempt: 1, from: "Pending", to: "Running" }),
      Events.checkpointRecorded("step", "run-1")
    ])))
    yield* succeeds(promise, "fork", store.fork({ streamId: stream.streamId, atLsn: first.lastLsn, branch: "alt" }))
    yield* expectReadModelsMatchLog(stream, "alt")
    yield* expectReadModelsMatchLog(stream, "main")
    yield* succeeds(promise, "append to alt", store.append(request(ids, stream, 5, [
      Events.intentAbandoned("i-1"),
      Events.taskCancelled("INTERVIEWING"),
      Events.checkpointRecorded("terminal", "run-1")
    ], { branch: "alt" })))
    yield* expectReadModelsMatchLog(stream, "alt")
    yield* expectReadModelsMatchLog(stream, "main")
    const alt = yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId, "alt"))
    const main = yield* succeeds(promise, "taskSummary", models.taskSummary(stream.streamId))
    yield* same(promise, "the states of the two branches", [main?.task.state, main?.version, alt?.task.state, alt?.version], [
      "INTERVIEWING",
      8,
      "CANCELLED",
      8
    ])
  })
)

export const runFrontierScripted = check(
  "read models",
  "readmodels.run-frontier",
  "runFrontier reads exactly a run's latest and open attempts, every intent of an open attempt and the open or settling intents of the others: no other run's, no other branch's, no closed attempt's before the latest",
  Effect.gen(function*() {
    const promise = "a run's frontier and checkpoints are read exactly"
    const { store, models } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "frontier")
    const other = newStream(ids, "frontier-other")
    const of = (runId: string, stepId: string, attempt: number) => ({ runId, stepId, attempt })
    const moved = (target: ReturnType<typeof of>, from: "Pending" | "Running", to: "Running" | "Failed" | "Succeeded" | "Indeterminate") =>
      Events.attemptTransitioned({ ...target, from, to })
    const ran = (target: ReturnType<typeof of>, intentId: string, to: "Failed" | "Succeeded", outcome: "Failed" | "Succeeded") => [
      Events.attemptScheduled(target.runId, target.stepId, target.attempt),
      moved(target, "Pending", "Running"),
      Events.intentRecorded(intentId, target),
      Events.intentDispatched(intentId),
      Events.intentResolved(intentId, outcome),
      moved(target, "Running", to)
    ]
    const r = "run-2"
    // Run 1 (an earlier run of the task): done, and open rows the frontier of run 2 must not show.
    const first = yield* succeeds(promise, "append", store.append(request(ids, stream, 0, [
      created(stream),
      Events.checkpointRecorded("run_start", "run-1"),
      ...ran(of("run-1", "build", 1), "i-r1", "Succeeded", "Succeeded"),
      Events.attemptScheduled("run-1", "lint", 1),
      Events.checkpointRecorded("step", "run-1")
    ])))
    // Run 2: build failed twice and then ran again (attempt 3 Running, its intent dispatched);
    // test failed once, then its attempt 2 is Indeterminate and was settled; docs is scheduled;
    // an older attempt of deploy is left open below a later one.
    const second = yield* succeeds(promise, "append", store.append(request(ids, stream, first.version, [
      Events.checkpointRecorded("run_start", r),
      ...ran(of(r, "build", 1), "i-b1", "Failed", "Failed"),
      Events.checkpointRecorded("step", r),
      ...ran(of(r, "build", 2), "i-b2", "Failed", "Failed"),
      Events.checkpointRecorded("step", r),
      Events.attemptScheduled(r, "build", 3),
      moved(of(r, "build", 3), "Pending", "Running"),
      Events.intentRecorded("i-b3", of(r, "build", 3)),
      Events.intentDispatched("i-b3"),
      Events.intentRecorded("i-b3-pending", of(r, "build", 3)),
      Events.intentRecorded("i-b3-done", of(r, "build", 3)),
      Events.intentAbandoned("i-b3-done"),
      ...ran(of(r, "test", 1), "i-t1", "Failed", "Failed"),
      Events.attemptScheduled(r, "test", 2),
      moved(of(r, "test", 2), "Pending", "Running"),
      Events.intentRecorded("i-t2-before", of(r, "test", 2)),
      Events.intentDispatched("i-t2-before"),
      Events.intentResolved("i-t2-before", "Failed"),
      Events.intentRecorded("i-t2", of(r, "test", 2)),
      Events.intentDispatched("i-t2"),
      moved(of(r, "test", 2), "Running", "Indeterminate"),
      Events.intentResolved("i-t2", "Succeeded"),
      Events.attemptScheduled(r, "docs", 1),
      Events.attemptScheduled(r, "deploy", 1),
      moved(of(r, "deploy", 1), "Pending", "Running"),
      ...ran(of(r, "deploy", 2), "i-d2", "Succeeded", "Succeeded"),
      Events.checkpointRecorded("step", r)
    ])))
    // Another branch of the stream and another stream, each with an open attempt of run 2.
    yield* succeeds(promise, "fork", store.fork({ streamId: stream.streamId, atLsn: second.lastLsn, branch: "alt" }))
    yield* succeeds(promise, "append to alt", store.append(request(ids, stream, second.version, [
      Events.attemptScheduled(r, "alt-only", 1),
      Events.intentRecorded("i-alt", of(r, "alt-only", 1))
    ], { branch: "alt" })))
    yield* succeeds(promise, "append to another stream", store.append(request(ids, other, 0, [
      created(other),
      Events.attemptScheduled(r, "build", 9),
      Events.intentRecorded("i-other", of(r, "build", 9))
    ])))
    const frontier = yield* succeeds(promise, "runFrontier", models.runFrontier(stream.streamId, r))
    yield* same(
      promise,
      "the attempts of run-2's frontier on main",
      [...frontier.attempts.values()].map((row) => `${row.stepId}#${row.attempt}:${row.state}`).sort(),
      ["build#3:Running", "deploy#1:Running", "deploy#2:Succeeded", "docs#1:Pending", "test#2:Indeterminate"]
    )
    yield* same(
      promise,
      "the intents of run-2's frontier on main",
      [...frontier.intents.values()].map((row) => `${row.intentId}:${row.state}`).sort(),
      // build#3 is Running: every intent of it, the abandoned one too (a worker's call whose hook
      // comes again finds its intent); test#2 is Indeterminate: only what was settled after it.
      ["i-b3-done:Abandoned", "i-b3-pending:Pending", "i-b3:Dispatched", "i-t2:Resolved"]
    )
    yield* same(
      promise,
      "the keys of run-2's frontier",
      [...frontier.attempts.entries()].every(([key, row]) => key === ReadModel.attemptKey(row.runId, row.stepId, row.attempt)) &&
        [...frontier.intents.entries()].every(([key, row]) => key === row.intentId),
      true
    )
    const alt = yield* succeeds(promise, "runFrontier on alt", models.runFrontier(stream.streamId, r, "alt"))
    yield* same(
      promise,
      "the attempts of run-2's frontier on alt",
      [...alt.attempts.values()].map((row) => `${row.stepId}#${row.attempt}`).sort(),
      ["alt-only#1", "build#3", "deploy#1", "deploy#2", "docs#1", "test#2"]
    )
    yield* same(promise, "the intents of alt-only#1 on alt", [...alt.intents.keys()].includes("i-alt"), true)
    const none = yield* succeeds(promise, "runFrontier of a run never started", models.runFrontier(stream.streamId, "run-9"))
    yield* same(promise, "the frontier of a run never started", [none.attempts.size, none.intents.size], [0, 0])
    const unknown = yield* succeeds(promise, "runFrontier of a stream never written", models.runFrontier(ids.stream("never"), r))
    yield* same(promise, "the frontier of a stream never written", [unknown.attempts.size, unknown.intents.size], [0, 0])
    const lsns = (found: ReadonlyArray<ReadModel.CheckpointRow>) => found.map((row) => `${row.kind}:${row.runId}`)
    yield* same(
      promise,
      "run-2's last two step checkpoints",
      lsns(yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, undefined, { runId: r, kind: "step", last: 2 }))),
      ["step:run-2", "step:run-2"]
    )
    const start = yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId, undefined, { runId: r, kind: "run_start", last: 1 }))
    const all = yield* succeeds(promise, "checkpoints", models.checkpoints(stream.streamId))
    yield* same(promise, "run-2's start checkpoint", start, all.filter((row) => row.kind === "run_start" && row.runId === r))
    yield* invalidField(promise, "runFrontier with a bad run id", models.runFrontier(stream.streamId, "bad id"), "runId")
    yield* invalidField(promise, "checkpoints with last 0", models.checkpoints(stream.streamId, undefined, { last: 0 }), "last")
    yield* invalidField(
      promise,
      "checkpoints with an unknown kind",
      models.checkpoints(stream.streamId, undefined, { kind: "halfway" as unknown as "step" }),
      "kind"
    )
    yield* expectReadModelsMatchLog(stream, "main")
    yield* expectReadModelsMatchLog(stream, "alt")
  })
)

export const listTasks = check(
  "read models",
  "readmodels.list",
  "listTasks lists a project's main-branch summaries, newest first, and no other project's",
  Effect.gen(function*() {
    const promise = "tasks are listed by project"
    const { store, models } = yield* services
    const ids = makeIds()
    const p1 = ids.project()
    const p2 = ids.project()
    const first = { projectId: p1, streamId: ids.stream("list-1") }
    const second = { projectId: p1, streamId: ids.stream("list-2") }
    const third = { projectId: p2, streamId: ids.stream("list-3") }
    for (const stream of [first, second, third]) {
      yield* succeeds(promise, "creating a task", store.append(request(ids, stream, 0, [created(stream)])))
    }
    const inP1 = yield* succeeds(promise, "listTasks(p1)", models.listTasks(p1))
    yield* same(promise, "the tasks of p1", inP1.map((summary) => [summary.streamId, summary.branch]), [[second.streamId, "main"], [first.streamId, "main"]])
    const inP2 = yield* succeeds(promise, "listTasks(p2)", models.listTasks(p2))
    yield* same(promise, "the tasks of p2", inP2.map((summary) => summary.streamId), [third.streamId])
    const everywhere = (yield* succeeds(promise, "listTasks()", models.listTasks())).map((summary) => summary.streamId)
    yield* holds(
      promise,
      [first, second, third].every((stream) => everywhere.includes(stream.streamId)),
      () => `listTasks() misses a task: ${show(everywhere.slice(0, 20))}`
    )
  })
)

/**
 * How many random histories {@link readModelsRandom} appends, unless told otherwise.
 *
 * @since 0.1.0
 * @category models
 */
export const defaultHistoryRuns = 25

export interface BranchState {
  readonly name: string
  readonly committed: Array<Event.Event>
  readonly pending: Array<ReadonlyArray<Event.Event>>
}

/**
 * Appends one random history (see `Histories`) and checks, after every append and on every
 * branch, that the events read back are the ones appended and that the read models equal the
 * cold fold of the log.
 *
 * @since 0.1.0
 * @category testing
 */
export const runHistory = (script: Histories.Script): Effect.Effect<void, ConformanceViolation, Services> =>
  Effect.gen(function*() {
    const promise = "read models equal a cold rebuild from the log"
    const { models, store } = yield* services
    const ids = makeIds()
    const stream = newStream(ids, "history")
    const main: BranchState = { name: EventStore.mainBranch, committed: [], pending: [] }
    const branches: Array<BranchState> = [main]
    let fork: BranchState | undefined
    let serial = 0
    let batch = 0
    const all = (branch: BranchState) => [...branch.committed, ...branch.pending.flat()]

    const flush = (branch: BranchState) =>
      Effect.gen(function*() {
        if (branch.pending.length === 0) return
        const events = branch.pending.flat()
        const lease = Histories.leaseOf(main.committed)
        // Histories take leases over with a zero grace: let the store's clock pass the deadline.
        if (events.some((event) => event._tag === "LeaseTakenOver")) yield* lapse
        yield* succeeds(
          promise,
          `appending ${events.map((event) => event._tag).join(", ")} to ${branch.name} at version ${branch.committed.length}`,
          store.append(
            request(ids, stream, branch.committed.length, events, { branch: branch.name, epoch: Histories.presentedEpoch(lease) })
          )
        )
        branch.committed.push(...events)
        branch.pending.length = 0
        // After every append: the log and the stored read models; every accessor at the end.
        const read = yield* expectBranch(promise, store, stream.streamId, branch.name, branch.committed)
        const snapshot = yield* succeeds(promise, "the snapshot", models.snapshot(stream.streamId, branch.name))
        yield* same(promise, `the stored read models of ${branch.name} (vs the fold of its events)`, snapshot, ReadModel.fold(read))
      })

    for (const [index, choice] of script.steps.entries()) {
      if (script.fork !== null && fork === undefined && index >= script.fork.afterStep && main.committed.length > 0) {
        yield* flush(main)
        // Leases are task-wide while reads are per branch: fork after the last lease change, so
        // the lease folded from either branch is the task's lease.
        const lastLease = main.committed.reduce((last, event, i) => (Histories.isLeaseEvent(event) ? i : last), -1)
        const low = Math.max(1, lastLease + 1)
        const count = low + (script.fork.at % (main.committed.length - low + 1))
        const read = yield* succeeds(promise, "reading main", readAll(store, { streamId: stream.streamId }))
        const atLsn = read[count - 1]!.lsn
        yield* succeeds(promise, `forking at event ${count}`, store.fork({ streamId: stream.streamId, atLsn, branch: "fork" }))
        fork = { name: "fork", committed: main.committed.slice(0, count), pending: [] }
        branches.push(fork)
        yield* expectBranch(promise, store, stream.streamId, fork.name, fork.committed)
        yield* expectReadModelsMatchLog(stream, fork.name)
      }
      const target = fork !== undefined && choice % 3 === 1 ? fork : main
      const unit = Histories.next(choice, {
        ...stream,
        taskId: stream.streamId,
        branch: all(target),
        lease: Histories.leaseOf([...main.committed, ...main.pending.flat()]),
        leases: fork === undefined && script.fork?.afterStep !== index,
        serial: (serial += 1)
      })
      target.pending.push(unit)
      const size = script.batches[batch % script.batches.length] ?? 1
      if (target.pending.length >= size || unit.some(Histories.isLeaseEvent)) {
        batch += 1
        yield* flush(target)
      }
    }
    for (const branch of branches) yield* flush(branch)
    for (const branch of branches) yield* expectReadModelsMatchLog(stream, branch.name)
  })

/**
 * How the random-history property runs: how many histories, and the fast-check `seed` and `path`
 * that replay a reported failure (both are printed with every failure).
 *
 * @since 0.1.0
 * @category models
 */
export interface HistoryOptions {
  readonly runs?: number | undefined
  readonly seed?: number | undefined
  readonly path?: string | undefined
}

/**
 * The property: random histories (see {@link runHistory}).
 *
 * @since 0.1.0
 * @category testing
 */
export const readModelsRandom = (options: HistoryOptions = {}): Check => {
  const runs = options.runs ?? defaultHistoryRuns
  return check(
    "read models",
    "readmodels.random",
    `over ${runs} random histories (decided commands, run-level facts, random batches, forks), read models equal a cold rebuild after every append`,
    Effect.gen(function*() {
      const context = yield* Effect.context<Services>()
      yield* Effect.tryPromise({
        try: () =>
          fc.assert(
            fc.asyncProperty(Histories.arbitrary(), (script) => Effect.runPromise(Effect.provide(runHistory(script), context))),
            {
              numRuns: runs,
              ...(options.seed === undefined ? {} : { seed: options.seed }),
              ...(options.path === undefined ? {} : { path: options.path, endOnFailure: true })
            }
          ),
        catch: (error) =>
          violation("read models equal a cold rebuild from the log", error instanceof Error ? error.message : String(error))
      })
    }),
    600_000
  )
}
