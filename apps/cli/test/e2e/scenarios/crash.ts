/**
 * The crash matrix: the runner killed with SIGKILL (by itself, `RATCHET_FAULT=<point>`) at every
 * durable boundary, against a plain step, an idempotent step and a probed step, each of which
 * appends one line to a marker file outside the repository as its side effect. Then a new runner
 * takes the dead one's lease over after its grace, recovers and finishes (a person settles an
 * Indeterminate step on a terminal, telling the truth the marker shows).
 *
 * On PostgreSQL the boundaries are tried against the plain step only (ADR 0046).
 *
 * For every case it asserts: recovery lost no committed event (the log as the dead runner left it
 * is a prefix of the log after recovery, event for event); a plain step's marker never has two lines (a non-idempotent effect is never run
 * twice); an attempt is Indeterminate exactly when an intent was dispatched, left unresolved, and
 * neither a probe nor idempotence applied; the task reaches VERIFYING; and the log folds cleanly
 * (check-log.ts: decodes, replays, keeps the attempt and intent machines, equals its read models).
 * While the dead runner's lease is held, `status` names `ratchet run <task> --takeover` and the
 * moment its grace ends.
 *
 * And the runner killed after the task entered VERIFYING but before its lease's release: every other
 * command is refused pointing to `ratchet run <task> --takeover`, which takes the lease over and
 * releases it, running nothing, so verification goes on (ADR 0022); and the same after a run that
 * BLOCKED (`task-blocked`), where the person's unblock goes on after it.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import pg from "pg"
import {
  approverId,
  checkLog,
  confirmationOf,
  createTask,
  type Engine,
  events,
  gone,
  makeWorld,
  onThisEngine,
  passphrase,
  personalAct,
  removeWorlds,
  specText,
  status,
  toPlanApproved,
  type World
} from "../harness.js"
import { commandStep, planOf, transitionsOf } from "./run.js"

/**
 * Where the runner dies: each fault point of a one-step plan, and `merged`: a two-step plan whose
 * runner dies right after the first step's end, which was written with the effect step's start and
 * dispatch in one transaction (ADR 0020), so the effect step is dispatched and never started.
 */
const points = ["step-started", "child-started", "child-exited", "step-finished", "merged"] as const

type Point = (typeof points)[number]
type Kind = "plain" | "idempotent" | "probed"

/** Whether the runner had dispatched the effect's intent and not resolved it when it died at `point`. */
const dispatchedUnresolved = (point: Point) => point !== "step-finished"

/** Whether the side effect ran (to its end: the child survives its runner) before recovery. */
const effectRan = (point: Point) => point !== "step-started" && point !== "merged"

/** Short leases, so a takeover is allowed a moment after the runner died. */
const leaseEnv = { RATCHET_LEASE_HEARTBEAT_MS: "100", RATCHET_LEASE_GRACE_MS: "300" }

const lines = (file: string): number => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "").length : 0)

/**
 * A person settles the Indeterminate step on a terminal, typing the digest of their decision and
 * their approval key's passphrase: the settlement is recorded as theirs, signed.
 */
const settle = async (world: World, taskId: string, stepId: string, outcome: "succeeded" | "failed") => {
  const log = await events(world, taskId)
  const intentId = log.filter((r) => r.type === "IntentRecorded" && r.event.stepId === stepId).at(-1)!.event.intentId as string
  const digest = `sha256:${createHash("sha256").update(JSON.stringify({ resolution: { taskId, intentId, outcome } })).digest("hex")}`
  const result = await world.tty(["unblock", taskId, "--resolve", stepId, outcome, "--json"], `${confirmationOf(digest)}\n${passphrase}\n`, leaseEnv)
  if (result.code !== 0) throw new Error(`settle exited ${result.code}: ${result.stdout}`)
  const settled = (await events(world, taskId)).find((r) => r.type === "IntentSettled" && r.event.intentId === intentId)!
  expect(settled.actor).toEqual({ kind: "user", id: approverId })
  expect(settled.event.receipt).toMatchObject({ subject: "resolution", digest, channel: "terminal", actor: { kind: "user", id: approverId } })
  expect(settled.event.receipt.signature).not.toBeNull()
}

