/**
 * The single-writer lease of a task, over the store's ports.
 *
 * One writer at a time may change a task (its key is `projectId + taskId`). The lease is taken,
 * taken over and released by events on the task's stream, each carrying an epoch that grows by one
 * with every new holder; the store checks every append's epoch against the lease in the same
 * transaction, so a displaced holder's late writes are rejected ("fencing"). Liveness is a
 * heartbeat on the lease row, not an event.
 *
 * - `acquire` takes a free lease, or fails with {@link LeaseError.LeaseHeld} naming the holder, its
 *   last heartbeat and its grace deadline. An expired lease is still held: `acquire` refuses it and
 *   points at `takeover`. Acquiring a lease this very owner already holds returns it.
 * - `heartbeat` proves the holder is alive; a holder that lost its lease learns it here
 *   ({@link LeaseError.LeaseLost}).
 * - `release` ends the holder's lease, only with the holder's epoch.
 * - `takeover` is the only way a lease changes hands without a release: explicit, allowed only
 *   strictly after the grace deadline (last heartbeat + grace) by the store's clock, and only after
 *   the last checkpoint is verified against the stream head. It bumps the epoch and records who was
 *   displaced. A missing heartbeat alone never hands the lease over.
 * - `observe` reads; it never writes.
 * - `hold` acquires (or takes over) inside a scope and heartbeats in a fiber until the scope
 *   closes, then releases; it is not reentrant (a lease this owner already holds is `LeaseHeld`); `withLease` runs an effect under a held lease and interrupts it with
 *   `LeaseLost` the moment a heartbeat or a write finds the lease gone.
 *
 * Deadlines are judged by the store's clock (`LeaseStore.now`): on PostgreSQL the database's, so
 * runners on machines with skewed clocks agree; the store re-checks a takeover's deadline in the
 * append's own transaction, so a heartbeat that lands in between wins.
 *
 * @since 0.1.0
 */
import * as Event from "@ratchet/kernel/Event"
import * as EventStore from "@ratchet/storage/EventStore"
import * as LeaseStore from "@ratchet/storage/LeaseStore"
import * as ReadModel from "@ratchet/storage/ReadModel"
import type { StorageError } from "@ratchet/storage/StorageError"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as LeaseError from "./LeaseError.js"
import * as LeaseSettings from "./LeaseSettings.js"
import * as Owner from "./Owner.js"
import type { Key, Lease, Observation, Takeover, Holder, Options, AcquireError, TakeoverError, ReleaseError } from "./LeaseModels.js"

/**
 * @since 0.1.0
 * @category models
 */
export type { Key, Lease, Observation, Takeover, LeasedAppend, Holder, Options, AcquireError, TakeoverError, ReleaseError } from "./LeaseModels.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly settings: LeaseSettings.Settings
  readonly observe: (key: Key) => Effect.Effect<Observation, EventStore.InvalidRequest | StorageError>
  readonly acquire: (key: Key, owner: Owner.Owner, options?: Options) => Effect.Effect<Lease, AcquireError>
  readonly heartbeat: (lease: Lease) => Effect.Effect<Lease, LeaseError.LeaseLost | EventStore.InvalidRequest | StorageError>
  readonly release: (lease: Lease, options?: Options) => Effect.Effect<void, ReleaseError>
  readonly takeover: (key: Key, owner: Owner.Owner, options?: Options) => Effect.Effect<Takeover, TakeoverError>
  /**
   * Acquires (or, with `takeover`, takes over) the lease for the enclosing scope: a fiber
   * heartbeats every `heartbeatMs` until the scope closes, then the lease is released.
   */
  readonly hold: (
    key: Key,
    owner: Owner.Owner,
    options?: Options & { readonly takeover?: boolean | undefined }
  ) => Effect.Effect<Holder, AcquireError | TakeoverError, Scope.Scope>
  /**
   * Runs `use` under a held lease, released afterwards. If a heartbeat or a write finds the lease
   * gone, `use` is interrupted (or has failed) and the result is `LeaseLost`.
   */
  readonly withLease: <A, E, R>(
    key: Key,
    owner: Owner.Owner,
    use: (holder: Holder) => Effect.Effect<A, E, R>,
    options?: Options & { readonly takeover?: boolean | undefined }
  ) => Effect.Effect<A, E | AcquireError | TakeoverError | LeaseError.LeaseLost, Exclude<R, Scope.Scope>>
}

