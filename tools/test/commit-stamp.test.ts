/**
 * The build's commit stamp (tools/commit-stamp.mjs), tried on copies of the script in scratch
 * directories: at the top of a git checkout it is the short HEAD, `-dirty` once a file is changed
 * or added; outside git, and in a directory that is not the top of its checkout, it is `unknown`.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const script = path.resolve(import.meta.dirname, "..", "commit-stamp.mjs")
const scratch: Array<string> = []
afterAll(() => {
  for (const directory of scratch) fs.rmSync(directory, { recursive: true, force: true })
})

/** A directory `<root>/tools/commit-stamp.mjs`, so the script's repository is `root`. */
const copyAt = (root: string): void => {
  fs.mkdirSync(path.join(root, "tools"), { recursive: true })
  fs.copyFileSync(script, path.join(root, "tools", "commit-stamp.mjs"))
}

const fresh = (): string => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-commit-stamp-")))
  scratch.push(root)
  return root
}

/** The stamp the copy under `root` computes, in a process of its own (as a build runs it). */
const stampOf = (root: string): string => {
  const result = spawnSync(
    process.execPath,
    ["--input-type=module", "-e", `import { commit } from ${JSON.stringify(path.join(root, "tools", "commit-stamp.mjs"))}; process.stdout.write(commit())`],
    { encoding: "utf8", env: gitless() }
  )
  expect(result.status, result.stderr).toBe(0)
  return result.stdout
}

/** This environment without GIT_* variables (a test run inside a git hook must not steer git). */
const gitless = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("GIT_")))

const git = (cwd: string, ...args: ReadonlyArray<string>): string => {
  const result = spawnSync("git", ["-c", "user.name=Stamp", "-c", "user.email=stamp@example.invalid", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
    env: gitless()
  })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout.trim()
}

describe("tools/commit-stamp.mjs", () => {
  it("is the short HEAD of a clean checkout, and -dirty once a file changes or is added", () => {
    const root = fresh()
    copyAt(root)
    fs.writeFileSync(path.join(root, "README.md"), "scratch\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "scratch")
    const head = git(root, "rev-parse", "--short", "HEAD")
    expect(head).toMatch(/^[0-9a-f]{7,}$/)
    expect(stampOf(root)).toBe(head)

    fs.writeFileSync(path.join(root, "README.md"), "changed\n")
    expect(stampOf(root)).toBe(`${head}-dirty`)
    git(root, "checkout", "--", "README.md")
    expect(stampOf(root)).toBe(head)

    fs.writeFileSync(path.join(root, "new.txt"), "untracked\n")
    expect(stampOf(root)).toBe(`${head}-dirty`)
  })

  it("is unknown outside git", () => {
    const root = fresh()
    copyAt(root)
    expect(stampOf(root)).toBe("unknown")
  })

  it("is unknown for sources unpacked inside another repository", () => {
    const outer = fresh()
    fs.writeFileSync(path.join(outer, "README.md"), "another project\n")
    git(outer, "init", "-q")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "another project")
    const root = path.join(outer, "vendor", "ratchet")
    copyAt(root)
    expect(stampOf(root)).toBe("unknown")
  })
})
