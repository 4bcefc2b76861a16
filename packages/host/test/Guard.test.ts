/**
 * The guard policy, from tables written by hand: for every task state, which calls pass and which
 * are denied (with a reason naming the task and a fix); scope, lease, store and temporary paths;
 * approvals denied in every state; destructive commands asked about; stop blocked once.
 */
import type * as Event from "@ratchet/kernel/Event"
import { describe, expect, it } from "@effect/vitest"
import * as Guard from "../src/Guard.js"
import type * as HostEvent from "../src/HostEvent.js"

const task = (state: Event.TaskState, overrides: Partial<Guard.Task> = {}): Guard.Task => ({
  taskId: "t-1234abcd",
  state,
  allowedScope: ["src/**", "test/**"],
  forbiddenScope: ["src/generated/**"],
  leaseHolder: null,
  ...overrides
})

const context = (current: Guard.Task | null): Guard.Context => ({
  root: "/home/dev/project",
  cwd: "/home/dev/project",
  storeDirectory: "/home/dev/.ratchet",
  home: "/home/dev",
  temporary: ["/tmp"],
  task: current,
  ambiguous: []
})

const edit = (file: string): HostEvent.ToolCall => ({ id: "toolu_1", tool: "Edit", action: { _tag: "Write", paths: [file] } })
const bash = (command: string): HostEvent.ToolCall => ({ id: "toolu_2", tool: "Bash", action: { _tag: "Shell", command } })
const read = (file: string): HostEvent.ToolCall => ({ id: "toolu_3", tool: "Read", action: { _tag: "Read", paths: [file] } })

const states: ReadonlyArray<Event.TaskState> = [
  "INITIALIZING",
  "INTERVIEWING",
  "SPEC_READY",
  "SPEC_APPROVED",
  "PREFLIGHT",
  "PLAN_READY",
  "PLAN_APPROVED",
  "RUNNING",
  "VERIFYING",
  "COMPLETED",
  "REOPENED",
  "PAUSED",
  "BLOCKED",
  "FAILED",
  "CANCELLED"
]

describe("Guard.decide: writes by state", () => {
  // Written by hand: the only state in which an in-scope edit is allowed.
  const allowedIn = new Set<Event.TaskState>(["RUNNING"])
  const fixes: Readonly<Record<Event.TaskState, string>> = {
    INITIALIZING: "ratchet status t-1234abcd",
    INTERVIEWING: "ratchet status t-1234abcd",
    SPEC_READY: "ratchet status t-1234abcd",
    SPEC_APPROVED: "ratchet status t-1234abcd",
    PREFLIGHT: "ratchet status t-1234abcd",
    PLAN_READY: "ratchet status t-1234abcd",
    PLAN_APPROVED: "ratchet run t-1234abcd",
    RUNNING: "",
    VERIFYING: "ratchet verify t-1234abcd",
    COMPLETED: "ratchet task create",
    REOPENED: "ratchet status t-1234abcd",
    PAUSED: "ratchet resume t-1234abcd",
    BLOCKED: "ratchet status t-1234abcd",
    FAILED: "ratchet task create",
    CANCELLED: "ratchet task create"
  }
  for (const state of states) {
    it(`an in-scope Edit while ${state} is ${allowedIn.has(state) ? "allowed" : "denied with the state and the next step"}`, () => {
      const decision = Guard.decide(edit("/home/dev/project/src/a.ts"), context(task(state)))
      if (allowedIn.has(state)) {
        expect(decision).toEqual({ _tag: "Allow" })
      } else {
        expect(decision._tag).toBe("Deny")
        if (decision._tag !== "Deny") return
        expect(decision.reason).toContain(`Task t-1234abcd is ${state}`)
        expect(decision.fix).toContain(fixes[state])
      }
    })
    it(`a shell write into the scope while ${state} follows the same rule`, () => {
      expect(Guard.decide(bash("echo x > src/a.ts"), context(task(state)))._tag).toBe(allowedIn.has(state) ? "Allow" : "Deny")
    })
    it(`a read while ${state} is allowed`, () => {
      expect(Guard.decide(read("/home/dev/project/src/a.ts"), context(task(state)))).toEqual({ _tag: "Allow" })
    })
  }
})

