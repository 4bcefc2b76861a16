/**
 * What the run records when an agent step ended (`RunAgentStep.finish`), from hand-made ends: the
 * stream's turn events, the exit with the intent's resolution and the attempt's end, and
 * `AgentReported`; then what the task does — nothing for a success in scope, a failure counted with
 * its fingerprint, a block for a path outside the scope, a cancel, a block when the tree could not be
 * read. And a decoder that says things out of bounds (anyone's decoder may be given to the runner)
 * never makes the write fail: the report is held to the event's schema.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Event from "@ratchet/kernel/Event"
import type * as Task from "@ratchet/kernel/Task"
import * as Either from "effect/Either"
import type * as AgentHost from "../src/AgentHost.js"
import * as AgentOutcome from "../src/AgentOutcome.js"
import * as RunAgentStep from "../src/RunAgentStep.js"

const decoded: AgentHost.Decoded = {
  turns: [{ _tag: "turnStarted" }, { _tag: "firstChunkAwaitStarted" }, { _tag: "firstChunkAwaitEnded" }, { _tag: "toolUsed" }, { _tag: "streamReadCompleted" }],
  sessionId: "s-1",
  model: "claude-sonnet-4-5-20250929",
  usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: null, cacheCreationInputTokens: 2 },
  costUsd: 0.01,
  result: { ok: true, subtype: "success", text: "Done.", turns: 2 },
  errors: [],
  lines: 7,
  malformedLines: 0,
  unknownEvents: 1
}

const ranOf = (
  exit: { readonly exitCode: number | null; readonly timedOut?: boolean; readonly cancelled?: boolean },
  stream: AgentHost.Decoded = decoded,
  more: Partial<RunAgentStep.Ran> = {}
): RunAgentStep.Ran => {
  const ended = {
    exitCode: exit.exitCode,
    signal: exit.exitCode === null ? "SIGKILL" : null,
    timedOut: exit.timedOut ?? false,
    cancelled: exit.cancelled ?? false,
    spawnError: null,
    durationMs: 1200,
    stdout: new TextEncoder().encode("{}\n"),
    stderr: new TextEncoder().encode("warning: something\n")
  }
  return {
    stepId: "impl",
    attempt: 1,
    intentId: "in-1",
    ended,
    changedPaths: ["src/flag.txt"],
    after: Either.right({ head: "abc", dirty: new Map([["src/flag.txt", "h"]]) }),
    stdoutRef: "sha256:aa",
    stderrRef: "sha256:bb",
    cancelled: null,
    agent: { host: "claude-code", decoded: stream, end: AgentOutcome.of({ ...ended, timeoutSeconds: 60 }, stream), transcriptRef: "sha256:aa" },
    ...more
  }
}

const context = {
  runId: "run-1",
  taskId: "t-1",
  actor: { kind: "runner", id: "r" } as const,
  at: 5,
  task: { failureFingerprints: [] as ReadonlyArray<string> } as unknown as Task.Task,
  allowedScope: ["src/**"],
  forbiddenScope: [] as ReadonlyArray<string>
}

const tags = (items: ReadonlyArray<{ readonly _tag: string }>) => items.map((item) => item._tag)
const reportOf = (items: ReadonlyArray<{ readonly _tag: string }>) => items.find((item) => item._tag === "AgentReported") as Event.Event

describe("RunAgentStep.finish", () => {
  // the agent's end → what the write holds (after RecordTurn, FinishStep, AgentReported)
  it.each([
    ["exit 0 with a result, in scope", ranOf({ exitCode: 0 }), context, []],
    ["exit 0 without a result", ranOf({ exitCode: 0 }, { ...decoded, result: null }), context, ["RecordAttemptFailure"]],
    ["exit 1", ranOf({ exitCode: 1 }), context, ["RecordAttemptFailure"]],
    ["the timeout", ranOf({ exitCode: null, timedOut: true }), context, ["RecordAttemptFailure"]],
    ["a path outside the scope", ranOf({ exitCode: 0 }), { ...context, allowedScope: ["docs/**"] }, ["Block"]],
    ["a tree that could not be read", ranOf({ exitCode: 0 }, decoded, { after: Either.left("git failed") }), context, ["Block"]],
    [
      "a person's cancel",
      ranOf({ exitCode: null, cancelled: true }, decoded, { cancelled: { kind: "cancel", actor: { kind: "user", id: "ana" }, reason: "stop", epoch: 1, at: 1 } as never }),
      context,
      ["Cancel"]
    ]
  ] as const)("%s", (_name, ran, ctx, then) => {
    const items = RunAgentStep.finish(ran, ctx)
    expect(tags(items)).toStrictEqual(["RecordTurn", "FinishStep", "AgentReported", ...then])
    const finish = items[1] as Extract<(typeof items)[number], { _tag: "FinishStep" }>
    expect(finish.outcome).toBe(ran.agent.end.outcome)
    expect(finish.resultRefs).toStrictEqual(["sha256:aa", "sha256:bb"])
    expect(Either.isRight(Event.decode(Event.encode(reportOf(items))))).toBe(true)
  })

  it("the same failure twice has the same fingerprint; the reason is in the output tail", () => {
    const first = RunAgentStep.finish(ranOf({ exitCode: 0 }, { ...decoded, result: null }), context)
    const again = RunAgentStep.finish(ranOf({ exitCode: 0 }, { ...decoded, result: null, lines: 9 }), context)
    const fingerprint = (items: typeof first) => (items.at(-1) as { fingerprint: string }).fingerprint
    expect(fingerprint(first)).toBe(fingerprint(again))
    const finish = first[1] as Extract<(typeof first)[number], { _tag: "FinishStep" }>
    expect(finish.exit.outputTail).toContain("its stream ended without the host's result")
    expect(finish.exit.outputTail).toContain("warning: something")
  })

  it("holds a decoder's report to the event's bounds instead of failing the write", () => {
    const hostile: AgentHost.Decoded = {
      turns: [{ _tag: "turnStarted" }, { _tag: "notATurnEvent" } as never],
      sessionId: "",
      model: "m".repeat(5000),
      usage: { inputTokens: Number.NaN, outputTokens: 1, cachedInputTokens: -1, cacheCreationInputTokens: null },
      costUsd: Number.POSITIVE_INFINITY,
      result: { ok: true, subtype: "", text: "t".repeat(70_000), turns: 1.5 },
      errors: [],
      lines: -3,
      malformedLines: Number.NaN,
      unknownEvents: 2
    }
    const items = RunAgentStep.finish(ranOf({ exitCode: 0 }, hostile), context)
    const report = reportOf(items)
    expect(Either.isRight(Event.decode(Event.encode(report)))).toBe(true)
    expect(report).toMatchObject({ sessionId: null, usage: null, costUsd: null, result: { subtype: "unknown", turns: null }, lines: 0, malformedLines: 0, unknownEvents: 2 })
    expect((items[0] as { events: ReadonlyArray<unknown> }).events).toStrictEqual([{ _tag: "turnStarted" }])
  })
})
