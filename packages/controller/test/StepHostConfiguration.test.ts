/**
 * A step the runner ran (a command's or an agent's) that changed the hosts' configuration blocks the
 * task whatever the scope allows (ADR 0043's last amendment): a hand table of changed paths and
 * scopes → what the step's end asks of the task, for both kinds of step; then the violations and
 * the blocker's action.
 */
import { describe, expect, it } from "@effect/vitest"
import type * as Task from "@ratchet/kernel/Task"
import * as Either from "effect/Either"
import type * as AgentHost from "../src/AgentHost.js"
import * as AgentOutcome from "../src/AgentOutcome.js"
import * as RunAgentStep from "../src/RunAgentStep.js"
import type * as RunStep from "../src/RunStep.js"
import * as StepScope from "../src/StepScope.js"

const decoded: AgentHost.Decoded = {
  turns: [],
  sessionId: null,
  model: null,
  usage: null,
  costUsd: null,
  result: { ok: true, subtype: "success", text: "Done.", turns: 1 },
  errors: [],
  lines: 1,
  malformedLines: 0,
  unknownEvents: 0
}

const ended = {
  exitCode: 0,
  signal: null,
  timedOut: false,
  cancelled: false,
  spawnError: null,
  durationMs: 10,
  stdout: new Uint8Array(),
  stderr: new Uint8Array()
}

const commandRan = (changedPaths: ReadonlyArray<string>): RunStep.Ran => ({
  stepId: "impl",
  attempt: 1,
  intentId: "in-1",
  ended,
  changedPaths,
  after: Either.right({ head: "abc", dirty: new Map() }),
  stdoutRef: null,
  stderrRef: null,
  cancelled: null
})

const agentRan = (changedPaths: ReadonlyArray<string>): RunAgentStep.Ran => ({
  ...commandRan(changedPaths),
  agent: { host: "claude-code", decoded, end: AgentOutcome.of({ ...ended, timeoutSeconds: 60 }, decoded), transcriptRef: null }
})

const contextOf = (allowedScope: ReadonlyArray<string>, forbiddenScope: ReadonlyArray<string> = []) => ({
  runId: "run-1",
  taskId: "t-1",
  actor: { kind: "runner", id: "r" } as const,
  at: 5,
  task: { failureFingerprints: [] as ReadonlyArray<string> } as unknown as Task.Task,
  allowedScope,
  forbiddenScope
})

type Blocked = { readonly _tag: "Block"; readonly blocker: { readonly category: string; readonly owner: string; readonly requiredAction: string; readonly lastEvidence?: ReadonlyArray<string> } }

const blockOf = (items: ReadonlyArray<{ readonly _tag: string }>): Blocked | undefined => items.find((item): item is Blocked => item._tag === "Block")

describe("a step that changed the hosts' configuration, whatever the scope", () => {
  // [changed paths, allowed scope, forbidden scope, the paths the block names (null: the step goes on)]
  const cases: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<string>, ReadonlyArray<string>, ReadonlyArray<string> | null]> = [
    // Rejected: the hosts' configuration, even where the scope allows everything.
    [[".claude/settings.json"], ["**"], [], [".claude/settings.json"]],
    [[".claude/settings.json"], [], [], [".claude/settings.json"]],
    [[".mcp.json"], ["**"], [], [".mcp.json"]],
    [["src/a.ts", ".mcp.json"], ["src/**", ".mcp.json"], [], [".mcp.json"]],
    [[".codex/config.toml", ".claude/settings.local.json"], [".codex/**", ".claude/**"], [], [".codex/config.toml", ".claude/settings.local.json"]],
    [["packages/app/.mcp.json"], ["packages/**"], [], ["packages/app/.mcp.json"]],
    [[".CLAUDE/settings.json"], ["**"], [], [".CLAUDE/settings.json"]],
    [[".Mcp.Json"], ["**"], [], [".Mcp.Json"]],
    // Both: the hosts' configuration and a path outside the scope, named together.
    [["docs/x.md", ".mcp.json"], ["src/**", ".mcp.json"], [], ["docs/x.md", ".mcp.json"]],
    // Accepted: no hosts' configuration, and in scope.
    [["src/a.ts"], ["src/**"], [], null],
    [["src/claude.ts", "src/mcp.json", "src/.mcp.json.bak", ".claudex/a"], ["**"], [], null],
    [[".ratchet/tasks/t-1/run.md"], ["src/**"], [], null],
    // Still rejected by the scope alone, as before.
    [["docs/x.md"], ["src/**"], [], ["docs/x.md"]]
  ]
  for (const [changed, allowed, forbidden, named] of cases) {
    for (const [kind, ran] of [["command", commandRan(changed)], ["agent", agentRan(changed)]] as const) {
      it(`${kind} step changed ${changed.join(", ")} with scope [${allowed.join(", ")}]: ${named === null ? "goes on" : "blocks"}`, () => {
        const block = blockOf(RunAgentStep.finish(ran, contextOf(allowed, forbidden)))
        if (named === null) return expect(block).toBeUndefined()
        expect(block?.blocker).toMatchObject({ category: "scope_violation", owner: "user", lastEvidence: named })
        for (const path of named) expect(block?.blocker.requiredAction).toContain(path)
      })
    }
  }
})

