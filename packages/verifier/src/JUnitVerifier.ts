/**
 * The JUnit-report verifier: for a criterion whose `verify.junit` names a report, reads the JUnit
 * XML the command wrote and records every test case as evidence (suite, name, status, message),
 * with the report itself as a blob. Any failed or errored case is a FAIL; a report with no cases,
 * or only skipped ones, is INDETERMINATE; a missing, unreadable or invalid report, or one older
 * than this run of the command (left by an earlier run), is INDETERMINATE too, never a PASS.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import type * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Evidence from "./Evidence.js"
import * as Files from "./internal/files.js"
import * as JUnit from "./JUnit.js"
import type * as Verifier from "./Verifier.js"

/** Cases kept in one evidence record; the report blob holds them all. */
const maxCases = 5_000

/** Reports larger than this are not read. */
const maxReportBytes = 16 * 1024 * 1024

/**
 * The JUnit-report verifier.
 *
 * @since 0.1.0
 * @category constructors
 */
export const verifier: Verifier.Verifier = {
  name: "junit",
  appliesTo: (criterion: Spec.AcceptanceCriterion) => criterion.verify?.junit !== undefined,
  verify: (criterion, ctx, earlier) =>
    Effect.gen(function*() {
      const report = criterion.verify!.junit!
      const command = earlier.find((judgement) => judgement.verifier === "command")
      const commandRun = command?.evidence.find((evidence) => evidence._tag === "command")
      const base = {
        _tag: "junit" as const,
        acId: criterion.id,
        specDigest: ctx.specDigest,
        snapshotLsn: ctx.snapshotLsn,
        verifier: ctx.verifier,
        report
      }
      const counts = { passed: 0, failed: 0, errored: 0, skipped: 0 }
      const unusable = (problem: string, verdict: "NOT_RUN" | "INDETERMINATE", reportRef: string | null = null): Verifier.Judgement => ({
        verifier: "junit",
        verdict,
        reason: `the JUnit report ${report} ${problem}.`,
        evidence: [{ ...base, at: Date.now(), reportRef, counts, cases: [], problem }]
      })
      if (commandRun === undefined || commandRun.notStarted !== null || command?.verdict === "NOT_RUN") {
        return unusable("was not read because the command that writes it did not run", "NOT_RUN")
      }
      const found = Files.inside(ctx.workspace.root, report)
      if ("problem" in found) return unusable(`cannot be used: ${found.problem}; make the command write it there`, "INDETERMINATE")
      let bytes: Buffer
      try {
        const stat = fs.statSync(found.file)
        // A report from before this run of the command is an earlier run's: it proves nothing now
        // (whole-second filesystems: a report written in the command's first second counts).
        const outside = Files.writtenOutside(found.file, commandRun.startedAt, commandRun.startedAt + commandRun.durationMs)
        if (outside !== null) {
          return unusable(
            `was not written by this run of the command (${outside === "older" ? "it is older" : "its modification time is after the run, set by hand"}); make the command write it`,
            "INDETERMINATE"
          )
        }
        if (stat.size > maxReportBytes) return unusable(`is ${stat.size} bytes, over the ${maxReportBytes}-byte limit`, "INDETERMINATE")
        bytes = fs.readFileSync(found.file)
      } catch (error) {
        return unusable(`cannot be read (${(error as NodeJS.ErrnoException).code ?? "unknown error"})`, "INDETERMINATE")
      }
      const reportRef = yield* ctx.blobs.put(bytes)
      const parsed = JUnit.parse(bytes.toString("utf8"))
      if (Either.isLeft(parsed)) return unusable(`is not a valid report: ${parsed.left.reason}`, "INDETERMINATE", reportRef)
      const evidence: Evidence.Evidence = {
        ...base,
        at: Date.now(),
        reportRef,
        counts: parsed.right.counts,
        cases: parsed.right.cases.slice(0, maxCases).map((c) => ({ suite: c.suite, name: c.name, status: c.status, message: c.message })),
        problem: null
      }
      const verdict = JUnit.verdictOf(parsed.right)
      const { passed, failed, errored, skipped } = parsed.right.counts
      const failing = parsed.right.cases.filter((c) => c.status === "failed" || c.status === "errored").slice(0, 3)
      const reason = verdict === "PASS"
        ? `${passed} test case${passed === 1 ? "" : "s"} passed${skipped > 0 ? `, ${skipped} skipped` : ""}.`
        : verdict === "FAIL"
        ? `${failed + errored} test case${failed + errored === 1 ? "" : "s"} failed: ${failing.map((c) => (c.suite === "" ? c.name : `${c.suite} › ${c.name}`)).join(", ")}${failed + errored > 3 ? ", …" : ""}.`
        : `the report has no test case that ran; make the command run the tests it reports.`
      return { verifier: "junit", verdict, reason, evidence: [evidence] }
    })
}
