/**
 * `ratchet hooks install|uninstall <host>`: Ratchet's hook entries written into, or removed from,
 * the host's settings file, idempotently and without touching anything else in it.
 *
 * A settings file that is not JSON, or whose hooks are not the host's documented shape, is
 * refused with the file and the field named, and left as it was. The new file replaces the old
 * one by a rename, so a crash leaves either the old settings or the new, never half of them.
 */
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Workspace from "@ratchet/controller/Workspace"
import * as ClaudeCodeSettings from "@ratchet/host-claude-code/Settings"
import * as CodexSettings from "@ratchet/host-codex/Settings"
import type * as HookSettings from "@ratchet/host/HookSettings"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

/** A host's hook settings: where the file is for each scope, and our entries' operations. */
interface HostFile {
  readonly settings: HookSettings.Bound
  /** The project's file, from the project root. */
  readonly project: (root: string) => string
  /** The user's file. */
  readonly user: () => string
}

/**
 * The hosts whose settings Ratchet can install into.
 */
const files: Readonly<Record<"claude-code" | "codex", HostFile>> = {
  "claude-code": {
    settings: ClaudeCodeSettings,
    project: (root) => path.join(root, ".claude", "settings.json"),
    user: () => path.join(process.env["CLAUDE_CONFIG_DIR"] ?? path.join(os.homedir(), ".claude"), "settings.json")
  },
  codex: {
    settings: CodexSettings,
    project: (root) => path.join(root, ".codex", "hooks.json"),
    user: () => path.join(process.env["CODEX_HOME"] ?? path.join(os.homedir(), ".codex"), "hooks.json")
  }
}

/**
 * The hosts, as users name them.
 */
export const hosts = Object.keys(files) as ReadonlyArray<keyof typeof files>

/**
 * @since 0.1.0
 */
export type Host = keyof typeof files

/**
 * What an install or uninstall did.
 */
export interface Change {
  readonly host: Host
  readonly scope: "project" | "user"
  readonly file: string
  readonly changed: boolean
  /** Our entries in the file afterwards. */
  readonly entries: number
}

const invalid = (field: string, reason: string, fix: string) => new ControllerError.InvalidRequest({ field, reason, fix })

/** The settings file of `scope` for `host`: the project's (beside `.ratchet/`), or the user's. */
const fileOf = (host: HostFile, scope: "project" | "user", cwd: string) =>
  scope === "user" ? Effect.succeed(host.user()) : Effect.map(Workspace.make.locate(cwd), (project) => host.project(project.root))

const readSettings = (file: string) =>
  Effect.gen(function*() {
    const text = yield* Effect.tryPromise({
      try: () => fs.readFile(file, "utf8").then((content): string | null => content, (error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? null : Promise.reject(error))),
      catch: (error) => invalid(file, `cannot be read (${error instanceof Error ? error.message : String(error)}).`, "Check the file's permissions; nothing was written.")
    })
    if (text === null || text.trim() === "") return undefined
    return yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) => invalid(file, `is not valid JSON (${error instanceof Error ? error.message.slice(0, 120) : "unreadable"}).`, "Fix the file by hand, then run the command again; nothing was written.")
    })
  })

const writeSettings = (file: string, settings: unknown) =>
  Effect.tryPromise({
    try: async () => {
      // A settings file kept elsewhere through a symbolic link (dotfiles) is written where it lives,
      // and keeps its permissions (a user file may hold tokens): new files are private to the user.
      const target = await fs.realpath(file).catch(() => file)
      const mode = await fs.stat(target).then((stat) => stat.mode & 0o777, () => 0o600)
      await fs.mkdir(path.dirname(target), { recursive: true })
      const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`)
      try {
        await fs.writeFile(temporary, `${JSON.stringify(settings, null, 2)}\n`, { mode })
        await fs.chmod(temporary, mode)
        await fs.rename(temporary, target)
      } finally {
        await fs.rm(temporary, { force: true })
      }
    },
    catch: (error) => invalid(file, `cannot be written (${error instanceof Error ? error.message : String(error)}).`, "Check that this user may write the directory; the old settings are unchanged.")
  })

/**
 * Installs (`install`) or removes (`uninstall`) Ratchet's entries for `host`.
 */
export const apply = (options: {
  readonly action: "install" | "uninstall"
  readonly host: string
  readonly scope: "project" | "user"
  readonly command: string | undefined
  readonly cwd: string
}) =>
  Effect.gen(function*() {
    const host = (hosts as ReadonlyArray<string>).includes(options.host) ? files[options.host as Host] : undefined
    if (host === undefined) {
      return yield* invalid("host", `${JSON.stringify(options.host.slice(0, 40))} is not a host Ratchet has hooks for.`, `Use one of: ${hosts.join(", ")}.`)
    }
    const command = options.command ?? `ratchet hook ${options.host}`
    if (command.trim() === "" || /[\r\n\0]/.test(command)) {
      return yield* invalid("--command", "must be one line of text.", `Pass the command the host should run, e.g. --command "ratchet hook ${options.host}".`)
    }
    if (!host.settings.isOurs({ type: "command", command })) {
      return yield* invalid("--command", `${JSON.stringify(command.slice(0, 80))} does not run ratchet hook ${options.host}.`, `Pass a command that runs it, e.g. --command "/opt/bin/ratchet hook ${options.host}"; otherwise uninstall could not recognise it.`)
    }
    const file = yield* fileOf(host, options.scope, options.cwd)
    const before = yield* readSettings(file)
    const next = options.action === "install" ? host.settings.install(before, command) : host.settings.uninstall(before)
    if (Either.isLeft(next)) return yield* invalid(`${file}: ${next.left.field}`, next.left.reason, next.left.fix)
    const changed = JSON.stringify(before ?? {}) !== JSON.stringify(next.right)
    if (changed && !(before === undefined && options.action === "uninstall")) yield* writeSettings(file, next.right)
    return { host: options.host as Host, scope: options.scope, file, changed, entries: host.settings.countOurs(next.right) } satisfies Change
  })
