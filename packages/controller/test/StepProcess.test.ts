/**
 * A step's command as a child process, run for real under `/bin/sh`: exit codes and both streams
 * captured apart and streamed to the caller; a timeout and a cancel stop the whole process group
 * (a background job that would write a marker file later never does); output past the capture
 * limit keeps its head and tail with a marker saying how much was dropped; a command that cannot
 * start reports it instead of throwing; the output and pid files are private and removed at the
 * end; `orphan` finds a live group from its pid file and ignores a damaged one, a reused pid (an
 * unrelated process given the number) and a command that ended as a zombie; and the
 * environment a step gets. No test asserts how long anything took: a marker that never appears is
 * the evidence that the group was stopped.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Effect from "effect/Effect"
import { afterEach, describe, expect, it } from "vitest"
import { tempDirFactory } from "./tempDirs.js"
import * as StepProcess from "../src/StepProcess.js"

const tempDir = tempDirFactory("ratchet-step-process-")

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const path_ = { PATH: "/usr/bin:/bin" }

/** Starts `command` in `cwd` (a fresh directory by default), its output files in a fresh directory. */
const startIn = (
  command: string,
  options: { readonly cwd?: string; readonly timeoutMs?: number | null; readonly env?: NodeJS.ProcessEnv; readonly directory?: string } = {}
) =>
  StepProcess.start({
    command,
    cwd: options.cwd ?? tempDir(),
    timeoutMs: options.timeoutMs ?? null,
    env: options.env ?? path_,
    directory: options.directory ?? path.join(tempDir(), "output"),
    name: "i-1"
  })

/** Runs `command` to its end. */
const run = (command: string, options: Parameters<typeof startIn>[1] = {}) => Effect.runPromise(startIn(command, options).exit)

const bootId = () => fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()

/** Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot. */
const startTicks = (pid: number): string => {
  const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  return text.slice(text.lastIndexOf(")") + 2).split(" ")[19] as string
}

/** Field 3 of `/proc/<pid>/stat`: the process's state (`Z` for a zombie). */
const stateOf = (pid: number): string | null => {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[0] as string
  } catch {
    return null
  }
}

/** Whether process `pid` exists (a zombie counts). */
const exists = (pid: number): boolean => stateOf(pid) !== null

/** Waits until `file` exists (the test's timeout bounds the wait). */
const waitFor = async (file: string) => {
  while (!fs.existsSync(file)) await sleep(20)
}

/**
 * A command whose background job writes `marker` after `delay` seconds while the foreground
 * sleeps long; `started` is written as soon as the background job runs.
 */
const lingering = (dir: string, delay: number) =>
  `(echo started > '${path.join(dir, "started")}'; sleep ${delay}; echo late > '${path.join(dir, "marker")}') & sleep 60`

