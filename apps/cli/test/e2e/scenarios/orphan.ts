/**
 * A dead or stopped runner's command, as the next runner finds it from the step's pid file (real
 * processes): the pid file names the command by its pid, boot and start time, so a pid the system
 * gave to an unrelated process since is neither waited on nor signalled by `run --takeover`; and a
 * command that ended under a SIGSTOPped runner (a zombie its stopped parent cannot reap) counts as
 * ended, so `run --takeover` (which takes the stopped runner's checkout lock) proceeds at once
 * instead of waiting for the step's timeout. The stopped runner, once it goes on, says its lease
 * was taken over.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it, onTestFinished } from "vitest"
import { bin, checkLog, type Engine, engineIndependent, exec, makeWorld, removeWorlds, specText, status, toPlanApproved, type World } from "../harness.js"
import { commandStep, planOf } from "./run.js"

/** Short leases, so a takeover is allowed a moment after the runner stopped. */
const leaseEnv = { RATCHET_LEASE_HEARTBEAT_MS: "100", RATCHET_LEASE_GRACE_MS: "300" }

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** The fields of `/proc/<pid>/stat` from field 3 on (state, ppid, pgrp, …), or null once it is gone. */
const statOf = (pid: number): ReadonlyArray<string> | null => {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return text.slice(text.lastIndexOf(")") + 2).split(" ")
  } catch {
    return null
  }
}

const lines = (file: string): number => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").length : 0)

/**
 * The pid file of the step's command under the runner's output directory, once written whole (the
 * runner creates it, then writes `pgid boot start`: a file seen in between is still empty).
 */
const pidFile = async (world: World): Promise<string> => {
  const directory = path.join(world.home, "output")
  for (;;) {
    const found = fs.existsSync(directory) ? fs.readdirSync(directory).find((name) => name.endsWith(".pid") && !name.includes(".probe")) : undefined
    if (found !== undefined && /^\d+ \S+ \d+$/.test(fs.readFileSync(path.join(directory, found), "utf8"))) return path.join(directory, found)
    await sleep(20)
  }
}

