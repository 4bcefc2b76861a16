/**
 * The run page's router: a hand-written table of the routes it accepts and of the requests it
 * refuses (traversal, encoded separators, malformed ids and positions, other methods).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Routes from "../../src/ui/Routes.js"

const accepted: ReadonlyArray<readonly [string, string, Routes.Route]> = [
  ["GET", "/", { _tag: "Tasks" }],
  ["HEAD", "/", { _tag: "Tasks" }],
  ["GET", "/tasks", { _tag: "Tasks" }],
  ["GET", "/tasks/t-3f9a1c2b", { _tag: "Task", taskId: "t-3f9a1c2b", after: 0 }],
  ["GET", "/tasks/t-3f9a1c2b?after=200", { _tag: "Task", taskId: "t-3f9a1c2b", after: 200 }],
  ["GET", "/tasks/t-3f9a1c2b?token=abc", { _tag: "Task", taskId: "t-3f9a1c2b", after: 0 }],
  ["GET", "/tasks/t-3f9a1c2b/run", { _tag: "Run", taskId: "t-3f9a1c2b" }],
  ["GET", "/tasks/t-3f9a1c2b/verification", { _tag: "Verification", taskId: "t-3f9a1c2b" }],
  ["GET", "/tasks/t-3f9a1c2b/run/freeze-clock/2", { _tag: "Attempt", taskId: "t-3f9a1c2b", stepId: "freeze-clock", attempt: 2 }],
  ["GET", "/api/position", { _tag: "Position" }],
  ["GET", "/assets/ui.css", { _tag: "Asset", name: "ui.css" }],
  ["GET", "/assets/ui.js", { _tag: "Asset", name: "ui.js" }]
]

const notFound: ReadonlyArray<readonly [string, string]> = [
  ["a path outside the routes", "/etc/passwd"],
  ["a dot-dot segment", "/tasks/../../etc/passwd"],
  ["an encoded separator", "/tasks/..%2f..%2fetc%2fpasswd"],
  ["an encoded dot-dot id", "/tasks/%2e%2e/run"],
  ["a dot-dot id", "/tasks/../run"],
  ["an id with a percent", "/tasks/t-1%00"],
  ["an id starting with a dot", "/tasks/.hidden"],
  ["an id too long", `/tasks/t-${"a".repeat(80)}`],
  ["an id with markup", "/tasks/<script>"],
  ["an unknown sub-page", "/tasks/t-3f9a1c2b/blobs"],
  ["a deeper path", "/tasks/t-3f9a1c2b/run/x"],
  ["an asset that is not one", "/assets/../../package.json"],
  ["another asset name", "/assets/ui.map"],
  ["a malformed position", "/tasks/t-3f9a1c2b?after=-1"],
  ["a non-numeric position", "/tasks/t-3f9a1c2b?after=1e3"],
  ["a trailing slash", "/tasks/t-3f9a1c2b/"],
  ["an attempt 0", "/tasks/t-3f9a1c2b/run/build/0"],
  ["an attempt with a leading zero", "/tasks/t-3f9a1c2b/run/build/01"],
  ["an attempt out of range", "/tasks/t-3f9a1c2b/run/build/1234567"],
  ["a step id with capitals", "/tasks/t-3f9a1c2b/run/Build/1"],
  ["a step id with dots", "/tasks/t-3f9a1c2b/run/..%2f/1"],
  ["an attempt with a bad task id", "/tasks/..%2f/run/build/1"],
  ["a backslash path", "/tasks\\..\\x"]
]

describe("Routes.parse", () => {
  for (const [method, url, route] of accepted) {
    it(`accepts ${method} ${url}`, () => {
      expect(Routes.parse(method, url)).toEqual(route)
    })
  }

  for (const [name, url] of notFound) {
    it(`answers ${name} (${url.slice(0, 40)}) with NotFound`, () => {
      expect(Routes.parse("GET", url)._tag).toBe("NotFound")
    })
  }

  for (const method of ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "get"]) {
    it(`refuses ${method} whatever the path`, () => {
      expect(Routes.parse(method, "/")._tag).toBe("MethodNotAllowed")
      expect(Routes.parse(method, "/tasks/t-3f9a1c2b")._tag).toBe("MethodNotAllowed")
    })
  }
})

describe("Routes.isTaskId", () => {
  it.each(["t-3f9a1c2b", "task_1", "a", "A.b-c"])("accepts %s", (id) => expect(Routes.isTaskId(id)).toBe(true))
  it.each(["", "..", "a..b", ".a", "-a", "a/b", "a b", "a%2f", "é", "a".repeat(65)])("refuses %j", (id) => expect(Routes.isTaskId(id)).toBe(false))
})
