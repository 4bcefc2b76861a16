/**
 * The guide's "Run it" (docs/guides/agent-steps.md) shows the command lines the runner starts for an
 * agent step: each is held to what the runner builds (the run's hook arguments from
 * `AgentHooks.installers`, then `AgentEnvelope.argsOf`), so a flag added to one is not missing from
 * the other. Placeholders stand for the values: the hooks' JSON, the model, the turn limit, the prompt.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as AgentEnvelope from "@ratchet/controller/AgentEnvelope"
import * as AgentHooks from "../src/AgentHooks.js"

const guide = fs.readFileSync(new URL("../../../docs/guides/agent-steps.md", import.meta.url), "utf8")

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-agent-guide-")))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const launcher = path.join(dir, "ratchet-hook")
const cli = path.join(dir, "ratchet.mjs")
fs.writeFileSync(launcher, "#!/bin/sh\n")
fs.writeFileSync(cli, "// the CLI\n")

/** The guide's command line for `program` in the "Run it" section, as words (continuations joined, optional brackets dropped). */
const shown = (program: string): ReadonlyArray<string> => {
  const section = guide.split("\n## ").find((part) => part.startsWith("Run it\n")) ?? ""
  const lines = section.replace(/\\\n\s*/g, "").split("\n")
  const line = lines.find((text) => text.startsWith(`${program} `)) ?? ""
  // Quoted placeholders are one word each.
  return (line.match(/'[^']*(?:'s[^']*)?'|"[^"]*"|\S+/g) ?? []).map((word) => word.replace(/^\[|\]$/g, ""))
}

const prompt = "\"<envelope, then your prompt>\""
const placeholders = (args: ReadonlyArray<string>): ReadonlyArray<string> =>
  args.map((word, i) => (args[i - 1] === "--model" ? "M" : args[i - 1] === "--max-turns" ? "N" : word))

describe("docs/guides/agent-steps.md, \"Run it\": the command lines the runner starts", () => {
  it("Claude Code: the run's hooks and setting sources, then the envelope's flags", () => {
    const hooked = AgentHooks.installers({ RATCHET_HOOK_LAUNCHER: launcher, RATCHET_HOOK_CLI: cli })["claude-code"]!()
    if (hooked._tag !== "Args") throw new Error(hooked.problem)
    const agent = { host: "claude-code", prompt: "p", model: "m", maxTurns: 7 } as const
    const started = ["claude", ...hooked.args.map((word, i) => (i === 1 ? "'<the run's hooks>'" : word)), ...AgentEnvelope.argsOf(agent, prompt)]
    expect(shown("claude")).toStrictEqual(placeholders(started))
  })

  it("Codex: the envelope's flags alone (no hooks on its command line)", () => {
    const agent = { host: "codex", prompt: "p", model: "m" } as const
    expect(shown("codex")).toStrictEqual(placeholders(["codex", ...AgentEnvelope.argsOf(agent, prompt)]))
  })
})
