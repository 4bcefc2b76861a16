/**
 * The artifact-hash verifier: for a criterion whose `verify.artifacts` names files, hashes each
 * file after the command ran (SHA-256) and records path, hash and size as evidence. A missing file
 * or a hash other than the declared `sha256` is a FAIL (the command ran and did not produce what
 * the contract says); a file that cannot be read, resolves outside the workspace, or (with no
 * declared hash) is older than this run of the command, is INDETERMINATE; when the command did not run, nothing is hashed (NOT_RUN), so an artifact left
 * by an earlier run never counts.
 *
 * @since 0.1.0
 */
import type * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import type * as Evidence from "./Evidence.js"
import * as Files from "./internal/files.js"
import type * as Verifier from "./Verifier.js"

/**
 * The artifact-hash verifier.
 *
 * @since 0.1.0
 * @category constructors
 */
export const verifier: Verifier.Verifier = {
  name: "artifact",
  appliesTo: (criterion: Spec.AcceptanceCriterion) => (criterion.verify?.artifacts ?? []).length > 0,
  verify: (criterion, ctx, earlier) =>
    Effect.sync(() => {
      const command = earlier.find((judgement) => judgement.verifier === "command")
      const commandRun = command?.evidence.find((evidence) => evidence._tag === "command")
      if (command === undefined || command.verdict === "NOT_RUN" || command.verdict === "INDETERMINATE") {
        return {
          verifier: "artifact",
          verdict: "NOT_RUN" as const,
          reason: "the artifacts were not hashed because the command that produces them did not complete.",
          evidence: []
        }
      }
      const artifacts = (criterion.verify?.artifacts ?? []).map((artifact) => {
        const expected = artifact.sha256 ?? null
        const found = Files.inside(ctx.workspace.root, artifact.path)
        if ("problem" in found) {
          return { path: artifact.path, sha256: null, expected, size: null, problem: found.problem }
        }
        const hashed = Files.hashFile(found.file)
        if ("problem" in hashed) return { path: artifact.path, sha256: null, expected, size: null, problem: hashed.problem }
        // Without a declared hash, only a file this run of the command wrote proves anything.
        const outside = expected === null && commandRun !== undefined
          ? Files.writtenOutside(found.file, commandRun.startedAt, commandRun.startedAt + commandRun.durationMs)
          : null
        if (outside !== null) {
          return {
            path: artifact.path,
            sha256: hashed.sha256,
            expected,
            size: hashed.size,
            problem: `it was not written by this run of the command (${outside === "older" ? "it is older" : "its modification time is after the run, set by hand"})`
          }
        }
        return {
          path: artifact.path,
          sha256: hashed.sha256,
          expected,
          size: hashed.size,
          problem: expected !== null && expected !== hashed.sha256 ? `its SHA-256 is ${hashed.sha256}, not ${expected}` : null
        }
      })
      const evidence: Evidence.Evidence = {
        _tag: "artifact",
        acId: criterion.id,
        specDigest: ctx.specDigest,
        snapshotLsn: ctx.snapshotLsn,
        verifier: ctx.verifier,
        at: Date.now(),
        artifacts
      }
      const missing = artifacts.filter((artifact) =>
        artifact.problem === "it does not exist" || (artifact.sha256 !== null && artifact.expected !== null && artifact.problem !== null)
      )
      const unreadable = artifacts.filter((artifact) => artifact.problem !== null && !missing.includes(artifact))
      const list = (items: typeof artifacts) => items.map((artifact) => `${artifact.path}: ${artifact.problem}`).join("; ")
      if (missing.length > 0) {
        return { verifier: "artifact", verdict: "FAIL" as const, reason: `artifact check failed (${list(missing)}).`, evidence: [evidence] }
      }
      if (unreadable.length > 0) {
        return {
          verifier: "artifact",
          verdict: "INDETERMINATE" as const,
          reason: `artifacts could not be checked (${list(unreadable)}); fix the path or permissions and verify again.`,
          evidence: [evidence]
        }
      }
      return {
        verifier: "artifact",
        verdict: "PASS" as const,
        reason: `${artifacts.length} artifact${artifacts.length === 1 ? "" : "s"} present${artifacts.some((a) => a.expected !== null) ? " with the declared hashes" : ""}.`,
        evidence: [evidence]
      }
    })
}
