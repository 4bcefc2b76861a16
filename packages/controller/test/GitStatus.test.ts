/**
 * The version 2 status reader: what real git prints for each kind of entry (a repository made here,
 * git run for real), read as v1 plus `rev-parse` read it; hand-written entries of every kind; and
 * malformed, truncated, oversized and hostile output, each refused with the entry and the reason.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import * as GitStatus from "../src/GitStatus.js"
import * as Preflight from "../src/Preflight.js"
import { tempDirFactory } from "./tempDirs.js"

const temp = tempDirFactory("ratchet-gitstatus-")

const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", ...args], { cwd: root, encoding: "utf8" })

const parsed = (output: string) => {
  const result = GitStatus.parse(output)
  if (Either.isLeft(result)) throw new Error(`refused: ${result.left}`)
  return result.right
}
const refusal = (output: string) => {
  const result = GitStatus.parse(output)
  if (Either.isRight(result)) throw new Error(`accepted: ${JSON.stringify(result.right)}`)
  return result.left
}

const oid = "e8b61dcd853e394be7c29e1cb1b3c32733e4b231"
const blob = "16ac006812e54296af3122d43a85c4f5754f7018"
const header = `# branch.oid ${oid}\0# branch.head main\0`

describe("GitStatus.parse: real git", () => {
  it("reads every kind git prints as v1 and rev-parse read them: modified, staged, renamed (both names), deleted, untracked, names with spaces and quotes, unmerged", () => {
    const root = temp()
    fs.writeFileSync(path.join(root, "a.txt"), "a\n")
    fs.writeFileSync(path.join(root, "b c.txt"), "b\n")
    fs.writeFileSync(path.join(root, "gone.txt"), "g\n")
    fs.writeFileSync(path.join(root, "conflict.txt"), "base\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    git(root, "checkout", "-q", "-b", "other")
    fs.writeFileSync(path.join(root, "conflict.txt"), "other\n")
    git(root, "commit", "-q", "-am", "other")
    git(root, "checkout", "-q", "main")
    fs.writeFileSync(path.join(root, "conflict.txt"), "main\n")
    git(root, "commit", "-q", "-am", "main")
    try {
      git(root, "merge", "-q", "other")
    } catch {
      // The conflict is the point.
    }
    git(root, "mv", "a.txt", "renamed.txt")
    fs.appendFileSync(path.join(root, "b c.txt"), "more\n")
    fs.rmSync(path.join(root, "gone.txt"))
    fs.mkdirSync(path.join(root, "new dir"))
    fs.writeFileSync(path.join(root, "new dir", "it's \"new\".txt"), "n\n")
    const output = git(root, ...GitStatus.args)
    const head = git(root, "rev-parse", "HEAD").trim()
    const v1 = Preflight.parseStatus(git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored=no"))
    const status = parsed(output)
    expect(status.head).toBe(head)
    expect(status.paths).toEqual(v1)
    expect(status.paths).toEqual(["a.txt", "b c.txt", "conflict.txt", "gone.txt", "new dir/it's \"new\".txt", "renamed.txt"])
  })

  it("reads a repository before its first commit as no head", () => {
    const root = temp()
    git(root, "init", "-q")
    fs.writeFileSync(path.join(root, "z"), "z\n")
    expect(parsed(git(root, ...GitStatus.args))).toEqual({ head: null, paths: ["z"] })
  })

  it("leaves ignored files out", () => {
    const root = temp()
    git(root, "init", "-q")
    fs.writeFileSync(path.join(root, ".gitignore"), "build/\n")
    fs.mkdirSync(path.join(root, "build"))
    fs.writeFileSync(path.join(root, "build", "out.js"), "x\n")
    expect(parsed(git(root, ...GitStatus.args)).paths).toEqual([".gitignore"])
  })
})

describe("GitStatus.parse: entries by hand", () => {
  const accepted: ReadonlyArray<{ label: string; output: string; head: string | null; paths: ReadonlyArray<string> }> = [
    { label: "a clean tree", output: header, head: oid, paths: [] },
    { label: "before the first commit", output: "# branch.oid (initial)\0# branch.head main\0", head: null, paths: [] },
    { label: "a changed entry", output: `${header}1 .M N... 100644 100644 100644 ${blob} ${blob} src/a.ts\0`, head: oid, paths: ["src/a.ts"] },
    { label: "a path with spaces", output: `${header}1 M. N... 100644 100644 100644 ${blob} ${blob} a b  c\0`, head: oid, paths: ["a b  c"] },
    { label: "a rename: both names", output: `${header}2 R. N... 100644 100644 100644 ${blob} ${blob} R100 new name\0old name\0`, head: oid, paths: ["new name", "old name"] },
    { label: "an unmerged entry", output: `${header}u UU N... 100644 100644 100644 100644 ${blob} ${blob} ${blob} merge me\0`, head: oid, paths: ["merge me"] },
    { label: "untracked, and ignored left out", output: `${header}? new.txt\0! build/x\0`, head: oid, paths: ["new.txt"] },
    { label: "the same path twice, sorted by code unit", output: `${header}? b\0? B\0? b\0? a\0`, head: oid, paths: ["B", "a", "b"] },
    { label: "other headers are skipped", output: `# branch.oid ${oid}\0# branch.upstream origin/main\0# branch.ab +1 -0\0# stash 2\0`, head: oid, paths: [] },
    { label: "a SHA-256 repository's commit id", output: `# branch.oid ${"ab".repeat(32)}\0`, head: "ab".repeat(32), paths: [] },
    { label: "a newline inside a name", output: `${header}? line\nbreak\0`, head: oid, paths: ["line\nbreak"] }
  ]
  it.each(accepted)("accepts $label", ({ head, output, paths }) => {
    expect(parsed(output)).toEqual({ head, paths })
  })

  const refused: ReadonlyArray<{ label: string; output: string; reason: string }> = [
    { label: "empty output (no --branch)", output: "", reason: "no `# branch.oid` header" },
    { label: "output cut before its last NUL", output: `${header}? new.tx`, reason: "ends without NUL" },
    { label: "a header naming no commit", output: "# branch.oid HEAD\0", reason: "names no commit" },
    { label: "a short commit id", output: "# branch.oid e8b61dcd\0", reason: "names no commit" },
    { label: "an entry of an unknown kind", output: `${header}3 .M something\0`, reason: "is of no kind git prints" },
    { label: "v1 output", output: `${header} M src/a.ts\0`, reason: "is of no kind git prints" },
    { label: "a kind without its space", output: `${header}1.M N...\0`, reason: "is of no kind git prints" },
    { label: "a changed entry with too few fields", output: `${header}1 .M N... 100644 100644\0`, reason: "fewer than 8 fields" },
    { label: "a changed entry with nothing after its fields", output: `${header}1 .M N... 100644 100644 100644 ${blob} ${blob} \0`, reason: "fewer than 8 fields" },
    { label: "a rename without its original name", output: `${header}2 R. N... 100644 100644 100644 ${blob} ${blob} R100 new\0`, reason: "has no original path" },
    { label: "a rename whose original name is empty", output: `${header}2 R. N... 100644 100644 100644 ${blob} ${blob} R100 new\0\0`, reason: "has no original path" },
    { label: "an untracked entry without a path", output: `${header}? \0`, reason: "has no path" },
    { label: "an empty entry", output: `${header}\0`, reason: "is of no kind git prints" },
    { label: "a path longer than any the system opens", output: `${header}? ${"x".repeat(4097)}\0`, reason: "a path of 4097 characters" },
    { label: "hostile: a header line injected into a name is its name, but a bare header is a header", output: `? x\0# branch.oid ${"0".repeat(39)}g\0`, reason: "names no commit" }
  ]
  it.each(refused)("refuses $label, saying why", ({ output, reason }) => {
    expect(refusal(output)).toContain(reason)
  })

  it("never throws, and never accepts what has no branch header, on arbitrary output", () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), (output) => {
      const result = GitStatus.parse(output)
      if (Either.isRight(result)) expect(output).toContain("# branch.oid ")
    }), { numRuns: 2000 })
  })

  it("reads 20 000 entries of a large tree", () => {
    const entries = Array.from({ length: 20_000 }, (_, i) => `? dir/file-${String(i).padStart(5, "0")}.txt\0`).join("")
    const status = parsed(header + entries)
    expect(status.paths).toHaveLength(20_000)
    expect(status.paths[0]).toBe("dir/file-00000.txt")
  })
})