export const orphanScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("a dead or stopped runner's command", { concurrent: true, timeout: 400_000 }, () => {
    anyEngine("1. a pid file naming an unrelated process group (a reused pid) is not waited on, and that group survives the takeover", async () => {
      const world = await makeWorld(engine)
      const marker = path.join(world.root, "marker.txt")
      const step = commandStep("effect", `sleep 1; echo ran >> ${JSON.stringify(marker)}`, { idempotent: true, timeoutSeconds: 3 })
      const taskId = await toPlanApproved(world, "A reused pid", specText(), planOf([step]))
      const crashed = await world.run(["run", taskId], { env: { ...leaseEnv, RATCHET_FAULT: "child-started" } })
      expect(crashed.code, crashed.stderr).toBe(1)
      const file = await pidFile(world)
      // The orphaned command runs to its end; its pid is free for anyone after that.
      while (lines(marker) === 0) await sleep(50)
      // An unrelated process in its own session and group, named by the pid file as a reused pid would be.
      const stranger = spawn("setsid", ["sleep", "1000"], { stdio: "ignore" })
      const pid = stranger.pid as number
      try {
        while (statOf(pid) === null || fs.readFileSync(`/proc/${pid}/stat`, "utf8").includes("(setsid)")) await sleep(20)
        const [pgid, boot] = fs.readFileSync(file, "utf8").split(" ")
        expect(Number(pgid)).toBeGreaterThan(1)
        fs.writeFileSync(file, `${pid} ${boot}`)
        await sleep(400)
        const recovered = await world.run(["run", taskId, "--takeover", "--json"], { env: leaseEnv })
        expect(recovered.code, recovered.stdout + recovered.stderr).toBe(0)
        expect(statOf(pid)?.[0]).toBe("S")
      } finally {
        stranger.kill("SIGKILL")
      }
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      expect(lines(marker)).toBe(2)
      expect((await checkLog(world, taskId)).problems).toEqual([])
    })

    it("2. a takeover after a SIGSTOPped runner proceeds as soon as the command has ended (a zombie), and the runner says it was taken over", async () => {
      const world = await makeWorld(engine)
      const marker = path.join(world.root, "marker.txt")
      // The command ends only once the test opens its gate, after the runner is stopped: on a
      // loaded machine a command that ends by itself may have been reaped before the stop.
      const gate = path.join(world.root, "gate")
      const script = `while [ ! -e ${JSON.stringify(gate)} ]; do sleep 0.05; done; echo ran >> ${JSON.stringify(marker)}`
      const step = commandStep("effect", script, { idempotent: true, timeoutSeconds: 120 })
      const taskId = await toPlanApproved(world, "A stopped runner", specText(), planOf([step]))
      // The runner stays stopped for as long as the test needs: no call timeout of a minute.
      const first = exec(process.execPath, [bin, "run", taskId], { cwd: world.repo, env: { ...world.env, ...leaseEnv }, timeoutMs: 380_000 })
      // Awaited at the end; a failure before that must not surface as an unhandled rejection.
      first.catch(() => undefined)
      const file = await pidFile(world)
      const pgid = Number(fs.readFileSync(file, "utf8").split(" ")[0])
      // The group's leader is the command's shell, waiting at its gate: its parent is the runner.
      const leader = statOf(pgid)
      expect(leader, "the step's command is not running").not.toBeNull()
      const runner = Number(leader![1])
      // Whatever happens to the test (a timeout included), the runner does not stay stopped: a
      // stopped backend's locks would hold the schema's cleanup for ever.
      onTestFinished(() => {
        // Nor does its command wait at the gate for ever when the test failed before opening it.
        fs.mkdirSync(path.dirname(gate), { recursive: true })
        fs.writeFileSync(gate, "")
        try {
          process.kill(runner, "SIGCONT")
        } catch {
          // already gone
        }
      })
      // Stopped between its transactions: a runner stopped inside one (a heartbeat's, every
      // 100 ms here) holds every writer out until it goes on, the takeover included (SQLite's
      // write lock, PostgreSQL's row locks); that is not the case this scenario is about.
      for (let tries = 0;; tries++) {
        process.kill(runner, "SIGSTOP")
        while (statOf(runner)?.[0] !== "T") await sleep(5)
        // A statement it sent just before it stopped still reaches the server and takes its
        // locks there (PostgreSQL): look only once the server has had time to run it.
        await sleep(300)
        if (await world.engine.quiet(world)) break
        expect(tries, "the stopped runner was inside a transaction every time").toBeLessThan(50)
        process.kill(runner, "SIGCONT")
        await sleep(10 + tries * 7)
      }
      try {
        // The command ends; its stopped parent cannot reap it.
        fs.writeFileSync(gate, "")
        for (;;) {
          const state = statOf(pgid)
          expect(state, "the command's process went away under a stopped runner").not.toBeNull()
          if (state?.[0] === "Z") break
          await sleep(50)
        }
        expect(lines(marker)).toBe(1)
        await sleep(400)
        const started = Date.now()
        const recovered = await world.run(["run", taskId, "--takeover", "--json"], { env: leaseEnv })
        expect(recovered.code, recovered.stdout + recovered.stderr).toBe(0)
        // Not the step's 120 s timeout: the command had ended.
        expect(Date.now() - started).toBeLessThan(60_000)
        expect((await status(world, taskId)).state).toBe("VERIFYING")
      } finally {
        process.kill(runner, "SIGCONT")
      }
      const stopped = await first
      expect(stopped.code).not.toBe(0)
      expect(stopped.stderr + stopped.stdout).toContain("taken over")
      expect(stopped.stderr + stopped.stdout).not.toContain("but it has been released")
      expect((await checkLog(world, taskId)).problems).toEqual([])
    })
  })
}
