/**
 * The runner's agent may not start a host's CLI (a nested agent, unfenced), from a hand-written
 * table: `claude` and `codex` by name, path, wrapper, package, after any separator and inside any
 * substitution, in any case, are refused; a command that cannot be read is refused (fail closed);
 * commands that only mention the hosts, and other tools, are not.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as HostEvent from "../src/HostEvent.js"
import * as NestedAgent from "../src/NestedAgent.js"

const bash = (command: string): HostEvent.ToolCall => ({ id: "toolu_1", tool: "Bash", action: { _tag: "Shell", command } })

// [the command, what the refusal says (null: allowed)].
const table: ReadonlyArray<readonly [string, string | null]> = [
  // Refused: a host's CLI, however it is started.
  [`claude -p --settings '{"disableAllHooks":true}' "fix it"`, "starts claude, a host's CLI"],
  ["codex exec --sandbox danger-full-access 'fix it'", "starts codex, a host's CLI"],
  ["npx @anthropic-ai/claude-code -p x", "starts claude-code, a host's CLI"],
  ["npx -y @anthropic-ai/claude-code@latest -p x", "a host's CLI"],
  ["npm exec @openai/codex -- exec x", "starts codex"],
  ["pnpm dlx @anthropic-ai/claude-code -p x", "starts claude-code"],
  ["bunx @openai/codex exec x", "starts codex"],
  ["/usr/bin/env claude -p x", "starts claude"],
  ["env -i PATH=/usr/bin claude -p x", "claude"],
  ["FOO=1 claude -p x", "starts claude"],
  ["/home/dev/.local/bin/claude -p x", "starts claude"],
  ["./node_modules/.bin/codex exec x", "starts codex"],
  ["echo a; claude -p x", "starts claude"],
  ["npm test && codex exec x", "starts codex"],
  ["echo fix | claude -p", "starts claude"],
  ["echo $(claude -p x)", "starts claude"],
  ["sh -c 'claude -p x'", "starts claude"],
  ["bash -lc \"codex exec x\"", "starts codex"],
  ["timeout 600 claude -p x", "starts claude"],
  ["nohup claude -p x &", "starts claude"],
  ["sudo claude", "starts claude"],
  ["exec claude -p x", "starts claude"],
  ["CLAUDE -p x", "starts CLAUDE, a host's CLI"],
  ["Codex.exe exec x", "starts Codex.exe"],
  ["node node_modules/@anthropic-ai/claude-code/cli.js -p x", "from its package"],
  ["node /usr/lib/node_modules/@openai/codex/bin/codex.js exec x", "from its package"],
  // Refused: cannot be read, so it might start one (fail closed).
  ["$AGENT -p x", "cannot read the command completely"],
  ["`echo claude` -p x", "cannot read the command completely"],
  ["python3 -c 'import subprocess; subprocess.run([\"claude\"])'", "cannot read the command completely"],
  ["eval \"$CMD\"", "cannot read the command completely"],
  // Allowed: other programs, and commands that only name the hosts.
  ["npm test", null],
  ["git status && git diff", null],
  ["echo claude", null],
  ["cat CLAUDE.md", null],
  ["grep -r codex src", null],
  ["git log --grep claude", null],
  ["ls .claude", null],
  ["node scripts/build.mjs", null],
  ["claudette --help", null],
  ["codexer run", null]
]

describe("NestedAgent.refusal", () => {
  it.each(table)("%s", (command, expected) => {
    const refused = NestedAgent.refusal(bash(command))
    if (expected === null) expect(refused).toBeNull()
    else expect(refused?.reason).toContain(expected)
  })

  it("takes no other tool's calls", () => {
    expect(NestedAgent.refusal({ id: "toolu_1", tool: "Write", action: { _tag: "Write", paths: ["claude"] } })).toBeNull()
    expect(NestedAgent.refusal({ id: "toolu_1", tool: "Read", action: { _tag: "Read", paths: ["codex"] } })).toBeNull()
  })

  it("names the fix", () => {
    expect(NestedAgent.refusal(bash("claude -p x"))?.fix).toContain("does not start other agents")
  })
})
