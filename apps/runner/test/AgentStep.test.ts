/**
 * The runner runs an agent step by starting its host headless (ADR 0039), over a real SQLite
 * store and a real git checkout, with a stand-in `claude` program (`packages/testkit/stand-in/claude.mjs`) that
 * takes Claude Code's command line and prints a recorded stream of its documented format: found
 * on PATH or at `RATCHET_CLAUDE_BIN`, it receives the envelope in its prompt and environment; a
 * finished stream with exit 0 ends the attempt Succeeded and the task VERIFYING, with the turn
 * events, the session, model, usage, cost and the transcript blob recorded; a truncated stream
 * with exit 0, a non-zero exit, a hang past the timeout (its process group killed) and a missing
 * program each end the attempt as the outcome table says, with the reason, and never as success;
 * a runner that dies while its agent runs leaves it to the next one, which waits for it and never
 * re-runs it. A stand-in `codex` (`packages/testkit/stand-in/codex.mjs`) does the same for Codex's `exec --json`.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import type * as AgentHost from "@ratchet/controller/AgentHost"
import * as Controller from "@ratchet/controller/Controller"
import * as Runner from "@ratchet/controller/Runner"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as BlobStore from "@ratchet/storage/BlobStore"
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
const codexStandIn = StandIn.codex
const finished = StandIn.streamFile("claude", "success")
const truncated = StandIn.streamFile("claude", "truncated")
const codexFinished = StandIn.streamFile("codex", "success")

const made: Array<string> = []
const temp = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(process.env["TMPDIR"] ?? "/tmp", "ratchet-agent-run-")))
  made.push(dir)
  return dir
}

// The variables a case sets, restored after it (the runner passes its environment to the host).
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
const runner: Event.Actor = { kind: "runner", id: "runner-1" }

const git = (root: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", ...args], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })

const checkout = () => {
  const root = temp()
  fs.writeFileSync(path.join(root, "README.md"), "# A project\n")
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
    project: { schemaVersion: 1 as const, projectId: "prj-agent", displayName: "agent", createdAt: "2026-12-06T00:00:00.000Z" },
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
  "  retry: { maxSuccessors: 1 }",
  "---",
  ""
].join("\n")

const planOf = (timeoutSeconds: number, host: "claude-code" | "codex") =>
  [
    "steps:",
    "  - id: impl",
    "    title: Implement",
    "    acRefs: [AC-001]",
    "    agent:",
    `      host: ${host}`,
    "      prompt: Add the --json flag in src/flag.txt.",
    `      timeoutSeconds: ${timeoutSeconds}`,
    `      model: ${host === "codex" ? "gpt-5-codex" : "claude-sonnet-4-5"}`,
    "      maxTurns: 20",
    ""
  ].join("\n")

/** An approved task whose plan is one agent step, then `Runner.run` with the bundled hosts' readers. */
const approvedAndRun = (
  root: string,
  home: string,
  timeoutSeconds = 60,
  fault?: Runner.Options["fault"],
  host: "claude-code" | "codex" = "claude-code",
  agentHosts: AgentHost.Decoders = Wiring.agentHosts
) =>
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
    fs.writeFileSync(path.join(files, "plan.yaml"), planOf(timeoutSeconds, host))
    yield* c.proposePlan(taskId, path.join(files, "plan.yaml"), asPerson)
    yield* approve("plan")
    const outcome = yield* Runner.run({ taskId, takeover: false, actor: runner, home, agentHosts, fault })
    return { taskId, outcome, events: yield* eventsOf(taskId), status: yield* c.status(taskId) }
  })

const eventsOf = (taskId: string) =>
  Effect.gen(function*() {
    const store = yield* EventStore.EventStore
    return Chunk.toReadonlyArray(yield* Stream.runCollect(store.read({ streamId: taskId }))).map((stored) => stored.event as Event.Event)
  })

/** What the stand-in recorded of its start, once it has written it whole. */
const recorded = (file: string): { readonly pid: number } | null => {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8")) as { readonly pid: number }
  } catch {
    return null
  }
}

