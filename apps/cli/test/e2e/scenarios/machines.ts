/**
 * Many machines: three runner processes share one PostgreSQL store, each with its own
 * `RATCHET_HOME` and its own clone of the repository (standing in for three machines), and take
 * twelve approved tasks with `--any --takeover-expired`. One runner is killed with SIGKILL while it
 * runs a step. The other two take its task over once its lease's grace has passed, recover it
 * (the steps are probed, so nothing needs a person), and finish everything.
 *
 * Asserted: every task reaches VERIFYING; no step's marker shows a double run; no two runners held
 * one task at once (per task, the lease events follow one another epoch by epoch, and every other
 * event was written under the epoch held at that moment); the killed runner's task was taken over;
 * every log folds cleanly.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { checkLog, cliRoot, type Engine, events, type LogRecord, makeWorld, mapLimit, removeWorlds, specText, status, toPlanApproved } from "../harness.js"
import { commandStep, planOf, until } from "./run.js"

const runnerBin = path.resolve(cliRoot, "..", "runner", "bin", "ratchet-runner.mjs")

const leaseEnv = { RATCHET_LEASE_HEARTBEAT_MS: "100", RATCHET_LEASE_GRACE_MS: "600" }

export interface Runner {
  readonly name: string
  readonly pid: number
  readonly lines: Array<Record<string, unknown>>
  readonly exited: Promise<number | null>
}

/**
 * A runner process (`ratchet-runner --any --takeover-expired --json`) in `cwd` with `env`; `wrap`
 * runs it through another command (e.g. inside a network namespace).
 */
export const startRunner = (
  name: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  wrap: (file: string, args: ReadonlyArray<string>) => { readonly file: string; readonly args: ReadonlyArray<string> } = (file, args) => ({ file, args })
): Runner => {
  const command = wrap(process.execPath, [runnerBin, "--any", "--takeover-expired", "--json"])
  const child = spawn(command.file, [...command.args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
  const lines: Array<Record<string, unknown>> = []
  let rest = ""
  child.stdout.on("data", (chunk: Buffer) => {
    const text = rest + chunk.toString("utf8")
    const parts = text.split("\n")
    rest = parts.pop() ?? ""
    for (const part of parts) if (part.trim() !== "") lines.push(JSON.parse(part) as Record<string, unknown>)
  })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => {
    if (code !== 0 && code !== null) process.stderr.write(`runner ${name} exited ${code}: ${stderr}\n`)
    resolve(code)
  }))
  return { name, pid: child.pid as number, lines, exited }
}

/**
 * No two holders at once: replaying the lease events, each acquisition finds the lease free and
 * takes the next epoch, each takeover finds it held and takes the next epoch, each release ends
 * the held epoch, and every other event after the first acquisition carries the epoch held then.
 */
export const leaseViolations = (log: ReadonlyArray<LogRecord>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  let epoch = 0
  let held = false
  for (const record of log) {
    switch (record.type) {
      case "LeaseAcquired":
        if (held || record.event.epoch !== epoch + 1) problems.push(`lsn ${record.lsn}: acquired epoch ${record.event.epoch} while ${held ? `epoch ${epoch} was held` : `at epoch ${epoch}`}`)
        epoch = record.event.epoch
        held = true
        break
      case "LeaseTakenOver":
        if (!held || record.event.epoch !== epoch + 1) problems.push(`lsn ${record.lsn}: took over epoch ${record.event.epoch} from ${held ? epoch : "nobody"}`)
        epoch = record.event.epoch
        break
      case "LeaseReleased":
        if (!held || record.event.epoch !== epoch) problems.push(`lsn ${record.lsn}: released epoch ${record.event.epoch} while ${held ? epoch : "none"} was held`)
        held = false
        break
      default:
        if (held && record.epoch !== epoch) problems.push(`lsn ${record.lsn}: ${record.type} written under epoch ${record.epoch} while epoch ${epoch} was held`)
    }
  }
  return problems
}

