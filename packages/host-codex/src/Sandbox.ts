/**
 * Codex's own sandbox, set by `ratchet hooks install codex` in `config.toml` (`.codex/config.toml`
 * beside `.codex/hooks.json`, or `$CODEX_HOME/config.toml`), so that the agent's commands cannot
 * write Ratchet's runtime store or the approval key (ADR 0017):
 *
 * - `sandbox_mode = "workspace-write"` when no `sandbox_mode` is set or it is
 *   `"danger-full-access"`; `"read-only"` is narrower and is kept;
 * - in `[sandbox_workspace_write]`, `exclude_slash_tmp = true` when the store or the key is below
 *   `/tmp`, and `exclude_tmpdir_env_var = true` when it is below `$TMPDIR`: workspace-write lets
 *   commands write both unless told not to.
 *
 * Nothing else is touched: `writable_roots` is the user's (a root holding the store is reported,
 * not removed), `network_access` and `approval_policy` are theirs. Every line Ratchet writes ends
 * with the comment {@link marker} (and, when it replaced a value, `; was <value>` followed by the
 * replaced line's own comment), which is how uninstall finds exactly those lines and puts the old
 * lines back.
 *
 * What Codex's workspace-write cannot do is keep a directory inside the workspace read-only,
 * except its own `.git`, `.codex` and `.agents`: the project's `.ratchet/` stays writable to
 * commands there, and the hook's guard and the signed receipts are what protect it (ADR 0017).
 *
 * @since 0.1.0
 */
import * as HookSettings from "@ratchet/host/HookSettings"
import * as HostSandbox from "@ratchet/host/HostSandbox"
import * as Either from "effect/Either"
import * as path from "node:path"
import * as ConfigToml from "./ConfigToml.js"

/**
 * Codex's sandbox modes (`sandbox_mode`).
 *
 * @since 0.1.0
 * @category constants
 */
export const modes = ["read-only", "workspace-write", "danger-full-access"] as const

/**
 * @since 0.1.0
 * @category models
 */
export type Mode = (typeof modes)[number]

/**
 * The comment every line Ratchet writes ends with.
 *
 * @since 0.1.0
 * @category constants
 */
export const marker = "ratchet: set by ratchet hooks install codex"

/** Our comment, the value it replaced (`; was <value>`), and the replaced line's own comment after it. */
const markerPattern = /#\s*ratchet: set by ratchet hooks install codex(?:; was (\S+))?(.*)$/

const table = ["sandbox_workspace_write"] as const

const booleanKeys = ["network_access", "exclude_tmpdir_env_var", "exclude_slash_tmp"] as const

/** The sandbox part of one config file, checked to be Codex's documented shape. */
interface Declared {
  readonly mode: Mode | undefined
  readonly writableRoots: ReadonlyArray<string> | undefined
  readonly excludeSlashTmp: boolean | undefined
  readonly excludeTmpdir: boolean | undefined
}

const refuse = (field: string, reason: string) =>
  Either.left(new HookSettings.SettingsError({ field, reason, fix: "Fix that key by hand (see Codex's config reference), then run the command again; nothing was written." }))

const isTable = (value: unknown): value is ConfigToml.Table => typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date)

const declaredOf = (file: string, value: ConfigToml.Table): Either.Either<Declared, HookSettings.SettingsError> => {
  const mode = value["sandbox_mode"]
  if (mode !== undefined && !(modes as ReadonlyArray<unknown>).includes(mode)) {
    return refuse(`${file}: sandbox_mode`, `must be one of ${modes.map((m) => JSON.stringify(m)).join(", ")}.`)
  }
  const settings = value["sandbox_workspace_write"] ?? {}
  if (!isTable(settings)) return refuse(`${file}: sandbox_workspace_write`, "must be a table.")
  const roots = settings["writable_roots"]
  if (roots !== undefined && !(Array.isArray(roots) && roots.every((root) => typeof root === "string"))) {
    return refuse(`${file}: sandbox_workspace_write.writable_roots`, "must be an array of paths.")
  }
  for (const key of booleanKeys) {
    if (settings[key] !== undefined && typeof settings[key] !== "boolean") return refuse(`${file}: sandbox_workspace_write.${key}`, "must be true or false.")
  }
  return Either.right({
    mode: mode as Mode | undefined,
    writableRoots: roots as ReadonlyArray<string> | undefined,
    excludeSlashTmp: settings["exclude_slash_tmp"] as boolean | undefined,
    excludeTmpdir: settings["exclude_tmpdir_env_var"] as boolean | undefined
  })
}

/**
 * The temporary directories Codex's workspace-write lets commands write: `/tmp` (and its real
 * path), and `$TMPDIR` when it is set (and its real path).
 *
 * @since 0.1.0
 * @category models
 */
export interface Environment {
  readonly slashTmp: ReadonlyArray<string>
  readonly tmpdir: ReadonlyArray<string>
}

/** The protected paths (store and key) below any of `roots`, with the root. */
const exposed = (targets: HostSandbox.Protected, roots: ReadonlyArray<string>) =>
  [...targets.store, ...targets.key].flatMap((target) => roots.filter((root) => HostSandbox.isWithin(target, root)).map((root) => ({ target, root })))

