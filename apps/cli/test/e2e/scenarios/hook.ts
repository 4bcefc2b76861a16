/**
 * `ratchet hook claude-code` and `ratchet hooks install|uninstall claude-code` end to end: the
 * bundled CLI fed Claude Code's documented payloads (packages/host-claude-code/test/fixtures) with
 * the world's repository as their cwd, against a real store.
 *
 * - PreToolUse Edit while INTERVIEWING: denied with the state and the next step.
 * - The same Edit while RUNNING with a manual step awaiting its worker, inside the scope: allowed
 *   (nothing printed, so Claude Code's own permission prompt still applies) and recorded as an
 *   intent of the step's attempt that PostToolUse resolves; outside it: denied. A second session
 *   observes while the first holds the lease; a session's end releases it; a call never ended is
 *   closed by `ratchet step done`, or left to recovery when the session ends (Indeterminate).
 *   The session's agent marking the step done is held to the scope: a build's unnamed write
 *   outside it blocks the task, and the session's lease is released with the block.
 * - Bash `ratchet approve …`: denied, in every state tried.
 * - The issue's bypasses (script -qec, find -exec, python3 -c, base64 | sh, ratchet verify and
 *   rewind, 80 KB of padding before rm -rf of the store or a write outside the scope, and more),
 *   replayed through both hosts while a task is RUNNING: denied, and nothing approved. A payload
 *   cwd of /, of the repository's parent or with NUL does not let a write outside the scope through;
 *   the project is found from the hook's own directory or CLAUDE_PROJECT_DIR.
 * - Stop with an unverified required criterion: blocked once, allowed with stop_hook_active.
 * - A worker's turn of reads only (no hook runs at their end): the stop reads the session's
 *   transcript for the end of a call, and records it before the stop's own turn event.
 * - Malformed payloads: a tool call is blocked (exit 2, no stack trace), another event warns;
 *   nothing is written to the store either way.
 * - Settings: installed next to the user's own hooks, idempotently, and removed leaving them.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { cliRoot, confirmationOf, createTask, type Engine, engineIndependent, events, makeWorld, passphrase, personalAct, removeWorlds, status, toPlanApproved, type World } from "../harness.js"

const packages = path.resolve(import.meta.dirname, "../../../../../packages")
const fixtureDirectory = { "claude-code": path.join(packages, "host-claude-code/test/fixtures"), codex: path.join(packages, "host-codex/test/fixtures") }

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A payload as JSON gives it: any field may be read or replaced. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
type Payload = Record<string, any>

/** A fixture payload with its cwd (and paths) moved into the world's repository. */
const payload = (world: World, file: string, change: (value: Payload) => void = () => {}, host: keyof typeof fixtureDirectory = "claude-code"): string => {
  const text = fs.readFileSync(path.join(fixtureDirectory[host], file), "utf8").replaceAll("/home/dev/project", world.repo)
  const value = JSON.parse(text) as Payload
  change(value)
  return JSON.stringify(value)
}

const hook = (world: World, input: string, host: keyof typeof fixtureDirectory = "claude-code", env: Record<string, string> = {}) =>
  world.run(["hook", host], { input, env })

/**
 * Leases that do not lapse while a test runs: a scenario about what the guard denies must not see
 * the other host's session take a lease over because a loaded machine left 30 s between two calls.
 */
const steadyLease = { RATCHET_LEASE_GRACE_MS: "3600000" } as const

/** A Codex payload. */
const codex = (world: World, file: string, change: (value: Payload) => void = () => {}): string => payload(world, file, change, "codex")

/** A Codex apply_patch that updates `file` (relative to the repository). */
const patchOf = (file: string) => (value: Payload) => {
  value["tool_input"]["command"] = `*** Begin Patch\n*** Update File: ${file}\n@@\n-a\n+b\n*** End Patch\n`
}

/** The reason of a PreToolUse denial printed by either host. */
const denialOf = (stdout: string): string => JSON.parse(stdout).hookSpecificOutput.permissionDecisionReason

/** The plan: one manual step, so the run leaves the task RUNNING with the step awaiting its worker. */
const manualPlan = [
  "steps:",
  "  - id: fix",
  "    title: \"Fix the date test\"",
  "    acRefs: [AC-001]",
  "    manual:",
  "      instructions: \"Freeze the clock in test/date.test.js\"",
  ""
].join("\n")

/** The session id of the Claude Code fixtures. */
const claudeSession = "9b2e4c1a-7f3d-4e8b-a6c5-2d1f0e9b8a47"

const editOf = (file: string) => (value: Payload) => {
  value["tool_input"]["file_path"] = file
}

