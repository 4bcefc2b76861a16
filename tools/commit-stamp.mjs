/**
 * The commit a build is stamped with (`ratchet --version` prints it): the short commit of the
 * checkout this file sits in (`abc1234`), with `-dirty` when its work tree has changes (untracked
 * files included: a build may bundle them), or `unknown` when this directory's parent is not the
 * top of a git checkout (a source archive, or one unpacked inside some other repository, whose
 * commit says nothing about these sources).
 *
 * Kept apart from tools/bundle.mjs, which needs esbuild, so it can be tried in a repository of its
 * own.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository this script belongs to. */
const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/**
 * `git args` in the repository: its trimmed output, or null when git fails or is missing.
 *
 * @param {string[]} args
 */
const git = (args) => {
  const result = spawnSync("git", args, { cwd: repositoryRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
  return result.status === 0 && typeof result.stdout === "string" ? result.stdout.trim() : null
}

/**
 * `abc1234`, `abc1234-dirty` or `unknown`.
 *
 * @returns {string}
 */
export const commit = () => {
  const top = git(["rev-parse", "--show-toplevel"])
  if (top === null || fs.realpathSync(top) !== fs.realpathSync(repositoryRoot)) return "unknown"
  const head = git(["rev-parse", "--short", "HEAD"])
  if (head === null || !/^[0-9a-f]+$/.test(head)) return "unknown"
  // Without optional locks, so a build running beside another git command never fails on the
  // index lock; a tree whose state cannot be read is not claimed clean.
  const changes = git(["--no-optional-locks", "status", "--porcelain"])
  return changes === null || changes !== "" ? `${head}-dirty` : head
}
