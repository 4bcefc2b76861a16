/**
 * The syntax half of reading a shell command line: the text split as a POSIX shell (bash) splits
 * it into simple commands, their words after quote removal, their redirections and what they read
 * on standard input. What the programs then do is `Shell`'s concern.
 *
 * Read as the shell reads it: single, double and ANSI-C quotes (`$'\x72'` is `r`), backslashes,
 * line continuations, comments, `;` `&&` `||` `|` `|&` `&` and line ends, `( … )` and `{ …; }`,
 * output redirections (`>`, `>>`, `>|`, `&>`, `<>`, `>&file`), input redirections, here-documents
 * and here-strings. The bodies of command substitutions (`$(…)`, backquotes, and those inside an
 * unquoted here-document) and of process substitutions (`<(…)`, `>(…)`) are returned apart, to be
 * read as command lines of their own; the word they stand in is marked computed.
 *
 * A word also says whether the shell would change it before running it: computed (an expansion
 * left: `$x`, `$(…)`), globbed (an unquoted `*`, `?` or `[…]`) or braced (`{a,b}`, `{1..3}`). Such a
 * word in a program's place names a program the text does not.
 *
 * Linear in the length of the text, apart from substitution bodies, which are scanned once more
 * to find their end (nesting is bounded by the caller).
 *
 * @internal
 */

/** One word of a command, as the shell would pass it after quote removal. */
export interface Word {
  readonly text: string
  /** Part of the word is an expansion the text does not resolve (`$x`, `$(…)`, backquotes). */
  readonly computed: boolean
  /** Any part was quoted or escaped (so `>` inside it is not an operator). */
  readonly quoted: boolean
  /** An unquoted `*`, `?` or `[…]`: the shell may replace it by file names. */
  readonly globbed: boolean
  /** An unquoted brace expansion (`{a,b}`, `{1..3}`): the shell makes several words of it. */
  readonly braced: boolean
  /** The variable the word assigns (`NAME=value`, the name unquoted), in a command's leading words. */
  readonly assigns: string | null
}

/** What a command reads on standard input from the text itself: a here-document or here-string. */
export interface Input {
  /** The body (a here-document's lines, a here-string's word). */
  readonly text: string
  /** Whether the body is what the command reads: no expansion is left in it. */
  readonly literal: boolean
}

/** One simple command. */
export interface Command {
  /** Every word, leading assignments included, in order. */
  readonly words: ReadonlyArray<Word>
  /** The targets of its output redirections. */
  readonly redirects: ReadonlyArray<string>
  /** Its here-documents and here-strings. */
  readonly inputs: ReadonlyArray<Input>
  /** It reads a file on standard input (`< file`). */
  readonly readsFile: boolean
  /** Its standard input is the output of the command before it (`a | b`). */
  readonly piped: boolean
}

/** A command line read. */
export interface Parsed {
  readonly commands: ReadonlyArray<Command>
  /** The bodies of its command and process substitutions, to be read as command lines. */
  readonly nested: ReadonlyArray<string>
  /** Every here-document and here-string body, wherever it goes. */
  readonly inputs: ReadonlyArray<Input>
}

interface MutableWord {
  text: string
  computed: boolean
  quoted: boolean
  /** The unquoted characters, to find globs and brace expansions. */
  bare: string
}

interface MutableInput {
  text: string
  literal: boolean
}

type Token =
  | { readonly _tag: "Word"; readonly word: MutableWord }
  | { readonly _tag: "Separator"; readonly pipe: boolean }
  | { readonly _tag: "Redirect"; readonly kind: "output" | "duplicate" | "input" | "herestring" }
  | { readonly _tag: "Input"; readonly input: MutableInput }

interface Heredoc {
  readonly delimiter: string
  readonly tabs: boolean
  readonly input: MutableInput | null
}

/**
 * The delimiter of a here-document whose `<<` ends just before `start`: the word after an optional
 * `-` and blanks, quotes removed; with the index after it, whether tabs are stripped (`<<-`) and
 * whether any of it was quoted (then the body is not expanded).
 */
