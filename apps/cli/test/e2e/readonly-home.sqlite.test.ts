/**
 * A `$RATCHET_HOME` this user cannot write (issue 26): `status` and `log` read the SQLite store
 * read-only and answer; an act fails `ReadOnly`, naming `$RATCHET_HOME`, why it is read-only and
 * the fix, and writes nothing; once the directory is writable again the same act succeeds.
 *
 * Permissions do not stop root, so under uid 0 the world is handed to an unprivileged user
 * (uid/gid 65534) and the CLI calls that must be refused run as that user: the denial is the
 * kernel's, as for any person whose home is read-only.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import Database from "better-sqlite3"
import { afterAll, describe, expect, it } from "vitest"
import { bin, createTask, events, makeWorld, removeWorlds, type Result, sqlite, type World } from "./harness.js"

afterAll(removeWorlds)

const asRoot = process.getuid?.() === 0
/** The user the read-only calls run as: this one, or an unprivileged one under root. */
const reader = asRoot ? { uid: 65534, gid: 65534 } : {}

const chownTree = (root: string, uid: number, gid: number): void => {
  fs.chownSync(root, uid, gid)
  for (const entry of fs.readdirSync(root, { recursive: true })) fs.lchownSync(path.join(root, String(entry)), uid, gid)
}

/** `ratchet args` in the world's repository as {@link reader}. */
const runAsReader = (world: World, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}): Promise<Result> =>
  new Promise((resolve, reject) => {
    const env = {
      ...world.env,
      ...extraEnv,
      // The reader's own home; git trusts the repository the reader owns anyway.
      HOME: world.root
    }
    const child = spawn(process.execPath, [bin, ...args], { cwd: world.repo, env, stdio: ["ignore", "pipe", "pipe"], ...reader })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.on("error", reject)
    child.on("close", (code) => {
      const stdout = Buffer.concat(out).toString("utf8")
      let json: unknown = null
      try {
        json = JSON.parse(stdout)
      } catch {
        json = null
      }
      resolve({ code: code ?? -1, stdout, stderr: Buffer.concat(err).toString("utf8"), json })
    })
  })

const setWritable = (world: World, writable: boolean): void => {
  const mode = (directory: boolean) => writable ? (directory ? 0o700 : 0o600) : (directory ? 0o555 : 0o444)
  fs.chmodSync(path.join(world.home, "ratchet.db"), mode(false))
  fs.chmodSync(path.join(world.home, "blobs"), mode(true))
  fs.chmodSync(world.home, mode(true))
}

