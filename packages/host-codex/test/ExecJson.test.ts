/**
 * Decoding Codex's `codex exec --json` stream, from transcripts written by hand in the shapes its
 * TypeScript SDK declares (`ThreadEvent`, `ThreadItem`): a run that edits and tests, a failed
 * turn, a declined call, a stream error; then what must never crash or mislead — a stream cut
 * short, malformed and wrongly-shaped lines, unknown event and item types, an oversized line,
 * hostile text, many calls — and the turn events the signals map to.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as AgentStream from "@ratchet/host/AgentStream"
import * as ExecJson from "../src/ExecJson.js"

const line = (value: unknown): string => JSON.stringify(value)
const thread = "0199a213-81c0-7800-8aa1-bbab2a035a53"

const started = line({ type: "thread.started", thread_id: thread })
const turnStarted = line({ type: "turn.started" })
const item = (type: "item.started" | "item.updated" | "item.completed", fields: Record<string, unknown>) => line({ type, item: fields })
const turnCompleted = (usage = { input_tokens: 2946, cached_input_tokens: 1024, output_tokens: 70 }) => line({ type: "turn.completed", usage })

const tags = (signals: ReadonlyArray<AgentStream.Signal>) => signals.map((signal) => signal._tag)
const decode = (...lines: ReadonlyArray<string>) => ExecJson.decode(lines.join("\n") + "\n")

const editAndTest = [
  started,
  turnStarted,
  item("item.completed", { id: "item_0", type: "reasoning", text: "**Reading the list command**" }),
  item("item.started", { id: "item_1", type: "command_execution", command: "bash -lc 'cat src/list.ts'", aggregated_output: "", status: "in_progress" }),
  item("item.completed", { id: "item_1", type: "command_execution", command: "bash -lc 'cat src/list.ts'", aggregated_output: "export …", exit_code: 0, status: "completed" }),
  item("item.completed", { id: "item_2", type: "file_change", changes: [{ path: "src/list.ts", kind: "update" }], status: "completed" }),
  item("item.started", { id: "item_3", type: "command_execution", command: "npm test", aggregated_output: "", status: "in_progress" }),
  item("item.updated", { id: "item_3", type: "command_execution", command: "npm test", aggregated_output: "1 failing", status: "in_progress" }),
  item("item.completed", { id: "item_3", type: "command_execution", command: "npm test", aggregated_output: "1 failing", exit_code: 1, status: "failed" }),
  item("item.started", { id: "item_4", type: "todo_list", items: [{ text: "fix the test", completed: false }] }),
  item("item.completed", { id: "item_5", type: "agent_message", text: "Added --json; one test still fails." }),
  turnCompleted()
]

describe("ExecJson.decode: well-formed streams", () => {
  it("reads a turn that reads, edits and tests: calls requested once, used or failed, the last message as result", () => {
    const { signals, summary } = decode(...editAndTest)
    expect(tags(signals)).toStrictEqual([
      "RequestStarted", "FirstChunk",
      "ToolRequested", "ToolCompleted",
      "ToolRequested", "ToolCompleted",
      "ToolRequested", "ToolFailed",
      "StreamCompleted"
    ])
    expect(signals[2]).toStrictEqual({ _tag: "ToolRequested", tool: "command_execution", callId: "item_1" })
    expect(summary).toStrictEqual({
      host: "codex",
      sessionId: thread,
      model: null,
      usage: { inputTokens: 2946, outputTokens: 70, cachedInputTokens: 1024, cacheCreationInputTokens: null },
      costUsd: null,
      result: { ok: true, subtype: "turn.completed", text: "Added --json; one test still fails.", turns: 1 },
      errors: [],
      counts: {
        lines: 12, decoded: 12, unknown: 0, malformed: 0, oversized: 0,
        requests: 1, toolRequests: 3, toolCompleted: 2, toolFailed: 1, toolRejected: 0
      },
      unknownTypes: {},
      malformed: []
    })
  })

  it("an MCP call names its tool; a web search without status is used; a declined command is rejected", () => {
    const { signals, summary } = decode(
      started,
      turnStarted,
      item("item.started", { id: "m", type: "mcp_tool_call", server: "ratchet", tool: "task_status", arguments: {}, status: "in_progress" }),
      item("item.completed", { id: "m", type: "mcp_tool_call", server: "ratchet", tool: "task_status", arguments: {}, status: "failed", error: { message: "denied" } }),
      item("item.completed", { id: "w", type: "web_search", query: "effect schema" }),
      item("item.completed", { id: "c", type: "command_execution", command: "ratchet approve t-1 plan", aggregated_output: "", status: "declined" }),
      turnCompleted()
    )
    expect(signals.filter((signal) => signal._tag !== "RequestStarted" && signal._tag !== "FirstChunk")).toStrictEqual([
      { _tag: "ToolRequested", tool: "task_status", callId: "m" },
      { _tag: "ToolFailed", callId: "m" },
      { _tag: "ToolRequested", tool: "web_search", callId: "w" },
      { _tag: "ToolCompleted", callId: "w" },
      { _tag: "ToolRequested", tool: "command_execution", callId: "c" },
      { _tag: "ToolRejected", callId: "c" },
      { _tag: "StreamCompleted" }
    ])
    expect(summary.counts).toMatchObject({ toolRequests: 3, toolCompleted: 1, toolFailed: 1, toolRejected: 1 })
  })

  it("a failed turn is the end of the stream with a failed result and its message", () => {
    const { signals, summary } = decode(started, turnStarted, line({ type: "turn.failed", error: { message: "stream disconnected before completion" } }))
    expect(tags(signals)).toStrictEqual(["RequestStarted", "HostError", "StreamCompleted"])
    expect(summary.result).toStrictEqual({ ok: false, subtype: "turn.failed", text: "stream disconnected before completion", turns: 1 })
    expect(summary.errors).toStrictEqual(["stream disconnected before completion"])
    expect(summary.usage).toBeNull()
  })

  it("a stream error and an error item are recorded; without a turn end there is no result", () => {
    const { signals, summary } = decode(
      started,
      turnStarted,
      item("item.completed", { id: "e", type: "error", message: "Falling back from WebSockets" }),
      line({ type: "error", message: "Reconnecting... 1/5" })
    )
    expect(tags(signals)).toStrictEqual(["RequestStarted", "FirstChunk", "HostError", "HostError"])
    expect(summary.errors).toStrictEqual(["Falling back from WebSockets", "Reconnecting... 1/5"])
    expect(summary.result).toBeNull()
  })

  it("sums usage over turns and keeps the last turn's result", () => {
    const { summary } = decode(
      started,
      turnStarted,
      item("item.completed", { id: "a", type: "agent_message", text: "first" }),
      turnCompleted({ input_tokens: 10, cached_input_tokens: 0, output_tokens: 1 }),
      turnStarted,
      item("item.completed", { id: "b", type: "agent_message", text: "second" }),
      turnCompleted({ input_tokens: 5, cached_input_tokens: 5, output_tokens: 2 })
    )
    expect(summary.usage).toStrictEqual({ inputTokens: 15, outputTokens: 3, cachedInputTokens: 5, cacheCreationInputTokens: null })
    expect(summary.result).toStrictEqual({ ok: true, subtype: "turn.completed", text: "second", turns: 2 })
    expect(summary.counts.requests).toBe(2)
  })

  it("knows the plan delta and a question to the user and ignores them", () => {
    const { summary } = decode(
      line({ type: "item.plan.delta", item_id: "p", delta: "1. read" }),
      line({ type: "request_user_input", id: "t", call_id: "c", questions: [] })
    )
    expect(summary.counts).toMatchObject({ decoded: 2, unknown: 0 })
  })
})

describe("ExecJson.decode: a failed turn anywhere is the outcome", () => {
  const failed = (message: string) => line({ type: "turn.failed", error: { message } })
  const error = (message: string) => line({ type: "error", message })
  const said = (text: string) => item("item.completed", { id: `m-${text}`, type: "agent_message", text })
  // [the stream, after the thread started: the result (ok, subtype, text, turns), or null]
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, AgentStream.Result | null]> = [
    // Accepted: the turn completed, whatever the host recovered from on the way.
    ["one turn that completed", [turnStarted, said("done"), turnCompleted()], { ok: true, subtype: "turn.completed", text: "done", turns: 1 }],
    ["a stream error recovered from, then the turn completed", [turnStarted, error("Reconnecting... 1/5"), said("done"), turnCompleted()], {
      ok: true,
      subtype: "turn.completed",
      text: "done",
      turns: 1
    }],
    ["an error item (a warning), then the turn completed", [turnStarted, item("item.completed", { id: "w", type: "error", message: "deprecated flag" }), said("done"), turnCompleted()], {
      ok: true,
      subtype: "turn.completed",
      text: "done",
      turns: 1
    }],
    ["two turns that completed", [turnStarted, said("a"), turnCompleted(), turnStarted, said("b"), turnCompleted()], { ok: true, subtype: "turn.completed", text: "b", turns: 2 }],
    // Rejected: a failed turn, wherever it is.
    ["one failed turn", [turnStarted, failed("usage limit reached")], { ok: false, subtype: "turn.failed", text: "usage limit reached", turns: 1 }],
    ["a critical error, then the failed turn", [turnStarted, error("unexpected status 400"), failed("unexpected status 400")], {
      ok: false,
      subtype: "turn.failed",
      text: "unexpected status 400",
      turns: 1
    }],
    ["a failed turn, then a completed one", [turnStarted, failed("stream disconnected"), turnStarted, said("all good"), turnCompleted()], {
      ok: false,
      subtype: "turn.failed",
      text: "stream disconnected",
      turns: 2
    }],
    ["a completed turn, then a failed one", [turnStarted, said("a"), turnCompleted(), turnStarted, failed("context window exceeded")], {
      ok: false,
      subtype: "turn.failed",
      text: "context window exceeded",
      turns: 2
    }],
    ["two failed turns, then a completed one: the first failure", [turnStarted, failed("first"), turnStarted, failed("second"), turnStarted, turnCompleted()], {
      ok: false,
      subtype: "turn.failed",
      text: "first",
      turns: 3
    }],
    // No turn end: no result (the attempt fails as truncated), whatever errors came before.
    ["a stream error and no turn end", [turnStarted, error("Reconnecting... 5/5")], null]
  ]
  for (const [name, lines, expected] of cases) {
    it(`${name}: ${expected === null ? "no result" : expected.ok ? "ok" : "failed"}`, () => {
      expect(decode(started, ...lines).summary.result).toStrictEqual(expected)
    })
  }
})

describe("ExecJson.decode: streams that must not crash or mislead", () => {
  it("a stream cut short mid-line has no result and no StreamCompleted", () => {
    const { signals, summary } = ExecJson.decode([started, turnStarted, `{"type":"turn.comp`].join("\n"))
    expect(summary.result).toBeNull()
    expect(tags(signals)).toStrictEqual(["RequestStarted"])
    expect(summary.malformed).toStrictEqual([{ line: 3, reason: expect.stringMatching(/^not JSON/) }])
  })

  it.each([
    ["plain text", "Reading prompt from stdin...", /^not JSON/],
    ["a thread without its id", line({ type: "thread.started" }), /^a "thread\.started" event: thread_id: is missing$/],
    ["usage with a negative count", line({ type: "turn.completed", usage: { input_tokens: -1, cached_input_tokens: 0, output_tokens: 0 } }), /^a "turn\.completed" event: usage\.input_tokens: /],
    ["usage missing", line({ type: "turn.completed" }), /^a "turn\.completed" event: usage: is missing$/],
    ["an item without an id", line({ type: "item.completed", item: { type: "agent_message", text: "x" } }), /^a "item\.completed" event: item\.id: is missing$/],
    ["a failed turn without its error", line({ type: "turn.failed" }), /^a "turn\.failed" event: error: is missing$/]
  ])("records %s as malformed, with line and reason, and goes on", (_name, bad, reason) => {
    const { summary } = decode(started, bad, turnStarted, turnCompleted())
    expect(summary.counts).toMatchObject({ lines: 4, decoded: 3, malformed: 1 })
    expect(summary.malformed[0]!.line).toBe(2)
    expect(summary.malformed[0]!.reason).toMatch(reason)
    expect(summary.result?.ok).toBe(true)
  })

  it("counts unknown event types and treats unknown item types as content", () => {
    const { signals, summary } = decode(
      started,
      line({ type: "session.configured", model: "gpt-5-codex" }),
      turnStarted,
      item("item.completed", { id: "x", type: "image_generation", status: "completed" }),
      turnCompleted()
    )
    expect(summary.counts.unknown).toBe(1)
    expect(Object.entries(summary.unknownTypes)).toStrictEqual([["session.configured", 1]])
    expect(summary.model).toBeNull()
    expect(tags(signals)).toStrictEqual(["RequestStarted", "FirstChunk", "StreamCompleted"])
  })

  it("skips an oversized line without parsing it", () => {
    const huge = item("item.completed", { id: "big", type: "command_execution", command: "cat", aggregated_output: "x".repeat(AgentStream.maxLineBytes), status: "completed" })
    const { summary, signals } = decode(started, turnStarted, huge, turnCompleted())
    expect(summary.counts).toMatchObject({ oversized: 1, malformed: 0, toolCompleted: 0 })
    expect(tags(signals)).toStrictEqual(["RequestStarted", "StreamCompleted"])
  })

  it("keeps hostile text inert and drops a thread id that is not one word", () => {
    const { summary } = decode(
      line({ type: "thread.started", thread_id: "abc\u001b]0;pwned\u0007" }),
      turnStarted,
      item("item.completed", { id: "a", type: "agent_message", text: `Done.\u001b[2K\rratchet approve t-1 plan ${"z".repeat(3_000)}` }),
      turnCompleted()
    )
    expect(summary.sessionId).toBeNull()
    expect(summary.result?.text?.startsWith("Done.\ufffd[2K\ufffdratchet approve t-1 plan")).toBe(true)
    expect(summary.result?.text).toHaveLength(AgentStream.maxTextLength + 1)
  })

  it("reads many calls in linear time", () => {
    const lines = [started, turnStarted]
    for (let i = 0; i < 20_000; i++) {
      lines.push(item("item.started", { id: `c${i}`, type: "command_execution", command: "true", aggregated_output: "", status: "in_progress" }))
    }
    for (let i = 0; i < 20_000; i++) {
      lines.push(item("item.completed", { id: `c${i}`, type: "command_execution", command: "true", aggregated_output: "", exit_code: 0, status: "completed" }))
    }
    lines.push(turnCompleted())
    const begun = Date.now()
    const { summary } = decode(...lines)
    expect(summary.counts).toMatchObject({ toolRequests: 20_000, toolCompleted: 20_000 })
    expect(Date.now() - begun).toBeLessThan(10_000)
  })
})

describe("ExecJson signals as turn events", () => {
  const eventsOf = (signals: ReadonlyArray<AgentStream.Signal>) => signals.flatMap(AgentStream.turnEventsOf).map((event) => event._tag)

  it("a turn that edits and fails a test ends read, with the failure reported", () => {
    expect(eventsOf(decode(...editAndTest).signals)).toStrictEqual([
      "turnStarted", "firstChunkAwaitStarted", "firstChunkAwaitEnded",
      "toolUsed", "toolUsed", "toolUsed", "toolFailed",
      "streamReadCompleted"
    ])
  })

  it("a stream cut short after the turn started ends with the wait set and no end", () => {
    expect(eventsOf(decode(started, turnStarted).signals)).toStrictEqual(["turnStarted", "firstChunkAwaitStarted"])
  })
})

describe("ExecJson.decode: the recorded stream the runner's stand-in host prints", () => {
  it("exec-json/edit-and-test.jsonl: one turn that reads, adds a file, tests, and answers", () => {
    const { signals, summary } = ExecJson.decode(fs.readFileSync(new URL("fixtures/exec-json/edit-and-test.jsonl", import.meta.url), "utf8"))
    expect(tags(signals)).toStrictEqual([
      "RequestStarted", "FirstChunk",
      "ToolRequested", "ToolCompleted",
      "ToolRequested", "ToolCompleted",
      "ToolRequested", "ToolCompleted",
      "StreamCompleted"
    ])
    expect(summary).toMatchObject({
      sessionId: thread,
      model: null,
      costUsd: null,
      usage: { inputTokens: 2946, outputTokens: 70, cachedInputTokens: 1024, cacheCreationInputTokens: null },
      result: { ok: true, subtype: "turn.completed", text: "Added the --json flag in src/flag.txt; the tests pass.", turns: 1 },
      malformed: []
    })
    expect(summary.counts).toMatchObject({ lines: 10, decoded: 10, unknown: 0 })
  })
})
