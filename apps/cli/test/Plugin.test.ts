/**
 * Ratchet's files for the hosts, against the hosts' published schemas (test/schemas.ts):
 *
 * - the Claude Code plugin (`plugins/claude-code`): its manifest, its hooks and its MCP server
 *   through the manifest's own definitions, its skill's front matter, and the marketplace at the
 *   repository's root that lists it. Unknown top-level fields are refused too, as
 *   `claude plugin validate --strict` refuses them.
 * - The Codex files (`plugins/codex`): `hooks.json` against Codex's hooks schema, and the MCP table
 *   of `config.toml` against Codex's config schema.
 * - The plugin's and the Codex template's hooks are exactly what `hooks install` writes for the
 *   same launcher (same events, matchers and timeouts), and every command they run exists.
 *
 * Each schema is also shown to refuse a file that is wrong in one way (written by hand), so a
 * validator that accepted everything would fail here.
 */
import * as ClaudeCodeSettings from "@ratchet/host-claude-code/Settings"
import * as CodexSettings from "@ratchet/host-codex/Settings"
import * as Tools from "@ratchet/host-mcp/Tools"
import * as HookCommand from "@ratchet/host/HookCommand"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Toml from "smol-toml"
import { describe, expect, it } from "vitest"
import * as Yaml from "yaml"
import * as Schemas from "./schemas.js"

const root = path.resolve(import.meta.dirname, "..", "..", "..")
const plugin = path.join(root, "plugins", "claude-code")
const codex = path.join(root, "plugins", "codex")
const json = (file: string): Record<string, unknown> => JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>

/** The top-level keys of `value` that `schema` does not define (Claude Code warns, `--strict` refuses). */
const unknownKeys = (name: Schemas.Name, value: Record<string, unknown>): ReadonlyArray<string> =>
  Object.keys(value).filter((key) => !(key in Schemas.schema(name).properties))

describe("the Claude Code plugin", () => {
  const manifest = json(path.join(plugin, ".claude-plugin", "plugin.json"))
  const hooks = json(path.join(plugin, "hooks", "hooks.json"))
  const mcp = json(path.join(plugin, ".mcp.json"))

  it("plugin.json is a valid manifest named ratchet, with no field Claude Code does not know", () => {
    expect(Schemas.errors("claude-code-plugin-manifest", manifest)).toEqual([])
    expect(unknownKeys("claude-code-plugin-manifest", manifest)).toEqual([])
    expect(manifest["name"]).toBe("ratchet")
  })

  it("the manifest schema refuses what Claude Code refuses", () => {
    expect(Schemas.errors("claude-code-plugin-manifest", { description: "no name" })).not.toEqual([])
    expect(Schemas.errors("claude-code-plugin-manifest", { ...manifest, keywords: "ratchet" })).not.toEqual([])
    expect(Schemas.errors("claude-code-plugin-manifest", { name: "ratchet", hooks: { NoSuchEvent: [] } })).not.toEqual([])
    expect(Schemas.errors("claude-code-plugin-manifest", { name: "ratchet", mcpServers: { ratchet: { command: 5 } } })).not.toEqual([])
  })

  it("hooks/hooks.json: the manifest's hooks, and valid settings hooks too", () => {
    expect(Object.keys(hooks).sort()).toEqual(["description", "hooks"])
    expect(Schemas.errors("claude-code-plugin-manifest", { name: "ratchet", hooks: hooks["hooks"] })).toEqual([])
    expect(Schemas.errors("claude-code-settings", { hooks: hooks["hooks"] })).toEqual([])
  })

  it("hooks/hooks.json is what hooks install writes, with the plugin's launcher, which exists", () => {
    const expected = Either.getOrThrow(ClaudeCodeSettings.install(undefined, (event) =>
      HookCommand.command({ host: "claude-code", event, launcher: { _tag: "HostVariable", path: "${CLAUDE_PLUGIN_ROOT}/bin/ratchet-hook" }, program: "", fix: "" })
    ))
    expect(hooks["hooks"], "run npm run plugins:write").toEqual(expected["hooks"])
    expect(fs.statSync(path.join(plugin, "bin", "ratchet-hook")).isFile()).toBe(true)
    const groups = hooks["hooks"] as Record<string, ReadonlyArray<{ matcher?: string }>>
    expect(groups["PreToolUse"]![0]!.matcher).toBe(ClaudeCodeSettings.matchers["PreToolUse"])
    // a call's end starts the plugin's hook for the judged tools only, a failure for any (ADR 0030)
    expect(groups["PostToolUse"]![0]!.matcher).toBe(ClaudeCodeSettings.matchers["PreToolUse"])
    expect(groups["PostToolUseFailure"]![0]!.matcher).toBeUndefined()
    expect(Object.keys(groups)).toEqual([...ClaudeCodeSettings.events])
  })

  it(".mcp.json runs ratchet mcp, and is the manifest's mcpServers", () => {
    expect(Object.keys(mcp)).toEqual(["mcpServers"])
    expect(Schemas.errors("claude-code-plugin-manifest", { name: "ratchet", mcpServers: mcp["mcpServers"] })).toEqual([])
    expect((mcp["mcpServers"] as Record<string, unknown>)["ratchet"]).toMatchObject({ command: "ratchet", args: ["mcp"] })
  })

  it("the skill: valid front matter named as its directory, teaching every tool and what an agent may not do", () => {
    const file = path.join(plugin, "skills", "ratchet", "SKILL.md")
    const text = fs.readFileSync(file, "utf8")
    const match = /^---\n([\s\S]*?)\n---\n/.exec(text)
    expect(match, "SKILL.md starts with YAML front matter between --- lines").not.toBeNull()
    const front = Yaml.parse(match![1]!) as Record<string, unknown>
    expect(Schemas.errors("agent-skill-frontmatter", front)).toEqual([])
    expect(front["name"]).toBe(path.basename(path.dirname(file)))
    for (const tool of Tools.names) expect(text, tool).toContain(`\`${tool}\``)
    for (const step of ["Brief", "Spec", "Plan", "Run", "Verify", "Complete"]) expect(text).toContain(`**${step}**`)
    for (const act of ["ratchet approve", "ratchet verify", "ratchet done", "--resolve"]) expect(text, act).toContain(act)
  })

  it("the skill schema refuses what the Agent Skills specification refuses", () => {
    const valid = { name: "ratchet", description: "x" }
    expect(Schemas.errors("agent-skill-frontmatter", valid)).toEqual([])
    for (const wrong of [{ description: "x" }, { ...valid, name: "Ratchet" }, { ...valid, name: "a--b" }, { ...valid, description: "" }, { ...valid, description: "x".repeat(1025) }, { ...valid, model: "x" }]) {
      expect(Schemas.errors("agent-skill-frontmatter", wrong), JSON.stringify(wrong).slice(0, 80)).not.toEqual([])
    }
  })
})

