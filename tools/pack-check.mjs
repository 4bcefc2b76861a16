#!/usr/bin/env node
/**
 * Packaging check: does the package a user installs from npm work, does it drag in only the
 * dependencies we mean it to, and do the packaging linters find nothing wrong with its tarball?
 *
 * Usage: `node tools/pack-check.mjs <packageDir>` (relative to the repository root), after the
 * package and the `@ratchet/*` packages it depends on are built — the nx `pack-check` target
 * depends on `build` and `^build`.
 *
 * 1. `npm pack` the package into a temporary directory, and with it every `@ratchet/*` package it
 *    depends on at runtime (`dependencies` and `peerDependencies`, transitively), each from its
 *    workspace directory (found through the root `workspaces`): they are not on the registry, so a
 *    user gets them as tarballs published alongside. Check every file list: it must hold
 *    `package.json`, a `LICENSE`, a `README.md` and every file the manifest's entry points name
 *    (`exports`, with a wildcard target matching at least one file, `main`, `types`, `bin`; see
 *    tools/pack-entries.mjs), and no tests, test or mutation configuration, reports or
 *    `*.tsbuildinfo`.
 * 2. Lint the package's own tarball with publint (every message, suggestions included, is a
 *    problem) and, when anything can import it, with `@arethetypeswrong/cli` under the `esm-only`
 *    profile, over every subpath it exports (wildcards expanded over the tarball's files, since
 *    attw does not expand them). ADR 0025 says why that profile.
 * 3. Install all the tarballs together into an empty temporary project, the way a user would, with
 *    the registry peer dependencies of every one of them (`effect`, `@effect/sql`, …) named
 *    explicitly at the exact versions the package pins in its `devDependencies` — npm's automatic
 *    peer install is not something to rely on when the packages come from tarballs. Optional peers
 *    (`peerDependenciesMeta`) are left out, so the smoke script proves the package works without
 *    them. Check that every `@ratchet/*` package in that project came from one of the tarballs, and
 *    that the installed manifest's runtime dependencies (`dependencies`, `peerDependencies`,
 *    `optionalDependencies`) are exactly the set listed for the package in
 *    `tools/pack-expectations.json`.
 * 4. Run the package's smoke script, `<packageDir>/pack-smoke.mjs`, inside that project. It
 *    imports the package by name and exits non-zero when the package does not behave.
 *
 * Prints one line, `pack-check <name>@<version>: ok — …`, or `pack-check <name>@<version>: FAILED`
 * followed by one indented line per problem; exits 0 or 1, and removes its temporary directories
 * either way. Network access to the npm registry is needed for the packages' own dependencies
 * (`--prefer-offline` uses the npm cache first).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { entryProblems, importableSubpaths, namedFiles } from "./pack-entries.mjs"
import { attwFindings, attwProfile, publintProblems } from "./pack-lint.mjs"

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

/** The workspace's own packages: never on the registry, so they are packed from their workspace directories. */
const scope = "@ratchet/"

/** An exact version, the only kind of pin that makes the consumer reproducible. */
const exactVersion = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/

/**
 * @typedef {object} Manifest
 * @property {string} name
 * @property {string} version
 * @property {Record<string, string>} [dependencies]
 * @property {Record<string, string>} [peerDependencies]
 * @property {Record<string, string>} [devDependencies]
 * @property {Record<string, { optional?: boolean }>} [peerDependenciesMeta]
 * @property {unknown} [exports]
 * @property {unknown} [main]
 * @property {unknown} [types]
 * @property {unknown} [bin]
 */

/** @typedef {{ dir: string, manifest: Manifest }} Workspace */

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

/** @param {string} dir */
const relative = (dir) => path.relative(repoRoot, dir).split(path.sep).join("/")

/**
 * The `@ratchet/*` packages a package needs at runtime. A peer counts too: it cannot come from the
 * registry either.
 *
 * @param {Manifest} pkg
 */
const workspaceDependencies = (pkg) =>
  [...new Set([pkg.dependencies, pkg.peerDependencies].flatMap((deps) => Object.keys(deps ?? {})))].filter((name) =>
    name.startsWith(scope)
  )

/**
 * The problems in a tarball's file list; `whose` names the tarball in them.
 *
 * @param {string} whose
 * @param {Manifest} pkg
 * @param {string[]} files
 */
