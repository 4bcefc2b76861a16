/**
 * Agent steps end to end (ADR 0039): `ratchet run` on a plan whose step is done by Claude Code,
 * through the bundled CLI and runner, with a stand-in `claude` (`packages/testkit/stand-in/`) that
 * checks the command line and prints a recorded stream of Claude Code's documented format. The
 * run reaches VERIFYING with the intent dispatched before the agent started, the stream's turn
 * events, the exit and what the host reported (session, model, usage, cost, the transcript blob)
 * in the log, which folds cleanly; on Codex, `codex exec --json` in the workspace-write sandbox
 * does the same. An agent that hangs past the step's timeout has its process
 * group killed, and the attempt is TimedOut (twice the same way: BLOCKED, a repeated failure). And the runner killed with SIGKILL while its agent runs: the
 * agent runs on, and `ratchet run --takeover` after the lease's grace waits for it, never starts it
 * again, and leaves the attempt Indeterminate with the task BLOCKED for a person.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { checkLog, type Engine, events, gone, makeWorld, removeWorlds, specText, status, toPlanApproved } from "../harness.js"
import { planOf, transitionsOf, typesOf } from "./run.js"
import * as StandIn from "@ratchet/testkit/StandIn"

const standIn = StandIn.claude
const stream = StandIn.streamFile("claude", "success")

/** One agent step on Claude Code (indented for `planOf`). */
const agentStep = [
  "  - id: impl",
  "    title: Add the flag",
  "    acRefs: [AC-001]",
  "    agent:",
  "      host: claude-code",
  "      prompt: Add the --json flag in test/flag.txt.",
  "      timeoutSeconds: 60"
].join("\n")

/** Short leases, so a takeover is allowed a moment after the runner died. */
const leaseEnv = { RATCHET_LEASE_HEARTBEAT_MS: "100", RATCHET_LEASE_GRACE_MS: "300" }

