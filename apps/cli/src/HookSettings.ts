/**
 * `ratchet hooks install|uninstall <host>`: Ratchet's hook entries written into, or removed from,
 * the host's settings, with the host's own sandbox set to keep the agent's commands out of
 * Ratchet's store, the approval key and the project's `.ratchet/` (ADR 0017) — idempotently, and
 * without touching anything else.
 *
 * - Claude Code: hooks and sandbox in one settings file (`.claude/settings.json`), written once;
 *   what the sandbox part added is recorded beside it (`ratchet-sandbox.json`) so that uninstall
 *   removes exactly that.
 * - Codex: hooks in `.codex/hooks.json`, the sandbox in `.codex/config.toml` beside it, edited line
 *   by line. Install writes the sandbox first and uninstall removes it last, so a crash between
 *   the two files never leaves the hooks without the sandbox.
 *
 * Every file is read and every change computed before anything is written: a file that is not
 * JSON (or TOML), or whose hooks or sandbox keys are not the host's documented shape, is refused
 * with the file and the field named, and nothing is written. Each file is replaced by a rename
 * (HostFiles).
 *
 * Loaded with a dynamic `import()` by the two commands, so the TOML reader stays out of every
 * other command's start-up.
 *
 * @since 0.1.0
 */
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as Workspace from "@ratchet/controller/Workspace"
import * as ClaudeSandbox from "@ratchet/host-claude-code/Sandbox"
import * as ClaudeCodeSettings from "@ratchet/host-claude-code/Settings"
import * as CodexSandbox from "@ratchet/host-codex/Sandbox"
import * as CodexSettings from "@ratchet/host-codex/Settings"
import type * as HookSettings from "@ratchet/host/HookSettings"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as path from "node:path"
import * as HostFiles from "./HostFiles.js"

/**
 * The hosts whose settings Ratchet can install into.
 *
 * @since 0.1.0
 */
export const hosts = ["claude-code", "codex"] as const

/**
 * @since 0.1.0
 */
export type Host = (typeof hosts)[number]

const settingsOf: Readonly<Record<Host, HookSettings.Bound>> = { "claude-code": ClaudeCodeSettings, codex: CodexSettings }

/**
 * What an install or uninstall did.
 *
 * @since 0.1.0
 * @category models
 */
export interface Change {
  readonly host: Host
  readonly scope: "project" | "user"
  /** The hooks' file. */
  readonly file: string
  /** Whether any file changed. */
  readonly changed: boolean
  /** Whether our hook entries changed. */
  readonly hooksChanged: boolean
  /** Our hook entries in the file afterwards. */
  readonly entries: number
  readonly sandbox: {
    /** The file holding the host's sandbox settings. */
    readonly file: string
    readonly changed: boolean
    /** What merging could not set, for a person to do by hand. */
    readonly notes: ReadonlyArray<string>
  }
}

const invalid = (field: string, reason: string, fix: string) => new ControllerError.InvalidRequest({ field, reason, fix })

/** A refusal from a host package, naming the file once (its field may name it already). */
const refused = (file: string) => (error: HookSettings.SettingsError) =>
  invalid(error.field.startsWith(file) ? error.field : `${file}: ${error.field}`, error.reason, error.fix)

const attempt = <A>(file: string, verb: "read" | "written", run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (error) =>
      invalid(
        file,
        `cannot be ${verb} (${error instanceof Error ? error.message : String(error)}).`,
        verb === "read" ? "Check the file's permissions; nothing was written." : "Check that this user may write the directory; files not yet written are unchanged."
      )
  })

const readJson = (file: string) =>
  Effect.flatMap(attempt(file, "read", () => HostFiles.readText(file)), (text) =>
    text === undefined || text.trim() === ""
      ? Effect.succeed<unknown>(undefined)
      : Effect.try({
        try: (): unknown => JSON.parse(text),
        catch: (error) => invalid(file, `is not valid JSON (${error instanceof Error ? error.message.slice(0, 120) : "unreadable"}).`, "Fix the file by hand, then run the command again; nothing was written.")
      }))

const fromEither = <A>(file: string, result: Either.Either<A, HookSettings.SettingsError>) => Effect.mapError(Either.match(result, { onLeft: Effect.fail, onRight: Effect.succeed }), refused(file))

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {})

const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

