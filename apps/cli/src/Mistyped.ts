/**
 * The usage error for a command line whose leading words name no command: which word is wrong (the
 * command, a group's subcommand, a brief verb), and what it may have meant.
 *
 * @since 0.3.0
 */
import { UsageError } from "./Args.js"
import type { CommandSpec } from "./Command.js"
import { closest, didYouMean } from "./Suggest.js"

/**
 * Why `argv` names no command of `commands`, with the closest command when there is one.
 *
 * @since 0.3.0
 * @category errors
 */
export const unknownCommand = (argv: ReadonlyArray<string>, commands: ReadonlyArray<CommandSpec>): UsageError => {
  const [first = "", second] = argv
  const subcommands = (word: string) => commands.flatMap((c) => c.name.startsWith(`${word} `) ? [c.name.slice(word.length + 1)] : [])
  if (first === "brief") {
    // `brief <task> <verb>`: say which part is wrong rather than calling "brief <task>" a command.
    const verbs = subcommands("brief")
    const verb = [argv[1], argv[2]].every((word) => word !== undefined && !word.startsWith("-")) ? argv[2] : undefined
    const verbFirst = second !== undefined && verbs.includes(second)
    const suggestions = verb === undefined || verbFirst ? [] : closest(verb, verbs)
    return new UsageError({
      command: "brief",
      field: "command",
      reason: verbFirst
        ? `the task goes before the verb: ratchet brief <task> ${second} ….`
        : verb === undefined
        ? "brief needs a task and a verb."
        : `${JSON.stringify(verb.slice(0, 80))} is not a brief verb.`,
      fix: `${suggestions.length === 0 ? "" : `${didYouMean(suggestions, `ratchet brief ${argv[1] ?? "<task>"} `)} `}Use ratchet brief <task> ${verbs.join("|")}; see ratchet help brief ${
        verbs[0] ?? "ask"
      }.`,
      ...(suggestions.length === 0 ? {} : { suggestions: suggestions.map((s) => `brief ${s}`) })
    })
  }
  if (first.startsWith("-")) {
    // `ratchet --json task list`, `ratchet --hepl`: options go after the command.
    const suggestions = closest(first.replace(/^-+/, ""), ["help", "version"]).map((word) => `--${word}`)
    return new UsageError({
      command: "ratchet",
      field: "command",
      reason: `${JSON.stringify(first.slice(0, 80))} is where the command goes: the command comes first, then its options (ratchet task list --json).`,
      fix: `${suggestions.length === 0 ? "" : `${didYouMean(suggestions, "ratchet ")} `}See ratchet --help.`,
      ...(suggestions.length === 0 ? {} : { suggestions })
    })
  }
  const subs = subcommands(first)
  if (subs.length > 0) {
    // A group (`task`, `lease`, …): the subcommand is missing or mistyped.
    if (second === undefined || second.startsWith("-")) {
      return new UsageError({
        command: first,
        field: "command",
        reason: `ratchet ${first} needs a command: ${subs.join(", ")}.`,
        fix: `See ratchet help ${first}.`
      })
    }
    const suggestions = closest(second, subs).map((s) => `${first} ${s}`)
    return new UsageError({
      command: `${first} ${second.slice(0, 80)}`,
      field: "command",
      reason: `${JSON.stringify(second.slice(0, 80))} is not a command of ratchet ${first} (${subs.join(", ")}).`,
      fix: `${suggestions.length === 0 ? "" : `${didYouMean(suggestions, "ratchet ")} `}See ratchet help ${first}.`,
      ...(suggestions.length === 0 ? {} : { suggestions })
    })
  }
  // The first word is no command: the closest first words, completed with the subcommand typed
  // after it when that one exists (`tsk list` → `task list`).
  const firsts = [...commands.map((c) => c.name.split(" ")[0] ?? c.name), "help"]
  const suggestions = closest(first, firsts).map((word) => {
    const under = subcommands(word)
    return second !== undefined && under.includes(second) ? `${word} ${second}` : word
  })
  return new UsageError({
    command: first.slice(0, 80),
    field: "command",
    reason: `${JSON.stringify(first.slice(0, 80))} is not a ratchet command.`,
    fix: `${suggestions.length === 0 ? "" : `${didYouMean(suggestions, "ratchet ")} `}See ratchet --help.`,
    ...(suggestions.length === 0 ? {} : { suggestions })
  })
}
