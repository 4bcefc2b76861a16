/**
 * Which changed paths are the hosts' configuration: anything under a `.claude/` or `.codex/`
 * directory of the workspace, and an `.mcp.json` (Claude Code's project MCP servers). A later
 * agent step's host reads them (Claude Code runs with `--setting-sources user,project`, and
 * `.mcp.json` is project configuration), so code that writes them between two steps — a
 * criterion's check running files the agent wrote — can reach the next agent unheld.
 *
 * Names are compared as the guard compares its protected directories (`@ratchet/host/Guard`):
 * case folded and without trailing dots or spaces, since macOS and Windows filesystems fold case
 * and Windows drops those, so `.CLAUDE/`, `.Claude./` and `.MCP.JSON` count; any part of the path
 * counts (a nested `.claude/` too), which errs on the side of holding.
 *
 * @since 0.5.0
 */
import type * as Event from "@ratchet/kernel/Event"

/**
 * The hosts' configuration directories: Claude Code's and Codex's project settings.
 *
 * @since 0.5.0
 * @category models
 */
export const directories: ReadonlyArray<string> = [".claude", ".codex"]

/**
 * The hosts' configuration files: Claude Code's project MCP servers.
 *
 * @since 0.5.0
 * @category models
 */
export const files: ReadonlyArray<string> = [".mcp.json"]

/** The names whose presence as a path part makes it host configuration, folded. */
const names: ReadonlySet<string> = new Set([...directories, ...files])

const folded = (part: string): string => part.toLowerCase().replace(/[. ]+$/, (tail) => (part === tail ? tail : ""))

/**
 * Whether `path` (repository-relative, `/` or `\` separated) is the hosts' configuration.
 *
 * @since 0.5.0
 * @category predicates
 */
export const isHostConfiguration = (path: string): boolean => path.split(/[/\\]/).some((part) => names.has(folded(part)))

/**
 * The paths among `changed` that are the hosts' configuration, in their order.
 *
 * @since 0.5.0
 * @category constructors
 */
export const among = (changed: ReadonlyArray<string>): ReadonlyArray<string> => changed.filter(isHostConfiguration)

/**
 * What a verification pass whose checks changed the hosts' configuration (`paths`) blocks on: the
 * paths, and how to resume once a person has looked at them and removed what the checks wrote.
 *
 * @since 0.5.0
 * @category constructors
 */
export const blocker = (taskId: string, paths: ReadonlyArray<string>): Event.Blocker => ({
  category: "scope_violation",
  owner: "user",
  requiredAction: `The criteria's checks changed the hosts' configuration (${paths.slice(0, 10).join(", ")}${
    paths.length > 10 ? ", …" : ""
  }), which the next agent step's host would read; no check may write there. Look at what they wrote and remove it (git checkout -- <tracked path>, rm <new file>), find the check or the code it runs that writes there, then: ratchet unblock ${taskId} --to RUNNING --resolution "…"`
})
