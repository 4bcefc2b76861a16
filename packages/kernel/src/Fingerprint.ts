/**
 * A failure's fingerprint, structured: what failed (a step, a criterion, a preflight check), how it
 * ended, and the digest of its normalised text. Its `key` is the successor budget's fingerprint
 * (`Progress.fingerprintKey`, `fp:<ending>:<16 hex digits>`), so a lesson and the budget compare
 * the same strings.
 *
 * The budget compares failures inside one task, in one workspace. A lesson compares them across
 * tasks and workspaces, where the workspace's absolute path, the home directory, the system's
 * temporary directory and generated ids differ although the failure is the same: {@link
 * normaliseText} removes those first, then applies the budget's own normalisation. Pure: the
 * locations to remove arrive as input, nothing is read from the environment.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as Progress from "./Progress.js"

// One line, 1 to 128 characters, no control or bidirectional-override character.
const Subject = Schema.String.pipe(
  Schema.pattern(/^[^\p{Cc}\u202a-\u202e\u2066-\u2069]{1,128}$/u, {
    message: () => "expected what failed (a step id, a criterion id or a check's name): 1 to 128 characters on one line, no control characters"
  })
)

/**
 * A failure fingerprint as the successor budget writes it: `fp:<ending>:<16 hex digits>`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const Key = Schema.String.pipe(
  Schema.pattern(/^fp:[A-Za-z0-9_.:-]{1,80}:[0-9a-f]{16}$/, {
    message: (issue) =>
      `expected a failure fingerprint ("fp:" then how it ended, ":" and 16 lowercase hex digits, as Ratchet records them), got ${
        JSON.stringify(String(issue.actual).slice(0, 80))
      }`
  })
)
/**
 * @since 0.3.0
 * @category models
 */
export type Key = typeof Key.Type

/**
 * How a failure ended. `Exit`, `Signal` and `TimedOut` read as the successor budget writes them
 * (`exit:<code>`, `signal:<name>`, `timeout`).
 *
 * @since 0.3.0
 * @category models
 */
export type Ending =
  | { readonly _tag: "Exit"; readonly code: number }
  | { readonly _tag: "Signal"; readonly signal: string | null }
  | { readonly _tag: "TimedOut" }
  | { readonly _tag: "Verdict"; readonly verdict: "FAIL" | "INDETERMINATE" | "NOT_RUN" }
  | { readonly _tag: "Indeterminate" }
  | { readonly _tag: "WrongAssumption" }

/**
 * The ending as the fingerprint spells it.
 *
 * @since 0.3.0
 * @category encoding
 */
export const endingText = (ending: Ending): string => {
  switch (ending._tag) {
    case "Exit":
      return `exit:${ending.code}`
    case "Signal":
      return `signal:${ending.signal ?? "unknown"}`
    case "TimedOut":
      return "timeout"
    case "Verdict":
      return `verdict:${ending.verdict}`
    case "Indeterminate":
      return "indeterminate"
    case "WrongAssumption":
      return "assumption"
  }
}

/**
 * Where the run was: its workspace's root and the home directory, as absolute paths (or null when
 * unknown). They differ between two workspaces failing the same way.
 *
 * @since 0.3.0
 * @category models
 */
export interface Locations {
  readonly workspaceRoot: string | null
  readonly homeDir: string | null
}

const pathChar = /[A-Za-z0-9._-]/

/** `text` with every occurrence of the directory `root` (a whole path component) as `marker`. */
const relocate = (text: string, root: string | null, marker: string): string => {
  if (root === null) return text
  const bare = root.replace(/[\\/]+$/, "")
  // "/" or "C:" alone would swallow every absolute path.
  if (bare.length < 3) return text
  let out = ""
  let from = 0
  for (let at = text.indexOf(bare); at !== -1; at = text.indexOf(bare, at + bare.length)) {
    // `/home/al` is not a prefix of `/home/alice`: the next character must end the component.
    if (pathChar.test(text.charAt(at + bare.length))) continue
    out += `${text.slice(from, at)}${marker}`
    from = at + bare.length
  }
  return out + text.slice(from)
}

// Temporary directories other than `/tmp` (which the budget's normaliser already replaces):
// macOS's per-user `/var/folders/…` (and `/private/var/folders/…`), `/var/tmp`, Windows' `%TEMP%`.
const temporary = /(?:\/private)?\/var\/(?:folders|tmp)\/[^\s'"]*|[A-Za-z]:[\\/]Users[\\/][^\\/\s'"]+[\\/]AppData[\\/]Local[\\/]Temp[\\/][^\s'"]*/gi
const uuid = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi

/**
 * The text a fingerprint is taken over. First what is the run's own and would make two runs of the
 * same failure differ: the workspace root (`<workspace>`, also written with `/` separators), the
 * home directory (`<home>`), macOS, `/var/tmp` and Windows temporary directories (`<tmp>`) and
 * UUIDs (`<uuid>`, which the hex rule below would only cut into pieces); then the successor
 * budget's own normalisation (`Progress.normaliseTail`: colour codes gone, `/tmp` paths, hex ids of
 * 7 digits or more, and every number — times, pids, line and column numbers, durations — replaced
 * by markers, whitespace collapsed, the last 20 non-empty lines kept). Only the last 128 KiB
 * are read, as the budget reads the last 64 KiB.
 *
 * @since 0.3.0
 * @category constructors
 */
export const normaliseText = (text: string, locations: Locations): string => {
  const workspace = locations.workspaceRoot
  let result = relocate(text.slice(-131_072), workspace, "<workspace>")
  result = relocate(result, workspace?.replaceAll("\\", "/") ?? null, "<workspace>")
  result = relocate(result, locations.homeDir, "<home>")
  return Progress.normaliseTail(result.replace(temporary, "<tmp>").replace(uuid, "<uuid>"))
}

/**
 * A structured fingerprint: what failed (`subject`: a step, a criterion or a preflight check), how
 * it ended, and the digest of the normalised text; `key` is what lessons and the successor budget
 * compare (`fp:<ending>:<digest>`).
 *
 * @since 0.3.0
 * @category schemas
 */
export const Fingerprint = Schema.Struct({
  subject: Subject,
  ending: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_.:-]{1,80}$/)),
  digest: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{16}$/)),
  key: Key
}).pipe(
  Schema.filter((fingerprint) =>
    fingerprint.key === `fp:${fingerprint.ending}:${fingerprint.digest}`
      ? undefined
      : `key ${JSON.stringify(fingerprint.key)} does not read "fp:<ending>:<digest>" of its own fields; take the fingerprint as Fingerprint.of returns it`
  )
)

/**
 * @since 0.3.0
 * @category models
 */
export type Fingerprint = typeof Fingerprint.Type

/**
 * The fingerprint of a failure of `subject` that ended as `ending`, over `text` (an output tail, a
 * verdict's detail, a preflight's observation) normalised by {@link normaliseText}. For a step's
 * command whose output names none of the run's own locations, `key` is exactly the successor
 * budget's fingerprint (`Progress.fingerprint`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const of = (input: {
  readonly subject: string
  readonly ending: Ending
  readonly text: string
  readonly locations: Locations
}): Fingerprint => {
  const ending = endingText(input.ending)
  const key = Progress.fingerprintKey(input.subject, ending, normaliseText(input.text, input.locations))
  return { subject: input.subject, ending, digest: key.slice(-16), key }
}

