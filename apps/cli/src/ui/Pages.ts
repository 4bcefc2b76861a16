/**
 * The run page's HTML pages as pure functions of what the controller's read use cases return: the
 * task list, a task (its gate, blockers, actions and a window of its lifecycle history), the
 * verification of its current episode, and the pages for a refusal, a missing route and the
 * token. Every stored string goes through `Html` and is escaped; every suggested action is the CLI
 * command, to copy.
 *
 * @since 0.3.0
 */
import type * as Explain from "@ratchet/controller/Explain"
import type * as TaskReads from "@ratchet/controller/TaskReads"
import type * as TaskView from "@ratchet/controller/TaskView"
import * as VerificationReport from "@ratchet/controller/VerificationReport"
import type * as Verify from "@ratchet/controller/Verify"
import type * as Event from "@ratchet/kernel/Event"
import type * as EventStore from "@ratchet/storage/EventStore"
import { command, href, html, type Html, page } from "./Html.js"

/**
 * How many history rows a task page shows at most; later ones are a link away.
 *
 * @since 0.3.0
 * @category constants
 */
export const historyWindow = 200

const time = (at: number): string => new Date(at).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z")

const badge = (prefix: string, value: string): Html => html`<span class="badge ${prefix}-${value.replace(/[^A-Za-z_]/g, "")}">${value}</span>`

const short = (digest: string | null): string => digest === null ? "—" : digest.length > 23 ? `${digest.slice(0, 23)}…` : digest

const actor = (who: Event.Actor): string => `${who.kind}:${who.id}`

const receipt = (r: Event.Receipt): Html =>
  html`approved by <b>${actor(r.actor)}</b> over <code title="${r.digest}">${short(r.digest)}</code> via ${r.channel}${r.signature === null ? html` <span class="muted">(unsigned: does not count)</span>` : ""}`

const taskLink = (taskId: string): Html => html`<a href="${href(["tasks", taskId])}">${taskId}</a>`

/**
 * The task list: each task with its state, stage and next step.
 *
 * @since 0.3.0
 * @category rendering
 */
export const tasks = (views: ReadonlyArray<TaskView.TaskView>, lsn: number | null): string =>
  page({
    title: "Tasks",
    lsn,
    crumbs: [],
    body: html`<h1>Tasks</h1>
${
      views.length === 0
        ? html`<p>No task in this project yet. Start one with ${command("ratchet task create --goal \"…\"")}</p>`
        : html`<table id="tasks"><thead><tr><th>task</th><th>goal</th><th>state</th><th>stage</th><th>lease</th><th>next</th></tr></thead><tbody>
${
          views.map((view) =>
            html`<tr data-task="${view.taskId}"><td>${taskLink(view.taskId)}</td><td class="goal">${view.goal}</td><td>${badge("s", view.state)}${
              view.planStale ? html` <span class="badge s-BLOCKED">plan stale</span>` : ""
            }</td><td>${view.stage}</td><td>${view.lease.status}</td><td>${view.next}</td></tr>`
          )
        }
</tbody></table>`
    }`
  })

/** One lifecycle fact of the log, as a row: what kind of fact and what it says. */
const fact = (event: Event.Event): { readonly kind: string; readonly text: Html } => {
  switch (event._tag) {
    case "TaskCreated":
      return { kind: "state", text: html`created: ${event.goal}` }
    case "RestatementProposed":
      return { kind: "revision", text: html`restatement proposed <code>${short(event.digest)}</code>: ${event.text}` }
    case "RestatementApproved":
      return { kind: "approval", text: html`restatement ${receipt(event.receipt)}` }
    case "SpecProposed":
      return {
        kind: event.voidedApproval ? "invalidation" : "revision",
        text: html`spec revision ${event.revision} <code title="${event.digest}">${short(event.digest)}</code>${event.voidedApproval ? html` — <b>voided the spec approval</b>` : ""}`
      }
    case "SpecApproved":
      return { kind: "approval", text: html`spec revision ${event.revision} ${receipt(event.receipt)}` }
    case "PlanMarkedStale":
      return { kind: "invalidation", text: html`plan revision ${event.planRevision} <b>marked stale</b>: the spec is now <code>${short(event.specDigest)}</code>` }
    case "PlanProposed":
      return { kind: "revision", text: html`plan revision ${event.revision} <code title="${event.digest}">${short(event.digest)}</code> (${event.plan.steps.length} steps)` }
    case "PlanApproved":
      return { kind: "approval", text: html`plan revision ${event.revision} ${receipt(event.receipt)}` }
    case "RunStarted":
      return { kind: "run", text: html`run ${event.runId} started under lease epoch ${event.leaseEpoch}` }
    case "TaskBlocked":
      return { kind: "state", text: html`<b>BLOCKED</b> from ${event.from}: ${event.blocker.category} — ${event.blocker.requiredAction}` }
    case "TaskUnblocked":
      return { kind: "state", text: html`unblocked to ${event.to}: ${event.resolution}${event.receipt === null ? "" : html` — ${receipt(event.receipt)}`}` }
    case "TaskReopened":
      return { kind: "invalidation", text: html`reopened from ${event.from}: ${event.reason}${event.receipt === undefined ? "" : html` — ${receipt(event.receipt)}`}` }
    case "TaskPaused":
      return { kind: "state", text: html`paused from ${event.from}${event.reason === undefined ? "" : html`: ${event.reason}`}` }
    case "TaskResumed":
      return { kind: "state", text: html`resumed to ${event.to}` }
    case "TaskCancelled":
      return { kind: "state", text: html`cancelled from ${event.from}: ${event.reason}` }
    case "TaskFailed":
      return { kind: "state", text: html`<b>FAILED</b> from ${event.from}: ${event.reason}` }
    case "VerificationStarted":
      return { kind: "run", text: html`verification of run ${event.runId} started, episode frozen at LSN ${event.snapshotLsn}` }
    case "VerificationRecorded":
      return { kind: "run", text: html`verification pass: ${badge("v", event.outcome)} (${event.verdicts.length} verdicts)` }
    case "TaskCompleted":
      return { kind: "state", text: html`<b>COMPLETED</b>: run ${event.runId}, spec <code>${short(event.specDigest)}</code>` }
    case "TaskRewound":
      return { kind: "invalidation", text: html`rewound from branch ${event.parent} at LSN ${event.atLsn}` }
    case "AttemptTransitioned":
      return { kind: "attempt", text: html`${event.stepId} attempt ${event.attempt}: ${event.from} → ${badge("o", event.to)}` }
    case "LeaseTakenOver":
      return { kind: "lease", text: html`lease <b>taken over</b> at epoch ${event.epoch}` }
    default:
      return { kind: "other", text: html`${event._tag}` }
  }
}

