/**
 * YAML as plain data for a contract file (the YAML 1.2 core schema): duplicate keys, syntax
 * errors, non-core tags, non-string keys, more than one document, nesting past `maxNesting` and
 * aliases that expand past `maxAliasCount` are refused, each issue with its JSON Pointer and its
 * line and column.
 *
 * @since 0.2.0
 * @internal
 */
import type * as Spec from "@ratchet/kernel/Spec"
import * as Either from "effect/Either"
import {
  type Document as YamlDocument,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type YAMLError
} from "yaml"
import { type ContractFileError, failure, fileIssue } from "./ContractText.js"

/**
 * How far YAML aliases may expand (the `yaml` package's count: uses of an anchor times the aliases
 * inside it). A contract file needs few aliases, if any.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxAliasCount = 100

export const pointerSegment = (segment: string | number): string =>
  `/${String(segment).replaceAll("~", "~0").replaceAll("/", "~1")}`

/** Pointers into hostile, deeply nested files stop at an ancestor this deep. */
const maxPointerDepth = 32

/**
 * The JSON Pointer of the deepest map key or value that contains `offset`, as far as the (possibly
 * partial) document lets us tell; `""` when nothing does.
 */
const pointerAt = (doc: YamlDocument.Parsed, offset: number): string => {
  const rangeOf = (n: unknown) => (isNode(n) && n.range ? n.range : undefined)
  // A node's tag and anchor come before its range, so a pair spans from its key to its value's end.
  const inPair = (key: unknown, value: unknown): boolean => {
    const start = rangeOf(key)?.[0]
    const end = rangeOf(value)?.[2] ?? rangeOf(key)?.[2]
    return start !== undefined && end !== undefined && start <= offset && offset < Math.max(end, start + 1)
  }
  let pointer = ""
  let node: unknown = doc.contents
  for (let depth = 0; depth < maxPointerDepth; depth++) {
    const range = rangeOf(node)
    if (range === undefined || offset < range[0]) return pointer
    if (isMap(node)) {
      const pair = node.items.find((p) => inPair(p.key, p.value))
      if (pair === undefined || !isScalar(pair.key)) return pointer
      pointer += pointerSegment(String(pair.key.value))
      const key = rangeOf(pair.key)!
      if (offset < Math.max(key[1], key[0] + 1)) return pointer
      node = pair.value
    } else if (isSeq(node)) {
      const index = node.items.findIndex((item) => {
        const end = rangeOf(isPair(item) ? item.value ?? item.key : item)?.[2]
        return end !== undefined && offset < end
      })
      if (index === -1) return pointer
      pointer += pointerSegment(index)
      node = node.items[index]
    } else return pointer
  }
  return pointer
}

/**
 * The deepest nesting of mappings and sequences a contract file may have; a spec needs four.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxNesting = 64

/**
 * What makes a value built from YAML unfit for the kernel, with its pointer: an alias that closes
 * a cycle (`&a [*a]` makes a value contain itself) or nesting deeper than {@link maxNesting}.
 * Iterative, so depth cannot exhaust the stack; each value is walked once.
 */
const shapeProblem = (root: unknown): Spec.Issue | undefined => {
  const onPath = new Set<object>()
  const done = new Set<object>()
  const segments: Array<string> = []
  const pointer = (last: string) => [...segments, last].slice(0, maxPointerDepth).join("")
  const stack: Array<{ readonly value: unknown; readonly segment: string; readonly exit: boolean }> = [
    { value: root, segment: "", exit: false }
  ]
  while (stack.length > 0) {
    const { exit, segment, value } = stack.pop()!
    if (typeof value !== "object" || value === null) continue
    if (exit) {
      onPath.delete(value)
      done.add(value)
      segments.pop()
      continue
    }
    if (onPath.has(value)) {
      return {
        path: pointer(segment),
        message: "an alias here refers to a value that contains it (a cycle); a contract file is a tree, so write the value out"
      }
    }
    if (done.has(value)) continue
    if (segments.length >= maxNesting) {
      return { path: pointer(segment), message: `nested too deeply (more than ${maxNesting} levels); a contract file needs a few` }
    }
    onPath.add(value)
    segments.push(segment)
    stack.push({ value, segment, exit: true })
    for (const [key, child] of Object.entries(value).reverse()) {
      stack.push({ value: child, segment: pointerSegment(Array.isArray(value) ? Number(key) : key), exit: false })
    }
  }
  return undefined
}

