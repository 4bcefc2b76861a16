/**
 * The test kit's stand-in `codex` against the Codex SDK's published event types: every line it
 * writes, in every behaviour that writes an `exec --json` stream, has the shape of a golden line of
 * the same kind (`published/ExecJsonLines.ts`, which the typecheck holds to `ThreadEvent`); and this
 * package's decoder reads every golden line, and every line the stand-in writes, as known.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as StandIn from "@ratchet/testkit/StandIn"
import * as ExecJson from "../src/ExecJson.js"
import { lines as golden } from "./published/ExecJsonLines.js"

/** A line's kind: its type, and its item's type. */
const kindOf = (value: unknown): string => {
  const record = value as { type?: string; item?: { type?: string } }
  return `${record.type}/${record.item?.type ?? ""}`
}

const samplesOf = (kind: string): ReadonlyArray<unknown> => golden.filter((sample) => kindOf(sample) === kind)

/** Runs the stand-in as the runner does, in a fresh workspace; returns its stdout's lines. */
const run = (env: Record<string, string>): ReadonlyArray<string> => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "stand-in-codex-"))
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("STAND_IN_")))
  const args = ["exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "Add the flag."]
  const ran = spawnSync(process.execPath, [StandIn.codex, ...args], { cwd, env: { ...clean, ...env }, encoding: "utf8", timeout: 60_000 })
  fs.rmSync(cwd, { recursive: true, force: true })
  return ran.stdout.split("\n").filter((text) => text.trim() !== "")
}

// behaviour → the kinds its stream must hold at least
const behaviours: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["success", ["thread.started/", "turn.started/", "item.started/command_execution", "item.completed/file_change", "item.completed/agent_message", "turn.completed/"]],
  ["error", ["thread.started/", "item.completed/error", "turn.failed/"]],
  ["truncated", ["thread.started/", "turn.started/"]],
  ["crash", ["thread.started/", "turn.started/"]]
]

describe("the stand-in codex writes the Codex SDK's published ThreadEvent", () => {
  it.each(behaviours)("%s: every line has the shape of a golden line of its kind", (name, kinds) => {
    const lines = run({ STAND_IN_STREAM: name })
    expect(lines.length).toBeGreaterThan(0)
    const parsed = lines.map((text) => JSON.parse(text) as unknown)
    const misfits = parsed.map((value) => ({ kind: kindOf(value), why: StandIn.sameShape(value, samplesOf(kindOf(value))) })).filter((miss) => miss.why !== null)
    expect(misfits).toEqual([])
    expect(kinds.filter((kind) => !parsed.some((value) => kindOf(value) === kind))).toEqual([])
    const summary = ExecJson.decode(`${lines.join("\n")}\n`).summary
    expect(summary.unknownTypes).toEqual({})
    expect(summary.malformed).toEqual([])
  })

  it("the garbage stream is read as malformed, not as the host's lines", () => {
    const summary = ExecJson.decode(`${run({ STAND_IN_STREAM: "garbage" }).join("\n")}\n`).summary
    expect(summary.malformed.length).toBeGreaterThan(0)
    expect(summary.result).toBeNull()
  })
})

describe("the golden lines", () => {
  it("the decoder reads each as known", () => {
    const summary = ExecJson.decode(`${golden.map((value) => JSON.stringify(value)).join("\n")}\n`).summary
    expect(summary.unknownTypes).toEqual({})
    expect(summary.malformed).toEqual([])
  })
})
