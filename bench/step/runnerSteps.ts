/**
 * Our durable step as the runner writes it (ADR 0020): through the controller's command handler,
 * decided by the kernel (the run's `FinishStep` and `StartStep`, the task's fold), against the
 * stream as the runner's previous write left it, appended as one transaction. In a steady run a
 * step's only write is its end, its boundary and checkpoint, and the next step's start and
 * dispatch; so one durable step is one such write, and the first step of a stream is preceded by
 * its start alone (untimed, in the set-up).
 *
 * The raw sides of the pairs write the same events, byte for byte, as two commits: the step's start
 * before the effect, its end and boundary after it (the floor of a write-ahead step). What ours
 * writes for step n is n's end and boundary with n+1's start; what raw writes for step n is n's
 * start and then n's end and boundary: the same events per step, shifted by one transaction.
 */
import * as CommandHandler from "@ratchet/controller/CommandHandler"
import type * as Decider from "@ratchet/kernel/Decider"
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import type * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"
import { command, epoch, projectId, runningTask } from "./steps.js"

const actor = { kind: "runner", id: "bench-runner" } as const

// An intent id shaped like the runner's (`in-` and 12 hex digits), derived from the step number.
const intentIdOf = (stream: string, step: number) =>
  `in-${Digest.ofCanonical(`${stream}/${step}`).slice("sha256:".length, "sha256:".length + 12)}`

/** A stream whose run is going: the state the runner holds and the step whose start is written. */
interface Cursor {
  readonly streamId: string
  readonly runId: string
  readonly specDigest: Digest.Digest
  readonly planDigest: Digest.Digest
  known: CommandHandler.Read
  /** The step (attempt number) whose start and dispatch are committed. */
  started: number
}

const startOf = (cursor: Cursor, step: number, at: number): Decider.Command => ({
  _tag: "StartStep",
  actor,
  at,
  runId: cursor.runId,
  stepId: "build",
  attempt: step,
  scheduled: false,
  effect: { intentId: intentIdOf(cursor.streamId, step), description: command }
})

/** Step `step`'s end as a command that exited 0 with no output and no change. */
const endOf = (cursor: Cursor, step: number, at: number): ReadonlyArray<Decider.Command | Event.Event> => [
  {
    _tag: "FinishStep",
    actor,
    at,
    runId: cursor.runId,
    stepId: "build",
    attempt: step,
    intentId: intentIdOf(cursor.streamId, step),
    exit: { exitCode: 0, signal: null, durationMs: 0, timedOut: false, stdoutRef: null, stderrRef: null, outputTail: "\n", changedPaths: [] },
    outcome: "Succeeded",
    resultRefs: []
  },
  {
    _tag: "BoundaryRecorded",
    version: 1,
    actor,
    at,
    runId: cursor.runId,
    head: "0123456789abcdef0123456789abcdef01234567",
    dirtyPaths: [],
    dirtyDigest: Digest.ofCanonical(JSON.stringify([])),
    specDigest: cursor.specDigest,
    planDigest: cursor.planDigest,
    nextStep: "build"
  },
  { _tag: "CheckpointRecorded", version: 1, actor, at, kind: "step", runId: cursor.runId }
]

/**
 * The runner's steps on the store of the context: `cursor(name)` makes the running task of stream
 * `name` once, with its first step started (untimed); `step(name)` writes one steady-state step.
 * `events(name, step)` are the events of step `step` as the raw side writes them (its start; its
 * end and boundary), decided the same way.
 */
export const runnerSteps = () => {
  const cursors = new Map<string, Cursor>()
  const handle = (cursor: Cursor, items: (at: number) => ReadonlyArray<Decider.Command | Event.Event>) =>
    Effect.map(
      CommandHandler.handle({
        projectId,
        streamId: cursor.streamId,
        branch: EventStore.mainBranch,
        epoch,
        withRun: true,
        known: cursor.known,
        decide: (_read, at) => Effect.succeed(items(at)),
        describeHolder: () => "another writer"
      }),
      (handled) => {
        cursor.known = handled.after
        return handled
      }
    )

  const cursor = (name: string) =>
    Effect.gen(function*() {
      const existing = cursors.get(name)
      if (existing !== undefined) return existing
      const store = yield* EventStore.EventStore
      const task = runningTask(name)
      let version = 0
      for (const [index, append] of task.setup.entries()) {
        yield* store.append({ projectId, streamId: name, expectedVersion: version, epoch: append.epoch, operationId: `${name}-setup-${index}`, events: append.events })
        version += append.events.length
      }
      const made: Cursor = {
        streamId: name,
        runId: task.runId,
        specDigest: task.specDigest,
        planDigest: task.planDigest,
        known: yield* CommandHandler.read(projectId, name, EventStore.mainBranch, true),
        started: 1
      }
      yield* handle(made, (at) => [startOf(made, 1, at)])
      cursors.set(name, made)
      return made
    })

  /** One steady-state step of `name`: the started step's end and boundary, and the next one's start. */
  const step = (name: string): Effect.Effect<void, unknown, EventStore.EventStore | ReadModel.ReadModels> =>
    Effect.gen(function*() {
      const current = yield* cursor(name)
      const ended = current.started
      yield* handle(current, (at) => [...endOf(current, ended, at), startOf(current, ended + 1, at)])
      current.started = ended + 1
    })

  return { cursor, step }
}
