#!/usr/bin/env node
/**
 * A stand-in for the `claude` program, for the runner's tests (no model is called): it takes the
 * command line the runner starts Claude Code with, refuses one without the flags a headless stream
 * needs (as the real CLI would not write stream-json without them), and prints a recorded stream
 * of Claude Code's documented format from `packages/host-claude-code/test/fixtures/stream-json/`.
 *
 * What it does is chosen by the test through its environment:
 * - `STAND_IN_FIXTURE`: the stream file to print on stdout;
 * - `STAND_IN_EXIT`: the exit code (0 by default);
 * - `STAND_IN_WRITE`: a workspace-relative file it writes, as the agent's edit;
 * - `STAND_IN_HANG_SECONDS`: how long it sleeps after printing, in a child of its own process
 *   group (so a timeout must kill the group, not only this process);
 * - `STAND_IN_RECORD`: a file it writes its arguments, its RATCHET_* variables, its pid and its
 *   child's pid to, as JSON;
 * - `STAND_IN_STARTS`: a file it appends one line to each time it starts.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const args = process.argv.slice(2)
const has = (...flags) => flags.every((flag) => args.includes(flag))
const valueOf = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
if (!has("-p", "--verbose") || valueOf("--output-format") !== "stream-json") {
  process.stderr.write("Error: --output-format=stream-json requires --print and --verbose\n")
  process.exit(1)
}
const env = process.env
if (env.STAND_IN_STARTS) fs.appendFileSync(env.STAND_IN_STARTS, `${process.pid}\n`)
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
