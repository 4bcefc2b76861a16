import { describe, expect, it } from "@effect/vitest"
import * as Digest from "@ratchet/kernel/Digest"
import type * as Event from "@ratchet/kernel/Event"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { createHash } from "node:crypto"
import * as SqlAppend from "../src/SqlAppend.js"

const actor = { kind: "runner", id: "r" } as const
const begun: Event.Event = { _tag: "InterviewBegun", version: 1, actor, at: 1 }
/** The same event with its keys in another order: the same request by content. */
const reordered = { at: 1, actor: { id: "r", kind: "runner" }, version: 1, _tag: "InterviewBegun" } as unknown as Event.Event

const request = (events: ReadonlyArray<Event.Event>) =>
  Effect.runSync(SqlAppend.prepare({
    projectId: "p",
    streamId: "t-1",
    expectedVersion: 3,
    epoch: null,
    operationId: "op-1",
    events
  }))

const committed = (digest: string): SqlAppend.Operation => ({
  streamId: "t-1",
  branch: "main",
  digest,
  version: 4,
  firstLsn: 10,
  lastLsn: 10
})

describe("SqlAppend", () => {
  it("digests the payload strings: equal requests have equal digests, and the digest is not the older form", () => {
    const first = request([begun])
    expect(request([begun]).digest).toBe(first.digest)
    expect(first.digest.startsWith("sha256p:")).toBe(true)
    expect(first.payloads).toEqual([JSON.stringify(begun)])
  })

  it("a replay whose digest differs is compared by content: reordered keys and the older digest replay", () => {
    const mine = request([reordered])
    const stored = [{ payload: JSON.stringify(begun), epoch: null }]
    const canonical = Either.getOrThrow(
      Digest.canonicalize({ projectId: "p", streamId: "t-1", branch: "main", expectedVersion: 3, epoch: null, events: [begun] })
    )
    const older = `sha256:${createHash("sha256").update(canonical, "utf8").digest("hex")}`
    for (const digest of [request([begun]).digest, older]) {
      const answer = SqlAppend.replayOf(mine, committed(digest), "p", () => stored)
      expect(Either.getOrThrow(answer)).toEqual({ streamId: "t-1", branch: "main", version: 4, firstLsn: 10, lastLsn: 10, replayed: true })
    }
  })

  it("another request under a committed operation id is OperationReused, whatever differs", () => {
    const stored = [{ payload: JSON.stringify(begun), epoch: null }]
    const other: Event.Event = { ...begun, at: 2 }
    const cases: ReadonlyArray<readonly [SqlAppend.Prepared, unknown, ReadonlyArray<SqlAppend.StoredPayload>]> = [
      [request([other]), "p", stored],
      [request([begun]), "another-project", stored],
      [request([begun]), "p", [{ payload: JSON.stringify(begun), epoch: 1 }]],
      [request([begun, begun]), "p", stored]
    ]
    for (const [mine, project, rows] of cases) {
      const answer = SqlAppend.replayOf(mine, committed("sha256p:0"), project, () => rows)
      expect(Either.isLeft(answer) && answer.left._tag).toBe("@ratchet/storage/OperationReused")
    }
  })

  it("a memo answers the remembered value only for the text it remembered", () => {
    const memo = new SqlAppend.RowMemo<number>()
    let decoded = 0
    const decode = (value: number) => () => {
      decoded++
      return Either.right(value)
    }
    memo.remember("k", "text-1", 1)
    expect(Either.getOrThrow(memo.get("k", "text-1", decode(99)))).toBe(1)
    expect(decoded).toBe(0)
    expect(Either.getOrThrow(memo.get("k", "text-2", decode(2)))).toBe(2)
    expect(decoded).toBe(1)
  })
})
