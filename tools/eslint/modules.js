/**
 * What the Ratchet lint rules share: finding every module specifier a file names, placing a
 * file in its project (`packages/<dir>` or `apps/<dir>`), and resolving a relative specifier
 * the way TypeScript's NodeNext resolution does for our sources (`./X.js` is `./X.ts` on disk).
 *
 * The repository root comes from `settings.ratchet.root` (the root config sets it), falling back
 * to ESLint's working directory. Everything here is synchronous and cached per process, because
 * a lint run is one process and the files it reads do not move under it.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { appRank, apps, rankOf } from "./layers.js"

/**
 * @typedef {object} ModuleReference
 * @property {import("estree").Node} node the node to report on (the specifier literal when there is one)
 * @property {string | undefined} source the specifier, or `undefined` when it is not a literal
 * @property {boolean} typeOnly whether the reference vanishes at runtime (`import type`, `export type`, `import("x")` in a type)
 * @property {"import" | "export" | "dynamic" | "require" | "type"} kind the syntax that names it
 */

/**
 * @typedef {object} Project
 * @property {"package" | "app"} kind where it lives: `packages/` or `apps/`
 * @property {string} dir its directory name under `packages/` or `apps/`
 * @property {string} root its absolute directory
 * @property {string} name its package name (`package.json` `name`, else `@ratchet/<dir>`)
 * @property {number | undefined} rank its row in the package table; `undefined` when unlisted
 */

/**
 * The string value of a literal-like specifier node, or `undefined`.
 *
 * @param {any} node
 * @returns {string | undefined}
 */
const literalValue = (node) => {
  if (node == null) return undefined
  if (node.type === "Literal" && typeof node.value === "string") return node.value
  if (node.type === "TemplateLiteral" && node.expressions.length === 0) {
    return node.quasis[0]?.value.cooked ?? undefined
  }
  return undefined
}

/**
 * A rule visitor that calls `onReference` once for every module the file names: static
 * imports (including `import type`), `export … from`, `import("…")`, `require("…")`,
 * `import x = require("…")` and `typeof import("…")` in types.
 *
 * @since 0.1.0
 * @param {(reference: ModuleReference) => void} onReference
 * @returns {import("eslint").Rule.RuleListener}
 */
export const moduleReferences = (onReference) => ({
  /** @param {any} node */
  ImportDeclaration(node) {
    onReference({ node: node.source, source: literalValue(node.source), typeOnly: node.importKind === "type", kind: "import" })
  },
  /** @param {any} node */
  ExportNamedDeclaration(node) {
    if (node.source == null) return
    onReference({ node: node.source, source: literalValue(node.source), typeOnly: node.exportKind === "type", kind: "export" })
  },
  /** @param {any} node */
  ExportAllDeclaration(node) {
    onReference({ node: node.source, source: literalValue(node.source), typeOnly: node.exportKind === "type", kind: "export" })
  },
  /** @param {any} node */
  ImportExpression(node) {
    onReference({ node: node.source, source: literalValue(node.source), typeOnly: false, kind: "dynamic" })
  },
  /** @param {any} node */
  CallExpression(node) {
    if (node.callee.type !== "Identifier" || node.callee.name !== "require" || node.arguments.length !== 1) return
    const argument = node.arguments[0]
    onReference({ node: argument, source: literalValue(argument), typeOnly: false, kind: "require" })
  },
  /** @param {any} node */
  TSImportEqualsDeclaration(node) {
    if (node.moduleReference.type !== "TSExternalModuleReference") return
    const expression = node.moduleReference.expression
    onReference({ node: expression, source: literalValue(expression), typeOnly: node.importKind === "type", kind: "require" })
  },
  /** @param {any} node */
  TSImportType(node) {
    // typescript-eslint 8.x names the specifier `source`; older parsers wrap it in `argument`.
    const specifier = "source" in node ? node.source : node.argument?.type === "TSLiteralType" ? node.argument.literal : node.argument
    onReference({ node: specifier ?? node, source: literalValue(specifier), typeOnly: true, kind: "type" })
  }
})

/**
 * Whether a specifier is relative (`./x.js`, `../x.js`, `.`, `..`).
 *
 * @since 0.1.0
 * @param {string} source
 */
export const isRelative = (source) =>
  source === "." || source === ".." || source.startsWith("./") || source.startsWith("../")

