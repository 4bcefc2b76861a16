/**
 * Contract files: the bounded reader against real files, FIFOs, directories and devices; strict
 * UTF-8; spec front matter, plans and JSON digests, accepted and refused, each refusal checked
 * against a reason and a message written by hand; truncated, oversized and hostile input (alias
 * bombs, prototype keys, deep nesting, NUL bytes, invalid UTF-8), which must end in a typed error
 * and never in a throw.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import * as Digest from "@ratchet/kernel/Digest"
import * as Plan from "@ratchet/kernel/Plan"
import * as Spec from "@ratchet/kernel/Spec"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "fast-check"
import { tempDirFactory } from "./tempDirs.js"
import * as ContractFile from "../src/ContractFile.js"

const tempDir = tempDirFactory("ratchet-contract-")

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)
const bytesOf = (...values: ReadonlyArray<number>): Uint8Array => Uint8Array.from(values)

/** The error of a Left, failing the test on a Right. */
const refused = <A>(result: Either.Either<A, ContractFile.ContractFileError>): ContractFile.ContractFileError => {
  if (Either.isRight(result)) throw new Error(`expected a refusal, got ${JSON.stringify(result.right)}`)
  return result.left
}

/** The value of a Right, failing the test with the error's message on a Left. */
const accepted = <A>(result: Either.Either<A, ContractFile.ContractFileError>): A => {
  if (Either.isLeft(result)) throw new Error(`expected success, got:\n${result.left.message}`)
  return result.right
}

const reasons: ReadonlyArray<ContractFile.Reason> = [
  "not_found",
  "not_a_file",
  "too_large",
  "unreadable",
  "not_utf8",
  "syntax",
  "schema",
  "stale_spec",
  "approval_in_file",
  "unsupported"
]

// ---------------------------------------------------------------------------------------------
// Fixtures, written by hand
// ---------------------------------------------------------------------------------------------

const specFrontMatter = `goal: Add a --json flag to the status command
nonGoals:
  - change the human output
acceptanceCriteria:
  - id: AC-001
    outcome: status --json prints one JSON document
    required: true
    verify:
      command: npm test -- status
  - id: AC-002
    outcome: the guide mentions the flag → "--json"
    required: false
execution:
  allowedScope: ["src/**", "docs/guide.md"]
`

const specBody = `# Status as JSON

Scripts want to read the status; today they scrape it. Café au lait.
`

const specText = `---\n${specFrontMatter}---\n${specBody}`

/** The spec the front matter above means, as the kernel's input. */
const specValue = {
  goal: "Add a --json flag to the status command",
  nonGoals: ["change the human output"],
  acceptanceCriteria: [
    {
      id: "AC-001",
      outcome: "status --json prints one JSON document",
      required: true,
      verify: { command: "npm test -- status" }
    },
    { id: "AC-002", outcome: "the guide mentions the flag → \"--json\"", required: false }
  ],
  execution: { allowedScope: ["src/**", "docs/guide.md"] }
}

const spec: Spec.Spec = Either.getOrThrow(Spec.decode(specValue))
const specDigest = Spec.digest(spec)
const otherDigest = Digest.Digest.make(`sha256:${"ab".repeat(32)}`)

const planSteps = `steps:
  - id: add-flag
    title: Add the flag
    acRefs: [AC-001]
    run:
      command: npm run build
  - id: document
    title: Document the flag
    acRefs: [AC-002]
    needs: [add-flag]
    manual:
      instructions: Add a paragraph to docs/guide.md
    state: drafted
stepStates: [drafted, reviewed]
`

const planValue = (digest: string) => ({
  specDigest: digest,
  steps: [
    { id: "add-flag", title: "Add the flag", acRefs: ["AC-001"], run: { command: "npm run build" } },
    {
      id: "document",
      title: "Document the flag",
      acRefs: ["AC-002"],
      needs: ["add-flag"],
      manual: { instructions: "Add a paragraph to docs/guide.md" },
      state: "drafted"
    }
  ],
  stepStates: ["drafted", "reviewed"]
})

const withSpec = (frontMatter: string, body = specBody) => utf8(`---\n${frontMatter}---\n${body}`)
const decodeSpec = (text: string | Uint8Array) => ContractFile.decodeSpec("spec.md", typeof text === "string" ? utf8(text) : text)
const decodePlan = (text: string) => ContractFile.decodePlan("plan.yaml", utf8(text), spec)

/** A billion-laughs document: nine aliases of nine aliases of ... nine strings. */
const aliasBomb = [
  `a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]`,
  `b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]`,
  `c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]`,
  `d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]`,
  `e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]`,
  `f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]`,
  `g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]`,
  `h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]`,
  `i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]`,
  ""
].join("\n")

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

