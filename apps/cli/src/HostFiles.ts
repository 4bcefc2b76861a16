/**
 * The hosts' settings files on this machine: where Claude Code and Codex keep them for a project
 * and for the user, reading and writing them, and the paths their sandboxes must keep out of an
 * agent's reach (Ratchet's store, the approval key, the project's `.ratchet/`), as this
 * invocation's environment names them.
 *
 * A file is written where it lives (through a symbolic link, for dotfiles), keeping its
 * permissions (a user's file may hold tokens; new files are private to the user), by a rename, so
 * a crash leaves the old content or the new, never half of it.
 *
 * @since 0.1.0
 */
import type * as HostSandbox from "@ratchet/host/HostSandbox"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import { realpathSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Store from "./Store.js"

/**
 * Claude Code's user configuration directory: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
 *
 * @since 0.1.0
 * @category configuration
 */
export const claudeDirectory = (): string => process.env["CLAUDE_CONFIG_DIR"] ?? path.join(os.homedir(), ".claude")

/**
 * Codex's home: `CODEX_HOME`, else `~/.codex`.
 *
 * @since 0.1.0
 * @category configuration
 */
export const codexHome = (): string => process.env["CODEX_HOME"] ?? path.join(os.homedir(), ".codex")

/**
 * The files Ratchet reads and writes for each host, by scope.
 *
 * @since 0.1.0
 * @category configuration
 */
export const files = {
  "claude-code": {
    /** Hooks and sandbox: one settings file. */
    settings: { project: (root: string) => path.join(root, ".claude", "settings.json"), user: () => path.join(claudeDirectory(), "settings.json") },
    /** The personal project settings, above the shared ones. */
    local: (root: string) => path.join(root, ".claude", "settings.local.json")
  },
  codex: {
    hooks: { project: (root: string) => path.join(root, ".codex", "hooks.json"), user: () => path.join(codexHome(), "hooks.json") },
    config: { project: (root: string) => path.join(root, ".codex", "config.toml"), user: () => path.join(codexHome(), "config.toml") }
  }
} as const

/**
 * A file's text, or `undefined` when it does not exist; any other failure rejects.
 *
 * @since 0.1.0
 * @category io
 */
export const readText = (file: string): Promise<string | undefined> =>
  fs.readFile(file, "utf8").then((text): string | undefined => text, (error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? undefined : Promise.reject(error)))

/**
 * Where `file` really is: through symbolic links when it exists, as named otherwise.
 *
 * @since 0.1.0
 * @category io
 */
export const located = (file: string): Promise<string> => fs.realpath(file).catch(() => file)

/**
 * Writes `text` to `file` in place of what was there, atomically (see the module's note).
 *
 * @since 0.1.0
 * @category io
 */
export const writeText = async (file: string, text: string): Promise<void> => {
  const target = await located(file)
  const mode = await fs.stat(target).then((stat) => stat.mode & 0o777, () => 0o600)
  await fs.mkdir(path.dirname(target), { recursive: true })
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`)
  try {
    await fs.writeFile(temporary, text, { mode })
    await fs.chmod(temporary, mode)
    await fs.rename(temporary, target)
  } finally {
    await fs.rm(temporary, { force: true })
  }
}

/**
 * Removes `file` (where it really is); nothing when it does not exist.
 *
 * @since 0.1.0
 * @category io
 */
export const removeFile = async (file: string): Promise<void> => fs.rm(await located(file), { force: true })

/** `raw` with a leading `~` expanded and made absolute. */
const expand = (raw: string): string =>
  path.resolve(raw === "~" ? os.homedir() : raw.startsWith("~/") ? path.join(os.homedir(), raw.slice(2)) : raw)

/** `target`, and its real path when a symbolic link (of it or of its directory) leads elsewhere. */
const withRealPath = (target: string): ReadonlyArray<string> => {
  let real = target
  try {
    real = realpathSync(target)
  } catch {
    try {
      real = path.join(realpathSync(path.dirname(target)), path.basename(target))
    } catch {
      // Neither exists yet: the path as named is all there is.
    }
  }
  return real === target ? [target] : [target, real]
}

/**
 * The approval key's file: `RATCHET_APPROVER_KEY`, else `approver-key.json` in `$RATCHET_HOME`.
 *
 * @since 0.1.0
 * @category configuration
 */
export const approverKey = (): string => expand(process.env["RATCHET_APPROVER_KEY"] || path.join(Store.home(), "approver-key.json"))

/**
 * What a host's sandbox must keep from the agent, for the project at `projectRoot` (or for the
 * user's settings, without one).
 *
 * @since 0.1.0
 * @category configuration
 */
export const targets = (projectRoot: string | undefined): HostSandbox.Protected => ({
  store: withRealPath(expand(Store.home())),
  key: withRealPath(approverKey()),
  projectRoot,
  home: os.homedir()
})

/**
 * The temporary directories Codex's workspace-write lets commands write: `/tmp` and `$TMPDIR`,
 * each with its real path.
 *
 * @since 0.1.0
 * @category configuration
 */
export const codexTemporary = (): { readonly slashTmp: ReadonlyArray<string>; readonly tmpdir: ReadonlyArray<string> } => {
  const tmpdir = process.env["TMPDIR"]
  return { slashTmp: withRealPath("/tmp"), tmpdir: tmpdir === undefined || tmpdir === "" ? [] : withRealPath(expand(tmpdir)) }
}

/**
 * The session temporary directory Claude Code's sandbox lets commands write: `claude-<uid>` in
 * `CLAUDE_CODE_TMPDIR`, else in `/tmp` on macOS and the system's temporary directory elsewhere.
 *
 * @since 0.1.0
 * @category configuration
 */
export const claudeSessionTemp = (): string => {
  const base = process.env["CLAUDE_CODE_TMPDIR"] || (process.platform === "darwin" ? "/tmp" : os.tmpdir())
  return path.join(expand(base), `claude-${os.userInfo().uid}`)
}
