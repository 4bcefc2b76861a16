/**
 * Evidence: what a verifier observed about one acceptance criterion, kept as a content-addressed
 * blob whose reference is what a verdict's `evidenceRefs` name. Each record says what was done,
 * against which spec digest and work tree, by whom and when; bulky bodies (command output, the
 * JUnit report) are blobs of their own, referenced, and loaded only when someone asks.
 *
 * Strength, strongest first: a reproducible command, an artifact with its hash, a structured
 * observation (a JUnit report), a manual record. An agent's narrative is never evidence.
 *
 * @since 0.1.0
 */
import * as Event from "@ratchet/kernel/Event"
import * as BlobStore from "@ratchet/storage/BlobStore"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const common = {
  acId: Schema.String,
  /** The spec digest the observation was taken against: evidence for another digest never counts. */
  specDigest: Schema.String,
  /** The log position of the episode the verifier judged. */
  snapshotLsn: Schema.Int,
  /** The verifier of record (who ran `ratchet verify`, or the observer). */
  verifier: Event.Actor,
  at: Schema.Int
}

/**
 * The work tree a check ran against: HEAD and a digest over the dirty paths and their contents.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Tree = Schema.Struct({ head: Schema.NullOr(Schema.String), dirtyDigest: Schema.String })

/**
 * @since 0.1.0
 * @category models
 */
export type Tree = typeof Tree.Type

/**
 * A command run in the workspace: exit, duration, output blobs, or why it could not start.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CommandEvidence = Schema.TaggedStruct("command", {
  ...common,
  command: Schema.String,
  expectExitCode: Schema.Int,
  tree: Tree,
  startedAt: Schema.Int,
  exitCode: Schema.NullOr(Schema.Int),
  signal: Schema.NullOr(Schema.String),
  timedOut: Schema.Boolean,
  durationMs: Schema.Int,
  stdoutRef: Schema.NullOr(Schema.String),
  stderrRef: Schema.NullOr(Schema.String),
  /** The last lines of output, inline, so a reader sees why without loading a blob. */
  outputTail: Schema.String,
  /** Why the command never ran (spawn failed, not found), or null when it ran. */
  notStarted: Schema.NullOr(Schema.String)
})

/**
 * One JUnit test case as evidence.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CaseEvidence = Schema.Struct({
  suite: Schema.String,
  name: Schema.String,
  status: Schema.Literal("passed", "failed", "errored", "skipped"),
  message: Schema.NullOr(Schema.String)
})

/**
 * A JUnit XML report the command wrote: every test case, and the report itself as a blob.
 *
 * @since 0.1.0
 * @category schemas
 */
export const JUnitEvidence = Schema.TaggedStruct("junit", {
  ...common,
  report: Schema.String,
  reportRef: Schema.NullOr(Schema.String),
  counts: Schema.Struct({ passed: Schema.Int, failed: Schema.Int, errored: Schema.Int, skipped: Schema.Int }),
  cases: Schema.Array(CaseEvidence),
  /** Why the report could not be used (missing, stale, invalid), or null. */
  problem: Schema.NullOr(Schema.String)
})

/**
 * Files the command produced, hashed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ArtifactEvidence = Schema.TaggedStruct("artifact", {
  ...common,
  artifacts: Schema.Array(Schema.Struct({
    path: Schema.String,
    /** The SHA-256 found, or null when the file is missing or unreadable. */
    sha256: Schema.NullOr(Schema.String),
    expected: Schema.NullOr(Schema.String),
    size: Schema.NullOr(Schema.Int),
    problem: Schema.NullOr(Schema.String)
  }))
})

/**
 * A person's observation, typed on a terminal.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ManualEvidence = Schema.TaggedStruct("manual", {
  ...common,
  procedure: Schema.String,
  /** The observer the spec names (a role or a person). */
  observer: Schema.String,
  result: Schema.Literal("pass", "fail"),
  note: Schema.String,
  channel: Schema.Literal("terminal")
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const Evidence = Schema.Union(CommandEvidence, JUnitEvidence, ArtifactEvidence, ManualEvidence)

/**
 * @since 0.1.0
 * @category models
 */
export type Evidence = typeof Evidence.Type

/**
 * A stored evidence record that does not decode (corrupt, or written by a newer Ratchet).
 *
 * @since 0.1.0
 * @category errors
 */
export class EvidenceInvalid extends Schema.TaggedError<EvidenceInvalid>()("@ratchet/verifier/EvidenceInvalid", {
  ref: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Evidence ${this.ref} cannot be read: ${this.reason}. Verify the criterion again to record fresh evidence.`
  }
}

const encodeJson = Schema.encodeSync(Schema.parseJson(Evidence))
const decodeJson = Schema.decodeUnknownEither(Schema.parseJson(Evidence))

/**
 * What is wrong with a blob that does not decode, in one short line: the first issue and where it
 * is (never the schema's own description, which spells out the whole union, nor a huge value).
 */
const problemOf = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const where = issue?.path.map(String).join(".") ?? ""
  const what = issue === undefined
    ? "unreadable"
    : issue._tag === "Transformation"
    ? `not JSON: ${issue.message}`
    : where === ""
    ? "not a JSON object of a known evidence kind"
    : `${where}: ${issue.message}`
  const line = what.replace(/\s+/g, " ")
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

/**
 * Stores an evidence record; its blob reference is the evidence ref.
 *
 * @since 0.1.0
 * @category constructors
 */
export const store = (blobs: BlobStore.Service, evidence: Evidence): Effect.Effect<string, StorageError> =>
  Effect.map(blobs.put(new TextEncoder().encode(encodeJson(evidence))), (ref) => ref)

/**
 * Loads and decodes an evidence record.
 *
 * @since 0.1.0
 * @category constructors
 */
export const load = (
  blobs: BlobStore.Service,
  ref: string
): Effect.Effect<Evidence, EvidenceInvalid | BlobStore.BlobNotFound | BlobStore.InvalidBlobRef | StorageError> =>
  Effect.flatMap(blobs.get(ref), (bytes) => {
    let text: string
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    } catch {
      return Effect.fail(new EvidenceInvalid({ ref, reason: "it is not UTF-8 text" }))
    }
    const decoded = decodeJson(text)
    return Either.isRight(decoded)
      ? Effect.succeed(decoded.right)
      : Effect.fail(new EvidenceInvalid({ ref, reason: `it is not an evidence record (${problemOf(decoded.left)})` }))
  })

/**
 * The blobs an evidence record refers to (output, report), for `--show-output`.
 *
 * @since 0.1.0
 * @category getters
 */
export const bodies = (evidence: Evidence): ReadonlyArray<{ readonly label: string; readonly ref: string }> => {
  switch (evidence._tag) {
    case "command":
      return [
        ...(evidence.stdoutRef === null ? [] : [{ label: "stdout", ref: evidence.stdoutRef }]),
        ...(evidence.stderrRef === null ? [] : [{ label: "stderr", ref: evidence.stderrRef }])
      ]
    case "junit":
      return evidence.reportRef === null ? [] : [{ label: evidence.report, ref: evidence.reportRef }]
    case "artifact":
    case "manual":
      return []
  }
}
