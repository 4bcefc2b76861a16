/**
 * A checkout's git directory read from the file system, without starting git. Starting
 * `git rev-parse` costs a process on every command, the hook on every tool call of an agent
 * included (issue 19), and an MCP client may start Ratchet with no git on its PATH at all.
 *
 * Two readings of `<root>/.git`, for two questions:
 * - {@link atRoot}: the git directory exactly as `git rev-parse --absolute-git-dir` prints it at
 *   `root`, or undefined when only git can say. It answers for `.git` at the project's root (where
 *   `ratchet init` puts the project, the work tree's top): a directory holding `HEAD`, or a regular
 *   file `gitdir: <path>` (a linked worktree, a submodule; a relative path taken from the root, as
 *   git takes it) naming one; as the real path (links resolved), as git prints it; and owned by the
 *   user running Ratchet (git refuses a repository another user owns unless `safe.directory`
 *   allows it, and only git can tell). Anything else (no `.git` at the root, a link, a file of
 *   another shape, a directory git would not take, an error) is left to git.
 * - {@link claimed}: the directory `<root>/.git` is or names, whatever git would think of it, or
 *   null: for refusing to treat the working tree as the checkout's own directory where it may be a
 *   git checkout (StoreRecord in the CLI), which errs on the side of "git".
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** A `.git` file is one line; anything much larger is not one git wrote. */
const maxGitFileBytes = 4096

const ownedHere = (stat: fs.Stats): boolean => typeof process.getuid !== "function" || stat.uid === process.getuid()

/** `directory` as git would print it when it is a git directory we can vouch for, else undefined. */
const vouched = (directory: string): string | undefined => {
  const stat = fs.statSync(directory)
  if (!stat.isDirectory() || !ownedHere(stat) || !fs.statSync(path.join(directory, "HEAD")).isFile()) return undefined
  return fs.realpathSync(directory)
}

/**
 * The text of the regular file `file` when it is at most {@link maxGitFileBytes}, else undefined.
 * Opened without following a link or waiting (a FIFO would block for ever).
 */
const smallFile = (file: string): string | undefined => {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined
    const buffer = Buffer.alloc(maxGitFileBytes + 1)
    const read = fs.readSync(fd, buffer, 0, buffer.length, 0)
    return read > maxGitFileBytes ? undefined : buffer.subarray(0, read).toString("utf8")
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The absolute git directory of the checkout whose work tree's top is `root`, exactly as git
 * prints it, or undefined when only git can say (see the module's comment).
 *
 * @since 0.3.0
 */
export const atRoot = (root: string): string | undefined => {
  const dotGit = path.join(root, ".git")
  try {
    const stat = fs.lstatSync(dotGit)
    if (stat.isDirectory()) return vouched(dotGit)
    if (!stat.isFile() || !ownedHere(stat)) return undefined
    const match = /^gitdir: ([^\n\r\0]+)\r?\n?$/.exec(smallFile(dotGit) ?? "")
    return match === null ? undefined : vouched(path.resolve(root, match[1] as string))
  } catch {
    return undefined
  }
}

/**
 * The directory `<root>/.git` is or names (`gitdir: <path>`), not checked further, or null when
 * there is no `.git` there or it names nothing (see the module's comment).
 *
 * @since 0.3.0
 */
export const claimed = (root: string): string | null => {
  const dotGit = path.join(root, ".git")
  try {
    if (fs.statSync(dotGit).isDirectory()) return dotGit
    const named = /^gitdir: (.+)$/m.exec(smallFile(dotGit) ?? "")?.[1]
    return named === undefined ? null : path.resolve(root, named.trim())
  } catch {
    return null
  }
}
