/**
 * Where a command runs: the project (`.ratchet/project.json`, committed, shared by every clone) and
 * the workspace (this checkout).
 *
 * A workspace is a checkout, not a folder: a clone or a git worktree is a new workspace, a renamed
 * or moved folder is not. So the workspace id lives in the checkout's own git directory
 * (`git rev-parse --absolute-git-dir`: `.git` for a clone, `.git/worktrees/<name>` for a linked
 * worktree; read from `.git` itself where that answers as git would, GitDir), which a clone does
 * not copy, a worktree does not share and a rename carries along.
 * Outside git it lives in `.ratchet/local/`, which `.ratchet/.gitignore` keeps out of commits; a
 * copied folder is then the same workspace, since nothing tells the copy apart.
 *
 * Both files are created once, atomically (written aside, then linked into place, which fails if
 * another process got there first, whose file then wins), so two processes starting in a fresh
 * checkout agree on one id.
 *
 * @since 0.1.0
 */
import { execFile } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as GitDir from "./GitDir.js"
import * as ProjectFile from "./ProjectFile.js"
import { gitArgv, gitEnvironment } from "./internal/gitEnvironment.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Located {
  /** The directory holding `.ratchet/`. */
  readonly root: string
  readonly projectFile: string
  readonly project: ProjectFile.ProjectFile
  readonly workspaceId: string
  /** Whether the checkout is a git work tree. */
  readonly git: boolean
  /**
   * This checkout's own directory (beside its workspace id, never committed), where it keeps what
   * it saw the store commit (`StoreMark`). Absent for a value made by hand: then nothing is kept.
   */
  readonly localDir?: string | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Initialised extends Located {
  /** False when the project file was already there (init is idempotent). */
  readonly created: boolean
}

/**
 * No project file in the directory or above it.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProjectNotInitialised extends Schema.TaggedError<ProjectNotInitialised>()("@ratchet/controller/ProjectNotInitialised", {
  from: Schema.String
}) {
  override get message(): string {
    return `No Ratchet project in ${this.from} or above it (no .ratchet/project.json). Run \`ratchet init\` in the repository first.`
  }
}

/**
 * The file system refused an operation on the project's files.
 *
 * @since 0.1.0
 * @category errors
 */
export class WorkspaceError extends Schema.TaggedError<WorkspaceError>()("@ratchet/controller/WorkspaceError", {
  operation: Schema.String,
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `Could not ${this.operation} ${this.path}: ${this.reason}. Check that the directory exists and that this user may write to it.`
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The project of `from` (searching upwards) and this checkout's workspace id. */
  readonly locate: (from: string) => Effect.Effect<
    Located,
    ProjectNotInitialised | ProjectFile.InvalidProjectFile | ProjectFile.ProjectFileTooNew | WorkspaceError
  >
  /**
   * Makes the checkout of `from` a Ratchet project: at the git work tree's top (or at `from`
   * outside git), writes `.ratchet/project.json` with a new stable project id unless it is already
   * there. Idempotent; never rewrites an existing file, valid or not.
   */
  readonly init: (
    from: string,
    options?: { readonly displayName?: string | undefined; readonly now?: Date | undefined }
  ) => Effect.Effect<Initialised, ProjectFile.InvalidProjectFile | ProjectFile.ProjectFileTooNew | WorkspaceError>
}

/**
 * @since 0.1.0
 * @category services
 */
export class Workspace extends Context.Tag("@ratchet/controller/Workspace")<Workspace, Service>() {}

// ---------------------------------------------------------------------------------------------

const reasonOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string"
    ? `${error.code}${"message" in error && typeof error.message === "string" ? ` (${error.message})` : ""}`
    : String(error)

const attempt = <A>(operation: string, file: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (error) => new WorkspaceError({ operation, path: file, reason: reasonOf(error) }) })

const isMissing = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && (error.code === "ENOENT" || error.code === "ENOTDIR")

/** The git work tree's top and this checkout's git directory, or `null` outside git (or without git). */
const gitOf = (cwd: string): Effect.Effect<{ readonly top: string; readonly gitDir: string } | null> =>
  Effect.async((resume) => {
    const argv = gitArgv(["rev-parse", "--show-toplevel", "--absolute-git-dir"], cwd)
    execFile(argv.file, argv.args, { cwd, timeout: 10_000, env: gitEnvironment() }, (error, stdout) => {
      const [top, gitDir] = stdout.split("\n")
      resume(Effect.succeed(error === null && top && gitDir ? { top, gitDir } : null))
    })
  })

/**
 * This checkout's git directory when the project's `root` is in a git work tree, else `null`: read
 * from `root/.git` when that answers as git would (GitDir), so most commands start no git
 * process; else from `git rev-parse`.
 */
const gitDirOf = (root: string): Effect.Effect<string | null> =>
  Effect.suspend(() => {
    const read = GitDir.atRoot(root)
    return read !== undefined ? Effect.succeed(read) : Effect.map(gitOf(root), (git) => git?.gitDir ?? null)
  })

/**
 * Creates `file` with `content` unless it exists, atomically: written aside, flushed, then linked
 * into place. Returns the file's content afterwards (ours, or the one another process linked first).
 */
