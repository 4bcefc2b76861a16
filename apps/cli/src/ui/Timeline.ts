/**
 * A run as a timeline: each step of the plan a lane, each attempt a bar from when it was scheduled
 * to when it reached a terminal state, coloured by how it ended, each intent a mark at the moment
 * it was dispatched (hollow once resolved, filled while its outcome is unknown), a dashed link from
 * an attempt to its successor, and a BLOCKED mark where the run stopped for a person. Drawn as SVG
 * with positions in attributes (the Content-Security-Policy allows no inline styles), with the same
 * facts as a table below it.
 *
 * The attempts' states come from `RunReport.attemptsOf`, the fold `run.md` is written from; this
 * module adds only the times the stored events carry. At most {@link attemptWindow} attempts are
 * drawn (the latest), so a run of hundreds of retries stays a page.
 *
 * @since 0.3.0
 */
import * as RunReport from "@ratchet/controller/RunReport"
import type * as TaskView from "@ratchet/controller/TaskView"
import type * as Plan from "@ratchet/kernel/Plan"
import type * as EventStore from "@ratchet/storage/EventStore"
import { command, href, html, type Html, page } from "./Html.js"

/**
 * How many attempts the timeline draws at most (the latest).
 *
 * @since 0.3.0
 * @category constants
 */
export const attemptWindow = 200

/**
 * @since 0.3.0
 * @category models
 */
export interface IntentMark {
  readonly intentId: string
  readonly description: string
  readonly recordedAt: number
  readonly dispatchedAt: number | null
  readonly endedAt: number | null
  /** `Succeeded`, `Failed`, `Abandoned`, or null while open. */
  readonly outcome: string | null
}

/**
 * @since 0.3.0
 * @category models
 */
export interface AttemptBar {
  readonly stepId: string
  readonly attempt: number
  readonly state: string
  readonly startedAt: number
  readonly endedAt: number | null
  readonly exit: string | null
  readonly notes: ReadonlyArray<string>
  readonly intents: ReadonlyArray<IntentMark>
  /** How its command ended (a manual step's attempt has none). */
  readonly command: RunReport.AttemptLine["exit"]
  /** The turn events a host recorded for it (an agent's turns), in order. */
  readonly turns: ReadonlyArray<{ readonly at: number; readonly event: string }>
}

/**
 * A step of the plan as its lane shows it: what it runs, or what a person does.
 *
 * @since 0.3.0
 * @category models
 */
export interface Lane {
  readonly stepId: string
  readonly title: string
  readonly command: string | null
  readonly instructions: string | null
}

/**
 * @since 0.3.0
 * @category models
 */
export interface Timeline {
  readonly runId: string
  readonly steps: ReadonlyArray<Lane>
  readonly attempts: ReadonlyArray<AttemptBar>
  /** Attempts left out of the window (the earliest) among those read. */
  readonly omitted: number
  /** Whether the events read begin after the run's start: earlier attempts exist beyond {@link omitted}. */
  readonly partial: boolean
  readonly blockedAt: ReadonlyArray<{ readonly at: number; readonly reason: string }>
  readonly takeovers: ReadonlyArray<{ readonly at: number; readonly epoch: number }>
  /** The traces the run's runners exported under (one per runner that exported), oldest first. */
  readonly traces: ReadonlyArray<{ readonly at: number; readonly epoch: number; readonly traceId: string }>
  readonly from: number
  readonly to: number
}

const terminal = new Set(["Succeeded", "Failed", "Indeterminate", "Cancelled", "TimedOut"])

const ending = (exit: RunReport.AttemptLine["exit"]): string | null =>
  exit === null ? null : exit.timedOut ? `timed out after ${exit.durationMs} ms` : exit.exitCode !== null ? `exit ${exit.exitCode} in ${exit.durationMs} ms` : `killed by ${exit.signal ?? "a signal"}`

/**
 * The timeline of run `runId` from its stored events, for a plan's steps; `now` ends the bars of
 * attempts still open. The events may be the run's last window (`RunReport.recentRun`): `known`
 * are the attempts that may have begun before them, `partial` says that earlier ones exist.
 *
 * @since 0.3.0
 * @category constructors
 */
