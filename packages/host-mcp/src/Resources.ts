/**
 * The MCP server's resources: what a host can attach to the agent's context without a tool call.
 * Each task of the project is four resources, named by URI:
 *
 * | URI | what | type |
 * |---|---|---|
 * | `ratchet://task/<taskId>` | the status view, as `ratchet status <task> --json` prints it | `application/json` |
 * | `ratchet://task/<taskId>/spec` | the spec as `.ratchet/tasks/…/spec.md` renders it, from the store | `text/markdown` |
 * | `ratchet://task/<taskId>/plan` | the plan, likewise `plan.md` | `text/markdown` |
 * | `ratchet://task/<taskId>/log` | the newest events, one `ratchet log --json` record a line | `application/x-ndjson` |
 *
 * They are rendered from the runtime store on every read (the store is the authority; the files
 * under `.ratchet/tasks/` are projections of it), and reading one never writes.
 *
 * @since 0.1.0
 */
import * as Controller from "@ratchet/controller/Controller"
import * as Documents from "@ratchet/controller/Documents"
import * as TaskReads from "@ratchet/controller/TaskReads"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { UnknownResource } from "./McpError.js"
import type { Services } from "./Tools.js"

/**
 * A resource template as `resources/templates/list` gives it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Template {
  readonly uriTemplate: string
  readonly name: string
  readonly title: string
  readonly description: string
  readonly mimeType: string
}

/**
 * A concrete resource as `resources/list` gives it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Resource {
  readonly uri: string
  readonly name: string
  readonly title: string
  readonly description: string
  readonly mimeType: string
}

/**
 * A resource's content.
 *
 * @since 0.1.0
 * @category models
 */
export interface Content {
  readonly uri: string
  readonly mimeType: string
  readonly text: string
}

/**
 * The parts of a task a resource can show.
 *
 * @since 0.1.0
 * @category models
 */
export type Part = "status" | "spec" | "plan" | "log"

/**
 * How many of the newest events the log resource holds; the `task_log` tool pages through all.
 *
 * @since 0.1.0
 * @category constants
 */
export const logLimit = 1_000

const kinds: ReadonlyArray<{ readonly part: Part; readonly suffix: string; readonly title: string; readonly description: string; readonly mimeType: string }> = [
  {
    part: "status",
    suffix: "",
    title: "Task status",
    description: "The task's state, revisions, digests, lease, blockers and allowed actions (ratchet status <task> --json).",
    mimeType: "application/json"
  },
  { part: "spec", suffix: "/spec", title: "Task spec", description: "The task's current spec (the contract), rendered from the store.", mimeType: "text/markdown" },
  { part: "plan", suffix: "/plan", title: "Task plan", description: "The task's current plan, rendered from the store.", mimeType: "text/markdown" },
  {
    part: "log",
    suffix: "/log",
    title: "Task log",
    description: `The task's newest ${logLimit} events, one JSON record a line (ratchet log <task> --json); the task_log tool pages through all of them.`,
    mimeType: "application/x-ndjson"
  }
]

/**
 * The resource templates.
 *
 * @since 0.1.0
 * @category constants
 */
export const templates: ReadonlyArray<Template> = kinds.map((kind) => ({
  uriTemplate: `ratchet://task/{taskId}${kind.suffix}`,
  name: `task${kind.suffix.replace("/", "-")}`,
  title: kind.title,
  description: kind.description,
  mimeType: kind.mimeType
}))

/**
 * The URI of `part` of `taskId`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const uriOf = (taskId: string, part: Part): string =>
  `ratchet://task/${encodeURIComponent(taskId)}${kinds.find((kind) => kind.part === part)?.suffix ?? ""}`

const pattern = /^ratchet:\/\/task\/([^/?#]+)(?:\/(spec|plan|log))?$/

/**
 * The task and part a URI names, or `null` for any other URI.
 *
 * @since 0.1.0
 * @category constructors
 */
export const parse = (uri: string): { readonly taskId: string; readonly part: Part } | null => {
  const match = pattern.exec(uri)
  if (match === null) return null
  try {
    return { taskId: decodeURIComponent(match[1] as string), part: (match[2] as Part | undefined) ?? "status" }
  } catch {
    return null
  }
}

/**
 * Every task's resources, newest task first: its status and log always, its spec and plan once
 * they exist.
 *
 * @since 0.1.0
 * @category constructors
 */
export const list: Effect.Effect<ReadonlyArray<Resource>, unknown, Services> = Effect.flatMap(Controller.Controller, (c) =>
  Effect.map(c.listTasks, (views) =>
    views.flatMap((view) =>
      kinds
        .filter((kind) => (kind.part === "spec" ? view.digests.spec !== null : kind.part === "plan" ? view.digests.plan !== null : true))
        .map((kind) => ({
          uri: uriOf(view.taskId, kind.part),
          name: `${view.taskId}${kind.suffix.replace("/", " ")}`,
          title: `${kind.title}: ${view.taskId} (${view.state})`,
          description: `${kind.description} Goal: ${view.goal.slice(0, 200)}`,
          mimeType: kind.mimeType
        }))
    )))

/**
 * The content of the resource `uri`: `UnknownResource` for a URI that names none, the
 * controller's refusal for a task that does not exist, and an invalid request for a spec or plan
 * the task does not have yet.
 *
 * @since 0.1.0
 * @category constructors
 */
export const read = (uri: string): Effect.Effect<Content, unknown, Services> =>
  Effect.gen(function*() {
    const named = parse(uri)
    if (named === null) return yield* new UnknownResource({ uri })
    const { part, taskId } = named
    const mimeType = kinds.find((kind) => kind.part === part)?.mimeType ?? "text/plain"
    const c = yield* Controller.Controller
    switch (part) {
      case "status": {
        const task = yield* c.status(taskId)
        return { uri, mimeType, text: JSON.stringify(Documents.success("status", 0, Documents.status(task))) }
      }
      case "spec":
      case "plan": {
        return { uri, mimeType, text: yield* TaskReads.rendered(taskId, part) }
      }
      case "log": {
        const events = yield* c.log(taskId)
        const newest = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.takeRight(events, logLimit)))
        return { uri, mimeType, text: newest.map((stored) => `${JSON.stringify(Documents.logRecord(stored))}\n`).join("") }
      }
    }
  })
