/**
 * Human output: what a person reads when they did not ask for `--json`. Colour on a terminal unless
 * turned off (`--no-color`, a non-empty `NO_COLOR`, `FORCE_COLOR=0`), in a pipe only when forced
 * (`FORCE_COLOR`): the controller's `Colour` rule, which the runner follows too.
 *
 * @since 0.1.0
 */
import * as Colour from "@ratchet/controller/Colour"
import type * as Explain from "@ratchet/controller/Explain"
import type * as TaskView from "@ratchet/controller/TaskView"
import type * as Gate from "@ratchet/kernel/Gate"
import type * as LeaseManager from "@ratchet/lease/LeaseManager"
import type * as EventStore from "@ratchet/storage/EventStore"

/**
 * Whether to colour text written to `stream`; `noColorFlag` is `--no-color`.
 *
 * @since 0.1.0
 * @category models
 */
export const colourFor = (stream: NodeJS.WriteStream, noColorFlag: boolean): boolean => Colour.forStream(stream, noColorFlag)

/**
 * @since 0.1.0
 * @category models
 */
export interface Style {
  readonly bold: (text: string) => string
  readonly dim: (text: string) => string
  readonly red: (text: string) => string
  readonly green: (text: string) => string
  readonly yellow: (text: string) => string
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const style = (colour: boolean): Style => {
  const wrap = (open: number, close: number) => (text: string) => colour ? `\u001b[${open}m${text}\u001b[${close}m` : text
  return { bold: wrap(1, 22), dim: wrap(2, 22), red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39) }
}

/**
 * Control characters (C0 except newline and tab, DEL, C1) and bidirectional formatting characters,
 * which a terminal would obey rather than show.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const invisible = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/**
 * `text` with every control and bidirectional formatting character written out as `\u{…}`, so
 * what a person reads on a terminal is what is stored: text an agent wrote cannot move the cursor,
 * erase a line or reorder what is shown.
 *
 * @since 0.1.0
 * @category rendering
 */
export const visible = (text: string): string =>
  text.replace(invisible, (character) => `\\u{${(character.codePointAt(0) ?? 0).toString(16)}}`)

const short = (digest: string | null): string => digest === null ? "—" : digest.slice(0, 19)

const ago = (at: number | null, now: number): string => {
  if (at === null) return "—"
  const seconds = Math.round((at - now) / 1000)
  // A heartbeat written this second is "0s ago", never "in 0s".
  return seconds > 0 ? `in ${seconds}s` : `${-seconds}s ago`
}

/**
 * The lease in one line.
 *
 * @since 0.1.0
 * @category rendering
 */
export const lease = (observed: Pick<LeaseManager.Observation, "status" | "epoch" | "holder" | "heartbeatAt" | "deadline" | "now">, s: Style): string => {
  if (observed.status === "free") {
    return observed.epoch === null ? "free (never taken)" : `free (last epoch ${observed.epoch})`
  }
  const holder = observed.holder === null
    ? "?"
    : `${observed.holder.host}${observed.holder.sessionRef === undefined ? "" : ` session ${observed.holder.sessionRef}`} pid ${observed.holder.pid} (workspace ${observed.holder.workspaceId})`
  const line = `epoch ${observed.epoch} held by ${visible(holder)}; last heartbeat ${ago(observed.heartbeatAt, observed.now)}, grace deadline ${
    ago(observed.deadline, observed.now)
  }`
  return observed.status === "expired"
    ? `${s.yellow("EXPIRED")} ${line} — still held: only an explicit takeover moves it`
    : `${s.green("held")} ${line}`
}

/**
 * `ratchet status <task>`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const task = (view: TaskView.TaskView, s: Style): string => {
  const lines = [
    `${s.bold(view.taskId)}  ${view.slug}  ${s.bold(view.state)} (${view.stage})${view.terminal ? " — terminal" : ""}${
      view.pausedFrom === null ? "" : `, paused from ${view.pausedFrom}`
    }`,
    `goal:       ${visible(view.goal)}`,
    `revisions:  brief ${view.revisions.brief} · spec ${view.revisions.spec ?? "—"} · plan ${view.revisions.plan ?? "—"}`,
    `spec:       ${short(view.digests.spec)}${
      view.digests.spec === null ? "" : view.digests.specApproved === view.digests.spec ? " approved" : " not approved"
    }`,
    `plan:       ${short(view.digests.plan)}${
      view.digests.plan === null
        ? ""
        : `${view.digests.planApproved === view.digests.plan ? " approved" : " not approved"}${view.planStale ? s.yellow(" STALE (made for an earlier spec)") : ""}`
    }`,
    `brief:      ${view.brief.questions} question(s)${
      view.brief.openBlocking.length === 0 ? "" : `, open blocking: ${view.brief.openBlocking.join(", ")}`
    }; restatement ${view.digests.restatement === null ? "—" : view.brief.restatementApproved ? "approved" : "not approved"}; ${
      view.brief.closed ? "closed" : "open"
    }`,
    `lease:      ${lease(view.lease, s)}`,
    ...(view.branch === "main" ? [] : [`branch:     ${visible(view.branch)} (rewound; older branches: ratchet log ${view.taskId} --branch <name>)`]),
    `blockers:   ${
      view.blockers.length === 0
        ? "none"
        : visible(view.blockers.map((b) => `${b.category} (owner ${b.owner}): ${b.requiredAction}`).join("; "))
    }`,
    `next:       ${visible(view.next)}`
  ]
  if (view.actions.length > 0) {
    lines.push("allowed:")
    for (const action of view.actions) lines.push(`  ${action.command}  ${s.dim(`# ${action.description}`)}`)
  }
  return lines.join("\n")
}

/**
 * `ratchet task list` / `ratchet status` without a task.
 *
 * @since 0.1.0
 * @category rendering
 */
