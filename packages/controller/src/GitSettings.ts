/**
 * What git would read as settings for a workspace, taken with plain file-system reads (no git is
 * started: git itself would run what it reads), so that a change the loop's children made to them
 * is seen before any git runs outside the loop's sandbox (ADR 0045).
 *
 * The loop's sandbox mounts git's settings read-only (`ChildSandbox.gitSettingsOf`), but a child
 * can still point git elsewhere: rename `.git` and make a new one, replace it with a
 * `gitdir: <path>` file, write a `commondir` file into the git directory, create a user-level
 * settings file that did not exist, or change a file a configuration includes. A later git outside
 * the sandbox — `ratchet unblock` reads the tree with `git status`, and the person's own — would
 * then run the clean filter, hook or `fsmonitor` planted there. {@link snapshot} records, for the
 * work tree at `root`:
 *
 * - the `.git` entry: its kind (directory, file, link), device and inode, a file's content, a
 *   link's target;
 * - the git directory and the common directory it resolves to (with their device and inode), and
 *   the `commondir` and `gitdir` files' content or absence;
 * - `config`, `config.worktree` (of both directories), and every entry under `hooks/` and `info/`
 *   (name, kind, mode, content digest), with absence recorded;
 * - the common directory's own `commondir`, and each linked worktree's `commondir`, `gitdir` and
 *   `config.worktree` under `<common>/worktrees/`;
 * - every submodule's git directory under `<common>/modules/` (its `config`, `config.worktree`,
 *   `commondir`, `hooks/`, `info/`): `git status` of the parent runs git in a checked-out one;
 * - the user's `~/.gitconfig` and every entry under `$XDG_CONFIG_HOME/git/` (or `~/.config/git/`),
 *   absence recorded, so that creating one counts;
 * - the files any of those configurations name in `include.path`, `includeIf.<cond>.path` and
 *   `core.hooksPath` (entries under a hooks directory too), whether they exist or not, followed a
 *   few levels deep.
 *
 * {@link compare} is pure: the keys whose description differs, in order. Nothing here changes a
 * file. Settings files are read through links, as git reads them: a link is described by its
 * target, the real path it resolves to and what is there; a directory walk does not descend into
 * a linked directory below the one it was given.
 *
 * @since 0.5.0
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Event from "@ratchet/kernel/Event"

/**
 * What git would read as settings, each place named by a key (a label and a path) and described
 * by a string that changes when the place does.
 *
 * @since 0.5.0
 * @category models
 */
export interface Snapshot {
  readonly root: string
  readonly entries: ReadonlyMap<string, string>
}

/**
 * One place whose description differs between two snapshots.
 *
 * @since 0.5.0
 * @category models
 */
export interface Change {
  readonly key: string
  readonly before: string
  readonly after: string
}

/** Files larger than this are described by size and times, not read (a settings file is small). */
const maxRead = 4 * 1024 * 1024
/** How many entries a directory walk records before it stops (and says so). */
const maxEntries = 2000
/** How deep includes are followed (git allows 10). */
const maxIncludeDepth = 5

const digest = (bytes: Buffer): string => crypto.createHash("sha256").update(bytes).digest("hex").slice(0, 32)

const absent = "absent"

/** Longer text is shown by its start, length and digest (a link's target may be 4096 characters). */
const shown = (text: string): string =>
  text.length <= 160 ? text : `${text.slice(0, 80)}… (${text.length} characters, sha256:${digest(Buffer.from(text))})`

/** A file (not a link) as one line, from its `stat`: mode and content digest, or a directory's identity. */
const describeTarget = (file: string, stat: fs.Stats): string => {
  const id = `dev ${stat.dev} ino ${stat.ino} mode ${(stat.mode & 0o7777).toString(8)}`
  if (stat.isDirectory()) return `directory, ${id}`
  if (!stat.isFile()) return `special file, ${id}`
  if (stat.size > maxRead) return `file of ${stat.size} bytes, mtime ${stat.mtimeMs}, ${id}`
  try {
    return `file sha256:${digest(fs.readFileSync(file))}, mode ${(stat.mode & 0o7777).toString(8)}`
  } catch (error) {
    return `unreadable file (${(error as NodeJS.ErrnoException).code ?? "error"})`
  }
}

/**
 * `file` as one line: absent, a file's mode and content, a directory's identity, or a link: its
 * target (long ones by digest), the real path it resolves to and what is there — git reads
 * through a link, so a `~/.gitconfig -> dotfiles/gitconfig` changes when its target does.
 */
