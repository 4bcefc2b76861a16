/**
 * `ratchet ui`'s server: `@effect/platform`'s HTTP server on Node, serving the run page's fixed
 * routes read-only over the controller's read use cases (the task list and status, the gate, a
 * page of the log, the run's events as `run.md` reads them, the episode's evidence). It writes
 * nothing: GET and HEAD only, every other method 405.
 *
 * Security, in the order a request meets it:
 * - the `Host` header must name this server (a loopback bind answers only to 127.0.0.1, ::1 or
 *   localhost with its port), so a web page elsewhere cannot read the store through DNS
 *   rebinding;
 * - with a token (required when listening beyond loopback) every route needs it, as the cookie
 *   the page sets after `?token=` or as `?token=` itself, compared in constant time;
 * - the route is one of a fixed set, ids are checked before the store is read, and assets are
 *   constants, so no path reaches the file system;
 * - every response carries a strict Content-Security-Policy (scripts and styles from this origin
 *   only, nothing inline, no frames, no forms elsewhere), `X-Content-Type-Options: nosniff`,
 *   `Referrer-Policy: no-referrer` and `Cache-Control: no-store`.
 *
 * @since 0.3.0
 */
import * as crypto from "node:crypto"
import * as Http from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import * as RunReport from "@ratchet/controller/RunReport"
import * as TaskReads from "@ratchet/controller/TaskReads"
import * as Verify from "@ratchet/controller/Verify"
import * as Effect from "effect/Effect"
import * as Assets from "./Assets.js"
import * as AttemptPage from "./AttemptPage.js"
import * as Pages from "./Pages.js"
import * as Routes from "./Routes.js"
import * as Timeline from "./Timeline.js"

/**
 * How the server listens.
 *
 * @since 0.3.0
 * @category models
 */
export interface Options {
  readonly host: string
  /** 0 for a free port. */
  readonly port: number
  /** The token every request must present, or null on a loopback bind without one. */
  readonly token: string | null
  /** A trace viewer's address with `{traceId}` in it, the run page's traces link to; null shows the ids alone. */
  readonly traceUrl?: string | null
}

/**
 * Whether `host` is this machine's loopback interface.
 *
 * @since 0.3.0
 * @category guards
 */
export const isLoopback = (host: string): boolean => host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

/**
 * The headers of every response.
 *
 * @since 0.3.0
 * @category constants
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store"
}

const cookieName = "ratchet_ui_token"

/**
 * Whether `given` is `token`, in time that does not depend on where they differ (both are hashed
 * to the same length first).
 *
 * @since 0.3.0
 * @category guards
 */
export const tokenMatches = (token: string, given: string): boolean =>
  crypto.timingSafeEqual(crypto.createHash("sha256").update(token).digest(), crypto.createHash("sha256").update(given).digest())

/**
 * A fresh token: 24 random bytes, base64url.
 *
 * @since 0.3.0
 * @category constructors
 */
export const newToken = (): string => crypto.randomBytes(24).toString("base64url")

const respond = (status: number, body: string, contentType: string, extra: Record<string, string> = {}) =>
  HttpServerResponse.text(body, { status, contentType, headers: { ...securityHeaders, ...extra } })

const htmlResponse = (status: number, body: string, extra: Record<string, string> = {}) => respond(status, body, "text/html; charset=utf-8", extra)

/** The hosts a request may name: the bound address and, on loopback, its other names. */
const allowedHosts = (host: string, port: number): ReadonlySet<string> =>
  new Set(isLoopback(host) ? [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${host}:${port}`] : [])

/** The store's newest position this project's tasks show: what the live update compares. */
const position = Effect.flatMap(Controller.Controller, (c) => Effect.map(c.listTasks, (views) => views.reduce((max, view) => Math.max(max, view.lastLsn), 0)))

type Failure = { readonly _tag?: string; readonly message?: string; readonly fix?: string }

/** A read that failed, as a page: not found for an unknown task, the refusal's message otherwise. */
const failed = (error: unknown) => {
  const { _tag = "", fix, message } = error as Failure
  const notFound = _tag.endsWith("NotFound")
  const text = String(message ?? _tag)
  return htmlResponse(notFound ? 404 : 400, Pages.problem(notFound ? "Not found" : "Cannot show this", text, typeof fix === "string" && !text.includes(fix) ? fix : null))
}

/** The page of one route (a route that reads the store). */
const render = (route: Routes.Route, traceUrl: string | null) =>
  Effect.gen(function*() {
    const c = yield* Controller.Controller
    const lsn = yield* position
    switch (route._tag) {
      case "Tasks":
        return htmlResponse(200, Pages.tasks(yield* c.listTasks, lsn))
      case "Task": {
        const view = yield* c.status(route.taskId)
        const explained = yield* c.gate(route.taskId, undefined)
        const history = yield* TaskReads.logPage(route.taskId, { afterLsn: route.after, limit: Pages.historyWindow })
        return htmlResponse(200, Pages.task(view, explained, history, route.after, lsn))
      }
      case "Run": {
        const view = yield* c.status(route.taskId)
        const { branch, task } = yield* TaskReads.taskOf(route.taskId)
        if (task.run === null || task.plan === null) return htmlResponse(200, Timeline.render(view, null, lsn))
        // The run's last window of attempts, read by index: a run of thousands reads what it draws.
        const recent = yield* RunReport.recentRun(route.taskId, task.run.runId, Timeline.attemptWindow, branch)
        return htmlResponse(200, Timeline.render(view, Timeline.of(task.run.runId, task.plan.plan, recent.events, Date.now(), recent), lsn, traceUrl))
      }
      case "Attempt": {
        const view = yield* c.status(route.taskId)
        const { branch, task } = yield* TaskReads.taskOf(route.taskId)
        const missing = htmlResponse(404, Pages.problem("Not found", `Task ${route.taskId}'s run has no attempt ${route.attempt} of step ${route.stepId}.`, "The run page lists every attempt."))
        if (task.run === null || task.plan === null) return missing
        // The window first (what the run page links to); the whole run for an attempt before it.
        const recent = yield* RunReport.recentRun(route.taskId, task.run.runId, Timeline.attemptWindow, branch)
        const found = (timeline: Timeline.Timeline) => timeline.attempts.find((a) => a.stepId === route.stepId && a.attempt === route.attempt)
        let timeline = Timeline.of(task.run.runId, task.plan.plan, recent.events, Date.now(), recent)
        if (found(timeline) === undefined && recent.partial) {
          const events = yield* RunReport.runEvents(route.taskId, task.run.runId, branch)
          timeline = Timeline.of(task.run.runId, task.plan.plan, events, Date.now(), { unwindowed: true })
        }
        const bar = found(timeline)
        const lane = timeline.steps.find((step) => step.stepId === route.stepId)
        return bar === undefined || lane === undefined ? missing : htmlResponse(200, AttemptPage.render(view, timeline, lane, bar, lsn))
      }
      case "Verification": {
        const view = yield* c.status(route.taskId)
        const shown = yield* Verify.evidenceOf(route.taskId, [])
        return htmlResponse(200, Pages.verification(view, shown, lsn))
      }
      case "Position":
        return respond(200, JSON.stringify({ lsn }), "application/json")
      default:
        return htmlResponse(404, Pages.problem("Not found", "There is no such page.", "Start from the task list at /."))
    }
  })