describe("a step that added or changed a nested repository or git's own files, whatever the scope", () => {
  // [changed paths, the changed paths that hold a .git on disk, allowed scope, the paths the block names (null: the step goes on)]
  const cases: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<string>, ReadonlyArray<string>, ReadonlyArray<string> | null]> = [
    // Rejected: an untracked nested repository (git lists it as `inner/`), a gitlink, a `.git` part at any depth.
    [["inner/"], [], ["**"], ["inner/"]],
    [["vendor/lib"], ["vendor/lib"], ["**"], ["vendor/lib"]],
    [["src/a.ts", "sub/.git/config"], [], ["**"], ["sub/.git/config"]],
    [["deep/er/.git/info/attributes"], [], ["deep/**"], ["deep/er/.git/info/attributes"]],
    [["x/.GIT/hooks/pre-commit"], [], ["**"], ["x/.GIT/hooks/pre-commit"]],
    [["x/.git"], [], ["**"], ["x/.git"]],
    // Accepted: names that only look like git's.
    [["src/.gitignore", "src/.gitattributes", "docs/git/x.md", "a.git/b"], [], ["**"], null],
    [["src/a.ts"], [], ["src/**"], null]
  ]
  for (const [changed, repositories, allowed, named] of cases) {
    for (const [kind, ran] of [["command", { ...commandRan(changed), repositories }], ["agent", { ...agentRan(changed), repositories }]] as const) {
      it(`${kind} step changed ${changed.join(", ")} (repositories [${repositories.join(", ")}]) with scope [${allowed.join(", ")}]: ${named === null ? "goes on" : "blocks"}`, () => {
        const block = blockOf(RunAgentStep.finish(ran, contextOf(allowed)))
        if (named === null) return expect(block).toBeUndefined()
        expect(block?.blocker).toMatchObject({ category: "scope_violation", owner: "user", lastEvidence: named })
        expect(block?.blocker.requiredAction).toContain("Run no git in this checkout")
        for (const path of named) expect(block?.blocker.requiredAction).toContain(path)
      })
    }
  }
})

describe("StepScope.ranViolations and the blocker's action", () => {
  it("labels the hosts' configuration as such, before the scope's own reasons", () => {
    expect(StepScope.ranViolations([".mcp.json", "src/a.ts", "docs/b.md", ".claude/x"], ["src/**"], [".claude/**"])).toStrictEqual([
      { path: ".mcp.json", reason: "host_configuration", pattern: null },
      { path: "docs/b.md", reason: "outside_allowed", pattern: null },
      { path: ".claude/x", reason: "host_configuration", pattern: null }
    ])
  })

  it("says no scope allows the hosts' configuration and how to undo it, without offering a wider scope", () => {
    const blocker = StepScope.blocker("t-1", "impl", StepScope.ranViolations([".claude/settings.json", ".mcp.json"], ["**"], []))
    expect(blocker.requiredAction).toBe(
      "Step impl changed the hosts' configuration: .claude/settings.json (the hosts' configuration, which no step may change), .mcp.json (the hosts' configuration, which no step may change). The next agent step's host would read the hosts' configuration, and no scope lets a step change it: look at what the step wrote there and remove it (git checkout -- <tracked path>, rm <new file>), or keep it only if you mean every later agent to run with it; then: ratchet unblock t-1 --to RUNNING --resolution \"…\""
    )
    expect(blocker.requiredAction).not.toContain("ratchet reopen")
  })

  it("offers a wider scope for the other paths only", () => {
    const blocker = StepScope.blocker("t-1", "impl", StepScope.ranViolations(["docs/x.md", ".mcp.json"], ["src/**"], []))
    expect(blocker.requiredAction).toContain("Step impl changed the hosts' configuration and paths outside the contract's scope: docs/x.md (outside allowedScope), .mcp.json (the hosts' configuration")
    expect(blocker.requiredAction).toContain("undo the other paths, or widen the scope for them (ratchet reopen t-1 --reason \"…\")")
  })
})
