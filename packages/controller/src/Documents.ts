/**
 * The JSON documents of the command API, built once for every transport: what `ratchet <command>
 * --json` prints and what the MCP server's tools and resources answer are the same values, field
 * for field and in the same order, because both are made here.
 *
 * A document is `{ ok, command, exitCode, … }`: `ok` is whether the exit code is 0 (a HOLD
 * answered as a result, such as the gate's, is not ok and still not an error), and a failure
 * carries its error as `{ _tag, message, …fields }`, never a stack or a cause. The bodies are
 * plain values of the controller's results: a transport decodes its input, calls a use case and
 * hands the result to one of these builders, and adds nothing of its own.
 *
 * @since 0.2.0
 */
import * as KernelEvent from "@ratchet/kernel/Event"
import type * as EventStore from "@ratchet/storage/EventStore"
import type * as Completion from "./Completion.js"
import type * as Controller from "./Controller.js"
import * as ControllerError from "./ControllerError.js"
import type * as Explain from "./Explain.js"
import type * as Stats from "./Stats.js"
import type * as TaskReads from "./TaskReads.js"
import type * as TaskView from "./TaskView.js"
import type * as Verify from "./Verify.js"

/**
 * A JSON object.
 *
 * @since 0.2.0
 * @category models
 */
export type Document = Record<string, unknown>

/**
 * The exit code of each class of failure: 1 unexpected, 2 invalid input, 3 HOLD, 4 conflict.
 *
 * @since 0.2.0
 * @category constants
 */
export const exitCodeOf: Readonly<Record<ControllerError.ExitClass, number>> = { unexpected: 1, invalid: 2, hold: 3, conflict: 4 }

/**
 * A finished command's document around its body.
 *
 * @since 0.2.0
 * @category constructors
 */
export const success = (command: string, exitCode: number, body: Document): Document => ({ ok: exitCode === 0, command, exitCode, ...body })

/**
 * The message of a failure: the controller's errors name the field, the reason and the fix.
 *
 * @since 0.2.0
 * @category constructors
 */
export const messageOf = (value: unknown): string =>
  typeof value === "object" && value !== null && "message" in value && typeof value.message === "string" ? value.message : String(value)

/**
 * The error as a JSON value: its tag, its message and its fields (never a stack or a cause, which
 * would show a reader this machine's paths and nothing they can act on).
 *
 * @since 0.2.0
 * @category constructors
 */
export const error = (value: unknown): Document => {
  if (typeof value === "object" && value !== null) {
    const fields: Document = {}
    for (const [key, field] of Object.entries(value)) {
      if (key !== "stack" && key !== "cause") fields[key] = field
    }
    return { ...fields, _tag: (value as { _tag?: unknown })._tag ?? "Error", message: messageOf(value) }
  }
  return { _tag: "Error", message: String(value) }
}

/**
 * A failed command's document. The exit code is the one the error's class maps to, unless the
 * transport knows better (a usage error of its own is invalid input, a defect is unexpected).
 *
 * @since 0.2.0
 * @category constructors
 */
export const failure = (command: string, value: unknown, exitCode: number = exitCodeOf[ControllerError.exitClassOf(value)]): Document => ({
  ok: false,
  command,
  exitCode,
  error: error(value)
})

/**
 * What a write answers with (`task create`, `brief ask`, `spec`, `pause`, …): `extra` first (the
 * question id, the digest), then the task's id and state, what was appended and the task after it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const written = (result: Controller.Written, extra: Document = {}): Document => ({
  ...extra,
  taskId: result.task.taskId,
  state: result.task.state,
  events: result.events,
  firstLsn: result.firstLsn,
  lastLsn: result.lastLsn,
  projection: result.projection,
  warnings: result.warnings,
  task: result.task
})

/**
 * One event of the log as `ratchet log <task> --json` prints it (one NDJSON line), the
 * `task_log` tool pages and the log resource lists.
 *
 * @since 0.2.0
 * @category constructors
 */
export const logRecord = (stored: EventStore.StoredEvent): Document => ({
  lsn: stored.lsn,
  at: new Date(stored.event.at).toISOString(),
  recordedAt: new Date(stored.recordedAt).toISOString(),
  type: stored.event._tag,
  actor: stored.event.actor,
  epoch: stored.epoch,
  version: stored.version,
  branch: stored.branch,
  operationId: stored.operationId,
  event: KernelEvent.encode(stored.event)
})

/**
 * A page of a task's log (the `task_log` tool): the records of {@link logRecord}, whether more
 * follow and the position the next page starts after.
 *
 * @since 0.2.0
 * @category constructors
 */
export const logPage = (page: TaskReads.LogPage): Document => ({
  taskId: page.taskId,
  branch: page.branch,
  events: page.events.map(logRecord),
  more: page.more,
  nextAfterLsn: page.nextAfterLsn
})

/**
 * Where a task's run stands (the `run_check` tool): its status view and its steps' attempts.
 *
 * @since 0.2.0
 * @category constructors
 */
export const runCheck = (check: TaskReads.RunCheck): Document => ({ task: check.task, run: check.run })