/**
 * The app: one request to one response, under the checks above.
 *
 * @since 0.3.0
 * @category constructors
 */
export const app = (options: Options, port: number) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const hosts = allowedHosts(options.host, port)
    if (hosts.size > 0 && !hosts.has(request.headers["host"] ?? "")) {
      return htmlResponse(421, Pages.problem("Wrong host", "This server answers only to the address it printed.", "Open the URL ratchet ui printed."))
    }
    const route = Routes.parse(request.method, request.url)
    if (route._tag === "MethodNotAllowed") {
      return htmlResponse(405, Pages.problem("Method not allowed", "This page is read-only: it answers GET and HEAD only.", null), { allow: "GET, HEAD" })
    }
    if (route._tag === "Asset") {
      return route.name === "ui.css" ? respond(200, Assets.css, "text/css; charset=utf-8") : respond(200, Assets.js, "text/javascript; charset=utf-8")
    }
    if (options.token !== null) {
      const url = new URL(request.url, "http://ui.invalid")
      const given = url.searchParams.get("token")
      if (given !== null && tokenMatches(options.token, given)) {
        url.searchParams.delete("token")
        return respond(303, "", "text/plain", {
          location: `${url.pathname}${url.search}`,
          "set-cookie": `${cookieName}=${encodeURIComponent(given)}; HttpOnly; SameSite=Strict; Path=/`
        })
      }
      const cookie = request.cookies[cookieName]
      if (cookie === undefined || !tokenMatches(options.token, cookie)) {
        return route._tag === "Position"
          ? respond(401, JSON.stringify({ error: "token required" }), "application/json")
          : htmlResponse(401, Pages.token(route._tag === "NotFound" ? "/" : url.pathname, given !== null))
      }
    }
    if (route._tag === "NotFound") return htmlResponse(404, Pages.problem("Not found", "There is no such page.", "Start from the task list at /."))
    return yield* render(route, options.traceUrl ?? null).pipe(
      Effect.catchAll((error) => Effect.succeed(failed(error))),
      Effect.catchAllDefect((defect) =>
        Effect.succeed(htmlResponse(500, Pages.problem("Unexpected", `unexpected: ${defect instanceof Error ? defect.message : String(defect)}`, "Report it if it persists.")))
      )
    )
  })

/**
 * Listens, calls `started` with the URL once bound, and serves until interrupted.
 *
 * @since 0.3.0
 * @category constructors
 */
export const serve = (options: Options, started: (url: string) => Effect.Effect<void>) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* NodeHttpServer.make(() => Http.createServer(), { host: options.host, port: options.port }).pipe(
      Effect.mapError((error) => {
        const cause = error.cause as { readonly code?: unknown; readonly message?: unknown } | undefined
        const code = typeof cause?.code === "string" ? cause.code : ""
        return new ControllerError.InvalidRequest({
          field: code === "EADDRINUSE" ? "--port" : "--host",
          reason: `cannot listen on ${options.host} port ${options.port}: ${code === "EADDRINUSE" ? "the port is in use" : String(cause?.message ?? code)}.`,
          fix: code === "EADDRINUSE" ? "Leave --port out for a free port, or name another." : "Name an address of this machine with --host, or leave it out for 127.0.0.1."
        })
      })
    )
    const address = server.address
    const port = address._tag === "TcpAddress" ? address.port : options.port
    const shown = options.host.includes(":") ? `[${options.host}]` : options.host
    // No spans from the page's requests: the platform's tracing middleware would record each URL,
    // the token a person opens the page with included, and export it when traces are on.
    yield* HttpServer.serveEffect(app(options, port)).pipe(Effect.provideService(HttpServer.HttpServer, server), Effect.withTracerEnabled(false))
    yield* started(`http://${shown}:${port}/`)
    return yield* Effect.never
  }))