const fileProblems = (whose, pkg, files) => [
  ...entryProblems(pkg, files).map((problem) => `${whose} ${problem}`),
  ...files.flatMap((file) => {
    const match = forbidden.find(({ pattern }) => pattern.test(file))
    return match === undefined ? [] : [`${whose} ships ${match.what}: ${file} (exclude it in package.json "files")`]
  })
]

/**
 * The workspace directory of every package, by name, from the root manifest's `workspaces`.
 *
 * @returns {Map<string, string>}
 */
const workspaceDirs = () => {
  /** @type {{ workspaces?: string[] }} */
  const root = readJson(path.join(repoRoot, "package.json"))
  /** @type {Map<string, string>} */
  const dirs = new Map()
  for (const pattern of root.workspaces ?? []) {
    const candidates = pattern.endsWith("/*")
      ? fs.readdirSync(path.join(repoRoot, pattern.slice(0, -2))).map((dir) => path.join(repoRoot, pattern.slice(0, -2), dir))
      : [path.join(repoRoot, pattern)]
    for (const dir of candidates) {
      const file = path.join(dir, "package.json")
      if (fs.existsSync(file)) dirs.set(readJson(file).name, dir)
    }
  }
  return dirs
}

/**
 * Every installed copy of a `@ratchet/*` package at or below `nodeModules`.
 *
 * @param {string} nodeModules
 * @param {string[]} found
 * @returns {string[]}
 */
const ratchetCopies = (nodeModules, found = []) => {
  if (!fs.existsSync(nodeModules)) return found
  for (const entry of fs.readdirSync(nodeModules)) {
    if (entry.startsWith(".")) continue
    const at = path.join(nodeModules, entry)
    const dirs = entry.startsWith("@") ? fs.readdirSync(at).map((name) => path.join(at, name)) : [at]
    for (const dir of dirs) {
      if (entry === scope.slice(0, -1)) found.push(dir)
      ratchetCopies(path.join(dir, "node_modules"), found)
    }
  }
  return found
}

/**
 * Print the failure, one indented line per problem, and set a failing exit code; the caller still
 * cleans up.
 *
 * @param {string} label
 * @param {string[]} problems
 */
