/**
 * The tools' schemas as the strictest client reads them: ajv 8 in strict mode, for JSON Schema
 * 2020-12 (the MCP default) and draft-07.
 *
 * - Every input and output schema compiles; every property has a type; no synthetic title
 *   (`maxLength(200)`), `$ref` or `$defs` is left; the descriptions written for the agent are.
 * - An input schema accepts what the tool accepts and refuses what it refuses: each case goes to
 *   the validator and, through the SDK client, to the server, and a refusal names the field the
 *   validator names.
 * - An output schema refuses a document that does not have the tool's shape (so the checks of
 *   every answer, in fixture.ts's `call`, can fail), and the controller's view types fit the
 *   schemas they are described by (checked when this file compiles).
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Controller from "@ratchet/controller/Controller"
import type * as Explain from "@ratchet/controller/Explain"
import type * as TaskReads from "@ratchet/controller/TaskReads"
import type * as TaskView from "@ratchet/controller/TaskView"
import type * as Verify from "@ratchet/controller/Verify"
import type * as Task from "@ratchet/kernel/Task"
import { Ajv, type ErrorObject } from "ajv"
import { Ajv2020 } from "ajv/dist/2020.js"
import * as Effect from "effect/Effect"
import { expectTypeOf } from "vitest"
import * as ToolOutput from "../src/ToolOutput.js"
import * as Tools from "../src/Tools.js"
import { call, connect, world } from "./fixture.js"

const validators = [
  ["2020-12", () => new Ajv2020({ strict: true, allErrors: true })],
  ["draft-07", () => new Ajv({ strict: true, allErrors: true })]
] as const

/** Every schema below `node` that describes a value (`properties`' values, `items`, `anyOf`'s branches). */
const subschemas = function*(node: unknown, at: string): Generator<readonly [string, Record<string, unknown>]> {
  if (typeof node !== "object" || node === null) return
  const schema = node as Record<string, unknown>
  yield [at, schema]
  for (const [name, child] of Object.entries((schema["properties"] ?? {}) as Record<string, unknown>)) yield* subschemas(child, `${at}.${name}`)
  if (schema["items"] !== undefined) yield* subschemas(schema["items"], `${at}[]`)
  if (typeof schema["additionalProperties"] === "object") yield* subschemas(schema["additionalProperties"], `${at}{}`)
  for (const [index, branch] of ((schema["anyOf"] ?? []) as ReadonlyArray<unknown>).entries()) yield* subschemas(branch, `${at}|${index}`)
}

/** A schema with a type of its own, or a choice of typed schemas. */
const typed = (schema: Record<string, unknown>): boolean =>
  typeof schema["type"] === "string" || (Array.isArray(schema["anyOf"]) && schema["anyOf"].every((branch) => typed(branch as Record<string, unknown>)))

/** The field a validator's first error is about, as the server names it (`acs.0`, `taskId`). */
const fieldOf = (error: ErrorObject): string => {
  const at = error.instancePath.split("/").slice(1).join(".")
  const child = error.keyword === "required"
    ? String(error.params["missingProperty"])
    : error.keyword === "additionalProperties"
    ? String(error.params["additionalProperty"])
    : null
  return child === null ? at : at === "" ? child : `${at}.${child}`
}

const taskId = "t-00000000"