const rootsOf = (file: string, roots: ReadonlyArray<string> | undefined) => (roots ?? []).map((root) => path.resolve(path.dirname(file), root))

/**
 * `text` (the config file's content; `undefined` when it does not exist) with Codex's sandbox set
 * for `targets`, and notes on what it could not set by merging (a `writable_roots` entry or the
 * project itself holding the store). Installing twice gives the same text.
 *
 * @since 0.1.0
 * @category constructors
 */
export const install = (
  file: string,
  text: string | undefined,
  targets: HostSandbox.Protected,
  environment: Environment
): Either.Either<{ readonly text: string; readonly notes: ReadonlyArray<string> }, HookSettings.SettingsError> =>
  Either.gen(function*() {
    const document = yield* ConfigToml.parse(file, text ?? "")
    const declared = yield* declaredOf(file, document.value)
    const changes: Array<ConfigToml.Change> = []
    const set = (within: ReadonlyArray<string>, key: string, value: string | boolean, before: unknown) =>
      changes.push({
        _tag: "Set",
        table: within,
        key,
        value,
        literal: JSON.stringify(value),
        comment: before === undefined ? marker : `${marker}; was ${JSON.stringify(before)}`,
        headerComment: marker
      })
    if (declared.mode === undefined || declared.mode === "danger-full-access") set([], "sandbox_mode", "workspace-write", declared.mode)
    const notes: Array<string> = []
    if (declared.mode !== "read-only") {
      if (declared.excludeSlashTmp !== true && exposed(targets, environment.slashTmp).length > 0) set(table, "exclude_slash_tmp", true, declared.excludeSlashTmp)
      if (declared.excludeTmpdir !== true && exposed(targets, environment.tmpdir).length > 0) set(table, "exclude_tmpdir_env_var", true, declared.excludeTmpdir)
      for (const { root, target } of exposed(targets, rootsOf(file, declared.writableRoots))) {
        notes.push(`${file}: [sandbox_workspace_write].writable_roots lists ${root}, which holds ${target}; remove it by hand, or the agent's commands can write it.`)
      }
      for (const { target } of exposed(targets, targets.projectRoot === undefined ? [] : [targets.projectRoot])) {
        notes.push(`${target} is inside the project, which Codex's workspace-write lets commands write; set RATCHET_HOME (and RATCHET_APPROVER_KEY) to a directory outside it.`)
      }
    }
    const edited = yield* ConfigToml.edit(document, changes)
    return { text: ConfigToml.text(edited), notes }
  })

/** A value Ratchet replaced, read back from its `; was …` comment: only the values install replaces. */
const wasValue = (key: string, raw: string): unknown => {
  if (key === "sandbox_mode") return raw === "\"danger-full-access\"" ? "danger-full-access" : undefined
  return raw === "false" ? false : undefined
}

/**
 * `text` without the lines Ratchet wrote: each added line removed, each replaced value put back,
 * and a `[sandbox_workspace_write]` table Ratchet opened removed when nothing else is left in it.
 * Only `sandbox_mode` and the two `exclude_*` keys are recognised; a marked line with anything
 * but a value Ratchet replaces after `; was` is refused.
 *
 * @since 0.1.0
 * @category constructors
 */
export const uninstall = (file: string, text: string | undefined): Either.Either<string | undefined, HookSettings.SettingsError> =>
  Either.gen(function*() {
    if (text === undefined) return undefined
    const document = yield* ConfigToml.parse(file, text)
    const changes: Array<ConfigToml.Change> = []
    let openedTable = false
    for (const line of document.lines) {
      const match = markerPattern.exec(line.text)
      if (match === null) continue
      if (line.kind === "header" && line.table.length === 1 && line.table[0] === table[0]) {
        openedTable = true
        continue
      }
      const key = line.key[0] ?? ""
      const ours = line.kind === "key" && !line.multiline && line.key.length === 1 &&
        ((line.table.length === 0 && key === "sandbox_mode") || (line.table.length === 1 && line.table[0] === table[0] && (key === "exclude_slash_tmp" || key === "exclude_tmpdir_env_var")))
      if (!ours) continue
      if (match[1] === undefined) {
        changes.push({ _tag: "Remove", table: line.table, key })
        continue
      }
      const before = wasValue(key, match[1])
      if (before === undefined) {
        return yield* refuse(`${file}: ${[...line.table, key].join(".")}`, `says it replaced ${match[1].slice(0, 40)}, which is not a value Ratchet replaces.`)
      }
      changes.push({ _tag: "Restore", table: line.table, key, value: before, literal: `${JSON.stringify(before)}${match[2] ?? ""}` })
    }
    if (openedTable) changes.push({ _tag: "DropTable", table })
    const edited = yield* ConfigToml.edit(document, changes)
    return ConfigToml.text(edited)
  })

