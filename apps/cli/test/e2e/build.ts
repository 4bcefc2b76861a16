/**
 * The end-to-end tests' global setup: builds the bundled CLI (`apps/cli/dist/ratchet.mjs`, with
 * the runner `ratchet run` starts, `apps/cli/dist/ratchet-runner.mjs`) and the runner's own bundle
 * (`apps/runner/dist/ratchet-runner.mjs`, which the multi-machine scenarios start directly) once,
 * with the same scripts `npm install` runs, so every test spawns what a user runs.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../../build.mjs", import.meta.url))], { stdio: "inherit" })
  execFileSync(process.execPath, [fileURLToPath(new URL("../../../runner/build.mjs", import.meta.url))], { stdio: "inherit" })
}
