/**
 * What the stand-in hosts (`claude.mjs`, `codex.mjs`) do once they have checked their command line,
 * chosen by the test through the environment:
 * - `STAND_IN_FIXTURE`: the recorded stream to print on stdout;
 * - `STAND_IN_EXIT`: the exit code (0 by default);
 * - `STAND_IN_WRITE`: a workspace-relative file it writes, as the agent's edit;
 * - `STAND_IN_HANG_SECONDS`: how long it waits after printing, on a child of its own process group
 *   (so a timeout must kill the group, not only this process);
 * - `STAND_IN_RECORD`: a file it writes its arguments, its RATCHET_* variables, its working
 *   directory, its pid and its child's pid to, as JSON;
 * - `STAND_IN_STARTS`: a file it appends one line to each time it starts;
 * - and the REVISE loop's behaviours (`revise.mjs`).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { revise } from "./revise.mjs"

export const behave = (args) => {
  const env = process.env
  if (env.STAND_IN_STARTS) fs.appendFileSync(env.STAND_IN_STARTS, `${process.pid}\n`)
  revise(args)
  if (env.STAND_IN_WRITE) {
    fs.mkdirSync(path.dirname(path.resolve(env.STAND_IN_WRITE)), { recursive: true })
    fs.writeFileSync(env.STAND_IN_WRITE, "--json\n")
  }
  const hang = Number(env.STAND_IN_HANG_SECONDS ?? "0")
  const child = hang > 0 ? spawn(process.execPath, ["-e", `setTimeout(() => {}, ${hang * 1000})`], { stdio: "ignore" }) : null
  if (env.STAND_IN_RECORD) {
    const ratchet = Object.fromEntries(Object.entries(env).filter(([key]) => key.startsWith("RATCHET_")))
    fs.writeFileSync(env.STAND_IN_RECORD, JSON.stringify({ args, env: ratchet, cwd: process.cwd(), pid: process.pid, child: child?.pid ?? null }))
  }
  if (env.STAND_IN_FIXTURE) process.stdout.write(fs.readFileSync(env.STAND_IN_FIXTURE))
  process.stderr.write("stand-in: done\n")
  if (child !== null) child.on("exit", () => process.exit(Number(env.STAND_IN_EXIT ?? "0")))
  else process.exitCode = Number(env.STAND_IN_EXIT ?? "0")
}
