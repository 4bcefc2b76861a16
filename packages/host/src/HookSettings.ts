/**
 * Ratchet's entries in a host's hook settings file, for the hosts that share Claude Code's shape
 * (Claude Code's `.claude/settings.json`, Codex's `.codex/hooks.json`): merged in idempotently,
 * keeping every other hook and setting, and removed without touching anything that is not ours.
 *
 * The shape: `hooks` → event name → an array of matcher groups
 * `{ matcher?, hooks: [{ type: "command", command, timeout? }] }`. Ours are the command hooks
 * whose command runs the fail-closed launcher for the host (`HookCommand`), or, as Ratchet wrote
 * them before the launcher, `ratchet hook <host>` itself: install replaces both and uninstall
 * removes both. A group left empty by removing ours goes, and so does an event left with no group,
 * and `hooks` left with no event. Each of our groups carries the host's matcher for its event, so
 * that the host starts no process for a call whose answer and record cannot change (ADR 0026).
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as HookCommand from "./HookCommand.js"

/**
 * Seconds the host waits for our hook; a hook that times out fails open in Claude Code and Codex.
 *
 * @since 0.1.0
 * @category constants
 */
export const timeoutSeconds = 10

/**
 * A settings file that cannot take our entries: which field, why, and the fix.
 *
 * @since 0.1.0
 * @category errors
 */
export class SettingsError extends Schema.TaggedError<SettingsError>()("@ratchet/host/SettingsError", {
  field: Schema.String,
  reason: Schema.String,
  fix: Schema.String
}) {
  override get message(): string {
    return `${this.field}: ${this.reason} ${this.fix}`
  }
}

type Json = { readonly [key: string]: unknown }

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * What one host's settings hold of ours: the events we listen to, and our command's recogniser.
 *
 * @since 0.1.0
 * @category models
 */
export interface HostSettings {
  readonly host: string
  readonly events: ReadonlyArray<string>
  /** Seconds for events the host caps below {@link timeoutSeconds} (Codex: SessionEnd at 3). */
  readonly timeouts?: Readonly<Record<string, number>> | undefined
  /** The matcher of an event's group (a regular expression on the tool name), where it has one. */
  readonly matchers?: Readonly<Record<string, string>> | undefined
}

/**
 * The command of our entry for each event: one text for all, or one per event.
 *
 * @since 0.2.0
 * @category models
 */
export type Command = string | ((event: string) => string)

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * A matcher for exactly the tools `names` (anchored, so that `Write` is not `TodoWrite`): the same
 * regular expression to Claude Code (JavaScript) and Codex (Rust).
 *
 * @since 0.2.0
 * @category constructors
 */
export const toolMatcher = (names: ReadonlyArray<string>): string => `^(?:${names.map(escape).join("|")})$`

/**
 * Whether `text` runs `ratchet hook <host>`: the program is ratchet (any path, quoted or not, or
 * through npx), not a word in another program's arguments.
 *
 * @since 0.2.0
 * @category predicates
 */
export const runsHook = (host: string, text: string): boolean =>
  new RegExp(`^\\s*(?:npx\\s+(?:-y\\s+)?)?(?:"[^"]*/|'[^']*/|[^\\s"']*/)?["']?ratchet(?:\\.[cm]?js)?["']?\\s+hook\\s+${escape(host)}(?:\\s|$)`).test(text)

/**
 * Whether a hook entry is ours: a command hook running the launcher for `host`, or (as written
 * before the launcher) `ratchet hook <host>` itself.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isOurs = (host: string, hook: unknown): boolean =>
  isObject(hook) && hook["type"] === "command" && typeof hook["command"] === "string" &&
  (HookCommand.runsLauncher(host, hook["command"]) || runsHook(host, hook["command"]))

const invalid = (field: string, reason: string) =>
  Either.left(new SettingsError({ field, reason, fix: "Fix or move that part of the settings file by hand, then run the command again; nothing was written." }))

/** The settings' `hooks`, checked to be the reference's shape wherever we will touch it. */
const hooksOf = (events: ReadonlyArray<string>, settings: Json): Either.Either<Json, SettingsError> => {
  const hooks = settings["hooks"]
  if (hooks === undefined) return Either.right({})
  if (!isObject(hooks)) return invalid("hooks", "must be an object of event names")
  for (const event of events) {
    const groups = hooks[event]
    if (groups === undefined) continue
    if (!Array.isArray(groups)) return invalid(`hooks.${event}`, "must be an array of matcher groups")
    for (const [index, group] of groups.entries()) {
      if (!isObject(group) || !Array.isArray(group["hooks"])) return invalid(`hooks.${event}[${index}]`, "must be an object with a hooks array")
    }
  }
  return Either.right(hooks)
}

