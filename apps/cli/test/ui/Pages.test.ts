/**
 * The run page's pages with hostile stored strings in every field a person, an agent or a command
 * can write (goals, step ids and titles, actor ids, blocker texts, notes, intent descriptions,
 * command output): each renders as text, the only tags are the page's own, no event-handler
 * attribute appears, and each page still shows what it is for (states, gates, commands to copy,
 * the timeline's bars and marks, the history window's link on).
 */
import type * as Explain from "@ratchet/controller/Explain"
import type * as TaskReads from "@ratchet/controller/TaskReads"
import type * as TaskView from "@ratchet/controller/TaskView"
import type * as Verify from "@ratchet/controller/Verify"
import type * as Plan from "@ratchet/kernel/Plan"
import type * as EventStore from "@ratchet/storage/EventStore"
import { describe, expect, it } from "@effect/vitest"
import * as AttemptPage from "../../src/ui/AttemptPage.js"
import * as Pages from "../../src/ui/Pages.js"
import * as Timeline from "../../src/ui/Timeline.js"

const evil = "<script>window.pwned=1</script><img src=x onerror=alert(1)>\"'\u001b[31m\u202E"
const taskId = "t-3f9a1c2b"

/** Every tag a page may hold: the page's own markup, nothing a stored string could add. */
const ownTags = new Set([
  "!doctype", "html", "head", "meta", "title", "link", "script", "body", "header", "nav", "a", "span", "main", "footer", "h1", "h2", "h3", "p", "b", "code",
  "button", "table", "thead", "tbody", "tr", "th", "td", "ul", "ol", "li", "div", "pre", "section", "svg", "rect", "circle", "path", "line", "text", "form", "input", "i"
])

