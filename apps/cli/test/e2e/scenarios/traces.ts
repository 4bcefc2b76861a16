/**
 * Traces as an operator's collector receives them (ADR 0036): the bundled CLI and the runner it
 * starts export OTLP/HTTP to a real HTTP server in this test, one trace per `ratchet run` — the
 * command's span, the runner's span under it (TRACEPARENT), the run, an attempt per step with the
 * child's start and end as events, the store's appends — and nothing at all when no `OTEL_*`
 * variable asks for it. A variable that cannot be used warns and the command still does its work.
 * Each engine says on the append spans what the append cost it: SQLite the statements of its one
 * transaction, PostgreSQL the path it took (one statement, or the full transaction).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, engineIndependent, events, makeWorld, removeWorlds, toPlanApproved } from "../harness.js"
import { commandStep, planOf } from "./run.js"

interface Received {
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

interface Span {
  readonly service: string
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string
  readonly attributes: Record<string, unknown>
  readonly events: ReadonlyArray<string>
}

/** An OTLP attribute value as a plain value. */
const valueOf = (value: Record<string, unknown>): unknown =>
  "stringValue" in value ? value["stringValue"] : "intValue" in value ? Number(value["intValue"]) : "boolValue" in value ? value["boolValue"] : "doubleValue" in value ? value["doubleValue"] : value

/** The parts of an OTLP/JSON traces request this test reads. */
interface OtlpAttribute {
  readonly key: string
  readonly value: Record<string, unknown>
}
interface OtlpBody {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<OtlpAttribute> }
    readonly scopeSpans: ReadonlyArray<{
      readonly spans: ReadonlyArray<{
        readonly name: string
        readonly traceId: string
        readonly spanId: string
        readonly parentSpanId?: string
        readonly attributes?: ReadonlyArray<OtlpAttribute>
        readonly events?: ReadonlyArray<{ readonly name: string }>
      }>
    }>
  }>
}

/** Every span of the JSON bodies received. */
const spansOf = (bodies: ReadonlyArray<Received>): ReadonlyArray<Span> =>
  bodies.flatMap((got) => {
    const data = JSON.parse(got.body.toString("utf8")) as OtlpBody
    return data.resourceSpans.flatMap((resource) => {
      const named = resource.resource.attributes.find((attribute) => attribute.key === "service.name")
      const service = named === undefined ? "" : String(valueOf(named.value))
      return resource.scopeSpans.flatMap((scope) =>
        scope.spans.map((span): Span => ({
          service,
          name: span.name,
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? "",
          attributes: Object.fromEntries((span.attributes ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)])),
          events: (span.events ?? []).map((event) => event.name)
        })))
    })
  })

