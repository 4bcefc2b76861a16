/**
 * How particular programs are read beyond their name: shells (`-c` text, scripts, standard input),
 * interpreters (code as text), `eval` and `trap`, settings that choose programs (`export PATH=`),
 * awk and sed programs that run commands, `find -exec`, `xargs`, `git` (configuration that names
 * programs, `rebase --exec`, `submodule foreach`, `bisect run`) and the options of `tar`, `rsync`,
 * `sort`, `zip`, `man`, `make` and `nc` that name a program to run.
 *
 * @internal
 */
import * as Programs from "./shellPrograms.js"
import { joined, type Judging, type Line, maxDepth, type Reading, relativeTo, type Walk } from "./shellReading.js"
import type * as Syntax from "./shellSyntax.js"

/** Where a program is being read: what the reading found so far, the walk to call back, the command, its line and depth. */
export interface Site {
  readonly reading: Reading
  readonly walk: Walk
  readonly simple: Syntax.Command
  readonly line: Line
  readonly depth: number
  readonly judging: Judging
}

/** Programs that delete what they are given: fed by `find -exec` or `xargs`, they delete an unknown set. */
const deleters = new Set(["rm", "rmdir", "unlink", "shred"])

/** Options that make a bare shell or interpreter print and exit rather than read a program. */
const informational = new Set(["--version", "-V", "-v", "--help", "-h", "-help", "-version", "--test"])

/**
 * A shell: its `-c` text is read as a command line, its script operand is a script whose writes
 * are unknown, a here-document it is fed is read when literal; otherwise it reads commands
 * from standard input, which Ratchet cannot see.
 */
const shell = (program: string, words: ReadonlyArray<Syntax.Word>, start: number, site: Site): void => {
  const { reading, walk, simple, line, depth, judging } = site
  const { consumed } = judging
  const all = joined(words.slice(start))
  const stdin = simple.piped || simple.readsFile
  const { options, index } = Programs.readOptions(words, start + 1, Programs.shellValued, true)
  if (options.some((option) => option.name === "--rcfile" || option.name === "--init-file" || option.name === "--init-command")) {
    reading.cannotRead(all, "runs a start-up file or command Ratchet does not read")
  }
  for (const option of options) if (option.value !== null) consumed.add(option.value)
  const operand = words[index]
  if (operand !== undefined && Programs.isStandardInput(operand.text) && operand.text !== "-" && !options.some((option) => option.name === "-c")) {
    reading.cannotRead(all, "runs shell commands it reads from standard input, which Ratchet does not see")
    return
  }
  if (options.some((option) => option.name === "-c")) {
    if (operand !== undefined) {
      consumed.add(operand)
      walk.runText(operand, program, depth)
    }
    return
  }
  if (operand !== undefined && operand.text !== "-" && !options.some((option) => option.name === "-s" || option.name === "-i")) {
    if (Programs.isDynamic(operand)) reading.cannotRead(all, "runs a shell script from a computed file, which Ratchet cannot see")
    else if (reading.wrote(operand, line)) reading.cannotRead(all, "runs a script this command line writes, which Ratchet does not read")
    else reading.script(all)
    return
  }
  if (simple.inputs.length > 0 && !stdin) {
    for (const input of simple.inputs) {
      judging.inputs.add(input)
      if (input.literal) walk.follow(input.text, depth)
      else reading.cannotRead(all, "reads its commands from a here-document that expands when it runs, which Ratchet cannot see")
    }
    return
  }
  if (stdin || simple.inputs.length > 0 || options.length === 0 || !options.every((option) => informational.has(option.name))) {
    reading.cannotRead(all, "runs shell commands it reads from standard input, which Ratchet does not see")
  }
}

/**
 * An interpreter: code given as text or fed on standard input is beyond reading; a script file is
 * a script whose writes are unknown (and `node …/ratchet.mjs` is `ratchet`); a module by name is a
 * program.
 */