export const of = (
  runId: string,
  plan: Plan.Plan,
  events: ReadonlyArray<EventStore.StoredEvent>,
  now: number,
  window: {
    readonly known?: ReadonlyArray<{ readonly stepId: string; readonly attempt: number; readonly state: string }>
    readonly partial?: boolean
    /** Every attempt read, not only the latest {@link attemptWindow} (an attempt's page of an early attempt). */
    readonly unwindowed?: boolean
  } = {}
): Timeline => {
  const lines = RunReport.attemptsOf(events, runId, window.known)
  const key = (stepId: string, attempt: number) => `${stepId}#${attempt}`
  const started = new Map<string, number>()
  const ended = new Map<string, number>()
  const intents = new Map<string, { mark: IntentMark; owner: string }>()
  const blockedAt: Array<{ at: number; reason: string }> = []
  const takeovers: Array<{ at: number; epoch: number }> = []
  const traces: Array<{ at: number; epoch: number; traceId: string }> = []
  const turns = new Map<string, Array<{ at: number; event: string }>>()
  const update = (intentId: string, change: Partial<IntentMark>) => {
    const found = intents.get(intentId)
    if (found !== undefined) found.mark = { ...found.mark, ...change }
  }
  for (const { event, recordedAt } of events) {
    switch (event._tag) {
      case "AttemptScheduled":
        if (event.runId === runId) started.set(key(event.stepId, event.attempt), recordedAt)
        break
      case "AttemptTransitioned":
        if (event.runId === runId && terminal.has(event.to)) ended.set(key(event.stepId, event.attempt), recordedAt)
        break
      case "IntentRecorded":
        if (event.runId === runId) {
          intents.set(event.intentId, {
            owner: key(event.stepId, event.attempt),
            mark: { intentId: event.intentId, description: event.description, recordedAt, dispatchedAt: null, endedAt: null, outcome: null }
          })
        }
        break
      case "IntentDispatched":
        update(event.intentId, { dispatchedAt: recordedAt })
        break
      case "IntentResolved":
        update(event.intentId, { endedAt: recordedAt, outcome: event.outcome })
        break
      case "IntentSettled":
        update(event.intentId, { endedAt: recordedAt, outcome: `${event.outcome} (settled by a person)` })
        break
      case "IntentAbandoned":
        update(event.intentId, { endedAt: recordedAt, outcome: "Abandoned" })
        break
      case "TaskBlocked":
        blockedAt.push({ at: recordedAt, reason: `${event.blocker.category}: ${event.blocker.requiredAction}` })
        break
      case "TurnRecorded":
        if (event.runId === runId) {
          const k = key(event.stepId, event.attempt)
          turns.set(k, [...(turns.get(k) ?? []), { at: recordedAt, event: event.turn._tag }])
        }
        break
      case "LeaseTakenOver":
        takeovers.push({ at: recordedAt, epoch: event.epoch })
        break
      case "TraceRecorded":
        if (event.runId === runId) traces.push({ at: recordedAt, epoch: event.epoch, traceId: event.traceId })
        break
      default:
        break
    }
  }
  const from = events[0]?.recordedAt ?? now
  const all: Array<AttemptBar> = lines.map((line) => {
    const k = key(line.stepId, line.attempt)
    return {
      stepId: line.stepId,
      attempt: line.attempt,
      state: line.state,
      startedAt: started.get(k) ?? from,
      endedAt: ended.get(k) ?? null,
      exit: ending(line.exit),
      notes: line.notes,
      intents: [...intents.values()].filter((intent) => intent.owner === k).map((intent) => intent.mark),
      command: line.exit,
      turns: turns.get(k) ?? []
    }
  })
  const attempts = window.unwindowed === true ? all : all.slice(-attemptWindow)
  const steps: Array<Lane> = plan.steps.map((step) => ({
    stepId: step.id,
    title: step.title,
    command: step.run?.command ?? null,
    instructions: step.manual?.instructions ?? null
  }))
  for (const bar of attempts) {
    if (!steps.some((step) => step.stepId === bar.stepId)) steps.push({ stepId: bar.stepId, title: "(not in the current plan)", command: null, instructions: null })
  }
  const last = events.at(-1)?.recordedAt ?? from
  const open = attempts.some((bar) => bar.endedAt === null)
  return { runId, steps, attempts, omitted: all.length - attempts.length, partial: window.partial === true, blockedAt, takeovers, traces, from, to: Math.max(open ? now : last, from + 1) }
}

/**
 * The link to an attempt's page.
 *
 * @since 0.3.0
 * @category constructors
 */