export const crashMatrix = (engine: Engine): void => {
  afterAll(removeWorlds)

  // Every boundary on every engine (where each commits is the engine's); the step kinds' recovery
  // rules (re-run, probe, settle) are the runner's, so past SQLite the plain step alone, unless
  // RATCHET_E2E_EVERY_ENGINE=1 (ADR 0046).
  const kinds: ReadonlyArray<Kind> = onThisEngine(engine) ? ["plain", "idempotent", "probed"] : ["plain"]
  const cases = points.flatMap((point) => kinds.map((kind) => ({ point, kind })))

  // Each test's bound counts from its start, and its start is one of several at once (vitest's
  // maxConcurrency) beside the other files: a loaded CI machine took over 300 s for one.
  describe("the crash matrix", { concurrent: true, timeout: 600_000 }, () => {
    it.each(cases)("SIGKILL at $point, $kind step: recovered without losing or repeating anything", async ({ point, kind }: { point: Point; kind: Kind }) => {
      const world = await makeWorld(engine)
      const marker = path.join(world.root, "marker.txt")
      // It prints before and after its effect and takes a moment: an orphaned command must neither
      // die of its runner's death (SIGPIPE) nor be judged by recovery before it has ended.
      const command = `echo starting; sleep 1.5; echo ran >> ${JSON.stringify(marker)}; echo finished`
      const step = commandStep("effect", command, {
        ...(kind === "idempotent" ? { idempotent: true } : {}),
        ...(kind === "probed" ? { probe: `test -s ${JSON.stringify(marker)}` } : {})
      })
      const plan = point === "merged" ? planOf([commandStep("first", "echo first"), `${step}\n    needs: [first]`]) : planOf([step])
      const taskId = await toPlanApproved(world, `Crash at ${point} (${kind})`, specText(), plan)

      // 1. the runner dies at the point (the CLI reports the runner's death as exit 1)
      const crashed = await world.run(["run", taskId], { env: { ...leaseEnv, RATCHET_FAULT: point === "merged" ? "step-finished" : point } })
      expect(crashed.code, crashed.stderr).toBe(1)
      // where it was started, the child outlives its runner; recovery waits for it to end
      if (!effectRan(point)) expect(lines(marker)).toBe(0)
      const before = await events(world, taskId)
      // status names the one command that continues, and when it becomes allowed
      const stuck = await status(world, taskId)
      expect(stuck.lease.status).not.toBe("free")
      expect(stuck.lease.takeover).toMatchObject({ command: `ratchet run ${taskId} --takeover`, allowedAfter: stuck.lease.deadline })
      expect(stuck.next).toContain(`ratchet run ${taskId} --takeover`)
      expect(stuck.next).toContain(new Date(stuck.lease.deadline).toISOString().replace(/\.\d{3}Z$/, "Z"))

      // 2. a plain run is refused while the dead runner's lease is held; --takeover after the grace
      const refused = await world.run(["run", taskId, "--json"], { env: leaseEnv })
      expect(refused.code).toBe(4)
      await new Promise((resolve) => setTimeout(resolve, 400))
      const recovered = await world.run(["run", taskId, "--takeover", "--json"], { env: leaseEnv })
      const result = JSON.parse(recovered.stdout.trim().split("\n").at(-1)!)
      const indeterminateExpected = dispatchedUnresolved(point) && kind === "plain"
      if (indeterminateExpected) {
        expect(recovered.code, recovered.stdout).toBe(3)
        expect(result.outcomes[0]).toMatchObject({ state: "BLOCKED", blocker: { category: "decision_needed" } })
        expect(result.outcomes[0].blocker.requiredAction).toContain(`ratchet unblock ${taskId} --resolve effect succeeded|failed`)
        // unblocking around the unknown step is refused: it must be settled first
        const around = await world.run(["unblock", taskId, "--to", "RUNNING", "--resolution", "just go on", "--json"], { env: leaseEnv })
        expect(around.code).toBe(2)
        expect(around.json.error.fix).toContain(`ratchet unblock ${taskId} --resolve effect succeeded|failed`)
        // nor may a rewind go back past it before it is judged
        const runStart = before.find((r) => r.type === "CheckpointRecorded" && r.event.kind === "run_start")!
        const back = await world.tty(["rewind", taskId, "--to", String(runStart.lsn), "--json"], "", leaseEnv)
        expect(back.code).toBe(2)
        expect(back.json.error.fix).toContain("--resolve effect")
        // nor is it settled without the person's approval key: unsigned, it is refused and writes nothing
        const blocked = (await events(world, taskId)).length
        const noKey = { ...leaseEnv, RATCHET_APPROVER_KEY: path.join(world.root, "no-key.json") }
        const unsigned = await world.tty(["unblock", taskId, "--resolve", "effect", "succeeded", "--json"], "", noKey)
        expect(unsigned.code, unsigned.stdout).toBe(2)
        expect(unsigned.json.error.message).toContain("carries no approver's signature")
        expect(await events(world, taskId)).toHaveLength(blocked)
        // the person looks at the marker and tells the truth
        await settle(world, taskId, "effect", effectRan(point) ? "succeeded" : "failed")
        const finished = await world.run(["run", taskId], { env: leaseEnv })
        expect(finished.code, finished.stderr).toBe(0)
      } else {
        expect(recovered.code, recovered.stdout + recovered.stderr).toBe(0)
      }

      // 3. the end: VERIFYING, nothing lost, the effect never repeated unless idempotent
      const after = await events(world, taskId)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      expect(after.slice(0, before.length).map((r) => [r.lsn, r.type])).toEqual(before.map((r) => [r.lsn, r.type]))
      const transitions = transitionsOf(after)
      expect(transitions.some((t) => t.endsWith("→Indeterminate"))).toBe(indeterminateExpected)
      if (kind === "idempotent" && dispatchedUnresolved(point)) {
        // re-run by a successor: the effect may repeat (that is what idempotent allows)
        expect(lines(marker)).toBe(effectRan(point) ? 2 : 1)
        expect(transitions).toContain("effect#1:Running→Failed")
      } else {
        expect(lines(marker)).toBe(1)
      }
      if (point === "merged") {
        // the first step's end and the effect's start and dispatch were one transaction
        const effectIntent = before.find((r) => r.type === "IntentRecorded" && r.event.stepId === "effect")!.event.intentId
        const dispatched = before.find((r) => r.type === "IntentDispatched" && r.event.intentId === effectIntent)!
        const firstEnd = before.find((r) => r.type === "AttemptTransitioned" && r.event.stepId === "first" && r.event.to === "Succeeded")!
        expect(dispatched.operationId).toBe(firstEnd.operationId)
        expect(before.at(-1)!.type).toBe("IntentDispatched")
      }
      if (kind === "probed" && dispatchedUnresolved(point)) {
        expect(transitions).toContain(effectRan(point) ? "effect#1:Running→Succeeded" : "effect#1:Running→Failed")
      }
      const checked = await checkLog(world, taskId)
      expect(checked.problems).toEqual([])
      expect(checked).toMatchObject({ ok: true, state: "VERIFYING" })
    })
  })

  describe("a runner killed after its run stopped, before its lease's release", { concurrent: true, timeout: 600_000 }, () => {
    it("status names ratchet run --takeover and when it is allowed; that one command hands the task on to verification", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Crash after entering verification", specText(), planOf([commandStep("build", "echo built")]))

      // 1. the runner dies right after the task entered VERIFYING, its lease still held
      const crashed = await world.run(["run", taskId], { env: { ...leaseEnv, RATCHET_FAULT: "verification-entered" } })
      expect(crashed.code, crashed.stderr).toBe(1)
      const before = await events(world, taskId)
      expect(before.at(-1)!.type).toBe("VerificationStarted")
      const stuck = await status(world, taskId)
      expect(stuck).toMatchObject({ state: "VERIFYING", lease: { holder: { host: "runner" } } })
      expect(stuck.lease.status).not.toBe("free")
      expect(stuck.lease.takeover).toMatchObject({ command: `ratchet run ${taskId} --takeover`, allowedAfter: stuck.lease.deadline })
      expect(stuck.next).toContain(`ratchet run ${taskId} --takeover`)
      expect(stuck.next).not.toContain("ratchet verify")
      const text = await world.run(["status", taskId], { env: leaseEnv })
      expect(text.stdout).toContain(`ratchet run ${taskId} --takeover`)

      // 2. everything else is refused and points to that command; nothing is written
      const verify = await world.run(["verify", taskId, "--json"], { env: { ...leaseEnv, RATCHET_ACTOR: "verifier:ci" } })
      expect(verify.code).toBe(4)
      expect(verify.json.error).toMatchObject({ _tag: "@ratchet/controller/LeaseConflict", held: true, takeover: `ratchet run ${taskId} --takeover` })
      expect(verify.json.error.message).toContain(`ratchet run ${taskId} --takeover`)
      const plain = await world.run(["run", taskId, "--json"], { env: leaseEnv })
      expect(plain.code).toBe(2)
      expect(plain.json.error.action).toContain(`ratchet run ${taskId} --takeover`)
      expect(await events(world, taskId)).toHaveLength(before.length)

      // 3. after the grace, run --takeover takes the lease over and releases it, running nothing
      await new Promise((resolve) => setTimeout(resolve, 400))
      const after = await status(world, taskId)
      expect(after.lease).toMatchObject({ status: "expired", takeover: { allowedNow: true } })
      const taken = await world.run(["run", taskId, "--takeover", "--json"], { env: leaseEnv })
      expect(taken.code, taken.stdout + taken.stderr).toBe(0)
      const result = JSON.parse(taken.stdout.trim().split("\n").at(-1)!)
      expect(result.outcomes[0]).toMatchObject({ state: "VERIFYING", stop: "verifying" })
      expect(result.outcomes[0].message).toContain(`ratchet verify ${taskId}`)
      const handed = await events(world, taskId)
      expect(handed.slice(0, before.length).map((r) => [r.lsn, r.type])).toEqual(before.map((r) => [r.lsn, r.type]))
      expect(handed.slice(before.length).map((r) => r.type)).toEqual(["LeaseTakenOver", "LeaseReleased"])
      const free = await status(world, taskId)
      expect(free).toMatchObject({ state: "VERIFYING", lease: { status: "free", takeover: null } })
      expect(free.next).toContain(`ratchet verify ${taskId}`)

      // 4. verification goes on; a second --takeover finds nothing to take over and writes nothing
      const again = await world.run(["run", taskId, "--takeover", "--json"], { env: leaseEnv })
      expect(again.code).toBe(2)
      expect(again.json.error.reason).toContain("nothing to take over")
      const verified = await world.run(["verify", taskId, "--json"], { env: { ...leaseEnv, RATCHET_ACTOR: "verifier:ci" } })
      expect(verified.code, verified.stdout + verified.stderr).not.toBe(4)
      expect((await events(world, taskId)).slice(handed.length).map((r) => r.type)).toContain("VerificationRecorded")
      const checked = await checkLog(world, taskId)
      expect(checked.problems).toEqual([])
      expect(checked).toMatchObject({ ok: true, state: "VERIFYING" })
    })

    it("the same after a run that BLOCKED: run --takeover hands the task on with the blocker's action, and the unblock goes on", async () => {
      const world = await makeWorld(engine)
      // writes outside the spec's scope (test/**): the run BLOCKs scope_violation
      const taskId = await toPlanApproved(world, "Crash after blocking", specText(), planOf([commandStep("stray", "echo stray > outside.txt")]))
      const crashed = await world.run(["run", taskId], { env: { ...leaseEnv, RATCHET_FAULT: "task-blocked" } })
      expect(crashed.code, crashed.stderr).toBe(1)
      const before = await events(world, taskId)
      expect(before.at(-1)!.type).not.toBe("LeaseReleased")
      const stuck = await status(world, taskId)
      expect(stuck).toMatchObject({ state: "BLOCKED", lease: { holder: { host: "runner" }, takeover: { command: `ratchet run ${taskId} --takeover` } } })
      expect(stuck.next).toContain(`ratchet run ${taskId} --takeover`)
      fs.rmSync(path.join(world.repo, "outside.txt"))
      const unblock = ["unblock", taskId, "--to", "RUNNING", "--resolution", "removed outside.txt", "--json"]
      const refused = await world.run(unblock, { env: leaseEnv })
      expect(refused.code).toBe(4)
      expect(refused.json.error).toMatchObject({ _tag: "@ratchet/controller/LeaseConflict", takeover: `ratchet run ${taskId} --takeover` })
      expect(await events(world, taskId)).toHaveLength(before.length)

      await new Promise((resolve) => setTimeout(resolve, 400))
      const taken = await world.run(["run", taskId, "--takeover", "--json"], { env: leaseEnv })
      expect(taken.code, taken.stdout + taken.stderr).toBe(3)
      const result = JSON.parse(taken.stdout.trim().split("\n").at(-1)!)
      expect(result.outcomes[0]).toMatchObject({ state: "BLOCKED", stop: "blocked", blocker: { category: "scope_violation" } })
      expect(result.outcomes[0].message).toContain(`ratchet unblock ${taskId}`)
      expect((await events(world, taskId)).slice(before.length).map((r) => r.type)).toEqual(["LeaseTakenOver", "LeaseReleased"])
      const free = await status(world, taskId)
      expect(free.lease).toMatchObject({ status: "free", takeover: null })
      expect(free.next).not.toContain("--takeover")
      // the person's unblock, on a terminal with their key, now goes through
      const unblocked = (await personalAct(world, unblock.slice(0, -1), leaseEnv)).result
      expect(unblocked.code, unblocked.stdout).toBe(0)
      const checked = await checkLog(world, taskId)
      expect(checked.problems).toEqual([])
      expect(checked).toMatchObject({ ok: true, state: "RUNNING" })
    })
  })
}

