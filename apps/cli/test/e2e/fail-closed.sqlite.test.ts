/**
 * Hooks that fail closed, end to end (ADR 0026): `ratchet hooks install claude-code|codex` run by a
 * CLI installed outside the repository (a copy of `bin/` and `dist/`, as `npm i -g` lays it out),
 * then each installed command run exactly as the host runs it — Claude Code through `sh -c`,
 * Codex through `$SHELL -lc` (sh, bash, zsh and fish where installed) — with a PATH that has
 * neither `ratchet` nor `node`:
 *
 * - with Ratchet in place, the answer is the one `ratchet hook <host>` gives (a person-only act
 *   denied, a test run allowed with nothing printed), so the launcher changes nothing;
 * - with the CLI's bundle moved away, and then the whole CLI removed, a PreToolUse for a Bash call
 *   is blocked (exit 2) with the fix, a PermissionRequest is denied in the host's form, another
 *   event goes on with a warning: never exit 0 on a tool call, never 127;
 * - `hooks install` run again by another CLI replaces the entries, and `uninstall` removes them;
 *   a CLI under a path no hook command can name alike in every shell (a quote) is refused;
 * - the Claude Code plugin's hook (`plugins/claude-code/hooks/hooks.json`, its `${CLAUDE_PLUGIN_ROOT}`
 *   filled in as Claude Code does) answers through `ratchet` on the PATH, and blocks with
 *   `npm i -g @ratchet/cli` when there is none.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as Schemas from "../schemas.js"
import { bin, cliRoot, exec, makeWorld, removeWorlds, sqlite, type World } from "./harness.js"

afterAll(removeWorlds)

const fixtures = path.resolve(cliRoot, "..", "..", "packages")
const pluginRoot = path.resolve(cliRoot, "..", "..", "plugins", "claude-code")

/** A fixture payload with its project moved into the world's repository. */
const payload = (world: World, host: "claude-code" | "codex", file: string): string =>
  fs.readFileSync(path.join(fixtures, `host-${host}`, "test", "fixtures", file), "utf8").replaceAll("/home/dev/project", world.repo)

/** The command of our entry for `event` in a hooks file. */
const commandOf = (file: string, event: string): string => {
  const groups = JSON.parse(fs.readFileSync(file, "utf8")).hooks[event] as ReadonlyArray<{ hooks: ReadonlyArray<{ command: string }> }>
  const commands = groups.flatMap((group) => group.hooks.map((hook) => hook.command)).filter((command) => command.includes("ratchet-hook"))
  expect(commands).toHaveLength(1)
  return commands[0]!
}

/** A PATH with the system's tools and nothing of Ratchet's or node's. */
const bareBin = (world: World): string => {
  const dir = path.join(world.root, "bare-bin")
  fs.mkdirSync(dir, { recursive: true })
  return dir
}

/** Runs a hook command as the host does: `shell -c` (or `-lc`) in the repository with the host's environment. */
const asHost = (world: World, shell: ReadonlyArray<string>, command: string, input: string, env: Record<string, string> = {}) =>
  spawnSync(shell[0]!, [...shell.slice(1), command], {
    cwd: world.repo,
    input,
    encoding: "utf8",
    env: { PATH: bareBin(world), HOME: world.root, RATCHET_HOME: world.home, ...env },
    timeout: 60_000
  })

/** The CLI copied where `npm i -g` would put it, resolving its native dependency from the repository's node_modules. */
const installCopy = (world: World, under = "prefix"): string => {
  const prefix = path.join(world.root, under, "lib", "node_modules", "@ratchet", "cli")
  fs.mkdirSync(prefix, { recursive: true })
  fs.cpSync(path.join(cliRoot, "bin"), path.join(prefix, "bin"), { recursive: true })
  fs.cpSync(path.join(cliRoot, "dist"), path.join(prefix, "dist"), { recursive: true })
  fs.copyFileSync(path.join(cliRoot, "package.json"), path.join(prefix, "package.json"))
  fs.symlinkSync(path.resolve(cliRoot, "..", "..", "node_modules"), path.join(prefix, "node_modules"))
  return prefix
}

const direct = (world: World, host: string, input: string) =>
  exec(process.execPath, [bin, "hook", host], { cwd: world.repo, env: { ...world.env, CLAUDE_PROJECT_DIR: world.repo }, input })

const shells = ["/bin/sh", "/bin/bash", "/usr/bin/zsh", "/bin/zsh", "/usr/bin/fish"].filter((shell) => fs.existsSync(shell))

