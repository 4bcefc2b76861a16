/**
 * What a verification that concluded REVISE leaves for the revision (ADR 0041): the failures of
 * its criteria and the pass's fingerprint.
 *
 * - The **fingerprint** of a REVISE pass is taken over its FAILed criteria (sorted by id): each
 *   criterion's id, how its check ended (`exit:1`, `timeout`, …) and the normalised tail of the
 *   check's output (`Progress.normaliseTail`: numbers, hex digests and temporary paths folded), with
 *   `Progress.fingerprintKey`, the successor budget's own form. Equal fingerprints mean the revision
 *   failed the same way again: seed 004 ends that in BLOCKED (`repeated_failure`), as it does for a
 *   step's failure (`Task.recordAttemptFailure`).
 * - The **revision** a successor's envelope carries (`AgentEnvelope.Revision`): the fingerprint,
 *   and for each criterion of the pass that did not pass its verdict and a short excerpt of its
 *   evidence (how the check ended and its output's last lines).
 *
 * The fingerprint is recomputed from the stored evidence rather than stored on the event: a
 * `VerificationRecorded` body is strict (ADR 0007), and the evidence the pass names is what the
 * fingerprint is about. A pass whose evidence cannot be read any more is fingerprinted over what
 * is left (the criterion and its verdict), never skipped.
 *
 * @since 0.5.0
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as Plan from "@ratchet/kernel/Plan"
import * as Progress from "@ratchet/kernel/Progress"
import * as BlobStore from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as Evidence from "@ratchet/verifier/Evidence"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as AgentEnvelope from "./AgentEnvelope.js"

/**
 * One criterion of a pass that did not pass: its verdict, how its check ended, and the text the
 * fingerprint and the excerpt are taken from.
 *
 * @since 0.5.0
 * @category models
 */
export interface Failure {
  readonly acId: string
  readonly verdict: Event.AcVerdict["verdict"]
  readonly ending: string
  readonly text: string
}

/** The longest text kept of one failure (the fingerprint normalises its last lines only). */
const maxText = 4_000

const tail = (text: string) => (text.length <= maxText ? text : text.slice(-maxText))

/**
 * The failure of `verdict`, from the evidence its checks recorded (the first that says why).
 *
 * @since 0.5.0
 * @category constructors
 */
export const failureOf = (verdict: Event.AcVerdict, evidence: ReadonlyArray<Evidence.Evidence>): Failure => {
  const parts: Array<{ readonly ending: string; readonly text: string }> = evidence.map((record) => {
    switch (record._tag) {
      case "command":
        return {
          ending: record.notStarted !== null
            ? "not_started"
            : record.timedOut
            ? "timeout"
            : record.exitCode !== null
            ? `exit:${record.exitCode}`
            : `signal:${record.signal ?? "unknown"}`,
          text: record.notStarted ?? record.outputTail
        }
      case "junit":
        return {
          ending: "junit",
          text: record.problem ??
            record.cases.filter((c) => c.status === "failed" || c.status === "errored").map((c) => `${c.suite} ${c.name}: ${c.message ?? c.status}`).join("\n")
        }
      case "artifact":
        return {
          ending: "artifact",
          text: record.artifacts.filter((a) => a.problem !== null).map((a) => `${a.path}: ${a.problem}`).join("\n")
        }
      case "manual":
        return { ending: `manual:${record.result}`, text: record.note }
    }
  })
  const first = parts[0]
  return {
    acId: verdict.acId,
    verdict: verdict.verdict,
    ending: first === undefined ? verdict.verdict.toLowerCase() : parts.map((part) => part.ending).join("+"),
    text: tail(parts.map((part) => part.text).join("\n"))
  }
}

/**
 * The fingerprint of a pass over its FAILed criteria; null when none FAILed (a pass that is not a
 * REVISE has no revision to fingerprint).
 *
 * @since 0.5.0
 * @category constructors
 */
