/**
 * Reading files a verify command produced, without following a path out of the workspace.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * Resolves `relative` inside `root`, following symbolic links, or says why it cannot be used.
 *
 * @since 0.1.0
 */
export const inside = (root: string, relative: string): { readonly file: string } | { readonly problem: string } => {
  let real: string
  try {
    real = fs.realpathSync(path.join(root, relative))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { problem: code === "ENOENT" ? "it does not exist" : `it cannot be read (${code ?? "unknown error"})` }
  }
  const realRoot = fs.realpathSync(root)
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) return { problem: "it resolves outside the workspace" }
  return { file: real }
}

/**
 * The SHA-256 (hex) and size of a regular file, read in chunks, or why not.
 *
 * @since 0.1.0
 */
export const hashFile = (file: string): { readonly sha256: string; readonly size: number } | { readonly problem: string } => {
  let fd: number
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile()) return { problem: "it is not a regular file" }
    fd = fs.openSync(file, "r")
  } catch (error) {
    return { problem: `it cannot be read (${(error as NodeJS.ErrnoException).code ?? "unknown error"})` }
  }
  try {
    const hash = createHash("sha256")
    const buffer = Buffer.alloc(1 << 20)
    let size = 0
    for (;;) {
      const read = fs.readSync(fd, buffer, 0, buffer.length, null)
      if (read === 0) break
      hash.update(buffer.subarray(0, read))
      size += read
    }
    return { sha256: hash.digest("hex"), size }
  } catch (error) {
    return { problem: `it cannot be read (${(error as NodeJS.ErrnoException).code ?? "unknown error"})` }
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Whether `file` was last modified before `since` (epoch ms). Filesystems that keep whole seconds
 * round a fresh write down, so a write in the same second as `since` counts as after it.
 *
 * @since 0.1.0
 */
export const modifiedBefore = (file: string, since: number): boolean => {
  try {
    return fs.statSync(file).mtimeMs < Math.floor(since / 1000) * 1000
  } catch {
    return false
  }
}
