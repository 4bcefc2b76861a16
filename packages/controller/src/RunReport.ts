/**
 * `run.md`: the run as people read it, rewritten at every step boundary from the store — each
 * step of the plan with its attempts, how each ended (exit code, duration, the paths it changed,
 * notes from recovery or from the worker), and the open blocker. Deterministic for a given log.
 *
 * The report lists the attempts of the run's last {@link listedBoundaries} step boundaries (two per
 * step of the plan, at least ten: every attempt of a run without many retries), plus each step's
 * latest attempt: it reads the run's events from the earliest of those boundaries on, found by
 * index, so a runner that blocks or stops after a long run reads a part of its log bounded by the
 * plan, not all of it. A step with earlier attempts says how many are left out and where the whole
 * log is (`ratchet log`).
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Plan from "@ratchet/kernel/Plan"
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
    const start = (yield* models.checkpoints(taskId, branch, { runId, kind: "run_start", last: 1 }))[0]
    const events = yield* Stream.runCollect(store.read({ streamId: taskId, branch, fromLsn: start?.lsn ?? 0 }))
    return Chunk.toReadonlyArray(events)
  })

/**
 * How many of the run's latest step boundaries `run.md` lists the attempts of, for a plan of
 * `steps` steps: two per step, at least ten.
 *
 * @since 0.2.0
 * @category models
 */
export const listedBoundaries = (steps: number): number => Math.max(10, 2 * steps)

/**
 * The stored events of run `runId` of `taskId` (on `branch`, main by default) from its
 * `boundaries`-th latest step boundary on (from its run-start checkpoint when it has fewer): each
 * boundary is found by index, not by reading the branch's checkpoints.
 *
 * @since 0.2.0
 * @category constructors
 */
export const recentRunEvents = (taskId: string, runId: string, boundaries: number, branch?: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const { from } = yield* windowStart(taskId, runId, boundaries, branch)
    return Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: taskId, branch, fromLsn: from })))
  })

/** Where the run's latest `boundaries` step boundaries begin, and whether that is after the run's start. */
const windowStart = (taskId: string, runId: string, boundaries: number, branch?: string) =>
  Effect.gen(function*() {
    const models = yield* ReadModel.ReadModels
    const recent = yield* models.checkpoints(taskId, branch, { runId, kind: "step", last: boundaries })
    const first = recent.length === boundaries ? recent[0] : undefined
    if (first !== undefined) return { from: first.lsn, partial: true }
    return { from: (yield* models.checkpoints(taskId, branch, { runId, kind: "run_start", last: 1 }))[0]?.lsn ?? 0, partial: false }
  })

/**
 * The events a view of run `runId`'s latest `boundaries` step boundaries needs, read by index as
 * {@link recentRunEvents} reads them, with the run's frontier attempts (its latest attempt of each
 * step and any open one, which may have begun before the events read) to pass to
 * {@link attemptsOf} as `known`, and whether the events begin after the run's start (`partial`):
 * a page of a run of thousands of attempts reads its last window, not the run's whole log.
 *
 * @since 0.4.0
 * @category constructors
 */
export const recentRun = (taskId: string, runId: string, boundaries: number, branch?: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const { from, partial } = yield* windowStart(taskId, runId, boundaries, branch)
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: taskId, branch, fromLsn: from })))
    const frontier = yield* (yield* ReadModel.ReadModels).runFrontier(taskId, runId, branch)
    return { events, known: [...frontier.attempts.values()], partial }
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
  /** What an agent step's host reported (ADR 0039), or null. */
  readonly agent: Event.Event & { readonly _tag: "AgentReported" } | null
  readonly notes: ReadonlyArray<string>
}