describe("StepProcess.start", { timeout: 60_000 }, () => {
  it("captures the exit code and stdout and stderr apart", async () => {
    const exit = await run("echo out; echo err >&2; printf 'no newline'")
    expect(exit).toMatchObject({ exitCode: 0, signal: null, timedOut: false, cancelled: false, spawnError: null })
    expect(text(exit.stdout)).toBe("out\nno newline")
    expect(text(exit.stderr)).toBe("err\n")
    expect(exit.durationMs).toBeGreaterThanOrEqual(0)
  })

  it("reports a non-zero exit, and 127 for a command that does not exist", async () => {
    expect((await run("exit 3")).exitCode).toBe(3)
    expect((await run("false")).exitCode).toBe(1)
    const missing = await run("definitely-not-a-command-ratchet")
    expect(missing.exitCode).toBe(127)
    expect(missing.spawnError).toBeNull()
    expect(text(missing.stderr)).toContain("definitely-not-a-command-ratchet")
  })

  it("reports the signal that ended the shell", async () => {
    const exit = await run("kill -TERM $$")
    expect(exit).toMatchObject({ exitCode: null, signal: "SIGTERM", timedOut: false, cancelled: false })
  })

  it("runs in the directory given, with the environment given and no input", async () => {
    const dir = tempDir()
    const exit = await run("pwd; echo \"$ONLY_THIS\"; echo \"${HOME-unset}\"; cat; echo read-done", { cwd: dir, env: { ...path_, ONLY_THIS: "yes" } })
    expect(text(exit.stdout)).toBe(`${dir}\nyes\nunset\nread-done\n`)
  })

  it("streams every chunk to onOutput, by stream", async () => {
    const seen: Record<"stdout" | "stderr", string> = { stdout: "", stderr: "" }
    const running = StepProcess.start({
      command: "for i in 1 2 3; do echo line-$i; echo warn-$i >&2; done",
      cwd: tempDir(),
      timeoutMs: null,
      env: path_,
      directory: tempDir(),
      name: "i-1",
      onOutput: (stream, chunk) => {
        seen[stream] += chunk
      }
    })
    const exit = await Effect.runPromise(running.exit)
    expect(seen.stdout).toBe("line-1\nline-2\nline-3\n")
    expect(seen.stderr).toBe("warn-1\nwarn-2\nwarn-3\n")
    expect(text(exit.stdout)).toBe(seen.stdout)
    expect(running.pid).toEqual(expect.any(Number))
  })

  it("a timeout kills the whole process group: the background job never writes its marker", async () => {
    const dir = tempDir()
    const exit = await run(lingering(dir, 2), { cwd: dir, timeoutMs: 500 })
    expect(exit).toMatchObject({ timedOut: true, cancelled: false, exitCode: null, signal: "SIGKILL", spawnError: null })
    // Well past the background job's delay: had it survived, its marker would be there.
    await sleep(3_000)
    expect(fs.existsSync(path.join(dir, "marker"))).toBe(false)
  })

  it("cancel() kills the whole process group and the end reports it", async () => {
    const dir = tempDir()
    const running = startIn(lingering(dir, 2), { cwd: dir })
    await waitFor(path.join(dir, "started"))
    running.cancel()
    const exit = await Effect.runPromise(running.exit)
    expect(exit).toMatchObject({ cancelled: true, timedOut: false, exitCode: null, signal: "SIGKILL" })
    await sleep(3_000)
    expect(fs.existsSync(path.join(dir, "marker"))).toBe(false)
    // A second cancel after the end is harmless.
    expect(() => running.cancel()).not.toThrow()
  })

  it("a background job left behind by a command that exits is stopped with it", async () => {
    const dir = tempDir()
    // The job closes its output so the shell's end is not held up by the pipes.
    const exit = await run(`(sleep 2; echo late > '${path.join(dir, "marker")}') >/dev/null 2>&1 & echo done`, { cwd: dir })
    expect(exit.exitCode).toBe(0)
    expect(text(exit.stdout)).toBe("done\n")
    await sleep(3_000)
    expect(fs.existsSync(path.join(dir, "marker"))).toBe(false)
  })

  it("a command that cannot start (its directory is gone) reports it without throwing", async () => {
    const exit = await run("echo hi", { cwd: path.join(tempDir(), "missing") })
    expect(exit.spawnError !== null || (exit.exitCode !== null && exit.exitCode !== 0)).toBe(true)
    expect(text(exit.stdout)).toBe("")
  })

  it("a command or environment Node refuses to pass to a process (a NUL byte) reports it without throwing", async () => {
    let running: StepProcess.Running | undefined
    expect(() => {
      running = startIn("echo a\u0000b")
    }).not.toThrow()
    const exit = await Effect.runPromise((running as StepProcess.Running).exit)
    expect(exit.spawnError).toEqual(expect.any(String))
    expect(exit.exitCode).toBeNull()
    expect(() => (running as StepProcess.Running).cancel()).not.toThrow()
    const badEnvironment = await run("echo hi", { env: { ...path_, BAD: "a\u0000b" } })
    expect(badEnvironment.spawnError).toEqual(expect.any(String))
  })

  it("hostile output (control characters, invalid UTF-8) is captured byte for byte", async () => {
    const exit = await run("printf '\\000\\001\\033[31m\\377\\376end'")
    expect([...exit.stdout]).toEqual([0, 1, 0x1b, 0x5b, 0x33, 0x31, 0x6d, 0xff, 0xfe, 0x65, 0x6e, 0x64])
  })
})

