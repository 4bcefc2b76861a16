/**
 * What one durable step is, on our side and on the raw two-commit side, and the task it runs in.
 *
 * Ours mirrors the run engine (`@ratchet/controller`'s `Runner`) for one command step whose
 * command succeeds, as it is today: every durable boundary is one `EventStore.append`, and a step
 * writes four of them.
 * 1. attempt start: `AttemptScheduled`, `AttemptTransitioned` Pending → Running, `IntentRecorded`;
 * 2. dispatch: `IntentDispatched` (committed before the side effect starts);
 * 3. result: `CommandExited`, `IntentResolved` Succeeded, `AttemptTransitioned` Running → Succeeded
 *    (a successful attempt decides no further kernel event);
 * 4. step boundary: `BoundaryRecorded` and a `step` `CheckpointRecorded` (the runner writes one
 *    after every step it ran).
 *
 * The side effect between 2 and 3 is a no-op, as on every other side of these pairs, so the
 * events carry what a command with no output, no changed path and exit 0 leaves. The runner's reads
 * around its appends (the task summary before each append, the work tree, the projection files)
 * are not part of the measured step: this is the cost of the step's durable writes.
 *
 * The raw two-commit baseline writes the same nine events, byte for byte, in two transactions: the
 * events of appends 1 and 2 before the effect, those of 3 and 4 after it. That is the floor of a
 * step whose intent must be durable before its effect and whose result must be durable after.
 *
 * The step runs in a real task: one that went through its interview, spec and plan approval and
 * started a run under a held writer lease (built with the test kit's task histories, whose events
 * come from the kernel's decider), so our append folds and stores a realistic task summary.
 */
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Task from "@ratchet/kernel/Task"
import * as Histories from "@ratchet/testkit/Histories"
import * as TestEvents from "@ratchet/testkit/Events"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as Effect from "effect/Effect"

/** The project every stream of these pairs belongs to. */
export const projectId = "bench"

/** The writer lease every step appends under. */
export const epoch = 1

const actor = { kind: "runner", id: "bench-runner" } as const
const owner = TestEvents.owner("bench-runner", 4242)

/** The command the step's intent describes (the effect itself is a no-op). */
export const command = "npm run build"

/** One append of the task's history, before any timed step. */
export interface SetupAppend {
  readonly events: ReadonlyArray<Event.Event>
  readonly epoch: number | null
}

/** A task whose run has started, with what its steps refer to. */
export interface RunningTask {
  readonly streamId: string
  readonly setup: ReadonlyArray<SetupAppend>
  readonly runId: string
  readonly specDigest: Digest.Digest
  readonly planDigest: Digest.Digest
  /** The stream's version after the setup. */
  readonly version: number
}

/**
 * The history of a task `streamId` up to its running run: `TaskCreated`, the writer lease (epoch
 * {@link epoch}), then the lifecycle the kernel's decider accepts, one append per decision, up to
 * and including `StartRun`.
 */
export const runningTask = (streamId: string): RunningTask => {
  const setup: Array<SetupAppend> = []
  const branch: Array<Event.Event> = []
  const lease: Histories.Lease = { epoch, held: true, owner }
  for (let serial = 0; serial < 100; serial++) {
    const aggregate = Task.fold(branch)
    if (aggregate._tag === "Task" && aggregate.state === "RUNNING") {
      if (aggregate.run === null || aggregate.spec === null || aggregate.plan === null) break
      return {
        streamId,
        setup,
        runId: aggregate.run.runId,
        specDigest: aggregate.spec.digest,
        planDigest: aggregate.plan.digest,
        version: branch.length
      }
    }
    const unit = Histories.next(1, { projectId, taskId: streamId, branch, lease, leases: false, serial })
    setup.push({ events: unit, epoch: branch.length === 0 ? null : epoch })
    branch.push(...unit)
    if (serial === 0) {
      const acquired = TestEvents.leaseAcquired(epoch, owner)
      setup.push({ events: [acquired], epoch: null })
      branch.push(acquired)
    }
  }
  throw new Error("the task history did not reach RUNNING; the step pairs need a running task")
}

/** A running task's cursor: its version and the number of steps written so far. */
export interface StepCursor {
  readonly task: RunningTask
  version: number
  steps: number
}

/** A fresh cursor on `task`, right after its setup. */
export const cursorOf = (task: RunningTask): StepCursor => ({ task, version: task.version, steps: 0 })