/**
 * The package a bare specifier names, with its subpath: `@ratchet/kernel/Attempt` is
 * `{ name: "@ratchet/kernel", subpath: "Attempt" }`.
 *
 * @since 0.1.0
 * @param {string} source
 * @returns {{ name: string, subpath: string }}
 */
export const packageOf = (source) => {
  const parts = source.split("/")
  const size = source.startsWith("@") ? 2 : 1
  return { name: parts.slice(0, size).join("/"), subpath: parts.slice(size).join("/") }
}

/**
 * The repository root the rules measure paths against.
 *
 * @since 0.1.0
 * @param {import("eslint").Rule.RuleContext} context
 * @returns {string}
 */
export const repoRoot = (context) => {
  const settings = /** @type {{ ratchet?: { root?: unknown } }} */ (context.settings ?? {})
  const root = settings.ratchet?.root
  return path.resolve(typeof root === "string" ? root : context.cwd)
}

/** @type {Map<string, string | undefined>} */
const packageNames = new Map()

/**
 * The `name` in a directory's `package.json`, or `undefined` when there is none.
 *
 * @param {string} dir
 * @returns {string | undefined}
 */
const packageNameIn = (dir) => {
  if (!packageNames.has(dir)) {
    let name
    try {
      const json = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))
      name = typeof json.name === "string" ? json.name : undefined
    } catch {
      name = undefined
    }
    packageNames.set(dir, name)
  }
  return packageNames.get(dir)
}

/**
 * The project a file belongs to, or `undefined` for files outside `packages/*` and `apps/*`.
 *
 * @since 0.1.0
 * @param {string} file absolute path
 * @param {string} root repository root
 * @returns {Project | undefined}
 */
export const projectOf = (file, root) => {
  const relative = path.relative(root, file)
  if (relative.startsWith("..") || path.isAbsolute(relative)) return undefined
  const [top, dir, ...rest] = relative.split(path.sep)
  if (dir === undefined || rest.length === 0) return undefined
  if (top !== "packages" && top !== "apps") return undefined
  const projectRoot = path.join(root, top, dir)
  const name = packageNameIn(projectRoot) ?? `@ratchet/${dir}`
  return top === "apps"
    ? { kind: "app", dir, root: projectRoot, name, rank: appRank }
    : { kind: "package", dir, root: projectRoot, name, rank: rankOf(name) }
}

/**
 * The package names other code would use to import an app: each app's `package.json` name, and
 * `@ratchet/<directory>` for every app in the table.
 *
 * @since 0.1.0
 * @param {string} root repository root
 * @returns {Set<string>}
 */
export const appPackageNames = (root) => {
  const names = new Set(apps.map((dir) => `@ratchet/${dir}`))
  /** @type {string[]} */
  let dirs = []
  try {
    dirs = fs.readdirSync(path.join(root, "apps"))
  } catch {
    dirs = []
  }
  for (const dir of dirs) {
    const name = packageNameIn(path.join(root, "apps", dir))
    if (name !== undefined) names.add(name)
  }
  return names
}

/**
 * Whether a path names an existing regular file.
 *
 * @param {string} file
 */
const isFile = (file) => {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

/** The source extension TypeScript looks for behind each emitted one. */
const sourceExtensions = /** @type {Record<string, ReadonlyArray<string>>} */ ({
  ".js": [".ts", ".tsx"],
  ".jsx": [".tsx"],
  ".mjs": [".mts"],
  ".cjs": [".cts"]
})

/**
 * The file a relative specifier names, or `undefined` when nothing on disk matches.
 * `./X.js` finds `./X.ts` first, then `./X.js`; an extensionless specifier finds `X.ts`,
 * `X.js`, then `X/index.ts` and `X/index.js`.
 *
 * @since 0.1.0
 * @param {string} fromFile absolute path of the importing file
 * @param {string} source a relative specifier
 * @returns {string | undefined}
 */
export const resolveRelative = (fromFile, source) => {
  const target = path.resolve(path.dirname(fromFile), source)
  const extension = path.extname(target)
  const stem = target.slice(0, target.length - extension.length)
  const candidates = [
    ...(sourceExtensions[extension] ?? []).map((sourceExtension) => stem + sourceExtension),
    target,
    `${target}.ts`,
    `${target}.js`,
    path.join(target, "index.ts"),
    path.join(target, "index.js")
  ]
  return candidates.find(isFile)
}
