/**
 * Person-only acts as the controller records them: who they are recorded as, and their receipts
 * and verdicts signed with the invocation's approval key.
 *
 * A person-only act is recorded as the approver whose key the invocation carries (`user:<id>`),
 * never as what `RATCHET_ACTOR` claims: the key is the identity. Without a key the act is still
 * built, unsigned (`signature: null`), so the kernel's gates can say why it does not count, in the
 * same words whatever the transport.
 *
 * @since 0.2.0
 */
import * as Authority from "@ratchet/kernel/Authority"
import type * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import type * as Lesson from "@ratchet/kernel/Lesson"
import * as Signature from "@ratchet/kernel/Signature"
import type * as ApproverKey from "./ApproverKey.js"

/**
 * What an act needs from its invocation: the invoking actor and, when a person unlocked it, their key.
 *
 * @since 0.2.0
 * @category models
 */
export interface Signing {
  readonly actor: Event.Actor
  readonly signer?: ApproverKey.Signer | undefined
}

/**
 * Who a person-only act is recorded as: the key's approver, else the invoking actor.
 *
 * @since 0.2.0
 * @category constructors
 */
export const personOf = (invocation: Signing): Event.Actor =>
  invocation.signer === undefined ? invocation.actor : { kind: "user", id: invocation.signer.id }

/**
 * A receipt for `subject` at `digest` on task `taskId`, signed over the task and, for a spec or a
 * plan approval, the `revision` shown (`Authority.receiptFields`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const receipt = (
  projectId: string,
  taskId: string,
  revision: number | null,
  input: { readonly subject: Event.ReceiptSubject; readonly digest: Digest.Digest; readonly channel: string },
  invocation: Signing,
  at: number
): Event.Receipt => {
  const unsigned = { subject: input.subject, digest: input.digest, actor: personOf(invocation), channel: input.channel, at }
  const bytes = invocation.signer === undefined
    ? null
    : Signature.statement("ratchet/receipt/1", Authority.receiptFields(projectId, taskId, revision, unsigned))
  return { ...unsigned, signature: bytes === null || invocation.signer === undefined ? null : invocation.signer.sign(bytes) }
}

/**
 * `verdict`, signed for run `runId` of task `taskId` when the invocation carries a key whose
 * approver is the verdict's verifier of record; as it is (unsigned) otherwise.
 *
 * @since 0.2.0
 * @category constructors
 */
export const verdict = (projectId: string, taskId: string, runId: string, given: Event.AcVerdict, invocation: Signing): Event.AcVerdict => {
  const signer = invocation.signer
  if (signer === undefined || given.verifier.kind !== "user" || given.verifier.id !== signer.id) return { ...given, signature: null }
  const { signature: _ignored, ...unsigned } = given
  const bytes = Signature.statement("ratchet/verdict/1", Authority.verdictFields(projectId, taskId, runId, unsigned))
  return { ...unsigned, signature: bytes === null ? null : signer.sign(bytes) }
}

/**
 * A receipt for a person's control of a lesson (`Authority.lessonReceiptFields`): bound to the
 * lesson, the control, its revision, the digest the person confirmed and the target; signed with
 * the invocation's key, unsigned without one (the kernel then refuses the control and says why).
 *
 * @since 0.3.0
 * @category constructors
 */
export const lessonReceipt = (
  projectId: string,
  input: Omit<Lesson.Receipt, "signature" | "actor">,
  invocation: Signing
): Lesson.Receipt => {
  const unsigned = { ...input, actor: personOf(invocation) }
  const bytes = invocation.signer === undefined
    ? null
    : Signature.statement("ratchet/lesson-receipt/1", Authority.lessonReceiptFields(projectId, unsigned))
  return { ...unsigned, signature: bytes === null || invocation.signer === undefined ? null : invocation.signer.sign(bytes) }
}
