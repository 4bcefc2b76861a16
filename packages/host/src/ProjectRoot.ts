/**
 * Where a hook call's project is looked for. Never in the payload's `cwd`: that is what the host
 * reports of the agent's shell, which the agent moves (`cd /`), so a project looked up from it can
 * be escaped by moving out of it. The start is where the host started the session:
 *
 * - the directory the host names in its project variable, when it has one and sets it (Claude
 *   Code's `CLAUDE_PROJECT_DIR`, "the project root where the session started", which stays put
 *   when Claude changes directory or enters a worktree);
 * - else the hook process's own working directory, which the host chose (Codex starts its hooks
 *   in the session's working directory and documents no such variable).
 *
 * The project is the Ratchet project at or above the start. Only when the start is in none (a
 * session started in a home directory or a folder of repositories) is the reported `cwd` used to
 * look for one, and only when it lies below the start. The guard then resolves relative paths
 * from the reported `cwd` only when it is inside the project root.
 *
 * Pure: the caller reads the environment and the file system.
 *
 * @since 0.1.0
 */
import * as path from "node:path"

/**
 * The start of the project lookup, or why it cannot be had.
 *
 * @since 0.1.0
 * @category models
 */
export type Start =
  | { readonly _tag: "Start"; readonly directory: string }
  | { readonly _tag: "Invalid"; readonly reason: string }

/**
 * Whether a path or directory has a control character (C0, DEL or C1: NUL, line ends, escapes):
 * nothing a real path needs, and what hides a path from the person reading it.
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasControlCharacters = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true
  }
  return false
}

/**
 * Where the lookup starts: the host's project variable when it is set, else the hook's own
 * working directory. A variable set to something that is not an absolute path without control
 * characters is refused (the caller fails closed), never replaced by a guess.
 *
 * @since 0.1.0
 * @category constructors
 */
export const start = (options: {
  /** The host's project variable (`CLAUDE_PROJECT_DIR`), if the host has one. */
  readonly variable: string | undefined
  readonly environment: Readonly<Record<string, string | undefined>>
  /** The hook process's working directory. */
  readonly directory: string
}): Start => {
  const named = options.variable === undefined ? undefined : options.environment[options.variable]
  if (named !== undefined && named !== "") {
    if (hasControlCharacters(named) || !path.isAbsolute(named)) {
      return {
        _tag: "Invalid",
        reason: `${options.variable} is ${JSON.stringify(named.slice(0, 120))}, not an absolute path without control characters, so the project this call belongs to is unknown`
      }
    }
    return { _tag: "Start", directory: path.resolve(named) }
  }
  if (hasControlCharacters(options.directory) || !path.isAbsolute(options.directory)) {
    return { _tag: "Invalid", reason: `the hook's working directory ${JSON.stringify(options.directory.slice(0, 120))} is not an absolute path without control characters` }
  }
  return { _tag: "Start", directory: path.resolve(options.directory) }
}

/**
 * Whether the host's reported `cwd` may be used to look for a project below `start`: absolute,
 * free of control characters, and inside `start`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const below = (start: string, reported: string): boolean => {
  if (hasControlCharacters(reported) || !path.isAbsolute(reported)) return false
  const relative = path.relative(start, path.resolve(reported))
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative))
}
