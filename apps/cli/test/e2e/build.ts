/**
 * The end-to-end tests' global setup: builds the bundled CLI (`apps/cli/dist/ratchet.mjs`, with
 * the runner `ratchet run` starts, `apps/cli/dist/ratchet-runner.mjs`) and the runner's own bundle
 * (`apps/runner/dist/ratchet-runner.mjs`, which the multi-machine scenarios start directly) once,
 * with the same scripts `npm install` runs, so every test spawns what a user runs.
 *
 * It also bundles the tests' own helper programs (`check-log.ts`, `fail-run.ts`, `forge.ts`,
 * `lesson-store.ts`) into {@link helpersDir}: run through `tsx` each call transpiled the packages'
 * sources again, 3 s of CPU against 0.7 s for a bundle, and the scenarios call them about a
 * hundred times.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"

/** Where the helper programs' bundles go (`<name>.mjs`): ignored by git and the linter, never packed. */
export const helpersDir = fileURLToPath(new URL("../../node_modules/.cache/e2e-helpers/", import.meta.url))

/** The helper programs, by the name their bundle takes. */
export const helpers = ["check-log", "fail-run", "forge", "lesson-store"] as const

export default async function setup(): Promise<void> {
  execFileSync(process.execPath, [fileURLToPath(new URL("../../build.mjs", import.meta.url))], { stdio: "inherit" })
  execFileSync(process.execPath, [fileURLToPath(new URL("../../../runner/build.mjs", import.meta.url))], { stdio: "inherit" })
  const { build } = await import("esbuild")
  // A chunk an earlier build named differently would stay beside the new ones.
  fs.rmSync(helpersDir, { recursive: true, force: true })
  await build({
    entryPoints: Object.fromEntries(helpers.map((name) => [name, fileURLToPath(new URL(`./${name}.ts`, import.meta.url))])),
    outdir: helpersDir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@ratchet/source"],
    external: ["better-sqlite3", "pg-native"],
    // Bundled CommonJS (pg) calls require; an ES module has none of its own.
    banner: { js: "import { createRequire as __helperRequire } from \"node:module\"; const require = __helperRequire(import.meta.url);" },
    logLevel: "warning"
  })
}
