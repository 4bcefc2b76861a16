/**
 * `git status --porcelain=v2 -z --branch` read: the commit checked out and every path git reports
 * as changed, staged or untracked, from one git process. The runner looks at the work tree at every
 * step boundary, and a process start is the dearest part of a look: version 2 names the commit in
 * its `# branch.oid` header, so no `git rev-parse HEAD` is needed beside it.
 *
 * The format (git-status(1), "Porcelain Format Version 2"), every entry ending in NUL:
 * - `# <header> <value>`: `branch.oid` is the commit, or `(initial)` before the first one;
 * - `1 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <path>`: a changed entry (8 fields before the path);
 * - `2 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <X><score> <path>` then `<origPath>` as the next entry:
 *   a rename or copy (9 fields before the path);
 * - `u <XY> <sub> <m1> <m2> <m3> <mW> <h1> <h2> <h3> <path>`: an unmerged entry (10 fields);
 * - `? <path>`, `! <path>`: untracked, ignored.
 *
 * A path may hold spaces (it is everything after the fixed fields) but not NUL. Anything else — an
 * entry of an unknown kind, one with too few fields, a rename without its original path, a header
 * with a commit id that is not one, a path longer than any the system opens — is malformed output,
 * and the read fails rather than guess: a path missed here is a change the scope check would not
 * see.
 *
 * @since 0.2.0
 */
import * as Either from "effect/Either"

/**
 * What a status read found.
 *
 * @since 0.2.0
 * @category models
 */
export interface Status {
  /** The commit checked out, or null before the first commit. */
  readonly head: string | null
  /** Every path reported (for a rename or copy, both names), sorted, without duplicates. */
  readonly paths: ReadonlyArray<string>
}

/** Fields before the path, by entry kind. */
const fixedFields: Readonly<Record<string, number>> = { "1": 8, "2": 9, u: 10 }

/** The longest path a boundary records (and longer than any the system can open). */
const maxPathLength = 4096

const commitId = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/

/**
 * The arguments that make git print what {@link parse} reads (untracked files listed one by one,
 * ignored ones left out).
 *
 * @since 0.2.0
 * @category constants
 */
export const args: ReadonlyArray<string> = ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignored=no"]

/** The path after `fields` space-separated fields of `entry`, or null when there are fewer. */
const afterFields = (entry: string, fields: number): string | null => {
  let at = 0
  for (let i = 0; i < fields; i++) {
    const space = entry.indexOf(" ", at)
    if (space === -1) return null
    at = space + 1
  }
  return at < entry.length ? entry.slice(at) : null
}

/**
 * Reads `output`, or says what is wrong with it (the entry, shortened, and why).
 *
 * @since 0.2.0
 * @category constructors
 */
export const parse = (output: string): Either.Either<Status, string> => {
  const entries = output.split("\0")
  // -z ends every entry with NUL: the text after the last one must be empty.
  const last = entries.pop()
  if (last !== undefined && last !== "") return Either.left(`the output ends without NUL after ${JSON.stringify(last.slice(0, 80))} (truncated?)`)
  let head: string | null | undefined
  const paths = new Set<string>()
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    const shown = JSON.stringify(entry.slice(0, 80))
    if (entry.startsWith("# ")) {
      if (entry.startsWith("# branch.oid ")) {
        const oid = entry.slice("# branch.oid ".length)
        if (oid === "(initial)") head = null
        else if (commitId.test(oid)) head = oid
        else return Either.left(`the header ${shown} names no commit`)
      }
      continue
    }
    const kind = entry.slice(0, 2)
    if (kind === "? " || kind === "! ") {
      if (entry.length === 2) return Either.left(`the entry ${shown} has no path`)
      if (kind === "? ") paths.add(entry.slice(2))
      continue
    }
    const fields = fixedFields[entry.charAt(0)]
    if (fields === undefined || entry.charAt(1) !== " ") return Either.left(`the entry ${shown} is of no kind git prints`)
    const path = afterFields(entry, fields)
    if (path === null) return Either.left(`the entry ${shown} has fewer than ${fields} fields before its path`)
    paths.add(path)
    if (entry.charAt(0) === "2") {
      const original = entries[++i]
      if (original === undefined || original === "") return Either.left(`the rename ${shown} has no original path`)
      paths.add(original)
    }
  }
  if (head === undefined) return Either.left("no `# branch.oid` header (git status was not given --branch?)")
  for (const path of paths) {
    if (path.length > maxPathLength) return Either.left(`a path of ${path.length} characters (at most ${maxPathLength}): ${JSON.stringify(path.slice(0, 80))}…`)
  }
  return Either.right({ head, paths: [...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) })
}