/** Claude Code: hooks and sandbox in one file, the sandbox's record beside it. */
const claudeCode = (action: "install" | "uninstall", file: string, command: string, targets: ReturnType<typeof HostFiles.targets>) =>
  Effect.gen(function*() {
    const before = yield* readJson(file)
    const recordFile = path.join(path.dirname(yield* attempt(file, "read", () => HostFiles.located(file))), ClaudeSandbox.recordFile)
    const recordJson = yield* readJson(recordFile)
    const record = recordJson === undefined ? undefined : yield* fromEither(recordFile, ClaudeSandbox.decodeRecord(recordFile, recordJson))
    const hooks = yield* fromEither(file, action === "install" ? ClaudeCodeSettings.install(before, command) : ClaudeCodeSettings.uninstall(before))
    const notes: Array<string> = []
    let next: unknown
    if (action === "install") {
      const installed = yield* fromEither(file, ClaudeSandbox.install(hooks, targets, record))
      next = installed.settings
      // The record first: a crash before the settings are written leaves a record of entries not
      // there, which uninstall passes over; never settings whose entries no record names.
      if (!same(record, installed.record)) yield* attempt(recordFile, "written", () => HostFiles.writeText(recordFile, jsonText(installed.record)))
    } else {
      next = yield* fromEither(file, ClaudeSandbox.uninstall(hooks, record))
      if (record === undefined && before !== undefined) notes.push(`${recordFile} is missing, so the sandbox settings Ratchet added (if any) were left in ${file}; remove them by hand if you want them gone.`)
    }
    const changed = !same(before, next)
    if (changed && !(before === undefined && action === "uninstall")) yield* attempt(file, "written", () => HostFiles.writeText(file, jsonText(next)))
    if (action === "uninstall" && record !== undefined) yield* attempt(recordFile, "written", () => HostFiles.removeFile(recordFile))
    return {
      changed: changed || (action === "uninstall" && record !== undefined),
      hooksChanged: !same(before, hooks) && !(before === undefined && action === "uninstall"),
      entries: ClaudeCodeSettings.countOurs(next),
      sandbox: { file, changed: !same(hooks, next), notes }
    }
  })

/** Codex: hooks in hooks.json, the sandbox in config.toml beside it. */
const codex = (action: "install" | "uninstall", file: string, configFile: string, command: string, targets: ReturnType<typeof HostFiles.targets>) =>
  Effect.gen(function*() {
    const before = yield* readJson(file)
    const configText = yield* attempt(configFile, "read", () => HostFiles.readText(configFile))
    const hooks = yield* fromEither(file, action === "install" ? CodexSettings.install(before, command) : CodexSettings.uninstall(before))
    const config = action === "install"
      ? yield* fromEither(configFile, CodexSandbox.install(configFile, configText, targets, HostFiles.codexTemporary()))
      : { text: yield* fromEither(configFile, CodexSandbox.uninstall(configFile, configText)), notes: [] }
    const hooksChanged = !same(before, hooks) && !(before === undefined && action === "uninstall")
    const configChanged = config.text !== undefined && config.text !== (configText ?? "")
    const writeHooks = hooksChanged ? attempt(file, "written", () => HostFiles.writeText(file, jsonText(hooks))) : Effect.void
    const writeConfig = configChanged ? attempt(configFile, "written", () => HostFiles.writeText(configFile, config.text ?? "")) : Effect.void
    yield* action === "install" ? Effect.zipRight(writeConfig, writeHooks) : Effect.zipRight(writeHooks, writeConfig)
    return {
      changed: hooksChanged || configChanged,
      hooksChanged,
      entries: CodexSettings.countOurs(hooks),
      sandbox: { file: configFile, changed: configChanged, notes: config.notes }
    }
  })

/**
 * Installs (`install`) or removes (`uninstall`) Ratchet's hooks and sandbox settings for `host`.
 *
 * @since 0.1.0
 * @category commands
 */
export const apply = (options: {
  readonly action: "install" | "uninstall"
  readonly host: string
  readonly scope: "project" | "user"
  readonly command: string | undefined
  readonly cwd: string
}) =>
  Effect.gen(function*() {
    if (!(hosts as ReadonlyArray<string>).includes(options.host)) {
      return yield* invalid("host", `${JSON.stringify(options.host.slice(0, 40))} is not a host Ratchet has hooks for.`, `Use one of: ${hosts.join(", ")}.`)
    }
    const host = options.host as Host
    const command = options.command ?? `ratchet hook ${host}`
    if (command.trim() === "" || /[\r\n\0]/.test(command)) {
      return yield* invalid("--command", "must be one line of text.", `Pass the command the host should run, e.g. --command "ratchet hook ${host}".`)
    }
    if (!settingsOf[host].isOurs({ type: "command", command })) {
      return yield* invalid("--command", `${JSON.stringify(command.slice(0, 80))} does not run ratchet hook ${host}.`, `Pass a command that runs it, e.g. --command "/opt/bin/ratchet hook ${host}"; otherwise uninstall could not recognise it.`)
    }
    const root = options.scope === "project" ? (yield* Workspace.make.locate(options.cwd)).root : undefined
    const targets = HostFiles.targets(root)
    const result = host === "claude-code"
      ? yield* claudeCode(options.action, root === undefined ? HostFiles.files["claude-code"].settings.user() : HostFiles.files["claude-code"].settings.project(root), command, targets)
      : yield* codex(
        options.action,
        root === undefined ? HostFiles.files.codex.hooks.user() : HostFiles.files.codex.hooks.project(root),
        root === undefined ? HostFiles.files.codex.config.user() : HostFiles.files.codex.config.project(root),
        command,
        targets
      )
    const file = root === undefined
      ? (host === "claude-code" ? HostFiles.files["claude-code"].settings.user() : HostFiles.files.codex.hooks.user())
      : (host === "claude-code" ? HostFiles.files["claude-code"].settings.project(root) : HostFiles.files.codex.hooks.project(root))
    return { host, scope: options.scope, file, ...result } satisfies Change
  })
