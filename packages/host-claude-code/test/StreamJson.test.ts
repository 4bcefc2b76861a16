/**
 * Decoding Claude Code's `--output-format stream-json --verbose` stream, from transcripts written
 * by hand in the Agent SDK's documented message shapes: a run with partial messages on and one
 * without, a failed run, a denial, a subagent; then what must never crash or mislead — a stream
 * cut short (no result), malformed and wrongly-shaped lines, unknown types, an oversized line,
 * hostile text — and the turn events each signal maps to, folded by the kernel's turn machine.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as AgentStream from "@ratchet/host/AgentStream"
import * as StreamJson from "../src/StreamJson.js"

const line = (value: unknown): string => JSON.stringify(value)
const sid = "0f6c1d9e-7a51-4f0a-9d3b-2b8e4c1a7f10"

const init = line({
  type: "system",
  subtype: "init",
  session_id: sid,
  uuid: "u-0",
  model: "claude-sonnet-4-5-20250929",
  cwd: "/repo",
  tools: ["Bash", "Edit", "Read"],
  mcp_servers: [],
  permissionMode: "default",
  apiKeySource: "none"
})
const prompt = line({ type: "user", message: { role: "user", content: "Add the flag." }, parent_tool_use_id: null, session_id: sid, uuid: "u-1" })
const assistant = (id: string, content: ReadonlyArray<unknown>, parent: string | null = null) =>
  line({
    type: "assistant",
    message: { id, type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content, stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } },
    parent_tool_use_id: parent,
    session_id: sid,
    uuid: `u-${id}`
  })
const toolResult = (id: string, isError = false, parent: string | null = null) =>
  line({
    type: "user",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: isError ? "Exit code 1" : "ok", is_error: isError }] },
    parent_tool_use_id: parent,
    session_id: sid,
    uuid: `u-r-${id}`
  })
const streamEvent = (event: unknown, parent: string | null = null) =>
  line({ type: "stream_event", event, parent_tool_use_id: parent, session_id: sid, uuid: "u-s" })
const result = (fields: Record<string, unknown> = {}) =>
  line({
    type: "result",
    subtype: "success",
    is_error: false,
    duration_ms: 5321,
    duration_api_ms: 4870,
    num_turns: 3,
    result: "Added --json to list and a test for it.",
    session_id: sid,
    total_cost_usd: 0.0421,
    usage: { input_tokens: 1200, output_tokens: 340, cache_creation_input_tokens: 5000, cache_read_input_tokens: 9000 },
    permission_denials: [],
    uuid: "u-end",
    ...fields
  })

const tags = (signals: ReadonlyArray<AgentStream.Signal>) => signals.map((signal) => signal._tag)
const decode = (...lines: ReadonlyArray<string>) => StreamJson.decode(lines.join("\n") + "\n")

describe("StreamJson.decode: the side-effecting calls, as the run's hooks record them (ADR 0040)", () => {
  // [the tool, its input, whether the hooks record it as an intent].
  const table: ReadonlyArray<readonly [string, unknown, boolean]> = [
    ["Write", { file_path: "/repo/a.ts", content: "x" }, true],
    ["Edit", { file_path: "/repo/a.ts", old_string: "a", new_string: "b" }, true],
    ["MultiEdit", { file_path: "/repo/a.ts", edits: [] }, true],
    ["NotebookEdit", { notebook_path: "/repo/a.ipynb", new_source: "x" }, true],
    ["Write", undefined, true],
    ["Bash", { command: "echo x > src/a.ts" }, true],
    ["Bash", { command: "python3 -c 'open(\"a\",\"w\")'" }, true],
    ["Bash", { command: "rm -rf build" }, true],
    ["Bash", {}, true],
    ["Bash", { command: "npm test" }, false],
    ["Bash", { command: "ls -la" }, false],
    ["Read", { file_path: "/repo/a.ts" }, false],
    ["Grep", { pattern: "x" }, false],
    ["mcp__github__create_issue", { title: "x" }, false]
  ]
  it.each(table)("%s %j: %s", (tool, input, sideEffect) => {
    const { signals } = decode(init, assistant("msg_1", [{ type: "tool_use", id: "toolu_1", name: tool, ...(input === undefined ? {} : { input }) }]), result())
    expect(signals.find((signal) => signal._tag === "ToolRequested")).toStrictEqual({ _tag: "ToolRequested", tool, callId: "toolu_1", sideEffect })
  })

  it("gives the runner each side-effecting call with its end, a denial outranking its failed result", () => {
    const decoded = AgentStream.decoder(StreamJson.decode).decode([
      init,
      assistant("msg_1", [{ type: "tool_use", id: "toolu_1", name: "Write", input: { file_path: "/repo/a.ts", content: "x" } }]),
      toolResult("toolu_1"),
      assistant("msg_2", [{ type: "tool_use", id: "toolu_2", name: "Bash", input: { command: "npm test" } }]),
      toolResult("toolu_2"),
      assistant("msg_3", [{ type: "tool_use", id: "toolu_3", name: "Edit", input: { file_path: "/etc/x" } }]),
      toolResult("toolu_3", true),
      assistant("msg_4", [{ type: "tool_use", id: "toolu_4", name: "Bash", input: { command: "touch src/b.ts" } }]),
      toolResult("toolu_4", true),
      assistant("msg_5", [{ type: "tool_use", id: "toolu_5", name: "Write", input: { file_path: "/repo/c.ts", content: "x" } }]),
      result({ permission_denials: [{ tool_name: "Edit", tool_use_id: "toolu_3" }] })
    ].join("\n") + "\n")
    expect(decoded.toolCalls).toStrictEqual([
      { callId: "toolu_1", tool: "Write", end: "completed" },
      { callId: "toolu_3", tool: "Edit", end: "rejected" },
      { callId: "toolu_4", tool: "Bash", end: "failed" },
      { callId: "toolu_5", tool: "Write", end: null }
    ])
  })
})

describe("StreamJson.decode: well-formed streams", () => {
  it("reads a run without partial messages: one request per message id, tools, the result", () => {
    const { signals, summary } = decode(
      init,
      prompt,
      assistant("msg_1", [{ type: "text", text: "I will read the file." }]),
      assistant("msg_1", [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/repo/list.ts" } }]),
      toolResult("toolu_1"),
      assistant("msg_2", [{ type: "tool_use", id: "toolu_2", name: "Bash", input: { command: "npm test" } }]),
      toolResult("toolu_2", true),
      assistant("msg_3", [{ type: "text", text: "Done." }]),
      result()
    )
    expect(tags(signals)).toStrictEqual([
      "RequestStarted", "FirstChunk", "ToolRequested", "ToolCompleted",
      "RequestStarted", "FirstChunk", "ToolRequested", "ToolFailed",
      "RequestStarted", "FirstChunk",
      "StreamCompleted"
    ])
    expect(signals[2]).toStrictEqual({ _tag: "ToolRequested", tool: "Read", callId: "toolu_1", sideEffect: false })
    // `npm test` writes nothing the guard can see: not a call the run's hooks record (ADR 0040).
    expect(signals[6]).toStrictEqual({ _tag: "ToolRequested", tool: "Bash", callId: "toolu_2", sideEffect: false })
    expect(summary).toStrictEqual({
      host: "claude-code",
      sessionId: sid,
      model: "claude-sonnet-4-5-20250929",
      usage: { inputTokens: 1200, outputTokens: 340, cachedInputTokens: 9000, cacheCreationInputTokens: 5000 },
      costUsd: 0.0421,
      result: { ok: true, subtype: "success", text: "Added --json to list and a test for it.", turns: 3 },
      errors: [],
      counts: {
        lines: 9, decoded: 9, unknown: 0, malformed: 0, oversized: 0,
        requests: 3, toolRequests: 2, toolCompleted: 1, toolFailed: 1, toolRejected: 0
      },
      unknownTypes: {},
      malformed: []
    })
  })

  it("reads a run with partial messages: message_start is the request, the first block its first chunk", () => {
    const { signals, summary } = decode(
      init,
      streamEvent({ type: "message_start", message: { id: "msg_1", model: "claude-sonnet-4-5-20250929", content: [] } }),
      streamEvent({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      streamEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } }),
      streamEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lo" } }),
      streamEvent({ type: "content_block_stop", index: 0 }),
      streamEvent({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }),
      streamEvent({ type: "message_stop" }),
      assistant("msg_1", [{ type: "text", text: "Hello" }]),
      result({ num_turns: 1 })
    )
    expect(tags(signals)).toStrictEqual(["RequestStarted", "FirstChunk", "StreamCompleted"])
    expect(summary.counts.requests).toBe(1)
  })

  it("reports a failed run: error subtype, is_error, its errors, no success", () => {
    const { summary } = decode(
      init,
      assistant("msg_1", [{ type: "text", text: "…" }]),
      result({ subtype: "error_max_turns", is_error: true, result: undefined, num_turns: 40, errors: ["Reached maximum number of turns (40)"] })
    )
    expect(summary.result).toStrictEqual({ ok: false, subtype: "error_max_turns", text: null, turns: 40 })
    expect(summary.errors).toStrictEqual(["Reached maximum number of turns (40)"])
  })

  it("a success subtype with is_error (a failed API call) is not ok", () => {
    expect(decode(init, result({ is_error: true, result: "API Error: 529 overloaded" })).summary.result).toStrictEqual({
      ok: false,
      subtype: "success",
      text: "API Error: 529 overloaded",
      turns: 3
    })
  })

  it("tells a denial at the result: each permission denial is a rejection", () => {
    const { signals, summary } = decode(
      init,
      assistant("msg_1", [{ type: "tool_use", id: "toolu_9", name: "Bash", input: { command: "ratchet approve t-1 plan" } }]),
      toolResult("toolu_9", true),
      result({ permission_denials: [{ tool_name: "Bash", tool_use_id: "toolu_9", tool_input: { command: "ratchet approve t-1 plan" } }] })
    )
    expect(tags(signals)).toStrictEqual(["RequestStarted", "FirstChunk", "ToolRequested", "ToolFailed", "ToolRejected", "StreamCompleted"])
    expect(signals[4]).toStrictEqual({ _tag: "ToolRejected", callId: "toolu_9" })
    expect(summary.counts.toolRejected).toBe(1)
  })

  it("a subagent starts no request of the main turn, but its calls are counted", () => {
    const { signals } = decode(
      init,
      assistant("msg_1", [{ type: "tool_use", id: "toolu_t", name: "Task", input: { prompt: "explore" } }]),
      assistant("msg_sub", [{ type: "tool_use", id: "toolu_s", name: "Grep", input: {} }], "toolu_t"),
      streamEvent({ type: "message_start", message: {} }, "toolu_t"),
      toolResult("toolu_s", false, "toolu_t"),
      toolResult("toolu_t"),
      result()
    )
    expect(tags(signals)).toStrictEqual([
      "RequestStarted", "FirstChunk", "ToolRequested", "ToolRequested", "ToolCompleted", "ToolCompleted", "StreamCompleted"
    ])
  })

  it("knows other system subtypes and ignores them; the session falls back to the result's", () => {
    const { summary } = decode(line({ type: "system", subtype: "compact_boundary", compact_metadata: {} }), result())
    expect(summary.sessionId).toBe(sid)
    expect(summary.model).toBeNull()
    expect(summary.counts.unknown).toBe(0)
  })
})

describe("StreamJson.decode: streams that must not crash or mislead", () => {
  it("a stream cut short has no result and no StreamCompleted", () => {
    const { signals, summary } = StreamJson.decode([init, assistant("msg_1", [{ type: "text", text: "Working" }]), `{"type":"resu`].join("\n"))
    expect(summary.result).toBeNull()
    expect(tags(signals)).not.toContain("StreamCompleted")
    expect(summary.counts.malformed).toBe(1)
    expect(summary.malformed[0]!.line).toBe(3)
    expect(summary.malformed[0]!.reason).toMatch(/^not JSON/)
  })

  it("an empty stream has nothing at all", () => {
    expect(StreamJson.decode("").summary).toStrictEqual(StreamJson.summary(StreamJson.initial))
  })

  it.each([
    ["not JSON", "hello world", /^not JSON/],
    ["an array", "[1,2]", /^not a JSON object \(an array\)$/],
    ["null", "null", /^not a JSON object \(null\)$/],
    ["a string", `"result"`, /^not a JSON object \(string\)$/],
    ["a result without is_error", line({ type: "result", subtype: "success" }), /^a "result" message: is_error: is missing$/],
    ["a negative cost", result({ total_cost_usd: -1 }), /^a "result" message: total_cost_usd: /],
    ["usage tokens as text", result({ usage: { input_tokens: "12", output_tokens: 1 } }), /^a "result" message: usage\.input_tokens: /],
    ["assistant content not an array", line({ type: "assistant", message: { content: "hi" } }), /^a "assistant" message: message\.content: /]
  ])("records %s as malformed, with its line and reason, and goes on", (_name, bad, reason) => {
    const { summary } = decode(init, bad, result())
    expect(summary.counts).toMatchObject({ lines: 3, decoded: 2, malformed: 1 })
    expect(summary.malformed).toHaveLength(1)
    expect(summary.malformed[0]!.line).toBe(2)
    expect(summary.malformed[0]!.reason).toMatch(reason)
    expect(summary.result?.ok).toBe(true)
  })

  it("counts unknown types by type, including a missing type and hostile keys", () => {
    const { summary } = decode(
      line({ type: "rate_limit_event", info: {} }),
      line({ type: "rate_limit_event" }),
      line({ type: "__proto__" }),
      line({ no: "type" }),
      line({ type: 7 }),
      result()
    )
    expect(summary.counts.unknown).toBe(5)
    // "__proto__" is recorded as a key of its own, and no prototype was touched.
    expect(Object.entries(summary.unknownTypes)).toStrictEqual([["rate_limit_event", 2], ["__proto__", 1], ["(no type)", 2]])
    expect(Object.getPrototypeOf({})).toBe(Object.prototype)
    expect(({} as Record<string, unknown>)["rate_limit_event"]).toBeUndefined()
  })

  it("records at most the first 20 malformed lines and unknown types, and counts all", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `garbage ${i}`)
    const types = Array.from({ length: 30 }, (_, i) => line({ type: `new_type_${i}` }))
    const { summary } = decode(...lines, ...types)
    expect(summary.counts.malformed).toBe(30)
    expect(summary.malformed).toHaveLength(AgentStream.maxRecorded)
    expect(summary.counts.unknown).toBe(30)
    expect(Object.keys(summary.unknownTypes)).toHaveLength(AgentStream.maxRecorded)
  })

  it("skips an oversized line without parsing it, and keeps reading", () => {
    const huge = line({ type: "assistant", message: { id: "msg_big", content: [{ type: "text", text: "x".repeat(AgentStream.maxLineBytes) }] } })
    const { signals, summary } = decode(init, huge, result())
    expect(summary.counts).toMatchObject({ lines: 3, oversized: 1, decoded: 2, malformed: 0 })
    expect(tags(signals)).toStrictEqual(["StreamCompleted"])
  })

  it("keeps hostile text inert: control characters replaced, long text clipped, ids and models dropped", () => {
    const { summary } = decode(
      line({ type: "system", subtype: "init", session_id: "abc\n--approve", model: "\u001b[2Jopus" }),
      result({ session_id: "x".repeat(500), result: `ratchet approve t-1 plan\u001b[1A\r${"y".repeat(5_000)}`, errors: ["\u0000boom"] })
    )
    expect(summary.sessionId).toBeNull()
    expect(summary.model).toBeNull()
    expect(summary.result?.text).toHaveLength(AgentStream.maxTextLength + 1)
    expect(summary.result?.text?.startsWith("ratchet approve t-1 plan\ufffd[1A\ufffd")).toBe(true)
    expect(summary.errors).toStrictEqual(["\ufffdboom"])
  })

  it("survives a deeply nested line", () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`
    const { summary } = decode(init, deep, result())
    expect(summary.counts.malformed).toBe(1)
    expect(summary.result?.ok).toBe(true)
  })

  it("keeps the first result when a second one follows, and says so", () => {
    const { summary } = decode(init, result(), result({ subtype: "error_during_execution", is_error: true }))
    expect(summary.result?.subtype).toBe("success")
    expect(summary.errors).toStrictEqual(["a second result line (subtype error_during_execution) after the first; the first is kept"])
  })

  it("reads CRLF line ends and blank lines, numbering lines as the stream does", () => {
    const { summary } = StreamJson.decode(`${init}\r\n\r\n  \r\nnope\r\n${result()}\r\n`)
    expect(summary.malformed).toStrictEqual([{ line: 4, reason: expect.stringMatching(/^not JSON/) }])
    expect(summary.counts.lines).toBe(3)
  })
})

describe("StreamJson signals as turn events", () => {
  const eventsOf = (signals: ReadonlyArray<AgentStream.Signal>) => signals.flatMap(AgentStream.turnEventsOf).map((event) => event._tag)

  it("a whole run: each request awaits and gets its first chunk, calls are used or failed, the stream ends read", () => {
    const { signals } = decode(
      init,
      streamEvent({ type: "message_start", message: {} }),
      streamEvent({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "Bash" } }),
      assistant("msg_1", [{ type: "tool_use", id: "toolu_1", name: "Bash", input: {} }]),
      toolResult("toolu_1", true),
      streamEvent({ type: "message_start", message: {} }),
      streamEvent({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "x" } }),
      result({ permission_denials: [{ tool_name: "Bash", tool_use_id: "toolu_1" }] })
    )
    expect(eventsOf(signals)).toStrictEqual([
      "turnStarted", "firstChunkAwaitStarted", "firstChunkAwaitEnded",
      "toolUsed", "toolFailed",
      "turnStarted", "firstChunkAwaitStarted", "firstChunkAwaitEnded",
      "toolRejected",
      "streamReadCompleted"
    ])
  })

  it("a stream cut short while waiting ends with the wait started and no end of stream", () => {
    const { signals } = decode(init, streamEvent({ type: "message_start", message: {} }))
    expect(eventsOf(signals)).toStrictEqual(["turnStarted", "firstChunkAwaitStarted"])
  })
})

describe("StreamJson.decode: the recorded streams the runner's stand-in host prints", () => {
  const fixture = (name: string) => fs.readFileSync(new URL(`fixtures/stream-json/${name}`, import.meta.url), "utf8")

  it("edit-and-test.jsonl: three requests with partial messages, a write and a test run, a successful result", () => {
    const { signals, summary } = StreamJson.decode(fixture("edit-and-test.jsonl"))
    expect(tags(signals)).toStrictEqual([
      "RequestStarted", "FirstChunk", "ToolRequested", "ToolCompleted",
      "RequestStarted", "FirstChunk", "ToolRequested", "ToolCompleted",
      "RequestStarted", "FirstChunk",
      "StreamCompleted"
    ])
    expect(summary).toMatchObject({
      sessionId: sid,
      model: "claude-sonnet-4-5-20250929",
      usage: { inputTokens: 1200, outputTokens: 340, cachedInputTokens: 9000, cacheCreationInputTokens: 5000 },
      costUsd: 0.0421,
      result: { ok: true, subtype: "success", text: "Added the --json flag in src/flag.txt; the tests pass.", turns: 3 },
      unknownTypes: {},
      malformed: []
    })
    expect(summary.counts).toMatchObject({ lines: 23, decoded: 23, requests: 3, toolRequests: 2, toolCompleted: 2 })
  })

  it("truncated.jsonl: the same run cut off mid-stream has no result", () => {
    const { signals, summary } = StreamJson.decode(fixture("truncated.jsonl"))
    expect(summary.result).toBeNull()
    expect(tags(signals)).not.toContain("StreamCompleted")
    expect(summary.counts).toMatchObject({ lines: 14, malformed: 0 })
  })
})
