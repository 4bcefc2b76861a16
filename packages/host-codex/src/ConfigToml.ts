/**
 * Codex's `config.toml`, read whole and edited a line at a time, so that Ratchet can set a few
 * keys without rewriting anyone else's: comments, order, spacing and quoting stay as they were.
 *
 * Reading: the whole document is parsed by `smol-toml` (TOML 1.0, pinned exactly; ADR 0017), so a
 * file that is not TOML, or is larger than {@link maxBytes}, or nests deeper than
 * {@link maxDepth}, is refused with the line and column before anything is written. A scanner then
 * finds each line's role — a table header, the first line of a `key = value`, a line inside a
 * multi-line string or array, a comment — which is all an edit needs.
 *
 * Editing: {@link edit} replaces, inserts or removes whole lines, and then parses the result again
 * and compares it with the value the edit promised (the old value with exactly those keys
 * changed). Anything else — a key written in a form the line editor does not handle, a scanner
 * misreading an exotic file — is refused with nothing written, never guessed at.
 *
 * @since 0.1.0
 */
import * as HookSettings from "@ratchet/host/HookSettings"
import * as Either from "effect/Either"
import { parse as parseToml, TomlError } from "smol-toml"

/**
 * The largest file read: a config is a few kilobytes.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBytes = 1024 * 1024

/**
 * The deepest nesting of inline arrays and tables accepted.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxDepth = 64

/**
 * A TOML table as parsed: keys to values (strings, numbers, booleans, dates, arrays, tables).
 *
 * @since 0.1.0
 * @category models
 */
export type Table = { readonly [key: string]: unknown }

/**
 * One physical line and its role.
 *
 * @since 0.1.0
 * @category models
 */
export interface Line {
  readonly text: string
  readonly kind: "blank" | "comment" | "header" | "key" | "continuation"
  /** The table the line belongs to (a header: the table it opens). */
  readonly table: ReadonlyArray<string>
  /** `[[…]]`: an array of tables, which {@link edit} never touches. */
  readonly arrayTable: boolean
  /** A key line's dotted key. */
  readonly key: ReadonlyArray<string>
  /** A key line whose value goes on over the next lines. */
  readonly multiline: boolean
}

/**
 * A parsed document: its text, its lines and its value.
 *
 * @since 0.1.0
 * @category models
 */
export interface Document {
  readonly file: string
  readonly lines: ReadonlyArray<Line>
  readonly eol: "\n" | "\r\n"
  /** Whether the text ended with a line break. */
  readonly finalEol: boolean
  readonly value: Table
}

const refuse = (field: string, reason: string, fix = "Fix the file by hand, then run the command again; nothing was written.") =>
  Either.left(new HookSettings.SettingsError({ field, reason, fix }))

const sameKey = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) => a.length === b.length && a.every((part, i) => part === b[i])

/**
 * A dotted key from the start of `text` (bare, `"basic"` or `'literal'` parts): its parts and
 * where it ends, or `undefined` when `text` does not start with one.
 */
const readKey = (text: string, from: number): { readonly parts: ReadonlyArray<string>; readonly end: number } | undefined => {
  const parts: Array<string> = []
  let i = from
  for (;;) {
    while (text[i] === " " || text[i] === "\t") i++
    const c = text[i]
    if (c === "\"") {
      let j = i + 1
      while (j < text.length && text[j] !== "\"") j += text[j] === "\\" ? 2 : 1
      if (j >= text.length) return undefined
      try {
        parts.push(JSON.parse(text.slice(i, j + 1).replace(/\\U([0-9a-fA-F]{8})/g, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)).replace(/./gu, (ch) => `\\u${ch.codePointAt(0)!.toString(16).padStart(4, "0")}`))) as string)
      } catch {
        return undefined
      }
      i = j + 1
    } else if (c === "'") {
      const j = text.indexOf("'", i + 1)
      if (j === -1) return undefined
      parts.push(text.slice(i + 1, j))
      i = j + 1
    } else {
      const match = /^[A-Za-z0-9_-]+/.exec(text.slice(i))
      if (match === null) return undefined
      parts.push(match[0])
      i += match[0].length
    }
    while (text[i] === " " || text[i] === "\t") i++
    if (text[i] !== ".") return { parts, end: i }
    i++
  }
}

/** Where a multi-line string or an open array leaves the scanner at the end of a line. */
interface ScanState {
  readonly string: "\"\"\"" | "'''" | null
  readonly depth: number
}

