/**
 * Scenarios 5 and 7: the writer lease. Two writers racing for it (exactly one wins; the other is
 * told who holds it, and writes need the holder's epoch); a cancelled task told apart from an
 * expired lease (the first is terminal, the second only waits for an explicit takeover).
 */
import { setTimeout as sleep } from "node:timers/promises"
import { afterAll, describe, expect, it } from "vitest"
import { createTask, type Engine, events, makeWorld, removeWorlds, status } from "../harness.js"

export const lease = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("lease", { concurrent: true, timeout: 240_000 }, () => {
    it("5. two writers race for the lease: one wins, the other is told who holds it; writes need its epoch", async () => {
      const world = await makeWorld(engine)
      const taskId = await createTask(world, "Make the flaky date test deterministic")

      const raced = await Promise.all([
        world.run(["lease", "acquire", taskId, "--session", "writer-a", "--json"]),
        world.run(["lease", "acquire", taskId, "--session", "writer-b", "--json"])
      ])
      expect(raced.map((result) => result.code).sort()).toEqual([0, 4])
      const winner = raced.find((result) => result.code === 0)!
      const loser = raced.find((result) => result.code === 4)!
      expect(winner.json.lease).toMatchObject({ taskId, epoch: 1, owner: { host: "cli" } })
      const session = winner.json.lease.owner.sessionRef as string
      expect(["writer-a", "writer-b"]).toContain(session)
      expect(loser.json).toMatchObject({ ok: false, exitCode: 4, error: { _tag: "@ratchet/lease/LeaseHeld", epoch: 1 } })
      expect(loser.json.error.holder).toMatchObject({ pid: winner.json.lease.owner.pid, sessionRef: session })
      expect(loser.json.error.message).toContain(`pid ${winner.json.lease.owner.pid}`)
      expect((await world.ok(["lease", "show", taskId, "--json"])).json.lease).toMatchObject({ status: "held", epoch: 1 })
      const before = (await events(world, taskId)).length

      // a write without the epoch is a conflict naming the holder; nothing is written
      const unfenced = await world.run(["brief", taskId, "ask", "Which timezone?", "--json"])
      expect(unfenced.code).toBe(4)
      expect(unfenced.json.error).toMatchObject({ _tag: "@ratchet/controller/LeaseConflict", presented: null, epoch: 1, held: true })
      expect(unfenced.json.error.message).toContain(`session ${session}`)
      expect(unfenced.json.error.message).toContain("--lease-epoch 1")
      const stale = await world.run(["brief", taskId, "ask", "Which timezone?", "--lease-epoch", "2", "--json"])
      expect(stale.code).toBe(4)
      expect(stale.json.error).toMatchObject({ _tag: "@ratchet/controller/LeaseConflict", presented: 2, epoch: 1 })
      expect(await events(world, taskId)).toHaveLength(before)

      // with the held epoch it is written, under that epoch
      const fenced = await world.run(["brief", taskId, "ask", "Which timezone?", "--lease-epoch", "1", "--json"])
      expect(fenced.code).toBe(0)
      expect(fenced.json.events).toEqual(["QuestionAsked"])
      const log = await events(world, taskId)
      expect(log[log.length - 1]).toMatchObject({ type: "QuestionAsked", epoch: 1 })

      const released = await world.run(["lease", "release", taskId, "--epoch", "1", "--json"])
      expect(released.code).toBe(0)
      expect(released.json).toMatchObject({ ok: true, released: true, epoch: 1 })
      expect((await status(world, taskId)).lease).toMatchObject({ status: "free" })
      const after = await world.run(["brief", taskId, "ask", "Which locale?", "--json"])
      expect(after.code).toBe(0)
      expect((await events(world, taskId)).map((record) => record.type).slice(-3)).toEqual(["QuestionAsked", "LeaseReleased", "QuestionAsked"])
    })

    it("7. a cancelled task is terminal; an expired lease leaves the task as it was until an explicit takeover", async () => {
      const world = await makeWorld(engine)

      // A: cancelled
      const a = await createTask(world, "Task A: cancelled")
      const cancelled = await world.run(["cancel", a, "--reason", "superseded", "--json"])
      expect(cancelled.code).toBe(0)
      expect(cancelled.json).toMatchObject({ state: "CANCELLED", events: ["TaskCancelled"] })
      expect(await status(world, a)).toMatchObject({ state: "CANCELLED", terminal: true, lease: { status: "free" } })
      const afterCancel = (await events(world, a)).length
      for (const write of [["brief", a, "ask", "Still there?"], ["pause", a], ["cancel", a, "--reason", "twice"]]) {
        const refused = await world.run([...write, "--json"])
        expect(refused.code, write.join(" ")).toBe(2)
        expect(refused.json.error).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", code: "terminal_state", state: "CANCELLED" })
        expect(refused.json.error.reason).toContain("terminal")
      }
      expect(await events(world, a)).toHaveLength(afterCancel)

      // B: a lease whose grace runs out
      const b = await createTask(world, "Task B: an expired lease")
      const acquired = await world.run(["lease", "acquire", b, "--json"], {
        env: { RATCHET_LEASE_HEARTBEAT_MS: "100", RATCHET_LEASE_GRACE_MS: "200" }
      })
      expect(acquired.code).toBe(0)
      expect(acquired.json.lease).toMatchObject({ epoch: 1, heartbeatMs: 100, graceMs: 200 })
      const holder = acquired.json.lease.owner as { pid: number }
      const deadline = acquired.json.lease.deadline as number
      // past the grace deadline (by the store's clock, which status reads: poll a little if it lags ours)
      await sleep(Math.max(0, deadline - Date.now()) + 300)
      let expired = await status(world, b)
      for (let tries = 0; expired.lease.status !== "expired" && tries < 20; tries++) {
        await sleep(250)
        expired = await status(world, b)
      }
      expect(expired).toMatchObject({ state: "INTERVIEWING", terminal: false, lease: { status: "expired", epoch: 1, deadline } })
      expect(expired.lease.holder.pid).toBe(holder.pid)
      const unfenced = await world.run(["brief", b, "ask", "Anyone there?", "--json"])
      expect(unfenced.code).toBe(4)
      expect(unfenced.json.error).toMatchObject({ _tag: "@ratchet/controller/LeaseConflict", held: true, epoch: 1 })
      const acquire = await world.run(["lease", "acquire", b, "--json"])
      expect(acquire.code).toBe(4)
      expect(acquire.json.error._tag).toBe("@ratchet/lease/LeaseHeld")
      expect(acquire.json.error.message).toContain(`ratchet lease takeover ${b}`)

      const takeover = await world.run(["lease", "takeover", b])
      expect(takeover.code).toBe(0)
      expect(takeover.stdout).toContain(`Took over the lease of ${b}: epoch 1 → 2, displaced cli`)
      expect(takeover.stdout).toContain(`pid ${holder.pid}`)
      const shown = await world.ok(["lease", "show", b, "--json"])
      expect(shown.json.lease).toMatchObject({ status: "held", epoch: 2 })
      expect(shown.json.lease.holder.pid).not.toBe(holder.pid)
      const log = await events(world, b)
      // appended under the epoch it displaces (the fence it passed), naming the new one
      expect(log[log.length - 1]).toMatchObject({ type: "LeaseTakenOver", epoch: 1, event: { epoch: 2, displaced: { pid: holder.pid } } })
      expect((await status(world, b)).state).toBe("INTERVIEWING")

      // the displaced epoch is fenced off; the new one writes
      const late = await world.run(["brief", b, "ask", "Late write?", "--lease-epoch", "1", "--json"])
      expect(late.code).toBe(4)
      const current = await world.run(["brief", b, "ask", "Which timezone?", "--lease-epoch", "2", "--json"])
      expect(current.code).toBe(0)
    })
  })
}
