/**
 * Recovery: how long a runner takes, started after another runner was killed with SIGKILL, to
 * recover the K tasks it left open, with short and with long histories. Target: the time grows
 * with K, not with history length.
 *
 * What a killed runner leaves (reads/history.ts): each task RUNNING, its last attempt Running with
 * a dispatched, unresolved intent, under the dead runner's lease, whose grace has passed. The step
 * is neither idempotent nor probed, so recovery must take the lease over, mark the attempt
 * Indeterminate and block the task for a person to settle (the kernel's Progress recovery table), and the
 * runner then stops: the operation ends when the recovery is done, with nothing else run.
 *
 * One operation is one process of the bundled runner (`ratchet-runner --any --takeover-expired
 * --json`, built first from the current source; `ratchet run --any --takeover-expired` starts the
 * same process), from its start to its exit, in a project whose K tasks it finds, takes over,
 * recovers and blocks (checked: exit 3, K outcomes, all BLOCKED). Recovery writes, so every
 * operation gets a project of its own (a git checkout and its K tasks); all of them live in one
 * SQLite store, written through `EventStore.append` and kept between runs (see `cachedStore`), and
 * copied afresh for each run. Short histories have 10² events per task, long ones 10⁴ (the attempt,
 * intent and checkpoint rows grow with them: about 1,100 attempts per long task).
 *
 * Pairs:
 * - `recovery/K=1` and `recovery/K=4`: long histories against short ones, same K; target ≤ 1.2×;
 * - `recovery/K=1-10^6`: one task of 10⁶ events against one of 10²; target ≤ 1.2×. A project per
 *   operation would take a store of (rounds + 1) × 10⁶ events, so this pair keeps one store of the
 *   two tasks and copies it afresh, with its two checkouts (each keeps the store's high-water mark),
 *   before every operation (untimed, the pair's `reset`);
 * - `recovery/K=16-vs-K=1`: K = 16 against K = 1, short histories: how the time grows with K
 *   (informational).
 */
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Pair, Prepared, Skipped, Suite } from "../lib/Pair.js"
import { cleanEnv, run } from "../startup/processes.js"
import { cachedStore, copyStore, type TaskKey, wanted } from "../reads/history.js"
import { buildBundles, project, runnerBin, writeProjectFile } from "../reads/world.js"

const shortLength = 100
const longLength = 10_000
const millionLength = 1_000_000

/** The 10⁶ pair: its two tasks, each a project of its own, in a store of their own. */
const million = {
  id: "recovery/K=1-10^6",
  long: { projectId: "bench-recovery-million-long", taskId: "t-million-long", length: millionLength },
  short: { projectId: "bench-recovery-million-short", taskId: "t-million-short", length: shortLength }
} as const

/** Recorded rounds as `bench/run.ts` reads them, plus its warm-up round: one project each. */
const slots = Math.max(5, Number.parseInt(process.env["BENCH_ROUNDS"] ?? "7", 10) || 7) + 1

interface Side {
  readonly name: string
  readonly k: number
  readonly length: number
}

interface PairSpec {
  readonly id: string
  readonly ours: Side
  readonly raw: Side
  readonly baseline: string
  readonly target: number
  readonly targetText?: string
}

const pairSpecs: ReadonlyArray<PairSpec> = [
  { id: "recovery/K=1", ours: { name: "k1-long", k: 1, length: longLength }, raw: { name: "k1-short", k: 1, length: shortLength }, baseline: "short history", target: 1.2 },
  { id: "recovery/K=4", ours: { name: "k4-long", k: 4, length: longLength }, raw: { name: "k4-short", k: 4, length: shortLength }, baseline: "short history", target: 1.2 },
  {
    id: "recovery/K=16-vs-K=1",
    ours: { name: "k16-short", k: 16, length: shortLength },
    raw: { name: "k1-short-b", k: 1, length: shortLength },
    baseline: "K=1",
    target: Number.POSITIVE_INFINITY,
    targetText: "grows with K (informational)"
  }
]

const projectOf = (side: Side, slot: number) => `bench-recovery-${side.name}-${slot}`
const tasksOf = (side: Side, slot: number): ReadonlyArray<TaskKey & { readonly length: number }> =>
  Array.from({ length: side.k }, (_, i) => ({ projectId: projectOf(side, slot), taskId: `t-${side.name}-${slot}-${i}`, length: side.length }))

const sides = pairSpecs.flatMap((spec) => [spec.ours, spec.raw])