export const manyMachines = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("many machines", { timeout: 900_000 }, () => {
    it("three runners on one store share twelve tasks; one is killed midway and its task is taken over; nothing runs twice", async () => {
      const world = await makeWorld(engine)
      const markers = path.join(world.root, "markers")
      fs.mkdirSync(markers)
      // Each step appends its task id to its own marker, once; the probe tells recovery whether it did.
      const marker = `${JSON.stringify(markers)}/$RATCHET_TASK-$RATCHET_STEP.txt`
      const plan = planOf([
        commandStep("first", `echo "$RATCHET_TASK" >> ${marker}; sleep 0.4`, { probe: `test -s ${marker}` }),
        commandStep("second", `echo "$RATCHET_TASK" >> ${marker}; sleep 0.4`, { needs: ["first"], probe: `test -s ${marker}` })
      ])
      const tasks = await mapLimit(Array.from({ length: 12 }, (_, i) => i), 3, (i) =>
        toPlanApproved(world, `Machine task ${i + 1}`, specText(), plan))
      // the project file and its approvers are committed, so every clone is the same project, trusting
      // the same people, in its own workspace
      await world.ok(["status", tasks[0]!])
      const git = (cwd: string, args: ReadonlyArray<string>) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn("git", args, { cwd, env: world.env, stdio: "ignore" })
          child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`git ${args.join(" ")} exited ${code}`))))
        })
      await git(world.repo, ["add", ".ratchet/project.json", ".ratchet/approvers.json"])
      await git(world.repo, ["commit", "-q", "-m", "ratchet project"])
      const machines = ["a", "b", "c"].map((name) => {
        const clone = path.join(world.root, `machine-${name}`)
        const home = path.join(world.root, `home-${name}`)
        fs.mkdirSync(home)
        return { name, clone, home }
      })
      for (const machine of machines) await git(world.root, ["clone", "-q", world.repo, machine.clone])

      const envOf = (home: string): NodeJS.ProcessEnv => ({ ...world.env, ...leaseEnv, RATCHET_HOME: home })
      const runners = machines.map((machine) => startRunner(machine.name, machine.clone, envOf(machine.home)))
      const victim = runners[1]!
      // kill runner b while one of its steps runs
      await until("runner b to start a step", async () => victim.lines.some((line) => line["type"] === "step"), 120_000)
      const victimTask = [...victim.lines].reverse().find((line) => line["type"] === "step")!["taskId"] as string
      process.kill(victim.pid, "SIGKILL")
      expect(await victim.exited).toBeNull()

      const codes = await Promise.all([runners[0]!.exited, runners[2]!.exited])
      expect(codes).toEqual([0, 0])

      for (const taskId of tasks) {
        expect((await status(world, taskId)).state, taskId).toBe("VERIFYING")
        for (const step of ["first", "second"]) {
          const file = path.join(markers, `${taskId}-${step}.txt`)
          expect(fs.readFileSync(file, "utf8"), `${taskId} ${step}`).toBe(`${taskId}\n`)
        }
        const log = await events(world, taskId)
        expect(leaseViolations(log), taskId).toEqual([])
        expect((await checkLog(world, taskId)).problems, taskId).toEqual([])
        if (taskId === victimTask) expect(log.some((r) => r.type === "LeaseTakenOver"), "the killed runner's task was taken over").toBe(true)
      }
      // the work was shared: the surviving runners both finished tasks
      const finishedBy = (runner: Runner) => ((runner.lines.at(-1)?.["outcomes"] ?? []) as ReadonlyArray<{ stop: string }>).filter((o) => o.stop === "verifying").length
      expect(finishedBy(runners[0]!)).toBeGreaterThan(0)
      expect(finishedBy(runners[2]!)).toBeGreaterThan(0)
      expect(finishedBy(runners[0]!) + finishedBy(runners[2]!)).toBeGreaterThanOrEqual(tasks.length - 2)
    })
  })
}
