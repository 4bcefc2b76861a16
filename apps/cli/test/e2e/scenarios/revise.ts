/**
 * The REVISE loop end to end (ADR 0041): `ratchet run --until-verified` through the bundled CLI
 * and runner, with a stand-in `claude` (`packages/testkit/stand-in/revise.mjs`) that writes the
 * file the acceptance criterion checks, chosen by its attempt number, and an unattended verifier
 * with an approver key of its own (registered with `ratchet approver add`), its passphrase in a
 * file (a variable is refused):
 * - a failing first attempt and a passing successor reach COMPLETED with nobody there: the first
 *   pass concludes REVISE, the successor's envelope names the failure and its fingerprint, the
 *   second pass is APPROVED and the task completes;
 * - the same failure twice ends BLOCKED (`repeated_failure`) with the fingerprint, after exactly
 *   two attempts;
 * - a different failure each time spends the successor budget: six attempts, then BLOCKED
 *   (`retry_budget_spent`) with the last fingerprint;
 * - without a usable verifier key (the passphrase in a variable, the person's own key among them),
 *   `--until-verified` is refused before anything runs, naming the fix;
 * - the verifier's passphrase and its file's path are in no environment or command line an agent
 *   or a check can read (`probe.mjs` reads every process's), nor in the evidence or a prompt; in
 *   the loop's sandbox (ADR 0043) neither sees a process of the runner or the CLI, the key file and
 *   the passphrase file read as empty, and no file under the test's directory holds the passphrase;
 * - without a working bubblewrap (`RATCHET_BWRAP_BIN` naming no program) the loop is refused
 *   before anything runs, naming the fix, and nothing is stored;
 * - a check whose output holds a NUL byte does not stop the successor from starting;
 * - a check that writes the hosts' configuration (a gitignored `.claude/settings.local.json`) ends
 *   the loop BLOCKED (`scope_violation`, naming the path) instead of starting a successor;
 * - an agent that points git at settings of its own past the read-only mounts (renaming `.git`,
 *   which the sandbox's pin refuses, then writing a `commondir` naming a copy with a clean filter)
 *   ends the loop BLOCKED naming git's settings (ADR 0045), and no filter ran outside the sandbox;
 * - a loop's runner killed with SIGKILL while its sandboxed agent runs: the agent outlives it, and
 *   `--takeover` finds it by its pid file, waits for it and never re-runs it;
 * - a detached run gets the passphrase the same way, and completes;
 * - a plan whose profile asks for the loop gets it from a plain `ratchet run`, and only under the
 *   key of the verifier its profile names;
 * - `ratchet status` shows each agent attempt's turns, usage, cost and transcript reference.
 */
import * as crypto from "node:crypto"
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { addApprover, bin, checkLog, cliRoot, type Engine, engineIndependent, events, makeWorld, passphrase, removeWorlds, specText, status, toPlanApproved, type World } from "../harness.js"
import { planOf, transitionsOf } from "./run.js"
import * as StandIn from "@ratchet/testkit/StandIn"

const standIn = StandIn.claude
const probe = StandIn.probe
const stream = StandIn.streamFile("claude", "success")

/** The criterion holds when the agent wrote `fixed`; its check prints what it found. */
const spec = specText().replace("command: node --version", `command: ${JSON.stringify("cat test/flag.txt && grep -qx fixed test/flag.txt")}`)

const agentStep = [
  "  - id: impl",
  "    title: Fix the flag",
  "    acRefs: [AC-001]",
  "    agent:",
  "      host: claude-code",
  "      prompt: Make test/flag.txt say fixed.",
  "      timeoutSeconds: 60"
].join("\n")

const verifierId = "e2e-verifier"

/**
 * A world with the task PLAN_APPROVED, and a verifier key of its own registered as an approver,
 * sealed under `keyPassphrase`, which a file outside the repository holds.
 */
const setUp = async (
  engine: Engine,
  goal: string,
  profile: ReadonlyArray<string> = [],
  options: { readonly spec?: string; readonly keyPassphrase?: string } = {}
) => {
  const world = await makeWorld(engine)
  const keyPassphrase = options.keyPassphrase ?? passphrase
  const key = (await addApprover(world, verifierId, keyPassphrase))["RATCHET_APPROVER_KEY"]!
  const passphraseFile = path.join(world.root, "verifier-passphrase")
  fs.writeFileSync(passphraseFile, `${keyPassphrase}\n`, { mode: 0o600 })
  const taskId = await toPlanApproved(world, goal, options.spec ?? spec, [planOf([agentStep]), ...profile, ""].join("\n"))
  const prompts = path.join(world.root, "prompts")
  const agentEnv = (behaviour: string) => ({
    RATCHET_CLAUDE_BIN: standIn,
    STAND_IN_FIXTURE: stream,
    STAND_IN_REVISE_FILE: "test/flag.txt",
    STAND_IN_REVISE: behaviour,
    STAND_IN_PROMPTS: prompts
  })
  return { world, key, passphraseFile, taskId, prompts, agentEnv }
}

