/**
 * What a shell command an agent asks to run would do, as far as its text says: whether it would do
 * an act only a person may do (`ratchet approve`, …), which paths it would write, whether it is
 * destructive, which places it hands to programs, and whether it runs programs the text does not
 * show — in which case the guard cannot read it completely and fails closed.
 *
 * The text is read as a shell reads it (see `internal/shellSyntax`), and every program that runs
 * other programs is followed where its text can be read: wrappers (`sudo`, `env`, `timeout`,
 * `xargs`, `find -exec`, `npx`, …) to the command they run, `sh -c '…'`, `eval`, `script -c`,
 * `su -c`, `watch`, a shell fed a here-document, `$(…)`, backquotes and process substitutions,
 * four levels deep.
 *
 * A command is **opaque** (Ratchet cannot read it completely) when it runs programs from text the
 * guard cannot see: longer than 64 KiB, nested deeper than it reads, a NUL in it; a program whose
 * name is computed (`$(printf …)`, a glob, a brace expansion) or that this line wrote; code given
 * to an interpreter (`python3 -c`, `node -e`, `perl -e`, `ruby -e`, …) or fed to one on standard
 * input; a shell reading commands from a pipe or a file (`base64 -d | sh`); `.`/`source`, `alias`;
 * computed text handed to `sh -c` or `eval`; awk and sed programs that run commands; runners of
 * commands kept elsewhere (`ssh`, `tmux`, `parallel`, `at`, editors); settings that choose programs
 * (`PATH=`, `BASH_ENV=`, `LD_PRELOAD=`, `git -c`). Ordinary commands are not: `npm test`, `git
 * status`, `node script.js`, `grep -r foo src`, `cat a | head` run programs the text names.
 *
 * A command that names `ratchet` (by name, path, `npx`, `node …/ratchet.mjs`) in any position —
 * an argument, a string given to an interpreter, after `-exec`, in a here-document — followed by a
 * person-only subcommand is judged as if it ran it. The places every program that may act on its
 * words is given are returned (`touches`), so the guard can deny a command that names the runtime
 * store in any position.
 *
 * It is a seatbelt, not a sandbox: a program or script run from a file does what the file says.
 * Linear in the length of the text at each of the (bounded) levels it follows.
 *
 * @since 0.1.0
 */
import * as Commands from "./internal/shellCommands.js"
import * as Programs from "./internal/shellPrograms.js"
import * as Reading from "./internal/shellReading.js"
import * as Syntax from "./internal/shellSyntax.js"

/**
 * The acts of `ratchet` only a person may do; `unknown` is a `ratchet` command whose subcommand
 * the text does not say.
 *
 * @since 0.1.0
 * @category models
 */
export type Act = Programs.Act

/**
 * A person-only act the command would do (or names, in any position), and the words that do it.
 *
 * @since 0.1.0
 * @category models
 */
export interface PersonOnly extends Reading.PersonOnly {}

/**
 * What the command would write: the paths it names (as written, relative or absolute), or
 * `unknown` when it writes somewhere its words do not say (`git reset --hard`, `patch`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Writes {
  readonly paths: ReadonlyArray<string>
  readonly unknown: boolean
}

/**
 * The classification of one command line.
 *
 * @since 0.1.0
 * @category models
 */
export interface Classification {
  /** The person-only acts it would do or names. */
  readonly personOnly: ReadonlyArray<PersonOnly>
  readonly writes: Writes
  /** Why the command is destructive (cannot be undone from the work tree). */
  readonly destructive: ReadonlyArray<string>
  /** Why Ratchet cannot read it completely: each part that runs programs from text it cannot see. */
  readonly opaque: ReadonlyArray<string>
  /**
   * The path-like tokens handed to programs that may act on them (every program but those that
   * only read), in any position, relative ones from where the line `cd`s: for callers that look
   * for a place the command must not touch.
   */
  readonly touches: ReadonlyArray<string>
  /** The program of every simple command, wrappers (`sudo`, `env`, …) looked through. */
  readonly programs: ReadonlyArray<string>
  /**
   * The directories it writes anything below, relative ones from where the line `cd`s: where an
   * archive is extracted (`unzip -d`, `tar -C`, else the directory it runs in), a download is saved
   * (`curl -O`, `wget -P`), a patch is applied (`patch -d`, `git apply`), and what a link points at
   * (a write through the link lands there). A tree the text cannot place is a word with a
   * substitution in it (`$(the repository's top level)` for `git am`).
   */
  readonly trees: ReadonlyArray<string>
  /**
   * The scripts it runs from files (`python3 x.py`, `node x.js`, `sh x.sh`, `perl x.pl`, …): what
   * they write is not in the text, so each counts as a write anywhere.
   */
  readonly scripts: ReadonlyArray<string>
}

