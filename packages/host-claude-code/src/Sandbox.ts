/**
 * Claude Code's own sandbox, set by `ratchet hooks install claude-code` in the settings file that
 * holds our hooks, so that an agent's commands cannot write Ratchet's runtime store, the approval
 * key or the project's `.ratchet/`, nor read the store or the key (ADR 0017):
 *
 * - `sandbox.enabled: true` — Bash commands and their children run in the OS sandbox (Seatbelt,
 *   bubblewrap), which by default writes only the working directory and the session's temporary
 *   directory;
 * - `sandbox.allowUnsandboxedCommands: false` — a command that fails in the sandbox is not retried
 *   outside it (`dangerouslyDisableSandbox`);
 * - `sandbox.filesystem.denyWrite` (the store, the key, `./.ratchet`) and `denyRead` (the store, the
 *   key), which take precedence over any `allowWrite`;
 * - `permissions.deny` `Edit(…)` and `Read(…)` rules for the same paths: Claude's own Read, Edit and
 *   Write tools do not run in the sandbox, and the permission rules are what binds them.
 *
 * The two syntaxes differ, as Claude Code's docs say: a sandbox path is absolute with one `/` and
 * project-relative with `./`; a permission rule is absolute with `//` and project-relative with
 * `/`. Paths below the home directory are written `~/…` in both, which also keeps a committed
 * settings file shareable.
 *
 * Merged, never rewritten: what install adds is recorded ({@link Installed}, kept by the caller beside
 * the settings file) so that uninstall removes exactly that and puts back the booleans it changed.
 * `.ratchet/` stays readable: the agent reads the task's projections there, and `git` reads it.
 *
 * @since 0.1.0
 */
import * as HookSettings from "@ratchet/host/HookSettings"
import * as HostSandbox from "@ratchet/host/HostSandbox"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as path from "node:path"
import * as Settings from "./Settings.js"

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const isStrings = (value: unknown): value is ReadonlyArray<string> => Array.isArray(value) && value.every((item) => typeof item === "string")

/**
 * What `ratchet hooks install claude-code` set in a settings file: the booleans it changed, with
 * the value each had before (`null`: not set), and the entries it added to each list. Kept beside
 * the settings file as `ratchet-sandbox.json`.
 *
 * @since 0.1.0
 * @category models
 */
