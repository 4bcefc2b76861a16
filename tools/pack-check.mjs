#!/usr/bin/env node
/**
 * Packaging check: does the package a user installs from npm work, and does it drag in only the
 * dependencies we mean it to?
 *
 * Usage: `node tools/pack-check.mjs <packageDir>` (relative to the repository root), after the
 * package is built — the nx `pack-check` target depends on `build`.
 *
 * 1. `npm pack` the package into a temporary directory and check the file list: it must hold
 *    `package.json`, `dist/index.js` and `dist/index.d.ts`, and no tests, test or mutation
 *    configuration, reports or `*.tsbuildinfo`.
 * 2. Install the tarball into an empty temporary project, the way a user would (peer
 *    dependencies included), and check that the installed manifest's runtime dependencies
 *    (`dependencies`, `peerDependencies`, `optionalDependencies`) are exactly the set listed for
 *    the package in `tools/pack-expectations.json`.
 * 3. Run the package's smoke script, `<packageDir>/pack-smoke.mjs`, inside that project. It
 *    imports the package by name and exits non-zero when the package does not behave.
 *
 * Prints one line, `pack-check <name>@<version>: ok — …` or `… FAILED — <every problem>`, exits
 * 0 or 1, and removes its temporary directories either way. Network access to the npm registry
 * is needed for the package's own dependencies (`--prefer-offline` uses the npm cache first).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const expectationsFile = path.join(repoRoot, "tools", "pack-expectations.json")

/** Files that belong in the repository but never in a published tarball. */
const forbidden = [
  { pattern: /(^|\/)(test|tests|__tests__)\//, what: "a test directory" },
  { pattern: /\.(test|spec)\.[cm]?[jt]sx?$/, what: "a test file" },
  { pattern: /(^|\/)[^/]*\.tsbuildinfo$/, what: "TypeScript build state" },
  { pattern: /(^|\/)(vitest|stryker)\.config\.[^/]+$/, what: "test configuration" },
  { pattern: /(^|\/)reports\//, what: "a report" },
  { pattern: /(^|\/)pack-smoke\.mjs$/, what: "the packaging smoke script" }
]

const required = ["package.json", "dist/index.js", "dist/index.d.ts"]

/** An environment without the `npm_*` variables of an enclosing `npm run`, so nested npm commands see only the temporary project. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith("npm_")))

/**
 * Run a command; return its stdout, or throw with its stderr.
 *
 * @param {string} command
 * @param {string[]} args
 * @param {string} cwd
 */
const run = (command, args, cwd) => {
  const result = spawnSync(command, args, { cwd, env: cleanEnv, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  if (result.error !== undefined) throw new Error(`${command} ${args.join(" ")} could not start: ${result.error.message}`)
  if (result.status !== 0) {
    const output = `${result.stderr}\n${result.stdout}`.trim().split("\n").slice(-5).join(" | ")
    throw new Error(`${command} ${args.join(" ")} exited with ${result.status}: ${output}`)
  }
  return result.stdout
}

/** @param {string} file */
const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"))

/**
 * Print the failure line and set a failing exit code; the caller still cleans up.
 *
 * @param {string} label
 * @param {string[]} problems
 */
const report = (label, problems) => {
  console.log(`pack-check ${label}: FAILED — ${problems.join("; ")}`)
  process.exitCode = 1
}

/**
 * Fail before anything needs cleaning up.
 *
 * @param {string} label
 * @param {string[]} problems
 * @returns {never}
 */
const fail = (label, problems) => {
  report(label, problems)
  process.exit(1)
}

const argument = process.argv[2]
if (argument === undefined) fail("(no package)", ["usage: node tools/pack-check.mjs <packageDir>"])

const packageDir = [path.resolve(repoRoot, argument), path.resolve(argument)].find((dir) =>
  fs.existsSync(path.join(dir, "package.json"))
)
if (packageDir === undefined) fail(argument, [`no package.json in ${argument} (give the directory relative to the repository root)`])

/** @type {{ name: string, version: string }} */
const manifest = readJson(path.join(packageDir, "package.json"))
const label = `${manifest.name}@${manifest.version}`

/** @type {Record<string, { runtimeDependencies: string[] } | undefined>} */
const expectations = readJson(expectationsFile)
const expected = expectations[manifest.name]
if (expected === undefined) {
  fail(label, [`tools/pack-expectations.json has no entry for ${manifest.name}: list the runtime dependencies it may have`])
}
const smokeScript = path.join(packageDir, "pack-smoke.mjs")
if (!fs.existsSync(smokeScript)) fail(label, [`no smoke script: write ${path.relative(repoRoot, smokeScript)}`])
if (!fs.existsSync(path.join(packageDir, "dist", "index.js"))) {
  fail(label, [`${path.relative(repoRoot, packageDir)}/dist/index.js is missing: build first (npx nx run ${manifest.name}:build)`])
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-pack-check-"))
try {
  /** @type {string[]} */
  const problems = []

  /** @type {Array<{ filename: string, files: Array<{ path: string }> }>} */
  const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], packageDir))
  const tarball = path.join(work, packed[0]?.filename ?? "")
  const files = (packed[0]?.files ?? []).map((file) => file.path)
  for (const file of required) if (!files.includes(file)) problems.push(`the tarball lacks ${file}`)
  for (const file of files) {
    const match = forbidden.find(({ pattern }) => pattern.test(file))
    if (match !== undefined) problems.push(`the tarball ships ${match.what}: ${file} (exclude it in package.json "files")`)
  }

  const consumer = path.join(work, "consumer")
  fs.mkdirSync(consumer)
  fs.writeFileSync(
    path.join(consumer, "package.json"),
    `${JSON.stringify({ name: "pack-check-consumer", version: "0.0.0", private: true, type: "module" }, null, 2)}\n`
  )
  run("npm", ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline", "--no-package-lock"], consumer)

  /** @type {Record<string, Record<string, string> | undefined>} */
  const installed = readJson(path.join(consumer, "node_modules", ...manifest.name.split("/"), "package.json"))
  const runtime = [
    ...new Set(["dependencies", "peerDependencies", "optionalDependencies"].flatMap((field) => Object.keys(installed[field] ?? {})))
  ].sort()
  const allowed = [...expected.runtimeDependencies].sort()
  if (runtime.join(",") !== allowed.join(",")) {
    problems.push(
      `runtime dependencies are [${runtime.join(", ")}] but tools/pack-expectations.json allows exactly [${allowed.join(", ")}]`
    )
  }

  fs.copyFileSync(smokeScript, path.join(consumer, "pack-smoke.mjs"))
  /** @type {string} */
  let smoke = ""
  try {
    smoke = run("node", ["pack-smoke.mjs"], consumer).trim().split("\n").join(" ")
  } catch (error) {
    problems.push(`smoke script failed: ${error instanceof Error ? error.message : String(error)}`)
  }

  if (problems.length > 0) report(label, problems)
  else console.log(`pack-check ${label}: ok — ${files.length} files, runtime dependencies [${runtime.join(", ")}]; ${smoke}`)
} catch (error) {
  report(label, [error instanceof Error ? error.message : String(error)])
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
