/**
 * A contract file as bytes and text, and how every refusal of one is told: the
 * `ContractFileError` (what, why, each issue and the fix), the bounded read (a regular file of at
 * most `maxFileBytes`, opened read-only and non-blocking) and strict UTF-8 decoding.
 *
 * @since 0.2.0
 * @internal
 */
import * as fs from "node:fs/promises"
import * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * The largest contract file read: 1 MiB. A spec or plan is a few kilobytes of text.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxFileBytes = 1024 * 1024

/**
 * What a `ContractFileError` is about: the file as bytes (`file`) or its content as a spec, a plan,
 * a JSON document or a lesson (`LessonFile`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Kind = Schema.Literal("spec", "plan", "json", "file", "lesson")

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
      if (kind === "lesson") return "Keep a lesson file within 64 KiB: a lesson is a few short fields (each summary at most 400 characters)."
      return `Keep the file within 1 MiB (${maxFileBytes} bytes): move long material into files the contract refers to.`
    case "unreadable":
      return "Check that this user may read the file (and that no symlink loops), then run the command again."
    case "not_utf8":
      return "Save the file as UTF-8 text without NUL bytes and run the command again."
    case "syntax":
      if (kind === "lesson") return "Fix the YAML where shown: a lesson file is plain data (mappings, sequences, strings) without tags or self-referencing aliases."
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

export const failure = (file: string, kind: Kind, reason: Reason, issues: ReadonlyArray<Spec.Issue>) =>
  new ContractFileError({ file, kind, reason, issues })

export const fileIssue = (message: string): ReadonlyArray<Spec.Issue> => [{ path: "", message }]

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
