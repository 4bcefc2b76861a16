/**
 * `ratchet preflight <task>`: a read-only look at the repository against the approved spec, taken
 * before planning and recorded as an `Event.PreflightObservation`. Any missing path or invalid
 * scope is a wrong assumption of the contract; the kernel turns it into a HOLD whose action is
 * `ratchet reopen`. A wrong assumption is a finding, never a {@link PreflightError}: that error
 * means the repository could not be inspected at all.
 *
 * What is observed:
 * - `head`: `git rev-parse --verify HEAD`; `null` in a repository without a commit, or outside a
 *   git work tree.
 * - `dirtyPaths`: every path `git status --porcelain=v1 -z --untracked-files=all` reports (both
 *   paths of a rename or copy), relative to the top of the work tree with `/` separators. Nothing is
 *   filtered out, not even `.ratchet/` projections: the observation reports what is there, and a
 *   reader decides what matters. Empty outside a work tree.
 * - `missingPaths`: every `context.relevantPaths` entry that does not exist under the root. A path
 *   that is empty, absolute, contains NUL, or leaves the root — once normalised (`src/../x` is
 *   `x`, `../x` leaves) or through a symbolic link in a directory on the way — counts as missing;
 *   an entry is kept verbatim (an empty one reads `(empty path)`). The last component may itself
 *   be a symbolic link: it is an entry of the repository either way.
 * - `invalidScopes`: every `execution.allowedScope` / `forbiddenScope` pattern that is empty,
 *   absolute, escapes the root, or contains NUL or a backslash; and every `allowedScope` pattern
 *   with nowhere to go: for a pattern with a glob metacharacter (`*`, `?`, `[`, `{`) the directory
 *   before the first one must be a directory inside the root; a plain path is a permission, not a
 *   claim (the task may create it), so it must exist or its parent must be a directory inside the
 *   root or one another allowed pattern grants. A `forbiddenScope` pattern may name what does not
 *   exist yet: forbidding it keeps the task from creating it. Each entry reads `allowedScope: <pattern> (<reason>)`.
 *
 * Every list is sorted (by UTF-16 code units) and deduplicated, and every entry is 1 to 4096
 * characters long as the event schema requires (a longer one is cut, ending in `…`), so the same
 * repository yields the same observation.
 *
 * Nothing is written. Git runs without a shell, with `--no-optional-locks` and
 * `GIT_OPTIONAL_LOCKS=0` (so `status` does not refresh the index), with the file-system monitor
 * hook off, in the C locale, without the variables that point git at another repository
 * (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, …: the root decides the repository), with a
 * timeout and a bounded output.
 *
 * @since 0.1.0
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type * as Event from "@ratchet/kernel/Event"
import type * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { gitArgv, gitEnvironment } from "./internal/gitEnvironment.js"

/**
 * The repository could not be inspected: the root is not a readable directory, git is missing,
 * failed or did not answer in time.
 *
 * @since 0.1.0
 * @category errors
 */
export class PreflightError extends Schema.TaggedError<PreflightError>()("@ratchet/controller/PreflightError", {
  operation: Schema.String,
  path: Schema.String,
  reason: Schema.String,
  fix: Schema.String
}) {
  override get message(): string {
    return `Preflight could not ${this.operation} ${this.path}: ${this.reason}. ${this.fix}`
  }
}

/**
 * The longest entry the event schema accepts.
 *
 * @since 0.1.0
 * @category models
 */
export const maxEntryLength = 4096

/**
 * How long one git command may take.
 *
 * @since 0.1.0
 * @category models
 */
export const gitTimeoutMs = 60_000

/**
 * The most output one git command may produce (`git status` of a very large dirty tree).
 *
 * @since 0.1.0
 * @category models
 */
export const gitMaxOutputBytes = 32 * 1024 * 1024

// ---------------------------------------------------------------------------------------------
// Entries
// ---------------------------------------------------------------------------------------------

/** Cuts an entry to the schema's bound, never in the middle of a surrogate pair. */
const bounded = (entry: string): string => {
  if (entry.length <= maxEntryLength) return entry
  let cut = maxEntryLength - 1
  const last = entry.charCodeAt(cut - 1)
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1
  return `${entry.slice(0, cut)}…`
}