/** Arguments each tool accepts, and arguments it refuses with the field at fault. */
const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string | null]> = [
  ["task_list", {}, null],
  ["task_list", { extra: 1 }, "extra"],
  ["task_status", { taskId }, null],
  ["task_status", {}, "taskId"],
  ["task_status", { taskId: 42 }, "taskId"],
  ["task_status", { taskId: "t".repeat(201) }, "taskId"],
  ["task_gate", { taskId, to: "RUNNING" }, null],
  ["task_gate", { taskId, to: "DONE" }, "to"],
  ["task_log", { taskId, afterLsn: 0, limit: 500, branch: "main" }, null],
  ["task_log", { taskId, limit: 0 }, "limit"],
  ["task_log", { taskId, limit: 501 }, "limit"],
  ["task_log", { taskId, limit: 1.5 }, "limit"],
  ["task_log", { taskId, limit: "5" }, "limit"],
  ["task_log", { taskId, afterLsn: -1 }, "afterLsn"],
  ["task_evidence", { taskId, acs: ["AC-001"], showOutput: true }, null],
  ["task_evidence", { taskId, acs: "AC-001" }, "acs"],
  ["task_evidence", { taskId, acs: [1] }, "acs.0"],
  ["task_evidence", { taskId, acs: Array.from({ length: 101 }, (_, i) => `AC-${i}`) }, "acs"],
  ["task_create", { goal: "Make the date test deterministic", slug: "date-test" }, null],
  ["task_create", { goal: 1 }, "goal"],
  ["task_create", { goal: "Fix it", owner: "root" }, "owner"],
  ["brief_ask", { taskId, text: "Which timezone?", blocking: true }, null],
  ["brief_ask", { taskId, text: "Which timezone?", blocking: "yes" }, "blocking"],
  ["brief_answer", { taskId, questionId: "Q-1", text: "UTC", source: "code" }, null],
  ["brief_answer", { taskId, questionId: "Q-1", text: "UTC", source: "god" }, "source"],
  ["brief_answer", { taskId, questionId: "Q-1", text: "UTC" }, "source"],
  ["spec_propose", { taskId, file: "docs/spec.md" }, null],
  ["spec_propose", { taskId }, "file"],
  ["plan_propose", { taskId, file: "docs/plan.yaml" }, null],
  ["plan_propose", { taskId, file: ["docs/plan.yaml"] }, "file"],
  ["run_start", { taskId }, null],
  ["run_start", { taskId, detach: true }, "detach"],
  ["run_check", { taskId }, null],
  ["run_check", { taskId: null }, "taskId"],
  ["lessons_query", { taskId }, null],
  ["lessons_query", { taskId, limit: 3 }, "limit"],
  ["lessons_query", { taskId: ["t-1"] }, "taskId"],
  ["lesson_propose", { lesson: { trigger: "When rows are counted", actualRule: "Skip the header" } }, null],
  ["lesson_propose", { lessonId: "L-1", lesson: { scope: { paths: ["src/**"] }, trigger: "t", actualRule: "r", guard: { description: "d", command: "npm test" } } }, null],
  ["lesson_propose", { lesson: { trigger: "t", actualRule: "r", status: "verified" } }, "lesson.status"],
  ["lesson_propose", { lesson: { trigger: "t", actualRule: "r", scope: { projectId: "p-other" } } }, "lesson.scope.projectId"],
  ["lesson_propose", { lesson: { trigger: "t" } }, "lesson.actualRule"],
  ["lesson_propose", { lesson: { trigger: "t".repeat(401), actualRule: "r" } }, "lesson.trigger"],
  // An agent names no fingerprint: the field is not the tool's.
  ["lesson_propose", { lesson: { trigger: "t", actualRule: "r", fingerprints: ["fp:exit:1:0123456789abcdef"] } }, "lesson.fingerprints"],
  ["lesson_propose", { lessonId: "L".repeat(65), lesson: { trigger: "t", actualRule: "r" } }, "lessonId"],
  ["lesson_propose", { status: "verified", lesson: { trigger: "t", actualRule: "r" } }, "status"]
]