/** How a store loses what it committed: SQLite's WAL removed, cut short or damaged after a crash. */
const walDamages = ["deleted", "truncated", "corrupted"] as const

type WalDamage = (typeof walDamages)[number]

const waitFor = async (what: string, check: () => boolean, ms = 60_000): Promise<void> => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * A plain step whose detached runner is killed (SIGKILL, `child-exited`) after its effect ran and
 * before its end was recorded: the run's commits are then only in SQLite's WAL (a detached runner
 * leaves no other process to checkpoint it). Returns the task, the marker and the store's files.
 */
const crashDetached = async (world: World, goal: string) => {
  const marker = path.join(world.root, "marker.txt")
  const plan = planOf([commandStep("effect", `sleep 0.5; echo ran >> ${JSON.stringify(marker)}`)])
  const taskId = await toPlanApproved(world, goal, specText(), plan)
  const started = await world.run(["run", taskId, "--detach", "--json"], { env: { ...leaseEnv, RATCHET_FAULT: "child-exited" } })
  expect(started.code, started.stdout + started.stderr).toBe(0)
  await waitFor("the runner to die at child-exited", () => gone(started.json.pid as number))
  await waitFor("the effect to run", () => lines(marker) === 1)
  return { taskId, marker }
}

/** Removes, cuts short or damages `wal` as a careless cleanup, a full disk or a bad copy would. */
const damage = (wal: string, how: WalDamage): void => {
  if (how === "deleted") {
    fs.rmSync(wal)
  } else if (how === "truncated") {
    fs.truncateSync(wal, Math.floor(fs.statSync(wal).size / 2))
  } else {
    // Garbage from the middle on: every frame from there fails its checksum, and SQLite ignores it.
    const size = fs.statSync(wal).size
    const fd = fs.openSync(wal, "r+")
    try {
      fs.writeSync(fd, Buffer.alloc(Math.min(4096, size - Math.floor(size / 2)), 0xa5), 0, undefined, Math.floor(size / 2))
    } finally {
      fs.closeSync(fd)
    }
  }
}

