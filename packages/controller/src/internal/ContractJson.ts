/**
 * Any JSON document, for `ratchet digest`: parsed by `JSON.parse`, and a refusal placed at the
 * line and column where the text first stops being JSON (RFC 8259).
 *
 * @since 0.2.0
 * @internal
 */
import * as Either from "effect/Either"
import { type ContractFileError, decodeText, failure, fileIssue } from "./ContractText.js"

const jsonNumber = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y

/**
 * Where a text that `JSON.parse` refused first stops being JSON (RFC 8259), and what was expected
 * there. `JSON.parse` does not always say where; this iterative scan does, at any depth.
 */
const jsonErrorAt = (text: string): { readonly offset: number; readonly message: string } | undefined => {
  type Expect = "value" | "value-or-close" | "key" | "key-or-close" | "colon" | "comma-or-close" | "end"
  const closers: Array<"]" | "}"> = []
  let expect: Expect = "value"
  let i = 0
  const after = (): Expect => (closers.length === 0 ? "end" : "comma-or-close")
  const string = (): string | undefined => {
    for (i++; i < text.length;) {
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return undefined
      }
      if (c < 0x20) return "a control character inside a string (escape it)"
      if (c === 0x5c) {
        const escape = text[i + 1]
        if (escape === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return "\\u not followed by four hexadecimal digits"
          i += 6
        } else if (escape !== undefined && "\"\\/bfnrt".includes(escape)) i += 2
        else return "an invalid escape sequence"
      } else i++
    }
    return "a string that is never closed"
  }
  for (;;) {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++
    const c = text[i]
    if (c === undefined) {
      return expect === "end" ? undefined : { offset: i, message: "the text ends before the JSON value does" }
    }
    const at = i
    const fail = (message: string) => ({ offset: at, message })
    switch (expect) {
      case "end":
        return fail("more text after the JSON value")
      case "colon":
        if (c !== ":") return fail("expected \":\" after the property name")
        i++
        expect = "value"
        break
      case "comma-or-close": {
        const closer = closers[closers.length - 1]!
        if (c === ",") {
          i++
          expect = closer === "}" ? "key" : "value"
        } else if (c === closer) {
          i++
          closers.pop()
          expect = after()
        } else return fail(`expected "," or "${closer}"`)
        break
      }
      case "key":
      case "key-or-close":
        if (c === "}" && expect === "key-or-close") {
          i++
          closers.pop()
          expect = after()
        } else if (c === "\"") {
          const problem = string()
          if (problem !== undefined) return { offset: i, message: problem }
          expect = "colon"
        } else return fail("expected a property name in double quotes")
        break
      case "value":
      case "value-or-close":
        if (c === "]" && expect === "value-or-close") {
          i++
          closers.pop()
          expect = after()
        } else if (c === "{" || c === "[") {
          i++
          closers.push(c === "{" ? "}" : "]")
          expect = c === "{" ? "key-or-close" : "value-or-close"
        } else if (c === "\"") {
          const problem = string()
          if (problem !== undefined) return { offset: i, message: problem }
          expect = after()
        } else {
          jsonNumber.lastIndex = i
          const literal = ["true", "false", "null"].find((word) => text.startsWith(word, i))
          if (literal !== undefined) i += literal.length
          else if (jsonNumber.test(text)) i = jsonNumber.lastIndex
          else return fail("expected a JSON value")
          expect = after()
        }
        break
    }
  }
}

const lineColumn = (text: string, offset: number): string => {
  const before = text.slice(0, offset)
  const line = before.split("\n").length
  return `line ${line}, column ${offset - before.lastIndexOf("\n")}`
}

export const decodeJson = (file: string, bytes: Uint8Array): Either.Either<unknown, ContractFileError> =>
  Either.flatMap(decodeText(file, bytes), (text) => {
    try {
      return Either.right(JSON.parse(text) as unknown)
    } catch (error) {
      const where = jsonErrorAt(text)
      const message = where === undefined
        ? error instanceof Error ? error.message : String(error)
        : `${lineColumn(text, where.offset)}: ${where.message}`
      return Either.left(failure(file, "json", "syntax", fileIssue(message)))
    }
  })

// ---------------------------------------------------------------------------------------------
// Digest
// ---------------------------------------------------------------------------------------------