const interpreted = (program: string, interpreter: Programs.Interpreter, words: ReadonlyArray<Syntax.Word>, start: number, site: Site): void => {
  const { reading, simple, line, judging } = site
  const { consumed } = judging
  const all = joined(words.slice(start))
  const args = words.slice(start + 1)
  const stdin = simple.piped || simple.readsFile
  if (program === "deno") {
    const sub = args.find((word) => !word.text.startsWith("-"))
    if (sub === undefined || sub.text === "eval" || sub.text === "repl") reading.cannotRead(all, "runs code given as text or read from standard input, which Ratchet does not read")
    else if (["run", "test", "bench", "serve", "task", "x"].includes(sub.text) || /[./]/.test(sub.text)) reading.script(all)
    return
  }
  const { options, index } = Programs.readOptions(words, start + 1, interpreter.valued)
  // `node --import data:text/javascript,…` is code given as text too.
  const code = options.find((option) => interpreter.code.has(option.name) || (option.value !== null && /^data:/i.test(option.value.text)))
  if (code !== undefined) {
    reading.cannotRead(all, `runs code given as text (${program} ${code.name}), which Ratchet does not read`)
    return
  }
  if (options.some((option) => interpreter.module.has(option.name))) return
  const operand = words[index]
  if (operand !== undefined && !Programs.isStandardInput(operand.text)) {
    if (Programs.isRatchetName(operand.text)) {
      const found = Programs.actOf(words.slice(index + 1))
      if (found !== null) reading.act(found, all)
      for (const word of words.slice(start)) consumed.add(word)
      reading.programs.push("ratchet")
    } else if (Programs.isDynamic(operand)) reading.cannotRead(all, "runs a script from a computed file, which Ratchet cannot see")
    else if (reading.wrote(operand, line)) reading.cannotRead(all, "runs a script this command line writes, which Ratchet does not read")
    // `bun install` runs the package manager; `bun x.ts` a script.
    else if (program !== "bun" || /[./]/.test(operand.text)) reading.script(all)
    return
  }
  if (stdin || simple.inputs.length > 0 || operand !== undefined || !options.some((option) => informational.has(option.name))) {
    reading.cannotRead(all, "runs code it reads from standard input, which Ratchet does not read")
  }
}

/**
 * Judges a program that is not a wrapper or a launcher: what it runs beyond what the text shows
 * (code it is given, commands named in its options, a command line it runs).
 *
 * @internal
 */
