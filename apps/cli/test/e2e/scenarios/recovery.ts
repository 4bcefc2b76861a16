/**
 * Scenarios 4 and 6: going back. A preflight that finds a wrong assumption in the contract holds
 * the plan until the task is reopened and the spec corrected (an allowed scope naming what the task
 * will create is no wrong assumption: it is a permission); a FAILED task (driven there through
 * the store, as a runner would) reopens only with the user's receipt typed on a terminal.
 */
import { afterAll, describe, expect, it } from "vitest"
import {
  approve,
  approveOk,
  approverId,
  confirmationOf,
  type Engine,
  events,
  failThroughStore,
  makeWorld,
  passphrase,
  planText,
  removeWorlds,
  specText,
  status,
  toPlanApproved,
  toSpecReady,
  wrongConfirmation
} from "../harness.js"

export const recovery = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("recovery", { concurrent: true, timeout: 240_000 }, () => {
    it("4b. an allowed scope naming what the task will create is a permission: the plan is not held; a path with nowhere to go is", async () => {
      const world = await makeWorld(engine)
      const creating = specText({ allowedScope: ["greet.sh", "notes/", "notes/today.md", "test/**"] })
      const taskId = await toSpecReady(world, "Add a greeting script and its notes", creating)
      await approveOk(world, taskId, "spec")
      const preflight = await world.run(["preflight", taskId, "--json"])
      expect(preflight.code).toBe(0)
      expect(preflight.json.observation).toMatchObject({ missingPaths: [], invalidScopes: [] })
      const planned = await world.run(["plan", taskId, "--file", world.file("plan.yaml", planText()), "--json"])
      expect(planned.code, planned.stdout).toBe(0)
      expect((await status(world, taskId)).state).toBe("PLAN_READY")

      // Nowhere to go: its directory is not there and no allowed path grants it.
      const nowhere = await toSpecReady(world, "Write into a directory nobody makes", specText({ allowedScope: ["nowhere/deep/file.md"] }))
      await approveOk(world, nowhere, "spec")
      const found = await world.run(["preflight", nowhere, "--json"])
      expect(found.json.observation.invalidScopes).toEqual(["allowedScope: nowhere/deep/file.md (nowhere/deep/file.md does not exist, nor does its directory nowhere/deep)"])
      const held = await world.run(["plan", nowhere, "--file", world.file("plan-2.yaml", planText()), "--json"])
      expect(held.code).toBe(3)
      expect(held.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["preflight_wrong_assumption"])
    })

    it("4. a preflight that finds a missing path holds the plan until the task is reopened and the spec corrected", async () => {
      const world = await makeWorld(engine)
      const wrong = specText({ relevantPaths: ["test/date.test.js", "src/legacy/date.js"] })
      const taskId = await toSpecReady(world, "Make the flaky date test deterministic", wrong)
      await approveOk(world, taskId, "spec")

      // the observation is recorded, whatever it finds
      const preflight = await world.run(["preflight", taskId, "--json"])
      expect(preflight.code).toBe(0)
      expect(preflight.json).toMatchObject({ state: "PREFLIGHT", events: ["PreflightRecorded"] })
      expect(preflight.json.observation).toMatchObject({ missingPaths: ["src/legacy/date.js"], invalidScopes: [] })
      expect((await status(world, taskId)).preflight.missingPaths).toEqual(["src/legacy/date.js"])
      const text = await world.ok(["preflight", taskId])
      expect(text.stdout).toContain("missing: src/legacy/date.js")

      // the plan is held: the contract assumes what the repository does not hold
      const before = (await events(world, taskId)).length
      const held = await world.run(["plan", taskId, "--file", world.file("plan.yaml", planText()), "--json"])
      expect(held.code).toBe(3)
      expect(held.json.error._tag).toBe("@ratchet/kernel/TaskCommandHeld")
      expect(held.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["preflight_wrong_assumption"])
      expect(held.json.error.gate.reasons[0].message).toContain("src/legacy/date.js")
      const actions = held.json.error.gate.requiredActions.map((a: { command?: string }) => a.command ?? "").join("\n")
      expect(actions).toContain(`ratchet reopen ${taskId}`)
      expect(await events(world, taskId)).toHaveLength(before)

      // reopen (from PREFLIGHT no receipt is needed), then the corrected spec
      const reopened = await world.run(["reopen", taskId, "--reason", "src/legacy does not exist; the context was wrong", "--json"])
      expect(reopened.code).toBe(0)
      expect(reopened.json).toMatchObject({ state: "REOPENED", events: ["TaskReopened"] })
      const log = await events(world, taskId)
      expect(log[log.length - 1]?.event).toMatchObject({ from: "PREFLIGHT", reason: "src/legacy does not exist; the context was wrong" })
      expect(log[log.length - 1]?.event.receipt).toBeUndefined()

      const corrected = await world.run(["spec", taskId, "--file", world.file("corrected.md", specText()), "--json"])
      expect(corrected.code).toBe(0)
      expect(corrected.json).toMatchObject({ state: "SPEC_READY", events: ["SpecProposed"], changed: ["context"] })
      expect((await status(world, taskId)).digests.specApproved).toBeNull()
      await approveOk(world, taskId, "spec")
      const clean = await world.ok(["preflight", taskId, "--json"])
      expect(clean.json.observation).toMatchObject({ missingPaths: [], invalidScopes: [] })
      const planned = await world.run(["plan", taskId, "--file", world.file("plan.yaml", planText()), "--json"])
      expect(planned.code).toBe(0)
      expect(planned.json.state).toBe("PLAN_READY")
    })

    it("6. a FAILED task reopens only with a receipt typed on a terminal; a wrong confirmation writes nothing", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Make the flaky date test deterministic")
      const specDigest = (await status(world, taskId)).digests.spec as string
      const planned = (await events(world, taskId)).length

      // the runner's three transactions: lease + run start, fail, release
      await failThroughStore(world, taskId)
      const failed = await status(world, taskId)
      expect(failed).toMatchObject({ state: "FAILED", terminal: false, lease: { status: "free" } })
      const runLog = (await events(world, taskId)).slice(planned)
      expect(runLog.map((record) => [record.type, record.epoch, record.actor.kind])).toEqual([
        ["RunStarted", 1, "runner"],
        ["LeaseAcquired", 1, "runner"],
        ["TaskFailed", 1, "runner"],
        ["LeaseReleased", 1, "runner"]
      ])
      const before = planned + runLog.length

      // a contract change while the run lineage stands is refused; the action is a reopen
      const semantic = world.file("failed-spec.md", specText({ constraints: ["Keep the public API"] }))
      const changed = await world.run(["spec", taskId, "--file", semantic, "--json"])
      expect(changed.code).toBe(2)
      expect(changed.json.error).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", code: "contract_change_requires_reopen" })
      expect(changed.json.error.action).toContain(`ratchet reopen ${taskId}`)
      expect(await events(world, taskId)).toHaveLength(before)

      // off a terminal: HOLD (not typed, not signed), nothing written
      const piped = await world.run(["reopen", taskId, "--reason", "the run cannot be recovered", "--json"])
      expect(piped.code).toBe(3)
      expect(piped.json.error._tag).toBe("@ratchet/kernel/TaskCommandHeld")
      expect(piped.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["approval_requires_terminal", "receipt_unsigned"])
      expect(await events(world, taskId)).toHaveLength(before)

      // on a terminal, the wrong characters: refused, nothing written
      const confirmation = confirmationOf(specDigest)
      const wrong = await world.tty(["reopen", taskId, "--reason", "the run cannot be recovered", "--json"], `${wrongConfirmation(confirmation)}\n`)
      expect(wrong.code).toBe(2)
      expect(wrong.json).toMatchObject({ ok: false, exitCode: 2, error: { _tag: "@ratchet/controller/InvalidRequest", field: "confirmation" } })
      expect(wrong.json.error.message).toContain("nothing was approved")
      expect(await events(world, taskId)).toHaveLength(before)
      expect((await status(world, taskId)).state).toBe("FAILED")

      // the right characters and the approval key's passphrase: REOPENED, with a signed receipt bound to the spec digest
      const right = await world.tty(["reopen", taskId, "--reason", "the run cannot be recovered", "--json"], `${confirmation}\n${passphrase}\n`)
      expect(right.code).toBe(0)
      expect(right.stdout).toContain(specDigest)
      expect(right.json).toMatchObject({ ok: true, state: "REOPENED", events: ["TaskReopened"] })
      const log = await events(world, taskId)
      expect(log).toHaveLength(before + 1)
      const reopened = log[log.length - 1]
      expect(reopened?.type).toBe("TaskReopened")
      expect(reopened?.event).toMatchObject({ from: "FAILED", reason: "the run cannot be recovered" })
      expect(reopened?.event.receipt).toMatchObject({ subject: "reopen", channel: "terminal", digest: specDigest, actor: { kind: "user", id: approverId } })
      expect(reopened?.event.receipt.signature).not.toBeNull()
      expect(reopened?.actor).toEqual({ kind: "user", id: approverId })

      // and the approval of the reopened contract is a new one
      await world.ok(["spec", taskId, "--file", world.file("again.md", specText())])
      const reapproved = await approve(world, taskId, "spec")
      expect(reapproved.code).toBe(0)
      expect(reapproved.json.state).toBe("SPEC_APPROVED")
    })
  })
}
