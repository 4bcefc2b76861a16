/**
 * Command-line parsing: argv → the command it names and its decoded arguments, or a usage error
 * that names the argument, the reason and the fix. Parsing is strict (an unknown option is an
 * error, never ignored) and happens before anything is opened, so a bad invocation touches nothing.
 *
 * The command table (`Commands.ts`) is the one description of the CLI: parsing, `--help` and the
 * reference in `docs/cli.md` all come from it.
 *
 * @since 0.1.0
 */
import { parseArgs } from "node:util"
import * as Data from "effect/Data"
import { closest, didYouMean } from "./Suggest.js"

/**
 * What a shell completes a value with, beyond fixed `choices`: a task id of the project, a file or
 * a directory. Anything else is free text, which is not completed.
 *
 * @since 0.3.0
 * @category models
 */
export type Completion = "task" | "file" | "directory"

/**
 * An option of a command.
 *
 * @since 0.1.0
 * @category models
 */
export interface OptionSpec {
  readonly type: "string" | "boolean"
  readonly description: string
  readonly short?: string | undefined
  /** The name its value is shown as in usage and help, e.g. `<text>`. */
  readonly valueName?: string | undefined
  readonly required?: boolean | undefined
  readonly choices?: ReadonlyArray<string> | undefined
  /** An integer option: decoded and range-checked here. */
  readonly integer?: { readonly min: number; readonly max: number } | undefined
  /** How `ratchet completion`'s scripts complete its value. */
  readonly complete?: Completion | undefined
}

/**
 * A positional argument.
 *
 * @since 0.1.0
 * @category models
 */
export interface PositionalSpec {
  readonly name: string
  readonly description: string
  readonly required: boolean
  readonly choices?: ReadonlyArray<string> | undefined
  /** How `ratchet completion`'s scripts complete it. */
  readonly complete?: Completion | undefined
}

/**
 * The options every command takes.
 *
 * @since 0.1.0
 * @category constants
 */
export const globalOptions: Readonly<Record<string, OptionSpec>> = {
  json: { type: "boolean", description: "Print one JSON document on stdout (NDJSON for `log`) instead of text." },
  verbose: { type: "boolean", description: "On an unexpected error, print its full cause." },
  cwd: { type: "string", short: "C", valueName: "<dir>", complete: "directory", description: "Run as if started in <dir> (like git -C)." },
  "no-color": { type: "boolean", description: "Do not colour the output (as a non-empty NO_COLOR does)." },
  help: { type: "boolean", short: "h", description: "Show this command's help." }
}

/**
 * `argv` with the global options typed before the command moved after it, so that
 * `ratchet -C ../repo status` and `ratchet --json task list` mean what they say, as in git and gh.
 * Only whole leading options move: `--json`, `--verbose`, `--no-color`, and `-C`/`--cwd` with a
 * value (`-C <dir>`, `--cwd <dir>`, `--cwd=<dir>`). They go before a `--` when there is one, so they
 * never become a command's arguments. Anything else (`--help`, a mistyped option, `-C` without its
 * value, or nothing after the options) leaves `argv` as it is, for the usual help or refusal.
 *
 * @since 0.2.0
 * @category parsing
 */
export const hoistGlobalOptions = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const leading: Array<string> = []
  let index = 0
  while (index < argv.length) {
    const word = argv[index] as string
    if (word === "--json" || word === "--verbose" || word === "--no-color" || /^--cwd=./.test(word)) {
      leading.push(word)
      index += 1
    } else if ((word === "-C" || word === "--cwd") && index + 1 < argv.length && !(argv[index + 1] as string).startsWith("-")) {
      leading.push(word, argv[index + 1] as string)
      index += 2
    } else break
  }
  const rest = argv.slice(index)
  if (leading.length === 0 || rest.length === 0 || (rest[0] as string).startsWith("-")) return argv
  const terminator = rest.indexOf("--")
  return terminator === -1 ? [...rest, ...leading] : [...rest.slice(0, terminator), ...leading, ...rest.slice(terminator)]
}

/**
 * A usage error: exit code 2, nothing opened or written.
 *
 * @since 0.1.0
 * @category errors
 */