/** Whether process `pid` runs (a zombie nobody reaped yet has ended). */
const running = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return !/^\d+ \(.*\) [ZX] /s.test(stat)
  } catch {
    return false
  }
}

const ofTag = <T extends Event.Event["_tag"]>(events: ReadonlyArray<Event.Event>, tag: T) =>
  events.filter((event): event is Extract<Event.Event, { _tag: T }> => event._tag === tag)

const attemptEnds = (events: ReadonlyArray<Event.Event>) =>
  ofTag(events, "AttemptTransitioned").filter((event) => event.from === "Running").map((event) => `${event.attempt}:${event.to}`)

describe("Runner.run with an agent step on Claude Code", () => {
  it.live("starts the host found on PATH with the envelope, records the stream, and reaches VERIFYING", () => {
    const root = checkout()
    const home = temp()
    const bin = temp()
    fs.symlinkSync(standIn, path.join(bin, "claude"))
    const record = path.join(temp(), "record.json")
    setEnv({
      PATH: `${bin}${path.delimiter}${process.env["PATH"] ?? ""}`,
      RATCHET_CLAUDE_BIN: undefined,
      STAND_IN_FIXTURE: finished,
      STAND_IN_EXIT: "0",
      STAND_IN_WRITE: "src/flag.txt",
      STAND_IN_RECORD: record,
      STAND_IN_HANG_SECONDS: undefined
    })
    return Effect.gen(function*() {
      const { events, outcome, status, taskId } = yield* approvedAndRun(root, home)
      expect(outcome.stop).toBe("verifying")
      expect(status.state).toBe("VERIFYING")
      expect(attemptEnds(events)).toStrictEqual(["1:Succeeded"])

      // The command line: print mode, the stream with partial messages, the limits, the prompt last.
      const seen = JSON.parse(fs.readFileSync(record, "utf8")) as { args: Array<string>; env: Record<string, string>; cwd: string }
      expect(seen.args.slice(0, -1)).toStrictEqual([
        "-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages",
        "--permission-mode", "acceptEdits", "--model", "claude-sonnet-4-5", "--max-turns", "20"
      ])
      const prompt = seen.args.at(-1)!
      expect(prompt.startsWith("Ratchet agent step (protocol 1)")).toBe(true)
      expect(prompt.endsWith("The step:\nAdd the --json flag in src/flag.txt.")).toBe(true)
      expect(prompt).toContain("- AC-001 (required): The flag works Evidence: the command `test -f src/flag.txt` exits 0.")
      expect(prompt).toContain("1 successor attempt may follow")
      expect(seen.cwd).toBe(root)
      const run = ofTag(events, "RunStarted")[0]!
      expect(seen.env).toMatchObject({
        RATCHET_PROTOCOL: "1",
        RATCHET_TASK: taskId,
        RATCHET_RUN: run.runId,
        RATCHET_STEP: "impl",
        RATCHET_ATTEMPT: "1",
        RATCHET_SUCCESSORS_LEFT: "1",
        RATCHET_SPEC_DIGEST: run.specDigest,
        RATCHET_PLAN_DIGEST: run.planDigest,
        RATCHET_ALLOWED_SCOPE: "[\"src/**\"]",
        RATCHET_FORBIDDEN_SCOPE: "[]",
        RATCHET_ACCEPTANCE: "[\"AC-001\"]"
      })

      // The intent was dispatched before the host started, and resolved with the exit.
      const intent = ofTag(events, "IntentRecorded")[0]!
      expect(intent.description).toBe("agent claude-code (claude-sonnet-4-5): Add the --json flag in src/flag.txt.")
      expect(ofTag(events, "IntentResolved")).toMatchObject([{ intentId: intent.intentId, outcome: "Succeeded" }])
      expect(ofTag(events, "CommandExited")).toMatchObject([{ intentId: intent.intentId, exitCode: 0, timedOut: false, changedPaths: ["src/flag.txt"] }])

      // The turn region the stream fed: the flags it changed, in order.
      // (a turn's start is news only once a flag it clears is set; the first one changes nothing).
      expect(ofTag(events, "TurnRecorded").map((event) => event.turn._tag)).toStrictEqual([
        "firstChunkAwaitStarted", "firstChunkAwaitEnded", "toolUsed",
        "turnStarted", "firstChunkAwaitStarted", "firstChunkAwaitEnded", "toolUsed",
        "turnStarted", "firstChunkAwaitStarted", "firstChunkAwaitEnded", "streamReadCompleted"
      ])

      // What the host reported, and the transcript as a blob: the stream, byte for byte.
      const reported = ofTag(events, "AgentReported")
      expect(reported).toHaveLength(1)
      expect(reported[0]).toMatchObject({
        intentId: intent.intentId,
        attempt: 1,
        host: "claude-code",
        sessionId: "0f6c1d9e-7a51-4f0a-9d3b-2b8e4c1a7f10",
        model: "claude-sonnet-4-5-20250929",
        usage: { inputTokens: 1200, outputTokens: 340, cachedInputTokens: 9000, cacheCreationInputTokens: 5000 },
        costUsd: 0.0421,
        result: { ok: true, subtype: "success", text: "Added the --json flag in src/flag.txt; the tests pass.", turns: 3 },
        lines: 23,
        malformedLines: 0,
        unknownEvents: 0,
        reason: null
      })
      const blobs = yield* BlobStore.BlobStore
      const transcript = yield* blobs.get(reported[0]!.transcriptRef!)
      expect(Buffer.from(transcript).equals(fs.readFileSync(finished))).toBe(true)

      // run.md shows what the host reported of the attempt.
      const tasks = path.join(root, ".ratchet", "tasks")
      const runMd = fs.readFileSync(path.join(tasks, fs.readdirSync(tasks)[0]!, "run.md"), "utf8")
      expect(runMd).toContain(
        `- Attempt 1 (claude-code): session 0f6c1d9e-7a51-4f0a-9d3b-2b8e4c1a7f10; model claude-sonnet-4-5-20250929; 1200 tokens in (9000 cached), 340 out; $0.0421; transcript ${
          reported[0]!.transcriptRef
        }`
      )
    }).pipe(Effect.provide(layerOf(root, home)))
  }, 60_000)

  // the stand-in's stream, exit, program → each attempt's end, words of the reason, the task
  it.live.each([
    ["a truncated stream with exit 0", { STAND_IN_FIXTURE: truncated, STAND_IN_EXIT: "0" }, "Failed", "its stream ended without the host's result (truncated)"],
    ["a finished stream with exit 3", { STAND_IN_FIXTURE: finished, STAND_IN_EXIT: "3" }, "Failed", "the agent exited 3; the host said: Added the --json flag"],
    ["no program at RATCHET_CLAUDE_BIN", { RATCHET_CLAUDE_BIN: "/nonexistent/claude" }, "Failed", "RATCHET_CLAUDE_BIN=\"/nonexistent/claude\" is not an executable file"]
  ] as ReadonlyArray<readonly [string, Record<string, string>, string, string]>)("%s: the attempt fails with its reason, and the same failure again blocks the task", ([_name, env, end, words]) => {
    const root = checkout()
    const home = temp()
    setEnv({ RATCHET_CLAUDE_BIN: standIn, STAND_IN_WRITE: undefined, STAND_IN_RECORD: undefined, STAND_IN_HANG_SECONDS: undefined, STAND_IN_FIXTURE: undefined, STAND_IN_EXIT: undefined, ...env })
    return Effect.gen(function*() {
      const { events, outcome, status } = yield* approvedAndRun(root, home)
      // A successor ran, failed the same way, and the repeated failure blocked the task.
      expect(attemptEnds(events)).toStrictEqual([`1:${end}`, `2:${end}`])
      expect(outcome.stop).toBe("blocked")
      expect(status.state).toBe("BLOCKED")
      const reported = ofTag(events, "AgentReported")
      expect(reported).toHaveLength(2)
      expect(reported[0]!.reason).toContain(words)
      expect(ofTag(events, "CommandExited")[0]!.outputTail).toContain(words)
      expect(ofTag(events, "IntentResolved").map((event) => event.outcome)).toStrictEqual(["Failed", "Failed"])
      expect(ofTag(events, "AttemptFailed")).toHaveLength(2)
      const tasks = path.join(root, ".ratchet", "tasks")
      expect(fs.readFileSync(path.join(tasks, fs.readdirSync(tasks)[0]!, "run.md"), "utf8")).toContain(words.replace(/\|/g, "\\|"))
    }).pipe(Effect.provide(layerOf(root, home)))
  }, 60_000)

  it.live("a stream reader that throws fails the attempt with its words, and never crashes the runner", () => {
    const root = checkout()
    const home = temp()
    setEnv({ RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: finished, STAND_IN_EXIT: "0", STAND_IN_WRITE: undefined, STAND_IN_RECORD: undefined, STAND_IN_HANG_SECONDS: undefined })
    const throwing: AgentHost.Decoders = {
      "claude-code": {
        decode: () => {
          throw new Error("a reader that breaks its contract")
        }
      }
    }
    return Effect.gen(function*() {
      const { events, status } = yield* approvedAndRun(root, home, 60, undefined, "claude-code", throwing)
      expect(attemptEnds(events)).toStrictEqual(["1:Failed", "2:Failed"])
      expect(status.state).toBe("BLOCKED")
      expect(ofTag(events, "AgentReported")[0]!.reason).toContain(
        "its stream ended without the host's result (truncated, 23 of its 23 lines malformed); the host said: the stream reader failed: a reader that breaks its contract"
      )
      // The transcript is kept whatever the reader made of it.
      expect(ofTag(events, "AgentReported")[0]!.transcriptRef).toMatch(/^sha256:/)
    }).pipe(Effect.provide(layerOf(root, home)))
  }, 60_000)

  it.live("kills the host's process group at the timeout: the attempt is TimedOut", () => {
    const root = checkout()
    const home = temp()
    const record = path.join(temp(), "record.json")
    setEnv({
      RATCHET_CLAUDE_BIN: standIn,
      STAND_IN_FIXTURE: truncated,
      STAND_IN_EXIT: "0",
      STAND_IN_HANG_SECONDS: "120",
      STAND_IN_RECORD: record,
      STAND_IN_WRITE: undefined
    })
    return Effect.gen(function*() {
      const { events, status } = yield* approvedAndRun(root, home, 1)
      expect(attemptEnds(events)[0]).toBe("1:TimedOut")
      expect(status.state === "BLOCKED" || status.state === "RUNNING").toBe(true)
      expect(ofTag(events, "CommandExited")[0]).toMatchObject({ timedOut: true, exitCode: null })
      expect(ofTag(events, "AgentReported")[0]!.reason).toContain("past its timeout of 1 s and its process group was killed")
      // The host and the child it started are gone: the whole group was killed.
      const seen = JSON.parse(fs.readFileSync(record, "utf8")) as { pid: number; child: number }
      for (const pid of [seen.pid, seen.child]) expect(running(pid), `process ${pid}`).toBe(false)
    }).pipe(Effect.provide(layerOf(root, home)))
  }, 60_000)

  it.live("a runner that dies while its agent runs: the next one waits for the agent, never re-runs it, and leaves the attempt Indeterminate", () => {
    const root = checkout()
    const home = temp()
    const scratch = temp()
    const record = path.join(scratch, "record.json")
    const starts = path.join(scratch, "starts")
    setEnv({
      RATCHET_CLAUDE_BIN: standIn,
      STAND_IN_FIXTURE: finished,
      STAND_IN_EXIT: "0",
      STAND_IN_HANG_SECONDS: "2",
      STAND_IN_WRITE: "src/flag.txt",
      STAND_IN_RECORD: record,
      STAND_IN_STARTS: starts
    })
    class Died extends Error {}
    return Effect.gen(function*() {
      // The runner dies right after its agent started (a defect at that boundary stands in for its
      // SIGKILL: nothing about the agent's end is recorded, and the agent, in its own process
      // group, runs on).
      const died = yield* Effect.exit(approvedAndRun(root, home, 60, (point) => {
        if (point === "child-started") throw new Died("the runner died")
      }))
      expect(died._tag).toBe("Failure")
      // The agent was started just before the runner died: it says so once it is up.
      let seen: { readonly pid: number } | null = null
      for (let waited = 0; seen === null && waited < 100; waited++) {
        seen = recorded(record)
        if (seen === null) yield* Effect.sleep("50 millis")
      }
      if (seen === null) return yield* Effect.dieMessage("the stand-in never started")
      expect(running(seen.pid)).toBe(true)
      const c = yield* Controller.Controller
      const taskId = (yield* c.listTasks)[0]!.taskId
      expect((yield* c.status(taskId)).state).toBe("RUNNING")

      // The next runner recovers the open attempt: it waits for the agent to end, then leaves the
      // attempt Indeterminate and the task BLOCKED for a person; the agent is not started again.
      const orphans: Array<number> = []
      const outcome = yield* Runner.run({
        taskId,
        takeover: false,
        actor: runner,
        home,
        agentHosts: Wiring.agentHosts,
        onProgress: (progress) => (progress.type === "orphan" ? orphans.push(progress.pgid) : undefined)
      })
      expect(orphans).toStrictEqual([seen.pid])
      expect(running(seen.pid)).toBe(false)
      expect(fs.readFileSync(starts, "utf8").trim().split("\n")).toHaveLength(1)
      expect(outcome.stop).toBe("blocked")
      const events = yield* eventsOf(taskId)
      expect(attemptEnds(events)).toStrictEqual(["1:Indeterminate"])
      expect(ofTag(events, "AgentReported")).toHaveLength(0)
      expect(ofTag(events, "AttemptNoted")[0]?.note).toContain("an agent step is never re-run on recovery")
      expect(ofTag(events, "TaskBlocked")[0]?.blocker.requiredAction).toContain(`ratchet unblock ${taskId} --resolve impl succeeded|failed`)
    }).pipe(Effect.provide(layerOf(root, home)))
  }, 60_000)
})

