#!/usr/bin/env node
/**
 * A stand-in for the `codex` program, to drive Ratchet's agent steps without a model: it takes the
 * command line the runner starts Codex with, refuses one that is not `codex exec --json` in the
 * workspace-write sandbox (and any that asks for full access), then does what the environment chose
 * (`behave.mjs`): typically printing one of its streams of Codex's `exec --json` format
 * (`STAND_IN_STREAM`, `streams.mjs`, held to the Codex SDK's published `ThreadEvent` by
 * `@ratchet/host-codex`'s tests).
 */
import { behave } from "./behave.mjs"
import { chooseStream } from "./streams.mjs"

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
chooseStream("codex")
behave(args)
