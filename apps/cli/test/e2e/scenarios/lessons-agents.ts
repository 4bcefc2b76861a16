/**
 * Lessons reaching agents, end to end with the bundled CLI (issue 21, ADR 0038). The verified
 * lessons are written into the CLI's store by `lesson-store.ts` (the lessons service, as the
 * controller records failures); everything else goes through `ratchet hook` and `ratchet mcp`.
 *
 * - A task RUNNING with a manual step awaiting its worker: at a session's start (Claude Code and
 *   Codex) the verified lesson in the task's scope is in `hookSpecificOutput.additionalContext`,
 *   one out of scope is not, and the lesson is recorded as shown to the run (once per run, with the
 *   step and attempt) before the answer. A prompt adds only a lesson not yet shown to the run.
 * - The run's episode, frozen at VERIFYING, carries the lessons shown (`ratchet evidence --json`:
 *   `lessons`, `assisted`).
 * - A hook that cannot read lessons still answers: the session starts, with a warning (SQLite: the
 *   lessons' read model made unreadable), and a tool call is still judged.
 * - The runner's agent step (ADR 0038's amendment): a verified lesson of the task's type reaches the
 *   headless agent's prompt and `RATCHET_LESSONS` (a stand-in `claude` writes down what it was
 *   given), one of another type does not, and it is recorded as shown to the attempt, via the
 *   runner, before the host starts; the run's evidence names it.
 * - An agent proposes a candidate over MCP, reads the lessons of its task (recorded as shown), and
 *   cannot promote, pin or reject: no tool offers it, a proposal with a status is refused, the
 *   kernel refuses an agent's control naming the command a person runs, and the hook denies the
 *   agent's `ratchet lessons pin|reject`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as StandIn from "@ratchet/testkit/StandIn"
import Database from "better-sqlite3"
import { afterAll, describe, expect, it } from "vitest"
import { bin, cliRoot, type Engine, events, exec, helper, makeWorld, removeWorlds, specText, status, toPlanApproved, type World } from "../harness.js"
import { planOf } from "./run.js"

const packages = path.resolve(import.meta.dirname, "../../../../../packages")
const standIn = StandIn.claude
const fixtureDirectory = { "claude-code": path.join(packages, "host-claude-code/test/fixtures"), codex: path.join(packages, "host-codex/test/fixtures") }

/** A fixture payload of `host` with its cwd moved into the world's repository. */
const payload = (world: World, file: string, host: keyof typeof fixtureDirectory = "claude-code", change: (value: Record<string, unknown>) => void = () => {}) => {
  const value = JSON.parse(fs.readFileSync(path.join(fixtureDirectory[host], file), "utf8").replaceAll("/home/dev/project", world.repo)) as Record<string, unknown>
  change(value)
  return JSON.stringify(value)
}

const hook = (world: World, input: string, host: keyof typeof fixtureDirectory = "claude-code") => world.run(["hook", host], { input, env: { RATCHET_LEASE_GRACE_MS: "3600000" } })

/** `lesson-store.ts` with `args`, in the world's store: its one JSON line. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
const lessonStore = async (world: World, ...args: ReadonlyArray<string>): Promise<any> => {
  const result = await exec(process.execPath, [helper("lesson-store"), ...args], { cwd: cliRoot, env: world.env })
  if (result.code !== 0) throw new Error(`lesson-store exited ${result.code}\n${result.stdout}\n${result.stderr}`)
  return JSON.parse(result.stdout)
}

/** One manual step, so the run leaves the task RUNNING with the step awaiting its worker. */
const manualPlan = [
  "steps:",
  "  - id: fix",
  "    title: \"Fix the date test\"",
  "    acRefs: [AC-001]",
  "    manual:",
  "      instructions: \"Freeze the clock in test/date.test.js\"",
  ""
].join("\n")

/** A task RUNNING (its manual step awaiting its worker), and its run's id. */
const running = async (world: World): Promise<{ readonly taskId: string; readonly runId: string }> => {
  const taskId = await toPlanApproved(world, "Make the date test deterministic", undefined, manualPlan)
  const started = await world.run(["run", taskId])
  expect(started.code, started.stderr).toBe(0)
  expect((await status(world, taskId)).state).toBe("RUNNING")
  const runStarted = (await events(world, taskId)).find((record) => record.type === "RunStarted")
  return { taskId, runId: String(runStarted?.event["runId"]) }
}

