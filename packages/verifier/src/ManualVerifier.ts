/**
 * The manual verifier: for a criterion checked by a person (`manual: { procedure, observer }`),
 * asks the {@link Verifier.Observer} — on the CLI, the person at the terminal, who types the
 * result — and records who observed what. Without anyone to ask (no terminal) the criterion is
 * NOT_RUN, never assumed; an observation by anything but a person (`user:…`) is NOT_RUN too. A
 * manual record is the weakest evidence Ratchet accepts; the observer's
 * identity is the verifier of record, so a worker observing their own work is self-verification.
 *
 * @since 0.1.0
 */
import type * as Spec from "@ratchet/kernel/Spec"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Evidence from "./Evidence.js"
import * as Verifier from "./Verifier.js"

/**
 * The manual verifier. It needs an {@link Verifier.Observer} in the context; without one, every
 * manual criterion is NOT_RUN.
 *
 * @since 0.1.0
 * @category constructors
 */
export const verifier: Verifier.Verifier = {
  name: "manual",
  appliesTo: (criterion: Spec.AcceptanceCriterion) => criterion.manual !== undefined,
  verify: (criterion, ctx) =>
    Effect.gen(function*() {
      const manual = criterion.manual!
      const observer = yield* Effect.serviceOption(Verifier.Observer)
      const observed = Option.isNone(observer)
        ? null
        : yield* observer.value.observe({ acId: criterion.id, outcome: criterion.outcome, procedure: manual.procedure, observer: manual.observer })
      if (observed === null) {
        return {
          verifier: "manual",
          verdict: "NOT_RUN" as const,
          reason: `${criterion.id} is checked by a person (${manual.observer}); run ratchet verify ${ctx.episode.taskId} --ac ${criterion.id} on an interactive terminal to record what they observe.`,
          evidence: []
        }
      }
      if (observed.actor.kind !== "user") {
        return {
          verifier: "manual",
          verdict: "NOT_RUN" as const,
          reason: `${criterion.id} is a person's observation, and ${observed.actor.kind}:${observed.actor.id} is not a person; run ratchet verify ${ctx.episode.taskId} --ac ${criterion.id} yourself, on an interactive terminal.`,
          evidence: []
        }
      }
      const evidence: Evidence.Evidence = {
        _tag: "manual",
        acId: criterion.id,
        specDigest: ctx.specDigest,
        snapshotLsn: ctx.snapshotLsn,
        verifier: observed.actor,
        at: Date.now(),
        procedure: manual.procedure,
        observer: manual.observer,
        result: observed.result,
        note: observed.note,
        channel: "terminal"
      }
      return {
        verifier: "manual",
        verdict: observed.result === "pass" ? "PASS" as const : "FAIL" as const,
        reason: `${observed.actor.id} observed it ${observed.result === "pass" ? "holds" : "does not hold"}${observed.note === "" ? "" : `: ${observed.note}`}.`,
        evidence: [evidence]
      }
    })
}
