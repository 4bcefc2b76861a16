/**
 * Authority an agent cannot forge (issue 25), replayed through the agent's own shell with no hook
 * in the way: everything an agent running as the same OS user can type — a pseudo-terminal from
 * `script`, the digest's characters, a guessed passphrase, a key of its own making, a claimed
 * `RATCHET_ACTOR`, an edited `.ratchet/approvers.json`, a PlanApproved written straight into the
 * store — approves, observes, settles and rewinds nothing, and a task "approved" that way cannot
 * run or complete. The person's key, unlocked with their passphrase, still does all of it.
 */
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import {
  approve,
  bin,
  cliRoot,
  confirmationOf,
  createTask,
  type Engine,
  engineIndependent,
  events,
  exec,
  execTty,
  helper,
  makeWorld,
  passphrase,
  planText,
  removeWorlds,
  specText,
  status,
  toSpecReady,
  type World
} from "../harness.js"

/** `forge.ts`: a PlanApproved written through the store, past the controller and the kernel. */
const forge = async (world: World, taskId: string, kind: "unsigned" | "own-key" | "moved") => {
  const result = await exec(process.execPath, [helper("forge"), world.repo, taskId, kind], {
    cwd: cliRoot,
    env: world.env
  })
  if (result.code !== 0) throw new Error(`forge exited ${result.code}\n${result.stdout}\n${result.stderr}`)
}

/**
 * What an agent with the database's credentials can do: rewrite the project's approvers stream in
 * place, its first entry replaced by `genesis` and every later version deleted, as SQL typed
 * straight into the store (packages/storage/src/Migrations.ts: ratchet_events, ratchet_branches).
 */
const rewriteApprovers = async (world: World, projectId: string, genesis: unknown): Promise<void> => {
  const stream = `approvers.${projectId}`
  const rewrite = (payload: string) => JSON.stringify({ ...JSON.parse(payload), entry: genesis })
  if (world.engine.name === "sqlite") {
    const db = new Database(path.join(world.home, "ratchet.db"))
    try {
      const first = db.prepare("SELECT lsn, payload FROM ratchet_events WHERE stream_id = ? AND version = 1").get(stream) as { lsn: number; payload: string }
      db.prepare("UPDATE ratchet_events SET payload = ? WHERE lsn = ?").run(rewrite(first.payload), first.lsn)
      db.prepare("DELETE FROM ratchet_events WHERE stream_id = ? AND version > 1").run(stream)
      db.prepare("UPDATE ratchet_branches SET version = 1, last_lsn = ? WHERE stream_id = ?").run(first.lsn, stream)
    } finally {
      db.close()
    }
    return
  }
  const schema = world.env["RATCHET_DATABASE_SCHEMA"] ?? ""
  const client = new pg.Client({ connectionString: world.env["RATCHET_DATABASE_URL"] })
  await client.connect()
  try {
    const first = (await client.query<{ lsn: string; payload: string }>(`SELECT lsn, payload FROM "${schema}".ratchet_events WHERE stream_id = $1 AND version = 1`, [stream])).rows[0]!
    await client.query(`UPDATE "${schema}".ratchet_events SET payload = $1 WHERE lsn = $2`, [rewrite(first.payload), first.lsn])
    await client.query(`DELETE FROM "${schema}".ratchet_events WHERE stream_id = $1 AND version > 1`, [stream])
    await client.query(`UPDATE "${schema}".ratchet_branches SET version = 1, last_lsn = $1 WHERE stream_id = $2`, [first.lsn, stream])
  } finally {
    await client.end()
  }
}

/**
 * A genesis entry naming `id` under a key the agent makes at `key`, the way an agent would:
 * `ratchet approver init` on a pseudo-terminal against a scratch SQLite store of its own,
 * which trusts it on first use and writes the entry into the checkout's approvers file (taken
 * away for that, and put back as it was afterwards).
 */
