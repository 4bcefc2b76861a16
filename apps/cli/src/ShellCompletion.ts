/**
 * The scripts `ratchet completion bash|zsh|fish` prints, generated from the command table: the
 * commands and a group's subcommands, each command's options (the global ones too), the fixed
 * values of an option or argument, files and directories where one goes, and task ids where a
 * task goes. Loaded only by that command.
 *
 * Each script is the command table as data (one `case` arm per command) and a small engine that
 * walks the words before the cursor the way `Commands.find` and `Args.parse` read them: the
 * command's words (the task before the verb in `brief <task> <verb>`), then options, the values
 * they take, `--` and the positionals. Everything is completed in the shell itself, without
 * starting ratchet, except task ids: those come from `ratchet task list --json` in the directory
 * being completed (`-C` included), one start of ratchet where a task id goes (ADR 0027).
 *
 * @since 0.3.0
 */
// Types only, and the engines: this module and ShellEngines are a chunk of their own that imports
// nothing else at runtime, so loading it moves no other module out of the entry's bundle.
import type { OptionSpec, PositionalSpec } from "./Args.js"
import type { CommandSpec } from "./Command.js"
import { bashEngine, fishEngine, zshEngine } from "./ShellEngines.js"

/**
 * The shells there is a script for.
 *
 * @since 0.3.0
 * @category models
 */
export type Shell = "bash" | "zsh" | "fish"

/**
 * @since 0.3.0
 * @category constants
 */
export const shells: ReadonlyArray<Shell> = ["bash", "zsh", "fish"]

/** What the scripts know of one command: its options, the kinds of their values, its positionals. */
interface Entry {
  readonly name: string
  /** Its long options, then the global ones: `--goal`, `--json`, … */
  readonly options: ReadonlyArray<string>
  /** ` --option=kind ` for every option that takes a value, short forms too. */
  readonly values: string
  /** The kind of each positional, in order. */
  readonly positionals: ReadonlyArray<string>
}

/**
 * Every word the scripts embed is checked, so that nothing in the table can break out of the
 * quoting: a name or a value with a space, a quote or a comma would be a bug in the table.
 */
const checked = (word: string, pattern: RegExp, what: string): string => {
  if (!pattern.test(word)) throw new Error(`ratchet completion: ${JSON.stringify(word)} is not a ${what} a completion script can hold`)
  return word
}
const commandWords = /^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*)?$/
const optionName = /^(--[a-z][a-z0-9-]*|-[A-Za-z])$/
// Not starting with "@", which marks the other kinds of value.
const valueWord = /^[A-Za-z0-9_.:+-][A-Za-z0-9_.:+@-]*$/

type Options = Readonly<Record<string, OptionSpec>>

/**
 * How a value is completed: `@task`, `@file`, `@directory`, `@text` (not completed), or its
 * choices separated by commas.
 */
const kindOf = (spec: Pick<OptionSpec | PositionalSpec, "choices" | "complete">): string =>
  spec.choices !== undefined
    ? spec.choices.map((choice) => checked(choice, valueWord, "value")).join(",")
    : spec.complete === undefined
    ? "@text"
    : `@${spec.complete}`

const valuesOf = (options: Options): ReadonlyArray<string> =>
  Object.entries(options).flatMap(([name, spec]) =>
    spec.type !== "string"
      ? []
      : [`--${name}`, ...(spec.short === undefined ? [] : [`-${spec.short}`])].map((option) => `${checked(option, optionName, "option")}=${kindOf(spec)}`)
  )

const entryOf = (spec: CommandSpec, globalOptions: Options): Entry => {
  const options = [...Object.keys(spec.options), ...Object.keys(globalOptions)].map((name) => checked(`--${name}`, optionName, "option"))
  const values = [...valuesOf(spec.options), ...valuesOf(globalOptions)]
  // `brief <task> <verb>`: the scripts count the task among the positionals, as the table does.
  return { name: checked(spec.name, commandWords, "command"), options, values: ` ${values.join(" ")} `, positionals: spec.positionals.map(kindOf) }
}

/** The command table as the scripts see it. */
const modelOf = (commands: ReadonlyArray<CommandSpec>, globalOptions: Options) => {
  const entries = commands.map((spec) => entryOf(spec, globalOptions))
  const firsts = [...new Set(entries.map((entry) => entry.name.split(" ")[0] as string))]
  const groups = firsts.flatMap((word) => {
    const subcommands = entries.flatMap((entry) => entry.name.startsWith(`${word} `) ? [entry.name.slice(word.length + 1)] : [])
    return subcommands.length === 0 ? [] : [[word, subcommands] as const]
  })
  return { entries, top: firsts.join(" "), groups }
}

