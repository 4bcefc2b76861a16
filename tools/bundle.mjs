/**
 * Bundles an app's `src/bin.ts` into `dist/<name>.mjs` with esbuild: one file, so a command starts
 * in a fraction of the time an unbundled Effect program takes (the hook path and every `ratchet`
 * command live on it). The native SQLite driver stays external (it is loaded from node_modules);
 * the workspace packages are bundled from their TypeScript sources. Written atomically: a process
 * started while another build runs (a test suite's setup, `npm install`) loads the old bundle or
 * the new one, never half of one.
 *
 * Used by `apps/cli/build.mjs` and `apps/runner/build.mjs`.
 */
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * @param {string} app the app's directory (holding package.json and src/bin.ts)
 * @param {string} name the bundle's file name, without `.mjs`
 */
export const bundle = async (app, name) => {
  const { version } = JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8"))
  const result = await esbuild.build({
    entryPoints: [path.join(app, "src/bin.ts")],
    outfile: path.join(app, "dist", `${name}.mjs`),
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
}
