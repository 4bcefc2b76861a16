/**
 * The stdio server over in-process streams: standard output carries only the protocol's lines
 * while it serves (the console's output goes to standard error), a line that is not JSON-RPC or a
 * request the protocol rejects does not stop it, and it ends when its input ends, restoring the
 * console.
 */
import { PassThrough } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as McpServer from "../src/McpServer.js"
import { agent, world } from "./fixture.js"

/** The next complete line written to `stream`. */
const nextLine = (stream: PassThrough, seen: Array<string>) =>
  Effect.async<string>((resume) => {
    const check = () => {
      const text = seen.join("")
      const end = text.indexOf("\n")
      if (end === -1) return false
      seen.splice(0, seen.length, text.slice(end + 1))
      resume(Effect.succeed(text.slice(0, end)))
      return true
    }
    if (check()) return
    const onData = (chunk: Buffer) => {
      seen.push(chunk.toString("utf8"))
      if (check()) stream.off("data", onData)
    }
    stream.on("data", onData)
  })

describe("McpServer.serveStdio", () => {
  it.scopedLive("writes only protocol lines on standard output, survives garbage and ends when standard input ends", () =>
    Effect.gen(function*() {
      const { services } = yield* world
      const stdin = new PassThrough()
      const stdout = new PassThrough()
      const seen: Array<string> = []
      const log = console.log
      const fiber = yield* Effect.fork(McpServer.serveStdio({ version: "0.0.0-test", caller: { actor: agent } }, { stdin, stdout }).pipe(Effect.provide(services)))
      const send = (message: unknown) => stdin.write(`${JSON.stringify(message)}\n`)
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
      })
      const initialised = JSON.parse(yield* nextLine(stdout, seen))
      expect(initialised).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "ratchet" } } })
      // Something logging to the console while serving must not corrupt the protocol.
      expect(console.log).not.toBe(log)
      const error = console.error
      const diverted: Array<string> = []
      console.error = (...args: Array<unknown>) => void diverted.push(args.map(String).join(" "))
      try {
        console.log("noise from a dependency")
      } finally {
        console.error = error
      }
      send({ jsonrpc: "2.0", method: "notifications/initialized" })
      send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "task_list", arguments: {} } })
      const listed = JSON.parse(yield* nextLine(stdout, seen))
      expect(listed).toMatchObject({ id: 2, result: { isError: false, structuredContent: { ok: true, tasks: [] } } })
      expect(seen.join("")).toBe("")
      expect(diverted.join("")).toContain("noise from a dependency")

      // A line that is not JSON-RPC is skipped; a request the protocol rejects is answered with a
      // protocol error; a tool refusal is a tool error. The server serves on after each.
      const warnings: Array<string> = []
      console.error = (...args: Array<unknown>) => void warnings.push(args.map(String).join(" "))
      try {
        stdin.write("this is not JSON\n")
        send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "task_status", arguments: ["t-00000000"] } })
        const rejected = JSON.parse(yield* nextLine(stdout, seen))
        expect(rejected).toMatchObject({ jsonrpc: "2.0", id: 3, error: { code: expect.any(Number), message: expect.any(String) } })
      } finally {
        console.error = error
      }
      expect(warnings.join("\n")).toContain("ratchet mcp: Unexpected token")
      send({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "task_status", arguments: { taskId: "t-00000000" } } })
      const refused = JSON.parse(yield* nextLine(stdout, seen))
      expect(refused).toMatchObject({ id: 4, result: { isError: true, content: [{ type: "text" }] } })
      expect(refused.result.content[0].text).toContain("No task \"t-00000000\"")

      stdin.end()
      const ended = yield* Fiber.join(fiber).pipe(Effect.timeout(Duration.seconds(10)), Effect.either)
      expect(ended._tag).toBe("Right")
      expect(console.log).toBe(log)
    }))
})