const maxSyntaxIssues = 20

/** The last key of a pointer, unescaped; `undefined` for the root. */
const lastKey = (pointer: string): string | undefined =>
  pointer === "" ? undefined : pointer.slice(pointer.lastIndexOf("/") + 1).replaceAll("~1", "/").replaceAll("~0", "~")

const yamlMessage = (error: YAMLError, pointer: string): string => {
  switch (error.code) {
    case "DUPLICATE_KEY": {
      const key = lastKey(pointer)
      return `duplicate key${key === undefined ? "" : ` ${JSON.stringify(key)}`}; a key may appear only once in a mapping, keep one`
    }
    case "RESOURCE_EXHAUSTION":
      return `nested too deeply (the parser ran out of stack); a contract file needs a few levels`
    case "MULTIPLE_DOCS":
      return "a second YAML document starts here; the file must hold exactly one"
    case "NON_STRING_KEY":
      return "a key that is not a plain string; every key of a contract file is a field name"
    case "TAG_RESOLVE_FAILED": {
      const tag = /^Unresolved tag: (.*)$/.exec(error.message)?.[1]
      return tag === undefined
        ? error.message
        : `the tag ${tag.replace(/^tag:yaml\.org,2002:/, "!!")} is not allowed; a contract file is plain data, so remove the tag`
    }
    default:
      return error.message
  }
}

export interface YamlSource {
  readonly file: string
  readonly kind: "spec" | "plan" | "lesson"
  readonly text: string
  /** Lines of the file before `text` starts (the front matter's opening `---`). */
  readonly lineOffset: number
}

export const parseYaml = (source: YamlSource): Either.Either<unknown, ContractFileError> => {
  const { file, kind, lineOffset, text } = source
  const syntax = (issues: ReadonlyArray<Spec.Issue>) => Either.left(failure(file, kind, "syntax", issues))
  const lineCounter = new LineCounter()
  let doc: YamlDocument.Parsed
  try {
    doc = parseDocument(text, {
      schema: "core",
      version: "1.2",
      merge: false,
      resolveKnownTags: false,
      strict: true,
      uniqueKeys: true,
      stringKeys: true,
      prettyErrors: false,
      // Not "silent": that level also hides a second document.
      logLevel: "error",
      lineCounter
    })
  } catch (error) {
    return syntax(fileIssue(`the YAML parser gave up: ${error instanceof Error ? error.message : String(error)}`))
  }
  // A stack overflow is reported once per level it unwinds; the first (deepest) one is enough.
  const problems = [...doc.errors, ...doc.warnings].filter((error, index, all) =>
    error.code !== "RESOURCE_EXHAUSTION" || all.findIndex((e) => e.code === "RESOURCE_EXHAUSTION") === index
  )
  if (problems.length > 0) {
    const issues = problems.slice(0, maxSyntaxIssues).map((error): Spec.Issue => {
      const { col, line } = lineCounter.linePos(error.pos[0])
      const pointer = pointerAt(doc, error.pos[0])
      return { path: pointer, message: `line ${line + lineOffset}, column ${col}: ${yamlMessage(error, pointer)}` }
    })
    if (problems.length > maxSyntaxIssues) {
      issues.push({ path: "", message: `${problems.length - maxSyntaxIssues} more YAML problems not shown; fix the ones above first` })
    }
    return syntax(issues)
  }
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount })
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return syntax(fileIssue(
      /Excessive alias count/.test(message)
        ? `aliases expand past the limit of ${maxAliasCount} nodes (an alias bomb); write the values out instead`
        : error instanceof RangeError
        ? "nested too deeply (the reader ran out of stack); a contract file needs a few levels"
        : message
    ))
  }
  const problem = shapeProblem(value)
  return problem === undefined ? Either.right(value) : syntax([problem])
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const describeValue = (value: unknown): string =>
  value === null || value === undefined ? "nothing" : Array.isArray(value) ? "a sequence" : `a ${typeof value}`

// ---------------------------------------------------------------------------------------------
// Approval keys
// ---------------------------------------------------------------------------------------------
