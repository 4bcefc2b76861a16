/**
 * Contract files as people write them: a spec (`spec.md`, Markdown with YAML front matter), a plan
 * (`plan.yaml`, YAML) and, for `ratchet digest`, any JSON document. This module reads their bytes,
 * parses them and hands plain data to the kernel's `Spec.decode` and `Plan.decode`, which own the
 * contract's rules; every refusal is one `ContractFileError` naming the file, each issue (a JSON
 * Pointer, and a line and column where the text is at fault) and the fix.
 *
 * Reading is bounded: `readBounded` opens the path read-only and non-blocking (so a FIFO cannot
 * stall it), refuses anything `fstat` does not call a regular file (a directory, a FIFO, a device
 * such as a symlink to `/dev/zero`) and reads at most {@link maxFileBytes} + 1 bytes, so a larger
 * file is refused without reading the rest.
 *
 * Text is strict UTF-8: one leading byte-order mark is dropped, an invalid sequence is refused at
 * its byte offset (a stray continuation byte, an overlong form, an encoded UTF-16 surrogate, a
 * sequence cut short), so is a NUL byte, and CRLF line ends become LF.
 *
 * YAML is parsed as plain data (the YAML 1.2 core schema): duplicate keys, syntax errors, tags
 * other than the core ones (`!!js/function`, `!foo`, `!!binary`), keys that are not strings, more
 * than one document, nesting deep enough to exhaust the parser, and aliases that expand past
 * {@link maxAliasCount} nodes (a "billion laughs") are refused before any value is built. A
 * `__proto__` key stays an ordinary own key and never reaches `Object.prototype`; the kernel's
 * strict decoding then rejects it as an unknown field.
 *
 * Approval is never read from a file: `approval`, `approved`, `approvedBy`, `status` and their
 * kin at the top level of a spec or plan are refused with the command that records an approval.
 * A plan without `specDigest` is bound to the spec it is loaded against; a plan whose
 * `specDigest` names another spec is refused as stale.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Digest from "@ratchet/kernel/Digest"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
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

/**
 * The largest contract file read: 1 MiB. A spec or plan is a few kilobytes of text.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxFileBytes = 1024 * 1024

/**
 * How far YAML aliases may expand (the `yaml` package's count: uses of an anchor times the aliases
 * inside it). A contract file needs few aliases, if any.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxAliasCount = 100

/**
 * The file extensions `digestOf` accepts, and what it digests each as.
 *
 * @since 0.1.0
 * @category constants
 */
export const digestExtensions: ReadonlyArray<readonly [string, "spec" | "plan" | "json"]> = [
  [".md", "spec"],
  [".yaml", "plan"],
  [".yml", "plan"],
  [".json", "json"]
]

/**
 * What a `ContractFileError` is about: the file as bytes (`file`) or its content as a spec, a plan
 * or a JSON document.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Kind = Schema.Literal("spec", "plan", "json", "file")

/**
 * @since 0.1.0
 * @category models
 */
export type Kind = typeof Kind.Type

/**
 * Why a file was refused, so callers and tests can branch without reading messages:
 *
 * - `not_found`: no file at the path;
 * - `not_a_file`: a directory, FIFO, socket or device;
 * - `too_large`: more than {@link maxFileBytes};
 * - `unreadable`: the file system refused to open or read it (permissions, a symlink loop);
 * - `not_utf8`: invalid UTF-8 or a NUL byte;
 * - `syntax`: the YAML, front matter or JSON does not parse as plain data;
 * - `schema`: the data is not a valid spec or plan (the kernel's issues), or has no digest;
 * - `stale_spec`: the plan's `specDigest` names another spec;
 * - `approval_in_file`: the file tries to carry an approval;
 * - `unsupported`: `digestOf` does not know the extension.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Reason = Schema.Literal(
  "not_found",
  "not_a_file",
  "too_large",
  "unreadable",
  "not_utf8",
  "syntax",
  "schema",
  "stale_spec",
  "approval_in_file",
  "unsupported"
)

/**
 * @since 0.1.0
 * @category models
 */
export type Reason = typeof Reason.Type