const describe = (file: string): string => {
  let stat: fs.Stats
  try {
    stat = fs.lstatSync(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === "ENOENT" || code === "ENOTDIR" ? absent : `unreadable (${code ?? "error"})`
  }
  if (!stat.isSymbolicLink()) return describeTarget(file, stat)
  let target = "?"
  try {
    target = fs.readlinkSync(file)
  } catch {
    // Described as a link whose target could not be read.
  }
  const link = `link → ${shown(target)}, dev ${stat.dev} ino ${stat.ino}`
  try {
    return `${link}, resolving to ${shown(fs.realpathSync(file))}: ${describeTarget(file, fs.statSync(file))}`
  } catch (error) {
    return `${link}, resolving to nothing (${(error as NodeJS.ErrnoException).code ?? "error"})`
  }
}

/** The text of a small regular file (through a link, as git reads it), or null. */
const textOf = (file: string): string | null => {
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile() || stat.size > maxRead) return null
    return fs.readFileSync(file, "utf8")
  } catch {
    return null
  }
}

/** A directory's identity: kind, device and inode (a renamed and recreated one differs). */
const identity = (directory: string): string => {
  try {
    const stat = fs.statSync(directory)
    return `${stat.isDirectory() ? "directory" : "not a directory"}, dev ${stat.dev} ino ${stat.ino}`
  } catch {
    return absent
  }
}

/**
 * The paths a git configuration's text names as settings to read: `include.path`,
 * `includeIf "<condition>".path` and `core.hooksPath`, resolved as git resolves them (`~/` from
 * the home directory; a relative include from the configuration's directory, a relative
 * `core.hooksPath` from `top`, the top of the work tree where the hooks run). A reading for
 * watching, not git's parser: a value it misreads names a path that is then watched for nothing.
 *
 * @since 0.5.0
 * @category constructors
 */
