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
 * The module is the contract as a file; what it is made of lives beside it: the error, the bounded
 * read and strict UTF-8 (`internal/ContractText`), YAML as plain data (`internal/ContractYaml`)
 * and JSON for digests (`internal/ContractJson`).
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as Digest from "@ratchet/kernel/Digest"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { decodeJson } from "./internal/ContractJson.js"
import { type ContractFileError, decodeText, failure, fileIssue, readBounded } from "./internal/ContractText.js"
import { describeValue, isRecord, parseYaml, pointerSegment } from "./internal/ContractYaml.js"

/**
 * The file's error, its reasons, the bounded read and strict UTF-8 decoding: see
 * `internal/ContractText`. `maxFileBytes` is the largest file read (1 MiB); `Kind` says what an
 * error is about and `Reason` why the file was refused.
 *
 * @since 0.1.0
 */
export { ContractFileError, decodeText, Kind, maxFileBytes, readBounded, Reason } from "./internal/ContractText.js"

/**
 * The YAML limits: `maxAliasCount` (how far aliases may expand) and `maxNesting` (the deepest
 * nesting of mappings and sequences): see `internal/ContractYaml`.
 *
 * @since 0.1.0
 */
export { maxAliasCount, maxNesting } from "./internal/ContractYaml.js"

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
// Commands
// ---------------------------------------------------------------------------------------------

/**
 * A command a step or criterion runs is handed to `sh -c` as one argument, and an argument is a C
 * string: a NUL ends it. A command holding one could never run, so it is refused when the file is
 * proposed rather than when a run or a verification reaches it (and spends a retry on it).
 */
const nulIssue = (pointer: string, owner: string, command: unknown): ReadonlyArray<Spec.Issue> => {
  if (typeof command !== "string") return []
  const at = command.indexOf("\u0000")
  return at === -1 ? [] : [{
    path: pointer,
    message:
      `${owner}'s command contains a NUL character (at offset ${at}), which no command line can carry: it would fail every time it ran; remove it (a command that must print a NUL can write printf '\\0')`
  }]
}

/** The NULs in the commands of a plan's steps (`run` and `probe`). */
const planCommandIssues = (value: Record<string, unknown>): ReadonlyArray<Spec.Issue> => {
  const steps = value["steps"]
  if (!Array.isArray(steps)) return []
  return steps.flatMap((step: unknown, index) => {
    if (!isRecord(step)) return []
    const owner = `step ${typeof step["id"] === "string" ? JSON.stringify(step["id"].slice(0, 64)) : index}`
    return (["run", "probe"] as const).flatMap((key) => {
      const command = step[key]
      return isRecord(command) ? nulIssue(`/steps/${index}/${key}/command`, owner, command["command"]) : []
    })
  })
}

/** The NULs in the commands that verify a spec's acceptance criteria. */
const specCommandIssues = (value: Record<string, unknown>): ReadonlyArray<Spec.Issue> => {
  const criteria = value["acceptanceCriteria"]
  if (!Array.isArray(criteria)) return []
  return criteria.flatMap((criterion: unknown, index) => {
    if (!isRecord(criterion) || !isRecord(criterion["verify"])) return []
    const owner = `criterion ${typeof criterion["id"] === "string" ? JSON.stringify(criterion["id"].slice(0, 64)) : index}`
    return nulIssue(`/acceptanceCriteria/${index}/verify/command`, owner, criterion["verify"]["command"])
  })
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
    const schemaIssues = mergeIssues(
      Either.isLeft(decoded) ? mergeIssues(decoded.left.issues, duplicateCriteria(approval.rest)).map(withHint) : [],
      specCommandIssues(approval.rest)
    )
    if (approval.issues.length > 0) {
      return yield* Either.left(failure(file, "spec", "approval_in_file", [...approval.issues, ...schemaIssues]))
    }
    if (schemaIssues.length > 0 || Either.isLeft(decoded)) return yield* Either.left(failure(file, "spec", "schema", schemaIssues))
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
    const planIssues = mergeIssues(Either.isLeft(decoded) ? decoded.left.issues : [], planCommandIssues(approval.rest))
    if (approval.issues.length > 0) {
      return yield* Either.left(failure(file, "plan", "approval_in_file", [...approval.issues, ...stale, ...planIssues]))
    }
    if (stale.length > 0) return yield* Either.left(failure(file, "plan", "stale_spec", [...stale, ...planIssues]))
    if (planIssues.length > 0 || Either.isLeft(decoded)) return yield* Either.left(failure(file, "plan", "schema", planIssues))
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
