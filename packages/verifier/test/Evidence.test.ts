/**
 * Evidence records as blobs: each kind stored and loaded back unchanged; blobs that are not an
 * evidence record (not UTF-8, not JSON, the wrong shape, truncated, megabytes of garbage) refused
 * as EvidenceInvalid with a message that says to verify again; the bodies a record refers to.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Evidence from "../src/Evidence.js"
import { alice, HELLO_SHA, memoryBlobs, OOPS_SHA, SPEC_DIGEST, TREE, verifier1 } from "./fixtures.js"

const common = { acId: "AC-002", specDigest: SPEC_DIGEST, snapshotLsn: 580, verifier: verifier1, at: 1_764_000_000_000 }

const command: Evidence.Evidence = {
  _tag: "command",
  ...common,
  command: "npm test -- --reporter=junit",
  expectExitCode: 0,
  tree: TREE,
  startedAt: 1_763_999_999_000,
  exitCode: 1,
  signal: null,
  timedOut: false,
  durationMs: 1_000,
  stdoutRef: `sha256:${HELLO_SHA}`,
  stderrRef: `sha256:${OOPS_SHA}`,
  outputTail: "1 failed, 11 passed",
  notStarted: null
}

const notStarted: Evidence.Evidence = {
  ...command,
  tree: { head: null, dirtyDigest: SPEC_DIGEST },
  exitCode: null,
  durationMs: 0,
  stdoutRef: null,
  stderrRef: null,
  outputTail: "",
  notStarted: "spawn sh ENOENT"
}

const junit: Evidence.Evidence = {
  _tag: "junit",
  ...common,
  report: "reports/junit.xml",
  reportRef: `sha256:${HELLO_SHA}`,
  counts: { passed: 1, failed: 1, errored: 1, skipped: 1 },
  cases: [
    { suite: "status", name: "prints json", status: "passed", message: null },
    { suite: "status", name: "prints one document", status: "failed", message: "expected 1 document, got 2" },
    { suite: "status", name: "handles ümlauts ✓", status: "errored", message: "TypeError: x is undefined" },
    { suite: "status", name: "yaml", status: "skipped", message: null }
  ],
  problem: null
}

const junitMissing: Evidence.Evidence = {
  _tag: "junit",
  ...common,
  report: "reports/junit.xml",
  reportRef: null,
  counts: { passed: 0, failed: 0, errored: 0, skipped: 0 },
  cases: [],
  problem: "cannot be used: it does not exist; make the command write it there"
}

const artifact: Evidence.Evidence = {
  _tag: "artifact",
  ...common,
  artifacts: [
    { path: "dist/hello.txt", sha256: HELLO_SHA, expected: HELLO_SHA, size: 6, problem: null },
    { path: "dist/missing.txt", sha256: null, expected: null, size: null, problem: "it does not exist" }
  ]
}

const manual: Evidence.Evidence = {
  _tag: "manual",
  ...common,
  verifier: alice,
  procedure: "Read docs/guide.md and find --json",
  observer: "tech writer",
  result: "fail",
  note: "the flag is listed but not explained",
  channel: "terminal"
}

const bytes = (text: string) => new TextEncoder().encode(text)

describe("Evidence.store and Evidence.load", () => {
  it.effect.each([
    ["command", command],
    ["command that never started", notStarted],
    ["junit", junit],
    ["junit with a problem", junitMissing],
    ["artifact", artifact],
    ["manual", manual]
  ] as const)("round-trips %s evidence", ([_label, evidence]) =>
    Effect.gen(function*() {
      const blobs = memoryBlobs()
      const ref = yield* Evidence.store(blobs, evidence)
      expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(blobs.puts).toEqual([ref])
      expect(yield* Evidence.load(blobs, ref)).toStrictEqual(evidence)
      // Content-addressed: the same record is the same ref.
      expect(yield* Evidence.store(blobs, evidence)).toBe(ref)
    }))

  it.effect("gives different records different refs", () =>
    Effect.gen(function*() {
      const blobs = memoryBlobs()
      const refs = new Set<string>()
      for (const evidence of [command, notStarted, junit, junitMissing, artifact, manual]) refs.add(yield* Evidence.store(blobs, evidence))
      expect(refs.size).toBe(6)
    }))

  it.effect("a ref that is not in the store is BlobNotFound, not EvidenceInvalid", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Evidence.load(memoryBlobs(), `sha256:${"0".repeat(64)}`))
      expect(error._tag).toBe("@ratchet/storage/BlobNotFound")
    }))

  it.effect("a ref that is not a ref is InvalidBlobRef", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Evidence.load(memoryBlobs(), "../../etc/passwd"))
      expect(error._tag).toBe("@ratchet/storage/InvalidBlobRef")
    }))

  const encoded = JSON.stringify(command)

  const notJson = "it is not an evidence record (not JSON: "
  const notObject = "it is not an evidence record (not a JSON object of a known evidence kind)"
  // [what, the blob, the reason (exact, or its start when the JSON parser words the rest)]
  const malformed: ReadonlyArray<readonly [string, Uint8Array, string]> = [
    ["not UTF-8", Uint8Array.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), "it is not UTF-8 text"],
    ["a lone continuation byte", Uint8Array.from([0x80]), "it is not UTF-8 text"],
    ["not JSON", bytes("this is not json"), notJson],
    ["empty", bytes(""), notJson],
    ["JSON null", bytes("null"), notObject],
    ["a JSON array", bytes("[1,2,3]"), "it is not an evidence record (_tag: is missing)"],
    ["a JSON number", bytes("42"), notObject],
    ["an unknown kind", bytes(JSON.stringify({ ...manual, _tag: "narrative" })),
      "it is not an evidence record (_tag: Expected \"command\" | \"junit\" | \"artifact\" | \"manual\", actual \"narrative\")"],
    ["a kind without its fields", bytes(JSON.stringify({ _tag: "command", acId: "AC-001" })), "it is not an evidence record (specDigest: is missing)"],
    ["a fractional LSN", bytes(JSON.stringify({ ...command, snapshotLsn: 1.5 })), "it is not an evidence record (snapshotLsn: Expected an integer, actual 1.5)"],
    ["a manual result that is no result", bytes(JSON.stringify({ ...manual, result: "maybe" })), "it is not an evidence record (result: "],
    ["an exit code as text", bytes(JSON.stringify({ ...command, exitCode: "1" })), "it is not an evidence record (exitCode: "],
    ["a truncated record", bytes(encoded.slice(0, Math.floor(encoded.length / 2))), notJson],
    ["2 MiB of invalid UTF-8", new Uint8Array(2 * 1024 * 1024).fill(0xff), "it is not UTF-8 text"],
    ["2 MiB of brackets", bytes("[".repeat(2 * 1024 * 1024)), notJson],
    ["a 2 MiB string", bytes(JSON.stringify("x".repeat(2 * 1024 * 1024))), notObject],
    ["a record with a 2 MiB wrong field", bytes(JSON.stringify({ ...command, exitCode: "7".repeat(2 * 1024 * 1024) })), "it is not an evidence record (exitCode: "]
  ]
  it.effect.each(malformed)("refuses %s as EvidenceInvalid, saying to verify again", ([_label, blob, reason]) =>
    Effect.gen(function*() {
      const blobs = memoryBlobs()
      const ref = yield* blobs.put(blob)
      const error = yield* Effect.flip(Evidence.load(blobs, ref))
      if (error._tag !== "@ratchet/verifier/EvidenceInvalid") throw new Error(`expected EvidenceInvalid, got ${error._tag}`)
      expect(error.ref).toBe(ref)
      if (reason.endsWith(")") || reason === "it is not UTF-8 text") expect(error.reason).toBe(reason)
      else expect(error.reason.startsWith(reason)).toBe(true)
      expect(error.message).toBe(`Evidence ${ref} cannot be read: ${error.reason}. Verify the criterion again to record fresh evidence.`)
      // One line, short enough to print, however large the blob.
      expect(error.message.includes("\n")).toBe(false)
      expect(error.message.length).toBeLessThan(400)
    }))
})

describe("Evidence.bodies", () => {
  it.each([
    ["command with both outputs", command, [{ label: "stdout", ref: `sha256:${HELLO_SHA}` }, { label: "stderr", ref: `sha256:${OOPS_SHA}` }]],
    ["command with stderr only", { ...command, stdoutRef: null }, [{ label: "stderr", ref: `sha256:${OOPS_SHA}` }]],
    ["command with stdout only", { ...command, stderrRef: null }, [{ label: "stdout", ref: `sha256:${HELLO_SHA}` }]],
    ["command that never started", notStarted, []],
    ["junit with its report", junit, [{ label: "reports/junit.xml", ref: `sha256:${HELLO_SHA}` }]],
    ["junit without a report", junitMissing, []],
    ["artifact", artifact, []],
    ["manual", manual, []]
  ] as const)("%s → %j", (_label, evidence, expected) => {
    expect(Evidence.bodies(evidence as Evidence.Evidence)).toEqual(expected)
  })
})
