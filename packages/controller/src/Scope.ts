/**
 * Scope: which paths a run may change. A spec's `execution.allowedScope` and `forbiddenScope` are
 * lists of repository-relative paths or globs; after each step the paths it changed are held
 * against them, and any path outside the allowed scope (when one is given) or inside the forbidden
 * one is a violation the task blocks on.
 *
 * Patterns are the kernel's globs (`Glob`): a plain path covers itself and everything under it;
 * `*`, `?`, `**`, `[abc]` and `{a,b}` as there.
 *
 * `.ratchet/` is Ratchet's own (its projections are rewritten at every step boundary), so it is
 * never a violation, except the project's trust files (`.ratchet/project.json`, which names the
 * project, and `.ratchet/approvers.json`, which names who may approve): a step never changes those,
 * whatever its scope says, so a change to them is always a violation (`protected`, ADR 0018).
 *
 * @since 0.1.0
 */
import * as Glob from "@ratchet/kernel/Glob"

/**
 * Whether `path` (repository-relative) is covered by `pattern`: the kernel's glob matcher
 * (`Glob.matches`), which the spec's scope, the guard and a lesson's scope share.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matches: (pattern: string, path: string) => boolean = Glob.matches

const normalise = Glob.normalise

/**
 * The project's trust files: outside every task's scope, whatever the scope says.
 *
 * @since 0.2.0
 * @category models
 */
export const trustFiles: ReadonlyArray<string> = [".ratchet/project.json", ".ratchet/approvers.json"]

/**
 * Whether `path` is one of the project's trust files ({@link trustFiles}).
 *
 * @since 0.2.0
 * @category predicates
 */
export const isTrustFile = (path: string): boolean => trustFiles.includes(normalise(path))

/**
 * Whether `path` is Ratchet's own (`.ratchet/…`, its projections), which no scope restricts and no
 * observation of the work tree counts; the trust files are not (they are observed, and never in
 * scope).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isRatchetPath = (path: string): boolean => {
  const target = normalise(path)
  return (target === ".ratchet" || target.startsWith(".ratchet/")) && !isTrustFile(target)
}

/**
 * One changed path the scope does not allow, and why.
 *
 * @since 0.1.0
 * @category models
 */
export interface Violation {
  readonly path: string
  readonly reason: "forbidden" | "outside_allowed" | "protected"
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
    if (isTrustFile(path)) return [{ path, reason: "protected", pattern: null }]
    const hit = forbidden.find((pattern) => matches(pattern, path))
    if (hit !== undefined) return [{ path, reason: "forbidden", pattern: hit }]
    if (allowed.length > 0 && !allowed.some((pattern) => matches(pattern, path))) {
      return [{ path, reason: "outside_allowed", pattern: null }]
    }
    return []
  })