describe("ContractFile.readBounded", () => {
  it.effect("reads a regular file, and a symlink to one", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "spec.md")
      fs.writeFileSync(file, specText)
      fs.symlinkSync(file, path.join(dir, "link.md"))
      expect(Buffer.from(yield* ContractFile.readBounded(file)).toString("utf8")).toBe(specText)
      expect(Buffer.from(yield* ContractFile.readBounded(path.join(dir, "link.md"))).toString("utf8")).toBe(specText)
    }))

  it.effect("accepts a file of exactly 1 MiB and an empty file", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      fs.writeFileSync(path.join(dir, "full.md"), Buffer.alloc(1024 * 1024, 0x61))
      fs.writeFileSync(path.join(dir, "empty.md"), "")
      const full = yield* ContractFile.readBounded(path.join(dir, "full.md"))
      expect(full.byteLength).toBe(1_048_576)
      expect(full.every((byte) => byte === 0x61)).toBe(true)
      expect((yield* ContractFile.readBounded(path.join(dir, "empty.md"))).byteLength).toBe(0)
    }))

  it.effect("refuses a file of 1 MiB + 1 byte", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "big.md")
      fs.writeFileSync(file, Buffer.alloc(1024 * 1024 + 1, 0x61))
      const error = yield* Effect.flip(ContractFile.readBounded(file))
      expect(error).toMatchObject({ _tag: "@ratchet/controller/ContractFileError", file, kind: "file", reason: "too_large" })
      expect(error.issues).toEqual([{ path: "", message: "is 1048577 bytes, over the 1 MiB limit (1048576 bytes)" }])
      expect(error.message).toContain("Keep the file within 1 MiB")
    }))

  it.effect("refuses a missing file, naming the path and the fix", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "missing.md")
      const error = yield* Effect.flip(ContractFile.readBounded(file))
      expect(error.reason).toBe("not_found")
      expect(error.message).toBe(
        `${file}: file not found (1 issue):\n  (file): no such file\nCheck the path (a relative path is resolved against the current directory) and run the command again.`
      )
      const nested = yield* Effect.flip(ContractFile.readBounded(path.join(file, "below.md")))
      expect(nested.reason).toBe("not_found")
    }))

  it.effect("refuses a directory", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const error = yield* Effect.flip(ContractFile.readBounded(dir))
      expect(error).toMatchObject({ kind: "file", reason: "not_a_file" })
      expect(error.issues).toEqual([{ path: "", message: "is a directory, not a regular file" }])
      expect(error.message).toContain("Give the path of a regular file")
    }))

  it.effect("refuses a FIFO without waiting for a writer", () =>
    Effect.gen(function*() {
      const fifo = path.join(tempDir(), "pipe.md")
      execFileSync("mkfifo", [fifo])
      const error = yield* Effect.flip(ContractFile.readBounded(fifo)).pipe(Effect.timeout("5 seconds"))
      expect(error.reason).toBe("not_a_file")
      expect(error.issues).toEqual([{ path: "", message: "is a FIFO (named pipe), not a regular file" }])
    }))

  it.effect("refuses a symlink to /dev/zero as a device, without reading it", () =>
    Effect.gen(function*() {
      const link = path.join(tempDir(), "zero.md")
      fs.symlinkSync("/dev/zero", link)
      const error = yield* Effect.flip(ContractFile.readBounded(link)).pipe(Effect.timeout("5 seconds"))
      expect(error.reason).toBe("not_a_file")
      expect(error.issues).toEqual([{ path: "", message: "is a character device, not a regular file" }])
    }))

  it.effect("refuses a Unix socket", () =>
    Effect.gen(function*() {
      const socket = path.join(tempDir(), "sock.md")
      const server = net.createServer()
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(socket, resolve)))
      const error = yield* Effect.flip(ContractFile.readBounded(socket)).pipe(
        Effect.ensuring(Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve()))))
      )
      expect(error.reason).toBe("not_a_file")
      expect(error.issues).toEqual([{ path: "", message: "is a socket or a device, not a regular file" }])
    }))

  it.effect("refuses a symlink loop as unreadable", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      fs.symlinkSync(path.join(dir, "b.md"), path.join(dir, "a.md"))
      fs.symlinkSync(path.join(dir, "a.md"), path.join(dir, "b.md"))
      const error = yield* Effect.flip(ContractFile.readBounded(path.join(dir, "a.md")))
      expect(error).toMatchObject({ kind: "file", reason: "unreadable" })
      expect(error.issues[0]?.message).toMatch(/^could not open it: ELOOP/)
      expect(error.message).toContain("Check that this user may read the file")
    }))

  it.effect.skipIf(process.getuid?.() === 0)("refuses a file this user may not read", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "secret.md")
      fs.writeFileSync(file, specText, { mode: 0o000 })
      const error = yield* Effect.flip(ContractFile.readBounded(file))
      expect(error.reason).toBe("unreadable")
      expect(error.message).toContain("EACCES")
    }))

  it.effect("loadSpec and loadDigest read and decode in one step", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "spec.md")
      fs.writeFileSync(file, specText)
      const document = yield* ContractFile.loadSpec(file)
      expect(document.semantic).toEqual(specValue)
      expect(yield* ContractFile.loadDigest(file)).toEqual({ kind: "spec", digest: specDigest })
      const planFile = path.join(path.dirname(file), "plan.yaml")
      fs.writeFileSync(planFile, planSteps)
      expect(yield* ContractFile.loadPlan(planFile, spec)).toEqual(planValue(specDigest))
    }))
})

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

