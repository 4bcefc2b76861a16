/**
 * `ratchet log`'s lines (`Render.logLine`), from a hand-written table of events and the lines they
 * must give: an agent attempt's report (host, session, model, turns, tokens, cost, transcript, the
 * reason when it did not succeed), a turn's flag, an attempt's note, a command's exit; text an
 * agent wrote is shown escaped on one line (control characters, bidirectional marks, newlines), and
 * markup is shown as it is, never obeyed.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Event from "@ratchet/kernel/Event"
import type * as EventStore from "@ratchet/storage/EventStore"
import * as Render from "../src/Render.js"

const at = Date.UTC(2026, 11, 6, 10, 0, 0)
const runner: Event.Actor = { kind: "runner", id: "runner-1" }
const agent: Event.Actor = { kind: "agent", id: "claude-code:sess-1" }
const stored = (event: Event.Event, lsn = 7, epoch: number | null = 3): EventStore.StoredEvent => ({
  lsn,
  projectId: "p",
  streamId: "t-1",
  branch: "main",
  version: lsn,
  epoch,
  operationId: "op",
  event
} as unknown as EventStore.StoredEvent)
const where = { runId: "run-1", stepId: "impl", attempt: 2 }
const head = (type: string, actor = "runner:runner-1", epoch = "  epoch 3") => `     7  2026-12-06T10:00:00.000Z  ${type.padEnd(20)}  ${actor}${epoch}`

const reported = (fields: Partial<Extract<Event.Event, { _tag: "AgentReported" }>>): Event.Event => ({
  _tag: "AgentReported",
  version: 1,
  actor: runner,
  at,
  intentId: "in-agent-1",
  ...where,
  host: "claude-code",
  sessionId: "sess-1",
  model: "claude-sonnet-4-5",
  usage: { inputTokens: 1200, outputTokens: 340, cachedInputTokens: 9000, cacheCreationInputTokens: null },
  costUsd: 0.0421,
  result: { ok: true, subtype: "success", text: "done", turns: 3 },
  lines: 9,
  malformedLines: 0,
  unknownEvents: 0,
  transcriptRef: "sha256:abc",
  reason: null,
  ...fields
} as Event.Event)

// [name, the event, the line].
const table: ReadonlyArray<readonly [string, EventStore.StoredEvent, string]> = [
  [
    "an agent's report",
    stored(reported({})),
    `${head("AgentReported")}  impl#2; claude-code; session sess-1; model claude-sonnet-4-5; 3 turns; tokens 1200 in / 340 out; cost $0.0421; transcript sha256:abc`
  ],
  [
    "a failed agent's report, with nothing reported",
    stored(reported({ sessionId: null, model: null, usage: null, costUsd: null, result: null, transcriptRef: null, reason: "the host exited 1" })),
    `${head("AgentReported")}  impl#2; claude-code; session —; model —; — turns; tokens —; cost —; transcript —; reason: the host exited 1`
  ],
  [
    "a reason with hostile text: escapes, bidirectional marks, newlines, markup",
    stored(reported({ reason: "boom\u001b[2J\u202eevil\n<script>alert(1)</script>\tend" })),
    `${head("AgentReported")}  impl#2; claude-code; session sess-1; model claude-sonnet-4-5; 3 turns; tokens 1200 in / 340 out; cost $0.0421; transcript sha256:abc; reason: boom\\u{1b}[2J\\u{202e}evil\\n<script>alert(1)</script>\\tend`
  ],
  [
    "a turn's flag",
    stored({ _tag: "TurnRecorded", version: 1, actor: runner, at, ...where, turn: { _tag: "toolRejected" } }),
    `${head("TurnRecorded")}  impl#2 toolRejected`
  ],
  [
    "a refusal noted by the agent's hook, hostile",
    stored({ _tag: "AttemptNoted", version: 1, actor: agent, at, ...where, note: "tool call refused: Write \u0007x\r\ny — <b>no</b>" }),
    `${head("AttemptNoted", "agent:claude-code:sess-1")}  impl#2: tool call refused: Write \\u{7}x\\u{d}\\ny — <b>no</b>`
  ],
  [
    "a long note, clipped",
    stored({ _tag: "AttemptNoted", version: 1, actor: runner, at, ...where, note: "x".repeat(400) }),
    `${head("AttemptNoted")}  impl#2: ${"x".repeat(300)}…`
  ],
  [
    "a command's exit",
    stored({
      _tag: "CommandExited",
      version: 1,
      actor: runner,
      at,
      intentId: "i-1",
      ...where,
      exitCode: 0,
      signal: null,
      durationMs: 1234,
      timedOut: false,
      stdoutRef: null,
      stderrRef: null,
      outputTail: "",
      changedPaths: ["test/a.txt"]
    }),
    `${head("CommandExited")}  impl#2; exit 0; 1234 ms; 1 path changed`
  ],
  [
    "a timed-out command",
    stored({
      _tag: "CommandExited",
      version: 1,
      actor: runner,
      at,
      intentId: "i-1",
      ...where,
      exitCode: null,
      signal: "SIGKILL",
      durationMs: 60000,
      timedOut: true,
      stdoutRef: null,
      stderrRef: null,
      outputTail: "",
      changedPaths: []
    }),
    `${head("CommandExited")}  impl#2; timed out; 60000 ms; 0 paths changed`
  ],
  [
    "an event with nothing more to say, and no epoch",
    stored({ _tag: "IntentDispatched", version: 1, actor: runner, at, intentId: "i-1" }, 7, null),
    head("IntentDispatched", "runner:runner-1", "")
  ]
]

describe("Render.logLine", () => {
  it.each(table)("%s", (_, record, line) => {
    expect(Render.logLine(record)).toBe(line)
    // One line, with no character a terminal would obey.
    expect([...Render.logLine(record)].filter((character) => "\n\r\t\u001b\u202e".includes(character))).toStrictEqual([])
  })
})
