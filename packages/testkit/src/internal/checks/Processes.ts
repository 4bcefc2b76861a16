/**
 * Conformance checks across real OS processes: open, version race, stale epoch, fencing race.
 */
import * as EventStore from "@ratchet/storage/EventStore"
import * as Effect from "effect/Effect"
import * as Events from "../../Events.js"
import { type Outcome, runChildren, type Services, type SharedStore, wireAppend } from "../../StorageChild.js"
import { created, expectBranch, holds, leaseState, makeIds, newStream, type ProcessCheck, questions, readAll, request, same, services, show, succeeds, tags } from "./Kit.js"
import { A, B, expiring, lapse } from "./Fencing.js"

// ---------------------------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------------------------

export const inStore = <A, E>(shared: SharedStore, effect: Effect.Effect<A, E, Services>) =>
  Effect.provide(effect, shared.layer)

export const outcomeText = (outcome: Outcome) => (outcome.ok ? "ok" : `${outcome.tag}: ${outcome.message}`)

export const processesOpen: ProcessCheck = {
  id: "processes.open",
  title: "N processes opening a fresh store at the same moment all succeed, and the store works afterwards",
  run: (harness, children) =>
    Effect.gen(function*() {
      const promise = "several processes opening a fresh store at once all succeed"
      const shared = harness.share()
      const outcomes = yield* runChildren(shared.child, Array.from({ length: children }, () => ({ op: "open" as const, streamId: "probe" })))
      yield* holds(promise, outcomes.every((outcome) => outcome.ok && outcome.result === null), () => `outcomes: ${show(outcomes.map(outcomeText))}`)
      yield* inStore(
        shared,
        Effect.gen(function*() {
          const { store } = yield* services
          const ids = makeIds()
          const stream = newStream(ids, "after-open")
          yield* succeeds(promise, "an append after the concurrent opens", store.append(request(ids, stream, 0, [created(stream)])))
          yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream)])
        })
      )
    })
}

export const processesVersionRace: ProcessCheck = {
  id: "processes.version-race",
  title: "N processes appending with the same expected version: exactly one wins, the rest get the conflict",
  run: (harness, children) =>
    Effect.gen(function*() {
      const promise = "concurrent appends with the same expected version: exactly one wins"
      const shared = harness.share()
      const ids = makeIds()
      const stream = newStream(ids, "proc-race")
      yield* inStore(
        shared,
        Effect.flatMap(services, ({ store }) => succeeds(promise, "creating the stream", store.append(request(ids, stream, 0, [created(stream)]))))
      )
      const requests = Array.from({ length: children }, (_, i) => request(ids, stream, 1, questions(i * 10, 2)))
      const outcomes = yield* runChildren(shared.child, requests.map((r) => ({ op: "append" as const, request: wireAppend(r) })))
      const winners = outcomes.flatMap((outcome, index) => (outcome.ok ? [index] : []))
      yield* holds(promise, winners.length === 1, () => `${winners.length} of ${children} processes won: ${show(outcomes.map(outcomeText))}`)
      for (const outcome of outcomes) {
        if (!outcome.ok) {
          yield* holds(
            promise,
            outcome.tag === tags.VersionConflict && outcome.fields["expected"] === 1 && outcome.fields["actual"] === 3,
            () => `a losing process got ${outcomeText(outcome)} ${show(outcome.fields)} instead of VersionConflict(expected 1, actual 3)`
          )
        }
      }
      const winner = requests[winners[0]!]!
      yield* inStore(
        shared,
        Effect.gen(function*() {
          const { store } = yield* services
          const read = yield* expectBranch(promise, store, stream.streamId, EventStore.mainBranch, [created(stream), ...winner.events])
          yield* same(promise, "the operation ids that landed", read.slice(1).map((s) => s.operationId), [winner.operationId, winner.operationId])
        })
      )
    })
}