/**
 * One config file Codex reads for a session in the project: `project` (`.codex/config.toml`, read
 * only when the project is trusted) over `user` (`$CODEX_HOME/config.toml`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Layer {
  readonly scope: "project" | "user"
  readonly file: string
  /** The file's content, or `undefined` when it does not exist. */
  readonly text: string | undefined
  /** Why the file could not be read. */
  readonly error?: string | undefined
}

const fix = "ratchet hooks install codex"

/**
 * What the config files Codex would read for a session in the project leave open, as warnings for
 * `ratchet status`; nothing when Ratchet's hooks for Codex are not installed (`hooksInstalled`).
 *
 * @since 0.1.0
 * @category getters
 */
export const check = (
  layers: ReadonlyArray<Layer>,
  hooksInstalled: boolean,
  targets: HostSandbox.Protected,
  environment: Environment
): ReadonlyArray<HostSandbox.Warning> => {
  if (!hooksInstalled) return []
  const warning = (file: string, missing: string, detail: string, remedy = fix): HostSandbox.Warning => ({ host: "codex", file, missing, detail, fix: remedy })
  const warnings: Array<HostSandbox.Warning> = []
  const read: Array<{ readonly layer: Layer; readonly declared: Declared }> = []
  for (const layer of [...layers].sort((a, b) => (a.scope === b.scope ? 0 : a.scope === "project" ? -1 : 1))) {
    if (layer.error !== undefined) {
      warnings.push(warning(layer.file, "a readable config.toml", `${layer.file} cannot be read: ${layer.error}`))
      continue
    }
    if (layer.text === undefined) continue
    const declared = Either.flatMap(ConfigToml.parse(layer.file, layer.text), (document) => declaredOf(layer.file, document.value))
    if (Either.isLeft(declared)) warnings.push(warning(layer.file, "a readable config.toml", `${declared.left.field} ${declared.left.reason}`, `${declared.left.fix.replace(/; nothing was written\.$/, "")}, then ${fix}`))
    else read.push({ layer, declared: declared.right })
  }
  const projectFile = layers.find((layer) => layer.scope === "project")?.file ?? layers[0]?.file ?? ""
  const first = <A>(pick: (declared: Declared) => A | undefined) => {
    for (const entry of read) {
      const value = pick(entry.declared)
      if (value !== undefined) return { value, file: entry.layer.file }
    }
    return undefined
  }
  const mode = first((declared) => declared.mode)
  if (mode === undefined) {
    warnings.push(warning(
      projectFile,
      "sandbox_mode = \"workspace-write\"",
      "no config.toml sets sandbox_mode, so Codex picks one from the project's trust; nothing in the settings keeps the agent's commands out of Ratchet's store and approval key."
    ))
    return warnings
  }
  if (mode.value === "danger-full-access") {
    warnings.push(warning(
      mode.file,
      "sandbox_mode = \"workspace-write\"",
      `${mode.file} sets sandbox_mode = "danger-full-access": the agent's commands run with no sandbox and can write Ratchet's store and approval key.`
    ))
    return warnings
  }
  if (mode.value === "read-only") return warnings
  const roots = first((declared) => declared.writableRoots === undefined ? undefined : { roots: declared.writableRoots })
  const slashTmp = first((declared) => declared.excludeSlashTmp)
  const tmpdir = first((declared) => declared.excludeTmpdir)
  const sources: ReadonlyArray<{ readonly roots: ReadonlyArray<string>; readonly file: string; readonly missing: string; readonly why: string; readonly remedy: string }> = [
    ...(targets.projectRoot === undefined ? [] : [{
      roots: [targets.projectRoot],
      file: projectFile,
      missing: "the store outside the project",
      why: "the project, which workspace-write lets commands write",
      remedy: "set RATCHET_HOME (and RATCHET_APPROVER_KEY) to a directory outside the project"
    }]),
    ...(roots === undefined ? [] : rootsOf(roots.file, roots.value.roots).map((root) => ({
      roots: [root],
      file: roots.file,
      missing: `${root} out of [sandbox_workspace_write].writable_roots`,
      why: `${root}, which [sandbox_workspace_write].writable_roots lets commands write`,
      remedy: `remove ${root} from [sandbox_workspace_write].writable_roots in ${roots.file}`
    }))),
    ...(slashTmp?.value === true ? [] : [{
      roots: environment.slashTmp,
      file: slashTmp?.file ?? projectFile,
      missing: "exclude_slash_tmp = true",
      why: "/tmp, which workspace-write lets commands write unless exclude_slash_tmp = true",
      remedy: fix
    }]),
    ...(tmpdir?.value === true ? [] : [{
      roots: environment.tmpdir,
      file: tmpdir?.file ?? projectFile,
      missing: "exclude_tmpdir_env_var = true",
      why: "$TMPDIR, which workspace-write lets commands write unless exclude_tmpdir_env_var = true",
      remedy: fix
    }])
  ]
  for (const source of sources) {
    for (const { target } of exposed(targets, source.roots)) {
      warnings.push(warning(source.file, `${source.missing} (for ${target})`, `${target} is inside ${source.why}.`, source.remedy))
    }
  }
  return warnings
}
