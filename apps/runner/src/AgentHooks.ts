/**
 * The run's hooks for an agent step's Claude Code session (ADR 0040): the settings `claude
 * --settings <json>` merges over the user's and the project's, with one entry per hook event that
 * runs `ratchet hook claude-code` exactly as `ratchet hooks install` writes it (ADR 0026): the
 * fail-closed launcher by absolute path, which runs this node and the CLI's bundle by absolute
 * path, never a `ratchet` found on PATH. Claude Code runs every matching hook of every settings
 * source, and runs one command once, so a project with Ratchet's hooks installed as well records
 * each call once (`DispatchEffect` is written once per call).
 *
 * `ratchet run` tells the runner where its CLI is (`RATCHET_HOOK_LAUNCHER`, `RATCHET_HOOK_CLI`,
 * both absolute). A runner without them, or with a path a hook command cannot name, does not start
 * Claude Code unfenced: the attempt fails with the reason. Codex is given no hooks here: `codex
 * exec` takes none from its command line that run without being trusted first, so it is held by
 * its sandbox, the scope check after it ends, and the project's own trusted hooks (ADR 0040).
 *
 * The settings also say `disableAllHooks: false`. Claude Code documents that the command line's
 * settings outrank the project's (`.claude/settings.json`, `.claude/settings.local.json`) and the
 * user's, key by key, and that a key the command line leaves unset falls through: an agent that
 * wrote `disableAllHooks: true` into the project's settings in one attempt would otherwise run the
 * next one with no hooks at all. Only managed settings outrank the command line; a machine whose
 * managed settings switch hooks off (`disableAllHooks`, or `allowManagedHooksOnly`, which drops every
 * hook but the managed ones) cannot fence the agent, so the runner does not start it there
 * ({@link managedProblem}). And the session reads no local settings (`--setting-sources
 * user,project`, {@link settingSources}): Claude Code documents that the command line's settings
 * and the managed ones are read whatever the sources say, so the run's hooks stay, the project's
 * committed `.claude/settings.json` (its sandbox and permissions, which `ratchet hooks install
 * claude-code` writes) keeps holding the agent, and the gitignored `.claude/settings.local.json` is
 * not read at all. A change the agent makes to either is refused by the guard (`.claude/` is
 * protected) and, made by a script, is among the step's changed paths (gitignored files under
 * `.claude/` included) and blocks the task when the agent ends, before a later attempt starts.
 * Whatever still keeps the hooks from running is caught after the agent
 * ended: a side-effecting call in its stream that no hook recorded fails the attempt
 * (`AgentHooksRan`, ADR 0040's amendment).
 *
 * @since 0.4.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type * as AgentHooks from "@ratchet/controller/AgentHooks"
import * as ClaudeCodeSettings from "@ratchet/host-claude-code/Settings"
import * as HookCommand from "@ratchet/host/HookCommand"
import * as Either from "effect/Either"

/**
 * The variables naming the CLI whose hook the agent's session runs.
 *
 * @since 0.4.0
 * @category constants
 */
export const variables = { launcher: "RATCHET_HOOK_LAUNCHER", cli: "RATCHET_HOOK_CLI" } as const