/** The processes of group `pgid` that are not zombies. */
const liveMembers = (pgid: number): Array<number> =>
  fs.readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name)).flatMap((name) => {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return Number(pgrp) === pgid && state !== "Z" && state !== "X" ? [Number(name)] : []
    } catch {
      return []
    }
  })

const resultOf = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!)
/** The error of a refusal, whether the CLI (one JSON document) or the runner (NDJSON) printed it. */
const errorOf = (stdout: string) => {
  try {
    return JSON.parse(stdout).error
  } catch {
    return resultOf(stdout).error
  }
}
const passesOf = (stdout: string) =>
  stdout.trim().split("\n").map((line) => JSON.parse(line)).filter((line) => line.type === "verification").map((line) => `${line.outcome}→${line.state}`)
const verificationOutcomes = async (world: World, taskId: string) =>
  (await events(world, taskId)).filter((record) => record.type === "VerificationRecorded").map((record) => record.event.outcome)
const read = (file: string) => fs.readFileSync(file, "utf8")
const revisionOf = (prompts: string, attempt: number) => JSON.parse(JSON.parse(read(path.join(prompts, `${attempt}.env.json`)))["RATCHET_REVISION"] ?? "null")

export const reviseScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  // The loop itself on every engine (issue 22's scenarios); the sandbox, the passphrase's paths,
  // refusals and the profile are the runner's and the CLI's, the same on any store (ADR 0046).
  const anyEngine = engineIndependent(engine)

  describe("ratchet run --until-verified", { concurrent: true, timeout: 420_000 }, () => {
    it("a failing first attempt and a passing successor reach COMPLETED unattended, the successor told what failed", async () => {
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "An agent fixes a flag on its second try")
      const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
      })
      expect(ran.code, ran.stderr).toBe(0)
      expect(resultOf(ran.stdout).outcomes[0]).toMatchObject({ taskId, state: "COMPLETED", stop: "completed", blocker: null })
      expect(passesOf(ran.stdout)).toEqual(["REVISE→RUNNING", "APPROVED→VERIFYING"])
      expect(await verificationOutcomes(world, taskId)).toEqual(["REVISE", "APPROVED"])
      const log = await events(world, taskId)
      expect(transitionsOf(log)).toEqual([
        "impl#1:Pending→Running",
        "impl#1:Running→Succeeded",
        "impl#2:Pending→Running",
        "impl#2:Running→Succeeded"
      ])
      // The verdicts are the verifier's, signed; the completion is recorded.
      const approved = log.filter((record) => record.type === "VerificationRecorded").at(-1)!.event
      expect(approved.verdicts).toHaveLength(1)
      expect(approved.verdicts[0]).toMatchObject({ acId: "AC-001", verdict: "PASS", verifier: { kind: "user", id: verifierId } })
      expect(approved.verdicts[0].signature).not.toBeNull()
      expect(log.map((record) => record.type)).toContain("TaskCompleted")
      // The first attempt was told nothing of a revision; the successor was told what failed.
      expect(read(path.join(prompts, "1.prompt.txt"))).not.toContain("failed verification")
      const second = read(path.join(prompts, "2.prompt.txt"))
      const revision = revisionOf(prompts, 2)
      expect(revision.fingerprint).toMatch(/^fp:exit:1:[0-9a-f]{16}$/)
      expect(revision.failures).toEqual([{ acId: "AC-001", verdict: "FAIL", excerpt: "the check ended exit:1: broken" }])
      expect(second).toContain(`This attempt revises work that failed verification (fingerprint ${revision.fingerprint}).`)
      expect(second).toContain("- AC-001 FAIL: the check ended exit:1: broken")
      expect(revisionOf(prompts, 1)).toBeNull()
      // The passphrase file's variable never reached the agent.
      for (const attempt of [1, 2]) {
        const env = read(path.join(prompts, `${attempt}.env.json`))
        expect(env).not.toContain("RATCHET_VERIFIER_PASSPHRASE")
        expect(env).not.toContain(passphraseFile)
      }
      expect((await status(world, taskId)).state).toBe("COMPLETED")
      // ratchet status shows each agent attempt's turns, usage and transcript reference.
      const shown = (await world.ok(["status", taskId, "--json"])).json
      expect(shown.agentAttempts).toHaveLength(2)
      expect(shown.agentAttempts.map((a: { stepId: string; attempt: number }) => `${a.stepId}#${a.attempt}`)).toEqual(["impl#1", "impl#2"])
      expect(shown.agentAttempts[1]).toMatchObject({ host: "claude-code", state: "Succeeded", turns: 3, costUsd: 0.0421, reason: null })
      expect(shown.agentAttempts[1].usage.inputTokens).toBe(1200)
      expect(shown.agentAttempts[1].transcriptRef).toMatch(/^sha256:/)
      const text = (await world.ok(["status", taskId])).stdout
      expect(text).toContain(`agent:      impl#2 (claude-code) Succeeded: 3 turns; 1200 tokens in`)
      expect(text).toContain(`$0.0421; transcript ${shown.agentAttempts[1].transcriptRef}`)
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "COMPLETED" })
    })

    it("the same failure twice ends BLOCKED (repeated_failure) with its fingerprint, and the passphrase never reaches the agent", async () => {
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "An agent fails the same way twice")
      const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
        env: { ...agentEnv("always-fail"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
      })
      expect(ran.code, ran.stderr).toBe(3)
      const fingerprint = revisionOf(prompts, 2).fingerprint as string
      const outcome = resultOf(ran.stdout).outcomes[0]
      expect(outcome).toMatchObject({ state: "BLOCKED", stop: "blocked", blocker: { category: "repeated_failure", lastEvidence: [fingerprint] } })
      expect(outcome.blocker.requiredAction).toContain(`the same way again (fingerprint ${fingerprint})`)
      expect(passesOf(ran.stdout)).toEqual(["REVISE→RUNNING", "REVISE→BLOCKED"])
      expect(transitionsOf(await events(world, taskId))).toEqual([
        "impl#1:Pending→Running",
        "impl#1:Running→Succeeded",
        "impl#2:Pending→Running",
        "impl#2:Running→Succeeded"
      ])
      expect(fs.existsSync(path.join(prompts, "3.prompt.txt"))).toBe(false)
      // The passphrase was in no agent's environment, nor was any verifier variable.
      for (const attempt of [1, 2]) {
        const env = read(path.join(prompts, `${attempt}.env.json`))
        expect(env).not.toContain(passphrase)
        expect(env).not.toContain("RATCHET_VERIFIER_PASSPHRASE")
      }
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })

    anyEngine("a check that writes the hosts' configuration (a gitignored .claude/settings.local.json) ends the loop BLOCKED, no successor started", async () => {
      // The check writes Claude Code's local settings, which git ignores here, then fails: a REVISE
      // would hand them to the successor's host.
      const writing = `mkdir -p .claude && echo '{"permissions":{"allow":["Bash"]}}' > .claude/settings.local.json; grep -qx fixed test/flag.txt`
      const hostSpec = specText().replace("command: node --version", `command: ${JSON.stringify(writing)}`)
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "A check writes the host's settings", [], { spec: hostSpec })
      fs.mkdirSync(path.join(world.repo, ".git", "info"), { recursive: true })
      fs.appendFileSync(path.join(world.repo, ".git", "info", "exclude"), ".claude/settings.local.json\n")
      const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
        env: { ...agentEnv("always-fail"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
      })
      expect(ran.code, ran.stderr).toBe(3)
      // It is there, and git does not list it: only the hosts' configuration the run observes does.
      expect(fs.existsSync(path.join(world.repo, ".claude", "settings.local.json"))).toBe(true)
      expect(execFileSync("git", ["status", "--porcelain", "--", ".claude"], { cwd: world.repo, encoding: "utf8" })).toBe("")
      const outcome = resultOf(ran.stdout).outcomes[0]
      expect(outcome).toMatchObject({ state: "BLOCKED", stop: "blocked", blocker: { category: "scope_violation", owner: "user" } })
      expect(outcome.blocker.requiredAction).toContain("changed the hosts' configuration (.claude/settings.local.json)")
      expect(outcome.blocker.requiredAction).toContain(`ratchet unblock ${taskId} --to RUNNING`)
      expect(passesOf(ran.stdout)).toEqual(["REVISE→BLOCKED"])
      expect(await verificationOutcomes(world, taskId)).toEqual(["REVISE"])
      expect(transitionsOf(await events(world, taskId))).toEqual(["impl#1:Pending→Running", "impl#1:Running→Succeeded"])
      expect(fs.existsSync(path.join(prompts, "2.prompt.txt"))).toBe(false)
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })

    it("a different failure each time spends the successor budget: six attempts, then BLOCKED (retry_budget_spent)", async () => {
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "An agent never gets it right")
      const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
        env: { ...agentEnv("fail-differently"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile },
        // Six rounds of a run and a verification in one call, on a shared machine.
        timeoutMs: 240_000
      })
      expect(ran.code, ran.stderr).toBe(3)
      expect(passesOf(ran.stdout)).toEqual([...Array(5).fill("REVISE→RUNNING"), "REVISE→BLOCKED"])
      const outcome = resultOf(ran.stdout).outcomes[0]
      expect(outcome).toMatchObject({ state: "BLOCKED", blocker: { category: "retry_budget_spent" } })
      expect(outcome.blocker.lastEvidence).toHaveLength(1)
      expect(outcome.blocker.lastEvidence[0]).toMatch(/^fp:exit:1:[0-9a-f]{16}$/)
      const fingerprints = [2, 3, 4, 5, 6].map((attempt) => revisionOf(prompts, attempt).fingerprint)
      expect(new Set([...fingerprints, outcome.blocker.lastEvidence[0]]).size).toBe(6)
      // Attempt 6 is told of the failure of attempt 5 (which wrote broken-foxtrot).
      expect(revisionOf(prompts, 6).failures[0].excerpt).toBe("the check ended exit:1: broken-foxtrot")
      const transitions = transitionsOf(await events(world, taskId))
      expect(transitions.filter((transition) => transition.endsWith("Running→Succeeded"))).toHaveLength(6)
      expect(await verificationOutcomes(world, taskId)).toEqual(Array(6).fill("REVISE"))
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })

    anyEngine("is refused before anything runs without a usable verifier key, naming the fix", async () => {
      const { agentEnv, key, passphraseFile, taskId, world } = await setUp(engine, "Nobody may verify unsigned")
      const wrong = path.join(world.root, "wrong-passphrase")
      fs.writeFileSync(wrong, "not the passphrase at all\n", { mode: 0o600 })
      const fifo = path.join(world.root, "passphrase-fifo")
      execFileSync("mkfifo", [fifo])
      const link = path.join(world.root, "passphrase-link")
      fs.symlinkSync(passphraseFile, link)
      const blank = path.join(world.root, "blank-passphrase")
      fs.writeFileSync(blank, " \n", { mode: 0o600 })
      const own = path.join(world.home, "approver-key.json")
      const stored = (await events(world, taskId)).length
      // environment → the field and what the refusal says
      const cases: ReadonlyArray<readonly [Record<string, string>, string, string]> = [
        [{}, "RATCHET_VERIFIER_KEY", "RATCHET_VERIFIER_KEY is not set"],
        [{ RATCHET_VERIFIER_KEY: key }, "RATCHET_VERIFIER_PASSPHRASE_FILE", "names no file that gives one"],
        [{ RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE: passphrase }, "RATCHET_VERIFIER_PASSPHRASE", "/proc/<pid>/environ"],
        [
          { RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile, RATCHET_VERIFIER_PASSPHRASE: passphrase },
          "RATCHET_VERIFIER_PASSPHRASE",
          "Unset RATCHET_VERIFIER_PASSPHRASE"
        ],
        [{ RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: wrong }, "", "the passphrase does not open this key"],
        [{ RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: fifo }, "RATCHET_VERIFIER_PASSPHRASE_FILE", "it is not a regular file"],
        [{ RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: link }, "RATCHET_VERIFIER_PASSPHRASE_FILE", "is a symbolic link; name the file itself"],
        // A blank first line is no passphrase: refused where ratchet run reads it, never piped on.
        [{ RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: blank }, "RATCHET_VERIFIER_PASSPHRASE_FILE", "holds no passphrase: its first line is only whitespace"],
        [{ RATCHET_VERIFIER_KEY: path.join(world.root, "none.json"), RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "RATCHET_VERIFIER_KEY", "there is no approval key here"],
        // The person's own approval key (its approver id is not the login the runner works for).
        [{ RATCHET_VERIFIER_KEY: own, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "RATCHET_VERIFIER_KEY", "is your own approval key"],
        // A usable key, and no bubblewrap to sandbox the loop's children with (ADR 0043).
        [
          { RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile, RATCHET_BWRAP_BIN: path.join(world.root, "no-bwrap") },
          "RATCHET_BWRAP_BIN",
          "sudo apt-get install bubblewrap"
        ]
      ]
      for (const [env, field, reason] of cases) {
        const refused = await world.run(["run", taskId, "--until-verified", "--json"], { env: { ...agentEnv("pass-second"), ...env }, timeoutMs: 60_000 })
        expect(refused.code, `${reason}: ${refused.stdout}`).toBe(2)
        const error = errorOf(refused.stdout)
        expect(error.message, reason).toContain(reason)
        if (field !== "") expect(error.field, reason).toBe(field)
        // A key's or its passphrase file's problem names the verifier's set-up (not the person's key).
        if (field.startsWith("RATCHET_VERIFIER_KEY") || field === "RATCHET_VERIFIER_PASSPHRASE_FILE") {
          expect(error.message, reason).toContain("ratchet approver init --id <verifier-id>")
        }
      }
      const first = await world.run(["run", taskId, "--until-verified", "--json"], { env: agentEnv("pass-second") })
      expect(errorOf(first.stdout).message).toContain("ratchet approver add")
      expect(errorOf(first.stdout).message).toContain("RATCHET_VERIFIER_PASSPHRASE_FILE")
      expect((await status(world, taskId)).state).toBe("PLAN_APPROVED")
      expect((await events(world, taskId)).map((record) => record.type)).not.toContain("RunStarted")
      // Nothing was stored by any refusal.
      expect((await events(world, taskId)).length).toBe(stored)
    })

    anyEngine("the passphrase and its file's path are in no process an agent or a check can read, nor in the evidence or a prompt: the loop's children are sandboxed", async () => {
      const keyPassphrase = `leak probe ${crypto.randomUUID()}`
      const probes = path.join(os.tmpdir(), `ratchet-probe-${crypto.randomUUID()}`)
      const needles = `${probes}-needles.json`
      // The agent also plants a git clean filter that copies both files here when any git runs it.
      const leak = `${probes}-leak`
      // Each check's label is its own: in the sandbox every check's shell has the same pid.
      const check = `node ${JSON.stringify(probe)} verify-$(cat /proc/sys/kernel/random/uuid) ${JSON.stringify(probes)} ${JSON.stringify(needles)}; tr '\\0' '\\n' < /proc/$PPID/environ | grep -i verifier; cat test/flag.txt && grep -qx fixed test/flag.txt`
      // A function, so that a `$` in the check is not read as a replacement pattern.
      const probeSpec = specText().replace("command: node --version", () => `command: ${JSON.stringify(check)}`)
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "Nobody reads the verifier's passphrase", [], { spec: probeSpec, keyPassphrase })
      fs.writeFileSync(
        needles,
        JSON.stringify({ passphrase: keyPassphrase, passphraseFile, keyFile: key, files: { passphraseFile, keyFile: key }, scan: [world.root], plantFilter: leak }),
        { mode: 0o600 }
      )
      try {
        const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
          env: { ...agentEnv("pass-second"), STAND_IN_PROBE: probes, STAND_IN_PROBE_NEEDLES: needles, RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(passesOf(ran.stdout)).toEqual(["REVISE→RUNNING", "APPROVED→VERIFYING"])
        // Neither agent could plant the filter: git's settings are read-only in the loop's sandbox.
        const plants = fs.readdirSync(probes).filter((name) => name.startsWith("plant-"))
        expect(plants.map((name) => JSON.parse(read(path.join(probes, name))).planted)).toEqual([false, false])
        for (const name of plants) fs.rmSync(path.join(probes, name))
        const reports = fs.readdirSync(probes).map((name) => JSON.parse(read(path.join(probes, name))))
        // Both agents and both checks probed; each read its ancestors up to pid 1.
        expect(reports.filter((report) => report.label.startsWith("agent-"))).toHaveLength(2)
        expect(reports.filter((report) => report.label.startsWith("verify-"))).toHaveLength(2)
        for (const report of reports) {
          // Its ancestors end at the sandbox's first process, pid 1 of its own PID namespace.
          expect(report.ancestors.at(-1).pid).toBe(1)
          expect(report.ancestors.at(-1).cmdline, report.label).toMatch(/^(\S*\/)?bwrap /)
          expect(report.environs).toBeGreaterThan(report.ancestors.length - 1)
          // No process of the runner or of the `ratchet run` that started it is visible at all.
          expect(report.commands.length, report.label).toBe(report.scanned)
          expect(report.commands.filter((cmdline: string) => cmdline.includes("ratchet-runner") || cmdline.includes(bin)), report.label).toEqual([])
          // The passphrase is in no environment or command line; the two files' paths only in the command
          // line of the sandbox's own bubblewrap, which names what it hides.
          expect(report.hits.filter((hit: { needle: string }) => hit.needle === "passphrase"), report.label).toEqual([])
          for (const hit of report.hits) expect(hit, `${report.label} ${hit.needle} ${hit.at}`).toMatchObject({ field: "cmdline", cmdline: expect.stringMatching(/^(\S*\/)?bwrap /) })
          // The key file and the passphrase file read as empty; no file under the test's directory holds the passphrase.
          expect(report.files, report.label).toEqual({ passphraseFile: "", keyFile: "" })
          expect(report.found, report.label).toEqual([])
        }
        // So no git ever ran it, in the sandbox or out of it, and the repository's settings hold no filter.
        expect(fs.existsSync(leak)).toBe(false)
        expect(read(path.join(world.repo, ".git", "config"))).not.toContain('[filter "probe"]')
        // Outside the sandbox both files are what they were.
        expect(read(passphraseFile)).toBe(`${keyPassphrase}\n`)
        expect(read(key)).toContain("publicKey")
        // Nor is either in the evidence, a prompt or an agent's environment. The check's parent is
        // the sandbox's first process, whose environment is the check's: no verifier variable.
        const evidence = (await world.ok(["evidence", taskId, "--show-output", "--json"])).stdout
        expect(evidence).toContain("probe verify-")
        expect(evidence).not.toContain("RATCHET_VERIFIER")
        const stored = [evidence, ...fs.readdirSync(prompts).map((name) => read(path.join(prompts, name)))]
        for (const text of stored) {
          expect(text).not.toContain(keyPassphrase)
          expect(text).not.toContain(passphraseFile)
          expect(text).not.toContain("RATCHET_VERIFIER_PASSPHRASE")
        }
        // No agent has a verifier variable, nor does the successor's prompt name one.
        for (const attempt of [1, 2]) {
          expect(Object.keys(JSON.parse(read(path.join(prompts, `${attempt}.env.json`)))).filter((name) => name.startsWith("RATCHET_VERIFIER"))).toEqual([])
        }
        expect(read(path.join(prompts, "2.prompt.txt"))).not.toContain(key)
        expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "COMPLETED" })
      } finally {
        fs.rmSync(probes, { recursive: true, force: true })
        fs.rmSync(needles, { force: true })
        fs.rmSync(leak, { force: true })
      }
    })

    anyEngine("an agent that points git at settings of its own (.git renamed, refused; a commondir written) ends the loop BLOCKED naming git's settings, and no filter ran outside the sandbox", async () => {
      const keyPassphrase = `escape probe ${crypto.randomUUID()}`
      const probes = path.join(os.tmpdir(), `ratchet-escape-${crypto.randomUUID()}`)
      const needles = `${probes}-needles.json`
      const [leak, escape] = [`${probes}-leak`, `${probes}-git`]
      const { agentEnv, key, passphraseFile, taskId, world } = await setUp(engine, "An agent plants git settings past the mounts", [], { keyPassphrase })
      fs.writeFileSync(needles, JSON.stringify({ passphrase: keyPassphrase, files: { passphraseFile, keyFile: key }, plantFilter: leak, escapeGit: escape }), { mode: 0o600 })
      try {
        const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
          env: { ...agentEnv("pass-second"), STAND_IN_PROBE: probes, STAND_IN_PROBE_NEEDLES: needles, RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
        })
        // The rename failed (.git is pinned in the sandbox); the commondir was written.
        expect(JSON.parse(read(path.join(probes, "escape-1.json")))).toEqual({ renamed: false, renameError: "EBUSY", commondir: true })
        expect(ran.code, ran.stderr).toBe(3)
        const outcome = resultOf(ran.stdout).outcomes[0]
        expect(outcome).toMatchObject({ taskId, state: "BLOCKED", stop: "blocked", blocker: { category: "scope_violation", owner: "user" } })
        for (const said of ["git's settings for this checkout changed", path.join(".git", "commondir"), `ratchet unblock ${taskId} --to RUNNING`]) {
          expect(outcome.blocker.requiredAction).toContain(said)
        }
        // The loop stopped at the run's end: one attempt, no verification pass, the block recorded.
        expect(passesOf(ran.stdout)).toEqual([])
        const log = await events(world, taskId)
        expect(transitionsOf(log)).toEqual(["impl#1:Pending→Running", "impl#1:Running→Succeeded"])
        expect(log.filter((record) => record.type === "TaskBlocked").map((record) => record.event.blocker.requiredAction)).toEqual([outcome.blocker.requiredAction])
        // The runner's own git ran the filter in the sandbox, where both files read as empty; none
        // ran it outside (the leak would hold the passphrase and the key).
        expect(fs.existsSync(leak) ? read(leak) : "").toBe("")
        expect(read(passphraseFile)).toBe(`${keyPassphrase}\n`)
      } finally {
        for (const made of [probes, escape, needles, leak]) fs.rmSync(made, { recursive: true, force: true })
      }
    })

    anyEngine("a loop's runner killed with SIGKILL while its sandboxed agent runs: --takeover finds the agent by its bwrap, waits for it, and never re-runs it", async () => {
      const { agentEnv, key, passphraseFile, taskId, world } = await setUp(engine, "A sandboxed agent outlives its runner")
      const starts = path.join(world.root, "starts")
      const release = path.join(world.root, "release")
      const env = {
        ...agentEnv("pass-second"),
        RATCHET_LEASE_HEARTBEAT_MS: "100",
        RATCHET_LEASE_GRACE_MS: "300",
        // It runs until the test releases it, once recovery has found it running.
        STAND_IN_HANG_UNTIL: release,
        STAND_IN_STARTS: starts,
        RATCHET_VERIFIER_KEY: key,
        RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile
      }
      const crashed = await world.run(["run", taskId, "--until-verified"], { env: { ...env, RATCHET_FAULT: "child-started" } })
      expect(crashed.code, crashed.stderr).toBe(1)
      // The pid file names the outer bwrap, leading the group of the sandboxed agent, alive after its runner.
      const output = path.join(world.home, "output")
      const pidFiles = fs.readdirSync(output).filter((name) => name.endsWith(".pid"))
      expect(pidFiles).toHaveLength(1)
      const pgid = Number(read(path.join(output, pidFiles[0]!)).split(" ")[0])
      expect(read(`/proc/${pgid}/cmdline`).split("\0")[0]).toMatch(/(^|\/)bwrap$/)
      expect(() => process.kill(-pgid, 0)).not.toThrow()
      await new Promise((resolve) => setTimeout(resolve, 400))
      // The takeover, its progress read as it comes: the agent is released only once recovery has
      // reported it running (an `orphan` line), so the test does not race a loaded machine.
      const recovered = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [bin, "run", taskId, "--until-verified", "--takeover", "--json"], { cwd: world.repo, env: { ...world.env, ...env } })
        let stdout = ""
        let stderr = ""
        // A takeover that never ends is killed, and the agent released, well before the test's own timeout.
        const limit = setTimeout(() => {
          fs.writeFileSync(release, "")
          child.kill("SIGKILL")
        }, 300_000)
        child.stdout.setEncoding("utf8")
        child.stderr.setEncoding("utf8")
        child.stdout.on("data", (chunk: string) => {
          stdout += chunk
          if (stdout.split("\n").some((line) => line.includes("\"type\":\"orphan\""))) fs.writeFileSync(release, "")
        })
        child.stderr.on("data", (chunk: string) => void (stderr += chunk))
        child.on("error", (error) => void (stderr += String(error)))
        child.on("close", (code) => {
          clearTimeout(limit)
          resolve({ code, stdout, stderr })
        })
        child.stdin.end()
      })
      // Released in any case, so nothing is left waiting if the takeover never reported it.
      fs.writeFileSync(release, "")
      expect(recovered.code, recovered.stderr).toBe(3)
      const lines = recovered.stdout.trim().split("\n").map((line) => JSON.parse(line))
      // The agent outlived its runner in its sandbox; recovery found its group by the pid file (the
      // outer bwrap's) and waited for it.
      expect(lines.filter((line) => line.type === "orphan")).toMatchObject([{ stepId: "impl" }])
      expect(resultOf(recovered.stdout).outcomes[0]).toMatchObject({ state: "BLOCKED", blocker: { category: "decision_needed" } })
      expect(read(starts).trim().split("\n")).toHaveLength(1)
      expect(transitionsOf(await events(world, taskId))).toEqual(["impl#1:Pending→Running", "impl#1:Running→Indeterminate"])
      // Nothing of the sandboxed agent is left running (a zombie nobody reaps may stay).
      expect(liveMembers(pgid)).toEqual([])
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "BLOCKED" })
    })

    anyEngine("a runner given the passphrase on its descriptor without the file's path refuses the loop: the file could not be hidden", async () => {
      const { agentEnv, key, taskId, world } = await setUp(engine, "A passphrase without its file")
      const stored = (await events(world, taskId)).length
      const ran = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [path.join(cliRoot, "bin", "ratchet-runner.mjs"), taskId, "--until-verified", "--json", "--verifier-passphrase-fd", "3", "-C", world.repo], {
          cwd: world.repo,
          env: { ...world.env, ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key },
          stdio: ["ignore", "pipe", "pipe", "pipe"]
        })
        let stdout = ""
        child.stdout!.setEncoding("utf8")
        child.stdout!.on("data", (chunk: string) => void (stdout += chunk))
        ;(child.stdio[3] as NodeJS.WritableStream).end(`${passphrase}\n`)
        child.on("close", (code) => resolve({ code, stdout }))
      })
      expect(ran.code, ran.stdout).toBe(2)
      expect(resultOf(ran.stdout).error).toMatchObject({ field: "--verifier-passphrase-fd" })
      expect((await events(world, taskId)).length).toBe(stored)
    })

    anyEngine("a detached run gets the passphrase over the pipe too, and completes", async () => {
      const { agentEnv, key, passphraseFile, taskId, world } = await setUp(engine, "A detached run verifies unattended")
      const started = await world.run(["run", taskId, "--until-verified", "--detach", "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
      })
      expect(started.code, started.stdout + started.stderr).toBe(0)
      const log = started.json.log as string
      const deadline = Date.now() + 180_000
      while ((await status(world, taskId)).state !== "COMPLETED") {
        if (Date.now() > deadline) throw new Error(`the detached run did not complete:\n${read(log)}`)
        await new Promise((resolve) => setTimeout(resolve, 1_000))
      }
      expect(await verificationOutcomes(world, taskId)).toEqual(["REVISE", "APPROVED"])
      expect(read(log)).not.toContain(passphrase)
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "COMPLETED" })
    })

    anyEngine("a check whose output holds a NUL byte does not stop the successor: the prompt shows it visibly", async () => {
      const check = "cat test/flag.txt && grep -qx fixed test/flag.txt || { printf 'bad\\000byte'; exit 1; }"
      const nulSpec = specText().replace("command: node --version", () => `command: ${JSON.stringify(check)}`)
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "A check prints a NUL byte", [], { spec: nulSpec })
      const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
      })
      expect(ran.code, ran.stdout).toBe(0)
      expect(passesOf(ran.stdout)).toEqual(["REVISE→RUNNING", "APPROVED→VERIFYING"])
      expect(transitionsOf(await events(world, taskId))).toEqual([
        "impl#1:Pending→Running",
        "impl#1:Running→Succeeded",
        "impl#2:Pending→Running",
        "impl#2:Running→Succeeded"
      ])
      const second = read(path.join(prompts, "2.prompt.txt"))
      expect(second).toContain("- AC-001 FAIL: the check ended exit:1: broken | bad\\u{0}byte")
      expect(second).not.toContain("\u0000")
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "COMPLETED" })
    })

    anyEngine("a plan whose profile asks for the loop runs it from a plain ratchet run, under the verifier the profile names", async () => {
      const profile = ["profile:", "  implementer: claude-code", `  verifier: ${verifierId}`, "  untilVerified: true"]
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "The plan asks for the loop", profile)
      // Without a verifier key the runner refuses before anything runs.
      const bare = await world.run(["run", taskId, "--json"], { env: agentEnv("pass-second") })
      expect(bare.code, bare.stdout).toBe(2)
      expect(resultOf(bare.stdout).error.message).toContain("RATCHET_VERIFIER_KEY is not set")
      // Another approver's key is not the verifier the profile names.
      const otherKey = (await addApprover(world, "e2e-other"))["RATCHET_APPROVER_KEY"]!
      const other = await world.run(["run", taskId, "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: otherKey, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
      })
      expect(other.code, other.stdout).toBe(2)
      expect(resultOf(other.stdout).error.message).toContain(`the approved plan's profile names ${verifierId} as the unattended verifier`)
      // The loop the profile asks for refuses the passphrase in a variable, and a file others may read, as --until-verified does.
      const inVariable = await world.run(["run", taskId, "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile, RATCHET_VERIFIER_PASSPHRASE: passphrase }
      })
      expect(inVariable.code, inVariable.stdout).toBe(2)
      expect(errorOf(inVariable.stdout)).toMatchObject({ field: "RATCHET_VERIFIER_PASSPHRASE" })
      const readable = path.join(world.root, "readable-passphrase")
      fs.writeFileSync(readable, `${passphrase}\n`, { mode: 0o644 })
      fs.chmodSync(readable, 0o644)
      const exposed = await world.run(["run", taskId, "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: readable }
      })
      expect(exposed.code, exposed.stdout).toBe(2)
      expect(errorOf(exposed.stdout)).toMatchObject({ field: "RATCHET_VERIFIER_PASSPHRASE_FILE" })
      expect(errorOf(exposed.stdout).message).toContain(`chmod 600 ${readable}`)
      // The right key, and no bubblewrap: the runner refuses the loop before anything runs (ADR 0043).
      const unsandboxed = await world.run(["run", taskId, "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile, RATCHET_BWRAP_BIN: path.join(world.root, "no-bwrap") }
      })
      expect(unsandboxed.code, unsandboxed.stdout).toBe(2)
      expect(resultOf(unsandboxed.stdout).error).toMatchObject({ field: "RATCHET_BWRAP_BIN" })
      expect(resultOf(unsandboxed.stdout).error.message).toContain("sudo apt-get install bubblewrap")
      expect(fs.existsSync(prompts)).toBe(false)
      expect((await events(world, taskId)).map((record) => record.type)).not.toContain("RunStarted")
      // With its key, a plain run verifies, revises and completes.
      const ran = await world.run(["run", taskId, "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
      })
      expect(ran.code, ran.stderr).toBe(0)
      expect(passesOf(ran.stdout)).toEqual(["REVISE→RUNNING", "APPROVED→VERIFYING"])
      expect(resultOf(ran.stdout).outcomes[0]).toMatchObject({ state: "COMPLETED", stop: "completed" })
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "COMPLETED" })
    })

    anyEngine("a plain run with no loop neither reads the passphrase file nor refuses the variable", async () => {
      const { agentEnv, taskId, world } = await setUp(engine, "No loop, no passphrase")
      const ran = await world.run(["run", taskId, "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_PASSPHRASE_FILE: path.join(world.root, "no-such-file"), RATCHET_VERIFIER_PASSPHRASE: passphrase }
      })
      expect(ran.code, ran.stdout).toBe(0)
      expect(resultOf(ran.stdout).outcomes[0]).toMatchObject({ state: "VERIFYING" })
    })

    anyEngine("a task an earlier run left VERIFYING is verified first, then revised and completed", async () => {
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "An agent's run waits for its verdict")
      const first = await world.run(["run", taskId, "--json"], { env: agentEnv("pass-second") })
      expect(first.code, first.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
        env: { ...agentEnv("pass-second"), RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
      })
      expect(ran.code, ran.stderr).toBe(0)
      expect(passesOf(ran.stdout)).toEqual(["REVISE→RUNNING", "APPROVED→VERIFYING"])
      expect(resultOf(ran.stdout).outcomes[0]).toMatchObject({ state: "COMPLETED", stop: "completed" })
      expect(revisionOf(prompts, 2).failures[0].excerpt).toBe("the check ended exit:1: broken")
      expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "COMPLETED" })
    })
  })
}
