/**
 * Scope: which paths a run may change. A spec's `execution.allowedScope` and `forbiddenScope` are
 * lists of repository-relative paths or globs; after each step the paths it changed are held
 * against them, and any path outside the allowed scope (when one is given) or inside the forbidden
 * one is a violation the task blocks on.
 *
 * Patterns, matched against `/`-separated relative paths:
 * - a plain path matches itself and everything under it (`src` and `src/` cover `src/a/b.ts`);
 * - `*` matches within one path segment, `?` one character of a segment, `**` any number of
 *   segments (zero included), `[abc]` one of a set, `{a,b}` either alternative.
 *
 * `.ratchet/` is Ratchet's own (its projections are rewritten at every step boundary), so it is
 * never a violation.
 *
 * @since 0.1.0
 */

const escape = (text: string): string => text.replace(/[.+^$()|\\/]/g, "\\$&")

/** The regular expression body of one glob pattern (no anchors). */
const body = (pattern: string): string => {
  let out = ""
  let i = 0
  let braces = 0
  while (i < pattern.length) {
    const char = pattern[i] as string
    if (char === "*") {
      if (pattern[i + 1] === "*") {
        // `**/` is zero or more whole segments; a trailing `**` is anything below.
        if (pattern[i + 2] === "/") {
          out += "(?:[^/]+/)*"
          i += 3
        } else {
          out += ".*"
          i += 2
        }
      } else {
        out += "[^/]*"
        i += 1
      }
    } else if (char === "?") {
      out += "[^/]"
      i += 1
    } else if (char === "[") {
      const close = pattern.indexOf("]", i + 1)
      if (close === -1) {
        out += "\\["
        i += 1
      } else {
        const set = pattern.slice(i + 1, close).replace(/\\/g, "\\\\").replace(/^!/, "^")
        out += `[${set}]`
        i = close + 1
      }
    } else if (char === "{") {
      braces += 1
      out += "(?:"
      i += 1
    } else if (char === "}" && braces > 0) {
      braces -= 1
      out += ")"
      i += 1
    } else if (char === "," && braces > 0) {
      out += "|"
      i += 1
    } else {
      out += escape(char)
      i += 1
    }
  }
  return out + ")".repeat(braces)
}

const normalise = (path: string): string => path.replace(/^\.\//, "").replace(/\/+$/, "")

/**
 * Whether `path` (repository-relative) is covered by `pattern`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches = (pattern: string, path: string): boolean => {
  const target = normalise(path)
  const glob = normalise(pattern)
  if (glob === "" || glob === ".") return true
  // A pattern covers what it names and everything below it.
  return new RegExp(`^${body(glob)}(?:/.*)?$`, "s").test(target)
}

/**
 * Whether `path` is Ratchet's own (`.ratchet/…`), which no scope restricts.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isRatchetPath = (path: string): boolean => {
  const target = normalise(path)
  return target === ".ratchet" || target.startsWith(".ratchet/")
}

/**
 * One changed path the scope does not allow, and why.
 *
 * @since 0.1.0
 * @category models
 */
export interface Violation {
  readonly path: string
  readonly reason: "forbidden" | "outside_allowed"
  /** The forbidden pattern it matched, for `forbidden`. */
  readonly pattern: string | null
}

/**
 * The changed paths the scope does not allow: inside a forbidden pattern, or outside every allowed
 * one when allowed patterns are given. An empty `allowed` list allows every path.
 *
 * @since 0.1.0
 * @category constructors
 */
export const violations = (
  changed: ReadonlyArray<string>,
  allowed: ReadonlyArray<string>,
  forbidden: ReadonlyArray<string>
): ReadonlyArray<Violation> =>
  changed.flatMap((path): ReadonlyArray<Violation> => {
    if (isRatchetPath(path)) return []
    const hit = forbidden.find((pattern) => matches(pattern, path))
    if (hit !== undefined) return [{ path, reason: "forbidden", pattern: hit }]
    if (allowed.length > 0 && !allowed.some((pattern) => matches(pattern, path))) {
      return [{ path, reason: "outside_allowed", pattern: null }]
    }
    return []
  })
