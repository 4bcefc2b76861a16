/**
 * Bundles an app's entry points (`src/bin.ts`, and any others it names) into `dist/<name>.mjs`
 * with esbuild, so a command starts in a fraction of the time an unbundled Effect program takes
 * (the hook path and every `ratchet` command live on it). The native SQLite driver stays external
 * (it is loaded from node_modules); the workspace packages are bundled from their TypeScript
 * sources.
 *
 * Code splitting is on: a module the app loads with a dynamic `import()` goes into a chunk of its
 * own, parsed only when it is imported (`ratchet mcp` keeps the MCP SDK there, so `ratchet hook`
 * never parses it), and what entries and chunks share goes into shared chunks they import. An app
 * with one entry and no dynamic imports is still one file. Chunks sit beside the entries in
 * `dist/`, so paths computed from `import.meta.url` mean the same in every one of them; their
 * names carry a content hash.
 *
 * The build is stamped: `__RATCHET_VERSION__` is the app's package version and
 * `__RATCHET_COMMIT__` the commit of the checkout it was built in (tools/commit-stamp.mjs).
 *
 * Written atomically: every file goes in by a rename, chunks before the entries that import them,
 * so a process started while another build runs (a test suite's setup, `npm install`) loads the
 * old bundle or the new one, never half of one. The old bundle's chunks stay until a later build
 * finds them more than ten minutes old (a running `ratchet mcp` of the old build may still import
 * its chunk), then they are removed; a build for a package tarball (`clean`) removes them at once,
 * so the tarball holds one build and nothing else.
 *
 * Used by `apps/cli/build.mjs` and `apps/runner/build.mjs`.
 */
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { commit } from "./commit-stamp.mjs"

/** A chunk's file name: esbuild's `[name]-[hash]` with our extension. */
const chunkFile = /^[\w.]+-[A-Z0-9]{8}\.mjs$/

/** How old another build's chunk must be before it is removed. */
const staleAfterMs = 10 * 60 * 1000

/**
 * @param {string} app the app's directory (holding package.json and src/bin.ts)
 * @param {string | Record<string, string>} entries the bundle's file name (without `.mjs`) for
 *   `src/bin.ts`, or bundle names mapped to entry files relative to `app`
 * @param {{ clean?: boolean }} [options] `clean`: remove every file in `dist/` this build did not
 *   write, whatever its age (for a package tarball), except the files another build is writing
 */
export const bundle = async (app, entries, options = {}) => {
  const { version } = JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8"))
  const dist = path.join(app, "dist")
  const named = typeof entries === "string" ? { [entries]: "src/bin.ts" } : entries
  const entryPoints = Object.fromEntries(Object.entries(named).map(([name, file]) => [name, path.join(app, file)]))
  const result = await esbuild.build({
    entryPoints,
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
    define: { __RATCHET_VERSION__: JSON.stringify(version), __RATCHET_COMMIT__: JSON.stringify(commit()) },
    // CommonJS dependencies call require(); give every ES module of the bundle one.
    banner: { js: "import { createRequire as __ratchetRequire } from \"node:module\"; const require = __ratchetRequire(import.meta.url);" },
    legalComments: "none",
    logLevel: "warning"
  })
  const entryFiles = new Set(Object.keys(named).map((name) => path.join(dist, `${name}.mjs`)))
  const files = [...result.outputFiles].sort((a, b) => Number(entryFiles.has(a.path)) - Number(entryFiles.has(b.path)))
  for (const file of files) {
    fs.mkdirSync(path.dirname(file.path), { recursive: true })
    const aside = `${file.path}.${process.pid}.tmp`
    fs.writeFileSync(aside, file.contents)
    fs.renameSync(aside, file.path)
  }
  const written = new Set(files.map((file) => path.basename(file.path)))
  const now = Date.now()
  for (const file of fs.readdirSync(dist)) {
    // Another build's file on its way in (renamed a moment later) is never removed.
    if (written.has(file) || file.endsWith(".tmp")) continue
    const stale = path.join(dist, file)
    try {
      if (options.clean === true) fs.rmSync(stale, { recursive: true, force: true })
      else if (chunkFile.test(file) && now - fs.statSync(stale).mtimeMs > staleAfterMs) fs.rmSync(stale, { force: true })
    } catch {
      // Removed by a build running at the same time.
    }
  }
}