/** @see the module comment */
export const suite: Suite = {
  name: "Recovery",
  prepare: async (): Promise<Prepared | Skipped> => {
    const withMillion = wanted([million.id])
    if (!wanted(pairSpecs.map((spec) => spec.id)) && !withMillion) return { _tag: "Skipped", reason: "no pair of this suite matches the filter" }
    const env = cleanEnv()
    await buildBundles(env, ["runner"])
    const tasks = sides.flatMap((side) => Array.from({ length: slots }, (_, slot) => tasksOf(side, slot)).flat())
    const built = await cachedStore(`recovery-${slots}`, tasks)

    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-bench-recovery-")))
    const close = () => Promise.resolve(fs.rmSync(root, { recursive: true, force: true }))
    try {
      const home = path.join(root, "home")
      copyStore(built.directory, home)
      const db = new Database(path.join(home, "ratchet.db"), { readonly: true })
      const events = (db.prepare("SELECT COUNT(*) AS n FROM ratchet_events").get() as { n: number }).n
      db.close()

      // One checkout per operation: a template repository, copied, each copy its own project.
      const template = path.join(root, "template")
      await project(template, env, "bench-recovery-template")
      const queues = new Map<string, Array<string>>()
      for (const side of sides) {
        const repos: Array<string> = []
        for (let slot = 0; slot < slots; slot++) {
          const repo = path.join(root, "repos", projectOf(side, slot))
          // The copy keeps the template's workspace id (in its git directory); its project file changes.
          fs.cpSync(template, repo, { recursive: true })
          writeProjectFile(repo, projectOf(side, slot))
          repos.push(repo)
        }
        queues.set(side.name, repos)
      }

      /** One runner process in `repo` over the store in `storeHome`: it must recover and block `k` tasks. */
      const recoverIn = async (repo: string, storeHome: string, k: number) => {
        const ran = await run({ file: process.execPath, args: [runnerBin, "--any", "--takeover-expired", "--json", "-C", repo], cwd: repo, env: { ...env, RATCHET_HOME: storeHome } })
        const result = JSON.parse(ran.stdout.trim().split("\n").at(-1) ?? "null") as { outcomes?: ReadonlyArray<{ state: string }> } | null
        const blocked = result?.outcomes?.filter((outcome) => outcome.state === "BLOCKED").length ?? 0
        if (ran.code !== 3 || blocked !== k) {
          throw new Error(`the runner was expected to recover and block ${k} task(s) (exit 3); it exited ${ran.code} with ${blocked}\n${ran.stdout.slice(-1500)}\n${ran.stderr.slice(-1500)}`)
        }
      }
      const recoverSide = (side: Side) => async (_round: number, operations: number) => {
        for (let i = 0; i < operations; i++) {
          const repo = queues.get(side.name)!.shift()
          if (repo === undefined) throw new Error(`no project left for ${side.name}: more operations than the ${slots} prepared`)
          await recoverIn(repo, home, side.k)
        }
      }

      const millionPairs: Array<Pair> = []
      let millionFact: string | null = null
      if (withMillion) {
        const store = await cachedStore("recovery-million", [million.long, million.short])
        const millionHome = path.join(root, "million-home")
        // A checkout keeps the store's high-water mark (ADR 0023): each operation gets a pristine
        // copy of its checkout with the fresh store, or the runner would refuse a store gone back.
        const repoOf = (task: { readonly projectId: string }) => {
          const pristine = path.join(root, "pristine", task.projectId)
          fs.cpSync(template, pristine, { recursive: true })
          writeProjectFile(pristine, task.projectId)
          return { pristine, repo: path.join(root, "repos", task.projectId) }
        }
        const longRepo = repoOf(million.long)
        const shortRepo = repoOf(million.short)
        millionFact = `${millionLength + shortLength} events, 2 tasks, copied afresh before every operation; ${
          store.builtMs === null ? "built earlier (cached)" : `built now in ${(store.builtMs / 1000).toFixed(0)} s`
        }`
        const once = (repo: string) => async (_round: number, operations: number) => {
          if (operations !== 1) throw new Error(`${million.id} runs one operation per round (its reset restores the store once per round)`)
          await recoverIn(repo, millionHome, 1)
        }
        millionPairs.push({
          id: million.id,
          operation: `a runner recovers 1 task of ${millionLength} events left by a killed runner, one process`,
          ours: once(longRepo.repo),
          raw: once(shortRepo.repo),
          baseline: "short history",
          operationsPerRound: 1,
          eventsPerOperation: 1,
          target: 1.2,
          reset: async () => {
            fs.rmSync(millionHome, { recursive: true, force: true })
            copyStore(store.directory, millionHome)
            for (const { pristine, repo } of [longRepo, shortRepo]) {
              fs.rmSync(repo, { recursive: true, force: true })
              fs.cpSync(pristine, repo, { recursive: true })
            }
          }
        })
      }

      const pairs: ReadonlyArray<Pair> = [...pairSpecs.map((spec): Pair => ({
        id: spec.id,
        operation: `a runner recovers ${spec.ours.k} task(s) of ${spec.ours.length} events left by a killed runner, one process`,
        ours: recoverSide(spec.ours),
        raw: recoverSide(spec.raw),
        baseline: spec.baseline,
        operationsPerRound: 1,
        eventsPerOperation: spec.ours.k,
        target: spec.target,
        targetText: spec.targetText
      })), ...millionPairs]
      const facts: Record<string, string> = {
        "store": `${events} events, ${tasks.length} tasks in ${sides.length * slots} projects; ${
          built.builtMs === null ? "built earlier (cached)" : `built now in ${(built.builtMs / 1000).toFixed(0)} s`
        }`,
        "histories": `short ${shortLength} events per task, long ${longLength}`,
        "per operation": "one project (K tasks) per operation; the µs/event column is per recovered task",
        ...(millionFact === null ? {} : { "10^6 store": millionFact })
      }
      return { _tag: "Prepared", pairs, facts, close }
    } catch (error) {
      await close()
      throw error
    }
  }
}