const meta = (at: number) => ({ version: 1 as const, actor, at })

// An intent id shaped like the runner's (`in-` and 12 hex digits), derived from the step number so
// that both sides write the same bytes.
const intentIdOf = (stream: string, step: number) =>
  `in-${Digest.ofCanonical(`${stream}/${step}`).slice("sha256:".length, "sha256:".length + 12)}`

/**
 * The runner's four appends for the step `cursor.steps` of the task (advances the step count, not
 * the version: the caller advances that as it appends). Events are built as the runner builds them,
 * so their JSON has the catalogue's field order.
 */
export const stepAppends = (cursor: StepCursor): ReadonlyArray<ReadonlyArray<Event.Event>> => {
  const index = cursor.steps++
  const { runId, specDigest, planDigest, streamId } = cursor.task
  const at = 1_700_000_000_000 + index * 10
  // One attempt per step: a long run's attempt rows, each step a fresh attempt of the plan's step.
  const stepId = "build"
  const attempt = index + 1
  const intentId = intentIdOf(streamId, index)
  return [
    [
      { _tag: "AttemptScheduled", ...meta(at), runId, stepId, attempt },
      { _tag: "AttemptTransitioned", ...meta(at), runId, stepId, attempt, from: "Pending", to: "Running" },
      { _tag: "IntentRecorded", ...meta(at), intentId, runId, stepId, attempt, description: command }
    ],
    [{ _tag: "IntentDispatched", ...meta(at + 1), intentId }],
    [
      {
        _tag: "CommandExited",
        ...meta(at + 2),
        intentId,
        runId,
        stepId,
        attempt,
        exitCode: 0,
        signal: null,
        durationMs: 0,
        timedOut: false,
        stdoutRef: null,
        stderrRef: null,
        outputTail: "\n",
        changedPaths: []
      },
      { _tag: "IntentResolved", ...meta(at + 2), intentId, outcome: "Succeeded", resultRefs: [] },
      { _tag: "AttemptTransitioned", ...meta(at + 2), runId, stepId, attempt, from: "Running", to: "Succeeded" }
    ],
    [
      {
        _tag: "BoundaryRecorded",
        ...meta(at + 3),
        runId,
        head: "0123456789abcdef0123456789abcdef01234567",
        dirtyPaths: [],
        dirtyDigest: Digest.ofCanonical(JSON.stringify([])),
        specDigest,
        planDigest,
        nextStep: stepId
      },
      { _tag: "CheckpointRecorded", ...meta(at + 3), kind: "step", runId }
    ]
  ]
}

/** The raw side's two commits of a step: the events before the effect, and those after it. */
export const rawCommits = (appends: ReadonlyArray<ReadonlyArray<Event.Event>>): readonly [ReadonlyArray<Event.Event>, ReadonlyArray<Event.Event>] => [
  [...(appends[0] ?? []), ...(appends[1] ?? [])],
  [...(appends[2] ?? []), ...(appends[3] ?? [])]
]

/**
 * Our side of the durable-step pairs, on `store` (effects run by `run`): `cursor(name)` creates the
 * running task of stream `name` once (its setup appends, untimed) and `side(name)` is the timed
 * side, the runner's four appends per step.
 */
export const oursSteps = (run: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>, store: EventStore.EventStore["Type"]) => {
  let operation = 0
  const streams = new Map<string, StepCursor>()
  const cursor = async (name: string): Promise<StepCursor> => {
    const existing = streams.get(name)
    if (existing !== undefined) return existing
    const task = runningTask(name)
    let version = 0
    for (const [index, append] of task.setup.entries()) {
      await run(store.append({ projectId, streamId: name, expectedVersion: version, epoch: append.epoch, operationId: `${name}-setup-${index}`, events: append.events }))
      version += append.events.length
    }
    const created = cursorOf(task)
    streams.set(name, created)
    return created
  }
  const side = (name: string) => async (_round: number, operations: number) => {
    const stream = await cursor(name)
    await run(Effect.gen(function*() {
      for (let i = 0; i < operations; i++) {
        for (const events of stepAppends(stream)) {
          yield* store.append({ projectId, streamId: name, expectedVersion: stream.version, epoch, operationId: `op-${name}-${operation++}`, events })
          stream.version += events.length
        }
      }
    }))
  }
  return { cursor, side }
}
