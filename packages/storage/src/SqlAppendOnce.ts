/**
 * The append as one statement, decided against what an engine remembers of the branch.
 *
 * PostgreSQL runs an append in one round trip (ADR 0021): the client decides and folds the append
 * against the {@link BranchState} its last append through it left, and sends the result as one plan
 * to the `ratchet_append` function (migration 4), which lands it under the LSN counter row's lock
 * only if the operation id is new, the branch is at the expected version, the lease row is the one
 * fenced against and the rows taken for absent are absent. Otherwise nothing is written and the
 * engine runs the full transaction (`SqlStore`), whose refusal, replay or fold is the reference.
 * Every decision is `SqlAppend`'s.
 *
 * @since 0.1.0
 */
import type * as EventStore from "./EventStore.js"
import * as Either from "effect/Either"
import * as ReadModel from "./ReadModel.js"
import { changedRows, decide, type Prepared, touched } from "./SqlAppend.js"

/**
 * What an engine remembers of a branch after an append through it: the state its next append
 * may be decided against without reading it first (PostgreSQL's one-statement append, ADR 0021).
 * Only a guess: the engine's statement checks the version, the lease and the absent rows before
 * it writes, and answers "unknown" when they moved.
 *
 * @since 0.1.0
 * @category models
 */
export interface BranchState {
  readonly projectId: string
  readonly streamId: string
  readonly branch: string
  readonly version: number
  readonly summary: ReadModel.TaskSummary | null
  readonly lease: ReadModel.LeaseRow | null
  /**
   * Attempt and intent rows as stored at `version` (the last append's, and those of the appends
   * before it through the one statement, up to a bound); a row not here is unknown.
   */
  readonly attempts: ReadonlyMap<string, ReadModel.AttemptRow>
  readonly intents: ReadonlyMap<string, ReadModel.IntentRow>
}

/**
 * The branch after an append that loaded `before` and folded it into `after`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const branchStateOf = (request: Prepared, version: number, after: ReadModel.Snapshot): BranchState => ({
  projectId: request.projectId,
  streamId: request.streamId,
  branch: request.branch,
  version,
  summary: after.summary,
  lease: after.lease,
  attempts: after.attempts,
  intents: after.intents
})

/**
 * An append decided and folded against a remembered {@link BranchState}, for one statement to
 * land: `plan` is its JSON (positions relative to the batch's first LSN), `landed` the result and
 * the branch's new state once the statement answered the first LSN it took.
 *
 * @since 0.1.0
 * @category models
 */
export interface OneCall {
  readonly plan: string
  readonly landed: (firstLsn: number) => { readonly result: EventStore.AppendResult; readonly state: BranchState }
}

const leaseTags = new Set(["LeaseAcquired", "LeaseTakenOver", "LeaseReleased"])

/** Rows remembered per branch and kind; one forgotten is only taken for absent, and checked. */
const rowsPerBranch = 256

const remember = <A>(rows: Map<string, A>, key: string, row: A): void => {
  rows.delete(key)
  rows.set(key, row)
  if (rows.size > rowsPerBranch) {
    const oldest = rows.keys().next()
    if (oldest.done !== true) rows.delete(oldest.value)
  }
}

const lastLsnKey = `"lastLsn":`

/**
 * The one-statement form of `request` against `state`, or `undefined` when it must take the full
 * transaction: another branch or version than remembered, a lease event (its rows depend on the
 * store's clock), or a refusal (the full transaction names it against the stored state).
 *
 * @since 0.1.0
 * @category constructors
 */