describe("Guard.decide: scope, lease, store, temporary files", () => {
  const running = context(task("RUNNING"))
  const cases: ReadonlyArray<readonly [string, HostEvent.ToolCall, Guard.Context, "Allow" | "Deny" | "Ask", string]> = [
    ["an edit in the allowed scope", edit("/home/dev/project/src/a.ts"), running, "Allow", ""],
    ["a relative edit in the allowed scope", edit("test/a.test.ts"), running, "Allow", ""],
    ["an edit outside the allowed scope", edit("/home/dev/project/package.json"), running, "Deny", "outside the allowed scope"],
    ["an edit in the forbidden scope", edit("/home/dev/project/src/generated/x.ts"), running, "Deny", "forbidden scope"],
    ["an edit escaping the workspace by ..", edit("/home/dev/project/src/../../other/x.ts"), running, "Deny", "outside the workspace"],
    ["an edit outside the workspace", edit("/etc/passwd"), running, "Deny", "outside the workspace"],
    ["an edit in a temporary directory", edit("/tmp/scratch.txt"), running, "Allow", ""],
    ["an out-of-scope edit in a workspace that lives in a temporary directory", edit("/tmp/w/README.md"), { ...running, root: "/tmp/w", cwd: "/tmp/w" }, "Deny", "outside the allowed scope"],
    ["an edit of .ratchet/", edit("/home/dev/project/.ratchet/tasks/x/spec.md"), running, "Deny", "Ratchet's own"],
    ["an edit of the runtime store", edit("/home/dev/.ratchet/ratchet.db"), running, "Deny", "Ratchet's own"],
    ["an edit of the store with no task", edit("/home/dev/.ratchet/ratchet.db"), context(null), "Deny", "Ratchet's own"],
    ["an edit with no task in progress", edit("/home/dev/project/anything.ts"), context(null), "Allow", ""],
    ["an edit with several tasks in progress and none named", edit("src/a.ts"), { ...context(null), ambiguous: ["t-1 RUNNING", "t-2 VERIFYING"] }, "Deny", "RATCHET_TASK"],
    ["a scratch file with several tasks in progress", edit("/tmp/x"), { ...context(null), ambiguous: ["t-1 RUNNING", "t-2 VERIFYING"] }, "Allow", ""],
    ["an edit while another owner holds the lease", edit("src/a.ts"), context(task("RUNNING", { leaseHolder: "runner 4242 on ci-1" })), "Deny", "held by runner 4242 on ci-1"],
    ["an edit with no allowed scope given", edit("package.json"), context(task("RUNNING", { allowedScope: [] })), "Allow", ""],
    ["rm -rf of the store", bash("rm -rf ~/.ratchet"), running, "Deny", "Ratchet's own"],
    ["rm -rf of the workspace root", bash("rm -rf ."), running, "Deny", "outside the allowed scope"],
    ["cp into the workspace root with no task", bash("cp /tmp/patch.diff ."), context(null), "Allow", ""],
    ["a redirect through $RATCHET_HOME", bash("echo x > $RATCHET_HOME/ratchet.db"), running, "Deny", "Ratchet's own"],
    ["a redirect through ${HOME}/.ratchet", bash("echo x > \"${HOME}/.ratchet/ratchet.db\""), context(null), "Deny", "Ratchet's own"],
    ["a write under cd .ratchet", bash("cd .ratchet && echo x > state.json"), context(null), "Deny", "Ratchet's own"],
    ["a write through an unknown variable that names ratchet", bash("echo x > $MY_RATCHET_DIR/x"), context(null), "Deny", "Ratchet's own"],
    ["a write through an unknown variable while RUNNING", bash("echo x > $OUT/x"), running, "Allow", ""],
    ["a write through an unknown variable while INTERVIEWING", bash("echo x > $OUT/x"), context(task("INTERVIEWING")), "Deny", "INTERVIEWING"],
    ["sqlite3 behind sudo", bash("sudo sqlite3 ~/.ratchet/ratchet.db 'DELETE FROM ratchet_events'"), context(null), "Deny", "database shell"],
    ["cd /tmp then a scratch file", bash("cd /tmp && touch scratch.txt"), context(task("INTERVIEWING")), "Allow", ""],
    ["a redirect into .ratchet/", bash("echo x > .ratchet/project.json"), running, "Deny", "Ratchet's own"],
    ["sqlite3 on the store", bash("sqlite3 ~/.ratchet/ratchet.db 'DELETE FROM ratchet_events'"), running, "Deny", "database shell"],
    ["a shell write outside the scope", bash("touch package.json"), running, "Deny", "outside the allowed scope"],
    ["a shell write into /tmp while INTERVIEWING", bash("echo x > /tmp/notes.txt"), context(task("INTERVIEWING")), "Allow", ""],
    ["an unknown write while INTERVIEWING", bash("git reset --hard"), context(task("INTERVIEWING")), "Deny", "INTERVIEWING"],
    ["a destructive command while RUNNING", bash("rm -rf src/old"), running, "Ask", "deletes without asking"],
    ["git push --force with no task", bash("git push --force"), context(null), "Ask", "rewrites or deletes history"],
    ["a test run", bash("npm test"), context(task("INTERVIEWING")), "Allow", ""],
    ["ratchet status", bash("ratchet status t-1234abcd"), context(task("INTERVIEWING")), "Allow", ""],
    ["an MCP tool", { id: null, tool: "mcp__github__create_issue", action: { _tag: "Other" } }, context(task("INTERVIEWING")), "Allow", ""]
  ]
  for (const [name, call, given, expected, mentions] of cases) {
    it(`${name}: ${expected}`, () => {
      const decision = Guard.decide(call, given)
      expect(decision._tag).toBe(expected)
      if (decision._tag !== "Allow") expect(Guard.explain(decision)).toContain(mentions)
    })
  }
})