export const Installed = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  about: Schema.String,
  set: Schema.Struct({
    enabled: Schema.optional(Schema.Struct({ before: Schema.NullOr(Schema.Boolean) })),
    allowUnsandboxedCommands: Schema.optional(Schema.Struct({ before: Schema.NullOr(Schema.Boolean) }))
  }),
  added: Schema.Struct({
    denyWrite: Schema.Array(Schema.String),
    denyRead: Schema.Array(Schema.String),
    deny: Schema.Array(Schema.String)
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Installed extends Schema.Schema.Type<typeof Installed> {}

/**
 * The file name of the {@link Installed}, beside the settings file.
 *
 * @since 0.1.0
 * @category constants
 */
export const recordFile = "ratchet-sandbox.json"

const about =
  "What `ratchet hooks install claude-code` set in settings.json beside this file, so that `ratchet hooks uninstall claude-code` removes exactly that. Without this file, uninstall leaves the sandbox settings as they are."

const emptyRecord: Installed = { schemaVersion: 1, about, set: {}, added: { denyWrite: [], denyRead: [], deny: [] } }

const invalid = (field: string, reason: string) =>
  Either.left(new HookSettings.SettingsError({ field, reason, fix: "Fix or move that part of the settings file by hand, then run the command again; nothing was written." }))

/**
 * A recorded {@link Installed} read back: anything else is refused, naming the file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeRecord = (file: string, value: unknown): Either.Either<Installed, HookSettings.SettingsError> =>
  Either.mapLeft(Schema.decodeUnknownEither(Installed)(value), () =>
    new HookSettings.SettingsError({
      field: file,
      reason: "is not the record Ratchet keeps of what it set (schemaVersion 1, set, added).",
      fix: "Restore it from version control, or delete it: uninstall then leaves the sandbox settings as they are."
    }))

/** The settings' sandbox and permission parts, checked to be Claude Code's documented shape. */
interface Parts {
  readonly settings: Json
  readonly sandbox: Json
  readonly filesystem: Json
  readonly permissions: Json
}

const booleanFields = ["enabled", "allowUnsandboxedCommands"] as const
const sandboxLists = ["denyWrite", "denyRead", "allowWrite", "allowRead"] as const
const permissionLists = ["allow", "deny", "ask", "additionalDirectories"] as const

const partsOf = (settings: unknown): Either.Either<Parts, HookSettings.SettingsError> => {
  if (settings !== undefined && !isObject(settings)) return invalid("(settings)", "must be a JSON object")
  const root = settings ?? {}
  const sandbox = root["sandbox"] ?? {}
  if (!isObject(sandbox)) return invalid("sandbox", "must be an object")
  for (const field of booleanFields) {
    if (sandbox[field] !== undefined && typeof sandbox[field] !== "boolean") return invalid(`sandbox.${field}`, "must be true or false")
  }
  const filesystem = sandbox["filesystem"] ?? {}
  if (!isObject(filesystem)) return invalid("sandbox.filesystem", "must be an object")
  for (const field of sandboxLists) {
    if (filesystem[field] !== undefined && !isStrings(filesystem[field])) return invalid(`sandbox.filesystem.${field}`, "must be an array of paths")
  }
  const permissions = root["permissions"] ?? {}
  if (!isObject(permissions)) return invalid("permissions", "must be an object")
  for (const field of permissionLists) {
    if (permissions[field] !== undefined && !isStrings(permissions[field])) return invalid(`permissions.${field}`, "must be an array of strings")
  }
  return Either.right({ settings: root, sandbox, filesystem, permissions })
}

/** A path in the sandbox's syntax: `~/…` below the home directory, else absolute (one `/`). */
const sandboxPath = (target: string, home: string): string => HostSandbox.homeRelative(target, home) ?? target

/** A path in the permission rules' syntax: `~/…` below the home directory, else `//` + absolute. */
const rulePath = (target: string, home: string): string => HostSandbox.homeRelative(target, home) ?? `/${target}`

/**
 * The entries install adds for `targets`, in each list's syntax. A path holding a parenthesis
 * cannot be a permission rule's specifier, so it gets the sandbox's entries only (and `ratchet
 * status` says the rule is missing).
 *
 * @since 0.1.0
 * @category constructors
 */
export const entriesFor = (targets: HostSandbox.Protected): { readonly denyWrite: ReadonlyArray<string>; readonly denyRead: ReadonlyArray<string>; readonly deny: ReadonlyArray<string> } => {
  const ruleable = (target: string) => !/[()]/.test(target)
  const project = targets.projectRoot !== undefined
  return {
    denyWrite: HostSandbox.distinct([...targets.store, ...targets.key].map((target) => sandboxPath(target, targets.home)).concat(project ? ["./.ratchet"] : [])),
    denyRead: HostSandbox.distinct([...targets.store, ...targets.key].map((target) => sandboxPath(target, targets.home))),
    deny: HostSandbox.distinct([
      ...targets.store.filter(ruleable).flatMap((store) => [`Edit(${rulePath(store, targets.home)}/**)`, `Read(${rulePath(store, targets.home)}/**)`]),
      ...targets.key.filter(ruleable).flatMap((key) => [`Edit(${rulePath(key, targets.home)})`, `Read(${rulePath(key, targets.home)})`]),
      ...(project ? ["Edit(/.ratchet/**)"] : [])
    ])
  }
}

const append = (current: unknown, wanted: ReadonlyArray<string>) => {
  const have = isStrings(current) ? current : []
  const present = new Set(have)
  const added = wanted.filter((entry) => !present.has(entry))
  return { list: [...have, ...added], added }
}

/**
 * `settings` with Claude Code's sandbox set for `targets`, and the record of what that took
 * (merged into `record` from an earlier install). Entries already there are left where they are
 * and not recorded as ours; installing twice gives the same settings and the same record.
 *
 * @since 0.1.0
 * @category constructors
 */
export const install = (
  settings: unknown,
  targets: HostSandbox.Protected,
  record: Installed | undefined
): Either.Either<{ readonly settings: Json; readonly record: Installed }, HookSettings.SettingsError> =>
  Either.map(partsOf(settings), (parts) => {
    const wanted = entriesFor(targets)
    const previous = record ?? emptyRecord
    const denyWrite = append(parts.filesystem["denyWrite"], wanted.denyWrite)
    const denyRead = append(parts.filesystem["denyRead"], wanted.denyRead)
    const deny = append(parts.permissions["deny"], wanted.deny)
    const set: { -readonly [K in keyof Installed["set"]]: Installed["set"][K] } = { ...previous.set }
    const sandbox: Record<string, unknown> = { ...parts.sandbox }
    const wantedBooleans = { enabled: true, allowUnsandboxedCommands: false } as const
    for (const field of booleanFields) {
      const current = parts.sandbox[field] as boolean | undefined
      if (current === wantedBooleans[field]) continue
      sandbox[field] = wantedBooleans[field]
      set[field] ??= { before: current ?? null }
    }
    sandbox["filesystem"] = { ...parts.filesystem, denyWrite: denyWrite.list, denyRead: denyRead.list }
    const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => HostSandbox.distinct([...a, ...b])
    return {
      settings: { ...parts.settings, sandbox, permissions: { ...parts.permissions, deny: deny.list } },
      record: {
        schemaVersion: 1,
        about,
        set,
        added: {
          denyWrite: union(previous.added.denyWrite, denyWrite.added),
          denyRead: union(previous.added.denyRead, denyRead.added),
          deny: union(previous.added.deny, deny.added)
        }
      }
    }
  })

/** `object` without `key` when removing our entries left it empty; as it was otherwise. */
const withList = (object: Json, key: string, ours: ReadonlyArray<string>): Json => {
  const current = object[key]
  if (!isStrings(current)) return object
  const removing = new Set(ours)
  const kept = current.filter((entry) => !removing.has(entry))
  if (kept.length === current.length) return object
  const { [key]: _, ...rest } = object
  return kept.length === 0 ? rest : { ...object, [key]: kept }
}

/** `parent` with `child` replaced by `next`, or without it when our removals emptied it. */
const withChild = (parent: Json, key: string, before: Json, next: Json): Json => {
  if (next === before) return parent
  const { [key]: _, ...rest } = parent
  return Object.keys(next).length === 0 && Object.keys(before).length > 0 ? rest : { ...parent, [key]: next }
}

/**
 * `settings` without what `record` says install set: its entries removed from each list, and each
 * boolean put back as it was — unless someone changed it since, then it is left alone. An object
 * our removals leave empty goes. Without a record, the settings are returned as they are.
 *
 * @since 0.1.0
 * @category constructors
 */
export const uninstall = (settings: unknown, record: Installed | undefined): Either.Either<Json, HookSettings.SettingsError> => {
  if (settings === undefined) return Either.right({})
  if (record === undefined) return isObject(settings) ? Either.right(settings) : invalid("(settings)", "must be a JSON object")
  return Either.map(partsOf(settings), (parts) => {
    let sandbox: Json = parts.sandbox
    const ourValue = { enabled: true, allowUnsandboxedCommands: false } as const
    for (const field of booleanFields) {
      const entry = record.set[field]
      if (entry === undefined || sandbox[field] !== ourValue[field]) continue
      const { [field]: _, ...rest } = sandbox
      sandbox = entry.before === null ? rest : { ...sandbox, [field]: entry.before }
    }
    let filesystem = withList(parts.filesystem, "denyWrite", record.added.denyWrite)
    filesystem = withList(filesystem, "denyRead", record.added.denyRead)
    sandbox = withChild(sandbox, "filesystem", parts.filesystem, filesystem)
    const permissions = withList(parts.permissions, "deny", record.added.deny)
    let next: Json = withChild(parts.settings, "sandbox", parts.sandbox, sandbox)
    next = withChild(next, "permissions", parts.permissions, permissions)
    return next
  })
}

// ---------------------------------------------------------------------------------------------
// Checking what a session will run with
// ---------------------------------------------------------------------------------------------

/**
 * One settings file Claude Code reads for a session in the project: `local`
 * (`.claude/settings.local.json`) over `project` (`.claude/settings.json`) over `user`
 * (`~/.claude/settings.json`, or `CLAUDE_CONFIG_DIR`). Managed settings are not read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Layer {
  readonly scope: "local" | "project" | "user"
  readonly file: string
  /** The parsed file, or `undefined` when it does not exist. */
  readonly settings: unknown
  /** Why the file could not be read or parsed. */
  readonly error?: string | undefined
}

const precedence: Readonly<Record<Layer["scope"], number>> = { local: 0, project: 1, user: 2 }

/** Any path below this, or everything (`true`). */
type Cover = string | true

/** A literal path from `raw` (a trailing `/**` or `/*` names a directory's contents), or nothing when it is a glob. */
const literal = (resolved: string): Cover | undefined => {
  const stripped = resolved.replace(/\/\*\*?$/, "")
  if (/[*?[\]{}]/.test(stripped)) return undefined
  return path.normalize(stripped === "" ? "/" : stripped)
}

/** A `sandbox.filesystem` entry of a layer, as an absolute path. */
const sandboxEntry = (raw: string, layer: Layer, targets: HostSandbox.Protected): Cover | undefined => {
  const base = layer.scope === "user" || targets.projectRoot === undefined ? path.dirname(layer.file) : targets.projectRoot
  if (raw === "~") return targets.home
  if (raw.startsWith("~/")) return literal(path.join(targets.home, raw.slice(2)))
  return literal(raw.startsWith("/") ? raw : path.resolve(base, raw))
}

/** The path a permission rule's specifier names, as an absolute path. */
const ruleSpecifier = (raw: string, targets: HostSandbox.Protected): Cover | undefined => {
  const root = targets.projectRoot ?? targets.home
  if (raw === "**" || raw === "/**" || raw === "./**") return root
  if (raw.startsWith("//")) return literal(raw.slice(1))
  if (raw === "~" || raw.startsWith("~/")) return literal(path.join(targets.home, raw.slice(2)))
  if (raw.startsWith("/")) return literal(path.join(root, raw))
  return literal(path.resolve(root, raw))
}

/** What the permission rules of `list` for `tool` cover: a bare `Edit` covers everything. */
const rulesFor = (rules: ReadonlyArray<string>, tool: "Edit" | "Read", targets: HostSandbox.Protected): ReadonlyArray<Cover> =>
  rules.flatMap((rule) => {
    if (rule === tool) return [true as const]
    const match = new RegExp(`^${tool}\\((.+)\\)$`).exec(rule)
    const cover = match === null ? undefined : ruleSpecifier(match[1] as string, targets)
    return cover === undefined ? [] : [cover]
  })

const covered = (target: string, covers: ReadonlyArray<Cover>): boolean => covers.some((cover) => cover === true || HostSandbox.isWithin(target, cover))

const fix = "ratchet hooks install claude-code"

/**
 * What the settings Claude Code would read for a session in the project leave open, as warnings
 * for `ratchet status`: nothing when none of the files has Ratchet's hooks (the project does not
 * use Claude Code with Ratchet). `sessionTemp` is the session's temporary directory, which the
 * sandbox lets commands write.
 *
 * @since 0.1.0
 * @category getters
 */
export const check = (layers: ReadonlyArray<Layer>, targets: HostSandbox.Protected, sessionTemp: string): ReadonlyArray<HostSandbox.Warning> => {
  if (!layers.some((layer) => Settings.countOurs(layer.settings) > 0)) return []
  const projectFile = layers.find((layer) => layer.scope === "project")?.file ?? layers[0]?.file ?? ""
  const warning = (file: string, missing: string, detail: string): HostSandbox.Warning => ({ host: "claude-code", file, missing, detail, fix })
  const warnings: Array<HostSandbox.Warning> = layers.flatMap((layer) =>
    layer.error === undefined ? [] : [warning(layer.file, "a readable settings file", `${layer.file} cannot be read: ${layer.error}`)])
  const readable = [...layers].filter((layer) => layer.error === undefined && isObject(layer.settings)).sort((a, b) => precedence[a.scope] - precedence[b.scope])
  const sandboxOf = (layer: Layer): Json => {
    const sandbox = (layer.settings as Json)["sandbox"]
    return isObject(sandbox) ? sandbox : {}
  }
  const first = (field: string) => {
    for (const layer of readable) {
      const value = sandboxOf(layer)[field]
      if (typeof value === "boolean") return { value, layer }
    }
    return undefined
  }
  const enabled = first("enabled")
  if (enabled?.value !== true) {
    warnings.push(warning(
      enabled?.layer.file ?? projectFile,
      "sandbox.enabled: true",
      enabled === undefined
        ? "no settings file turns on Claude Code's sandbox, so the agent's Bash commands can write anything this user can, Ratchet's store and approval key included; only the hook stands in the way."
        : `${enabled.layer.file} turns Claude Code's sandbox off, so the agent's Bash commands can write anything this user can, Ratchet's store and approval key included.`
    ))
    return warnings
  }
  const unsandboxed = first("allowUnsandboxedCommands")
  if (unsandboxed?.value !== false) {
    warnings.push(warning(
      unsandboxed?.layer.file ?? projectFile,
      "sandbox.allowUnsandboxedCommands: false",
      "a command that fails in the sandbox may be retried outside it (dangerouslyDisableSandbox), where one approval at Claude Code's prompt lets it write Ratchet's store."
    ))
  }
  const lists = (pick: (layer: Layer) => unknown, each: (raw: string, layer: Layer) => ReadonlyArray<Cover>) =>
    readable.flatMap((layer) => {
      const value = pick(layer)
      return isStrings(value) ? value.flatMap((raw) => each(raw, layer)) : []
    })
  const filesystemOf = (layer: Layer): Json => {
    const filesystem = sandboxOf(layer)["filesystem"]
    return isObject(filesystem) ? filesystem : {}
  }
  const permissionsOf = (layer: Layer): Json => {
    const permissions = (layer.settings as Json)["permissions"]
    return isObject(permissions) ? permissions : {}
  }
  const sandboxList = (field: string) => lists((layer) => filesystemOf(layer)[field], (raw, layer) => {
    const cover = sandboxEntry(raw, layer, targets)
    return cover === undefined ? [] : [cover]
  })
  const ruleList = (field: string, tool: "Edit" | "Read") => lists((layer) => permissionsOf(layer)[field], (raw) => rulesFor([raw], tool, targets))
  const editDenied = ruleList("deny", "Edit")
  const readDenied = ruleList("deny", "Read")
  const writeDenied = [...sandboxList("denyWrite"), ...editDenied]
  const readDeniedInSandbox = [...sandboxList("denyRead"), ...readDenied]
  const directories = lists((layer) => permissionsOf(layer)["additionalDirectories"], (raw) => {
    const cover = ruleSpecifier(raw, targets)
    return cover === undefined ? [] : [cover]
  })
  const writable: ReadonlyArray<Cover> = [
    ...(targets.projectRoot === undefined ? [] : [targets.projectRoot]),
    sessionTemp,
    ...sandboxList("allowWrite"),
    ...directories,
    ...ruleList("allow", "Edit")
  ]
  const state = HostSandbox.projectState(targets)
  const subjects: ReadonlyArray<{ readonly target: string; readonly what: string; readonly secret: boolean }> = [
    ...targets.store.map((target) => ({ target, what: "Ratchet's store", secret: true })),
    ...targets.key.map((target) => ({ target, what: "the approval key", secret: true })),
    ...(state === undefined ? [] : [{ target: state, what: "the project's .ratchet/", secret: false }])
  ]
  for (const subject of subjects) {
    const missing: Array<string> = []
    const why: Array<string> = []
    if (covered(subject.target, writable) && !covered(subject.target, writeDenied)) {
      missing.push("sandbox.filesystem.denyWrite")
      why.push("sandboxed commands may write it")
    }
    if (!covered(subject.target, editDenied)) {
      missing.push("an Edit(…) rule in permissions.deny")
      why.push("Claude's Edit and Write tools, which the sandbox does not cover, are not refused it")
    }
    if (subject.secret && !covered(subject.target, readDeniedInSandbox)) {
      missing.push("sandbox.filesystem.denyRead")
      why.push("sandboxed commands may read it")
    }
    if (subject.secret && !covered(subject.target, readDenied)) {
      missing.push("a Read(…) rule in permissions.deny")
      why.push("Claude's Read tool is not refused it")
    }
    if (missing.length > 0) warnings.push(warning(projectFile, `${missing.join(", ")} for ${subject.target}`, `${subject.what} (${subject.target}): ${why.join("; ")}.`))
  }
  return warnings
}