export const hookScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("ratchet hook claude-code", { timeout: 480_000 }, () => {
    it("guards edits by the task's state and scope, denies approvals, and blocks a stop once", async () => {
      const world = await makeWorld(engine)
      const taskId = await createTask(world, "Make the date test deterministic")
      expect((await status(world, taskId)).state).toBe("INTERVIEWING")

      // INTERVIEWING: an Edit is denied with the state and what comes next
      const inScope = path.join(world.repo, "test", "date.test.js")
      const early = await hook(world, payload(world, "PreToolUse.Edit.json", editOf(inScope)))
      expect(early.code, early.stderr).toBe(0)
      expect(early.stderr).toBe("")
      const denied = JSON.parse(early.stdout)
      expect(denied.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" })
      expect(denied.hookSpecificOutput.permissionDecisionReason).toContain(`Task ${taskId} is INTERVIEWING`)
      expect(denied.hookSpecificOutput.permissionDecisionReason).toContain(`ratchet status ${taskId}`)

      // an approval is denied whatever the state
      const approve = await hook(world, payload(world, "PreToolUse.Bash.ratchet-approve.json"))
      expect(JSON.parse(approve.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: "deny" })
      expect(JSON.parse(approve.stdout).hookSpecificOutput.permissionDecisionReason).toContain("is for a person")

      // the Codex equivalents: an apply_patch is denied with the state, an approval is denied
      const patchEarly = await hook(world, codex(world, "PreToolUse.apply_patch.json", patchOf("test/date.test.js")), "codex")
      expect(patchEarly.code, patchEarly.stderr).toBe(0)
      expect(denialOf(patchEarly.stdout)).toContain(`Task ${taskId} is INTERVIEWING`)
      expect(denialOf((await hook(world, codex(world, "PreToolUse.bash-ratchet-approve.json"), "codex")).stdout)).toContain("is for a person")

      // drive the task to RUNNING with the manual step awaiting its worker (the created task is
      // cancelled so that the new one is the only task in progress)
      await world.ok(["cancel", taskId, "--reason", "replaced by a planned task"])
      const planned = await toPlanApproved(world, "Make the date test deterministic, planned", undefined, manualPlan)
      const started = await world.run(["run", planned])
      expect(started.code, started.stderr).toBe(0)
      expect((await status(world, planned)).state).toBe("RUNNING")
      const before = (await events(world, planned)).length

      // RUNNING, manual step awaiting, in scope: allowed — nothing printed, Claude Code's own prompt
      // applies — and the session, now the step's worker under the lease, records the call as an
      // intent of the step's attempt before it runs; PostToolUse resolves it
      const allowed = await hook(world, payload(world, "PreToolUse.Edit.json", editOf(inScope)))
      expect(allowed.code, allowed.stderr).toBe(0)
      expect(allowed.stdout).toBe("")
      const opened = (await events(world, planned)).slice(before)
      expect(opened.map((record) => record.type)).toEqual(["LeaseAcquired", "IntentRecorded", "IntentDispatched"])
      const intent = opened[1]!
      expect(intent.event).toMatchObject({ stepId: "fix", attempt: 1, description: `Edit: ${inScope}` })
      expect(intent.actor).toEqual({ kind: "agent", id: `claude-code:${claudeSession}` })
      expect(opened[0]!.event.owner).toMatchObject({ host: "claude-code", sessionRef: `claude-code:${claudeSession}` })
      expect(intent.epoch).toBe(opened[0]!.event.epoch)
      const post = await hook(world, payload(world, "PostToolUse.Edit.json", editOf(inScope)))
      expect(post.code, post.stderr).toBe(0)
      expect(post.stdout).toBe("")
      const resolved = (await events(world, planned)).slice(before + 3)
      expect(resolved.map((record) => [record.type, record.event.intentId, record.event.outcome])).toEqual([
        ["IntentResolved", intent.event.intentId, "Succeeded"],
        ["TurnRecorded", undefined, undefined]
      ])
      // the call counts in the worker's turn, in the step's attempt (the kernel's turn region)
      expect(resolved[1]!.event).toMatchObject({ stepId: "fix", attempt: 1, turn: { _tag: "toolUsed" } })
      expect(resolved[1]!.actor).toEqual({ kind: "agent", id: `claude-code:${claudeSession}` })
      // the hook repeated (a retry of the same call) records nothing twice: the intent is resolved
      // and the turn's flag already set
      await hook(world, payload(world, "PostToolUse.Edit.json", editOf(inScope)))
      expect((await events(world, planned)).length).toBe(before + 5)
      // outside the allowed scope (test/**): denied, naming the scope
      const outside = await hook(world, payload(world, "PreToolUse.Edit.json", editOf(path.join(world.repo, "README.md"))))
      expect(JSON.parse(outside.stdout).hookSpecificOutput.permissionDecisionReason).toContain("outside the allowed scope")
      // .ratchet/ is never written by a tool
      const own = await hook(world, payload(world, "PreToolUse.Edit.json", editOf(path.join(world.repo, ".ratchet", "project.json"))))
      expect(JSON.parse(own.stdout).hookSpecificOutput.permissionDecisionReason).toContain("Ratchet's own")
      // approvals are still denied while RUNNING
      expect(JSON.parse((await hook(world, payload(world, "PreToolUse.Bash.ratchet-approve.json"))).stdout).hookSpecificOutput.permissionDecision).toBe("deny")

      // a Codex session while the Claude Code session holds the lease is an observer: its patch is
      // denied, naming the holder; once that session ends (releasing the lease) the patch passes and
      // Codex's session is the worker, its call recorded and resolved the same way
      const observer = await hook(world, codex(world, "PreToolUse.apply_patch.json", patchOf("test/date.test.js")), "codex")
      expect(denialOf(observer.stdout)).toContain(`held by claude-code session claude-code:${claudeSession}`)
      const mark = (await events(world, planned)).length
      expect((await hook(world, payload(world, "SessionEnd.other.json"))).stdout).toBe("")
      expect((await events(world, planned)).slice(mark).map((record) => record.type)).toEqual(["LeaseReleased"])
      expect((await hook(world, codex(world, "PreToolUse.apply_patch.json", patchOf("test/date.test.js")), "codex")).stdout).toBe("")
      expect((await hook(world, codex(world, "PostToolUse.apply_patch.json", patchOf("test/date.test.js")), "codex")).stdout).toBe("")
      const patched = (await events(world, planned)).slice(mark + 1)
      expect(patched.map((record) => record.type)).toEqual(["LeaseAcquired", "IntentRecorded", "IntentDispatched", "IntentResolved"])
      expect(patched[1]!.event.description).toBe("apply_patch: test/date.test.js")
      expect(patched[3]!.event).toMatchObject({ intentId: patched[1]!.event.intentId, outcome: "Succeeded" })
      // Codex: a patch outside the scope is denied; a destructive command, which Claude Code would
      // ask about, is denied (Codex cannot ask) saying why
      expect(denialOf((await hook(world, codex(world, "PreToolUse.apply_patch.json"), "codex")).stdout)).toContain("outside the allowed scope")
      const destructive = await hook(world, codex(world, "PreToolUse.bash-npm-test.json", (value) => {
        value["tool_input"]["command"] = "rm -rf test/fixtures"
      }), "codex")
      expect(JSON.parse(destructive.stdout).hookSpecificOutput.permissionDecision).toBe("deny")
      expect(denialOf(destructive.stdout)).toContain("deletes without asking")
      expect((await hook(world, codex(world, "SessionEnd.other.json"), "codex")).stdout).toBe("")
      const asked = await hook(world, payload(world, "PreToolUse.Bash.npm-test.json", (value) => {
        value["tool_input"]["command"] = "rm -rf test/fixtures"
      }))
      expect(JSON.parse(asked.stdout).hookSpecificOutput.permissionDecision).toBe("ask")
      const codexStop = JSON.parse((await hook(world, codex(world, "Stop.first.json"), "codex")).stdout)
      expect(codexStop).toMatchObject({ decision: "block", reason: expect.stringContaining("AC-001") })
      expect((await hook(world, codex(world, "Stop.continued.json"), "codex")).stdout).toBe("")

      // another task in the workspace that has not started its run: the running one is still the one held to...
      const draft = await createTask(world, "Another task, not started")
      expect((await hook(world, payload(world, "PreToolUse.Edit.json", editOf(inScope)))).stdout).toBe("")
      // ...unless RATCHET_TASK names the other
      const named = await world.run(["hook", "claude-code"], { input: payload(world, "PreToolUse.Edit.json", editOf(inScope)), env: { RATCHET_TASK: draft } })
      expect(JSON.parse(named.stdout).hookSpecificOutput.permissionDecisionReason).toContain(`Task ${draft} is INTERVIEWING`)

      // Stop with AC-001 unverified: blocked once, then allowed when the host says it is continuing
      const stop = await hook(world, payload(world, "Stop.stop_hook_active-false.json"))
      expect(stop.code).toBe(0)
      const blocked = JSON.parse(stop.stdout)
      expect(blocked.decision).toBe("block")
      expect(blocked.reason).toContain("AC-001")
      const again = await hook(world, payload(world, "Stop.stop_hook_active-true.json"))
      expect(again.code).toBe(0)
      expect(again.stdout).toBe("")

      // the hooks wrote only the sessions' leases, their calls' intents and the worker's turn
      const written = new Set((await events(world, planned)).slice(before).map((record) => record.type))
      expect([...written].sort()).toEqual(["IntentDispatched", "IntentRecorded", "IntentResolved", "LeaseAcquired", "LeaseReleased", "TurnRecorded"])

      // the worker's turn: its edit was used, its edit outside the scope rejected; the blocked stop
      // sent it into a new turn, whose stream the allowed stop ended; a new prompt starts the next
      // turn, and a failed command counts as used and failed. Only what changes a flag is recorded:
      // the denials after the first, the observer's calls, the Codex session's patch (the flag
      // already set) and the Codex stops (its session no longer held the lease) are not.
      expect((await hook(world, payload(world, "UserPromptSubmit.basic.json"))).stdout).toBe("")
      expect((await hook(world, payload(world, "PostToolUseFailure.Bash.json"))).code).toBe(0)
      const turns = (await events(world, planned)).slice(before).filter((record) => record.type === "TurnRecorded")
      expect(turns.map((record) => record.event.turn._tag)).toEqual([
        "toolUsed",
        "toolRejected",
        "turnStarted",
        "streamReadCompleted",
        "turnStarted",
        "toolUsed",
        "toolFailed"
      ])
      expect(new Set(turns.map((record) => `${record.actor.id} ${record.event.stepId}#${record.event.attempt}`))).toEqual(new Set([`claude-code:${claudeSession} fix#1`]))

      // a turn of reads only: their ends start no hook (PostToolUse matches the judged tools, ADR
      // 0030), so the stop reads the session's transcript for a call that ended in the turn. The
      // blocked stop records the Grep and Read of the fixture's last turn before the new turn; the
      // next stop, whose transcript's turn has no call yet, only ends the stream; a transcript
      // that cannot be read tells nothing and changes no answer.
      const transcripts = path.join(world.root, "transcripts")
      fs.mkdirSync(transcripts)
      const readOnly = fs.readFileSync(path.join(fixtureDirectory["claude-code"], "transcripts", "read-only-turn.jsonl"), "utf8")
      const lines = readOnly.split("\n")
      const untilPrompt = `${lines.slice(0, lines.findIndex((entry) => entry.includes("Which tests cover it?")) + 1).join("\n")}\n`
      fs.writeFileSync(path.join(transcripts, "reads.jsonl"), readOnly)
      fs.writeFileSync(path.join(transcripts, "prompt.jsonl"), untilPrompt)
      const stopWith = (file: string, continuing: boolean) =>
        payload(world, continuing ? "Stop.stop_hook_active-true.json" : "Stop.stop_hook_active-false.json", (value) => {
          value["transcript_path"] = path.join(transcripts, file)
        })
      const beforeReads = (await events(world, planned)).length
      expect((await hook(world, payload(world, "UserPromptSubmit.basic.json"))).stdout).toBe("")
      const readStop = await hook(world, stopWith("reads.jsonl", false))
      expect(JSON.parse(readStop.stdout)).toMatchObject({ decision: "block", reason: expect.stringContaining("AC-001") })
      expect((await hook(world, stopWith("prompt.jsonl", true))).stdout).toBe("")
      expect((await hook(world, payload(world, "UserPromptSubmit.basic.json"))).stdout).toBe("")
      const unreadable = await hook(world, stopWith("missing.jsonl", true))
      expect(unreadable.code, unreadable.stderr).toBe(0)
      expect(unreadable.stdout).toBe("")
      const readTurns = (await events(world, planned)).slice(beforeReads).filter((record) => record.type === "TurnRecorded")
      expect(readTurns.map((record) => record.event.turn._tag)).toEqual([
        "turnStarted",
        "toolUsed",
        "turnStarted",
        "streamReadCompleted",
        "turnStarted",
        "streamReadCompleted"
      ])

      // a call whose end is never reported (declined at Claude Code's own prompt) stays open until
      // the worker marks the step done: then it is closed, the note says so, and the session's
      // lease is released with it so that the run can go on
      const write = await hook(world, payload(world, "PreToolUse.Write.json", (value) => {
        value["tool_input"]["file_path"] = path.join(world.repo, "test", "clock.js")
      }))
      expect(write.stdout).toBe("")
      const beforeDone = (await events(world, planned)).length
      await world.ok(["step", "done", planned, "fix", "--note", "froze the clock"])
      const done = (await events(world, planned)).slice(beforeDone)
      expect(done.map((record) => record.type)).toEqual(["IntentResolved", "AttemptNoted", "AttemptTransitioned", "AttemptNoted", "LeaseReleased"])
      expect(done[0]!.event.outcome).toBe("Failed")
      expect(done[1]!.event.note).toContain("their end never reported")
      expect(done[2]!.event).toMatchObject({ stepId: "fix", to: "Succeeded" })
    })

    anyEngine("denies the issue's bypasses on both hosts, and finds the project from where the hook runs, not from the payload's cwd", async () => {
      const world = await makeWorld(engine)
      const planned = await toPlanApproved(world, "Make the date test deterministic, planned", undefined, manualPlan)
      expect((await world.run(["run", planned])).code).toBe(0)
      const running = await status(world, planned)
      expect(running.state).toBe("RUNNING")
      const mark = (await events(world, planned)).length
      const padding = `true ${"x ".repeat(40_000)}`
      // Written by hand: the issue's forms (T is the task), and a few more of each kind.
      const forms: ReadonlyArray<readonly [string, string]> = [
        ["script -qec typing the digest", `printf '${running.digests.plan.slice(7, 15)}\\n' | script -qec 'ratchet approve ${planned} plan' /dev/null`],
        ["find -exec", `find . -exec ratchet approve ${planned} plan \\;`],
        ["python3 -c", `python3 -c 'import os; os.system("ratchet approve ${planned} plan")'`],
        ["base64 piped to sh", `echo ${Buffer.from(`ratchet approve ${planned} plan`).toString("base64")} | base64 -d | sh`],
        ["ratchet verify", `ratchet verify ${planned} --ac AC-001`],
        ["ratchet rewind", `ratchet rewind ${planned} --to 3`],
        ["80 KB of padding, then rm -rf of the store", `${padding}; rm -rf ${world.home}`],
        ["80 KB of padding, then a write outside the scope", `${padding}; echo hi > README.md`],
        ["xargs", `echo ${planned} | xargs -I{} ratchet approve {} plan`],
        ["env -S", `env -S 'ratchet approve ${planned} plan'`],
        ["eval of decoded text", `eval "$(echo ${Buffer.from(`ratchet approve ${planned} plan`).toString("base64")} | base64 -d)"`],
        ["a computed program name", `$(printf 'r%sh%s' atc et) approve ${planned} plan`],
        ["node -e", `node -e 'require("child_process").execSync("ratchet approve ${planned} plan")'`],
        ["npx with a global option", `npx ratchet -C ${world.repo} approve ${planned} plan`]
      ]
      for (const host of ["claude-code", "codex"] as const) {
        for (const [name, command] of forms) {
          const input = host === "claude-code"
            ? payload(world, "PreToolUse.Bash.npm-test.json", (value) => {
              value["tool_input"]["command"] = command
            })
            : codex(world, "PreToolUse.bash-npm-test.json", (value) => {
              value["tool_input"]["command"] = command
            })
          const result = await hook(world, input, host, steadyLease)
          expect(result.code, `${host} ${name}: ${result.stderr}`).toBe(0)
          expect(JSON.parse(result.stdout).hookSpecificOutput, `${host} ${name}`).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" })
        }
      }
      // ordinary commands stay allowed inside the scope
      for (const command of ["npm test", "git status", "ls", "grep -r date test", "cat README.md | head", `ratchet status ${planned}`]) {
        const result = await hook(world, payload(world, "PreToolUse.Bash.npm-test.json", (value) => {
          value["tool_input"]["command"] = command
        }), "claude-code", steadyLease)
        expect([result.code, result.stdout], command).toEqual([0, ""])
      }

      // the payload's cwd is not trusted: /, the repository's parent, one with NUL
      const readme = path.join(world.repo, "README.md")
      for (const cwd of ["/", path.dirname(world.repo), `${world.repo}\u0000/test`]) {
        const edit = await hook(world, payload(world, "PreToolUse.Edit.json", (value) => {
          value["cwd"] = cwd
          value["tool_input"]["file_path"] = readme
        }), "claude-code", steadyLease)
        expect(JSON.parse(edit.stdout).hookSpecificOutput, JSON.stringify(cwd)).toMatchObject({ permissionDecision: "deny" })
        const patch = await hook(world, codex(world, "PreToolUse.apply_patch.json", (value) => {
          value["cwd"] = cwd
          patchOf(readme)(value)
        }), "codex", steadyLease)
        expect(JSON.parse(patch.stdout).hookSpecificOutput, JSON.stringify(cwd)).toMatchObject({ permissionDecision: "deny" })
        const shell = await hook(world, payload(world, "PreToolUse.Bash.npm-test.json", (value) => {
          value["cwd"] = cwd
          value["tool_input"]["command"] = `echo hi > ${readme}`
        }), "claude-code", steadyLease)
        expect(JSON.parse(shell.stdout).hookSpecificOutput, JSON.stringify(cwd)).toMatchObject({ permissionDecision: "deny" })
      }
      const outside = denialOf((await hook(world, payload(world, "PreToolUse.Edit.json", (value) => {
        value["cwd"] = "/"
        value["tool_input"]["file_path"] = readme
      }), "claude-code", steadyLease)).stdout)
      expect(outside).toContain(`outside the project ${world.repo}`)

      // the project comes from where the hook runs: CLAUDE_PROJECT_DIR names it even when the hook
      // starts elsewhere; without it, a hook started above the repository finds it from the cwd below
      const elsewhere = (env: Record<string, string>) =>
        world.run(["hook", "claude-code"], {
          cwd: world.root,
          env: { ...steadyLease, ...env },
          input: payload(world, "PreToolUse.Edit.json", (value) => {
            value["tool_input"]["file_path"] = readme
          })
        })
      expect(denialOf((await elsewhere({ CLAUDE_PROJECT_DIR: world.repo })).stdout)).toContain("outside the allowed scope")
      expect(denialOf((await elsewhere({})).stdout)).toContain("outside the allowed scope")
      // a project variable that is not an absolute path blocks the call (fail closed)
      const relative = await elsewhere({ CLAUDE_PROJECT_DIR: "repo" })
      expect(relative.code).toBe(2)
      expect(relative.stderr).toContain("CLAUDE_PROJECT_DIR")

      // nothing was approved, verified or rewound: the task runs on, on the same digests
      const after = await status(world, planned)
      expect([after.state, after.digests]).toEqual(["RUNNING", running.digests])
      // (the session attended the step as its worker: its lease — taken back if it lapsed between
      // calls on a slow machine — and its turn's rejected calls; no intent, approval or verdict)
      const written = new Set((await events(world, planned)).slice(mark).map((record) => record.type))
      expect(written).toContain("TurnRecorded")
      for (const type of written) expect(["LeaseAcquired", "LeaseTakenOver", "TurnRecorded"], type).toContain(type)
    })

    anyEngine("leaves calls their session never ended to recovery: the step is Indeterminate, the task blocks, one decision settles them", async () => {
      const world = await makeWorld(engine)
      const planned = await toPlanApproved(world, "Make the date test deterministic, planned", undefined, manualPlan)
      expect((await world.run(["run", planned])).code).toBe(0)
      const file = path.join(world.repo, "test", "date.test.js")
      expect((await hook(world, payload(world, "PreToolUse.Edit.json", editOf(file)))).stdout).toBe("")
      expect((await hook(world, payload(world, "PreToolUse.Write.json", (value) => {
        value["tool_input"]["file_path"] = path.join(world.repo, "test", "clock.js")
      }))).stdout).toBe("")
      // a shell write that fails ends as a Failed intent (PostToolUseFailure)
      const failing = (value: Payload) => {
        value["tool_input"]["command"] = "echo hi > test/out.txt && npm test"
      }
      expect((await hook(world, payload(world, "PreToolUse.Bash.npm-test.json", (value) => {
        failing(value)
        value["tool_use_id"] = "toolu_01Yb5PqM3vKx9DsN2hTr6GcL"
      }))).stdout).toBe("")
      expect((await hook(world, payload(world, "PostToolUseFailure.Bash.json", failing))).stdout).toBe("")
      const failed = (await events(world, planned)).filter((record) => record.type === "IntentResolved")
      expect(failed.map((record) => record.event.outcome)).toEqual(["Failed"])
      // the session ends before the other two PostToolUse: the lease is released, their intents stay dispatched
      expect((await hook(world, payload(world, "SessionEnd.other.json"))).stdout).toBe("")
      const open = (await events(world, planned)).filter((record) => record.type === "IntentRecorded" && record.event.intentId !== failed[0]!.event.intentId)
        .map((record) => record.event.intentId as string)
      expect(open).toHaveLength(2)
      const blocked = await world.run(["run", planned])
      expect(blocked.code, blocked.stderr).not.toBe(0)
      const task = await status(world, planned)
      expect(task.state).toBe("BLOCKED")
      expect(JSON.stringify(task)).toContain(`--resolve fix succeeded|failed`)
      const log = await events(world, planned)
      expect(log.filter((record) => record.type === "AttemptTransitioned").at(-1)!.event).toMatchObject({ stepId: "fix", to: "Indeterminate" })

      // a person declares on a terminal that the open calls happened: both are resolved, the step
      // is done (the earlier failed call does not undo the settlement), and the run goes on to verification
      const digest = `sha256:${createHash("sha256").update(JSON.stringify({ resolution: { taskId: planned, intentId: open[0], outcome: "succeeded" } })).digest("hex")}`
      const settled = await world.tty(["unblock", planned, "--resolve", "fix", "succeeded", "--json"], `${confirmationOf(digest)}\n${passphrase}\n`)
      expect(settled.code, settled.stdout).toBe(0)
      const resolutions = (await events(world, planned)).filter((record) => record.type === "IntentResolved").slice(1)
      expect(resolutions.map((record) => [record.event.intentId, record.event.outcome]).sort()).toEqual(open.map((id) => [id, "Succeeded"]).sort())
      expect((await world.run(["run", planned])).code).toBe(0)
      expect((await status(world, planned)).state).toBe("VERIFYING")
    })

    anyEngine("holds the session's step to the scope when its agent marks it done: a build's unnamed write outside it BLOCKS, the lease goes with the block, the call's end writes nothing", async () => {
      const world = await makeWorld(engine)
      const planned = await toPlanApproved(world, "Make the date test deterministic, built", undefined, manualPlan)
      expect((await world.run(["run", planned])).code).toBe(0)
      // the session starts: it takes the lease as the step's worker
      expect((await hook(world, payload(world, "SessionStart.startup.json"))).stdout).toBe("")
      expect((await status(world, planned)).lease.status).toBe("held")
      // a build names no path, so the guard lets it through and records no intent; it writes outside the scope
      const build = (value: Payload) => {
        value["tool_input"]["command"] = "npm run build"
      }
      expect((await hook(world, payload(world, "PreToolUse.Bash.npm-test.json", build))).stdout).toBe("")
      fs.mkdirSync(path.join(world.repo, "dist"))
      fs.writeFileSync(path.join(world.repo, "dist", "app.js"), "built\n")
      fs.writeFileSync(path.join(world.repo, "test", "date.test.js"), "// the clock is frozen\n")
      expect((await hook(world, payload(world, "PostToolUse.Bash.json", build))).code).toBe(0)
      // the agent marks the step done through its shell: allowed, not an intent
      const stepDone = (value: Payload) => {
        value["tool_input"]["command"] = `ratchet step done ${planned} fix --note "froze the clock"`
        value["tool_use_id"] = "toolu_01StepDoneXq8Vb3Nm5Kc7Pz2"
      }
      expect((await hook(world, payload(world, "PreToolUse.Bash.npm-test.json", stepDone))).stdout).toBe("")
      const done = await world.run(["step", "done", planned, "fix", "--note", "froze the clock", "--json"], { env: { RATCHET_ACTOR: `agent:claude-code:${claudeSession}` } })
      expect(done.code, done.stderr).toBe(3)
      expect(done.json).toMatchObject({ state: "BLOCKED", blocker: { category: "scope_violation", lastEvidence: ["dist/app.js"] } })
      const log = await events(world, planned)
      const blocked = log.find((record) => record.type === "TaskBlocked")!
      expect(log.filter((record) => record.operationId === blocked.operationId).map((record) => record.type)).toEqual([
        "AttemptTransitioned",
        "AttemptNoted",
        "TaskBlocked",
        "LeaseReleased"
      ])
      expect(blocked.actor).toEqual({ kind: "agent", id: `claude-code:${claudeSession}` })
      expect((await status(world, planned)).lease.status).toBe("free")
      // the end of the `ratchet step done` call: no step awaits, the session holds no lease, nothing is written
      expect((await hook(world, payload(world, "PostToolUse.Bash.json", stepDone))).code).toBe(0)
      expect((await events(world, planned)).length).toBe(log.length)
      // the person goes on as after any scope violation
      fs.rmSync(path.join(world.repo, "dist"), { recursive: true })
      expect((await personalAct(world, ["unblock", planned, "--to", "RUNNING", "--resolution", "removed the build output"])).result.code).toBe(0)
      expect((await world.run(["run", planned])).code).toBe(0)
      expect((await status(world, planned)).state).toBe("VERIFYING")
    })

    anyEngine("fails closed on tool calls and open elsewhere for unreadable payloads, and writes nothing", async () => {
      const world = await makeWorld(engine)
      const inputs: ReadonlyArray<readonly [string, string, number]> = [
        ["empty input", "", 2],
        ["not JSON", "rm -rf /", 2],
        ["truncated", payload(world, "PreToolUse.Edit.json").slice(0, 100), 2],
        ["an Edit without file_path", payload(world, "PreToolUse.Edit.json", (value) => delete value["tool_input"]["file_path"]), 2],
        ["oversized (over 16 MiB)", payload(world, "PreToolUse.Write.json", (value) => {
          value["tool_input"]["content"] = "x".repeat(17 * 1024 * 1024)
        }), 2],
        ["a Stop whose session id is a number", payload(world, "Stop.stop_hook_active-false.json", (value) => {
          value["session_id"] = 7
        }), 0]
      ]
      const fingerprint = await engine.fingerprint(world)
      for (const [name, input, code] of inputs) {
        const result = await hook(world, input)
        expect(result.code, `${name}: ${result.stdout}${result.stderr}`).toBe(code)
        expect(result.stderr + result.stdout, name).not.toMatch(/\n\s+at /)
        if (code === 2) expect(result.stderr, name).toContain("Ratchet blocked this call")
        else expect(JSON.parse(result.stdout).systemMessage, name).toContain("Ratchet (warning)")
      }
      expect(await engine.fingerprint(world)).toBe(fingerprint)
      // two tasks in progress and none named: a write is refused until RATCHET_TASK names one
      const first = await createTask(world, "First task")
      const second = await createTask(world, "Second task")
      const ambiguous = await hook(world, payload(world, "PreToolUse.Edit.json"))
      const reason: string = JSON.parse(ambiguous.stdout).hookSpecificOutput.permissionDecisionReason
      expect(reason).toContain(first)
      expect(reason).toContain(second)
      expect(reason).toContain("RATCHET_TASK")
      // an unknown host is a usage error
      const unknown = await world.run(["hook", "cursor", "--json"], { input: "{}" })
      expect(unknown.code).toBe(2)
      expect(JSON.parse(unknown.stdout).error.field).toBe("host")
      // Codex: an unreadable tool call is blocked (exit 2), another event fails open (exit 1, one line)
      expect((await hook(world, "{", "codex")).code).toBe(2)
      const open = await hook(world, codex(world, "Stop.first.json", (value) => {
        value["session_id"] = []
      }), "codex")
      expect([open.code, open.stdout]).toEqual([1, ""])
      expect(open.stderr).toContain("Ratchet (warning)")
    })
  })

  describe("ratchet hooks install|uninstall claude-code", { timeout: 480_000 }, () => {
    anyEngine("merges our entries next to the user's hooks idempotently and removes only ours", async () => {
      const world = await makeWorld(engine)
      const settingsFile = path.join(world.repo, ".claude", "settings.json")
      fs.mkdirSync(path.dirname(settingsFile))
      const theirs = { model: "claude-sonnet-4-5", hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "./audit.sh" }] }] } }
      fs.writeFileSync(settingsFile, JSON.stringify(theirs))

      const installed = await world.run(["hooks", "install", "claude-code", "--json"])
      expect(installed.code, installed.stderr).toBe(0)
      expect(installed.json).toMatchObject({ ok: true, file: settingsFile, scope: "project", changed: true, entries: 8 })
      const launcher = path.join(cliRoot, "bin", "ratchet-hook")
      const program = `'${process.execPath}' '${path.join(cliRoot, "dist", "ratchet.mjs")}' hook claude-code`
      expect(installed.json.runs).toEqual({ launcher, program })
      const written = JSON.parse(fs.readFileSync(settingsFile, "utf8"))
      expect(written.model).toBe("claude-sonnet-4-5")
      expect(written.hooks.PreToolUse[0]).toEqual(theirs.hooks.PreToolUse[0])
      expect(written.hooks.PreToolUse[1]).toEqual({
        matcher: "^(?:Bash|Edit|Write|MultiEdit|NotebookEdit)$",
        hooks: [{ type: "command", command: expect.stringMatching(new RegExp(`^/bin/sh -c '.*' '${launcher}' claude-code PreToolUse ${escapeRegExp(program)}$`)), timeout: 10 }]
      })
      expect(written.hooks.Stop).toEqual([{ hooks: [{ type: "command", command: expect.stringMatching(new RegExp(`^/bin/sh -c '.*exit 1' '${launcher}' claude-code Stop ${escapeRegExp(program)}$`)), timeout: 10 }] }])
      expect(written.hooks.SubagentStop).toBeUndefined()
      // a call's end starts a hook for the judged tools only; a failure of any tool does (ADR 0030)
      expect(written.hooks.PostToolUse.map((group: Payload) => group.matcher)).toEqual(["^(?:Bash|Edit|Write|MultiEdit|NotebookEdit)$"])
      expect(written.hooks.PostToolUseFailure.map((group: Payload) => group.matcher)).toEqual([undefined])

      const twice = await world.run(["hooks", "install", "claude-code", "--json"])
      expect(twice.json).toMatchObject({ changed: false, entries: 8 })
      expect(JSON.parse(fs.readFileSync(settingsFile, "utf8"))).toEqual(written)

      const removed = await world.run(["hooks", "uninstall", "claude-code", "--json"])
      expect(removed.json).toMatchObject({ changed: true, entries: 0, runs: null })
      expect(JSON.parse(fs.readFileSync(settingsFile, "utf8"))).toEqual(theirs)

      // Codex: .codex/hooks.json, created when missing, removed back to nothing of ours
      const codexFile = path.join(world.repo, ".codex", "hooks.json")
      const codexInstalled = await world.run(["hooks", "install", "codex", "--json"])
      expect(codexInstalled.json).toMatchObject({ ok: true, host: "codex", file: codexFile, changed: true, entries: 7 })
      const codexProgram = `'${process.execPath}' '${path.join(cliRoot, "dist", "ratchet.mjs")}' hook codex`
      expect(JSON.parse(fs.readFileSync(codexFile, "utf8")).hooks.Stop).toEqual([{ hooks: [{ type: "command", command: expect.stringMatching(new RegExp(`^/bin/sh -c '.*exit 1' '${launcher}' codex Stop ${escapeRegExp(codexProgram)}$`)), timeout: 10 }] }])
      expect(JSON.parse(fs.readFileSync(codexFile, "utf8")).hooks.SessionEnd).toEqual([{ hooks: [{ type: "command", command: expect.stringMatching(new RegExp(`^/bin/sh -c '.*exit 1' '${launcher}' codex SessionEnd ${escapeRegExp(codexProgram)}$`)), timeout: 3 }] }])
      expect(JSON.parse(fs.readFileSync(codexFile, "utf8")).hooks.PermissionRequest[0].matcher).toBe("^(?:Bash|apply_patch)$")
      // Codex reports no failure of its own and its transcript is its own: every call's end runs the hook
      expect(JSON.parse(fs.readFileSync(codexFile, "utf8")).hooks.PostToolUse[0].matcher).toBeUndefined()
      expect((await world.run(["hooks", "uninstall", "codex", "--json"])).json).toMatchObject({ changed: true, entries: 0 })
      expect(JSON.parse(fs.readFileSync(codexFile, "utf8"))).toEqual({})
      // a --command that does not run the hook would be unrecognisable later: refused
      const wrong = await world.run(["hooks", "install", "codex", "--command", "echo hi", "--json"])
      expect(wrong.code).toBe(2)
      expect(wrong.json.error.field).toBe("--command")

      // a settings file that is not JSON is refused, named, and left as it was
      fs.writeFileSync(settingsFile, "{ not json")
      const broken = await world.run(["hooks", "install", "claude-code", "--json"])
      expect(broken.code).toBe(2)
      expect(broken.json.error.field).toBe(settingsFile)
      expect(fs.readFileSync(settingsFile, "utf8")).toBe("{ not json")
    })
  })
}
