/**
 * The MCP server's test world: a git checkout initialised as a Ratchet project, a SQLite store in
 * a temporary home, the controller over them, and the SDK's own `Client` talking to the server
 * through the SDK's in-memory transport pair. The run starter is a double that records what it
 * was asked to start.
 */
import { execFileSync } from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import * as Controller from "@ratchet/controller/Controller"
import * as Workspace from "@ratchet/controller/Workspace"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as Lessons from "@ratchet/memory/Lessons"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Builtin from "@ratchet/verifier/Builtin"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { afterAll, expect } from "vitest"
import * as McpServer from "../src/McpServer.js"
import * as RunStarter from "../src/RunStarter.js"
import type * as Tools from "../src/Tools.js"

const roots: Array<string> = []
afterAll(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true })
})

/** A new temporary directory (its real path), removed after the test file. */
export const temp = (prefix: string): string => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  roots.push(root)
  return root
}

/** A git repository with one commit and `test/date.test.js`, so `test/**` is a valid scope. */
const checkout = (): string => {
  const root = temp("ratchet-mcp-repo-")
  fs.mkdirSync(path.join(root, "test"))
  fs.writeFileSync(path.join(root, "test", "date.test.js"), "// the date test\n")
  const git = (...args: Array<string>) => execFileSync("git", args, { cwd: root, stdio: "ignore" })
  git("init", "-q")
  git("add", ".")
  git("-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "start")
  return root
}

/** What the run starter double was asked. */
export interface Starts {
  readonly requests: Array<RunStarter.Request>
}

/** The agent the tests' server acts as. */
export const agent: Event.Actor = { kind: "agent", id: "mcp-test" }

/** The DER prefix of a PKCS#8 Ed25519 private key; the 32-byte seed follows it. */
const pkcs8Prefix = Buffer.from("302e020100300506032b657004220420", "hex")

/**
 * A test approval key from a one-byte seed, signing as approver `id` (the controller's
 * `ApproverKey.Signer` shape). Test-only: anyone can recompute its private half.
 */
const signerOf = (seed: number, id: string) => {
  const privateKey = crypto.createPrivateKey({ key: Buffer.concat([pkcs8Prefix, Buffer.alloc(32, seed)]), format: "der", type: "pkcs8" })
  const key = `ed25519:${String(crypto.createPublicKey(privateKey).export({ format: "jwk" }).x)}`
  return { id, key, sign: (message: Uint8Array) => ({ key, value: crypto.sign(null, message, privateKey).toString("base64url") }) }
}

/**
 * A person, for the acts only a person may do (approvals), made through the controller directly
 * and signed with their approval key (register it with `registerApprovers` first).
 */
export const person: Controller.Invocation = { actor: { kind: "user", id: "ana" }, signer: signerOf(5, "ana") }

/** A verifier of record who did none of the work, with an approval key of its own. */
export const verifier: Controller.Invocation = { actor: { kind: "verifier", id: "ci" }, signer: signerOf(7, "ci") }

/** The project's approvers: the person, who then adds the verifier (as `ratchet approver init` and `add` do). */
export const registerApprovers = Effect.flatMap(Controller.Controller, (c) =>
  Effect.zipRight(c.approvers.register(person.signer!), c.approvers.add(person.signer!, { id: "ci", key: verifier.signer!.key })))

/** A project, its store and the server's services, with the run starter double. */
export const world = Effect.gen(function*() {
  const root = checkout()
  const home = temp("ratchet-mcp-home-")
  const located = yield* Workspace.make.init(root, { displayName: "mcp test" })
  const starts: Starts = { requests: [] }
  const store = SqliteStore.layer({ directory: home })
  const leases = LeaseManager.layer({ heartbeatMs: 1_000, graceMs: 2_000 }).pipe(Layer.provide(store))
  const project = Layer.succeed(Controller.Project, located)
  const services = Layer.mergeAll(
    Controller.layer.pipe(Layer.provide(Layer.mergeAll(store, leases, project))),
    store,
    leases,
    project,
    Lessons.layer.pipe(Layer.provide(store)),
    Builtin.layer,
    RunStarter.layer((request) => Effect.sync(() => {
      starts.requests.push(request)
      return { pid: 4242, log: path.join(home, "logs", `${request.taskId}.log`) }
    }))
  )
  return { root, home, located, starts, services }
})

/**
 * A client connected to a server serving `services` over an in-memory pair, for the scope.
 */
export const connect = (
  options: McpServer.Options = { version: "0.0.0-test", caller: { actor: agent } }
): Effect.Effect<Client, never, Tools.Services | Scope.Scope> =>
  Effect.gen(function*() {
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
    yield* Effect.forkScoped(McpServer.serve(serverTransport, options))
    const client = new Client({ name: "ratchet-mcp-test", version: "0.0.0" })
    yield* Effect.acquireRelease(Effect.promise(() => client.connect(clientTransport)), () => Effect.promise(() => client.close()))
    // Listed first, as a host lists them: the client then checks every answer's structuredContent
    // against its tool's outputSchema and throws when one does not conform. `call` checks it again
    // with a strict validator (the SDK's own is lenient).
    const listed = yield* Effect.promise(() => client.listTools())
    outputs.set(client, { validators: new Map(listed.tools.map((tool) => [tool.name, strict.compile(tool.outputSchema ?? {})])), answered: new Set() })
    return client
  })

/** What a tool call answered, with its document parsed. */
export interface Called {
  readonly isError: boolean
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document, read field by field
  readonly json: any
}

/** A strict JSON Schema validator (ajv 8, draft 2020-12, strict mode): what the most exacting client would use. */
export const strict = new Ajv2020({ strict: true, allErrors: true })

/** Per client: each tool's outputSchema compiled, and the tools that answered without an error. */
const outputs = new WeakMap<Client, { readonly validators: ReadonlyMap<string, ValidateFunction>; readonly answered: Set<string> }>()

/** The tools `client` has had an answer from that was not an error. */
export const answered = (client: Client): ReadonlySet<string> => outputs.get(client)?.answered ?? new Set()

/** Calls a tool through the client; its structuredContent must conform to the tool's outputSchema, refusals included. */
export const call = (client: Client, name: string, args: Record<string, unknown>): Effect.Effect<Called> =>
  Effect.promise(async () => {
    const result = await client.callTool({ name, arguments: args })
    const content = result.content as ReadonlyArray<{ readonly type: string; readonly text?: string }>
    const text = content[0]?.text ?? ""
    const known = outputs.get(client)
    const validate = known?.validators.get(name)
    if (validate !== undefined) {
      expect(validate(result.structuredContent), `${name}: ${strict.errorsText(validate.errors)}`).toBe(true)
      if (result.isError !== true) known?.answered.add(name)
    }
    return { isError: result.isError === true, text, json: result.structuredContent }
  })

/** Writes `content` at `relative` inside the checkout; returns the relative path. */
export const write = (root: string, relative: string, content: string): string => {
  fs.mkdirSync(path.dirname(path.join(root, relative)), { recursive: true })
  fs.writeFileSync(path.join(root, relative), content)
  return relative
}

/** A spec whose one criterion runs `node --version`. */
export const spec = [
  "---",
  "goal: Make the date test deterministic",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: The date test passes in every timezone",
  "    required: true",
  "    verify: { command: \"node --version\", expectExitCode: 0, timeoutSeconds: 60 }",
  "execution:",
  "  allowedScope: [\"test/**\"]",
  "---",
  "# Notes",
  ""
].join("\n")

/** A plan of one command step that changes nothing. */
export const plan = ["steps:", "  - id: freeze", "    title: Freeze the clock", "    acRefs: [AC-001]", "    run:", "      command: \"true\"", ""].join("\n")
