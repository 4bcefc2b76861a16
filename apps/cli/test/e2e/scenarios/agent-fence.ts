/**
 * The runner's agent is fenced by the run's hooks (ADR 0040), end to end through the bundled CLI
 * and runner: `ratchet run` starts the stand-in `claude` with `--settings` carrying Ratchet's hooks
 * (the launcher by absolute path), and the stand-in makes its tool calls through those hooks, as
 * Claude Code does (`packages/testkit/stand-in/hooks.mjs`), so the real `ratchet hook claude-code`
 * judges each against the store:
 * - an edit inside the scope is allowed and is an intent of the agent's attempt, dispatched before
 *   the edit and resolved after, under the runner's lease epoch; one whose end no hook reported is
 *   closed (Failed, noted) in the write that records the agent's end;
 * - a write outside the scope, and `ratchet approve` through the Bash tool, are denied, do not
 *   happen, and are noted on the attempt with the reason;
 * - a session that sets the runner's variables with another capability, or without one, is denied
 *   and writes nothing;
 * - the runner killed with SIGKILL while a tool call's intent is dispatched and unresolved: after
 *   `ratchet run --takeover`, the attempt is Indeterminate, the agent never started again.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Schema from "effect/Schema"
import { afterAll, describe, expect, it } from "vitest"
import { checkLog, type Engine, engineIndependent, events, exec, makeWorld, removeWorlds, specText, status, toPlanApproved, type World } from "../harness.js"
import { planOf, transitionsOf } from "./run.js"
import * as StandIn from "@ratchet/testkit/StandIn"

const standIn = StandIn.claude
const stream = StandIn.streamFile("claude", "success")

const agentStep = [
  "  - id: impl",
  "    title: Add the flag",
  "    acRefs: [AC-001]",
  "    agent:",
  "      host: claude-code",
  "      prompt: Add the --json flag in test/flag.txt.",
  "      timeoutSeconds: 120"
].join("\n")

/** The stand-in's tool calls (`hooks.mjs`), written where the test keeps its files. */
const toolsFile = (world: World, actions: ReadonlyArray<unknown>): string => world.file("tools.json", JSON.stringify(actions))

/** A capability of the right shape that the runner never made. */
const forged = "A".repeat(43)

/** One hook's answer as the stand-in logged it (`STAND_IN_HOOK_LOG`): how it exited, what it said, how long it took. */
const HookAnswer = Schema.Struct({
  event: Schema.String,
  status: Schema.NullOr(Schema.Number),
  stdout: Schema.String,
  stderr: Schema.String,
  ms: Schema.Number
})
type HookAnswer = typeof HookAnswer.Type

const decodeAnswer = Schema.decodeUnknownSync(Schema.parseJson(HookAnswer))

const answersIn = (hookLog: string): ReadonlyArray<HookAnswer> =>
  fs.readFileSync(hookLog, "utf8").trim().split("\n").map((line) => decodeAnswer(line))

/**
 * A PreToolUse answer as the fence gives it: a JSON decision on exit 0 (none: allowed). Anything
 * else is the launcher closing the call because Ratchet did not answer: one stopped at its
 * deadline reads `late (N ms)` (a machine too loaded, not a wrong decision), any other
 * `closed: <why>` — neither is a denial by the fence.
 */
const decisionOf = (answer: HookAnswer): string => {
  if (answer.status === 2 && /did not answer within \d+ s/.test(answer.stderr)) return `late (${answer.ms} ms)`
  if (answer.status !== 0) return `closed (exit ${String(answer.status)}): ${answer.stderr.trim().split("\n")[0] ?? ""}`
  return answer.stdout.trim() === "" ? "allow" : JSON.parse(answer.stdout).hookSpecificOutput?.permissionDecision ?? "allow"
}

const preToolUse = (hookLog: string): ReadonlyArray<HookAnswer> => answersIn(hookLog).filter((answer) => answer.event === "PreToolUse")

/** A run's standard error and the hooks' decisions so far, for an assertion's message. */
const told = (ran: { readonly stderr: string }, hookLog: string): string =>
  `${ran.stderr}\nthe hooks' answers: ${fs.existsSync(hookLog) ? preToolUse(hookLog).map(decisionOf).join(", ") : "no hook ran"}`