const headline = (kind: Kind, reason: Reason): string => {
  switch (reason) {
    case "not_found":
      return "file not found"
    case "not_a_file":
      return "not a regular file"
    case "too_large":
      return "file too large"
    case "unreadable":
      return "file cannot be read"
    case "not_utf8":
      return "not UTF-8 text"
    case "syntax":
      return kind === "json" ? "not valid JSON" : kind === "spec" ? "the spec's front matter does not parse" : "the YAML does not parse"
    case "schema":
      return kind === "json" ? "the JSON value cannot be digested" : `not a valid ${kind}`
    case "stale_spec":
      return "the plan was written for another spec"
    case "approval_in_file":
      return `the ${kind} file tries to carry an approval`
    case "unsupported":
      return "unsupported file type"
  }
}

const fix = (kind: Kind, reason: Reason): string => {
  switch (reason) {
    case "not_found":
      return "Check the path (a relative path is resolved against the current directory) and run the command again."
    case "not_a_file":
      return "Give the path of a regular file; directories, FIFOs, sockets and devices are never read."
    case "too_large":
      return `Keep the file within 1 MiB (${maxFileBytes} bytes): move long material into files the contract refers to.`
    case "unreadable":
      return "Check that this user may read the file (and that no symlink loops), then run the command again."
    case "not_utf8":
      return "Save the file as UTF-8 text without NUL bytes and run the command again."
    case "syntax":
      return kind === "json"
        ? "Fix the JSON where shown and run the command again."
        : `Fix the ${
          kind === "spec" ? "front matter where shown: a spec file is a line \"---\", the YAML fields, a line \"---\", then the Markdown body. The YAML is" : "YAML where shown: a plan file is"
        } plain data (mappings, sequences, strings, numbers, booleans) without tags or self-referencing aliases.`
    case "schema":
      return kind === "json"
        ? "Digests are taken over plain JSON data only; fix the value named above."
        : `Fix each field named above and load the ${kind} again.`
    case "stale_spec":
      return "Drop specDigest from the plan file to bind the plan to the current spec, or regenerate the plan against the current spec."
    case "approval_in_file":
      return `Remove these keys. Approval is never taken from a file: run \`ratchet approve <task> ${
        kind === "plan" ? "plan" : "spec"
      }\` on an interactive terminal to approve the exact digest you reviewed.`
    case "unsupported":
      return `Give a spec (.md), a plan (.yaml or .yml) or a JSON document (.json).`
  }
}

/**
 * A contract file that cannot be used. `issues` lists every problem found, each with a JSON Pointer
 * (`""` for the file as a whole) and a message; the message ends with the fix. Nothing was changed
 * because of it.
 *
 * @since 0.1.0
 * @category errors
 */
export class ContractFileError extends Schema.TaggedError<ContractFileError>()("@ratchet/controller/ContractFileError", {
  file: Schema.String,
  kind: Kind,
  reason: Reason,
  issues: Schema.Array(Spec.Issue)
}) {
  override get message(): string {
    const count = `${this.issues.length} ${this.issues.length === 1 ? "issue" : "issues"}`
    const lines = this.issues.map((issue) => `  ${issue.path === "" ? "(file)" : issue.path}: ${issue.message}`)
    return [`${this.file}: ${headline(this.kind, this.reason)} (${count}):`, ...lines, fix(this.kind, this.reason)].join("\n")
  }
}

const failure = (file: string, kind: Kind, reason: Reason, issues: ReadonlyArray<Spec.Issue>) =>
  new ContractFileError({ file, kind, reason, issues })

const fileIssue = (message: string): ReadonlyArray<Spec.Issue> => [{ path: "", message }]

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. It does not change
// reads of a regular file. O_NOCTTY: a terminal device never becomes the controlling terminal.
const openFlags = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0)

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

const ioFailure = (file: string, operation: string, error: unknown): ContractFileError => {
  const code = codeOf(error)
  if (code === "ENOENT" || code === "ENOTDIR") return failure(file, "file", "not_found", fileIssue("no such file"))
  if (code === "EISDIR") return failure(file, "file", "not_a_file", fileIssue("is a directory, not a regular file"))
  // open(2) answers ENXIO for a socket (and for some devices).
  if (code === "ENXIO") return failure(file, "file", "not_a_file", fileIssue("is a socket or a device, not a regular file"))
  const detail = error instanceof Error ? error.message : String(error)
  return failure(file, "file", "unreadable", fileIssue(`could not ${operation} it: ${detail}`))
}

const typeOf = (stat: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }) =>
  stat.isDirectory()
    ? "a directory"
    : stat.isFIFO()
    ? "a FIFO (named pipe)"
    : stat.isSocket()
    ? "a socket"
    : stat.isCharacterDevice()
    ? "a character device"
    : stat.isBlockDevice()
    ? "a block device"
    : "not a regular file"

