/**
 * The MCP server through the SDK's own client over an in-memory transport, against a real
 * controller over a temporary SQLite store: every tool and resource, a task driven from creation
 * to verified evidence (the person's approvals made through the controller, as a terminal would),
 * and that malformed, hostile and oversized calls are tool errors naming the field and write
 * nothing.
 */
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Controller from "@ratchet/controller/Controller"
import * as Invoker from "@ratchet/controller/Invoker"
import * as Runner from "@ratchet/controller/Runner"
import * as Verify from "@ratchet/controller/Verify"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import * as Identity from "../src/Identity.js"
import * as McpServer from "../src/McpServer.js"
import * as Tools from "../src/Tools.js"
import { agent, answered as answeredTools, call, connect, person, plan, registerApprovers, spec, verifier, world, write } from "./fixture.js"

/** Everything the store says about the project, as one value: equal before and after means nothing was written. */
const fingerprint = Effect.gen(function*() {
  const c = yield* Controller.Controller
  const tasks = yield* c.listTasks
  const logs = yield* Effect.forEach(tasks, (task) =>
    Effect.flatMap(c.log(task.taskId), (events) => Effect.map(Stream.runCollect(events), (chunk) => Chunk.toReadonlyArray(chunk).map((stored) => stored.lsn))))
  return JSON.stringify({ tasks: tasks.map((task) => ({ ...task, lease: { ...task.lease, now: 0 } })), logs })
})

/** A task's view without the lease's `now`, which differs between two reads. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
const stable = (view: any) => ({ ...view, lease: { ...view.lease, now: 0 } })

/** The approvals and moves a person makes at a terminal, through the controller. */
const approve = (taskId: string, subject: "restatement" | "spec" | "plan") =>
  Effect.flatMap(Controller.Controller, (c) =>
    Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, person)))