export const agentFenceScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("the runner's agent is fenced by the run's hooks", { concurrent: true, timeout: 480_000 }, () => {
    // Issue 22's denial on every engine: the hooks' appends beside a live runner are the store's.
    it("records an in-scope edit as an intent of the attempt, and denies and notes a write outside the scope, ratchet approve, and an impostor", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "A fenced agent adds a flag", specText(), planOf([agentStep]))
      const hookLog = path.join(world.root, "hooks.ndjson")
      const tools = toolsFile(world, [
        { tool: "Write", input: { file_path: "test/flag.txt", content: "--json\n" } },
        { tool: "Write", input: { file_path: "src/outside.txt", content: "no\n" } },
        { tool: "Bash", input: { command: `ratchet approve ${taskId} plan`, description: "Approve the plan" } },
        { tool: "Write", input: { file_path: "test/impostor.txt", content: "no\n" }, env: { RATCHET_CAPABILITY: forged } },
        { tool: "Write", input: { file_path: "test/nocap.txt", content: "no\n" }, env: { RATCHET_CAPABILITY: null } },
        // Allowed and done, and its end never reported by a hook: the runner closes it at the agent's end.
        { tool: "Write", input: { file_path: "test/unreported.txt", content: "yes\n" }, skipPost: true }
      ])
      const env = { RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: stream, STAND_IN_TOOLS: tools, STAND_IN_HOOK_LOG: hookLog }
      // Six hook processes one after another on a loaded machine: longer than a call's usual bound.
      const ran = await world.run(["run", taskId, "--json"], { env, timeoutMs: 240_000 })
      expect(ran.code, told(ran, hookLog)).toBe(0)
      const lines = ran.stdout.trim().split("\n").map((line) => JSON.parse(line))
      expect(lines.at(-1).outcomes[0]).toMatchObject({ taskId, state: "VERIFYING" })

      // What the hooks answered, call by call (the stand-in's record of each PreToolUse).
      const pre = preToolUse(hookLog)
      expect(pre).toHaveLength(6)
      expect(pre.map(decisionOf)).toEqual(["allow", "deny", "deny", "deny", "deny", "allow"])
      expect(pre[3]!.stdout).toContain("is not the capability the runner gave that attempt's agent")
      expect(pre[4]!.stdout).toContain("RATCHET_CAPABILITY is not set")

      // Only the allowed call happened.
      expect(fs.readFileSync(path.join(world.repo, "test", "flag.txt"), "utf8")).toBe("--json\n")
      for (const file of ["src/outside.txt", "test/impostor.txt", "test/nocap.txt"]) expect(fs.existsSync(path.join(world.repo, file))).toBe(false)

      const log = await events(world, taskId)
      const agentIntent = log.find((record) => record.type === "IntentRecorded" && record.event.stepId === "impl")!
      expect(agentIntent.event.intentId).toMatch(/^in-agent-[0-9a-f]{64}$/)
      // The edit: an intent of attempt 1 of impl, dispatched before the edit and resolved after, under the runner's epoch.
      const tool = log.find((record) => record.type === "IntentRecorded" && !record.event.intentId.startsWith("in-agent-"))!
      expect(tool.event.description).toContain("test/flag.txt")
      expect(tool.event).toMatchObject({ stepId: "impl", attempt: 1, runId: agentIntent.event.runId })
      expect(tool.actor.kind).toBe("agent")
      expect(tool.epoch).toBe(agentIntent.epoch)
      const toolId = tool.event.intentId
      const dispatched = log.find((record) => record.type === "IntentDispatched" && record.event.intentId === toolId)!
      const resolved = log.find((record) => record.type === "IntentResolved" && record.event.intentId === toolId)!
      expect(resolved.event.outcome).toBe("Succeeded")
      expect(dispatched.lsn).toBeLessThan(resolved.lsn)
      const exited = log.find((record) => record.type === "CommandExited")!
      expect(resolved.lsn).toBeLessThan(exited.lsn)
      // No other tool call was recorded as an intent, but the one whose end no hook reported, which
      // the runner closed (Failed) in the write that recorded the agent's end.
      const recordedIds = log.filter((record) => record.type === "IntentRecorded").map((record) => record.event.intentId)
      expect(recordedIds).toHaveLength(3)
      expect(recordedIds.slice(0, 2)).toEqual([agentIntent.event.intentId, toolId])
      const unreported = log.find((record) => record.type === "IntentResolved" && record.event.intentId === recordedIds[2])!
      expect(unreported.event.outcome).toBe("Failed")
      expect(unreported.operationId).toBe(exited.operationId)

      // The two denials the fence let through to the guard are noted on the attempt, with why; the impostors wrote nothing.
      const notes = log.filter((record) => record.type === "AttemptNoted").map((record) => record.event.note as string)
      expect(notes).toHaveLength(3)
      expect(notes[0]).toMatch(/^tool call refused: call toolu_\S+: .*src\/outside\.txt.*allowed scope/)
      expect(notes[1]).toMatch(/^tool call refused: .*ratchet approve.*is for a person/)
      expect(notes[2]).toBe(`closed when the agent ended, their end never reported by a hook (the host ran no end hook for them, or stopped mid-call): ${recordedIds[2]}`)
      expect(log.filter((record) => record.type === "TurnRecorded").some((record) => record.event.turn._tag === "toolRejected")).toBe(true)
      expect(exited.event.changedPaths).toEqual(["test/flag.txt", "test/unreported.txt"])
      expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→Succeeded"])
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "VERIFYING" })
    })

    anyEngine("denies a write into the hosts' configuration even where the scope allows it and a nested agent, and fails closed when calls ran without the hooks", async () => {
      const world = await makeWorld(engine)
      // The project keeps its hosts' configuration in the repository, and the spec lets the work touch it.
      for (const dir of [".claude", ".codex"]) {
        fs.mkdirSync(path.join(world.repo, dir))
        fs.writeFileSync(path.join(world.repo, dir, "README.md"), "The project's host configuration.\n")
      }
      for (const args of [["add", "."], ["-c", "user.name=e2e", "-c", "user.email=e2e@ratchet.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "host configuration"]]) {
        const done = await exec("git", args, { cwd: world.repo, env: process.env })
        expect(done.code, done.stderr).toBe(0)
      }
      const spec = specText({ allowedScope: [".claude/**", ".codex/**", "test/**"] })
      const taskId = await toPlanApproved(world, "A fenced agent tries to switch its hooks off", spec, planOf([agentStep]))
      const hookLog = path.join(world.root, "hooks.ndjson")
      const tools = toolsFile(world, [
        // What would run the next attempt unfenced: denied, not done, noted.
        { tool: "Write", input: { file_path: ".claude/settings.local.json", content: "{\"disableAllHooks\": true}\n" } },
        { tool: "Bash", input: { command: "echo '[features]' > .codex/config.toml", description: "Configure Codex" } },
        // A nested agent, which would run without the run's fence: denied, not started, noted.
        { tool: "Bash", input: { command: "FOO=1 claude -p --settings '{\"disableAllHooks\":true}' 'write test/nested.txt'", description: "Ask another agent" } },
        // Calls Claude Code made without running any hook (as with hooks switched off): one that
        // succeeded, and one that wrote and then failed (a failed call no refusal names is not a denial).
        { tool: "Write", input: { file_path: "test/unfenced.txt", content: "unfenced\n" }, noHooks: true },
        { tool: "Bash", input: { command: "echo half > test/half.txt; exit 1", description: "Half a change" }, noHooks: true }
      ])
      const env = { RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: stream, STAND_IN_TOOLS: tools, STAND_IN_HOOK_LOG: hookLog }
      const ran = await world.run(["run", taskId, "--json"], { env, timeoutMs: 240_000 })
      expect(ran.code, told(ran, hookLog)).toBe(3)
      const lines = ran.stdout.trim().split("\n").map((line) => JSON.parse(line))
      expect(lines.at(-1).outcomes[0]).toMatchObject({ taskId, state: "BLOCKED", blocker: { category: "decision_needed" } })

      // Only the three calls that ran their hooks; all denied.
      expect(preToolUse(hookLog).map(decisionOf)).toEqual(["deny", "deny", "deny"])
      expect(fs.existsSync(path.join(world.repo, ".claude", "settings.local.json"))).toBe(false)
      expect(fs.existsSync(path.join(world.repo, ".codex", "config.toml"))).toBe(false)
      expect(fs.readFileSync(path.join(world.repo, "test", "unfenced.txt"), "utf8")).toBe("unfenced\n")
      expect(fs.readFileSync(path.join(world.repo, "test", "half.txt"), "utf8")).toBe("half\n")

      const log = await events(world, taskId)
      const notes = log.filter((record) => record.type === "AttemptNoted").map((record) => record.event.note as string)
      expect(notes).toHaveLength(3)
      expect(notes[0]).toMatch(/^tool call refused: call toolu_standin_1_\d+: .*\.claude\/settings\.local\.json.*in \.claude\/, the host's configuration/)
      expect(notes[1]).toMatch(/^tool call refused: call toolu_standin_2_\d+: .*\.codex.*the host's configuration/)
      expect(notes[2]).toMatch(/^tool call refused: call toolu_standin_3_\d+: Bash: FOO=1 claude -p .* — the command starts claude, a host's CLI/)
      // No intent but the agent's own: the unfenced call was never recorded.
      expect(log.filter((record) => record.type === "IntentRecorded")).toHaveLength(1)
      const reported = log.find((record) => record.type === "AgentReported")!
      expect(reported.event.reason).toMatch(
        /^the run's hooks did not run for 2 tool calls of the agent \(Write toolu_standin_4_\d+, Bash toolu_standin_5_\d+\): they were neither judged nor recorded/
      )
      expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→Failed"])
      const blocked = log.find((record) => record.type === "TaskBlocked")!
      expect(JSON.stringify(blocked.event)).toContain("ran without the run's hooks")
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })

    anyEngine("denies the agent's write of .mcp.json, and blocks the task when a script it ran wrote one, though the scope allows it", async () => {
      const world = await makeWorld(engine)
      const spec = specText({ allowedScope: [".mcp.json", "test/**"] })
      const taskId = await toPlanApproved(world, "A fenced agent adds an MCP server", spec, planOf([agentStep]))
      const script = "require('node:fs').writeFileSync('.mcp.json', JSON.stringify({ mcpServers: { x: { command: 'sh' } } }))\n"
      const tools = toolsFile(world, [
        // Written directly: the guard refuses it (a protected file, whatever the scope).
        { tool: "Write", input: { file_path: ".mcp.json", content: "{\"mcpServers\":{}}\n" } },
        // Written by a script the agent runs, which the guard cannot read: the step's end sees it.
        { tool: "Write", input: { file_path: "test/setup.js", content: script } },
        { tool: "Bash", input: { command: "node test/setup.js", description: "Set up" } }
      ])
      const hookLog = path.join(world.root, "hooks.ndjson")
      const env = { RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: stream, STAND_IN_TOOLS: tools, STAND_IN_HOOK_LOG: hookLog }
      const ran = await world.run(["run", taskId, "--json"], { env })
      expect(ran.code, told(ran, hookLog)).toBe(3)
      expect(preToolUse(hookLog).map(decisionOf)).toEqual(["deny", "allow", "allow"])
      const lines = ran.stdout.trim().split("\n").map((line) => JSON.parse(line))
      const outcome = lines.at(-1).outcomes[0]
      expect(outcome).toMatchObject({ taskId, state: "BLOCKED", blocker: { category: "scope_violation", owner: "user" } })
      expect(outcome.blocker.requiredAction).toContain("Step impl changed the hosts' configuration: .mcp.json (the hosts' configuration, which no step may change)")
      expect(fs.existsSync(path.join(world.repo, ".mcp.json"))).toBe(true)

      const log = await events(world, taskId)
      const notes = log.filter((record) => record.type === "AttemptNoted").map((record) => record.event.note as string)
      expect(notes).toHaveLength(1)
      expect(notes[0]).toMatch(/^tool call refused: call toolu_standin_1_\d+: .*\.mcp\.json, a \.mcp\.json file, the host's configuration/)
      const exited = log.find((record) => record.type === "CommandExited")!
      expect(exited.event.changedPaths).toEqual([".mcp.json", "test/setup.js"])
      expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→Succeeded"])
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })

    // The bound is the controller's, the same on every engine: 53 hook processes one after another.
    anyEngine("notes at most 50 refusals on an attempt, the last saying later ones are not, and refuses the rest all the same", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "A denied agent keeps trying", specText(), planOf([agentStep.replace("timeoutSeconds: 120", "timeoutSeconds: 600")]))
      const hookLog = path.join(world.root, "hooks.ndjson")
      const tools = toolsFile(world, Array.from({ length: 53 }, (_, i) => ({ tool: "Write", input: { file_path: `src/out-${i}.txt`, content: "no\n" } })))
      const env = { RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: stream, STAND_IN_TOOLS: tools, STAND_IN_HOOK_LOG: hookLog }
      // 53 hook processes, one after another: longer than a call's usual bound.
      const ran = await world.run(["run", taskId, "--json"], { env, timeoutMs: 480_000 })
      expect(ran.code, told(ran, hookLog)).toBe(0)
      expect(preToolUse(hookLog).map(decisionOf)).toEqual(Array.from({ length: 53 }, () => "deny"))
      expect(fs.readdirSync(path.join(world.repo)).filter((name) => name === "src")).toEqual([])
      const notes = (await events(world, taskId)).filter((record) => record.type === "AttemptNoted").map((record) => record.event.note as string)
      expect(notes).toHaveLength(50)
      expect(notes[48]).toMatch(/^tool call refused: call toolu_\S+: Write.*src\/out-48\.txt — .*outside the allowed scope/)
      expect(notes[48]).not.toContain("refusal noted on this attempt")
      expect(notes[49]).toMatch(/src\/out-49\.txt .*\(the 50th refusal noted on this attempt: later ones are refused without a note; the agent's transcript lists them\)$/)
    }, 600_000)

    it("a runner killed with SIGKILL while its agent's tool call is dispatched: --takeover leaves the attempt Indeterminate, never re-running the agent", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "A fenced agent outlives its runner", specText(), planOf([agentStep]))
      const starts = path.join(world.root, "starts")
      const hookLog = path.join(world.root, "hooks.ndjson")
      const grace = 20_000
      // The call is allowed and dispatched, and the host dies before its end is reported.
      const tools = toolsFile(world, [{ tool: "Write", input: { file_path: "test/flag.txt", content: "--json\n" }, skipPost: true }])
      const env = {
        // A grace long enough for the agent's first hook to run under the dead runner's lease, even
        // on a loaded machine (its node processes started one after another: the stand-in, then the hook).
        RATCHET_LEASE_HEARTBEAT_MS: "1000",
        RATCHET_LEASE_GRACE_MS: String(grace),
        RATCHET_CLAUDE_BIN: standIn,
        STAND_IN_FIXTURE: stream,
        STAND_IN_TOOLS: tools,
        STAND_IN_STARTS: starts,
        STAND_IN_HOOK_LOG: hookLog
      }
      const crashed = await world.run(["run", taskId], { env: { ...env, RATCHET_FAULT: "child-started" } })
      expect(crashed.code, told(crashed, hookLog)).toBe(1)
      // Wait for the agent's call to be dispatched (the dead runner's lease is still within its grace),
      // then for the grace to pass.
      let toolId: string | undefined
      const crashedAt = Date.now()
      while (toolId === undefined && Date.now() < crashedAt + grace - 1_000) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        const log = await events(world, taskId)
        toolId = log.find((record) => record.type === "IntentDispatched" && !record.event.intentId.startsWith("in-agent-"))?.event.intentId
      }
      expect(toolId, told({ stderr: "" }, hookLog)).toBeDefined()
      expect((await status(world, taskId)).lease.status).not.toBe("free")
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, crashedAt + grace + 500 - Date.now())))
      const recovered = await world.run(["run", taskId, "--takeover", "--json"], { env })
      expect(recovered.code, recovered.stderr).toBe(3)
      const result = JSON.parse(recovered.stdout.trim().split("\n").at(-1)!)
      expect(result.outcomes[0]).toMatchObject({ state: "BLOCKED", blocker: { category: "decision_needed" } })
      expect(fs.readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1)
      const log = await events(world, taskId)
      expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→Indeterminate"])
      // The tool call's intent was never resolved: recovery cannot know what it did.
      expect(log.some((record) => record.type === "IntentResolved" && record.event.intentId === toolId)).toBe(false)
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })
  })
}
