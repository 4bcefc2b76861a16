/**
 * `ratchet/allowed-imports`: a project may import relative modules and the external modules on
 * its allowlist, nothing else.
 *
 * Every way a file can name a module counts — `import`, `import type`, `export … from`,
 * `import("…")`, `require("…")` — because a type import still makes the published declarations
 * depend on the package. A dynamic import whose specifier is not a string literal is rejected:
 * the boundary is checked by name, and a computed name cannot be checked.
 *
 * An allowlist entry is an exact specifier (`effect`) or a prefix followed by `*`: `effect/*`
 * admits any subpath of `effect` (but neither `effect` itself nor `effect-extra`), `node:*` any
 * Node builtin by its `node:` name.
 *
 * @since 0.1.0
 */
import { isRelative, moduleReferences } from "../modules.js"

/**
 * Whether a specifier matches one allowlist entry.
 *
 * @param {string} source
 * @param {string} entry
 */
const matches = (source, entry) =>
  entry.endsWith("*") ? source.startsWith(entry.slice(0, -1)) && source.length >= entry.length : source === entry

/** @type {import("eslint").Rule.RuleModule} */
const rule = {
  meta: {
    type: "problem",
    docs: {
      description: "Allow a project to import only relative modules and the external modules on its allowlist."
    },
    schema: [
      {
        type: "object",
        properties: {
          project: { type: "string" },
          allow: { type: "array", items: { type: "string" } },
          reason: { type: "string" }
        },
        required: ["project", "allow", "reason"],
        additionalProperties: false
      }
    ],
    messages: {
      notAllowed:
        '{{project}} may not import "{{source}}": {{reason}}. Its allowed imports are relative modules and {{allowed}} (rule ratchet/allowed-imports).',
      notLiteral:
        "{{project}} may not import a computed module specifier: the import boundary is checked by name, so write the specifier as a string literal (rule ratchet/allowed-imports)."
    }
  },
  create(context) {
    const options = /** @type {{ project: string, allow: string[], reason: string }} */ (context.options[0])
    const allowed = options.allow.length === 0 ? "nothing else" : options.allow.join(", ")
    return moduleReferences(({ node, source }) => {
      if (source === undefined) {
        context.report({ node, messageId: "notLiteral", data: { project: options.project } })
        return
      }
      if (isRelative(source) || options.allow.some((entry) => matches(source, entry))) return
      context.report({
        node,
        messageId: "notAllowed",
        data: { project: options.project, source, reason: options.reason, allowed }
      })
    })
  }
}

export default rule