/** Scans `text` from `from` to the end of the line, from `state`, and returns the state after it. */
const scanValue = (text: string, from: number, state: ScanState): ScanState => {
  let string = state.string
  let depth = state.depth
  let i = from
  while (i < text.length) {
    if (string !== null) {
      const close = string === "\"\"\"" ? findBasicClose(text, i) : text.indexOf("'''", i)
      if (close === -1) return { string, depth }
      i = close + 3
      // Up to two quotes right after the delimiter belong to the string.
      for (let extra = 0; extra < 2 && text[i] === string[0]; extra++) i++
      string = null
      continue
    }
    const c = text[i]
    if (c === "#") break
    if (c === "\"" || c === "'") {
      if (text.startsWith(c.repeat(3), i)) {
        string = c === "\"" ? "\"\"\"" : "'''"
        i += 3
        continue
      }
      let j = i + 1
      while (j < text.length && text[j] !== c) j += c === "\"" && text[j] === "\\" ? 2 : 1
      i = j + 1
      continue
    }
    if (c === "[" || c === "{") depth++
    else if (c === "]" || c === "}") depth = Math.max(0, depth - 1)
    i++
  }
  return { string, depth }
}

/** The index of the `"""` closing a basic multi-line string, skipping escapes. */
const findBasicClose = (text: string, from: number): number => {
  for (let i = from; i < text.length; i++) {
    if (text[i] === "\\") i++
    else if (text.startsWith("\"\"\"", i)) return i
  }
  return -1
}

/** Where the key starting at `from` ends: the index of its `=` (quoted keys may hold one). */
const keyEnd = (text: string, from: number): number => readKey(text, from)?.end ?? text.indexOf("=", from)

/** The index of the comment on a one-line value starting at `from`, or -1. */
const commentStart = (text: string, from: number): number => {
  for (let i = from; i < text.length; i++) {
    const c = text[i]
    if (c === "#") return i
    if (c === "\"" || c === "'") {
      let j = i + 1
      while (j < text.length && text[j] !== c) j += c === "\"" && text[j] === "\\" ? 2 : 1
      i = j
    }
  }
  return -1
}

/**
 * `text` parsed and its lines scanned; refused, with the line and column, when it is not TOML.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (file: string, text: string): Either.Either<Document, HookSettings.SettingsError> => {
  if (text.length > maxBytes) return refuse(file, `is larger than ${maxBytes} bytes, which no Codex config is.`)
  let value: Table
  try {
    value = parseToml(text, { integersAsBigInt: "asNeeded", maxDepth }) as Table
  } catch (error) {
    const where = error instanceof TomlError ? ` at line ${error.line}, column ${error.column}` : ""
    const first = error instanceof Error ? error.message.split("\n")[0] ?? "" : String(error)
    return refuse(file, `is not valid TOML${where} (${first.slice(0, 160)}).`)
  }
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  const finalEol = text.endsWith("\n")
  const raw = text.split(/\r?\n/)
  if (finalEol) raw.pop()
  const lines: Array<Line> = []
  let table: ReadonlyArray<string> = []
  let arrayTable = false
  let state: ScanState = { string: null, depth: 0 }
  for (const lineText of raw) {
    const base = { text: lineText, table, arrayTable, key: [] as ReadonlyArray<string>, multiline: false }
    if (state.string !== null || state.depth > 0) {
      lines.push({ ...base, kind: "continuation" })
      state = scanValue(lineText, 0, state)
      continue
    }
    const trimmed = lineText.replace(/^\uFEFF/, "").trim()
    if (trimmed === "") {
      lines.push({ ...base, kind: "blank" })
      continue
    }
    if (trimmed.startsWith("#")) {
      lines.push({ ...base, kind: "comment" })
      continue
    }
    const start = lineText.length - lineText.replace(/^[\uFEFF \t]+/, "").length
    if (trimmed.startsWith("[")) {
      const double = trimmed.startsWith("[[")
      const key = readKey(lineText, start + (double ? 2 : 1))
      const close = double ? "]]" : "]"
      if (key === undefined || !lineText.startsWith(close, key.end)) return refuse(file, `has a table header Ratchet cannot read: ${JSON.stringify(trimmed.slice(0, 80))}.`)
      table = key.parts
      arrayTable = double
      lines.push({ ...base, kind: "header", table, arrayTable })
      continue
    }
    const key = readKey(lineText, start)
    if (key === undefined || lineText[key.end] !== "=") return refuse(file, `has a line Ratchet cannot read: ${JSON.stringify(trimmed.slice(0, 80))}.`)
    state = scanValue(lineText, key.end + 1, { string: null, depth: 0 })
    lines.push({ ...base, kind: "key", key: key.parts, multiline: state.string !== null || state.depth > 0 })
  }
  return Either.right({ file, lines, eol, finalEol, value })
}

/**
 * The text of `document`.
 *
 * @since 0.1.0
 * @category getters
 */
