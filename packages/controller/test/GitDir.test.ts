/**
 * The git directory read from `.git` at a project's root, against real repositories: where it
 * answers, it gives exactly what `git rev-parse --absolute-git-dir` prints there (plain checkout,
 * through a symbolic link, a linked worktree, a submodule); everywhere else it leaves the question
 * to git (undefined), hostile `.git` entries included. And `Workspace.locate` then starts no git:
 * it finds the checkout's directory with git off the PATH.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as GitDir from "../src/GitDir.js"
import * as Workspace from "../src/Workspace.js"
import { tempDirFactory } from "./tempDirs.js"

const tempDir = tempDirFactory("ratchet-gitdir-")

const git = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main", "-c", "protocol.file.allow=always", ...args], {
    cwd,
    encoding: "utf8"
  })

const gitsAnswer = (cwd: string): string => git(cwd, "rev-parse", "--absolute-git-dir").trim()

const repository = (parent: string, name = "repo"): string => {
  const root = path.join(parent, name)
  fs.mkdirSync(root)
  git(root, "init", "-q")
  fs.writeFileSync(path.join(root, "README.md"), "hello\n")
  git(root, "add", ".")
  git(root, "commit", "-q", "-m", "init")
  return root
}

describe("GitDir.atRoot", () => {
  it("answers as git does for a checkout, the same reached through a link, a worktree and a submodule", () => {
    const parent = tempDir()
    const root = repository(parent)
    const link = path.join(parent, "link")
    fs.symlinkSync(root, link)
    const tree = path.join(parent, "tree")
    git(root, "worktree", "add", "-q", tree)
    const superproject = repository(parent, "super")
    git(superproject, "submodule", "add", "-q", root, "sub")
    const sub = path.join(superproject, "sub")
    expect(fs.readFileSync(path.join(sub, ".git"), "utf8")).toMatch(/^gitdir: \.\.\//)
    for (const checkout of [root, link, tree, sub]) {
      const read = GitDir.atRoot(checkout)
      expect(read, checkout).toBeDefined()
      expect(read, checkout).toBe(gitsAnswer(checkout))
    }
    expect(GitDir.atRoot(tree)).toBe(path.join(root, ".git", "worktrees", "tree"))
  })

  it("leaves to git what it cannot vouch for", () => {
    const cases: ReadonlyArray<readonly [string, (root: string) => void]> = [
      ["no .git", () => {}],
      ["a .git directory without HEAD", (root) => fs.mkdirSync(path.join(root, ".git"))],
      ["a .git link to a real git directory", (root) => fs.symlinkSync(path.join(repository(tempDir()), ".git"), path.join(root, ".git"))],
      ["a .git file that is not gitdir:", (root) => fs.writeFileSync(path.join(root, ".git"), "hello\n")],
      ["a gitdir: file naming nothing", (root) => fs.writeFileSync(path.join(root, ".git"), "gitdir: ./missing\n")],
      ["a gitdir: file naming a directory without HEAD", (root) => {
        fs.mkdirSync(path.join(root, "elsewhere"))
        fs.writeFileSync(path.join(root, ".git"), "gitdir: elsewhere\n")
      }],
      ["a gitdir: file of two lines", (root) => fs.writeFileSync(path.join(root, ".git"), `gitdir: ${path.join(repository(tempDir()), ".git")}\nmore\n`)],
      ["a gitdir: file with a NUL", (root) => fs.writeFileSync(path.join(root, ".git"), `gitdir: ${path.join(repository(tempDir()), ".git")}\0\n`)],
      ["an oversized gitdir: file", (root) => fs.writeFileSync(path.join(root, ".git"), `gitdir: ${"a/".repeat(4096)}\n`)],
      ["a FIFO named .git", (root) => execFileSync("mkfifo", [path.join(root, ".git")])],
      ["a .git whose HEAD is a directory", (root) => fs.mkdirSync(path.join(root, ".git", "HEAD"), { recursive: true })]
    ]
    for (const [name, make] of cases) {
      const root = tempDir()
      make(root)
      expect(GitDir.atRoot(root), name).toBeUndefined()
    }
  })

  it.runIf(process.getuid?.() === 0)("leaves to git a repository another user owns (git's safe.directory decides)", () => {
    const root = repository(tempDir())
    fs.chownSync(path.join(root, ".git"), 65534, 65534)
    expect(GitDir.atRoot(root)).toBeUndefined()
  })
})

describe("GitDir.claimed", () => {
  it("names what .git is or points at, unchecked, and nothing for what is not one", () => {
    const root = tempDir()
    expect(GitDir.claimed(root)).toBeNull()
    fs.mkdirSync(path.join(root, ".git"))
    expect(GitDir.claimed(root)).toBe(path.join(root, ".git"))
    const file = tempDir()
    fs.writeFileSync(path.join(file, ".git"), "gitdir: ../elsewhere/.git/worktrees/x  \n")
    expect(GitDir.claimed(file)).toBe(path.resolve(file, "../elsewhere/.git/worktrees/x"))
    const cases: ReadonlyArray<readonly [string, (root: string) => void]> = [
      ["a .git file without gitdir:", (at) => fs.writeFileSync(path.join(at, ".git"), "hello\n")],
      ["an oversized .git file", (at) => fs.writeFileSync(path.join(at, ".git"), `gitdir: ${"a/".repeat(4096)}\n`)],
      // Read without waiting: a FIFO would otherwise block the command for ever.
      ["a FIFO named .git", (at) => execFileSync("mkfifo", [path.join(at, ".git")])]
    ]
    for (const [name, make] of cases) {
      const at = tempDir()
      make(at)
      expect(GitDir.claimed(at), name).toBeNull()
    }
  })
})

describe("Workspace.locate without git on the PATH", () => {
  const withoutGit = <A, E>(effect: Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const before = process.env["PATH"]
        process.env["PATH"] = tempDir()
        return before
      }),
      () => effect,
      (before) => Effect.sync(() => (process.env["PATH"] = before))
    )

  it.effect("finds the checkout's own directory from .git at the root, as with git", () =>
    Effect.gen(function*() {
      const parent = tempDir()
      const root = repository(parent)
      const made = yield* Workspace.make.init(root)
      const tree = path.join(parent, "tree")
      git(root, "worktree", "add", "-q", tree)
      fs.cpSync(path.join(root, ".ratchet"), path.join(tree, ".ratchet"), { recursive: true })
      const fromTree = yield* Workspace.make.locate(tree)
      const located = yield* withoutGit(Workspace.make.locate(path.join(root, "README.md", "..")))
      expect(located).toMatchObject({ root, git: true, workspaceId: made.workspaceId, localDir: path.join(root, ".git", "ratchet") })
      const again = yield* withoutGit(Workspace.make.locate(tree))
      expect(again).toMatchObject({ root: tree, git: true, workspaceId: fromTree.workspaceId, localDir: path.join(root, ".git", "worktrees", "tree", "ratchet") })
      expect(again.workspaceId).not.toBe(made.workspaceId)
    }))

  it.effect("asks git when .git is not at the root (a project below the work tree's top)", () =>
    Effect.gen(function*() {
      const root = repository(tempDir())
      const nested = path.join(root, "nested")
      fs.mkdirSync(path.join(nested, ".ratchet"), { recursive: true })
      fs.writeFileSync(
        path.join(nested, ".ratchet", "project.json"),
        JSON.stringify({ schemaVersion: 1, projectId: "prj-00000000-0000-4000-8000-000000000000", displayName: "nested", createdAt: "2026-12-05T00:00:00.000Z" })
      )
      const withGit = yield* Workspace.make.locate(nested)
      expect(withGit).toMatchObject({ git: true, localDir: path.join(root, ".git", "ratchet") })
      // Without git to ask, the checkout counts as outside git, as it always did.
      const without = yield* withoutGit(Workspace.make.locate(nested))
      expect(without).toMatchObject({ git: false, localDir: path.join(nested, ".ratchet", "local") })
    }))
})