/** How much of a command is read as a shell reads it; a longer command is opaque. */
const maxLength = 64 * 1024

/** Builtins whose operands are assignments (`export d=.claude`). */
const declarations = new Set(["export", "declare", "typeset", "local", "readonly"])

/** Reserved words that may start a simple command (`if cmd; then …`, `! cmd`, `while cmd; do …`). */
const keywords = new Set(["!", "if", "then", "elif", "else", "do", "while", "until", "coproc", "{", "}"])

/**
 * Classifies a command line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const classify = (command: string): Classification => {
  const reading = Reading.makeReading()
  const { cannotRead, mention, act } = reading
  const joined = Reading.joined

  const visit = (text: string, depth: number): void => {
    const parsed = Syntax.parse(text)
    const line: Reading.Line = { directory: "", written: new Set() }
    for (const simple of parsed.commands) {
      for (const target of simple.redirects) reading.write(target, line)
      judge(simple.words, simple, line, depth, { consumed: new Set(), inputs: new Set(), fed: false })
    }
    for (const body of parsed.nested) follow(body, depth)
  }

  const follow = (text: string, depth: number) => {
    if (depth < Reading.maxDepth) return visit(text, depth + 1)
    cannotRead(text, "nests shells and substitutions deeper than Ratchet reads")
    mention([text], true, (target) => target)
  }

  /** A command line given as one word (`sh -c`, `eval`, `su -c`): read when its text is known. */
  const runText = (word: Syntax.Word, runner: string, depth: number) => {
    if (!word.computed) return follow(word.text, depth)
    cannotRead(`${runner} ${word.text}`, "runs a command line that is computed when it runs, which Ratchet cannot see")
    mention([word.text], true, (target) => target)
  }

  /**
   * Judges the words of one simple command: the program they run (wrappers looked through), what it
   * writes, what it hands over, what it runs that the text does not show.
   */
  const judge = (words: ReadonlyArray<Syntax.Word>, simple: Syntax.Command, line: Reading.Line, depth: number, judging: Reading.Judging): void => {
    const at = Reading.relativeTo(line)
    const { consumed } = judging
    let start = 0
    let program = ""
    let done = false
    for (let round = 0; round < 64 && !done; round++) {
      while (start < words.length) {
        const word = words[start]!
        // After `env` a NAME=value word is an assignment however it is quoted.
        const assigns = word.assigns ?? (program === "env" ? /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(word.text)?.[1] ?? null : null)
        if (assigns !== null) {
          if (Programs.isProgramVariable(assigns)) cannotRead(word.text, `sets ${assigns}, which chooses the programs that run`)
          reading.assigned(word.text, line)
          start++
          continue
        }
        if (keywords.has(word.text) && !word.quoted) {
          start++
          continue
        }
        break
      }
      const word = words[start]
      if (word === undefined) break
      done = true
      if (Programs.isDynamic(word) || word.braced) {
        cannotRead(joined(words.slice(start)), "runs a program whose name is computed when it runs, which Ratchet cannot see")
        const guessed = Programs.actOf(words.slice(start + 1))
        if (guessed !== null && guessed !== "unknown") act(guessed, joined(words.slice(start)))
        break
      }
      program = Programs.basename(word.text)
      if (word.text.includes("/") && reading.wrote(word, line)) cannotRead(word.text, "runs a file this command line writes, which Ratchet does not read")
      if (Programs.isRatchetName(word.text)) {
        program = "ratchet"
        const args = words.slice(start + 1)
        // Fed its operands (`xargs ratchet`), its subcommand may come from what it reads.
        const found = Programs.actOf(args) ?? (judging.fed && args.every((arg) => arg.text.startsWith("-")) ? "unknown" : null)
        if (found !== null) act(found, joined(words.slice(start)))
        for (const rest of words.slice(start)) consumed.add(rest)
        break
      }
      const wrapper = Programs.wrappers[program]
      if (wrapper !== undefined) {
        const next = unwrap(program, wrapper, words, start, depth, judging, line)
        if (next !== null) {
          start = next
          done = false
        }
        continue
      }
      const launched = launch(program, words, start, depth, consumed)
      if (launched !== null) {
        if (launched === "done") break
        start = launched
        done = false
        continue
      }
      // `export d=.claude`, `local f=.mcp.json`: assignments too.
      if (declarations.has(program)) for (const operand of words.slice(start + 1)) reading.assigned(operand.text, line)
      Commands.run(program, words, start, { reading, walk, simple, line, depth, judging })
    }
    if (!done && start < words.length) cannotRead(joined(words.slice(start)), "wraps programs in programs deeper than Ratchet reads")
    if (program !== "") reading.programs.push(program)
    const operands = words.slice(start)
    if (program !== "" && program !== "ratchet") {
      // A word with a substitution in it (`$(pwd)/x`, `{}` of find) names a place the text does not.
      const effects = Programs.effectsOf(operands.map((word) => (word.computed && !word.text.includes("$") ? `$(…)${word.text}` : word.text)))
      for (const target of effects.paths) reading.write(target, line)
      for (const target of effects.trees ?? []) reading.tree(target, line)
      // Fed its operands (`xargs ln -s`), what it unpacks or links is not in the text.
      if (judging.fed && (effects.trees ?? []).length > 0) reading.tree("$(operands it is fed)", line)
      const fedWrites = judging.fed && (effects.paths.length > 0 || Programs.operandWriters.has(program))
      reading.state.unknown ||= effects.unknown || fedWrites
      // Fed its operands (`echo .mcp.json | xargs cp s`), it writes files the text does not name.
      if (fedWrites) reading.write("$(operands it is fed)", line)
      reading.destructive.push(...effects.destructive)
      if (program === "cd" || program === "pushd") {
        const target = operands.slice(Programs.readOptions(operands, 1, new Set()).index)[0]
        // `cd -` returns to where the shell was before: not known from the text.
        line.directory = target === undefined ? "~" : target.computed || target.text === "-" ? "$unknown" : at(target.text)
      }
    }
    const reader = Programs.readers.has(program)
    // A shell or interpreter handed code in any position (`poetry run python -c …`) runs it.
    if (!reader && program !== "ratchet") {
      for (let k = start + 1; k < words.length; k++) {
        const word = words[k]!
        if (consumed.has(word) || Programs.isDynamic(word) || !runsCode(words, k, simple)) continue
        if (depth < Reading.maxDepth) judge(words.slice(k), simple, line, depth + 1, judging)
        else cannotRead(joined(words.slice(k)), "nests programs that run programs deeper than Ratchet reads")
        break
      }
    }
    const rest = words.filter((word) => !consumed.has(word)).map((word) => word.text)
    const bodies = simple.inputs.filter((input) => !judging.inputs.has(input)).map((input) => input.text)
    mention([...rest, ...bodies], !reader && program !== "ratchet", at)
  }

  /** Whether the word at `k` is a shell, interpreter or `eval` that runs code it is handed there. */
  const runsCode = (words: ReadonlyArray<Syntax.Word>, k: number, simple: Syntax.Command): boolean => {
    const name = Programs.basename(words[k]!.text)
    if (name === "eval") return k + 1 < words.length
    const stdin = simple.piped || simple.readsFile || simple.inputs.length > 0
    if (Programs.shells.has(name)) {
      const { index, options } = Programs.readOptions(words, k + 1, Programs.shellValued, true)
      return options.some((option) => option.name === "-c" || option.name === "-s") || (stdin && index >= words.length)
    }
    const interpreter = Programs.interpreterOf(name)
    if (interpreter === null) return false
    const { index, options } = Programs.readOptions(words, k + 1, interpreter.valued)
    return options.some((option) => interpreter.code.has(option.name)) || (stdin && (index >= words.length || words[index]!.text === "-"))
  }

  /**
   * Looks through a wrapper: the index of the command it runs, or null when what it runs has been
   * judged (a command line it was given, nothing at all, or a shell it opens).
   */
  const unwrap = (
    name: string,
    wrapper: Programs.Wrapper,
    words: ReadonlyArray<Syntax.Word>,
    start: number,
    depth: number,
    judging: Reading.Judging,
    line: Reading.Line
  ): number | null => {
    const { consumed } = judging
    consumed.add(words[start]!)
    if (name === "su" || name === "runuser") {
      // `su alice -c 'cmd'`: the command line may follow the user.
      const flag = words.findIndex((word, index) => index > start && /^(-c|--command|-C|--session-command)$/.test(word.text))
      const inline = words.slice(start + 1).find((word) => /^--(command|session-command)=/.test(word.text))
      const text = flag !== -1 ? words[flag + 1] : inline === undefined ? undefined : { ...inline, text: inline.text.slice(inline.text.indexOf("=") + 1) }
      if (text !== undefined) {
        if (flag !== -1) consumed.add(words[flag + 1]!)
        runText(text, name, depth)
        return null
      }
      if (name === "runuser") {
        const { options, index } = Programs.readOptions(words, start + 1, wrapper.valued)
        if (options.some((option) => option.name === "-u" || option.name === "--user") && index < words.length) return index
      }
      cannotRead(joined(words.slice(start)), "opens a shell that reads commands from standard input, which Ratchet does not see")
      return null
    }
    const { options, index } = Programs.readOptions(words, start + 1, wrapper.valued)
    for (const option of options) {
      if (option.value !== null) consumed.add(option.value)
      if (wrapper.writes.has(option.name) && option.value !== null) reading.write(option.value.text, line)
    }
    if (options.some((option) => wrapper.lookup.has(option.name))) return null
    const text = options.find((option) => wrapper.text.has(option.name) && option.value !== null)
    if (text !== undefined && text.value !== null) {
      runText(text.value, name, depth)
      // `script -c cmd file` writes its typescript to the file.
      if (name === "script" && words[index] !== undefined) reading.write(words[index]!.text, line)
      return null
    }
    if (name === "script") {
      cannotRead(joined(words.slice(start)), "opens a shell that reads commands from standard input, which Ratchet does not see")
      return null
    }
    // `flock 9` locks a descriptor and runs nothing.
    if (name === "flock" && /^[0-9]+$/.test(words[index]?.text ?? "")) return null
    const command = index + wrapper.leading
    for (const leading of words.slice(index, command)) consumed.add(leading)
    const shell = options.some((option) => wrapper.shell.has(option.name))
    if (command >= words.length) {
      if (shell || wrapper.shellWithout) cannotRead(joined(words.slice(start)), "opens a shell that reads commands from standard input, which Ratchet does not see")
      return null
    }
    if (wrapper.joined === "always" && !options.some((option) => option.name === "-x" || option.name === "--exec")) {
      // `watch cmd args` runs them as one line for `sh -c`.
      const line = words.slice(command)
      for (const word of line) consumed.add(word)
      runText({ ...line[0]!, text: joined(line), computed: line.some((word) => word.computed) }, name, depth)
      return null
    }
    return command
  }

  /**
   * Looks through a launcher of a package's program (`npx`, `npm exec`, `pnpm dlx`, `yarn <bin>`,
   * `bunx`): the index of the program it runs, `done` when it was judged here, null when `program`
   * is not a launcher.
   */
  const launch = (program: string, words: ReadonlyArray<Syntax.Word>, start: number, depth: number, consumed: Set<Syntax.Word>): number | "done" | null => {
    const sub = words[start + 1]?.text
    const launcher = ["npx", "pnpx", "bunx"].includes(program) || (["npm", "pnpm", "yarn", "bun"].includes(program) && ["exec", "x", "dlx"].includes(sub ?? ""))
    if (!launcher) {
      // `yarn ratchet …`, `pnpm node …`: the package manager runs the bin it names.
      if ((program === "yarn" || program === "pnpm") && sub !== undefined && (Programs.isRatchetName(sub) || sub === "node")) return start + 1
      return null
    }
    const from = ["npx", "pnpx", "bunx"].includes(program) ? start + 1 : start + 2
    const { options, index } = Programs.readOptions(words, from, Programs.launcherValued)
    for (const option of options) if (option.value !== null) consumed.add(option.value)
    const text = options.find((option) => Programs.launcherText.has(option.name) && option.value !== null)
    if (text !== undefined && text.value !== null) {
      runText(text.value, program, depth)
      return "done"
    }
    const launched = words[index]
    if (launched === undefined) return "done"
    if (Programs.launchedProgram(launched.text) === "ratchet") {
      const found = Programs.actOf(words.slice(index + 1))
      if (found !== null) act(found, joined(words.slice(start)))
      for (const word of words.slice(start)) consumed.add(word)
      reading.programs.push("ratchet")
      return "done"
    }
    return index
  }

  const walk: Reading.Walk = { follow, runText, judge }

  if (command.includes("\u0000")) cannotRead(command.split("\u0000").join("\\0"), "contains a NUL character, which a shell does not read as written")
  visit(command.length > maxLength ? command.slice(0, maxLength) : command, 0)
  if (command.length > maxLength) {
    // Past what is read as a shell reads it: judged by its words, and never allowed unseen.
    cannotRead(`${command.slice(0, 60)} …`, `is ${Math.ceil(command.length / 1024)} KiB long; Ratchet reads ${maxLength / 1024} KiB of a command as a shell does`)
    mention([command.slice(maxLength - 256)], true, (target) => target)
  }
  return {
    personOnly: reading.personOnly,
    writes: { paths: reading.paths, unknown: reading.state.unknown },
    destructive: reading.destructive,
    opaque: reading.opaque,
    touches: [...reading.touches],
    programs: reading.programs,
    trees: reading.trees,
    scripts: reading.scripts
  }
}
