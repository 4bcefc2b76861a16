import * as Tracing from "@ratchet/controller/Tracing"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { describe, expect, it } from "vitest"

const endpoint = "http://127.0.0.1:4318"

describe("Tracing.settings", () => {
  // Written by hand from the OpenTelemetry specification's environment variables.
  const cases: ReadonlyArray<readonly [string, Record<string, string>, unknown]> = [
    ["nothing set: off", {}, null],
    ["an empty endpoint: off", { OTEL_EXPORTER_OTLP_ENDPOINT: "  " }, null],
    ["the general endpoint gets /v1/traces", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, { url: `${endpoint}/v1/traces`, protocol: "http/protobuf", headers: {} }],
    ["a trailing slash is not doubled", { OTEL_EXPORTER_OTLP_ENDPOINT: `${endpoint}/base/` }, { url: `${endpoint}/base/v1/traces`, protocol: "http/protobuf", headers: {} }],
    ["the traces endpoint is used as given and wins", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://other:1", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/custom` }, {
      url: `${endpoint}/custom`,
      protocol: "http/protobuf",
      headers: {}
    }],
    ["http/json", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, { url: `${endpoint}/v1/traces`, protocol: "http/json", headers: {} }],
    ["the traces protocol wins", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" }, {
      url: `${endpoint}/v1/traces`,
      protocol: "http/json",
      headers: {}
    }],
    ["headers, URL-encoded", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%20b, x-tenant=t1,," }, {
      url: `${endpoint}/v1/traces`,
      protocol: "http/protobuf",
      headers: { "api-key": "a b", "x-tenant": "t1" }
    }],
    ["OTEL_SDK_DISABLED=true: off", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: "TRUE" }, null],
    ["OTEL_SDK_DISABLED=false: on", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: "false" }, { url: `${endpoint}/v1/traces`, protocol: "http/protobuf", headers: {} }],
    ["OTEL_TRACES_EXPORTER=none: off", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: "otlp, none" }, null],
    ["OTEL_TRACES_EXPORTER=otlp: on", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: "OTLP" }, { url: `${endpoint}/v1/traces`, protocol: "http/protobuf", headers: {} }],
    ["a parent that was not sampled: off", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, TRACEPARENT: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00" }, null],
    ["a header named like a field or a prototype is a header", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: "variable=1,__proto__=2" }, {
      url: `${endpoint}/v1/traces`,
      protocol: "http/protobuf",
      headers: Object.fromEntries([["variable", "1"], ["__proto__", "2"]])
    }]
  ]
  it.each(cases)("%s", (_name, env, expected) => {
    expect(Tracing.settings(env)).toEqual(expected)
  })

  // Refused: the variable, the reason and the fix; never a throw.
  const refused: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ["not a URL", { OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
    ["not http", { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "file:///etc/passwd" }, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"],
    ["grpc", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "OTEL_EXPORTER_OTLP_PROTOCOL"],
    ["a header without =", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: "justakey" }, "OTEL_EXPORTER_OTLP_HEADERS"],
    ["a header key that is no token", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: "bad key=v" }, "OTEL_EXPORTER_OTLP_HEADERS"],
    ["a header value with a line break", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_HEADERS: "k=a%0D%0AInjected: 1" }, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"],
    ["bad percent-encoding", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: "k=%E0%A4%A" }, "OTEL_EXPORTER_OTLP_HEADERS"],
    ["an oversized hostile endpoint", { OTEL_EXPORTER_OTLP_ENDPOINT: `\u0000${"x".repeat(100_000)}` }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
    ["a header value fetch cannot send", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: "k=%E2%82%AC" }, "OTEL_EXPORTER_OTLP_HEADERS"],
    ["an exporter Ratchet does not have", { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: "zipkin" }, "OTEL_TRACES_EXPORTER"]
  ]
  it.each(refused)("refuses %s, naming the variable", (_name, env, variable) => {
    const result = Tracing.settings(env) as Tracing.Unusable
    expect(result.variable).toBe(variable)
    expect(result.reason.length).toBeGreaterThan(0)
    expect(result.reason.length).toBeLessThan(300)
    expect(result.fix.length).toBeGreaterThan(0)
  })

  it("never repeats a header's value or the endpoint in a refusal (they carry secrets)", () => {
    const secret = "sk-live-0123456789"
    for (
      const env of [
        { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${secret}%` },
        { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: `authorization=${secret}\u20ac` },
        { OTEL_EXPORTER_OTLP_ENDPOINT: `user:${secret}@collector` }
      ]
    ) {
      const result = Tracing.settings(env) as Tracing.Unusable
      expect(result.variable).toMatch(/^OTEL_/)
      expect(`${result.reason} ${result.fix}`).not.toContain(secret)
    }
  })
})

describe("Tracing.parentOf", () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
  const spanId = "00f067aa0ba902b7"
  it("reads a W3C traceparent", () => {
    const parent = Tracing.parentOf({ TRACEPARENT: `00-${traceId}-${spanId}-01` })
    expect(Option.map(parent, (span) => [span.traceId, span.spanId, span.sampled])).toEqual(Option.some([traceId, spanId, true]))
    const unsampled = Tracing.parentOf({ TRACEPARENT: `00-${traceId.toUpperCase()}-${spanId}-00` })
    expect(Option.map(unsampled, (span) => [span.traceId, span.sampled])).toEqual(Option.some([traceId, false]))
  })
  it("round-trips through traceparentOf", () => {
    const parent = Option.getOrThrow(Tracing.parentOf({ TRACEPARENT: `00-${traceId}-${spanId}-01` }))
    expect(Tracing.traceparentOf(parent)).toBe(`00-${traceId}-${spanId}-01`)
  })
  const malformed = [
    "",
    "garbage",
    `01-${traceId}-${spanId}-01`,
    `00-${traceId}-${spanId}`,
    `00-${traceId.slice(1)}-${spanId}-01`,
    `00-${"0".repeat(32)}-${spanId}-01`,
    `00-${traceId}-${"0".repeat(16)}-01`,
    `00-${traceId}-${spanId}-zz`,
    `00-${traceId}-${spanId}-01-extra`,
    `00-${"g".repeat(32)}-${spanId}-01`,
    `00-${traceId}-${spanId}-01${" ".repeat(10_000)}x`
  ]
  it.each(malformed)("ignores %j", (raw) => {
    expect(Option.isNone(Tracing.parentOf({ TRACEPARENT: raw }))).toBe(true)
  })
})

describe("Tracing.exported", () => {
  const inSpan = <A>(effect: Effect.Effect<A>) => Effect.runSync(Effect.withSpan(effect, "ratchet.run"))

  it("is the current span's ids when export is on", () => {
    const ids = inSpan(Effect.flatMap(Effect.currentSpan, (span) => Effect.map(Tracing.exported({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }), (found) => [span, found] as const)).pipe(Effect.orDie))
    const [span, found] = ids
    expect(found).toEqual(Option.some({ traceId: span.traceId, spanId: span.spanId }))
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/)
  })

  it("is none when export is off, disabled or unusable, and outside any span", () => {
    expect(inSpan(Tracing.exported({}))).toEqual(Option.none())
    expect(inSpan(Tracing.exported({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: "true" }))).toEqual(Option.none())
    expect(inSpan(Tracing.exported({ OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:4318" }))).toEqual(Option.none())
    expect(Effect.runSync(Tracing.exported({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }))).toEqual(Option.none())
  })

  it("is none for a span whose ids are not W3C ones (an all-zero trace)", () => {
    const zero = Tracing.parentOf({ TRACEPARENT: `00-${"0".repeat(32)}-${"1".repeat(16)}-01` })
    expect(Option.isNone(zero)).toBe(true)
    const external = { _tag: "ExternalSpan", traceId: "0".repeat(32), spanId: "1".repeat(16), sampled: true, context: undefined } as never
    const found = Effect.runSync(Effect.withSpan(Tracing.exported({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }), "x", { parent: external }))
    expect(found).toEqual(Option.none())
  })
})
