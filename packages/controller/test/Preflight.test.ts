/**
 * Preflight against real git repositories in temporary directories: clean, dirty (modified,
 * untracked, renamed, deleted, odd names), without a commit, outside git; relevant paths that are
 * missing, absolute or escaping (by `..` or through a symbolic link); scope patterns with and
 * without an existing static part; and that inspecting writes nothing, not even the index.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Event from "@ratchet/kernel/Event"
import type * as Spec from "@ratchet/kernel/Spec"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { tempDirFactory } from "./tempDirs.js"
import * as Preflight from "../src/Preflight.js"

const tempDir = tempDirFactory("ratchet-preflight-")

// Git must never find a repository above the temporary directories (a CI checkout of /tmp, say).
process.env["GIT_CEILING_DIRECTORIES"] = fs.realpathSync(os.tmpdir())

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "init.defaultBranch=main", ...args], { cwd, encoding: "utf8" })

const write = (root: string, file: string, content = `${file}\n`) => {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  fs.writeFileSync(path.join(root, file), content)
}

/** A directory with `git init` and a local identity, and `files` written (not committed). */
const bare = (files: ReadonlyArray<string> = []): string => {
  const root = tempDir()
  git(root, "init", "-q")
  git(root, "config", "user.name", "Test")
  git(root, "config", "user.email", "test@example.com")
  for (const file of files) write(root, file)
  return root
}

/** A repository with one commit holding `files`. */
const repository = (files: ReadonlyArray<string> = ["README.md", "src/index.ts", "src/lib/util.ts", "docs/guide.md"]) => {
  const root = bare(files)
  git(root, "add", ".")
  git(root, "commit", "-q", "-m", "init")
  return root
}

/** A spec as the controller hands one over; built by hand so hostile entries the decoder refuses can be tried. */
const specWith = (input: {
  readonly relevantPaths?: ReadonlyArray<string>
  readonly allowedScope?: ReadonlyArray<string>
  readonly forbiddenScope?: ReadonlyArray<string>
} = {}): Spec.Spec => ({
  goal: "Add a --json flag",
  acceptanceCriteria: [{ id: "AC-001", outcome: "it works", required: true }],
  ...(input.relevantPaths === undefined ? {} : { context: { relevantPaths: input.relevantPaths } }),
  execution: {
    ...(input.allowedScope === undefined ? {} : { allowedScope: input.allowedScope }),
    ...(input.forbiddenScope === undefined ? {} : { forbiddenScope: input.forbiddenScope })
  }
})

const validObservation = Schema.decodeUnknownSync(Event.PreflightObservation)

