/**
 * What a shell command an agent asks to run would do, as far as its text says: whether it would
 * approve something on the user's behalf, which paths it would write, whether it is destructive.
 *
 * The text is read as a POSIX shell reads it (quotes, escapes, `;` `&&` `||` `|` `&` and line
 * ends, redirections, `sh -c '…'`, `$(…)` and backquotes), so `'rat''chet' approve` and
 * `bash -c "ratchet approve"` are recognised for what they are. It is a seatbelt, not a sandbox:
 * a command whose program is computed at run time (`$(echo ratchet) approve`) is judged by its
 * words, and a program that writes without saying so (a build, a test run) is not a write here.
 * The run's scope check after each step is the enforcement; this classification is the early
 * warning, and the threat model (the OS user is the boundary) is unchanged.
 *
 * Linear in the length of the text; nesting (`sh -c` inside `$(…)` …) is bounded.
 *
 * @since 0.1.0
 */

/**
 * One simple command: its words after quote removal, the targets of its output redirections,
 * and whether its program word was computed (an expansion the text cannot resolve).
 *
 * @since 0.1.0
 * @category models
 */
export interface SimpleCommand {
  readonly words: ReadonlyArray<string>
  readonly redirects: ReadonlyArray<string>
  readonly computedProgram: boolean
}

/**
 * An approval the command would give: which `ratchet` subcommand, in which words.
 *
 * @since 0.1.0
 * @category models
 */
export interface Approval {
  readonly subcommand: "approve" | "reopen" | "unblock --resolve"
  readonly text: string
}

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
  readonly commands: ReadonlyArray<SimpleCommand>
  readonly approvals: ReadonlyArray<Approval>
  readonly writes: Writes
  /** Why the command is destructive (cannot be undone from the work tree), or null. */
  readonly destructive: ReadonlyArray<string>
  /** Every word and redirection target, for callers that look for paths the command mentions. */
  readonly mentions: ReadonlyArray<string>
  /** The program of every simple command, wrappers (`sudo`, `env`, …) looked through. */
  readonly programs: ReadonlyArray<string>
}

/** How deep `sh -c`, `$(…)` and backquotes nest before the rest is judged by its words alone. */
const maxDepth = 4

/** The command text longer than this is judged by its first this-many characters. */
const maxLength = 64 * 1024

// ---------------------------------------------------------------------------------------------
// Lexing
// ---------------------------------------------------------------------------------------------

interface Word {
  text: string
  /** Part of the word came from an expansion (`$x`, `$(…)`, backquotes) the text cannot resolve. */
  computed: boolean
  /** Any part of the word was quoted (so `>` inside it is not an operator). */
  quoted: boolean
}

type Token =
  | { readonly _tag: "Word"; readonly word: Word }
  | { readonly _tag: "Separator" }
  | { readonly _tag: "Redirect"; readonly output: boolean; readonly duplicates: boolean }

/**
 * The delimiter of a here-document whose `<<` ends just before `start`: the word after an optional
 * `-` and blanks, quotes removed; with the index after it and whether tabs are stripped (`<<-`).
 */
const heredocDelimiter = (text: string, start: number): { readonly delimiter: string; readonly end: number; readonly tabs: boolean } => {
  let i = start
  const tabs = text[i] === "-"
  if (tabs) i++
  while (text[i] === " " || text[i] === "\t") i++
  let delimiter = ""
  while (i < text.length && !" \t\n;&|<>()".includes(text[i]!)) {
    const char = text[i]!
    if (char === "'" || char === "\"") {
      const close = text.indexOf(char, i + 1)
      delimiter += text.slice(i + 1, close === -1 ? text.length : close)
      i = close === -1 ? text.length : close + 1
      continue
    }
    if (char === "\\") {
      delimiter += text[i + 1] ?? ""
      i += 2
      continue
    }
    delimiter += char
    i++
  }
  return { delimiter, end: i, tabs }
}

/**
 * The index after the bodies of the pending here-documents, which start at `start` (just after a
 * line end): each runs to a line that is its delimiter. The bodies are input, never commands.
 */
