/**
 * `--help` text and the Markdown reference (`docs/cli.md`), both from the command table, so the
 * reference cannot drift from what the binary says (a test compares them).
 *
 * @since 0.1.0
 */
import { globalOptions, type OptionSpec } from "./Args.js"
import { type CommandSpec, commands } from "./Commands.js"

const optionLabel = (name: string, spec: OptionSpec): string =>
  `${spec.short === undefined ? "" : `-${spec.short}, `}--${name}${spec.type === "string" ? ` ${spec.valueName ?? "<value>"}` : ""}`

/** The columns `text` takes on a terminal: its code points (the help has no wide characters). */
const columns = (text: string): number => {
  let count = 0
  for (const _ of text) count++
  return count
}

/**
 * `words` laid out in lines of at most `width` columns, the first line starting with `first` and
 * the others with `indent`. A word wider than the line stands alone on its own, unbroken.
 */
const fill = (words: ReadonlyArray<string>, width: number, indent: string, first: string = indent): Array<string> => {
  const lines: Array<string> = []
  let line = first
  let empty = true
  for (const word of words) {
    if (!empty && columns(line) + 1 + columns(word) > width) {
      lines.push(line)
      line = `${indent}${word}`
    } else {
      line = empty ? `${line}${word}` : `${line} ${word}`
    }
    empty = false
  }
  lines.push(line)
  return lines
}

/** A paragraph wrapped at spaces. */
const wrap = (text: string, width: number, indent = "", first: string = indent): Array<string> =>
  fill(text.split(" ").filter((word) => word !== ""), width, indent, first)

/**
 * Two columns (a name and what it is), wrapped to `width`. The name column is as wide as the
 * widest name that fits in two fifths of the line; a longer name gets a line of its own with its
 * text below, and when most names are longer every row is laid out that way.
 */
const table = (rows: ReadonlyArray<readonly [string, string]>, width: number): string => {
  const cap = Math.max(8, Math.floor((width - 4) * 0.4))
  const fitting = rows.filter(([left]) => columns(left) <= cap)
  if (fitting.length * 2 < rows.length) {
    return rows.flatMap(([left, right]) => [...wrap(left, width, "    ", "  "), ...wrap(right, width, "      ")]).join("\n")
  }
  const column = Math.max(...fitting.map(([left]) => columns(left)))
  const indent = " ".repeat(column + 4)
  return rows.flatMap(([left, right]) =>
    columns(left) > column
      ? [...wrap(left, width, "    ", "  "), ...wrap(right, width, indent)]
      : wrap(right, width, indent, `  ${left}${" ".repeat(column - columns(left))}  `)
  ).join("\n")
}

