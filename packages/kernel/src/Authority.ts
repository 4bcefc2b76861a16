/**
 * What makes a person's act count: a signature by an approver's key over exactly what was decided.
 *
 * A receipt (an approval, a reopen out of FAILED, a settlement, an unblock of a person's blocker, a
 * rewind) and a verdict (a criterion judged by the verifier of record) carry a
 * {@link Signature.Signature}. They count only when the key is one of the project's approvers
 * (`Approvers`), the signature holds over the statement built here, and the act names the approver
 * the key belongs to (`user:<approver id>`). Nothing an agent can produce without the person's key
 * passes: not `RATCHET_ACTOR=user:…`, not a pseudo-terminal, not a row written into the store.
 *
 * The statement binds the act to its project, task, subject, digest, and for a spec or a plan
 * approval the revision it was shown at (so an approval cannot be replayed onto a later revision
 * with the same text, after a reopen); a verdict is bound to its run. A person's control of a
 * lesson (`Lesson.Receipt`) is bound to its project, the lesson, the control, the lesson's revision
 * and text digest, and the control's target (the replacing lesson, the compiled guard).
 *
 * @since 0.2.0
 */
import * as Approvers from "./Approvers.js"
import type { AcVerdict, Receipt } from "./Event.js"
import type * as Lesson from "./Lesson.js"
import * as Signature from "./Signature.js"

/**
 * Whom a project trusts, and how to check a signature. Built by the caller from the approvers the
 * store recorded.
 *
 * @since 0.2.0
 * @category models
 */
export interface Authority {
  readonly projectId: string
  readonly approvers: ReadonlyArray<Approvers.Approver>
  readonly verify: Signature.Verify
}

/**
 * How a signed act stands:
 * - `Signed`: by `approver`'s key, over exactly this act;
 * - `Unsigned`: no signature at all (written without a key: an agent, a script, an older Ratchet);
 * - `UnknownKey`: signed by a key that is not one of the project's approvers;
 * - `NotTheSigner`: the act names someone other than the key's approver;
 * - `BadSignature`: the signature does not match the act (edited after signing, or forged).
 *
 * @since 0.2.0
 * @category models
 */
export type Standing =
  | { readonly _tag: "Signed"; readonly approver: Approvers.Approver }
  | { readonly _tag: "Unsigned" }
  | { readonly _tag: "UnknownKey"; readonly key: Signature.Key }
  | { readonly _tag: "NotTheSigner"; readonly approver: Approvers.Approver }
  | { readonly _tag: "BadSignature"; readonly approver: Approvers.Approver }

/**
 * The fields a receipt's signature covers. `revision` is the spec's or the plan's revision for
 * their approvals, `null` for every other subject (whose digest already names what is decided).
 *
 * @since 0.2.0
 * @category encoding
 */
export const receiptFields = (
  projectId: string,
  taskId: string,
  revision: number | null,
  receipt: Omit<Receipt, "signature">
): Readonly<Record<string, unknown>> => ({
  projectId,
  taskId,
  subject: receipt.subject,
  digest: receipt.digest,
  revision,
  actor: { kind: receipt.actor.kind, id: receipt.actor.id },
  channel: receipt.channel,
  at: receipt.at
})

/**
 * The fields a verdict's signature covers.
 *
 * @since 0.2.0
 * @category encoding
 */
export const verdictFields = (
  projectId: string,
  taskId: string,
  runId: string,
  verdict: Omit<AcVerdict, "signature">
): Readonly<Record<string, unknown>> => ({
  projectId,
  taskId,
  runId,
  acId: verdict.acId,
  verdict: verdict.verdict,
  evidenceRefs: [...verdict.evidenceRefs],
  specDigest: verdict.specDigest,
  verifier: { kind: verdict.verifier.kind, id: verdict.verifier.id },
  at: verdict.at
})

/**
 * The fields a person's control of a lesson signs.
 *
 * @since 0.3.0
 * @category encoding
 */
export const lessonReceiptFields = (
  projectId: string,
  receipt: Omit<Lesson.Receipt, "signature">
): Readonly<Record<string, unknown>> => ({
  projectId,
  lessonId: receipt.lessonId,
  control: receipt.control,
  revision: receipt.revision,
  digest: receipt.digest,
  target: receipt.target,
  actor: { kind: receipt.actor.kind, id: receipt.actor.id },
  channel: receipt.channel,
  at: receipt.at
})

const standing = (
  authority: Authority,
  signature: Signature.Signature | null,
  actor: { readonly kind: string; readonly id: string },
  kind: Signature.Kind,
  fields: Readonly<Record<string, unknown>>
): Standing => {
  if (signature === null) return { _tag: "Unsigned" }
  const approver = Approvers.byKey(authority, signature.key)
  if (approver === undefined) return { _tag: "UnknownKey", key: signature.key }
  if (!Signature.holds(authority.verify, signature, kind, fields)) return { _tag: "BadSignature", approver }
  if (actor.kind !== "user" || actor.id !== approver.id) return { _tag: "NotTheSigner", approver }
  return { _tag: "Signed", approver }
}

/**
 * How `receipt`, given on task `taskId` at `revision`, stands.
 *
 * @since 0.2.0
 * @category constructors
 */
export const ofReceipt = (authority: Authority, taskId: string, revision: number | null, receipt: Receipt): Standing =>
  standing(
    authority,
    receipt.signature,
    receipt.actor,
    "ratchet/receipt/1",
    receiptFields(authority.projectId, taskId, revision, receipt)
  )

/**
 * How `verdict`, given in run `runId` of task `taskId`, stands.
 *
 * @since 0.2.0
 * @category constructors
 */
export const ofVerdict = (authority: Authority, taskId: string, runId: string, verdict: AcVerdict): Standing =>
  standing(
    authority,
    verdict.signature,
    verdict.verifier,
    "ratchet/verdict/1",
    verdictFields(authority.projectId, taskId, runId, verdict)
  )

/**
 * How `receipt`, a person's control of a lesson of the authority's project, stands.
 *
 * @since 0.3.0
 * @category constructors
 */
export const ofLessonReceipt = (authority: Authority, receipt: Lesson.Receipt): Standing =>
  standing(
    authority,
    receipt.signature,
    receipt.actor,
    "ratchet/lesson-receipt/1",
    lessonReceiptFields(authority.projectId, receipt)
  )

/**
 * A sentence saying why an act that is not `Signed` does not count, for a gate's reason.
 *
 * @since 0.2.0
 * @category constructors
 */
export const explain = (what: string, standing: Exclude<Standing, { readonly _tag: "Signed" }>): string => {
  switch (standing._tag) {
    case "Unsigned":
      return `${what} carries no approver's signature; only an act signed with a registered approver's key counts.`
    case "UnknownKey":
      return `${what} is signed by the key ${Signature.fingerprint(standing.key)}, which is not one of this project's approvers.`
    case "NotTheSigner":
      return `${what} names someone other than ${standing.approver.id}, whose key signed it.`
    case "BadSignature":
      return `${what} does not match its signature by ${standing.approver.id}: it was altered after signing, or forged.`
  }
}
