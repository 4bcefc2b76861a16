/**
 * The end-to-end tests' global setup: builds the bundled CLI (`apps/cli/dist/ratchet.mjs`) and the
 * bundled runner it starts (`apps/runner/dist/ratchet-runner.mjs`) once, with the same scripts
 * `npm install` runs, so every test spawns what a user runs.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../../build.mjs", import.meta.url))], { stdio: "inherit" })
  execFileSync(process.execPath, [fileURLToPath(new URL("../../../runner/build.mjs", import.meta.url))], { stdio: "inherit" })
}
