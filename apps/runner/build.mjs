/**
 * Bundles the runner into `dist/ratchet-runner.mjs` with esbuild: one file, so a runner starts in a
 * fraction of the time an unbundled Effect program takes. The native SQLite
 * driver stays external (it is loaded from node_modules); the workspace packages are bundled from
 * their TypeScript sources.
 */
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const { version } = JSON.parse(fs.readFileSync(path.join(here, "package.json"), "utf8"))

const outfile = path.join(here, "dist/ratchet-runner.mjs")

const result = await esbuild.build({
  entryPoints: [path.join(here, "src/bin.ts")],
  outfile,
  // Written below, atomically: a `ratchet` started while another build runs (a test suite's setup,
  // `npm install`) loads the old bundle or the new one, never half of one.
  write: false,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  conditions: ["@ratchet/source"],
  external: ["better-sqlite3", "pg-native"],
  define: { __RATCHET_VERSION__: JSON.stringify(version) },
  // CommonJS dependencies call require(); give the ES module bundle one.
  banner: { js: "import { createRequire as __ratchetRequire } from \"node:module\"; const require = __ratchetRequire(import.meta.url);" },
  legalComments: "none",
  logLevel: "warning"
})

for (const file of result.outputFiles) {
  fs.mkdirSync(path.dirname(file.path), { recursive: true })
  const aside = `${file.path}.${process.pid}.tmp`
  fs.writeFileSync(aside, file.contents)
  fs.renameSync(aside, file.path)
}
