/**
 * Approval keys for tests: Ed25519 key pairs made from fixed seeds, the `Verify` function a
 * controller supplies, and signed receipts and verdicts, so a test drives the kernel's gates with
 * real signatures (never a stand-in that says yes) and replays the same bytes every run.
 *
 * These keys are for tests only: their private halves are derived from one-byte seeds anyone can
 * recompute. A real approver's key is made by `ratchet approver init` and kept encrypted.
 *
 * ```ts
 * const alice = Signing.keyOf(1)
 * const authority = Signing.authorityFor("p-1", [{ id: "alice", key: alice.key }])
 * const receipt = Signing.receipt(alice, "p-1", "t-1", 1, { subject: "spec", digest, actor, channel: "terminal", at })
 * ```
 *
 * @since 0.2.0
 */
import type * as Approvers from "@ratchet/kernel/Approvers"
import * as Authority from "@ratchet/kernel/Authority"
import type * as Event from "@ratchet/kernel/Event"
import * as Signature from "@ratchet/kernel/Signature"
import * as crypto from "node:crypto"

/** The DER prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows it. */
const pkcs8Prefix = Buffer.from("302e020100300506032b657004220420", "hex")

/**
 * A test key pair: the public key as the kernel writes it, and the private key to sign with.
 *
 * @since 0.2.0
 * @category models
 */
export interface TestKey {
  readonly key: Signature.Key
  readonly privateKey: crypto.KeyObject
}

/**
 * The key pair of a one-byte seed (0 to 255).
 *
 * @since 0.2.0
 * @category constructors
 */
export const keyOf = (seed: number): TestKey => {
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([pkcs8Prefix, Buffer.alloc(32, seed & 0xff)]),
    format: "der",
    type: "pkcs8"
  })
  const jwk = crypto.createPublicKey(privateKey).export({ format: "jwk" })
  return { key: `ed25519:${String(jwk.x)}`, privateKey }
}

/**
 * Ed25519 verification with the platform's crypto: `false`, never a throw, on malformed input.
 *
 * @since 0.2.0
 * @category constructors
 */
export const verify: Signature.Verify = (key, message, value) => {
  try {
    const publicKey = crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.slice("ed25519:".length) }, format: "jwk" })
    return crypto.verify(null, message, publicKey, Buffer.from(value, "base64url"))
  } catch {
    return false
  }
}

/**
 * Signs a statement of `kind` with `fields`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const sign = (signer: TestKey, kind: Signature.Kind, fields: Readonly<Record<string, unknown>>): Signature.Signature => {
  const bytes = Signature.statement(kind, fields)
  if (bytes === null) throw new Error("Signing.sign: these fields make no canonical statement")
  return { key: signer.key, value: crypto.sign(null, bytes, signer.privateKey).toString("base64url") }
}

/**
 * Whom a project trusts, checked with {@link verify}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const authorityFor = (projectId: string, approvers: ReadonlyArray<Approvers.Approver>): Authority.Authority => ({
  projectId,
  approvers,
  verify
})

/**
 * A receipt signed by `signer` for task `taskId` of `projectId` at `revision` (the spec's or plan's
 * revision for their approvals, `null` otherwise).
 *
 * @since 0.2.0
 * @category constructors
 */
export const receipt = (
  signer: TestKey,
  projectId: string,
  taskId: string,
  revision: number | null,
  unsigned: Omit<Event.Receipt, "signature">
): Event.Receipt => ({
  ...unsigned,
  signature: sign(signer, "ratchet/receipt/1", Authority.receiptFields(projectId, taskId, revision, unsigned))
})

/**
 * A verdict signed by `signer` for run `runId` of task `taskId` of `projectId`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const verdict = (
  signer: TestKey,
  projectId: string,
  taskId: string,
  runId: string,
  unsigned: Omit<Event.AcVerdict, "signature">
): Event.AcVerdict => ({
  ...unsigned,
  signature: sign(signer, "ratchet/verdict/1", Authority.verdictFields(projectId, taskId, runId, unsigned))
})

/**
 * A signer over raw statement bytes, the shape the controller takes for a person's unlocked key
 * (`ApproverKey.Signer`), for approver `id`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const signerOf = (
  signer: TestKey,
  id: string
): { readonly id: string; readonly key: Signature.Key; readonly sign: (message: Uint8Array) => Signature.Signature } => ({
  id,
  key: signer.key,
  sign: (message) => ({ key: signer.key, value: crypto.sign(null, message, signer.privateKey).toString("base64url") })
})
