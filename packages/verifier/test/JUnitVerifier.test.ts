/**
 * The JUnit-report verifier after a real run of the command verifier in a temporary workspace:
 * a passing report, failing cases listed, reports that are missing, stale (older than the
 * command's start), invalid, outside the workspace or not a file, and a command that never ran.
 * Report hashes were taken with sha256sum over the exact texts below.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Spec from "@ratchet/kernel/Spec"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as CommandVerifier from "../src/CommandVerifier.js"
import * as JUnitVerifier from "../src/JUnitVerifier.js"
import type * as Verifier from "../src/Verifier.js"
import { blobText, ctxFor, memoryBlobs, removeWorkspaces, SNAPSHOT, SPEC_DIGEST, verifier1, workspace } from "./fixtures.js"

afterEach(removeWorkspaces)

const passing = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="status">
    <testcase classname="status" name="prints json" time="0.01"/>
    <testcase classname="status" name="prints one document" time="0.02"/>
  </testsuite>
</testsuites>
`
const PASSING_SHA = "818440ad6e4a2f914465c3a12b5e8c4b4a3b800f41486cd91a2b66ee2dfec4f4"

const failing = `<testsuite name="status">
  <testcase name="prints json"/>
  <testcase name="prints one document"><failure message="expected 1 document, got 2">AssertionError</failure></testcase>
  <testcase name="reads the config"><error message="ENOENT: config.json"/></testcase>
  <testcase name="prints yaml"><skipped/></testcase>
</testsuite>
`
const FAILING_SHA = "c9d0a9c48cd200b6f822a7264f932da0b1cb626330d640ba3f1c681177b8ee21"

const invalid = `<testsuites><testsuite name="status"><testcase name="cut`
const INVALID_SHA = "6609d0160029e2c895f4b73a6932c4bc080bfaadc59462709bd566068fb3db0b"

const REPORT = "reports/junit.xml"

const criterion = (command: string, junit = REPORT): Spec.AcceptanceCriterion => ({
  id: "AC-002",
  outcome: "status --json prints one JSON document",
  required: true,
  verify: { command, junit }
})

/** Runs the command verifier, then the JUnit verifier after it, as a verification pass does. */
const verifyBoth = (root: string, command: string, junit = REPORT) =>
  Effect.gen(function*() {
    const blobs = memoryBlobs()
    const ctx = ctxFor({ root, blobs })
    const ran = yield* CommandVerifier.verifier.verify(criterion(command, junit), ctx, [])
    const judged = yield* JUnitVerifier.verifier.verify(criterion(command, junit), ctx, [ran])
    return { blobs, ran, judged }
  })

/** A workspace holding `source.xml`, which the command copies to the report (so the report is new). */
const withSource = (text: string): string => {
  const root = workspace()
  fs.writeFileSync(path.join(root, "source.xml"), text)
  return root
}

const copy = `mkdir -p reports && cp source.xml ${REPORT}`

const base = { _tag: "junit", acId: "AC-002", specDigest: SPEC_DIGEST, snapshotLsn: SNAPSHOT, verifier: verifier1, report: REPORT }
const noCounts = { passed: 0, failed: 0, errored: 0, skipped: 0 }

const unusable = (judgement: Verifier.Judgement, verdict: string, problem: string, reportRef: string | null = null) => {
  expect(judgement.verifier).toBe("junit")
  expect(judgement.verdict).toBe(verdict)
  expect(judgement.reason).toBe(`the JUnit report ${REPORT} ${problem}.`)
  expect(judgement.evidence).toHaveLength(1)
  expect(judgement.evidence[0]).toMatchObject({ ...base, reportRef, counts: noCounts, cases: [], problem })
}