describe("a read-only $RATCHET_HOME on SQLite", () => {
  it("status and log read the store; an act is refused naming $RATCHET_HOME, the reason and the fix, and stores nothing", async () => {
    const world = await makeWorld(sqlite, { approver: false })
    const taskId = await createTask(world, "Read a read-only home")
    const logged = await events(world, taskId)
    if (asRoot) chownTree(world.root, 65534, 65534)
    const before = fs.readFileSync(path.join(world.home, "ratchet.db"))
    setWritable(world, false)
    try {
      const shown = await runAsReader(world, ["status", taskId, "--json"])
      expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: "" })
      expect(shown.json.task).toMatchObject({ taskId, state: "INTERVIEWING" })

      const log = await runAsReader(world, ["log", taskId, "--json"])
      expect(log.code).toBe(0)
      const lines = log.stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line))
      expect(lines.map((line) => line.lsn)).toEqual(logged.map((record) => record.lsn))

      const asked = await runAsReader(world, ["brief", taskId, "ask", "Anything?", "--json"])
      expect(asked.code).toBe(1)
      expect(asked.json.error.reason._tag).toBe("ReadOnly")
      const message = String(asked.json.error.message)
      expect(message).toContain("$RATCHET_HOME")
      expect(message).toContain(`the directory ${world.home} is not writable by this user`)
      expect(message).toContain("chmod u+w")
      expect(message).not.toContain("exists")
      expect(fs.readdirSync(world.home).sort()).toEqual(["blobs", "ratchet.db"])
      expect(fs.readFileSync(path.join(world.home, "ratchet.db")).equals(before)).toBe(true)
    } finally {
      setWritable(world, true)
    }
    // Writable again, the same act goes through, as the same user.
    const again = await runAsReader(world, ["brief", taskId, "ask", "Anything?", "--json"])
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" })
    expect((await runAsReader(world, ["log", taskId, "--json"])).stdout.split("\n").filter((line) => line !== "").length)
      .toBeGreaterThan(logged.length)
  }, 120_000)

  it("a store whose write-ahead log another process keeps is read in place, latest commit included; without its index it is refused saying how to fold it in", async () => {
    const world = await makeWorld(sqlite, { approver: false })
    const first = await createTask(world, "Folded into the file")
    // Another process keeps the store open, so the next commit stays in the log (no checkpoint).
    const keeper = new Database(path.join(world.home, "ratchet.db"))
    try {
      keeper.pragma("wal_autocheckpoint = 0")
      // A read joins the log: while this connection is open, nobody else's close folds it in.
      keeper.prepare("SELECT count(*) FROM ratchet_events").get()
      const second = await createTask(world, "Only in the write-ahead log")
      expect(fs.statSync(path.join(world.home, "ratchet.db-wal")).size).toBeGreaterThan(0)
      // A copy of the file and its log without the log's index, as a crash can leave them.
      const copy = path.join(world.root, "copy")
      fs.mkdirSync(copy)
      for (const name of ["ratchet.db", "ratchet.db-wal"]) fs.copyFileSync(path.join(world.home, name), path.join(copy, name))
      fs.mkdirSync(path.join(copy, "blobs"))
      if (asRoot) chownTree(world.root, 65534, 65534)
      for (const name of ["ratchet.db-wal", "ratchet.db-shm"]) fs.chmodSync(path.join(world.home, name), 0o444)
      setWritable(world, false)
      for (const name of ["ratchet.db", "ratchet.db-wal"]) fs.chmodSync(path.join(copy, name), 0o444)
      fs.chmodSync(copy, 0o555)
      try {
        const shown = await runAsReader(world, ["task", "list", "--json"])
        expect({ code: shown.code, stderr: shown.stderr }).toEqual({ code: 0, stderr: "" })
        expect(shown.json.tasks.map((task: { readonly taskId: string }) => task.taskId).sort()).toEqual([first, second].sort())

        const refused = await runAsReader(world, ["task", "list", "--json"], { RATCHET_HOME: copy })
        expect(refused.code).toBe(1)
        expect(refused.json.error.reason._tag).toBe("ReadOnly")
        expect(String(refused.json.error.message)).toContain(`its write-ahead log (${path.join(copy, "ratchet.db")}-wal) holds commits`)
        expect(String(refused.json.error.message)).toContain("as a user who can write $RATCHET_HOME")
        expect(fs.readdirSync(copy).sort()).toEqual(["blobs", "ratchet.db", "ratchet.db-wal"])
      } finally {
        setWritable(world, true)
        fs.chmodSync(copy, 0o700)
      }
      // Writable again, the copy's log is folded in and both tasks are there.
      const folded = await runAsReader(world, ["task", "list", "--json"], { RATCHET_HOME: copy })
      expect(folded.code).toBe(0)
      expect(folded.json.tasks.map((task: { readonly taskId: string }) => task.taskId).sort()).toEqual([first, second].sort())
    } finally {
      keeper.close()
    }
  }, 120_000)

  it("a store that does not exist yet in a read-only directory is refused as read-only, not as missing", async () => {
    const world = await makeWorld(sqlite, { init: false })
    if (asRoot) chownTree(world.root, 65534, 65534)
    fs.mkdirSync(world.home, { mode: 0o555 })
    if (asRoot) fs.chownSync(world.home, 65534, 65534)
    const made = await runAsReader(world, ["init", "--json"])
    expect(made.code).toBe(1)
    expect(made.json.error.reason._tag).toBe("ReadOnly")
    expect(String(made.json.error.message)).toContain(`no store exists at ${path.join(world.home, "ratchet.db")} and none can be made`)
    expect(fs.readdirSync(world.home)).toEqual([])
  }, 120_000)
})
