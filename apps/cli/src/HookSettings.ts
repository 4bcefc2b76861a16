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
 * Each entry runs the fail-closed launcher beside this CLI's bin (`bin/ratchet-hook`) by absolute
 * path, which runs this very node and bundle by absolute path (ADR 0026): a host whose PATH has no
 * `ratchet` still reaches Ratchet, and one that cannot (the CLI moved or removed since) is denied
 * with the fix rather than let through. The tool events carry the host's matchers (`Settings`).
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
import * as HookCommand from "@ratchet/host/HookCommand"
import type * as HookSettings from "@ratchet/host/HookSettings"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { constants } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
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
  /** What install's entries run: the launcher, and the program it runs (null after uninstall). */
  readonly runs: { readonly launcher: string; readonly program: string } | null
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
const claudeCode = (action: "install" | "uninstall", file: string, command: HookSettings.Command, targets: ReturnType<typeof HostFiles.targets>) =>
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
const codex = (action: "install" | "uninstall", file: string, configFile: string, command: HookSettings.Command, targets: ReturnType<typeof HostFiles.targets>) =>
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
 * Where this CLI is: the launcher beside its bin, the bundle the launcher runs and the node running
 * it now. This module sits in `src/` (tests) or in a chunk in `dist/` (the bundle): both are
 * siblings of `bin/` and `dist/`.
 *
 * @since 0.2.0
 * @category configuration
 */
export const installation = (): { readonly launcher: string; readonly bundle: string; readonly node: string } => {
  const here = path.dirname(fileURLToPath(import.meta.url))
  return { launcher: path.resolve(here, "..", "bin", HookCommand.launcherName), bundle: path.resolve(here, "..", "dist", "ratchet.mjs"), node: process.execPath }
}

/** A file install's entries name: present, and writable as one word of a hook command. */
const usable = (what: string, file: string, fix: string) =>
  Effect.gen(function*() {
    const unquotable = HookCommand.unquotable(file)
    if (unquotable !== null) {
      return yield* invalid(file, `${unquotable}: it is ${what} the hooks would run, and a hook command cannot name it the same way in every shell a host may use.`, `${fix}; nothing was written.`)
    }
    yield* Effect.tryPromise({
      try: () => fs.access(file, constants.R_OK),
      catch: () => invalid(file, `is missing: it is ${what} the hooks would run.`, `${fix}; nothing was written.`)
    })
  })

/** The command of each event's entry, for `host` at `scope`. */
const commands = (host: Host, scope: "project" | "user", command: string | undefined) =>
  Effect.gen(function*() {
    const where = installation()
    const reinstall = "Reinstall the Ratchet CLI (npm i -g @ratchet/cli), or build it in a checkout (npm run build -w @ratchet/cli)"
    yield* usable("the hook launcher", where.launcher, reinstall)
    if (command === undefined) {
      yield* usable("the Ratchet CLI bundle", where.bundle, reinstall)
      yield* usable("node", where.node, "Run ratchet with a node installed under a path without quotes or backslashes, or pass --command")
    }
    const program = command ?? `${HookCommand.word(where.node)} ${HookCommand.word(where.bundle)} hook ${host}`
    const fix = `Install the Ratchet CLI again if it was removed (npm i -g @ratchet/cli), then run ratchet hooks install ${host}${scope === "user" ? " --scope user" : ""} again in a terminal.`
    return {
      runs: { launcher: where.launcher, program },
      commandOf: (event: string) => HookCommand.command({ host, event, launcher: { _tag: "Path", path: where.launcher }, program, fix })
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
    const given = options.command
    if (given !== undefined && (given.trim() === "" || /[\r\n\0]/.test(given))) {
      return yield* invalid("--command", "must be one line of text.", `Pass the command the launcher should run, e.g. --command "/opt/bin/ratchet hook ${host}".`)
    }
    if (given !== undefined && !settingsOf[host].runsHook(given)) {
      return yield* invalid("--command", `${JSON.stringify(given.slice(0, 80))} does not run ratchet hook ${host}.`, `Pass a command that runs it, e.g. --command "/opt/bin/ratchet hook ${host}"; the launcher runs it and blocks tool calls when it fails.`)
    }
    const root = options.scope === "project" ? (yield* Workspace.make.locate(options.cwd)).root : undefined
    const targets = HostFiles.targets(root)
    const planned = options.action === "install" ? yield* commands(host, options.scope, given) : null
    const command: HookSettings.Command = planned === null ? "" : planned.commandOf
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
    return { host, scope: options.scope, file, ...result, runs: planned?.runs ?? null } satisfies Change
  })