describe("ContractFile.decodeText", () => {
  const text = (bytes: Uint8Array) => ContractFile.decodeText("f.md", bytes)

  it("drops one leading BOM, turns CRLF into LF and keeps everything else", () => {
    expect(text(bytesOf(0xef, 0xbb, 0xbf, 0x61, 0x0d, 0x0a, 0x62))).toEqual(Either.right("a\nb"))
    expect(text(bytesOf(0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x61))).toEqual(Either.right("\uFEFFa"))
    expect(text(utf8("a\rb\r\n\r\nc\n"))).toEqual(Either.right("a\rb\n\nc\n"))
    expect(text(utf8("é → 🎉"))).toEqual(Either.right("é → 🎉"))
    expect(text(bytesOf())).toEqual(Either.right(""))
  })

  it.each([
    ["a lone continuation byte", bytesOf(0x61, 0x80, 0x62), "invalid UTF-8 at byte offset 1: a continuation byte (0x80) with no lead byte"],
    ["an overlong two-byte slash", bytesOf(0x61, 0x61, 0xc0, 0xaf), "invalid UTF-8 at byte offset 2: an overlong encoding (lead byte 0xC0)"],
    ["an overlong three-byte slash", bytesOf(0xe0, 0x80, 0xaf), "invalid UTF-8 at byte offset 0: an overlong encoding (bytes 0xE0 0x80)"],
    ["an overlong four-byte form", bytesOf(0x20, 0xf0, 0x80, 0x80, 0xaf), "invalid UTF-8 at byte offset 1: an overlong encoding (bytes 0xF0 0x80)"],
    [
      "a UTF-16 surrogate encoded in UTF-8",
      bytesOf(0x61, 0x62, 0x63, 0xed, 0xa0, 0x80),
      "invalid UTF-8 at byte offset 3: a UTF-16 surrogate encoded as UTF-8 (bytes 0xED 0xA0)"
    ],
    ["a code point above U+10FFFF", bytesOf(0xf4, 0x90, 0x80, 0x80), "invalid UTF-8 at byte offset 0: a code point above U+10FFFF (bytes 0xF4 0x90)"],
    ["byte 0xFF", bytesOf(0x61, 0xff), "invalid UTF-8 at byte offset 1: byte 0xFF, which never occurs in UTF-8"],
    ["a sequence cut at the end", bytesOf(0x61, 0xe2, 0x86), "invalid UTF-8 at byte offset 1: a multi-byte sequence cut short by the end of the file"],
    ["a lead byte followed by ASCII", bytesOf(0xc3, 0x41), "invalid UTF-8 at byte offset 0: lead byte 0xC3 not followed by enough continuation bytes"],
    ["a NUL byte", bytesOf(0x61, 0x62, 0x00, 0x63), "NUL byte at byte offset 2"],
    ["a NUL byte after a BOM", bytesOf(0xef, 0xbb, 0xbf, 0x00), "NUL byte at byte offset 3"]
  ])("refuses %s, naming the byte offset", (_label, bytes, message) => {
    const error = refused(text(bytes))
    expect(error).toMatchObject({ file: "f.md", kind: "file", reason: "not_utf8", issues: [{ path: "", message }] })
    expect(error.message).toBe(`f.md: not UTF-8 text (1 issue):\n  (file): ${message}\nSave the file as UTF-8 text without NUL bytes and run the command again.`)
  })

  it("refuses more than 1 MiB handed over directly", () => {
    const error = refused(text(new Uint8Array(1024 * 1024 + 1).fill(0x61)))
    expect(error).toMatchObject({ reason: "too_large", issues: [{ path: "", message: "is 1048577 bytes, over the 1 MiB limit (1048576 bytes)" }] })
    expect(Either.isRight(text(new Uint8Array(1024 * 1024).fill(0x61)))).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------
// Spec
// ---------------------------------------------------------------------------------------------

describe("ContractFile.decodeSpec", () => {
  it("decodes the front matter into the spec and keeps the body as written", () => {
    const document = accepted(decodeSpec(specText))
    expect(document.semantic).toEqual(specValue)
    expect(document.body).toBe(specBody)
  })

  it("accepts a closing \"...\", a BOM, CRLF line ends, an empty body and no final newline", () => {
    expect(accepted(decodeSpec(`---\n${specFrontMatter}...\nbody\n`))).toEqual({ semantic: specValue, body: "body\n" })
    const crlf = `\uFEFF---\n${specFrontMatter}---\n${specBody}`.replaceAll("\n", "\r\n")
    expect(accepted(decodeSpec(crlf))).toEqual({ semantic: specValue, body: specBody })
    expect(accepted(decodeSpec(`---\n${specFrontMatter}---`))).toEqual({ semantic: specValue, body: "" })
    expect(accepted(decodeSpec(`---\n${specFrontMatter}---\n`))).toEqual({ semantic: specValue, body: "" })
  })

  it("keeps the body's own \"---\" lines in the body", () => {
    const body = "Intro\n\n---\n\nAfter a rule\n"
    expect(accepted(decodeSpec(`---\n${specFrontMatter}---\n${body}`)).body).toBe(body)
  })

  it("an editorial change (body, comments, key order, quoting) keeps the digest; a semantic change does not", () => {
    const digest = (bytes: Uint8Array) => accepted(ContractFile.digestOf("spec.md", bytes)).digest
    const base = digest(withSpec(specFrontMatter))
    expect(base).toBe(specDigest)
    expect(digest(withSpec(specFrontMatter, "# A different title\n\nRewritten prose.\n"))).toBe(base)
    expect(digest(withSpec(specFrontMatter, ""))).toBe(base)
    const reordered = `# the contract\nexecution: { allowedScope: [ 'src/**', "docs/guide.md" ] }\n${
      specFrontMatter.replace(/\nexecution:[\s\S]*$/, "\n")
    }`
    expect(digest(withSpec(reordered))).toBe(base)
    expect(digest(withSpec(specFrontMatter.replace("status command", "status command!")))).not.toBe(base)
    expect(digest(withSpec(specFrontMatter.replace("required: false", "required: true")))).not.toBe(base)
    expect(digest(withSpec(specFrontMatter.replace("  - change the human output\n", "  - change the human output\n  - add colour\n"))))
      .not.toBe(base)
  })

  it.each([
    ["a file without front matter", "# Title\n\ngoal: x\n", "line 1: a spec file starts with a line \"---\" that opens its YAML front matter, found \"# Title\""],
    ["an empty file", "", "line 1: a spec file starts with a line \"---\" that opens its YAML front matter, found \"\""],
    ["\"---\" with trailing spaces", "--- \ngoal: x\n---\n", "line 1: a spec file starts with a line \"---\" that opens its YAML front matter, found \"--- \""],
    [
      "front matter that is never closed",
      `---\n${specFrontMatter}`,
      "the front matter opened on line 1 is never closed; end it with a line \"---\" before the Markdown body"
    ],
    ["only the opening line", "---", "the front matter opened on line 1 is never closed; end it with a line \"---\" before the Markdown body"]
  ])("refuses %s", (_label, text, message) => {
    const error = refused(decodeSpec(text))
    expect(error).toMatchObject({ kind: "spec", reason: "syntax", issues: [{ path: "", message }] })
    expect(error.message).toContain("a spec file is a line \"---\", the YAML fields, a line \"---\", then the Markdown body")
  })

  it.each([
    ["a sequence", "- goal: x\n", "expected a YAML mapping of the spec's fields, found a sequence"],
    ["nothing", "", "expected a YAML mapping of the spec's fields, found nothing"],
    ["a comment only", "# nothing yet\n", "expected a YAML mapping of the spec's fields, found nothing"],
    ["a string", "just words\n", "expected a YAML mapping of the spec's fields, found a string"]
  ])("refuses front matter that is %s", (_label, frontMatter, message) => {
    expect(refused(decodeSpec(withSpec(frontMatter)))).toMatchObject({ kind: "spec", reason: "schema", issues: [{ path: "", message }] })
  })

  it("refuses a duplicate key, naming where it is in the file and in the spec", () => {
    const frontMatter = specFrontMatter.replace("    required: false\n", "    required: false\n    outcome: again\n")
    const error = refused(decodeSpec(withSpec(frontMatter)))
    expect(error).toMatchObject({ kind: "spec", reason: "syntax" })
    // Line 14 of the file: the opening "---" is line 1, the front matter's line 13 is line 14.
    expect(error.issues).toEqual([
      {
        path: "/acceptanceCriteria/1/outcome",
        message: "line 14, column 5: duplicate key \"outcome\"; a key may appear only once in a mapping, keep one"
      }
    ])
    const top = refused(decodeSpec(withSpec(`goal: a\n${specFrontMatter}`)))
    expect(top.issues).toEqual([
      { path: "/goal", message: "line 3, column 1: duplicate key \"goal\"; a key may appear only once in a mapping, keep one" }
    ])
  })

  it("refuses a YAML syntax error with its line and column in the file", () => {
    const error = refused(decodeSpec(withSpec("goal: [unclosed\nacceptanceCriteria: []\n")))
    expect(error.reason).toBe("syntax")
    expect(error.issues[0]?.message).toMatch(/^line 3, column 1: /)
    const tab = refused(decodeSpec(withSpec("goal: x\nexecution:\n\tretry: 1\n")))
    expect(tab.reason).toBe("syntax")
    expect(tab.issues[0]?.message).toMatch(/^line 4, column 1: Tabs are not allowed as indentation/)
  })

  it.each([
    ["!!js/function", "goal: !!js/function 'function () { return 1 }'\n", "line 2, column 7: the tag !!js/function is not allowed"],
    ["a local tag", "goal: !foo bar\n", "line 2, column 7: the tag !foo is not allowed"],
    ["!!binary", "goal: !!binary aGVsbG8=\n", "line 2, column 7: the tag !!binary is not allowed"],
    ["!!set on a mapping", "goal: x\nnonGoals: !!set {a, b}\n", "line 3, column 11: the tag !!set is not allowed"]
  ])("refuses %s", (_label, frontMatter, message) => {
    const error = refused(decodeSpec(withSpec(frontMatter)))
    expect(error.reason).toBe("syntax")
    expect(error.issues.some((issue) => issue.message.includes(message))).toBe(true)
  })

  it("points at the value a tag is on", () => {
    const inList = refused(decodeSpec(withSpec(`nonGoals:\n  - a\n  - !foo b\n${specFrontMatter.replace(/^nonGoals:\n.*\n/m, "")}`)))
    expect(inList.issues).toEqual([
      { path: "/nonGoals/1", message: "line 4, column 5: the tag !foo is not allowed; a contract file is plain data, so remove the tag" }
    ])
    const onMap = refused(decodeSpec(withSpec(`${specFrontMatter}context: !!omap { relevantPaths: [src] }\n`)))
    expect(onMap.issues).toEqual([
      {
        path: "/context",
        message: "line 16, column 10: the tag !!omap is not allowed; a contract file is plain data, so remove the tag"
      }
    ])
  })

  it("accepts the core tags, which only say what a scalar already is", () => {
    const frontMatter = specFrontMatter.replace("goal: Add", "goal: !!str Add").replace("required: true", "required: !!bool true")
    expect(accepted(decodeSpec(withSpec(frontMatter))).semantic).toEqual(specValue)
  })

  it("refuses a key that is not a string", () => {
    const error = refused(decodeSpec(withSpec(`? [a, b]\n: c\n${specFrontMatter}`)))
    expect(error.reason).toBe("syntax")
    expect(error.issues[0]?.message).toBe("line 2, column 3: a key that is not a plain string; every key of a contract file is a field name")
  })

  it("refuses unknown and ill-typed fields with the kernel's paths", () => {
    const error = refused(decodeSpec(withSpec(`owner: alice\n${specFrontMatter.replace("required: true", "required: yes")}`)))
    expect(error).toMatchObject({ kind: "spec", reason: "schema" })
    expect(error.issues.map((issue) => issue.path).sort()).toEqual(["/acceptanceCriteria/0/required", "/owner"])
    expect(error.issues.find((issue) => issue.path === "/owner")?.message).toContain("is unexpected")
    expect(error.message).toContain("Fix each field named above and load the spec again.")
  })

  it("refuses a bad criterion id and a criterion with both verify and manual", () => {
    const frontMatter = specFrontMatter
      .replace("id: AC-002", "id: AC-2")
      .replace("      command: npm test -- status\n", "      command: npm test -- status\n    manual: { procedure: look, observer: me }\n")
    const error = refused(decodeSpec(withSpec(frontMatter)))
    expect(error.reason).toBe("schema")
    expect(error.issues).toContainEqual({
      path: "/acceptanceCriteria/1/id",
      message: "expected an acceptance criterion id like \"AC-001\" (\"AC-\" and at least three digits), got \"AC-2\""
    })
    expect(error.issues.some((issue) => issue.message.includes("has both verify and manual"))).toBe(true)
  })

  it("refuses duplicate criterion ids, naming the id, even when another criterion is broken", () => {
    const duplicate = specFrontMatter.replace("id: AC-002", "id: AC-001")
    expect(refused(decodeSpec(withSpec(duplicate))).issues).toEqual([
      {
        path: "/acceptanceCriteria/1/id",
        message: "duplicate acceptance criterion id AC-001 (first declared at /acceptanceCriteria/0); give each criterion its own id"
      }
    ])
    // The kernel checks ids only once every criterion decodes; the file check does not wait.
    const alsoBroken = duplicate.replace("    required: false\n", "")
    expect(refused(decodeSpec(withSpec(alsoBroken))).issues).toEqual([
      { path: "/acceptanceCriteria/1/required", message: "is missing" },
      {
        path: "/acceptanceCriteria/1/id",
        message: "duplicate acceptance criterion id AC-001 (first declared at /acceptanceCriteria/0); give each criterion its own id"
      }
    ])
  })

  it("explains a goal written as a block scalar, whose final line break the spec refuses", () => {
    const frontMatter = specFrontMatter.replace("goal: Add a --json flag to the status command", "goal: |\n  Add a --json flag")
    const [issue] = refused(decodeSpec(withSpec(frontMatter))).issues
    expect(issue?.path).toBe("/goal")
    expect(issue?.message).toContain("a YAML block scalar (| or >) keeps its final line break, so write |- or >-")
    const chomped = specFrontMatter.replace("goal: Add a --json flag to the status command", "goal: |-\n  Add a --json flag")
    expect(accepted(decodeSpec(withSpec(chomped))).semantic.goal).toBe("Add a --json flag")
  })

  it.each(["approval: granted", "approved: true", "status: approved", "approvedBy: alice", "approved_by: alice", "Approved: yes"])(
    "refuses approval written into the file (%s), pointing at `ratchet approve`",
    (line) => {
      const key = line.slice(0, line.indexOf(":"))
      const error = refused(decodeSpec(withSpec(`${line}\n${specFrontMatter}`)))
      expect(error).toMatchObject({ kind: "spec", reason: "approval_in_file" })
      expect(error.issues).toEqual([
        {
          path: `/${key}`,
          message: "approval is never taken from a file; remove this key and run `ratchet approve <task> spec` on an interactive terminal"
        }
      ])
      expect(error.message).toMatch(
        /Remove these keys\. Approval is never taken from a file: run `ratchet approve <task> spec` on an interactive terminal/
      )
    }
  )

  it("lists the other problems of a file that carries an approval, for one round of fixes", () => {
    const error = refused(decodeSpec(withSpec(`approved: true\nowner: bob\n${specFrontMatter}`)))
    expect(error.reason).toBe("approval_in_file")
    expect(error.issues.map((issue) => issue.path)).toEqual(["/approved", "/owner"])
  })
})

// ---------------------------------------------------------------------------------------------
// Plan
// ---------------------------------------------------------------------------------------------

describe("ContractFile.decodePlan", () => {
  it("binds a plan without specDigest to the spec it is loaded against", () => {
    expect(accepted(decodePlan(planSteps))).toEqual(planValue(specDigest))
  })

  it("accepts a plan that names the current spec, with or without a document marker", () => {
    expect(accepted(decodePlan(`specDigest: ${specDigest}\n${planSteps}`))).toEqual(planValue(specDigest))
    expect(accepted(decodePlan(`---\nspecDigest: "${specDigest}"\n${planSteps}...\n`))).toEqual(planValue(specDigest))
  })

  it("refuses a plan written for another spec, naming both and the fix", () => {
    const error = refused(decodePlan(`specDigest: ${otherDigest}\n${planSteps}`))
    expect(error).toMatchObject({ file: "plan.yaml", kind: "plan", reason: "stale_spec" })
    expect(error.issues).toEqual([
      {
        path: "/specDigest",
        message:
          `the plan was written for spec ${otherDigest}, but the current spec is ${specDigest}; drop specDigest to bind the plan to the current spec, or regenerate the plan`
      }
    ])
    expect(error.message).toBe(
      `plan.yaml: the plan was written for another spec (1 issue):\n  /specDigest: ${
        error.issues[0]!.message
      }\nDrop specDigest from the plan file to bind the plan to the current spec, or regenerate the plan against the current spec.`
    )
  })

  it("lists the plan's other problems beside a stale spec", () => {
    const error = refused(decodePlan(`specDigest: ${otherDigest}\n${planSteps.replace("acRefs: [AC-001]", "acRefs: [AC-009]")}`))
    expect(error.reason).toBe("stale_spec")
    expect(error.issues.map((issue) => issue.path)).toEqual(["/specDigest", "/steps/0/acRefs/0", "/steps"])
  })

  it("refuses a specDigest that is not a digest", () => {
    const error = refused(decodePlan(`specDigest: sha256:abc\n${planSteps}`))
    expect(error).toMatchObject({ reason: "schema" })
    expect(error.issues).toEqual([
      { path: "/specDigest", message: "expected a digest: \"sha256:\" followed by 64 lowercase hexadecimal characters, got \"sha256:abc\"" }
    ])
  })

  it.each([
    [
      "an unknown criterion",
      planSteps.replace("acRefs: [AC-002]", "acRefs: [AC-002, AC-404]"),
      "/steps/1/acRefs/1",
      "step \"document\" refers to \"AC-404\", which is not an acceptance criterion of the spec (it has \"AC-001\", \"AC-002\")"
    ],
    [
      "an undeclared state",
      planSteps.replace("state: drafted", "state: shipped"),
      "/steps/1/state",
      "step \"document\" has unknown state \"shipped\"; the plan's stepStates are \"drafted\", \"reviewed\""
    ],
    [
      "a need on an unknown step",
      planSteps.replace("needs: [add-flag]", "needs: [add-flags]"),
      "/steps/1/needs/0",
      "step \"document\" needs \"add-flags\", which is not a step of this plan"
    ],
    ["an unknown field", `owner: bob\n${planSteps}`, "/owner", "is unexpected"]
  ])("refuses %s with the kernel's path", (_label, text, issuePath, message) => {
    const error = refused(decodePlan(text))
    expect(error).toMatchObject({ kind: "plan", reason: "schema" })
    expect(error.issues).toHaveLength(1)
    expect(error.issues[0]?.path).toBe(issuePath)
    expect(error.issues[0]?.message).toContain(message)
  })

  it.each(["approved: true", "status: approved", "approvedBy: alice", "approval: {by: alice}"])(
    "refuses approval written into a plan (%s)",
    (line) => {
      const error = refused(decodePlan(`${line}\n${planSteps}`))
      expect(error).toMatchObject({ kind: "plan", reason: "approval_in_file" })
      expect(error.issues[0]?.message).toBe(
        "approval is never taken from a file; remove this key and run `ratchet approve <task> plan` on an interactive terminal"
      )
      expect(error.message).toContain("run `ratchet approve <task> plan` on an interactive terminal")
    }
  )

  it("keeps a step's own state, which is not an approval", () => {
    expect(accepted(decodePlan(planSteps)).steps[1]?.state).toBe("drafted")
  })

  it("refuses a tag declared with %TAG", () => {
    const error = refused(decodePlan(`%TAG !e! tag:example.com,2000:\n---\nowner: !e!thing x\n${planSteps}`))
    expect(error.reason).toBe("syntax")
    expect(error.issues).toEqual([
      { path: "/owner", message: "line 3, column 8: the tag tag:example.com,2000:thing is not allowed; a contract file is plain data, so remove the tag" }
    ])
  })

  it.each([
    ["two documents", `${planSteps}---\nsteps: []\n`, "line 15, column 1: a second YAML document starts here; the file must hold exactly one"],
    ["a duplicate key", `${planSteps}steps: []\n`, "line 15, column 1: duplicate key \"steps\"; a key may appear only once in a mapping, keep one"]
  ])("refuses %s", (_label, text, message) => {
    const error = refused(decodePlan(text))
    expect(error).toMatchObject({ kind: "plan", reason: "syntax" })
    expect(error.issues.map((issue) => issue.message)).toContain(message)
  })

  it.each([
    ["a sequence", "- id: a\n", "a sequence"],
    ["an empty file", "", "nothing"],
    ["a number", "42\n", "a number"]
  ])("refuses a plan that is %s", (_label, text, found) => {
    expect(refused(decodePlan(text))).toMatchObject({
      reason: "schema",
      issues: [{ path: "", message: `expected a YAML mapping of the plan's fields, found ${found}` }]
    })
  })
})

// ---------------------------------------------------------------------------------------------
// Digest
// ---------------------------------------------------------------------------------------------

const sha256 = (text: string): string => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`

describe("ContractFile.digestOf", () => {
  it("digests a .md file as a spec: the semantic fields only", () => {
    expect(accepted(ContractFile.digestOf("docs/spec.md", utf8(specText)))).toEqual({ kind: "spec", digest: specDigest })
    expect(accepted(ContractFile.digestOf("SPEC.MD", utf8(specText)))).toEqual({ kind: "spec", digest: specDigest })
  })

  it("digests a .yaml or .yml plan: bound to the spec given, or to the specDigest it carries", () => {
    const planDigest = Plan.digest(Either.getOrThrow(Plan.decode(planValue(specDigest), spec)))
    expect(accepted(ContractFile.digestOf("plan.yaml", utf8(planSteps), { spec }))).toEqual({ kind: "plan", digest: planDigest })
    expect(accepted(ContractFile.digestOf("plan.yml", utf8(`specDigest: ${specDigest}\n${planSteps}`))))
      .toEqual({ kind: "plan", digest: planDigest })
    // Titles are editorial.
    expect(accepted(ContractFile.digestOf("plan.yml", utf8(`specDigest: ${specDigest}\n${planSteps.replace("Add the flag", "Add it")}`))))
      .toEqual({ kind: "plan", digest: planDigest })
    // Without a spec the plan is checked against the schema only, so a foreign spec's digest is taken as written.
    const foreign = accepted(ContractFile.digestOf("plan.yml", utf8(`specDigest: ${otherDigest}\n${planSteps}`)))
    expect(foreign.digest).not.toBe(planDigest)
    expect(refused(ContractFile.digestOf("plan.yml", utf8(`specDigest: ${otherDigest}\n${planSteps}`), { spec })).reason)
      .toBe("stale_spec")
  })

  it("refuses a plan with neither a specDigest nor a spec", () => {
    const error = refused(ContractFile.digestOf("plan.yaml", utf8(planSteps)))
    expect(error).toMatchObject({ kind: "plan", reason: "schema" })
    expect(error.issues).toEqual([
      {
        path: "/specDigest",
        message: "is missing, and no spec was given; a plan's digest covers the spec it was written for, so add specDigest or name the spec"
      }
    ])
  })

  it("refuses an unknown field in a plan digested without a spec", () => {
    const error = refused(ContractFile.digestOf("plan.yaml", utf8(`specDigest: ${specDigest}\nowner: bob\n${planSteps}`)))
    expect(error.reason).toBe("schema")
    expect(error.issues.map((issue) => issue.path)).toEqual(["/owner"])
  })

  it("digests a .json file as the canonical form of its value, whatever its layout", () => {
    const expected = sha256("{\"a\":[1,2,\"é\"],\"b\":{\"c\":null,\"d\":true}}")
    const pretty = "{\n  \"b\": { \"d\": true, \"c\": null },\n  \"a\": [1, 2.0, \"\\u00e9\"]\n}\n"
    expect(accepted(ContractFile.digestOf("x.json", utf8(pretty)))).toEqual({ kind: "json", digest: expected })
    expect(accepted(ContractFile.digestOf("x.json", utf8("\"hi\"")))).toEqual({ kind: "json", digest: sha256("\"hi\"") })
  })

  it.each([
    ["a missing value", "{\"a\": [1, 2,, 3]}", "line 1, column 13: expected a JSON value"],
    ["a missing comma", "{\n  \"a\": 1\n  \"b\": 2\n}", "line 3, column 3: expected \",\" or \"}\""],
    ["a truncated document", "{\"a\": [1", "line 1, column 9: the text ends before the JSON value does"],
    ["text after the value", "{} x", "line 1, column 4: more text after the JSON value"],
    ["a single-quoted key", "{'a': 1}", "line 1, column 2: expected a property name in double quotes"],
    ["a trailing comma", "[1, 2,]", "line 1, column 7: expected a JSON value"],
    ["a raw line break in a string", "[\"a\nb\"]", "line 1, column 4: a control character inside a string (escape it)"],
    ["a bad escape", "[\"\\x41\"]", "line 1, column 3: an invalid escape sequence"],
    ["an empty file", "", "line 1, column 1: the text ends before the JSON value does"],
    ["a leading zero", "[01]", "line 1, column 3: expected \",\" or \"]\""],
    ["NaN", "[NaN]", "line 1, column 2: expected a JSON value"]
  ])("refuses malformed JSON (%s) with its position", (_label, text, message) => {
    const error = refused(ContractFile.digestOf("x.json", utf8(text)))
    expect(error).toMatchObject({ kind: "json", reason: "syntax", issues: [{ path: "", message }] })
    expect(error.message).toContain("Fix the JSON where shown")
  })

  it("refuses JSON deeper than a digest takes, and a lone surrogate", () => {
    const deep = refused(ContractFile.digestOf("x.json", utf8(`${"[".repeat(100_000)}${"]".repeat(100_000)}`)))
    expect(deep).toMatchObject({ kind: "json", reason: "schema" })
    expect(deep.issues[0]?.message).toBe("too deep: more than 1000 nested arrays or objects")
    const surrogate = refused(ContractFile.digestOf("x.json", utf8("{\"k\": \"\\ud800\"}")))
    expect(surrogate).toMatchObject({ reason: "schema", issues: [{ path: "/k", message: "the string contains a lone surrogate, which has no UTF-8 encoding" }] })
  })

  it.each([
    ["notes.txt", "\".txt\""],
    ["Makefile", "(none)"],
    ["spec.markdown", "\".markdown\""]
  ])("refuses %s, listing the accepted extensions", (file, shown) => {
    const error = refused(ContractFile.digestOf(file, utf8("{}")))
    expect(error).toMatchObject({ file, kind: "file", reason: "unsupported" })
    expect(error.issues).toEqual([
      { path: "", message: `the extension ${shown} is not one ratchet digests; accepted: .md, .yaml, .yml, .json` }
    ])
    expect(error.message).toContain("Give a spec (.md), a plan (.yaml or .yml) or a JSON document (.json).")
  })
})

// ---------------------------------------------------------------------------------------------
// Truncated, oversized, hostile
// ---------------------------------------------------------------------------------------------

/** Every outcome must be a value or a typed refusal; a throw fails the property. */
const typed = (result: Either.Either<unknown, ContractFile.ContractFileError>): boolean =>
  Either.isRight(result) ||
  (result.left instanceof ContractFile.ContractFileError && reasons.includes(result.left.reason) &&
    typeof result.left.message === "string")

const files: ReadonlyArray<readonly [string, Uint8Array]> = [
  ["spec.md", utf8(specText)],
  ["plan.yaml", utf8(`specDigest: ${specDigest}\n${planSteps}`)],
  ["x.json", utf8(JSON.stringify(planValue(specDigest), null, 2))]
]

describe("truncated input", () => {
  it.each(files)("%s cut at every byte offset decodes or is refused, never throws", (file, bytes) => {
    for (let end = 0; end <= bytes.length; end++) {
      const cut = bytes.subarray(0, end)
      expect(typed(ContractFile.digestOf(file, cut))).toBe(true)
      if (file === "spec.md") expect(typed(ContractFile.decodeSpec(file, cut))).toBe(true)
      if (file === "plan.yaml") expect(typed(ContractFile.decodePlan(file, cut, spec))).toBe(true)
    }
  })

  it("a spec cut inside a multi-byte character is refused as not UTF-8 at that character", () => {
    const bytes = utf8(specText)
    const arrow = bytes.indexOf(0xe2) // the first byte of "→"
    const error = refused(ContractFile.decodeSpec("spec.md", bytes.subarray(0, arrow + 2)))
    expect(error.issues).toEqual([
      { path: "", message: `invalid UTF-8 at byte offset ${arrow}: a multi-byte sequence cut short by the end of the file` }
    ])
  })

  it("property: any cut, and any byte overwritten, gives a value or a typed refusal", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...files),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.boolean(),
        ([file, bytes], cutAt, at, byte, overwrite) => {
          const cut = bytes.slice(0, cutAt % (bytes.length + 1))
          if (overwrite && cut.length > 0) cut[at % cut.length] = byte
          return typed(ContractFile.digestOf(file, cut)) && typed(ContractFile.decodePlan(file, cut, spec)) &&
            typed(ContractFile.decodeSpec(file, cut))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("property: arbitrary bytes and arbitrary YAML-ish text never throw", () => {
    const yamlish = fc.stringOf(
      fc.constantFrom("-", "-", ":", " ", " ", "\n", "\n", "&a", "*a", "!", "!!", "[", "]", "{", "}", "\"", "'", "#", "|", ">", "?", ",", "a", "b", "1", "\t", "---", "...", "%", "@", "`", "__proto__")
    )
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 200 }), yamlish.map((text) => utf8(text))), (bytes) => {
        const asSpec = utf8(`---\n${new TextDecoder().decode(bytes)}\n---\n`)
        return typed(ContractFile.decodeSpec("spec.md", bytes)) && typed(ContractFile.decodeSpec("spec.md", asSpec)) &&
          typed(ContractFile.decodePlan("plan.yaml", bytes, spec)) && typed(ContractFile.digestOf("plan.yaml", bytes)) &&
          typed(ContractFile.digestOf("x.json", bytes))
      }),
      { numRuns: 300 }
    )
  })
})

