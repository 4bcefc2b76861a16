/**
 * `ratchet-runner --any`: take the project's runnable tasks one after another until none is left
 * that this runner can run, sharing them with the other runners of the store (ADR 0042).
 *
 * - **Claimed, not raced.** Of the runnable tasks (oldest first) the runner takes the first whose
 *   claim it wins (`TaskClaims.tryClaim`: on PostgreSQL an advisory lock, one round trip). Runners
 *   started together therefore spread over different tasks instead of all going for the oldest and
 *   all but one losing the lease race after paying for it. The claim is advice: the run still takes
 *   the writer lease, whose epoch every append checks, so a claim that fails to exclude (two
 *   processes of an engine without claims across machines) costs time, never safety.
 * - **Released and announced.** After a task's run, successful or not, the claim ends and the
 *   project's waiting runners are woken (`announce`): a task a runner leaves at a manual step or a
 *   pause is not runnable, but one it gave up (a lost lease) is.
 * - **Woken, not polling.** With `takeoverExpired`, a runner that finds nothing free while live
 *   runners hold runnable tasks waits until an announcement or until the first of their leases
 *   passes its grace deadline (`Runnable.ready`), then lists again; without it, it stops.
 *
 * @since 0.5.0
 */
import * as TaskClaims from "@ratchet/storage/TaskClaims"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { Project } from "./Controller.js"
import * as Runnable from "./Runnable.js"

/**
 * The longest a waiting runner sleeps between listings when no deadline is known (a lease held by
 * a runner whose deadline the listing could not read): a backstop for a lost connection, not a poll
 * interval the fleet relies on.
 */
const longestWait = Duration.seconds(5)

/**
 * What the loop needs from its transport.
 *
 * @since 0.5.0
 * @category models
 */
export interface Options<A, E, R> {
  readonly takeoverExpired: boolean
  /** Runs one task (the run engine); `takeover` when its lease expired. */
  readonly run: (taskId: string, takeover: boolean) => Effect.Effect<A, E, R>
  /** Whether to stop before the next task (a person asked for a pause). */
  readonly stopping: () => boolean
  /** Says why a task was skipped. */
  readonly say: (text: string) => void
  /**
   * Why no other task may run after this outcome, or null: a loop that ended with git's settings
   * of the checkout changed (ADR 0045) leaves a checkout where the next run's git, outside any
   * sandbox, would run what was planted there.
   */
  readonly stopsAfter?: ((outcome: A) => string | null) | undefined
}

/**
 * Runs tasks until none is left for this runner (see the module comment); the outcomes of the
 * tasks it ran, in order. A failure that is not "another runner has it" or "the task moved on"
 * ends the loop with that failure.
 *
 * @since 0.5.0
 * @category constructors
 */
export const loop = <A, E extends { readonly _tag: string; readonly message?: string }, R>(options: Options<A, E, R>) =>
  Effect.gen(function*() {
    const project = yield* Project
    const claims = yield* TaskClaims.TaskClaims
    const projectId = project.project.projectId
    const outcomes: Array<A> = []
    // Tasks this runner finished with (they wait for a person now) and tasks another runner won
    // first (tried again after a wait).
    const settled = new Set<string>()
    const busy = new Set<string>()
    while (!options.stopping()) {
      const { expiresInMs, held, ready } = yield* Runnable.ready(options.takeoverExpired)
      let next: (typeof ready)[number] | undefined
      let claimedElsewhere = 0
      for (const entry of ready) {
        if (settled.has(entry.taskId) || busy.has(entry.taskId)) continue
        if (yield* claims.tryClaim(projectId, entry.taskId)) {
          next = entry
          break
        }
        claimedElsewhere += 1
      }
      if (next === undefined) {
        // Another runner's lease may expire (its runner died): wait for it when asked to take
        // expired leases over; otherwise there is nothing left for this runner.
        if (options.takeoverExpired && held + busy.size + claimedElsewhere > 0) {
          yield* claims.awaitWork(projectId, expiresInMs === null ? longestWait : Duration.min(Duration.millis(expiresInMs), longestWait))
          busy.clear()
          continue
        }
        break
      }
      const taskId = next.taskId
      const result = yield* Effect.either(options.run(taskId, next.takeover)).pipe(
        Effect.ensuring(Effect.ignore(Effect.zipRight(claims.release(projectId, taskId), claims.announce(projectId))))
      )
      if (result._tag === "Right") {
        outcomes.push(result.right)
        settled.add(taskId)
        const stop = options.stopsAfter?.(result.right) ?? null
        if (stop !== null) {
          options.say(`stopped after ${taskId}: ${stop}`)
          break
        }
      } else if (Runnable.isBusy(result.left)) {
        busy.add(taskId)
      } else if (result.left._tag === "@ratchet/kernel/TaskCommandRefused" || result.left._tag === "@ratchet/kernel/TaskCommandHeld") {
        // The task moved between the listing and the run (another runner finished or blocked
        // it), or its gate holds: it is not this runner's to run; the others still are.
        options.say(`skipped ${taskId}: ${result.left.message ?? result.left._tag}`)
        settled.add(taskId)
      } else {
        return yield* Effect.fail(result.left)
      }
    }
    return outcomes
  })
