/**
 * A reference store in memory, written from the storage port's documented semantics only, for
 * testing the conformance suite itself: the suite must pass against it, and against each broken
 * decoration of it (see `Broken.ts`) the check for the broken promise must fail.
 *
 * Every operation runs synchronously inside one `Effect.sync`, so an append is trivially one
 * transaction. Not shared between processes, so it cannot run the multi-process checks.
 */
import { createHash } from "node:crypto"
import * as Digest from "@ratchet/kernel/Digest"
import * as Event from "@ratchet/kernel/Event"
import { BlobNotFound, BlobRef, BlobStore, InvalidBlobRef, type Service as BlobService } from "@ratchet/storage/BlobStore"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import * as LessonStore from "@ratchet/storage/LessonStore"
import * as MemoryLessonStore from "@ratchet/storage/MemoryLessonStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import * as StorageError from "@ratchet/storage/StorageError"
import * as TaskClaims from "@ratchet/storage/TaskClaims"
import { StorageFaults } from "@ratchet/testkit/StorageFaults"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

interface Row {
  readonly lsn: number
  readonly branch: string
  readonly epoch: number | null
  readonly operationId: string
  readonly recordedAt: number
  readonly event: Event.Event
}

interface BranchState {
  readonly name: string
  readonly parent: string | null
  readonly forkLsn: number | null
  readonly createdAt: number
  readonly own: Array<Row>
  snapshot: ReadModel.Snapshot
}

interface StreamState {
  readonly projectId: string
  readonly branches: Map<string, BranchState>
}

const isId = Schema.is(EventStore.Id)

const invalid = (field: string, reason: string) => new EventStore.InvalidRequest({ field, reason })

export interface Memory {
  readonly eventStore: EventStore.Service
  readonly readModels: ReadModel.Service
  readonly leaseStore: LeaseStore.Service
  readonly blobStore: BlobService
  readonly corruptBlob: (ref: string) => void
}

