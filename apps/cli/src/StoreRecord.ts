/**
 * The checkout's record of its store: which store `ratchet init` opened for this checkout, so a
 * command started without the environment that named it (an MCP client passes a server only a
 * few variables: MCP Inspector and Codex drop `RATCHET_HOME`) finds the same store rather than
 * creating an empty one in `~/.ratchet` (ADR 0029).
 *
 * It lives in the checkout's git directory (`.git/ratchet/store.json`; `.ratchet/local/store.json`
 * only for a project made outside git), never
 * in the committed `.ratchet/project.json`: a store is a path or a database on one machine, and
 * every clone of the project has its own. A linked git worktree without a record of its own reads
 * its main checkout's (`<git common dir>/ratchet/store.json`): an agent's worktree uses the store
 * the repository does.
 *
 * A PostgreSQL URL is recorded without its password (`passwordOmitted` says one was removed):
 * the record is a plain file, and the password comes, when the URL is read back, from
 * `PGPASSWORD` or `~/.pgpass`, as the PostgreSQL client reads them.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as GitDir from "@ratchet/controller/GitDir"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/**
 * A PostgreSQL store as recorded: its URL without a password, and its schema.
 *
 * @since 0.2.0
 * @category models
 */
export const Database = Schema.Struct({
  url: Schema.String.pipe(Schema.pattern(/^postgres(ql)?:\/\/\S+$/, { message: () => "expected a postgres:// URL" })),
  schema: Schema.NullOr(Schema.String.pipe(Schema.pattern(/^[a-z_][a-z0-9_]{0,62}$/, { message: () => "expected a lowercase PostgreSQL identifier" }))),
  passwordOmitted: Schema.Boolean
})

/**
 * @since 0.2.0
 * @category models
 */
export type Database = typeof Database.Type

/**
 * The record: the home (`RATCHET_HOME`: the SQLite store's directory, and where runner logs and
 * requests to runners live on every engine) and, for PostgreSQL, the database.
 *
 * @since 0.2.0
 * @category models
 */
export const StoreRecord = Schema.Struct({
  version: Schema.Literal(1),
  home: Schema.String.pipe(Schema.filter((home) => path.isAbsolute(home), { message: () => "expected an absolute directory" })),
  database: Schema.NullOr(Database),
  recordedAt: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type StoreRecord = typeof StoreRecord.Type

/**
 * A record that cannot be read: its file, and why.
 *
 * @since 0.2.0
 * @category models
 */
export interface Unreadable {
  readonly file: string
  readonly reason: string
}

/** The largest record read: it holds a path and a URL. */
const maxBytes = 64 * 1024

/**
 * The record file of a checkout's own directory.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fileOf = (localDir: string): string => path.join(localDir, "store.json")

/** The repository's git directory that a linked worktree's git directory names in `commondir`, or `null`. */
const commonOf = (gitDir: string): string | null => {
  try {
    const common = path.resolve(gitDir, fs.readFileSync(path.join(gitDir, "commondir"), "utf8").trim())
    return common === gitDir ? null : common
  } catch {
    return null
  }
}

/**
 * Where a checkout's own record lives: in its git directory whenever it has one. A git checkout
 * located without git (not on the PATH an MCP client passed) has its own directory in
 * `.ratchet/local/` of the working tree; a record there is never read nor written, because the
 * working tree is the repository's content, and a file a clone brought with it must not choose
 * where a command's data goes. Only a project made outside git (before `init` required git) keeps
 * its record in `.ratchet/local/`.
 */
const ownDir = (localDir: string): { readonly dir: string; readonly gitDir: string | null } => {
  const inWorkingTree = path.basename(localDir) === "local" && path.basename(path.dirname(localDir)) === ".ratchet"
  if (!inWorkingTree) return { dir: localDir, gitDir: path.dirname(localDir) }
  const gitDir = GitDir.claimed(path.dirname(path.dirname(localDir)))
  return { dir: gitDir === null ? localDir : path.join(gitDir, "ratchet"), gitDir }
}

/**
 * Where a checkout's record may be, in the order they are tried: its own; in a linked git
 * worktree, its main checkout's. Lazy: the hook reads the checkout's own record on every call, and
 * the main checkout's only when it is missing.
 */
function* candidates(localDir: string): Generator<string> {
  const own = ownDir(localDir)
  yield fileOf(own.dir)
  const common = own.gitDir === null ? null : commonOf(own.gitDir)
  if (common !== null) yield fileOf(path.join(common, "ratchet"))
}

/**
 * The text of the record `file`, or `null` when there is none. Opened without following a
 * symbolic link and without waiting (a FIFO would block for ever), and read only when it is a
 * regular file of at most {@link maxBytes}: a device (`/dev/zero`) has no size to check beforehand.
 */
const readText = (file: string): Either.Either<string | null, string> => {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as { readonly code?: unknown }).code
    if (code === "ENOENT") return Either.right(null)
    return Either.left(code === "ELOOP" ? "it is a symbolic link (a record is a file of its own)" : `it cannot be read (${String(code ?? error)})`)
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) return Either.left("it is not a regular file")
    if (stat.size > maxBytes) return Either.left(`it is larger than ${maxBytes} bytes`)
    const buffer = Buffer.alloc(stat.size)
    const read = fs.readSync(fd, buffer, 0, stat.size, 0)
    return Either.right(buffer.toString("utf8", 0, read))
  } catch (error) {
    return Either.left(`it cannot be read (${String((error as { readonly code?: unknown }).code ?? error)})`)
  } finally {
    fs.closeSync(fd)
  }
}