export const run = (program: string, words: ReadonlyArray<Syntax.Word>, start: number, site: Site): void => {
  const { reading, walk, depth, judging } = site
  const { consumed } = judging
  const all = joined(words.slice(start))
  const args = words.slice(start + 1)
  const runner = Programs.runners[program]
  if (runner !== undefined) {
    reading.cannotRead(all, runner)
    return
  }
  if (Programs.shells.has(program)) return shell(program, words, start, site)
  const interpreter = Programs.interpreterOf(program) ?? (program === "tsx" || program === "ts-node" ? Programs.interpreterOf("node") : null)
  if (interpreter !== null) return interpreted(program, interpreter, words, start, site)
  switch (program) {
    case "eval": {
      for (const word of args) consumed.add(word)
      if (args.length > 0) walk.runText({ ...args[0]!, text: joined(args), computed: args.some((word) => word.computed) }, "eval", depth)
      return
    }
    case "trap": {
      const handler = words[Programs.readOptions(words, start + 1, new Set()).index]
      if (handler !== undefined && handler.text !== "-") {
        consumed.add(handler)
        walk.runText(handler, "trap", depth)
      }
      return
    }
    case "export":
    case "declare":
    case "typeset":
    case "local":
    case "readonly": {
      for (const word of args) {
        const name = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(word.text)?.[1]
        if (name !== undefined && Programs.isProgramVariable(name)) reading.cannotRead(word.text, `sets ${name}, which chooses the programs that run`)
      }
      return
    }
    case "awk":
    case "gawk":
    case "mawk":
    case "nawk": {
      const valued = new Set(["-f", "--file", "-v", "--assign", "-F", "--field-separator", "-e", "--source", "-i", "--include", "-l", "--load", "-E", "--exec"])
      const { options, index } = Programs.readOptions(words, start + 1, valued)
      const files = options.filter((option) => ["-f", "--file", "-E", "--exec"].includes(option.name))
      if (files.some((option) => option.value !== null && (option.value.computed || Programs.isStandardInput(option.value.text)))) {
        reading.cannotRead(all, "runs an awk program it reads from standard input or a computed file, which Ratchet cannot see")
      }
      const fromFile = files.length > 0
      const texts = [...options.filter((option) => option.name === "-e" || option.name === "--source").map((option) => option.value), fromFile ? null : words[index] ?? null]
      for (const text of texts) {
        if (text === null) continue
        if (text.computed) reading.cannotRead(all, "runs an awk program that is computed when it runs, which Ratchet cannot see")
        const awk = Programs.awkProgram(text.text)
        if (awk.runs) reading.cannotRead(all, "runs commands from its awk program (system, pipes), which Ratchet does not read")
        reading.state.unknown ||= awk.writes
      }
      return
    }
    case "sed": {
      const scriptFile = args.findIndex((word) => word.text === "-f" || word.text === "--file")
      const file = scriptFile === -1 ? args.find((word) => word.text.startsWith("--file="))?.text.slice(7) : args[scriptFile + 1]?.text
      if (Programs.sedRuns(args.map((word) => word.text))) reading.cannotRead(all, "runs commands from its sed script (the e command), which Ratchet does not read")
      else if (file !== undefined && Programs.isStandardInput(file)) reading.cannotRead(all, "reads its sed script from standard input, which Ratchet does not see")
      return
    }
    case "sqlite3":
    case "psql":
    case "mysql":
    case "mariadb":
      return database(words, start, site)
    case "find":
      return find(words, start, site)
    case "xargs":
      return xargs(words, start, site)
    case "git":
      return git(words, start, site)
    case "tar":
      if (args.some((word) => /^--(use-compress-program|to-command|checkpoint-action|info-script|new-volume-script|rsh-command)(=|$)/.test(word.text) || /^-[A-Za-z]*[IF]/.test(word.text))) {
        reading.cannotRead(all, "runs a program named in its options, which Ratchet does not read")
      }
      return
    case "rsync":
      if (args.some((word) => /^--(rsh|rsync-path)(=|$)/.test(word.text) || /^-[A-Za-z]*e/.test(word.text))) reading.cannotRead(all, "runs a program named in its options, which Ratchet does not read")
      return
    case "sort":
      if (args.some((word) => word.text.startsWith("--compress-program"))) reading.cannotRead(all, "runs a program named in its options, which Ratchet does not read")
      return
    case "zip":
      if (args.some((word) => word.text === "-TT" || word.text.startsWith("--unzip-command"))) reading.cannotRead(all, "runs a program named in its options, which Ratchet does not read")
      return
    case "man":
      if (args.some((word) => /^(-P|--pager|-H|--html)/.test(word.text))) reading.cannotRead(all, "runs a program named in its options, which Ratchet does not read")
      return
    case "make":
      if (args.some((word) => word.text === "-E" || word.text.startsWith("--eval"))) reading.cannotRead(all, "evaluates make text given on the command line, which Ratchet does not read")
      return
    case "nc":
    case "ncat":
    case "netcat":
      if (args.some((word) => /^(-[A-Za-z]*[ec]|--exec|--sh-exec|--lua-exec)/.test(word.text))) reading.cannotRead(all, "runs a program for each connection, which Ratchet does not read")
      return
    default:
      return
  }
}