const assertInert = (page: string) => {
  const tags = [...page.matchAll(/<([!a-zA-Z][\w-]*)/g)].map((m) => (m[1] ?? "").toLowerCase())
  expect(tags.filter((tag) => !ownTags.has(tag))).toEqual([])
  expect(page.match(/<script/g)?.length ?? 0).toBe(1)
  expect(page).toContain("<script src=\"/assets/ui.js\" defer></script>")
  // Attribute names of the real tags (escaped text holds no raw "<"), with quoted values removed.
  const attributes = [...page.matchAll(/<[!a-zA-Z][^>]*>/g)].map((m) => m[0].replace(/"[^"]*"/g, "\"\""))
  expect(attributes.filter((tag) => /\s(on\w+|style|srcdoc|formaction)\s*=/i.test(tag))).toEqual([])
  expect(attributes.filter((tag) => /[<'`]/.test(tag.slice(1)))).toEqual([])
  expect(page).not.toMatch(/href="\s*javascript:/i)
  // eslint-disable-next-line no-control-regex -- the point: no raw control or bidi characters reach the page
  expect(page).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
  expect(page).toContain("&lt;script&gt;window.pwned=1&lt;/script&gt;")
}

const actor = { kind: "user" as const, id: evil }
const receipt = { subject: "spec" as const, digest: "sha256:" + "a".repeat(64), actor, channel: evil, at: 1_000, signature: null }

const view: TaskView.TaskView = {
  taskId,
  projectId: "prj-1",
  slug: "evil",
  goal: evil,
  state: "BLOCKED",
  stage: "impl",
  terminal: false,
  pausedFrom: null,
  version: 12,
  lastLsn: 40,
  branch: "main",
  revisions: { brief: 1, spec: 1, plan: 1 },
  digests: { restatement: null, spec: receipt.digest, specApproved: receipt.digest, plan: null, planApproved: null },
  brief: { questions: 0, openBlocking: [], restatementApproved: true, closed: true },
  planStale: true,
  preflight: null,
  lease: { status: "held", epoch: 2, holder: { workspaceId: evil, host: evil, pid: 42, processStartedAt: 0 }, heartbeatAt: 0, deadline: 0, now: 0, takeover: null },
  blockers: [{ category: "decision_needed", owner: "user", requiredAction: evil }],
  next: evil,
  actions: [{ command: `ratchet unblock ${taskId} --resolve ${evil} succeeded|failed`, description: evil }]
}

const explained: Explain.Explanation = {
  taskId,
  from: "BLOCKED",
  to: "RUNNING",
  decision: "HOLD",
  explanation: evil,
  gate: {
    kind: "unblock",
    decision: "HOLD",
    from: "BLOCKED",
    to: "RUNNING",
    reasons: [{ code: "open_blockers", message: evil }],
    requiredActions: [{ description: evil, command: `ratchet unblock ${taskId} --to RUNNING --resolution "${evil}"` }],
    evidenceRefs: [],
    evaluatedAt: 5_000,
    policyVersion: "p/1",
    boundTo: { taskVersion: 12, specDigest: null, planDigest: null }
  }
}

let lsn = 0
const stored = (event: unknown, recordedAt: number): EventStore.StoredEvent =>
  ({ lsn: ++lsn, projectId: "prj-1", streamId: taskId, branch: "main", version: lsn, epoch: 1, operationId: `op-${lsn}`, recordedAt, event }) as EventStore.StoredEvent

const history: TaskReads.LogPage = {
  taskId,
  branch: "main",
  events: [
    stored({ _tag: "TaskCreated", taskId, projectId: "prj-1", goal: evil, slug: "evil" }, 1_000),
    stored({ _tag: "SpecProposed", revision: 2, digest: receipt.digest, spec: {}, voidedApproval: true }, 2_000),
    stored({ _tag: "SpecApproved", revision: 2, digest: receipt.digest, receipt }, 3_000),
    stored({ _tag: "PlanMarkedStale", planRevision: 1, planDigest: receipt.digest, specDigest: receipt.digest }, 3_500),
    stored({ _tag: "TaskBlocked", from: "RUNNING", blocker: { category: "decision_needed", owner: "user", requiredAction: evil } }, 4_000),
    stored({ _tag: "TaskReopened", from: "RUNNING", reason: evil, receipt }, 4_500)
  ],
  more: true,
  nextAfterLsn: 6
}

describe("Pages.tasks", () => {
  it("lists a hostile goal as text, with the task's state and a link to it", () => {
    const page = Pages.tasks([view], 40)
    assertInert(page)
    expect(page).toContain(`<a href="/tasks/${taskId}">${taskId}</a>`)
    expect(page).toContain("badge s-BLOCKED")
    expect(page).toContain("plan stale")
  })

  it("says how to start when there is no task", () => {
    expect(Pages.tasks([], null)).toContain("ratchet task create --goal")
  })
})

describe("Pages.task", () => {
  const page = Pages.task(view, explained, history, 0, 40)

  it("renders every stored string as text", () => assertInert(page))

  it("shows the gate's decision, reasons and required actions with commands to copy", () => {
    expect(page).toContain("badge d-HOLD")
    expect(page).toContain("<code>open_blockers</code>")
    expect(page).toContain(`data-copy="ratchet unblock ${taskId} --to RUNNING --resolution &quot;&lt;script&gt;`)
  })

  it("shows approvals with who and which digest, and invalidations as such", () => {
    expect(page).toContain("approved by <b>user:&lt;script&gt;")
    expect(page).toContain(`title="${receipt.digest}"`)
    expect(page).toContain("(unsigned: does not count)")
    expect(page).toContain("voided the spec approval")
    expect(page).toContain("marked stale")
    expect(page.match(/class="h-invalidation"/g)?.length).toBe(3)
    expect(page.match(/class="h-approval"/g)?.length).toBe(1)
  })

  it("windows the history and links the next page", () => {
    expect(page).toContain(`href="/tasks/${taskId}?after=6"`)
    expect(Pages.historyWindow).toBe(200)
    expect(page).not.toContain("from the start")
    expect(Pages.task(view, explained, history, 6, 40)).toContain(`<a href="/tasks/${taskId}">from the start</a>`)
  })

  it("marks a blocked task", () => {
    expect(page).toContain("id=\"blockers\"")
  })
})

describe("Pages.verification", () => {
  it("shows each criterion's verdict and evidence as text", () => {
    const verdict = { acId: "AC-001", verdict: "PASS" as const, evidenceRefs: ["sha256:ev"], specDigest: receipt.digest, verifier: { kind: "verifier" as const, id: evil }, at: 9_000, signature: null }
    const shown = {
      taskId,
      state: "VERIFYING",
      branch: "main",
      runId: "run-1",
      snapshotLsn: 30,
      specDigest: receipt.digest,
      workers: [actor],
      criteria: [
        {
          acId: "AC-001",
          outcome: evil,
          required: true,
          counted: verdict,
          verdicts: [{
            verdict,
            evidence: [
              {
                ref: "sha256:ev",
                record: { _tag: "manual", verifier: actor, observer: evil, result: "PASS", note: evil } as never
              },
              { ref: evil, record: null }
            ]
          }]
        },
        { acId: "AC-002", outcome: "second", required: false, counted: null, verdicts: [] }
      ]
    } as unknown as Verify.EvidenceView
    const page = Pages.verification(view, shown, 40)
    assertInert(page)
    expect(page).toContain("badge v-PASS")
    expect(page).toContain("<b>(counts)</b>")
    expect(page).toContain("(unreadable)")
    expect(page).toContain(`ratchet verify ${taskId}`)
  })
})

describe("Pages.problem and Pages.token", () => {
  it("escape what they are given", () => {
    assertInert(Pages.problem("x", evil, evil))
    const token = Pages.token("/tasks/\"><script>window.pwned=1</script>", true)
    expect(token).not.toContain("\"><script>")
    expect(token).toContain("That token is not this server&#39;s")
  })
})

describe("Timeline", () => {
  const plan = { specDigest: receipt.digest, steps: [{ id: evil, title: evil, acRefs: [] }, { id: "build", title: "Build", acRefs: [] }] } as unknown as Plan.Plan
  const runId = "run-1"
  const events = [
    stored({ _tag: "RunStarted", runId, specDigest: receipt.digest, planDigest: receipt.digest, leaseEpoch: 1 }, 10_000),
    stored({ _tag: "AttemptScheduled", runId, stepId: evil, attempt: 1 }, 10_000),
    stored({ _tag: "AttemptTransitioned", runId, stepId: evil, attempt: 1, from: "Pending", to: "Running" }, 10_100),
    stored({
      _tag: "CommandExited",
      intentId: "i-0",
      runId,
      stepId: evil,
      attempt: 1,
      exitCode: 1,
      signal: null,
      durationMs: 1_900,
      timedOut: false,
      stdoutRef: "sha256:out",
      stderrRef: null,
      outputTail: `${evil}\r\n</pre><script>window.pwned=4</script>`,
      changedPaths: [evil]
    }, 11_900),
    stored({ _tag: "AttemptTransitioned", runId, stepId: evil, attempt: 1, from: "Running", to: "Failed" }, 12_000),
    stored({ _tag: "TurnRecorded", runId, stepId: evil, attempt: 1, turn: { _tag: "ToolUsed" } }, 11_950),
    stored({ _tag: "AttemptScheduled", runId, stepId: evil, attempt: 2 }, 12_500),
    stored({ _tag: "IntentRecorded", intentId: "i-1", runId, stepId: evil, attempt: 2, description: evil }, 12_600),
    stored({ _tag: "IntentDispatched", intentId: "i-1" }, 12_700),
    stored({ _tag: "AttemptNoted", runId, stepId: evil, attempt: 2, note: evil }, 14_000),
    stored({ _tag: "AttemptTransitioned", runId, stepId: evil, attempt: 2, from: "Running", to: "Indeterminate" }, 14_000),
    stored({ _tag: "TaskBlocked", from: "RUNNING", blocker: { category: "decision_needed", owner: "user", requiredAction: evil } }, 14_100),
    stored({ _tag: "LeaseTakenOver", epoch: 2 }, 14_200),
    stored({ _tag: "TraceRecorded", runId, epoch: 2, traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" }, 14_250),
    // Another run's trace is not this run's.
    stored({ _tag: "TraceRecorded", runId: "run-0", epoch: 1, traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" }, 14_260)
  ]
  const timeline = Timeline.of(runId, plan, events, 20_000)

  it("folds attempts with their times, intents, BLOCKED marks and takeovers", () => {
    expect(timeline.attempts.map((bar) => [bar.attempt, bar.state, bar.startedAt, bar.endedAt])).toEqual([[1, "Failed", 10_000, 12_000], [2, "Indeterminate", 12_500, 14_000]])
    expect(timeline.attempts[1]?.intents).toEqual([{ intentId: "i-1", description: evil, recordedAt: 12_600, dispatchedAt: 12_700, endedAt: null, outcome: null }])
    expect(timeline.blockedAt.length).toBe(1)
    expect(timeline.takeovers).toEqual([{ at: 14_200, epoch: 2 }])
    expect(timeline.traces).toEqual([{ at: 14_250, epoch: 2, traceId: "4bf92f3577b34da6a3ce929d0e0e4736" }])
    expect(timeline.steps.map((step) => step.stepId)).toEqual([evil, "build"])
  })

  it("renders bars, an open intent, the successor link and the Indeterminate alert, all as text", () => {
    const page = Timeline.render(view, timeline, 40)
    assertInert(page)
    expect(page.match(/<rect class="attempt/g)?.length).toBe(2)
    expect(page).toContain("a-Indeterminate")
    expect(page).toContain("intent intent-open")
    expect(page).toContain("class=\"successor\"")
    expect(page).toContain("id=\"indeterminate\"")
    expect(page).toContain(`ratchet unblock ${taskId} --resolve &lt;script&gt;`)
    expect(page).toContain("1 takeover")
    // Without a viewer's address the trace id is shown to copy, with the flag that links it.
    expect(page).toContain("Trace: <code>4bf92f3577b34da6a3ce929d0e0e4736</code> (epoch 2)")
    expect(page).toContain("--trace-url")
    expect(page).not.toContain("0af7651916cd43dd8448eb211c80319c")
  })

  it("links each trace into the viewer the template names, the id put where {traceId} is", () => {
    const page = Timeline.render(view, timeline, 40, "http://localhost:16686/trace/{traceId}?from=\"ratchet\"&x=<b>")
    assertInert(page)
    expect(page).toContain(
      "<a class=\"trace\" href=\"http://localhost:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736?from=&quot;ratchet&quot;&amp;x=&lt;b&gt;\" rel=\"noreferrer\"><code>4bf92f3577b34da6a3ce929d0e0e4736</code></a>"
    )
    expect(page).not.toContain("--trace-url")
  })

  it("shows no traces line for a run whose runners exported none", () => {
    const page = Timeline.render(view, Timeline.of(runId, plan, events.filter((row) => row.event._tag !== "TraceRecorded"), 20_000), 40)
    expect(page).not.toContain("id=\"traces\"")
  })

  it("draws at most the window's latest attempts and says how many are left out", () => {
    const many = [stored({ _tag: "RunStarted", runId, specDigest: receipt.digest, planDigest: receipt.digest, leaseEpoch: 1 }, 0)]
    for (let attempt = 1; attempt <= Timeline.attemptWindow + 5; attempt++) {
      many.push(stored({ _tag: "AttemptScheduled", runId, stepId: "build", attempt }, attempt * 10))
      many.push(stored({ _tag: "AttemptTransitioned", runId, stepId: "build", attempt, from: "Running", to: "Failed" }, attempt * 10 + 5))
    }
    const windowed = Timeline.of(runId, plan, many, 100_000)
    expect(windowed.attempts.length).toBe(Timeline.attemptWindow)
    expect(windowed.omitted).toBe(5)
    expect(windowed.attempts[0]?.attempt).toBe(6)
    expect(Timeline.render(view, windowed, 1)).toContain("5 earlier ones")
    expect(windowed.partial).toBe(false)
    // Unwindowed (an early attempt's page), every attempt read is there.
    expect(Timeline.of(runId, plan, many, 100_000, { unwindowed: true }).attempts.length).toBe(Timeline.attemptWindow + 5)
  })

  it("draws a run's last window: known attempts that began before it, and says earlier ones exist", () => {
    // The events read begin at a step boundary inside the run: attempt 7 began before it.
    const tail = [
      stored({ _tag: "AttemptTransitioned", runId, stepId: "build", attempt: 7, from: "Running", to: "Failed" }, 5_000),
      stored({ _tag: "AttemptScheduled", runId, stepId: "build", attempt: 8 }, 5_100),
      stored({ _tag: "AttemptTransitioned", runId, stepId: "build", attempt: 8, from: "Pending", to: "Running" }, 5_200)
    ]
    const known = [{ stepId: "build", attempt: 7, state: "Running" }, { stepId: "build", attempt: 8, state: "Running" }]
    const partial = Timeline.of(runId, plan, tail, 6_000, { known, partial: true })
    expect(partial.attempts.map((bar) => [bar.attempt, bar.state, bar.startedAt, bar.endedAt])).toEqual([[7, "Failed", 5_000, 5_000], [8, "Running", 5_100, null]])
    expect(partial.partial).toBe(true)
    expect(partial.omitted).toBe(0)
    const page = Timeline.render(view, partial, 1)
    expect(page).toContain("(the latest; earlier ones are in")
  })

  it("links each bar and row to its attempt's page, with the step id encoded", () => {
    const page = Timeline.render(view, timeline, 40)
    expect(page).toContain(`href="/tasks/${taskId}/run/${encodeURIComponent(evil).replace(/'/g, "&#39;")}/1"`)
  })

  it("renders an attempt's page: command exit, output tail, changed paths, turns, all as text", () => {
    const lane = timeline.steps[0]!
    const failed = AttemptPage.render(view, timeline, lane, timeline.attempts[0]!, 40)
    assertInert(failed)
    expect(failed).toContain("exit 1 in 1900 ms")
    expect(failed).toContain("<pre id=\"output\">&lt;script&gt;window.pwned=1")
    expect(failed).not.toContain("</pre><script>")
    expect(failed).toContain("<code>ToolUsed</code>")
    expect(failed).toContain("stdout <code>sha256:out</code>")
    const unknown = AttemptPage.render(view, timeline, lane, timeline.attempts[1]!, 40)
    assertInert(unknown)
    expect(unknown).toContain("id=\"indeterminate\"")
    expect(unknown).toContain("<b>unknown</b>")
  })

  it("says there is no run yet", () => {
    expect(Timeline.render({ ...view, state: "PLAN_APPROVED" }, null, 1)).toContain("No run yet")
  })
})
