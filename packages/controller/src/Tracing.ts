/**
 * OpenTelemetry traces, off unless the standard `OTEL_*` variables ask for them.
 *
 * Ratchet's programs (the CLI, the runner, the hooks) open spans with `Effect.withSpan` wherever a
 * person would want to see time go: a command, a run, an attempt (its intents as span events),
 * verification, completion, each append to the store. Without a tracer those spans are Effect's
 * own in-memory ones and go nowhere. {@link layer} replaces the tracer with an OTLP/HTTP exporter
 * (`@effect/opentelemetry`'s, which needs no OpenTelemetry SDK) when
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and loads that
 * exporter only then: a run without the variables imports nothing more and pays one read of the
 * environment (ADR 0036).
 *
 * The variables follow the OpenTelemetry specification: `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none` turn export off; the traces endpoint is used as given, the general
 * one gets `/v1/traces` appended; `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` is `http/protobuf` (the
 * default) or `http/json` (`grpc` is not supported and says so); `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`
 * is `key=value` pairs separated by commas, URL-encoded; `OTEL_SERVICE_NAME` and
 * `OTEL_RESOURCE_ATTRIBUTES` name the service. A child process joins its parent's trace through
 * `TRACEPARENT` (W3C trace context, as the specification's environment carrier has it).
 *
 * Telemetry never stops the work it observes: a variable that cannot be used is reported once on
 * standard error and export stays off, and an unreachable collector costs at most the exporter's
 * shutdown time when the program ends.
 *
 * `@effect/opentelemetry` and `@effect/platform` are optional peer dependencies: the bundled CLI
 * carries them; a library user who sets the variables without them gets the warning, not a crash.
 *
 * @since 0.4.0
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"

type Env = Readonly<Record<string, string | undefined>>

/**
 * Where and how spans are exported.
 *
 * @since 0.4.0
 * @category models
 */
export interface Settings {
  readonly url: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Readonly<Record<string, string>>
}

/**
 * Why the variables cannot be used: the variable, the reason, the fix.
 *
 * @since 0.4.0
 * @category models
 */
export interface Unusable {
  readonly variable: string
  readonly reason: string
  readonly fix: string
}

const nonEmpty = (value: string | undefined): string | null => value === undefined || value.trim() === "" ? null : value.trim()

const headersOf = (variable: string, raw: string): { readonly headers: Readonly<Record<string, string>> } | { readonly unusable: Unusable } => {
  // Entries, made an object at the end: a key like __proto__ is then a header, not a prototype.
  const headers: Array<readonly [string, string]> = []
  for (const pair of raw.split(",")) {
    if (pair.trim() === "") continue
    const at = pair.indexOf("=")
    let key: string
    let value: string
    // A header's value is often a secret (an API key): a refusal names its position, never its text.
    const position = `pair ${headers.length + 1}`
    try {
      key = decodeURIComponent(pair.slice(0, at).trim())
      value = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      return { unusable: { variable, reason: `${position} is not URL-encoded.`, fix: "encode each key and value (e.g. %20 for a space)." } }
    }
    if (at <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key)) {
      return { unusable: { variable, reason: `${position} is not key=value with the key an HTTP token.`, fix: "write it as key1=value1,key2=value2." } }
    }
    // What an HTTP header value may hold (visible ASCII, space and tab): fetch refuses anything else.
    if (!/^[\t\x20-\x7e]*$/.test(value)) {
      return { unusable: { variable, reason: `the value of ${position} (key ${JSON.stringify(key.slice(0, 60))}) holds a character a header cannot carry.`, fix: "keep header values to printable ASCII." } }
    }
    headers.push([key, value])
  }
  return { headers: Object.fromEntries(headers) }
}

/**
 * What the environment asks for: `null` when export is off, the settings, or why they cannot be used.
 *
 * @since 0.4.0
 * @category constructors
 */
