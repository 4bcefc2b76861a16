/**
 * Where a fleet step's time goes (a tool, not a benchmark): one batch of tasks run by N runners on
 * PostgreSQL, as in the runners benchmark, while this process samples the server.
 *
 *   node --conditions=@ratchet/source --import tsx bench/runners/profile.ts [runners] [tasks] [steps]
 *
 * It prints the round's wall-clock time per step; each runner's share; the server's commits and
 * rows written per step (`pg_stat_database`, `pg_stat_user_tables`); and, sampled every 10 ms from
 * `pg_stat_activity`, what the runners' sessions were doing: running a statement, waiting for a
 * lock (and on which relation, from `pg_locks`: the LSN counter row `ratchet_lsn` is the suspect of
 * ADR 0042), waiting for the WAL flush, or idle (the runner is working in its own process: spawning
 * the step's command and `git`, deciding, starting up). With `PROFILE_DIR=<dir>` each runner also
 * writes a V8 CPU profile there (`--cpu-prof`), whose top frames it summarises by self time.
 * `RUNNER_BIN` runs another runner bundle (e.g. an older tree's, to measure before a change).
 */
import * as PostgresStore from "@ratchet/storage-postgres/PostgresStore"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { connect, databaseUrl } from "../lib/postgres.js"
import { cleanEnv } from "../startup/processes.js"
import { batchMaker, checkRound, type Started, startRunner } from "./fleet.js"

const argument = (index: number, fallback: number): number => Number.parseInt(process.argv[index] ?? "", 10) || fallback
const runners = argument(2, 2)
const tasks = argument(3, 8)
const steps = argument(4, 10)
const url = databaseUrl()
const schema = `ratchet_profile_${crypto.randomBytes(4).toString("hex")}`
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-profile-")))
const admin = await connect(url)
let sampling = true
const runtime = ManagedRuntime.make(PostgresStore.layer({ url, schema, maxConnections: 5 }))
const env = { ...cleanEnv(), RATCHET_DATABASE_URL: url, RATCHET_DATABASE_SCHEMA: schema }
try {
  await runtime.runPromise(Effect.void)
  const batch = await batchMaker({ root, runtime, env, stepsPerTask: steps, command: "true", concurrency: 4 })(tasks, runners)
  const database = async () =>
    (await admin.query<{ xact_commit: string; tup: string }>(
      `SELECT xact_commit, (SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) FROM pg_stat_user_tables WHERE schemaname = $1) AS tup
       FROM pg_stat_database WHERE datname = current_database()`,
      [schema]
    )).rows[0]!
  const before = await database()
  const samples = new Map<string, number>()
  let sampleCount = 0
  const sampler = (async () => {
    while (sampling) {
      const rows = await admin.query<{ what: string }>(
        `SELECT CASE
           WHEN a.state = 'active' AND a.wait_event_type = 'Lock' THEN 'lock wait: ' || a.wait_event || coalesce(' on ' || (
             SELECT string_agg(DISTINCT coalesce(c.relname, l.locktype), ',') FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
             WHERE l.pid = a.pid AND NOT l.granted), '')
           WHEN a.state = 'active' AND a.wait_event_type IS NOT NULL THEN 'waiting: ' || a.wait_event_type || '/' || a.wait_event
           WHEN a.state = 'active' THEN 'running a statement'
           WHEN a.state = 'idle in transaction' THEN 'idle in transaction (the runner between statements)'
           ELSE 'idle (the runner working in its process)' END AS what
         FROM pg_stat_activity a WHERE a.application_name = 'ratchet' AND a.datname = current_database() AND a.pid <> pg_backend_pid()`
      )
      sampleCount += 1
      for (const row of rows.rows) samples.set(row.what, (samples.get(row.what) ?? 0) + 1)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()
  // CPU of the waited-for children and their descendants (the runners, their commands and `git`),
  // from /proc/self/stat's cutime and cstime, in clock ticks (100 per second on Linux).
  const childCpuMs = (): number | null => {
    try {
      const fields = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")
      return (Number(fields[13]) + Number(fields[14])) * 10
    } catch {
      return null
    }
  }
  const cpuBefore = childCpuMs()
  const profileDir = process.env["PROFILE_DIR"]
  const bin = process.env["RUNNER_BIN"]
  const started = performance.now()
  const fleet: Array<Started> = batch.clones.map((clone, i) =>
    startRunner(clone, env, `profile-runner-${i + 1}`, [
      ...(profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`])
    ], bin)
  )
  const finished = await Promise.all(fleet.map((one) => one.finished))
  const seconds = (performance.now() - started) / 1000
  const cpuAfter = childCpuMs()
  sampling = false
  await sampler
  const after = await database()
  const check = await checkRound(admin, schema, batch, fleet, finished, steps)
  const total = tasks * steps
  console.log(`${runners} runner(s), ${tasks} tasks × ${steps} steps: ${seconds.toFixed(2)} s, ${(seconds * 1000 / total).toFixed(1)} ms per step, ${(total / seconds).toFixed(2)} steps/s`)
  if (cpuBefore !== null && cpuAfter !== null) {
    console.log(`CPU of the runners and their children: ${((cpuAfter - cpuBefore) / total).toFixed(1)} ms per step (${((cpuAfter - cpuBefore) / 1000 / seconds).toFixed(2)} CPUs busy on average)`)
  }
  console.log(`shares: ${[...check.stepsBy].map(([actor, n]) => `${actor} ${n} (${(100 * n / total).toFixed(0)} %)`).join(", ")}; steps run twice: ${check.stepsRunTwice}; problems: ${check.problems.length}`)
  for (const problem of check.problems.slice(0, 10)) console.log(`  ${problem}`)
  console.log(`server: ${((Number(after.xact_commit) - Number(before.xact_commit)) / total).toFixed(1)} commits per step (whole database), ${((Number(after.tup) - Number(before.tup)) / total).toFixed(1)} rows written per step`)
  const sessionSamples = [...samples.values()].reduce((a, b) => a + b, 0)
  console.log(`runner sessions, ${sampleCount} samples (${sessionSamples} session-samples):`)
  for (const [what, n] of [...samples].sort((a, b) => b[1] - a[1])) console.log(`  ${(100 * n / sessionSamples).toFixed(1).padStart(5)} %  ${what}`)
  if (profileDir !== undefined) {
    for (const file of fs.readdirSync(profileDir).filter((name) => name.endsWith(".cpuprofile"))) {
      const profile = JSON.parse(fs.readFileSync(path.join(profileDir, file), "utf8")) as {
        nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>
        samples: Array<number>
        timeDeltas: Array<number>
        startTime: number
        endTime: number
      }
      const self = new Map<number, number>()
      profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
      const byFrame = new Map<string, number>()
      for (const node of profile.nodes) {
        const name = `${node.callFrame.functionName || "(anonymous)"} ${path.basename(node.callFrame.url)}:${node.callFrame.lineNumber}`
        byFrame.set(name, (byFrame.get(name) ?? 0) + (self.get(node.id) ?? 0))
      }
      const wall = (profile.endTime - profile.startTime) / 1000
      const idle = [...profile.nodes].filter((node) => node.callFrame.functionName === "(idle)").reduce((sum, node) => sum + (self.get(node.id) ?? 0), 0) / 1000
      console.log(`${file}: ${wall.toFixed(0)} ms profiled, ${idle.toFixed(0)} ms idle (waiting for the server, a child process or a timer); top self time:`)
      for (const [name, us] of [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`)
    }
  }
} finally {
  sampling = false
  await runtime.dispose()
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await admin.end()
  fs.rmSync(root, { recursive: true, force: true })
}
