/**
 * The verifier contract. A `Verifier` judges one acceptance criterion given a {@link VerifierCtx}:
 * the run, the step and attempt behind the criterion, the episode frozen at the snapshot LSN, a
 * lazy blob handle (a verifier that needs no text loads none), a deadline and the work tree.
 * It answers with a {@link Judgement}: a verdict, a reason a person can act on, and evidence.
 *
 * Verifiers are values collected in the {@link Verifiers} service, so any package can provide its
 * own by providing another layer. Every verifier that applies to a criterion runs, in order, and
 * sees the judgements of the ones before it (the JUnit verifier reads the report the command
 * verifier's run wrote, and only if that run wrote it).
 *
 * Expected outcomes are never errors: a command that cannot start is NOT_RUN, a timeout is
 * INDETERMINATE. Only the store failing is an error.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import type * as Spec from "@ratchet/kernel/Spec"
import type * as BlobStore from "@ratchet/storage/BlobStore"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as EpisodeView from "./EpisodeView.js"
import type * as Evidence from "./Evidence.js"

/**
 * What a verifier is given. `episode` is frozen; `blobs` is a handle, read only on demand.
 *
 * @since 0.1.0
 * @category models
 */
export interface VerifierCtx {
  readonly run: string
  /** The last step of the plan serving the criterion (or null when no step names it). */
  readonly step: string | null
  /** That step's latest attempt number at the snapshot (or null). */
  readonly attempt: number | null
  readonly episode: EpisodeView.EpisodeView
  readonly blobs: BlobStore.Service
  /** Epoch milliseconds after which the verifier must give up (INDETERMINATE). */
  readonly deadline: number
  readonly snapshotLsn: number
  /** The spec digest the verdict is about. */
  readonly specDigest: string
  /** The verifier of record. */
  readonly verifier: Event.Actor
  /** The checkout the checks run in, and its tree when verification began. */
  readonly workspace: { readonly root: string; readonly tree: Evidence.Tree }
}

/**
 * One verifier's answer for one criterion.
 *
 * @since 0.1.0
 * @category models
 */
export interface Judgement {
  readonly verifier: string
  readonly verdict: Event.AcVerdict["verdict"]
  /** One sentence: why this verdict, and for anything but PASS, what to do. */
  readonly reason: string
  readonly evidence: ReadonlyArray<Evidence.Evidence>
}

/**
 * A verifier.
 *
 * @since 0.1.0
 * @category models
 */
export interface Verifier {
  /** A short stable name: `command`, `junit`, `artifact`, `manual`, or a package's own. */
  readonly name: string
  readonly appliesTo: (criterion: Spec.AcceptanceCriterion) => boolean
  readonly verify: (
    criterion: Spec.AcceptanceCriterion,
    ctx: VerifierCtx,
    earlier: ReadonlyArray<Judgement>
  ) => Effect.Effect<Judgement, StorageError>
}

/**
 * The verifiers in force, in the order they run for a criterion.
 *
 * @since 0.1.0
 * @category services
 */
export class Verifiers extends Context.Tag("@ratchet/verifier/Verifiers")<Verifiers, ReadonlyArray<Verifier>>() {}

/**
 * Provides exactly these verifiers.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (...verifiers: ReadonlyArray<Verifier>): Layer.Layer<Verifiers> => Layer.succeed(Verifiers, verifiers)

/**
 * A person's answer on a terminal for a manual criterion.
 *
 * @since 0.1.0
 * @category models
 */
export interface Observation {
  readonly result: "pass" | "fail"
  readonly note: string
  readonly actor: Event.Actor
}

/**
 * Asks a person to check a manual criterion. `null` when nobody can be asked here (no terminal):
 * the criterion is then NOT_RUN, never guessed.
 *
 * @since 0.1.0
 * @category services
 */
export class Observer extends Context.Tag("@ratchet/verifier/Observer")<Observer, {
  readonly observe: (request: {
    readonly acId: string
    readonly outcome: string
    readonly procedure: string
    readonly observer: string
  }) => Effect.Effect<Observation | null>
}>() {}

/**
 * The verdict of several judgements of one criterion: FAIL if any failed, else INDETERMINATE if
 * any was, else NOT_RUN if any did not run, else PASS (and NOT_RUN when nothing judged it).
 *
 * @since 0.1.0
 * @category combinators
 */
export const combine = (judgements: ReadonlyArray<Judgement>): Event.AcVerdict["verdict"] => {
  if (judgements.length === 0) return "NOT_RUN"
  const verdicts = new Set(judgements.map((judgement) => judgement.verdict))
  if (verdicts.has("FAIL")) return "FAIL"
  if (verdicts.has("INDETERMINATE")) return "INDETERMINATE"
  if (verdicts.has("NOT_RUN")) return "NOT_RUN"
  return "PASS"
}