describe("installed hooks fail closed", { timeout: 480_000 }, () => {
  it("Claude Code: answers as ratchet hook does, and blocks with the fix once Ratchet is gone", async () => {
    const world = await makeWorld(sqlite)
    const copy = installCopy(world)
    const installed = await exec(process.execPath, [path.join(copy, "bin", "ratchet.mjs"), "hooks", "install", "claude-code", "--json"], { cwd: world.repo, env: world.env })
    expect(installed.code, installed.stderr).toBe(0)
    expect(installed.json.runs.launcher).toBe(path.join(copy, "bin", "ratchet-hook"))
    const settings = path.join(world.repo, ".claude", "settings.json")
    // What Claude Code reads: hooks, sandbox and deny rules, all valid settings.
    expect(Schemas.errors("claude-code-settings", JSON.parse(fs.readFileSync(settings, "utf8")))).toEqual([])
    const env = { CLAUDE_PROJECT_DIR: world.repo }
    const approve = payload(world, "claude-code", "PreToolUse.Bash.ratchet-approve.json")
    const npmTest = payload(world, "claude-code", "PreToolUse.Bash.npm-test.json")
    const permission = payload(world, "claude-code", "PermissionRequest.Bash.json")
    const post = payload(world, "claude-code", "PostToolUse.Bash.json")

    // In place: the same answer as `ratchet hook claude-code`, with no node or ratchet on the PATH.
    const denied = asHost(world, ["/bin/sh", "-c"], commandOf(settings, "PreToolUse"), approve, env)
    const expected = await direct(world, "claude-code", approve)
    expect([denied.status, denied.stdout]).toEqual([expected.code, expected.stdout])
    expect(JSON.parse(denied.stdout).hookSpecificOutput.permissionDecision).toBe("deny")
    expect(asHost(world, ["/bin/sh", "-c"], commandOf(settings, "PreToolUse"), npmTest, env)).toMatchObject({ status: 0, stdout: "", stderr: "" })
    expect(asHost(world, ["/bin/sh", "-c"], commandOf(settings, "PostToolUse"), post, env)).toMatchObject({ status: 0, stdout: "" })

    // The bundle moved away: the tool call is blocked with the fix, never let through.
    fs.renameSync(path.join(copy, "dist"), path.join(copy, "dist-moved"))
    const moved = asHost(world, ["/bin/sh", "-c"], commandOf(settings, "PreToolUse"), npmTest, env)
    expect(moved.status).toBe(2)
    expect(moved.stderr).toContain(`Ratchet blocked this call because its hook could not run: the Ratchet CLI ${path.join(copy, "dist", "ratchet.mjs")} is missing.`)
    expect(moved.stderr).toContain("Run ratchet hooks install claude-code again in a terminal")
    const permissionDenied = asHost(world, ["/bin/sh", "-c"], commandOf(settings, "PermissionRequest"), permission, env)
    expect(permissionDenied.status).toBe(0)
    expect(JSON.parse(permissionDenied.stdout).hookSpecificOutput).toMatchObject({ hookEventName: "PermissionRequest", decision: { behavior: "deny" } })
    const warned = asHost(world, ["/bin/sh", "-c"], commandOf(settings, "PostToolUse"), post, env)
    expect(warned.status).toBe(0)
    expect(JSON.parse(warned.stdout).systemMessage).toContain("Ratchet (warning): its hook could not run")

    // The whole CLI removed, launcher included: still blocked, by the command's own check.
    fs.rmSync(path.join(world.root, "prefix"), { recursive: true, force: true })
    const removed = asHost(world, ["/bin/sh", "-c"], commandOf(settings, "PreToolUse"), npmTest, env)
    expect(removed.status).toBe(2)
    expect(removed.stderr).toBe(`Ratchet blocked this call because its hook launcher ${path.join(copy, "bin", "ratchet-hook")} is missing. Install the Ratchet CLI again if it was removed (npm i -g @ratchet/cli), then run ratchet hooks install claude-code again in a terminal.\n`)

    // Installing again from the CLI in place replaces our entries; uninstall removes them.
    const again = await world.run(["hooks", "install", "claude-code", "--json"])
    expect(again.json).toMatchObject({ changed: true, entries: 8, runs: { launcher: path.join(cliRoot, "bin", "ratchet-hook") } })
    expect(fs.readFileSync(settings, "utf8")).not.toContain(copy)
    expect(asHost(world, ["/bin/sh", "-c"], commandOf(settings, "PreToolUse"), approve, env).stdout).toBe(expected.stdout)
    expect((await world.run(["hooks", "uninstall", "claude-code", "--json"])).json).toMatchObject({ entries: 0 })
    expect(fs.readFileSync(settings, "utf8")).not.toContain("ratchet-hook")
  })

  it("Codex, through each login shell a user may have: the same, in Codex's forms", async () => {
    const world = await makeWorld(sqlite)
    const copy = installCopy(world)
    const installed = await exec(process.execPath, [path.join(copy, "bin", "ratchet.mjs"), "hooks", "install", "codex", "--json"], { cwd: world.repo, env: world.env })
    expect(installed.code, installed.stderr).toBe(0)
    const hooks = path.join(world.repo, ".codex", "hooks.json")
    expect(Schemas.errors("codex-hooks", JSON.parse(fs.readFileSync(hooks, "utf8")))).toEqual([])
    const approve = payload(world, "codex", "PreToolUse.bash-ratchet-approve.json")
    const npmTest = payload(world, "codex", "PreToolUse.bash-npm-test.json")
    const permission = payload(world, "codex", "PermissionRequest.bash.json")
    const stop = payload(world, "codex", "Stop.first.json")
    const expected = await direct(world, "codex", approve)
    expect(JSON.parse(expected.stdout).hookSpecificOutput.permissionDecision).toBe("deny")

    for (const shell of shells) {
      const denied = asHost(world, [shell, "-lc"], commandOf(hooks, "PreToolUse"), approve, { SHELL: shell })
      expect([shell, denied.status, denied.stdout]).toEqual([shell, expected.code, expected.stdout])
      expect(asHost(world, [shell, "-lc"], commandOf(hooks, "PreToolUse"), npmTest, { SHELL: shell })).toMatchObject({ status: 0, stdout: "" })
    }

    fs.renameSync(path.join(copy, "dist"), path.join(copy, "dist-moved"))
    for (const shell of shells) {
      const moved = asHost(world, [shell, "-lc"], commandOf(hooks, "PreToolUse"), npmTest, { SHELL: shell })
      expect([shell, moved.status]).toEqual([shell, 2])
      expect(moved.stderr).toContain("Run ratchet hooks install codex again in a terminal")
      const refused = asHost(world, [shell, "-lc"], commandOf(hooks, "PermissionRequest"), permission, { SHELL: shell })
      expect([shell, refused.status, refused.stdout]).toEqual([shell, 2, ""])
      expect(refused.stderr).toContain("Ratchet blocked this call")
      const warned = asHost(world, [shell, "-lc"], commandOf(hooks, "Stop"), stop, { SHELL: shell })
      expect([shell, warned.status, warned.stdout]).toEqual([shell, 1, ""])
      expect(warned.stderr).toContain("Ratchet (warning): its hook could not run")
    }

    fs.rmSync(path.join(world.root, "prefix"), { recursive: true, force: true })
    for (const shell of shells) {
      const removed = asHost(world, [shell, "-lc"], commandOf(hooks, "PreToolUse"), npmTest, { SHELL: shell })
      expect([shell, removed.status]).toEqual([shell, 2])
      expect(removed.stderr).toContain(`its hook launcher ${path.join(copy, "bin", "ratchet-hook")} is missing`)
      // Never the exit 2 of dash's "cannot open", which would keep the agent from stopping.
      const unseen = asHost(world, [shell, "-lc"], commandOf(hooks, "Stop"), stop, { SHELL: shell })
      expect([shell, unseen.status, unseen.stdout]).toEqual([shell, 1, ""])
      expect(unseen.stderr).toContain(`Ratchet (warning): its hook launcher ${path.join(copy, "bin", "ratchet-hook")} is missing, so Ratchet did not see this Stop.`)
    }
  })

  it("refuses to install a launcher no hook command can name the same in every shell, and writes nothing", async () => {
    const world = await makeWorld(sqlite)
    const copy = installCopy(world, "o'neil")
    const refused = await exec(process.execPath, [path.join(copy, "bin", "ratchet.mjs"), "hooks", "install", "codex", "--json"], { cwd: world.repo, env: world.env })
    expect(refused.code).toBe(2)
    expect(refused.json.error).toMatchObject({ field: path.join(copy, "bin", "ratchet-hook") })
    expect(refused.json.error.reason).toContain("has a single quote (')")
    expect(fs.existsSync(path.join(world.repo, ".codex"))).toBe(false)
  })

  it("the Claude Code plugin's hook: through ratchet on the PATH, blocked with the install command without it", async () => {
    const world = await makeWorld(sqlite)
    const plugin = JSON.parse(fs.readFileSync(path.join(pluginRoot, "hooks", "hooks.json"), "utf8"))
    // Claude Code fills the variable in, and exports it too.
    const command = (event: string) => (plugin.hooks[event][0].hooks[0].command as string).replaceAll("${CLAUDE_PLUGIN_ROOT}", pluginRoot)
    const env = { CLAUDE_PROJECT_DIR: world.repo, CLAUDE_PLUGIN_ROOT: pluginRoot }
    const onPath = path.join(world.root, "npm-bin")
    fs.mkdirSync(onPath)
    fs.symlinkSync(bin, path.join(onPath, "ratchet"))
    const nodeDir = path.dirname(process.execPath)
    const approve = payload(world, "claude-code", "PreToolUse.Bash.ratchet-approve.json")

    const answered = asHost(world, ["/bin/sh", "-c"], command("PreToolUse"), approve, { ...env, PATH: `${onPath}:${nodeDir}:/usr/bin:/bin` })
    const expected = await direct(world, "claude-code", approve)
    expect([answered.status, answered.stdout]).toEqual([expected.code, expected.stdout])

    const missing = asHost(world, ["/bin/sh", "-c"], command("PreToolUse"), approve, { ...env, PATH: bareBin(world) })
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain("the ratchet command is not on the PATH Claude Code gives its hooks")
    expect(missing.stderr).toContain("npm i -g @ratchet/cli")
  })
})