const report = (label, problems) => {
  console.log([`pack-check ${label}: FAILED`, ...problems.map((problem) => `  - ${problem}`)].join("\n"))
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

/** @type {Manifest} */
const manifest = readJson(path.join(packageDir, "package.json"))
const label = `${manifest.name}@${manifest.version}`

/** @type {Record<string, { runtimeDependencies: string[] } | undefined>} */
const expectations = readJson(expectationsFile)
const expected = expectations[manifest.name]
if (expected === undefined) {
  fail(label, [`tools/pack-expectations.json has no entry for ${manifest.name}: list the runtime dependencies it may have`])
}
const smokeScript = path.join(packageDir, "pack-smoke.mjs")
if (!fs.existsSync(smokeScript)) fail(label, [`no smoke script: write ${relative(smokeScript)}`])

/**
 * What is wrong before anything is packed: every problem at once, so one build fixes them all.
 *
 * @type {string[]}
 */
const unready = []
/**
 * Every file an entry point of the package names that is not in its directory yet: what its
 * build produces (`dist/index.js`, …), checked before packing so a missing build says so plainly.
 *
 * @param {Workspace} workspace
 */
const checkBuilt = ({ dir, manifest: workspace }) => {
  for (const file of namedFiles(workspace)) {
    if (!fs.existsSync(path.join(dir, file))) {
      unready.push(
        `${relative(dir)}/${file} is missing: build first (npx nx run ${workspace.name}:build, or npx nx run ${manifest.name}:pack-check, which builds what it needs)`
      )
    }
  }
}
checkBuilt({ dir: packageDir, manifest })

/**
 * The `@ratchet/*` packages the package needs, transitively, in the order they were found.
 *
 * @type {Workspace[]}
 */
const dependencies = []
const workspaces = workspaceDirs()
const pending = workspaceDependencies(manifest)
// `pending` grows while it is walked: each dependency adds its own.
for (const name of pending) {
  if (name === manifest.name || dependencies.some((dependency) => dependency.manifest.name === name)) continue
  const dir = workspaces.get(name)
  if (dir === undefined) {
    unready.push(`${name} is a runtime dependency, but no workspace of the root package.json is named so: there is nothing to pack it from`)
    continue
  }
  /** @type {Manifest} */
  const dependency = readJson(path.join(dir, "package.json"))
  checkBuilt({ dir, manifest: dependency })
  dependencies.push({ dir, manifest: dependency })
  pending.push(...workspaceDependencies(dependency))
}

/**
 * The registry peers of every package installed, at the version the package under check pins (the
 * one its own tests ran against), else the version the package declaring the peer pins. Optional
 * peers are not installed: the package must work without them.
 *
 * @type {Map<string, string>}
 */
const peers = new Map()
for (const { manifest: declaring } of [{ manifest }, ...dependencies]) {
  for (const name of Object.keys(declaring.peerDependencies ?? {})) {
    if (name.startsWith(scope) || peers.has(name) || declaring.peerDependenciesMeta?.[name]?.optional === true) continue
    const pin = manifest.devDependencies?.[name] ?? declaring.devDependencies?.[name]
    if (pin === undefined || !exactVersion.test(pin)) {
      unready.push(
        `${declaring.name} has the peer dependency ${name}, but ${manifest.name}'s devDependencies do not pin it to an exact version (found ${pin ?? "nothing"})`
      )
      continue
    }
    peers.set(name, pin)
  }
}
if (unready.length > 0) fail(label, unready)

const work = fs.mkdtempSync(path.join(os.tmpdir(), "ratchet-pack-check-"))
try {
  /** @type {string[]} */
  const problems = []

  /**
   * Pack one package into the temporary directory and check its file list.
   *
   * @param {string} dir
   * @param {string} whose how problems name the tarball
   */
  const pack = (dir, whose) => {
    /** @type {Array<{ filename: string, files: Array<{ path: string }> }>} */
    const packed = JSON.parse(run("npm", ["pack", "--json", "--pack-destination", work], dir))
    const files = (packed[0]?.files ?? []).map((file) => file.path)
    problems.push(...fileProblems(whose, readJson(path.join(dir, "package.json")), files))
    return { tarball: path.join(work, packed[0]?.filename ?? ""), files }
  }
  const own = pack(packageDir, "the tarball")
  const tarballs = [own.tarball, ...dependencies.map(({ dir, manifest: { name } }) => pack(dir, `the tarball of ${name}`).tarball)]

  // The linters judge the package's own tarball; each dependency's is judged by its own check.
  problems.push(...(await publintProblems(own.tarball)))
  const subpaths = importableSubpaths(manifest, own.files)
  const typed = subpaths.length > 0 ? attwFindings(own.tarball, subpaths) : []
  problems.push(...typed)

  const consumer = path.join(work, "consumer")
  fs.mkdirSync(consumer)
  fs.writeFileSync(
    path.join(consumer, "package.json"),
    `${JSON.stringify({ name: "pack-check-consumer", version: "0.0.0", private: true, type: "module" }, null, 2)}\n`
  )
  const peerSpecs = [...peers].map(([name, version]) => `${name}@${version}`)
  // One install, so npm resolves the workspace dependencies to the tarballs beside them.
  run("npm", ["install", ...tarballs, ...peerSpecs, "--no-audit", "--no-fund", "--prefer-offline", "--no-package-lock"], consumer)

  // A `@ratchet/*` package anywhere but at the top, or one that was not packed, came from the
  // registry: its version range did not match the workspace version it was meant to get.
  const packedNames = [manifest.name, ...dependencies.map((dependency) => dependency.manifest.name)]
  for (const copy of ratchetCopies(path.join(consumer, "node_modules"))) {
    const name = `${scope}${path.basename(copy)}`
    if (!packedNames.includes(name) || copy !== path.join(consumer, "node_modules", ...name.split("/"))) {
      problems.push(`${path.relative(consumer, copy).split(path.sep).join("/")} was installed from the registry, not from a packed tarball`)
    }
  }

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

  const alongside = [
    ...dependencies.map(({ manifest: { name, version } }) => `${name}@${version} (packed)`),
    ...peerSpecs
  ]
  if (problems.length > 0) report(label, problems)
  else {
    console.log(
      `pack-check ${label}: ok — ${own.files.length} files, publint clean, ${
        subpaths.length > 0 ? `attw (${attwProfile}) clean on ${subpaths.length} subpaths` : "nothing to import, attw not run"
      }, runtime dependencies [${runtime.join(", ")}], installed with [${alongside.join(", ")}]; ${smoke}`
    )
  }
} catch (error) {
  report(label, [error instanceof Error ? error.message : String(error)])
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
