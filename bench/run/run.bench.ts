/**
 * The real thing: `ratchet run` of a plan of 100 steps that each run `true`, on embedded SQLite,
 * against a shell loop that runs `true` 100 times the way the runner does (a `/bin/sh -c true` per
 * step). One operation is one step; one round is one task, started by `ratchet run <task>` (the CLI
 * starting the runner in the foreground) and timed until the command exits with the task VERIFYING,
 * so the CLI's and the runner's start-up are inside the time, amortised over the 100 steps, as a
 * person waits for them.
 *
 * Pairs:
 * - `run/100-true/shell-loop`: ours against the bare loop (informational: the loop does none of the
 *   work a durable run does).
 * - `run/100-true/budget`: ours against the budget the issue sets for a runner: per step, the bare
 *   loop's `sh -c true`, one `git status --porcelain` of the same tree (what the step's scope check
 *   must cost) and two durable steps (the kernel's decisions appended through the command handler
 *   to the same SQLite settings: a step's start and its end with the boundary, as the runner writes
 *   them), all done for real in the raw side. Target: ≤ 1.0×, the runner's overhead per step within
 *   twice a durable step plus the scope check's `git status`.
 *
 * The facts give the runner's overhead per step in ms (ours minus the bare loop, per step) and as a
 * multiple of the durable step measured in the same run.
 *
 * Every task is made before anything is timed: one git repository with its project file and
 * approvers committed, tasks driven to PLAN_APPROVED through the controller in this process with a
 * person's signed approvals, as the CLI makes them.
 */
import * as Controller from "@ratchet/controller/Controller"
import * as Workspace from "@ratchet/controller/Workspace"
import type * as Event from "@ratchet/kernel/Event"
import * as LeaseManager from "@ratchet/lease/LeaseManager"
import * as SqliteStore from "@ratchet/storage-sqlite/SqliteStore"
import * as Signing from "@ratchet/testkit/Signing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { median, type Pair, type Prepared, type Side, type Skipped, type Suite } from "../lib/Pair.js"
import { cleanEnv, git, gitRepository, run as runCommand, runOk } from "../startup/processes.js"
import { durableSteps } from "./durable.js"

const repositoryRoot = fileURLToPath(new URL("../..", import.meta.url))
const cliBin = path.join(repositoryRoot, "apps", "cli", "bin", "ratchet.mjs")

/** Steps in each task's plan: the operations of one round. */
const stepsPerTask = 100

const person: Event.Actor = { kind: "user", id: "bench" }

const specText = [
  "---",
  "goal: \"Run a hundred steps\"",
  "acceptanceCriteria:",
  "  - id: AC-001",
  "    outcome: Every step ran",
  "    required: true",
  "    verify:",
  "      command: \"true\"",
  "execution:",
  "  allowedScope:",
  "    - \"src/**\"",
  "---",
  ""
].join("\n")

const planText = [
  "steps:",
  ...Array.from({ length: stepsPerTask }, (_, i) => [
    `  - id: step-${i + 1}`,
    `    title: "Step ${i + 1}"`,
    "    acRefs: [AC-001]",
    ...(i === 0 ? [] : [`    needs: [step-${i}]`]),
    "    run:",
    "      command: \"true\""
  ].join("\n")),
  ""
].join("\n")

/** `count` times `sh -c <script>`, one after another, as the runner starts each step's command. */
const shellLoop = (cwd: string, count: number, script: string) => {
  const ran = spawnSync("/bin/sh", ["-c", `i=0; while [ $i -lt ${count} ]; do /bin/sh -c '${script}' || exit 1; i=$((i+1)); done`], { cwd, stdio: "ignore" })
  if (ran.status !== 0) throw new Error(`the shell loop exited ${ran.status}`)
}

