/**
 * JUnit XML test reports, read as evidence for an acceptance criterion: the test cases a run
 * reported (vitest's junit reporter, jest-junit, pytest `--junitxml`, Maven Surefire, gotestsum)
 * with how each ended, and the verdict they add up to.
 *
 * The parser is written by hand, on purpose. A published package should not pull in an XML
 * library for this, and JUnit reports use only a small subset of XML: elements, attributes,
 * text and CDATA, comments, processing instructions (the XML declaration) and the five predefined
 * entities plus numeric character references. A DOCTYPE, and with it every ENTITY declaration,
 * is refused: reports never need one and it is how entity-expansion attacks get in.
 *
 * {@link parse} is pure and total: it never throws, returns a {@link JUnitInvalid} naming the byte
 * where the report stopped making sense, and runs in time linear in the input (it scans with
 * indexes, no backtracking regular expressions). Hostile input is bounded: at most 16 MiB,
 * elements nested at most 64 deep, at most 100 000 test cases.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * How one test case ended.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Status = Schema.Literal("passed", "failed", "errored", "skipped")

/**
 * @since 0.1.0
 * @category models
 */
export type Status = typeof Status.Type

/**
 * One `<testcase>` of a report.
 *
 * - `suite`: the `name` of the nearest enclosing `<testsuite>`, or of the `<testsuites>` root for a
 *   case directly inside it; `""` when that element has no name;
 * - `classname`: the `classname` attribute, or null when absent;
 * - `status`: `failed` for a `<failure>` child, `errored` for an `<error>` child (the first of
 *   the two decides), `skipped` for a `<skipped>` child and no failure or error, else `passed`;
 * - `message`: for a failed, errored or skipped case, the `message` attribute of that child,
 *   or when it has none the first 500 characters of its text (trimmed); null when neither;
 * - `timeSeconds`: the `time` attribute when it is a non-negative decimal number, else null.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TestCase = Schema.Struct({
  suite: Schema.String,
  name: Schema.String,
  classname: Schema.NullOr(Schema.String),
  status: Status,
  message: Schema.NullOr(Schema.String),
  timeSeconds: Schema.NullOr(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export interface TestCase extends Schema.Schema.Type<typeof TestCase> {}

/**
 * How many cases ended each way. Counted from the cases themselves, never from the `tests`,
 * `failures`, `errors` or `skipped` attributes a reporter writes on its suites.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Counts = Schema.Struct({
  passed: Schema.Int,
  failed: Schema.Int,
  errored: Schema.Int,
  skipped: Schema.Int
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Counts extends Schema.Schema.Type<typeof Counts> {}

/**
 * A parsed report: every test case in document order, and the counts.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Report = Schema.Struct({
  cases: Schema.Array(TestCase),
  counts: Counts
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Report extends Schema.Schema.Type<typeof Report> {}

/**
 * The report is not one this parser accepts: not well-formed XML, not a JUnit report, or over a
 * limit. `offset` is the UTF-8 byte offset into the report where reading stopped.
 *
 * @since 0.1.0
 * @category errors
 */
export class JUnitInvalid extends Schema.TaggedError<JUnitInvalid>()("@ratchet/verifier/JUnitInvalid", {
  reason: Schema.String,
  offset: Schema.Number
}) {
  override get message(): string {
    return `The JUnit report is not valid XML at byte ${this.offset}: ${this.reason}. ` +
      "Make the test command write a JUnit XML report (for example vitest --reporter=junit --outputFile=<file>, " +
      "jest with jest-junit, pytest --junitxml=<file>, Maven Surefire, gotestsum --junitfile <file>) " +
      "and point the criterion at that file."
  }
}

/**
 * The verdict a report supports: `FAIL` when any case failed or errored; `INDETERMINATE` when it
 * has no cases or every case was skipped (nothing was shown to work); else `PASS`.
 *
 * @since 0.1.0
 * @category verdicts
 */
export const verdictOf = (report: Report): "PASS" | "FAIL" | "INDETERMINATE" => {
  let passed = false
  for (const testCase of report.cases) {
    if (testCase.status === "failed" || testCase.status === "errored") return "FAIL"
    if (testCase.status === "passed") passed = true
  }
  return passed ? "PASS" : "INDETERMINATE"
}

