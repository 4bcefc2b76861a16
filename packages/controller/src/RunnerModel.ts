/**
 * The run engine's shapes (`Runner`): what it is told (`Options`), what it reports as it works
 * (`Progress`), how it stops (`Outcome`, `Stop`) and how it fails (`RunError`). `Runner` re-exports
 * them; they live here so that the engine's module is the engine.
 *
 * @since 0.5.0
 */
import type * as Attempt from "@ratchet/kernel/Attempt"
import type * as Event from "@ratchet/kernel/Event"
import type * as Run from "@ratchet/kernel/Run"
import type * as Task from "@ratchet/kernel/Task"
import type * as LeaseError from "@ratchet/lease/LeaseError"
import type * as LeaseManager from "@ratchet/lease/LeaseManager"
import type * as Owner from "@ratchet/lease/Owner"
import type * as EventStore from "@ratchet/storage/EventStore"
import type { StorageError } from "@ratchet/storage/StorageError"
import type * as AgentHooks from "./AgentHooks.js"
import type * as AgentHost from "./AgentHost.js"
import type * as ChildSandbox from "./ChildSandbox.js"
import type * as ControllerError from "./ControllerError.js"
import type * as WorkTree from "./WorkTree.js"

/**
 * The named durable boundaries a fault can be injected at (a test facility: the runner kills
 * itself with SIGKILL there when `RATCHET_FAULT` names one, the first time it passes it).
 *
 * - `step-started`: a step's start and dispatch are committed; its command has not started.
 * - `child-started`: its command is running.
 * - `child-exited`: its command ended; nothing about its end is recorded.
 * - `step-finished`: its end, the boundary, and the next step's start when the plan determined it,
 *   are committed (in one transaction); the next command has not started.
 * - `verification-entered`, `task-blocked`: the task is VERIFYING (every step done), or BLOCKED; the
 *   run's lease is still held (it is released as the run ends).
 *
 * @since 0.1.0
 * @category models
 */
export const faultPoints = ["step-started", "child-started", "child-exited", "step-finished", "verification-entered", "task-blocked"] as const

/**
 * @since 0.1.0
 * @category models
 */
export type FaultPoint = (typeof faultPoints)[number]

/**
 * What the runner reports as it works, for a terminal or as NDJSON.
 *
 * @since 0.1.0
 * @category models
 */
export type Progress =
  | { readonly type: "run"; readonly taskId: string; readonly runId: string; readonly steps: number; readonly started: boolean; readonly epoch: number }
  | { readonly type: "recovered"; readonly taskId: string; readonly stepId: string; readonly attempt: number; readonly decision: string }
  | { readonly type: "orphan"; readonly taskId: string; readonly stepId: string; readonly pgid: number }
  | { readonly type: "tick"; readonly taskId: string; readonly stepId: string; readonly attempt: number; readonly elapsedMs: number }
  | {
    readonly type: "step"
    readonly taskId: string
    readonly stepId: string
    readonly index: number
    readonly total: number
    readonly attempt: number
    readonly command: string | null
  }
  | { readonly type: "output"; readonly taskId: string; readonly stepId: string; readonly stream: "stdout" | "stderr"; readonly text: string }
  | {
    readonly type: "step-end"
    readonly taskId: string
    readonly stepId: string
    readonly attempt: number
    readonly state: Attempt.State
    readonly exitCode: number | null
    readonly durationMs: number
    readonly changedPaths: ReadonlyArray<string>
  }

/**
 * Why the runner stopped.
 *
 * @since 0.1.0
 * @category models
 */
export type Stop = "verifying" | "awaiting_worker" | "blocked" | "paused" | "cancelled" | "handed_over"

/**
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly taskId: string
  readonly runId: string | null
  readonly state: Task.State
  readonly stop: Stop
  /** One sentence for people: what happened and what to do next. */
  readonly message: string
  readonly blocker: Event.Blocker | null
  readonly awaiting: { readonly stepId: string; readonly attempt: number; readonly instructions: string } | null
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly taskId: string
  /** Take the lease over from a holder whose grace has passed (never from a live one). */
  readonly takeover: boolean
  readonly actor: Event.Actor
  /** `$RATCHET_HOME`, where requests from other terminals arrive. */
  readonly home: string
  readonly onProgress?: ((progress: Progress) => void) | undefined
  /** Called at each durable boundary; the runner process kills itself at the configured one. */
  readonly fault?: ((point: FaultPoint) => void) | undefined
  /** The hosts' stream readers this runner starts agent steps with; a host without one is refused (ADR 0039). */
  readonly agentHosts?: AgentHost.Decoders | undefined
  /** How each host is given the run's hooks (ADR 0040); a host without one runs without them. */
  readonly agentHooks?: AgentHooks.Installers | undefined
  /**
   * The sandbox every agent, command step and probe runs in (ADR 0043): given by the loop, whose
   * runner holds the verifier's key; none for a plain run.
   */
  readonly sandbox?: ChildSandbox.Sandbox | null | undefined
  /**
   * A look at git's settings at each step's end (the loop's, ADR 0045): what the task blocks on
   * when a child changed them, or null. The step's end then blocks the task, in the same write.
   */
  readonly gitSettings?: (() => Event.Blocker | null) | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export type RunError =
  | ControllerError.TaskNotFound
  | ControllerError.InvalidRequest
  | Task.Refused
  | Task.Held
  | LeaseManager.AcquireError
  | LeaseManager.TakeoverError
  | LeaseError.LeaseLost
  | Owner.InvalidOwner
  | EventStore.AppendError
  | EventStore.InvalidRequest
  | StorageError
  | WorkTree.WorkTreeError
  | Run.Refused
  | ControllerError.WriteConflict