describe("Runner.run with an agent step on Codex", () => {
  it.live("starts codex exec at RATCHET_CODEX_BIN in the workspace-write sandbox and records its stream", () => {
    const root = checkout()
    const home = temp()
    const record = path.join(temp(), "record.json")
    setEnv({
      RATCHET_CODEX_BIN: codexStandIn,
      STAND_IN_FIXTURE: codexFinished,
      STAND_IN_EXIT: "0",
      STAND_IN_WRITE: "src/flag.txt",
      STAND_IN_RECORD: record,
      STAND_IN_HANG_SECONDS: undefined,
      STAND_IN_STARTS: undefined
    })
    return Effect.gen(function*() {
      const { events, status } = yield* approvedAndRun(root, home, 60, undefined, "codex")
      expect(status.state).toBe("VERIFYING")
      expect(attemptEnds(events)).toStrictEqual(["1:Succeeded"])
      const seen = JSON.parse(fs.readFileSync(record, "utf8")) as { args: Array<string> }
      // No turn limit: codex exec has none.
      expect(seen.args.slice(0, -1)).toStrictEqual(["exec", "--json", "--sandbox", "workspace-write", "--model", "gpt-5-codex"])
      expect(seen.args.at(-1)!.endsWith("The step:\nAdd the --json flag in src/flag.txt.")).toBe(true)
      expect(ofTag(events, "TurnRecorded").map((event) => event.turn._tag)).toStrictEqual([
        "firstChunkAwaitStarted", "firstChunkAwaitEnded", "toolUsed", "streamReadCompleted"
      ])
      expect(ofTag(events, "AgentReported")[0]).toMatchObject({
        host: "codex",
        sessionId: "0199a213-81c0-7800-8aa1-bbab2a035a53",
        model: null,
        costUsd: null,
        usage: { inputTokens: 2946, outputTokens: 70, cachedInputTokens: 1024, cacheCreationInputTokens: null },
        result: { ok: true, subtype: "turn.completed", text: "Added the --json flag in src/flag.txt; the tests pass.", turns: 1 },
        lines: 10,
        reason: null
      })
    }).pipe(Effect.provide(layerOf(root, home)))
  }, 60_000)
})