export const processesStaleEpoch: ProcessCheck = {
  id: "processes.stale-epoch",
  title: "N processes appending with the epoch a takeover fenced off: none lands",
  run: (harness, children) =>
    Effect.gen(function*() {
      const promise = "a stale epoch never lands"
      const shared = harness.share()
      const ids = makeIds()
      const stream = newStream(ids, "proc-stale")
      const history = [created(stream), Events.leaseAcquired(1, A, expiring), Events.leaseTakenOver(2, B, A, expiring)]
      yield* inStore(
        shared,
        Effect.gen(function*() {
          const { store } = yield* services
          yield* succeeds(promise, "creating the stream with a lease", store.append(request(ids, stream, 0, history.slice(0, 2))))
          yield* lapse
          yield* succeeds(promise, "B taking over", store.append(request(ids, stream, 2, history.slice(2), { epoch: 1 })))
        })
      )
      const requests = Array.from({ length: children }, (_, i) => request(ids, stream, 3, [Events.checkpointRecorded("step", `run-${i}`)], { epoch: 1 }))
      const outcomes = yield* runChildren(shared.child, requests.map((r) => ({ op: "append" as const, request: wireAppend(r) })))
      for (const outcome of outcomes) {
        yield* holds(
          promise,
          !outcome.ok && outcome.tag === tags.StaleEpoch && outcome.fields["presented"] === 1 && outcome.fields["current"] === 2,
          () => `a process presenting the fenced epoch 1 got ${outcomeText(outcome)} instead of StaleEpoch(presented 1, current 2)`
        )
      }
      yield* inStore(shared, Effect.flatMap(services, ({ store }) => expectBranch(promise, store, stream.streamId, EventStore.mainBranch, history)))
    })
}

export const processesFencingRace: ProcessCheck = {
  id: "processes.fencing-race",
  title: "N-1 processes writing under epoch 1 race one taking the lease over: nothing under epoch 1 lands after the takeover",
  run: (harness, children) =>
    Effect.gen(function*() {
      const promise = "a stale epoch never lands"
      const shared = harness.share()
      const ids = makeIds()
      const stream = newStream(ids, "proc-fence")
      yield* inStore(
        shared,
        Effect.flatMap(services, ({ store }) =>
          succeeds(promise, "creating the stream with a lease", store.append(request(ids, stream, 0, [created(stream), Events.leaseAcquired(1, A, expiring)]))))
      )
      yield* lapse
      const takeover = request(ids, stream, 0, [Events.leaseTakenOver(2, B, A, expiring)], { epoch: 1 })
      const writers = Array.from({ length: Math.max(children - 1, 1) }, (_, i) =>
        request(ids, stream, 0, [Events.checkpointRecorded("step", `run-${i}`)], { epoch: 1 }))
      const retries = 4 * children
      const outcomes = yield* runChildren(shared.child, [
        { op: "appendAtHead" as const, request: wireAppend(takeover), retries },
        ...writers.map((r) => ({ op: "appendAtHead" as const, request: wireAppend(r), retries }))
      ])
      const [took, ...wrote] = outcomes
      yield* holds(promise, took?.ok === true, () => `the takeover did not land: ${took === undefined ? "no outcome" : outcomeText(took)}`)
      yield* inStore(
        shared,
        Effect.gen(function*() {
          const { store, models } = yield* services
          const read = yield* succeeds(promise, "reading the stream", readAll(store, { streamId: stream.streamId }))
          const takeoverAt = read.find((stored) => stored.operationId === takeover.operationId)?.lsn
          yield* holds(promise, takeoverAt !== undefined, () => "the takeover is not in the log")
          const late = read.filter((stored) => stored.epoch === 1 && stored.lsn > takeoverAt! && stored.operationId !== takeover.operationId)
          yield* holds(promise, late.length === 0, () => `events written under epoch 1 landed after the takeover: ${show(late.map((s) => [s.lsn, s.event._tag]))}`)
          for (const [index, outcome] of wrote.entries()) {
            const landed = read.filter((stored) => stored.operationId === writers[index]!.operationId)
            if (outcome.ok) {
              yield* holds(promise, landed.length === 1 && landed[0]!.lsn < takeoverAt!, () => `writer ${index} succeeded but its event is ${show(landed.map((s) => s.lsn))}, takeover at ${takeoverAt}`)
            } else {
              yield* holds(
                promise,
                outcome.tag === tags.StaleEpoch && landed.length === 0,
                () => `writer ${index} got ${outcomeText(outcome)} (expected success before the takeover or StaleEpoch after it), and ${landed.length} of its events landed`
              )
            }
          }
          yield* same(promise, "the lease after the race", leaseState(yield* succeeds(promise, "lease", models.lease(stream.projectId, stream.streamId))), {
            epoch: 2,
            held: true,
            owner: B
          })
        })
      )
    })
}
