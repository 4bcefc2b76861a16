/**
 * `run.md`: the run as people read it, rewritten at every step boundary from the store — each
 * step of the plan with its attempts, how each ended (exit code, duration, the paths it changed,
 * notes from recovery or from the worker), and the open blocker. Deterministic for a given log.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as Task from "@ratchet/kernel/Task"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Projection from "./Projection.js"

/**
 * The stored events of run `runId` of `taskId` (on `branch`, main by default), from its run-start
 * checkpoint on.
 *
 * @since 0.1.0
 * @category constructors
 */
export const runEvents = (taskId: string, runId: string, branch?: string) =>
  Effect.gen(function*() {
    const models = yield* ReadModel.ReadModels
    const store = yield* EventStore.EventStore
    const start = (yield* models.checkpoints(taskId, branch)).find((row) => row.kind === "run_start" && row.runId === runId)
    const events = yield* Stream.runCollect(store.read({ streamId: taskId, branch, fromLsn: start?.lsn ?? 0 }))
    return Chunk.toReadonlyArray(events)
  })

/**
 * One attempt as the report shows it.
 *
 * @since 0.1.0
 * @category models
 */
export interface AttemptLine {
  readonly stepId: string
  readonly attempt: number
  readonly state: string
  readonly exit: Event.Event & { readonly _tag: "CommandExited" } | null
  readonly notes: ReadonlyArray<string>
}

/**
 * The run's attempts folded from its events, in the order they were scheduled.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attemptsOf = (events: ReadonlyArray<EventStore.StoredEvent>, runId: string): ReadonlyArray<AttemptLine> => {
  const lines = new Map<string, { stepId: string; attempt: number; state: string; exit: AttemptLine["exit"]; notes: Array<string> }>()
  const keyOf = (stepId: string, attempt: number) => `${stepId}#${attempt}`
  for (const { event } of events) {
    switch (event._tag) {
      case "AttemptScheduled":
        if (event.runId === runId) lines.set(keyOf(event.stepId, event.attempt), { stepId: event.stepId, attempt: event.attempt, state: "Pending", exit: null, notes: [] })
        break
      case "AttemptTransitioned": {
        const line = lines.get(keyOf(event.stepId, event.attempt))
        if (event.runId === runId && line !== undefined) line.state = event.to
        break
      }
      case "CommandExited": {
        const line = lines.get(keyOf(event.stepId, event.attempt))
        if (event.runId === runId && line !== undefined) line.exit = event
        break
      }
      case "AttemptNoted": {
        const line = lines.get(keyOf(event.stepId, event.attempt))
        if (event.runId === runId && line !== undefined) line.notes.push(event.note)
        break
      }
      default:
        break
    }
  }
  return [...lines.values()]
}

const cell = (text: string) => Projection.visible(text).replace(/\|/g, "\\|").replace(/[\r\n]+/g, " ")

const ending = (line: AttemptLine): string => {
  const exit = line.exit
  if (exit === null) return ""
  if (exit.timedOut) return `timed out after ${(exit.durationMs / 1000).toFixed(1)} s`
  return exit.exitCode !== null ? `exit ${exit.exitCode}, ${(exit.durationMs / 1000).toFixed(1)} s` : `killed by ${exit.signal ?? "a signal"}`
}

/**
 * `run.md` for the task's current run, or null when it has none.
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (task: Task.Task, branch?: string) =>
  Effect.gen(function*() {
    if (task.run === null || task.plan === null) return null
    const run = task.run
    const attempts = attemptsOf(yield* runEvents(task.taskId, run.runId, branch), run.runId)
    const out: Array<string> = [
      Projection.header,
      `# Run ${run.runId} — ${cell(task.goal)}`,
      "",
      `- Task: ${task.taskId} (${task.state})${branch === undefined || branch === "main" ? "" : ` on branch ${branch}`}`,
      `- Spec: ${run.specDigest}`,
      `- Plan: ${run.planDigest}`,
      `- Lease epoch at start: ${run.leaseEpoch}`,
      ""
    ]
    for (const step of task.plan.plan.steps) {
      const own = attempts.filter((line) => line.stepId === step.id)
      const last = own.at(-1)
      out.push(`## ${step.id} — ${cell(step.title)}: ${last === undefined ? "not started" : last.state}`, "")
      out.push(step.run !== undefined ? `Command: \`${cell(step.run.command)}\`` : `Manual: ${cell(step.manual?.instructions ?? "")}`, "")
      if (own.length === 0) continue
      out.push("| attempt | state | ended | changed paths | notes |", "|---|---|---|---|---|")
      for (const line of own) {
        const changed = line.exit === null ? "" : line.exit.changedPaths.slice(0, 20).join(", ") + (line.exit.changedPaths.length > 20 ? ", …" : "")
        out.push(`| ${line.attempt} | ${line.state} | ${cell(ending(line))} | ${cell(changed)} | ${cell(line.notes.join("; "))} |`)
      }
      out.push("")
    }
    if (task.blockers.length > 0) {
      out.push("## Blocked", "")
      for (const blocker of task.blockers) out.push(`- ${blocker.category} (${blocker.owner}): ${cell(blocker.requiredAction)}`)
      out.push("")
    }
    return out.join("\n")
  })