const tooLarge = (file: string, size: string) =>
  failure(file, "file", "too_large", fileIssue(`is ${size}, over the 1 MiB limit (${maxFileBytes} bytes)`))

/**
 * Reads a contract file: a regular file of at most {@link maxFileBytes} bytes. It never reads more
 * than `maxFileBytes + 1` bytes, never blocks on a FIFO and never reads a device.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readBounded = (file: string): Effect.Effect<Uint8Array, ContractFileError> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({ try: () => fs.open(file, openFlags), catch: (error) => ioFailure(file, "open", error) }),
    (handle) =>
      Effect.gen(function*() {
        const stat = yield* Effect.tryPromise({ try: () => handle.stat(), catch: (error) => ioFailure(file, "stat", error) })
        if (!stat.isFile()) {
          return yield* Effect.fail(failure(file, "file", "not_a_file", fileIssue(`is ${typeOf(stat)}, not a regular file`)))
        }
        if (stat.size > maxFileBytes) return yield* Effect.fail(tooLarge(file, `${stat.size} bytes`))
        // The file may grow after fstat: read until end of file or one byte past the limit.
        const buffer = new Uint8Array(maxFileBytes + 1)
        let length = 0
        while (length < buffer.length) {
          const { bytesRead } = yield* Effect.tryPromise({
            try: () => handle.read(buffer, length, buffer.length - length, length),
            catch: (error) => ioFailure(file, "read", error)
          })
          if (bytesRead === 0) break
          length += bytesRead
        }
        if (length > maxFileBytes) return yield* Effect.fail(tooLarge(file, "more than 1 MiB"))
        return buffer.slice(0, length)
      }),
    (handle) => Effect.ignore(Effect.tryPromise(() => handle.close()))
  )

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

const hex = (byte: number): string => `0x${byte.toString(16).toUpperCase().padStart(2, "0")}`

/**
 * The first ill-formed UTF-8 sequence (Unicode Table 3-7) and what is wrong with it, or undefined.
 * TextDecoder's fatal mode rejects the same bytes but does not say where.
 */
const firstInvalidUtf8 = (bytes: Uint8Array): { readonly offset: number; readonly problem: string } | undefined => {
  let i = 0
  while (i < bytes.length) {
    const lead = bytes[i]!
    if (lead < 0x80) {
      i++
      continue
    }
    let length: number
    let low = 0x80
    let high = 0xbf
    let secondProblem = ""
    if (lead >= 0x80 && lead <= 0xbf) return { offset: i, problem: `a continuation byte (${hex(lead)}) with no lead byte` }
    else if (lead === 0xc0 || lead === 0xc1) return { offset: i, problem: `an overlong encoding (lead byte ${hex(lead)})` }
    else if (lead <= 0xdf) length = 2
    else if (lead === 0xe0) [length, low, secondProblem] = [3, 0xa0, "an overlong encoding"]
    else if (lead === 0xed) [length, high, secondProblem] = [3, 0x9f, "a UTF-16 surrogate encoded as UTF-8"]
    else if (lead <= 0xef) length = 3
    else if (lead === 0xf0) [length, low, secondProblem] = [4, 0x90, "an overlong encoding"]
    else if (lead <= 0xf3) length = 4
    else if (lead === 0xf4) [length, high, secondProblem] = [4, 0x8f, "a code point above U+10FFFF"]
    else return { offset: i, problem: `byte ${hex(lead)}, which never occurs in UTF-8` }
    for (let k = 1; k < length; k++) {
      const byte = bytes[i + k]
      if (byte === undefined) return { offset: i, problem: "a multi-byte sequence cut short by the end of the file" }
      const [min, max] = k === 1 ? [low, high] : [0x80, 0xbf]
      if (byte < min || byte > max) {
        return {
          offset: i,
          problem: k === 1 && secondProblem !== "" && byte >= 0x80 && byte <= 0xbf
            ? `${secondProblem} (bytes ${hex(lead)} ${hex(byte)})`
            : `lead byte ${hex(lead)} not followed by enough continuation bytes`
        }
      }
    }
    i += length
  }
  return undefined
}

