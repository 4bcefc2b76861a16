/**
 * Bundles the CLI into `dist/ratchet.mjs` and, in the same build, the runner it starts into
 * `dist/ratchet-runner.mjs` (see tools/bundle.mjs): the `ratchet` bin loads the first, and
 * `ratchet run` starts the second through `bin/ratchet-runner.mjs`. The package carries its own
 * runner, built from the same sources at the same commit, so an installed `ratchet` never looks for
 * one elsewhere (ADR 0024). The two share chunks, so the runner adds little to the tarball.
 *
 * `--clean` (the `prepack` script) also removes every earlier build's files from `dist/`, so a
 * tarball holds exactly this build.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundle } from "../../tools/bundle.mjs"

await bundle(
  path.dirname(fileURLToPath(import.meta.url)),
  { ratchet: "src/bin.ts", "ratchet-runner": "../runner/src/bin.ts" },
  { clean: process.argv.includes("--clean") }
)
