/**
 * The test kit's stand-in `claude` against the Agent SDK's published message types: every line it
 * writes, in every behaviour that writes stream-json (its own streams, and its tool calls through
 * the hooks of its `--settings`, one of them denied), has the shape of a golden line of the same
 * kind (`published/StreamJsonLines.ts`, which the typecheck holds to `SDKMessage`); and this
 * package's decoder reads every golden line, and every line the stand-in writes, as known. The
 * shape check itself is tested in the test kit (`StandIn.test.ts`).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as StandIn from "@ratchet/testkit/StandIn"
import * as StreamJson from "../src/StreamJson.js"
import { lines as golden } from "./published/StreamJsonLines.js"

/** A line's kind: its type, and its subtype or its stream event's type. */
const kindOf = (value: unknown): string => {
  const record = value as { type?: string; subtype?: string; event?: { type?: string } }
  return `${record.type}/${record.subtype ?? record.event?.type ?? ""}`
}

const samplesOf = (kind: string): ReadonlyArray<unknown> => golden.filter((sample) => kindOf(sample) === kind)

/** Runs the stand-in as the runner does, in a fresh workspace; returns its stdout's lines. */
const run = (env: Record<string, string>, settings?: unknown): ReadonlyArray<string> => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "stand-in-claude-"))
  const args = ["-p", "--verbose", "--output-format", "stream-json", ...(settings === undefined ? [] : ["--settings", JSON.stringify(settings)]), "Add the flag."]
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("STAND_IN_")))
  const ran = spawnSync(process.execPath, [StandIn.claude, ...args], { cwd, env: { ...clean, ...env }, encoding: "utf8", timeout: 60_000 })
  fs.rmSync(cwd, { recursive: true, force: true })
  return ran.stdout.split("\n").filter((text) => text.trim() !== "")
}

/** A PreToolUse hook that denies a call naming `denied.txt` and allows the rest. */
const fence = {
  hooks: { PreToolUse: [{ matcher: "Write|Bash", hooks: [{ type: "command", command: "if grep -q denied.txt; then echo 'denied by the test' >&2; exit 2; fi" }] }] }
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "stand-in-tools-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const toolsFile = (): string => {
  const file = path.join(scratch, "tools.json")
  fs.writeFileSync(file, JSON.stringify([
    { tool: "Write", input: { file_path: "ok.txt", content: "ok\n" } },
    { tool: "Write", input: { file_path: "denied.txt", content: "no\n" } },
    { tool: "Bash", input: { command: "echo hi", description: "Say hi" } }
  ]))
  return file
}

// behaviour, environment, settings → the kinds its stream must hold at least
const behaviours: ReadonlyArray<readonly [string, Record<string, string>, unknown, ReadonlyArray<string>]> = [
  ["success", { STAND_IN_STREAM: "success" }, undefined, ["system/init", "assistant/", "user/", "stream_event/message_start", "result/success"]],
  ["error", { STAND_IN_STREAM: "error" }, undefined, ["system/init", "result/error_during_execution"]],
  ["truncated", { STAND_IN_STREAM: "truncated" }, undefined, ["system/init", "assistant/"]],
  ["crash", { STAND_IN_STREAM: "crash" }, undefined, ["system/init", "assistant/"]],
  ["tool calls through the hooks", { STAND_IN_STREAM: "success", STAND_IN_TOOLS: toolsFile() }, fence, ["assistant/", "user/", "result/success"]]
]

describe("the stand-in claude writes the Agent SDK's published SDKMessage", () => {
  it.each(behaviours)("%s: every line has the shape of a golden line of its kind", (_name, env, settings, kinds) => {
    const lines = run(env, settings)
    expect(lines.length).toBeGreaterThan(0)
    const parsed = lines.map((text) => JSON.parse(text) as unknown)
    const misfits = parsed.map((value) => ({ kind: kindOf(value), why: StandIn.sameShape(value, samplesOf(kindOf(value))) })).filter((miss) => miss.why !== null)
    expect(misfits).toEqual([])
    expect(kinds.filter((kind) => !parsed.some((value) => kindOf(value) === kind))).toEqual([])
    const summary = StreamJson.decode(`${lines.join("\n")}\n`).summary
    expect(summary.unknownTypes).toEqual({})
    expect(summary.malformed).toEqual([])
  })

  it("the tool calls' stream tells the denied call among the result's denials", () => {
    const parsed = run({ STAND_IN_STREAM: "success", STAND_IN_TOOLS: toolsFile() }, fence).map((text) => JSON.parse(text) as { type: string; permission_denials?: ReadonlyArray<{ tool_input: { file_path: string } }> })
    const result = parsed.find((value) => value.type === "result")
    expect(result?.permission_denials?.map((denial) => path.basename(denial.tool_input.file_path))).toEqual(["denied.txt"])
    expect(StreamJson.decode(`${parsed.map((value) => JSON.stringify(value)).join("\n")}\n`).summary.counts.toolRejected).toBe(1)
  })

  it("the garbage stream is read as malformed, not as the host's lines", () => {
    const summary = StreamJson.decode(`${run({ STAND_IN_STREAM: "garbage" }).join("\n")}\n`).summary
    expect(summary.malformed.length).toBeGreaterThan(0)
    expect(summary.result).toBeNull()
  })
})

describe("the golden lines", () => {
  it("cover every kind, and the decoder reads each as known", () => {
    const summary = StreamJson.decode(`${golden.map((value) => JSON.stringify(value)).join("\n")}\n`).summary
    expect(summary.unknownTypes).toEqual({})
    expect(summary.malformed).toEqual([])
    expect(summary.errors).toEqual(["a second result line (subtype success) after the first; the first is kept", "a second result line (subtype error_during_execution) after the first; the first is kept"])
  })
})