const skipHeredocs = (text: string, start: number, pending: ReadonlyArray<{ readonly delimiter: string; readonly tabs: boolean }>): number => {
  let i = start
  for (const { delimiter, tabs } of pending) {
    while (i < text.length) {
      const end = text.indexOf("\n", i)
      const line = text.slice(i, end === -1 ? text.length : end)
      i = end === -1 ? text.length : end + 1
      if ((tabs ? line.replace(/^\t+/, "") : line) === delimiter) break
    }
  }
  return i
}

/** The index of the `)` closing the `$(` whose body starts at `start` (or the end of the text). */
const substitutionEnd = (text: string, start: number): number => {
  let depth = 1
  let i = start
  let pending: Array<{ readonly delimiter: string; readonly tabs: boolean }> = []
  while (i < text.length) {
    const char = text[i]!
    if (char === "\\") {
      i += 2
      continue
    }
    if (char === "'") {
      const close = text.indexOf("'", i + 1)
      i = close === -1 ? text.length : close + 1
      continue
    }
    if (char === "\"") {
      i++
      while (i < text.length && text[i] !== "\"") i += text[i] === "\\" ? 2 : 1
      i++
      continue
    }
    if (char === "<" && text[i + 1] === "<" && text[i + 2] !== "<") {
      const heredoc = heredocDelimiter(text, i + 2)
      if (heredoc.delimiter !== "") pending.push(heredoc)
      i = heredoc.end
      continue
    }
    if (char === "\n" && pending.length > 0) {
      i = skipHeredocs(text, i + 1, pending)
      pending = []
      continue
    }
    if (char === "(") depth++
    if (char === ")") {
      depth--
      if (depth === 0) return i
    }
    i++
  }
  return text.length
}

/**
 * Splits `text` into words and operators; the bodies of command substitutions are returned
 * separately so they are classified as commands of their own.
 */