const historyRow = (stored: EventStore.StoredEvent): Html => {
  const { kind, text } = fact(stored.event)
  return html`<tr class="h-${kind}"><td>${stored.lsn}</td><td>${time(stored.recordedAt)}</td><td>${kind}</td><td>${text}</td></tr>`
}

const gate = (explained: Explain.Explanation): Html => {
  const held = explained.gate
  return html`<section id="gate"><h2>Gate ${explained.from} → ${explained.to}: ${badge("d", explained.decision)}</h2>
<p>${explained.explanation}</p>
${
    held === null ? "" : html`${
      held.reasons.length === 0 ? "" : html`<h3>Reasons</h3><ul class="reasons">${held.reasons.map((reason) => html`<li><code>${reason.code}</code> ${reason.message}</li>`)}</ul>`
    }${
      held.requiredActions.length === 0
        ? ""
        : html`<h3>Required actions</h3><ul class="required">${
          held.requiredActions.map((action) => html`<li>${action.description}${action.command === undefined ? "" : html` ${command(action.command)}`}</li>`)
        }</ul>`
    }<p class="muted">evaluated ${time(held.evaluatedAt)}, policy ${held.policyVersion}, bound to version ${held.boundTo.taskVersion}</p>`
  }</section>`
}

/**
 * A task: its state, digests and lease, its gate, open blockers and actions, and a window of its
 * history: the events after LSN `after` (at most {@link historyWindow} rows, with a link on).
 *
 * @since 0.3.0
 * @category rendering
 */
export const task = (
  view: TaskView.TaskView,
  explained: Explain.Explanation,
  history: TaskReads.LogPage,
  after: number,
  lsn: number | null
): string => {
  const id = view.taskId
  const blocked = view.state === "BLOCKED" || view.blockers.length > 0
  return page({
    title: view.goal,
    lsn,
    crumbs: [taskLink(id)],
    body: html`<h1 class="goal">${view.goal}</h1>
<p>${id} ${badge("s", view.state)} stage <b>${view.stage}</b> on branch ${view.branch} · version ${view.version} · last LSN ${view.lastLsn} · <a href="${
      href(["tasks", id, "run"])
    }">run timeline</a> · <a href="${href(["tasks", id, "verification"])}">verification</a></p>
${
      blocked
        ? html`<div class="alert blocked" id="blockers"><b>BLOCKED</b><ul>${
          view.blockers.map((b) => html`<li>${b.category} (owner ${b.owner}): ${b.requiredAction}</li>`)
        }</ul></div>`
        : ""
    }
<p>next: ${view.next}</p>
<table class="facts"><tbody>
<tr><th>revisions</th><td>brief ${view.revisions.brief} · spec ${view.revisions.spec ?? "—"} · plan ${view.revisions.plan ?? "—"}${view.planStale ? html` · <b>plan stale</b>` : ""}</td></tr>
<tr><th>spec digest</th><td><code>${view.digests.spec ?? "—"}</code> (approved: <code>${view.digests.specApproved ?? "—"}</code>)</td></tr>
<tr><th>plan digest</th><td><code>${view.digests.plan ?? "—"}</code> (approved: <code>${view.digests.planApproved ?? "—"}</code>)</td></tr>
<tr><th>lease</th><td>${view.lease.status}${view.lease.epoch === null ? "" : html`, epoch ${view.lease.epoch}`}${
      view.lease.holder === null ? "" : html`, held by ${view.lease.holder.host} pid ${view.lease.holder.pid}`
    }${view.lease.takeover === null ? "" : html` — takeover ${view.lease.takeover.allowedNow ? "allowed now" : `after ${time(view.lease.takeover.allowedAfter)}`}: ${command(view.lease.takeover.command)}`}</td></tr>
</tbody></table>
${gate(explained)}
<h2>Actions</h2>
<ul class="actions">${view.actions.map((action) => html`<li>${action.description}: ${command(action.command)}</li>`)}</ul>
<h2>History</h2>
<p class="muted">Events after LSN ${after} on branch ${history.branch}, at most ${historyWindow} a page; the whole log is ${
      command(`ratchet log ${id}`)
    }</p>
<table id="history"><thead><tr><th>LSN</th><th>recorded</th><th>kind</th><th>what</th></tr></thead><tbody>
${history.events.map(historyRow)}
</tbody></table>
<p class="pager">${
      history.more && history.nextAfterLsn !== null ? html`<a rel="next" href="${href(["tasks", id], { after: history.nextAfterLsn })}">later events →</a>` : html`<span class="muted">end of the log</span>`
    }${after > 0 ? html` <a href="${href(["tasks", id])}">from the start</a>` : ""}</p>`
  })
}

