/**
 * The work tree as a run sees it, against real git repositories in temporary directories: a clean
 * tree has nothing dirty; the paths a step changed between two observations are exactly the ones
 * it created, edited, deleted, staged, renamed or committed (an edit of an already-dirty file
 * included, `.ratchet/` never); odd names (spaces, Unicode, quotes, a leading `"`, symbolic links
 * that dangle or point at a directory) are observed like any other; `differences` says in words
 * what moved since a recorded boundary; and a directory that is not a repository is a typed
 * `WorkTreeError`, never a throw.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { tempDirFactory } from "./tempDirs.js"
import * as WorkTree from "../src/WorkTree.js"

const tempDir = tempDirFactory("ratchet-work-tree-")

// Git must never find a repository above the temporary directories (a CI checkout of /tmp, say).
process.env["GIT_CEILING_DIRECTORIES"] = fs.realpathSync(os.tmpdir())

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", ...args], { cwd, encoding: "utf8" })

const write = (root: string, file: string, content = `${file}\n`) => {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  fs.writeFileSync(path.join(root, file), content)
}

/** A repository with one commit holding `files` (and nothing at all when `files` is empty). */
const repository = (files: ReadonlyArray<string> = ["README.md", "src/index.ts", "docs/guide.md"]) => {
  const root = tempDir()
  git(root, "init", "-q")
  git(root, "config", "user.name", "Test")
  git(root, "config", "user.email", "test@example.com")
  for (const file of files) write(root, file)
  if (files.length > 0) {
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
  }
  return root
}

const headOf = (root: string) => git(root, "rev-parse", "HEAD").trim()

/** Observes, applies `change` to the work tree, observes again; the paths changed in between. */
const changedBy = (root: string, change: () => void) =>
  Effect.gen(function*() {
    const before = yield* WorkTree.observe(root)
    change()
    const after = yield* WorkTree.observe(root)
    return yield* WorkTree.changedBetween(root, before, after)
  })

describe("WorkTree.observe", () => {
  it.effect("a clean tree: its head and nothing dirty", () =>
    Effect.gen(function*() {
      const root = repository()
      const observation = yield* WorkTree.observe(root)
      expect(observation.head).toBe(headOf(root))
      expect([...observation.dirty]).toEqual([])
    }))

  it.effect("a repository without a commit: no head, its files dirty", () =>
    Effect.gen(function*() {
      const root = repository([])
      write(root, "a.txt", "a\n")
      const observation = yield* WorkTree.observe(root)
      expect(observation.head).toBeNull()
      expect([...observation.dirty.keys()]).toEqual(["a.txt"])
    }))

  it.effect("dirty paths, sorted, with git's hash of the contents and `deleted` for a deleted file", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, "src/index.ts", "edited\n")
      write(root, "new/deep/file.txt", "new\n")
      fs.rmSync(path.join(root, "docs/guide.md"))
      const observation = yield* WorkTree.observe(root)
      expect([...observation.dirty]).toEqual([
        ["docs/guide.md", "deleted"],
        ["new/deep/file.txt", git(root, "hash-object", "new/deep/file.txt").trim()],
        ["src/index.ts", git(root, "hash-object", "src/index.ts").trim()]
      ])
    }))

  it.effect("`.ratchet/` is left out, dirty or not", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, ".ratchet/tasks/t-1.md", "# t-1\n")
      write(root, ".ratchetx", "not ours\n")
      const observation = yield* WorkTree.observe(root)
      expect([...observation.dirty.keys()]).toEqual([".ratchetx"])
    }))

  it.effect("odd names: spaces, Unicode, quotes, a leading quote, a leading dash, glob characters", () =>
    Effect.gen(function*() {
      const root = repository()
      const names = [
        "dir with space/file name.txt",
        "ünïcödé/ファイル.txt",
        "\"quoted\".txt",
        "it's.txt",
        "-dash.txt",
        "back\\slash.txt",
        "*star?[x].txt",
        "tab\there.txt"
      ]
      for (const name of names) write(root, name, `${name}\n`)
      const observation = yield* WorkTree.observe(root)
      expect([...observation.dirty.keys()]).toEqual([...names].sort())
      for (const name of names) {
        expect(observation.dirty.get(name), name).toBe(git(root, "hash-object", "--", name).trim())
      }
    }))

  it.effect("symbolic links (dangling, to a directory, to a file) are observed by their target", () =>
    Effect.gen(function*() {
      const root = repository()
      fs.symlinkSync("nowhere", path.join(root, "dangling"))
      fs.symlinkSync("src", path.join(root, "to-dir"))
      fs.symlinkSync("README.md", path.join(root, "to-file"))
      const before = yield* WorkTree.observe(root)
      expect([...before.dirty.keys()]).toEqual(["dangling", "to-dir", "to-file"])
      for (const hash of before.dirty.values()) expect(hash).not.toBe("deleted")
      // Repointing a link is a change; editing what a link points at changes the file, not the link.
      fs.rmSync(path.join(root, "dangling"))
      fs.symlinkSync("elsewhere", path.join(root, "dangling"))
      const after = yield* WorkTree.observe(root)
      expect(yield* WorkTree.changedBetween(root, before, after)).toEqual(["dangling"])
    }))

  it.effect("not a git repository: a WorkTreeError, not a throw", () =>
    Effect.gen(function*() {
      const root = tempDir()
      const error = yield* Effect.flip(WorkTree.observe(root))
      expect(error).toBeInstanceOf(WorkTree.WorkTreeError)
      expect(error._tag).toBe("@ratchet/controller/WorkTreeError")
      expect(error.root).toBe(root)
      expect(error.message).toContain("git status")
    }))

  it.effect("a directory that does not exist: a WorkTreeError, not a throw", () =>
    Effect.gen(function*() {
      const root = path.join(tempDir(), "missing")
      const error = yield* Effect.flip(WorkTree.observe(root))
      expect(error).toBeInstanceOf(WorkTree.WorkTreeError)
      expect(error.root).toBe(root)
    }))
})

