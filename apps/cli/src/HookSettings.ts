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
import * as Settings from "@ratchet/host-claude-code/Settings"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"

/**
 * The hosts whose settings Ratchet can install into.
 */
export const hosts = ["claude-code"] as const

/**
 * @since 0.1.0
 */
export type Host = (typeof hosts)[number]

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

/** The settings file of `scope`: the project's `.claude/settings.json`, or the user's. */
const fileOf = (scope: "project" | "user", cwd: string) =>
  scope === "user"
    ? Effect.succeed(path.join(process.env["CLAUDE_CONFIG_DIR"] ?? path.join(os.homedir(), ".claude"), "settings.json"))
    : Effect.map(Workspace.make.locate(cwd), (project) => path.join(project.root, ".claude", "settings.json"))

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
      await fs.mkdir(path.dirname(file), { recursive: true })
      const temporary = path.join(path.dirname(file), `.settings.json.${randomUUID()}.tmp`)
      try {
        await fs.writeFile(temporary, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o644 })
        await fs.rename(temporary, file)
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
  readonly command: string
  readonly cwd: string
}) =>
  Effect.gen(function*() {
    if (!(hosts as ReadonlyArray<string>).includes(options.host)) {
      return yield* invalid("host", `${JSON.stringify(options.host.slice(0, 40))} is not a host Ratchet has hooks for.`, `Use one of: ${hosts.join(", ")}.`)
    }
    if (options.command.trim() === "" || /[\r\n\0]/.test(options.command)) {
      return yield* invalid("--command", "must be one line of text.", "Pass the command Claude Code should run, e.g. --command \"ratchet hook claude-code\".")
    }
    const file = yield* fileOf(options.scope, options.cwd)
    const before = yield* readSettings(file)
    const next = options.action === "install" ? Settings.install(before, options.command) : Settings.uninstall(before)
    if (Either.isLeft(next)) return yield* invalid(`${file}: ${next.left.field}`, next.left.reason, next.left.fix)
    const changed = JSON.stringify(before ?? {}) !== JSON.stringify(next.right)
    if (changed && !(before === undefined && options.action === "uninstall")) yield* writeSettings(file, next.right)
    return { host: options.host as Host, scope: options.scope, file, changed, entries: Settings.countOurs(next.right) } satisfies Change
  })