export class UsageError extends Data.TaggedError("@ratchet/cli/UsageError")<{
  readonly command: string
  readonly field: string
  readonly reason: string
  readonly fix: string
  /** What the mistyped word may have meant (a command, an option, a value), best first; often none. */
  readonly suggestions?: ReadonlyArray<string> | undefined
}> {
  override get message(): string {
    return `${this.field}: ${this.reason} ${this.fix}`
  }
}

/**
 * Parsed arguments: positionals by name, options by name (strings, booleans, integers).
 *
 * @since 0.1.0
 * @category models
 */
export interface Parsed {
  readonly positionals: Readonly<Record<string, string | undefined>>
  readonly options: Readonly<Record<string, string | boolean | number | undefined>>
}

/** Longest accepted argument: a goal or an answer is text, but not a file's worth of it. */
export const maxArgumentLength = 65_536

/**
 * Parses `args` (the argv after the command's words) against a command's positionals and options.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (
  command: string,
  args: ReadonlyArray<string>,
  positionals: ReadonlyArray<PositionalSpec>,
  options: Readonly<Record<string, OptionSpec>>
): Parsed | UsageError => {
  const all = { ...globalOptions, ...options }
  const help = `See: ratchet ${command} --help`
  /** The option an argument is the value of (`--goal=…`, or the word after `--goal`), else its position. */
  const fieldOf = (index: number): string => {
    const inline = /^--([^=]+)=/.exec(args[index] ?? "")?.[1]
    if (inline !== undefined && Object.hasOwn(all, inline)) return `--${inline}`
    const before = args[index - 1] ?? ""
    const named = Object.entries(all).find(([name, spec]) =>
      spec.type === "string" && (before === `--${name}` || (spec.short !== undefined && before === `-${spec.short}`))
    )
    return named === undefined ? `argument ${index + 1}` : `--${named[0]}`
  }
  for (const [index, arg] of args.entries()) {
    if (arg.length > maxArgumentLength) {
      return new UsageError({
        command,
        field: fieldOf(index),
        reason: `is ${arg.length} characters long, over the limit of ${maxArgumentLength}.`,
        fix: "Put long text in a file (ratchet spec … --file) or shorten it."
      })
    }
    if (arg.includes("\u0000")) {
      return new UsageError({ command, field: fieldOf(index), reason: "contains a NUL character.", fix: `Remove it. ${help}` })
    }
  }
  // `--help` or `-h` before any `--` shows the help, whatever else is wrong with the line.
  const terminator = args.indexOf("--")
  const asksForHelp = (terminator === -1 ? args : args.slice(0, terminator)).some((arg) => arg === "--help" || arg === "-h")
  let raw: ReturnType<typeof parseArgs>
  try {
    raw = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: true,
      // `multiple` on every option, so a repeated option is seen (and refused below) rather than
      // silently keeping its last value.
      options: Object.fromEntries(
        Object.entries(all).map((
          [name, spec]
        ) => [name, spec.short === undefined ? { type: spec.type, multiple: true } : { type: spec.type, short: spec.short, multiple: true }])
      )
    })
  } catch (error) {
    if (asksForHelp) return { positionals: {}, options: { help: true } }
    const text = error instanceof Error ? error.message : String(error)
    const option = /'(-[^' ]*)/.exec(text)?.[1]
    const unknown = /^Unknown option '(-[^']*)'/.exec(text)?.[1]
    const suggestions = unknown === undefined ? [] : optionSuggestions(unknown, args, all)
    return new UsageError({
      command,
      field: option ?? "arguments",
      reason: text.replace(/\s*To specify a positional argument.*$/s, "").replace(/\s+/g, " ").trim(),
      fix: unknown === undefined
        ? help
        : `${suggestions.length === 0 ? "" : `${didYouMean(suggestions)} `}If ${JSON.stringify(unknown.slice(0, 60))} is text rather than an option, put it after -- at the end (-- ${
          JSON.stringify(unknown.slice(0, 60))
        }). ${help}`,
      ...(suggestions.length === 0 ? {} : { suggestions })
    })
  }
  if ((raw.values["help"] as ReadonlyArray<boolean> | undefined)?.includes(true) === true) {
    return { positionals: {}, options: { help: true } }
  }
  const values: Record<string, string | boolean | number | undefined> = {}
  for (const [name, spec] of Object.entries(all)) {
    const given = raw.values[name] as ReadonlyArray<string | boolean> | undefined
    if (given !== undefined && given.length > 1) {
      return new UsageError({ command, field: `--${name}`, reason: "is given more than once.", fix: `Give it once. ${help}` })
    }
    const value = given?.[0]
    if (value === undefined) {
      if (spec.required === true) {
        return new UsageError({ command, field: `--${name}`, reason: "is required.", fix: `${spec.description} ${help}` })
      }
      continue
    }
    if (typeof value === "string" && value.trim() === "") {
      // No option of any command means anything when blank: say so rather than pass "" on.
      return new UsageError({ command, field: `--${name}`, reason: "is empty.", fix: `${spec.description} ${help}` })
    }
    if (typeof value === "string" && spec.choices !== undefined && !spec.choices.includes(value)) {
      return notAChoice(command, `--${name}`, value, spec.choices)
    }
    if (typeof value === "string" && spec.integer !== undefined) {
      const number = /^-?\d{1,16}$/.test(value) ? Number(value) : Number.NaN
      if (!Number.isSafeInteger(number) || number < spec.integer.min || number > spec.integer.max) {
        return new UsageError({
          command,
          field: `--${name}`,
          reason: `${JSON.stringify(value.slice(0, 40))} is not an integer from ${spec.integer.min} to ${spec.integer.max}.`,
          fix: help
        })
      }
      // `-0` is 0: no negative zero leaks into a command.
      values[name] = number === 0 ? 0 : number
      continue
    }
    values[name] = value
  }
  const given = raw.positionals
  if (given.length > positionals.length) {
    const extra = given.slice(positionals.length).map((p) => JSON.stringify(p.slice(0, 60))).join(" ")
    return new UsageError({
      command,
      field: "arguments",
      reason: `unexpected ${extra}.`,
      fix: `Quote text that contains spaces ("…"). ${help}`
    })
  }
  const named: Record<string, string | undefined> = {}
  for (const [index, spec] of positionals.entries()) {
    const value = given[index]
    if (value === undefined) {
      if (spec.required) {
        return new UsageError({ command, field: `<${spec.name}>`, reason: "is missing.", fix: `${spec.description}. ${help}` })
      }
      continue
    }
    if (spec.choices !== undefined && !spec.choices.includes(value)) return notAChoice(command, `<${spec.name}>`, value, spec.choices)
    named[spec.name] = value
  }
  return { positionals: named, options: values }
}