describe("WorkTree.changedBetween", () => {
  /** A repository that ignores the hosts' local settings, as a project does by default. */
  const ignoring = () => {
    const root = repository([])
    write(root, "README.md")
    write(root, ".gitignore", ".claude/settings.local.json\n.Codex/\nbuild/\nsrc/.claude/\n.mcp.json\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return root
  }
  // [name, the change, the paths changed]: gitignored host configuration counts; other ignored files do not.
  const hostTable: ReadonlyArray<readonly [string, (root: string) => void, ReadonlyArray<string>]> = [
    ["a gitignored .claude/settings.local.json written", (root) => write(root, ".claude/settings.local.json", "{\"disableAllHooks\":true}\n"), [".claude/settings.local.json"]],
    ["a gitignored .Codex/ file (any case)", (root) => write(root, ".Codex/config.toml", "x\n"), [".Codex/config.toml"]],
    ["a gitignored .mcp.json (project MCP servers) written", (root) => write(root, ".mcp.json", "{\"mcpServers\":{}}\n"), [".mcp.json"]],
    ["an ignored file elsewhere is still not seen", (root) => write(root, "build/out.js", "x\n"), []],
    // The host reads the workspace's own directories; a nested one is ignored like any file.
    ["an ignored .claude/ inside a subdirectory", (root) => write(root, "src/.claude/settings.local.json", "x\n"), []]
  ]
  for (const [name, change, expected] of hostTable) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const root = ignoring()
        expect(yield* changedBy(root, () => change(root))).toEqual(expected)
      }))
  }

  it.effect("gitignored host configuration: edited and deleted count, untouched does not, and boundaries leave it out", () =>
    Effect.gen(function*() {
      const root = ignoring()
      write(root, ".claude/settings.local.json", "{}\n")
      expect(yield* changedBy(root, () => {})).toEqual([])
      expect(yield* changedBy(root, () => write(root, ".claude/settings.local.json", "{\"hooks\":{}}\n"))).toEqual([".claude/settings.local.json"])
      expect(yield* changedBy(root, () => fs.rmSync(path.join(root, ".claude/settings.local.json")))).toEqual([".claude/settings.local.json"])
      // A tree read back from a stored boundary has no host configuration: nothing is compared.
      const before = yield* WorkTree.observe(root)
      write(root, ".claude/settings.local.json", "{}\n")
      const after = yield* WorkTree.observe(root)
      expect(yield* WorkTree.changedBetween(root, { head: before.head, dirty: before.dirty }, after)).toEqual([])
      expect([...after.dirty.keys()]).toEqual([])
    }))

  it.effect("nothing changed: nothing listed", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, "dirty.txt", "already\n")
      expect(yield* changedBy(root, () => {})).toEqual([])
    }))

  it.effect("created, edited and deleted files: exactly those", () =>
    Effect.gen(function*() {
      const root = repository()
      const changed = yield* changedBy(root, () => {
        write(root, "created.txt", "new\n")
        write(root, "README.md", "edited\n")
        fs.rmSync(path.join(root, "docs/guide.md"))
      })
      expect(changed).toEqual(["README.md", "created.txt", "docs/guide.md"])
    }))

  it.effect("an edit of an already-dirty file is a change; an untouched dirty file is not", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, "README.md", "first edit\n")
      write(root, "src/index.ts", "dirty, left alone\n")
      write(root, "untracked.txt", "left alone\n")
      const changed = yield* changedBy(root, () => write(root, "README.md", "second edit\n"))
      expect(changed).toEqual(["README.md"])
    }))

  it.effect("rewriting a dirty file with the same contents is no change", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, "README.md", "edit\n")
      expect(yield* changedBy(root, () => write(root, "README.md", "edit\n"))).toEqual([])
    }))

  it.effect("an edit undone (dirty, then clean again) is a change", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, "README.md", "edit\n")
      expect(yield* changedBy(root, () => write(root, "README.md", "README.md\n"))).toEqual(["README.md"])
    }))

  it.effect("staging and renaming count", () =>
    Effect.gen(function*() {
      const root = repository()
      const changed = yield* changedBy(root, () => {
        write(root, "staged.txt", "staged\n")
        git(root, "add", "staged.txt")
        git(root, "mv", "docs/guide.md", "docs/moved.md")
      })
      expect(changed).toEqual(["docs/guide.md", "docs/moved.md", "staged.txt"])
    }))

  it.effect("a commit in between: its paths are listed although the tree is clean again", () =>
    Effect.gen(function*() {
      const root = repository()
      const changed = yield* changedBy(root, () => {
        write(root, "committed.txt", "c\n")
        write(root, "src/index.ts", "changed and committed\n")
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", "step")
      })
      expect(changed).toEqual(["committed.txt", "src/index.ts"])
    }))

  it.effect("the first commit of a repository: every committed path", () =>
    Effect.gen(function*() {
      const root = repository([])
      const changed = yield* changedBy(root, () => {
        write(root, "a.txt")
        write(root, "b/c.txt")
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", "first")
      })
      expect(changed).toEqual(["a.txt", "b/c.txt"])
    }))

  it.effect("`.ratchet/` is never listed, committed or not", () =>
    Effect.gen(function*() {
      const root = repository()
      const changed = yield* changedBy(root, () => {
        write(root, ".ratchet/tasks/t-1.md", "# t-1\n")
        write(root, ".ratchet/committed.md", "c\n")
        write(root, "real.txt", "r\n")
        git(root, "add", ".ratchet/committed.md", "real.txt")
        git(root, "commit", "-q", "-m", "step")
        write(root, ".ratchet/tasks/t-1.md", "# t-1 again\n")
      })
      expect(changed).toEqual(["real.txt"])
    }))

  it.effect("odd names come back as written", () =>
    Effect.gen(function*() {
      const root = repository()
      const names = ["a b/c d.txt", "ünï/ファ.txt", "\"q\".txt", "x'y.txt"]
      const changed = yield* changedBy(root, () => {
        for (const name of names) write(root, name, "x\n")
        git(root, "add", names[0] as string)
        git(root, "commit", "-q", "-m", "one")
      })
      expect(changed).toEqual([...names].sort())
    }))
})

