/**
 * Packaging smoke test for `@ratchet/verifier`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball (with `@ratchet/storage`'s and `@ratchet/kernel`'s
 * beside it and the `effect` peer), so it sees exactly what a user sees: the entry point resolves
 * to the built `dist/`, the built-in verifiers are there in their order, the JUnit parser reads a
 * report, and an episode cannot be built from an empty log. Nothing is run and no store is needed.
 * Prints one line; exits non-zero on the first thing that is wrong.
 */
import { Builtin, EpisodeView, JUnit } from "@ratchet/verifier"
import * as Either from "effect/Either"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/verifier smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/verifier")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const names = Builtin.verifiers.map((verifier) => verifier.name)
if (names.join(",") !== "command,junit,artifact,manual") {
  fail(`Builtin.verifiers should be command, junit, artifact, manual in that order, got ${JSON.stringify(names)}`)
}

const parsed = JUnit.parse(
  `<?xml version="1.0"?><testsuite name="smoke"><testcase name="adds"/><testcase name="subtracts"><failure message="1 is not 2"/></testcase></testsuite>`
)
if (Either.isLeft(parsed)) fail(`JUnit.parse should read a two-case report, got ${parsed.left.message}`)
const report = Either.getOrThrow(parsed)
const cases = report.cases.map((c) => `${c.suite}/${c.name}/${c.status}/${c.message}`)
if (
  cases.join(",") !== "smoke/adds/passed/null,smoke/subtracts/failed/1 is not 2" ||
  report.counts.passed !== 1 ||
  report.counts.failed !== 1 ||
  JUnit.verdictOf(report) !== "FAIL"
) {
  fail(`JUnit.parse read the two-case report as ${JSON.stringify(report)} (verdict ${JUnit.verdictOf(report)})`)
}

const episode = EpisodeView.build({ taskId: "t-1", branch: "main", snapshotLsn: 0, events: [] })
if (Either.isRight(episode)) {
  fail(`EpisodeView.build over an empty log should be Left, got ${JSON.stringify(episode.right)}`)
} else if (episode.left._tag !== "@ratchet/verifier/EpisodeUnavailable" || episode.left.snapshotLsn !== 0) {
  fail(`EpisodeView.build over an empty log should be EpisodeUnavailable at LSN 0, got ${JSON.stringify(episode.left)}`)
}

console.log(
  "Builtin.verifiers = command, junit, artifact, manual; JUnit.parse reads a two-case report (FAIL); EpisodeView.build over an empty log = EpisodeUnavailable"
)
