/**
 * An agent step's attempts as `ratchet status` shows them (issue 22): for each attempt of the
 * current run whose host reported (ADR 0039), its turns, token usage, cost and transcript
 * reference. Read like `run.md`'s attempts: the run's last step boundaries (`RunReport`), found by
 * index, so a long history costs no more than a short one; a plan without agent steps reads nothing.
 *
 * @since 0.5.0
 */
import * as Plan from "@ratchet/kernel/Plan"
import type * as Task from "@ratchet/kernel/Task"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as Effect from "effect/Effect"
import * as RunReport from "./RunReport.js"
import * as TaskBranch from "./TaskBranch.js"

/**
 * @since 0.5.0
 * @category models
 */
export interface AgentAttempt {
  readonly stepId: string
  readonly attempt: number
  readonly state: string
  readonly host: string
  readonly sessionId: string | null
  readonly model: string | null
  /** The turns the host reported, or null when it reported none. */
  readonly turns: number | null
  readonly usage: {
    readonly inputTokens: number
    readonly outputTokens: number
    readonly cachedInputTokens: number | null
  } | null
  readonly costUsd: number | null
  readonly transcriptRef: string | null
  readonly reason: string | null
}

/**
 * The agent attempts of `task`'s current run on `branch`.
 *
 * @since 0.5.0
 * @category constructors
 */
export const of = (task: Task.Task, branch: string) =>
  Effect.gen(function*() {
    const run = task.run
    const steps = task.plan?.plan.steps ?? []
    if (run === null || !steps.some((step) => Plan.kindOf(step) === "agent")) return [] as ReadonlyArray<AgentAttempt>
    const frontier = yield* (yield* ReadModel.ReadModels).runFrontier(task.taskId, run.runId, branch)
    const events = yield* RunReport.recentRunEvents(task.taskId, run.runId, RunReport.listedBoundaries(steps.length), branch)
    // In the plan's order, then by attempt (the frontier's rows come first as read).
    const order = (stepId: string) => steps.findIndex((step) => step.id === stepId)
    const lines = [...RunReport.attemptsOf(events, run.runId, [...frontier.attempts.values()])]
      .sort((a, b) => order(a.stepId) - order(b.stepId) || a.attempt - b.attempt)
    return lines.flatMap((line): ReadonlyArray<AgentAttempt> => {
      const agent = line.agent
      if (agent === null) return []
      return [{
        stepId: line.stepId,
        attempt: line.attempt,
        state: line.state,
        host: agent.host,
        sessionId: agent.sessionId,
        model: agent.model,
        turns: agent.result?.turns ?? null,
        usage: agent.usage === null
          ? null
          : { inputTokens: agent.usage.inputTokens, outputTokens: agent.usage.outputTokens, cachedInputTokens: agent.usage.cachedInputTokens },
        costUsd: agent.costUsd,
        transcriptRef: agent.transcriptRef,
        reason: agent.reason
      }]
    })
  })

/**
 * The agent attempts of task `taskId` on its current branch; none when it has no summary.
 *
 * @since 0.5.0
 * @category constructors
 */
export const ofTaskId = (taskId: string) =>
  Effect.gen(function*() {
    const branch = yield* TaskBranch.of(taskId)
    const summary = yield* (yield* ReadModel.ReadModels).taskSummary(taskId, branch)
    return summary === null ? ([] as ReadonlyArray<AgentAttempt>) : yield* of(summary.task, branch)
  })

/**
 * One attempt on one line: `impl#2 (claude-code) Succeeded: 3 turns; 1200 tokens in (9000
 * cached), 340 out; $0.0421; transcript sha256:…`.
 *
 * @since 0.5.0
 * @category rendering
 */
export const line = (attempt: AgentAttempt): string =>
  `${attempt.stepId}#${attempt.attempt} (${attempt.host}) ${attempt.state}: ${
    [
      attempt.turns === null ? null : `${attempt.turns} turn${attempt.turns === 1 ? "" : "s"}`,
      attempt.usage === null
        ? null
        : `${attempt.usage.inputTokens} tokens in${attempt.usage.cachedInputTokens === null ? "" : ` (${attempt.usage.cachedInputTokens} cached)`}, ${attempt.usage.outputTokens} out`,
      attempt.costUsd === null ? null : `$${attempt.costUsd.toFixed(4)}`,
      `transcript ${attempt.transcriptRef ?? "not stored"}`,
      attempt.reason
    ].filter((part): part is string => part !== null).join("; ")
  }`