const lex = (text: string): { readonly tokens: ReadonlyArray<Token>; readonly nested: ReadonlyArray<string> } => {
  const tokens: Array<Token> = []
  const nested: Array<string> = []
  let word: Word | null = null
  const start = (): Word => (word ??= { text: "", computed: false, quoted: false })
  const finish = () => {
    if (word !== null) tokens.push({ _tag: "Word", word })
    word = null
  }
  let pending: Array<{ readonly delimiter: string; readonly tabs: boolean }> = []
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (char === "$" && text[i + 1] === "'") {
      // ANSI-C quoting: `$'approve'` is the word approve.
      const w = start()
      w.quoted = true
      i += 2
      while (i < text.length && text[i] !== "'") {
        if (text[i] === "\\" && i + 1 < text.length) {
          w.text += text[i + 1]
          i += 2
          continue
        }
        w.text += text[i]
        i++
      }
      i++
      continue
    }
    if (char === "$" && text[i + 1] === "\"") {
      // `$"…"` (locale quoting) reads as `"…"`.
      i++
      continue
    }
    if (char === "\n" && pending.length > 0) {
      finish()
      tokens.push({ _tag: "Separator" })
      i = skipHeredocs(text, i + 1, pending)
      pending = []
      continue
    }
    if (char === "\\") {
      // A backslash-newline joins lines; otherwise the next character is literal.
      if (text[i + 1] === "\n") {
        i += 2
        continue
      }
      const next = text[i + 1]
      if (next !== undefined) {
        const w = start()
        w.text += next
        w.quoted = true
      }
      i += 2
      continue
    }
    if (char === "'") {
      const close = text.indexOf("'", i + 1)
      const w = start()
      w.text += text.slice(i + 1, close === -1 ? text.length : close)
      w.quoted = true
      i = close === -1 ? text.length : close + 1
      continue
    }
    if (char === "\"") {
      const w = start()
      w.quoted = true
      i++
      while (i < text.length && text[i] !== "\"") {
        const inner = text[i]!
        if (inner === "\\" && i + 1 < text.length && "\"\\$`\n".includes(text[i + 1]!)) {
          if (text[i + 1] !== "\n") w.text += text[i + 1]
          i += 2
          continue
        }
        if (inner === "$" && text[i + 1] === "(") {
          const end = substitutionEnd(text, i + 2)
          nested.push(text.slice(i + 2, end))
          w.computed = true
          i = end + 1
          continue
        }
        if (inner === "`") {
          const close = text.indexOf("`", i + 1)
          nested.push(text.slice(i + 1, close === -1 ? text.length : close))
          w.computed = true
          i = close === -1 ? text.length : close + 1
          continue
        }
        if (inner === "$" && /[A-Za-z_{0-9@*#?$!-]/.test(text[i + 1] ?? "")) w.computed = true
        w.text += inner
        i++
      }
      i++
      continue
    }
    if (char === "$" && text[i + 1] === "(") {
      const end = substitutionEnd(text, i + 2)
      nested.push(text.slice(i + 2, end))
      start().computed = true
      i = end + 1
      continue
    }
    if (char === "`") {
      const close = text.indexOf("`", i + 1)
      nested.push(text.slice(i + 1, close === -1 ? text.length : close))
      start().computed = true
      i = close === -1 ? text.length : close + 1
      continue
    }
    if (char === "$" && /[A-Za-z_{0-9@*#?$!-]/.test(text[i + 1] ?? "")) {
      const w = start()
      w.computed = true
      w.text += char
      i++
      continue
    }
    if (char === "#" && word === null) {
      // A comment runs to the end of the line.
      const end = text.indexOf("\n", i)
      i = end === -1 ? text.length : end
      continue
    }
    if (char === " " || char === "\t") {
      finish()
      i++
      continue
    }
    const groups = word === null && (char === "{" && /\s/.test(text[i + 1] ?? "") || char === "}")
    if (char === "\n" || char === ";" || char === "|" || char === "&" || char === "(" || char === ")" || groups) {
      // `&>` and `&>>` redirect both streams; `>&` duplicates a descriptor (handled below).
      if (char === "&" && text[i + 1] === ">") {
        finish()
        const append = text[i + 2] === ">"
        tokens.push({ _tag: "Redirect", output: true, duplicates: false })
        i += append ? 3 : 2
        continue
      }
      finish()
      tokens.push({ _tag: "Separator" })
      i += (char === "|" || char === "&") && text[i + 1] === char ? 2 : 1
      continue
    }
    if (char === ">" || char === "<") {
      // A descriptor number right before the operator belongs to it (`2>`), not to the words.
      const current = word as Word | null
      if (current !== null && !current.quoted && !current.computed && /^[0-9]+$/.test(current.text)) word = null
      else finish()
      const output = char === ">"
      let j = i + 1
      if (!output && text[j] === ">") {
        // `<>` opens the file for reading and writing.
        tokens.push({ _tag: "Redirect", output: true, duplicates: false })
        i = j + 1
        continue
      }
      if (text[j] === ">" || text[j] === "|") j++
      if (!output && text[j] === "<") {
        // A here-string (`<<<`) is input; a here-document's body (after this line) is skipped.
        if (text[j + 1] === "<") {
          tokens.push({ _tag: "Redirect", output: false, duplicates: true })
          i = j + 2
          continue
        }
        const heredoc = heredocDelimiter(text, j + 1)
        if (heredoc.delimiter !== "") pending.push(heredoc)
        i = heredoc.end
        continue
      }
      const duplicates = text[j] === "&"
      if (duplicates) j++
      tokens.push({ _tag: "Redirect", output, duplicates })
      i = j
      continue
    }
    start().text += char
    i++
  }
  finish()
  return { tokens, nested }
}

/** The simple commands of a token stream (redirection targets taken out of the words). */
const simpleCommands = (tokens: ReadonlyArray<Token>): ReadonlyArray<SimpleCommand> => {
  const commands: Array<SimpleCommand> = []
  let words: Array<Word> = []
  let redirects: Array<string> = []
  let pending: { readonly output: boolean; readonly duplicates: boolean } | null = null
  const flush = () => {
    if (words.length > 0 || redirects.length > 0) {
      // The program is the first word that is not a leading assignment (`A=1 B=2 cmd`).
      const program = words.find((word) => !isAssignment(word))
      // A brace expansion (`{ratchet,}`) is a program the text names only after expansion.
      const computedProgram = program !== undefined && (program.computed || (!program.quoted && /\{[^}]*,[^}]*\}/.test(program.text)))
      commands.push({ words: words.map((word) => word.text), redirects, computedProgram })
    }
    words = []
    redirects = []
  }
  for (const token of tokens) {
    if (token._tag === "Separator") {
      pending = null
      flush()
      continue
    }
    if (token._tag === "Redirect") {
      pending = token
      continue
    }
    if (pending !== null) {
      // `>&2` duplicates a descriptor; `>&file` (bash) writes the file.
      const duplicatesDescriptor = pending.duplicates && /^[0-9-]+$/.test(token.word.text)
      if (pending.output && !duplicatesDescriptor) redirects.push(token.word.text)
      pending = null
      continue
    }
    words.push(token.word)
  }
  flush()
  return commands
}

const isAssignment = (word: Word): boolean => !word.quoted && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word.text)

// ---------------------------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------------------------

const basename = (word: string): string => word.slice(word.lastIndexOf("/") + 1)

/** Programs that run the rest of their words as a command. */
const wrappers = new Set(["sudo", "doas", "env", "command", "exec", "nohup", "time", "nice", "ionice", "timeout", "stdbuf", "xargs", "watch", "builtin", "setsid", "chronic", "unbuffer", "flock", "caffeinate"])

/** Reserved words that precede a command (`if cmd; then …`, `! cmd`, `while cmd; do …`). */
const keywords = new Set(["!", "if", "then", "elif", "else", "do", "while", "until", "coproc", "time", "{", "}"])

/** Wrapper options that take a value. */
const valued = new Set(["-n", "-u", "-g", "-s", "-k", "-i", "-o", "-e", "-C", "-I", "-d", "-P", "-L", "-a", "-E", "-S", "--chdir", "--user", "--group"])

/** The words of the command a wrapper runs: its options (and, for some, their values) skipped. */
const unwrap = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  let index = 0
  for (let guard = 0; guard < 16; guard++) {
    while (index < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index]!) || keywords.has(words[index]!))) index++
    const program = words[index] === undefined ? "" : basename(words[index]!)
    // `flock <file> cmd` takes its lock file first.
    if (!wrappers.has(program)) return words.slice(index)
    index++
    while (index < words.length && words[index]!.startsWith("-")) {
      const option = words[index]!
      index++
      if (valued.has(option) && index < words.length) index++
    }
    if ((program === "timeout" && /^[0-9.]+[smhd]?$/.test(words[index] ?? "")) || (program === "flock" && index < words.length)) index++
  }
  return words.slice(index)
}