describe("StepProcess: output and pid files", { timeout: 60_000 }, () => {
  it("keeps them private while the command runs and removes them at its end", async () => {
    const directory = path.join(tempDir(), "output")
    const running = startIn("echo out; echo err >&2; sleep 60", { directory })
    const files = StepProcess.filesOf(directory, "i-1")
    await waitFor(files.pid)
    expect(fs.statSync(directory).mode & 0o777).toBe(0o700)
    for (const file of Object.values(files)) expect(fs.statSync(file).mode & 0o777, file).toBe(0o600)
    // "<pgid> <boot id> <start time>": a pid from before a reboot, or given to another process
    // since, is never taken for the command's group.
    expect(fs.readFileSync(files.pid, "utf8")).toBe(`${running.pid} ${bootId()} ${startTicks(running.pid as number)}`)
    // the command has written both lines before it is stopped (it sleeps after them)
    for (let i = 0; i < 600 && (fs.statSync(files.stdout).size === 0 || fs.statSync(files.stderr).size === 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    running.cancel()
    const exit = await Effect.runPromise(running.exit)
    expect(text(exit.stdout)).toBe("out\n")
    expect(text(exit.stderr)).toBe("err\n")
    expect(fs.readdirSync(directory)).toEqual([])
  })

  it("an output directory that cannot be made (a file is in the way) is a spawn error, not a throw", async () => {
    const blocker = path.join(tempDir(), "file")
    fs.writeFileSync(blocker, "")
    const running = startIn("echo hi", { directory: blocker })
    expect(running.pid).toBeNull()
    const exit = await Effect.runPromise(running.exit)
    expect(exit.spawnError).toEqual(expect.any(String))
    expect(exit.exitCode).toBeNull()
  })

  it("orphan: the live group of a pid file, and null once it has ended", async () => {
    const directory = path.join(tempDir(), "output")
    const running = startIn("sleep 60", { directory })
    await waitFor(StepProcess.filesOf(directory, "i-1").pid)
    expect(StepProcess.orphan(directory, "i-1")).toBe(running.pid)
    running.cancel()
    await Effect.runPromise(running.exit)
    expect(StepProcess.orphan(directory, "i-1")).toBeNull()
  })

  it("orphan: a live group's pid written in another boot of the machine is no orphan", async () => {
    const directory = tempDir()
    const running = StepProcess.start({ command: "sleep 30", cwd: directory, timeoutMs: null, env: { PATH: process.env["PATH"] ?? "" }, directory, name: "i-1" })
    expect(StepProcess.orphan(directory, "i-1")).toBe(running.pid)
    fs.writeFileSync(StepProcess.filesOf(directory, "i-1").pid, `${running.pid} 00000000-0000-0000-0000-000000000000`)
    expect(StepProcess.orphan(directory, "i-1")).toBeNull()
    running.cancel()
    await Effect.runPromise(running.exit)
  })

  it("orphan: an unrelated process group given the pid file's number is neither the orphan nor signalled", async () => {
    const directory = tempDir()
    // A process of another session and group, as a reused pid would name it.
    const stranger = spawn("setsid", ["sleep", "30"], { stdio: "ignore" })
    const pid = stranger.pid as number
    while (stateOf(pid) === null || fs.readFileSync(`/proc/${pid}/stat`, "utf8").includes("(setsid)")) await sleep(20)
    try {
      const file = StepProcess.filesOf(directory, "i-1").pid
      // Another start time (the command that had this number), and the older file without one.
      for (const content of [`${pid} ${bootId()} 1`, `${pid} ${bootId()}`, String(pid)]) {
        fs.writeFileSync(file, content)
        expect(StepProcess.orphan(directory, "i-1"), content).toBeNull()
      }
      // Its own start time does name it (that is how the command's own group is known).
      fs.writeFileSync(file, `${pid} ${bootId()} ${startTicks(pid)}`)
      expect(StepProcess.orphan(directory, "i-1")).toBe(pid)
      // Not signalled: still sleeping (or, just started on a busy machine, still running).
      expect(["S", "R"]).toContain(stateOf(pid))
    } finally {
      stranger.kill("SIGKILL")
    }
  })

  it("orphan: a command that ended and was never reaped (a zombie) has ended", async () => {
    const directory = tempDir()
    // The shell starts a group leader that exits at once, then becomes a sleep that never reaps it.
    const parent = spawn("/bin/sh", ["-c", "setsid /bin/sh -c 'exit 0' & echo $!; exec sleep 600"], { stdio: ["ignore", "pipe", "ignore"] })
    try {
      const pid = await new Promise<number>((resolve) => parent.stdout.once("data", (chunk: Buffer) => resolve(Number(chunk.toString().trim()))))
      while (stateOf(pid) !== "Z") await sleep(20)
      fs.writeFileSync(StepProcess.filesOf(directory, "i-1").pid, `${pid} ${bootId()} ${startTicks(pid)}`)
      expect(StepProcess.orphan(directory, "i-1")).toBeNull()
      expect(exists(pid)).toBe(true)
    } finally {
      parent.kill("SIGKILL")
    }
  })

  it("orphan: a shell that exited and was reaped has ended: its marked background work is killed, a stranger in the group is not", async () => {
    const directory = tempDir()
    // A group whose leader (the shell) exits at once, leaving two sleeps behind it: one carrying the
    // command's mark, as every process a step starts does, and one that cleared its environment,
    // standing for a process of a group that took the number since.
    const shell = spawn("/bin/sh", ["-c", "sleep 30 & echo $!; env -i /bin/sleep 31 & echo $!; exit 0"], {
      detached: true,
      env: { PATH: "/usr/bin:/bin", RATCHET_PROCESS: "i-1" },
      stdio: ["ignore", "pipe", "ignore"]
    })
    const exited = new Promise<void>((resolve) => shell.once("exit", () => resolve()))
    let printed = ""
    const both = new Promise<ReadonlyArray<number>>((resolve) =>
      shell.stdout.on("data", (chunk: Buffer) => {
        printed += chunk.toString()
        const pids = printed.trim().split(/\s+/).filter((word) => word !== "").map(Number)
        if (pids.length === 2) resolve(pids)
      })
    )
    const pgid = shell.pid as number
    const shellStart = startTicks(pgid)
    const [marked, stranger] = (await both) as [number, number]
    await exited
    while (exists(pgid)) await sleep(20)
    // The stranger has exec'd into its own sleep, without the mark, before anyone looks.
    while (!fs.readFileSync(`/proc/${stranger}/cmdline`, "utf8").includes("31")) await sleep(20)
    try {
      // Under another command's name, nothing of this group is that command's: nothing is signalled.
      fs.writeFileSync(StepProcess.filesOf(directory, "i-2").pid, `${pgid} ${bootId()} ${shellStart}`)
      expect(StepProcess.orphan(directory, "i-2")).toBeNull()
      await sleep(100)
      expect([stateOf(marked), stateOf(stranger)].map((state) => state === "S" || state === "R")).toEqual([true, true])
      // Under its own: the command has ended; its marked process is killed, the stranger is not.
      fs.writeFileSync(StepProcess.filesOf(directory, "i-1").pid, `${pgid} ${bootId()} ${shellStart}`)
      expect(StepProcess.orphan(directory, "i-1")).toBeNull()
      while (stateOf(marked) !== null && stateOf(marked) !== "Z") await sleep(20)
      expect(["S", "R"]).toContain(stateOf(stranger))
    } finally {
      for (const pid of [marked, stranger]) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // Already gone.
        }
      }
    }
  })

  it("start marks the command's processes with RATCHET_PROCESS, the name of its files", async () => {
    const ended = await Effect.runPromise(startIn("printf %s \"$RATCHET_PROCESS\"").exit)
    expect(text(ended.stdout)).toBe("i-1")
  })

  it("orphan: a group that is gone is no orphan, even with its pid file left", async () => {
    const directory = tempDir()
    const exit = startIn("true")
    const pid = exit.pid as number
    await Effect.runPromise(exit.exit)
    fs.writeFileSync(StepProcess.filesOf(directory, "i-1").pid, String(pid))
    expect(StepProcess.orphan(directory, "i-1")).toBeNull()
  })

  /** (case, pid file contents), by hand: none names a live group this runner may wait for. */
  const damaged: ReadonlyArray<readonly [string, string | Buffer]> = [
    ["empty", ""],
    ["a word", "abc"],
    ["pid 0 (the caller's own group)", "0"],
    ["pid 1 (init)", "1"],
    ["a negative pid", "-5"],
    ["a fraction", "12.5"],
    ["hexadecimal", "0x10"],
    ["exponent notation", "1e3"],
    ["eleven digits", "99999999999"],
    ["two pids", "12 34"],
    ["a pid and garbage", "123abc"],
    ["binary", Buffer.from([0xff, 0x00, 0x31])],
    ["1 MB of digits", "9".repeat(1024 * 1024)]
  ]

  it.each(damaged)("orphan: a pid file with %s is no orphan", (_, content) => {
    const directory = tempDir()
    fs.writeFileSync(StepProcess.filesOf(directory, "i-1").pid, content)
    expect(StepProcess.orphan(directory, "i-1")).toBeNull()
  })

  it("orphan: no pid file, a missing directory, or a directory in place of the pid file", () => {
    const directory = tempDir()
    expect(StepProcess.orphan(directory, "i-1")).toBeNull()
    expect(StepProcess.orphan(path.join(directory, "missing"), "i-1")).toBeNull()
    fs.mkdirSync(StepProcess.filesOf(directory, "i-1").pid)
    expect(StepProcess.orphan(directory, "i-1")).toBeNull()
  })

  it("discard removes the files and is idempotent", () => {
    const directory = tempDir()
    for (const file of Object.values(StepProcess.filesOf(directory, "i-1"))) fs.writeFileSync(file, "x")
    fs.writeFileSync(path.join(directory, "other.out"), "kept")
    StepProcess.discard(directory, "i-1")
    expect(fs.readdirSync(directory)).toEqual(["other.out"])
    expect(() => StepProcess.discard(directory, "i-1")).not.toThrow()
  })

  it("discard leaves what is not a file alone, without throwing", () => {
    const directory = tempDir()
    fs.mkdirSync(StepProcess.filesOf(directory, "i-1").pid)
    fs.writeFileSync(StepProcess.filesOf(directory, "i-1").stdout, "x")
    expect(() => StepProcess.discard(directory, "i-1")).not.toThrow()
    expect(fs.readdirSync(directory)).toEqual(["i-1.pid"])
    const file = path.join(directory, "in-the-way")
    fs.writeFileSync(file, "")
    expect(() => StepProcess.discard(file, "i-1")).not.toThrow()
  })
})

