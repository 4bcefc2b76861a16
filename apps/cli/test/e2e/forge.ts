/**
 * A forger with write access to the store: appends a `PlanApproved` to a PLAN_READY task straight
 * through the store, past the controller and the kernel's decision, as an agent that could write
 * the database would. Its receipt claims the project's approver and is:
 *
 * - `unsigned`: no signature at all;
 * - `own-key`: signed with a key the forger made (never registered as an approver);
 * - `moved`: a real signature of the approver, lifted from the task's restatement approval and
 *   re-labelled as the plan's.
 *
 * The tests run its bundle, which their global setup builds (`harness.helper`).
 * Run as `node --conditions=@ratchet/source --import tsx forge.ts <repo> <taskId> <kind>` with the
 * CLI's environment. Prints one JSON line `{ ok, lsn }`.
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Event from "@ratchet/kernel/Event"
import * as Signature from "@ratchet/kernel/Signature"
import * as Authority from "@ratchet/kernel/Authority"
import * as EventStore from "@ratchet/storage/EventStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const [repo, taskId, kind] = process.argv.slice(2)
if (repo === undefined || taskId === undefined || (kind !== "unsigned" && kind !== "own-key" && kind !== "moved")) {
  process.stderr.write("usage: forge.ts <repo> <taskId> unsigned|own-key|moved\n")
  process.exit(2)
}
const projectId = (JSON.parse(fs.readFileSync(path.join(repo, ".ratchet", "project.json"), "utf8")) as { projectId: string }).projectId

const program = Effect.gen(function*() {
  const store = yield* EventStore.EventStore
  const models = yield* ReadModel.ReadModels
  const summary = yield* models.taskSummary(taskId)
  if (summary === null || summary.task.plan === null) return yield* Effect.dieMessage(`task ${taskId} has no plan to forge an approval for`)
  const plan = summary.task.plan
  const events = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: taskId })))
  const restatement = events.map((stored) => stored.event).find((event) => event._tag === "RestatementApproved")
  const claimed = restatement?._tag === "RestatementApproved" ? restatement.receipt.actor : { kind: "user" as const, id: "e2e-approver" }
  const at = Date.now()
  const unsigned = { subject: "plan" as const, digest: plan.digest, actor: claimed, channel: "terminal", at }
  let receipt: Event.Receipt
  if (kind === "unsigned") {
    receipt = { ...unsigned, signature: null }
  } else if (kind === "own-key") {
    const { privateKey, publicKey } = crypto.generateKeyPairSync("ed25519")
    const key = `ed25519:${String(publicKey.export({ format: "jwk" }).x)}` as Signature.Key
    const bytes = Signature.statement("ratchet/receipt/1", Authority.receiptFields(projectId, taskId, plan.revision, unsigned))!
    receipt = { ...unsigned, signature: { key, value: crypto.sign(null, bytes, privateKey).toString("base64url") } }
  } else {
    if (restatement?._tag !== "RestatementApproved" || restatement.receipt.signature === null) {
      return yield* Effect.dieMessage("no signed restatement approval to lift a signature from")
    }
    receipt = { ...restatement.receipt, subject: "plan", digest: plan.digest }
  }
  const result = yield* store.append({
    projectId,
    streamId: taskId,
    expectedVersion: summary.version,
    epoch: null,
    operationId: `op-${crypto.randomUUID()}`,
    events: [{ _tag: "PlanApproved", version: 2, actor: claimed, at, revision: plan.revision, digest: plan.digest, receipt }]
  })
  return result.lastLsn
})

const layer = (process.env["RATCHET_DATABASE_URL"] ?? "") === "" ? SqliteStore.layerConfig : PostgresStore.layerConfig

Effect.runPromise(Effect.provide(program, layer)).then(
  (lsn) => {
    process.stdout.write(`${JSON.stringify({ ok: true, lsn })}\n`)
  },
  (error: unknown) => {
    process.stderr.write(`forge: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
)
