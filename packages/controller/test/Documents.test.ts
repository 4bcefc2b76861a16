/**
 * The `--json` documents the CLI prints and the MCP server answers with: the envelope, a failure's
 * error (its fields, never a stack or a cause, and the exit code its class maps to), and the field
 * order of a written result, which scripts and the end-to-end comparison of the two transports
 * read.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ControllerError from "../src/ControllerError.js"
import * as Documents from "../src/Documents.js"

describe("Documents", () => {
  it("wraps a body in { ok, command, exitCode }: a HOLD answered as a result is not ok", () => {
    expect(Documents.success("gate", 3, { decision: "HOLD" })).toEqual({ ok: false, command: "gate", exitCode: 3, decision: "HOLD" })
    expect(Object.keys(Documents.success("status", 0, { task: null }))).toEqual(["ok", "command", "exitCode", "task"])
  })

  it("carries a failure's tag, message and fields, never its stack or cause, with the exit code of its class", () => {
    const error = new ControllerError.TaskNotFound({ taskId: "t-00000000", projectId: "prj-1" })
    const document = Documents.failure("status", error)
    expect(document).toMatchObject({ ok: false, command: "status", exitCode: 2, error: { _tag: "@ratchet/controller/TaskNotFound", taskId: "t-00000000" } })
    const shown = document["error"] as Record<string, unknown>
    expect(shown["message"]).toBe(error.message)
    expect(Object.keys(shown)).not.toContain("stack")
    expect(Documents.failure("x", { _tag: "Odd", cause: "secret", stack: "at /home" })).toEqual({
      ok: false,
      command: "x",
      exitCode: 1,
      error: { _tag: "Odd", message: "[object Object]" }
    })
  })

  it("lets a transport name the exit code of a failure it classified itself", () => {
    expect(Documents.failure("task create", new Error("bad"), Documents.exitCodeOf.invalid)).toMatchObject({ exitCode: 2, error: { _tag: "Error", message: "bad" } })
    expect(Documents.failure("x", "plain")).toEqual({ ok: false, command: "x", exitCode: 1, error: { _tag: "Error", message: "plain" } })
  })

  it("answers a write with the extra fields first, then the task's id, state, what was appended and the task", () => {
    const task = { taskId: "t-1", state: "INTERVIEWING" } as unknown as Parameters<typeof Documents.written>[0]["task"]
    const document = Documents.written({ task, events: ["QuestionAsked"], firstLsn: 3, lastLsn: 3, projection: null, warnings: [] }, { questionId: "Q-1" })
    expect(Object.keys(document)).toEqual(["questionId", "taskId", "state", "events", "firstLsn", "lastLsn", "projection", "warnings", "task"])
  })

  it("names the task of a detached run only when one was named", () => {
    expect(Documents.detachedRun("t-1", { pid: 7, log: "l" })).toEqual({ detached: true, taskId: "t-1", pid: 7, log: "l" })
    expect(Object.keys(Documents.detachedRun(null, { pid: 7, log: "l" }))).toEqual(["detached", "pid", "log"])
  })
})