export const agentScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("ratchet run with an agent step", { concurrent: true, timeout: 240_000 }, () => {
    it("starts the host, records its stream, and reaches VERIFYING", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "An agent adds a flag", specText(), planOf([agentStep]))
      const env = { RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: stream, STAND_IN_WRITE: "test/flag.txt" }
      const ran = await world.run(["run", taskId, "--json"], { env })
      expect(ran.code, ran.stderr).toBe(0)
      const lines = ran.stdout.trim().split("\n").map((line) => JSON.parse(line))
      expect(lines.at(-1).outcomes[0]).toMatchObject({ taskId, state: "VERIFYING", stop: "verifying" })
      expect(lines.find((line) => line.type === "step")).toMatchObject({ stepId: "impl", command: "agent claude-code: Add the --json flag in test/flag.txt." })

      const log = await events(world, taskId)
      const own = typesOf(log.filter((record) => record.event.stepId === "impl" || record.type === "IntentDispatched"))
      expect(own.slice(0, 4)).toEqual(["AttemptScheduled", "AttemptTransitioned", "IntentRecorded", "IntentDispatched"])
      expect(own.filter((type) => type === "TurnRecorded")).toHaveLength(11)
      expect(own.slice(-3)).toEqual(["CommandExited", "AttemptTransitioned", "AgentReported"])
      expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→Succeeded"])
      const reported = log.find((record) => record.type === "AgentReported")!.event
      expect(reported).toMatchObject({ host: "claude-code", model: "claude-sonnet-4-5-20250929", costUsd: 0.0421, reason: null })
      expect(reported.transcriptRef).toMatch(/^sha256:/)
      expect(log.find((record) => record.type === "CommandExited")!.event).toMatchObject({ exitCode: 0, changedPaths: ["test/flag.txt"] })
      expect(fs.readFileSync(path.join(world.repo, "test", "flag.txt"), "utf8")).toBe("--json\n")
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "VERIFYING" })

      // The plain log shows the attempt's report, its turns and its exit, one line each.
      const shown = await world.run(["log", taskId])
      expect(shown.code, shown.stderr).toBe(0)
      const text = shown.stdout.split("\n")
      const session = reported.sessionId as string
      expect(text.find((line) => line.includes("AgentReported"))).toMatch(
        new RegExp(`AgentReported +runner:.*  impl#1; claude-code; session ${session}; model claude-sonnet-4-5-20250929; 3 turns; tokens 1200 in / 340 out; cost \\$0\\.0421; transcript sha256:[0-9a-f]+$`)
      )
      expect(text.filter((line) => / TurnRecorded +runner:.* {2}impl#1 [a-zA-Z]+$/.test(line))).toHaveLength(11)
      expect(text.find((line) => line.includes("CommandExited"))).toMatch(/impl#1; exit 0; \d+ ms; 1 path changed$/)
    })

    it("starts codex exec in the workspace-write sandbox, records its stream, and reaches VERIFYING", async () => {
      const world = await makeWorld(engine)
      const codexStep = agentStep.replace("host: claude-code", "host: codex")
      const taskId = await toPlanApproved(world, "Codex adds a flag", specText(), planOf([codexStep]))
      const record = path.join(world.root, "record.json")
      const env = { RATCHET_CODEX_BIN: StandIn.codex, STAND_IN_FIXTURE: StandIn.streamFile("codex", "success"), STAND_IN_WRITE: "test/flag.txt", STAND_IN_RECORD: record }
      const ran = await world.run(["run", taskId, "--json"], { env })
      expect(ran.code, ran.stderr).toBe(0)
      const lines = ran.stdout.trim().split("\n").map((line) => JSON.parse(line))
      expect(lines.at(-1).outcomes[0]).toMatchObject({ taskId, state: "VERIFYING", stop: "verifying" })
      const seen = JSON.parse(fs.readFileSync(record, "utf8")) as { args: Array<string> }
      expect(seen.args.slice(0, 4)).toEqual(["exec", "--json", "--sandbox", "workspace-write"])
      expect(seen.args).not.toContain("--dangerously-bypass-approvals-and-sandbox")
      const log = await events(world, taskId)
      expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→Succeeded"])
      const reported = log.find((record) => record.type === "AgentReported")!.event
      expect(reported).toMatchObject({ host: "codex", reason: null })
      expect(reported.transcriptRef).toMatch(/^sha256:/)
      expect(log.filter((record) => record.type === "TurnRecorded").length).toBeGreaterThan(0)
      expect(fs.readFileSync(path.join(world.repo, "test", "flag.txt"), "utf8")).toBe("--json\n")
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "VERIFYING" })
    })

    it("an agent that hangs past its step's timeout: its process group is killed and the attempt is TimedOut", async () => {
      const world = await makeWorld(engine)
      // 5 s: room for the stand-in's start on a loaded machine, so that it has recorded its pids.
      const taskId = await toPlanApproved(world, "An agent hangs", specText(), planOf([agentStep.replace("timeoutSeconds: 60", "timeoutSeconds: 5")]))
      const record = path.join(world.root, "record.json")
      const env = { RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: stream, STAND_IN_HANG_SECONDS: "600", STAND_IN_RECORD: record }
      const ran = await world.run(["run", taskId, "--json"], { env })
      expect(ran.code, ran.stderr).toBe(3)
      const lines = ran.stdout.trim().split("\n").map((line) => JSON.parse(line))
      // Timed out twice the same way: the successor's budget is not spent on a repeated failure.
      expect(lines.at(-1).outcomes[0]).toMatchObject({ taskId, state: "BLOCKED", blocker: { category: "repeated_failure" } })
      const log = await events(world, taskId)
      expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→TimedOut", "impl#2:Pending→Running", "impl#2:Running→TimedOut"])
      const exits = log.filter((record) => record.type === "CommandExited").map((record) => record.event)
      expect(exits.map((exited) => [exited.timedOut, exited.exitCode])).toEqual([[true, null], [true, null]])
      for (const reported of log.filter((record) => record.type === "AgentReported")) {
        expect(reported.event.reason).toContain("past its timeout of 5 s and its process group was killed")
      }
      // The last attempt's host and the child it started in its group are gone.
      const seen = JSON.parse(fs.readFileSync(record, "utf8")) as { pid: number; child: number }
      for (const pid of [seen.pid, seen.child]) expect(gone(pid), `process ${pid}`).toBe(true)
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })

    it("a runner killed with SIGKILL while its agent runs: --takeover waits for the agent, never re-runs it, and BLOCKS on the Indeterminate attempt", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "An agent outlives its runner", specText(), planOf([agentStep]))
      const starts = path.join(world.root, "starts")
      const hookLog = path.join(world.root, "hooks.ndjson")
      const env = {
        ...leaseEnv,
        RATCHET_CLAUDE_BIN: standIn,
        STAND_IN_FIXTURE: stream,
        STAND_IN_WRITE: "test/flag.txt",
        STAND_IN_HANG_SECONDS: "2",
        STAND_IN_STARTS: starts,
        STAND_IN_HOOK_LOG: hookLog
      }
      const crashed = await world.run(["run", taskId], { env: { ...env, RATCHET_FAULT: "child-started" } })
      expect(crashed.code, crashed.stderr).toBe(1)
      expect((await status(world, taskId)).lease.status).not.toBe("free")
      await new Promise((resolve) => setTimeout(resolve, 400))
      const recovered = await world.run(["run", taskId, "--takeover", "--json"], { env })
      expect(recovered.code, recovered.stderr).toBe(3)
      const result = JSON.parse(recovered.stdout.trim().split("\n").at(-1)!)
      expect(result.outcomes[0]).toMatchObject({ state: "BLOCKED", blocker: { category: "decision_needed" } })
      expect(result.outcomes[0].blocker.requiredAction).toContain(`ratchet unblock ${taskId} --resolve impl succeeded|failed`)
      // The agent ran once, through its edit, and was not started again. Its edit went through the
      // run's hooks, which allow it only while the dead runner's lease is within its grace (ADR 0040):
      // whether it was allowed depends on how fast the hook started, so only that it was judged is checked.
      expect(fs.readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1)
      const judged = fs.readFileSync(hookLog, "utf8").trim().split("\n").map((line) => JSON.parse(line))
      expect(judged.filter((answer) => answer.event === "PreToolUse")).toHaveLength(1)
      const log = await events(world, taskId)
      expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→Indeterminate"])
      expect(typesOf(log)).not.toContain("AgentReported")
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })
  })
}