/**
 * @since 0.1.0
 * @category services
 */
export class LeaseManager extends Context.Tag("@ratchet/lease/LeaseManager")<LeaseManager, Service>() {}

// ---------------------------------------------------------------------------------------------

/** How many times a lease write is re-decided after the stream or the lease moved under it. */
const maxAttempts = 16

/** The stream or the lease moved between the read and the write: read again and decide again. */
class Retry extends Data.TaggedError("@ratchet/lease/Retry") {}

const operationId = (operation: string): string => `lease-${operation}-${crypto.randomUUID()}`

const leaseOf = (row: ReadModel.LeaseRow, branch: string, heartbeatMs: number): Lease => ({
  projectId: row.projectId,
  taskId: row.streamId,
  branch,
  epoch: row.epoch,
  owner: row.owner,
  heartbeatMs,
  graceMs: row.graceMs,
  acquiredAt: row.acquiredAt,
  heartbeatAt: row.heartbeatAt,
  deadline: row.heartbeatAt + row.graceMs
})

/**
 * A lease manager over the context's `EventStore`, `ReadModels` and `LeaseStore`, with `settings`
 * for the leases it takes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  settings: LeaseSettings.Settings = LeaseSettings.defaults
): Effect.Effect<Service, LeaseSettings.InvalidLeaseSettings, EventStore.EventStore | ReadModel.ReadModels | LeaseStore.LeaseStore> =>
  Effect.gen(function*() {
    const checked = yield* LeaseSettings.validate(settings)
    const store = yield* EventStore.EventStore
    const models = yield* ReadModel.ReadModels
    const leases = yield* LeaseStore.LeaseStore

    const branchOf = (key: Key) => key.branch ?? EventStore.mainBranch

    const actorOf = (owner: Owner.Owner, options: Options | undefined): Event.Actor =>
      options?.actor ?? { kind: "runner", id: owner.host }

    /** The branch head, or `TaskNotFound`. */
    const headOf = (key: Key) =>
      store.head(key.taskId, branchOf(key)).pipe(
        Effect.catchTag("@ratchet/storage/BranchNotFound", () => Effect.succeed(null)),
        Effect.flatMap((head) =>
          head === null
            ? Effect.fail(new LeaseError.TaskNotFound({ projectId: key.projectId, taskId: key.taskId, branch: branchOf(key) }))
            : Effect.succeed(head)
        )
      )

    /** Runs `decide` until it does not ask to retry, at most `maxAttempts` times. */
    const retrying = <A, E, R>(key: Key, operation: string, decide: Effect.Effect<A, E | Retry, R>) => {
      const loop = (attempt: number): Effect.Effect<A, Exclude<E, Retry> | LeaseError.LeaseContention, R> =>
        Effect.catchIf(
          decide,
          (error): error is Retry => error instanceof Retry,
          () =>
            attempt >= maxAttempts
              ? Effect.fail(new LeaseError.LeaseContention({ projectId: key.projectId, taskId: key.taskId, operation, attempts: attempt }))
              : Effect.zipRight(
                // Jittered, so contenders that collided do not collide again in lockstep.
                Effect.flatMap(Random.nextIntBetween(0, Math.min(2 ** attempt, 50) + 1), (ms) => Effect.sleep(Duration.millis(ms))),
                loop(attempt + 1)
              )
        ) as Effect.Effect<A, Exclude<E, Retry> | LeaseError.LeaseContention, R>
      return loop(1)
    }

    /** Appends lease events; a moved stream or lease becomes `Retry`, other store refusals pass through. */
    const appendLease = (key: Key, version: number, presented: number | null, events: ReadonlyArray<Event.Event>, operation: string) =>
      store.append({
        projectId: key.projectId,
        streamId: key.taskId,
        branch: branchOf(key),
        expectedVersion: version,
        epoch: presented,
        operationId: operationId(operation),
        events
      }).pipe(
        Effect.catchTags({
          "@ratchet/storage/VersionConflict": () => Effect.fail(new Retry()),
          "@ratchet/storage/StaleEpoch": () => Effect.fail(new Retry()),
          "@ratchet/storage/BranchNotFound": () =>
            Effect.fail(new LeaseError.TaskNotFound({ projectId: key.projectId, taskId: key.taskId, branch: branchOf(key) })),
          // Operation ids are fresh UUIDs: a reuse is a bug, not a refusal.
          "@ratchet/storage/OperationReused": (error) => Effect.die(error)
        })
      )

    /** `LeaseLost` for `epoch`, naming who took the lease over when the row still shows their epoch. */
    const lostAt = (key: Key, epoch: number, currentEpoch: number | null, held: boolean) =>
      models.lease(key.projectId, key.taskId).pipe(
        Effect.orElseSucceed(() => null),
        Effect.map((row) =>
          new LeaseError.LeaseLost({
            projectId: key.projectId,
            taskId: key.taskId,
            epoch,
            currentEpoch,
            held,
            ...(row !== null && currentEpoch !== null && row.epoch === currentEpoch && currentEpoch > epoch ? { takenBy: row.owner } : {})
          })
        )
      )

    /**
     * The lease just written, read back: still this owner's at `epoch`, or `LeaseLost` when the
     * caller stalled past the grace between its commit and this read and was taken over already.
     */
    const claimed = (key: Key, owner: Owner.Owner, epoch: number) =>
      models.lease(key.projectId, key.taskId).pipe(
        Effect.flatMap((row) =>
          row !== null && row.held && row.epoch === epoch && Owner.same(row.owner, owner)
            ? Effect.succeed(leaseOf(row, branchOf(key), checked.heartbeatMs))
            : Effect.fail(
              new LeaseError.LeaseLost({
                projectId: key.projectId,
                taskId: key.taskId,
                epoch,
                currentEpoch: row?.epoch ?? null,
                held: row?.held ?? false,
                ...(row !== null && row.epoch > epoch ? { takenBy: row.owner } : {})
              })
            )
        )
      )

    const observe: Service["observe"] = (key) =>
      Effect.gen(function*() {
        const row = yield* models.lease(key.projectId, key.taskId)
        const now = yield* leases.now
        if (row === null) {
          return {
            projectId: key.projectId,
            taskId: key.taskId,
            status: "free",
            epoch: null,
            holder: null,
            acquiredAt: null,
            heartbeatAt: null,
            graceMs: null,
            deadline: null,
            now
          } satisfies Observation
        }
        const deadline = row.heartbeatAt + row.graceMs
        return {
          projectId: key.projectId,
          taskId: key.taskId,
          status: !row.held ? "free" : now > deadline ? "expired" : "held",
          epoch: row.epoch,
          holder: row.held ? row.owner : null,
          acquiredAt: row.acquiredAt,
          heartbeatAt: row.heartbeatAt,
          graceMs: row.graceMs,
          deadline,
          now
        } satisfies Observation
      })

    const validOwner = (owner: Owner.Owner) => Owner.make(owner)

    /** `reentrant`: whether this very owner's held lease is returned (`acquire`) or refused (`hold`). */
    const acquireWith = (key: Key, ownerInput: Owner.Owner, options: Options | undefined, reentrant: boolean) =>
      Effect.gen(function*() {
        const owner = yield* validOwner(ownerInput)
        return yield* retrying(
          key,
          "acquire",
          Effect.gen(function*() {
            const head = yield* headOf(key)
            const row = yield* models.lease(key.projectId, key.taskId)
            if (row !== null && row.held) {
              if (reentrant && Owner.same(row.owner, owner)) return leaseOf(row, branchOf(key), checked.heartbeatMs)
              return yield* new LeaseError.LeaseHeld({
                projectId: key.projectId,
                taskId: key.taskId,
                epoch: row.epoch,
                holder: row.owner,
                heartbeatAt: row.heartbeatAt,
                deadline: row.heartbeatAt + row.graceMs,
                now: yield* leases.now
              })
            }
            const epoch = (row?.epoch ?? 0) + 1
            const at = yield* Clock.currentTimeMillis
            const event = Event.make<typeof Event.LeaseAcquired.Type>({
              _tag: "LeaseAcquired",
              actor: actorOf(owner, options),
              at,
              epoch,
              owner,
              heartbeatMs: checked.heartbeatMs,
              graceMs: checked.graceMs
            })
            yield* appendLease(key, head.version, epoch, [event], "acquire").pipe(Effect.catchTag("@ratchet/storage/LeaseNotExpired", Effect.die))
            return yield* claimed(key, owner, epoch)
          })
        )
      })

    const acquire: Service["acquire"] = (key, owner, options) => acquireWith(key, owner, options, true)

    const heartbeat: Service["heartbeat"] = (lease) =>
      leases.heartbeat({ projectId: lease.projectId, streamId: lease.taskId, epoch: lease.epoch }).pipe(
        Effect.map((row) => leaseOf(row, lease.branch, lease.heartbeatMs)),
        Effect.catchTag("@ratchet/storage/StaleEpoch", (stale) =>
          Effect.flatMap(lostAt(lease, lease.epoch, stale.current, stale.held), Effect.fail))
      )

    /** The lease row, which must be held: a free lease is `LeaseNotHeld` for `operation`. */
    const heldRow = (key: Key, operation: "release" | "takeover") =>
      Effect.flatMap(models.lease(key.projectId, key.taskId), (row) =>
        row !== null && row.held
          ? Effect.succeed(row)
          : Effect.fail(
            new LeaseError.LeaseNotHeld({ projectId: key.projectId, taskId: key.taskId, operation, lastEpoch: row?.epoch ?? null })
          ))

    const release: Service["release"] = (lease, options) => {
      const key: Key = { projectId: lease.projectId, taskId: lease.taskId, branch: lease.branch }
      return retrying(
        key,
        "release",
        Effect.gen(function*() {
          const head = yield* headOf(key)
          const row = yield* heldRow(key, "release")
          if (row.epoch !== lease.epoch || !Owner.same(row.owner, lease.owner)) {
            return yield* new LeaseError.NotHolder({
              projectId: key.projectId,
              taskId: key.taskId,
              presented: lease.epoch,
              epoch: row.epoch,
              holder: row.owner
            })
          }
          const at = yield* Clock.currentTimeMillis
          const event = Event.make<typeof Event.LeaseReleased.Type>({ _tag: "LeaseReleased", actor: actorOf(lease.owner, options), at, epoch: lease.epoch })
          yield* appendLease(key, head.version, lease.epoch, [event], "release").pipe(
            Effect.catchTag("@ratchet/storage/LeaseNotExpired", Effect.die)
          )
        })
      )
    }

    /** The last checkpoint, checked against the log up to `head`; `null` when there is none. */
    const verifyCheckpoint = (key: Key, head: EventStore.Head) =>
      Effect.gen(function*() {
        // The last one alone (a seek from the end of the branch's checkpoints, however many steps it took).
        const last = (yield* models.checkpoints(key.taskId, branchOf(key), { last: 1 })).at(-1)
        if (last === undefined) return null
        const mismatch = (detail: string) =>
          new LeaseError.CheckpointMismatch({ projectId: key.projectId, taskId: key.taskId, lsn: last.lsn, detail })
        // The holder may still write until the takeover lands: a checkpoint past the head read a moment
        // ago means the stream moved, not that it is damaged. Read both again.
        if (last.lsn > head.lastLsn) return yield* new Retry()
        const found = Chunk.toReadonlyArray(
          yield* Stream.runCollect(store.read({ streamId: key.taskId, branch: branchOf(key), fromLsn: last.lsn, toLsn: last.lsn })).pipe(
            Effect.catchTag("@ratchet/storage/BranchNotFound", () =>
              Effect.fail(new LeaseError.TaskNotFound({ projectId: key.projectId, taskId: key.taskId, branch: branchOf(key) })))
          )
        )
        const event = found[0]?.event
        if (event === undefined) return yield* mismatch("no event of the branch has that LSN")
        if (event._tag !== "CheckpointRecorded") return yield* mismatch(`the event at that LSN is ${event._tag}`)
        if (event.kind !== last.kind || event.runId !== last.runId) {
          return yield* mismatch(`the log records a ${event.kind} checkpoint of run ${event.runId}, the read model a ${last.kind} one of run ${last.runId}`)
        }
        return last
      })

    const takeover: Service["takeover"] = (key, ownerInput, options) =>
      Effect.gen(function*() {
        const owner = yield* validOwner(ownerInput)
        return yield* retrying(
          key,
          "take over",
          Effect.gen(function*() {
            const head = yield* headOf(key)
            const row = yield* heldRow(key, "takeover")
            const now = yield* leases.now
            const deadline = row.heartbeatAt + row.graceMs
            const tooEarly = (heartbeatAt: number, at: number) =>
              new LeaseError.TakeoverTooEarly({
                projectId: key.projectId,
                taskId: key.taskId,
                epoch: row.epoch,
                holder: row.owner,
                heartbeatAt,
                deadline: heartbeatAt + row.graceMs,
                now: at
              })
            if (now <= deadline) return yield* tooEarly(row.heartbeatAt, now)
            const checkpoint = yield* verifyCheckpoint(key, head)
            const at = yield* Clock.currentTimeMillis
            const event = Event.make<typeof Event.LeaseTakenOver.Type>({
              _tag: "LeaseTakenOver",
              actor: actorOf(owner, options),
              at,
              epoch: row.epoch + 1,
              owner,
              displaced: row.owner,
              heartbeatMs: checked.heartbeatMs,
              graceMs: checked.graceMs
            })
            // The append re-checks the deadline in its transaction (a heartbeat may have landed) and
            // expects the head just verified, so nothing slips in between the check and the write.
            yield* appendLease(key, head.version, row.epoch, [event], "takeover").pipe(
              Effect.catchTag("@ratchet/storage/LeaseNotExpired", (error) => Effect.fail(tooEarly(error.heartbeatAt, error.now)))
            )
            return {
              lease: yield* claimed(key, owner, row.epoch + 1),
              displaced: row.owner,
              displacedEpoch: row.epoch,
              checkpoint
            } satisfies Takeover
          })
        )
      })

    const hold: Service["hold"] = (key, owner, options) =>
      Effect.gen(function*() {
        const lost = yield* Deferred.make<never, LeaseError.LeaseLost>()
        const markLost = (error: LeaseError.LeaseLost) => Deferred.fail(lost, error)
        // Acquired and its release registered in one uninterruptible step, so an interruption can
        // never leave a lease behind. Not reentrant: two holds by one owner would share an epoch, and
        // the first to close would release the other's lease.
        const take: Effect.Effect<Lease, AcquireError | TakeoverError> = options?.takeover === true
          ? Effect.map(takeover(key, owner, options), (took) => took.lease)
          : acquireWith(key, owner, options, false)
        const first = yield* Effect.acquireRelease(
          take,
          (lease) =>
            Effect.gen(function*() {
              // A lost lease is somebody else's now: releasing it is theirs to do.
              if (yield* Deferred.isDone(lost)) return
              yield* release(lease, options).pipe(
                Effect.catchAll((error) =>
                  Effect.logWarning(`could not release the lease of task ${lease.taskId} (epoch ${lease.epoch}): ${error.message}`)
                )
              )
            })
        )
        const current = yield* Ref.make(first)

        const beat = Effect.flatMap(Ref.get(current), heartbeat).pipe(
          Effect.flatMap((lease) => Ref.set(current, lease)),
          // A store that is briefly unavailable is not a lost lease: try again at the next beat.
          // Writes stay fenced meanwhile, and the lease stays held until someone takes it over.
          Effect.catchTags({
            "@ratchet/storage/StorageError": (error) => Effect.logWarning(`lease heartbeat failed: ${error.message}`),
            "@ratchet/storage/InvalidRequest": (error) => Effect.die(error)
          })
        )
        // Started after the release was registered, so it is stopped first when the scope closes.
        yield* Effect.sleep(Duration.millis(first.heartbeatMs)).pipe(
          Effect.zipRight(beat),
          Effect.forever,
          Effect.catchTag("@ratchet/lease/LeaseLost", markLost),
          // A heartbeat fiber that dies of a defect would leave the holder writing with nobody
          // keeping its lease alive: its work is stopped with the defect instead.
          Effect.catchAllCause((cause) => Cause.isInterruptedOnly(cause) ? Effect.void : Deferred.failCause(lost, cause)),
          Effect.forkScoped
        )

        const append: Holder["append"] = (request) => {
          const leaseEvent = request.events.find((event) =>
            event._tag === "LeaseAcquired" || event._tag === "LeaseTakenOver" || event._tag === "LeaseReleased"
          )
          if (leaseEvent !== undefined) {
            return Effect.fail(
              new EventStore.InvalidRequest({
                field: "events",
                reason: `holds a ${leaseEvent._tag} event; a holder changes its lease only through the lease manager (release by closing the scope)`
              })
            )
          }
          return store.append({
            projectId: first.projectId,
            streamId: first.taskId,
            branch: first.branch,
            epoch: first.epoch,
            expectedVersion: request.expectedVersion,
            operationId: request.operationId,
            events: request.events
          }).pipe(
            Effect.tapErrorTag("@ratchet/storage/StaleEpoch", (stale) =>
              Effect.flatMap(lostAt(first, first.epoch, stale.current, stale.held), markLost))
          )
        }

        return {
          epoch: first.epoch,
          lease: Ref.get(current),
          append,
          lost: Deferred.await(lost),
          isLost: Deferred.isDone(lost)
        } satisfies Holder
      })

    const withLease: Service["withLease"] = (key, owner, use, options) =>
      Effect.scoped(Effect.flatMap(hold(key, owner, options), (holder) =>
        Effect.raceFirst(use(holder), holder.lost).pipe(
          // Once the lease is lost, that is the outcome, whichever failure (a fenced write's
          // StaleEpoch, say) reached the race first.
          Effect.catchAll((error) => Effect.flatMap(holder.isLost, (lost) => (lost ? holder.lost : Effect.fail(error))))
        )))

    return { settings: checked, observe, acquire, heartbeat, release, takeover, hold, withLease }
  })

/**
 * The lease manager with `settings` (the defaults when omitted).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  settings: LeaseSettings.Settings = LeaseSettings.defaults
): Layer.Layer<LeaseManager, LeaseSettings.InvalidLeaseSettings, EventStore.EventStore | ReadModel.ReadModels | LeaseStore.LeaseStore> =>
  Layer.effect(LeaseManager, make(settings))

/**
 * The lease manager with the project's settings (the defaults fill what it leaves out), overridden
 * for this invocation by `RATCHET_LEASE_HEARTBEAT_MS` and `RATCHET_LEASE_GRACE_MS`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  project: LeaseSettings.ProjectSettings = {}
): Layer.Layer<
  LeaseManager,
  LeaseSettings.InvalidLeaseSettings | ConfigError.ConfigError,
  EventStore.EventStore | ReadModel.ReadModels | LeaseStore.LeaseStore
> => Layer.effect(LeaseManager, Effect.flatMap(LeaseSettings.fromConfig(project), make))