const createOnce = (file: string, content: string) =>
  Effect.gen(function*() {
    const aside = `${file}.${process.pid}.${randomUUID()}.tmp`
    yield* attempt("write", aside, async () => {
      const handle = await fs.open(aside, "wx", 0o644)
      try {
        await handle.writeFile(content, "utf8")
        await handle.sync()
      } finally {
        await handle.close()
      }
    })
    const linked = yield* Effect.either(
      Effect.tryPromise({ try: () => fs.link(aside, file), catch: (error) => error })
    )
    yield* Effect.promise(() => fs.rm(aside, { force: true }))
    if (Either.isLeft(linked)) {
      const error = linked.left
      const exists = typeof error === "object" && error !== null && "code" in error && error.code === "EEXIST"
      if (!exists) return yield* new WorkspaceError({ operation: "create", path: file, reason: reasonOf(error) })
    }
    return yield* attempt("read", file, () => fs.readFile(file))
  })

const workspaceIdPattern = /^ws-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** This checkout's own directory: in its git directory, or `.ratchet/local/` outside git. */
const localDirOf = (root: string, gitDir: string | null): string =>
  gitDir === null ? path.join(root, ".ratchet", "local") : path.join(gitDir, "ratchet")

/** The checkout's workspace id, created on first use. */
const workspaceIdOf = (root: string, gitDir: string | null) =>
  Effect.gen(function*() {
    const directory = localDirOf(root, gitDir)
    const file = path.join(directory, "workspace-id")
    yield* attempt("create", directory, () => fs.mkdir(directory, { recursive: true, mode: 0o755 }))
    if (gitDir === null) {
      const ignore = path.join(root, ".ratchet", ".gitignore")
      yield* createOnce(ignore, "# This checkout's own files: never committed.\nlocal/\n")
    }
    const existing = yield* Effect.either(Effect.tryPromise({ try: () => fs.readFile(file, "utf8"), catch: (error) => error }))
    const text = Either.isRight(existing)
      ? existing.right
      : isMissing(existing.left)
      ? new TextDecoder().decode(yield* createOnce(file, `ws-${randomUUID()}\n`))
      : yield* new WorkspaceError({ operation: "read", path: file, reason: reasonOf(existing.left) })
    const id = text.trim()
    if (!workspaceIdPattern.test(id)) {
      return yield* new WorkspaceError({
        operation: "read",
        path: file,
        reason: `it does not hold a workspace id (expected ws-<uuid>); delete it and a new one is made`
      })
    }
    return id
  })

const readProject = (file: string) =>
  Effect.flatMap(attempt("read", file, () => fs.readFile(file)), (bytes) => ProjectFile.decode(file, bytes))

/** The nearest directory at or above `from` holding `.ratchet/project.json`, or `null`. */
const findRoot = (from: string) =>
  Effect.gen(function*() {
    let directory = path.resolve(from)
    for (;;) {
      const candidate = path.join(directory, ".ratchet", "project.json")
      const found = yield* Effect.promise(() => fs.stat(candidate).then((stat) => stat.isFile(), () => false))
      if (found) return directory
      const parent = path.dirname(directory)
      if (parent === directory) return null
      directory = parent
    }
  })

/**
 * The workspace service over the local file system and `git`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Service = {
  locate: (from) =>
    Effect.gen(function*() {
      const root = yield* findRoot(from)
      if (root === null) return yield* new ProjectNotInitialised({ from: path.resolve(from) })
      const projectFile = path.join(root, ".ratchet", "project.json")
      const project = yield* readProject(projectFile)
      const gitDir = yield* gitDirOf(root)
      const workspaceId = yield* workspaceIdOf(root, gitDir)
      return { root, projectFile, project, workspaceId, git: gitDir !== null, localDir: localDirOf(root, gitDir) }
    }),
  init: (from, options = {}) =>
    Effect.gen(function*() {
      const start = path.resolve(from)
      const git = yield* gitOf(start)
      const root = git?.top ?? start
      const directory = path.join(root, ".ratchet")
      const projectFile = path.join(directory, "project.json")
      // `.ratchet` must be this checkout's own directory: through a symbolic link the project file
      // would be written (and later found) outside the repository.
      const existing = yield* Effect.promise(() => fs.lstat(directory).then((stat) => stat, () => null))
      if (existing !== null && !existing.isDirectory()) {
        return yield* new WorkspaceError({
          operation: "use",
          path: directory,
          reason: existing.isSymbolicLink()
            ? "it is a symbolic link; Ratchet keeps .ratchet a real directory of the checkout, so remove the link"
            : "it exists and is not a directory; move it away"
        })
      }
      yield* attempt("create", directory, () => fs.mkdir(directory, { recursive: true, mode: 0o755 }))
      const fresh: ProjectFile.ProjectFile = {
        schemaVersion: ProjectFile.currentSchemaVersion,
        projectId: `prj-${randomUUID()}`,
        displayName: (options.displayName ?? path.basename(root)).slice(0, 200) || "project",
        createdAt: (options.now ?? new Date()).toISOString()
      }
      const before = yield* Effect.promise(() => fs.stat(projectFile).then(() => true, () => false))
      const bytes = before
        ? yield* attempt("read", projectFile, () => fs.readFile(projectFile))
        : yield* createOnce(projectFile, ProjectFile.encode(fresh))
      const project = yield* ProjectFile.decode(projectFile, bytes)
      const workspaceId = yield* workspaceIdOf(root, git?.gitDir ?? null)
      return {
        root,
        projectFile,
        project,
        workspaceId,
        git: git !== null,
        localDir: localDirOf(root, git?.gitDir ?? null),
        created: !before && project.projectId === fresh.projectId
      }
    })
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Workspace> = Layer.succeed(Workspace, make)
