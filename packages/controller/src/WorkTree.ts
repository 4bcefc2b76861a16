/**
 * The work tree as a run sees it: the commit checked out and every dirty path with a hash of its
 * contents. Two observations give the paths a step changed (committed, staged, edited, created or
 * deleted — an edit of a file that was already dirty included), and one observation is what a
 * pause records and a resume compares. Git is only read (optional locks off), and `.ratchet/` is
 * left out: Ratchet rewrites its projections there at every step boundary.
 *
 * Gitignored files are not dirty paths, with one exception kept apart from them
 * (`Observation.hostConfiguration`): the files under the workspace's `.claude/` and `.codex/` and its `.mcp.json`
 * (named in any case, as macOS and Windows fold it), where the hosts keep settings that are
 * gitignored by default (`.claude/settings.local.json`) and that a later session of the host reads.
 * A step that writes one there (an agent's script, a command) changed it, and its end blocks the
 * task whatever the scope allows (`StepScope.ranViolations`, ADR 0043's last amendment); boundaries and their digests do not include them, so
 * a person's own host writing its local settings during a pause or a manual step changes nothing.
 *
 * @since 0.1.0
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Digest from "@ratchet/kernel/Digest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as GitStatus from "./GitStatus.js"
import * as HostConfiguration from "./HostConfiguration.js"
import { gitArgv, gitEnvironment } from "./internal/gitEnvironment.js"
import * as Scope from "./Scope.js"

/**
 * Git could not be read.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkTreeError extends Schema.TaggedError<WorkTreeError>()("@ratchet/controller/WorkTreeError", {
  root: Schema.String,
  operation: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot ${this.operation} in ${this.root}: ${this.reason}. Check that git works in this checkout (git status), then run the command again.`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Observation {
  readonly head: string | null
  /** Dirty path → a hash of its contents (`deleted` for a deleted file), sorted by path. */
  readonly dirty: ReadonlyMap<string, string>
  /**
   * Gitignored files under the workspace's `.claude/` and `.codex/` → a hash of their contents
   * (see the module comment). Absent from an observation read back from a stored boundary, and
   * then not compared.
   */
  readonly hostConfiguration?: ReadonlyMap<string, string> | undefined
}

/** The workspace's top-level host configuration (`HostConfiguration`), in whatever case it is spelt. */
const hostDirectoriesIn = (root: string): ReadonlyArray<string> => {
  try {
    return fs.readdirSync(root, { withFileTypes: true })
      // A symbolic link counts as what it names would (observed by its target).
      .filter((entry) => (entry.isDirectory() || entry.isFile() || entry.isSymbolicLink()) && HostConfiguration.isHostConfiguration(entry.name))
      .map((entry) => entry.name)
  } catch {
    return []
  }
}

const maxOutput = 64 * 1024 * 1024

const git = (root: string, args: ReadonlyArray<string>, input?: string): Effect.Effect<{ readonly code: number; readonly stdout: string }, WorkTreeError> =>
  Effect.async((resume) => {
    const argv = gitArgv(["--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.quotepath=false", ...args], root)
    const child = execFile(
      argv.file,
      argv.args,
      { cwd: root, env: gitEnvironment(), maxBuffer: maxOutput, timeout: 120_000, killSignal: "SIGKILL", encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error === null) return resume(Effect.succeed({ code: 0, stdout }))
        const code = (error as { code?: unknown }).code
        if (typeof code === "number") return resume(Effect.succeed({ code, stdout: `${stdout}\u0000${stderr}` }))
        resume(Effect.fail(new WorkTreeError({ root, operation: `run git ${args[0] ?? ""}`, reason: error.message })))
      }
    )
    if (input !== undefined) child.stdin?.end(input)
    return Effect.sync(() => child.kill("SIGKILL"))
  })

const checked = (root: string, args: ReadonlyArray<string>, input?: string) =>
  Effect.flatMap(git(root, args, input), (result) =>
    result.code === 0
      ? Effect.succeed(result.stdout)
      : Effect.fail(new WorkTreeError({ root, operation: `run git ${args.join(" ")}`, reason: `git exited with ${result.code}` })))

