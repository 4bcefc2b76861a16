/**
 * Whether the evidence a completion rests on is about the work tree that is here now. The verdicts
 * the completion gate counts carry evidence; a command's evidence names the tree it ran on (HEAD and
 * the digest of the uncommitted changes). Evidence that can no longer be read, or that was taken on
 * another tree, holds the completion: `ratchet done` refuses on it, and `ratchet gate` explains the
 * same HOLD, so the explanation never disagrees with the action it explains.
 *
 * @since 0.2.0
 */
import type * as Authority from "@ratchet/kernel/Authority"
import * as Gate from "@ratchet/kernel/Gate"
import type * as Task from "@ratchet/kernel/Task"
import * as Effect from "effect/Effect"
import * as Episode from "./Episode.js"
import * as VerificationReport from "./VerificationReport.js"
import * as WorkTree from "./WorkTree.js"

/**
 * The completion HOLD for `episode`'s counted evidence that is not current in the checkout at
 * `root` (taken on another tree, or no longer readable), as a gate evaluated at `at` on the task's
 * stored `version`; null when every counted verdict rests on current evidence.
 *
 * @since 0.2.0
 * @category constructors
 */
export const check = (task: Task.Task, episode: Episode.Episode, root: string, authority: Authority.Authority) =>
  Effect.gen(function*() {
    if (task.spec === null) return null
    const counted = Episode.counted(task, episode, authority)
    const evidence = yield* VerificationReport.loadAll([...counted.values()].flatMap((verdict) => verdict.evidenceRefs))
    const observed = yield* WorkTree.observe(root)
    const tree = { head: observed.head, dirtyDigest: WorkTree.dirtyDigest(observed) }
    // A verdict whose evidence cannot be read rests on nothing: verify it again.
    const unreadable = [...counted.values()].filter((verdict) => verdict.evidenceRefs.some((ref) => !evidence.has(ref))).map((verdict) => verdict.acId)
    const stale = [...counted.values()].filter((verdict) =>
      verdict.evidenceRefs.some((ref) => {
        const record = evidence.get(ref)
        return record?._tag === "command" && (record.tree.head !== tree.head || record.tree.dirtyDigest !== tree.dirtyDigest)
      })
    ).map((verdict) => verdict.acId)
    if (stale.length === 0 && unreadable.length === 0) return null
    const id = task.taskId
    const again = [...new Set([...unreadable, ...stale])]
    return {
      gate: (at: number, version: number): Gate.Gate => ({
        kind: "completion",
        decision: "HOLD",
        from: task.state,
        to: "COMPLETED",
        reasons: [
          ...(unreadable.length === 0 ? [] : [{
            code: "missing_evidence" as const,
            message: `The evidence of ${unreadable.join(", ")} cannot be read from the blob store (missing or corrupt); a verdict without its evidence is a claim.`
          }]),
          ...(stale.length === 0 ? [] : [{
            code: "stale_evidence" as const,
            message: `The work tree changed since ${stale.join(", ")} ${stale.length === 1 ? "was" : "were"} verified (HEAD ${tree.head?.slice(0, 12) ?? "none"}${
              tree.dirtyDigest === "clean" ? ", clean" : ", with uncommitted changes"
            }); the evidence is about a tree that is no longer here.`
          }])
        ],
        requiredActions: [{ description: "Verify again on the tree as it is now, or restore the verified tree", command: `ratchet verify ${id} --ac ${again.join(",")}` }],
        evidenceRefs: [],
        evaluatedAt: at,
        policyVersion: Gate.policyVersion,
        boundTo: { taskVersion: version, specDigest: task.spec?.digest ?? null, planDigest: task.plan?.digest ?? null }
      })
    }
  })