/**
 * The text of a contract file: strict UTF-8, one leading byte-order mark dropped, no NUL byte,
 * CRLF line ends turned into LF. Every refusal names the byte offset.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeText = (file: string, bytes: Uint8Array): Either.Either<string, ContractFileError> => {
  if (bytes.byteLength > maxFileBytes) return Either.left(tooLarge(file, `${bytes.byteLength} bytes`))
  const invalid = firstInvalidUtf8(bytes)
  if (invalid !== undefined) {
    return Either.left(
      failure(file, "file", "not_utf8", fileIssue(`invalid UTF-8 at byte offset ${invalid.offset}: ${invalid.problem}`))
    )
  }
  const nul = bytes.indexOf(0)
  if (nul !== -1) return Either.left(failure(file, "file", "not_utf8", fileIssue(`NUL byte at byte offset ${nul}`)))
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  // Validated above, so `fatal` cannot fire; it stays as a second guard.
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes.subarray(bom))
  return Either.right(text.replaceAll("\r\n", "\n"))
}

// ---------------------------------------------------------------------------------------------
// YAML
// ---------------------------------------------------------------------------------------------

const pointerSegment = (segment: string | number): string =>
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

interface YamlSource {
  readonly file: string
  readonly kind: "spec" | "plan"
  readonly text: string
  /** Lines of the file before `text` starts (the front matter's opening `---`). */
  readonly lineOffset: number
}

