/**
 * Reading a transcript for the end of a call in the current turn (ADR 0030), from tables written
 * by hand: the transcripts whose last turn has a call that ended without an error (found), and
 * every way the search must find nothing instead — an error, a refusal, a call of an earlier turn,
 * an entry it does not know, a line that is not JSON, a line still being written, a fragment at
 * the start of the tail. Then the file itself: only the end of a regular file is read, and a file
 * that is missing, relative, a directory, a device or a FIFO tells nothing without waiting.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Transcript from "../src/Transcript.js"

const fixture = path.join(import.meta.dirname, "fixtures", "transcripts", "read-only-turn.jsonl")

const line = (value: unknown): string => JSON.stringify(value)
const prompt = (text: string) => line({ type: "user", message: { role: "user", content: text } })
const toolUse = (name: string) => line({ type: "assistant", message: { role: "assistant", content: [{ type: "tool_use", id: `toolu_${name}`, name, input: {} }] } })
const said = (text: string) => line({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] } })
const result = (isError?: unknown) =>
  line({ type: "user", message: { role: "user", content: [{ tool_use_id: "toolu_1", type: "tool_result", content: "ok", ...(isError === undefined ? {} : { is_error: isError }) }] } })
const results = (...errors: ReadonlyArray<boolean>) =>
  line({ type: "user", message: { role: "user", content: errors.map((isError, i) => ({ tool_use_id: `toolu_${i}`, type: "tool_result", content: "x", is_error: isError })) } })
const text = (...lines: ReadonlyArray<string>): string => lines.map((entry) => `${entry}\n`).join("")

describe("Transcript.callEnded", () => {
  /** (case, the transcript's text, the whole file, found). */
  const table: ReadonlyArray<readonly [string, string, boolean, boolean]> = [
    // found: a call of the last turn ended without an error
    ["a read after the prompt, then the answer", text(prompt("look"), toolUse("Read"), result(), said("done")), true, true],
    ["a result that says is_error false", text(prompt("look"), toolUse("Grep"), result(false)), true, true],
    ["a refused call, then a read that ended", text(prompt("look"), toolUse("Bash"), result(true), toolUse("Read"), result(), said("done")), true, true],
    ["one result of two in an entry ended", text(prompt("look"), toolUse("Read"), results(true, false), said("done")), true, true],
    ["a turn after an entry the schema does not know", text(line({ type: "attachment", attachment: { type: "queued_command" } }), toolUse("Read"), result()), true, true],
    ["a tail whose first line is a fragment", `ype":"user","message":{}}\n${text(toolUse("Read"), result())}`, false, true],
    ["blank lines between entries", text(prompt("look"), toolUse("Read"), result(), "", "  ", said("done")), true, true],
    ["a result right after the prompt", `${prompt("look")}\n${result()}\n`, true, true],
    // not found
    ["an empty file", "", true, false],
    ["a prompt and an answer without tools", text(prompt("hi"), said("hello")), true, false],
    ["only a refused call since the prompt", text(prompt("push"), toolUse("Bash"), result(true), said("refused")), true, false],
    ["only errors in one entry", text(prompt("push"), results(true, true)), true, false],
    ["a read of the turn before the prompt", text(prompt("look"), toolUse("Read"), result(), said("done"), prompt("and now?"), said("nothing")), true, false],
    ["a read before an entry the schema does not know", text(toolUse("Read"), result(), line({ type: "system", subtype: "informational" })), true, false],
    ["a read before a line that is not JSON", text(toolUse("Read"), result(), "not json {"), true, false],
    ["a read before a user entry that mixes text with a result", text(toolUse("Read"), result(), line({ type: "user", message: { content: [{ type: "text", text: "hi" }, { type: "tool_result" }] } })), true, false],
    ["a read before a user entry with no blocks", text(toolUse("Read"), result(), line({ type: "user", message: { content: [] } })), true, false],
    ["a read before a result whose is_error is not a boolean", text(toolUse("Read"), result(), result("yes")), true, false],
    ["a read before an entry of another type at the top level", text(toolUse("Read"), result(), line(["assistant"])), true, false],
    ["a result still being written (no newline yet)", `${text(prompt("look"), toolUse("Read"))}${result()}`, true, false],
    ["a result on the fragment that starts a tail", `${result()}\n${said("done")}\n`, false, false],
    ["a result on the first line when the text is the whole file is not a fragment", `${result()}\n`, true, true]
  ]

  it.each(table)("%s", (_case, transcript, whole, found) => {
    expect(Transcript.callEnded(transcript, whole)).toBe(found)
  })

  it("finds the Grep and Read of the fixture's second turn, and nothing once its prompt is the last entry", () => {
    const content = fs.readFileSync(fixture, "utf8")
    expect(Transcript.callEnded(content, true)).toBe(true)
    const lines = content.split("\n")
    // Up to the second prompt: its turn has no call yet, and the Edit before it is the first turn's.
    const prompted = lines.findIndex((entry) => entry.includes("Which tests cover it?"))
    expect(Transcript.callEnded(`${lines.slice(0, prompted + 1).join("\n")}\n`, true)).toBe(false)
  })
})

describe("Transcript.callEndedInTurn", () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-transcript-"))
  const write = (name: string, content: string): string => {
    const file = path.join(directory, name)
    fs.writeFileSync(file, content)
    return file
  }
  const run = (file: string) => Effect.runSync(Transcript.callEndedInTurn(file))
  afterAll(() => fs.rmSync(directory, { recursive: true, force: true }))

  it("reads the fixture's transcript", () => {
    expect(run(fixture)).toBe(true)
  })

  it("tells nothing of a file that is missing, relative, a directory or a device", () => {
    expect(run(path.join(directory, "missing.jsonl"))).toBe(false)
    expect(run(path.relative(process.cwd(), fixture))).toBe(false)
    expect(run(directory)).toBe(false)
    expect(run("/dev/zero")).toBe(false)
    expect(run("")).toBe(false)
  })

  it("tells nothing of a FIFO, without waiting for a writer", () => {
    const fifo = path.join(directory, "fifo.jsonl")
    execFileSync("mkfifo", [fifo])
    const started = Date.now()
    expect(run(fifo)).toBe(false)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  it("reads only the file's last maxTailBytes: a result further back is not seen, one within is", () => {
    const filler = said("x".repeat(1000))
    const padding = text(...Array.from({ length: Math.ceil(Transcript.maxTailBytes / filler.length) + 1 }, () => filler))
    expect(run(write("far.jsonl", text(prompt("look"), toolUse("Read"), result()) + padding))).toBe(false)
    expect(run(write("near.jsonl", padding + text(toolUse("Read"), result())))).toBe(true)
  })

  it("tells nothing of a file of arbitrary bytes", () => {
    const bytes = Buffer.alloc(64 * 1024)
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + 13) % 256
    expect(run(write("random.jsonl", bytes.toString("latin1")))).toBe(false)
  })
})