describe("the marketplace", () => {
  const marketplace = json(path.join(root, ".claude-plugin", "marketplace.json"))

  it("is valid, with no field Claude Code does not know, and lists the plugin where it is", () => {
    expect(Schemas.errors("claude-code-marketplace", marketplace)).toEqual([])
    expect(unknownKeys("claude-code-marketplace", marketplace)).toEqual([])
    const plugins = marketplace["plugins"] as ReadonlyArray<{ name: string; source: string }>
    expect(plugins.map((entry) => entry.name)).toEqual(["ratchet"])
    const source = path.resolve(root, plugins[0]!.source)
    expect(source).toBe(plugin)
    expect(json(path.join(source, ".claude-plugin", "plugin.json"))["name"]).toBe(plugins[0]!.name)
  })

  it("the marketplace schema refuses a plugin without a source or with a source not starting ./", () => {
    expect(Schemas.errors("claude-code-marketplace", { ...marketplace, plugins: [{ name: "ratchet" }] })).not.toEqual([])
    expect(Schemas.errors("claude-code-marketplace", { ...marketplace, plugins: [{ name: "ratchet", source: "plugins/claude-code" }] })).not.toEqual([])
    expect(Schemas.errors("claude-code-marketplace", { name: "ratchet", plugins: [] })).not.toEqual([])
  })
})

describe("the Codex files", () => {
  const hooks = json(path.join(codex, "hooks.json"))

  it("hooks.json is valid for Codex, and is what hooks install writes for ratchet-hook on the PATH", () => {
    expect(Schemas.errors("codex-hooks", hooks)).toEqual([])
    const expected = Either.getOrThrow(CodexSettings.install(undefined, (event) =>
      HookCommand.command({
        host: "codex",
        event,
        launcher: { _tag: "OnPath" },
        program: "",
        fix: "Install the Ratchet CLI (npm i -g @ratchet/cli) or run ratchet hooks install codex in a terminal."
      })
    ))
    expect(hooks, "run npm run plugins:write").toEqual(expected)
  })

  it("the hooks schema refuses what Codex refuses", () => {
    expect(Schemas.errors("codex-hooks", { ...hooks, description: "x" })).not.toEqual([])
    expect(Schemas.errors("codex-hooks", { hooks: { Stop: [{ hooks: [{ type: "command", command: "x", timeout: 0.5 }] }] } })).not.toEqual([])
    expect(Schemas.errors("codex-hooks", { hooks: { Stop: { hooks: [] } } })).not.toEqual([])
  })

  it("config.toml's [mcp_servers.ratchet] runs ratchet mcp, valid for Codex", () => {
    const config = Toml.parse(fs.readFileSync(path.join(codex, "config.toml"), "utf8"))
    expect(Object.keys(config)).toEqual(["mcp_servers"])
    expect(Schemas.errors("codex-config-mcp-servers", config)).toEqual([])
    expect((config["mcp_servers"] as Record<string, unknown>)["ratchet"]).toEqual({ command: "ratchet", args: ["mcp"], env: { RATCHET_ACTOR: "agent:codex" } })
    expect(Schemas.errors("codex-config-mcp-servers", { mcp_servers: { ratchet: { command: "ratchet", arguments: ["mcp"] } } })).not.toEqual([])
  })
})

describe("what hooks install writes", () => {
  const launcher = "/usr/lib/node_modules/@ratchet/cli/bin/ratchet-hook"
  const program = "'/usr/bin/node' '/usr/lib/node_modules/@ratchet/cli/dist/ratchet.mjs' hook"
  const commandOf = (host: string) => (event: string) =>
    HookCommand.command({ host, event, launcher: { _tag: "Path", path: launcher }, program: `${program} ${host}`, fix: `Run ratchet hooks install ${host} again in a terminal.` })

  it("Claude Code's settings, with someone's hooks and settings around ours, are valid settings", () => {
    const theirs = { model: "claude-sonnet-4-5", permissions: { deny: ["Read(./.env)"] }, hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./audit.sh" }] }] } }
    const installed = Either.getOrThrow(ClaudeCodeSettings.install(theirs, commandOf("claude-code")))
    expect(Schemas.errors("claude-code-settings", installed)).toEqual([])
    expect(Schemas.errors("claude-code-settings", { ...installed, hooks: { PreToolUse: [{ matcher: 5, hooks: [] }] } })).not.toEqual([])
  })

  it("Codex's hooks.json is valid for Codex", () => {
    expect(Schemas.errors("codex-hooks", Either.getOrThrow(CodexSettings.install(undefined, commandOf("codex"))))).toEqual([])
  })
})