/**
 * The commit checked out (null before the first commit) and the dirty paths with content hashes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const observe = (root: string): Effect.Effect<Observation, WorkTreeError> =>
  Effect.gen(function*() {
    // One git process: the commit comes in version 2's `# branch.oid` header.
    const status = GitStatus.parse(yield* checked(root, GitStatus.args))
    if (Either.isLeft(status)) {
      return yield* new WorkTreeError({ root, operation: `read git ${GitStatus.args.join(" ")}`, reason: status.left })
    }
    const head = status.right.head
    const sorted = status.right.paths.filter((path) => !Scope.isRatchetPath(path))
    const dirty = new Map<string, string>()
    // The ignored files under the hosts' directories (listed only where one exists, so the walk stays there).
    const directories = hostDirectoriesIn(root)
    const ignored = directories.length === 0
      ? []
      : (yield* checked(root, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", ...directories.map((name) => `:(literal)${name}`)]))
        .split("\u0000").filter((entry) => entry !== "").sort()
    const hostConfiguration = new Map<string, string>()
    if (sorted.length === 0 && ignored.length === 0) return { head, dirty, hostConfiguration }
    // `hash-object` fails on a path that no longer exists, and it follows a symbolic link (so it
    // fails on a dangling one or one to a directory): hash the regular files with git, a link by
    // its target, and mark the rest.
    const existing: Array<string> = []
    const hashOf = new Map<string, string>()
    for (const entry of [...sorted, ...ignored]) {
      try {
        const full = path.join(root, entry)
        const stat = fs.lstatSync(full)
        if (stat.isFile()) existing.push(entry)
        else if (stat.isSymbolicLink()) hashOf.set(entry, `link:${createHash("sha256").update(fs.readlinkSync(full)).digest("hex")}`)
      } catch {
        // Gone: marked deleted below.
      }
    }
    // `--stdin-paths` unquotes a line that starts with `"`: `./` keeps every name literal.
    const hashes = existing.length === 0
      ? []
      : (yield* checked(root, ["hash-object", "--no-filters", "--stdin-paths"], existing.map((entry) => `./${entry}\n`).join(""))).trim().split("\n")
    existing.forEach((path, i) => hashOf.set(path, hashes[i] ?? "unknown"))
    for (const path of sorted) dirty.set(path, hashOf.get(path) ?? "deleted")
    for (const path of ignored) hostConfiguration.set(path, hashOf.get(path) ?? "deleted")
    return { head, dirty, hostConfiguration }
  })

/**
 * The paths that differ between two observations: changed by commits in between, or dirty with
 * different contents (or dirty in one and not the other), sorted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const changedBetween = (root: string, before: Observation, after: Observation): Effect.Effect<ReadonlyArray<string>, WorkTreeError> =>
  Effect.gen(function*() {
    const changed = new Set<string>()
    for (const [path, hash] of after.dirty) if (before.dirty.get(path) !== hash) changed.add(path)
    for (const path of before.dirty.keys()) if (!after.dirty.has(path)) changed.add(path)
    // The ignored host configuration, when both ends observed it (a stored boundary did not).
    if (before.hostConfiguration !== undefined && after.hostConfiguration !== undefined) {
      for (const [path, hash] of after.hostConfiguration) if (before.hostConfiguration.get(path) !== hash) changed.add(path)
      for (const path of before.hostConfiguration.keys()) if (!after.hostConfiguration.has(path)) changed.add(path)
    }
    if (before.head !== after.head && after.head !== null) {
      const args = before.head === null
        ? ["ls-tree", "-r", "-z", "--name-only", after.head]
        : ["diff", "--name-only", "-z", "--no-renames", before.head, after.head]
      for (const path of (yield* checked(root, args)).split("\u0000")) {
        if (path !== "" && !Scope.isRatchetPath(path)) changed.add(path)
      }
    }
    return [...changed].sort()
  })

/**
 * The paths among `changed` that are a git repository of their own: a directory holding a `.git`
 * (a directory or a `gitdir:` file) — an untracked nested repository, which git lists as `dir/`,
 * or a gitlink (`git add inner`, mode 160000), staged or committed. `git status` of the parent runs
 * git inside each with that repository's settings (ADR 0045's amendment), so a step may not leave
 * one (`StepScope.ranViolations`). Plain `lstat`s; no git runs in them.
 *
 * @since 0.5.0
 * @category constructors
 */
export const repositoriesAmong = (root: string, changed: ReadonlyArray<string>): ReadonlyArray<string> =>
  changed.filter((entry) => {
    try {
      fs.lstatSync(path.join(root, entry, ".git"))
      return true
    } catch {
      return false
    }
  })

/**
 * A digest of the dirty paths and their contents: equal digests mean the same uncommitted work.
 *
 * @since 0.1.0
 * @category constructors
 */
export const dirtyDigest = (observation: Observation): string =>
  Digest.ofCanonical(JSON.stringify([...observation.dirty.entries()]))

/**
 * What differs between a recorded boundary and the work tree now, as sentences (empty when
 * nothing does).
 *
 * @since 0.1.0
 * @category constructors
 */
export const differences = (
  recorded: { readonly head: string | null; readonly dirtyPaths: ReadonlyArray<string>; readonly dirtyDigest: string },
  now: Observation
): ReadonlyArray<string> => {
  const found: Array<string> = []
  if (recorded.head !== now.head) found.push(`HEAD moved from ${recorded.head ?? "(no commit)"} to ${now.head ?? "(no commit)"}`)
  const was = new Set(recorded.dirtyPaths)
  const is = [...now.dirty.keys()]
  const added = is.filter((path) => !was.has(path))
  const cleaned = recorded.dirtyPaths.filter((path) => !now.dirty.has(path))
  if (added.length > 0) found.push(`newly changed: ${added.slice(0, 20).join(", ")}${added.length > 20 ? ", …" : ""}`)
  if (cleaned.length > 0) found.push(`no longer changed: ${cleaned.slice(0, 20).join(", ")}${cleaned.length > 20 ? ", …" : ""}`)
  if (found.length === 0 && recorded.dirtyDigest !== dirtyDigest(now)) found.push("the contents of uncommitted files changed")
  return found
}