export const settings = (env: Env): Settings | Unusable | null => {
  if (nonEmpty(env["OTEL_SDK_DISABLED"])?.toLowerCase() === "true") return null
  const exporters = nonEmpty(env["OTEL_TRACES_EXPORTER"])?.split(",").map((name) => name.trim().toLowerCase()) ?? null
  if (exporters !== null && exporters.includes("none")) return null
  const traces = nonEmpty(env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
  const general = nonEmpty(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
  if (traces === null && general === null) return null
  if (exporters !== null && !exporters.includes("otlp")) {
    return { variable: "OTEL_TRACES_EXPORTER", reason: `names no exporter Ratchet has (${exporters.join(", ").slice(0, 60)}).`, fix: "set it to otlp (the default), or none." }
  }
  // A parent that was not sampled: its trace is not recorded, so this process's part is not sent.
  if (Option.exists(parentOf(env), (parent) => !parent.sampled)) return null
  const variable = traces !== null ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT"
  const raw = (traces ?? general) as string
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    // Not echoed: a collector's URL can carry credentials.
    return { variable, reason: "it is not a URL.", fix: "set it to the collector's address, e.g. http://127.0.0.1:4318, or unset it." }
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { variable, reason: `${parsed.protocol} is not http: or https:.`, fix: "point it at the collector's OTLP/HTTP port (4318 by default)." }
  }
  const url = traces !== null ? parsed.href : `${parsed.href.replace(/\/+$/, "")}/v1/traces`
  const protocolVariable = nonEmpty(env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]) !== null ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL"
  const protocol = nonEmpty(env[protocolVariable]) ?? "http/protobuf"
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    return { variable: protocolVariable, reason: `${JSON.stringify(protocol.slice(0, 40))} is not supported.`, fix: "use http/protobuf or http/json (Ratchet exports over HTTP only)." }
  }
  const headersVariable = nonEmpty(env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) !== null ? "OTEL_EXPORTER_OTLP_TRACES_HEADERS" : "OTEL_EXPORTER_OTLP_HEADERS"
  const given = headersOf(headersVariable, nonEmpty(env[headersVariable]) ?? "")
  return "unusable" in given ? given.unusable : { url, protocol, headers: given.headers }
}

const hex = (length: number) => new RegExp(`^[0-9a-f]{${length}}$`)
const traceIdPattern = hex(32)
const spanIdPattern = hex(16)

/**
 * The span `TRACEPARENT` names (W3C trace context, version 00), as a parent for this process's
 * spans; none when unset or malformed (an all-zero id is invalid by the specification).
 *
 * @since 0.4.0
 * @category constructors
 */
export const parentOf = (env: Env): Option.Option<Tracer.ExternalSpan> => {
  const raw = nonEmpty(env["TRACEPARENT"])
  if (raw === null || raw.length > 55) return Option.none()
  const [version, traceId, spanId, flags] = raw.toLowerCase().split("-")
  if (version !== "00" || traceId === undefined || spanId === undefined || flags === undefined) return Option.none()
  if (!traceIdPattern.test(traceId) || !spanIdPattern.test(spanId) || !/^[0-9a-f]{2}$/.test(flags)) return Option.none()
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return Option.none()
  return Option.some(Tracer.externalSpan({ traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 }))
}

/**
 * The `TRACEPARENT` value that makes a child process's spans children of `span`.
 *
 * @since 0.4.0
 * @category utils
 */
export const traceparentOf = (span: Tracer.AnySpan): string => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/**
 * The environment for a child process started inside the current span: `TRACEPARENT` set to it
 * when export is on, unchanged otherwise (a trace nobody collects needs no propagation).
 *
 * @since 0.4.0
 * @category utils
 */
export const childEnv = (env: NodeJS.ProcessEnv): Effect.Effect<NodeJS.ProcessEnv> => {
  const wanted = settings(env)
  return wanted === null || "variable" in wanted
    ? Effect.succeed(env)
    : Effect.map(Effect.option(Effect.currentSpan), (span) => Option.isSome(span) ? { ...env, TRACEPARENT: traceparentOf(span.value) } : env)
}

/**
 * The service's name, by the specification's precedence: `OTEL_SERVICE_NAME`, then a `service.name`
 * in `OTEL_RESOURCE_ATTRIBUTES`, then the program's own. Always a name: the exporter cannot start
 * without one.
 */
const serviceNameOf = (env: Env, service: string): string => {
  const named = nonEmpty(env["OTEL_SERVICE_NAME"])
  if (named !== null) return named
  for (const pair of (env["OTEL_RESOURCE_ATTRIBUTES"] ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at > 0 && pair.slice(0, at).trim() === "service.name") {
      const value = nonEmpty(pair.slice(at + 1))
      if (value !== null) return value
    }
  }
  return service
}

const warn = (unusable: Unusable): void => {
  process.stderr.write(`warning: traces are not exported: ${unusable.variable}: ${unusable.reason} Fix: ${unusable.fix}\n`)
}

/**
 * The tracer for `service` (unless `OTEL_SERVICE_NAME` names it): an OTLP exporter when the
 * environment asks for one, nothing otherwise. Spans still open when the program ends are flushed
 * for at most `shutdown` (default 1 s) when the layer's scope closes.
 *
 * @since 0.4.0
 * @category layers
 */
