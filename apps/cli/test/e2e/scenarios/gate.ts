/**
 * `ratchet gate` explains an action; it must never disagree with it. A VERIFYING task is asked,
 * state by state, what stands between it and COMPLETED — by `gate`, `gate --to COMPLETED` and the
 * MCP tool `task_gate` — and then `ratchet done` is run: a HOLD comes with exactly the reasons
 * `done` refuses on (exit 3), a CLEAR with `done` completing the task. The states: no verdict yet;
 * verified, then the work tree changed after the verification (the evidence is stale); verified
 * on the tree that is here.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type Engine, makeWorld, removeWorlds, status, toPlanApproved, type World } from "../harness.js"
import { call, connect } from "./mcp.js"

/** The decision and reason codes of a `gate --json` document (or the `task_gate` tool's). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
const answer = (json: any) => ({ decision: json.decision as string, codes: (json.gate?.reasons ?? []).map((r: { code: string }) => r.code) as Array<string> })

/** What every explanation of VERIFYING → COMPLETED says, with the exit code it came with. */
const explanations = async (world: World, taskId: string) => {
  const plain = await world.run(["gate", taskId, "--json"])
  const to = await world.run(["gate", taskId, "--to", "COMPLETED", "--json"])
  const { client } = await connect(world)
  try {
    const tool = await call(client, "task_gate", { taskId, to: "COMPLETED" })
    return [
      { by: "gate", code: plain.code, ...answer(plain.json) },
      { by: "gate --to COMPLETED", code: to.code, ...answer(to.json) },
      { by: "task_gate", code: tool.json.exitCode as number, ...answer(tool.json) }
    ]
  } finally {
    await client.close()
  }
}

/** Every explanation says what `done`, run right after them, did. */
const agreesWithDone = async (world: World, taskId: string, expected: { readonly code: number; readonly codes: ReadonlyArray<string> }) => {
  const explained = await explanations(world, taskId)
  const done = await world.run(["done", taskId, "--json"])
  expect(done.code, done.stdout + done.stderr).toBe(expected.code)
  const codes = done.code === 0 ? [] : answer(done.json.error).codes
  expect(codes).toEqual(expected.codes)
  for (const one of explained) {
    expect(one, one.by).toEqual({ by: one.by, code: done.code === 0 ? 0 : 3, decision: done.code === 0 ? "CLEAR" : "HOLD", codes })
  }
}

export const gateScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("the gate explains what the action does", { timeout: 300_000 }, () => {
    it("VERIFYING → COMPLETED: gate, gate --to COMPLETED and task_gate agree with done, before verification, on a changed tree and after", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Explain the completion")
      expect((await world.run(["run", taskId])).code).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")

      // No verdict yet: every explanation holds on it, as done does.
      await agreesWithDone(world, taskId, { code: 3, codes: ["missing_evidence"] })

      const verified = await world.verify(taskId)
      expect(verified.code, verified.stdout).toBe(0)
      expect(verified.json.outcome).toBe("APPROVED")

      // The tree changed after the verification: the evidence is about another tree.
      const file = path.join(world.repo, "test", "date.test.js")
      const original = fs.readFileSync(file, "utf8")
      fs.writeFileSync(file, `${original}// changed after verification\n`)
      await agreesWithDone(world, taskId, { code: 3, codes: ["stale_evidence"] })

      // The verified tree again: CLEAR, and done completes.
      fs.writeFileSync(file, original)
      await agreesWithDone(world, taskId, { code: 0, codes: [] })
      expect((await status(world, taskId)).state).toBe("COMPLETED")
    })
  })
}