export const text = (document: Document): string =>
  document.lines.length === 0 ? "" : document.lines.map((line) => line.text).join(document.eol) + (document.finalEol ? document.eol : "")

/**
 * The index of the line that sets `key` in `table` (a standard `[table]`, or the root), or -1.
 *
 * @since 0.1.0
 * @category getters
 */
export const keyLine = (document: Document, table: ReadonlyArray<string>, key: string): number =>
  document.lines.findIndex((line) => line.kind === "key" && !line.arrayTable && sameKey(line.table, table) && sameKey(line.key, [key]))

/**
 * The index of the `[table]` header line, or -1.
 *
 * @since 0.1.0
 * @category getters
 */
export const headerLine = (document: Document, table: ReadonlyArray<string>): number =>
  document.lines.findIndex((line) => line.kind === "header" && !line.arrayTable && sameKey(line.table, table))

/**
 * The lines of `table`'s region that hold its keys (the header excluded): from the header, or the
 * top of the file for the root, to the next header.
 *
 * @since 0.1.0
 * @category getters
 */
export const region = (document: Document, table: ReadonlyArray<string>): { readonly start: number; readonly end: number } | undefined => {
  const header = table.length === 0 ? -1 : headerLine(document, table)
  if (table.length > 0 && header === -1) return undefined
  let end = header + 1
  while (end < document.lines.length && document.lines[end]!.kind !== "header") end++
  return { start: header + 1, end }
}

/**
 * One change to a document, by whole lines.
 *
 * @since 0.1.0
 * @category models
 */
export type Change =
  | { readonly _tag: "Set"; readonly table: ReadonlyArray<string>; readonly key: string; readonly value: unknown; readonly literal: string; readonly comment: string; readonly headerComment: string }
  | { readonly _tag: "Remove"; readonly table: ReadonlyArray<string>; readonly key: string }
  | { readonly _tag: "Restore"; readonly table: ReadonlyArray<string>; readonly key: string; readonly value: unknown; readonly literal: string }
  | { readonly _tag: "DropTable"; readonly table: ReadonlyArray<string> }

const withLines = (document: Document, lines: ReadonlyArray<Line>): Document => ({ ...document, lines })

const plain = (text: string, table: ReadonlyArray<string>, kind: Line["kind"], key: ReadonlyArray<string> = []): Line => ({ text, kind, table, arrayTable: false, key, multiline: false })

const isTable = (value: unknown): value is Table => typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date)

/** `object` with the table at `parts` replaced by `f` of it (`undefined`: removed). */
const update = (object: Table, parts: ReadonlyArray<string>, f: (table: Table) => Table | undefined): Table => {
  const [head, ...rest] = parts
  if (head === undefined) return f(object) ?? {}
  const child = isTable(object[head]) ? object[head] : {}
  const next = rest.length === 0 ? f(child) : update(child, rest, f)
  const { [head]: _, ...others } = object
  return next === undefined ? others : { ...others, [head]: next }
}

/** The value `change` promises, applied to `value`. */
const expect = (value: Table, change: Change): Table => {
  switch (change._tag) {
    case "Set":
    case "Restore":
      return update(value, change.table, (table) => ({ ...table, [change.key]: change.value }))
    case "Remove":
      return update(value, change.table, (table) => {
        const { [change.key]: _, ...rest } = table
        return rest
      })
    case "DropTable":
      return update(value, change.table, () => undefined)
  }
}