const evidenceLine = (ref: string, record: Verify.CriterionEvidence["verdicts"][number]["evidence"][number]["record"]): Html =>
  html`<li><code>${ref}</code>${record === null ? html` <span class="muted">(unreadable)</span>` : html`: ${VerificationReport.describe(record)}`}</li>`

/**
 * The verification of the task's current episode: each criterion, the verdict that counts, every
 * verdict recorded and its evidence.
 *
 * @since 0.3.0
 * @category rendering
 */
export const verification = (view: TaskView.TaskView, shown: Verify.EvidenceView, lsn: number | null): string =>
  page({
    title: `Verification of ${view.goal}`,
    lsn,
    crumbs: [taskLink(view.taskId), html`verification`],
    body: html`<h1>Verification of run ${shown.runId}</h1>
<p>${view.taskId} ${badge("s", shown.state)} · episode frozen at LSN ${shown.snapshotLsn} · spec <code>${short(shown.specDigest)}</code> · workers ${
      shown.workers.map(actor).join(", ") || "none"
    }</p>
<table id="criteria"><thead><tr><th>criterion</th><th>required</th><th>verdict that counts</th><th>outcome</th></tr></thead><tbody>
${
      shown.criteria.map((criterion) =>
        html`<tr data-ac="${criterion.acId}"><td>${criterion.acId}</td><td>${criterion.required ? "yes" : "no"}</td><td>${
          criterion.counted === null ? html`<span class="muted">not verified</span>` : badge("v", criterion.counted.verdict)
        }</td><td>${criterion.outcome}</td></tr>`
      )
    }
</tbody></table>
${
      shown.criteria.map((criterion) =>
        html`<h2>${criterion.acId}</h2>${
          criterion.verdicts.length === 0
            ? html`<p class="muted">No verdict in this episode. ${command(`ratchet verify ${view.taskId}`)}</p>`
            : html`<ul>${
              criterion.verdicts.map(({ evidence, verdict }) =>
                html`<li>${badge("v", verdict.verdict)} by ${actor(verdict.verifier)} at ${time(verdict.at)}${verdict === criterion.counted ? html` <b>(counts)</b>` : ""}<ul>${
                  evidence.map(({ record, ref }) => evidenceLine(ref, record))
                }</ul></li>`
              )
            }</ul>`
        }`
      )
    }
<p>Output bodies: ${command(`ratchet evidence ${view.taskId} --show-output`)}</p>`
  })

/**
 * A refusal or a missing thing, as a page: what and what to do.
 *
 * @since 0.3.0
 * @category rendering
 */
export const problem = (title: string, message: string, fix: string | null): string =>
  page({
    title,
    lsn: null,
    crumbs: [],
    body: html`<h1>${title}</h1><p class="problem">${message}</p>${fix === null ? "" : html`<p>${fix}</p>`}`
  })

/**
 * The page that asks for the token when the server listens beyond this machine.
 *
 * @since 0.3.0
 * @category rendering
 */
export const token = (path: string, wrong: boolean): string =>
  page({
    title: "Token",
    lsn: null,
    crumbs: [],
    body: html`<h1>This page needs its token</h1>
<p>${wrong ? "That token is not this server's. " : ""}<code>ratchet ui</code> printed a token when it started; paste it here.</p>
<form class="token" method="get" action="${path}"><input type="password" name="token" autocomplete="off" required aria-label="token"><button type="submit">open</button></form>`
  })