/**
 * A task's branches (`ratchet log <task> --branches`), the current one marked.
 *
 * @since 0.2.0
 * @category constructors
 */
export const branches = (taskId: string, listed: { readonly current: string; readonly branches: ReadonlyArray<EventStore.Branch> }) => ({
  taskId,
  current: listed.current,
  branches: listed.branches.map((b) => ({ ...b, current: b.branch === listed.current }))
})

/**
 * The project's tasks (`ratchet task list`, the `task_list` tool).
 *
 * @since 0.2.0
 * @category constructors
 */
export const tasks = (views: ReadonlyArray<TaskView.TaskView>): Document => ({ tasks: views })

/**
 * One task's status view (`ratchet status <task>`, the `task_status` tool and the task resource).
 *
 * @since 0.2.0
 * @category constructors
 */
export const status = (view: TaskView.TaskView): Document => ({ task: view })

/**
 * The exit code of a gate's explanation: 3 for a HOLD, 2 for a transition the lifecycle does not
 * have, 0 otherwise, so `ratchet gate T --to RUNNING && …` only goes on when it may.
 *
 * @since 0.2.0
 * @category constructors
 */
export const gateExitCode = (explained: Explain.Explanation): number =>
  explained.decision === "HOLD" ? 3 : explained.decision === "FORBIDDEN" ? 2 : 0

/**
 * A gate's explanation (`ratchet gate`, the `task_gate` tool).
 *
 * @since 0.2.0
 * @category constructors
 */
export const gate = (explained: Explain.Explanation): Document => ({ ...explained })

/**
 * The evidence of the current episode (`ratchet evidence`, the `task_evidence` tool), with the
 * output bodies when they were asked for.
 *
 * @since 0.2.0
 * @category constructors
 */
export const evidence = (
  shown: Verify.EvidenceView,
  bodies: Readonly<Record<string, Verify.Body>> | null
): Document => ({ ...shown, ...(bodies === null ? {} : { bodies }) })

/**
 * A verification pass (`ratchet verify`): its conclusion, whether its verdicts were signed and
 * recorded, and every criterion's verdict with the judgements behind it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const verification = (result: Verify.Result, signed: boolean): Document => ({
  taskId: result.taskId,
  runId: result.runId,
  branch: result.branch,
  snapshotLsn: result.snapshotLsn,
  outcome: result.conclusion.outcome,
  signed,
  recorded: result.notRecorded === null,
  recordedLsn: result.recordedLsn,
  notRecorded: result.notRecorded,
  state: result.state,
  gate: result.conclusion.gate,
  blocker: result.conclusion.blocker,
  stepsToRevise: result.conclusion.stepsToRevise,
  workers: result.workers,
  criteria: result.results.map((r) => ({
    acId: r.acId,
    required: r.required,
    verdict: r.verdict.verdict,
    evidenceRefs: r.verdict.evidenceRefs,
    verifier: r.verdict.verifier,
    judgements: r.judgements.map((j) => ({ verifier: j.verifier, verdict: j.verdict, reason: j.reason }))
  })),
  warnings: result.warnings
})

/**
 * A completion (`ratchet done`), confirmed COMPLETED by a fresh read.
 *
 * @since 0.2.0
 * @category constructors
 */
export const completion = (result: Completion.Result): Document => ({ ...result, state: "COMPLETED" })

/**
 * A pause or cancel handed to the live runner that holds the lease, and whether it acted on it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const stopRequested = (stopped: { readonly task: TaskView.TaskView; readonly acknowledged: boolean }): Document => ({
  taskId: stopped.task.taskId,
  state: stopped.task.state,
  requested: true,
  acknowledged: stopped.acknowledged,
  task: stopped.task
})

/**
 * A runner started in the background (`ratchet run --detach`, the `run_start` tool): the task it
 * runs when one was named, its pid and its log.
 *
 * @since 0.2.0
 * @category constructors
 */
export const detachedRun = (taskId: string | null, started: { readonly pid: number; readonly log: string }): Document => ({
  detached: true,
  ...(taskId === null ? {} : { taskId }),
  pid: started.pid,
  log: started.log
})

/**
 * A lease as read or taken (`ratchet lease show|acquire|heartbeat`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const lease = (lease: unknown): Document => ({ lease })

/**
 * A lease given back (`ratchet lease release`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const released = (taskId: string, epoch: unknown): Document => ({ released: true, taskId, epoch })

/**
 * A lease taken over from a holder past its grace (`ratchet lease takeover`): the new lease, whom
 * it displaced at which epoch, and the checkpoint verified before it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const takeover = (taken: {
  readonly lease: unknown
  readonly displaced: unknown
  readonly displacedEpoch: unknown
  readonly checkpoint: unknown
}): Document => ({ lease: taken.lease, displaced: taken.displaced, displacedEpoch: taken.displacedEpoch, checkpoint: taken.checkpoint })

/**
 * The store-wide figures (`ratchet stats`).
 *
 * @since 0.2.0
 * @category constructors
 */
export const stats = (figures: Stats.Stats): Document => ({ scope: "store", ...figures })