describe("the tools' schemas", () => {
  it.effect("compile under a strict validator, every property typed, with no synthetic title or reference", () =>
    Effect.sync(() => {
      for (const tool of Tools.tools) {
        const { inputSchema, name, outputSchema } = tool.descriptor
        for (const [draft, make] of validators) {
          expect(() => make().compile(inputSchema), `${name} input, ${draft}`).not.toThrow()
          expect(() => make().compile(outputSchema), `${name} output, ${draft}`).not.toThrow()
        }
        for (const [kind, schema] of [["input", inputSchema], ["output", outputSchema]] as const) {
          expect(schema.type, `${name} ${kind}`).toBe("object")
          const text = JSON.stringify(schema)
          for (const reference of ["\"$ref\"", "\"$defs\"", "\"$id\"", "\"$schema\""]) expect(text, `${name} ${kind}`).not.toContain(reference)
          for (const [at, node] of subschemas(schema, name)) {
            expect(typed(node), `${kind} ${at} has no type: ${JSON.stringify(node).slice(0, 200)}`).toBe(true)
            expect(node, `${kind} ${at}`).not.toHaveProperty("title")
            // effect's self-descriptions (`an integer`, `a string at most 200 character(s) long`) are gone
            if (typeof node["description"] === "string") expect(node["description"], `${kind} ${at}`).toMatch(/^[A-Z]/)
          }
        }
      }
      const log = Tools.tools.find((tool) => tool.descriptor.name === "task_log")?.descriptor.inputSchema as unknown as { readonly properties: Record<string, Record<string, unknown>> }
      expect(log.properties["limit"]).toEqual({ type: "integer", description: "How many events at most (1 to 500, default 100).", minimum: 1, maximum: 500 })
      expect(log.properties["taskId"]).toEqual({ type: "string", description: "The task id, e.g. t-3f9a1c2b (task_list shows them).", maxLength: 200 })
    }))

  it.scopedLive("accept what the tools accept and refuse what they refuse, naming the same field", () =>
    Effect.gen(function*() {
      const { services } = yield* world
      yield* Effect.gen(function*() {
        const client = yield* connect()
        for (const [name, args, field] of cases) {
          const schema = Tools.tools.find((tool) => tool.descriptor.name === name)?.descriptor.inputSchema
          const validate = new Ajv2020({ strict: true }).compile(schema ?? {})
          const label = `${name} ${JSON.stringify(args).slice(0, 80)}`
          expect(validate(args), label).toBe(field === null)
          const answer = yield* call(client, name, args)
          const tag = answer.isError ? answer.json.error._tag : null
          if (field === null) {
            // Valid arguments reach the controller, which may refuse them for what they name (no such task).
            expect(tag, `${label}: ${answer.text}`).not.toBe("@ratchet/host-mcp/InvalidArguments")
          } else {
            expect(fieldOf((validate.errors ?? [])[0] as ErrorObject), label).toBe(field)
            expect(tag, label).toBe("@ratchet/host-mcp/InvalidArguments")
            expect(answer.json.error.field, label).toBe(field)
            expect(answer.text, label).toMatch(new RegExp(`^${field.replace(".", "\\.")}: `))
          }
        }
      }).pipe(Effect.provide(services))
    }), { timeout: 120_000 })

  it.effect("refuse documents that do not have the tool's shape", () =>
    Effect.sync(() => {
      const schemaOf = (name: string) => Tools.tools.find((tool) => tool.descriptor.name === name)?.descriptor.outputSchema ?? {}
      const status = new Ajv2020({ strict: true }).compile(schemaOf("task_status"))
      expect(status({ ok: false, command: "status", exitCode: 2, error: { _tag: "@ratchet/controller/TaskNotFound", message: "No task" } })).toBe(true)
      // a body missing its required field, a failure without its error, a field of the wrong type
      expect(status({ ok: true, command: "status", exitCode: 0 })).toBe(false)
      expect(status({ ok: true, command: "status", exitCode: 0, error: { _tag: "X", message: "ok is true" } })).toBe(false)
      expect(status({ ok: true, command: "status", exitCode: 0, task: { taskId: 7 } })).toBe(false)
      expect(status({ command: "status", exitCode: 2, error: { _tag: "X", message: "no ok" } })).toBe(false)
      const started = new Ajv2020({ strict: true }).compile(schemaOf("run_start"))
      expect(started({ ok: true, command: "run", exitCode: 0, detached: true, taskId, pid: 4242, log: "/tmp/run.log" })).toBe(true)
      expect(started({ ok: true, command: "run", exitCode: 0, detached: true, taskId, pid: "4242", log: "/tmp/run.log" })).toBe(false)
      // a field a newer document adds is not a reason to refuse it
      expect(started({ ok: true, command: "run", exitCode: 0, detached: true, taskId, pid: 4242, log: "/tmp/run.log", since: 1 })).toBe(true)
    }))

  it.effect("describe the controller's views (a compile-time check)", () =>
    Effect.sync(() => {
      expectTypeOf<TaskView.TaskView>().toExtend<typeof ToolOutput.TaskViewDocument.Type>()
      expectTypeOf<Controller.Written>().toExtend<Omit<typeof ToolOutput.Written.Type, "taskId" | "state">>()
      expectTypeOf<Pick<Effect.Effect.Success<ReturnType<Controller.Service["proposeSpec"]>>, "digest" | "changed">>().toExtend<
        Pick<typeof ToolOutput.bodies.spec_propose.Type, "digest" | "changed">
      >()
      expectTypeOf<Explain.Explanation>().toExtend<typeof ToolOutput.bodies.task_gate.Type>()
      expectTypeOf<TaskReads.RunCheck>().toExtend<typeof ToolOutput.bodies.run_check.Type>()
      expectTypeOf<TaskReads.StepCheck>().toExtend<typeof ToolOutput.StepCheck.Type>()
      expectTypeOf<Verify.EvidenceView>().toExtend<Omit<typeof ToolOutput.bodies.task_evidence.Type, "bodies">>()
      expectTypeOf<Verify.Body>().toExtend<NonNullable<typeof ToolOutput.bodies.task_evidence.Type["bodies"]>[string]>()
      expectTypeOf<Task.Stage>().toEqualTypeOf<(typeof ToolOutput.stages)[number]>()
      expect(Object.keys(ToolOutput.bodies)).toEqual(Tools.names)
    }))
})
