/**
 * The runner end to end: `ratchet run` executes an approved plan of real shell steps in `needs`
 * order to VERIFYING, with every side effect an intent recorded before its command starts; a
 * failure gets a successor, a repeated failure, a timeout repeated or a path outside the scope
 * BLOCKS; a manual step stops the run until `ratchet step done`, which holds the step's changes to
 * the scope too; cancel and pause reach the live runner from another terminal; resume re-verifies
 * the checkout first.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  approverId,
  checkLog,
  type Engine,
  engineIndependent,
  events,
  type LogRecord,
  makeWorld,
  personalAct,
  removeWorlds,
  specText,
  status,
  toPlanApproved,
  type World
} from "../harness.js"

/** A plan file from steps given as YAML fragments. */
export const planOf = (steps: ReadonlyArray<string>): string => ["steps:", ...steps, ""].join("\n")

/** One command step (indented for {@link planOf}). */
export const commandStep = (
  id: string,
  command: string,
  extra: { readonly needs?: ReadonlyArray<string>; readonly timeoutSeconds?: number; readonly idempotent?: boolean; readonly probe?: string } = {}
): string =>
  [
    `  - id: ${id}`,
    `    title: ${JSON.stringify(`Step ${id}`)}`,
    "    acRefs: [AC-001]",
    "    run:",
    `      command: ${JSON.stringify(command)}`,
    ...(extra.needs === undefined ? [] : [`    needs: [${extra.needs.join(", ")}]`]),
    ...(extra.timeoutSeconds === undefined ? [] : [`    timeoutSeconds: ${extra.timeoutSeconds}`]),
    ...(extra.idempotent === undefined ? [] : [`    idempotent: ${extra.idempotent}`]),
    ...(extra.probe === undefined ? [] : ["    probe:", `      command: ${JSON.stringify(extra.probe)}`])
  ].join("\n")

/** The event types of a log, in order. */
export const typesOf = (log: ReadonlyArray<LogRecord>): ReadonlyArray<string> => log.map((record) => record.type)

/** The attempt transitions of a log, as `step#n:from→to`. */
export const transitionsOf = (log: ReadonlyArray<LogRecord>): ReadonlyArray<string> =>
  log.filter((r) => r.type === "AttemptTransitioned").map((r) => `${r.event.stepId}#${r.event.attempt}:${r.event.from}→${r.event.to}`)