/** `ratchet`, or a launcher of it (`npx ratchet`, `npm exec ratchet --`, `node …/ratchet.js`). */
const ratchetArguments = (words: ReadonlyArray<string>): ReadonlyArray<string> | null => {
  const program = words[0] === undefined ? "" : basename(words[0])
  if (/^ratchet(\.[cm]?js)?$/.test(program)) return words.slice(1)
  const launched = (from: number): ReadonlyArray<string> | null => {
    // The first word naming ratchet (or its package) after the launcher and its options.
    for (let index = from; index < words.length; index++) {
      const word = words[index]!
      if (word === "--" || word.startsWith("-")) continue
      if (/(^|\/)ratchet(@[^/]*)?$/.test(word)) return words.slice(index + 1)
      if (/^@ratchet\/cli(@[^/]*)?$/.test(word)) {
        // `npx -p @ratchet/cli ratchet approve`: the package, then the bin.
        return words[index + 1] !== undefined && /(^|\/)ratchet$/.test(words[index + 1]!) ? words.slice(index + 2) : words.slice(index + 1)
      }
    }
    return null
  }
  if (program === "npx" || program === "bunx" || program === "pnpx") return launched(1)
  if ((program === "npm" || program === "pnpm" || program === "yarn") && ["exec", "x", "dlx"].includes(words[1] ?? "")) return launched(2)
  if ((program === "yarn" || program === "pnpm") && /(^|\/)ratchet$/.test(words[1] ?? "")) return words.slice(2)
  if (program === "node" || program === "tsx" || program === "bun") {
    const script = words.slice(1).find((word) => !word.startsWith("-"))
    return script !== undefined && /(^|\/)(ratchet(\.[cm]?js)?|ratchet\/bin\.[cm]?js|apps\/cli\/.*\.[cm]?js)$/.test(script)
      ? words.slice(words.indexOf(script) + 1)
      : null
  }
  return null
}