export const attemptHref = (taskId: string, bar: { readonly stepId: string; readonly attempt: number }): string =>
  href(["tasks", taskId, "run", bar.stepId, String(bar.attempt)])

const label = 150
const width = 1000
const laneHeight = 30

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/**
 * The timeline as SVG: lanes, bars, intent marks, successor links, BLOCKED marks.
 *
 * @since 0.3.0
 * @category rendering
 */
export const svg = (taskId: string, timeline: Timeline): Html => {
  const span = timeline.to - timeline.from
  const x = (at: number) => label + Math.round(((at - timeline.from) / span) * (width - label - 10))
  const lane = (stepId: string) => timeline.steps.findIndex((step) => step.stepId === stepId)
  const height = timeline.steps.length * laneHeight + 24
  const bars = timeline.attempts.map((bar) => {
    const y = lane(bar.stepId) * laneHeight + 6
    const x0 = x(bar.startedAt)
    const w = Math.max(4, x(bar.endedAt ?? timeline.to) - x0)
    const tip = `${bar.stepId} attempt ${bar.attempt}: ${bar.state}${bar.exit === null ? "" : `, ${bar.exit}`}`
    return html`<a href="${attemptHref(taskId, bar)}"><rect class="attempt a-${bar.state.replace(/[^A-Za-z]/g, "")}" data-state="${bar.state}" x="${x0}" y="${y}" width="${w}" height="18" rx="2"><title>${tip}</title></rect></a>${
      bar.intents.map((intent) => {
        const at = intent.dispatchedAt ?? intent.recordedAt
        return html`<circle class="intent ${intent.outcome === null ? "intent-open" : "intent-done"}" cx="${x(at)}" cy="${y + 9}" r="5"><title>intent ${intent.intentId}: ${
          intent.outcome ?? (intent.dispatchedAt === null ? "recorded, not dispatched" : "dispatched, outcome unknown")
        } — ${intent.description}</title></circle>`
      })
    }`
  })
  const links = timeline.attempts.flatMap((bar) => {
    const next = timeline.attempts.find((other) => other.stepId === bar.stepId && other.attempt === bar.attempt + 1)
    if (next === undefined) return []
    const y = lane(bar.stepId) * laneHeight + 15
    return [html`<path class="successor" d="M${x(bar.endedAt ?? next.startedAt)} ${y} C${x(next.startedAt)} ${y - 14} ${x(next.startedAt)} ${y - 14} ${x(next.startedAt)} ${y}"><title>successor: attempt ${next.attempt}</title></path>`]
  })
  const blocked = timeline.blockedAt.map((mark) =>
    html`<rect class="blocked" x="${x(mark.at) - 1}" y="0" width="3" height="${height - 20}"><title>BLOCKED: ${mark.reason}</title></rect>`
  )
  const lanes = timeline.steps.map((step, index) =>
    html`<line class="lane" x1="0" x2="${width}" y1="${index * laneHeight + laneHeight}" y2="${index * laneHeight + laneHeight}"></line><text x="4" y="${index * laneHeight + 19}">${
      step.stepId.length > 20 ? `${step.stepId.slice(0, 19)}…` : step.stepId
    }<title>${step.stepId}: ${step.title}</title></text>`
  )
  return html`<svg class="timeline" id="timeline" role="img" aria-label="run timeline" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg">${lanes}${links}${bars}${blocked}<text x="${label}" y="${
    height - 6
  }">0 s</text><text x="${width - 80}" y="${height - 6}">${seconds(span)}</text></svg>`
}

/**
 * The traces line: each runner's trace id, a link into the trace viewer when `traceUrl` (with
 * `{traceId}` in it) says where one is. The ids are W3C ones (the event's schema holds them to 32
 * hexadecimal digits), so the link is the template with nothing but hex put in.
 */
const tracesLine = (timeline: Timeline, traceUrl: string | null): Html | string =>
  timeline.traces.length === 0
    ? ""
    : html`<p id="traces">Trace${timeline.traces.length === 1 ? "" : "s"}: ${
      timeline.traces.map((trace, index) =>
        html`${index === 0 ? "" : ", "}${
          traceUrl === null ? html`<code>${trace.traceId}</code>` : html`<a class="trace" href="${traceUrl.replaceAll("{traceId}", trace.traceId)}" rel="noreferrer"><code>${trace.traceId}</code></a>`
        } (epoch ${trace.epoch})`
      )
    }${traceUrl === null ? html` <span class="muted">— ratchet ui --trace-url makes these links into a trace viewer</span>` : ""}</p>`

