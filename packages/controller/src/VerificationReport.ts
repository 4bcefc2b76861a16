/**
 * `verification.md`: the verification of a run as people read it — each acceptance criterion with
 * the verdict that counts (this episode, the current spec digest, an independent verifier), who
 * judged it and when, and what the evidence says (the command and its exit, the test cases, the
 * artifact hashes, the observer's note), with the evidence references to look them up by
 * (`ratchet evidence`). Deterministic for a given log and evidence.
 *
 * @since 0.1.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import type * as Task from "@ratchet/kernel/Task"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as Evidence from "@ratchet/verifier/Evidence"
import * as Effect from "effect/Effect"
import * as Episode from "./Episode.js"
import * as Projection from "./Projection.js"

const cell = (text: string) => Projection.visible(text).replace(/\s+/g, " ").replace(/\|/g, "\\|").slice(0, 300)

/**
 * One line about an evidence record.
 *
 * @since 0.1.0
 * @category getters
 */
export const describe = (evidence: Evidence.Evidence): string => {
  switch (evidence._tag) {
    case "command":
      return evidence.notStarted !== null
        ? `\`${evidence.command}\` could not start: ${evidence.notStarted}`
        : `\`${evidence.command}\` → ${
          evidence.timedOut ? "timed out" : evidence.exitCode === null ? `ended by ${evidence.signal ?? "a signal"}` : `exit ${evidence.exitCode}`
        } (expected ${evidence.expectExitCode}) in ${evidence.durationMs} ms on ${evidence.tree.head?.slice(0, 12) ?? "no commit"}${
          evidence.tree.dirtyDigest === "clean" ? "" : " + uncommitted changes"
        }`
    case "junit":
      return evidence.problem !== null
        ? `JUnit ${evidence.report}: ${evidence.problem}`
        : `JUnit ${evidence.report}: ${evidence.counts.passed} passed, ${evidence.counts.failed} failed, ${evidence.counts.errored} errored, ${evidence.counts.skipped} skipped`
    case "artifact":
      return evidence.artifacts.map((artifact) =>
        artifact.sha256 === null ? `${artifact.path}: ${artifact.problem}` : `${artifact.path} sha256:${artifact.sha256.slice(0, 16)}… (${artifact.size} bytes)${artifact.problem === null ? "" : ` — ${artifact.problem}`}`
      ).join("; ")
    case "manual":
      return `${evidence.verifier.id} (observer: ${evidence.observer}) observed ${evidence.result}${evidence.note === "" ? "" : `: ${evidence.note}`}`
  }
}

/**
 * Loads the evidence records the verdicts name; a record that is missing or does not decode is
 * left out (the report says so by its reference alone); the store failing is an error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const loadAll = (refs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const blobs = yield* BlobStore.BlobStore
    const loaded = new Map<string, Evidence.Evidence>()
    for (const ref of new Set(refs)) {
      // Missing or unreadable records are left out (callers see the gap); a failing store is an error.
      const evidence = yield* Evidence.load(blobs, ref).pipe(
        Effect.map((record) => record as Evidence.Evidence | null),
        Effect.catchTags({
          "@ratchet/storage/BlobNotFound": () => Effect.succeed(null),
          "@ratchet/storage/InvalidBlobRef": () => Effect.succeed(null),
          "@ratchet/verifier/EvidenceInvalid": () => Effect.succeed(null)
        })
      )
      if (evidence !== null) loaded.set(ref, evidence)
    }
    return loaded as ReadonlyMap<string, Evidence.Evidence>
  })

/**
 * Renders `verification.md` for the task's current episode.
 *
 * @since 0.1.0
 * @category constructors
 */
export const render = (
  task: Task.Task,
  episode: Episode.Episode,
  evidence: ReadonlyMap<string, Evidence.Evidence>,
  authority: Authority.Authority
): string | null => {
  if (task.spec === null) return null
  const counted = Episode.counted(task, episode, authority)
  const out: Array<string> = [
    Projection.header,
    `# Verification of run ${episode.runId} — ${cell(task.goal)}`,
    "",
    `- Task: ${task.taskId} (${task.state})${episode.branch === "main" ? "" : ` on branch ${episode.branch}`}`,
    `- Spec: ${task.spec.digest}`,
    `- Episode frozen at LSN ${episode.snapshotLsn}: ${episode.view.usage.attempts} attempt${episode.view.usage.attempts === 1 ? "" : "s"} (${episode.view.usage.failedAttempts} not succeeded)`,
    `- Workers: ${episode.view.workers.map((worker) => `${worker.kind}:${worker.id}`).join(", ") || "none"}`,
    `- Passes: ${episode.passes.length === 0 ? "none yet" : episode.passes.map((pass) => `${pass.outcome} (LSN ${pass.lsn})`).join(", ")}`,
    ""
  ]
  out.push("| criterion | required | verdict | verifier | evidence |", "|---|---|---|---|---|")
  for (const ac of task.spec.spec.acceptanceCriteria) {
    const verdict = counted.get(ac.id)
    const notes = (verdict?.evidenceRefs ?? []).map((ref) => {
      const record = evidence.get(ref)
      return record === undefined ? ref : describe(record)
    })
    out.push(
      `| ${ac.id} | ${ac.required ? "yes" : "no"} | ${verdict?.verdict ?? "not verified"} | ${
        verdict === undefined ? "" : cell(`${verdict.verifier.kind}:${verdict.verifier.id}`)
      } | ${cell(notes.join("; "))} |`
    )
  }
  out.push("")
  for (const ac of task.spec.spec.acceptanceCriteria) {
    const verdict = counted.get(ac.id)
    out.push(`## ${ac.id} — ${cell(ac.outcome)}`, "")
    if (verdict === undefined) {
      out.push("Not verified in this episode.", "")
      continue
    }
    out.push(`${verdict.verdict}, judged by ${verdict.verifier.kind}:${verdict.verifier.id} at ${new Date(verdict.at).toISOString()}.`, "")
    for (const ref of verdict.evidenceRefs) {
      const record = evidence.get(ref)
      out.push(`- ${ref}${record === undefined ? " (unreadable)" : `: ${cell(describe(record))}`}`)
    }
    out.push("")
  }
  return out.join("\n")
}
