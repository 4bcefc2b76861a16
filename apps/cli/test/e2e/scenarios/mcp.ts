/**
 * `ratchet mcp` end to end: the bundled CLI spawned as an MCP server and driven by the official
 * SDK's own `Client` over its `StdioClientTransport`, against a real store.
 *
 * - It lists exactly its tools (none approves) and answers a status call with the document
 *   `ratchet status --json` prints.
 * - A task created through a tool is there for `ratchet status --json` run as a separate process,
 *   its events recorded as the agent RATCHET_ACTOR names.
 * - Refusals arrive as tool errors carrying the controller's reason: an unknown task, an argument
 *   over 1 MiB, an approving tool that does not exist; the server answers on after each.
 * - `run_start` starts the runner in the background for an approved plan, acting for the agent,
 *   and `run_check` follows it to VERIFYING.
 * - Spoken to directly: standard output carries only JSON-RPC lines, a person named by
 *   RATCHET_ACTOR is not taken over (a note on standard error), and the server exits 0 when its
 *   standard input closes.
 * - Started with an empty environment (`env -i`, as MCP clients pass a server few variables), in
 *   a directory of a project initialised with its own RATCHET_HOME (and PostgreSQL database), it
 *   finds that store through the checkout's record, says on standard error which project and
 *   store it serves, creates nothing in HOME, starts a runner that finds the same store, and
 *   names the store in a "No task" refusal; `--home` and RATCHET_HOME take precedence over the
 *   record, and a recorded SQLite store that is gone is refused, not created.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, describe, expect, it } from "vitest"
import { bin, type Engine, engineIndependent, events, makeWorld, removeWorlds, status, toPlanApproved, type World } from "../harness.js"

/** The agent the server is started for. */
const agent = { kind: "agent", id: "e2e-agent" } as const

/** Every tool, in the order the server lists them. Nothing here approves, settles or completes. */
const expectedTools = [
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
]

/** What a tool call answered, with its document. */
interface Called {
  readonly isError: boolean
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document, read field by field
  readonly json: any
}

/** A connected client of `ratchet mcp` run in the world's repository, and what it wrote on stderr. */
export const connect = async (world: World, env: Record<string, string> = {}): Promise<{ readonly client: Client; readonly stderr: () => string }> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp"],
    cwd: world.repo,
    env: { ...(world.env as Record<string, string>), RATCHET_ACTOR: `${agent.kind}:${agent.id}`, ...env },
    stderr: "pipe"
  })
  const errors: Array<Buffer> = []
  transport.stderr?.on("data", (chunk: Buffer) => errors.push(chunk))
  const client = new Client({ name: "ratchet-e2e", version: "0.0.0" })
  await client.connect(transport)
  return { client, stderr: () => Buffer.concat(errors).toString("utf8") }
}

export const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<Called> => {
  const result = await client.callTool({ name, arguments: args })
  const content = result.content as ReadonlyArray<{ readonly type: string; readonly text?: string }>
  return { isError: result.isError === true, text: content[0]?.text ?? "", json: result.structuredContent }
}

/**
 * A connected client of `ratchet mcp` started with nothing but `PATH` (node's directory) and a
 * scratch `HOME` in its environment (`env -i`), in `cwd`, with `args` after `mcp`.
 */
const connectBare = async (cwd: string, home: string, args: ReadonlyArray<string> = [], env: ReadonlyArray<string> = []) => {
  const transport = new StdioClientTransport({
    command: "env",
    args: ["-i", `PATH=${path.dirname(process.execPath)}`, `HOME=${home}`, ...env, process.execPath, bin, "mcp", ...args],
    cwd,
    stderr: "pipe"
  })
  const errors: Array<Buffer> = []
  transport.stderr?.on("data", (chunk: Buffer) => errors.push(chunk))
  const client = new Client({ name: "ratchet-e2e-bare", version: "0.0.0" })
  await client.connect(transport)
  // Listed first, as hosts do: the SDK client then checks every answer against its tool's outputSchema.
  await client.listTools()
  return { client, stderr: () => Buffer.concat(errors).toString("utf8") }
}

/** A task view without the lease's `now`, which differs between two reads. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
const stable = (view: any) => ({ ...view, lease: { ...view.lease, now: 0 } })

/**
 * `ratchet mcp` spoken to directly: each of `messages` written as one line (a request's answer is
 * awaited before the next is written), then standard input closed. Resolves to the exit code and
 * both outputs once the process ends.
 */
