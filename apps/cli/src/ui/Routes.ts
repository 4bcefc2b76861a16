/**
 * The run page's routes, as a pure function of the method and the URL: a fixed set of paths, ids
 * checked against the shape of a task id before anything reads the store, and nothing that maps a
 * path onto a file (the assets are constants), so no request can walk the file system. Only GET and
 * HEAD are served: the page never writes.
 *
 * @since 0.3.0
 */

/**
 * What a request asks for.
 *
 * @since 0.3.0
 * @category models
 */
export type Route =
  | { readonly _tag: "Tasks" }
  | { readonly _tag: "Task"; readonly taskId: string; readonly after: number }
  | { readonly _tag: "Run"; readonly taskId: string }
  | { readonly _tag: "Attempt"; readonly taskId: string; readonly stepId: string; readonly attempt: number }
  | { readonly _tag: "Verification"; readonly taskId: string }
  | { readonly _tag: "Position" }
  | { readonly _tag: "Asset"; readonly name: "ui.css" | "ui.js" }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "MethodNotAllowed" }

/**
 * A task id as the controller makes them (`t-` and 8 hex characters), or any id of letters,
 * digits, `.`, `_` and `-` up to 64 characters (ids a store written by another version may hold):
 * never a path separator, `%`, or `..` alone.
 *
 * @since 0.3.0
 * @category guards
 */
export const isTaskId = (id: string): boolean => /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(id) && !id.includes("..")

/** A non-negative integer query value, or null when absent or malformed. */
const position = (value: string | null): number | null => value !== null && /^\d{1,15}$/.test(value) ? Number(value) : null

/**
 * The route of `method` and `url` (a request target: path and query).
 *
 * @since 0.3.0
 * @category constructors
 */
export const parse = (method: string, url: string): Route => {
  if (method !== "GET" && method !== "HEAD") return { _tag: "MethodNotAllowed" }
  let parsed: URL
  try {
    parsed = new URL(url, "http://ui.invalid")
  } catch {
    return { _tag: "NotFound" }
  }
  // The raw path, undecoded: an encoded separator or dot segment is not a route.
  const path = parsed.pathname
  if (path === "/" || path === "/tasks") return { _tag: "Tasks" }
  if (path === "/api/position") return { _tag: "Position" }
  if (path === "/assets/ui.css") return { _tag: "Asset", name: "ui.css" }
  if (path === "/assets/ui.js") return { _tag: "Asset", name: "ui.js" }
  const attempt = /^\/tasks\/([^/]+)\/run\/([a-z0-9][a-z0-9-]{0,63})\/([1-9]\d{0,5})$/.exec(path)
  if (attempt !== null) {
    const taskId = attempt[1] ?? ""
    return isTaskId(taskId) ? { _tag: "Attempt", taskId, stepId: attempt[2] ?? "", attempt: Number(attempt[3]) } : { _tag: "NotFound" }
  }
  const match = /^\/tasks\/([^/]+)(?:\/(run|verification))?$/.exec(path)
  if (match === null) return { _tag: "NotFound" }
  const taskId = match[1] ?? ""
  if (!isTaskId(taskId)) return { _tag: "NotFound" }
  if (match[2] === "run") return { _tag: "Run", taskId }
  if (match[2] === "verification") return { _tag: "Verification", taskId }
  const after = parsed.searchParams.get("after")
  const from = position(after)
  if (after !== null && from === null) return { _tag: "NotFound" }
  return { _tag: "Task", taskId, after: from ?? 0 }
}
