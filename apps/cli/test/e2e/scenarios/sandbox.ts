/**
 * The hosts' own sandboxes end to end (ADR 0017): `ratchet hooks install claude-code|codex` run by
 * the bundled CLI in a world, the files it writes read back, and `ratchet status` before and after.
 *
 * - Hooks installed by an earlier Ratchet, with no sandbox (Claude Code) and `danger-full-access`
 *   (Codex): `status` warns for each host, in text and in `--json`, naming the file, what is
 *   missing and the fix.
 * - After `hooks install` for both: Claude Code's settings hold the sandbox, the deny lists name the
 *   world's store and key, and a record sits beside them; Codex's config.toml has workspace-write
 *   and, the store being under `/tmp` and `$TMPDIR`, both exclusions, every line marked; `status`
 *   has no warning; installing again changes nothing.
 * - A settings file kept elsewhere through a symbolic link is written where it lives.
 * - `hooks uninstall` gives back each file exactly as it was before the install.
 * - A config.toml that is not TOML is refused, named, and left as it was.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createTask, type Engine, makeWorld, removeWorlds, type World } from "../harness.js"

/** The world's own host configuration directories, so the user's real ones are never read. */
const hostEnv = (world: World): Record<string, string> => ({
  CLAUDE_CONFIG_DIR: path.join(world.root, "claude-user"),
  CODEX_HOME: path.join(world.root, "codex-home"),
  TMPDIR: path.dirname(world.root)
})

const run = (world: World, args: ReadonlyArray<string>) => world.run(args, { env: hostEnv(world) })

const read = (file: string) => fs.readFileSync(file, "utf8")