export const layer = (service: string, options?: { readonly env?: Env; readonly version?: string; readonly shutdown?: Duration.DurationInput }): Layer.Layer<never> => {
  const env = options?.env ?? process.env
  const wanted = settings(env)
  if (wanted === null) return Layer.empty
  if ("variable" in wanted) {
    warn(wanted)
    return Layer.empty
  }
  return Layer.unwrapEffect(Effect.tryPromise({
    try: async () => {
      const [OtlpTracer, OtlpSerialization, FetchHttpClient] = await Promise.all([
        import("@effect/opentelemetry/OtlpTracer"),
        import("@effect/opentelemetry/OtlpSerialization"),
        import("@effect/platform/FetchHttpClient")
      ])
      return OtlpTracer.layer({
        url: wanted.url,
        headers: wanted.headers,
        resource: { serviceName: serviceNameOf(env, service), ...(options?.version === undefined ? {} : { serviceVersion: options.version }) },
        exportInterval: Duration.seconds(1),
        shutdownTimeout: options?.shutdown ?? Duration.seconds(1)
      }).pipe(
        Layer.provide(wanted.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
        Layer.provide(FetchHttpClient.layer)
      )
    },
    catch: (error) => error
  }).pipe(Effect.map((built) =>
    // Telemetry never stops the work: an exporter that cannot be built is a warning.
    Layer.catchAllCause(built, (cause) =>
      Layer.effectDiscard(Effect.sync(() =>
        warn({
          variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
          reason: `the exporter could not start (${String(Cause.squash(cause)).slice(0, 200)}).`,
          fix: "check the OTEL_* variables, or unset OTEL_EXPORTER_OTLP_ENDPOINT."
        })
      )))
  ), Effect.catchAll((error) =>
    Effect.sync(() => {
      warn({
        variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
        reason: `the exporter could not be loaded (${error instanceof Error ? error.message : String(error)}).`,
        fix: "install @effect/opentelemetry and @effect/platform beside @ratchet/controller, or unset the variable."
      })
      return Layer.empty
    })
  )))
}

/**
 * Runs `effect` as the span `name` of this process, a child of the span `TRACEPARENT` names when
 * there is one.
 *
 * @since 0.4.0
 * @category combinators
 */
export const root = <A, E, R>(
  name: string,
  attributes: Record<string, unknown>,
  effect: Effect.Effect<A, E, R>,
  env: Env = process.env
): Effect.Effect<A, E, R> => {
  const parent = parentOf(env)
  return Effect.withSpan(effect, name, { attributes, ...(Option.isSome(parent) ? { parent: parent.value } : { root: true }) })
}

/**
 * Marks `name` on the current span (an intent dispatched or resolved, a child process started or
 * ended); nothing when there is no span.
 *
 * @since 0.4.0
 * @category combinators
 */
export const event = (name: string, attributes: Record<string, unknown> = {}): Effect.Effect<void> =>
  Effect.flatMap(Effect.option(Effect.currentSpan), (span) =>
    Option.isNone(span)
      ? Effect.void
      : Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeNanos), (now) => Effect.sync(() => span.value.event(name, now, attributes))))

/**
 * Whether the environment asks for export and it can be done.
 *
 * @since 0.4.0
 * @category predicates
 */
export const exporting = (env: Env): boolean => {
  const wanted = settings(env)
  return wanted !== null && !("variable" in wanted)
}

const w3c = { traceId: /^(?!0{32})[0-9a-f]{32}$/, spanId: /^(?!0{16})[0-9a-f]{16}$/ }

/**
 * The current span's trace and span ids when export is on (inside `ratchet.run`, the run's), for
 * the run's `TraceRecorded`; none when off (a trace nobody collects is not worth a row) or when the
 * ids are not W3C ones.
 *
 * @since 0.4.0
 * @category utils
 */
export const exported = (env: Env = process.env): Effect.Effect<Option.Option<{ readonly traceId: string; readonly spanId: string }>> =>
  !exporting(env)
    ? Effect.succeed(Option.none())
    : Effect.map(
      Effect.option(Effect.currentSpan),
      Option.flatMap((span) =>
        w3c.traceId.test(span.traceId) && w3c.spanId.test(span.spanId) ? Option.some({ traceId: span.traceId, spanId: span.spanId }) : Option.none()
      )
    )

/**
 * Exits with `code` once standard output and standard error have written what they hold.
 *
 * @since 0.4.0
 * @category utils
 */
export const exitOnceWritten = (code: number): void => {
  let pending = 2
  const done = () => {
    pending -= 1
    if (pending === 0) process.exit(code)
  }
  process.stdout.write("", done)
  process.stderr.write("", done)
}
