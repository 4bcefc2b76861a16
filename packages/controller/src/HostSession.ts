/**
 * A host session (a Claude Code or Codex session in this workspace) as the worker of a manual step.
 *
 * While a manual step awaits its worker, the session that holds the task's writer lease is that
 * worker: each of its side-effecting tool calls opens an intent of the step's attempt before the
 * call runs and resolves it when the call ends, so a crash between the two leaves the record
 * recovery needs (an intent dispatched and never resolved makes the attempt Indeterminate).
 *
 * The lease is taken lazily, when a manual step awaits (at the session's start, or at its first
 * side-effecting call): free, it is acquired; expired, it is taken over; held by another owner,
 * the session is an observer and the guard denies its writes, naming the holder. Every hook of the
 * holding session heartbeats it; the session's end releases it (open intents stay for recovery);
 * `ratchet step done` ends the step under the session's lease and releases it.
 *
 * @since 0.1.0
 */
import type * as Event from "@ratchet/kernel/Event"
import * as Effect from "effect/Effect"
import * as Controller from "./Controller.js"
import type * as HostView from "./HostView.js"

/**
 * Who the session is: the adapter's name and the host's session id.
 *
 * @since 0.1.0
 * @category models
 */
export interface Identity {
  readonly host: string
  readonly sessionId: string
}

/**
 * The lease reference a session's owner carries: `<host>:<session id>`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sessionRef = (identity: Identity): string => `${identity.host}:${identity.sessionId}`

/**
 * The actor a session's writes are recorded as: the agent behind the host session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const actorOf = (identity: Identity): Event.Actor => ({ kind: "agent", id: sessionRef(identity).slice(0, 200) })

/**
 * Where the session stands with the task's lease after {@link attend}: `ours` is the epoch it
 * holds (its writes present it), `holder` the other owner holding it (the session observes).
 *
 * @since 0.1.0
 * @category models
 */
export interface Standing {
  readonly ours: number | null
  readonly holder: Event.LeaseOwner | null
}

/** Whether the lease's owner (held, or expired and not taken over) is this session. */
const isOurs = (task: HostView.HostTask, identity: Identity): boolean => task.leaseOwner !== null && task.leaseOwner.sessionRef === sessionRef(identity)

/**
 * Keeps the session's lease alive, and takes it when a manual step awaits a worker and nobody
 * else holds it. Never fails: a lease it cannot take leaves the session without one (`ours` null)
 * and, when another owner holds it, an observer of that owner. The caller refuses a call it must
 * record when `ours` is null.
 *
 * @since 0.1.0
 * @category constructors
 */
export const attend = (task: HostView.HostTask, identity: Identity): Effect.Effect<Standing, never, Controller.Controller> =>
  Effect.gen(function*() {
    const controller = yield* Controller.Controller
    const lease = { host: identity.host, sessionRef: sessionRef(identity), actor: actorOf(identity) }
    // After a lost race: the winner may be this very session (another of its hooks, running at
    // the same time), whose epoch is then ours too.
    const observed = Effect.map(controller.lease.show(task.taskId).pipe(Effect.option), (shown): Standing => {
      if (shown._tag === "None" || shown.value.status !== "held" || shown.value.holder === null) return { ours: null, holder: null }
      return shown.value.holder.sessionRef === lease.sessionRef ? { ours: shown.value.epoch, holder: null } : { ours: null, holder: shown.value.holder }
    })
    if (task.leaseEpoch !== null && isOurs(task, identity)) {
      const kept = yield* controller.lease.heartbeat(task.taskId, task.leaseEpoch).pipe(Effect.option)
      if (kept._tag === "Some") return { ours: kept.value.epoch, holder: null }
    }
    if (task.awaiting === null) {
      return task.leaseHolder === null || task.leaseHolder.sessionRef === lease.sessionRef ? { ours: null, holder: null } : { ours: null, holder: task.leaseHolder }
    }
    if (task.leaseStatus === "held" && !isOurs(task, identity)) return { ours: null, holder: task.leaseHolder }
    // Free, expired, or ours but lapsed: take it (a racing session may win; then it observes).
    const taken = task.leaseStatus === "free"
      ? yield* Effect.option(Effect.map(controller.lease.acquire(task.taskId, lease), (held) => held.epoch))
      : yield* Effect.option(Effect.map(controller.lease.takeover(task.taskId, lease), (took) => took.lease.epoch))
    return taken._tag === "Some" ? { ours: taken.value, holder: null } : yield* observed
  })

/**
 * Releases the session's lease when it holds it, or held it and let it lapse (the session ended).
 * Never fails: a lease that cannot be released lapses after its grace and is taken over.
 *
 * @since 0.1.0
 * @category constructors
 */
export const leave = (task: HostView.HostTask, identity: Identity): Effect.Effect<boolean, never, Controller.Controller> =>
  Effect.gen(function*() {
    if (task.leaseEpoch === null || !isOurs(task, identity)) return false
    const controller = yield* Controller.Controller
    const released = yield* controller.lease.release(task.taskId, task.leaseEpoch, actorOf(identity)).pipe(Effect.option)
    return released._tag === "Some"
  })