export const oneCall = (request: Prepared, state: BranchState | undefined): OneCall | undefined => {
  if (
    state === undefined || state.version !== request.expectedVersion || state.projectId !== request.projectId ||
    state.streamId !== request.streamId || state.branch !== request.branch ||
    request.events.some((event) => leaseTags.has(event._tag))
  ) return undefined
  const count = request.events.length
  // Decided with the batch's LSNs at -count … -1: an LSN the fold writes is then negative exactly
  // when this batch set it (a row may keep a stored one, as an attempt's turn event does), and
  // `lsn + count` is its offset from the first LSN the statement will take.
  const decided = decide(request, { streamProject: state.projectId, branchVersion: state.version, lease: state.lease }, 0, -1)
  if (Either.isLeft(decided)) return undefined
  const names = touched(request.events)
  const attempts = new Map<string, ReadModel.AttemptRow>()
  const absentAttempts: Array<{ readonly run_id: string; readonly step_id: string; readonly attempt: number }> = []
  for (const key of names.attempts) {
    const id = ReadModel.attemptKey(key.runId, key.stepId, key.attempt)
    const row = state.attempts.get(id)
    if (row === undefined) absentAttempts.push({ run_id: key.runId, step_id: key.stepId, attempt: key.attempt })
    else attempts.set(id, row)
  }
  const intents = new Map<string, ReadModel.IntentRow>()
  const absentIntents: Array<string> = []
  for (const intentId of names.intentIds) {
    const row = state.intents.get(intentId)
    if (row === undefined) absentIntents.push(intentId)
    else intents.set(intentId, row)
  }
  const before: ReadModel.Snapshot = { summary: state.summary, attempts, intents, lease: state.lease, checkpoints: [] }
  const after = ReadModel.fold(decided.right.stored, before)
  const changes = changedRows(before, after, true)
  if (changes.lease !== null) return undefined
  /** A row's LSN column as the statement takes it: an offset when this batch set it, else as stored. */
  const position = (lsn: unknown) =>
    Number(lsn) < 0 ? { updated_lsn: null, at: Number(lsn) + count } : { updated_lsn: lsn, at: null }
  let summary: Record<string, string | number> | null = null
  if (changes.summary !== null && after.summary !== null) {
    const text = String(changes.summary["summary"])
    const at = after.summary.lastLsn
    const index = text.indexOf(lastLsnKey)
    const rest = index < 0 ? "" : text.slice(index + lastLsnKey.length)
    // The negative LSN the fold wrote must stand whole (followed by the next key), or the split is not the summary's own.
    if (at >= 0 || !rest.startsWith(`${at},`)) return undefined
    summary = {
      version: after.summary.version,
      state: after.summary.task.state,
      at: at + count,
      head: text.slice(0, index + lastLsnKey.length),
      tail: rest.slice(String(at).length)
    }
  }
  const plan = JSON.stringify({
    stream: request.streamId,
    branch: request.branch,
    project: request.projectId,
    operation: request.operationId,
    digest: request.digest,
    expected: request.expectedVersion,
    epoch: request.epoch,
    events: request.events.map((event, index) => ({
      type: event._tag,
      typeVersion: event.version,
      payload: request.payloads[index] ?? ""
    })),
    lease: state.lease === null ? null : { epoch: state.lease.epoch, held: state.lease.held ? 1 : 0 },
    absentIntents,
    absentAttempts,
    summary,
    attempts: changes.attempts.map((row) => ({ ...row, ...position(row["updated_lsn"]) })),
    intents: changes.intents.map((row) => ({ ...row, ...position(row["updated_lsn"]) })),
    checkpoints: changes.checkpoints.map((row) => ({ ...row, at: Number(row["lsn"]) + count }))
  })
  const landed = (firstLsn: number) => {
    // The rows this append changed carry offsets; shifted by the LSN the statement took.
    // The branch went from the remembered version to this one through this append alone (the
    // statement checked the version), so every row remembered before is still the stored one.
    const shiftedAttempts = new Map(state.attempts)
    const shift = (lsn: number) => lsn < 0 ? firstLsn + lsn + count : lsn
    for (const [key, row] of after.attempts) {
      if (before.attempts.get(key) !== row) remember(shiftedAttempts, key, { ...row, updatedLsn: shift(row.updatedLsn) })
    }
    const shiftedIntents = new Map(state.intents)
    for (const [key, row] of after.intents) {
      if (before.intents.get(key) !== row) remember(shiftedIntents, key, { ...row, updatedLsn: shift(row.updatedLsn) })
    }
    const version = request.expectedVersion + count
    const shiftedSummary = after.summary === null || after.summary === before.summary
      ? after.summary
      : { ...after.summary, lastLsn: shift(after.summary.lastLsn) }
    return {
      result: {
        streamId: request.streamId,
        branch: request.branch,
        version,
        firstLsn,
        lastLsn: firstLsn + count - 1,
        replayed: false
      },
      state: {
        ...state,
        version,
        summary: shiftedSummary,
        attempts: shiftedAttempts,
        intents: shiftedIntents
      }
    }
  }
  return { plan, landed }
}