/**
 * The store that went back (ADR 0023). On SQLite, the WAL deleted, truncated or damaged after a
 * SIGKILL, and the database deleted or emptied; on PostgreSQL (which has no WAL a person can lose),
 * the schema dropped and created again, as a restore of an older backup or a reset would leave it.
 * Every command refuses with the named loss, nothing runs twice, no database is created again
 * behind the user's back, and `ratchet init --force` is the one deliberate way on.
 */
export const lostStore = (engine: Engine): void => {
  afterAll(removeWorlds)

  describe("a store that went back", { concurrent: true, timeout: 600_000 }, () => {
    if (engine.name === "sqlite") {
      it.each(walDamages)("the WAL %s after a SIGKILL: status and run refuse naming the loss; nothing runs twice", async (how) => {
        const world = await makeWorld(engine)
        const { marker, taskId } = await crashDetached(world, `Lost WAL (${how})`)
        const wal = path.join(world.home, "ratchet.db-wal")
        // The run's commits are in the WAL (the test would prove nothing otherwise).
        expect(fs.statSync(wal).size).toBeGreaterThan(0)
        damage(wal, how)

        const shown = await world.run(["status", taskId, "--json"])
        expect(shown.code, shown.stdout + shown.stderr).toBe(2)
        expect(shown.json.error).toMatchObject({ _tag: "@ratchet/controller/StoreBehind", reason: "behind", mark: { streamId: taskId } })
        expect(shown.json.error.message).toContain("lost committed events")
        expect(shown.json.error.message).toContain(`task ${taskId}`)
        expect(shown.json.error.fix).toContain("ratchet init --force")
        const text = await world.run(["status", taskId])
        expect(text.code).toBe(2)
        expect(text.stderr).toContain("ratchet.db-wal")
        // `run --any` reads nothing before it starts the runner: the runner's own store refuses.
        for (const args of [["run", taskId], ["run", taskId, "--takeover"], ["run", "--any", "--takeover-expired"], ["task", "list"]]) {
          const refused = await world.run([...args, "--json"], { env: leaseEnv })
          expect(refused.code, `${args.join(" ")}: ${refused.stdout}${refused.stderr}`).toBe(2)
        }
        expect(lines(marker)).toBe(1)

        // The deliberate way on: forget the mark; the store is then used as it is, and says so.
        const forced = await world.run(["init", "--force", "--json"])
        expect(forced.code, forced.stdout + forced.stderr).toBe(0)
        expect(forced.json.forgotten).toMatchObject({ streamId: taskId })
        expect((await world.run(["status", taskId, "--json"])).code).toBe(0)
        // ... and a plain init is not a way round it: with nothing lost since, it changes nothing.
        expect((await world.run(["init", "--json"])).json.forgotten).toBeNull()
      })

      it.each(["deleted", "emptied"] as const)("ratchet.db %s: refused, and not created again until init --force", async (how) => {
        const world = await makeWorld(engine)
        const taskId = await createTask(world, `Lost database (${how})`)
        const db = path.join(world.home, "ratchet.db")
        if (how === "deleted") {
          for (const file of [db, `${db}-wal`, `${db}-shm`]) fs.rmSync(file, { force: true })
        } else {
          fs.truncateSync(db, 0)
          for (const file of [`${db}-wal`, `${db}-shm`]) fs.rmSync(file, { force: true })
        }
        for (const args of [["status", taskId], ["task", "list"], ["task", "create", "--goal", "again"], ["init"]]) {
          const refused = await world.run([...args, "--json"])
          expect(refused.code, `${args.join(" ")}: ${refused.stdout}${refused.stderr}`).toBe(2)
          expect(refused.json.error).toMatchObject({ _tag: "@ratchet/controller/StoreBehind", reason: "missing" })
          expect(refused.json.error.message).toContain("It was not created again")
          expect(fs.existsSync(db) ? fs.statSync(db).size : 0).toBe(0)
        }
        const forced = await world.run(["init", "--force", "--json"])
        expect(forced.code, forced.stdout + forced.stderr).toBe(0)
        expect(forced.json.forgotten).toMatchObject({ streamId: taskId })
        expect(fs.statSync(db).size).toBeGreaterThan(0)
        // An empty store now, knowingly: the task is not there.
        expect((await world.run(["status", taskId, "--json"])).code).toBe(2)
        expect((await world.run(["task", "create", "--goal", "again", "--json"])).code).toBe(0)
      })
    }

    it("a crash alone loses nothing: the store is at the mark, and the run goes on", async () => {
      const world = await makeWorld(engine)
      const { marker, taskId } = await crashDetached(world, "A crash, nothing lost")
      expect((await world.run(["status", taskId, "--json"])).code).toBe(0)
      await new Promise((resolve) => setTimeout(resolve, 400))
      const recovered = await world.run(["run", taskId, "--takeover", "--json"], { env: leaseEnv })
      // A plain step that was dispatched and never resolved: Indeterminate, for a person to settle.
      expect(recovered.code, recovered.stdout + recovered.stderr).toBe(3)
      expect(lines(marker)).toBe(1)
    })

    if (engine.name === "postgres") {
      it("the schema dropped and created again (an older backup, a reset): refused naming the loss", async () => {
        const world = await makeWorld(engine)
        const { marker, taskId } = await crashDetached(world, "A store reset")
        const client = new pg.Client({ connectionString: world.env["RATCHET_DATABASE_URL"] })
        await client.connect()
        try {
          await client.query(`DROP SCHEMA "${world.env["RATCHET_DATABASE_SCHEMA"]}" CASCADE`)
        } finally {
          await client.end()
        }
        for (const args of [["status", taskId], ["run", taskId, "--takeover"]]) {
          const refused = await world.run([...args, "--json"], { env: leaseEnv })
          expect(refused.code, `${args.join(" ")}: ${refused.stdout}${refused.stderr}`).toBe(2)
          expect(refused.json.error).toMatchObject({ _tag: "@ratchet/controller/StoreBehind", reason: "behind", foundLsn: null })
        }
        expect(lines(marker)).toBe(1)
      })
    }
  })
}