/**
 * Reads a JUnit XML report. The root must be `<testsuites>` or `<testsuite>`; suites may nest.
 * `<system-out>`, `<system-err>`, `<properties>` and every other element are read for
 * well-formedness and otherwise ignored. A well-formed report with no test cases is a report
 * with no cases; what that means is the caller's decision (see {@link verdictOf}).
 *
 * Never throws.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (text: string): Either.Either<Report, JUnitInvalid> => {
  if (text.length > MAX_BYTES || utf8Length(text, MAX_BYTES + 1) > MAX_BYTES) {
    return Either.left(
      new JUnitInvalid({
        reason: `the report is larger than 16 MiB (${MAX_BYTES} bytes), the most this verifier reads`,
        offset: MAX_BYTES
      })
    )
  }
  try {
    return Either.right(new Parser(text).run())
  } catch (error) {
    if (error instanceof Stop) {
      return Either.left(new JUnitInvalid({ reason: error.reason, offset: utf8Length(text, Infinity, error.index) }))
    }
    throw error
  }
}

// ---------------------------------------------------------------------------------------------
// internals
// ---------------------------------------------------------------------------------------------

const MAX_BYTES = 16 * 1024 * 1024
const MAX_DEPTH = 64
const MAX_CASES = 100_000
const MESSAGE_CHARS = 500

const DECLARATIONS_REFUSED = "DOCTYPE and ENTITY declarations are refused: they allow entity-expansion attacks " +
  "(\"billion laughs\") and a JUnit report never needs them"

/** The parser's way out: caught in {@link parse}, never escapes it. */
class Stop {
  constructor(readonly reason: string, readonly index: number) {}
}

/**
 * The UTF-8 length of `text` up to code unit `end`, stopping early once it exceeds `cap`.
 * A lone surrogate counts as the 3 bytes of the U+FFFD an encoder writes for it.
 */