describe("Preflight.inspect: git", () => {
  it.effect("a clean repository: its head and nothing dirty", () =>
    Effect.gen(function*() {
      const root = repository()
      const observation = yield* Preflight.inspect(
        root,
        specWith({ relevantPaths: ["README.md", "src/index.ts", "src"], allowedScope: ["src/**"], forbiddenScope: ["docs/**"] })
      )
      expect(observation).toEqual({
        head: git(root, "rev-parse", "HEAD").trim(),
        dirtyPaths: [],
        missingPaths: [],
        invalidScopes: []
      })
      expect(observation.head).toMatch(/^[0-9a-f]{40}$/)
    }))

  it.effect("a dirty repository: modified, deleted, staged, untracked and renamed paths, both sides of a rename, sorted", () =>
    Effect.gen(function*() {
      const root = repository(["README.md", "a.txt", "gone.txt", "src/index.ts"])
      write(root, "README.md", "changed\n")
      fs.rmSync(path.join(root, "gone.txt"))
      git(root, "mv", "a.txt", "b.txt")
      write(root, "staged.ts")
      git(root, "add", "staged.ts")
      write(root, "new dir/deep/untracked file.txt")
      write(root, "odd\nname.txt")
      write(root, "ünïcode.md")
      write(root, ".ratchet/tasks/json-flag--t-1/brief.md")
      const observation = yield* Preflight.inspect(root, specWith())
      expect(observation.dirtyPaths).toEqual([
        ".ratchet/tasks/json-flag--t-1/brief.md",
        "README.md",
        "a.txt",
        "b.txt",
        "gone.txt",
        "new dir/deep/untracked file.txt",
        "odd\nname.txt",
        "staged.ts",
        "ünïcode.md"
      ])
      expect(observation.head).toMatch(/^[0-9a-f]{40}$/)
    }))

  it.effect("a repository without a commit: no head, untracked files are dirty", () =>
    Effect.gen(function*() {
      const root = bare(["README.md"])
      expect(yield* Preflight.inspect(root, specWith({ relevantPaths: ["README.md"] }))).toEqual({
        head: null,
        dirtyPaths: ["README.md"],
        missingPaths: [],
        invalidScopes: []
      })
    }))

  it.effect("outside git: no head and nothing dirty, paths still checked", () =>
    Effect.gen(function*() {
      const root = tempDir()
      write(root, "README.md")
      expect(yield* Preflight.inspect(root, specWith({ relevantPaths: ["README.md", "nope.md"] }))).toEqual({
        head: null,
        dirtyPaths: [],
        missingPaths: ["nope.md"],
        invalidScopes: []
      })
    }))

  it.effect("a subdirectory of a repository reports the repository's head and its dirty paths", () =>
    Effect.gen(function*() {
      const root = repository()
      write(root, "outside-sub.txt")
      const observation = yield* Preflight.inspect(path.join(root, "src"), specWith({ relevantPaths: ["index.ts"] }))
      expect(observation.head).toBe(git(root, "rev-parse", "HEAD").trim())
      expect(observation.dirtyPaths).toEqual(["outside-sub.txt"])
      expect(observation.missingPaths).toEqual([])
    }))

  it.effect("ignores GIT_DIR and GIT_WORK_TREE pointing at another repository", () =>
    Effect.gen(function*() {
      const root = repository()
      const other = repository(["other.txt"])
      write(other, "dirty-elsewhere.txt")
      const saved = { dir: process.env["GIT_DIR"], tree: process.env["GIT_WORK_TREE"] }
      process.env["GIT_DIR"] = path.join(other, ".git")
      process.env["GIT_WORK_TREE"] = other
      const observation = yield* Preflight.inspect(root, specWith()).pipe(
        Effect.ensuring(Effect.sync(() => {
          if (saved.dir === undefined) delete process.env["GIT_DIR"]
          else process.env["GIT_DIR"] = saved.dir
          if (saved.tree === undefined) delete process.env["GIT_WORK_TREE"]
          else process.env["GIT_WORK_TREE"] = saved.tree
        }))
      )
      expect(observation.dirtyPaths).toEqual([])
      expect(observation.head).toBe(git(root, "rev-parse", "HEAD").trim())
    }))

  it.effect("writes nothing: the index keeps its bytes and mtime although its stat data is stale", () =>
    Effect.gen(function*() {
      const root = repository()
      const index = path.join(root, ".git", "index")
      // Same content, new mtime: a plain `git status` would refresh the index and rewrite it.
      const later = new Date(Date.now() + 60_000)
      fs.utimesSync(path.join(root, "README.md"), later, later)
      const past = new Date("2001-02-03T04:05:06.000Z")
      fs.utimesSync(index, past, past)
      const before = fs.readFileSync(index)
      const entries = fs.readdirSync(path.join(root, ".git")).sort()

      const observation = yield* Preflight.inspect(root, specWith({ relevantPaths: ["README.md"], allowedScope: ["src/**"] }))
      expect(observation.dirtyPaths).toEqual([])
      expect(fs.statSync(index).mtimeMs).toBe(past.getTime())
      expect(Buffer.compare(fs.readFileSync(index), before)).toBe(0)
      expect(fs.readdirSync(path.join(root, ".git")).sort()).toEqual(entries)

      // The control: git without the read-only switches does rewrite it.
      git(root, "status", "--porcelain")
      expect(fs.statSync(index).mtimeMs).not.toBe(past.getTime())
    }))
})