describe("WorkTree.dirtyDigest and differences", () => {
  const observation = (head: string | null, dirty: ReadonlyArray<readonly [string, string]>): WorkTree.Observation => ({
    head,
    dirty: new Map(dirty)
  })
  const recordOf = (seen: WorkTree.Observation) => ({
    head: seen.head,
    dirtyPaths: [...seen.dirty.keys()],
    dirtyDigest: WorkTree.dirtyDigest(seen)
  })

  it("equal digests for the same dirty paths and contents; different otherwise", () => {
    const base = observation("h1", [["a", "1"], ["b", "2"]])
    expect(WorkTree.dirtyDigest(base)).toBe(WorkTree.dirtyDigest(observation("h2", [["a", "1"], ["b", "2"]])))
    for (const other of [
      observation("h1", [["a", "1"], ["b", "3"]]),
      observation("h1", [["a", "1"]]),
      observation("h1", [["a", "1"], ["b", "2"], ["c", "deleted"]]),
      observation("h1", [])
    ]) {
      expect(WorkTree.dirtyDigest(other)).not.toBe(WorkTree.dirtyDigest(base))
    }
  })

  it("nothing differs: no sentences", () => {
    const seen = observation("h1", [["a", "1"]])
    expect(WorkTree.differences(recordOf(seen), seen)).toEqual([])
    expect(WorkTree.differences(recordOf(observation(null, [])), observation(null, []))).toEqual([])
  })

  it("says that HEAD moved, what is newly changed and what no longer is", () => {
    const recorded = recordOf(observation("h1", [["a", "1"], ["b", "2"]]))
    expect(WorkTree.differences(recorded, observation("h2", [["a", "1"], ["c", "3"]]))).toEqual([
      "HEAD moved from h1 to h2",
      "newly changed: c",
      "no longer changed: b"
    ])
    expect(WorkTree.differences(recordOf(observation(null, [])), observation("h1", []))).toEqual(["HEAD moved from (no commit) to h1"])
    expect(WorkTree.differences(recordOf(observation("h1", [])), observation(null, []))).toEqual(["HEAD moved from h1 to (no commit)"])
  })

  it("says that the contents changed when the same paths are dirty with other contents", () => {
    const recorded = recordOf(observation("h1", [["a", "1"]]))
    expect(WorkTree.differences(recorded, observation("h1", [["a", "2"]]))).toEqual(["the contents of uncommitted files changed"])
    expect(WorkTree.differences(recorded, observation("h1", [["a", "deleted"]]))).toEqual(["the contents of uncommitted files changed"])
  })

  it("lists at most 20 paths per sentence", () => {
    const many = Array.from({ length: 25 }, (_, i) => [`f${String(i).padStart(2, "0")}`, "x"] as const)
    const [sentence] = WorkTree.differences(recordOf(observation("h1", [])), observation("h1", many))
    expect(sentence).toBe(`newly changed: ${many.slice(0, 20).map(([name]) => name).join(", ")}, …`)
  })

  it.effect("a real boundary: recorded, then the tree moves on", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, "README.md", "paused work\n")
      const recorded = recordOf(yield* WorkTree.observe(root))
      expect(WorkTree.differences(recorded, yield* WorkTree.observe(root))).toEqual([])
      write(root, "README.md", "edited while paused\n")
      expect(WorkTree.differences(recorded, yield* WorkTree.observe(root))).toEqual(["the contents of uncommitted files changed"])
      git(root, "add", ".")
      git(root, "commit", "-q", "-m", "while paused")
      const now = yield* WorkTree.observe(root)
      expect(WorkTree.differences(recorded, now)).toEqual([`HEAD moved from ${recorded.head} to ${now.head}`, "no longer changed: README.md"])
    }))
})