/** The approval a `ratchet` invocation would give, given its arguments. */
const approvalOf = (args: ReadonlyArray<string>): Approval["subcommand"] | null => {
  const first = args.find((word) => !word.startsWith("-"))
  // `{approve,}` (brace expansion) names approve as surely as `approve` does.
  const subcommand = first === undefined ? undefined : first.replace(/[{}]/g, "").split(",").find((part) => part === "approve" || part === "reopen" || part === "unblock") ?? first
  if (subcommand === "approve") return "approve"
  if (subcommand === "reopen") return "reopen"
  if (subcommand === "unblock" && args.some((word) => word === "--resolve" || word.startsWith("--resolve="))) return "unblock --resolve"
  return null
}

const operands = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const index = args.indexOf("--")
  const before = index === -1 ? args : args.slice(0, index)
  const after = index === -1 ? [] : args.slice(index + 1)
  return [...before.filter((word) => !word.startsWith("-")), ...after]
}

const hasFlag = (args: ReadonlyArray<string>, short: string, long: ReadonlyArray<string>): boolean =>
  args.some((word) => long.includes(word) || (/^-[A-Za-z]+$/.test(word) && word.includes(short)))

interface Effects {
  readonly paths: ReadonlyArray<string>
  readonly unknown: boolean
  readonly destructive: ReadonlyArray<string>
}

const none: Effects = { paths: [], unknown: false, destructive: [] }

/** The writes and destructive effects of one program with its arguments. */
const effectsOf = (words: ReadonlyArray<string>): Effects => {
  const program = words[0] === undefined ? "" : basename(words[0])
  const args = words.slice(1)
  const text = words.join(" ")
  switch (program) {
    case "rm":
    case "rmdir":
    case "unlink":
    case "shred": {
      const recursive = hasFlag(args, "r", ["--recursive"]) || hasFlag(args, "R", [])
      const force = hasFlag(args, "f", ["--force"])
      return { paths: operands(args), unknown: false, destructive: recursive && force || program === "shred" ? [`${text} deletes without asking`] : [] }
    }
    case "mv":
      return { paths: operands(args), unknown: false, destructive: [] }
    case "cp":
    case "ln":
    case "install":
    case "rsync": {
      const targets = operands(args)
      const flag = args.findIndex((word) => word === "-t" || word === "--target-directory")
      const target = args.find((word) => word.startsWith("--target-directory="))?.slice("--target-directory=".length) ??
        (flag !== -1 ? args[flag + 1] : targets[targets.length - 1])
      const deletes = program === "rsync" && args.some((word) => word.startsWith("--delete"))
      return { paths: target === undefined ? [] : [target], unknown: false, destructive: deletes ? [`${text} deletes files at the target`] : [] }
    }
    case "touch":
    case "mkdir":
    case "tee":
    case "truncate":
    case "mkfifo":
      return { paths: operands(args).filter((word) => program !== "truncate" || !/^[0-9]+[KMG]?$/.test(word)), unknown: false, destructive: [] }
    case "chmod":
    case "chown":
    case "chgrp": {
      const rest = operands(args)
      return { paths: rest.slice(1), unknown: false, destructive: hasFlag(args, "R", ["--recursive"]) ? [`${text} changes a whole tree`] : [] }
    }
    case "dd": {
      const output = args.find((word) => word.startsWith("of="))
      return { paths: output === undefined ? [] : [output.slice(3)], unknown: false, destructive: output !== undefined && output.startsWith("of=/dev/") ? [`${text} writes a device`] : [] }
    }
    case "sed":
    case "perl":
    case "ruby": {
      const inPlace = args.some((word) => word === "-i" || word.startsWith("-i") || word === "--in-place" || word.startsWith("--in-place=") || (/^-[A-Za-z]+$/.test(word) && word.includes("i")))
      if (!inPlace) return none
      // The files follow the script (the first operand) unless the script came by -e.
      const scripted = args.some((word) => word === "-e" || word === "--expression" || word.startsWith("-e"))
      const rest = operands(args.filter((_, index) => !(index > 0 && ["-e", "--expression", "-f"].includes(args[index - 1]!))))
      return { paths: scripted ? rest : rest.slice(1), unknown: false, destructive: [] }
    }
    case "patch":
    case "tar":
    case "unzip":
    case "make":
      return program === "patch" || (program === "tar" && args.some((word) => /^-?[A-Za-z]*x/.test(word) || word === "--extract")) || program === "unzip"
        ? { paths: [], unknown: true, destructive: [] }
        : none
    case "find":
      return args.includes("-delete") || args.includes("-exec") && args.some((word) => word === "rm")
        ? { paths: [], unknown: true, destructive: [`${text} deletes what it finds`] }
        : none
    case "mkfs":
    case "fdisk":
    case "wipefs":
      return { paths: [], unknown: true, destructive: [`${text} rewrites a disk`] }
    case "git":
      return gitEffects(args, text)
    default:
      if (program.startsWith("mkfs.")) return { paths: [], unknown: true, destructive: [`${text} rewrites a disk`] }
      return none
  }
}

