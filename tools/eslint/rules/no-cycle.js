/**
 * `ratchet/no-cycle`: no import cycle between the modules of a project.
 *
 * For each relative import of the file being linted, the rule follows relative imports from the
 * imported module, reading files from disk, and reports the import when the walk comes back to
 * this file. The message names the whole cycle. Only edges that exist at runtime count: static
 * `import` and `export … from`, minus `import type` / `export type`, which TypeScript erases.
 * (`import { type A }` is kept under `verbatimModuleSyntax` and so counts.) Dynamic `import()`
 * is not followed: it runs after every module has initialised, so it cannot cause the
 * initialisation-order bugs a cycle does.
 *
 * The walk stays inside the file's project (or the repository when the file belongs to none),
 * so cross-package edges are left to `ratchet/layering`, which makes package cycles impossible.
 * Other files are parsed with the TypeScript parser once per lint process and re-read only when
 * their size or modification time changes.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { isRelative, projectOf, repoRoot, resolveRelative } from "../modules.js"

/** @type {Map<string, { mtimeMs: number, size: number, targets: ReadonlyArray<string> }>} */
const edgeCache = new Map()

/**
 * The files a module imports at runtime through relative static imports.
 *
 * @param {string} file absolute path
 * @returns {ReadonlyArray<string>}
 */
const runtimeTargets = (file) => {
  /** @type {fs.Stats} */
  let stats
  try {
    stats = fs.statSync(file)
  } catch {
    return []
  }
  const cached = edgeCache.get(file)
  if (cached !== undefined && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) return cached.targets
  const text = fs.readFileSync(file, "utf8")
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false)
  /** @type {string[]} */
  const targets = []
  for (const statement of sourceFile.statements) {
    /** @type {ts.Expression | undefined} */
    let specifier
    if (ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly !== true) {
      specifier = statement.moduleSpecifier
    } else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) {
      specifier = statement.moduleSpecifier
    }
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !isRelative(specifier.text)) continue
    const target = resolveRelative(file, specifier.text)
    if (target !== undefined) targets.push(target)
  }
  edgeCache.set(file, { mtimeMs: stats.mtimeMs, size: stats.size, targets })
  return targets
}

/** @type {import("eslint").Rule.RuleModule} */
const rule = {
  meta: {
    type: "problem",
    docs: {
      description: "Forbid import cycles between the modules of a project."
    },
    schema: [],
    messages: {
      cycle:
        "Import cycle: {{cycle}}. A cycle makes module initialisation order depend on which file loads first. Move what both sides need into a module neither of them imports, or make an edge `import type` if it only carries types (rule ratchet/no-cycle)."
    }
  },
  create(context) {
    const file = path.resolve(context.filename)
    const root = repoRoot(context)
    const boundary = projectOf(file, root)?.root ?? root
    /** @param {string} candidate */
    const inBoundary = (candidate) => !path.relative(boundary, candidate).startsWith("..")
    /** Files known not to lead back to this one; shared by every import of the file. */
    const deadEnds = new Set()

    /**
     * A path from `start` back to this file, or `undefined`. A depth-first walk that visits each
     * file once; when it fails, everything it visited is a dead end for the file's other imports.
     *
     * @param {string} start
     * @returns {string[] | undefined}
     */
    const pathBack = (start) => {
      const visited = new Set()
      /**
       * @param {string} from
       * @param {string[]} trail
       * @returns {string[] | undefined}
       */
      const walk = (from, trail) => {
        if (from === file) return trail
        if (visited.has(from) || deadEnds.has(from) || !inBoundary(from)) return undefined
        visited.add(from)
        for (const next of runtimeTargets(from)) {
          const found = walk(next, [...trail, from])
          if (found !== undefined) return found
        }
        return undefined
      }
      const found = walk(start, [file])
      if (found === undefined) for (const dead of visited) deadEnds.add(dead)
      return found
    }

    /**
     * @param {any} node the declaration
     * @param {boolean} typeOnly
     */
    const check = (node, typeOnly) => {
      const source = node.source
      if (typeOnly || source?.type !== "Literal" || typeof source.value !== "string" || !isRelative(source.value)) return
      const target = resolveRelative(file, source.value)
      if (target === undefined) return
      const trail = pathBack(target)
      if (trail === undefined) return
      const cycle = [...trail, file].map((step) => path.relative(boundary, step).split(path.sep).join("/")).join(" → ")
      context.report({ node: source, messageId: "cycle", data: { cycle } })
    }

    return {
      /** @param {any} node */
      ImportDeclaration: (node) => check(node, node.importKind === "type"),
      /** @param {any} node */
      ExportNamedDeclaration: (node) => check(node, node.exportKind === "type"),
      /** @param {any} node */
      ExportAllDeclaration: (node) => check(node, node.exportKind === "type")
    }
  }
}

export default rule