describe("JUnitVerifier", () => {
  it.effect("PASS: every case in the report passed; the cases and the report blob are the evidence", () =>
    Effect.gen(function*() {
      const { blobs, ran, judged } = yield* verifyBoth(withSource(passing), copy)
      expect(ran.verdict).toBe("PASS")
      expect(judged.verdict).toBe("PASS")
      expect(judged.reason).toBe("2 test cases passed.")
      expect(judged.evidence).toHaveLength(1)
      expect(judged.evidence[0]).toMatchObject({
        ...base,
        reportRef: `sha256:${PASSING_SHA}`,
        counts: { passed: 2, failed: 0, errored: 0, skipped: 0 },
        cases: [
          { suite: "status", name: "prints json", status: "passed", message: null },
          { suite: "status", name: "prints one document", status: "passed", message: null }
        ],
        problem: null
      })
      expect(blobText(blobs, `sha256:${PASSING_SHA}`)).toBe(passing)
    }))

  it.effect("FAIL: the failed and errored cases are named, with every case's status and message", () =>
    Effect.gen(function*() {
      const { ran, judged } = yield* verifyBoth(withSource(failing), `${copy}; exit 1`)
      expect(ran.verdict).toBe("FAIL")
      expect(judged.verdict).toBe("FAIL")
      expect(judged.reason).toBe("2 test cases failed: status › prints one document, status › reads the config.")
      expect(judged.evidence[0]).toMatchObject({
        ...base,
        reportRef: `sha256:${FAILING_SHA}`,
        counts: { passed: 1, failed: 1, errored: 1, skipped: 1 },
        cases: [
          { suite: "status", name: "prints json", status: "passed", message: null },
          { suite: "status", name: "prints one document", status: "failed", message: "expected 1 document, got 2" },
          { suite: "status", name: "reads the config", status: "errored", message: "ENOENT: config.json" },
          { suite: "status", name: "prints yaml", status: "skipped", message: null }
        ],
        problem: null
      })
    }))

  it.effect("FAIL even when the command exited 0: the report decides what it shows", () =>
    Effect.gen(function*() {
      const { ran, judged } = yield* verifyBoth(withSource(failing), copy)
      expect(ran.verdict).toBe("PASS")
      expect(judged.verdict).toBe("FAIL")
    }))

  it.effect("names at most three failing cases", () =>
    Effect.gen(function*() {
      const cases = ["a", "b", "c", "d", "e"].map((name) => `<testcase name="${name}"><failure/></testcase>`).join("")
      const { judged } = yield* verifyBoth(withSource(`<testsuite name="s">${cases}</testsuite>`), copy)
      expect(judged.verdict).toBe("FAIL")
      expect(judged.reason).toBe("5 test cases failed: s › a, s › b, s › c, ….")
    }))

  it.effect("one passing case and a skipped one: PASS, saying what was skipped", () =>
    Effect.gen(function*() {
      const report = `<testsuite name="s"><testcase name="a"/><testcase name="b"><skipped message="later"/></testcase></testsuite>`
      const { judged } = yield* verifyBoth(withSource(report), copy)
      expect(judged.verdict).toBe("PASS")
      expect(judged.reason).toBe("1 test case passed, 1 skipped.")
    }))

  it.effect.each([
    ["only skipped cases", `<testsuite name="s"><testcase name="a"><skipped/></testcase></testsuite>`, { passed: 0, failed: 0, errored: 0, skipped: 1 }],
    ["no case at all", `<testsuites><testsuite name="s"/></testsuites>`, noCounts]
  ] as const)("INDETERMINATE for %s: nothing was shown to work", ([_label, report, counts]) =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(withSource(report), copy)
      expect(judged.verdict).toBe("INDETERMINATE")
      expect(judged.reason).toBe("the report has no test case that ran; make the command run the tests it reports.")
      expect(judged.evidence[0]).toMatchObject({ counts, problem: null })
    }))

  it.effect("INDETERMINATE when the command wrote no report", () =>
    Effect.gen(function*() {
      const { blobs, judged } = yield* verifyBoth(workspace(), "true")
      unusable(judged, "INDETERMINATE", "cannot be used: it does not exist; make the command write it there")
      expect(blobs.puts).toEqual([])
    }))

  it.effect("INDETERMINATE when the report is older than this run of the command (an earlier run's)", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(path.join(root, "reports"))
      const file = path.join(root, REPORT)
      fs.writeFileSync(file, passing)
      const anHourAgo = new Date(Date.now() - 3_600_000)
      fs.utimesSync(file, anHourAgo, anHourAgo)
      const { blobs, judged } = yield* verifyBoth(root, "true")
      unusable(judged, "INDETERMINATE", "was not written by this run of the command (it is older); make the command write it")
      expect(blobs.puts).toEqual([])
    }))

  it.effect("INDETERMINATE when the report's time was set after the run (planted with a future time)", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(path.join(root, "reports"))
      const file = path.join(root, REPORT)
      fs.writeFileSync(file, passing)
      const nextYear = new Date(Date.now() + 365 * 24 * 3_600_000)
      fs.utimesSync(file, nextYear, nextYear)
      const { judged } = yield* verifyBoth(root, "true")
      unusable(judged, "INDETERMINATE", "was not written by this run of the command (its modification time is after the run, set by hand); make the command write it")
    }))

  it.effect("a report the command touched is this run's, whatever it holds", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(path.join(root, "reports"))
      const file = path.join(root, REPORT)
      fs.writeFileSync(file, passing)
      const anHourAgo = new Date(Date.now() - 3_600_000)
      fs.utimesSync(file, anHourAgo, anHourAgo)
      const { judged } = yield* verifyBoth(root, `touch ${REPORT}`)
      expect(judged.verdict).toBe("PASS")
    }))

  it.effect("INDETERMINATE for invalid XML, keeping the report as a blob", () =>
    Effect.gen(function*() {
      const { blobs, judged } = yield* verifyBoth(withSource(invalid), copy)
      expect(judged.verdict).toBe("INDETERMINATE")
      const evidence = judged.evidence[0]!
      if (evidence._tag !== "junit") throw new Error("not junit evidence")
      expect(evidence.reportRef).toBe(`sha256:${INVALID_SHA}`)
      expect(evidence.problem?.startsWith("is not a valid report: ")).toBe(true)
      expect(evidence).toMatchObject({ ...base, counts: noCounts, cases: [] })
      expect(judged.reason).toBe(`the JUnit report ${REPORT} ${evidence.problem}.`)
      expect(blobText(blobs, `sha256:${INVALID_SHA}`)).toBe(invalid)
    }))

  it.effect("INDETERMINATE for a report that resolves outside the workspace", () =>
    Effect.gen(function*() {
      const outside = workspace()
      fs.writeFileSync(path.join(outside, "junit.xml"), passing)
      const root = workspace()
      fs.mkdirSync(path.join(root, "reports"))
      fs.symlinkSync(path.join(outside, "junit.xml"), path.join(root, REPORT))
      const { blobs, judged } = yield* verifyBoth(root, `touch ${path.join(outside, "junit.xml")}`)
      unusable(judged, "INDETERMINATE", "cannot be used: it resolves outside the workspace; make the command write it there")
      expect(blobs.puts).toEqual([])
    }))

  it.effect("INDETERMINATE for a directory where the report should be", () =>
    Effect.gen(function*() {
      const { judged } = yield* verifyBoth(workspace(), `mkdir -p ${REPORT}`)
      unusable(judged, "INDETERMINATE", "cannot be read (EISDIR)")
    }))

  it.effect("NOT_RUN when the shell could not find the command, though its redirection left a fresh report", () =>
    Effect.gen(function*() {
      const root = workspace()
      fs.mkdirSync(path.join(root, "reports"))
      const { blobs, ran, judged } = yield* verifyBoth(root, `ratchet-no-such-command-xyz > ${REPORT}`)
      expect(ran.verdict).toBe("NOT_RUN")
      expect(fs.existsSync(path.join(root, REPORT))).toBe(true)
      unusable(judged, "NOT_RUN", "was not read because the command that writes it did not run")
      expect(blobs.puts).toHaveLength(1) // the shell's stderr, not the report
    }))

  it.effect("NOT_RUN when the command never started", () =>
    Effect.gen(function*() {
      const { ran, judged } = yield* verifyBoth(path.join(workspace(), "missing"), copy)
      expect(ran.verdict).toBe("NOT_RUN")
      unusable(judged, "NOT_RUN", "was not read because the command that writes it did not run")
    }))

  it.effect("NOT_RUN when no command ran before it", () =>
    Effect.gen(function*() {
      const root = withSource(passing)
      fs.mkdirSync(path.join(root, "reports"))
      fs.copyFileSync(path.join(root, "source.xml"), path.join(root, REPORT))
      const judged = yield* JUnitVerifier.verifier.verify(criterion("true"), ctxFor({ root, blobs: memoryBlobs() }), [])
      unusable(judged, "NOT_RUN", "was not read because the command that writes it did not run")
    }))
})
