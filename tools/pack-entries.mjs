/**
 * What a package manifest promises its consumers, read the way Node reads it, for the packaging
 * check (tools/pack-check.mjs): the files its entry points name (`exports`, `main`, `types`, `bin`),
 * the subpaths a wildcard export opens over a tarball's files, and how the findings of publint and
 * `@arethetypeswrong/cli` become one line per problem. Pure functions of their arguments, so the
 * rules are tested without packing anything.
 */

/**
 * @typedef {object} Manifest
 * @property {string} name
 * @property {string} version
 * @property {unknown} [exports]
 * @property {unknown} [main]
 * @property {unknown} [module]
 * @property {unknown} [types]
 * @property {unknown} [typings]
 * @property {unknown} [bin]
 */

/**
 * One export: its subpath key (`.`, `./Event`, `./*`) and every target it names under any
 * condition, in the order written, each with the conditions that lead to it.
 *
 * @typedef {{ key: string, targets: Array<{ conditions: string[], target: string }>, blocked: boolean }} ExportEntry
 */

/** @param {string} file */
const bare = (file) => file.replace(/^\.\//, "")

/**
 * The `exports` field as subpath keys: a string, an array or an object of conditions is the
 * package root's (`.`), as Node reads it.
 *
 * @param {unknown} exports
 * @returns {Record<string, unknown>}
 */
const subpathMap = (exports) => {
  if (exports === undefined) return {}
  if (typeof exports !== "object" || exports === null || Array.isArray(exports)) return { ".": exports }
  const keys = Object.keys(exports)
  return keys.length > 0 && keys.every((key) => !key.startsWith(".")) ? { ".": exports } : /** @type {Record<string, unknown>} */ (exports)
}

/**
 * Every string target under `value`, with the conditions that select it.
 *
 * @param {unknown} value
 * @param {string[]} conditions
 * @returns {Array<{ conditions: string[], target: string }>}
 */
const leaves = (value, conditions = []) => {
  if (typeof value === "string") return [{ conditions, target: value }]
  if (Array.isArray(value)) return value.flatMap((item) => leaves(item, conditions))
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([condition, inner]) => leaves(inner, [...conditions, condition]))
  }
  return []
}

/**
 * The manifest's exports, one entry per subpath key; `blocked` is a `null` target (a closed subpath).
 *
 * @param {Manifest} manifest
 * @returns {ExportEntry[]}
 */
export const exportEntries = (manifest) =>
  Object.entries(subpathMap(manifest.exports)).map(([key, value]) => ({ key, targets: leaves(value), blocked: value === null }))

/**
 * The `bin` field's files: a string names the package's one command.
 *
 * @param {Manifest} manifest
 * @returns {string[]}
 */
export const binFiles = (manifest) => {
  const { bin } = manifest
  if (typeof bin === "string") return [bare(bin)]
  if (typeof bin === "object" && bin !== null) return Object.values(bin).filter((file) => typeof file === "string").map(bare)
  return []
}

/**
 * Whether anything can import the package (as opposed to only running its `bin`): an open export
 * other than `./package.json`, or one of the legacy `main`, `module`, `types` fields.
 *
 * @param {Manifest} manifest
 */
export const importable = (manifest) =>
  exportEntries(manifest).some((entry) => !entry.blocked && entry.key !== "./package.json") ||
  [manifest.main, manifest.module, manifest.types, manifest.typings].some((field) => typeof field === "string")

/**
 * A wildcard target (`./dist/*.js`) as a pattern over tarball paths whose one group is what `*`
 * stood for.
 *
 * @param {string} target
 */