describe("StepProcess: bounded capture", { timeout: 120_000 }, () => {
  const limit = StepProcess.maxCapturedBytes

  it("keeps the head and the tail of output beyond the limit, with a marker of what was dropped", async () => {
    const filler = limit + 1_000_000
    const exit = await run(`printf HEAD; head -c ${filler} /dev/zero | tr '\\000' x; printf TAIL`)
    expect(exit.exitCode).toBe(0)
    const out = Buffer.from(exit.stdout)
    const dropped = 4 + filler + 4 - limit
    const marker = `\n… ${dropped} bytes not kept …\n`
    expect(out.length).toBe(limit + Buffer.byteLength(marker))
    expect(out.subarray(0, 4).toString()).toBe("HEAD")
    expect(out.subarray(out.length - 4).toString()).toBe("TAIL")
    expect(out.subarray(limit / 2, limit / 2 + Buffer.byteLength(marker)).toString()).toBe(marker)
    expect(out.toString().split("HEAD")).toHaveLength(2)
  })

  it("keeps output of exactly the limit whole, and marks a single byte over it", async () => {
    const exact = await run(`head -c ${limit} /dev/zero`)
    expect(exact.stdout.length).toBe(limit)
    expect(Buffer.from(exact.stdout).includes("bytes not kept")).toBe(false)
    const over = await run(`head -c ${limit + 1} /dev/zero >&2`)
    expect(over.stdout.length).toBe(0)
    const stderr = Buffer.from(over.stderr)
    expect(stderr.includes("\n… 1 bytes not kept …\n")).toBe(true)
    expect(stderr.length).toBe(limit + Buffer.byteLength("\n… 1 bytes not kept …\n"))
  })
})

