/**
 * Lesson files (ADR 0037): a table written by hand of files accepted (with what they decode to)
 * and refused (with the reason and the field each refusal names), including truncated, oversized
 * and hostile input — alias bombs, tags, a status, unknown keys, scope paths outside the
 * repository, hidden characters, NUL bytes — which must end in a typed error and never a throw;
 * and the readable copy, which decodes back to the same text.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Lesson from "@ratchet/kernel/Lesson"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { tempDirFactory } from "./tempDirs.js"
import * as LessonFile from "../src/LessonFile.js"

const tempDir = tempDirFactory("ratchet-lesson-file-")
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

const base = [
  "scope:",
  "  projectId: prj-1",
  "  paths: [\"src/**\"]",
  "trigger: Writing a date test",
  "actualRule: Freeze the clock"
]
const file = (...extra: ReadonlyArray<string>): Uint8Array => utf8([...base, ...extra, ""].join("\n"))

describe("LessonFile.decode", () => {
  const accepted: ReadonlyArray<readonly [string, Uint8Array, Partial<Lesson.Body>]> = [
    ["the three required fields", file(), { trigger: "Writing a date test", wrongAssumption: null, guard: null, fingerprints: [] }],
    ["every field", file(
      "wrongAssumption: The machine is in UTC",
      "rootCause: CI runners are in UTC",
      "guard:",
      "  description: The date test under TZ=Asia/Seoul",
      "  command: TZ=Asia/Seoul npm test",
      "fingerprints: [\"fp:exit:1:0123456789abcdef\"]",
      "evidenceRefs: [\"sha256:abc\"]"
    ), { wrongAssumption: "The machine is in UTC", guard: { description: "The date test under TZ=Asia/Seoul", command: "TZ=Asia/Seoul npm test" } }],
    ["a byte-order mark and CRLF line ends", utf8(`\uFEFF${[...base, ""].join("\r\n")}`), { actualRule: "Freeze the clock" }],
    ["no paths: every path", utf8("scope:\n  projectId: prj-1\ntrigger: t\nactualRule: r\n"), { scope: { projectId: "prj-1", paths: [], taskTypes: [] } }]
  ]
  for (const [name, bytes, expected] of accepted) {
    it(`accepts ${name}`, () => {
      const decoded = LessonFile.decode("lesson.yaml", bytes)
      expect(Either.isRight(decoded), JSON.stringify(decoded)).toBe(true)
      if (Either.isRight(decoded)) expect(decoded.right).toMatchObject(expected)
    })
  }

  const refused: ReadonlyArray<readonly [string, Uint8Array, string, string]> = [
    ["an empty file", utf8(""), "schema", "is not a mapping"],
    ["a list", utf8("- a\n- b\n"), "schema", "is not a mapping"],
    ["a truncated file", utf8("scope:\n  projectId: prj-1\ntrigger: [\n"), "syntax", "line"],
    ["over 64 KiB", file(`rootCause: ${"x".repeat(LessonFile.maxBytes)}`), "too_large", "65536"],
    ["a status", file("status: verified"), "schema", "/status"],
    ["an unknown key", file("approvedBy: me"), "schema", "/approvedBy"],
    ["a missing actualRule", utf8("scope:\n  projectId: prj-1\ntrigger: t\n"), "schema", "/actualRule"],
    ["a path with ..", utf8("scope:\n  projectId: p\n  paths: [\"../x/**\"]\ntrigger: t\nactualRule: r\n"), "schema", "/scope/paths/0"],
    ["an absolute path", utf8("scope:\n  projectId: p\n  paths: [\"/etc/**\"]\ntrigger: t\nactualRule: r\n"), "schema", "/scope/paths/0"],
    ["a backslash path", utf8("scope:\n  projectId: p\n  paths: [\"src\\\\x\"]\ntrigger: t\nactualRule: r\n"), "schema", "/scope/paths/0"],
    ["a summary over 400 characters", file(`wrongAssumption: ${"y".repeat(401)}`), "schema", "/wrongAssumption"],
    ["a bidirectional override", file("wrongAssumption: \"a \\u202e b\""), "schema", "/wrongAssumption"],
    ["a bad fingerprint", file("fingerprints: [\"not a fingerprint\"]"), "schema", "/fingerprints/0"],
    ["a tag", file("rootCause: !!js/function 'x'"), "syntax", "rootCause"],
    ["a duplicate key", file("trigger: again"), "syntax", "trigger"],
    ["an alias bomb", utf8("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"), "syntax", "alias"],
    ["a NUL byte", Uint8Array.from([0x61, 0x3a, 0x20, 0x00, 0x0a]), "not_utf8", "NUL"],
    ["invalid UTF-8", Uint8Array.from([0x61, 0x3a, 0x20, 0xc3, 0x28, 0x0a]), "not_utf8", "byte"],
    ["two documents", utf8([...base, "---", ...base, ""].join("\n")), "syntax", "document"]
  ]
  for (const [name, bytes, reason, names] of refused) {
    it(`refuses ${name} (${reason})`, () => {
      const decoded = LessonFile.decode("lesson.yaml", bytes)
      if (Either.isRight(decoded)) throw new Error(`expected a refusal, got ${JSON.stringify(decoded.right)}`)
      expect(decoded.left.reason).toBe(reason)
      // Bytes that are not text are the file's fault, whatever it holds.
      expect(decoded.left.kind).toBe(reason === "not_utf8" ? "file" : "lesson")
      expect(decoded.left.message).toContain(names)
      expect(decoded.left.message).toContain("lesson.yaml")
    })
  }
})

describe("LessonFile readable copies", () => {
  const body = Either.getOrThrow(Lesson.decodeBody({
    scope: { projectId: "prj-1", paths: ["src/**"] },
    trigger: "Writing a date test",
    wrongAssumption: "The machine is in UTC: \"always\"",
    actualRule: "Freeze the clock",
    guard: { description: "TZ=Asia/Seoul npm test fails before the fix" },
    fingerprints: ["fp:exit:1:0123456789abcdef"]
  }))

  it("the text written is the text read back", () => {
    const decoded = LessonFile.decode("copy.yaml", utf8(LessonFile.bodyYaml(body)))
    expect(decoded).toEqual(Either.right(body))
  })

  it.effect("writes .ratchet/lessons/<id>.yaml with its status, and it decodes back", () =>
    Effect.gen(function*() {
      const root = tempDir()
      const view = { id: "tz-tests", status: "verified", revision: 2, body } as unknown as Parameters<typeof LessonFile.render>[0]
      expect(yield* LessonFile.write(root, view)).toBeNull()
      const target = path.join(root, ".ratchet", "lessons", "tz-tests.yaml")
      expect(LessonFile.pathOf(root, "tz-tests")).toBe(target)
      const text = fs.readFileSync(target, "utf8")
      expect(text.startsWith("# Lesson tz-tests: verified, revision 2.")).toBe(true)
      expect(yield* LessonFile.load(target)).toEqual(body)
    }))

  it.effect("a copy that cannot be written is a warning, not a failure", () =>
    Effect.gen(function*() {
      const root = tempDir()
      fs.writeFileSync(path.join(root, ".ratchet"), "a file where the directory should be")
      const view = { id: "tz-tests", status: "verified", revision: 1, body } as unknown as Parameters<typeof LessonFile.render>[0]
      expect(yield* LessonFile.write(root, view)).toContain("was not written")
    }))
})
