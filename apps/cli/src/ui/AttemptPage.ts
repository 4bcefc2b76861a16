/**
 * One attempt of a run as a page: the step's command (or a manual step's instructions), how the
 * attempt ended (exit code or signal, time-out, duration), the tail of its output, the paths it
 * changed, its intents with their times, the notes recovery or the worker left, the turn events a
 * host recorded, and the references of its full output in the blob store. Built from the run's
 * {@link Timeline.Timeline}, so it reads nothing the run page did not.
 *
 * @since 0.3.0
 */
import type * as TaskView from "@ratchet/controller/TaskView"
import { command, href, html, type Html, page } from "./Html.js"
import type * as Timeline from "./Timeline.js"

const time = (at: number | null): string => at === null ? "—" : new Date(at).toISOString()

const ended = (bar: Timeline.AttemptBar): Html => {
  const exit = bar.command
  if (exit === null) return html`<span class="muted">no command exit recorded</span>`
  const how = exit.timedOut ? `timed out after ${exit.durationMs} ms` : exit.exitCode !== null ? `exit ${exit.exitCode} in ${exit.durationMs} ms` : `killed by ${exit.signal ?? "a signal"} after ${exit.durationMs} ms`
  return html`${how}`
}

/**
 * The page of attempt `bar` of step `lane` in the run of `view`.
 *
 * @since 0.3.0
 * @category rendering
 */
export const render = (view: TaskView.TaskView, timeline: Timeline.Timeline, lane: Timeline.Lane, bar: Timeline.AttemptBar, lsn: number | null): string => {
  const id = view.taskId
  const exit = bar.command
  return page({
    title: `${bar.stepId} attempt ${bar.attempt}`,
    lsn,
    crumbs: [html`<a href="${href(["tasks", id])}">${id}</a>`, html`<a href="${href(["tasks", id, "run"])}">run</a>`, html`${bar.stepId} #${bar.attempt}`],
    body: html`<h1>${bar.stepId} — attempt ${bar.attempt}</h1>
<p>${lane.title}</p>
<p><span class="badge o-${bar.state}">${bar.state}</span> in run ${timeline.runId} · scheduled ${time(bar.startedAt)} · ended ${time(bar.endedAt)}</p>
${
      bar.state === "Indeterminate"
        ? html`<div class="alert" id="indeterminate">Its side effect was dispatched and its outcome never recorded. Check whether it happened, then settle it: ${
          command(`ratchet unblock ${id} --resolve ${bar.stepId} succeeded`)
        } or ${command(`ratchet unblock ${id} --resolve ${bar.stepId} failed`)}</div>`
        : ""
    }
<table class="facts" id="attempt"><tbody>
<tr><th>${lane.command !== null ? "command" : "manual step"}</th><td><code>${lane.command ?? lane.instructions ?? "—"}</code></td></tr>
<tr><th>ended</th><td>${ended(bar)}</td></tr>
<tr><th>changed paths</th><td>${exit === null || exit.changedPaths.length === 0 ? "none" : html`<ul>${exit.changedPaths.map((path) => html`<li><code>${path}</code></li>`)}</ul>`}</td></tr>
<tr><th>output</th><td>${
      exit === null
        ? "—"
        : html`stdout <code>${exit.stdoutRef ?? "none"}</code> · stderr <code>${exit.stderrRef ?? "none"}</code> <span class="muted">(in the blob store, by reference)</span>`
    }</td></tr>
<tr><th>notes</th><td>${bar.notes.length === 0 ? "none" : html`<ul>${bar.notes.map((note) => html`<li>${note}</li>`)}</ul>`}</td></tr>
</tbody></table>
<h2>Intents</h2>
${
      bar.intents.length === 0
        ? html`<p class="muted">None recorded.</p>`
        : html`<table id="intents"><thead><tr><th>intent</th><th>what</th><th>recorded</th><th>dispatched</th><th>ended</th><th>outcome</th></tr></thead><tbody>${
          bar.intents.map((intent) =>
            html`<tr><td><code>${intent.intentId}</code></td><td>${intent.description}</td><td>${time(intent.recordedAt)}</td><td>${time(intent.dispatchedAt)}</td><td>${time(intent.endedAt)}</td><td>${
              intent.outcome ?? (intent.dispatchedAt === null ? "not dispatched" : html`<b>unknown</b>`)
            }</td></tr>`
          )
        }</tbody></table>`
    }
<h2>Output tail</h2>
${exit === null || exit.outputTail.trim() === "" ? html`<p class="muted">No output recorded.</p>` : html`<pre id="output">${exit.outputTail}</pre>`}
<h2>Turn events</h2>
${
      bar.turns.length === 0
        ? html`<p class="muted">None recorded (a command step has none; a host records an agent's turns).</p>`
        : html`<ol id="turns">${bar.turns.map((turn) => html`<li>${time(turn.at)} <code>${turn.event}</code></li>`)}</ol>`
    }
<p>The whole log: ${command(`ratchet log ${id}`)}</p>`
  })
}