export const taskList = (views: ReadonlyArray<TaskView.TaskView>, s: Style): string => {
  if (views.length === 0) return `No tasks yet. Create one: ratchet task create --goal "…"`
  const width = Math.max(...views.map((view) => view.state.length))
  return views
    .map((view) => `${s.bold(view.taskId)}  ${view.state.padEnd(width)}  ${view.lease.status === "free" ? "    " : "🔒  "}${visible(view.goal)}`)
    .join("\n")
}

/**
 * A gate record.
 *
 * @since 0.1.0
 * @category rendering
 */
export const gate = (record: Gate.Gate, s: Style): string => {
  const lines = [`${record.decision === "CLEAR" ? s.green("CLEAR") : s.yellow("HOLD")}  ${record.kind}: ${record.from} → ${record.to}`]
  for (const reason of record.reasons) lines.push(`  - ${reason.code}: ${visible(reason.message)}`)
  for (const action of record.requiredActions) {
    lines.push(`  → ${visible(action.description)}${action.command === undefined ? "" : `: ${visible(action.command)}`}`)
  }
  return lines.join("\n")
}

/**
 * `ratchet gate <task>`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const explanation = (explained: Explain.Explanation, s: Style): string =>
  explained.gate === null
    ? `${explained.decision === "ALLOWED" ? s.green("ALLOWED") : s.red("FORBIDDEN")}  ${explained.from} → ${explained.to}\n${visible(explained.explanation)}`
    : gate(explained.gate, s)

/** The most of one text a log line shows. */
const maxShown = 300

/**
 * `text` on one line: control and bidirectional characters written out ({@link visible}), newlines
 * and tabs too, clipped to {@link maxShown} characters.
 */
const oneLine = (text: string): string => {
  const flat = visible(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t")
  return flat.length > maxShown ? `${flat.slice(0, maxShown)}…` : flat
}

const tokens = (n: number): string => String(n)

/**
 * What a log line says of an event beyond its type: an agent attempt's report (host, session,
 * model, turns, tokens, cost, transcript, why it did not succeed), a turn's flag, an attempt's
 * note, a command's exit; nothing for the rest. Text an agent or a host wrote is shown escaped.
 *
 * @since 0.4.0
 * @category rendering
 */
export const logSummary = (event: EventStore.StoredEvent["event"]): string => {
  switch (event._tag) {
    case "AgentReported": {
      const parts = [
        `${event.stepId}#${event.attempt}`,
        event.host,
        `session ${event.sessionId === null ? "—" : oneLine(event.sessionId)}`,
        `model ${event.model === null ? "—" : oneLine(event.model)}`,
        `${event.result?.turns ?? "—"} turns`,
        event.usage === null ? "tokens —" : `tokens ${tokens(event.usage.inputTokens)} in / ${tokens(event.usage.outputTokens)} out`,
        `cost ${event.costUsd === null ? "—" : `$${event.costUsd.toFixed(4)}`}`,
        `transcript ${event.transcriptRef === null ? "—" : oneLine(event.transcriptRef)}`
      ]
      if (event.reason !== null) parts.push(`reason: ${oneLine(event.reason)}`)
      return parts.join("; ")
    }
    case "TurnRecorded":
      return `${event.stepId}#${event.attempt} ${event.turn._tag}`
    case "AttemptNoted":
      return `${event.stepId}#${event.attempt}: ${oneLine(event.note)}`
    case "CommandExited":
      return [
        `${event.stepId}#${event.attempt}`,
        event.timedOut ? "timed out" : event.signal !== null ? `signal ${oneLine(event.signal)}` : `exit ${event.exitCode ?? "—"}`,
        `${event.durationMs} ms`,
        `${event.changedPaths.length} path${event.changedPaths.length === 1 ? "" : "s"} changed`
      ].join("; ")
    default:
      return ""
  }
}

/**
 * One line of `ratchet log <task>`: position, time, type, actor, epoch, and what the event says
 * ({@link logSummary}).
 *
 * @since 0.1.0
 * @category rendering
 */
export const logLine = (stored: EventStore.StoredEvent): string =>
  [
    String(stored.lsn).padStart(6),
    new Date(stored.event.at).toISOString(),
    stored.event._tag.padEnd(20),
    `${stored.event.actor.kind}:${visible(stored.event.actor.id)}`,
    stored.epoch === null ? "" : `epoch ${stored.epoch}`,
    logSummary(stored.event)
  ].filter((part) => part !== "").join("  ").trimEnd()