export const traces = (engine: Engine) => {
  let server: http.Server
  const received: Array<Received> = []
  let endpoint = ""

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        received.push({ path: request.url ?? "", contentType: String(request.headers["content-type"] ?? ""), body: Buffer.concat(chunks) })
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    removeWorlds()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  // The run's trace shows each engine's appends, so it runs on both; the export's format does not.
  const anyEngine = engineIndependent(engine)

  describe("traces", { timeout: 300_000 }, () => {
    it("a run exports one trace: the command, the runner under it, the run, each attempt with its child's start and end, the appends", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Traced", undefined, planOf([commandStep("one", "true"), commandStep("two", "echo two", { needs: ["one"] })]))
      expect(received).toEqual([])
      const ran = await world.run(["run", taskId], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" } })
      expect(ran.code, ran.stdout + ran.stderr).toBe(0)
      const bodies = received.splice(0)
      expect(bodies.length).toBeGreaterThan(0)
      for (const body of bodies) {
        expect(body.path).toBe("/v1/traces")
        expect(body.contentType).toContain("application/json")
      }
      const spans = spansOf(bodies)
      const one = (name: string) => {
        const found = spans.filter((span) => span.name === name)
        expect(found.length, `${name} in ${spans.map((s) => s.name).join(", ")}`).toBe(1)
        return found[0] as Span
      }
      const command = one("ratchet run")
      expect(command.service).toBe("ratchet")
      expect(command.parentSpanId).toBe("")
      expect(command.attributes["ratchet.exit_code"]).toBe(0)
      const runner = one("ratchet-runner")
      expect(runner.service).toBe("ratchet-runner")
      expect(runner.parentSpanId).toBe(command.spanId)
      const run = one("ratchet.run")
      expect(run.parentSpanId).toBe(runner.spanId)
      expect(run.attributes["ratchet.task"]).toBe(taskId)
      expect(String(run.attributes["ratchet.run"])).toMatch(/^run-/)
      const attempts = spans.filter((span) => span.name === "ratchet.attempt")
      expect(attempts.map((span) => span.attributes["ratchet.step"]).sort()).toEqual(["one", "two"])
      for (const attempt of attempts) {
        expect(attempt.parentSpanId).toBe(run.spanId)
        expect(attempt.attributes["ratchet.run"]).toBe(run.attributes["ratchet.run"])
        expect(attempt.events).toEqual(["child.started", "child.exited"])
      }
      const appends = spans.filter((span) => span.name === "ratchet.store.append")
      expect(appends.length).toBeGreaterThanOrEqual(3)
      for (const append of appends) {
        expect(append.attributes["ratchet.stream"]).toBe(taskId)
        expect(Number(append.attributes["ratchet.events"])).toBeGreaterThan(0)
        if (engine.name === "sqlite") {
          // One transaction: BEGIN, the counter, the state read, the rows, COMMIT.
          expect(append.attributes["db.system"]).toBe("sqlite")
          expect(Number(append.attributes["ratchet.statements"])).toBeGreaterThanOrEqual(4 + Number(append.attributes["ratchet.events"]))
          expect(append.attributes["ratchet.commits"]).toBe(1)
        } else {
          expect(append.attributes["db.system"]).toBe("postgresql")
          expect(["one-call", "full"]).toContain(append.attributes["ratchet.append.path"])
        }
      }
      if (engine.name !== "sqlite") {
        // The runner's appends after its first know their branch: one statement each.
        expect(appends.some((append) => append.attributes["ratchet.append.path"] === "one-call" && append.attributes["ratchet.statements"] === 1)).toBe(true)
      }
      // One trace, whatever process a span came from.
      expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([command.traceId]))
      // The run says which trace its runner exported under (the run page links it), once.
      const traced = (await events(world, taskId)).filter((record) => record.type === "TraceRecorded")
      expect(traced.map((record) => [record.event.runId, record.event.traceId, record.event.spanId])).toEqual([[run.attributes["ratchet.run"], command.traceId, run.spanId]])
      // Verification and completion: their commands' traces hold the use case's span, under the command's.
      const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }
      const verified = await world.verify(taskId, [], "", otel)
      expect(verified.code, verified.stdout + verified.stderr).toBe(0)
      const done = await world.run(["done", taskId, "--json"], { env: otel })
      expect(done.code, done.stdout + done.stderr).toBe(0)
      const later = spansOf(received.splice(0))
      for (const [command, useCase] of [["ratchet verify", "ratchet.verify"], ["ratchet done", "ratchet.complete"]] as const) {
        const commandSpan = later.filter((span) => span.name === command)
        expect(commandSpan.length, `${command} in ${later.map((span) => span.name).join(", ")}`).toBe(1)
        const inner = later.filter((span) => span.name === useCase)
        expect(inner.length, useCase).toBe(1)
        expect(inner[0]?.parentSpanId).toBe(commandSpan[0]?.spanId)
        expect(inner[0]?.traceId).toBe(commandSpan[0]?.traceId)
        expect(inner[0]?.attributes["ratchet.task"]).toBe(taskId)
      }
      // A run without export records none.
      const quietTask = await toPlanApproved(world, "Not traced", undefined, planOf([commandStep("one", "true")]))
      expect((await world.run(["run", quietTask])).code).toBe(0)
      expect((await events(world, quietTask)).filter((record) => record.type === "TraceRecorded")).toEqual([])
    })

    anyEngine("exports protobuf by default, nothing without the variables, and a variable it cannot use only warns", async () => {
      const world = await makeWorld(engine)
      const quiet = await world.run(["task", "list", "--json"])
      expect(quiet.code, quiet.stderr).toBe(0)
      expect(received).toEqual([])

      const proto = await world.run(["task", "list", "--json"], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } })
      expect(proto.code, proto.stderr).toBe(0)
      // One export or more (a slow command's finished spans may leave before its own), all protobuf.
      const bodies = received.splice(0)
      expect(bodies.length).toBeGreaterThanOrEqual(1)
      for (const body of bodies) expect(body.contentType).toContain("application/x-protobuf")
      expect(bodies.some((body) => body.body.includes(Buffer.from("ratchet task list")))).toBe(true)

      const off = await world.run(["task", "list", "--json"], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: "true" } })
      expect(off.code, off.stderr).toBe(0)
      expect(received).toEqual([])

      const bad = await world.run(["task", "list", "--json"], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:4318" } })
      expect(bad.code, bad.stderr).toBe(0)
      expect(JSON.parse(bad.stdout).ok).toBe(true)
      expect(bad.stderr).toContain("warning: traces are not exported: OTEL_EXPORTER_OTLP_ENDPOINT")
      expect(received).toEqual([])

      // A collector that is not there costs the command nothing but its exit.
      const down = await world.run(["task", "list", "--json"], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" } })
      expect(down.code, down.stderr).toBe(0)
      expect(down.stderr).toBe("")
    })
  })
}