/** The words of a shell command line as typed: a quoted string, spaces and all, is one. */
const shellWords = (line: string): Array<string> => line.match(/(?:"[^"]*"|'[^']*'|[^\s"'])+/g) ?? []

/**
 * An example, `  $ ratchet …`, continued on further lines with a trailing backslash when it is
 * wider than `width`, so that it still runs as pasted.
 */
const example = (text: string, width: number): Array<string> => {
  const [program = "", ...words] = shellWords(text)
  const lines: Array<string> = []
  let line = `  $ ${program}`
  for (const [index, word] of words.entries()) {
    // Room for a trailing backslash after a word that is not the last, in case the next goes below.
    const tail = index === words.length - 1 ? 0 : 2
    if (columns(line) + 1 + columns(word) + tail > width) {
      lines.push(`${line} \\`)
      line = `      ${word}`
    } else {
      line = `${line} ${word}`
    }
  }
  lines.push(line)
  return lines
}

/**
 * Help laid out without wrapping: every paragraph and table row on one line.
 *
 * @since 0.3.0
 * @category constants
 */
export const unwrapped: number = Number.POSITIVE_INFINITY

/**
 * The width `docs/cli.md` is laid out at: what an 80-column terminal shows.
 *
 * @since 0.3.0
 * @category constants
 */
export const referenceWidth = 80

/**
 * The width help is wrapped to: `COLUMNS` when it is a whole number from 20 to 1000, else the
 * terminal's width when standard output is one (and at least 20 columns), else 80.
 *
 * @since 0.3.0
 * @category rendering
 */
export const widthOf = (input: { readonly COLUMNS: string | undefined; readonly isTTY: boolean; readonly columns: number | undefined }): number => {
  const given = input.COLUMNS?.trim() ?? ""
  const fromEnv = /^\d{1,4}$/.test(given) ? Number(given) : Number.NaN
  if (fromEnv >= 20 && fromEnv <= 1000) return fromEnv
  if (input.isTTY && input.columns !== undefined && Number.isInteger(input.columns) && input.columns >= 20) return input.columns
  return 80
}

/**
 * The width of this process's standard output, as {@link widthOf} decides it.
 *
 * @since 0.3.0
 * @category rendering
 */
export const width = (): number => widthOf({ COLUMNS: process.env["COLUMNS"], isTTY: process.stdout.isTTY === true, columns: process.stdout.columns })

/**
 * The environment variables the CLI reads.
 *
 * @since 0.1.0
 * @category constants
 */
export const environment: ReadonlyArray<readonly [string, string]> = [
  ["RATCHET_HOME", "Where the SQLite store and its blobs live (default: the store ratchet init recorded for this checkout, else ~/.ratchet). A directory you cannot write is opened read-only: reads work, acts are refused saying why."],
  ["RATCHET_DATABASE_URL", "postgres://… — use PostgreSQL instead of SQLite, with identical behaviour."],
  ["RATCHET_DATABASE_SCHEMA", "The PostgreSQL schema (default public; created when missing)."],
  ["RATCHET_DATABASE_SESSION_URL", "postgres://… — where runners hold their task claims and LISTEN (default RATCHET_DATABASE_URL): the server itself or a session-mode pool, when RATCHET_DATABASE_URL goes through PgBouncer in transaction mode."],
  ["RATCHET_LEASE_HEARTBEAT_MS", "Heartbeat interval of leases taken by this invocation (overrides .ratchet/project.json)."],
  ["RATCHET_LEASE_GRACE_MS", "Grace after the last heartbeat before a takeover is allowed (same)."],
  ["RATCHET_ACTOR", "Who is acting, as kind:id (user:ana, agent:claude-1); default user:<login name>. Hosts set agent:…"],
  ["RATCHET_CLAUDE_BIN", "The claude program ratchet run starts for a plan's agent steps on Claude Code (an absolute path; default: claude on PATH)."],
  ["RATCHET_CODEX_BIN", "The codex program ratchet run starts for a plan's agent steps on Codex (an absolute path; default: codex on PATH)."],
  ["RATCHET_BWRAP_BIN", "The bubblewrap program ratchet run --until-verified runs every agent, step and check in (an absolute path; default: bwrap on PATH; the loop is refused without one that works)."],
  ["NO_COLOR", "Set and not empty: never colour output (as --no-color does). Output is coloured only on a terminal otherwise."],
  ["FORCE_COLOR", "Set and not empty: colour output even when it is not a terminal; 0 or false: never colour it. --no-color and NO_COLOR win over it."],
  ["COLUMNS", "The width help is wrapped to (20 to 1000; default: the terminal's width, or 80)."]
]

/**
 * The exit codes.
 *
 * @since 0.1.0
 * @category constants
 */
export const exitCodes: ReadonlyArray<readonly [string, string]> = [
  ["0", "done / CLEAR"],
  ["1", "unexpected error (run again with --verbose for the cause)"],
  ["2", "invalid input: usage, a file that does not decode, an unknown task, a command the task's state does not allow, a project not initialised, a store from a newer Ratchet"],
  ["3", "HOLD: a gate refused; the output says why and what to do"],
  ["4", "conflict: another writer holds the lease, or a stale revision, digest or epoch"]
]

/**
 * The help of one command, wrapped to `width` columns.
 *
 * @since 0.1.0
 * @category rendering
 */
export const command = (spec: CommandSpec, width: number): string => {
  const parts = [...wrap(spec.summary, width), "", ...wrap(`Usage: ${spec.usage}`, width, "       ", ""), "", ...wrap(spec.description, width)]
  if (spec.positionals.length > 0) {
    parts.push(
      "",
      "Arguments:",
      table(spec.positionals.map((p) => [`<${p.name}>`, `${p.description}${p.required ? "" : " (optional)"}`] as const), width)
    )
  }
  const options = Object.entries(spec.options)
  if (options.length > 0) {
    parts.push(
      "",
      "Options:",
      table(options.map(([name, o]) => [optionLabel(name, o), `${o.description}${o.required === true ? " (required)" : ""}`] as const), width)
    )
  }
  parts.push("", "Global options:", table(Object.entries(globalOptions).map(([name, o]) => [optionLabel(name, o), o.description] as const), width))
  parts.push("", spec.examples.length === 1 ? "Example:" : "Examples:", ...spec.examples.flatMap((text) => example(text, width)))
  return parts.join("\n")
}

/**
 * `ratchet --help`, wrapped to `width` columns.
 *
 * @since 0.1.0
 * @category rendering
 */
export const main = (width: number): string =>
  [
    ...wrap("ratchet — a durable, evidence-gated lifecycle for AI coding agents", width),
    "",
    ...wrap("Usage: ratchet <command> [arguments] [--json] [-C <dir>]", width, "       ", ""),
    ...wrap("ratchet --version | -v   (the version and the commit it was built from)", width, "         ", "       "),
    "",
    ...wrap(
      "A task goes brief → approved spec → approved plan → run → verification → completion. Every change is an event in the runtime store; approvals are typed by you on a terminal.",
      width
    ),
    "",
    "Commands:",
    table(commands.map((spec) => [spec.usage.replace(/^ratchet /, ""), spec.summary] as const), width),
    "",
    "Environment:",
    table(environment, width),
    "",
    "Exit codes:",
    table(exitCodes, width),
    "",
    ...wrap("Run ratchet <command> --help for a command's arguments and an example; ratchet completion --help for completion in your shell.", width),
    "",
    "Example:",
    ...example("ratchet init && ratchet task create --goal \"Make the flaky date test deterministic\"", width)
  ].join("\n")

/**
 * The Markdown reference: the main help and every command's help, in one document, as an
 * 80-column terminal shows them.
 *
 * @since 0.1.0
 * @category rendering
 */
export const reference = (): string =>
  [
    "# `ratchet` command reference",
    "",
    "<!-- Generated from the CLI's own --help by `npm run docs:cli`; a test fails when this file and `--help` differ. -->",
    "",
    "```text",
    main(referenceWidth),
    "```",
    "",
    ...commands.flatMap((spec) => [`## \`ratchet ${spec.name}\``, "", "```text", command(spec, referenceWidth), "```", ""])
  ].join("\n")

/**
 * The words that group several commands (`ratchet task …`, `ratchet brief …`, `ratchet lease …`).
 *
 * @since 0.1.0
 * @category constants
 */
export const groups: ReadonlyArray<string> = ["task", "brief", "step", "approver", "lease", "lessons", "hooks"]

/**
 * `ratchet help brief`, `ratchet lease --help`: the commands of a group, with their synopsis,
 * wrapped to `width` columns.
 *
 * @since 0.1.0
 * @category rendering
 */
export const group = (word: string, width: number): string => {
  const members = commands.filter((spec) => spec.name.startsWith(`${word} `))
  return [
    `ratchet ${word} — ${members.length} commands`,
    "",
    "Commands:",
    table(members.map((spec) => [spec.usage.replace(/^ratchet /, ""), spec.summary] as const), width),
    "",
    ...wrap(`Run ratchet help ${members[0]?.name ?? word} (or add --help to a command) for its arguments and an example.`, width)
  ].join("\n")
}
