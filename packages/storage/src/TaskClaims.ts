/**
 * Which runner works on which task: a claim that keeps runners of one store off each other's
 * tasks, and a wake-up for runners that wait for work (ADR 0042).
 *
 * A claim is advice, never authority: the writer lease (its epoch, checked by every append) is what
 * makes one writer per task safe. A claim makes a fleet *efficient*: without it every runner of
 * `ratchet-runner --any` reads the same list of runnable tasks, goes for the oldest, and all but one
 * lose the lease race after paying for it (the thundering herd). With it, a runner skips a task
 * another runner has claimed, in one round trip and without touching the task's stream.
 *
 * - A claim belongs to the process that took it and ends when it releases it or when the process
 *   (on PostgreSQL: its database session) ends, so a runner killed with SIGKILL leaves no claim
 *   behind; its lease still holds until its grace deadline, which the lease manager judges.
 * - {@link Service.announce} wakes the runners waiting in {@link Service.awaitWork} for a project
 *   (a task was released, a lease freed); a wake-up that arrives while nobody waits is kept for the
 *   next wait, so a listing followed by a wait never misses one.
 *
 * Engines: PostgreSQL claims with a session-level advisory lock on a connection the process keeps
 * for it and wakes through `LISTEN`/`NOTIFY`; {@link layerLocal} (SQLite, the in-memory store)
 * claims within the process and waits by sleeping, since every runner of a SQLite store is on one
 * machine and the lease already refuses a second writer.
 *
 * @since 0.5.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { StorageError } from "./StorageError.js"

/**
 * @since 0.5.0
 * @category models
 */
export interface Service {
  /** Claims `taskId` for this process; false when another process holds its claim. */
  readonly tryClaim: (projectId: string, taskId: string) => Effect.Effect<boolean, StorageError>
  /** Ends this process's claim on `taskId` (nothing when it holds none). */
  readonly release: (projectId: string, taskId: string) => Effect.Effect<void, StorageError>
  /** Wakes the runners waiting for work in `projectId`. */
  readonly announce: (projectId: string) => Effect.Effect<void, StorageError>
  /**
   * Waits until work may be free in `projectId` (an announcement since the last wait returned) or
   * until `timeout` passes, whichever is first.
   */
  readonly awaitWork: (projectId: string, timeout: Duration.DurationInput) => Effect.Effect<void, StorageError>
}

/**
 * @since 0.5.0
 * @category services
 */
export class TaskClaims extends Context.Tag("@ratchet/storage/TaskClaims")<TaskClaims, Service>() {}

/**
 * Claims within this process and a wait that sleeps: for engines whose runners share one machine
 * (see the module comment).
 *
 * @since 0.5.0
 * @category constructors
 */
export const makeLocal = (): Service => {
  const claimed = new Set<string>()
  const keyOf = (projectId: string, taskId: string) => `${projectId}\u0000${taskId}`
  return {
    tryClaim: (projectId, taskId) =>
      Effect.sync(() => {
        const key = keyOf(projectId, taskId)
        if (claimed.has(key)) return false
        claimed.add(key)
        return true
      }),
    release: (projectId, taskId) => Effect.sync(() => void claimed.delete(keyOf(projectId, taskId))),
    announce: () => Effect.void,
    awaitWork: (_projectId, timeout) => Effect.sleep(timeout)
  }
}

/**
 * {@link makeLocal} as a layer.
 *
 * @since 0.5.0
 * @category layers
 */
export const layerLocal: Layer.Layer<TaskClaims> = Layer.sync(TaskClaims, makeLocal)
