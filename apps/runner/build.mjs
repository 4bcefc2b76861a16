/**
 * Bundles the runner into `dist/ratchet-runner.mjs` (see tools/bundle.mjs): the `ratchet-runner`
 * bin loads it, and `ratchet run` starts it.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundle } from "../../tools/bundle.mjs"

await bundle(path.dirname(fileURLToPath(import.meta.url)), "ratchet-runner")