/** Polls `check` every 100 ms until it holds (or fails the test after `ms`). */
export const until = async (what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const specIn = (allowedScope: ReadonlyArray<string> = ["test/**"]) => specText({ allowedScope })

export const runScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("ratchet run", { concurrent: true, timeout: 480_000 }, () => {
    it("runs the steps in needs order to VERIFYING, each side effect an intent dispatched before its command and resolved after", async () => {
      const world = await makeWorld(engine)
      const plan = planOf([
        // Declared out of order: `second` needs `first`, so `first` runs first.
        commandStep("second", "cat test/first.txt > test/second.txt && echo second done", { needs: ["first"] }),
        commandStep("first", "echo one > test/first.txt && echo first done")
      ])
      const taskId = await toPlanApproved(world, "Two steps in order", specIn(), plan)
      const ran = await world.run(["run", taskId, "--json"])
      expect(ran.code, ran.stderr).toBe(0)
      const lines = ran.stdout.trim().split("\n").map((line) => JSON.parse(line))
      const result = lines.at(-1)
      expect(result).toMatchObject({ type: "result", ok: true, exitCode: 0 })
      expect(result.outcomes[0]).toMatchObject({ taskId, state: "VERIFYING", stop: "verifying" })
      expect(lines.filter((l) => l.type === "step").map((l) => [l.stepId, l.index, l.total])).toEqual([["first", 1, 2], ["second", 0, 2]])
      expect(lines.some((l) => l.type === "output" && l.text.includes("first done"))).toBe(true)
      expect(fs.readFileSync(path.join(world.repo, "test", "second.txt"), "utf8")).toBe("one\n")

      const log = await events(world, taskId)
      const types = typesOf(log)
      // the lease and the run start in one append (one operation), with the run-start checkpoint
      const start = log.find((r) => r.type === "RunStarted")!
      expect(log.filter((r) => r.operationId === start.operationId).map((r) => r.type)).toEqual(["LeaseAcquired", "RunStarted", "CheckpointRecorded"])
      // per step: attempt started, intent dispatched (before the command), exit + resolution, boundary
      for (const step of ["first", "second"]) {
        const own = log.filter((r) => r.event.stepId === step || (r.type === "IntentDispatched" && log.some((o) => o.type === "IntentRecorded" && o.event.stepId === step && o.event.intentId === r.event.intentId)))
        expect(own.map((r) => r.type)).toEqual(["AttemptScheduled", "AttemptTransitioned", "IntentRecorded", "IntentDispatched", "CommandExited", "AttemptTransitioned"])
        const exited = own.find((r) => r.type === "CommandExited")!
        expect(exited.event).toMatchObject({ exitCode: 0, timedOut: false, changedPaths: [`test/${step}.txt`] })
        expect(exited.event.stdoutRef).toMatch(/^sha256:/)
      }
      expect(transitionsOf(log)).toEqual(["first#1:Pending→Running", "first#1:Running→Succeeded", "second#1:Pending→Running", "second#1:Running→Succeeded"])
      expect(types.at(-2)).toBe("VerificationStarted")
      expect(types.at(-1)).toBe("LeaseReleased")
      // every event of the run was written under the runner's epoch
      expect(log.filter((r) => r.lsn > start.lsn && r.type !== "LeaseReleased").every((r) => r.epoch === start.epoch)).toBe(true)

      // the lease is free again, the projection shows the run, and no runner is left
      const view = await status(world, taskId)
      expect(view.state).toBe("VERIFYING")
      expect(view.lease.status).toBe("free")
      const runMd = fs.readdirSync(path.join(world.repo, ".ratchet", "tasks")).map((dir) => path.join(world.repo, ".ratchet", "tasks", dir, "run.md"))[0]!
      const report = fs.readFileSync(runMd, "utf8")
      expect(report).toContain("## first — Step first: Succeeded")
      expect(report).toContain("test/second.txt")
    })

    anyEngine("a failed attempt gets a successor; the same failure again, or a timeout again, BLOCKS with the fingerprint", async () => {
      const world = await makeWorld(engine)
      // flaky: fails once (leaving a flag), then succeeds
      const flaky = planOf([commandStep("flaky", "if [ -f test/.flag ]; then echo ok; else touch test/.flag; echo 'not yet'; exit 1; fi")])
      const flakyTask = await toPlanApproved(world, "A flaky step", specIn(), flaky)
      const ran = await world.run(["run", flakyTask])
      expect(ran.code, ran.stderr).toBe(0)
      expect(ran.stderr).toContain("flaky attempt 1: Failed")
      expect(ran.stderr).toContain("flaky attempt 2: Succeeded")
      const flakyLog = await events(world, flakyTask)
      expect(typesOf(flakyLog)).toContain("SuccessorGranted")
      expect((await status(world, flakyTask)).state).toBe("VERIFYING")

      // the same failure twice: BLOCKED repeated_failure, exit 3
      const broken = planOf([commandStep("broken", "echo 'boom at line 12'; exit 3")])
      const brokenTask = await toPlanApproved(world, "A broken step", specIn(), broken)
      const blocked = await world.run(["run", brokenTask, "--json"])
      expect(blocked.code).toBe(3)
      const last = JSON.parse(blocked.stdout.trim().split("\n").at(-1)!)
      expect(last.outcomes[0]).toMatchObject({ state: "BLOCKED", stop: "blocked", blocker: { category: "repeated_failure" } })
      const brokenLog = await events(world, brokenTask)
      const failures = brokenLog.filter((r) => r.type === "AttemptFailed").map((r) => r.event.fingerprint)
      expect(failures).toHaveLength(2)
      expect(failures[0]).toBe(failures[1])
      expect(failures[0]).toMatch(/^fp:exit:3:/)

      // a timeout: TimedOut, twice the same → BLOCKED
      const slow = planOf([commandStep("slow", "sleep 20", { timeoutSeconds: 1 })])
      const slowTask = await toPlanApproved(world, "A slow step", specIn(), slow)
      const timed = await world.run(["run", slowTask])
      expect(timed.code).toBe(3)
      const slowLog = await events(world, slowTask)
      expect(transitionsOf(slowLog)).toEqual(["slow#1:Pending→Running", "slow#1:Running→TimedOut", "slow#2:Pending→Running", "slow#2:Running→TimedOut"])
      expect(slowLog.filter((r) => r.type === "CommandExited").every((r) => r.event.timedOut === true)).toBe(true)
      expect((await status(world, slowTask)).state).toBe("BLOCKED")
    })

    anyEngine("a path changed outside the scope BLOCKS, naming it", async () => {
      const world = await makeWorld(engine)
      const plan = planOf([commandStep("drift", "echo changed >> README.md && echo ok > test/ok.txt")])
      const taskId = await toPlanApproved(world, "A step that drifts", specIn(["test/**"]), plan)
      const ran = await world.run(["run", taskId, "--json"])
      expect(ran.code).toBe(3)
      const view = await status(world, taskId)
      expect(view.state).toBe("BLOCKED")
      const log = await events(world, taskId)
      const blocked = log.find((r) => r.type === "TaskBlocked")!
      expect(blocked.event.blocker.category).toBe("scope_violation")
      expect(blocked.event.blocker.lastEvidence).toEqual(["README.md"])
      expect(blocked.event.blocker.requiredAction).toContain("README.md (outside allowedScope)")
    })

    anyEngine("a manual step stops the run until its worker says it is done", async () => {
      const world = await makeWorld(engine)
      const plan = planOf([
        commandStep("prepare", "echo ready > test/ready.txt"),
        ["  - id: review", "    title: Review the change", "    acRefs: [AC-001]", "    needs: [prepare]", "    manual:", "      instructions: Read test/ready.txt and approve it"].join("\n"),
        commandStep("finish", "echo finished > test/finished.txt", { needs: ["review"] })
      ])
      const taskId = await toPlanApproved(world, "A manual step", specIn(), plan)
      const first = await world.run(["run", taskId, "--json"])
      expect(first.code, first.stderr).toBe(0)
      const outcome = JSON.parse(first.stdout.trim().split("\n").at(-1)!).outcomes[0]
      expect(outcome).toMatchObject({ stop: "awaiting_worker", state: "RUNNING", awaiting: { stepId: "review", attempt: 1 } })
      expect(outcome.awaiting.instructions).toBe("Read test/ready.txt and approve it")
      // a second run does not recover the awaiting attempt away
      const again = await world.run(["run", taskId, "--json"])
      expect(JSON.parse(again.stdout.trim().split("\n").at(-1)!).outcomes[0].stop).toBe("awaiting_worker")
      // a command step cannot be marked done by a person; an unknown step is named
      expect((await world.run(["step", "done", taskId, "prepare", "--json"])).code).toBe(2)
      const unknown = await world.run(["step", "done", taskId, "nope", "--json"])
      expect(unknown.code).toBe(2)
      expect(unknown.json.error.message).toContain("prepare, review, finish")
      const done = await world.run(["step", "done", taskId, "review", "--note", "looked fine", "--json"])
      expect(done.code, done.stderr).toBe(0)
      const finished = await world.run(["run", taskId])
      expect(finished.code, finished.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      const log = await events(world, taskId)
      expect(log.find((r) => r.type === "AttemptNoted")?.event).toMatchObject({ stepId: "review", note: "looked fine" })
    })

    anyEngine("a manual step is held to the scope when it is marked done: a file written outside it BLOCKS scope_violation, naming it", async () => {
      const world = await makeWorld(engine)
      const plan = planOf([
        ["  - id: review", "    title: Freeze the clock", "    acRefs: [AC-001]", "    manual:", "      instructions: Freeze the clock in test/date.test.js"].join("\n"),
        commandStep("finish", "echo finished > test/finished.txt", { needs: ["review"] })
      ])
      const taskId = await toPlanApproved(world, "A manual step that drifts", specIn(["test/**"]), plan)
      expect((await world.run(["run", taskId])).code).toBe(0)
      fs.writeFileSync(path.join(world.repo, "test", "date.test.js"), "// the clock is frozen\n")
      fs.writeFileSync(path.join(world.repo, "notes.txt"), "written during the step\n")
      const done = await world.run(["step", "done", taskId, "review", "--note", "froze the clock"])
      // the step's end is recorded; the block is a HOLD, so `step done … && ratchet run` stops there
      expect(done.code, done.stderr).toBe(3)
      expect(done.stdout).toContain(
        "Step review done, and the task is BLOCKED (scope_violation):\nStep review changed paths outside the contract's scope: notes.txt (outside allowedScope)."
      )
      expect(done.stdout).toContain(`${taskId}: BLOCKED`)
      const view = await status(world, taskId)
      expect(view.state).toBe("BLOCKED")
      expect(view.blockers.at(-1)).toMatchObject({ category: "scope_violation", lastEvidence: ["notes.txt"] })
      expect(view.blockers.at(-1).requiredAction).toContain("Step review changed paths outside the contract's scope: notes.txt (outside allowedScope).")
      expect((await world.ok(["status", taskId])).stdout).toContain("scope_violation")
      // the attempt ended Succeeded and the task blocked in one append
      const log = await events(world, taskId)
      const blocked = log.find((r) => r.type === "TaskBlocked")!
      expect(log.filter((r) => r.operationId === blocked.operationId).map((r) => r.type)).toEqual(["AttemptTransitioned", "AttemptNoted", "TaskBlocked"])
      expect(transitionsOf(log)).toEqual(["review#1:Pending→Running", "review#1:Running→Succeeded"])
      // the recovery guide's way on: undo the path, unblock, run; the step is not done again
      expect((await world.run(["run", taskId, "--json"])).code).toBe(2)
      fs.rmSync(path.join(world.repo, "notes.txt"))
      // a scope violation is lifted by a person: off a terminal, unsigned, it holds and writes nothing
      const blockedLog = await events(world, taskId)
      const unsigned = await world.run(["unblock", taskId, "--to", "RUNNING", "--resolution", "removed notes.txt", "--json"])
      expect(unsigned.code, unsigned.stdout).toBe(3)
      expect(unsigned.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["approval_requires_terminal", "receipt_unsigned"])
      expect(await events(world, taskId)).toHaveLength(blockedLog.length)
      const lifted = await personalAct(world, ["unblock", taskId, "--to", "RUNNING", "--resolution", "removed notes.txt"])
      expect(lifted.shown.stdout).toContain("notes.txt (outside allowedScope)")
      expect(lifted.result.code, lifted.result.stdout).toBe(0)
      const unblocked = (await events(world, taskId)).at(-1)!
      expect(unblocked.type).toBe("TaskUnblocked")
      expect(unblocked.event.receipt).toMatchObject({ subject: "unblock", digest: lifted.digest, channel: "terminal", actor: { kind: "user", id: approverId } })
      expect(unblocked.event.receipt.signature).not.toBeNull()
      const finished = await world.run(["run", taskId])
      expect(finished.code, finished.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      expect(transitionsOf(await events(world, taskId))).toEqual([
        "review#1:Pending→Running",
        "review#1:Running→Succeeded",
        "finish#1:Pending→Running",
        "finish#1:Running→Succeeded"
      ])
    })

    anyEngine("a manual step whose changes stay inside the scope goes on to VERIFYING; a path dirty before it, or gitignored, is not its change", async () => {
      const world = await makeWorld(engine)
      const plan = planOf([
        ["  - id: review", "    title: Freeze the clock", "    acRefs: [AC-001]", "    manual:", "      instructions: Freeze the clock in test/date.test.js"].join("\n"),
        commandStep("finish", "echo finished > test/finished.txt", { needs: ["review"] })
      ])
      // uncommitted before the run, outside the scope: the step's start already holds it
      fs.writeFileSync(path.join(world.repo, ".gitignore"), "build/\n")
      const taskId = await toPlanApproved(world, "A manual step inside its scope", specIn(["test/**"]), plan)
      expect((await world.run(["run", taskId])).code).toBe(0)
      fs.writeFileSync(path.join(world.repo, "test", "date.test.js"), "// the clock is frozen\n")
      fs.writeFileSync(path.join(world.repo, "test", "clock.js"), "export const now = () => 0\n")
      // gitignored and outside the scope: git does not show it, so the check does not see it (a known gap)
      fs.mkdirSync(path.join(world.repo, "build"))
      fs.writeFileSync(path.join(world.repo, "build", "out.js"), "built\n")
      const done = await world.run(["step", "done", taskId, "review", "--note", "froze the clock"])
      expect(done.code, done.stderr).toBe(0)
      expect(done.stdout).toContain("Step review done")
      expect((await status(world, taskId)).state).toBe("RUNNING")
      const finished = await world.run(["run", taskId])
      expect(finished.code, finished.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      expect(typesOf(await events(world, taskId))).not.toContain("TaskBlocked")
    })

    it("cancel from another terminal kills the step's process group; the attempt is Indeterminate (its intent was dispatched)", async () => {
      const world = await makeWorld(engine)
      const plan = planOf([commandStep("long", "echo started > test/started.txt; sleep 30; echo never > test/never.txt")])
      const taskId = await toPlanApproved(world, "A long step", specIn(), plan)
      const running = world.run(["run", taskId])
      await until("the step to start", async () => fs.existsSync(path.join(world.repo, "test", "started.txt")))
      const cancelled = await world.run(["cancel", taskId, "--reason", "not needed any more", "--json"])
      expect(cancelled.code, cancelled.stderr).toBe(0)
      expect(cancelled.json).toMatchObject({ state: "CANCELLED", requested: true, acknowledged: true })
      const ran = await running
      expect(ran.code).toBe(0)
      expect(fs.existsSync(path.join(world.repo, "test", "never.txt"))).toBe(false)
      const log = await events(world, taskId)
      expect(transitionsOf(log)).toEqual(["long#1:Pending→Running", "long#1:Running→Indeterminate"])
      const cancel = log.find((r) => r.type === "TaskCancelled")!
      expect(cancel.event).toMatchObject({ from: "RUNNING", reason: "not needed any more" })
      expect(cancel.actor.kind).toBe("user")
      // the cancel released the lease in the same append (one operation)
      expect(typesOf(log).at(-1)).toBe("LeaseReleased")
      expect(log.at(-1)!.operationId).toBe(cancel.operationId)
      expect((await status(world, taskId)).lease.status).toBe("free")
      const stats = await world.run(["stats", "--json"])
      expect(stats.json.attempts[0]).toEqual({ state: "Indeterminate", count: 1 })
    })

    it("pause stops at the next step boundary; resume continues only on the checkout it paused on", async () => {
      const world = await makeWorld(engine)
      // Step one waits for the test to have asked for the pause (no race with the machine's speed).
      const go = path.join(world.root, "go")
      const plan = planOf([
        commandStep("one", `echo go > test/one.txt; while [ ! -f ${JSON.stringify(go)} ]; do sleep 0.1; done`, { timeoutSeconds: 120 }),
        commandStep("two", "echo two > test/two.txt", { needs: ["one"] })
      ])
      const taskId = await toPlanApproved(world, "Pause between steps", specIn(), plan)
      const running = world.run(["run", taskId])
      await until("step one to start", async () => fs.existsSync(path.join(world.repo, "test", "one.txt")))
      // the runner is inside step one: the pause is requested, and happens at the next boundary
      const paused = await world.run(["pause", taskId, "--reason", "lunch", "--json"])
      expect(paused.code, paused.stderr).toBe(0)
      expect(paused.json).toMatchObject({ requested: true, acknowledged: false, state: "RUNNING" })
      fs.writeFileSync(go, "")
      expect((await running).code).toBe(0)
      await until("the pause", async () => (await status(world, taskId)).state === "PAUSED")
      expect(fs.existsSync(path.join(world.repo, "test", "two.txt"))).toBe(false)
      const log = await events(world, taskId)
      const boundary = log.filter((r) => r.type === "BoundaryRecorded").at(-1)!
      expect(boundary.event.nextStep).toBe("two")

      // the checkout changes while paused: resume blocks, naming the change
      fs.writeFileSync(path.join(world.repo, "test", "meanwhile.txt"), "edited by hand\n")
      const resumed = await world.run(["resume", taskId, "--json"])
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.json.state).toBe("BLOCKED")
      expect((await status(world, taskId)).blockers[0].requiredAction).toContain("newly changed: test/meanwhile.txt")

      // accepting the change is a person's decision; it goes on from the recorded next step
      const unblocked = await personalAct(world, ["unblock", taskId, "--to", "RUNNING", "--resolution", "the edit is wanted"])
      expect(unblocked.shown.stdout).toContain("newly changed: test/meanwhile.txt")
      expect(unblocked.result.code, unblocked.result.stdout).toBe(0)
      const finished = await world.run(["run", taskId])
      expect(finished.code, finished.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      expect(transitionsOf(await events(world, taskId))).toEqual(["one#1:Pending→Running", "one#1:Running→Succeeded", "two#1:Pending→Running", "two#1:Running→Succeeded"])
    })

    it("resume re-verifies the checkout and, when nothing changed, the runner continues from the recorded next step", async () => {
      const world = await makeWorld(engine)
      const go = path.join(world.root, "go")
      const plan = planOf([
        commandStep("one", `echo one > test/one.txt; while [ ! -f ${JSON.stringify(go)} ]; do sleep 0.1; done`, { timeoutSeconds: 120 }),
        commandStep("two", "echo two > test/two.txt", { needs: ["one"] })
      ])
      const taskId = await toPlanApproved(world, "Pause and resume cleanly", specIn(), plan)
      const running = world.run(["run", taskId])
      await until("step one to start", async () => fs.existsSync(path.join(world.repo, "test", "one.txt")))
      expect((await world.run(["pause", taskId, "--json"])).json).toMatchObject({ requested: true, acknowledged: false })
      fs.writeFileSync(go, "")
      expect((await running).code).toBe(0)
      expect((await status(world, taskId)).state).toBe("PAUSED")
      // a pause request with no runner to answer it is an ordinary pause: nothing to ask
      const resumed = await world.run(["resume", taskId])
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stderr).toContain("Resumed")
      expect(resumed.stderr).toContain("[2/2] two attempt 1")
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      const log = await events(world, taskId)
      expect(typesOf(log).filter((t) => t === "TaskResumed")).toHaveLength(1)
      expect(typesOf(log)).not.toContain("TaskBlocked")
    })

    anyEngine("a direct cancel closes what the run left open: a manual step's attempt awaiting its worker is Cancelled", async () => {
      const world = await makeWorld(engine)
      const plan = planOf([["  - id: review", "    title: Review", "    acRefs: [AC-001]", "    manual:", "      instructions: Look at it"].join("\n")])
      const taskId = await toPlanApproved(world, "Cancel while a manual step waits", specIn(), plan)
      expect((await world.run(["run", taskId])).code).toBe(0)
      const cancelled = await world.run(["cancel", taskId, "--reason", "no longer needed", "--json"])
      expect(cancelled.code, cancelled.stderr).toBe(0)
      const log = await events(world, taskId)
      expect(transitionsOf(log)).toEqual(["review#1:Pending→Running", "review#1:Running→Cancelled"])
      const stats = await world.run(["stats", "--json"])
      expect(stats.json.attempts.find((a: { state: string }) => a.state === "Running").count).toBe(0)
      // refused on a task that cannot run, before any runner is started
      const refused = await world.run(["run", taskId, "--detach", "--json"])
      expect(refused.code).toBe(2)
      expect(refused.json.error.reason).toContain("CANCELLED")
    })

    it("--detach returns at once; status shows the runner's heartbeat; the runner exits when the run has no work", async () => {
      const world = await makeWorld(engine)
      // The step waits for the test to have looked at the live runner (no race with its speed).
      const go = path.join(world.root, "go")
      const plan = planOf([commandStep("slowly", `while [ ! -f ${JSON.stringify(go)} ]; do sleep 0.1; done; echo done > test/done.txt`, { timeoutSeconds: 120 })])
      const taskId = await toPlanApproved(world, "A detached run", specIn(), plan)
      const started = await world.run(["run", taskId, "--detach", "--json"], { env: { RATCHET_LEASE_HEARTBEAT_MS: "100", RATCHET_LEASE_GRACE_MS: "1000" } })
      expect(started.code, started.stderr).toBe(0)
      expect(started.json).toMatchObject({ ok: true, detached: true })
      const pid = started.json.pid as number
      expect(started.json.log.startsWith(path.join(world.home, "logs"))).toBe(true)
      await until("the runner to hold the lease", async () => (await status(world, taskId)).lease.status === "held")
      const text = await world.ok(["status", taskId])
      expect(text.stdout).toMatch(/held by runner session .* pid \d+/)
      expect(text.stdout).toContain("last heartbeat")
      fs.writeFileSync(go, "")
      await until("the run to reach VERIFYING", async () => (await status(world, taskId)).state === "VERIFYING")
      await until("the runner to exit", async () => {
        try {
          process.kill(pid, 0)
          return false
        } catch {
          return true
        }
      })
      expect(fs.readFileSync(started.json.log, "utf8")).toContain("slowly attempt 1: Succeeded")

      // the operator's figures: one task, its attempt Succeeded, nothing Indeterminate, no open intent
      const stats = await world.run(["stats", "--json"])
      expect(stats.code).toBe(0)
      expect(stats.json.attempts[0]).toEqual({ state: "Indeterminate", count: 0 })
      expect(stats.json.attempts.find((a: { state: string }) => a.state === "Succeeded").count).toBeGreaterThanOrEqual(1)
      expect(stats.json.openIntents.total).toBe(0)
    })

    it("rewind forks the history at an earlier position; the run continues there and the old branch stays readable", async () => {
      const world = await makeWorld(engine)
      const fixed = path.join(world.root, "fixed")
      const plan = planOf([
        commandStep("one", "echo one > test/one.txt"),
        commandStep("two", `test -f ${JSON.stringify(fixed)} || { echo 'not fixed'; exit 1; }`, { needs: ["one"] })
      ])
      const taskId = await toPlanApproved(world, "Rewind after a repeated failure", specIn(), plan)
      expect((await world.run(["run", taskId])).code).toBe(3)
      const log = await events(world, taskId)
      expect((await status(world, taskId)).state).toBe("BLOCKED")
      // the position right after the run's start: a step's end and the next step's start are one
      // append (ADR 0020), so the last position before any step is the run start's append's end
      const runStart = log.find((r) => r.type === "CheckpointRecorded" && r.event.kind === "run_start")!
      const boundary = log.filter((r) => r.operationId === runStart.operationId).at(-1)!

      // a person's act at a terminal, signed with their approval key: refused off one, for an agent
      // on one (without the key), and for anyone on one without the key
      const offTerminal = await world.run(["rewind", taskId, "--to", String(boundary.lsn), "--json"])
      expect(offTerminal.code).toBe(2)
      expect(offTerminal.json.error.reason).toContain("interactive terminal")
      const noKey = path.join(world.root, "no-key.json")
      const byAgent = await world.tty(["rewind", taskId, "--to", String(boundary.lsn), "--json"], "", { RATCHET_ACTOR: "agent:bot", RATCHET_APPROVER_KEY: noKey })
      expect(byAgent.code).toBe(2)
      expect(byAgent.json.error.reason).toContain("person's decision")
      const unsigned = await world.tty(["rewind", taskId, "--to", String(boundary.lsn), "--json"], "", { RATCHET_APPROVER_KEY: noKey })
      expect(unsigned.code, unsigned.stdout).toBe(2)
      expect(unsigned.json.error.message).toContain("carries no approver's signature")
      // refused to a position that is not earlier, or inside one append (the boundary and its checkpoint)
      const refusedLsn = await world.tty(["rewind", taskId, "--to", String(log.at(-1)!.lsn + 5), "--json"], "")
      expect(refusedLsn.code).toBe(2)
      expect(refusedLsn.json.error.field).toBe("--to")
      const inside = log.find((r) => r.type === "BoundaryRecorded")!
      expect(log.find((r) => r.lsn === inside.lsn + 1)?.operationId).toBe(inside.operationId)
      const split = await world.tty(["rewind", taskId, "--to", String(inside.lsn), "--json"], "")
      expect(split.code).toBe(2)
      expect(split.json.error.reason).toContain("inside one append")
      expect((await world.run(["rewind", taskId, "--to", "x1", "--json"])).code).toBe(2)
      expect((await events(world, taskId)).length).toBe(log.length)

      const { shown, digest, result: rewound } = await personalAct(world, ["rewind", taskId, "--to", String(boundary.lsn)])
      expect(shown.stdout).toContain(`Rewind task ${taskId} (BLOCKED) to LSN ${boundary.lsn}.`)
      expect(rewound.code, rewound.stdout).toBe(0)
      expect(rewound.json).toMatchObject({ state: "RUNNING", branch: "rewind-1", parent: "main", atLsn: boundary.lsn })
      // who rewound, on what signed authority, is the new branch's first fact
      const forked = (await events(world, taskId)).at(-1)!
      expect(forked).toMatchObject({ type: "TaskRewound", actor: { kind: "user", id: approverId }, event: { parent: "main", atLsn: boundary.lsn } })
      expect(forked.event.receipt).toMatchObject({ subject: "rewind", digest, channel: "terminal", actor: { kind: "user", id: approverId } })
      expect(forked.event.receipt.signature).not.toBeNull()
      const view = await status(world, taskId)
      expect(forked.lsn).toBeGreaterThan(boundary.lsn)
      expect(view).toMatchObject({ state: "RUNNING", branch: "rewind-1", lastLsn: forked.lsn, blockers: [] })
      expect((await world.ok(["status", taskId])).stdout).toContain("branch:     rewind-1")

      // the cause is fixed; the run starts again on the new branch
      fs.writeFileSync(fixed, "yes\n")
      const ran = await world.run(["run", taskId])
      expect(ran.code, ran.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      const current = await events(world, taskId)
      expect(current.filter((r) => r.type === "AttemptFailed")).toHaveLength(0)
      expect(transitionsOf(current)).toEqual(["one#1:Pending→Running", "one#1:Running→Succeeded", "two#1:Pending→Running", "two#1:Running→Succeeded"])
      // the old branch is intact and readable
      const old = await world.ok(["log", taskId, "--branch", "main", "--json"])
      const oldTypes = old.stdout.trim().split("\n").map((line) => JSON.parse(line).type)
      expect(oldTypes).toEqual(typesOf(log))
      const branches = await world.run(["log", taskId, "--branches", "--json"])
      expect(branches.json).toMatchObject({ current: "rewind-1" })
      expect(branches.json.branches.map((b: { branch: string; current: boolean }) => [b.branch, b.current])).toEqual([["main", false], ["rewind-1", true]])
      expect((await world.run(["log", taskId, "--branch", "nope", "--json"])).code).toBe(2)
      // VERIFYING is a resting state (no step runs): it can be rewound too, onto a branch of its own
      const { result: again } = await personalAct(world, ["rewind", taskId, "--to", String(boundary.lsn)])
      expect(again.code, again.stdout).toBe(0)
      expect(again.json).toMatchObject({ state: "RUNNING", branch: "rewind-2", parent: "rewind-1" })
      expect((await checkLog(world, taskId)).problems).toEqual([])
    })

    anyEngine("refuses what it cannot run, with the reason and the next step", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Refusals")
      const both = await world.run(["run", taskId, "--any", "--json"])
      expect(both.code).toBe(2)
      const neither = await world.run(["run", "--json"])
      expect(neither.code).toBe(2)
      const unknown = await world.run(["run", "t-00000000", "--json"])
      expect(unknown.code).toBe(2)
      const expired = await world.run(["run", taskId, "--takeover-expired", "--json"])
      expect(expired.code).toBe(2)
      expect(expired.json.error.message).toContain("--any")
      const bad = await world.run(["run", taskId], { env: { RATCHET_FAULT: "somewhere" } })
      expect(bad.code).toBe(2)
      expect(bad.stderr).toContain("not a fault point")
      // a task that is not yet approved
      const created = await world.ok(["task", "create", "--goal", "Not approved", "--json"])
      const early = await world.run(["run", created.json.taskId, "--json"])
      expect(early.code).toBe(2)
      expect(JSON.parse(early.stdout.trim().split("\n").at(-1)!).error.message).toContain("PLAN_APPROVED or RUNNING")
      void ({} as World)
    })
  })
}