const readable = (file: string): boolean => {
  try {
    fs.accessSync(file, fs.constants.R_OK)
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** Why `file` (named by `variable`) cannot be one word of the hook's command, or null. */
const problemOf = (variable: string, file: string | undefined, what: string): string | null => {
  if (file === undefined || file === "") return `this runner was not told where ${what} is (${variable}), so the agent's session cannot run the run's hooks; start agent steps with ratchet run`
  if (!path.isAbsolute(file)) return `${variable}=${JSON.stringify(file.slice(0, 200))} is not an absolute path; it must name ${what}`
  const unquotable = HookCommand.unquotable(file)
  if (unquotable !== null) return `${variable} ${unquotable}, so a hook command cannot name it; install Ratchet under a plainer path`
  return readable(file) ? null : `${variable}=${JSON.stringify(file.slice(0, 200))} is not a readable file; it must name ${what}`
}

/**
 * Where Claude Code documents its managed settings (Linux and WSL, macOS): the one source that
 * outranks the command line's.
 *
 * @since 0.4.0
 * @category constants
 */
export const managedSettingsFiles: ReadonlyArray<string> = [
  "/etc/claude-code/managed-settings.json",
  "/Library/Application Support/ClaudeCode/managed-settings.json"
]

/**
 * Why the managed settings in `files` keep the run's hooks from running (`disableAllHooks: true`,
 * or `allowManagedHooksOnly: true`), or null. A file that is absent says nothing; one that cannot be
 * read or parsed is a problem too, since Claude Code's reading of it cannot be known (fail closed).
 *
 * @since 0.4.0
 * @category constructors
 */
export const managedProblem = (files: ReadonlyArray<string>): string | null => {
  for (const file of files) {
    let text: string
    try {
      text = fs.readFileSync(file, "utf8")
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") continue
      return `Claude Code's managed settings ${file} could not be read (${(error as NodeJS.ErrnoException).code ?? "error"}), so whether they let the run's hooks run is unknown; the agent is not started unfenced`
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return `Claude Code's managed settings ${file} are not JSON, so whether they let the run's hooks run is unknown; the agent is not started unfenced`
    }
    const settings = typeof parsed === "object" && parsed !== null ? parsed as Record<string, unknown> : {}
    for (const key of ["disableAllHooks", "allowManagedHooksOnly"] as const) {
      if (settings[key] === true) {
        return `Claude Code's managed settings ${file} set ${key}, which no run's settings can override, so the agent's session would run without the run's hooks; an administrator must lift it for agent steps on Claude Code`
      }
    }
  }
  return null
}

/**
 * The settings that give a Claude Code session the run's hooks, as one JSON text, or why not.
 *
 * @since 0.4.0
 * @category constructors
 */
export const claudeCodeSettings = (
  environment: Readonly<Record<string, string | undefined>>,
  node: string = process.execPath,
  managedFiles: ReadonlyArray<string> = managedSettingsFiles
): Either.Either<string, string> => {
  const launcher = environment[variables.launcher]
  const cli = environment[variables.cli]
  const problem = problemOf(variables.launcher, launcher, "Ratchet's hook launcher (ratchet-hook)") ?? problemOf(variables.cli, cli, "the Ratchet CLI's bundle") ??
    (HookCommand.unquotable(node) === null ? null : `node runs from ${JSON.stringify(node.slice(0, 200))}, which a hook command cannot name`)
  if (problem !== null) return Either.left(problem)
  const program = `${HookCommand.word(node)} ${HookCommand.word(cli as string)} hook claude-code`
  const fix = "The runner that started this agent gave it a launcher that is gone: stop the run and start it again with ratchet run."
  const managed = managedProblem(managedFiles)
  if (managed !== null) return Either.left(managed)
  const settings = ClaudeCodeSettings.install({}, (event) =>
    HookCommand.command({ host: "claude-code", event, launcher: { _tag: "Path", path: launcher as string }, program, fix }))
  return Either.match(settings, {
    onLeft: (error) => Either.left(`the run's hook settings could not be made: ${error.message}`),
    // Explicit, so that no project or user settings file can switch the run's hooks off (see the module comment).
    onRight: (json) => Either.right(JSON.stringify({ ...json, disableAllHooks: false }))
  })
}

/**
 * The setting sources the runner's Claude Code reads besides the command line's and the managed
 * ones: the user's and the project's committed settings (whose sandbox and permissions keep holding
 * the agent), never the gitignored local file an agent could write unseen.
 *
 * @since 0.5.0
 * @category constants
 */
export const settingSources: ReadonlyArray<string> = ["--setting-sources", "user,project"]

/**
 * The hosts this runner gives the run's hooks, reading `environment` when an agent starts.
 *
 * @since 0.4.0
 * @category constructors
 */
export const installers = (environment: Readonly<Record<string, string | undefined>>): AgentHooks.Installers => ({
  "claude-code": () =>
    Either.match(claudeCodeSettings(environment), {
      onLeft: (problem): AgentHooks.Installed => ({ _tag: "Problem", problem }),
      onRight: (settings): AgentHooks.Installed => ({ _tag: "Args", args: ["--settings", settings, ...settingSources] })
    })
})