/** Options of `git` itself that take a value (`git -C dir status`). */
const gitValueOptions = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace"])

const gitEffects = (all: ReadonlyArray<string>, text: string): Effects => {
  let index = 0
  while (index < all.length && all[index]!.startsWith("-")) index += gitValueOptions.has(all[index]!) ? 2 : 1
  const subcommand = all[index]
  const args = all.slice(index + 1)
  switch (subcommand) {
    case "reset":
      return { paths: [], unknown: true, destructive: args.includes("--hard") || args.includes("--merge") ? [`${text} discards uncommitted changes`] : [] }
    case "clean":
      // Without -f git refuses to delete anything.
      return hasFlag(args, "f", ["--force"]) ? { paths: [], unknown: true, destructive: [`${text} deletes untracked files`] } : none
    case "checkout":
    case "switch":
    case "restore": {
      // A new branch from here (`checkout -b`, `switch -c`) and the index alone (`restore --staged`) leave the files as they are.
      if (args.some((word) => ["-b", "-B", "-c", "-C", "--orphan"].includes(word)) && !args.includes("--")) return none
      if (subcommand === "restore" && args.includes("--staged") && !args.includes("--worktree") && !args.includes("-W")) return none
      const discards = args.includes("--") || args.includes(".") || args.includes("--force") || hasFlag(args, "f", []) || subcommand === "restore"
      return { paths: [], unknown: true, destructive: discards ? [`${text} overwrites changes in the work tree`] : [] }
    }
    case "push":
      return {
        paths: [],
        unknown: false,
        destructive: args.some((word) => word === "--force" || word === "-f" || word.startsWith("--force-with-lease") || word.startsWith("+") || word === "--delete" || word === "--mirror")
          ? [`${text} rewrites or deletes history on the remote`]
          : []
      }
    case "branch":
      return { paths: [], unknown: false, destructive: args.includes("-D") || (args.includes("--delete") && args.includes("--force")) ? [`${text} deletes a branch that may not be merged`] : [] }
    case "stash":
      if (args[0] === "list" || args[0] === "show") return none
      return { paths: [], unknown: true, destructive: args[0] === "drop" || args[0] === "clear" ? [`${text} drops stashed changes`] : [] }
    case "rm":
    case "mv":
      return { paths: operands(args), unknown: false, destructive: [] }
    case "apply":
    case "am":
    case "merge":
    case "rebase":
    case "pull":
    case "cherry-pick":
    case "revert":
      return { paths: [], unknown: true, destructive: [] }
    default:
      return none
  }
}

