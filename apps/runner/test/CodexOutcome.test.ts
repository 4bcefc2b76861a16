/**
 * How a Codex agent step's attempt ends, from its `codex exec --json` stream as the runner reads it
 * (`Wiring.agentHosts.codex`, then `AgentOutcome.of` for a process that exited 0): a hand table of
 * streams. A failed turn anywhere fails the attempt with the failure's message, whatever turn
 * follows; an error Codex recovered from does not.
 */
import { describe, expect, it } from "@effect/vitest"
import * as AgentOutcome from "@ratchet/controller/AgentOutcome"
import * as Wiring from "../src/Wiring.js"

const line = (value: unknown): string => JSON.stringify(value)
const started = line({ type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" })
const turn = line({ type: "turn.started" })
const completed = line({ type: "turn.completed", usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 2 } })
const failed = (message: string) => line({ type: "turn.failed", error: { message } })
const error = (message: string) => line({ type: "error", message })
const said = (text: string) => line({ type: "item.completed", item: { id: `m-${text}`, type: "agent_message", text } })

const exited0: AgentOutcome.Ended = { exitCode: 0, signal: null, timedOut: false, cancelled: false, spawnError: null, timeoutSeconds: 600 }

const codex = Wiring.agentHosts.codex!

const outcomeOf = (lines: ReadonlyArray<string>): AgentOutcome.Outcome => AgentOutcome.of(exited0, codex.decode([started, ...lines].join("\n") + "\n"))

describe("a Codex stream → the attempt's end (the process exited 0)", () => {
  // [the stream after the thread started, the outcome, what its reason says (null: none)]
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, AgentOutcome.Outcome["outcome"], string | null]> = [
    ["one completed turn", [turn, said("done"), completed], "Succeeded", null],
    ["a stream error recovered from, then a completed turn", [turn, error("Reconnecting... 1/5"), said("done"), completed], "Succeeded", null],
    ["a failed turn", [turn, failed("usage limit reached")], "Failed", "the host ended with turn.failed; the host said: usage limit reached"],
    ["a failed turn, then a completed one", [turn, failed("stream disconnected"), turn, said("all good"), completed], "Failed", "the host ended with turn.failed; the host said: stream disconnected"],
    ["a critical error, its failed turn, then a completed one", [turn, error("status 400"), failed("status 400"), turn, completed], "Failed", "the host ended with turn.failed; the host said: status 400"],
    ["a completed turn, then a failed one", [turn, completed, turn, failed("context window exceeded")], "Failed", "the host ended with turn.failed; the host said: context window exceeded"],
    ["a stream error and no turn end", [turn, error("Reconnecting... 5/5")], "Failed", "its stream ended without the host's result (truncated); the host said: Reconnecting... 5/5"]
  ]
  for (const [name, lines, outcome, reason] of cases) {
    it(`${name}: ${outcome}`, () => {
      const got = outcomeOf(lines)
      expect(got.outcome).toBe(outcome)
      if (reason === null) expect(got.reason).toBeNull()
      else expect(got.reason).toContain(reason)
    })
  }
})