const forgeGenesis = async (world: World, id: string, key: string, secret: string): Promise<unknown> => {
  const file = path.join(world.repo, ".ratchet", "approvers.json")
  const committed = fs.readFileSync(file)
  // Out of the way while the scratch store trusts its first chain (a file naming approvers stops that).
  fs.rmSync(file)
  const scratch = path.join(world.root, "agent-store")
  const env: NodeJS.ProcessEnv = { ...world.env, RATCHET_HOME: scratch, RATCHET_APPROVER_KEY: key }
  delete env["RATCHET_DATABASE_URL"]
  delete env["RATCHET_DATABASE_SCHEMA"]
  const quoted = [process.execPath, bin, "approver", "init", "--id", id, "--kdf-cost", "14", "--json"].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(" ")
  const made = await execTty(quoted, { cwd: world.repo, env, input: `${secret}\n${secret}\n` })
  if (made.code !== 0 || made.json?.registered !== true) throw new Error(`the agent's approver init exited ${made.code}\n${made.stdout}`)
  const genesis = JSON.parse(fs.readFileSync(file, "utf8")).entries[0]
  fs.writeFileSync(file, committed)
  return genesis
}

/** A task at PLAN_READY: brief, spec (approved by the person), preflight, plan proposed. */
const toPlanReady = async (world: World, goal: string): Promise<string> => {
  const taskId = await toSpecReady(world, goal, specText())
  const spec = await approve(world, taskId, "spec")
  expect(spec.code, spec.stdout).toBe(0)
  await world.ok(["preflight", taskId])
  await world.ok(["plan", taskId, "--file", world.file(`${taskId}-plan.yaml`, planText())])
  return taskId
}

/** The plan digest's confirmation, as shown by `status`. */
const planConfirmation = async (world: World, taskId: string): Promise<string> =>
  confirmationOf((await status(world, taskId)).digests.plan as string)

/** The agent's shell: a pseudo-terminal from `script`, typing what it likes. */
const agentShell = (world: World, args: ReadonlyArray<string>, input: string, env: Record<string, string> = {}) =>
  world.tty(args, input, env)

