/**
 * The child-process protocol on its own, with children that open a private memory store: orders
 * go in, `ready` comes back, `go` releases every child, outcomes come back with the error's tag and
 * fields; a child that dies or never answers is a ChildFailed naming the stage and its stderr.
 */
import * as Events from "@ratchet/testkit/Events"
import { ChildFailed, runChildren, tsxChild, wireAppend } from "@ratchet/testkit/StorageChild"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

const child = tsxChild(new URL("./fixtures/memory-child.ts", import.meta.url))

const creation = (expectedVersion: number) =>
  wireAppend({
    projectId: "p-1",
    streamId: "t-1",
    expectedVersion,
    epoch: null,
    operationId: "op-1",
    events: [Events.taskCreated({ taskId: "t-1", projectId: "p-1" }), Events.leaseAcquired(1, Events.owner("a"))]
  })

describe("runChildren", () => {
  it.scopedLive("releases every child together and returns each outcome in order", () =>
    Effect.gen(function*() {
      const outcomes = yield* runChildren(child, [
        { op: "append", request: creation(0) },
        { op: "append", request: creation(3) },
        { op: "appendAtHead", request: creation(7), retries: 0 },
        { op: "open", streamId: "t-1" }
      ])
      expect(outcomes[0]).toMatchObject({ ok: true, result: { streamId: "t-1", branch: "main", version: 2, replayed: false } })
      expect(outcomes[1]).toMatchObject({
        ok: false,
        tag: "@ratchet/storage/VersionConflict",
        fields: { streamId: "t-1", expected: 3, actual: 0 }
      })
      expect(outcomes[1]?.ok === false && outcomes[1].message).toContain("is at version 0, not 3")
      expect(outcomes[2]).toMatchObject({ ok: true, result: { version: 2, conflicts: 0 } })
      expect(outcomes[3]).toEqual({ ok: true, result: null })
    }), 600_000)

  it.scopedLive("reports a child that exits before ready, with its stderr", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        runChildren({ command: process.execPath, args: ["-e", "process.stderr.write('no store here'); process.exit(3)"] }, [
          { op: "open", streamId: "t-1" }
        ])
      )
      expect(error).toBeInstanceOf(ChildFailed)
      expect(error).toMatchObject({ child: 0, stage: "ready", detail: "it exited with code 3", stderr: "no store here" })
      expect(error.message).toContain("no store here")
    }), 60_000)

  it.scopedLive("gives up on a silent child after the timeout", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        runChildren({ command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"] }, [{ op: "open", streamId: "t-1" }], {
          timeout: "1 second"
        })
      )
      expect(error).toMatchObject({ stage: "ready", detail: "it reported nothing within 1s" })
    }), 60_000)
})