const targetPattern = (target) => {
  const [prefix = "", suffix = ""] = bare(target).split("*")
  const escape = (/** @type {string} */ text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  return new RegExp(`^${escape(prefix)}(.+)${escape(suffix)}$`)
}

/**
 * What is wrong with a tarball's file list against the manifest's entry points: a file an exact
 * export, `main`, `module`, `types` or `bin` names that is not in it, a wildcard target that
 * matches none of its files, or a package with no entry point at all. `package.json`, a `LICENSE`
 * and a `README.md` are required of every tarball.
 *
 * @param {Manifest} manifest
 * @param {string[]} files the tarball's paths, relative to the package directory
 * @returns {string[]} one phrase per problem, naming the file and the field that names it
 */
export const entryProblems = (manifest, files) => {
  const present = new Set(files)
  /** @type {string[]} */
  const problems = []
  for (const file of ["package.json", "README.md"]) {
    if (!present.has(file)) problems.push(`lacks ${file}`)
  }
  if (!files.some((file) => /^licen[cs]e(\.[a-z]+)?$/i.test(file))) problems.push("lacks LICENSE")

  for (const entry of exportEntries(manifest)) {
    for (const { conditions, target } of entry.targets) {
      const where = `exports["${[entry.key, ...conditions].join('"]["')}"]`
      if (target.includes("*")) {
        const pattern = targetPattern(target)
        if (!files.some((file) => pattern.test(file))) problems.push(`${where} = ${target} matches no file`)
      } else if (!present.has(bare(target))) {
        problems.push(`lacks ${bare(target)}, which ${where} names`)
      }
    }
  }
  for (const field of /** @type {const} */ (["main", "module", "types", "typings"])) {
    const file = manifest[field]
    if (typeof file === "string" && !present.has(bare(file))) problems.push(`lacks ${bare(file)}, which "${field}" names`)
  }
  for (const file of binFiles(manifest)) {
    if (!present.has(file)) problems.push(`lacks ${file}, which "bin" names`)
  }
  if (!importable(manifest) && binFiles(manifest).length === 0) problems.push(`has no entry point: give it "exports" (or "bin")`)
  return problems
}

/**
 * The files an exact entry point names that must be built before packing (every target that is
 * not a wildcard), for the check that the workspace was built.
 *
 * @param {Manifest} manifest
 * @returns {string[]}
 */
export const namedFiles = (manifest) => [
  ...new Set([
    ...exportEntries(manifest).flatMap((entry) => entry.targets.map(({ target }) => target).filter((target) => !target.includes("*")).map(bare)),
    ...[manifest.main, manifest.module, manifest.types, manifest.typings].filter((file) => typeof file === "string").map(bare),
    ...binFiles(manifest)
  ])
].filter((file) => file !== "package.json")

/**
 * The export key Node picks for `subpath`: the exact key, else the wildcard key with the longest
 * prefix that matches (Node's PATTERN_KEY_COMPARE), else none.
 *
 * @param {ExportEntry[]} entries
 * @param {string} subpath
 */
const bestKey = (entries, subpath) => {
  const exact = entries.find((entry) => entry.key === subpath)
  if (exact !== undefined) return exact
  const candidates = entries.filter((entry) => {
    const star = entry.key.indexOf("*")
    if (star === -1 || entry.key.indexOf("*", star + 1) !== -1) return false
    const prefix = entry.key.slice(0, star)
    const suffix = entry.key.slice(star + 1)
    return subpath.length >= entry.key.length && subpath.startsWith(prefix) && subpath.endsWith(suffix)
  })
  return candidates.sort((a, b) => b.key.indexOf("*") - a.key.indexOf("*") || b.key.length - a.key.length)[0]
}

/**
 * Every subpath a consumer can import, wildcards expanded over the tarball's files: for each
 * open wildcard export, the files its `types` target (else its first target) matches, kept when
 * Node would resolve that subpath through this very key (a `null` key such as `./internal/*`
 * closes what it covers). Exact keys are listed as written. Type checkers do not expand wildcards
 * themselves, so this is the list to check.
 *
 * @param {Manifest} manifest
 * @param {string[]} files the tarball's paths, relative to the package directory
 * @returns {string[]} subpaths like `.`, `./Event`, sorted, without `./package.json`
 */
export const importableSubpaths = (manifest, files) => {
  const entries = exportEntries(manifest)
  const found = new Set()
  for (const entry of entries) {
    if (entry.blocked || entry.key === "./package.json") continue
    if (!entry.key.includes("*")) {
      found.add(entry.key)
      continue
    }
    const typed = entry.targets.find(({ conditions }) => conditions.includes("types")) ?? entry.targets[0]
    if (typed === undefined) continue
    const pattern = targetPattern(typed.target)
    for (const file of files) {
      const match = pattern.exec(file)
      if (match === null) continue
      const subpath = entry.key.replace("*", match[1] ?? "")
      if (bestKey(entries, subpath) === entry) found.add(subpath)
    }
  }
  if (entries.length === 0 && importable(manifest)) found.add(".")
  return [...found].sort()
}

/**
 * The resolution modes `attw --profile <profile>` leaves out, as the CLI defines its profiles:
 * `esm-only` drops CommonJS (`node16-cjs`) and pre-exports resolution (`node10`), `node16` drops
 * `node10`, `strict` drops nothing.
 *
 * @type {Record<string, string[]>}
 */
export const attwIgnoredResolutions = { strict: [], node16: ["node10"], "esm-only": ["node10", "node16-cjs"] }

/**
 * One problem of an attw report: where it is depends on its kind (a subpath and a resolution mode,
 * a file, or a pair of types and implementation files).
 *
 * @typedef {{ kind: string, entrypoint?: string, resolutionKind?: string, fileName?: string, typesFileName?: string, implementationFileName?: string, moduleSpecifier?: string }} AttwProblem
 */

/**
 * The problems of an `attw --format json` report that count under `profile`, one line each:
 * the subpath, the resolution mode and the problem's kind with its documentation page.
 *
 * @param {{ analysis?: { types?: unknown, problems?: Array<AttwProblem> } }} report
 * @param {string} profile
 * @returns {string[]}
 */
export const attwProblems = (report, profile) => {
  const ignored = attwIgnoredResolutions[profile]
  if (ignored === undefined) throw new Error(`unknown attw profile ${profile}: use one of ${Object.keys(attwIgnoredResolutions).join(", ")}`)
  const analysis = report.analysis
  if (analysis === undefined) return ["attw gave no analysis"]
  if (analysis.types === false) return ["attw found no types in the package: add a \"types\" condition to every export"]
  return (analysis.problems ?? [])
    .filter((problem) => problem.resolutionKind === undefined || !ignored.includes(problem.resolutionKind))
    .map((problem) => {
      const where = [
        problem.entrypoint === undefined ? undefined : `"${problem.entrypoint}"`,
        problem.resolutionKind,
        problem.fileName,
        problem.moduleSpecifier === undefined ? undefined : `importing "${problem.moduleSpecifier}"`,
        problem.typesFileName === undefined ? undefined : `types ${problem.typesFileName} for ${problem.implementationFileName ?? "?"}`
      ]
        .filter((part) => part !== undefined)
        .join(" ")
      return `attw: ${problem.kind}${where === "" ? "" : ` at ${where}`} (see https://github.com/arethetypeswrong/arethetypeswrong.github.io/blob/main/docs/problems/${problem.kind}.md)`
    })
}