/** A value outside an option's or positional's choices, with the choice it may have meant. */
const notAChoice = (command: string, field: string, value: string, choices: ReadonlyArray<string>): UsageError => {
  const suggestions = closest(value, choices)
  return new UsageError({
    command,
    field,
    reason: `${JSON.stringify(value.slice(0, 80))} is not one of ${choices.join(", ")}.`,
    fix: `${suggestions.length === 0 ? "" : `${didYouMean(suggestions)} `}Use one of: ${choices.join(" | ")}.`,
    ...(suggestions.length === 0 ? {} : { suggestions })
  })
}

/**
 * The options an unknown one may have meant: `--jsn` or `--JSON` → `--json`. A long option typed
 * with one dash (`-json`) reaches here as its first letter (`-j`), so the whole word is looked up.
 */
const optionSuggestions = (unknown: string, args: ReadonlyArray<string>, all: Readonly<Record<string, OptionSpec>>): ReadonlyArray<string> => {
  const names = Object.keys(all)
  if (unknown.startsWith("--")) return closest(unknown.slice(2), names).map((name) => `--${name}`)
  const whole = args.find((arg) => arg.startsWith(unknown) && !arg.startsWith("--") && arg.length > 2)?.split("=")[0]
  if (whole === undefined) return []
  const exact = names.find((name) => name === whole.slice(1))
  return exact === undefined ? closest(whole.slice(1), names).map((name) => `--${name}`) : [`--${exact}`]
}
