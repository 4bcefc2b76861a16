/**
 * The runner tests' global setup: builds the bundled runner (`apps/runner/dist/ratchet-runner.mjs`)
 * once, with the script `npm install` runs, so every test spawns what a user runs.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../build.mjs", import.meta.url))], { stdio: "inherit" })
}