const decode = Schema.decodeUnknownEither(Schema.parseJson(StoreRecord), { onExcessProperty: "error", errors: "first" })

/**
 * The record that applies to the checkout of `localDir`, with its file; `null` when there is none;
 * `Unreadable` when one is there and cannot be used (never skipped: a record that is ignored would
 * send the command to the default store, which is what it is there to prevent).
 *
 * @since 0.2.0
 * @category constructors
 */
export const read = (localDir: string): Either.Either<{ readonly file: string; readonly record: StoreRecord } | null, Unreadable> => {
  for (const file of candidates(localDir)) {
    const text = readText(file)
    if (Either.isLeft(text)) return Either.left({ file, reason: text.left })
    if (text.right === null) continue
    return Either.match(decode(text.right), {
      onLeft: (error) => {
        const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
        const field = first === undefined || first.path.length === 0 ? "" : `${first.path.map(String).join(".")}: `
        return Either.left({ file, reason: `it is not a store record (${field}${(first?.message ?? "does not decode").slice(0, 200)})` })
      },
      onRight: (record) => Either.right({ file, record })
    })
  }
  return Either.right(null)
}

/**
 * Replaces the record of the checkout of `localDir`: written aside, then renamed over it, readable
 * by this user only. Returns its file.
 *
 * @since 0.2.0
 * @category constructors
 */
export const write = (localDir: string, record: StoreRecord): string => {
  const dir = ownDir(localDir).dir
  const file = fileOf(dir)
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 })
  const aside = `${file}.${process.pid}.tmp`
  fs.writeFileSync(aside, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 })
  fs.renameSync(aside, file)
  return file
}

/**
 * Removes the checkout's own record, when a store cannot be recorded: a stale one must not name
 * the store it replaced.
 *
 * @since 0.2.0
 * @category constructors
 */
export const remove = (localDir: string): void => fs.rmSync(fileOf(ownDir(localDir).dir), { force: true })

/**
 * `url` without its password (in the user part or as a `password` parameter), and whether it had
 * one; `null` when it is not a URL this can rewrite, so it is not recorded at all.
 *
 * @since 0.2.0
 * @category constructors
 */
export const redact = (url: string): { readonly url: string; readonly passwordOmitted: boolean } | null => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return null
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") return null
  const passwordOmitted = parsed.password !== "" || parsed.searchParams.has("password")
  parsed.password = ""
  parsed.searchParams.delete("password")
  return { url: parsed.toString(), passwordOmitted }
}
