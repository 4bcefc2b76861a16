/**
 * `.ratchet/project.json`: the committed identity of a project.
 *
 * `{ schemaVersion, projectId, displayName, createdAt }` as the brief gives it, plus an optional
 * `lease` block with the project's lease settings (see `@ratchet/lease`'s `LeaseSettings`). The
 * file is decoded strictly: an unknown key, a wrong type, a file too large or not UTF-8 is an
 * `InvalidProjectFile` naming the field and the fix; a file written by a newer Ratchet is
 * `ProjectFileTooNew`. Decoding is pure; reading and writing the file is the `Workspace`'s.
 *
 * @since 0.1.0
 */
import * as LeaseSettings from "@ratchet/lease/LeaseSettings"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * The schema version this Ratchet writes and reads.
 *
 * @since 0.1.0
 * @category constants
 */
export const currentSchemaVersion = 1

/**
 * The largest project file read: it holds a few short fields.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxBytes = 64 * 1024

/**
 * A project id: it keys every task of the project in the store, so it uses the store's alphabet.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ProjectId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/),
  Schema.annotations({ message: () => "expected 1 to 128 characters from A-Z a-z 0-9 . _ : -, starting with a letter or digit" })
)

/**
 * @since 0.1.0
 * @category schemas
 */
export const ProjectFile = Schema.Struct({
  schemaVersion: Schema.Literal(currentSchemaVersion),
  projectId: ProjectId,
  // One filter, so both bounds fail with the same message.
  displayName: Schema.String.pipe(
    Schema.filter((name) => name.length >= 1 && name.length <= 200, {
      message: () => "expected a name of 1 to 200 characters"
    })
  ),
  /** ISO-8601, UTC. */
  createdAt: Schema.String.pipe(
    Schema.pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/),
    Schema.annotations({ message: () => "expected an ISO-8601 UTC time such as 2026-12-02T10:00:00.000Z" })
  ),
  lease: Schema.optional(LeaseSettings.ProjectSettings)
})

/**
 * @since 0.1.0
 * @category models
 */
export type ProjectFile = typeof ProjectFile.Type

/**
 * A project file that cannot be used. Nothing was written because of it.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidProjectFile extends Schema.TaggedError<InvalidProjectFile>()("@ratchet/controller/InvalidProjectFile", {
  path: Schema.String,
  /** The field at fault (`projectId`, `lease.graceMs`), or `(file)` for the file as a whole. */
  field: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.field === "(file)" ? "" : `${this.field}: `}${this.reason}. Fix the file by hand, or move it aside and run \`ratchet init\` to write a new one (a new project id starts a new task history).`
  }
}

/**
 * A project file written by a newer Ratchet.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProjectFileTooNew extends Schema.TaggedError<ProjectFileTooNew>()("@ratchet/controller/ProjectFileTooNew", {
  path: Schema.String,
  schemaVersion: Schema.Number
}) {
  override get message(): string {
    return `${this.path} was written by a newer Ratchet (schemaVersion ${this.schemaVersion}; this one reads ${currentSchemaVersion}). Upgrade Ratchet; nothing was changed.`
  }
}

/** The first problem of a decode, as the field at fault and what is wrong with it. */
const fieldOf = (error: ParseResult.ParseError): { readonly field: string; readonly reason: string } => {
  const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const reason = first === undefined
    ? "does not decode"
    : first._tag === "Unexpected"
    ? "is not a field of the project file"
    : first._tag === "Missing"
    ? "is missing"
    : first.message
  return { field: first === undefined || first.path.length === 0 ? "(file)" : first.path.map(String).join("."), reason }
}

/**
 * Decodes the bytes of a project file read from `path`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decode = (
  path: string,
  bytes: Uint8Array
): Either.Either<ProjectFile, InvalidProjectFile | ProjectFileTooNew> => {
  const invalid = (field: string, reason: string) => Either.left(new InvalidProjectFile({ path, field, reason }))
  if (bytes.byteLength > maxBytes) return invalid("(file)", `is ${bytes.byteLength} bytes, more than the ${maxBytes} a project file may have`)
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    return invalid("(file)", "is not UTF-8 text")
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return invalid("(file)", `is not JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return invalid("(file)", "is not a JSON object")
  const version = (json as Record<string, unknown>)["schemaVersion"]
  if (typeof version === "number" && Number.isInteger(version) && version > currentSchemaVersion) {
    return Either.left(new ProjectFileTooNew({ path, schemaVersion: version }))
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(ProjectFile, { onExcessProperty: "error", errors: "first" })(json),
    (error) => {
      const { field, reason } = fieldOf(error)
      return new InvalidProjectFile({ path, field, reason })
    }
  )
}

/**
 * The file's text: two-space JSON with a final newline, fields in the brief's order.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (project: ProjectFile): string =>
  `${
    JSON.stringify(
      {
        schemaVersion: project.schemaVersion,
        projectId: project.projectId,
        displayName: project.displayName,
        createdAt: project.createdAt,
        ...(project.lease === undefined ? {} : { lease: project.lease })
      },
      null,
      2
    )
  }\n`