describe("WorkTree.repositoriesAmong", () => {
  const nested = (root: string, name: string) => {
    fs.mkdirSync(path.join(root, name), { recursive: true })
    git(path.join(root, name), "init", "-q")
    write(path.join(root, name), "x.txt")
  }
  // what a step does → the changed paths that are a repository of their own
  const cases: ReadonlyArray<readonly [string, (root: string) => void, ReadonlyArray<string>]> = [
    ["an untracked nested repository (listed as inner/)", (root) => nested(root, "inner"), ["inner/"]],
    ["a gitlink staged (git add inner)", (root) => {
      nested(root, "inner")
      git(path.join(root, "inner"), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "x")
      git(root, "add", "inner")
    }, ["inner"]],
    ["a directory that names its git directory elsewhere (.git file)", (root) => {
      const elsewhere = repository([])
      write(root, "vendor/.git", `gitdir: ${path.join(elsewhere, ".git")}\n`)
      write(root, "vendor/x.txt")
    }, ["vendor/"]],
    ["an ordinary file and directory", (root) => write(root, "src/new.ts"), []]
  ]
  for (const [name, act, expected] of cases) {
    it.effect(name, () =>
      Effect.gen(function*() {
        const root = repository()
        const changed = yield* changedBy(root, () => act(root))
        expect(WorkTree.repositoriesAmong(root, changed)).toStrictEqual(expected)
      }))
  }
})