/** The additional context of a hook's answer for `event`, or null when it printed nothing. */
const contextOf = (result: { readonly code: number; readonly stdout: string; readonly stderr: string }, event: string): string | null => {
  expect(result.code, result.stderr).toBe(0)
  if (result.stdout === "") return null
  const answer = JSON.parse(result.stdout)
  expect(Object.keys(answer)).toEqual(["hookSpecificOutput"])
  expect(Object.keys(answer.hookSpecificOutput).sort()).toEqual(["additionalContext", "hookEventName"])
  expect(answer.hookSpecificOutput.hookEventName).toBe(event)
  return answer.hookSpecificOutput.additionalContext
}

/** The `LessonShown` events of a lesson's stream. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON documents
const shownEvents = (shown: any): ReadonlyArray<any> => shown.events.filter((event: { readonly _tag: string }) => event._tag === "LessonShown")

const connect = async (world: World): Promise<Client> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp"],
    cwd: world.repo,
    env: { ...(world.env as Record<string, string>), RATCHET_ACTOR: "agent:e2e-agent" },
    stderr: "pipe"
  })
  const client = new Client({ name: "ratchet-e2e-lessons", version: "0.0.0" })
  await client.connect(transport)
  return client
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<{ readonly isError: boolean; readonly text: string; readonly json: any }> => {
  const result = await client.callTool({ name, arguments: args })
  const content = result.content as ReadonlyArray<{ readonly text?: string }>
  return { isError: result.isError === true, text: content[0]?.text ?? "", json: result.structuredContent }
}

export const lessonsAgentsScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("lessons for agents", { timeout: 480_000 }, () => {
    it("a verified lesson in the task's scope reaches the agent at a session's start, recorded as shown to the run first", async () => {
      const world = await makeWorld(engine)
      const { runId, taskId } = await running(world)
      expect(await lessonStore(world, "verified", world.repo, "L-date", "test/**")).toEqual({ id: "L-date", status: "verified" })
      expect(await lessonStore(world, "verified", world.repo, "L-report", "src/report/**")).toEqual({ id: "L-report", status: "verified" })

      // Claude Code's SessionStart: the lesson in scope, one line, and nothing of the other
      const context = contextOf(await hook(world, payload(world, "SessionStart.startup.json")), "SessionStart")
      expect(context).toContain(`apply to task ${taskId}`)
      expect(context).toContain("- [L-date, verified] Freeze the clock and set TZ explicitly in every date test (when: A test formats a date near midnight; not: The test machine's clock is in UTC)")
      expect(context).not.toContain("L-report")
      expect(context!.length).toBeLessThanOrEqual(2048)

      // recorded on the lesson, by Ratchet, for the run and the step awaiting its worker
      const shown = await lessonStore(world, "show", "L-date")
      expect(shown.status).toBe("verified")
      expect(shown.shownTo).toEqual([runId])
      expect(shownEvents(shown)).toHaveLength(1)
      expect(shownEvents(shown)[0]).toMatchObject({
        actor: { kind: "system", id: "lessons-hook" },
        shown: { runId, taskId, stepId: "fix", attempt: 1, via: "hook" }
      })
      expect((await lessonStore(world, "show", "L-report")).shownTo).toEqual([])

      // a prompt adds nothing already shown to the run; a lesson verified since is added, once
      expect(contextOf(await hook(world, payload(world, "UserPromptSubmit.basic.json")), "UserPromptSubmit")).toBeNull()
      await lessonStore(world, "verified", world.repo, "L-tz", "test/**")
      const later = contextOf(await hook(world, payload(world, "UserPromptSubmit.basic.json")), "UserPromptSubmit")
      expect(later).toContain("- [L-tz, verified]")
      expect(later).not.toContain("L-date")
      expect(contextOf(await hook(world, payload(world, "UserPromptSubmit.basic.json")), "UserPromptSubmit")).toBeNull()

      // Codex's SessionStart: the same lessons in its own answer, recorded once per run
      const codex = contextOf(await hook(world, payload(world, "SessionStart.startup.json", "codex"), "codex"), "SessionStart")
      expect(codex).toContain("- [L-date, verified]")
      expect(codex).toContain("- [L-tz, verified]")
      expect(shownEvents(await lessonStore(world, "show", "L-date"))).toHaveLength(1)
      expect(shownEvents(await lessonStore(world, "show", "L-tz"))).toHaveLength(1)

      // nothing about lessons reached the task's own log
      expect((await events(world, taskId)).map((record) => record.type).filter((type) => type.startsWith("Lesson"))).toEqual([])

      if (world.engine.name === "sqlite") {
        // a store whose lessons cannot be read: the session still starts (a warning), tools are still judged
        const views = (sql: (db: Database.Database) => void) => {
          const db = new Database(path.join(world.home, "ratchet.db"))
          try {
            sql(db)
          } finally {
            db.close()
          }
        }
        let kept: ReadonlyArray<{ readonly id: string; readonly view: string }> = []
        views((db) => {
          kept = db.prepare("SELECT lesson_id AS id, view FROM ratchet_lessons").all() as ReadonlyArray<{ readonly id: string; readonly view: string }>
          db.prepare("UPDATE ratchet_lessons SET view = 'not a view'").run()
        })
        const warned = await hook(world, payload(world, "SessionStart.startup.json"))
        expect(warned.code, warned.stderr).toBe(0)
        expect(JSON.parse(warned.stdout).systemMessage).toMatch(/^Ratchet \(warning\): no lessons were added to the agent's context: /)
        const outside = await hook(world, payload(world, "PreToolUse.Edit.json", "claude-code", (value) => {
          ;(value["tool_input"] as Record<string, unknown>)["file_path"] = path.join(world.repo, "README.md")
        }))
        expect(JSON.parse(outside.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" })
        views((db) => {
          for (const row of kept) db.prepare("UPDATE ratchet_lessons SET view = ? WHERE lesson_id = ?").run(row.view, row.id)
        })
      }

      // the run's episode, frozen when it enters VERIFYING, carries the lessons shown: an assisted run
      await world.ok(["step", "done", taskId, "fix", "--note", "froze the clock"])
      expect((await world.run(["run", taskId])).code).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      const evidence = (await world.ok(["evidence", taskId, "--json"])).json
      expect(evidence.assisted).toBe(true)
      expect(evidence.lessons.map((lesson: { readonly lessonId: string; readonly status: string; readonly via: string }) => [lesson.lessonId, lesson.status, lesson.via]))
        .toEqual([["L-date", "verified", "hook"], ["L-tz", "verified", "hook"]])
    })

    it("the runner's agent step is given the verified lesson of its task's type in its prompt and environment, recorded as shown to the attempt first", async () => {
      const world = await makeWorld(engine)
      expect(await lessonStore(world, "verified", world.repo, "L-bugfix", "test/**", "bugfix")).toEqual({ id: "L-bugfix", status: "verified" })
      expect(await lessonStore(world, "verified", world.repo, "L-migration", "test/**", "migration")).toEqual({ id: "L-migration", status: "verified" })
      const spec = specText().replace("---\ngoal:", "---\ntaskType: bugfix\ngoal:")
      const agentStep = [
        "  - id: impl",
        "    title: Freeze the clock",
        "    acRefs: [AC-001]",
        "    agent:",
        "      host: claude-code",
        "      prompt: Freeze the clock in test/date.test.js.",
        "      timeoutSeconds: 60"
      ].join("\n")
      const taskId = await toPlanApproved(world, "Make the date test deterministic", spec, planOf([agentStep]))
      const record = path.join(world.root, "agent-received.json")
      const stream = path.join(packages, "host-claude-code/test/fixtures/stream-json/edit-and-test.jsonl")
      const ran = await world.run(["run", taskId, "--json"], {
        env: { RATCHET_CLAUDE_BIN: standIn, STAND_IN_FIXTURE: stream, STAND_IN_WRITE: "test/flag.txt", STAND_IN_RECORD: record }
      })
      expect(ran.code, ran.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      const runId = String((await events(world, taskId)).find((record) => record.type === "RunStarted")?.event["runId"])

      // what the agent was given: the lesson of its type under the heading, ahead of the step; not the other
      const received = JSON.parse(fs.readFileSync(record, "utf8")) as { readonly args: ReadonlyArray<string>; readonly env: Record<string, string> }
      const prompt = received.args.at(-1)!
      const line = "- [L-bugfix, verified] Freeze the clock and set TZ explicitly in every date test (when: A test formats a date near midnight; not: The test machine's clock is in UTC)"
      expect(prompt).toContain(`Lessons from earlier runs of this project that apply to this task (verified by reproducible evidence; follow them where they apply, they are advice, not part of the contract):\n${line}\n\nThe step:\nFreeze the clock in test/date.test.js.`)
      expect(prompt).not.toContain("L-migration")
      expect(JSON.parse(received.env["RATCHET_LESSONS"]!)).toEqual({
        lessons: [{ id: "L-bugfix", text: line.slice("- [L-bugfix, verified] ".length) }],
        leftOut: 0
      })

      // recorded on the lesson, by Ratchet's runner, for the run, the step and the attempt
      const shown = await lessonStore(world, "show", "L-bugfix")
      expect(shown.shownTo).toEqual([runId])
      expect(shownEvents(shown)).toHaveLength(1)
      expect(shownEvents(shown)[0]).toMatchObject({
        actor: { kind: "system", id: "lessons-runner" },
        shown: { runId, taskId, stepId: "impl", attempt: 1, via: "runner" }
      })
      expect(shownEvents(await lessonStore(world, "show", "L-migration"))).toEqual([])

      // the run's episode names it: an assisted run
      const evidence = (await world.ok(["evidence", taskId, "--json"])).json
      expect(evidence.assisted).toBe(true)
      expect(evidence.lessons).toMatchObject([{ lessonId: "L-bugfix", status: "verified", via: "runner", stepId: "impl", attempt: 1 }])
    })

    it("an agent proposes a candidate and reads its task's lessons, but never promotes, pins or rejects one", async () => {
      const world = await makeWorld(engine)
      const { runId, taskId } = await running(world)
      await lessonStore(world, "verified", world.repo, "L-date", "test/**")
      const client = await connect(world)
      try {
        const tools = (await client.listTools()).tools.map((tool) => tool.name)
        expect(tools).toContain("lessons_query")
        expect(tools).toContain("lesson_propose")
        for (const name of tools) expect(name).not.toMatch(/pin|reject|promote|deprecate|supersede|compile|lesson_edit|verify/)

        const proposed = await call(client, "lesson_propose", {
          lessonId: "L-agent",
          lesson: { scope: { paths: ["test/**"] }, trigger: "A date test runs in CI", actualRule: "CI runs in UTC; local runs do not" }
        })
        expect(proposed.json).toMatchObject({ ok: true, lessonId: "L-agent", status: "candidate", revision: 1, proposedBy: { kind: "agent", id: "e2e-agent" } })
        const withStatus = await call(client, "lesson_propose", { lesson: { trigger: "t", actualRule: "r", status: "verified" } })
        expect(withStatus).toMatchObject({ isError: true, json: { ok: false, exitCode: 2, error: { _tag: "@ratchet/host-mcp/InvalidArguments", field: "lesson.status" } } })
        const oversized = await call(client, "lesson_propose", { lesson: { trigger: "t", actualRule: "r".repeat(100_000) } })
        expect(oversized).toMatchObject({ isError: true, json: { error: { field: "lesson.actualRule" } } })

        // the lessons of its task: the verified one, not its own candidate; recorded as shown
        const queried = await call(client, "lessons_query", { taskId })
        expect(queried.json).toMatchObject({ ok: true, taskId, state: "RUNNING", runId, recorded: true })
        expect(queried.json.lessons.map((lesson: { readonly id: string }) => lesson.id)).toEqual(["L-date"])
        expect(shownEvents(await lessonStore(world, "show", "L-date"))[0]).toMatchObject({ actor: { kind: "system", id: "lessons-mcp" }, shown: { runId, via: "mcp" } })
      } finally {
        await client.close()
      }

      // the kernel refuses an agent's control, saying who may and how
      for (const [control, command] of [["Pin", "ratchet lessons pin L-agent"], ["Reject", "ratchet lessons reject L-agent"]] as const) {
        const refused = await lessonStore(world, "as-agent", "L-agent", control)
        expect(refused).toMatchObject({ ok: false, tag: "@ratchet/kernel/LessonCommandRefused", code: "person_only" })
        expect(refused.message).toContain(command)
      }
      expect((await lessonStore(world, "show", "L-agent")).status).toBe("candidate")

      // and the hook denies the agent's own attempt at a terminal command
      for (const command of ["ratchet lessons pin L-agent", "ratchet lessons reject L-date", "npx ratchet lessons deprecate L-date"]) {
        const denied = await hook(world, payload(world, "PreToolUse.Bash.npm-test.json", "claude-code", (value) => {
          ;(value["tool_input"] as Record<string, unknown>)["command"] = command
        }))
        const reason = JSON.parse(denied.stdout).hookSpecificOutput.permissionDecisionReason
        expect(reason, command).toContain("is for a person: ratchet lessons decides which lessons are kept")
      }
    })
  })
}