/**
 * `settings` with Ratchet's hooks for every event of `of`, running `command` (for that event),
 * each in a group of its own with the event's matcher; entries of ours already there are replaced
 * (so a changed command or matcher updates them, and an event no longer ours loses them),
 * everything else kept in place. Installing twice gives the same settings.
 *
 * @since 0.1.0
 * @category constructors
 */
export const install = (of: HostSettings, settings: unknown, command: Command): Either.Either<Json, SettingsError> => {
  if (settings !== undefined && !isObject(settings)) return invalid("(settings)", "must be a JSON object")
  const current = settings ?? {}
  return Either.map(hooksOf(of.events, current), (hooks) => {
    const cleaned = removeOurs(of.host, hooks)
    const next: Record<string, unknown> = { ...cleaned }
    for (const event of of.events) {
      const groups = Array.isArray(cleaned[event]) ? (cleaned[event] as ReadonlyArray<unknown>) : []
      const matcher = of.matchers?.[event]
      const hook = { type: "command", command: typeof command === "string" ? command : command(event), timeout: of.timeouts?.[event] ?? timeoutSeconds }
      next[event] = [...groups, matcher === undefined ? { hooks: [hook] } : { matcher, hooks: [hook] }]
    }
    return { ...current, hooks: next }
  })
}

const removeOurs = (host: string, hooks: Json): Json => {
  const next: Record<string, unknown> = {}
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      next[event] = groups
      continue
    }
    const kept = groups.flatMap((group: unknown) => {
      if (!isObject(group) || !Array.isArray(group["hooks"])) return [group]
      const entries = (group["hooks"] as ReadonlyArray<unknown>).filter((hook) => !isOurs(host, hook))
      if (entries.length === (group["hooks"] as ReadonlyArray<unknown>).length) return [group]
      return entries.length === 0 ? [] : [{ ...group, hooks: entries }]
    })
    if (kept.length > 0) next[event] = kept
  }
  return next
}

/**
 * `settings` without Ratchet's hooks; everything else kept. Removing from settings that have
 * none of ours changes nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const uninstall = (of: HostSettings, settings: unknown): Either.Either<Json, SettingsError> => {
  if (settings === undefined) return Either.right({})
  if (!isObject(settings)) return invalid("(settings)", "must be a JSON object")
  const hooks = settings["hooks"]
  if (hooks === undefined) return Either.right(settings)
  if (!isObject(hooks)) return invalid("hooks", "must be an object of event names")
  const kept = removeOurs(of.host, hooks)
  const { hooks: _, ...rest } = settings
  return Either.right(Object.keys(kept).length === 0 ? rest : { ...rest, hooks: kept })
}

/**
 * How many of our hook entries `settings` holds.
 *
 * @since 0.1.0
 * @category getters
 */
export const countOurs = (of: HostSettings, settings: unknown): number => {
  if (!isObject(settings) || !isObject(settings["hooks"])) return 0
  return Object.values(settings["hooks"]).reduce<number>(
    (total, groups) =>
      total + (Array.isArray(groups) ? groups.reduce<number>((sum, group: unknown) => sum + (isObject(group) && Array.isArray(group["hooks"]) ? group["hooks"].filter((hook: unknown) => isOurs(of.host, hook)).length : 0), 0) : 0),
    0
  )
}

/**
 * The four operations bound to one host.
 *
 * @since 0.1.0
 * @category models
 */
export interface Bound {
  readonly events: ReadonlyArray<string>
  readonly matchers: Readonly<Record<string, string>>
  readonly isOurs: (hook: unknown) => boolean
  /** Whether `text` runs `ratchet hook <host>` (what a `--command` must run). */
  readonly runsHook: (text: string) => boolean
  readonly install: (settings: unknown, command: Command) => Either.Either<Json, SettingsError>
  readonly uninstall: (settings: unknown) => Either.Either<Json, SettingsError>
  readonly countOurs: (settings: unknown) => number
}

/**
 * The operations for `of`'s host and events.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (of: HostSettings): Bound => ({
  events: of.events,
  matchers: of.matchers ?? {},
  isOurs: (hook) => isOurs(of.host, hook),
  runsHook: (text) => runsHook(of.host, text),
  install: (settings, command) => install(of, settings, command),
  uninstall: (settings) => uninstall(of, settings),
  countOurs: (settings) => countOurs(of, settings)
})
