/**
 * The runner gives an agent step's host the run's hooks and its capability (ADR 0040), over a real
 * SQLite store and a git checkout, with the stand-in `claude` recording what it was started with:
 * the hooks' arguments come ahead of Claude Code's own, the capability is in the agent's
 * environment only, and its SHA-256 is the attempt's intent id, so the store never holds it; and a
 * host whose hooks cannot be given is not started, the attempt failing with the reason.
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type * as AgentHooks from "@ratchet/controller/AgentHooks"
import * as Controller from "@ratchet/controller/Controller"
import * as Runner from "@ratchet/controller/Runner"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as EventStore from "@ratchet/storage/EventStore"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Signing from "@ratchet/testkit/Signing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Wiring from "../src/Wiring.js"
import * as StandIn from "@ratchet/testkit/StandIn"

const standIn = StandIn.claude
const finished = StandIn.streamFile("claude", "success")

const made: Array<string> = []
const temp = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(process.env["TMPDIR"] ?? "/tmp", "ratchet-agent-hooks-run-")))
  made.push(dir)
  return dir
}
const saved = new Map<string, string | undefined>()
const setEnv = (values: Record<string, string | undefined>) => {
  for (const [key, value] of Object.entries(values)) {
    if (!saved.has(key)) saved.set(key, process.env[key])
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
}
afterEach(() => {
  for (const [key, value] of saved) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
  saved.clear()
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const person: Event.Actor = { kind: "user", id: "ana" }
const asPerson: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(7), person.id) }

const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", ...args], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })

const checkout = () => {
  const root = temp()
  fs.mkdirSync(path.join(root, "src"))
  fs.writeFileSync(path.join(root, "src", "list.txt"), "list\n")
  git(root, "init", "-q")
  git(root, "add", "-A")
  git(root, "commit", "-q", "-m", "start")
  return root
}

const layerOf = (root: string, home: string) => {
  const store = SqliteStore.layer({ directory: home })
  const leases = LeaseManager.layer({ heartbeatMs: 60_000, graceMs: 120_000 }).pipe(Layer.provide(store))
  const project = {
    root,
    projectFile: path.join(root, ".ratchet", "project.json"),
    project: { schemaVersion: 1 as const, projectId: "prj-hooks", displayName: "hooks", createdAt: "2026-12-06T00:00:00.000Z" },
    workspaceId: "ws-here",
    git: true
  }
  return Layer.provideMerge(Controller.layer, Layer.mergeAll(store, leases, Layer.succeed(Controller.Project, project)))
}

const spec = [
  "---",
  "goal: Add a flag",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: The flag works",
  "    required: true",
  "    verify: { command: \"test -f src/flag.txt\" }",
  "execution:",
  "  allowedScope: [\"src/**\"]",
  "  retry: { maxSuccessors: 0 }",
  "---",
  ""
].join("\n")

const plan = ["steps:", "  - id: impl", "    title: Implement", "    acRefs: [AC-001]", "    agent:", "      host: claude-code", "      prompt: Add the flag.", "      timeoutSeconds: 60", ""].join("\n")

const approvedAndRun = (root: string, home: string, agentHooks: AgentHooks.Installers) =>
  Effect.gen(function*() {
    const c = yield* Controller.Controller
    const files = temp()
    yield* c.approvers.register(asPerson.signer!)
    git(root, "add", ".ratchet/approvers.json")
    git(root, "commit", "-q", "-m", "approvers")
    const taskId = (yield* c.createTask({ goal: "Add a flag" }, asPerson)).task.taskId
    const approve = (subject: "restatement" | "spec" | "plan") =>
      Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, asPerson))
    yield* c.restate(taskId, "Add the flag.", asPerson)
    yield* approve("restatement")
    yield* c.closeBrief(taskId, asPerson)
    fs.writeFileSync(path.join(files, "spec.md"), spec)
    yield* c.proposeSpec(taskId, path.join(files, "spec.md"), asPerson)
    yield* approve("spec")
    yield* c.preflight(taskId, asPerson)
    fs.writeFileSync(path.join(files, "plan.yaml"), plan)
    yield* c.proposePlan(taskId, path.join(files, "plan.yaml"), asPerson)
    yield* approve("plan")
    yield* Runner.run({ taskId, takeover: false, actor: { kind: "runner", id: "runner-1" }, home, agentHosts: Wiring.agentHosts, agentHooks })
    const store = yield* EventStore.EventStore
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: taskId }))).map((stored) => stored.event as Event.Event)
    return { events, status: yield* c.status(taskId) }
  })

const run = (agentHooks: AgentHooks.Installers) => {
  const root = checkout()
  const home = temp()
  return approvedAndRun(root, home, agentHooks).pipe(Effect.provide(layerOf(root, home)))
}

describe("Runner.run gives the agent the run's hooks and its capability", () => {
  it.live("puts the hooks' arguments first and the capability in the agent's environment only, as the digest of the attempt's intent id", () => {
    const record = path.join(temp(), "record.json")
    setEnv({ RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: finished, STAND_IN_EXIT: "0", STAND_IN_WRITE: "src/flag.txt", STAND_IN_RECORD: record, STAND_IN_TOOLS: undefined })
    return Effect.gen(function*() {
      const { events, status } = yield* run({ "claude-code": () => ({ _tag: "Args", args: ["--settings", "{\"hooks\":{}}"] }) })
      // Settings with no hooks in them fence nothing: the stream's Write ran with no intent recorded
      // by a hook, so the attempt fails and the task is blocked (ADR 0040's amendment).
      expect(status.state).toBe("BLOCKED")
      const reported = events.find((event): event is Extract<Event.Event, { _tag: "AgentReported" }> => event._tag === "AgentReported")!
      expect(reported.reason).toBe(
        "the run's hooks did not run for 1 tool call of the agent (Write toolu_1): they were neither judged nor recorded, so what the agent did is not fenced"
      )
      const ends = events.filter((event): event is Extract<Event.Event, { _tag: "AttemptTransitioned" }> => event._tag === "AttemptTransitioned" && event.from === "Running")
      expect(ends.map((event) => event.to)).toStrictEqual(["Failed"])
      const seen = JSON.parse(fs.readFileSync(record, "utf8")) as { args: Array<string>; env: Record<string, string> }
      expect(seen.args.slice(0, 3)).toStrictEqual(["--settings", "{\"hooks\":{}}", "-p"])
      const capability = seen.env["RATCHET_CAPABILITY"]!
      expect(capability).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const intent = events.find((event): event is Extract<Event.Event, { _tag: "IntentRecorded" }> => event._tag === "IntentRecorded")!
      expect(intent.intentId).toBe(`in-agent-${createHash("sha256").update(capability).digest("hex")}`)
      // The capability itself is nowhere in the log.
      expect(JSON.stringify(events)).not.toContain(capability)
    })
  })

  it.live("does not start a host whose hooks cannot be given: the attempt fails with the reason", () => {
    const starts = path.join(temp(), "starts")
    setEnv({ RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: finished, STAND_IN_EXIT: "0", STAND_IN_STARTS: starts, STAND_IN_RECORD: undefined, STAND_IN_WRITE: undefined })
    return Effect.gen(function*() {
      const problem = "this runner was not told where Ratchet's hook launcher (ratchet-hook) is (RATCHET_HOOK_LAUNCHER)"
      const { events } = yield* run({ "claude-code": () => ({ _tag: "Problem", problem }) })
      expect(fs.existsSync(starts)).toBe(false)
      const ends = events.filter((event): event is Extract<Event.Event, { _tag: "AttemptTransitioned" }> => event._tag === "AttemptTransitioned" && event.from === "Running")
      expect(ends.map((event) => event.to)).toStrictEqual(["Failed"])
      const reported = events.find((event): event is Extract<Event.Event, { _tag: "AgentReported" }> => event._tag === "AgentReported")!
      expect(reported.reason).toContain(problem)
    })
  })
})
