/**
 * Which changed paths are the hosts' configuration (ADR 0043's amendment): a hand table of paths
 * accepted and rejected, spelt as the guard folds them.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HostConfiguration from "../src/HostConfiguration.js"

describe("HostConfiguration.isHostConfiguration", () => {
  // [path, the hosts' configuration?]
  it.each<[string, boolean]>([
    [".claude/settings.local.json", true],
    [".claude/settings.json", true],
    [".claude/commands/x.md", true],
    [".codex/config.toml", true],
    [".codex/hooks.json", true],
    [".mcp.json", true],
    [".CLAUDE/settings.local.json", true],
    [".Claude./settings.local.json", true],
    [".Codex /config.toml", true],
    [".MCP.JSON", true],
    ["packages/app/.claude/settings.json", true],
    [".claude\\settings.local.json", true],
    ["src/claude.ts", false],
    ["claude/settings.json", false],
    [".claude-notes.md", false],
    ["docs/.claudex/x", false],
    [".codexrc", false],
    ["mcp.json", false],
    [".mcp.json.bak", false],
    ["test/flag.txt", false],
    [".ratchet/RUN.md", false]
  ])("%s → %s", (path, expected) => {
    expect(HostConfiguration.isHostConfiguration(path)).toBe(expected)
  })

  it("picks the hosts' configuration among changed paths, in their order", () => {
    expect(HostConfiguration.among(["src/a.ts", ".mcp.json", ".claude/settings.local.json", "README.md"])).toEqual([".mcp.json", ".claude/settings.local.json"])
    expect(HostConfiguration.among(["src/a.ts"])).toEqual([])
  })
})