/**
 * The run's attempts folded from its events, in the order they were scheduled. `known` are attempt
 * rows the events may begin after (a part of the run's log): each is listed with its stored state,
 * and what the events say about it is added.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attemptsOf = (
  events: ReadonlyArray<EventStore.StoredEvent>,
  runId: string,
  known: ReadonlyArray<{ readonly stepId: string; readonly attempt: number; readonly state: string }> = []
): ReadonlyArray<AttemptLine> => {
  const lines = new Map<string, { stepId: string; attempt: number; state: string; exit: AttemptLine["exit"]; agent: AttemptLine["agent"]; notes: Array<string> }>()
  const keyOf = (stepId: string, attempt: number) => `${stepId}#${attempt}`
  for (const row of known) lines.set(keyOf(row.stepId, row.attempt), { stepId: row.stepId, attempt: row.attempt, state: row.state, exit: null, agent: null, notes: [] })
  for (const { event } of events) {
    switch (event._tag) {
      case "AttemptScheduled":
        if (event.runId === runId) {
          lines.set(keyOf(event.stepId, event.attempt), { stepId: event.stepId, attempt: event.attempt, state: "Pending", exit: null, agent: null, notes: [] })
        }
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
      case "AgentReported": {
        const line = lines.get(keyOf(event.stepId, event.attempt))
        if (event.runId === runId && line !== undefined) line.agent = event
        break
      }
      default:
        break
    }
  }
  return [...lines.values()]
}

const cell = (text: string) => Projection.visible(text).replace(/\|/g, "\\|").replace(/[\r\n]+/g, " ")

/** How the step's work is done, on one line. */
const workOf = (step: Plan.Step): string => {
  const kind = Plan.kindOf(step)
  switch (kind) {
    case "command":
      return `Command: \`${cell(step.run?.command ?? "")}\``
    case "manual":
      return `Manual: ${cell(step.manual?.instructions ?? "")}`
    case "agent":
      return `Agent (${step.agent?.host ?? ""}${step.agent?.model === undefined ? "" : `, ${cell(step.agent.model)}`}): ${
        cell(step.agent?.prompt ?? "")
      }`
  }
}

const ending = (line: AttemptLine): string => {
  const exit = line.exit
  if (exit === null) return ""
  if (exit.timedOut) return `timed out after ${(exit.durationMs / 1000).toFixed(1)} s`
  return exit.exitCode !== null ? `exit ${exit.exitCode}, ${(exit.durationMs / 1000).toFixed(1)} s` : `killed by ${exit.signal ?? "a signal"}`
}

/** What an agent's host reported of an attempt, on one line. */
const reportOf = (attempt: number, agent: NonNullable<AttemptLine["agent"]>): string => {
  const usage = agent.usage
  const parts = [
    agent.sessionId === null ? null : `session ${agent.sessionId}`,
    agent.model === null ? null : `model ${agent.model}`,
    usage === null
      ? null
      : `${usage.inputTokens} tokens in${usage.cachedInputTokens === null ? "" : ` (${usage.cachedInputTokens} cached)`}, ${usage.outputTokens} out`,
    agent.costUsd === null ? null : `$${agent.costUsd.toFixed(4)}`,
    `transcript ${agent.transcriptRef ?? "not stored"}`,
    agent.reason
  ].filter((part): part is string => part !== null)
  return `- Attempt ${attempt} (${agent.host}): ${cell(parts.join("; "))}`
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
    // The latest attempt of each step (and any open one) is listed even when it began before the
    // events read: a manual step's attempt opens before its boundary.
    const frontier = yield* (yield* ReadModel.ReadModels).runFrontier(task.taskId, run.runId, branch)
    const listed = listedBoundaries(task.plan.plan.steps.length)
    const attempts = attemptsOf(yield* recentRunEvents(task.taskId, run.runId, listed, branch), run.runId, [...frontier.attempts.values()])
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
      const own = attempts.filter((line) => line.stepId === step.id).sort((a, b) => a.attempt - b.attempt)
      const last = own.at(-1)
      out.push(`## ${step.id} — ${cell(step.title)}: ${last === undefined ? "not started" : last.state}`, "")
      out.push(workOf(step), "")
      if (own.length === 0) continue
      const earliest = own[0]?.attempt ?? 1
      if (earliest > 1) {
        out.push(
          `Attempts 1–${earliest - 1} are not listed (this report lists the run's last ${listed} step boundaries); \`ratchet log ${task.taskId}\` shows every event.`,
          ""
        )
      }
      out.push("| attempt | state | ended | changed paths | notes |", "|---|---|---|---|---|")
      for (const line of own) {
        const changed = line.exit === null ? "" : line.exit.changedPaths.slice(0, 20).join(", ") + (line.exit.changedPaths.length > 20 ? ", …" : "")
        out.push(`| ${line.attempt} | ${line.state} | ${cell(ending(line))} | ${cell(changed)} | ${cell(line.notes.join("; "))} |`)
      }
      out.push("")
      const reported = own.flatMap((line) => (line.agent === null ? [] : [reportOf(line.attempt, line.agent)]))
      if (reported.length > 0) out.push(...reported, "")
    }
    if (task.blockers.length > 0) {
      out.push("## Blocked", "")
      for (const blocker of task.blockers) out.push(`- ${blocker.category} (${blocker.owner}): ${cell(blocker.requiredAction)}`)
      out.push("")
    }
    return out.join("\n")
  })