export const sandboxScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("ratchet hooks install sets the hosts' sandboxes, and ratchet status says when one is missing", { timeout: 480_000 }, () => {
    it("warns before, configures both hosts, is quiet after, and uninstalls back to the user's files", async () => {
      const world = await makeWorld(engine)
      const taskId = await createTask(world, "Make the date test deterministic")
      const claudeFile = path.join(world.repo, ".claude", "settings.json")
      const codexHooks = path.join(world.repo, ".codex", "hooks.json")
      const codexConfig = path.join(world.repo, ".codex", "config.toml")

      // No hooks of ours: nothing to warn about.
      const quiet = await run(world, ["status", "--json"])
      expect(quiet.code, quiet.stderr).toBe(0)
      expect(quiet.json.warnings).toEqual([])

      // Hooks from an earlier Ratchet, without any sandbox: the user's own settings around them.
      fs.mkdirSync(path.dirname(claudeFile), { recursive: true })
      fs.mkdirSync(path.dirname(codexHooks), { recursive: true })
      const claudeBefore = `${JSON.stringify({ model: "claude-sonnet-4-5", hooks: { Stop: [{ hooks: [{ type: "command", command: "ratchet hook claude-code", timeout: 10 }] }] } }, null, 2)}\n`
      const codexHooksBefore = `${JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "ratchet hook codex", timeout: 10 }] }] } }, null, 2)}\n`
      const codexConfigBefore = "# the team's Codex settings\nmodel = \"gpt-5.5\"\nsandbox_mode = \"danger-full-access\"  # fast\n\n[mcp_servers.docs]\ncommand = \"npx\"\n"
      fs.writeFileSync(claudeFile, claudeBefore)
      fs.writeFileSync(codexHooks, codexHooksBefore)
      fs.writeFileSync(codexConfig, codexConfigBefore)

      const warned = await run(world, ["status", taskId, "--json"])
      expect(warned.code, warned.stderr).toBe(0)
      expect(warned.json.task.taskId).toBe(taskId)
      expect(warned.json.warnings).toEqual([
        expect.objectContaining({ host: "claude-code", file: claudeFile, missing: "sandbox.enabled: true", fix: "ratchet hooks install claude-code" }),
        expect.objectContaining({ host: "codex", file: codexConfig, missing: "sandbox_mode = \"workspace-write\"", fix: "ratchet hooks install codex" })
      ])
      expect(warned.json.warnings[1].detail).toContain("danger-full-access")
      const text = await run(world, ["status", taskId])
      expect(text.code).toBe(0)
      expect(text.stdout).toContain(`warning: claude-code: sandbox.enabled: true missing in ${claudeFile}`)
      expect(text.stdout).toContain("fix: ratchet hooks install codex")

      // Claude Code's settings: kept in a dotfiles directory through a symbolic link.
      const dotfile = path.join(world.root, "dotfiles", "claude-settings.json")
      fs.mkdirSync(path.dirname(dotfile))
      fs.renameSync(claudeFile, dotfile)
      fs.symlinkSync(dotfile, claudeFile)

      const claude = await run(world, ["hooks", "install", "claude-code", "--json"])
      expect(claude.code, claude.stderr).toBe(0)
      expect(claude.json).toMatchObject({ host: "claude-code", file: claudeFile, changed: true, hooksChanged: true, entries: 8, sandbox: { file: claudeFile, changed: true, notes: [] } })
      expect(fs.lstatSync(claudeFile).isSymbolicLink()).toBe(true)
      const settings = JSON.parse(read(dotfile))
      expect(settings.model).toBe("claude-sonnet-4-5")
      expect(settings.sandbox).toEqual({
        enabled: true,
        allowUnsandboxedCommands: false,
        filesystem: {
          denyWrite: [world.home, path.join(world.home, "approver-key.json"), "./.ratchet"],
          denyRead: [world.home, path.join(world.home, "approver-key.json")]
        }
      })
      expect(settings.permissions.deny).toEqual([
        `Edit(/${world.home}/**)`,
        `Read(/${world.home}/**)`,
        `Edit(/${path.join(world.home, "approver-key.json")})`,
        `Read(/${path.join(world.home, "approver-key.json")})`,
        "Edit(/.ratchet/**)"
      ])
      // The record sits beside the file where it really lives.
      expect(JSON.parse(read(path.join(path.dirname(dotfile), "ratchet-sandbox.json"))).set).toEqual({ enabled: { before: null }, allowUnsandboxedCommands: { before: null } })

      const codex = await run(world, ["hooks", "install", "codex", "--json"])
      expect(codex.code, codex.stderr).toBe(0)
      expect(codex.json).toMatchObject({ host: "codex", file: codexHooks, changed: true, entries: 7, sandbox: { file: codexConfig, changed: true, notes: [] } })
      expect(read(codexConfig)).toBe([
        "# the team's Codex settings",
        "model = \"gpt-5.5\"",
        "sandbox_mode = \"workspace-write\" # ratchet: set by ratchet hooks install codex; was \"danger-full-access\"  # fast",
        "",
        "[mcp_servers.docs]",
        "command = \"npx\"",
        "",
        "[sandbox_workspace_write] # ratchet: set by ratchet hooks install codex",
        "exclude_slash_tmp = true # ratchet: set by ratchet hooks install codex",
        "exclude_tmpdir_env_var = true # ratchet: set by ratchet hooks install codex",
        ""
      ].join("\n"))

      const calm = await run(world, ["status", taskId, "--json"])
      expect(calm.json.warnings).toEqual([])
      expect((await run(world, ["status", taskId])).stdout).not.toContain("warning:")

      // Again: nothing changes.
      const settingsText = read(dotfile)
      const configText = read(codexConfig)
      expect((await run(world, ["hooks", "install", "claude-code", "--json"])).json).toMatchObject({ changed: false, sandbox: { changed: false } })
      expect((await run(world, ["hooks", "install", "codex", "--json"])).json).toMatchObject({ changed: false, sandbox: { changed: false } })
      expect([read(dotfile), read(codexConfig)]).toEqual([settingsText, configText])

      // Someone turns Claude Code's sandbox off in their local settings: status says so.
      const localFile = path.join(world.repo, ".claude", "settings.local.json")
      fs.writeFileSync(localFile, JSON.stringify({ sandbox: { enabled: false } }))
      expect((await run(world, ["status", "--json"])).json.warnings).toEqual([expect.objectContaining({ host: "claude-code", file: localFile, missing: "sandbox.enabled: true" })])
      fs.rmSync(localFile)

      // Uninstall: every file as it was before the install.
      expect((await run(world, ["hooks", "uninstall", "claude-code", "--json"])).json).toMatchObject({ changed: true, entries: 0 })
      expect(JSON.parse(read(dotfile))).toEqual({ model: "claude-sonnet-4-5" })
      expect(fs.existsSync(path.join(path.dirname(dotfile), "ratchet-sandbox.json"))).toBe(false)
      expect((await run(world, ["hooks", "uninstall", "codex", "--json"])).json).toMatchObject({ changed: true, entries: 0 })
      expect(read(codexConfig)).toBe(codexConfigBefore)
      expect(JSON.parse(read(codexHooks))).toEqual({})
      expect((await run(world, ["status", "--json"])).json.warnings).toEqual([])

      // A config.toml that is not TOML: refused, named, untouched; the hooks file untouched too.
      fs.writeFileSync(codexConfig, "sandbox_mode = workspace-write\n")
      const hooksBefore = read(codexHooks)
      const broken = await run(world, ["hooks", "install", "codex", "--json"])
      expect(broken.code).toBe(2)
      expect(broken.json.error.field).toBe(codexConfig)
      expect(broken.json.error.reason).toContain("is not valid TOML at line 1")
      expect([read(codexConfig), read(codexHooks)]).toEqual(["sandbox_mode = workspace-write\n", hooksBefore])
    })
  })
}