describe("Guard.decide: approvals", () => {
  for (const state of states) {
    it(`ratchet approve is denied while ${state}`, () => {
      const decision = Guard.decide(bash("ratchet approve t-1234abcd spec"), context(task(state)))
      expect(decision._tag).toBe("Deny")
      if (decision._tag === "Deny") {
        expect(decision.reason).toContain("an agent may not approve")
        expect(decision.fix).toContain("interactive terminal")
      }
    })
  }
  it("is denied with no task as well, and for reopen and unblock --resolve", () => {
    for (const command of ["ratchet approve t-1 plan", "ratchet reopen t-1 --reason x", "ratchet unblock t-1 --resolve succeeded"]) {
      expect(Guard.decide(bash(command), context(null))._tag).toBe("Deny")
    }
  })
})

describe("Guard.stop", () => {
  const cases: ReadonlyArray<readonly [string, Guard.StopContext | null, boolean, "Allow" | "Deny"]> = [
    ["RUNNING with an unverified criterion", { taskId: "t-1", state: "RUNNING", unverified: ["AC-001"] }, false, "Deny"],
    ["VERIFYING with an unverified criterion", { taskId: "t-1", state: "VERIFYING", unverified: ["AC-001", "AC-002"] }, false, "Deny"],
    ["the same stop after a block (stop_hook_active)", { taskId: "t-1", state: "VERIFYING", unverified: ["AC-001"] }, true, "Allow"],
    ["VERIFYING with every criterion verified", { taskId: "t-1", state: "VERIFYING", unverified: [] }, false, "Allow"],
    ["INTERVIEWING (nothing to verify yet)", { taskId: "t-1", state: "INTERVIEWING", unverified: ["AC-001"] }, false, "Allow"],
    ["COMPLETED", { taskId: "t-1", state: "COMPLETED", unverified: [] }, false, "Allow"],
    ["BLOCKED", { taskId: "t-1", state: "BLOCKED", unverified: ["AC-001"] }, false, "Allow"],
    ["no task", null, false, "Allow"]
  ]
  for (const [name, given, continuing, expected] of cases) {
    it(`${name}: ${expected}`, () => {
      const decision = Guard.stop(given, continuing)
      expect(decision._tag).toBe(expected)
      if (decision._tag === "Deny") {
        expect(decision.reason).toContain("AC-001")
        expect(decision.fix).toContain("ratchet verify t-1")
      }
    })
  }
})