const sortedUnique = (entries: Iterable<string>): ReadonlyArray<string> =>
  [...new Set([...entries].map(bounded))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

// eslint-disable-next-line no-control-regex
const controlCharacter = /[\u0000-\u001f\u007f]/

/** A pattern as it appears in an entry: verbatim, quoted when empty or holding control characters. */
const shown = (value: string): string => (value === "" || controlCharacter.test(value) ? JSON.stringify(value) : value)

// ---------------------------------------------------------------------------------------------
// Git
// ---------------------------------------------------------------------------------------------

interface GitResult {
  /** The exit code; `null` never reaches callers (a signal or timeout is an error). */
  readonly code: number
  readonly stdout: Buffer
  readonly stderr: string
}

const firstLine = (text: string): string => text.split("\n").find((line) => line.trim() !== "")?.trim() ?? "no message"

/** Runs `git <args>` in `cwd` read-only; a non-zero exit is a result, failing to run is an error. */
const git = (cwd: string, args: ReadonlyArray<string>): Effect.Effect<GitResult, PreflightError> =>
  Effect.async<GitResult, PreflightError>((resume) => {
    const argv = gitArgv(["--no-optional-locks", "-c", "core.fsmonitor=false", ...args], cwd)
    const child = execFile(
      argv.file,
      argv.args,
      {
        cwd,
        env: gitEnvironment(),
        encoding: "buffer",
        maxBuffer: gitMaxOutputBytes,
        timeout: gitTimeoutMs,
        killSignal: "SIGKILL",
        windowsHide: true
      },
      (error, stdout, stderr) => {
        const command = `git ${args[0] ?? ""}`
        if (error === null) {
          resume(Effect.succeed({ code: 0, stdout, stderr: stderr.toString("utf8") }))
          return
        }
        const code = (error as { code?: unknown }).code
        if (code === "ENOENT") {
          resume(Effect.fail(
            new PreflightError({
              operation: "run",
              path: "git",
              reason: "git is not installed or not on PATH",
              fix: "Install git (or put it on PATH) and run `ratchet preflight` again."
            })
          ))
        } else if (code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
          resume(Effect.fail(
            new PreflightError({
              operation: "read the output of",
              path: command,
              reason: `it printed more than ${gitMaxOutputBytes} bytes`,
              fix: "Ignore generated files (.gitignore) or commit them, then run `ratchet preflight` again."
            })
          ))
        } else if (typeof code === "number") {
          resume(Effect.succeed({ code, stdout, stderr: stderr.toString("utf8") }))
        } else if (error.killed || error.signal !== null) {
          resume(Effect.fail(
            new PreflightError({
              operation: "run",
              path: command,
              reason: `it did not finish within ${gitTimeoutMs / 1000} s (stopped by ${error.signal ?? "a signal"})`,
              fix: "Check that the repository is not on a hung file system, then run `ratchet preflight` again."
            })
          ))
        } else {
          resume(Effect.fail(
            new PreflightError({
              operation: "run",
              path: command,
              reason: error.message,
              fix: "Check that git works in this directory, then run `ratchet preflight` again."
            })
          ))
        }
      }
    )
    return Effect.sync(() => {
      child.kill("SIGKILL")
    })
  })

const gitFailed = (root: string, args: ReadonlyArray<string>, result: GitResult) =>
  new PreflightError({
    operation: `run git ${args.join(" ")} in`,
    path: root,
    reason: `git exited with ${result.code}: ${firstLine(result.stderr)}`,
    fix: "Fix what git reports (for example `git config --global --add safe.directory <path>` for a repository owned by another user), then run `ratchet preflight` again."
  })

/** Whether `root` is inside a git work tree. */
const inWorkTree = (root: string) =>
  Effect.gen(function*() {
    const args = ["rev-parse", "--is-inside-work-tree"]
    const result = yield* git(root, args)
    if (result.code === 0) return result.stdout.toString("utf8").trim() === "true"
    if (/not a git repository/i.test(result.stderr)) return false
    return yield* gitFailed(root, args, result)
  })

const headOf = (root: string) =>
  Effect.gen(function*() {
    const args = ["rev-parse", "--verify", "--quiet", "HEAD"]
    const result = yield* git(root, args)
    // `--verify --quiet` exits 1 without a message when HEAD names no commit yet.
    if (result.code === 1) return null
    if (result.code !== 0) return yield* gitFailed(root, args, result)
    const head = result.stdout.toString("utf8").trim()
    return head === "" ? null : head
  })

/**
 * Parses `git status --porcelain=v1 -z` output: `XY <path>\0`, and for a rename or copy
 * `XY <path>\0<original path>\0`. Both paths of a rename are reported.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parseStatus = (output: string): ReadonlyArray<string> => {
  const fields = output.split("\0")
  const paths: Array<string> = []
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i]!
    if (field.length < 4) continue
    const status = field.slice(0, 2)
    paths.push(field.slice(3))
    if (status.includes("R") || status.includes("C")) {
      const original = fields[++i]
      if (original !== undefined && original !== "") paths.push(original)
    }
  }
  return sortedUnique(paths)
}

const dirtyPathsOf = (root: string) =>
  Effect.gen(function*() {
    const args = ["status", "--porcelain=v1", "-z", "--untracked-files=all"]
    const result = yield* git(root, args)
    if (result.code !== 0) return yield* gitFailed(root, args, result)
    return parseStatus(result.stdout.toString("utf8"))
  })

// ---------------------------------------------------------------------------------------------
// The file system
// ---------------------------------------------------------------------------------------------

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

/** Errors that mean "not there" (or not reachable as a path) rather than "could not look". */
const absent = new Set(["ENOENT", "ENOTDIR", "ELOOP", "ENAMETOOLONG", "ERR_INVALID_ARG_VALUE", "ERR_INVALID_ARG_TYPE"])

/** Runs a file-system probe; "not there" is `null`, anything else (permission, I/O) is an error. */
const probe = <A>(file: string, run: () => Promise<A>): Effect.Effect<A | null, PreflightError> =>
  Effect.tryPromise({
    try: run,
    catch: (error) => error
  }).pipe(
    Effect.catchAll((error) =>
      absent.has(codeOf(error) ?? "")
        ? Effect.succeed(null)
        : Effect.fail(
          new PreflightError({
            operation: "read",
            path: file,
            reason: codeOf(error) ?? String(error),
            fix: "Check that this user may read the repository, then run `ratchet preflight` again."
          })
        )
    )
  )

const isInside = (top: string, candidate: string): boolean => {
  const relative = path.relative(top, candidate)
  return relative === "" || (!relative.startsWith(`..${path.sep}`) && relative !== ".." && !path.isAbsolute(relative))
}

/** Why a path cannot name an entry of the repository, before looking at the disk. */
const pathProblem = (entry: string): string | undefined => {
  if (entry === "") return "is empty"
  if (entry.includes("\0")) return "contains a NUL character"
  if (entry.startsWith("/") || path.isAbsolute(entry) || /^[A-Za-z]:/.test(entry)) return "is absolute"
  return undefined
}

/** Why a scope pattern is malformed, before looking at the disk: the spec decoder's rules. */
const patternProblem = (pattern: string): string | undefined => {
  const problem = pathProblem(pattern)
  if (problem !== undefined) return problem
  if (pattern.split("/").includes("..")) return "escapes the repository (it has a \"..\" segment)"
  if (pattern.includes("\\")) return "contains a backslash (scope patterns use \"/\" separators)"
  return undefined
}

/**
 * Where `entry` is under the real root, or `null` when it leaves it: lexically, or through a
 * symbolic link in one of its directories. The last component is not followed.
 */
const locate = (realRoot: string, entry: string) =>
  Effect.gen(function*() {
    const lexical = path.resolve(realRoot, entry)
    if (!isInside(realRoot, lexical)) return null
    if (lexical === realRoot) return realRoot
    const parent = yield* probe(path.dirname(lexical), () => fs.realpath(path.dirname(lexical)))
    if (parent === null || !isInside(realRoot, parent)) return null
    return path.join(parent, path.basename(lexical))
  })

/** Whether `entry` is an entry of the repository (a file, a directory or a link) under the root. */
const exists = (realRoot: string, entry: string) =>
  Effect.gen(function*() {
    const located = yield* locate(realRoot, entry)
    if (located === null) return false
    return (yield* probe(located, () => fs.lstat(located))) !== null
  })

/** Whether `entry` is a directory under the root, following links that stay inside it. */
const isDirectory = (realRoot: string, entry: string) =>
  Effect.gen(function*() {
    const located = yield* locate(realRoot, entry)
    if (located === null) return false
    const real = yield* probe(located, () => fs.realpath(located))
    if (real === null || !isInside(realRoot, real)) return false
    const stat = yield* probe(real, () => fs.stat(real))
    return stat !== null && stat.isDirectory()
  })

const missingPathsOf = (realRoot: string, relevantPaths: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const missing: Array<string> = []
    for (const entry of relevantPaths) {
      const there = pathProblem(entry) === undefined && (yield* exists(realRoot, entry))
      if (!there) missing.push(entry === "" ? "(empty path)" : entry)
    }
    return sortedUnique(missing)
  })

