/**
 * Bundles an app's `src/bin.ts` into `dist/<name>.mjs` with esbuild, so a command starts in a
 * fraction of the time an unbundled Effect program takes (the hook path and every `ratchet`
 * command live on it). The native SQLite driver stays external (it is loaded from node_modules);
 * the workspace packages are bundled from their TypeScript sources.
 *
 * Code splitting is on: a module the app loads with a dynamic `import()` goes into a chunk of its
 * own, parsed only when it is imported (`ratchet mcp` keeps the MCP SDK there, so `ratchet hook`
 * never parses it), and what it shares with the entry goes into a shared chunk the entry imports.
 * An app without dynamic imports is still one file. Chunks sit beside the entry in `dist/`, so
 * paths computed from `import.meta.url` mean the same in every one of them; their names carry a
 * content hash.
 *
 * Written atomically: every file goes in by a rename, chunks before the entry that imports them, so
 * a process started while another build runs (a test suite's setup, `npm install`) loads the old
 * bundle or the new one, never half of one. The old bundle's chunks stay until a later build finds
 * them more than ten minutes old (a running `ratchet mcp` of the old build may still import its
 * chunk), then they are removed.
 *
 * Used by `apps/cli/build.mjs` and `apps/runner/build.mjs`.
 */
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"

/** A chunk's file name: esbuild's `[name]-[hash]` with our extension. */
const chunkFile = /^[\w.]+-[A-Z0-9]{8}\.mjs$/

/** How old another build's chunk must be before it is removed. */
const staleAfterMs = 10 * 60 * 1000

/**
 * @param {string} app the app's directory (holding package.json and src/bin.ts)
 * @param {string} name the bundle's file name, without `.mjs`
 */
export const bundle = async (app, name) => {
  const { version } = JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8"))
  const dist = path.join(app, "dist")
  const result = await esbuild.build({
    entryPoints: { [name]: path.join(app, "src/bin.ts") },
    outdir: dist,
    outExtension: { ".js": ".mjs" },
    entryNames: "[name]",
    chunkNames: "[name]-[hash]",
    splitting: true,
    write: false,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@ratchet/source"],
    external: ["better-sqlite3", "pg-native"],
    define: { __RATCHET_VERSION__: JSON.stringify(version) },
    // CommonJS dependencies call require(); give every ES module of the bundle one.
    banner: { js: "import { createRequire as __ratchetRequire } from \"node:module\"; const require = __ratchetRequire(import.meta.url);" },
    legalComments: "none",
    logLevel: "warning"
  })
  const entry = path.join(dist, `${name}.mjs`)
  const files = [...result.outputFiles].sort((a, b) => Number(a.path === entry) - Number(b.path === entry))
  for (const file of files) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true })
    const aside = `${file.path}.${process.pid}.tmp`
    fs.writeFileSync(aside, file.contents)
    fs.renameSync(aside, file.path)
  }
  const written = new Set(files.map((file) => path.basename(file.path)))
  const now = Date.now()
  for (const file of fs.readdirSync(dist)) {
    if (written.has(file) || !chunkFile.test(file)) continue
    const stale = path.join(dist, file)
    try {
      if (now - fs.statSync(stale).mtimeMs > staleAfterMs) fs.rmSync(stale, { force: true })
    } catch {
      // Removed by a build running at the same time.
    }
  }
}
