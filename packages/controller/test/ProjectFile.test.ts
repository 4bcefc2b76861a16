/**
 * `.ratchet/project.json` decoding: accepted and rejected files, written by hand, each rejection
 * naming the field; malformed, truncated, oversized and hostile bytes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ProjectFile from "../src/ProjectFile.js"

const valid = {
  schemaVersion: 1,
  projectId: "prj-7f1c0e2a-4b8d-4c1e-9a55-0d1b2c3d4e5f",
  displayName: "ratchet",
  createdAt: "2026-12-02T10:00:00.000Z"
}

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value))
const decode = (value: unknown) => ProjectFile.decode("/repo/.ratchet/project.json", value instanceof Uint8Array ? value : bytes(value))

describe("ProjectFile.decode", () => {
  it.each([
    ["the brief's four fields", valid],
    ["a lease block", { ...valid, lease: { heartbeatMs: 2_000, graceMs: 9_000 } }],
    ["a partial lease block", { ...valid, lease: { graceMs: 60_000 } }],
    ["a time without milliseconds", { ...valid, createdAt: "2026-12-02T10:00:00Z" }]
  ])("accepts %s", (_label, input) => {
    const result = decode(input)
    expect(Either.isRight(result) && result.right).toEqual(input)
  })

  it.each([
    ["an unknown key", { ...valid, approval: "yes" }, "approval", "is not a field of the project file"],
    ["a missing project id", { ...valid, projectId: undefined }, "projectId", "is missing"],
    ["a project id with a slash", { ...valid, projectId: "../etc" }, "projectId", "expected 1 to 128 characters"],
    ["a project id of 129 characters", { ...valid, projectId: "p".repeat(129) }, "projectId", "expected 1 to 128"],
    ["an empty display name", { ...valid, displayName: "" }, "displayName", "expected a name of 1 to 200"],
    ["a number for the name", { ...valid, displayName: 42 }, "displayName", "Expected string"],
    ["a local time", { ...valid, createdAt: "2026-12-02 10:00" }, "createdAt", "ISO-8601"],
    ["schema version 0", { ...valid, schemaVersion: 0 }, "schemaVersion", "Expected 1"],
    ["a lease grace of zero", { ...valid, lease: { graceMs: 0 } }, "lease.graceMs", ""],
    ["an unknown lease key", { ...valid, lease: { ttl: 5 } }, "lease.ttl", "is not a field"]
  ])("rejects %s, naming %s", (_label, input, field, reason) => {
    const result = decode(input)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isRight(result)) return
    expect(result.left).toMatchObject({ _tag: "@ratchet/controller/InvalidProjectFile", field })
    expect(result.left.message).toContain(reason)
    expect(result.left.message).toContain("/repo/.ratchet/project.json")
  })

  it.each([
    ["truncated JSON", bytes(JSON.stringify(valid).slice(0, 40)), "is not JSON"],
    ["an empty file", bytes(""), "is not JSON"],
    ["an array", bytes([valid]), "is not a JSON object"],
    ["null", bytes("null"), "is not a JSON object"],
    ["bytes that are not UTF-8", Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d]), "is not UTF-8 text"],
    ["a file over 64 KiB", bytes({ ...valid, displayName: "x".repeat(70_000) }), "more than the 65536"]
  ])("rejects %s as a whole", (_label, input, reason) => {
    const result = decode(input)
    expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "@ratchet/controller/InvalidProjectFile", field: "(file)" })
    expect(Either.isLeft(result) && result.left.message).toContain(reason)
  })

  it("refuses a file written by a newer Ratchet, saying so", () => {
    const result = decode({ ...valid, schemaVersion: 2, somethingNew: true })
    expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "@ratchet/controller/ProjectFileTooNew", schemaVersion: 2 })
    expect(Either.isLeft(result) && result.left.message).toContain("Upgrade Ratchet")
  })

  it("encodes in the brief's field order and decodes back to the same value", () => {
    const project = { ...valid, lease: { heartbeatMs: 1_000 } } as ProjectFile.ProjectFile
    const text = ProjectFile.encode(project)
    expect(text).toBe(
      `{\n  "schemaVersion": 1,\n  "projectId": "${valid.projectId}",\n  "displayName": "ratchet",\n  "createdAt": "2026-12-02T10:00:00.000Z",\n  "lease": {\n    "heartbeatMs": 1000\n  }\n}\n`
    )
    expect(decode(text)).toEqual(Either.right(project))
  })
})
