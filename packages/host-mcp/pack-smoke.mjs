/**
 * Packaging smoke test for `@ratchet/host-mcp`. `tools/pack-check.mjs` runs it inside an empty
 * project that installed the packed tarball (with the `@ratchet/*` packages it needs and the MCP
 * SDK): the entry point resolves to the built `dist/`, and the server, connected to the SDK's own
 * client over its in-memory transport, lists its tools (none of which approves) and its resource
 * templates, and answers an unknown tool and a malformed call with tool errors naming the field.
 * No store is opened: those answers come before any. Prints one line; exits non-zero on the first
 * thing that is wrong.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@ratchet/host-mcp"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

/** @param {string} problem */
const fail = (problem) => {
  console.error(`@ratchet/host-mcp smoke: ${problem}`)
  process.exit(1)
}

const entry = import.meta.resolve("@ratchet/host-mcp")
if (!entry.endsWith("/dist/index.js")) fail(`the entry point resolves to ${entry}, not dist/index.js`)

const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair()
const serving = Effect.runFork(McpServer.serve(serverTransport, { version: "0.0.0-smoke", caller: { actor: { kind: "agent", id: "smoke" } } }))
const client = new Client({ name: "pack-smoke", version: "0.0.0" })
await client.connect(clientTransport)

const { tools } = await client.listTools()
if (tools.length === 0 || !tools.some((tool) => tool.name === "task_status")) fail(`tools/list lacks task_status: ${tools.map((t) => t.name).join(", ")}`)
const approving = tools.filter((tool) => /approve|done|settle|rewind|reopen|unblock/.test(tool.name))
if (approving.length > 0) fail(`tools that approve: ${approving.map((t) => t.name).join(", ")}`)
const { resourceTemplates } = await client.listResourceTemplates()
if (!resourceTemplates.some((template) => template.uriTemplate === "ratchet://task/{taskId}")) fail("no ratchet://task/{taskId} template")

const unknown = await client.callTool({ name: "approve", arguments: {} })
if (unknown.isError !== true) fail(`an unknown tool should be a tool error, got ${JSON.stringify(unknown)}`)
const malformed = await client.callTool({ name: "task_status", arguments: { taskId: 42 } })
const text = malformed.content?.[0]?.text ?? ""
if (malformed.isError !== true || !text.startsWith("taskId:")) fail(`a malformed call should be a tool error naming taskId, got ${JSON.stringify(malformed)}`)

await client.close()
await Effect.runPromise(Fiber.join(serving))

console.log(`@ratchet/host-mcp smoke: ok — ${tools.length} tools (none approves), ${resourceTemplates.length} resource templates, tool errors name the field`)
