#!/usr/bin/env node
// The runner `ratchet run` starts: the bundle `apps/cli/build.mjs` builds beside the CLI's (the
// root `prepare` script builds it on install, `prepack` before packing). Not a bin of the package:
// people start runs with `ratchet run`. Built on first use when it is missing, so a checkout where
// the build did not run still works.
import { existsSync } from "node:fs"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const bundle = new URL("../dist/ratchet-runner.mjs", import.meta.url)
if (!existsSync(fileURLToPath(bundle))) {
  const built = spawnSync(process.execPath, [fileURLToPath(new URL("../build.mjs", import.meta.url))], { stdio: "inherit" })
  if (built.status !== 0) {
    process.stderr.write("error: the ratchet runner is not built and building it failed. Run: npm run build -w @ratchet/cli\n")
    process.exit(1)
  }
}
await import(bundle.href)
