/**
 * `ratchet ui`'s server on a loopback port, over a stand-in controller: the checks a request meets
 * before any page (the Host header, the token, the method, the route) and the headers of every
 * answer, including a refusal and a missing task.
 */
import * as http from "node:http"
import * as Controller from "@ratchet/controller/Controller"
import * as ControllerError from "@ratchet/controller/ControllerError"
import type * as TaskView from "@ratchet/controller/TaskView"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Server from "../../src/ui/Server.js"

const taskId = "t-3f9a1c2b"
const view = { taskId, goal: "<script>window.pwned=1</script>", state: "RUNNING", stage: "impl", lastLsn: 17, lease: { status: "free" }, planStale: false, next: "wait" } as unknown as TaskView.TaskView

const controller = {
  listTasks: Effect.succeed([view]),
  status: (id: string) => Effect.fail(new ControllerError.TaskNotFound({ taskId: id, projectId: "prj-1" }))
} as unknown as Controller.Service

interface Answer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

const request = (url: string, options: { readonly method?: string; readonly headers?: Record<string, string> } = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (body += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on("error", reject)
    req.end()
  })

const start = async (token: string | null) => {
  const bound = Effect.runSync(Deferred.make<string>())
  // The stand-in controller answers every route these tests reach; none reads the store's services.
  const served = Server.serve({ host: "127.0.0.1", port: 0, token }, (url) => Deferred.succeed(bound, url)).pipe(
    Effect.provideService(Controller.Controller, controller)
  ) as Effect.Effect<never, unknown>
  const fiber = Effect.runFork(served)
  const url = await Effect.runPromise(Deferred.await(bound))
  return { url, stop: () => Effect.runPromise(Fiber.interrupt(fiber)) }
}

describe("Server without a token (loopback)", () => {
  let server: { url: string; stop: () => Promise<unknown> }
  beforeAll(async () => {
    server = await start(null)
  })
  afterAll(() => server.stop())

  it("binds 127.0.0.1 on a free port and serves the task list with the security headers", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    const answer = await request(server.url)
    expect(answer.status).toBe(200)
    expect(answer.headers["content-security-policy"]).toBe(Server.securityHeaders["content-security-policy"])
    expect(answer.headers["content-security-policy"]).not.toContain("unsafe-inline")
    expect(answer.headers["x-content-type-options"]).toBe("nosniff")
    expect(answer.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(answer.body).toContain("&lt;script&gt;window.pwned=1&lt;/script&gt;")
    expect(answer.body).toContain("data-lsn=\"17\"")
  })

  it("answers the store position as JSON", async () => {
    const answer = await request(`${server.url}api/position`)
    expect(JSON.parse(answer.body)).toEqual({ lsn: 17 })
    expect(answer.headers["content-type"]).toBe("application/json")
  })

  it("serves its script and stylesheet with their types", async () => {
    expect((await request(`${server.url}assets/ui.js`)).headers["content-type"]).toBe("text/javascript; charset=utf-8")
    expect((await request(`${server.url}assets/ui.css`)).headers["content-type"]).toBe("text/css; charset=utf-8")
  })

  it.each(["POST", "PUT", "DELETE", "PATCH"])("refuses %s with 405 and Allow", async (method) => {
    const answer = await request(server.url, { method })
    expect(answer.status).toBe(405)
    expect(answer.headers["allow"]).toBe("GET, HEAD")
    expect(answer.headers["content-security-policy"]).toBeDefined()
  })

  it.each(["/tasks/..%2f..%2fetc%2fpasswd", "/assets/..%2f..%2fpackage.json", "/etc/passwd", "/tasks/t-3f9a1c2b/blobs/x"])("answers %s with 404", async (path) => {
    const answer = await request(`${server.url}${path.slice(1)}`)
    expect(answer.status).toBe(404)
    expect(answer.headers["x-content-type-options"]).toBe("nosniff")
  })

  it("answers an unknown task with 404 naming it", async () => {
    const answer = await request(`${server.url}tasks/t-00000000`)
    expect(answer.status).toBe(404)
    expect(answer.body).toContain("t-00000000")
  })

  it("refuses a request naming another host (DNS rebinding) with 421", async () => {
    const answer = await request(server.url, { headers: { host: "attacker.example:80" } })
    expect(answer.status).toBe(421)
    const local = await request(server.url, { headers: { host: `localhost:${new URL(server.url).port}` } })
    expect(local.status).toBe(200)
  })
})

describe("Server with a token", () => {
  const token = "a-token-of-enough-length"
  let server: { url: string; stop: () => Promise<unknown> }
  beforeAll(async () => {
    server = await start(token)
  })
  afterAll(() => server.stop())

  it("asks for the token without it, and on a wrong one", async () => {
    const bare = await request(server.url)
    expect(bare.status).toBe(401)
    expect(bare.body).toContain("needs its token")
    expect(bare.body).not.toContain("pwned")
    const wrong = await request(`${server.url}?token=wrong`)
    expect(wrong.status).toBe(401)
    expect(wrong.body).toContain("not this server")
    expect((await request(`${server.url}api/position`)).status).toBe(401)
  })

  it("sets a strict cookie for the right token and redirects to the page without it", async () => {
    const given = await request(`${server.url}tasks?token=${token}`)
    expect(given.status).toBe(303)
    expect(given.headers["location"]).toBe("/tasks")
    const cookie = given.headers["set-cookie"]?.[0] ?? ""
    expect(cookie).toContain("HttpOnly")
    expect(cookie).toContain("SameSite=Strict")
    const page = await request(server.url, { headers: { cookie: cookie.split(";")[0] ?? "" } })
    expect(page.status).toBe(200)
    expect(page.body).toContain(taskId)
  })

  it("compares tokens whole", () => {
    expect(Server.tokenMatches(token, token)).toBe(true)
    expect(Server.tokenMatches(token, `${token}x`)).toBe(false)
    expect(Server.tokenMatches(token, token.slice(0, -1))).toBe(false)
    expect(Server.tokenMatches(token, "")).toBe(false)
  })
})

describe("Server.isLoopback", () => {
  it.each(["127.0.0.1", "127.1.2.3", "::1", "localhost"])("%s is loopback", (host) => expect(Server.isLoopback(host)).toBe(true))
  it.each(["0.0.0.0", "::", "192.168.1.2", "127.0.0.1.example.com", "localhost.example.com"])("%s is not", (host) => expect(Server.isLoopback(host)).toBe(false))
})