export const authority = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("authority an agent cannot forge", { concurrent: true, timeout: 480_000 }, () => {
    anyEngine("approving through the agent's shell (script gives it a terminal) records nothing, however it tries", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanReady(world, "Freeze the clock in the date test")
      const typed = await planConfirmation(world, taskId)
      const before = (await events(world, taskId)).length

      // The confirmation typed, no passphrase: refused, nothing signed.
      const noPassphrase = await agentShell(world, ["approve", taskId, "plan", "--json"], `${typed}\n`)
      expect(noPassphrase.code).toBe(2)
      expect(noPassphrase.stdout).toContain("no passphrase was typed")
      // A guessed passphrase does not open the person's key.
      const guessed = await agentShell(world, ["approve", taskId, "plan", "--json"], `${typed}\nhunter2 hunter2\n`)
      expect(guessed.code).toBe(2)
      expect(guessed.stdout).toContain("the passphrase does not open this key")
      // Claiming to be the approver, or a verifier, without the key: unsigned, held.
      for (const [actor, reasons] of [["user:e2e-approver", ["receipt_unsigned"]], ["verifier:x", ["approval_requires_user", "receipt_unsigned"]]] as const) {
        const claimed = await agentShell(world, ["approve", taskId, "plan", "--json"], `${typed}\n`, {
          RATCHET_ACTOR: actor,
          RATCHET_APPROVER_KEY: path.join(world.root, "no-key-here.json")
        })
        expect(claimed.code).toBe(3)
        expect(claimed.json.error.gate.reasons.map((reason: { code: string }) => reason.code)).toEqual(reasons)
      }
      // A key of the agent's own making: it cannot register itself, and its signature counts for nothing.
      const ownKey = path.join(world.root, "agent-key.json")
      const own = await agentShell(world, ["approver", "init", "--id", "e2e-approver", "--kdf-cost", "14", "--json"], "agent passphrase!!\nagent passphrase!!\n", {
        RATCHET_APPROVER_KEY: ownKey
      })
      expect(own.code).toBe(2)
      expect(own.stdout).toContain("already has 1 approver(s) (e2e-approver)")
      expect(fs.existsSync(ownKey)).toBe(true)
      const signedByAgent = await agentShell(world, ["approve", taskId, "plan", "--json"], `${typed}\nagent passphrase!!\n`, {
        RATCHET_APPROVER_KEY: ownKey
      })
      expect(signedByAgent.code).toBe(3)
      expect(signedByAgent.json.error.gate.reasons.map((reason: { code: string }) => reason.code)).toEqual(["approver_unknown"])
      // Adding its key to the committed approvers file trusts it no more.
      const file = path.join(world.repo, ".ratchet", "approvers.json")
      const chain = JSON.parse(fs.readFileSync(file, "utf8"))
      const agentKey = JSON.parse(fs.readFileSync(ownKey, "utf8")).publicKey as string
      chain.entries.push({ ...chain.entries[0], seq: 2, approver: { id: "agent", key: agentKey } })
      fs.writeFileSync(file, JSON.stringify(chain))
      const afterEdit = await agentShell(world, ["approve", taskId, "plan", "--json"], `${typed}\nagent passphrase!!\n`, {
        RATCHET_APPROVER_KEY: ownKey
      })
      // ... except that the file now disagrees with the store: no gate passes until a person reconciles them.
      expect(afterEdit.code).toBe(2)
      expect(afterEdit.stdout).toContain("approvers_diverged")
      const trust = await world.run(["approver", "trust", "--json"])
      expect(trust.code).toBe(2)
      const listed = await world.run(["approver", "list", "--json"])
      expect(listed.json.approvers.map((approver: { id: string }) => approver.id)).toEqual(["e2e-approver"])
      expect(listed.json.warning).toContain(".ratchet/approvers.json")

      // Nothing was recorded; the plan is not approved and nothing runs.
      expect(await events(world, taskId)).toHaveLength(before)
      expect((await status(world, taskId)).state).toBe("PLAN_READY")
      const run = await world.run(["run", taskId, "--json"])
      expect(run.code).not.toBe(0)
      expect((await status(world, taskId)).state).toBe("PLAN_READY")

      // The person, with the passphrase, approves; the receipt names them and carries their key.
      await world.ok(["approver", "list", "--write"])
      const approved = await approve(world, taskId, "plan", typed, passphrase)
      expect(approved.code, approved.stdout).toBe(0)
      const recorded = (await events(world, taskId)).at(-1)!
      expect(recorded.type).toBe("PlanApproved")
      expect(recorded.event.receipt.actor).toEqual({ kind: "user", id: "e2e-approver" })
      expect(recorded.event.receipt.signature.key).toBe(listed.json.approvers[0].key)
    })

    it("an approvers stream rewritten in the store under the agent's own key stops every gate: the committed file is the tripwire", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanReady(world, "Forge the approvers")
      const typed = await planConfirmation(world, taskId)
      const projectId = JSON.parse(fs.readFileSync(path.join(world.repo, ".ratchet", "project.json"), "utf8")).projectId as string
      const committed = fs.readFileSync(path.join(world.repo, ".ratchet", "approvers.json"), "utf8")
      const before = (await events(world, taskId)).length

      // The agent makes its own key and a genesis entry naming the person under it, then rewrites
      // the store's approvers stream with it: a self-consistent chain the store alone cannot tell
      // from the real one.
      const agentKey = path.join(world.root, "agent-key.json")
      const genesis = await forgeGenesis(world, "e2e-approver", agentKey, "agent passphrase!!")
      await rewriteApprovers(world, projectId, genesis)
      expect(fs.readFileSync(path.join(world.repo, ".ratchet", "approvers.json"), "utf8")).toBe(committed)
      const listed = await world.run(["approver", "list", "--json"])
      expect(listed.json.approvers).toEqual([{ id: "e2e-approver", key: JSON.parse(fs.readFileSync(agentKey, "utf8")).publicKey }])
      expect(listed.json.file._tag).toBe("diverged")

      // An approval signed with the agent's key is refused, naming the divergence and both chains.
      const forged = await agentShell(world, ["approve", taskId, "plan", "--json"], `${typed}\nagent passphrase!!\n`, { RATCHET_APPROVER_KEY: agentKey })
      expect(forged.code, forged.stdout).toBe(2)
      const refusal = String(forged.json.error.message)
      expect(refusal).toContain("approvers_diverged")
      expect(refusal).toContain("they differ at entry 1")
      expect(refusal.match(/chain sha256:[0-9a-f]{16}/g)).toHaveLength(2)
      expect(refusal).toContain("git log -p -- .ratchet/approvers.json")
      expect(refusal).toContain("ratchet approver trust")
      expect(refusal).toContain("ratchet approver list --write")
      // The person's own key counts for nothing either until someone reconciles the two.
      expect((await approve(world, taskId, "plan", typed)).code).toBe(2)
      expect(await events(world, taskId)).toHaveLength(before)
      expect((await status(world, taskId)).state).toBe("PLAN_READY")
      // ratchet status says so, and what to check.
      const shown = await world.run(["status", taskId, "--json"])
      expect(shown.json.approvers).toContain("approvers_diverged")
      expect(shown.json.approvers).toContain("git log -p -- .ratchet/approvers.json")
      expect((await world.run(["status", taskId])).stdout).toContain("approvers_diverged")
      // Signing another approver in over the divergence is refused too: it would overwrite the file.
      const added = await agentShell(world, ["approver", "add", "agent-2", JSON.parse(fs.readFileSync(agentKey, "utf8")).publicKey, "--json"], "agent passphrase!!\n", {
        RATCHET_APPROVER_KEY: agentKey
      })
      expect(added.code).toBe(2)
      expect(fs.readFileSync(path.join(world.repo, ".ratchet", "approvers.json"), "utf8")).toBe(committed)
    })

    it.each(["unsigned", "own-key", "moved"] as const)(
      "a PlanApproved written straight into the store (%s receipt) is refused at the run's gate and at ratchet gate",
      async (kind) => {
        const world = await makeWorld(engine)
        const taskId = await toPlanReady(world, `Forged plan approval (${kind})`)
        await forge(world, taskId, kind)
        expect((await status(world, taskId)).state).toBe("PLAN_APPROVED")
        const expected = { unsigned: ["receipt_unsigned"], "own-key": ["approver_unknown"], moved: ["signature_invalid"] }[kind]
        const gate = await world.run(["gate", taskId, "--json"])
        expect(gate.code).toBe(3)
        expect(gate.json.gate.reasons.map((reason: { code: string }) => reason.code)).toEqual(expect.arrayContaining(expected))
        const run = await world.run(["run", taskId, "--json"])
        expect(run.code).toBe(3)
        expect(run.stdout + run.stderr).toContain(expected[0])
        // Nothing ran: no run started, no lease left behind.
        expect((await status(world, taskId)).state).toBe("PLAN_APPROVED")
        expect((await events(world, taskId)).some((record) => record.type === "RunStarted")).toBe(false)
        expect((await world.ok(["lease", "show", taskId, "--json"])).json.lease.status).toBe("free")
      }
    )

    anyEngine("a rewind through the agent's shell is refused without the person's key, and recorded with it", async () => {
      const world = await makeWorld(engine)
      const taskId = await createTask(world, "Rewind me")
      await world.ok(["brief", taskId, "ask", "Which clock?"])
      const asked = (await events(world, taskId)).at(-1)!.lsn
      await world.ok(["pause", taskId, "--reason", "lunch"])
      const target = String(asked - 1)
      // Typing nothing shows what would be rewound and its digest, and records nothing.
      const shown = await agentShell(world, ["rewind", taskId, "--to", target, "--json"], "\n")
      expect(shown.code).toBe(2)
      const digest = /digest (sha256:[0-9a-f]{64})/.exec(shown.stdout)?.[1]
      expect(digest).toBeDefined()
      // The confirmation the agent read, but no key: refused.
      const noKey = await agentShell(world, ["rewind", taskId, "--to", target, "--json"], `${confirmationOf(digest!)}\n`, {
        RATCHET_APPROVER_KEY: path.join(world.root, "none.json")
      })
      expect(noKey.code).toBe(2)
      expect(noKey.stdout).toContain("carries no approver's signature")
      const guessed = await agentShell(world, ["rewind", taskId, "--to", target, "--json"], `${confirmationOf(digest!)}\nletmein letmein\n`)
      expect(guessed.code).toBe(2)
      expect((await world.ok(["log", taskId, "--branches", "--json"])).stdout).not.toContain("rewind-1")
      // The person rewinds; the new branch's first event says who, with their signature.
      const rewound = await world.tty(["rewind", taskId, "--to", target, "--json"], `${confirmationOf(digest!)}\n${passphrase}\n`)
      expect(rewound.code, rewound.stdout).toBe(0)
      expect(rewound.json.branch).toBe("rewind-1")
      const last = (await events(world, taskId)).at(-1)!
      expect(last.type).toBe("TaskRewound")
      expect(last.event).toMatchObject({ parent: "main", atLsn: Number(target), receipt: { subject: "rewind", actor: { kind: "user", id: "e2e-approver" } } })
    })

    anyEngine("a step that changes the approvers file is blocked, whatever the scope allows", async () => {
      const world = await makeWorld(engine)
      const spec = specText({ allowedScope: ["test/**", ".ratchet/**"] })
      const plan = planText().replace("command: node --version", "command: \"node -e \\\"require('fs').appendFileSync('.ratchet/approvers.json', ' ')\\\"\"")
      const taskId = await toSpecReady(world, "Touch the approvers", spec)
      expect((await approve(world, taskId, "spec")).code).toBe(0)
      await world.ok(["preflight", taskId])
      await world.ok(["plan", taskId, "--file", world.file(`${taskId}-plan.yaml`, plan)])
      expect((await approve(world, taskId, "plan")).code).toBe(0)
      const ran = await world.run(["run", taskId])
      expect(ran.code).toBe(3)
      const blocked = await status(world, taskId)
      expect(blocked.state).toBe("BLOCKED")
      expect(blocked.blockers[0].category).toBe("scope_violation")
      expect(blocked.blockers[0].requiredAction).toContain(".ratchet/approvers.json (a trust file no task may change)")
    })

    anyEngine("a manual observation typed through the agent's shell does not count; the person's signed one completes the task", async () => {
      const world = await makeWorld(engine)
      const spec = specText().replace(
        "    verify:\n      command: node --version",
        "    verify:\n      command: node --version\n  - id: AC-002\n    outcome: The guide reads well\n    required: true\n    manual:\n      procedure: Read the guide\n      observer: the maintainer"
      )
      const taskId = await toSpecReady(world, "Observe the guide", spec)
      expect((await approve(world, taskId, "spec")).code).toBe(0)
      await world.ok(["preflight", taskId])
      await world.ok(["plan", taskId, "--file", world.file(`${taskId}-plan.yaml`, planText().replace("acRefs: [AC-001]", "acRefs: [AC-001, AC-002]"))])
      expect((await approve(world, taskId, "plan")).code).toBe(0)
      const ran = await world.run(["run", taskId])
      expect(ran.code, ran.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("VERIFYING")

      // The agent's shell, without the key, observes AC-002 as PASS: recorded, unsigned, HELD.
      const noKey = { RATCHET_APPROVER_KEY: path.join(world.root, "no-key.json"), RATCHET_ACTOR: "user:e2e-approver" }
      const observed = await agentShell(world, ["verify", taskId, "--json"], "pass\nlooks fine\n", noKey)
      expect(observed.json, observed.stdout).not.toBeNull()
      expect(observed.code).toBe(3)
      expect(observed.json.outcome).toBe("HELD")
      expect(observed.json.signed).toBe(false)
      expect(observed.json.gate.reasons.map((reason: { code: string }) => reason.code)).toEqual(["verdict_unsigned", "verdict_unsigned"])
      const done = await world.run(["done", taskId, "--json"])
      expect(done.code).toBe(3)
      expect((await status(world, taskId)).state).toBe("VERIFYING")
      // With the person's key present, the agent's "pass" is taken as a passphrase: refused, nothing recorded.
      const before = (await events(world, taskId)).length
      const wrong = await agentShell(world, ["verify", taskId, "--json"], "pass\nlooks fine\n")
      expect(wrong.code).toBe(2)
      expect(await events(world, taskId)).toHaveLength(before)

      // The person verifies on their terminal, typing the passphrase and the observation.
      const verified = await world.verify(taskId, [], "pass\nread it twice\n")
      expect(verified.code, verified.stdout).toBe(0)
      expect(verified.json.outcome).toBe("APPROVED")
      expect(verified.json.signed).toBe(true)
      const completed = await world.run(["done", taskId, "--json"])
      expect(completed.code, completed.stdout + completed.stderr).toBe(0)
      expect((await status(world, taskId)).state).toBe("COMPLETED")
    })
  })
}
