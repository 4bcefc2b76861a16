/**
 * Project and workspace identity against real git repositories in temporary directories: a clone
 * or a worktree is a new workspace, a renamed folder is not; init is idempotent and never rewrites
 * a project file; two processes initialising one checkout agree.
 */
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { tempDirFactory } from "./tempDirs.js"
import * as Workspace from "../src/Workspace.js"

const tempDir = tempDirFactory("ratchet-ws-")

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    encoding: "utf8"
  })

/** A git repository with one commit, its root directory. */
const repository = (): string => {
  const root = path.join(tempDir(), "repo")
  fs.mkdirSync(root)
  git(root, "init", "-q")
  fs.writeFileSync(path.join(root, "README.md"), "hello\n")
  git(root, "add", ".")
  git(root, "commit", "-q", "-m", "init")
  return root
}

const ws = Workspace.make

describe("Workspace", () => {
  it.effect("init writes a project file at the repository's top, from a subdirectory, and is idempotent", () =>
    Effect.gen(function*() {
      const root = repository()
      fs.mkdirSync(path.join(root, "src", "deep"), { recursive: true })
      const first = yield* ws.init(path.join(root, "src", "deep"), { now: new Date("2026-12-02T10:00:00.000Z") })
      expect(first).toMatchObject({ root, created: true, git: true, projectFile: path.join(root, ".ratchet", "project.json") })
      expect(first.project).toMatchObject({ schemaVersion: 1, displayName: "repo", createdAt: "2026-12-02T10:00:00.000Z" })
      expect(first.project.projectId).toMatch(/^prj-[0-9a-f-]{36}$/)
      const text = fs.readFileSync(first.projectFile, "utf8")
      const again = yield* ws.init(root)
      expect(again).toMatchObject({ created: false, workspaceId: first.workspaceId, project: first.project })
      expect(fs.readFileSync(first.projectFile, "utf8")).toBe(text)
      // The workspace id lives in the git directory, so it is never committed.
      expect(git(root, "status", "--porcelain", "--ignored")).toBe("?? .ratchet/\n")
      expect(fs.readFileSync(path.join(root, ".git", "ratchet", "workspace-id"), "utf8").trim()).toBe(first.workspaceId)
      const located = yield* ws.locate(path.join(root, "src"))
      expect(located).toMatchObject({ root, workspaceId: first.workspaceId, project: first.project })
    }))

  it.effect("a clone shares the project but is a new workspace; a renamed checkout keeps its workspace", () =>
    Effect.gen(function*() {
      const root = repository()
      const original = yield* ws.init(root)
      git(root, "add", ".ratchet")
      git(root, "commit", "-q", "-m", "ratchet")
      const clone = path.join(path.dirname(root), "clone")
      git(path.dirname(root), "clone", "-q", root, clone)
      const cloned = yield* ws.locate(clone)
      expect(cloned.project.projectId).toBe(original.project.projectId)
      expect(cloned.workspaceId).not.toBe(original.workspaceId)

      const renamed = path.join(path.dirname(root), "renamed")
      fs.renameSync(root, renamed)
      const moved = yield* ws.locate(renamed)
      expect(moved).toMatchObject({ root: renamed, workspaceId: original.workspaceId })
    }))

  it.effect("a git worktree is a workspace of its own", () =>
    Effect.gen(function*() {
      const root = repository()
      const original = yield* ws.init(root)
      git(root, "add", ".ratchet")
      git(root, "commit", "-q", "-m", "ratchet")
      const tree = path.join(path.dirname(root), "tree")
      git(root, "worktree", "add", "-q", tree)
      const other = yield* ws.locate(tree)
      expect(other.project.projectId).toBe(original.project.projectId)
      expect(other.workspaceId).not.toBe(original.workspaceId)
      expect((yield* ws.locate(tree)).workspaceId).toBe(other.workspaceId)
      expect((yield* ws.locate(root)).workspaceId).toBe(original.workspaceId)
    }))

  it.effect("outside git: the project is the directory, the workspace id is kept out of commits", () =>
    Effect.gen(function*() {
      const root = tempDir()
      const made = yield* ws.init(root, { displayName: "plain" })
      expect(made).toMatchObject({ root, git: false, created: true, project: { displayName: "plain" } })
      expect(fs.readFileSync(path.join(root, ".ratchet", ".gitignore"), "utf8")).toContain("local/")
      expect(fs.readFileSync(path.join(root, ".ratchet", "local", "workspace-id"), "utf8").trim()).toBe(made.workspaceId)
      expect((yield* ws.locate(root)).workspaceId).toBe(made.workspaceId)
    }))

  it.effect("locate without a project is ProjectNotInitialised pointing at init", () =>
    Effect.gen(function*() {
      const root = tempDir()
      const error = yield* Effect.flip(ws.locate(root))
      expect(error).toMatchObject({ _tag: "@ratchet/controller/ProjectNotInitialised", from: root })
      expect(error.message).toContain("ratchet init")
    }))

  it.effect("a damaged project file is reported, never rewritten, by init and by locate", () =>
    Effect.gen(function*() {
      const root = tempDir()
      fs.mkdirSync(path.join(root, ".ratchet"))
      const file = path.join(root, ".ratchet", "project.json")
      fs.writeFileSync(file, "{\"schemaVersion\": 1, \"projectId\": \"p\"")
      const byInit = yield* Effect.flip(ws.init(root))
      expect(byInit).toMatchObject({ _tag: "@ratchet/controller/InvalidProjectFile", path: file, field: "(file)" })
      expect(fs.readFileSync(file, "utf8")).toBe("{\"schemaVersion\": 1, \"projectId\": \"p\"")
      const byLocate = yield* Effect.flip(ws.locate(root))
      expect(byLocate._tag).toBe("@ratchet/controller/InvalidProjectFile")
    }))

  it.effect("a workspace id file that was tampered with is an error naming it", () =>
    Effect.gen(function*() {
      const root = repository()
      yield* ws.init(root)
      fs.writeFileSync(path.join(root, ".git", "ratchet", "workspace-id"), "../../etc/passwd\n")
      const error = yield* Effect.flip(ws.locate(root))
      expect(error).toMatchObject({ _tag: "@ratchet/controller/WorkspaceError", path: path.join(root, ".git", "ratchet", "workspace-id") })
    }))

  it("four processes initialising one fresh checkout at once agree on one project and one workspace", async () => {
    const root = repository()
    const child = fileURLToPath(new URL("./child/init.ts", import.meta.url))
    const run = () =>
      new Promise<string>((resolve, reject) => {
        const process_ = spawn(process.execPath, ["--conditions=@ratchet/source", "--import", "tsx", child, root], {
          stdio: ["ignore", "pipe", "pipe"]
        })
        let out = ""
        let err = ""
        process_.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
        process_.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()))
        process_.once("exit", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`init child exited ${code}: ${err}`))))
      })
    const answers = (await Promise.all([run(), run(), run(), run()])).map((line) => JSON.parse(line) as Workspace.Initialised)
    expect(new Set(answers.map((answer) => answer.project.projectId)).size).toBe(1)
    expect(new Set(answers.map((answer) => answer.workspaceId)).size).toBe(1)
    expect(answers.filter((answer) => answer.created).length).toBe(1)
    expect(fs.readdirSync(path.join(root, ".ratchet"))).toEqual(["project.json"])
  }, 120_000)
})

describe("Workspace.init refuses a .ratchet that is not a real directory", () => {
  it.effect("a symbolic link to a directory outside, and a plain file", () =>
    Effect.gen(function*() {
      const outside = tempDir()
      const linked = tempDir()
      fs.symlinkSync(outside, path.join(linked, ".ratchet"))
      const viaLink = yield* Effect.flip(Workspace.make.init(linked))
      expect(viaLink._tag).toBe("@ratchet/controller/WorkspaceError")
      expect(viaLink.message).toContain("symbolic link")
      expect(fs.readdirSync(outside)).toEqual([])
      const file = tempDir()
      fs.writeFileSync(path.join(file, ".ratchet"), "not a directory")
      const plain = yield* Effect.flip(Workspace.make.init(file))
      expect(plain.message).toContain("not a directory")
    }))
})