/** Database shell commands that run a program: psql's `\!` and `\o |`, sqlite3's `.shell`, `.system` and `.once |`, mysql's `system`, `COPY … PROGRAM`. */
const databaseEscape = /\\!|\\o\s*\||(^|\n|;)\s*\.(shell|system)\b|\.(once|output)\s+['"]?\||(^|\n|;)\s*system\b|\bprogram\b/i

/**
 * A database shell: its own commands can run a program. The text it is given (options, a literal
 * here-document) is looked through for those; text it reads from a pipe, a file or a computed
 * word is beyond reading.
 */
const database = (words: ReadonlyArray<Syntax.Word>, start: number, site: Site): void => {
  const { reading, simple } = site
  const all = joined(words.slice(start))
  const texts = [...words.slice(start + 1), ...simple.inputs.map((input) => ({ text: input.text, computed: !input.literal }))]
  if (simple.piped || simple.readsFile || texts.some((word) => word.computed)) {
    reading.cannotRead(all, "runs database commands Ratchet cannot see, which can run other programs")
  } else if (texts.some((word) => databaseEscape.test(word.text))) {
    reading.cannotRead(all, "runs a program from its database commands, which Ratchet does not read")
  }
}

/** `find … -exec cmd {} ;`: each command it runs is judged, with `{}` standing for what it finds. */
const find = (words: ReadonlyArray<Syntax.Word>, start: number, site: Site): void => {
  const { reading, walk, simple, line, depth, judging } = site
  const args = words.slice(start + 1)
  const firstExpression = args.findIndex((word) => /^[-(!]/.test(word.text))
  const roots = (firstExpression === -1 ? args : args.slice(0, firstExpression)).map((word) => word.text)
  for (let k = 0; k < args.length; k++) {
    const word = args[k]!
    if (/^-(exec|execdir|ok|okdir)$/.test(word.text)) {
      let end = k + 1
      while (end < args.length && args[end]!.text !== ";" && args[end]!.text !== "+") end++
      const segment = args.slice(k + 1, end)
      for (const part of [word, ...segment]) judging.consumed.add(part)
      const found = segment.map((part) => (part.text.includes("{}") ? { ...part, computed: true } : part))
      if (depth < maxDepth) walk.judge(found, { ...simple, piped: false, inputs: [], readsFile: false }, line, depth + 1, { ...judging, fed: true })
      else reading.cannotRead(joined(segment), "nests programs that run programs deeper than Ratchet reads")
      if (deleters.has(Programs.basename(segment[0]?.text ?? ""))) reading.destructive.push(`${joined(words.slice(start))} deletes what it finds`)
      k = end
    } else if (word.text === "-delete") {
      for (const root of roots.length === 0 ? ["."] : roots) reading.write(root, line)
      reading.state.unknown = true
      reading.destructive.push(`${joined(words.slice(start))} deletes what it finds`)
    } else if (/^-(fprint|fprint0|fprintf|fls)$/.test(word.text) && args[k + 1] !== undefined) {
      reading.write(args[k + 1]!.text, line)
    }
  }
}

/** `xargs cmd args`: the command it runs, with operands it reads (and `{}` where it puts them). */
const xargs = (words: ReadonlyArray<Syntax.Word>, start: number, site: Site): void => {
  const { reading, walk, line, depth, judging } = site
  const valued = new Set(["-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"])
  const { options, index } = Programs.readOptions(words, start + 1, valued)
  for (const option of options) if (option.value !== null) judging.consumed.add(option.value)
  const replace = options.find((option) => option.name === "-I")?.value?.text ?? (options.some((option) => option.name === "-i" || option.name === "--replace") ? "{}" : null)
  const inner = words.slice(index).map((word) => (replace !== null && word.text.includes(replace) ? { ...word, computed: true } : word))
  if (inner.length === 0) return
  for (const word of words.slice(index)) judging.consumed.add(word)
  if (deleters.has(Programs.basename(inner[0]!.text))) reading.destructive.push(`${joined(words.slice(start))} deletes what it reads`)
  const simple: Syntax.Command = { words: inner, redirects: [], inputs: [], readsFile: false, piped: false }
  if (depth < maxDepth) walk.judge(inner, simple, line, depth + 1, { ...judging, fed: true })
  else reading.cannotRead(joined(inner), "nests programs that run programs deeper than Ratchet reads")
}

/** `git`: configuration that names programs, and the subcommands that run command lines. */
const git = (words: ReadonlyArray<Syntax.Word>, start: number, site: Site): void => {
  const { reading, walk, line, depth, judging } = site
  const all = joined(words.slice(start))
  const { options, index } = Programs.readOptions(words, start + 1, Programs.gitValued)
  for (const option of options) {
    if (option.name === "-c" && option.value !== null && (option.value.computed || !Programs.isHarmlessGitConfig(option.value.text))) {
      reading.cannotRead(all, "sets git configuration that can name a program to run, which Ratchet does not read")
    }
    if (option.name === "--exec-path" || option.name === "--config-env") reading.cannotRead(all, "chooses the programs git runs")
    // `git -C dir …` acts in dir: the place it is handed, like any program's operand.
    if (["-C", "--git-dir", "--work-tree"].includes(option.name) && option.value !== null) reading.mention([option.value.text], true, relativeTo(line))
  }
  const sub = words[index]?.text
  const args = words.slice(index + 1)
  const valueOf = (names: RegExp): ReadonlyArray<Syntax.Word> =>
    args.flatMap((word, k) => {
      const equals = word.text.indexOf("=")
      if (word.text.startsWith("--") && equals !== -1 && names.test(word.text.slice(0, equals))) return [{ ...word, text: word.text.slice(equals + 1) }]
      return names.test(word.text) && args[k + 1] !== undefined ? [args[k + 1]!] : []
    })
  const commandLines = (names: RegExp) => {
    for (const text of valueOf(names)) {
      judging.consumed.add(text)
      walk.runText(text, `git ${sub}`, depth)
    }
  }
  switch (sub) {
    case "rebase":
      return commandLines(/^(-x|--exec)$/)
    case "filter-branch":
      return commandLines(/^--(tree|index|msg|env|commit|parent|tag-name)-filter$/)
    case "submodule": {
      const foreach = args.findIndex((word) => word.text === "foreach")
      if (foreach === -1) return
      const rest = args.slice(foreach + 1).filter((word) => !word.text.startsWith("-"))
      for (const word of rest) judging.consumed.add(word)
      if (rest.length > 0) walk.runText({ ...rest[0]!, text: joined(rest), computed: rest.some((word) => word.computed) }, "git submodule foreach", depth)
      return
    }
    case "bisect":
      if (args[0]?.text === "run" && args.length > 1) {
        for (const word of args) judging.consumed.add(word)
        if (depth < maxDepth) walk.judge(args.slice(1), { words: args.slice(1), redirects: [], inputs: [], readsFile: false, piped: false }, line, depth + 1, judging)
      }
      return
    case "config": {
      const operands = args.filter((word) => !word.text.startsWith("-"))
      const lookup = args.some((word) => /^--(get|get-all|get-regexp|list|unset|unset-all|show-origin|name-only)$|^-l$/.test(word.text))
      if (!lookup && operands.length >= 2 && (operands[0]!.computed || operands[1]!.computed || !Programs.isHarmlessGitConfig(`${operands[0]!.text}=${operands[1]!.text}`))) {
        reading.cannotRead(all, "sets git configuration that can name a program to run, which Ratchet does not read")
      }
      return
    }
    case "difftool":
    case "mergetool":
      if (args.some((word) => /^(-x|--extcmd)/.test(word.text))) reading.cannotRead(all, "runs a program named in its options, which Ratchet does not read")
      return
    default:
      if (args.some((word) => /^--(upload-pack|receive-pack|exec)(=|$)/.test(word.text) || (sub === "clone" && word.text === "-u"))) {
        reading.cannotRead(all, "runs a program named in its options, which Ratchet does not read")
      }
      return
  }
}
