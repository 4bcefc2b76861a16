/**
 * The REVISE loop end to end (ADR 0041): `ratchet run --until-verified` through the bundled CLI
 * and runner, with a stand-in `claude` (`apps/runner/test/stand-in/revise.mjs`) that writes the
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
 *   or a check can read (`probe.mjs` reads every process's), nor in the evidence or a prompt;
 * - a check whose output holds a NUL byte does not stop the successor from starting;
 * - a detached run gets the passphrase the same way, and completes;
 * - a plan whose profile asks for the loop gets it from a plain `ratchet run`, and only under the
 *   key of the verifier its profile names;
 * - `ratchet status` shows each agent attempt's turns, usage, cost and transcript reference.
 */
import * as crypto from "node:crypto"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { addApprover, bin, checkLog, type Engine, events, makeWorld, passphrase, removeWorlds, specText, status, toPlanApproved, type World } from "../harness.js"
import { planOf, transitionsOf } from "./run.js"

const standIn = fileURLToPath(new URL("../../../../runner/test/stand-in/claude.mjs", import.meta.url))
const probe = fileURLToPath(new URL("../../../../runner/test/stand-in/probe.mjs", import.meta.url))
const stream = fileURLToPath(new URL("../../../../../packages/host-claude-code/test/fixtures/stream-json/edit-and-test.jsonl", import.meta.url))

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

    it("is refused before anything runs without a usable verifier key, naming the fix", async () => {
      const { agentEnv, key, passphraseFile, taskId, world } = await setUp(engine, "Nobody may verify unsigned")
      const wrong = path.join(world.root, "wrong-passphrase")
      fs.writeFileSync(wrong, "not the passphrase at all\n", { mode: 0o600 })
      const fifo = path.join(world.root, "passphrase-fifo")
      execFileSync("mkfifo", [fifo])
      const link = path.join(world.root, "passphrase-link")
      fs.symlinkSync(passphraseFile, link)
      const own = path.join(world.home, "approver-key.json")
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
        [{ RATCHET_VERIFIER_KEY: path.join(world.root, "none.json"), RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "RATCHET_VERIFIER_KEY", "there is no approval key here"],
        // The person's own approval key (its approver id is not the login the runner works for).
        [{ RATCHET_VERIFIER_KEY: own, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }, "RATCHET_VERIFIER_KEY", "is your own approval key"]
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
    })

    it("the passphrase and its file's path are in no process an agent or a check can read, nor in the evidence or a prompt", async () => {
      const keyPassphrase = `leak probe ${crypto.randomUUID()}`
      const probes = path.join(os.tmpdir(), `ratchet-probe-${crypto.randomUUID()}`)
      const needles = `${probes}-needles.json`
      const check = `node ${JSON.stringify(probe)} verify-$$ ${JSON.stringify(probes)} ${JSON.stringify(needles)}; tr '\\0' '\\n' < /proc/$PPID/environ | grep -i verifier; cat test/flag.txt && grep -qx fixed test/flag.txt`
      // A function, so that `$$` in the check is not read as a replacement pattern.
      const probeSpec = specText().replace("command: node --version", () => `command: ${JSON.stringify(check)}`)
      const { agentEnv, key, passphraseFile, prompts, taskId, world } = await setUp(engine, "Nobody reads the verifier's passphrase", [], { spec: probeSpec, keyPassphrase })
      fs.writeFileSync(needles, JSON.stringify({ passphrase: keyPassphrase, passphraseFile }), { mode: 0o600 })
      try {
        const ran = await world.run(["run", taskId, "--until-verified", "--json"], {
          env: { ...agentEnv("pass-second"), STAND_IN_PROBE: probes, STAND_IN_PROBE_NEEDLES: needles, RATCHET_VERIFIER_KEY: key, RATCHET_VERIFIER_PASSPHRASE_FILE: passphraseFile }
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(passesOf(ran.stdout)).toEqual(["REVISE→RUNNING", "APPROVED→VERIFYING"])
        const reports = fs.readdirSync(probes).map((name) => JSON.parse(read(path.join(probes, name))))
        // Both agents and both checks probed; each read its ancestors up to pid 1.
        expect(reports.filter((report) => report.label.startsWith("agent-"))).toHaveLength(2)
        expect(reports.filter((report) => report.label.startsWith("verify-"))).toHaveLength(2)
        for (const report of reports) {
          expect(report.ancestors.at(-1).pid).toBe(1)
          expect(report.ancestors.some((a: { cmdline: string }) => a.cmdline.includes("ratchet-runner"))).toBe(true)
          expect(report.environs).toBeGreaterThan(report.ancestors.length - 1)
          // The passphrase is in no process's environment or command line.
          expect(report.hits.filter((hit: { needle: string }) => hit.needle === "passphrase"), report.label).toEqual([])
          // The file's path is only where the person put it: the `ratchet run` they started with it
          // on its command line (and the probe does see it there: it reads the ancestors' environments).
          const fileHits = report.hits.filter((hit: { needle: string }) => hit.needle === "passphraseFile")
          expect(fileHits.length, report.label).toBeGreaterThan(0)
          for (const hit of fileHits) {
            expect(hit, report.label).toMatchObject({ field: "environ", ancestor: true })
            expect(hit.cmdline).toContain(`${bin} run ${taskId}`)
            expect(hit.cmdline).not.toContain("ratchet-runner")
          }
        }
        // Nor is either in the evidence, a prompt or an agent's environment. The check did read the
        // runner's environment: the key's file is there (sealed; the runner needs it), and only that.
        const evidence = (await world.ok(["evidence", taskId, "--show-output", "--json"])).stdout
        expect(evidence).toContain("probe verify-")
        expect(evidence).toContain(`RATCHET_VERIFIER_KEY=${key}`)
        const stored = [evidence, ...fs.readdirSync(prompts).map((name) => read(path.join(prompts, name)))]
        for (const text of stored) {
          expect(text).not.toContain(keyPassphrase)
          expect(text).not.toContain(passphraseFile)
          expect(text).not.toContain("RATCHET_VERIFIER_PASSPHRASE")
        }
        // No agent has a verifier variable (the key's path is in attempt 2's RATCHET_REVISION, from the check's output).
        for (const attempt of [1, 2]) {
          expect(Object.keys(JSON.parse(read(path.join(prompts, `${attempt}.env.json`)))).filter((name) => name.startsWith("RATCHET_VERIFIER"))).toEqual([])
        }
        // What the check printed of the runner's environment did reach the successor, and no secret with it.
        expect(read(path.join(prompts, "2.prompt.txt"))).toContain(`RATCHET_VERIFIER_KEY=${key}`)
        expect(await checkLog(world, taskId)).toMatchObject({ ok: true, state: "COMPLETED" })
      } finally {
        fs.rmSync(probes, { recursive: true, force: true })
        fs.rmSync(needles, { force: true })
      }
    })

    it("a detached run gets the passphrase over the pipe too, and completes", async () => {
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

    it("a check whose output holds a NUL byte does not stop the successor: the prompt shows it visibly", async () => {
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

    it("a plan whose profile asks for the loop runs it from a plain ratchet run, under the verifier the profile names", async () => {
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

    it("a task an earlier run left VERIFYING is verified first, then revised and completed", async () => {
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
