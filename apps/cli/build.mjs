/**
 * Bundles the CLI into `dist/ratchet.mjs` (see tools/bundle.mjs): the `ratchet` bin loads it.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundle } from "../../tools/bundle.mjs"

await bundle(path.dirname(fileURLToPath(import.meta.url)), "ratchet")