describe("Preflight.inspect: relevant paths", () => {
  it.effect("missing, absolute, escaping and empty paths are missing, kept verbatim, sorted and deduplicated", () =>
    Effect.gen(function*() {
      const root = repository()
      const observation = yield* Preflight.inspect(
        root,
        specWith({
          relevantPaths: [
            "src/index.ts",
            "src/missing.ts",
            "src/missing.ts",
            "src/../README.md",
            "./docs/guide.md",
            "docs/",
            "../outside.txt",
            "src/../../outside.txt",
            "/etc/passwd",
            path.join(root, "README.md"),
            "",
            "nul\u0000byte"
          ]
        })
      )
      expect(observation.missingPaths).toEqual([
        "(empty path)",
        "../outside.txt",
        "/etc/passwd",
        path.join(root, "README.md"),
        "nul\u0000byte",
        "src/../../outside.txt",
        "src/missing.ts"
      ].sort())
      expect(validObservation(observation)).toEqual(observation)
    }))

  it.effect("a path through a symbolic link that leaves the root is missing; a link inside the root is there", () =>
    Effect.gen(function*() {
      const root = repository()
      const outside = tempDir()
      write(outside, "secret.txt")
      fs.symlinkSync(outside, path.join(root, "escape"))
      fs.symlinkSync(path.join(root, "src"), path.join(root, "alias"))
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "dangling-ish"))
      const observation = yield* Preflight.inspect(
        root,
        specWith({ relevantPaths: ["escape/secret.txt", "alias/index.ts", "escape", "dangling-ish"] })
      )
      // `escape` and `dangling-ish` are entries of the repository themselves (links are committed as links).
      expect(observation.missingPaths).toEqual(["escape/secret.txt"])
    }))

  it.effect("a very long path is cut to the event schema's bound", () =>
    Effect.gen(function*() {
      const root = tempDir()
      const long = `${"d/".repeat(3000)}file.txt`
      const observation = yield* Preflight.inspect(root, specWith({ relevantPaths: [long] }))
      expect(observation.missingPaths).toHaveLength(1)
      expect(observation.missingPaths[0]).toHaveLength(Preflight.maxEntryLength)
      expect(observation.missingPaths[0]!.endsWith("…")).toBe(true)
      expect(validObservation(observation)).toEqual(observation)
    }))
})

describe("Preflight.inspect: scopes", () => {
  it.effect("globs and paths whose static part exists are valid", () =>
    Effect.gen(function*() {
      const root = repository()
      const observation = yield* Preflight.inspect(
        root,
        specWith({
          allowedScope: ["src/**", "src/**/*.ts", "src/*.{ts,js}", "src/l?b/*", "**/*.md", "*", "{src,docs}/**", "README.md", "src/", "src/lib"],
          forbiddenScope: ["docs/**", "src/lib/[a-z]*.ts"]
        })
      )
      expect(observation.invalidScopes).toEqual([])
    }))

  it.effect("an allowed path is a permission, not a claim: what the task will create is valid where it would go", () =>
    Effect.gen(function*() {
      const root = repository()
      const observation = yield* Preflight.inspect(
        root,
        specWith({
          // greet.sh and notes/ at the root; docs/new.md in a directory that is there; notes/today.md
          // and notes/2026/jan.md under a directory another allowed path grants; src/gen/out.ts under a glob's.
          allowedScope: ["greet.sh", "notes/", "docs/new.md", "notes/today.md", "notes/2026/jan.md", "src/**", "src/gen/out.ts"]
        })
      )
      expect(observation.invalidScopes).toEqual([])
    }))

  it.effect("a missing static part, a file where a directory is needed, and hostile patterns are invalid, each with why", () =>
    Effect.gen(function*() {
      const root = repository()
      const outside = tempDir()
      fs.symlinkSync(outside, path.join(root, "linked"))
      const observation = yield* Preflight.inspect(
        root,
        specWith({
          allowedScope: ["lib/**", "src/new/*.ts", "README.md/*", "docs/missing/guide.md", "README.md/x", "linked/**", "src/**", "lib/**"],
          forbiddenScope: ["", "/etc/**", "../**", "src/../../x", "src\\win", "nul\u0000", "vendor/**", "C:/x/**"]
        })
      )
      expect(observation.invalidScopes).toEqual([
        "allowedScope: README.md/* (directory README.md does not exist)",
        "allowedScope: README.md/x (README.md/x does not exist, nor does its directory README.md)",
        "allowedScope: docs/missing/guide.md (docs/missing/guide.md does not exist, nor does its directory docs/missing)",
        "allowedScope: lib/** (directory lib does not exist)",
        "allowedScope: linked/** (directory linked does not exist)",
        "allowedScope: src/new/*.ts (directory src/new does not exist)",
        "forbiddenScope: \"\" (is empty)",
        "forbiddenScope: \"nul\\u0000\" (contains a NUL character)",
        "forbiddenScope: ../** (escapes the repository (it has a \"..\" segment))",
        "forbiddenScope: /etc/** (is absolute)",
        "forbiddenScope: C:/x/** (is absolute)",
        "forbiddenScope: src/../../x (escapes the repository (it has a \"..\" segment))",
        "forbiddenScope: src\\win (contains a backslash (scope patterns use \"/\" separators))"
        // vendor/** is not listed: forbidding what does not exist yet is allowed.
      ])
      expect(validObservation(observation)).toEqual(observation)
    }))
})

