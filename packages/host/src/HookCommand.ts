/**
 * The command line a host runs for one of Ratchet's hook entries: the fail-closed launcher
 * (`ratchet-hook`, a POSIX sh script) told the host, the event, and the program that answers.
 *
 * A host runs a hook's command through a shell (`sh -c` in Claude Code, `$SHELL -lc` in Codex,
 * which may be bash, zsh or fish), and lets the call through when the command cannot start (exit
 * 127): so the command names the launcher by an absolute path and `/bin/sh`, never a program the
 * host's PATH may lack, and the launcher answers in the host's blocking form whenever the program
 * behind it fails (ADR 0026). The one thing the launcher cannot answer for is its own absence: the
 * command checks for it first, and when it is gone blocks (exit 2) with the fix on the events that
 * block a tool call, and warns (exit 1) on the others.
 *
 * Every word is written in single quotes and must hold no quote, backslash or control character,
 * so that every shell a host may use reads it the same (fish, unlike sh, gives a backslash meaning
 * inside single quotes).
 *
 * @since 0.2.0
 */
import * as ProjectRoot from "./ProjectRoot.js"

/**
 * The launcher's file name (`apps/cli/bin/ratchet-hook`, and the Claude Code plugin's copy).
 *
 * @since 0.2.0
 * @category constants
 */
export const launcherName = "ratchet-hook"

/**
 * The events on which Ratchet's answer can block a tool call, so that a Ratchet that cannot run
 * must block: the launcher denies there, and the command checks for the launcher first.
 *
 * @since 0.2.0
 * @category constants
 */
export const blockingEvents: ReadonlyArray<string> = ["PreToolUse", "PermissionRequest"]

/**
 * Why `text` cannot be one word of a hook command (a quote, a backslash or a control character),
 * or null when it can.
 *
 * @since 0.2.0
 * @category predicates
 */
export const unquotable = (text: string): string | null =>
  text === ""
    ? "is empty"
    : ProjectRoot.hasControlCharacters(text)
    ? "has a control character"
    : text.includes("'")
    ? "has a single quote (')"
    : text.includes("\\")
    ? "has a backslash"
    : null

/**
 * `text` as one shell word, in single quotes. The caller checked it with {@link unquotable}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const word = (text: string): string => `'${text}'`

/**
 * Where the launcher is:
 * - `Path`: an absolute path, checked for before it runs;
 * - `HostVariable`: a path under a variable the host fills in, which cannot be missing, such as
 *   the plugin's `${CLAUDE_PLUGIN_ROOT}/bin/ratchet-hook` (in double quotes, as the host asks);
 * - `OnPath`: the bare name, looked up on the host's PATH before it runs.
 *
 * @since 0.2.0
 * @category models
 */
export type Launcher =
  | { readonly _tag: "Path"; readonly path: string }
  | { readonly _tag: "HostVariable"; readonly path: string }
  | { readonly _tag: "OnPath" }

/**
 * One hook entry's command.
 *
 * @since 0.2.0
 * @category models
 */
export interface Spec {
  readonly host: string
  readonly event: string
  readonly launcher: Launcher
  /**
   * What the launcher runs, as shell text (words already quoted), or "" for `ratchet hook <host>`
   * from the host's PATH.
   */
  readonly program: string
  /** What a person does when the launcher is gone, in the blocking message (one line, no quotes). */
  readonly fix: string
}

/**
 * Where a launcher `OnPath` is: on the PATH itself, or else beside the `ratchet` on the PATH, in
 * the directory its link resolves to (`npm i -g` links only the `ratchet` bin; the launcher ships in
 * the same package's `bin/`, not as a bin of its own, so that `npx` finds one command). Only an
 * absolute path is run: where `readlink -f` fails (an old macOS) the path would be relative, and a
 * `ratchet-hook` in the directory the host runs hooks in (the repository) must not answer for
 * Ratchet.
 */
const onPath = `{ L=$(command -v "$0") || { R=$(command -v ratchet) && L=$(dirname "$(readlink -f "$R")")/$0 && [ -r "$L" ]; }; } && case $L in /*) exec /bin/sh "$L" "$@" ;; esac`

/**
 * The check for the launcher that precedes it: `$0` is the launcher, `$2` the event. When it is
 * gone, a blocking event is blocked (exit 2) and any other goes on with a warning (exit 1, the
 * non-blocking error of both hosts). Every event needs the check: without it, `/bin/sh <missing>`
 * exits 2 in dash (Debian's and Ubuntu's /bin/sh), which blocks a prompt or a stop, and dash
 * looks a bare script name up in the current directory only, never on the PATH.
 */
const guard = (launcher: Launcher, blocking: boolean, fix: string): string => {
  const found = launcher._tag === "OnPath" ? onPath : `[ -r "$0" ] && exec /bin/sh "$0" "$@"`
  const missing = launcher._tag === "OnPath" ? "is neither on the PATH this host gives its hooks nor beside the ratchet on it" : "is missing"
  return blocking
    ? `${found}; printf "%s\\n" "Ratchet blocked this call because its hook launcher $0 ${missing}. ${fix}" >&2; exit 2`
    : `${found}; printf "%s\\n" "Ratchet (warning): its hook launcher $0 ${missing}, so Ratchet did not see this $2. ${fix}" >&2; exit 1`
}

/**
 * The command line of `spec`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const command = (spec: Spec): string => {
  const launcher = spec.launcher._tag === "Path" ? word(spec.launcher.path) : spec.launcher._tag === "HostVariable" ? `"${spec.launcher.path}"` : launcherName
  const rest = [spec.host, spec.event, spec.program].filter((part) => part !== "").join(" ")
  if (spec.launcher._tag === "HostVariable") return `/bin/sh ${launcher} ${rest}`
  return `/bin/sh -c ${word(guard(spec.launcher, blockingEvents.includes(spec.event), spec.fix))} ${launcher} ${rest}`
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Whether `text` runs the launcher for `host`: directly, through `/bin/sh` (or `sh`), or after the
 * blocking events' check (`/bin/sh -c '…' <launcher> <host> …`), the launcher named by any path,
 * quoted or not, or bare.
 *
 * @since 0.2.0
 * @category predicates
 */
export const runsLauncher = (host: string, text: string): boolean =>
  new RegExp(
    `^\\s*(?:(?:/bin/)?sh\\s+(?:-c\\s+'[^']*'\\s+)?)?(?:"[^"]*/|'[^']*/|[^\\s"']*/)?["']?${escape(launcherName)}["']?\\s+${escape(host)}(?:\\s|$)`
  ).test(text)