describe("McpServer", () => {
  it.scopedLive("lists every tool with a strict JSON Schema, and none that approves", () =>
    Effect.gen(function*() {
      const { services } = yield* world
      yield* Effect.gen(function*() {
        const client = yield* connect()
        const listed = yield* Effect.promise(() => client.listTools())
        const names = listed.tools.map((tool) => tool.name)
        expect(names).toEqual([
          "task_list",
          "task_status",
          "task_gate",
          "task_log",
          "task_evidence",
          "task_create",
          "brief_ask",
          "brief_answer",
          "spec_propose",
          "plan_propose",
          "run_start",
          "run_check",
          "lessons_query",
          "lesson_propose"
        ])
        for (const name of names) expect(name).not.toMatch(/approve|done|settle|rewind|reopen|unblock|resolve|complete|verify/)
        for (const tool of listed.tools) {
          expect(tool.inputSchema.type).toBe("object")
          expect((tool.inputSchema as Record<string, unknown>)["additionalProperties"]).toBe(false)
          expect(tool.outputSchema?.type, tool.name).toBe("object")
          expect(tool.description?.length).toBeGreaterThan(40)
          expect(tool.annotations?.destructiveHint).toBe(false)
        }
        expect(listed.tools.find((tool) => tool.name === "task_status")?.annotations?.readOnlyHint).toBe(true)
        expect(listed.tools.find((tool) => tool.name === "task_create")?.annotations?.readOnlyHint).toBe(false)
        expect(listed.tools.find((tool) => tool.name === "brief_answer")?.inputSchema.required).toEqual(["taskId", "questionId", "text", "source"])
        expect(client.getInstructions()).toContain("No tool approves anything")
        expect(client.getServerVersion()).toMatchObject({ name: "ratchet", version: "0.0.0-test" })
      }).pipe(Effect.provide(services))
    }))

  it.scopedLive("drives a task from creation to verified evidence, every write recorded as the agent", () =>
    Effect.gen(function*() {
      const { home, root, services, starts } = yield* world
      yield* Effect.gen(function*() {
        const c = yield* Controller.Controller
        const client = yield* connect()

        expect((yield* call(client, "task_list", {})).json).toEqual({ ok: true, command: "task list", exitCode: 0, tasks: [] })

        // create, then status: the document `ratchet status --json` prints
        const created = yield* call(client, "task_create", { goal: "Make the date test deterministic" })
        expect(created.isError).toBe(false)
        expect(created.json).toMatchObject({ ok: true, command: "task create", exitCode: 0, state: "INTERVIEWING", events: ["TaskCreated", "InterviewBegun"] })
        expect(JSON.parse(created.text)).toEqual(created.json)
        const taskId = created.json.taskId as string
        const status = yield* call(client, "task_status", { taskId })
        expect(status.json).toMatchObject({ ok: true, command: "status", exitCode: 0 })
        expect(stable(status.json.task)).toEqual(stable(yield* c.status(taskId)))

        // the brief's questions
        const asked = yield* call(client, "brief_ask", { taskId, text: "Which timezone do the tests run in?", blocking: true })
        expect(asked.json).toMatchObject({ ok: true, command: "brief ask", questionId: "Q-1" })
        const answered = yield* call(client, "brief_answer", { taskId, questionId: "Q-1", text: "UTC, set by the runner", source: "code" })
        expect(answered.json).toMatchObject({ ok: true, command: "brief answer", events: ["QuestionAnswered"] })
        expect(answered.json.task.brief.openBlocking).toEqual([])

        // the person restates, approves and closes; the agent proposes the spec from a workspace file
        yield* c.restate(taskId, "Freeze the clock in the date test.", person)
        yield* registerApprovers
        yield* approve(taskId, "restatement")
        yield* c.closeBrief(taskId, person)
        const proposed = yield* call(client, "spec_propose", { taskId, file: write(root, "docs/spec.md", spec) })
        expect(proposed.isError, proposed.text).toBe(false)
        expect(proposed.json).toMatchObject({ ok: true, command: "spec", state: "SPEC_READY" })
        expect(proposed.json.digest).toMatch(/^sha256:[0-9a-f]{64}$/)

        // the gate before the approval: a HOLD is an answer, not an error
        const held = yield* call(client, "task_gate", { taskId })
        expect(held.isError).toBe(false)
        expect(held.json).toMatchObject({ ok: false, command: "gate", exitCode: 3, decision: "HOLD", from: "SPEC_READY", to: "SPEC_APPROVED" })

        yield* approve(taskId, "spec")
        yield* c.preflight(taskId, person)
        const planned = yield* call(client, "plan_propose", { taskId, file: path.join(root, "docs", "plan.yaml") })
        expect(planned.isError).toBe(true)
        expect(planned.text).toContain("plan.yaml")
        const proposedPlan = yield* call(client, "plan_propose", { taskId, file: write(root, "docs/plan.yaml", plan) })
        expect(proposedPlan.json).toMatchObject({ ok: true, command: "plan", state: "PLAN_READY" })
        yield* approve(taskId, "plan")

        // run_start hands the run to the starter, as the agent, in the workspace
        const started = yield* call(client, "run_start", { taskId })
        expect(started.json).toMatchObject({ ok: true, command: "run", detached: true, taskId, pid: 4242 })
        expect(starts.requests).toEqual([{ taskId, cwd: root, actor: agent }])
        expect((yield* call(client, "run_check", { taskId })).json).toMatchObject({ ok: true, command: "run_check", task: { state: "PLAN_APPROVED" }, run: null })

        // lessons: the agent proposes a candidate (never more), and reads the lessons for its task
        const proposedLesson = yield* call(client, "lesson_propose", {
          lessonId: "L-date",
          lesson: { scope: { paths: ["test/**"] }, trigger: "A test reads the clock", actualRule: "Freeze the clock in tests that format dates" }
        })
        expect(proposedLesson.json).toMatchObject({ ok: true, command: "lesson_propose", lessonId: "L-date", status: "candidate", revision: 1, proposedBy: agent })
        const traversal = yield* call(client, "lesson_propose", { lesson: { scope: { paths: ["../outside/**"] }, trigger: "t", actualRule: "r" } })
        expect(traversal).toMatchObject({ isError: true, json: { ok: false, exitCode: 2, error: { _tag: "@ratchet/kernel/LessonInvalid" } } })
        expect(traversal.text).toContain("/scope/paths/0")
        expect((yield* call(client, "lesson_propose", { lessonId: "L-date", lesson: { trigger: "t", actualRule: "r" } })).json).toMatchObject({
          ok: false,
          exitCode: 2,
          error: { _tag: "@ratchet/kernel/LessonCommandRefused", code: "lesson_exists" }
        })
        // A candidate is never served, and a task not RUNNING records nothing.
        expect((yield* call(client, "lessons_query", { taskId })).json).toMatchObject({ ok: true, command: "lessons_query", taskId, state: "PLAN_APPROVED", runId: null, recorded: false, lessons: [] })

        // what the runner the starter would have spawned does, in process
        const outcome = yield* Runner.run({ taskId, takeover: false, actor: Invoker.runnerFor(agent), home })
        expect(outcome.state).toBe("VERIFYING")
        const checked = yield* call(client, "run_check", { taskId })
        expect(checked.json.task.state).toBe("VERIFYING")
        expect(checked.json.run.steps).toMatchObject([
          { stepId: "freeze", title: "Freeze the clock", kind: "command", status: "Succeeded", attempts: [{ attempt: 1, state: "Succeeded", exitCode: 0, changedPaths: [] }] }
        ])

        // verification by someone else, then the evidence as `ratchet evidence --json`
        expect((yield* call(client, "task_evidence", { taskId })).json.criteria[0].counted).toBeNull()
        const verified = yield* Verify.verify({ taskId, acs: [], invocation: verifier })
        expect(verified.conclusion.outcome, JSON.stringify(verified, null, 1).slice(0, 3000)).toBe("APPROVED")
        const evidence = yield* call(client, "task_evidence", { taskId, showOutput: true })
        expect(evidence.isError, evidence.text).toBe(false)
        expect(evidence.json).toMatchObject({ ok: true, command: "evidence", taskId, state: "VERIFYING" })
        expect(evidence.json.criteria[0]).toMatchObject({ acId: "AC-001", counted: { verdict: "PASS", verifier: { kind: "user", id: "ci" } } })
        const bodies = Object.values(evidence.json.bodies as Record<string, { readonly text: string }>)
        expect(bodies.map((body) => body.text).join("")).toContain(process.version)
        const unknownAc = yield* call(client, "task_evidence", { taskId, acs: ["AC-404"] })
        expect(unknownAc).toMatchObject({ isError: true, json: { ok: false, exitCode: 2 } })
        expect(unknownAc.text).toContain("AC-404 is not a criterion")

        // the log, a page at a time, with the agent's writes recorded as the agent
        const all = yield* call(client, "task_log", { taskId, limit: 500 })
        expect(all.json.more).toBe(false)
        const lsns = (all.json.events as ReadonlyArray<{ readonly lsn: number }>).map((event) => event.lsn)
        const first = yield* call(client, "task_log", { taskId, limit: 3 })
        expect(first.json).toMatchObject({ ok: true, command: "log", branch: "main", more: true, nextAfterLsn: lsns[2] })
        expect(first.json.events[0]).toMatchObject({ type: "TaskCreated", actor: agent, version: 1, event: { _tag: "TaskCreated", goal: "Make the date test deterministic" } })
        const second = yield* call(client, "task_log", { taskId, limit: 3, afterLsn: first.json.nextAfterLsn })
        expect(second.json.events.map((event: { readonly lsn: number }) => event.lsn)).toEqual(lsns.slice(3, 6))
        const last = yield* call(client, "task_log", { taskId, afterLsn: lsns.at(-1) })
        expect(last.json).toMatchObject({ events: [], more: false, nextAfterLsn: lsns.at(-1) })
        const writers = (all.json.events as ReadonlyArray<{ readonly type: string; readonly actor: unknown }>)
          .filter((event) => ["TaskCreated", "QuestionAsked", "QuestionAnswered", "SpecProposed", "PlanProposed"].includes(event.type))
        expect(writers.length).toBe(5)
        for (const event of writers) expect(event.actor).toEqual(agent)
        const noBranch = yield* call(client, "task_log", { taskId, branch: "rewind-9" })
        expect(noBranch.text).toContain("has no branch \"rewind-9\"")

        // resources: the templates, each task's four resources, and their contents
        const templates = yield* Effect.promise(() => client.listResourceTemplates())
        expect(templates.resourceTemplates.map((template) => template.uriTemplate)).toEqual([
          "ratchet://task/{taskId}",
          "ratchet://task/{taskId}/spec",
          "ratchet://task/{taskId}/plan",
          "ratchet://task/{taskId}/log"
        ])
        const resources = yield* Effect.promise(() => client.listResources())
        expect(resources.resources.map((resource) => resource.uri)).toEqual([
          `ratchet://task/${taskId}`,
          `ratchet://task/${taskId}/spec`,
          `ratchet://task/${taskId}/plan`,
          `ratchet://task/${taskId}/log`
        ])
        const read = (uri: string) =>
          Effect.promise(async () => {
            const result = await client.readResource({ uri })
            const content = result.contents[0] as { readonly text: string; readonly mimeType: string }
            return content
          })
        const statusResource = yield* read(`ratchet://task/${taskId}`)
        expect(statusResource.mimeType).toBe("application/json")
        expect(JSON.parse(statusResource.text)).toMatchObject({ ok: true, command: "status", task: { taskId, state: "VERIFYING" } })
        const specResource = yield* read(`ratchet://task/${taskId}/spec`)
        expect(specResource.mimeType).toBe("text/markdown")
        expect(specResource.text).toContain("The date test passes in every timezone")
        expect((yield* read(`ratchet://task/${taskId}/plan`)).text).toContain("Freeze the clock")
        const logLines = (yield* read(`ratchet://task/${taskId}/log`)).text.trimEnd().split("\n").map((line) => JSON.parse(line))
        expect(logLines.map((record: { readonly lsn: number }) => record.lsn)).toEqual(lsns)
        const missing = yield* Effect.promise(() => client.readResource({ uri: "ratchet://task/t-00000000" }).then(() => null, (error: unknown) => error))
        expect(missing).toMatchObject({ code: -32002 })
        expect(String((missing as Error).message)).toContain("No task \"t-00000000\"")
        const other = yield* Effect.promise(() => client.readResource({ uri: "file:///etc/passwd" }).then(() => null, (error: unknown) => error))
        expect(String((other as Error).message)).toContain("is not a ratchet resource")

        // every tool answered at least once, each answer conforming to the tool's outputSchema
        expect([...answeredTools(client)].sort()).toEqual([...Tools.names].sort())
      }).pipe(Effect.provide(services))
    }), { timeout: 120_000 })

  it.scopedLive("answers a missing task with the controller's message as a tool error, naming the store when it knows it", () =>
    Effect.gen(function*() {
      const { home, located, services } = yield* world
      yield* Effect.gen(function*() {
        const client = yield* connect()
        for (const name of ["task_status", "task_gate", "task_log", "task_evidence", "run_check", "run_start"]) {
          const missing = yield* call(client, name, { taskId: "t-00000000" })
          expect(missing.isError, name).toBe(true)
          expect(missing.text, name).toBe(`No task "t-00000000" in project ${located.project.projectId}. List this project's tasks with: ratchet task list`)
          expect(missing.json, name).toMatchObject({ ok: false, exitCode: 2, error: { _tag: "@ratchet/controller/TaskNotFound", taskId: "t-00000000" } })
        }
        // Served with the store named (as ratchet mcp serves): the refusal says where it looked.
        const where = { store: `SQLite ${home}/ratchet.db (from RATCHET_HOME)`, otherwise: "start ratchet mcp with --home <dir>" }
        const named = yield* connect({ version: "0.0.0-test", caller: { actor: agent }, where })
        const missing = yield* call(named, "task_status", { taskId: "t-00000000" })
        expect(missing.text).toBe(
          `No task "t-00000000" in project ${located.project.projectId}. List this project's tasks with: ratchet task list. ` +
            `Looked in the store ${where.store}; to serve another, start ratchet mcp with --home <dir>.`
        )
        expect(missing.json).toMatchObject({ ok: false, exitCode: 2, error: { _tag: "@ratchet/controller/TaskNotFound", taskId: "t-00000000", store: where.store, message: missing.text } })
        const resource = yield* Effect.promise(() => named.readResource({ uri: "ratchet://task/t-00000000" }).then(() => null, (error: unknown) => error))
        expect(resource).toMatchObject({ code: -32002 })
        expect(String((resource as Error).message)).toContain(`Looked in the store ${where.store}`)
        // Other refusals are as they were.
        const refused = yield* call(named, "task_status", { taskId: 42 })
        expect(refused.text).not.toContain("Looked in the store")
      }).pipe(Effect.provide(services))
    }))

  it.scopedLive("refuses malformed, hostile and oversized calls naming the field, and writes nothing", () =>
    Effect.gen(function*() {
      const { root, services, starts } = yield* world
      yield* Effect.gen(function*() {
        const client = yield* connect()
        const taskId = (yield* call(client, "task_create", { goal: "Make the date test deterministic" })).json.taskId as string
        write(root, "docs/spec.md", spec)
        const before = yield* fingerprint
        // Over 1 MiB: far above every limit, and still answered.
        const huge = "a".repeat(1024 * 1024 + 1)
        const deep = JSON.parse(`${"[".repeat(5_000)}${"]".repeat(5_000)}`) as unknown
        const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
          ["task_status", {}, "taskId: is missing"],
          ["task_status", { taskId: 42 }, "taskId: Expected string, actual 42"],
          ["task_status", { taskId: null }, "taskId:"],
          ["task_status", { taskId: "../../etc/passwd" }, "is not a task id"],
          ["task_status", { taskId: huge }, "taskId: is longer than 200 characters"],
          ["task_list", { extra: true }, "extra: is unexpected"],
          ["task_status", JSON.parse("{\"taskId\":\"t-00000000\",\"constructor\":{\"prototype\":{\"admin\":true}}}"), "constructor: is unexpected"],
          // The SDK's request parsing drops an own __proto__ key; the rest is read as usual.
          ["task_status", JSON.parse("{\"taskId\":\"t-00000000\",\"__proto__\":{\"admin\":true}}"), "No task \"t-00000000\""],
          ["task_status", { taskId: { toString: "t-00000000" } }, "taskId: Expected string"],
          ["task_status", { taskId: "t-00000000\u0000; rm -rf /" }, "is not a task id"],
          ["task_evidence", { taskId, acs: deep }, "acs: nests deeper than 8 levels"],
          ["task_evidence", { taskId, acs: Array.from({ length: 101 }, (_, i) => `AC-${i}`) }, "acs:"],
          ["task_create", { goal: "Fix it", owner: "root" }, "owner: is unexpected"],
          ["task_create", { goal: huge }, "goal: is longer than 65536 characters"],
          ["task_create", { goal: "x".repeat(5000) }, "at most 4096"],
          ["task_create", { goal: "Fix it", slug: "../etc" }, "--slug"],
          ["task_create", { goal: ["Fix it"] }, "goal: Expected string"],
          ["brief_ask", { taskId, text: huge }, "text: is longer than 65536 characters"],
          ["brief_ask", { taskId, text: "Which timezone?", blocking: "yes" }, "blocking: Expected boolean"],
          ["brief_answer", { taskId, questionId: "Q-1", text: "UTC" }, "source: is missing"],
          ["brief_answer", { taskId, questionId: "Q-1", text: "UTC", source: "god" }, "source: Expected \"user\" | \"code\" | \"research\""],
          ["brief_answer", { taskId, questionId: "Q-9", text: "UTC", source: "user" }, "Q-9"],
          ["task_log", { taskId, limit: 0 }, "limit:"],
          ["task_log", { taskId, limit: 1.5 }, "limit:"],
          ["task_log", { taskId, limit: "5" }, "limit: Expected number"],
          ["task_log", { taskId, afterLsn: -1 }, "afterLsn:"],
          ["task_gate", { taskId, to: "DONE" }, "to: Expected"],
          ["task_evidence", { taskId, acs: "AC-001" }, "acs: Expected ReadonlyArray"],
          ["spec_propose", { taskId, file: "../../../etc/passwd" }, "is outside the workspace"],
          ["spec_propose", { taskId, file: "/etc/passwd" }, "is outside the workspace"],
          ["spec_propose", { taskId, file: huge }, "file: is longer than 4096 characters"],
          ["spec_propose", { taskId }, "file: is missing"],
          ["spec_propose", { taskId, file: "docs/spec.md" }, "The brief is not closed"],
          ["plan_propose", { taskId, file: "docs/missing.yaml" }, "missing.yaml"],
          ["run_start", { taskId }, "this one is INTERVIEWING"],
          ["approve", { taskId, subject: "spec" }, "a person's acts at a terminal"],
          ["task_done", { taskId }, "is not a tool of the ratchet MCP server"],
          ["task_verify", { taskId }, "verification needs an identity that did none of the work"],
          [huge, {}, "is not a tool of the ratchet MCP server"]
        ]
        for (const [index, [name, args, expected]] of cases.entries()) {
          const answer = yield* call(client, name, args)
          const label = `case ${index}: ${name.slice(0, 20)} { ${Object.keys(args).join(", ")} }`
          expect(answer.isError, label).toBe(true)
          expect(answer.text, label).toContain(expected)
          expect(answer.text.length, label).toBeLessThan(2_000)
          expect(answer.json.ok, label).toBe(false)
          expect(answer.json.exitCode, label).toBeGreaterThanOrEqual(2)
        }
        expect(yield* fingerprint).toBe(before)
        expect(starts.requests).toEqual([])
        expect(({} as Record<string, unknown>)["admin"]).toBeUndefined()
      }).pipe(Effect.provide(services))
    }), { timeout: 120_000 })

  it.scopedLive("refuses a spec file that leads out of the workspace through a symbolic link", () =>
    Effect.gen(function*() {
      const { root, services } = yield* world
      yield* Effect.gen(function*() {
        const fs = yield* Effect.promise(() => import("node:fs"))
        fs.symlinkSync("/etc/passwd", path.join(root, "spec-link.md"))
        const client = yield* connect()
        const taskId = (yield* call(client, "task_create", { goal: "Make the date test deterministic" })).json.taskId as string
        const answer = yield* call(client, "spec_propose", { taskId, file: "spec-link.md" })
        expect(answer.isError).toBe(true)
        expect(answer.text).toContain("leads (through a symbolic link) outside the workspace")
      }).pipe(Effect.provide(services))
    }))

  it.effect("acts as an agent: RATCHET_ACTOR names the agent, a person is never taken over", () =>
    Effect.sync(() => {
      expect(Identity.of(undefined)).toEqual(Either.right({ actor: { kind: "agent", id: "mcp" }, ignored: null }))
      expect(Identity.of("")).toEqual(Either.right({ actor: { kind: "agent", id: "mcp" }, ignored: null }))
      expect(Identity.of("agent:claude-1")).toEqual(Either.right({ actor: { kind: "agent", id: "claude-1" }, ignored: null }))
      expect(Identity.of("user:ana")).toEqual(Either.right({ actor: { kind: "agent", id: "mcp" }, ignored: { kind: "user", id: "ana" } }))
      expect(Identity.of("verifier:ci")).toEqual(Either.right({ actor: { kind: "agent", id: "mcp" }, ignored: { kind: "verifier", id: "ci" } }))
      expect(Either.isLeft(Identity.of("nobody"))).toBe(true)
    }))

  it.effect("describes its tools and instructions without a connection", () =>
    Effect.sync(() => {
      expect(Tools.names).toHaveLength(14)
      expect(McpServer.instructions).toContain("No tool approves anything")
      for (const tool of Tools.tools) expect(tool.descriptor.inputSchema).not.toHaveProperty("$schema")
    }))
})
