#!/usr/bin/env node
/**
 * A stand-in for the `codex` program, for the runner's tests (no model is called): it takes the
 * command line the runner starts Codex with, refuses one that is not `codex exec --json` in the
 * workspace-write sandbox (and any that asks for full access), then does what the test chose
 * (`behave.mjs`): typically printing a recorded stream of Codex's documented `exec --json` format
 * from `packages/host-codex/test/fixtures/exec-json/`.
 */
import { behave } from "./behave.mjs"

const args = process.argv.slice(2)
const valueOf = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
if (args[0] !== "exec" || !args.includes("--json") || valueOf("--sandbox") !== "workspace-write") {
  process.stderr.write("stand-in codex: expected exec --json --sandbox workspace-write\n")
  process.exit(2)
}
if (args.some((arg) => arg === "--full-auto" || arg.startsWith("--dangerously") || arg === "danger-full-access")) {
  process.stderr.write("stand-in codex: full access is never asked for\n")
  process.exit(2)
}
behave(args)
