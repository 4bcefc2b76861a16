/**
 * Child processes for the benchmarks that time whole commands: run one and wait for it to exit,
 * and measure a command's peak memory (its maximum resident set size).
 *
 * Peak memory is taken by GNU time (`/usr/bin/time -f %M -o <file>`), which reads the child's
 * `ru_maxrss` from `wait4` after it exits: nothing is added to the measured program. It is measured
 * in runs of its own, never in a timed run, so the wrapper's exec costs no timed side anything.
 * Where GNU time is missing the figure is reported as unavailable rather than estimated.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { median } from "../lib/Pair.js"

/** What one run of a child printed and how it ended. */
export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** A command: the program, its arguments, where it runs, its environment and its standard input. */
export interface Command {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly input?: string | undefined
}

/** Runs `command` to its exit; never rejects on a non-zero exit. */
export const run = (command: Command): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn(command.file, [...command.args], { cwd: command.cwd, env: command.env, stdio: ["pipe", "pipe", "pipe"] })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }))
    child.stdin.on("error", () => {
      // A child that exits without reading its input: its exit code says what happened.
    })
    child.stdin.end(command.input ?? "")
  })

/** {@link run}, failing unless the child exits 0. */
export const runOk = async (command: Command): Promise<Ran> => {
  const ran = await run(command)
  if (ran.code !== 0) {
    throw new Error(`${[command.file, ...command.args].join(" ")} exited ${ran.code}\nstdout: ${ran.stdout.slice(0, 2000)}\nstderr: ${ran.stderr.slice(0, 2000)}`)
  }
  return ran
}

const gnuTime = "/usr/bin/time"

/** Whether peak memory can be measured here. */
export const canMeasureMemory = (): boolean => fs.existsSync(gnuTime)

/**
 * The median over `times` runs of `command`'s peak resident set size in KiB, or null without GNU
 * time. Fails when a run exits non-zero (the figure would be of something else).
 */
export const peakKiB = async (command: Command, times: number): Promise<number | null> => {
  if (!canMeasureMemory()) return null
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-bench-rss-"))
  try {
    const samples: Array<number> = []
    for (let i = 0; i < times; i++) {
      const output = path.join(directory, `${i}.txt`)
      await runOk({ ...command, file: gnuTime, args: ["-f", "%M", "-o", output, command.file, ...command.args] })
      samples.push(Number.parseInt(fs.readFileSync(output, "utf8").trim().split("\n").pop() ?? "", 10))
    }
    return median(samples)
  } finally {
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

/** A peak memory for the report: `82.4 MiB`, or why there is none. */
export const mebibytes = (kib: number | null): string => kib === null ? "unavailable (no GNU time)" : `${(kib / 1024).toFixed(1)} MiB`

/** The environment of this process without what would point a child at another store or repository. */
export const cleanEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("RATCHET_") || key.startsWith("GIT_") || key === "NODE_OPTIONS") continue
    env[key] = value
  }
  return { ...env, NO_COLOR: "1" }
}

/** Runs `git args` in `cwd`. */
export const git = (cwd: string, env: NodeJS.ProcessEnv, args: ReadonlyArray<string>) => runOk({ file: "git", args, cwd, env })

/** A git repository at `repo` with one commit of `files` (relative path → content). */
export const gitRepository = async (repo: string, env: NodeJS.ProcessEnv, files: Readonly<Record<string, string>>): Promise<void> => {
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repo, name)), { recursive: true })
    fs.writeFileSync(path.join(repo, name), content)
  }
  await git(repo, env, ["init", "-q"])
  await git(repo, env, ["config", "user.name", "Ratchet bench"])
  await git(repo, env, ["config", "user.email", "bench@ratchet.invalid"])
  await git(repo, env, ["config", "commit.gpgsign", "false"])
  await git(repo, env, ["add", "."])
  await git(repo, env, ["commit", "-q", "-m", "initial commit"])
}
