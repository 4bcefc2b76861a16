/**
 * The shared words of a headless agent's stream: each signal's turn events (the module's table,
 * row by row, folded by the kernel's turn machine), and the bounded helpers every decoder uses —
 * line splitting, parsing with a size limit, clipping hostile text, and the tally's bounds.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Turn from "@ratchet/kernel/Turn"
import * as AgentStream from "../src/AgentStream.js"

describe("AgentStream.turnEventsOf", () => {
  const table: ReadonlyArray<readonly [AgentStream.Signal, ReadonlyArray<Turn.Event["_tag"]>]> = [
    [{ _tag: "RequestStarted" }, ["turnStarted", "firstChunkAwaitStarted"]],
    [{ _tag: "FirstChunk" }, ["firstChunkAwaitEnded"]],
    [{ _tag: "ToolRequested", tool: "Bash", callId: "t" }, []],
    [{ _tag: "ToolCompleted", callId: "t" }, ["toolUsed"]],
    [{ _tag: "ToolFailed", callId: "t" }, ["toolUsed", "toolFailed"]],
    [{ _tag: "ToolRejected", callId: null }, ["toolRejected"]],
    [{ _tag: "StreamCompleted" }, ["streamReadCompleted"]],
    [{ _tag: "HostError", message: "boom" }, []]
  ]

  it.each(table)("%j reports %j", (signal, expected) => {
    expect(AgentStream.turnEventsOf(signal).map((event) => event._tag)).toStrictEqual(expected)
  })

  it("a request with a failed call, then a request that ends the stream, folds to a finished turn", () => {
    const signals: ReadonlyArray<AgentStream.Signal> = [
      { _tag: "RequestStarted" },
      { _tag: "FirstChunk" },
      { _tag: "ToolFailed", callId: "a" },
      { _tag: "RequestStarted" },
      { _tag: "FirstChunk" },
      { _tag: "StreamCompleted" }
    ]
    expect(Turn.fold(signals.flatMap(AgentStream.turnEventsOf))).toStrictEqual({
      waitingForFirstChunk: false,
      toolRejected: false,
      toolUsed: false,
      toolFailed: false,
      streamReadComplete: true
    })
  })

  it("a request that never got its first chunk leaves the wait set", () => {
    expect(Turn.fold(AgentStream.turnEventsOf({ _tag: "RequestStarted" }))).toMatchObject({ waitingForFirstChunk: true, streamReadComplete: false })
  })
})

describe("AgentStream helpers", () => {
  it("splits lines keeping empty ones for numbering, dropping CR and the empty tail only", () => {
    expect(AgentStream.splitLines("a\r\n\nb\n")).toStrictEqual(["a", "", "b"])
    expect(AgentStream.splitLines("a\nb")).toStrictEqual(["a", "b"])
    expect(AgentStream.splitLines("")).toStrictEqual([])
  })

  it("parses an object with its type, and says why anything else is not one", () => {
    expect(AgentStream.parseLine(`{"type":"x","a":1}`)).toStrictEqual({ _tag: "Object", value: { type: "x", a: 1 }, type: "x" })
    expect(AgentStream.parseLine(`{"type":3}`)).toMatchObject({ _tag: "Object", type: null })
    expect(AgentStream.parseLine(`{"a":`)).toMatchObject({ _tag: "Malformed", reason: expect.stringMatching(/^not JSON \(/) })
    expect(AgentStream.parseLine(`42`)).toStrictEqual({ _tag: "Malformed", reason: "not a JSON object (number)" })
  })

  it("refuses a line over the byte limit without parsing it, counting UTF-8 bytes", () => {
    const wide = "é".repeat(AgentStream.maxLineBytes / 2)
    expect(AgentStream.parseLine(`"${wide}"`)).toStrictEqual({ _tag: "Oversized", bytes: AgentStream.maxLineBytes + 2 })
    expect(AgentStream.parseLine(`"${"é".repeat(AgentStream.maxLineBytes / 2 - 1)}"`)._tag).toBe("Malformed")
  })

  it("clips and neutralises text", () => {
    expect(AgentStream.clip("a\u001b[31mb\tc\nd\u0000\ud800")).toBe("a\ufffd[31mb\tc\nd\ufffd\ufffd")
    expect(AgentStream.clip("abcdef", 3)).toBe("abc…")
    expect(AgentStream.clip("😀")).toBe("😀")
  })

  it("keeps a word only when it is one short printable word", () => {
    expect(AgentStream.word("claude-sonnet-4-5")).toBe("claude-sonnet-4-5")
    expect(AgentStream.word("0199a213-81c0-7800-8aa1-bbab2a035a53")).toBe("0199a213-81c0-7800-8aa1-bbab2a035a53")
    for (const bad of ["", "two words", "a\nb", "x".repeat(201), undefined, null]) expect(AgentStream.word(bad)).toBeNull()
  })

  it("bounds what a tally records, and counts everything", () => {
    let tally = AgentStream.emptyTally
    for (let i = 0; i < 25; i++) {
      tally = AgentStream.malformed(tally, i + 1, `bad ${i}`)
      tally = AgentStream.error(tally, `error ${i}`)
      tally = AgentStream.unknown(tally, `type_${i}`)
    }
    tally = AgentStream.unknown(tally, "type_0")
    tally = AgentStream.unknown(tally, "type_24")
    expect(tally.counts).toMatchObject({ malformed: 25, unknown: 27 })
    expect(tally.malformed).toHaveLength(AgentStream.maxRecorded)
    expect(tally.errors).toHaveLength(AgentStream.maxRecorded)
    expect(tally.unknownTypes["type_0"]).toBe(2)
    expect(tally.unknownTypes["type_24"]).toBeUndefined()
  })
})

describe("AgentStream.decoder", () => {
  it("gives the runner the stream's turn events in order and its summary in the attempt's words", () => {
    const summary: AgentStream.Summary = {
      host: "codex",
      sessionId: "thread-1",
      model: null,
      usage: { inputTokens: 10, outputTokens: 2, cachedInputTokens: 4, cacheCreationInputTokens: null },
      costUsd: null,
      result: { ok: false, subtype: "turn.failed", text: "boom", turns: 1 },
      errors: ["boom"],
      counts: { ...AgentStream.noCounts, lines: 9, malformed: 2, oversized: 1, unknown: 3 },
      unknownTypes: { "x.y": 3 },
      malformed: [{ line: 4, reason: "not JSON" }]
    }
    const signals: ReadonlyArray<AgentStream.Signal> = [
      { _tag: "RequestStarted" },
      { _tag: "FirstChunk" },
      { _tag: "ToolRequested", tool: "command_execution", callId: "c" },
      { _tag: "ToolFailed", callId: "c" },
      { _tag: "HostError", message: "boom" },
      { _tag: "StreamCompleted" }
    ]
    const seen: Array<string> = []
    const decoder = AgentStream.decoder((text) => {
      seen.push(text)
      return { signals, summary }
    })
    expect(decoder.decode("the stream")).toStrictEqual({
      turns: [
        { _tag: "turnStarted" },
        { _tag: "firstChunkAwaitStarted" },
        { _tag: "firstChunkAwaitEnded" },
        { _tag: "toolUsed" },
        { _tag: "toolFailed" },
        { _tag: "streamReadCompleted" }
      ],
      sessionId: "thread-1",
      model: null,
      usage: summary.usage,
      costUsd: null,
      result: summary.result,
      errors: ["boom"],
      lines: 9,
      // An oversized line is a malformed one to the attempt: it was not read.
      malformedLines: 3,
      unknownEvents: 3,
      // A decoder that does not mark side effects lists none (Codex's: the runner gives it no hooks).
      toolCalls: []
    })
    expect(seen).toStrictEqual(["the stream"])
  })
})