/** Applies `change` to the lines of `document`; the caller checks the result by parsing it. */
const applyLines = (document: Document, change: Change): Either.Either<Document, HookSettings.SettingsError> => {
  const lines = [...document.lines]
  const name = [...change.table, "key" in change ? change.key : ""].filter((part) => part !== "").join(".")
  switch (change._tag) {
    case "Set":
    case "Restore": {
      const index = keyLine(document, change.table, change.key)
      const tail = change._tag === "Set" ? ` # ${change.comment}` : ""
      if (index !== -1) {
        const line = lines[index]!
        if (line.multiline) return refuse(`${document.file}: ${name}`, "spans several lines, which Ratchet does not rewrite.", "Write it on one line, then run the command again; nothing was written.")
        const indent = /^[\uFEFF \t]*/.exec(line.text)![0]
        const equals = keyEnd(line.text, indent.length)
        const keyText = line.text.slice(indent.length, equals).trimEnd()
        // A replaced line keeps its own comment after ours, so that restoring it gives it back.
        const hash = change._tag === "Set" ? commentStart(line.text, equals + 1) : -1
        const theirs = hash === -1 ? "" : line.text.slice(line.text.slice(0, hash).trimEnd().length)
        lines[index] = plain(`${indent}${keyText} = ${change.literal}${tail}${theirs}`, change.table, "key", [change.key])
        return Either.right(withLines(document, lines))
      }
      const entry = plain(`${change.key} = ${change.literal}${tail}`, change.table, "key", [change.key])
      const area = region(document, change.table)
      if (area === undefined) {
        const gap = lines.length > 0 && lines[lines.length - 1]!.kind !== "blank" ? [plain("", [], "blank")] : []
        const header = plain(`[${change.table.join(".")}]${change._tag === "Set" ? ` # ${change.headerComment}` : ""}`, change.table, "header")
        return Either.right({ ...withLines(document, [...lines, ...gap, header, entry]), finalEol: true })
      }
      // After the region's last key (and its continuation lines); at the top of an empty root,
      // after its leading comments (a `#:schema` line stays first).
      let at = area.start
      for (let i = area.start; i < area.end; i++) if (lines[i]!.kind === "key" || lines[i]!.kind === "continuation") at = i + 1
      if (at === area.start && change.table.length === 0) while (at < area.end && lines[at]!.kind === "comment") at++
      lines.splice(at, 0, entry)
      // A file that was empty ends with a line break once it has a line.
      return Either.right({ ...withLines(document, lines), finalEol: document.finalEol || document.lines.length === 0 })
    }
    case "Remove": {
      const index = keyLine(document, change.table, change.key)
      if (index === -1) return Either.right(document)
      if (lines[index]!.multiline) return refuse(`${document.file}: ${name}`, "spans several lines, which Ratchet does not remove.")
      lines.splice(index, 1)
      return Either.right(withLines(document, lines))
    }
    case "DropTable": {
      const header = headerLine(document, change.table)
      if (header === -1) return Either.right(document)
      const area = region(document, change.table)!
      if (lines.slice(area.start, area.end).some((line) => line.kind !== "blank")) return Either.right(document)
      // The table's header, its blank lines, and the blank line that set it apart.
      const from = header > 0 && lines[header - 1]!.kind === "blank" ? header - 1 : header
      lines.splice(from, area.end - from)
      return Either.right(withLines(document, lines))
    }
  }
}

/** A canonical text of a parsed value, for comparing two parses (dates and big integers included). */
const canonical = (value: unknown): string => {
  if (typeof value === "bigint") return `${value}n`
  if (value instanceof Date) return `date:${String(value)}:${JSON.stringify(value)}`
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical((value as Table)[key])}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "undefined"
}

/**
 * `document` with `changes` applied line by line, parsed again and checked to hold exactly the
 * promised value; refused, with nothing written, when it does not.
 *
 * @since 0.1.0
 * @category constructors
 */
export const edit = (document: Document, changes: ReadonlyArray<Change>): Either.Either<Document, HookSettings.SettingsError> => {
  let current = document
  let promised = document.value
  for (const change of changes) {
    const next = applyLines(current, change)
    if (Either.isLeft(next)) return next
    // A change that found nothing to do promises nothing.
    promised = next.right === current ? promised : expect(promised, change)
    current = next.right
  }
  const reparsed = parse(document.file, text(current))
  if (Either.isLeft(reparsed) || canonical(reparsed.right.value) !== canonical(promised)) {
    return refuse(
      document.file,
      "could not be changed line by line without touching something else (an inline table, a dotted key or another form this command does not edit).",
      "Make the change by hand (see docs/guides/codex.md); nothing was written."
    )
  }
  return Either.right(reparsed.right)
}