const heredocDelimiter = (text: string, start: number) => {
  let i = start
  const tabs = text[i] === "-"
  if (tabs) i++
  while (text[i] === " " || text[i] === "\t") i++
  let delimiter = ""
  let quoted = false
  while (i < text.length && !" \t\n;&|<>()".includes(text[i]!)) {
    const char = text[i]!
    if (char === "'" || char === "\"") {
      quoted = true
      const close = text.indexOf(char, i + 1)
      delimiter += text.slice(i + 1, close === -1 ? text.length : close)
      i = close === -1 ? text.length : close + 1
      continue
    }
    if (char === "\\") {
      quoted = true
      delimiter += text[i + 1] ?? ""
      i += 2
      continue
    }
    delimiter += char
    i++
  }
  return { delimiter, end: i, tabs, quoted }
}

/**
 * Reads the bodies of the pending here-documents, which start at `start` (just after a line end):
 * each runs to a line that is its delimiter. Returns the index after the last.
 */
const readHeredocs = (text: string, start: number, pending: ReadonlyArray<Heredoc>): number => {
  let i = start
  for (const { delimiter, tabs, input } of pending) {
    const begin = i
    let end = text.length
    while (i < text.length) {
      const lineEnd = text.indexOf("\n", i)
      const line = text.slice(i, lineEnd === -1 ? text.length : lineEnd)
      const lineStart = i
      i = lineEnd === -1 ? text.length : lineEnd + 1
      if ((tabs ? line.replace(/^\t+/, "") : line) === delimiter) {
        end = lineStart
        break
      }
    }
    if (input !== null) input.text = text.slice(begin, Math.max(begin, end))
  }
  return i
}