export const make = (): Memory => {
  let lsn = 0
  let clock = 1_700_000_000_000
  const streams = new Map<string, StreamState>()
  const operations = new Map<string, { readonly digest: string; readonly result: EventStore.AppendResult }>()
  const leases = new Map<string, ReadModel.LeaseRow>()
  const blobs = new Map<string, Uint8Array>()

  const visible = (stream: StreamState, name: string, streamId: string): Array<EventStore.StoredEvent> => {
    const branch = stream.branches.get(name)
    if (branch === undefined) return []
    const inherited = branch.parent === null
      ? []
      : visible(stream, branch.parent, streamId).filter((stored) => stored.lsn <= (branch.forkLsn ?? 0))
    const own = branch.own.map((row) => ({ ...row, projectId: stream.projectId, streamId, version: 0 }))
    return [...inherited, ...own].map((stored, index) => ({ ...stored, version: index + 1 }))
  }

  const checkId = (field: string, value: string) => (isId(value) ? undefined : invalid(field, "is not an identifier"))

  const append = (request: EventStore.AppendRequest): Effect.Effect<EventStore.AppendResult, EventStore.AppendError> =>
    Effect.suspend((): Effect.Effect<EventStore.AppendResult, EventStore.AppendError> => {
      const branchName = request.branch ?? EventStore.mainBranch
      const problem = checkId("projectId", request.projectId) ?? checkId("streamId", request.streamId) ??
        checkId("branch", branchName) ?? checkId("operationId", request.operationId) ??
        (request.events.length === 0 ? invalid("events", "is empty") : undefined) ??
        (!Number.isSafeInteger(request.expectedVersion) || request.expectedVersion < 0
          ? invalid("expectedVersion", "is not a non-negative integer")
          : undefined)
      if (problem !== undefined) return Effect.fail(problem)
      const digest = Either.getOrThrow(
        Digest.of({
          projectId: request.projectId,
          streamId: request.streamId,
          branch: branchName,
          expectedVersion: request.expectedVersion,
          epoch: request.epoch,
          events: request.events.map(Event.encode)
        })
      )
      const known = operations.get(request.operationId)
      if (known !== undefined) {
        return known.digest === digest
          ? Effect.succeed({ ...known.result, replayed: true })
          : Effect.fail(new EventStore.OperationReused({ operationId: request.operationId, streamId: request.streamId }))
      }
      const stream = streams.get(request.streamId)
      if (stream !== undefined && stream.projectId !== request.projectId) {
        return Effect.fail(invalid("projectId", `is not the stream's project ${stream.projectId}`))
      }
      // Fencing, against the task's lease row, at the store's clock (wall time, never backwards).
      const now = Math.max(clock + 1, Date.now())
      const leaseKey = `${request.projectId}/${request.streamId}`
      const lease = leases.get(leaseKey)
      const stale = new EventStore.StaleEpoch({
        projectId: request.projectId,
        streamId: request.streamId,
        presented: request.epoch,
        current: lease?.epoch ?? null,
        held: lease?.held ?? false
      })
      const nextEpoch = (lease?.epoch ?? 0) + 1
      const leaseEvents = request.events.filter((event) =>
        event._tag === "LeaseAcquired" || event._tag === "LeaseTakenOver" || event._tag === "LeaseReleased"
      )
      if (lease?.held === true) {
        if (request.epoch !== lease.epoch) return Effect.fail(stale)
        for (const event of leaseEvents) {
          if (event._tag === "LeaseReleased" && event.epoch !== lease.epoch) return Effect.fail(stale)
          if (event._tag === "LeaseTakenOver" && event.epoch !== nextEpoch) return Effect.fail(stale)
          if (event._tag === "LeaseTakenOver" && now <= lease.heartbeatAt + lease.graceMs) {
            return Effect.fail(
              new EventStore.LeaseNotExpired({
                projectId: request.projectId,
                streamId: request.streamId,
                epoch: lease.epoch,
                heartbeatAt: lease.heartbeatAt,
                graceMs: lease.graceMs,
                now
              })
            )
          }
          if (event._tag === "LeaseAcquired") return Effect.fail(stale)
        }
      } else {
        for (const event of leaseEvents) {
          // Only a held lease is released or taken over; a free one is acquired.
          if (event._tag !== "LeaseAcquired") return Effect.fail(stale)
          if (event.epoch !== nextEpoch) return Effect.fail(stale)
        }
        const acquires = leaseEvents.some((event) => event._tag !== "LeaseReleased")
        if (request.epoch !== null && !(acquires && request.epoch === nextEpoch)) return Effect.fail(stale)
      }
      // Expected version.
      const branch = stream?.branches.get(branchName)
      if (stream !== undefined && branch === undefined) {
        return Effect.fail(new EventStore.BranchNotFound({ streamId: request.streamId, branch: branchName }))
      }
      if (stream === undefined && branchName !== EventStore.mainBranch) {
        return Effect.fail(new EventStore.BranchNotFound({ streamId: request.streamId, branch: branchName }))
      }
      const actual = stream === undefined ? 0 : visible(stream, branchName, request.streamId).length
      if (actual !== request.expectedVersion) {
        return Effect.fail(
          new EventStore.VersionConflict({ streamId: request.streamId, branch: branchName, expected: request.expectedVersion, actual })
        )
      }
      // Write.
      clock = now
      const target: StreamState = stream ?? { projectId: request.projectId, branches: new Map() }
      if (stream === undefined) streams.set(request.streamId, target)
      const state: BranchState = branch ?? {
        name: branchName,
        parent: null,
        forkLsn: null,
        createdAt: clock,
        own: [],
        snapshot: ReadModel.empty
      }
      target.branches.set(branchName, state)
      const firstLsn = lsn + 1
      for (const [index, event] of request.events.entries()) {
        lsn += 1
        const row: Row = { lsn, branch: branchName, epoch: request.epoch, operationId: request.operationId, recordedAt: clock, event }
        state.own.push(row)
        const stored: EventStore.StoredEvent = {
          ...row,
          projectId: request.projectId,
          streamId: request.streamId,
          version: actual + index + 1
        }
        state.snapshot = ReadModel.apply(state.snapshot, stored)
        const nextLease = ReadModel.apply({ ...ReadModel.empty, lease: leases.get(leaseKey) ?? null }, stored).lease
        if (nextLease !== null) leases.set(leaseKey, nextLease)
      }
      const result: EventStore.AppendResult = {
        streamId: request.streamId,
        branch: branchName,
        version: actual + request.events.length,
        firstLsn,
        lastLsn: lsn,
        replayed: false
      }
      operations.set(request.operationId, { digest, result })
      return Effect.succeed(result)
    })

  const requireStream = (streamId: string): Effect.Effect<StreamState | undefined, EventStore.InvalidRequest> =>
    isId(streamId) ? Effect.succeed(streams.get(streamId)) : Effect.fail(invalid("streamId", "is not an identifier"))

  const requireBranch = (
    streamId: string,
    branch: string
  ): Effect.Effect<StreamState, EventStore.InvalidRequest | EventStore.BranchNotFound> =>
    Effect.flatMap(requireStream(streamId), (stream): Effect.Effect<StreamState, EventStore.InvalidRequest | EventStore.BranchNotFound> => {
      if (!isId(branch)) return Effect.fail(invalid("branch", "is not an identifier"))
      if (stream === undefined || !stream.branches.has(branch)) {
        return Effect.fail(new EventStore.BranchNotFound({ streamId, branch }))
      }
      return Effect.succeed(stream)
    })

  const eventStore: EventStore.Service = {
    append,
    read: (input) =>
      Stream.unwrap(
        Effect.map(requireBranch(input.streamId, input.branch ?? EventStore.mainBranch), (stream) =>
          Stream.fromIterable(
            visible(stream, input.branch ?? EventStore.mainBranch, input.streamId).filter((stored) =>
              stored.lsn >= (input.fromLsn ?? 0) && stored.lsn <= (input.toLsn ?? Number.MAX_SAFE_INTEGER)
            )
          ))
      ),
    head: (streamId, branch = EventStore.mainBranch) =>
      Effect.flatMap(requireStream(streamId), (stream): Effect.Effect<EventStore.Head | null, EventStore.InvalidRequest | EventStore.BranchNotFound> => {
        if (!isId(branch)) return Effect.fail(invalid("branch", "is not an identifier"))
        if (stream === undefined) return Effect.succeed(null)
        const state = stream.branches.get(branch)
        if (state === undefined) return Effect.fail(new EventStore.BranchNotFound({ streamId, branch }))
        const events = visible(stream, branch, streamId)
        return Effect.succeed({
          projectId: stream.projectId,
          streamId,
          branch,
          version: events.length,
          lastLsn: events[events.length - 1]?.lsn ?? 0
        })
      }),
    fork: (input) =>
      Effect.gen(function*() {
        const from = input.from ?? EventStore.mainBranch
        if (!isId(input.branch)) return yield* Effect.fail(invalid("branch", "is not an identifier"))
        const stream = yield* requireBranch(input.streamId, from)
        if (stream.branches.has(input.branch)) {
          return yield* Effect.fail(new EventStore.BranchExists({ streamId: input.streamId, branch: input.branch }))
        }
        const events = visible(stream, from, input.streamId)
        const count = events.findIndex((stored) => stored.lsn === input.atLsn) + 1
        if (count === 0) return yield* Effect.fail(invalid("atLsn", `is not an event visible on ${from}`))
        clock += 1
        const inherited = events.slice(0, count)
        const state: BranchState = {
          name: input.branch,
          parent: from,
          forkLsn: input.atLsn,
          createdAt: clock,
          own: [],
          snapshot: ReadModel.fold(inherited.map((stored) => ({ ...stored })))
        }
        stream.branches.set(input.branch, state)
        return { streamId: input.streamId, branch: input.branch, parent: from, forkLsn: input.atLsn, createdAt: clock }
      }),
    branches: (streamId) =>
      Effect.map(requireStream(streamId), (stream) =>
        [...(stream?.branches.values() ?? [])].map((branch) => ({
          streamId,
          branch: branch.name,
          parent: branch.parent,
          forkLsn: branch.forkLsn,
          createdAt: branch.createdAt
        })))
  }

  const snapshotOf = (streamId: string, branch = EventStore.mainBranch) =>
    Effect.map(requireStream(streamId), (stream): ReadModel.Snapshot => {
      const state = stream?.branches.get(branch)
      if (stream === undefined || state === undefined) return ReadModel.empty
      return { ...state.snapshot, lease: leases.get(`${stream.projectId}/${streamId}`) ?? null }
    })

  const checkpointQuery = (query: ReadModel.CheckpointQuery): Effect.Effect<void, EventStore.InvalidRequest> => {
    if (query.runId !== undefined && !isId(query.runId)) return Effect.fail(invalid("query.runId", "is not an identifier"))
    if (query.kind !== undefined && !["run_start", "step", "terminal"].includes(query.kind)) return Effect.fail(invalid("query.kind", "is not a checkpoint kind"))
    if (query.last !== undefined && !(Number.isSafeInteger(query.last) && query.last >= 1)) return Effect.fail(invalid("query.last", "must be an integer of at least 1"))
    return Effect.void
  }

  const readModels: ReadModel.Service = {
    taskSummary: (streamId, branch) => Effect.map(snapshotOf(streamId, branch), (snapshot) => snapshot.summary),
    listTasks: (projectId) =>
      Effect.sync(() =>
        [...streams.entries()]
          .filter(([, stream]) => projectId === undefined || stream.projectId === projectId)
          .flatMap(([, stream]) => {
            const summary = stream.branches.get(EventStore.mainBranch)?.snapshot.summary
            return summary === null || summary === undefined ? [] : [summary]
          })
          .sort((a, b) => b.lastLsn - a.lastLsn)
      ),
    attempts: (streamId, branch) => Effect.map(snapshotOf(streamId, branch), (snapshot) => [...snapshot.attempts.values()]),
    openIntents: (streamId) =>
      Effect.sync(() =>
        [...streams.entries()]
          .filter(([id]) => streamId === undefined || id === streamId)
          .flatMap(([, stream]) => [...stream.branches.values()].flatMap((branch) => [...branch.snapshot.intents.values()]))
          .filter((row) => row.state === "Pending" || row.state === "Dispatched")
      ),
    lease: (projectId, streamId) => Effect.sync(() => leases.get(`${projectId}/${streamId}`) ?? null),
    checkpoints: (streamId, branch, query = {}) =>
      Effect.flatMap(checkpointQuery(query), () =>
        Effect.map(snapshotOf(streamId, branch), (snapshot) => ReadModel.selectCheckpoints(snapshot.checkpoints, query))),
    runFrontier: (streamId, runId, branch) =>
      isId(runId)
        ? Effect.map(snapshotOf(streamId, branch), (snapshot) => ReadModel.runFrontier(snapshot, runId))
        : Effect.fail(invalid("runId", "is not an identifier")),
    snapshot: snapshotOf,
    rebuild: (streamId, branch = EventStore.mainBranch) =>
      Effect.map(requireBranch(streamId, branch), (stream) => ReadModel.fold(visible(stream, branch, streamId)))
  }

  const refOf = (ref: string) =>
    Schema.is(BlobRef)(ref) ? Effect.succeed(ref) : Effect.fail(new InvalidBlobRef({ ref }))

  const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

  const blobStore: BlobService = {
    put: (bytes) =>
      Effect.sync(() => {
        const ref = sha256(bytes)
        if (!blobs.has(ref)) blobs.set(ref, Uint8Array.from(bytes))
        return BlobRef.make(ref)
      }),
    get: (ref) =>
      Effect.flatMap(refOf(ref), (valid): Effect.Effect<Uint8Array, BlobNotFound | StorageError.StorageError> => {
        const bytes = blobs.get(valid)
        if (bytes === undefined) return Effect.fail(new BlobNotFound({ ref }))
        if (sha256(bytes) !== valid) {
          return Effect.fail(StorageError.make("blob.get", { _tag: "Corrupt", code: null, detail: `blob ${ref} does not match its hash` }))
        }
        return Effect.succeed(Uint8Array.from(bytes))
      }),
    has: (ref) => Effect.map(refOf(ref), (valid) => blobs.has(valid))
  }

  const leaseStore: LeaseStore.Service = {
    heartbeat: (request) =>
      Effect.suspend((): Effect.Effect<ReadModel.LeaseRow, EventStore.StaleEpoch | EventStore.InvalidRequest> => {
        const problem = checkId("projectId", request.projectId) ?? checkId("streamId", request.streamId) ??
          (!Number.isSafeInteger(request.epoch) || request.epoch < 1 ? invalid("epoch", "is not a positive integer") : undefined)
        if (problem !== undefined) return Effect.fail(problem)
        const key = `${request.projectId}/${request.streamId}`
        const lease = leases.get(key)
        if (lease === undefined || !lease.held || lease.epoch !== request.epoch) {
          return Effect.fail(
            new EventStore.StaleEpoch({
              projectId: request.projectId,
              streamId: request.streamId,
              presented: request.epoch,
              current: lease?.epoch ?? null,
              held: lease?.held ?? false
            })
          )
        }
        clock = Math.max(clock + 1, Date.now())
        const beat = { ...lease, heartbeatAt: Math.max(lease.heartbeatAt, clock) }
        leases.set(key, beat)
        return Effect.succeed(beat)
      }),
    now: Effect.sync(() => Math.max(clock, Date.now()))
  }

  return {
    eventStore,
    readModels,
    leaseStore,
    blobStore,
    corruptBlob: (ref) => {
      const bytes = blobs.get(ref)
      if (bytes !== undefined) blobs.set(ref, Uint8Array.from([...bytes, 0x2a]))
    }
  }
}