// ---------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------

/** Shells whose `-c` argument is a command line of its own. */
const shells = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish"])

/**
 * Classifies a command line.
 *
 * @since 0.1.0
 * @category constructors
 */
export const classify = (command: string): Classification => {
  const commands: Array<SimpleCommand> = []
  const approvals: Array<Approval> = []
  const paths: Array<string> = []
  const destructive: Array<string> = []
  const mentions: Array<string> = []
  const programs: Array<string> = []
  let unknown = false
  // Past the nesting bound the text is judged by its words: nesting must not hide an approval.
  const beyond = (text: string) => {
    mentions.push(text)
    const words = text.split(/[\s'"`$()\\;&|{}]+/).filter((word) => word !== "")
    for (let index = 0; index < words.length; index++) {
      if (!/(^|\/)ratchet(\.[cm]?js)?$/.test(words[index]!)) continue
      const guessed = approvalOf(words.slice(index + 1))
      if (guessed !== null) {
        approvals.push({ subcommand: guessed, text: text.slice(0, 200) })
        return
      }
    }
  }
  const visit = (text: string, depth: number) => {
    const { nested, tokens } = lex(text.length > maxLength ? text.slice(0, maxLength) : text)
    // `cd dir && …`: later relative paths are relative to dir.
    let directory = ""
    const at = (target: string): string =>
      directory === "" || target.startsWith("/") || target.startsWith("~") || target.startsWith("$") ? target : `${directory}/${target}`
    for (const simple of simpleCommands(tokens)) {
      commands.push(simple)
      mentions.push(...simple.words, ...simple.redirects)
      paths.push(...simple.redirects.filter((target) => !/^\/dev\/(null|stdout|stderr|tty|fd\/[0-9]+)$/.test(target)).map(at))
      const words = unwrap(simple.words)
      const program = words[0] === undefined ? "" : basename(words[0])
      programs.push(program)
      if (program === "cd" || program === "pushd") {
        const target = words.slice(1).find((word) => !word.startsWith("-"))
        directory = target === undefined ? "~" : at(target)
        continue
      }
      const ratchet = ratchetArguments(words)
      const approval = ratchet === null ? null : approvalOf(ratchet)
      if (approval !== null) approvals.push({ subcommand: approval, text: words.join(" ") })
      else if (simple.computedProgram) {
        // The program is computed: judge by the words alone.
        const args = words.slice(1)
        const guessed = approvalOf(args)
        if (guessed !== null) approvals.push({ subcommand: guessed, text: words.join(" ") })
      }
      const effects = effectsOf(words)
      paths.push(...effects.paths.map(at))
      unknown ||= effects.unknown
      destructive.push(...effects.destructive)
      if (shells.has(program)) {
        const flag = words.findIndex((word, index) => index > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(word))
        const script = flag === -1 ? undefined : words.slice(flag + 1).find((word) => !word.startsWith("-") && word !== "--")
        if (script !== undefined) {
          if (depth < maxDepth) visit(script, depth + 1)
          else beyond(script)
        } else if (words.slice(1).every((word) => word.startsWith("-"))) {
          // A shell reading its commands from standard input (`… | sh`, `bash <<< '…'`): the
          // command line it is part of is judged by its words.
          beyond(text)
        }
      }
      if (program === "eval" && depth < maxDepth) visit(words.slice(1).join(" "), depth + 1)
    }
    for (const body of nested) {
      if (depth < maxDepth) visit(body, depth + 1)
      else beyond(body)
    }
  }
  visit(command, 0)
  if (command.length > maxLength) {
    // Past what is read as a shell reads it: judged by its words, and it may write anything.
    beyond(command.slice(maxLength))
    unknown = true
  }
  return { commands, approvals, writes: { paths, unknown }, destructive, mentions, programs }
}
