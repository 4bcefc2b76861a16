/**
 * A fleet on PostgreSQL (ADR 0042): three runners, each in its own clone of the repository with its
 * own `RATCHET_HOME` and, where the platform allows it (root, `ip netns`), in its own network
 * namespace reaching the database over a veth pair, share nine approved tasks of three steps with
 * `--any --takeover-expired`, claiming tasks rather than racing for them. One runner is killed with
 * SIGKILL while a step of its task runs; the others take the task over once its lease's grace has
 * passed and finish everything.
 *
 * Asserted: every task reaches VERIFYING; every step's side effect happened exactly once (each step
 * appends one line to a counter file of its own, and the probe tells recovery it did); no two
 * runners held one task at once; the killed runner's task was taken over by another runner; each
 * survivor finished tasks; every log folds cleanly; with namespaces, every runner's database
 * traffic went over its own pair.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { checkLog, type Engine, events, makeWorld, mapLimit, removeWorlds, specText, status, toPlanApproved } from "../harness.js"
import * as Netns from "../netns.js"
import { leaseViolations, type Runner, startRunner } from "./machines.js"
import { commandStep, planOf, until } from "./run.js"

const leaseEnv = { RATCHET_LEASE_HEARTBEAT_MS: "100", RATCHET_LEASE_GRACE_MS: "600" }
const names = ["a", "b", "c"]

export const fleet = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("a fleet of runners", { timeout: 900_000 }, () => {
    it("three runners, each on its own machine, claim nine tasks; one is SIGKILLed mid-step; its task is taken over; every effect happened once", async () => {
      const world = await makeWorld(engine)
      const counters = path.join(world.root, "counters")
      fs.mkdirSync(counters)
      // One counter file per task and step: a line per time the step's effect ran.
      const counter = `${JSON.stringify(counters)}/$RATCHET_TASK-$RATCHET_STEP.txt`
      const effect = `echo "$RATCHET_TASK" >> ${counter}; sleep 0.3`
      const plan = planOf([
        commandStep("one", effect, { probe: `test -s ${counter}` }),
        commandStep("two", effect, { needs: ["one"], probe: `test -s ${counter}` }),
        commandStep("three", effect, { needs: ["two"], probe: `test -s ${counter}` })
      ])
      const tasks = await mapLimit(Array.from({ length: 9 }, (_, i) => i), 3, (i) => toPlanApproved(world, `Fleet task ${i + 1}`, specText(), plan))
      await world.ok(["status", tasks[0]!])
      const git = (cwd: string, args: ReadonlyArray<string>) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn("git", args, { cwd, env: world.env, stdio: "ignore" })
          child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`git ${args.join(" ")} exited ${code}`))))
        })
      await git(world.repo, ["add", ".ratchet/project.json", ".ratchet/approvers.json"])
      await git(world.repo, ["commit", "-q", "-m", "ratchet project"])

      const network = await Netns.open(names.length, world.env["RATCHET_DATABASE_URL"] ?? "")
      if ("unavailable" in network) console.log(`fleet test: ${network.unavailable}`)
      const runners: Array<Runner> = []
      const exited = new Set<number>()
      try {
        for (const [i, name] of names.entries()) {
          const clone = path.join(world.root, `machine-${name}`)
          const home = path.join(world.root, `home-${name}`)
          fs.mkdirSync(home)
          await git(world.root, ["clone", "-q", world.repo, clone])
          const machine = "machines" in network ? network.machines[i] : undefined
          const env: NodeJS.ProcessEnv = {
            ...world.env,
            ...leaseEnv,
            RATCHET_HOME: home,
            RATCHET_ACTOR: `user:runner-${name}`,
            ...(machine === undefined ? {} : { RATCHET_DATABASE_URL: machine.url })
          }
          const runner = startRunner(name, clone, env, machine?.command)
          void runner.exited.then(() => exited.add(runner.pid))
          runners.push(runner)
        }
        const victim = runners[1]!
        await until("runner b to start a step", async () => victim.lines.some((line) => line["type"] === "step"), 120_000)
        const victimTask = [...victim.lines].reverse().find((line) => line["type"] === "step")!["taskId"] as string
        process.kill(victim.pid, "SIGKILL")
        expect(await victim.exited).toBeNull()
        expect(await Promise.all([runners[0]!.exited, runners[2]!.exited])).toEqual([0, 0])

        for (const taskId of tasks) {
          expect((await status(world, taskId)).state, taskId).toBe("VERIFYING")
          for (const step of ["one", "two", "three"]) {
            expect(fs.readFileSync(path.join(counters, `${taskId}-${step}.txt`), "utf8"), `${taskId} ${step}: its effect ran once`).toBe(`${taskId}\n`)
          }
          const log = await events(world, taskId)
          expect(leaseViolations(log), taskId).toEqual([])
          expect((await checkLog(world, taskId)).problems, taskId).toEqual([])
          if (taskId === victimTask) {
            const takeover = log.find((record) => record.type === "LeaseTakenOver")
            expect(takeover, "the killed runner's task was taken over").toBeDefined()
            expect((takeover?.event as { owner?: { pid?: number } } | undefined)?.owner?.pid, "by another runner").not.toBe(victim.pid)
          }
        }
        const finished = (runner: Runner) =>
          ((runner.lines.at(-1)?.["outcomes"] ?? []) as ReadonlyArray<{ taskId: string; stop: string }>).filter((o) => o.stop === "verifying").map((o) => o.taskId)
        expect(finished(runners[0]!).length, "runner a finished tasks").toBeGreaterThan(0)
        expect(finished(runners[2]!).length, "runner c finished tasks").toBeGreaterThan(0)
        expect([...finished(runners[0]!), ...finished(runners[2]!)], "a survivor finished the killed runner's task").toContain(victimTask)
        if ("machines" in network) {
          for (const machine of network.machines) expect(machine.relayed(), `${machine.name} reached the database over its pair`).toBeGreaterThan(0)
        }
      } finally {
        // a failed assertion must not leave runners behind
        for (const runner of runners.filter((one) => !exited.has(one.pid))) {
          try {
            process.kill(runner.pid, "SIGKILL")
          } catch {
            // exited already
          }
        }
        if ("machines" in network) await network.close()
      }
    })
  })
}