describe("hostile input", () => {
  it("refuses a billion-laughs alias bomb quickly", () => {
    const started = Date.now()
    for (const [file, text] of [["plan.yaml", aliasBomb], ["spec.md", `---\n${aliasBomb}---\n`]] as const) {
      const error = refused(ContractFile.digestOf(file, utf8(text)))
      expect(error.reason).toBe("syntax")
      expect(error.issues).toEqual([
        { path: "", message: "aliases expand past the limit of 100 nodes (an alias bomb); write the values out instead" }
      ])
    }
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("accepts a few honest aliases", () => {
    const frontMatter = `goal: &goal Add a --json flag to the status command\nconstraints: [*goal]\n${
      specFrontMatter.replace(/^goal:.*\n/, "")
    }`
    expect(accepted(decodeSpec(withSpec(frontMatter))).semantic.constraints).toEqual(["Add a --json flag to the status command"])
  })

  it("refuses an alias that makes a value contain itself", () => {
    const error = refused(ContractFile.decodePlan("plan.yaml", utf8(`specDigest: &loop [*loop]\n${planSteps}`), spec))
    expect(error).toMatchObject({ reason: "syntax" })
    expect(error.issues).toEqual([
      {
        path: "/specDigest/0",
        message: "an alias here refers to a value that contains it (a cycle); a contract file is a tree, so write the value out"
      }
    ])
    const id = refused(decodeSpec(withSpec(specFrontMatter.replace("id: AC-001", "id: &me [*me]"))))
    expect(id.issues[0]?.path).toBe("/acceptanceCriteria/0/id/0")
  })

  it("an unresolved alias is a typed refusal", () => {
    const error = refused(decodePlan(`specDigest: *nowhere\n${planSteps}`))
    expect(error.reason).toBe("syntax")
    expect(error.issues[0]?.message).toContain("nowhere")
  })

  it("keeps __proto__, constructor and prototype keys as data: Object.prototype is never touched", () => {
    const hostile = [
      "__proto__: { polluted: yes }",
      "constructor: { prototype: { polluted: yes } }",
      "prototype: { polluted: yes }",
      ""
    ].join("\n")
    const specError = refused(decodeSpec(withSpec(`${hostile}${specFrontMatter}`)))
    expect(specError.reason).toBe("schema")
    expect(specError.issues.map((issue) => issue.path).sort()).toEqual(["/__proto__", "/constructor", "/prototype"])
    const nested = refused(decodeSpec(withSpec(specFrontMatter.replace("  - id: AC-001\n", "  - id: AC-001\n    __proto__: { polluted: yes }\n"))))
    expect(nested.issues.map((issue) => issue.path)).toEqual(["/acceptanceCriteria/0/__proto__"])
    const planError = refused(decodePlan(`${hostile}${planSteps}`))
    expect(planError.issues.map((issue) => issue.path).sort()).toEqual(["/__proto__", "/constructor", "/prototype"])
    const json = accepted(ContractFile.digestOf("x.json", utf8("{\"__proto__\": {\"polluted\": true}, \"constructor\": {\"prototype\": {\"polluted\": true}}}")))
    expect(json.digest).toBe(sha256("{\"__proto__\":{\"polluted\":true},\"constructor\":{\"prototype\":{\"polluted\":true}}}"))
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    expect(Object.prototype).not.toHaveProperty("polluted")
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted")
  })

  it("refuses YAML nested deeper than a contract needs", () => {
    const deepFlow = `specDigest: ${specDigest}\nsteps: ${"[".repeat(100)}${"]".repeat(100)}\n`
    const flow = refused(decodePlan(deepFlow))
    expect(flow.reason).toBe("syntax")
    expect(flow.issues[0]?.message).toBe("nested too deeply (more than 64 levels); a contract file needs a few")
    expect(flow.issues[0]?.path).toBe(`/steps${"/0".repeat(30)}`)
    const block = Array.from({ length: 100 }, (_, depth) => `${"  ".repeat(depth)}k:`).join("\n")
    expect(refused(decodePlan(`${block}\n`)).issues[0]?.message).toMatch(/^nested too deeply/)
  })

  it("refuses nesting deep enough to exhaust the parser's stack, reporting it once", () => {
    const error = refused(ContractFile.digestOf("plan.yaml", utf8(`steps: ${"[".repeat(50_000)}${"]".repeat(50_000)}\n`)))
    expect(error.reason).toBe("syntax")
    expect(error.issues).toHaveLength(1)
    expect(error.issues[0]?.message).toMatch(/nested too deeply/)
  })

  it("refuses NUL bytes and invalid UTF-8 inside an otherwise valid spec", () => {
    const bytes = utf8(specText)
    const nul = bytes.slice()
    nul[10] = 0
    expect(refused(ContractFile.decodeSpec("spec.md", nul)).issues).toEqual([{ path: "", message: "NUL byte at byte offset 10" }])
    const surrogate = new Uint8Array([...bytes.subarray(0, 20), 0xed, 0xbf, 0xbf, ...bytes.subarray(20)])
    expect(refused(ContractFile.decodeSpec("spec.md", surrogate)).issues).toEqual([
      { path: "", message: "invalid UTF-8 at byte offset 20: a UTF-16 surrogate encoded as UTF-8 (bytes 0xED 0xBF)" }
    ])
  })

  it("refuses 1 MiB + 1 byte of otherwise valid spec without parsing it", () => {
    const padded = utf8(`${specText}${"x".repeat(1024 * 1024 + 1 - utf8(specText).length)}`)
    expect(padded.length).toBe(1024 * 1024 + 1)
    expect(refused(ContractFile.decodeSpec("spec.md", padded))).toMatchObject({ kind: "file", reason: "too_large" })
    const exact = padded.subarray(0, 1024 * 1024)
    expect(accepted(ContractFile.decodeSpec("spec.md", exact)).body.length).toBe(1024 * 1024 - utf8(specText).length + specBody.length)
  })

  it("caps a flood of YAML errors", () => {
    const flood = Array.from({ length: 200 }, () => "a: 1").join("\n")
    const error = refused(decodePlan(flood))
    expect(error.issues).toHaveLength(21)
    expect(error.issues[20]).toEqual({ path: "", message: "179 more YAML problems not shown; fix the ones above first" })
  })
})
