/**
 * How an agent step's attempt ends, from a hand table of the host process's ends × the stream's
 * endings: every Succeeded row, and every row that must not be one (a truncated stream with exit 0,
 * a host that says it failed, a non-zero exit with a good result, a timeout, a cancel, a program
 * that could not start), each with the words of its reason.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as AgentHost from "../src/AgentHost.js"
import * as AgentOutcome from "../src/AgentOutcome.js"

const exit = (exitCode: number | null, more: Partial<AgentOutcome.Ended> = {}): AgentOutcome.Ended => ({
  exitCode,
  signal: null,
  timedOut: false,
  cancelled: false,
  spawnError: null,
  timeoutSeconds: 600,
  ...more
})

type Stream = Pick<AgentHost.Decoded, "result" | "errors" | "lines" | "malformedLines">
const finished: Stream = { result: { ok: true, subtype: "success", text: "Added the flag.", turns: 3 }, errors: [], lines: 9, malformedLines: 0 }
const finishedWithGarbage: Stream = { ...finished, lines: 12, malformedLines: 3 }
const failed: Stream = { result: { ok: false, subtype: "error_max_turns", text: null, turns: 20 }, errors: [], lines: 30, malformedLines: 0 }
const failedWithWords: Stream = { result: { ok: false, subtype: "turn.failed", text: "stream disconnected", turns: null }, errors: [], lines: 4, malformedLines: 0 }
const truncated: Stream = { result: null, errors: [], lines: 5, malformedLines: 0 }
const garbage: Stream = { result: null, errors: [], lines: 3, malformedLines: 3 }
const silent: Stream = { result: null, errors: [], lines: 0, malformedLines: 0 }
const hostError: Stream = { result: null, errors: ["API Error: 529 overloaded"], lines: 2, malformedLines: 0 }

describe("AgentOutcome.of", () => {
  // the process, the stream → the attempt, words of the reason (null: none)
  const table: ReadonlyArray<readonly [string, AgentOutcome.Ended, Stream, AgentOutcome.Outcome["outcome"], string | null]> = [
    // accepted: the only ways to succeed
    ["exit 0, a successful result", exit(0), finished, "Succeeded", null],
    ["exit 0, a successful result among malformed lines", exit(0), finishedWithGarbage, "Succeeded", null],
    // refused: exit 0 is not enough
    ["exit 0, a truncated stream", exit(0), truncated, "Failed", "the agent exited 0 but its stream ended without the host's result (truncated)"],
    ["exit 0, nothing but malformed lines", exit(0), garbage, "Failed", "(truncated, 3 of its 3 lines malformed)"],
    ["exit 0, no stream at all", exit(0), silent, "Failed", "the agent exited 0 without writing a stream"],
    ["exit 0, a truncated stream after the host's error", exit(0), hostError, "Failed", "(truncated); the host said: API Error: 529 overloaded"],
    ["exit 0, the host says it failed", exit(0), failed, "Failed", "the host ended with error_max_turns"],
    ["exit 0, the host says it failed and why", exit(0), failedWithWords, "Failed", "the host ended with turn.failed; the host said: stream disconnected"],
    // refused: a non-zero exit, whatever the stream said
    ["exit 1, a successful result", exit(1), finished, "Failed", "the agent exited 1; the host said: Added the flag."],
    ["exit 1, a truncated stream", exit(1), truncated, "Failed", "the agent exited 1"],
    ["exit 2, the host's error", exit(2), hostError, "Failed", "the agent exited 2; the host said: API Error: 529 overloaded"],
    ["killed by a signal", exit(null, { signal: "SIGSEGV" }), truncated, "Failed", "the agent was ended by SIGSEGV"],
    ["could not start", exit(null, { spawnError: "the claude program is not on PATH; install it, or set RATCHET_CLAUDE_BIN to its full path" }), silent, "Failed", "could not be started: the claude program is not on PATH"],
    // refused: stopped from outside, whatever it said before
    ["killed at the timeout", exit(null, { signal: "SIGKILL", timedOut: true }), finished, "TimedOut", "past its timeout of 600 s and its process group was killed"],
    ["killed at the timeout, truncated", exit(null, { signal: "SIGKILL", timedOut: true }), truncated, "TimedOut", "timeout"],
    ["stopped by a cancel", exit(null, { signal: "SIGKILL", cancelled: true }), finished, "Cancelled", "stopped by a cancel"],
    ["a cancel wins over a timeout", exit(null, { cancelled: true, timedOut: true }), truncated, "Cancelled", "cancel"]
  ]

  it.each(table)("%s", (_name, ended, stream, outcome, words) => {
    const decided = AgentOutcome.of(ended, stream)
    expect(decided.outcome).toBe(outcome)
    if (words === null) expect(decided.reason).toBeNull()
    else expect(decided.reason).toContain(words)
  })

  it("succeeds in exactly the rows with exit 0 and a successful result", () => {
    const succeeded = table.filter(([, ended, stream]) => AgentOutcome.of(ended, stream).outcome === "Succeeded").map(([name]) => name)
    expect(succeeded).toStrictEqual(["exit 0, a successful result", "exit 0, a successful result among malformed lines"])
  })

  it("clips what the host said", () => {
    const long: Stream = { ...failedWithWords, result: { ok: false, subtype: "turn.failed", text: "x".repeat(5000), turns: null } }
    expect(AgentOutcome.of(exit(0), long).reason!.length).toBeLessThan(600)
  })
})
