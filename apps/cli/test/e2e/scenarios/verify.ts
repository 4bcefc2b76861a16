/**
 * Verification and completion end to end: `ratchet verify` runs each acceptance criterion's real
 * check (a `node:test` suite with its JUnit report, artifacts, commands that fail, cannot start or
 * time out) against the run's frozen episode as an identity other than the worker (a FAIL sends the
 * steps behind it back to RUNNING, or BLOCKS for a reopen once the retry budget is spent); `ratchet done`
 * completes a verified task in one transaction (lease taken, completion record, terminal
 * checkpoint, lease released) and is refused or held, with the next action, otherwise;
 * `ratchet evidence` shows what was recorded. A `done` killed or failed at any point leaves the
 * task VERIFYING with its lease free, or COMPLETED with its lease released, and the next `done`
 * finishes or confirms it.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import Database from "better-sqlite3"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import {
  addApprover,
  approverId,
  bin,
  checkLog,
  type Engine,
  engineIndependent,
  events,
  exec,
  type LogRecord,
  makeWorld,
  removeWorlds,
  specText,
  status,
  toPlanApproved,
  type World
} from "../harness.js"

// ---------------------------------------------------------------------------------------------
// Contract files
// ---------------------------------------------------------------------------------------------

/** One acceptance criterion checked by `verify` (its lines, unindented, as YAML under `verify:`). */
const acYaml = (id: string, outcome: string, verify: ReadonlyArray<string>): string =>
  [`  - id: ${id}`, `    outcome: ${JSON.stringify(outcome)}`, "    required: true", "    verify:", ...verify.map((line) => `      ${line}`)].join("\n")

/** A spec file with these criteria; paths default to the harness repository's. */
const specWith = (
  criteria: ReadonlyArray<string>,
  paths: { readonly relevantPaths: ReadonlyArray<string>; readonly allowedScope: ReadonlyArray<string>; readonly maxSuccessors?: number } = {
    relevantPaths: ["test/date.test.js"],
    allowedScope: ["test/**"]
  }
): string =>
  [
    "---",
    `goal: "Make sum add, so its test passes"`,
    "nonGoals:",
    `  - "Rewrite the test"`,
    "constraints:",
    `  - "No new runtime dependencies"`,
    "context:",
    "  relevantPaths:",
    ...paths.relevantPaths.map((p) => `    - ${JSON.stringify(p)}`),
    "acceptanceCriteria:",
    ...criteria,
    "execution:",
    "  allowedScope:",
    ...paths.allowedScope.map((p) => `    - ${JSON.stringify(p)}`),
    ...(paths.maxSuccessors === undefined ? [] : ["  retry:", `    maxSuccessors: ${paths.maxSuccessors}`]),
    "---",
    "# Make sum add",
    "",
    "The module subtracts; its test expects addition.",
    ""
  ].join("\n")

/** The paths of the sum repository (see {@link addSumModule}). */
const sumPaths = { relevantPaths: ["src/sum.mjs", "test/sum.test.mjs"], allowedScope: ["src/**"] }

/** A plan step: a command, or manual work with instructions. */
interface Step {
  readonly id: string
  readonly acRefs: ReadonlyArray<string>
  readonly command?: string
  readonly manual?: string
}

const planWith = (steps: ReadonlyArray<Step>): string =>
  [
    "steps:",
    ...steps.flatMap((step) => [
      `  - id: ${step.id}`,
      `    title: ${JSON.stringify(`Step ${step.id}`)}`,
      `    acRefs: [${step.acRefs.join(", ")}]`,
      ...(step.command !== undefined
        ? ["    run:", `      command: ${JSON.stringify(step.command)}`]
        : ["    manual:", `      instructions: ${JSON.stringify(step.manual ?? "Do it")}`])
    ]),
    ""
  ].join("\n")

/** The real test command: node:test, a spec report on stdout and a JUnit report in reports/. */
const testCommand =
  "mkdir -p reports && node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=reports/junit.xml test/sum.test.mjs"

/** AC-001: the sum test passes, with its JUnit report as evidence. */
const sumTestAc = acYaml("AC-001", "The sum test passes", [`command: ${JSON.stringify(testCommand)}`, "timeoutSeconds: 120", "junit: reports/junit.xml"])

/** The step that fixes the bug (standing in for the agent's edit). */
const fixSum = "echo 'export const sum = (a, b) => a + b' > src/sum.mjs"

/** The SHA-256 of the module `fixSum` writes (sha256sum of "export const sum = (a, b) => a + b\n"). */
const fixedSumSha = "a8753d5fdc3940aea56e42782abf34e57689fce9d7bda6d18616b64215ca41d8"

/**
 * Commits a module with a bug (`sum` subtracts) and a real `node:test` test of it, with
 * `reports/` ignored, so the checkout stays clean while verification writes its reports.
 */
