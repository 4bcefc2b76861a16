/**
 * One runner per checkout: the lock is taken when free, refused while another live process holds
 * it (naming its pid), and taken over when its holder is gone or wrote it in another boot, or, by a
 * takeover, when its holder is stopped.
 */
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as CheckoutLock from "../src/CheckoutLock.js"
import { tempDirFactory } from "./tempDirs.js"

const tempDir = tempDirFactory("ratchet-checkout-lock-")

const lockFile = (home: string, root: string) =>
  path.join(home, "run", `checkout-${createHash("sha256").update(fs.realpathSync(root)).digest("hex").slice(0, 16)}.lock`)

const boot = () => fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()

/** Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot. */
const startTicks = (pid: number): string => {
  const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return text.slice(text.lastIndexOf(")") + 2).split(" ")[19] as string
}

const holdOnce = (home: string, root: string) => Effect.runPromiseExit(Effect.scoped(CheckoutLock.hold(home, root)))

describe("CheckoutLock", () => {
  it("takes a free lock and gives it back at the end of its scope", async () => {
    const home = tempDir()
    const root = tempDir()
    const inside = await Effect.runPromise(Effect.scoped(Effect.zipRight(CheckoutLock.hold(home, root), Effect.sync(() => fs.readFileSync(lockFile(home, root), "utf8")))))
    expect(inside).toBe(`${process.pid} ${boot()} ${startTicks(process.pid)}`)
    expect(fs.existsSync(lockFile(home, root))).toBe(false)
  })

  it("is refused while another live process holds it", async () => {
    const home = tempDir()
    const root = tempDir()
    const other = spawn("sleep", ["30"], { stdio: "ignore" })
    try {
      fs.mkdirSync(path.join(home, "run"), { recursive: true })
      fs.writeFileSync(lockFile(home, root), `${other.pid} ${boot()}`)
      const exit = await holdOnce(home, root)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(JSON.stringify(exit.cause)).toContain("CheckoutBusy")
        expect(JSON.stringify(exit.cause)).toContain(String(other.pid))
      }
      // the other holder's lock is left alone
      expect(fs.readFileSync(lockFile(home, root), "utf8")).toBe(`${other.pid} ${boot()}`)
    } finally {
      other.kill("SIGKILL")
    }
  })

  it("is refused by a live holder that started when its lock says, and taken over from a process that has the number since", async () => {
    const home = tempDir()
    const root = tempDir()
    const other = spawn("sleep", ["30"], { stdio: "ignore" })
    try {
      while (!fs.readFileSync(`/proc/${other.pid}/cmdline`, "utf8").startsWith("sleep")) await new Promise((resolve) => setTimeout(resolve, 20))
      fs.mkdirSync(path.join(home, "run"), { recursive: true })
      fs.writeFileSync(lockFile(home, root), `${other.pid} ${boot()} ${startTicks(other.pid as number)}`)
      expect(Exit.isFailure(await holdOnce(home, root))).toBe(true)
      // The runner that wrote it started at another time: the number is the sleep's now, not its.
      fs.writeFileSync(lockFile(home, root), `${other.pid} ${boot()} ${BigInt(startTicks(other.pid as number)) - 1n}`)
      expect(Exit.isSuccess(await holdOnce(home, root))).toBe(true)
      expect(["S", "R"]).toContain(fs.readFileSync(`/proc/${other.pid}/stat`, "utf8").split(") ")[1]?.[0])
    } finally {
      other.kill("SIGKILL")
    }
  })

  // A SIGKILLed runner stays a zombie until its parent reaps it; on a loaded machine the next
  // runner can look before that, and must not wait on a process that has ended.
  it("is taken from a holder that has ended but is not yet reaped (a zombie)", async () => {
    const home = tempDir()
    const root = tempDir()
    // The shell's background child exits at once; the shell, replaced by sleep, never reaps it.
    const parent = spawn("/bin/sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] })
    try {
      const zombie = Number((await new Promise<string>((resolve) => parent.stdout.once("data", (chunk: Buffer) => resolve(chunk.toString())))).trim())
      const stateOf = () => fs.readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]?.[0]
      while (stateOf() !== "Z") await new Promise((resolve) => setTimeout(resolve, 20))
      fs.mkdirSync(path.join(home, "run"), { recursive: true })
      fs.writeFileSync(lockFile(home, root), `${zombie} ${boot()} ${startTicks(zombie)}`)
      expect(Exit.isSuccess(await holdOnce(home, root))).toBe(true)
    } finally {
      parent.kill("SIGKILL")
    }
  })

  it("refuses to run unlocked when the lock cannot be written, naming the file, the reason and the fix", async () => {
    const home = path.join(tempDir(), "home-is-a-file")
    fs.writeFileSync(home, "")
    const error = await Effect.runPromise(Effect.flip(Effect.scoped(CheckoutLock.hold(home, tempDir()))))
    expect(error._tag).toBe("@ratchet/controller/CheckoutLockUnavailable")
    expect(error.message).toContain(path.join(home, "run"))
    expect(error.message).toContain("ENOTDIR")
    expect(error.message).toContain("Make $RATCHET_HOME/run writable")
  })

  it("a stopped holder (SIGSTOP) keeps it from a plain runner, and yields it to a takeover", async () => {
    const home = tempDir()
    const root = tempDir()
    const other = spawn("sleep", ["30"], { stdio: "ignore" })
    try {
      other.kill("SIGSTOP")
      const stateOf = () => {
        const text = fs.readFileSync(`/proc/${other.pid}/stat`, "utf8")
        return text.slice(text.lastIndexOf(")") + 2).split(" ")[0]
      }
      while (stateOf() !== "T") await new Promise((resolve) => setTimeout(resolve, 20))
      fs.mkdirSync(path.join(home, "run"), { recursive: true })
      fs.writeFileSync(lockFile(home, root), `${other.pid} ${boot()}`)
      expect(Exit.isFailure(await holdOnce(home, root))).toBe(true)
      const taken = await Effect.runPromiseExit(Effect.scoped(CheckoutLock.hold(home, root, { takeover: true })))
      expect(Exit.isSuccess(taken)).toBe(true)
    } finally {
      other.kill("SIGKILL")
    }
  })

  /** (case, lock contents), by hand: each is stale or damaged, so the lock is taken over. */
  const stale: ReadonlyArray<readonly [string, () => string]> = [
    ["a holder that is gone", () => `${2 ** 22 + 12_345} ${boot()}`],
    ["a holder from another boot", () => `${process.ppid} 00000000-0000-0000-0000-000000000000`],
    ["no boot id", () => `${process.ppid}`],
    ["garbage", () => "not a lock"],
    ["an empty file", () => ""]
  ]

  it.each(stale)("takes over a lock with %s", async (_, contents) => {
    const home = tempDir()
    const root = tempDir()
    fs.mkdirSync(path.join(home, "run"), { recursive: true })
    fs.writeFileSync(lockFile(home, root), contents())
    const exit = await holdOnce(home, root)
    expect(Exit.isSuccess(exit)).toBe(true)
  })
})
