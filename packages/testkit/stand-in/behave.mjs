/**
 * What the stand-in hosts (`claude.mjs`, `codex.mjs`) do once they have checked their command line,
 * chosen by the test through the environment:
 * - `STAND_IN_STREAM`: one of the stand-ins' own streams to print on stdout (`streams.mjs`:
 *   `success`, `error`, `truncated`, `crash`, `garbage`), or `STAND_IN_FIXTURE`: a recorded stream
 *   of the test's own, printed as it is;
 * - `STAND_IN_EXIT`: the exit code (0 by default, 1 for the `error` stream);
 * - `STAND_IN_WRITE`: a workspace-relative file it writes, as the agent's edit;
 * - `STAND_IN_HANG_UNTIL`: a file; it waits after printing until the file exists (at most 10 minutes),
 *   on a child of its own process group, like `STAND_IN_HANG_SECONDS`
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
import { crashes } from "./streams.mjs"

export const behave = (args) => {
  const env = process.env
  if (env.STAND_IN_STARTS) fs.appendFileSync(env.STAND_IN_STARTS, `${process.pid}\n`)
  revise(args)
  if (env.STAND_IN_WRITE) {
    fs.mkdirSync(path.dirname(path.resolve(env.STAND_IN_WRITE)), { recursive: true })
    fs.writeFileSync(env.STAND_IN_WRITE, "--json\n")
  }
  const hang = Number(env.STAND_IN_HANG_SECONDS ?? "0")
  // Until a file appears (at most 10 minutes): a test that must act while the agent still runs
  // releases it when it is done, instead of guessing how long that takes on a loaded machine.
  const until = env.STAND_IN_HANG_UNTIL
  const waiting = until
    ? `const fs = require("node:fs"); const end = Date.now() + 600000; const t = setInterval(() => { if (fs.existsSync(${JSON.stringify(until)}) || Date.now() > end) clearInterval(t) }, 50)`
    : `setTimeout(() => {}, ${hang * 1000})`
  const child = hang > 0 || until ? spawn(process.execPath, ["-e", waiting], { stdio: "ignore" }) : null
  if (env.STAND_IN_RECORD) {
    const ratchet = Object.fromEntries(Object.entries(env).filter(([key]) => key.startsWith("RATCHET_")))
    fs.writeFileSync(env.STAND_IN_RECORD, JSON.stringify({ args, env: ratchet, cwd: process.cwd(), pid: process.pid, child: child?.pid ?? null }))
  }
  // Written synchronously, so that a crash comes after the whole stream, as a host's would.
  if (env.STAND_IN_FIXTURE) fs.writeSync(1, fs.readFileSync(env.STAND_IN_FIXTURE))
  if (crashes()) process.kill(process.pid, "SIGKILL")
  process.stderr.write("stand-in: done\n")
  if (child !== null) child.on("exit", () => process.exit(Number(env.STAND_IN_EXIT ?? "0")))
  else process.exitCode = Number(env.STAND_IN_EXIT ?? "0")
}
