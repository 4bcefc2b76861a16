/**
 * Temporary directories for the controller's tests, removed when the test file ends.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"

/**
 * A temporary directory (its real path, so comparisons with git's output hold where the temporary
 * folder is a symbolic link), removed after the file that asked for it.
 */
export const tempDirFactory = (prefix: string): (() => string) => {
  const roots: Array<string> = []
  afterAll(() => {
    for (const root of roots) fs.rmSync(root, { recursive: true, force: true })
  })
  return () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
    roots.push(root)
    return root
  }
}
