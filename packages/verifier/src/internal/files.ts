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
 * Whether `file` was last written outside the run that went from `start` to `end` (epoch ms): before
 * it (an earlier run's), or after it (a time set by hand, which no write of this run gives).
 * Filesystems that keep whole seconds round a fresh write down, so the run's window starts at the
 * second `start` falls in; a second of slack covers the clock between the write and `end`.
 *
 * @since 0.1.0
 */
export const writtenOutside = (file: string, start: number, end: number): "older" | "newer" | null => {
  try {
    const written = fs.statSync(file).mtimeMs
    return written < Math.floor(start / 1000) * 1000 ? "older" : written > end + 1000 ? "newer" : null
  } catch {
    return null
  }
}
