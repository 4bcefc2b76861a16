#!/usr/bin/env node
/**
 * A stand-in for the `claude` program, to drive Ratchet's agent steps without a model: it takes the
 * command line the runner starts Claude Code with, refuses one without the flags a headless stream
 * needs (as Claude Code does not write stream-json without print mode and --verbose), then does what
 * the environment chose (`behave.mjs`): typically printing one of its streams of Claude Code's
 * stream-json (`STAND_IN_STREAM`, `streams.mjs`, held to the Agent SDK's published `SDKMessage` by
 * `@ratchet/host-claude-code`'s tests). With `STAND_IN_TOOLS`, it first makes tool calls through the
 * hooks of its `--settings`, as Claude Code does (`hooks.mjs`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { behave } from "./behave.mjs"
import { chooseStream } from "./streams.mjs"
import { fenced, fixtureEdits, runTools, withTools } from "./hooks.mjs"

const args = process.argv.slice(2)
const valueOf = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
if (!args.includes("-p") || !args.includes("--verbose") || valueOf("--output-format") !== "stream-json") {
  process.stderr.write("Error: --output-format=stream-json requires --print and --verbose\n")
  process.exit(1)
}
// Claude Code takes `--setting-sources` as a comma-separated list of user, project and local.
const sources = valueOf("--setting-sources")
if (args.includes("--setting-sources") && (sources === undefined || !sources.split(",").every((source) => ["user", "project", "local"].includes(source)))) {
  process.stderr.write(`Error: Invalid setting source: ${sources}. Valid options are: user, project, local\n`)
  process.exit(1)
}
chooseStream("claude")
// Tool calls through the hooks it was given (`hooks.mjs`): the recorded stream's own edits when
// fenced, and the test's on request; their lines join the stream.
if (process.env.STAND_IN_TOOLS || (fenced(args) && process.env.STAND_IN_FIXTURE)) {
  const recorded = process.env.STAND_IN_FIXTURE ? fs.readFileSync(process.env.STAND_IN_FIXTURE, "utf8") : ""
  const init = recorded.split("\n").map((text) => { try { return JSON.parse(text) } catch { return null } }).find((m) => m?.type === "system")
  const sessionId = init?.session_id ?? `stand-in-${process.pid}`
  const own = fixtureEdits(args, recorded, sessionId)
  const { lines, denials } = runTools(args, sessionId)
  const merged = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "stand-in-stream-")), "stream.jsonl")
  fs.writeFileSync(merged, withTools(own.fixture, lines, [...own.denials, ...denials]))
  process.env.STAND_IN_FIXTURE = merged
}
behave(args)