const addSumModule = async (world: World): Promise<void> => {
  fs.mkdirSync(path.join(world.repo, "src"), { recursive: true })
  fs.writeFileSync(path.join(world.repo, "src", "sum.mjs"), "export const sum = (a, b) => a - b\n")
  fs.writeFileSync(
    path.join(world.repo, "test", "sum.test.mjs"),
    [
      `import assert from "node:assert/strict"`,
      `import test from "node:test"`,
      `import { sum } from "../src/sum.mjs"`,
      ``,
      `test("adds two numbers", () => assert.equal(sum(2, 3), 5))`,
      `test("adds a negative number", () => assert.equal(sum(2, -3), -1))`,
      ``
    ].join("\n")
  )
  fs.writeFileSync(path.join(world.repo, ".gitignore"), "reports/\n")
  for (const args of [["add", "src", "test/sum.test.mjs", ".gitignore"], ["commit", "-q", "-m", "sum, with a bug"]]) {
    const result = await exec("git", args, { cwd: world.repo, env: world.env })
    if (result.code !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr}`)
  }
}

// ---------------------------------------------------------------------------------------------
// Driving and observing
// ---------------------------------------------------------------------------------------------

/**
 * A verifier off a terminal and without an approval key (a CI job): its verdicts are recorded
 * unsigned and never count. A person verifies on a terminal with their key: `world.verify`.
 */
const ci = { RATCHET_ACTOR: "verifier:ci" }

/** `ratchet run` to VERIFYING, failing the test otherwise. */
const runToVerifying = async (world: World, taskId: string): Promise<void> => {
  const ran = await world.run(["run", taskId])
  expect(ran.code, ran.stderr).toBe(0)
  expect((await status(world, taskId)).state).toBe("VERIFYING")
}

/** A task with the default spec and plan, run and verified (APPROVED) by the world's approver, signed. */
const approvedTask = async (world: World, goal: string): Promise<string> => {
  const taskId = await toPlanApproved(world, goal, specText())
  await runToVerifying(world, taskId)
  const verified = await world.verify(taskId)
  expect(verified.code, verified.stdout + verified.stderr).toBe(0)
  expect(verified.json.outcome).toBe("APPROVED")
  return taskId
}

/** `ratchet lease show --json`: the lease observation. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON document
const leaseOf = async (world: World, taskId: string): Promise<any> => (await world.ok(["lease", "show", taskId, "--json"])).json.lease

/** The task's projection directory, `.ratchet/tasks/<slug>--<task>`. */
const projectionDir = (world: World, taskId: string): string => {
  const tasks = path.join(world.repo, ".ratchet", "tasks")
  const dir = fs.readdirSync(tasks).find((name) => name.endsWith(`--${taskId}`))
  if (dir === undefined) throw new Error(`no projection directory for ${taskId} in ${tasks}`)
  return path.join(tasks, dir)
}

/** The appends of a log, in order: the records of each operation together. */
const appendsOf = (log: ReadonlyArray<LogRecord>): ReadonlyArray<ReadonlyArray<LogRecord>> => {
  const appends: Array<Array<LogRecord>> = []
  for (const record of log) {
    const last = appends[appends.length - 1]
    if (last !== undefined && last[0]!.operationId === record.operationId) last.push(record)
    else appends.push([record])
  }
  return appends
}

const completionTypes = ["LeaseAcquired", "TaskCompleted", "CheckpointRecorded", "LeaseReleased"]

/**
 * What any reader could ever see, checked at every commit of the log (an append is all or
 * nothing): never COMPLETED while the lease is held, and `done` never releases a lease without
 * completing. A completion is exactly one append: lease taken, completion record, terminal
 * checkpoint, lease released, all under the epoch it took. Returns that append (or null).
 */
const completionOf = (log: ReadonlyArray<LogRecord>): ReadonlyArray<LogRecord> | null => {
  let held = false
  let completed = false
  let completion: ReadonlyArray<LogRecord> | null = null
  for (const append of appendsOf(log)) {
    for (const record of append) {
      if (record.type === "LeaseAcquired" || record.type === "LeaseTakenOver") held = true
      if (record.type === "LeaseReleased") held = false
      if (record.type === "TaskCompleted") completed = true
    }
    expect(completed && held, `lsn ${append[0]!.lsn}: COMPLETED under a held lease`).toBe(false)
    const types = append.map((record) => record.type)
    if (append[0]!.operationId.startsWith("op-done-") || types.includes("TaskCompleted")) {
      expect(completion, "a second completion").toBeNull()
      expect(types).toEqual(completionTypes)
      expect(append[2]!.event).toMatchObject({ kind: "terminal", runId: append[1]!.event.runId })
      const epoch = append[0]!.event.epoch as number
      expect(append.map((record) => record.epoch)).toEqual([epoch, epoch, epoch, epoch])
      expect(append[3]!.event.epoch).toBe(epoch)
      completion = append
    }
  }
  return completion
}

/**
 * The task as a reader sees it between commands: its state, its lease, and its log (checked with
 * {@link completionOf}); never COMPLETED with a held lease.
 */
const observe = async (world: World, taskId: string) => {
  const view = await status(world, taskId)
  const lease = await leaseOf(world, taskId)
  const log = await events(world, taskId)
  expect(view.state === "COMPLETED" && lease.status !== "free", "COMPLETED with a held lease").toBe(false)
  const completion = completionOf(log)
  return {
    state: view.state as string,
    lease,
    log,
    completion,
    terminal: log.some((r) => r.type === "CheckpointRecorded" && r.event.kind === "terminal")
  }
}

/** Asserts the task is still VERIFYING, its lease free, and nothing of a completion is visible. */
const expectUncompleted = async (world: World, taskId: string) => {
  const seen = await observe(world, taskId)
  expect(seen.state).toBe("VERIFYING")
  expect(seen.lease.status).toBe("free")
  expect(seen.completion).toBeNull()
  expect(seen.terminal).toBe(false)
  expect(seen.log.some((r) => r.type === "TaskCompleted")).toBe(false)
  return seen
}

/** `ratchet done` that must complete (not reconcile): exit 0, COMPLETED, one completion append. */
const completes = async (world: World, taskId: string) => {
  const done = await world.run(["done", taskId, "--json"])
  expect(done.code, done.stdout + done.stderr).toBe(0)
  expect(done.json).toMatchObject({ ok: true, state: "COMPLETED", reconciled: false })
  const seen = await observe(world, taskId)
  expect(seen.state).toBe("COMPLETED")
  expect(seen.lease.status).toBe("free")
  expect(seen.completion).not.toBeNull()
  expect(seen.completion!.at(-1)!.lsn).toBe(done.json.completedLsn)
  expect(seen.log.at(-1)!.lsn).toBe(done.json.completedLsn)
  expect((await checkLog(world, taskId)).problems).toEqual([])
  return seen
}

/** Polls `check` every 100 ms until it holds (or fails the test after `ms`). */
const until = async (what: string, check: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How a child ended: its exit code, or the signal that killed it. */
interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Starts `ratchet args` in the world and returns the child (to kill) and how it ends. */
const startCli = (world: World, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const child = spawn(process.execPath, [bin, ...args], { cwd: world.repo, env: { ...world.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const out: Array<Buffer> = []
  const err: Array<Buffer> = []
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
  child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
  // Never left behind: a child still running after two minutes is killed (and the test fails).
  const guard = setTimeout(() => child.kill("SIGKILL"), 120_000)
  const ended = new Promise<Ended>((resolve, reject) => {
    child.on("error", (error) => {
      clearTimeout(guard)
      reject(error)
    })
    child.on("close", (code, signal) => {
      clearTimeout(guard)
      resolve({ code, signal, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") })
    })
  })
  return { child, ended }
}

// ---------------------------------------------------------------------------------------------
// Faults in the store (triggers on the event table)
// ---------------------------------------------------------------------------------------------

/**
 * `fail`: the insert of the `LeaseReleased` row raises an error (the append's statement fails).
 * `stall`: the insert of the `CheckpointRecorded` row waits a long time (the transaction stays
 * open until the process is killed). SQLite has no sleep: the trigger's WHEN clause counts to
 * 2·10⁸ with a recursive CTE (tens of seconds of work), evaluated only for that row.
 */
type StoreFault = "fail" | "stall"

const triggerName = "ratchet_e2e_fault"

const withSqlite = <A>(world: World, f: (db: Database.Database) => A, options: Database.Options = {}): A => {
  const db = new Database(path.join(world.home, "ratchet.db"), options)
  try {
    return f(db)
  } finally {
    db.close()
  }
}

const withPg = async <A>(world: World, f: (client: pg.Client, schema: string) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: world.env["RATCHET_DATABASE_URL"] })
  await client.connect()
  try {
    return await f(client, world.env["RATCHET_DATABASE_SCHEMA"] ?? "")
  } finally {
    await client.end()
  }
}

const installFault = async (world: World, fault: StoreFault): Promise<void> => {
  if (world.engine.name === "sqlite") {
    withSqlite(world, (db) =>
      db.exec(
        fault === "fail"
          ? `CREATE TRIGGER ${triggerName} BEFORE INSERT ON ratchet_events WHEN NEW.type = 'LeaseReleased'
             BEGIN SELECT RAISE(ABORT, 'forced failure'); END`
          : `CREATE TRIGGER ${triggerName} AFTER INSERT ON ratchet_events
             WHEN NEW.type = 'CheckpointRecorded'
               AND (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000000) SELECT count(*) FROM c) > 0
             BEGIN SELECT 1; END`
      ))
    return
  }
  await withPg(world, async (client, schema) => {
    await client.query(
      `CREATE FUNCTION "${schema}".${triggerName}() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN ${fault === "fail" ? "RAISE EXCEPTION 'forced failure';" : "PERFORM pg_sleep(30);"} RETURN NEW; END $$`
    )
    await client.query(
      fault === "fail"
        ? `CREATE TRIGGER ${triggerName} BEFORE INSERT ON "${schema}".ratchet_events FOR EACH ROW
           WHEN (NEW.type = 'LeaseReleased') EXECUTE FUNCTION "${schema}".${triggerName}()`
        : `CREATE TRIGGER ${triggerName} AFTER INSERT ON "${schema}".ratchet_events FOR EACH ROW
           WHEN (NEW.type = 'CheckpointRecorded') EXECUTE FUNCTION "${schema}".${triggerName}()`
    )
  })
}

const dropFault = async (world: World): Promise<void> => {
  if (world.engine.name === "sqlite") {
    withSqlite(world, (db) => db.exec(`DROP TRIGGER ${triggerName}`))
    return
  }
  await withPg(world, async (client, schema) => {
    await client.query(`DROP TRIGGER ${triggerName} ON "${schema}".ratchet_events`)
    await client.query(`DROP FUNCTION "${schema}".${triggerName}()`)
  })
}

/**
 * Whether some process is inside a write transaction on the world's store that inserted events:
 * SQLite's write lock is taken (BEGIN IMMEDIATE cannot start at once); in PostgreSQL another
 * backend holds a row-exclusive lock on the world's event table.
 */
const insideAppend = async (world: World): Promise<boolean> => {
  if (world.engine.name === "sqlite") {
    return withSqlite(world, (db) => {
      try {
        db.exec("BEGIN IMMEDIATE")
        db.exec("ROLLBACK")
        return false
      } catch (error) {
        if ((error as { code?: string }).code === "SQLITE_BUSY") return true
        throw error
      }
    }, { timeout: 0 })
  }
  return withPg(world, async (client, schema) => {
    const found = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks l
         JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relname = 'ratchet_events' AND l.mode = 'RowExclusiveLock' AND l.granted
         AND l.pid <> pg_backend_pid()`,
      [schema]
    )
    return (found.rows[0]?.n ?? 0) > 0
  })
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