/**
 * The run page: the timeline, the Indeterminate attempts with the command that settles them, and
 * every drawn attempt as a row. `traceUrl` is where the run's traces are viewed (see {@link tracesLine}).
 *
 * @since 0.3.0
 * @category rendering
 */
export const render = (view: TaskView.TaskView, timeline: Timeline | null, lsn: number | null, traceUrl: string | null = null): string => {
  const id = view.taskId
  const crumbs = [html`<a href="${href(["tasks", id])}">${id}</a>`, html`run`]
  if (timeline === null) {
    return page({ title: `Run of ${view.goal}`, lsn, crumbs, body: html`<h1>No run yet</h1><p>${view.taskId} is ${view.state}. next: ${view.next}</p>` })
  }
  const indeterminate = timeline.attempts.filter((bar) => bar.state === "Indeterminate")
  const blocked = view.state === "BLOCKED"
  return page({
    title: `Run of ${view.goal}`,
    lsn,
    crumbs,
    body: html`<h1>Run ${timeline.runId}</h1>
<p class="goal">${view.goal}</p>
<p>${id} <span class="badge s-${view.state}">${view.state}</span> · ${timeline.attempts.length} attempt${timeline.attempts.length === 1 ? "" : "s"} drawn${
      timeline.omitted > 0
        ? html` (the latest ${attemptWindow}; ${timeline.omitted}${timeline.partial ? " and more" : ""} earlier ones are in ${command(`ratchet log ${id}`)})`
        : timeline.partial
        ? html` (the latest; earlier ones are in ${command(`ratchet log ${id}`)})`
        : ""
    } · lease ${view.lease.status}${view.lease.epoch === null ? "" : html` epoch ${view.lease.epoch}`}${
      timeline.takeovers.length === 0 ? "" : html` · <b>${timeline.takeovers.length} takeover${timeline.takeovers.length === 1 ? "" : "s"}</b>`
    }</p>
${tracesLine(timeline, traceUrl)}
${
      indeterminate.length === 0
        ? ""
        : html`<div class="alert" id="indeterminate"><b>Indeterminate</b>: a side effect was dispatched and its outcome was never recorded. Check whether it happened, then settle it:<ul>${
          indeterminate.map((bar) => html`<li>${bar.stepId} attempt ${bar.attempt}: ${command(`ratchet unblock ${id} --resolve ${bar.stepId} succeeded`)} or ${command(`ratchet unblock ${id} --resolve ${bar.stepId} failed`)}</li>`)
        }</ul></div>`
    }${
      blocked && indeterminate.length === 0
        ? html`<div class="alert blocked" id="blocked"><b>BLOCKED</b>: ${view.blockers.map((b) => `${b.category}: ${b.requiredAction}`).join("; ")}</div>`
        : ""
    }
${svg(id, timeline)}
<p class="muted">Bars: green succeeded, red failed, orange dashed Indeterminate, blue running, grey pending. Circles: intents (filled while the outcome is unknown). Dashed curves: successor attempts. Magenta lines: BLOCKED.</p>
<h2>Attempts</h2>
<table id="attempts"><thead><tr><th>step</th><th>attempt</th><th>state</th><th>started</th><th>took</th><th>ended</th><th>intents</th><th>notes</th></tr></thead><tbody>
${
      timeline.attempts.map((bar) =>
        html`<tr id="attempt-${bar.stepId}-${bar.attempt}" data-state="${bar.state}"><td>${bar.stepId}</td><td><a href="${attemptHref(id, bar)}">${bar.attempt}</a></td><td><span class="badge o-${bar.state}">${bar.state}</span></td><td>${
          new Date(bar.startedAt).toISOString()
        }</td><td>${bar.endedAt === null ? "open" : seconds(bar.endedAt - bar.startedAt)}</td><td>${bar.exit ?? ""}</td><td>${
          bar.intents.map((intent) => html`<div><code>${intent.intentId}</code> ${intent.outcome ?? (intent.dispatchedAt === null ? "recorded" : html`<b>dispatched, outcome unknown</b>`)}</div>`)
        }</td><td>${bar.notes.join("; ")}</td></tr>`
      )
    }
</tbody></table>`
  })
}