/** The index of the `)` closing the `$(` (or `<(`) whose body starts at `start`, or the end of the text. */
const substitutionEnd = (text: string, start: number): number => {
  let depth = 1
  let i = start
  let pending: Array<Heredoc> = []
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
      if (heredoc.delimiter !== "") pending.push({ delimiter: heredoc.delimiter, tabs: heredoc.tabs, input: null })
      i = heredoc.end
      continue
    }
    if (char === "\n" && pending.length > 0) {
      i = readHeredocs(text, i + 1, pending)
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
 * The command substitutions of text the shell expands as it does inside double quotes (an unquoted
 * here-document's body): their bodies, and whether any expansion is left.
 */
const expansionsOf = (text: string): { readonly bodies: ReadonlyArray<string>; readonly expands: boolean } => {
  const bodies: Array<string> = []
  let expands = false
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (char === "\\") {
      i += 2
      continue
    }
    if (char === "$" && text[i + 1] === "(") {
      const end = substitutionEnd(text, i + 2)
      bodies.push(text.slice(i + 2, end))
      expands = true
      i = end + 1
      continue
    }
    if (char === "`") {
      const close = text.indexOf("`", i + 1)
      bodies.push(text.slice(i + 1, close === -1 ? text.length : close))
      expands = true
      i = close === -1 ? text.length : close + 1
      continue
    }
    if (char === "$" && /[A-Za-z_{0-9@*#?$!-]/.test(text[i + 1] ?? "")) expands = true
    i++
  }
  return { bodies, expands }
}

const simpleEscapes: Readonly<Record<string, string>> = {
  a: "\u0007",
  b: "\b",
  e: "\u001b",
  E: "\u001b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  "\"": "\"",
  "?": "?"
}

/**
 * The ANSI-C quoted string (`$'…'`) starting after its opening quote at `start`, decoded as bash
 * decodes it (`\x72`, `\162`, `\u0072` and `\cX` included), with the index after its closing quote.
 */
const ansiC = (text: string, start: number): { readonly value: string; readonly end: number } => {
  let value = ""
  let i = start
  while (i < text.length && text[i] !== "'") {
    if (text[i] !== "\\" || i + 1 >= text.length) {
      value += text[i]
      i++
      continue
    }
    const next = text[i + 1]!
    const digits = (pattern: RegExp, from: number, max: number): string => {
      let found = ""
      while (found.length < max && pattern.test(text[from + found.length] ?? "")) found += text[from + found.length]
      return found
    }
    if (next in simpleEscapes) {
      value += simpleEscapes[next]
      i += 2
    } else if (next === "x" || next === "u" || next === "U") {
      const hex = digits(/[0-9A-Fa-f]/, i + 2, next === "x" ? 2 : next === "u" ? 4 : 8)
      value += hex === "" ? `\\${next}` : String.fromCodePoint(Math.min(parseInt(hex, 16), 0x10ffff))
      i += 2 + hex.length
    } else if (/[0-7]/.test(next)) {
      const octal = digits(/[0-7]/, i + 1, 3)
      value += String.fromCharCode(parseInt(octal, 8) & 0xff)
      i += 1 + octal.length
    } else if (next === "c" && i + 2 < text.length) {
      value += String.fromCharCode(text.charCodeAt(i + 2) & 0x1f)
      i += 3
    } else {
      value += `\\${next}`
      i += 2
    }
  }
  return { value, end: i + 1 }
}

const isExpansionStart = (char: string | undefined): boolean => char !== undefined && /[A-Za-z_{0-9@*#?$!-]/.test(char)

/**
 * Splits `text` into tokens; the bodies of command and process substitutions are collected
 * apart, so they are read as command lines of their own.
 */
const lex = (text: string): { readonly tokens: ReadonlyArray<Token>; readonly nested: Array<string>; readonly inputs: ReadonlyArray<MutableInput> } => {
  const tokens: Array<Token> = []
  const nested: Array<string> = []
  const inputs: Array<MutableInput> = []
  let word: MutableWord | null = null
  const start = (): MutableWord => (word ??= { text: "", computed: false, quoted: false, bare: "" })
  const finish = () => {
    if (word !== null) tokens.push({ _tag: "Word", word })
    word = null
  }
  let pending: Array<Heredoc> = []
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (char === "$" && text[i + 1] === "'") {
      const w = start()
      w.quoted = true
      const { value, end } = ansiC(text, i + 2)
      w.text += value
      i = end
      continue
    }
    if (char === "$" && text[i + 1] === "\"") {
      // `$"…"` (locale quoting) reads as `"…"`.
      i++
      continue
    }
    if (char === "\n" && pending.length > 0) {
      finish()
      tokens.push({ _tag: "Separator", pipe: false })
      i = readHeredocs(text, i + 1, pending)
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
        if (inner === "$" && isExpansionStart(text[i + 1])) w.computed = true
        w.text += inner
        i++
      }
      i++
      continue
    }
    if ((char === "$" || ((char === "<" || char === ">") && word === null)) && text[i + 1] === "(") {
      // `$(…)` substitutes a command's output; `<(…)` and `>(…)` a file connected to a command.
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
    if (char === "$" && isExpansionStart(text[i + 1])) {
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
    if (char === " " || char === "\t" || char === "\r") {
      finish()
      i++
      continue
    }
    const groups = word === null && (char === "{" && /\s/.test(text[i + 1] ?? "") || char === "}")
    if (char === "\n" || char === ";" || char === "|" || char === "&" || char === "(" || char === ")" || groups) {
      // `&>` and `&>>` redirect both streams; `>&` duplicates a descriptor (handled below).
      if (char === "&" && text[i + 1] === ">") {
        finish()
        tokens.push({ _tag: "Redirect", kind: "output" })
        i += text[i + 2] === ">" ? 3 : 2
        continue
      }
      finish()
      // `|` and `|&` connect the next command's standard input; `||` does not.
      const pipe = char === "|" && text[i + 1] !== "|"
      tokens.push({ _tag: "Separator", pipe })
      i += (char === "|" || char === "&") && (text[i + 1] === char || (char === "|" && text[i + 1] === "&")) ? 2 : 1
      continue
    }
    if (char === ">" || char === "<") {
      // A descriptor number right before the operator belongs to it (`2>`), not to the words.
      const current = word as MutableWord | null
      if (current !== null && !current.quoted && !current.computed && /^[0-9]+$/.test(current.text)) word = null
      else finish()
      const output = char === ">"
      let j = i + 1
      if (!output && text[j] === ">") {
        // `<>` opens the file for reading and writing.
        tokens.push({ _tag: "Redirect", kind: "output" })
        i = j + 1
        continue
      }
      if (output && (text[j] === ">" || text[j] === "|")) j++
      if (!output && text[j] === "<") {
        if (text[j + 1] === "<") {
          tokens.push({ _tag: "Redirect", kind: "herestring" })
          i = j + 2
          continue
        }
        // A here-document: its body (after this line) is what the command reads.
        const heredoc = heredocDelimiter(text, j + 1)
        if (heredoc.delimiter !== "") {
          const input: MutableInput = { text: "", literal: heredoc.quoted }
          inputs.push(input)
          tokens.push({ _tag: "Input", input })
          pending.push({ delimiter: heredoc.delimiter, tabs: heredoc.tabs, input })
        }
        i = heredoc.end
        continue
      }
      const duplicates = text[j] === "&"
      if (duplicates) j++
      tokens.push({ _tag: "Redirect", kind: output ? (duplicates ? "duplicate" : "output") : duplicates ? "duplicate" : "input" })
      i = j
      continue
    }
    const w = start()
    w.text += char
    w.bare += char
    i++
  }
  finish()
  // An unquoted here-document's body is expanded: its substitutions run, and it is literal only
  // when nothing in it expands.
  for (const input of inputs) {
    if (input.literal) continue
    const { bodies, expands } = expansionsOf(input.text)
    nested.push(...bodies)
    input.literal = !expands
  }
  return { tokens, nested, inputs }
}

/** Whether the unquoted part of a word has a brace expansion. */
const braceExpansion = /\{[^{}]*(,|\.\.)[^{}]*\}/

const frozen = (word: MutableWord): Word => {
  const assignment = /^([A-Za-z_][A-Za-z0-9_]*)\+?=/.exec(word.bare)
  return {
    text: word.text,
    computed: word.computed,
    quoted: word.quoted,
    // `[` alone (the test command) is no pattern; `[…]` is.
    globbed: /[*?]|\[[^\]]*\]/.test(word.bare),
    braced: braceExpansion.test(word.bare),
    assigns: assignment !== null && word.text.startsWith(assignment[0]) ? assignment[1]! : null
  }
}

/**
 * Reads a command line into its simple commands, the bodies of its substitutions and its
 * here-document and here-string bodies.
 */
export const parse = (text: string): Parsed => {
  const { tokens, nested, inputs } = lex(text)
  const commands: Array<Command> = []
  const allInputs: Array<Input> = [...inputs]
  let words: Array<Word> = []
  let redirects: Array<string> = []
  let commandInputs: Array<Input> = []
  let readsFile = false
  let piped = false
  let redirect: "output" | "duplicate" | "input" | "herestring" | null = null
  const flush = () => {
    if (words.length > 0 || redirects.length > 0 || commandInputs.length > 0 || readsFile) {
      commands.push({ words, redirects, inputs: commandInputs, readsFile, piped })
    }
    words = []
    redirects = []
    commandInputs = []
    readsFile = false
  }
  for (const token of tokens) {
    switch (token._tag) {
      case "Separator": {
        redirect = null
        // A line end or a group's opening after `|` still leaves the next command reading the pipe.
        const empty = words.length === 0 && redirects.length === 0 && commandInputs.length === 0 && !readsFile
        flush()
        piped = token.pipe || (empty && piped)
        continue
      }
      case "Redirect":
        redirect = token.kind
        continue
      case "Input":
        commandInputs.push(token.input)
        continue
      case "Word": {
        const word = frozen(token.word)
        if (redirect === null) {
          words.push(word)
          continue
        }
        if (redirect === "output") redirects.push(word.text)
        // `>&2` duplicates a descriptor; `>&file` (bash) writes the file.
        if (redirect === "duplicate" && !/^[0-9-]+$/.test(word.text)) redirects.push(word.text)
        if (redirect === "input") readsFile = true
        if (redirect === "herestring") {
          const input: Input = { text: word.text, literal: !word.computed }
          commandInputs.push(input)
          allInputs.push(input)
        }
        redirect = null
        continue
      }
    }
  }
  flush()
  return { commands, nested, inputs: allInputs }
}