/** The data functions of bash and zsh, which share their `case` syntax. */
const posixData = (model: ReturnType<typeof modelOf>): string =>
  [
    "# The subcommands of a group ($1) in _ratchet_s; fails for a word that is not a group.",
    "_ratchet_subcommands() {",
    "  case $1 in",
    ...model.groups.map(([word, subcommands]) => `    ${word}) _ratchet_s='${subcommands.join(" ")}' ;;`),
    "    *) return 1 ;;",
    "  esac",
    "}",
    "",
    "# The command $1 in _ratchet_o (its options), _ratchet_v (\" --option=kind …\" for those that take",
    "# a value) and _ratchet_p (the kind of each positional); fails for no command. A kind is @task,",
    "# @file, @directory, @text (not completed) or the values it accepts, separated by commas.",
    "_ratchet_command() {",
    "  case $1 in",
    ...model.entries.map((entry) =>
      `    '${entry.name}') _ratchet_o='${entry.options.join(" ")}'; _ratchet_v='${entry.values}'; _ratchet_p='${entry.positionals.join(" ")}' ;;`
    ),
    "    *) return 1 ;;",
    "  esac",
    "}"
  ].join("\n")

const fishData = (model: ReturnType<typeof modelOf>): string =>
  [
    "# The subcommands of a group ($argv[1]); fails for a word that is not a group.",
    "function __ratchet_subcommands",
    "    switch $argv[1]",
    ...model.groups.flatMap(([word, subcommands]) => [`        case ${word}`, `            printf '%s\\n' ${subcommands.join(" ")}`]),
    "        case '*'",
    "            return 1",
    "    end",
    "end",
    "",
    "# The command $argv[1] as three lines: o:its options, v: --option=kind … for those that take a",
    "# value, p:the kind of each positional; fails for no command. A kind is @task, @file,",
    "# @directory, @text (not completed) or the values it accepts, separated by commas.",
    "function __ratchet_command",
    "    switch $argv[1]",
    ...model.entries.flatMap((entry) => [
      `        case '${entry.name}'`,
      `            printf '%s\\n' 'o:${entry.options.join(" ")}' 'v:${entry.values}' 'p:${entry.positionals.join(" ")}'`
    ]),
    "        case '*'",
    "            return 1",
    "    end",
    "end"
  ].join("\n")

const header = (shell: Shell, install: ReadonlyArray<string>): string =>
  [
    `# ${shell} completion for ratchet, generated from its command table by: ratchet completion ${shell}`,
    "# Regenerate it after upgrading Ratchet. Install it:",
    ...install.map((line) => `#   ${line}`),
    "# Task ids are read with ratchet task list --json, in the directory being completed."
  ].join("\n")

/**
 * How to install each shell's script, as shown in its header and in `ratchet completion --help`.
 *
 * @since 0.3.0
 * @category constants
 */
export const install: Readonly<Record<Shell, ReadonlyArray<string>>> = {
  bash: [
    "mkdir -p ~/.local/share/bash-completion/completions",
    "ratchet completion bash > ~/.local/share/bash-completion/completions/ratchet",
    "(loaded on first use by the bash-completion package; without it, source that file from ~/.bashrc)"
  ],
  zsh: [
    "mkdir -p ~/.zfunc && ratchet completion zsh > ~/.zfunc/_ratchet",
    "and in ~/.zshrc, before compinit: fpath=(~/.zfunc $fpath)"
  ],
  fish: ["ratchet completion fish > ~/.config/fish/completions/ratchet.fish"]
}

/**
 * The completion script for `shell`, from the command table and the options every command takes.
 *
 * @since 0.3.0
 * @category rendering
 */
export const script = (shell: Shell, commands: ReadonlyArray<CommandSpec>, globalOptions: Options): string => {
  const model = modelOf(commands, globalOptions)
  switch (shell) {
    case "bash":
      return [header(shell, install.bash), "", posixData(model), "", bashEngine.replaceAll("@@TOP@@", model.top), ""].join("\n")
    case "zsh":
      return [
        "#compdef ratchet",
        header(shell, install.zsh),
        "",
        posixData(model),
        "",
        zshEngine.replaceAll("@@TOP@@", model.top),
        "",
        "# Autoloaded from fpath, this file is the body of _ratchet: run it. Sourced, register it.",
        "if [[ ${funcstack[1]} == _ratchet ]]; then",
        "  _ratchet \"$@\"",
        "else",
        "  compdef _ratchet ratchet",
        "fi",
        ""
      ].join("\n")
    case "fish":
      return [header(shell, install.fish), "", fishData(model), "", fishEngine.replaceAll("@@TOP@@", model.top), ""].join("\n")
  }
}