export const fingerprintOf = (failures: ReadonlyArray<Failure>): string | null => {
  const failed = [...failures.filter((failure) => failure.verdict === "FAIL")].sort((a, b) => (a.acId < b.acId ? -1 : a.acId > b.acId ? 1 : 0))
  if (failed.length === 0) return null
  return Progress.fingerprintKey(
    `verification:${failed.map((failure) => failure.acId).join(",")}`,
    failed.map((failure) => failure.ending).join(","),
    failed.map((failure) => `${failure.acId}\n${Progress.normaliseTail(failure.text)}`).join("\n")
  )
}

/** The longest excerpt of one failure's text, before the envelope's own bound. */
const excerptChars = 300

/**
 * What a successor's envelope says about the pass: the fingerprint, and each criterion that did
 * not pass with how its check ended and the last of its output.
 *
 * @since 0.5.0
 * @category constructors
 */
export const revisionOf = (fingerprint: string, failures: ReadonlyArray<Failure>): AgentEnvelope.Revision => ({
  fingerprint,
  failures: failures.map((failure) => {
    const text = failure.text.trim()
    const excerpt = text.length <= excerptChars ? text : `…${text.slice(-(excerptChars - 1))}`
    return { acId: failure.acId, verdict: failure.verdict, excerpt: excerpt === "" ? `the check ended ${failure.ending}` : `the check ended ${failure.ending}: ${excerpt}` }
  })
})

/**
 * A recorded REVISE pass of a run: where it is, its failures and its fingerprint.
 *
 * @since 0.5.0
 * @category models
 */
export interface Pass {
  readonly lsn: number
  readonly snapshotLsn: number
  readonly failures: ReadonlyArray<Failure>
  readonly fingerprint: string
}

/** The evidence records `verdict` names, each loaded; one that cannot be read is left out. */
const evidenceOf = (blobs: BlobStore.Service, verdict: Event.AcVerdict) =>
  Effect.forEach(verdict.evidenceRefs, (ref) => Effect.option(Evidence.load(blobs, ref))).pipe(
    Effect.map((loaded) => loaded.flatMap((record) => (record._tag === "Some" ? [record.value] : [])))
  )

/**
 * Every pass of run `runId` of `taskId` on `branch` that concluded REVISE, oldest first.
 *
 * @since 0.5.0
 * @category constructors
 */
export const passesOf = (taskId: string, branch: string, runId: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    const blobs = yield* BlobStore.BlobStore
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: taskId, branch })))
    const passes: Array<Pass> = []
    for (const stored of events) {
      const event = stored.event
      if (event._tag !== "VerificationRecorded" || event.runId !== runId || event.outcome !== "REVISE") continue
      const failures: Array<Failure> = []
      for (const verdict of event.verdicts) {
        if (verdict.verdict === "PASS") continue
        failures.push(failureOf(verdict, yield* evidenceOf(blobs, verdict)))
      }
      const fingerprint = fingerprintOf(failures)
      if (fingerprint !== null) passes.push({ lsn: stored.lsn, snapshotLsn: event.snapshotLsn, failures, fingerprint })
    }
    return passes as ReadonlyArray<Pass>
  })

/**
 * The revision attempt `attempt` of `step` works off: the run's latest REVISE pass, when a
 * criterion the step serves did not pass in it; null for a first attempt or a step the pass did
 * not send back.
 *
 * @since 0.5.0
 * @category constructors
 */
export const forStep = (taskId: string, branch: string, runId: string, step: Plan.Step, attempt: number) =>
  Effect.gen(function*() {
    if (attempt <= 1) return null
    const latest = (yield* passesOf(taskId, branch, runId)).at(-1)
    if (latest === undefined) return null
    if (!latest.failures.some((failure) => step.acRefs.includes(failure.acId))) return null
    return revisionOf(latest.fingerprint, latest.failures)
  })
