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

const table = (rows: ReadonlyArray<readonly [string, string]>): string => {
  const width = Math.max(...rows.map(([left]) => left.length))
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join("\n")
}

/**
 * The environment variables the CLI reads.
 *
 * @since 0.1.0
 * @category constants
 */
export const environment: ReadonlyArray<readonly [string, string]> = [
  ["RATCHET_HOME", "Where the SQLite store and its blobs live (default ~/.ratchet). A directory you cannot write is opened read-only: reads work, acts are refused saying why."],
  ["RATCHET_DATABASE_URL", "postgres://… — use PostgreSQL instead of SQLite, with identical behaviour."],
  ["RATCHET_DATABASE_SCHEMA", "The PostgreSQL schema (default public; created when missing)."],
  ["RATCHET_LEASE_HEARTBEAT_MS", "Heartbeat interval of leases taken by this invocation (overrides .ratchet/project.json)."],
  ["RATCHET_LEASE_GRACE_MS", "Grace after the last heartbeat before a takeover is allowed (same)."],
  ["RATCHET_ACTOR", "Who is acting, as kind:id (user:ana, agent:claude-1); default user:<login name>. Hosts set agent:…"],
  ["NO_COLOR", "Never colour output (it is only coloured on a terminal anyway)."]
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
 * The help of one command.
 *
 * @since 0.1.0
 * @category rendering
 */
export const command = (spec: CommandSpec): string => {
  const parts = [spec.summary, "", `Usage: ${spec.usage}`, "", spec.description]
  if (spec.positionals.length > 0) {
    parts.push("", "Arguments:", table(spec.positionals.map((p) => [`<${p.name}>`, `${p.description}${p.required ? "" : " (optional)"}`] as const)))
  }
  const options = Object.entries(spec.options)
  if (options.length > 0) {
    parts.push(
      "",
      "Options:",
      table(options.map(([name, o]) => [optionLabel(name, o), `${o.description}${o.required === true ? " (required)" : ""}`] as const))
    )
  }
  parts.push("", "Global options:", table(Object.entries(globalOptions).map(([name, o]) => [optionLabel(name, o), o.description] as const)))
  parts.push("", spec.examples.length === 1 ? "Example:" : "Examples:", ...spec.examples.map((example) => `  $ ${example}`))
  return parts.join("\n")
}

/**
 * `ratchet --help`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const main = (): string =>
  [
    "ratchet — a durable, evidence-gated lifecycle for AI coding agents",
    "",
    "Usage: ratchet <command> [arguments] [--json] [-C <dir>]",
    "",
    "A task goes brief → approved spec → approved plan → run → verification → completion. Every",
    "change is an event in the runtime store; approvals are typed by you on a terminal.",
    "",
    "Commands:",
    table(commands.map((spec) => [spec.usage.replace(/^ratchet /, ""), spec.summary] as const)),
    "",
    "Environment:",
    table(environment),
    "",
    "Exit codes:",
    table(exitCodes),
    "",
    "Run ratchet <command> --help for a command's arguments and an example.",
    "",
    "Example:",
    "  $ ratchet init && ratchet task create --goal \"Make the flaky date test deterministic\""
  ].join("\n")

/**
 * The Markdown reference: the main help and every command's help, in one document.
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
    main(),
    "```",
    "",
    ...commands.flatMap((spec) => [`## \`ratchet ${spec.name}\``, "", "```text", command(spec), "```", ""])
  ].join("\n")

/**
 * The words that group several commands (`ratchet task …`, `ratchet brief …`, `ratchet lease …`).
 *
 * @since 0.1.0
 * @category constants
 */
export const groups: ReadonlyArray<string> = ["task", "brief", "step", "approver", "lease", "hooks"]

/**
 * `ratchet help brief`, `ratchet lease --help`: the commands of a group, with their synopsis.
 *
 * @since 0.1.0
 * @category rendering
 */
export const group = (word: string): string => {
  const members = commands.filter((spec) => spec.name.startsWith(`${word} `))
  return [
    `ratchet ${word} — ${members.length} commands`,
    "",
    "Commands:",
    table(members.map((spec) => [spec.usage.replace(/^ratchet /, ""), spec.summary] as const)),
    "",
    `Run ratchet help ${members[0]?.name ?? word} (or add --help to a command) for its arguments and an example.`
  ].join("\n")
}