export const namedBy = (
  text: string,
  file: string,
  home: string,
  top: string = path.dirname(file)
): { readonly includes: ReadonlyArray<string>; readonly hooks: ReadonlyArray<string> } => {
  const includes: Array<string> = []
  const hooks: Array<string> = []
  let section = ""
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^\s+/, "")
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]/.exec(line)
    let rest = line
    if (header !== null) {
      section = (header[1] ?? "").toLowerCase()
      rest = line.slice(header[0].length).replace(/^\s+/, "")
    }
    const setting = /^([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*)$/.exec(rest)
    if (setting === null) continue
    const name = (setting[1] ?? "").toLowerCase()
    let value = (setting[2] ?? "").replace(/\s+[#;].*$/, "").trim()
    if (value.startsWith("\"") && value.endsWith("\"") && value.length >= 2) value = value.slice(1, -1)
    if (value === "") continue
    const from = (base: string) => (value.startsWith("~/") ? path.join(home, value.slice(2)) : path.resolve(base, value))
    if ((section === "include" || section === "includeif") && name === "path") includes.push(from(path.dirname(file)))
    if (section === "core" && name === "hookspath") hooks.push(from(top))
  }
  return { includes, hooks }
}

/** The names in `directory`, sorted, at most {@link maxEntries}; none when it cannot be read. */
const namesIn = (directory: string): ReadonlyArray<string> => {
  try {
    return fs.readdirSync(directory).sort().slice(0, maxEntries)
  } catch {
    return []
  }
}

/** The git directory `<root>/.git` is or names, or null (no `.git`, a file that names nothing). */
const gitDirOf = (root: string): string | null => {
  const dotGit = path.join(root, ".git")
  try {
    const stat = fs.statSync(dotGit)
    if (stat.isDirectory()) return dotGit
    const named = /^gitdir: (.+)$/m.exec(textOf(dotGit) ?? "")?.[1]
    return named === undefined ? null : path.resolve(root, named.trim())
  } catch {
    return null
  }
}

/**
 * What git would read as settings for the work tree at `root` with the environment `env` (its
 * `HOME` and `XDG_CONFIG_HOME`): see the module's comment.
 *
 * @since 0.5.0
 * @category constructors
 */
export const snapshot = (root: string, env: Readonly<Record<string, string | undefined>>): Snapshot => {
  const entries = new Map<string, string>()
  /** Each configuration read, with the top of the work tree its relative `core.hooksPath` is from. */
  const configs: Array<{ readonly file: string; readonly top: string }> = []
  const put = (label: string, file: string, description: string = describe(file)) => {
    entries.set(`${label} ${file}`, description)
  }
  /** `directory` and everything under it, not following links, each entry its own key. */
  const walk = (label: string, directory: string) => {
    put(label, directory)
    let seen = 0
    const visit = (dir: string, depth: number) => {
      let names: Array<string>
      try {
        names = fs.readdirSync(dir).sort()
      } catch {
        return
      }
      for (const name of names) {
        const file = path.join(dir, name)
        if (++seen > maxEntries) {
          entries.set(`${label} ${directory} (more entries)`, "over the limit")
          return
        }
        const description = describe(file)
        put(label, file, description)
        if (description.startsWith("directory") && depth < 8) visit(file, depth + 1)
      }
    }
    visit(directory, 0)
  }
  const config = (label: string, file: string, top: string = root) => {
    put(label, file)
    configs.push({ file, top })
  }
  /**
   * The git directories of submodules under `directory` (`<common>/modules/<name>`, a name may hold
   * `/`, and a submodule's own under its `modules/`): `git status` of the parent runs git in each
   * checked-out submodule with these settings. A directory holding `HEAD` or `config` is one.
   */
  let modulesSeen = 0
  const modules = (directory: string, depth: number) => {
    let names: Array<string>
    try {
      names = fs.readdirSync(directory).sort()
    } catch {
      return
    }
    for (const name of names) {
      const dir = path.join(directory, name)
      if (++modulesSeen > maxEntries || depth > 8) {
        entries.set(`a submodule's git directory under ${directory} (more entries)`, "over the limit")
        return
      }
      if (!identity(dir).startsWith("directory")) continue
      if (textOf(path.join(dir, "HEAD")) === null && textOf(path.join(dir, "config")) === null) {
        modules(dir, depth + 1)
        continue
      }
      put("a submodule's git directory", dir)
      // Its hooks run at the top of its work tree (`core.worktree`, relative to its git directory).
      const worktree = /^\s*worktree\s*=\s*(.+?)\s*$/im.exec(textOf(path.join(dir, "config")) ?? "")?.[1]
      const top = worktree === undefined ? dir : path.resolve(dir, worktree.replace(/^"(.*)"$/, "$1"))
      config("a submodule's configuration", path.join(dir, "config"), top)
      config("a submodule's configuration", path.join(dir, "config.worktree"), top)
      put("a submodule's common-directory pointer", path.join(dir, "commondir"))
      walk("a submodule's hooks", path.join(dir, "hooks"))
      walk("a submodule's info", path.join(dir, "info"))
      modules(path.join(dir, "modules"), depth + 1)
    }
  }

  const dotGit = path.join(root, ".git")
  put("the .git entry", dotGit)
  const gitDir = gitDirOf(root)
  entries.set(`the git directory of ${root}`, gitDir === null ? absent : `${path.resolve(gitDir)}, ${identity(gitDir)}`)
  if (gitDir !== null) {
    const commondir = path.join(gitDir, "commondir")
    put("the common-directory pointer", commondir)
    put("the worktree back-pointer", path.join(gitDir, "gitdir"))
    const named = textOf(commondir)?.trim()
    const common = named === undefined || named === "" ? gitDir : path.resolve(gitDir, named)
    entries.set(`the common directory of ${root}`, `${path.resolve(common)}, ${identity(common)}`)
    config("the repository's configuration", path.join(common, "config"))
    config("the worktree's configuration", path.join(gitDir, "config.worktree"))
    if (common !== gitDir) config("the worktree's configuration", path.join(common, "config.worktree"))
    walk("the repository's hooks", path.join(common, "hooks"))
    walk("the repository's info", path.join(common, "info"))
    // A `commondir` in the common directory itself, and the linked worktrees' pointers and settings.
    if (common !== gitDir) put("the common-directory pointer", path.join(common, "commondir"))
    put("the linked worktrees", path.join(common, "worktrees"))
    for (const name of namesIn(path.join(common, "worktrees"))) {
      const linked = path.join(common, "worktrees", name)
      put("a linked worktree's common-directory pointer", path.join(linked, "commondir"))
      put("a linked worktree's back-pointer", path.join(linked, "gitdir"))
      config("a linked worktree's configuration", path.join(linked, "config.worktree"))
    }
    put("the submodules' git directories", path.join(common, "modules"))
    modules(path.join(common, "modules"), 0)
  }
  const home = env["HOME"] ?? ""
  const xdg = env["XDG_CONFIG_HOME"] ?? (home === "" ? "" : path.join(home, ".config"))
  if (home !== "" && path.isAbsolute(home)) config("the user's configuration", path.join(home, ".gitconfig"))
  if (xdg !== "" && path.isAbsolute(xdg)) {
    const directory = path.join(xdg, "git")
    walk("the user's git settings", directory)
    configs.push({ file: path.join(directory, "config"), top: root })
  }
  // What the configurations name: included files (followed a few levels) and a hooks directory.
  const followed = new Set<string>()
  let round = configs.filter(({ file }) => textOf(file) !== null)
  for (let depth = 0; depth < maxIncludeDepth && round.length > 0; depth++) {
    const next: Array<{ readonly file: string; readonly top: string }> = []
    for (const { file, top } of round) {
      if (followed.has(`${top}\u0000${file}`)) continue
      followed.add(`${top}\u0000${file}`)
      const named = namedBy(textOf(file) ?? "", file, home, top)
      for (const included of named.includes) {
        put("a file a configuration includes", included)
        next.push({ file: included, top })
      }
      for (const hooks of named.hooks) walk("the hooks a configuration names", hooks)
    }
    round = next
  }
  return { root, entries }
}

/**
 * What differs between two snapshots of the same work tree: each key whose description changed,
 * appeared or went, in the order of `before` then `after`. Empty when nothing changed.
 *
 * @since 0.5.0
 * @category constructors
 */
export const compare = (before: Snapshot, after: Snapshot): ReadonlyArray<Change> => {
  const changes: Array<Change> = []
  for (const [key, was] of before.entries) {
    const now = after.entries.get(key) ?? "not looked at (what names it changed)"
    if (now !== was) changes.push({ key, before: was, after: now })
  }
  for (const [key, now] of after.entries) {
    if (!before.entries.has(key)) changes.push({ key, before: "not looked at", after: now })
  }
  return changes
}

/** A blocker's `requiredAction` holds at most this many characters (the kernel's event schema's bound). */
const actionLimit = 4096
/** How much of a blocker's action the changes may take, leaving room for what to do and a merged blocker's text. */
const changesLimit = 2000
/** How long one change's line may be. */
const lineLimit = 400

const clip = (text: string, limit: number): string => (text.length <= limit ? text : `${text.slice(0, limit - 1)}…`)

/**
 * The changes as one line each (`<place>: <before> → <after>`, each at most a few hundred
 * characters), at most `limit` of them.
 *
 * @since 0.5.0
 * @category constructors
 */
export const lines = (changes: ReadonlyArray<Change>, limit = 8): ReadonlyArray<string> => [
  ...changes.slice(0, limit).map((change) => clip(`${change.key}: ${change.before} → ${change.after}`, lineLimit)),
  ...(changes.length > limit ? [`and ${changes.length - limit} more`] : [])
]

/**
 * What the task blocks on when git's settings for its workspace changed during the loop: what
 * changed, and that no git may run in the checkout until a person has looked at those files (git
 * itself would run a filter, hook or `fsmonitor` planted there, `git config --list` included).
 * The changes are clipped so that the action fits the event schema's bound with what to do whole.
 *
 * @since 0.5.0
 * @category constructors
 */
export const blocker = (taskId: string, changes: ReadonlyArray<Change>): Event.Blocker => ({
  category: "scope_violation",
  owner: "user",
  requiredAction: clip(
    `git's settings for this checkout changed while the loop ran (${clip(lines(changes).join("; "), changesLimit)}). Run no git in this checkout (ratchet unblock, git status and git config run it too) until you have looked at those files with a pager or an editor: restore the .git directory, remove a commondir or gitdir file, a hook, a filter, an fsmonitor, an include or a user settings file nobody meant to add, then: ratchet unblock ${taskId} --to RUNNING --resolution "…"`,
    actionLimit
  )
})

/**
 * A look at git's settings against `before`: the blocker for `taskId` when they changed, else
 * null. What the loop hands the runner (at each step's end) and verification (after the checks).
 *
 * @since 0.5.0
 * @category constructors
 */
export const look = (before: Snapshot, taskId: string, env: Readonly<Record<string, string | undefined>>) => (): Event.Blocker | null => {
  const changes = compare(before, snapshot(before.root, env))
  return changes.length === 0 ? null : blocker(taskId, changes)
}

/**
 * The prefix every such blocker's required action starts with: how a caller tells it apart.
 *
 * @since 0.5.0
 * @category guards
 */
export const isBlocker = (blocker: Event.Blocker | null | undefined): boolean =>
  blocker !== null && blocker !== undefined && blocker.requiredAction.startsWith("git's settings for this checkout changed")

/**
 * `ours` said first in another block of the same moment (`theirs`: a step's scope, a decision a
 * person must take, the hosts' configuration), so that the one blocker a task keeps says both.
 * A person's blocker keeps its category (lifting a `decision_needed` one still asks for the
 * decision); any other becomes ours with its text added: only a person lifts this one.
 *
 * @since 0.5.0
 * @category constructors
 */
export const merged = (ours: Event.Blocker, theirs: Event.Blocker | null | undefined): Event.Blocker => {
  if (theirs === null || theirs === undefined || isBlocker(theirs)) return ours
  // Ours whole (it says to run no git), theirs clipped to what the event schema's bound leaves.
  const requiredAction = clip(`${ours.requiredAction} It also blocked on: ${theirs.requiredAction}`, actionLimit)
  return theirs.owner === "user" ? { ...theirs, requiredAction } : { ...ours, requiredAction }
}