const converse = (
  world: World,
  messages: ReadonlyArray<
    | { readonly id?: number; readonly method: string; readonly params?: unknown }
    // A line written as it is; `answered` when the server owes it an answer.
    | { readonly raw: string; readonly answered: boolean }
  >,
  env: Record<string, string>
): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "mcp"], { cwd: world.repo, env: { ...world.env, ...env }, stdio: ["pipe", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`ratchet mcp did not exit after its input closed\nstdout: ${Buffer.concat(out)}\nstderr: ${Buffer.concat(err)}`))
    }, 60_000)
    let next = 0
    const answered = () => Buffer.concat(out).toString("utf8").split("\n").filter((line) => line !== "").length
    let awaiting = 0
    const send = () => {
      while (next < messages.length && answered() >= awaiting) {
        const message = messages[next++] as (typeof messages)[number]
        child.stdin.write(`${"raw" in message ? message.raw : JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)
        if ("raw" in message ? message.answered : message.id !== undefined) {
          awaiting++
          return
        }
      }
      if (next === messages.length && answered() >= awaiting) child.stdin.end()
    }
    child.stdout.on("data", (chunk: Buffer) => {
      out.push(chunk)
      send()
    })
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") })
    })
    send()
  })

export const mcpScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("ratchet mcp", { timeout: 480_000 }, () => {
    anyEngine("lists its tools and answers a status call through the SDK client; refusals are tool errors with the reason", async () => {
      const world = await makeWorld(engine)
      const { client, stderr } = await connect(world)
      try {
        expect(client.getServerVersion()).toMatchObject({ name: "ratchet" })
        const listed = await client.listTools()
        expect(listed.tools.map((tool) => tool.name)).toEqual(expectedTools)

        // a task created through a tool, confirmed by the CLI as a separate process
        const created = await call(client, "task_create", { goal: "Make the date test deterministic" })
        expect(created.isError, created.text).toBe(false)
        expect(created.json).toMatchObject({ ok: true, command: "task create", exitCode: 0, state: "INTERVIEWING" })
        const taskId = created.json.taskId as string
        const fromCli = await status(world, taskId)
        expect(fromCli).toMatchObject({ taskId, state: "INTERVIEWING", goal: "Make the date test deterministic" })

        // the status tool answers with the document `ratchet status --json` prints
        const answered = await call(client, "task_status", { taskId })
        expect(answered.isError).toBe(false)
        expect(answered.json).toMatchObject({ ok: true, command: "status", exitCode: 0 })
        expect(stable(answered.json.task)).toEqual(stable(await status(world, taskId)))
        expect((await events(world, taskId)).map((record) => [record.type, record.actor])).toEqual([
          ["TaskCreated", agent],
          ["InterviewBegun", agent]
        ])

        // refusals: the controller's reason as a tool error, and the server answers on
        const unknown = await call(client, "task_status", { taskId: "t-00000000" })
        expect(unknown.isError).toBe(true)
        expect(unknown.text).toMatch(
          new RegExp(
            `^No task "t-00000000" in project prj-[0-9a-f-]+\\. List this project's tasks with: ratchet task list\\. Looked in the store ${
              engine.name === "postgres" ? "PostgreSQL postgres://\\S+ schema \\w+ \\(from RATCHET_HOME and RATCHET_DATABASE_URL\\)" : "SQLite \\S+/ratchet\\.db \\(from RATCHET_HOME\\)"
            }; to serve another, start ratchet mcp with --home <dir>`
          )
        )
        expect(unknown.json).toMatchObject({ ok: false, command: "status", exitCode: 2, error: { _tag: "@ratchet/controller/TaskNotFound" } })
        const oversized = await call(client, "task_create", { goal: "a".repeat(2 * 1024 * 1024) })
        expect(oversized).toMatchObject({ isError: true, text: expect.stringContaining("goal: is longer than 65536 characters") })
        const approving = await call(client, "approve", { taskId, subject: "spec" })
        expect(approving.isError).toBe(true)
        expect(approving.text).toContain("a person's acts at a terminal")
        const listedTasks = await call(client, "task_list", {})
        expect(listedTasks.json.tasks.map((task: { readonly taskId: string }) => task.taskId)).toEqual([taskId])

        // the task as a resource
        const resource = await client.readResource({ uri: `ratchet://task/${taskId}` })
        const text = (resource.contents[0] as { readonly text: string }).text
        expect(JSON.parse(text)).toMatchObject({ ok: true, command: "status", task: { taskId, state: "INTERVIEWING" } })
      } finally {
        await client.close()
      }
      expect(stderr()).not.toContain("unexpected")
    })

    anyEngine("starts an approved plan's run in the background for the agent and follows it to VERIFYING", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Make the date test deterministic")
      const { client } = await connect(world)
      try {
        const started = await call(client, "run_start", { taskId })
        expect(started.isError, started.text).toBe(false)
        expect(started.json).toMatchObject({ ok: true, command: "run", detached: true, taskId, pid: expect.any(Number), log: expect.any(String) })
        let checked = await call(client, "run_check", { taskId })
        for (let tries = 0; checked.json.task.state !== "VERIFYING" && tries < 240; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 250))
          checked = await call(client, "run_check", { taskId })
        }
        expect(checked.json.task.state, JSON.stringify(checked.json)).toBe("VERIFYING")
        expect(checked.json.run.steps).toMatchObject([{ stepId: "freeze-clock", kind: "command", status: "Succeeded", attempts: [{ attempt: 1, exitCode: 0 }] }])
        const again = await call(client, "run_start", { taskId })
        expect(again.isError).toBe(true)
        expect(again.text).toContain("this one is VERIFYING")
      } finally {
        await client.close()
      }
      const log = await events(world, taskId)
      expect(log.find((record) => record.type === "RunStarted")?.actor).toEqual({ kind: "runner", id: agent.id })
    })

    it("finds the store ratchet init recorded when started with an empty environment, and says which it serves", async () => {
      const world = await makeWorld(engine)
      const scratch = path.join(world.root, "scratch-home")
      fs.mkdirSync(scratch)
      const recordFile = path.join(world.repo, ".git", "ratchet", "store.json")
      const record = JSON.parse(fs.readFileSync(recordFile, "utf8"))
      const database = engine.name === "postgres"
        ? { url: world.env["RATCHET_DATABASE_URL"], schema: world.env["RATCHET_DATABASE_SCHEMA"], passwordOmitted: false }
        : null
      expect(record).toMatchObject({ version: 1, home: world.home, database })
      const store = engine.name === "postgres"
        ? `PostgreSQL ${world.env["RATCHET_DATABASE_URL"]} schema ${world.env["RATCHET_DATABASE_SCHEMA"]}`
        : `SQLite ${world.home}/ratchet.db`
      const projectId = JSON.parse(fs.readFileSync(path.join(world.repo, ".ratchet", "project.json"), "utf8")).projectId as string
      const taskId = await toPlanApproved(world, "Make the date test deterministic")

      // in a subdirectory of the project, as a client may start it
      const { client, stderr } = await connectBare(path.join(world.repo, "test"), scratch)
      try {
        const read = await call(client, "task_status", { taskId })
        expect(read.isError, read.text).toBe(false)
        expect(stable(read.json.task)).toEqual(stable(await status(world, taskId)))
        const unknown = await call(client, "task_status", { taskId: "t-00000000" })
        expect(unknown.isError).toBe(true)
        expect(unknown.text).toContain(`Looked in the store ${store} (from this checkout's record ${recordFile}); to serve another, start ratchet mcp with --home <dir>`)
        expect(unknown.json.error).toMatchObject({ _tag: "@ratchet/controller/TaskNotFound", store: `${store} (from this checkout's record ${recordFile})` })

        // the runner it starts is given the same store
        expect((await call(client, "run_start", { taskId })).isError).toBe(false)
        let checked = await call(client, "run_check", { taskId })
        for (let tries = 0; checked.json.task.state !== "VERIFYING" && tries < 240; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 250))
          checked = await call(client, "run_check", { taskId })
        }
        expect(checked.json.task.state, JSON.stringify(checked.json)).toBe("VERIFYING")
      } finally {
        await client.close()
      }
      const lines = stderr().split("\n").filter((line) => line.startsWith("ratchet mcp: serving"))
      expect(lines).toEqual([
        `ratchet mcp: serving project ${projectId} (repo) at ${world.repo} from the store ${store} (from this checkout's record ${recordFile})`
      ])
      expect(fs.readdirSync(scratch)).toEqual([])
      expect((await status(world, taskId)).state).toBe("VERIFYING")

      // --home, then RATCHET_HOME, over the record: an empty store there, and the line says so
      const other = path.join(world.root, "other-home")
      for (const [args, env, origin] of [[["--home", other], [], "--home"], [[], [`RATCHET_HOME=${other}`], "RATCHET_HOME"]] as const) {
        const named = await connectBare(world.repo, scratch, args, env)
        try {
          const missing = await call(named.client, "task_status", { taskId })
          expect(missing.isError).toBe(true)
          expect(missing.text).toContain(`Looked in the store SQLite ${other}/ratchet.db (from ${origin})`)
        } finally {
          await named.client.close()
        }
        expect(named.stderr()).toContain(`from the store SQLite ${other}/ratchet.db (from ${origin}); this checkout's record names ${store}`)
      }

      if (engine.name === "sqlite") {
        // a recorded store that is gone is refused before anything is served, and not created
        fs.renameSync(world.home, `${world.home}.moved`)
        const refused = await new Promise<{ readonly code: number | null; readonly stderr: string }>((resolve, reject) => {
          const child = spawn("env", ["-i", `PATH=${path.dirname(process.execPath)}`, `HOME=${scratch}`, process.execPath, bin, "mcp"], { cwd: world.repo, stdio: ["pipe", "pipe", "pipe"] })
          const err: Array<Buffer> = []
          child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
          child.on("error", reject)
          child.on("close", (code) => resolve({ code, stderr: Buffer.concat(err).toString("utf8") }))
          child.stdin.end()
        })
        expect(refused.code).toBe(2)
        expect(refused.stderr).toContain(`this checkout's record ${recordFile} names the store ${world.home}/ratchet.db, which does not exist; it was not created.`)
        expect(fs.existsSync(world.home)).toBe(false)
        fs.renameSync(`${world.home}.moved`, world.home)
      }
    })

    anyEngine("speaks only JSON-RPC on standard output, never writes as a person, and exits 0 when its input closes", async () => {
      const world = await makeWorld(engine)
      const conversation = await converse(
        world,
        [
          { id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } },
          { method: "notifications/initialized" },
          { id: 2, method: "tools/call", params: { name: "task_create", arguments: { goal: "Make the date test deterministic" } } }
        ],
        { RATCHET_ACTOR: "user:ana" }
      )
      expect(conversation.code, conversation.stderr).toBe(0)
      const lines = conversation.stdout.split("\n").filter((line) => line !== "")
      expect(lines).toHaveLength(2)
      const [initialised, created] = lines.map((line) => JSON.parse(line))
      expect(initialised).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "ratchet" } } })
      expect(created).toMatchObject({ jsonrpc: "2.0", id: 2, result: { isError: false } })
      expect(conversation.stderr).toContain("RATCHET_ACTOR names user:ana, but an MCP client is an agent; writing as agent:mcp")
      const taskId = created.result.structuredContent.taskId as string
      expect((await events(world, taskId))[0]?.actor).toEqual({ kind: "agent", id: "mcp" })
    })

    anyEngine("answers a message over 10 MiB with a JSON-RPC error (its id when the line shows it, else null) and serves the next", async () => {
      const world = await makeWorld(engine)
      const over = "x".repeat(11 * 1024 * 1024)
      const goal = (text: string) => ({ name: "task_create", arguments: { goal: text } })
      const conversation = await converse(
        world,
        [
          { id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } } },
          { method: "notifications/initialized" },
          // the id first, as JSON-RPC clients commonly write it
          { raw: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: goal(over) }), answered: true },
          // the id last, as the MCP SDK writes a request
          { raw: JSON.stringify({ method: "tools/call", params: goal(over), jsonrpc: "2.0", id: "big-3" }), answered: true },
          // no id to be read (an "id" inside the params is not the request's)
          { raw: JSON.stringify({ method: "tools/call", params: { name: "task_create", arguments: { goal: over, id: 99 } }, jsonrpc: "2.0" }), answered: true },
          // just under the limit: read, and refused by the tool's own argument limit
          { id: 5, method: "tools/call", params: goal("y".repeat(9 * 1024 * 1024)) },
          { id: 6, method: "tools/call", params: goal("Make the date test deterministic") }
        ],
        {}
      )
      expect(conversation.code, conversation.stderr).toBe(0)
      const answers = conversation.stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line))
      expect(answers.map((answer) => answer.id)).toEqual([1, 2, "big-3", null, 5, 6])
      for (const refused of answers.slice(1, 4)) {
        expect(refused.error.code).toBe(-32600)
        expect(refused.error.message).toContain("over the limit of 10485760 bytes (10 MiB) for one JSON-RPC message")
        expect(refused.error.message).toContain("put large content in a file in the workspace")
      }
      expect(answers[4].result.isError).toBe(true)
      expect(answers[5].result).toMatchObject({ isError: false, structuredContent: { ok: true, state: "INTERVIEWING" } })
      expect(conversation.stderr).toContain("discarded a message of")
      // Only the last request created a task.
      const listed = await world.ok(["task", "list", "--json"])
      expect(listed.json.tasks.map((task: { readonly goal: string }) => task.goal)).toEqual(["Make the date test deterministic"])
    })
  })
}