export type Services =
  | EventStore.EventStore
  | ReadModel.ReadModels
  | LeaseStore.LeaseStore
  | LessonStore.LessonStore
  | BlobStore
  | StorageFaults

/**
 * The services of one memory store, decorated by `decorate` (the identity by default), with a
 * `StorageFaults` service unless `faults` is false.
 */
export const layer = (
  decorate: (memory: Memory) => Memory = (memory) => memory,
  options: { readonly faults?: boolean } = {}
): Layer.Layer<Services> =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      const memory = decorate(make())
      const store = Layer.mergeAll(
        Layer.succeed(EventStore.EventStore, memory.eventStore),
        Layer.succeed(ReadModel.ReadModels, memory.readModels),
        Layer.succeed(LeaseStore.LeaseStore, memory.leaseStore),
        Layer.succeed(BlobStore, memory.blobStore),
        Layer.succeed(LessonStore.LessonStore, MemoryLessonStore.make()),
        // One process, so the local claims (the suite's claims group holds them to the contract).
        TaskClaims.layerLocal
      )
      // Without faults the layer provides less than its type says; the one test that asks for it
      // checks that the suite notices the missing service.
      return options.faults === false
        ? (store as Layer.Layer<Services>)
        : Layer.merge(store, Layer.succeed(StorageFaults, { corruptBlob: (ref) => Effect.sync(() => memory.corruptBlob(ref)) }))
    })
  )
