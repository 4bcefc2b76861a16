/**
 * The hosts' published schemas (test/fixtures/schemas, README there for their sources), compiled by
 * Ajv in strict mode: an unknown keyword or format in a schema is an error, except the two things
 * declared here, which the publishers use on purpose: SchemaStore's `allowTrailingCommas` (a hint
 * to editors, no constraint) and the formats Codex's schema generator writes for Rust's numbers.
 */
import { Ajv, type ErrorObject } from "ajv"
import addFormatsModule from "ajv-formats"
import * as fs from "node:fs"
import * as path from "node:path"

const directory = path.join(import.meta.dirname, "fixtures", "schemas")

// ajv-formats is CommonJS whose module object is the plugin, with the plugin again as `default`.
const addFormats = addFormatsModule.default

const ajv = new Ajv({ strict: true, allErrors: true })
addFormats(ajv)
ajv.addVocabulary(["allowTrailingCommas"])
ajv.addFormat("uint64", { type: "number", validate: (value: number) => Number.isInteger(value) && value >= 0 })
ajv.addFormat("double", { type: "number", validate: (value: number) => Number.isFinite(value) })

/**
 * The schemas by file name (without `.json`).
 */
export type Name =
  | "claude-code-plugin-manifest"
  | "claude-code-marketplace"
  | "claude-code-settings"
  | "codex-hooks"
  | "codex-config-mcp-servers"
  | "agent-skill-frontmatter"

const compiled = new Map<Name, ReturnType<typeof ajv.compile>>()

/** The schema itself, as published. */
export const schema = (name: Name): { readonly properties: Readonly<Record<string, unknown>> } =>
  JSON.parse(fs.readFileSync(path.join(directory, `${name}.json`), "utf8")) as { readonly properties: Readonly<Record<string, unknown>> }

/** The errors of `value` against schema `name`, one line each: [] when it is valid. */
export const errors = (name: Name, value: unknown): ReadonlyArray<string> => {
  let validate = compiled.get(name)
  if (validate === undefined) {
    validate = ajv.compile(schema(name))
    compiled.set(name, validate)
  }
  return validate(value) ? [] : (validate.errors ?? []).map((error: ErrorObject) => `${error.instancePath || "(root)"} ${error.message ?? "is invalid"} ${JSON.stringify(error.params)}`)
}
