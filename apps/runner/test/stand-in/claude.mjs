#!/usr/bin/env node
/**
 * A stand-in for the `claude` program, for the runner's tests (no model is called): it takes the
 * command line the runner starts Claude Code with, refuses one without the flags a headless stream
 * needs (as Claude Code does not write stream-json without print mode and --verbose), then does what
 * the test chose (`behave.mjs`): typically printing a recorded stream of Claude Code's documented
 * format from `packages/host-claude-code/test/fixtures/stream-json/`.
 */
import { behave } from "./behave.mjs"

const args = process.argv.slice(2)
const valueOf = (flag) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined)
if (!args.includes("-p") || !args.includes("--verbose") || valueOf("--output-format") !== "stream-json") {
  process.stderr.write("Error: --output-format=stream-json requires --print and --verbose\n")
  process.exit(1)
}
behave(args)
