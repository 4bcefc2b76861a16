/**
 * Approval keys for the kernel's tests: Ed25519 key pairs made from fixed seeds with the platform's
 * crypto (the kernel itself never signs), the `Verify` function the controller supplies in
 * production, and signing helpers for receipts, verdicts and approvers-chain entries. The kernel is
 * tested against real signatures, never a stand-in that says yes.
 */
import * as crypto from "node:crypto"
import * as Approvers from "../src/Approvers.js"
import * as Authority from "../src/Authority.js"
import type * as Event from "../src/Event.js"
import * as Signature from "../src/Signature.js"

/** The DER prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows it. */
const pkcs8Prefix = Buffer.from("302e020100300506032b657004220420", "hex")

export interface TestKey {
  readonly key: Signature.Key
  readonly privateKey: crypto.KeyObject
}

/** A key pair from a one-byte seed, so every run of the tests has the same keys. */
export const keyOf = (seed: number): TestKey => {
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([pkcs8Prefix, Buffer.alloc(32, seed)]),
    format: "der",
    type: "pkcs8"
  })
  const jwk = crypto.createPublicKey(privateKey).export({ format: "jwk" })
  return { key: `ed25519:${jwk.x as string}`, privateKey }
}

/** Ed25519 verification with the platform's crypto; false (never a throw) on malformed input. */
export const verify: Signature.Verify = (key, message, value) => {
  try {
    const publicKey = crypto.createPublicKey({
      key: { kty: "OKP", crv: "Ed25519", x: key.slice("ed25519:".length) },
      format: "jwk"
    })
    return crypto.verify(null, message, publicKey, Buffer.from(value, "base64url"))
  } catch {
    return false
  }
}

/** Signs a statement of `kind` with `fields`. */
export const sign = (signer: TestKey, kind: Signature.Kind, fields: Readonly<Record<string, unknown>>): Signature.Signature => {
  const bytes = Signature.statement(kind, fields)
  if (bytes === null) throw new Error("the statement cannot be built")
  return { key: signer.key, value: crypto.sign(null, bytes, signer.privateKey).toString("base64url") }
}

/** The project's approvers in these tests: alice approves, vera verifies. */
export const alice = keyOf(1)
export const vera = keyOf(2)
/** A key nobody registered. */
export const mallory = keyOf(3)

export const aliceApprover: Approvers.Approver = { id: "alice", key: alice.key }
export const veraApprover: Approvers.Approver = { id: "vera", key: vera.key }

/** Whom the tests' project trusts. */
export const authorityFor = (projectId: string, approvers: ReadonlyArray<Approvers.Approver> = [aliceApprover, veraApprover]): Authority.Authority => ({
  projectId,
  approvers,
  verify
})

/** A receipt signed by `signer` for task `taskId` of `projectId` at `revision`. */
export const signReceipt = (
  signer: TestKey,
  projectId: string,
  taskId: string,
  revision: number | null,
  receipt: Omit<Event.Receipt, "signature">
): Event.Receipt => ({
  ...receipt,
  signature: sign(signer, "ratchet/receipt/1", Authority.receiptFields(projectId, taskId, revision, receipt))
})

/** A verdict signed by `signer` for run `runId` of task `taskId` of `projectId`. */
export const signVerdict = (
  signer: TestKey,
  projectId: string,
  taskId: string,
  runId: string,
  verdict: Omit<Event.AcVerdict, "signature">
): Event.AcVerdict => ({
  ...verdict,
  signature: sign(signer, "ratchet/verdict/1", Authority.verdictFields(projectId, taskId, runId, verdict))
})

/** An approvers-chain entry signed by `signer`. */
export const signEntry = (signer: TestKey, projectId: string, entry: Omit<Approvers.Entry, "signature">): Approvers.Entry => ({
  ...entry,
  signature: sign(signer, "ratchet/approvers-entry/1", Approvers.entryFields(projectId, entry))
})