/** @see the module comment */
export const suite: Suite = {
  name: "ratchet run on SQLite",
  prepare: async (): Promise<Prepared | Skipped> => {
    const filters = process.argv.slice(2)
    if (filters.length > 0 && !filters.some((filter) => "run/100-true/shell-loop run/100-true/budget".includes(filter))) {
      return { _tag: "Skipped", reason: "no pair of this suite matches the filter" }
    }
    const rounds = Math.max(5, Number.parseInt(process.env["BENCH_ROUNDS"] ?? "7", 10) || 7)
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-bench-run-")))
    const home = path.join(root, "home")
    const repo = path.join(root, "repo")
    fs.mkdirSync(home)
    const env = { ...cleanEnv(), RATCHET_HOME: home, RATCHET_ACTOR: "user:bench" }
    const runtime = ManagedRuntime.make(SqliteStore.layer({ directory: home }))
    const durable = await durableSteps(path.join(root, "durable"))
    const close = async () => {
      await runtime.dispose()
      await durable.close()
      fs.rmSync(root, { recursive: true, force: true })
    }
    try {
      await runOk({ file: process.execPath, args: [path.join(repositoryRoot, "apps", "cli", "build.mjs")], cwd: repositoryRoot, env })
      await runOk({ file: process.execPath, args: [path.join(repositoryRoot, "apps", "runner", "build.mjs")], cwd: repositoryRoot, env })
      await gitRepository(repo, env, { "README.md": "# A repository for the run benchmark\n", "src/index.js": "export {}\n" })
      const project = await Effect.runPromise(Effect.flatMap(Workspace.make.init(repo, { displayName: "bench-run" }), () => Workspace.make.locate(repo)))
      const specFile = path.join(root, "spec.md")
      const planFile = path.join(root, "plan.yaml")
      fs.writeFileSync(specFile, specText)
      fs.writeFileSync(planFile, planText)
      const invocation: Controller.Invocation = { actor: person, signer: Signing.signerOf(Signing.keyOf(7), person.id) }
      const controller = Controller.layer.pipe(Layer.provide(Layer.mergeAll(
        LeaseManager.layerConfig(project.project.lease ?? {}),
        Layer.succeed(Controller.Project, project)
      )))
      const approve = (c: Controller.Service, taskId: string, subject: "restatement" | "spec" | "plan") =>
        Effect.flatMap(c.approvalSubject(taskId, subject), (shown) => c.approve(taskId, { subject, digest: shown.digest, channel: "terminal" }, invocation))
      // One task per round and one for the warm-up, made before anything is timed.
      const tasks = await runtime.runPromise(Effect.flatMap(Controller.Controller, (c) =>
        Effect.gen(function*() {
          yield* c.approvers.register(invocation.signer!)
          const ids: Array<string> = []
          for (let i = 0; i <= rounds; i++) {
            const taskId = (yield* c.createTask({ goal: `Run a hundred steps (${i + 1})` }, invocation)).task.taskId
            yield* c.restate(taskId, "Run a hundred steps that each run true.", invocation)
            yield* approve(c, taskId, "restatement")
            yield* c.closeBrief(taskId, invocation)
            yield* c.proposeSpec(taskId, specFile, invocation)
            yield* approve(c, taskId, "spec")
            yield* c.preflight(taskId, invocation)
            yield* c.proposePlan(taskId, planFile, invocation)
            const approved = yield* approve(c, taskId, "plan")
            if (approved.task.state !== "PLAN_APPROVED") return yield* Effect.dieMessage(`${taskId} is ${approved.task.state}`)
            ids.push(taskId)
          }
          return ids
        })).pipe(Effect.provide(controller)))
      // The trust files and the projections so far are committed: the tree the runs see is clean.
      await git(repo, env, ["add", "-A"])
      await git(repo, env, ["commit", "-q", "-m", "ratchet project and approvers"])

      const queue = [...tasks]
      // A task's plan is what it is: the warm-up round (fewer operations) runs a whole task too.
      const ratchetRun: Side = async (round, operations) => {
        if (round >= 0 && operations !== stepsPerTask) throw new Error(`a round of this suite is one task of ${stepsPerTask} steps, not ${operations}`)
        const taskId = queue.shift()
        if (taskId === undefined) throw new Error("no prepared task left (more rounds than prepared?)")
        const ran = await runCommand({ file: process.execPath, args: [cliBin, "run", taskId, "--json"], cwd: repo, env })
        const last = JSON.parse(ran.stdout.trim().split("\n").at(-1) ?? "{}") as { outcomes?: ReadonlyArray<{ state?: string }> }
        if (ran.code !== 0 || last.outcomes?.[0]?.state !== "VERIFYING") {
          throw new Error(`ratchet run ${taskId} exited ${ran.code}: ${ran.stderr.slice(0, 1000)} ${ran.stdout.slice(-1000)}`)
        }
      }
      const bare: Side = async (_round, operations) => shellLoop(repo, operations, "true")
      const budget: Side = async (round, operations) => {
        for (let i = 0; i < operations; i++) {
          const status = spawnSync("git", ["status", "--porcelain"], { cwd: repo, stdio: "ignore" })
          if (status.status !== 0) throw new Error(`git status exited ${status.status}`)
          const child = spawnSync("/bin/sh", ["-c", "true"], { cwd: repo, stdio: "ignore" })
          if (child.status !== 0) throw new Error(`sh -c true exited ${child.status}`)
          await durable.step(2)
        }
        void round
      }
      // The durable step alone and a git status alone, measured once here for the overhead figures.
      const timeOf = async (times: number, work: () => Promise<void> | void) => {
        const samples: Array<number> = []
        for (let i = 0; i < times; i++) {
          const started = performance.now()
          await work()
          samples.push(performance.now() - started)
        }
        return median(samples)
      }
      const durableMs = await timeOf(50, () => durable.step(1))
      const gitStatusMs = await timeOf(30, () => {
        spawnSync("git", ["status", "--porcelain"], { cwd: repo, stdio: "ignore" })
      })
      const shellMs = await timeOf(3, () => shellLoop(repo, stepsPerTask, "true")) / stepsPerTask
      const pair = (id: string, raw: Side, baseline: string, target: number, targetText?: string): Pair => ({
        id,
        operation: "one step of `ratchet run` (a `true` command)",
        ours: ratchetRun,
        raw,
        operationsPerRound: stepsPerTask,
        target,
        baseline,
        targetText,
        eventsPerOperation: 0
      })
      const pairs = [
        pair("run/100-true/shell-loop", bare, "sh loop", Number.POSITIVE_INFINITY, "(informational)"),
        pair("run/100-true/budget", budget, "sh+git status+2 durable steps", 1)
      ].filter((one) => filters.length === 0 || filters.some((filter) => one.id.includes(filter)))
      // Each pair takes rounds + 1 tasks (one warm-up): make more when both run.
      if (pairs.length > 1) {
        const more = await runtime.runPromise(Effect.flatMap(Controller.Controller, (c) =>
          Effect.forEach(Array.from({ length: rounds + 1 }, (_, i) => i), (i) =>
            Effect.gen(function*() {
              const taskId = (yield* c.createTask({ goal: `Run a hundred steps (again ${i + 1})` }, invocation)).task.taskId
              yield* c.restate(taskId, "Run a hundred steps that each run true.", invocation)
              yield* approve(c, taskId, "restatement")
              yield* c.closeBrief(taskId, invocation)
              yield* c.proposeSpec(taskId, specFile, invocation)
              yield* approve(c, taskId, "spec")
              yield* c.preflight(taskId, invocation)
              yield* c.proposePlan(taskId, planFile, invocation)
              yield* approve(c, taskId, "plan")
              return taskId
            }))).pipe(Effect.provide(controller)))
        queue.push(...more)
        await git(repo, env, ["add", "-A"])
        await git(repo, env, ["commit", "-q", "-m", "more tasks"])
      }
      return {
        _tag: "Prepared",
        pairs,
        facts: {
          "durable step (start + end with boundary, via the command handler)": `${durableMs.toFixed(2)} ms`,
          "git status --porcelain of the tree": `${gitStatusMs.toFixed(2)} ms`,
          "sh -c true in a loop": `${shellMs.toFixed(2)} ms per step`,
          "runner overhead per step": "ours minus the sh loop, per step: see the run/100-true/shell-loop pair (ms column difference)",
          "budget per step": `${(2 * durableMs + gitStatusMs + shellMs).toFixed(2)} ms (2 × durable step + git status + sh -c true)`
        },
        close
      }
    } catch (error) {
      await close()
      throw error
    }
  }
}