const globCharacter = /[*?[{]/

/**
 * The directory a scope pattern grants (a plain path: itself; a glob: the directory before its
 * first metacharacter), without a trailing slash; "" for the root.
 */
const grantedDirectory = (pattern: string): string => {
  const glob = pattern.search(globCharacter)
  if (glob === -1) return pattern.replace(/\/+$/, "")
  const staticPart = pattern.slice(0, glob)
  return staticPart.slice(0, staticPart.lastIndexOf("/") + 1).replace(/\/+$/, "")
}

/**
 * Whether one of `allowed` grants `directory` (so the task may create it): a plain path grants
 * itself and what is under it; a glob what is below the directory before its metacharacters (at
 * the root, only a `**` reaches into directories).
 */
const granted = (directory: string, allowed: ReadonlyArray<string>): boolean =>
  allowed.some((pattern) => {
    if (patternProblem(pattern) !== undefined) return false
    const grant = grantedDirectory(pattern)
    if (pattern.search(globCharacter) === -1) return directory === grant || directory.startsWith(`${grant}/`)
    // A glob's own directory must be there anyway (it is checked as one); it grants what is below.
    return grant === "" ? pattern.includes("**") : directory.startsWith(`${grant}/`)
  })

/**
 * What is wrong with one allowed scope pattern, or `undefined` when it can be acted on. An allowed
 * path is a permission, not a claim about the repository: the task may create it, so only where it
 * would go must be there — its parent directory, or a directory another allowed pattern grants.
 * A glob's directory (before its first metacharacter) must be a directory of the repository.
 */
const scopeProblem = (realRoot: string, pattern: string, allowed: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const malformed = patternProblem(pattern)
    if (malformed !== undefined) return malformed
    const glob = pattern.search(globCharacter)
    if (glob === -1) {
      const literal = pattern.replace(/\/+$/, "")
      if (literal === "" || (yield* exists(realRoot, literal))) return undefined
      const parent = literal.includes("/") ? literal.slice(0, literal.lastIndexOf("/")) : ""
      if (parent === "" || granted(parent, allowed.filter((other) => other !== pattern))) return undefined
      return (yield* isDirectory(realRoot, parent)) ? undefined : `${literal} does not exist, nor does its directory ${parent}`
    }
    const directory = grantedDirectory(pattern)
    if (directory === "") return undefined
    return (yield* isDirectory(realRoot, directory)) ? undefined : `directory ${directory} does not exist`
  })

const invalidScopesOf = (realRoot: string, execution: Spec.Execution | undefined) =>
  Effect.gen(function*() {
    const invalid: Array<string> = []
    const fields = [
      ["allowedScope", execution?.allowedScope ?? []],
      ["forbiddenScope", execution?.forbiddenScope ?? []]
    ] as const
    for (const [field, patterns] of fields) {
      for (const pattern of patterns) {
        // Forbidding what does not exist yet is meaningful (it keeps the task from creating it), so
        // a forbidden pattern is only checked for form; an allowed one must have where to go.
        const problem = field === "forbiddenScope" ? patternProblem(pattern) : yield* scopeProblem(realRoot, pattern, execution?.allowedScope ?? [])
        if (problem !== undefined) invalid.push(`${field}: ${shown(pattern)} (${problem})`)
      }
    }
    return sortedUnique(invalid)
  })

// ---------------------------------------------------------------------------------------------
// Inspect
// ---------------------------------------------------------------------------------------------

/**
 * Inspects the repository at `root` against `spec`, read-only (see the module comment for what is
 * observed and how). Fails only when the repository cannot be inspected; wrong assumptions are
 * reported in the observation.
 *
 * @since 0.1.0
 * @category constructors
 */
export const inspect = (root: string, spec: Spec.Spec): Effect.Effect<Event.PreflightObservation, PreflightError> =>
  Effect.gen(function*() {
    const resolved = path.resolve(root)
    const realRoot = yield* probe(resolved, () => fs.realpath(resolved))
    const stat = realRoot === null ? null : yield* probe(realRoot, () => fs.stat(realRoot))
    if (realRoot === null || stat === null || !stat.isDirectory()) {
      return yield* new PreflightError({
        operation: "open",
        path: resolved,
        reason: realRoot === null || stat === null ? "it does not exist" : "it is not a directory",
        fix: "Run the command inside the project's checkout."
      })
    }
    yield* probe(realRoot, () => fs.access(realRoot, fs.constants.R_OK | fs.constants.X_OK)).pipe(
      Effect.filterOrFail(
        (readable) => readable !== null,
        () =>
          new PreflightError({
            operation: "read",
            path: realRoot,
            reason: "it vanished while being inspected",
            fix: "Run `ratchet preflight` again."
          })
      )
    )
    const tracked = yield* inWorkTree(realRoot)
    const [head, dirtyPaths] = tracked
      ? yield* Effect.all([headOf(realRoot), dirtyPathsOf(realRoot)])
      : [null, [] as ReadonlyArray<string>]
    const missingPaths = yield* missingPathsOf(realRoot, spec.context?.relevantPaths ?? [])
    const invalidScopes = yield* invalidScopesOf(realRoot, spec.execution)
    return { head, dirtyPaths, missingPaths, invalidScopes }
  })
