/**
 * `ratchet/layering`: a package imports only `@ratchet/*` packages on an earlier row of the
 * package table (tools/eslint/layers.js), and nothing imports an app.
 *
 * Because every allowed arrow points up the table, a cycle between packages cannot be written.
 * The rule also rejects what would get around that: reaching into another project by relative
 * path, importing another package's `internal/*` modules, and importing an `@ratchet/*` package
 * the table does not list (it could not be placed, so it could not be checked). A package may
 * always import itself by name.
 *
 * Option `alsoAllow` lists packages these files may import whatever their row — test files use
 * it for `@ratchet/testkit`, whose suites exist to test the layers above it. Apps stay out of
 * bounds regardless.
 *
 * Files outside `packages/*` and `apps/*` are not checked.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { rankOf } from "../layers.js"
import { appPackageNames, isRelative, moduleReferences, packageOf, projectOf, repoRoot } from "../modules.js"

/** @type {import("eslint").Rule.RuleModule} */
const rule = {
  meta: {
    type: "problem",
    docs: {
      description: "Keep @ratchet/* dependencies pointing one way down the package table, and keep apps unimported."
    },
    schema: [
      {
        type: "object",
        properties: { alsoAllow: { type: "array", items: { type: "string" } } },
        additionalProperties: false
      }
    ],
    messages: {
      notAbove:
        "{{importer}} (rank {{importerRank}}) may not import {{target}} (rank {{targetRank}}): a package imports only packages listed above it in the package table, so dependencies point one way and cannot form a cycle. Move what both need into a package above {{importer}}, or pass the value in (rule ratchet/layering, table in tools/eslint/layers.js).",
      importsApp:
        '{{importer}} may not import the app {{target}} ("{{source}}"): nothing imports an app. Move the shared code into a package the app imports (rule ratchet/layering).',
      internal:
        '{{importer}} may not import "{{source}}": the internal/* modules of {{target}} are private to it. Use what {{target}} exports publicly, or make the module public there (rule ratchet/layering).',
      unknownPackage:
        "{{importer}} imports {{target}}, which is not in the package table: add {{target}} to the row it belongs on in tools/eslint/layers.js so its imports can be checked (rule ratchet/layering).",
      unknownImporter:
        "{{importer}} is not in the package table: add it to the row it belongs on in tools/eslint/layers.js so its imports can be checked (rule ratchet/layering).",
      relativeProject:
        '{{importer}} may not reach into {{target}} by the relative path "{{source}}": import it by its package name, so the dependency is declared and its layer checked (rule ratchet/layering).'
    }
  },
  create(context) {
    const root = repoRoot(context)
    const file = context.filename
    const importer = projectOf(file, root)
    if (importer === undefined) return {}
    const options = /** @type {{ alsoAllow?: string[] }} */ (context.options[0] ?? {})
    const alsoAllow = new Set(options.alsoAllow ?? [])
    const apps = appPackageNames(root)
    const visitor = moduleReferences(({ node, source }) => {
      if (source === undefined) return
      if (isRelative(source)) {
        const target = projectOf(path.resolve(path.dirname(file), source), root)
        if (target === undefined || target.root === importer.root) return
        const messageId = target.kind === "app" ? "importsApp" : "relativeProject"
        context.report({ node, messageId, data: { importer: importer.name, target: target.name, source } })
        return
      }
      const { name, subpath } = packageOf(source)
      if (name === importer.name) return
      const data = { importer: importer.name, target: name, source }
      if (apps.has(name)) {
        context.report({ node, messageId: "importsApp", data })
        return
      }
      if (!name.startsWith("@ratchet/")) return
      const targetRank = rankOf(name)
      if (targetRank === undefined) {
        context.report({ node, messageId: "unknownPackage", data })
        return
      }
      if (subpath === "internal" || subpath.startsWith("internal/")) {
        context.report({ node, messageId: "internal", data })
        return
      }
      if (importer.rank === undefined || alsoAllow.has(name) || targetRank < importer.rank) return
      context.report({
        node,
        messageId: "notAbove",
        data: { ...data, importerRank: String(importer.rank), targetRank: String(targetRank) }
      })
    })
    return {
      ...visitor,
      /** @param {import("estree").Program} node */
      Program(node) {
        if (importer.kind === "package" && importer.rank === undefined) {
          context.report({ node, loc: { line: 1, column: 0 }, messageId: "unknownImporter", data: { importer: importer.name } })
        }
      }
    }
  }
}

export default rule