describe("StepProcess.environment", () => {
  const saved = { ...process.env }
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
    Object.assign(process.env, saved)
  })

  it("drops RATCHET_FAULT, sets the task, step and attempt, and keeps the rest", async () => {
    process.env["RATCHET_FAULT"] = "step-started"
    process.env["RATCHET_TASK"] = "stale"
    process.env["SOME_TOOL_SETTING"] = "kept"
    const env = StepProcess.environment({ taskId: "t-1", stepId: "build", attempt: 3 })
    expect(env["RATCHET_FAULT"]).toBeUndefined()
    expect("RATCHET_FAULT" in env).toBe(false)
    expect(env["RATCHET_TASK"]).toBe("t-1")
    expect(env["RATCHET_STEP"]).toBe("build")
    expect(env["RATCHET_ATTEMPT"]).toBe("3")
    expect(env["SOME_TOOL_SETTING"]).toBe("kept")
    expect(env["PATH"]).toBe(process.env["PATH"])
    // The runner's own environment is left alone.
    expect(process.env["RATCHET_FAULT"]).toBe("step-started")
    expect(process.env["RATCHET_TASK"]).toBe("stale")

    const exit = await run("echo \"$RATCHET_TASK $RATCHET_STEP $RATCHET_ATTEMPT ${RATCHET_FAULT-unset}\"", { env })
    expect(text(exit.stdout)).toBe("t-1 build 3 unset\n")
  })
})