export const verifyScenarios = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("ratchet verify, done and evidence", { concurrent: true, timeout: 480_000 }, () => {
    it("a real test suite verified by an independent identity completes the task in one append; done again only confirms", async () => {
      const world = await makeWorld(engine)
      await addSumModule(world)
      const spec = specWith(
        [
          sumTestAc,
          acYaml("AC-002", "The fixed module is in place", [
            `command: ${JSON.stringify("grep -q 'a + b' src/sum.mjs")}`,
            "artifacts:",
            `  - path: "src/sum.mjs"`,
            // The step wrote it, not the check: only its declared hash can make it evidence.
            `    sha256: ${fixedSumSha}`
          ])
        ],
        sumPaths
      )
      const taskId = await toPlanApproved(world, "Make sum add", spec, planWith([{ id: "fix-sum", acRefs: ["AC-001", "AC-002"], command: fixSum }]))
      await runToVerifying(world, taskId)

      // completion before verification: HOLD, every criterion missing, the verify command to run
      const early = await world.run(["done", taskId, "--json"])
      expect(early.code).toBe(3)
      expect(early.json.error._tag).toBe("@ratchet/kernel/TaskCommandHeld")
      expect(early.json.error.gate.reasons).toEqual([
        { code: "missing_evidence", message: "AC-001 has no verdict." },
        { code: "missing_evidence", message: "AC-002 has no verdict." }
      ])
      expect(early.json.error.gate.requiredActions.map((a: { command: string }) => a.command)).toEqual([
        `ratchet verify ${taskId} --ac AC-001`,
        `ratchet verify ${taskId} --ac AC-002`
      ])
      const beforeVerify = await events(world, taskId)
      expect(beforeVerify.some((r) => r.type === "VerificationRecorded" || r.type === "TaskCompleted")).toBe(false)

      // verification by a person who did none of the work, signed with their key: the test suite and its report, the artifact
      const verified = await world.verify(taskId)
      expect(verified.code, verified.stdout + verified.stderr).toBe(0)
      expect(verified.json).toMatchObject({ ok: true, outcome: "APPROVED", recorded: true, signed: true, state: "VERIFYING", blocker: null, stepsToRevise: [] })
      expect(verified.json.gate.decision).toBe("CLEAR")
      const criteria = verified.json.criteria as ReadonlyArray<{
        acId: string
        verdict: string
        evidenceRefs: ReadonlyArray<string>
        verifier: unknown
        judgements: ReadonlyArray<{ verifier: string; verdict: string }>
      }>
      expect(criteria.map((c) => [c.acId, c.verdict, c.judgements.map((j) => `${j.verifier}:${j.verdict}`)])).toEqual([
        ["AC-001", "PASS", ["command:PASS", "junit:PASS"]],
        ["AC-002", "PASS", ["command:PASS", "artifact:PASS"]]
      ])
      for (const criterion of criteria) {
        expect(criterion.verifier).toEqual({ kind: "user", id: approverId })
        expect(criterion.evidenceRefs).toHaveLength(2)
        for (const ref of criterion.evidenceRefs) expect(ref).toMatch(/^sha256:[0-9a-f]{64}$/)
      }
      const recorded = (await events(world, taskId)).at(-1)!
      expect(recorded.type).toBe("VerificationRecorded")
      expect(recorded.lsn).toBe(verified.json.recordedLsn)
      expect(recorded.event.outcome).toBe("APPROVED")

      // done: COMPLETED, in exactly one append
      const done = await world.run(["done", taskId, "--json"])
      expect(done.code, done.stdout + done.stderr).toBe(0)
      expect(done.json).toMatchObject({ ok: true, taskId, state: "COMPLETED", reconciled: false })
      const log = await events(world, taskId)
      expect(log.length).toBe(beforeVerify.length + 5)
      const completion = completionOf(log)!
      expect(completion.map((r) => r.type)).toEqual(completionTypes)
      expect(log.filter((r) => r.operationId === completion[0]!.operationId)).toHaveLength(4)
      expect(completion.at(-1)!.lsn).toBe(done.json.completedLsn)
      expect(log.at(-1)!.lsn).toBe(done.json.completedLsn)
      expect(completion[1]!.event.verdicts.map((v: { acId: string; verdict: string; verifier: { id: string } }) => [v.acId, v.verdict, v.verifier.id])).toEqual([
        ["AC-001", "PASS", approverId],
        ["AC-002", "PASS", approverId]
      ])
      expect(completion[2]!.event).toMatchObject({ kind: "terminal", runId: done.json.runId })
      expect((await leaseOf(world, taskId)).status).toBe("free")
      expect((await status(world, taskId)).state).toBe("COMPLETED")

      // done again: confirms, writes nothing
      const again = await world.run(["done", taskId, "--json"])
      expect(again.code, again.stdout + again.stderr).toBe(0)
      expect(again.json).toMatchObject({ ok: true, state: "COMPLETED", reconciled: true, completedLsn: null })
      expect((await events(world, taskId)).length).toBe(log.length)

      // the projections name the verdicts
      const dir = projectionDir(world, taskId)
      expect(done.json.projection).toBe(dir)
      const verification = fs.readFileSync(path.join(dir, "verification.md"), "utf8")
      expect(verification).toContain(`- Task: ${taskId} (COMPLETED)`)
      expect(verification).toContain(`| AC-001 | yes | PASS | user:${approverId} |`)
      expect(verification).toContain(`| AC-002 | yes | PASS | user:${approverId} |`)
      expect(verification).toContain("JUnit reports/junit.xml: 2 passed, 0 failed")
      const runMd = fs.readFileSync(path.join(dir, "run.md"), "utf8")
      expect(runMd).toContain(`- Task: ${taskId} (COMPLETED)`)
      expect(runMd).toContain("## fix-sum — Step fix-sum: Succeeded")

      // evidence: the verdicts that count and their records; bodies only with --show-output
      const shown = await world.run(["evidence", taskId, "--json"])
      expect(shown.code, shown.stderr).toBe(0)
      expect(shown.json).toMatchObject({ taskId, state: "COMPLETED", runId: done.json.runId })
      expect(shown.json.bodies).toBeUndefined()
      const evidenced = shown.json.criteria as ReadonlyArray<{
        acId: string
        counted: { verdict: string; verifier: { id: string }; evidenceRefs: ReadonlyArray<string> }
        verdicts: ReadonlyArray<{ evidence: ReadonlyArray<{ ref: string; record: { _tag: string } & Record<string, unknown> }> }>
      }>
      expect(evidenced.map((c) => [c.acId, c.counted.verdict, c.counted.verifier.id, c.verdicts.length])).toEqual([
        ["AC-001", "PASS", approverId, 1],
        ["AC-002", "PASS", approverId, 1]
      ])
      expect(evidenced.map((c) => c.verdicts[0]!.evidence.map((e) => e.record._tag))).toEqual([["command", "junit"], ["command", "artifact"]])
      expect(evidenced[0]!.counted.evidenceRefs).toEqual(criteria[0]!.evidenceRefs)
      const [command, junit] = evidenced[0]!.verdicts[0]!.evidence.map((e) => e.record)
      expect(command).toMatchObject({ command: testCommand, exitCode: 0, timedOut: false, notStarted: null })
      expect(junit).toMatchObject({ report: "reports/junit.xml", counts: { passed: 2, failed: 0, errored: 0, skipped: 0 }, problem: null })

      const withOutput = await world.run(["evidence", taskId, "--ac", "AC-001", "--show-output", "--json"])
      expect(withOutput.code, withOutput.stderr).toBe(0)
      expect(withOutput.json.criteria.map((c: { acId: string }) => c.acId)).toEqual(["AC-001"])
      expect(Object.keys(withOutput.json.bodies).sort()).toEqual([command!["stdoutRef"], junit!["reportRef"]].sort())
      expect(withOutput.json.bodies[command!["stdoutRef"] as string].text).toContain("adds two numbers")
      expect(withOutput.json.bodies[junit!["reportRef"] as string].text).toContain("<testsuites")
      expect(withOutput.json.bodies[junit!["reportRef"] as string].text).toContain("adds a negative number")
      const text = await world.run(["evidence", taskId, "--ac", "AC-001", "--show-output"])
      expect(text.code, text.stderr).toBe(0)
      expect(text.stdout).toContain("AC-001: PASS — The sum test passes")
      expect(text.stdout).toMatch(/--- reports\/junit\.xml \(\d+ bytes\) ---/)
      expect((await events(world, taskId)).length).toBe(log.length)

      const checked = await checkLog(world, taskId)
      expect(checked.problems).toEqual([])
      expect(checked.state).toBe("COMPLETED")
    })

    anyEngine("a failing criterion holds completion: REVISE sends the step behind it back to RUNNING with a successor; revised, it completes", async () => {
      const world = await makeWorld(engine)
      await addSumModule(world)
      // the step applies the agent's draft, kept outside the repository; the first draft still subtracts
      const draft = world.file("sum-draft.mjs", "export const sum = (a, b) => a - b\n")
      const plan = planWith([{ id: "fix-sum", acRefs: ["AC-001"], command: `cp ${JSON.stringify(draft)} src/sum.mjs` }])
      const taskId = await toPlanApproved(world, "Sum still subtracts", specWith([sumTestAc], sumPaths), plan)
      await runToVerifying(world, taskId)

      const verified = await world.verify(taskId)
      expect(verified.code, verified.stdout + verified.stderr).toBe(3)
      expect(verified.json).toMatchObject({ outcome: "REVISE", recorded: true, state: "RUNNING", stepsToRevise: ["fix-sum"] })
      const [criterion] = verified.json.criteria
      expect(criterion.verdict).toBe("FAIL")
      expect(criterion.judgements.map((j: { verifier: string; verdict: string; reason: string }) => [j.verifier, j.verdict])).toEqual([
        ["command", "FAIL"],
        ["junit", "FAIL"]
      ])
      expect(criterion.judgements[0].reason).toBe("exit 1, expected 0.")
      const blocker = verified.json.blocker
      expect(blocker).toMatchObject({ category: "verification_failed", owner: "agent", lastEvidence: criterion.evidenceRefs })
      expect(blocker.requiredAction).toContain(`AC-001 failed (see ratchet evidence ${taskId})`)
      expect(blocker.requiredAction).toContain("Revise the work of fix-sum")
      expect(blocker.requiredAction).toContain(`then: ratchet run ${taskId}`)

      // one append: the pass, the block naming the failure, the way back to RUNNING, the successor
      const log = await events(world, taskId)
      const last = appendsOf(log).at(-1)!
      expect(last.map((r) => r.type)).toEqual(["VerificationRecorded", "TaskBlocked", "TaskUnblocked", "SuccessorGranted", "AttemptScheduled"])
      expect(last[0]!.event.outcome).toBe("REVISE")
      expect(last[1]!.event).toMatchObject({ from: "VERIFYING", blocker: { category: "verification_failed" } })
      expect(last[2]!.event.to).toBe("RUNNING")
      expect(last[4]!.event).toMatchObject({ stepId: "fix-sum", attempt: 2 })
      const view = await status(world, taskId)
      expect(view.state).toBe("RUNNING")
      expect(view.blockers).toEqual([])

      // not verifying any more: done and verify are refused with the next step, there is nothing to unblock
      const done = await world.run(["done", taskId, "--json"])
      expect(done.code).toBe(2)
      expect(done.json.error).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", code: "forbidden_transition", state: "RUNNING" })
      expect(done.json.error.action).toBe(`Let the run finish its steps: ratchet run ${taskId}`)
      const again = await world.verify(taskId)
      expect(again.code).toBe(2)
      expect(again.json.error).toMatchObject({ command: "Verify", state: "RUNNING" })
      const unblock = await world.run(["unblock", taskId, "--to", "VERIFYING", "--resolution", "try again", "--json"])
      expect(unblock.code).toBe(2)
      expect((await events(world, taskId)).length).toBe(log.length)

      // the agent revises its draft; the run executes the successor; a new episode is verified
      fs.writeFileSync(draft, "export const sum = (a, b) => a + b\n")
      await runToVerifying(world, taskId)
      const revised = await events(world, taskId)
      expect(revised.filter((r) => r.type === "AttemptTransitioned").map((r) => `${r.event.stepId}#${r.event.attempt}:${r.event.to}`)).toEqual([
        "fix-sum#1:Running",
        "fix-sum#1:Succeeded",
        "fix-sum#2:Running",
        "fix-sum#2:Succeeded"
      ])
      const passed = await world.verify(taskId)
      expect(passed.code, passed.stdout + passed.stderr).toBe(0)
      expect(passed.json.outcome).toBe("APPROVED")
      expect(passed.json.snapshotLsn).toBeGreaterThan(verified.json.snapshotLsn)
      // only this episode's verdicts count: the FAIL belongs to the earlier one
      const shown = await world.run(["evidence", taskId, "--json"])
      expect(shown.json.criteria[0].verdicts.map((v: { verdict: { verdict: string } }) => v.verdict.verdict)).toEqual(["PASS"])
      await completes(world, taskId)
    })

    anyEngine("a revision that leaves the tree as it was fails the same way: BLOCKED no_progress, for a reopen", async () => {
      const world = await makeWorld(engine)
      await addSumModule(world)
      // The step changes nothing: its successor cannot change the outcome either.
      const plan = planWith([{ id: "check-sum", acRefs: ["AC-001"], command: "node --version" }])
      const taskId = await toPlanApproved(world, "No progress", specWith([sumTestAc], sumPaths), plan)
      await runToVerifying(world, taskId)
      const first = await world.verify(taskId)
      expect(first.json).toMatchObject({ outcome: "REVISE", state: "RUNNING", stepsToRevise: ["check-sum"] })
      await runToVerifying(world, taskId)
      const second = await world.verify(taskId)
      expect(second.code, second.stdout + second.stderr).toBe(3)
      expect(second.json).toMatchObject({ outcome: "REVISE", state: "BLOCKED" })
      expect(second.json.blocker.category).toBe("no_progress")
      expect(second.json.blocker.requiredAction).toContain(`ratchet reopen ${taskId}`)
      // the second episode's successors were not granted: one revision, then the block
      const log = await events(world, taskId)
      expect(log.filter((r) => r.type === "SuccessorGranted")).toHaveLength(1)
      const toRunning = await world.run(["unblock", taskId, "--to", "RUNNING", "--resolution", "again", "--json"])
      expect(toRunning.code).toBe(3)
      expect(toRunning.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["retry_budget_spent"])
      expect((await checkLog(world, taskId)).problems).toEqual([])
    })

    anyEngine("a failing criterion with the retry budget spent BLOCKS for a reopen: done is refused, neither RUNNING nor VERIFYING may resume", async () => {
      const world = await makeWorld(engine)
      await addSumModule(world)
      const plan = planWith([{ id: "check-sum", acRefs: ["AC-001"], command: "node --version" }])
      const taskId = await toPlanApproved(world, "No budget left", specWith([sumTestAc], { ...sumPaths, maxSuccessors: 0 }), plan)
      await runToVerifying(world, taskId)

      const verified = await world.verify(taskId)
      expect(verified.code, verified.stdout + verified.stderr).toBe(3)
      expect(verified.json).toMatchObject({ outcome: "REVISE", recorded: true, state: "BLOCKED", stepsToRevise: ["check-sum"] })
      expect(verified.json.criteria[0].verdict).toBe("FAIL")
      const log = await events(world, taskId)
      const last = appendsOf(log).at(-1)!
      expect(last.map((r) => r.type)).toEqual(["VerificationRecorded", "TaskBlocked"])
      const recordedBlocker = last[1]!.event.blocker
      expect(recordedBlocker.category).toBe("retry_budget_spent")
      expect(recordedBlocker.requiredAction).toContain(`ratchet reopen ${taskId}`)
      // what verify reports is what it recorded
      expect(verified.json.blocker).toEqual(recordedBlocker)
      const view = await status(world, taskId)
      expect(view.state).toBe("BLOCKED")

      const done = await world.run(["done", taskId, "--json"])
      expect(done.code).toBe(2)
      expect(done.json.error).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", state: "BLOCKED" })
      expect(done.json.error.action).toContain(`ratchet unblock ${taskId} --to RUNNING|VERIFYING`)
      const toRunning = await world.run(["unblock", taskId, "--to", "RUNNING", "--resolution", "again", "--json"])
      expect(toRunning.code).toBe(3)
      expect(toRunning.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["retry_budget_spent"])
      // verifying the same failing code again is not a way around the budget
      const toVerifying = await world.run(["unblock", taskId, "--to", "VERIFYING", "--resolution", "verify again", "--json"])
      expect(toVerifying.code, toVerifying.stdout).toBe(3)
      expect(toVerifying.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["retry_budget_spent"])
      expect((await events(world, taskId)).length).toBe(log.length)
      expect(completionOf(await events(world, taskId))).toBeNull()
      expect((await checkLog(world, taskId)).problems).toEqual([])
    })

    anyEngine("a check that cannot start is NOT_RUN, one that times out INDETERMINATE, never FAIL: BLOCKED on missing evidence", async () => {
      const world = await makeWorld(engine)
      const spec = specWith([
        acYaml("AC-001", "The checker runs", ["command: this-command-does-not-exist-xyz"]),
        acYaml("AC-002", "The slow check finishes", [`command: "sleep 30"`, "timeoutSeconds: 1"])
      ])
      const taskId = await toPlanApproved(world, "Checks that do not conclude", spec, planWith([{ id: "noop", acRefs: ["AC-001", "AC-002"], command: "node --version" }]))
      await runToVerifying(world, taskId)

      const verified = await world.verify(taskId)
      expect(verified.code, verified.stdout + verified.stderr).toBe(3)
      expect(verified.json).toMatchObject({ outcome: "BLOCKED", recorded: true, state: "BLOCKED", stepsToRevise: [] })
      const criteria = verified.json.criteria as ReadonlyArray<{ acId: string; verdict: string; judgements: ReadonlyArray<{ verdict: string; reason: string }> }>
      expect(criteria.map((c) => [c.acId, c.verdict])).toEqual([["AC-001", "NOT_RUN"], ["AC-002", "INDETERMINATE"]])
      expect(criteria.flatMap((c) => c.judgements.map((j) => j.verdict))).not.toContain("FAIL")
      expect(criteria[0]!.judgements[0]!.reason).toContain("exit 127: command not found")
      expect(criteria[1]!.judgements[0]!.reason).toContain("did not finish within 1 s")
      expect(verified.json.gate.reasons).toEqual([
        { code: "ac_not_passed", message: "AC-001 was NOT_RUN: its check could not be executed." },
        { code: "ac_not_passed", message: "AC-002 is INDETERMINATE, which never counts as PASS." }
      ])
      expect(verified.json.blocker).toMatchObject({ category: "missing_evidence", owner: "user" })
      expect(verified.json.blocker.requiredAction).toContain(`ratchet unblock ${taskId} --to VERIFYING --resolution`)
      const log = await events(world, taskId)
      expect(log.at(-1)!.event).toMatchObject({ _tag: "TaskBlocked", blocker: { category: "missing_evidence" } })
      expect(log.at(-2)!.event).toMatchObject({ _tag: "VerificationRecorded", outcome: "BLOCKED" })

      // the evidence says what happened: exit 127 for the missing command, a timeout for the slow one
      const shown = await world.run(["evidence", taskId, "--json"])
      expect(shown.code, shown.stderr).toBe(0)
      const records = shown.json.criteria.map((c: { verdicts: ReadonlyArray<{ evidence: ReadonlyArray<{ record: unknown }> }> }) => c.verdicts[0]!.evidence[0]!.record)
      expect(records[0]).toMatchObject({ _tag: "command", command: "this-command-does-not-exist-xyz", exitCode: 127, timedOut: false })
      expect(records[1]).toMatchObject({ _tag: "command", command: "sleep 30", timedOut: true })
      expect(shown.json.criteria.map((c: { counted: { verdict: string } }) => c.counted.verdict)).toEqual(["NOT_RUN", "INDETERMINATE"])

      // missing evidence, unlike a FAIL, may go back to VERIFYING (nothing in the code changed)
      const unblock = await world.run(["unblock", taskId, "--to", "VERIFYING", "--resolution", "the checker is installed now", "--json"])
      expect(unblock.code, unblock.stdout + unblock.stderr).toBe(0)
      expect(unblock.json.state).toBe("VERIFYING")
      expect((await checkLog(world, taskId)).problems).toEqual([])
    })

    anyEngine("the worker cannot verify its own work: its verdicts do not count until an independent verifier's do", async () => {
      const world = await makeWorld(engine)
      const plan = planWith([{ id: "review", acRefs: ["AC-001"], manual: "Review the date test and confirm it is deterministic" }])
      const taskId = await toPlanApproved(world, "Self-verification", specText(), plan)
      const first = await world.run(["run", taskId])
      expect(first.code, first.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("RUNNING")
      const agent = { RATCHET_ACTOR: "agent:claude" }
      const stepDone = await world.run(["step", "done", taskId, "review", "--note", "reviewed", "--json"], { env: agent })
      expect(stepDone.code, stepDone.stdout + stepDone.stderr).toBe(0)
      await runToVerifying(world, taskId)

      // the agent verifies its own work: the check passes, but the verdict does not count; the task
      // stays VERIFYING (HELD), waiting for an independent verdict
      const self = await world.run(["verify", taskId, "--json"], { env: agent })
      expect(self.code, self.stdout + self.stderr).toBe(3)
      expect(self.json).toMatchObject({ outcome: "HELD", recorded: true, state: "VERIFYING", blocker: null })
      expect(self.json.criteria.map((c: { verdict: string; verifier: unknown }) => [c.verdict, c.verifier])).toEqual([["PASS", { kind: "agent", id: "claude" }]])
      expect(self.json.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["self_verification"])
      expect(self.json.workers).toContainEqual({ kind: "agent", id: "claude" })
      const text = await world.run(["verify", taskId], { env: agent })
      expect(text.stdout).toContain("next: verify what is missing as an identity that did none of the run's work (not ")
      const evidence = await world.run(["evidence", taskId, "--json"])
      expect(evidence.json.workers).toContainEqual({ kind: "agent", id: "claude" })
      expect(evidence.json.criteria[0].counted).toBeNull()
      expect(evidence.json.criteria[0].verdicts).toHaveLength(2)

      // done is held on self-verification, and writes nothing
      const held = await world.run(["done", taskId, "--json"])
      expect(held.code).toBe(3)
      expect(held.json.error.gate.reasons).toEqual([{ code: "self_verification", message: "AC-001 was judged only by someone who worked on the run." }])
      expect(held.json.error.gate.requiredActions.map((a: { command: string }) => a.command)).toEqual([`ratchet verify ${taskId} --ac AC-001`])
      expect((await events(world, taskId)).some((r) => r.type === "TaskCompleted" || r.operationId.startsWith("op-done-"))).toBe(false)

      // an independent verifier, the person with their key: APPROVED, and done completes
      const verified = await world.verify(taskId)
      expect(verified.code, verified.stdout + verified.stderr).toBe(0)
      expect(verified.json).toMatchObject({ outcome: "APPROVED", signed: true })
      expect(verified.json.criteria[0].verifier).toEqual({ kind: "user", id: approverId })
      const seen = await completes(world, taskId)
      // the completion rests on the independent verdict
      const counted = (await world.run(["evidence", taskId, "--json"])).json.criteria[0].counted
      expect(counted).toMatchObject({ verdict: "PASS", verifier: { kind: "user", id: approverId } })
      expect(counted.signature).not.toBeNull()
      expect(seen.completion![1]!.event.verdicts.some((v: { verifier: { id: string } }) => v.verifier.id === approverId)).toBe(true)
    })

    anyEngine("starting the run does not make one its worker: the person who started it verifies it, signed; an agent's unsigned verdict never counts", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Run and verify as one", specText(), planWith([{ id: "check", acRefs: ["AC-001"], command: "true" }]))
      const person = { RATCHET_ACTOR: `user:${approverId}` }
      const ran = await world.run(["run", taskId], { env: person })
      expect(ran.code, ran.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      // the runner acted for the person, as a runner: its steps' worker is runner:<id>, not the person
      expect((await events(world, taskId)).filter((r) => r.type === "AttemptTransitioned").map((r) => r.actor)).toEqual([
        { kind: "runner", id: approverId },
        { kind: "runner", id: approverId }
      ])
      // an agent's pass off a terminal is recorded unsigned: it never counts
      const agent = { RATCHET_ACTOR: "agent:claude" }
      const unsigned = await world.run(["verify", taskId, "--json"], { env: agent })
      expect(unsigned.code, unsigned.stdout + unsigned.stderr).toBe(3)
      expect(unsigned.json).toMatchObject({ outcome: "HELD", recorded: true, signed: false, state: "VERIFYING", blocker: null })
      expect(unsigned.json.criteria.map((c: { verdict: string; verifier: unknown }) => [c.verdict, c.verifier])).toEqual([["PASS", { kind: "agent", id: "claude" }]])
      expect(unsigned.json.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["verdict_unsigned"])
      expect(unsigned.json.workers).toEqual([{ kind: "runner", id: approverId }])
      const held = await world.run(["done", taskId, "--json"])
      expect(held.code).toBe(3)
      expect(held.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["verdict_unsigned"])
      // the person who started the run verifies it with their key: APPROVED
      const verified = await world.verify(taskId)
      expect(verified.code, verified.stdout + verified.stderr).toBe(0)
      expect(verified.json).toMatchObject({ outcome: "APPROVED", signed: true })
      expect(verified.json.criteria[0].verifier).toEqual({ kind: "user", id: approverId })
      await completes(world, taskId)
    })

    anyEngine("a person who did a step as themselves cannot verify it, even signed: another approver's verdict counts", async () => {
      const world = await makeWorld(engine)
      const plan = planWith([{ id: "review", acRefs: ["AC-001"], manual: "Review the date test and confirm it is deterministic" }])
      const taskId = await toPlanApproved(world, "A person's own step", specText(), plan)
      expect((await world.run(["run", taskId])).code).toBe(0)
      const stepDone = await world.run(["step", "done", taskId, "review", "--note", "reviewed", "--json"], { env: { RATCHET_ACTOR: `user:${approverId}` } })
      expect(stepDone.code, stepDone.stdout + stepDone.stderr).toBe(0)
      await runToVerifying(world, taskId)

      const self = await world.verify(taskId)
      expect(self.code, self.stdout + self.stderr).toBe(3)
      expect(self.json).toMatchObject({ outcome: "HELD", recorded: true, signed: true, state: "VERIFYING", blocker: null })
      expect(self.json.criteria[0].verifier).toEqual({ kind: "user", id: approverId })
      expect(self.json.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["self_verification"])
      expect(self.json.workers).toContainEqual({ kind: "user", id: approverId })
      const held = await world.run(["done", taskId, "--json"])
      expect(held.code).toBe(3)
      expect(held.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["self_verification"])

      // a second approver, who did none of the work: their signed verdict counts
      const grace = await addApprover(world, "grace")
      const verified = await world.verify(taskId, [], "", grace)
      expect(verified.code, verified.stdout + verified.stderr).toBe(0)
      expect(verified.json).toMatchObject({ outcome: "APPROVED", signed: true })
      expect(verified.json.criteria[0].verifier).toEqual({ kind: "user", id: "grace" })
      const seen = await completes(world, taskId)
      expect(seen.completion![1]!.event.verdicts.map((v: { verifier: { id: string } }) => v.verifier.id)).toEqual(["grace"])
    })

    anyEngine("verifying some criteria leaves the task VERIFYING for the others; done holds until all are verified", async () => {
      const world = await makeWorld(engine)
      const spec = specWith([acYaml("AC-001", "One", ["command: \"true\""]), acYaml("AC-002", "Two", ["command: \"true\""])])
      const taskId = await toPlanApproved(world, "Two criteria", spec, planWith([{ id: "both", acRefs: ["AC-001", "AC-002"], command: "true" }]))
      await runToVerifying(world, taskId)
      const one = await world.verify(taskId, ["--ac", "AC-001"])
      expect(one.code, one.stdout + one.stderr).toBe(3)
      expect(one.json).toMatchObject({ outcome: "HELD", state: "VERIFYING", blocker: null })
      expect(one.json.gate.reasons).toEqual([{ code: "missing_evidence", message: "AC-002 has no verdict." }])
      expect((await world.run(["done", taskId, "--json"])).code).toBe(3)
      const two = await world.verify(taskId, ["--ac", "AC-002"])
      expect(two.code, two.stdout + two.stderr).toBe(0)
      expect(two.json.outcome).toBe("APPROVED")
      await completes(world, taskId)
    })

    anyEngine("a manual criterion with no terminal to ask records no verdict: HELD, the task stays VERIFYING, nothing blocks", async () => {
      const world = await makeWorld(engine)
      const manual = [
        "  - id: AC-001",
        `    outcome: "The date test reads deterministically"`,
        "    required: true",
        "    manual:",
        `      procedure: "Read test/date.test.js and confirm every Date is built from a fixed string"`,
        `      observer: "a reviewer"`
      ].join("\n")
      const taskId = await toPlanApproved(world, "Manual criterion", specWith([manual]), planWith([{ id: "check", acRefs: ["AC-001"], command: "true" }]))
      await runToVerifying(world, taskId)
      const before = (await events(world, taskId)).length
      // the harness has no terminal: nobody can be asked, so there is nothing to record for AC-001
      const pass = await world.run(["verify", taskId, "--json"], { env: ci })
      expect(pass.code, pass.stdout + pass.stderr).toBe(3)
      expect(pass.json).toMatchObject({ outcome: "HELD", recorded: true, state: "VERIFYING", blocker: null })
      expect(pass.json.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["missing_evidence"])
      const recorded = (await events(world, taskId)).slice(before)
      expect(recorded.map((r) => r.type)).toEqual(["VerificationRecorded"])
      expect(recorded[0]!.event.verdicts).toEqual([])
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      expect((await world.run(["evidence", taskId, "--json"])).json.criteria[0]).toMatchObject({ acId: "AC-001", counted: null, verdicts: [] })
    })

    it("done holds on stale evidence when the work tree changed after verification", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Stale evidence", specText(), planWith([{ id: "check", acRefs: ["AC-001"], command: "true" }]))
      await runToVerifying(world, taskId)
      expect((await world.verify(taskId)).json.outcome).toBe("APPROVED")
      fs.writeFileSync(path.join(world.repo, "README.md"), "# changed after verification\n")
      const held = await world.run(["done", taskId, "--json"])
      expect(held.code, held.stdout + held.stderr).toBe(3)
      expect(held.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["stale_evidence"])
      expect(held.json.error.gate.requiredActions.map((a: { command: string }) => a.command)).toEqual([`ratchet verify ${taskId} --ac AC-001`])
      expect((await events(world, taskId)).some((r) => r.type === "TaskCompleted")).toBe(false)
      // verified again on the tree as it is, it would complete...
      expect((await world.verify(taskId)).json.outcome).toBe("APPROVED")
      // ...but a verdict whose evidence record is gone from the blob store rests on nothing
      const shown = await world.run(["evidence", taskId, "--json"])
      const refs: ReadonlyArray<string> = shown.json.criteria[0].counted.evidenceRefs
      expect(refs.length).toBeGreaterThan(0)
      const restore = await engine.removeBlob(world, refs[0]!)
      const unreadable = await world.run(["done", taskId, "--json"])
      expect(unreadable.code, unreadable.stdout + unreadable.stderr).toBe(3)
      expect(unreadable.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["missing_evidence"])
      expect(unreadable.json.error.gate.requiredActions.map((a: { command: string }) => a.command)).toEqual([`ratchet verify ${taskId} --ac AC-001`])
      expect((await events(world, taskId)).some((r) => r.type === "TaskCompleted")).toBe(false)
      await restore()
      await completes(world, taskId)
    })

    anyEngine("refuses bad input with the field or the next step, and writes nothing", async () => {
      const world = await makeWorld(engine)
      const verifying = await toPlanApproved(world, "Verifying", specText())
      await runToVerifying(world, verifying)
      const approved = await toPlanApproved(world, "Approved, not run", specText())
      const logOf = async (taskId: string) => (await events(world, taskId)).length
      const before = [await logOf(verifying), await logOf(approved)]

      for (const ac of ["AC-999", "AC-001,AC-999"]) {
        const unknown = await world.verify(verifying, ["--ac", ac])
        expect(unknown.code).toBe(2)
        expect(unknown.json.error).toMatchObject({ _tag: "@ratchet/controller/InvalidRequest", field: "--ac" })
        expect(unknown.json.error.reason).toBe("AC-999 is not a criterion of the approved spec.")
        expect(unknown.json.error.fix).toContain("AC-001")
      }
      const unknownEvidence = await world.run(["evidence", verifying, "--ac", "AC-999", "--json"])
      expect(unknownEvidence.code).toBe(2)
      expect(unknownEvidence.json.error.field).toBe("--ac")
      // a VERIFYING task not verified yet: nothing counts, nothing recorded
      const none = await world.run(["evidence", verifying, "--json"])
      expect(none.code, none.stderr).toBe(0)
      expect(none.json.criteria).toEqual([expect.objectContaining({ acId: "AC-001", counted: null, verdicts: [] })])

      // verify before the run: refused with the next step
      const early = await world.verify(approved)
      expect(early.code).toBe(2)
      expect(early.json.error).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", command: "Verify", state: "PLAN_APPROVED" })
      expect(early.json.error.action).toBe(`Start the run: ratchet run ${approved}`)
      // evidence of a task that never reached verification
      const noEpisode = await world.run(["evidence", approved, "--json"])
      expect(noEpisode.code).toBe(2)
      expect(noEpisode.json.error.reason).toContain("has no run yet")
      expect(noEpisode.json.error.fix).toContain(`ratchet run ${approved}`)
      const doneEarly = await world.run(["done", approved, "--json"])
      expect(doneEarly.code).toBe(2)
      expect(doneEarly.json.error).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", command: "Complete", state: "PLAN_APPROVED" })
      expect(doneEarly.json.error.action).toBe(`Start the run: ratchet run ${approved}`)

      // an unknown task
      for (const args of [["done"], ["verify"], ["evidence"]]) {
        const unknown = await world.run([...args, "t-00000000", "--json"])
        expect(unknown.code, `${args[0]}: ${unknown.stdout}`).toBe(2)
        expect(unknown.json.error._tag).toBe("@ratchet/controller/TaskNotFound")
      }
      // a mistyped fault point is refused rather than silently testing nothing
      const typo = await world.run(["done", verifying, "--json"], { env: { RATCHET_FAULT: "done:after-comit" } })
      expect(typo.code, typo.stdout).toBe(2)
      expect(typo.json.error).toMatchObject({ _tag: "@ratchet/controller/InvalidRequest", field: "RATCHET_FAULT" })
      expect(typo.json.error.fix).toContain("done:after-commit")
      expect([await logOf(verifying), await logOf(approved)]).toEqual(before)
      expect((await status(world, verifying)).state).toBe("VERIFYING")
    })

    it("done killed after writing the projections leaves the task VERIFYING with its lease free; done again completes", async () => {
      const world = await makeWorld(engine)
      const taskId = await approvedTask(world, "Killed before the commit")
      const before = await expectUncompleted(world, taskId)
      const killed = await startCli(world, ["done", taskId, "--json"], { RATCHET_FAULT: "done:after-projection" }).ended
      expect(killed.signal, killed.stderr).toBe("SIGKILL")
      expect(killed.code).toBeNull()
      expect(killed.stdout).toBe("")
      // the projections were written (still VERIFYING); the store holds nothing of the completion
      expect(fs.readFileSync(path.join(projectionDir(world, taskId), "verification.md"), "utf8")).toContain(`- Task: ${taskId} (VERIFYING)`)
      const after = await expectUncompleted(world, taskId)
      expect(after.log.length).toBe(before.log.length)
      expect(after.lease.epoch).toBe(before.lease.epoch)
      await completes(world, taskId)
    })

    it("done killed right after its commit leaves the task COMPLETED with its lease released; done again confirms and writes nothing", async () => {
      const world = await makeWorld(engine)
      const taskId = await approvedTask(world, "Killed after the commit")
      const before = await expectUncompleted(world, taskId)
      const killed = await startCli(world, ["done", taskId, "--json"], { RATCHET_FAULT: "done:after-commit" }).ended
      expect(killed.signal, killed.stderr).toBe("SIGKILL")
      expect(killed.stdout).toBe("")
      const after = await observe(world, taskId)
      expect(after.state).toBe("COMPLETED")
      expect(after.lease.status).toBe("free")
      expect(after.terminal).toBe(true)
      expect(after.completion).not.toBeNull()
      expect(after.log.length).toBe(before.log.length + 4)
      // the final projections were not rewritten yet: they still say VERIFYING
      const verification = path.join(projectionDir(world, taskId), "verification.md")
      expect(fs.readFileSync(verification, "utf8")).toContain(`- Task: ${taskId} (VERIFYING)`)

      const again = await world.run(["done", taskId, "--json"])
      expect(again.code, again.stdout + again.stderr).toBe(0)
      expect(again.json).toMatchObject({ state: "COMPLETED", reconciled: true, completedLsn: null })
      expect((await events(world, taskId)).length).toBe(after.log.length)
      expect(fs.readFileSync(verification, "utf8")).toContain(`- Task: ${taskId} (COMPLETED)`)
      expect((await checkLog(world, taskId)).problems).toEqual([])
    })

    it("a failure inside the completion's transaction rolls all of it back: VERIFYING, lease free; done again completes", async () => {
      const world = await makeWorld(engine)
      const taskId = await approvedTask(world, "A failing store")
      const before = await expectUncompleted(world, taskId)
      await installFault(world, "fail")
      const failed = await world.run(["done", taskId, "--json"])
      expect(failed.code, failed.stdout).not.toBe(0)
      expect(failed.code).not.toBe(3)
      expect(failed.stdout + failed.stderr).toContain("forced failure")
      const after = await expectUncompleted(world, taskId)
      expect(after.log.length).toBe(before.log.length)
      // the lease taken in the transaction was rolled back with it
      expect(after.lease.epoch).toBe(before.lease.epoch)
      await dropFault(world)
      await completes(world, taskId)
    })

    it("done killed inside its transaction, after the terminal checkpoint row, commits nothing: VERIFYING, lease free; done again completes", async () => {
      const world = await makeWorld(engine)
      const taskId = await approvedTask(world, "Killed inside the transaction")
      const before = await expectUncompleted(world, taskId)
      await installFault(world, "stall")
      // done writes the projections just before its transaction: remove verify's to see done's
      const verification = path.join(projectionDir(world, taskId), "verification.md")
      fs.rmSync(verification)
      const started = startCli(world, ["done", taskId, "--json"])
      await until("done to write the projections", () => fs.existsSync(verification))
      await until("done to be inside its append", () => insideAppend(world))
      await sleep(1_500)
      // still inside it: the trigger holds the transaction open
      expect(await insideAppend(world)).toBe(true)
      expect(started.child.exitCode).toBeNull()
      started.child.kill("SIGKILL")
      const killed = await started.ended
      expect(killed.signal).toBe("SIGKILL")
      expect(killed.stdout).toBe("")

      const after = await expectUncompleted(world, taskId)
      expect(after.log.length).toBe(before.log.length)
      expect(after.lease.epoch).toBe(before.lease.epoch)
      // PostgreSQL ends the dead client's transaction when its statement returns (the sleep ends):
      // it rolls back, and nothing of it ever shows
      await until("the killed transaction to end", async () => !(await insideAppend(world)), 90_000)
      const settled = await expectUncompleted(world, taskId)
      expect(settled.log.length).toBe(before.log.length)
      await dropFault(world)
      await completes(world, taskId)
    })
  })
}