const parseYaml = (source: YamlSource): Either.Either<unknown, ContractFileError> => {
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

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const describeValue = (value: unknown): string =>
  value === null || value === undefined ? "nothing" : Array.isArray(value) ? "a sequence" : `a ${typeof value}`

// ---------------------------------------------------------------------------------------------
// Approval keys
// ---------------------------------------------------------------------------------------------

const approvalKeys = new Set(["approval", "approvals", "approved", "approvedby", "approvedat", "approver", "status", "receipt", "receipts"])

const isApprovalKey = (key: string): boolean => approvalKeys.has(key.toLowerCase().replaceAll(/[-_]/g, ""))

/** The approval keys of a top-level mapping as issues, and the mapping without them. */
const withoutApproval = (
  kind: "spec" | "plan",
  value: Record<string, unknown>
): { readonly issues: ReadonlyArray<Spec.Issue>; readonly rest: Record<string, unknown> } => {
  const entries = Object.entries(value)
  return {
    issues: entries.filter(([key]) => isApprovalKey(key)).map(([key]) => ({
      path: pointerSegment(key),
      message: `approval is never taken from a file; remove this key and run \`ratchet approve <task> ${kind}\` on an interactive terminal`
    })),
    // fromEntries defines own properties, so a "__proto__" key stays data.
    rest: Object.fromEntries(entries.filter(([key]) => !isApprovalKey(key)))
  }
}

// ---------------------------------------------------------------------------------------------
// Spec
// ---------------------------------------------------------------------------------------------

type FrontMatter = { readonly yaml: string; readonly body: string }

const frontMatter = (file: string, text: string): Either.Either<FrontMatter, ContractFileError> => {
  const syntax = (message: string) => Either.left(failure(file, "spec", "syntax", fileIssue(message)))
  const firstEnd = text.indexOf("\n")
  const first = firstEnd === -1 ? text : text.slice(0, firstEnd)
  if (first !== "---") {
    return syntax(
      `line 1: a spec file starts with a line "---" that opens its YAML front matter, found ${JSON.stringify(first.slice(0, 40))}`
    )
  }
  let start = firstEnd + 1
  while (firstEnd !== -1 && start <= text.length) {
    const end = text.indexOf("\n", start)
    const line = end === -1 ? text.slice(start) : text.slice(start, end)
    if (line === "---" || line === "...") {
      return Either.right({ yaml: text.slice(firstEnd + 1, start), body: end === -1 ? "" : text.slice(end + 1) })
    }
    if (end === -1) break
    start = end + 1
  }
  return syntax("the front matter opened on line 1 is never closed; end it with a line \"---\" before the Markdown body")
}

/** Duplicate criterion ids, found on the raw input: the kernel checks them only once every criterion decodes. */
const duplicateCriteria = (input: Record<string, unknown>): ReadonlyArray<Spec.Issue> => {
  const criteria = input["acceptanceCriteria"]
  if (!Array.isArray(criteria)) return []
  const first = new Map<string, number>()
  const issues: Array<Spec.Issue> = []
  criteria.forEach((criterion: unknown, index) => {
    const id = isRecord(criterion) ? criterion["id"] : undefined
    if (typeof id !== "string") return
    const earlier = first.get(id)
    if (earlier === undefined) first.set(id, index)
    else {
      issues.push({
        path: `/acceptanceCriteria/${index}/id`,
        message: `duplicate acceptance criterion id ${id} (first declared at /acceptanceCriteria/${earlier}); give each criterion its own id`
      })
    }
  })
  return issues
}

/** A YAML block scalar keeps its final line break, which a trimmed field such as `goal` refuses. */
const withHint = (issue: Spec.Issue): Spec.Issue =>
  issue.message.startsWith("Expected a string with no leading or trailing whitespace")
    ? { ...issue, message: `${issue.message}; a YAML block scalar (| or >) keeps its final line break, so write |- or >-` }
    : issue

const mergeIssues = (...groups: ReadonlyArray<ReadonlyArray<Spec.Issue>>): ReadonlyArray<Spec.Issue> => {
  const seen = new Set<string>()
  return groups.flat().filter((issue) => {
    const key = `${issue.path}\n${issue.message}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

const mapping = (file: string, kind: "spec" | "plan", value: unknown): Either.Either<Record<string, unknown>, ContractFileError> =>
  isRecord(value)
    ? Either.right(value)
    : Either.left(failure(file, kind, "schema", fileIssue(
      `expected a YAML mapping of the ${kind}'s fields, found ${describeValue(value)}`
    )))

/**
 * Decodes a spec file: Markdown whose first line is `---`, then YAML front matter up to the next
 * line that is exactly `---` or `...`, then the editorial body. The front matter is the spec's
 * semantic fields, decoded strictly by `Spec.decode`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSpec = (file: string, bytes: Uint8Array): Either.Either<Spec.Document, ContractFileError> =>
  Either.gen(function*() {
    const text = yield* decodeText(file, bytes)
    const { body, yaml } = yield* frontMatter(file, text)
    const value = yield* mapping(file, "spec", yield* parseYaml({ file, kind: "spec", text: yaml, lineOffset: 1 }))
    const approval = withoutApproval("spec", value)
    const decoded = Spec.decode(approval.rest)
    const schemaIssues = Either.isLeft(decoded)
      ? mergeIssues(decoded.left.issues, duplicateCriteria(approval.rest)).map(withHint)
      : []
    if (approval.issues.length > 0) {
      return yield* Either.left(failure(file, "spec", "approval_in_file", [...approval.issues, ...schemaIssues]))
    }
    if (Either.isLeft(decoded)) return yield* Either.left(failure(file, "spec", "schema", schemaIssues))
    return { semantic: decoded.right, body }
  })

// ---------------------------------------------------------------------------------------------
// Plan
// ---------------------------------------------------------------------------------------------

const isDigest = Schema.is(Digest.Digest)

/**
 * Decodes a plan file (one YAML document) against the spec it belongs to. A plan without
 * `specDigest` is bound to `spec`; one whose `specDigest` names another spec is `stale_spec`.
 * `Plan.decode` then checks the plan strictly and against the spec (criteria, steps, states).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodePlan = (file: string, bytes: Uint8Array, spec: Spec.Spec): Either.Either<Plan.Plan, ContractFileError> =>
  Either.gen(function*() {
    const text = yield* decodeText(file, bytes)
    const value = yield* mapping(file, "plan", yield* parseYaml({ file, kind: "plan", text, lineOffset: 0 }))
    const approval = withoutApproval("plan", value)
    const current = Spec.digest(spec)
    const written = approval.rest["specDigest"]
    const stale: ReadonlyArray<Spec.Issue> = isDigest(written) && written !== current
      ? [{
        path: "/specDigest",
        message:
          `the plan was written for spec ${written}, but the current spec is ${current}; drop specDigest to bind the plan to the current spec, or regenerate the plan`
      }]
      : []
    const bound = written === undefined || stale.length > 0 ? { ...approval.rest, specDigest: current } : approval.rest
    const decoded = Plan.decode(bound, spec)
    const planIssues = Either.isLeft(decoded) ? decoded.left.issues : []
    if (approval.issues.length > 0) {
      return yield* Either.left(failure(file, "plan", "approval_in_file", [...approval.issues, ...stale, ...planIssues]))
    }
    if (stale.length > 0) return yield* Either.left(failure(file, "plan", "stale_spec", [...stale, ...planIssues]))
    if (Either.isLeft(decoded)) return yield* Either.left(failure(file, "plan", "schema", planIssues))
    return decoded.right
  })

const decodePlanShape = Schema.decodeUnknownEither(Plan.Plan, { errors: "all", onExcessProperty: "error" })

/** A plan checked only against the kernel's schema: for a digest when no spec is at hand. */
const decodePlanAlone = (file: string, bytes: Uint8Array): Either.Either<Plan.Plan, ContractFileError> =>
  Either.gen(function*() {
    const text = yield* decodeText(file, bytes)
    const value = yield* mapping(file, "plan", yield* parseYaml({ file, kind: "plan", text, lineOffset: 0 }))
    const approval = withoutApproval("plan", value)
    const missing: ReadonlyArray<Spec.Issue> = approval.rest["specDigest"] === undefined
      ? [{
        path: "/specDigest",
        message: "is missing, and no spec was given; a plan's digest covers the spec it was written for, so add specDigest or name the spec"
      }]
      : []
    const decoded = decodePlanShape(approval.rest)
    // The schema's own "is missing" for specDigest is replaced by the message above.
    const shapeIssues = Either.isLeft(decoded)
      ? Spec.issuesOf(decoded.left).filter((issue) => missing.length === 0 || issue.path !== "/specDigest")
      : []
    if (approval.issues.length > 0) {
      return yield* Either.left(failure(file, "plan", "approval_in_file", [...approval.issues, ...shapeIssues]))
    }
    if (Either.isLeft(decoded)) return yield* Either.left(failure(file, "plan", "schema", mergeIssues(missing, shapeIssues)))
    return decoded.right
  })

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

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

const decodeJson = (file: string, bytes: Uint8Array): Either.Either<unknown, ContractFileError> =>
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

/**
 * What `digestOf` computed: the kind of document and its digest.
 *
 * @since 0.1.0
 * @category models
 */
export interface Digested {
  readonly kind: "spec" | "plan" | "json"
  readonly digest: Digest.Digest
}

/**
 * The digest of a file, by its extension: `.md` is a spec (the digest of its semantic fields, never
 * its body), `.yaml`/`.yml` a plan (bound to `options.spec` when given, else to the `specDigest`
 * it carries and checked against the kernel's plan schema alone), `.json` any JSON value (the digest
 * of its canonical form).
 *
 * @since 0.1.0
 * @category decoding
 */
export const digestOf = (
  file: string,
  bytes: Uint8Array,
  options: { readonly spec?: Spec.Spec | undefined } = {}
): Either.Either<Digested, ContractFileError> => {
  const extension = path.extname(file).toLowerCase()
  const kind = digestExtensions.find(([accepted]) => accepted === extension)?.[1]
  switch (kind) {
    case "spec":
      return Either.map(decodeSpec(file, bytes), (document) => ({ kind, digest: Spec.documentDigest(document) }))
    case "plan":
      return Either.map(
        options.spec === undefined ? decodePlanAlone(file, bytes) : decodePlan(file, bytes, options.spec),
        (plan) => ({ kind, digest: Plan.digest(plan) })
      )
    case "json":
      return Either.flatMap(decodeJson(file, bytes), (value) =>
        Either.match(Digest.of(value), {
          onLeft: (error) => Either.left(failure(file, "json", "schema", [{ path: error.path, message: error.reason }])),
          onRight: (digest) => Either.right({ kind, digest })
        }))
    case undefined:
      return Either.left(failure(file, "file", "unsupported", fileIssue(
        `the extension ${extension === "" ? "(none)" : JSON.stringify(extension)} is not one ratchet digests; accepted: ${
          digestExtensions.map(([accepted]) => accepted).join(", ")
        }`
      )))
  }
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

/**
 * Reads and decodes a spec file.
 *
 * @since 0.1.0
 * @category constructors
 */
export const loadSpec = (file: string): Effect.Effect<Spec.Document, ContractFileError> =>
  Effect.flatMap(readBounded(file), (bytes) => decodeSpec(file, bytes))

/**
 * Reads and decodes a plan file against its spec.
 *
 * @since 0.1.0
 * @category constructors
 */
export const loadPlan = (file: string, spec: Spec.Spec): Effect.Effect<Plan.Plan, ContractFileError> =>
  Effect.flatMap(readBounded(file), (bytes) => decodePlan(file, bytes, spec))

/**
 * Reads a file and computes its digest (see {@link digestOf}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const loadDigest = (
  file: string,
  options: { readonly spec?: Spec.Spec | undefined } = {}
): Effect.Effect<Digested, ContractFileError> => Effect.flatMap(readBounded(file), (bytes) => digestOf(file, bytes, options))