const utf8Length = (text: string, cap: number, end: number = text.length): number => {
  let bytes = 0
  for (let i = 0; i < end && bytes <= cap; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < end && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/** A name or reference as quoted in a reason: hostile input may make it megabytes long. */
const show = (s: string): string => s.length > 60 ? `${s.slice(0, 60)}...` : s

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff

const isWhitespace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d

const isNameStart = (c: number) =>
  (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a || c >= 0x80

const isNameChar = (c: number) => isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e

/** XML 1.0's `Char` production. */
const isXmlChar = (cp: number) =>
  cp === 0x09 || cp === 0x0a || cp === 0x0d || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) ||
  (cp >= 0x10000 && cp <= 0x10ffff)

const hexDigit = (c: number): number =>
  c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1

/** A `time` attribute: digits with an optional fraction and exponent, else null. */
const parseSeconds = (value: string | undefined): number | null => {
  if (value === undefined) return null
  const s = value.trim()
  if (s.length === 0 || s.length > 64) return null
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    const ok = (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d
    if (!ok) return null
  }
  const n = Number(s)
  return Number.isFinite(n) && n >= 0 ? n : null
}

/** The first {@link MESSAGE_CHARS} characters of an outcome's text, trimmed; null when empty. */
const messageOf = (parts: ReadonlyArray<string>): string | null => {
  const all = parts.join("").trim()
  if (all.length === 0) return null
  let cut = all.length > MESSAGE_CHARS ? all.slice(0, MESSAGE_CHARS) : all
  const last = cut.charCodeAt(cut.length - 1)
  if (cut.length < all.length && last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1)
  return cut.trimEnd()
}

type Kind = "container" | "suite" | "case" | "outcome" | "other"

interface Frame {
  readonly name: string
  readonly kind: Kind
  /** The suite name cases inside this element belong to. */
  readonly suite: string
  /** Whether this outcome element decided its case's status (and so its message). */
  readonly decides: boolean
}

interface OpenCase {
  readonly suite: string
  readonly name: string
  readonly classname: string | null
  readonly timeSeconds: number | null
  status: Status
  message: string | null
}

class Parser {
  private i = 0
  private readonly n: number
  private readonly stack: Array<Frame> = []
  private readonly cases: Array<TestCase> = []
  private caseCount = 0
  private current: OpenCase | null = null
  /** The text of the deciding outcome element, collected while it is open. */
  private capture: Array<string> | null = null

  constructor(private readonly text: string) {
    this.n = text.length
  }

  run(): Report {
    const text = this.text
    if (text.charCodeAt(0) === 0xfeff) this.i = 1
    this.misc(true)
    if (this.i >= this.n) throw new Stop("the report is empty: it has no root element", this.i)
    if (text.charCodeAt(this.i) !== 0x3c) throw new Stop("text before the root element", this.i)
    this.startTag()
    while (this.stack.length > 0) this.content()
    this.misc(false)
    if (this.i < this.n) {
      throw new Stop("content after the root element ends; a report has exactly one root element", this.i)
    }
    const counts = { passed: 0, failed: 0, errored: 0, skipped: 0 }
    for (const c of this.cases) counts[c.status]++
    return { cases: this.cases, counts }
  }

  private fail(reason: string, index: number = this.i): never {
    throw new Stop(reason, index)
  }

  private startsWith(s: string): boolean {
    return this.text.startsWith(s, this.i)
  }

  private skipWhitespace(): boolean {
    const start = this.i
    while (this.i < this.n && isWhitespace(this.text.charCodeAt(this.i))) this.i++
    return this.i > start
  }

  /** Whitespace, comments and processing instructions outside the root element. */
  private misc(prolog: boolean): void {
    let first = prolog
    for (;;) {
      this.skipWhitespace()
      if (this.startsWith("<!--")) this.comment()
      else if (this.startsWith("<?")) this.processingInstruction(first)
      else if (this.startsWith("<!")) this.declaration()
      else return
      first = false
    }
  }

  private comment(): void {
    const end = this.text.indexOf("-->", this.i + 4)
    if (end < 0) this.fail("a comment is never closed with -->")
    this.i = end + 3
  }

  private processingInstruction(mayBeDeclaration: boolean): void {
    const start = this.i
    this.i += 2
    const target = this.name()
    if (target.length === 0) this.fail("expected a name after <?")
    if (target.toLowerCase() === "xml" && !mayBeDeclaration) {
      this.fail("an XML declaration <?xml ...?> may only come first in the report", start)
    }
    const end = this.text.indexOf("?>", this.i)
    if (end < 0) this.fail(`<?${show(target)} is never closed with ?>`, start)
    this.i = end + 2
  }

  /** `<!` that is neither a comment nor CDATA: a DOCTYPE or another declaration, all refused. */
  private declaration(): never {
    const head = this.text.slice(this.i, this.i + 9).toUpperCase()
    if (head.startsWith("<!DOCTYPE")) this.fail(`the report has a DOCTYPE declaration; ${DECLARATIONS_REFUSED}`)
    if (head.startsWith("<!ENTITY")) this.fail(`the report has an ENTITY declaration; ${DECLARATIONS_REFUSED}`)
    return this.fail("unexpected markup <! (only comments <!-- --> and CDATA sections <![CDATA[ ]]> are allowed)")
  }

  private name(): string {
    const start = this.i
    if (this.i < this.n && isNameStart(this.text.charCodeAt(this.i))) {
      this.i++
      while (this.i < this.n && isNameChar(this.text.charCodeAt(this.i))) this.i++
    }
    return this.text.slice(start, this.i)
  }

  /** One step inside an open element: a tag, comment, CDATA section or run of text. */
  private content(): void {
    const text = this.text
    if (this.i >= this.n) {
      const top = this.stack[this.stack.length - 1]!
      this.fail(`the report ends before <${show(top.name)}> is closed (truncated?)`)
    }
    if (text.charCodeAt(this.i) !== 0x3c) return this.textRun()
    const next = text.charCodeAt(this.i + 1)
    if (next === 0x2f) return this.endTag()
    if (next === 0x3f) return this.processingInstruction(false)
    if (next === 0x21) {
      if (this.startsWith("<!--")) return this.comment()
      if (this.startsWith("<![CDATA[")) return this.cdata()
      return this.declaration()
    }
    this.startTag()
  }

  private cdata(): void {
    const start = this.i
    const end = this.text.indexOf("]]>", start + 9)
    if (end < 0) this.fail("a CDATA section is never closed with ]]>")
    if (this.capture !== null) this.capture.push(normalizeLineEnds(this.text.slice(start + 9, end)))
    this.i = end + 3
  }

  private textRun(): void {
    const text = this.text
    const capture = this.capture
    let from = this.i
    while (this.i < this.n) {
      const c = text.charCodeAt(this.i)
      if (c === 0x3c) break
      if (c === 0x26) {
        if (capture !== null && this.i > from) capture.push(normalizeLineEnds(text.slice(from, this.i)))
        const decoded = this.reference()
        if (capture !== null) capture.push(decoded)
        from = this.i
      } else this.i++
    }
    if (capture !== null && this.i > from) capture.push(normalizeLineEnds(text.slice(from, this.i)))
  }

  /** An entity or character reference at `&`; returns what it stands for. */
  private reference(): string {
    const text = this.text
    const start = this.i
    this.i++
    if (text.charCodeAt(this.i) === 0x23) {
      this.i++
      const hex = text.charCodeAt(this.i) === 0x78
      if (hex) this.i++
      const digitsStart = this.i
      let value = 0
      while (this.i < this.n) {
        const c = text.charCodeAt(this.i)
        const d = hex ? hexDigit(c) : c >= 0x30 && c <= 0x39 ? c - 0x30 : -1
        if (d < 0) break
        value = Math.min(value * (hex ? 16 : 10) + d, 0x110000)
        this.i++
      }
      if (this.i === digitsStart || text.charCodeAt(this.i) !== 0x3b) {
        this.fail(`malformed character reference (expected ${hex ? "&#x<hex digits>;" : "&#<digits>; or &#x<hex digits>;"})`, start)
      }
      this.i++
      if (!isXmlChar(value)) {
        this.fail(`the character reference ${show(text.slice(start, this.i))} is not a valid XML character`, start)
      }
      return String.fromCodePoint(value)
    }
    const name = this.name()
    if (name.length === 0 || text.charCodeAt(this.i) !== 0x3b) {
      this.fail("\"&\" does not start an entity reference (a literal ampersand is written &amp;)", start)
    }
    this.i++
    switch (name) {
      case "lt":
        return "<"
      case "gt":
        return ">"
      case "amp":
        return "&"
      case "quot":
        return "\""
      case "apos":
        return "'"
      default:
        return this.fail(
          `undefined entity &${show(name)}; ` +
            "(a JUnit report may use only &lt; &gt; &amp; &quot; &apos; and numeric references)",
          start
        )
    }
  }

  private startTag(): void {
    const text = this.text
    const start = this.i
    this.i++
    const name = this.name()
    if (name.length === 0) this.fail("expected an element name after \"<\"")
    const attributes = new Map<string, string>()
    let selfClosing = false
    for (;;) {
      const spaced = this.skipWhitespace()
      if (this.i >= this.n) this.fail(`the report ends inside the tag <${show(name)}`)
      const c = text.charCodeAt(this.i)
      if (c === 0x3e) {
        this.i++
        break
      }
      if (c === 0x2f) {
        if (text.charCodeAt(this.i + 1) !== 0x3e) this.fail(`expected "/>" to end the tag <${show(name)}`)
        this.i += 2
        selfClosing = true
        break
      }
      const attributeStart = this.i
      const attribute = this.name()
      if (attribute.length === 0) this.fail(`unexpected character ${JSON.stringify(text[this.i])} in the tag <${show(name)}`)
      if (!spaced) this.fail(`expected whitespace before the attribute ${show(attribute)} of <${show(name)}>`, attributeStart)
      this.skipWhitespace()
      if (text.charCodeAt(this.i) !== 0x3d) this.fail(`the attribute ${show(attribute)} of <${show(name)}> has no ="value"`)
      this.i++
      this.skipWhitespace()
      const quote = text.charCodeAt(this.i)
      if (quote !== 0x22 && quote !== 0x27) {
        this.fail(`the value of the attribute ${show(attribute)} of <${show(name)}> is not in quotes`)
      }
      const value = this.attributeValue(quote, name, attribute)
      if (attributes.has(attribute)) this.fail(`the attribute ${show(attribute)} appears twice on <${show(name)}>`, attributeStart)
      attributes.set(attribute, value)
    }
    this.openElement(name, attributes, start)
    if (selfClosing) this.close()
  }

  /** A quoted value at its opening quote, decoded and normalized as XML does. */
  private attributeValue(quote: number, element: string, attribute: string): string {
    const text = this.text
    const open = this.i
    this.i++
    const parts: Array<string> = []
    let from = this.i
    for (;;) {
      if (this.i >= this.n) this.fail(`the value of the attribute ${show(attribute)} of <${show(element)}> is never closed`, open)
      const c = text.charCodeAt(this.i)
      if (c === quote) break
      if (c === 0x3c) this.fail(`"<" in the value of the attribute ${show(attribute)} of <${show(element)}> (write &lt;)`)
      if (c === 0x26 || c === 0x09 || c === 0x0a || c === 0x0d) {
        if (this.i > from) parts.push(text.slice(from, this.i))
        if (c === 0x26) parts.push(this.reference())
        else {
          // Literal line ends and tabs become spaces; a CR LF pair is one line end.
          parts.push(" ")
          this.i += c === 0x0d && text.charCodeAt(this.i + 1) === 0x0a ? 2 : 1
        }
        from = this.i
      } else this.i++
    }
    if (this.i > from) parts.push(text.slice(from, this.i))
    this.i++
    return parts.length === 1 ? parts[0]! : parts.join("")
  }

  private openElement(name: string, attributes: Map<string, string>, start: number): void {
    const parent = this.stack.length === 0 ? null : this.stack[this.stack.length - 1]!
    if (this.stack.length >= MAX_DEPTH) this.fail(`elements are nested deeper than ${MAX_DEPTH} levels`, start)
    let kind: Kind = "other"
    let suite = parent?.suite ?? ""
    let decides = false
    if (parent === null) {
      if (name !== "testsuites" && name !== "testsuite") {
        this.fail(`the root element is <${show(name)}>, not <testsuites> or <testsuite>; this is not a JUnit report`, start)
      }
      kind = name === "testsuites" ? "container" : "suite"
      suite = attributes.get("name") ?? ""
    } else if (parent.kind === "container" || parent.kind === "suite") {
      if (name === "testsuites") kind = "container"
      else if (name === "testsuite") {
        kind = "suite"
        suite = attributes.get("name") ?? ""
      } else if (name === "testcase") {
        kind = "case"
        if (this.caseCount >= MAX_CASES) this.fail(`the report has more than ${MAX_CASES} test cases`, start)
        this.caseCount++
        this.current = {
          suite,
          name: attributes.get("name") ?? "",
          classname: attributes.get("classname") ?? null,
          timeSeconds: parseSeconds(attributes.get("time")),
          status: "passed",
          message: null
        }
      }
    } else if (parent.kind === "case" && this.current !== null) {
      const status: Status | null = name === "failure" ? "failed" : name === "error" ? "errored" : name === "skipped" ? "skipped" : null
      if (status !== null) {
        kind = "outcome"
        const sofar = this.current.status
        decides = status === "skipped" ? sofar === "passed" : sofar === "passed" || sofar === "skipped"
        if (decides) {
          this.current.status = status
          const message = attributes.get("message")
          this.current.message = message !== undefined && message.length > 0 ? message : null
          this.capture = this.current.message === null ? [] : null
        }
      }
    }
    this.stack.push({ name, kind, suite, decides })
  }

  private endTag(): void {
    const start = this.i
    this.i += 2
    const name = this.name()
    if (name.length === 0 && this.i < this.n) this.fail("expected an element name after \"</\"", start)
    this.skipWhitespace()
    if (this.i >= this.n) this.fail(`the report ends inside the end tag </${show(name)}`, start)
    if (this.text.charCodeAt(this.i) !== 0x3e) this.fail(`expected ">" to end the end tag </${show(name)}`)
    const top = this.stack[this.stack.length - 1]!
    if (name !== top.name) this.fail(`the end tag </${show(name)}> does not match the open element <${show(top.name)}>`, start)
    this.i++
    this.close()
  }

  private close(): void {
    const frame = this.stack.pop()!
    if (frame.kind === "outcome" && frame.decides && this.current !== null && this.capture !== null) {
      this.current.message = messageOf(this.capture)
      this.capture = null
    } else if (frame.kind === "case" && this.current !== null) {
      this.cases.push({ ...this.current })
      this.current = null
    }
  }
}

const normalizeLineEnds = (s: string): string => s.indexOf("\r") < 0 ? s : s.replace(/\r\n?/g, "\n")
