/**
 * Ratchet's entries in Claude Code's settings (`.claude/settings.json` in a project,
 * `~/.claude/settings.json` for the user): merged in idempotently, keeping every other hook and
 * setting, and removed without touching anything that is not ours.
 *
 * The shape is the hooks reference's: `hooks` → event name → an array of matcher groups
 * `{ matcher?, hooks: [{ type: "command", command, timeout? }] }`. Ours are the command hooks
 * whose command runs `ratchet hook claude-code`; a group left empty by removing ours goes, and so
 * does an event left with no group, and `hooks` left with no event.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * The events Ratchet listens to, in the order they are written.
 *
 * @since 0.1.0
 * @category constants
 */
export const events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "SessionEnd"] as const

/**
 * Seconds Claude Code waits for our hook; a hook that times out fails open there.
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
export class SettingsError extends Schema.TaggedError<SettingsError>()("@ratchet/host-claude-code/SettingsError", {
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
 * Whether a hook entry is ours: a command hook running `ratchet hook claude-code`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isOurs = (hook: unknown): boolean =>
  isObject(hook) && hook["type"] === "command" && typeof hook["command"] === "string" && /(^|[\s/"'])ratchet(\.[cm]?js)?["']?\s+hook\s+claude-code(\s|$)/.test(hook["command"])

const invalid = (field: string, reason: string) =>
  Either.left(new SettingsError({ field, reason, fix: "Fix or move that part of the settings file by hand, then run the command again; nothing was written." }))

/** The settings' `hooks`, checked to be the reference's shape wherever we will touch it. */
const hooksOf = (settings: Json): Either.Either<Json, SettingsError> => {
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
 * `settings` with Ratchet's hooks for every event in {@link events}, running `command`; entries of
 * ours already there are replaced (so a changed command updates them), everything else kept in
 * place. Installing twice gives the same settings.
 *
 * @since 0.1.0
 * @category constructors
 */
export const install = (settings: unknown, command: string): Either.Either<Json, SettingsError> => {
  if (settings !== undefined && !isObject(settings)) return invalid("(settings)", "must be a JSON object")
  const current = settings ?? {}
  return Either.map(hooksOf(current), (hooks) => {
    const cleaned = removeOurs(hooks)
    const next: Record<string, unknown> = { ...cleaned }
    for (const event of events) {
      const groups = Array.isArray(cleaned[event]) ? (cleaned[event] as ReadonlyArray<unknown>) : []
      next[event] = [...groups, { hooks: [{ type: "command", command, timeout: timeoutSeconds }] }]
    }
    return { ...current, hooks: next }
  })
}

const removeOurs = (hooks: Json): Json => {
  const next: Record<string, unknown> = {}
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      next[event] = groups
      continue
    }
    const kept = groups.flatMap((group: unknown) => {
      if (!isObject(group) || !Array.isArray(group["hooks"])) return [group]
      const entries = (group["hooks"] as ReadonlyArray<unknown>).filter((hook) => !isOurs(hook))
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
export const uninstall = (settings: unknown): Either.Either<Json, SettingsError> => {
  if (settings === undefined) return Either.right({})
  if (!isObject(settings)) return invalid("(settings)", "must be a JSON object")
  const hooks = settings["hooks"]
  if (hooks === undefined) return Either.right(settings)
  if (!isObject(hooks)) return invalid("hooks", "must be an object of event names")
  const kept = removeOurs(hooks)
  const { hooks: _, ...rest } = settings
  return Either.right(Object.keys(kept).length === 0 ? rest : { ...rest, hooks: kept })
}

/**
 * How many of our hook entries `settings` holds.
 *
 * @since 0.1.0
 * @category getters
 */
export const countOurs = (settings: unknown): number => {
  if (!isObject(settings) || !isObject(settings["hooks"])) return 0
  return Object.values(settings["hooks"]).reduce<number>(
    (total, groups) =>
      total + (Array.isArray(groups) ? groups.reduce<number>((sum, group: unknown) => sum + (isObject(group) && Array.isArray(group["hooks"]) ? group["hooks"].filter(isOurs).length : 0), 0) : 0),
    0
  )
}