describe("Preflight.parseStatus", () => {
  it("reads both paths of renames and copies and skips empty fields", () => {
    expect(Preflight.parseStatus("R  new.txt\0old.txt\0C  copy.txt\0orig.txt\0 M z.txt\0?? a b.txt\0")).toEqual([
      "a b.txt",
      "copy.txt",
      "new.txt",
      "old.txt",
      "orig.txt",
      "z.txt"
    ])
    expect(Preflight.parseStatus("")).toEqual([])
  })
})

describe("Preflight.inspect: errors", () => {
  it.effect("a root that does not exist is a PreflightError, not an observation", () =>
    Effect.gen(function*() {
      const root = path.join(tempDir(), "nowhere")
      const error = yield* Effect.flip(Preflight.inspect(root, specWith()))
      expect(error._tag).toBe("@ratchet/controller/PreflightError")
      expect(error.message).toBe(
        `Preflight could not open ${root}: it does not exist. Run the command inside the project's checkout.`
      )
    }))

  it.effect("a root that is a file is a PreflightError", () =>
    Effect.gen(function*() {
      const root = tempDir()
      write(root, "file.txt")
      const error = yield* Effect.flip(Preflight.inspect(path.join(root, "file.txt"), specWith()))
      expect(error.reason).toBe("it is not a directory")
    }))

  it.effect("git missing from PATH is a PreflightError that says so", () =>
    Effect.gen(function*() {
      const root = tempDir()
      const saved = process.env["PATH"]
      process.env["PATH"] = path.join(root, "no-bin")
      const error = yield* Effect.flip(Preflight.inspect(root, specWith())).pipe(
        Effect.ensuring(Effect.sync(() => {
          process.env["PATH"] = saved
        }))
      )
      expect(error.reason).toBe("git is not installed or not on PATH")
      expect(error.message).toContain("Install git")
    }))

  it.effect.skipIf(process.getuid?.() === 0)("an unreadable directory on the way is a PreflightError, not a missing path", () =>
    Effect.gen(function*() {
      const root = tempDir()
      write(root, "locked/inner/file.txt")
      fs.chmodSync(path.join(root, "locked"), 0o000)
      const error = yield* Effect.flip(Preflight.inspect(root, specWith({ relevantPaths: ["locked/inner/file.txt"] }))).pipe(
        Effect.ensuring(Effect.sync(() => fs.chmodSync(path.join(root, "locked"), 0o755)))
      )
      expect(error.reason).toBe("EACCES")
      expect(error.message).toContain("may read the repository")
    }))
})
