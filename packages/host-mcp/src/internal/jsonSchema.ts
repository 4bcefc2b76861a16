/**
 * An effect `Schema` as a JSON Schema every MCP client accepts, strict validators included.
 *
 * `JSONSchema.make` writes what effect knows, in effect's own way, and three parts of that trip
 * clients up: each built-in refinement titles itself after its call (`"title": "maxLength(200)"`,
 * `"between(1, 500)"`), a host shows those titles to the agent as if they named the field;
 * `Schema.Int` becomes a `$ref` into `$defs`, so the property that uses it has no `type` of its
 * own, which ajv's strict mode refuses; and `Schema.Unknown` becomes `{ "$id": "/schemas/unknown" }`.
 * So every reference is inlined (none of our schemas is recursive), the synthetic titles and
 * `$id`s go, and so do the descriptions effect's refinements give themselves (`an integer`, `a
 * string at most 200 character(s) long`: they restate the keyword beside them, always in lower
 * case, while ours are sentences).
 *
 * Two flavours. `input`: what a tool accepts, closed (`additionalProperties: false`) and with
 * every limit, as the arguments are decoded. `output`: what a tool answers, open (a document may
 * gain a field, and a client holding an older listing must not refuse it) and without value
 * limits (lengths, patterns, ranges), which describe what the store accepts rather than what a
 * reader needs to know: types, required fields and enumerations stay.
 *
 * @internal
 */
import * as JSONSchema from "effect/JSONSchema"
import * as SchemaAST from "effect/SchemaAST"

/** A JSON Schema as a plain JSON value. */
export type Json = { readonly [key: string]: unknown }

/** What an output schema leaves out: limits on values, and formats a validator might not know. */
const valueLimits = new Set([
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties"
])

/** Keywords holding one schema, a list of schemas, or a map of them. */
const single = new Set(["items", "additionalItems", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"])
const lists = new Set(["anyOf", "oneOf", "allOf", "prefixItems"])
const maps = new Set(["properties", "patternProperties"])

/** The description effect's own refinements and primitives give themselves (`an integer`, `a string …`). */
const generated = /^an? [a-z]/

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The definition a `$ref` names (`#/$defs/Int`, `#/definitions/Int`). */
const definitionOf = (ref: string, definitions: Readonly<Record<string, unknown>>): { readonly name: string; readonly schema: Json } => {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)
  const name = match === null ? ref : (match[1] as string).replace(/~1/g, "/").replace(/~0/g, "~")
  const schema = definitions[name]
  if (!isObject(schema)) throw new Error(`JSON Schema: ${ref} names no definition`)
  return { name, schema }
}

const clean = (node: unknown, definitions: Readonly<Record<string, unknown>>, open: boolean, resolving: ReadonlySet<string>): Json => {
  if (!isObject(node)) return {}
  let source: Record<string, unknown> = node
  let seen = resolving
  while (typeof source["$ref"] === "string") {
    const { name, schema } = definitionOf(source["$ref"], definitions)
    if (seen.has(name)) throw new Error(`JSON Schema: ${name} refers to itself; inlining it would never end`)
    seen = new Set([...seen, name])
    const { $ref: _, ...site } = source
    // What the site says of itself (its description, its bounds) overrides the definition's.
    source = { ...schema, ...site }
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(source)) {
    if (key === "title" || key === "$id" || key === "$schema" || key === "$defs" || key === "definitions") continue
    if (key === "description" && (typeof value !== "string" || generated.test(value))) continue
    if (open && valueLimits.has(key)) continue
    if (maps.has(key) && isObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, clean(child, definitions, open, seen)]))
    } else if (lists.has(key) && Array.isArray(value)) {
      out[key] = value.map((child) => clean(child, definitions, open, seen))
    } else if (single.has(key) && isObject(value)) {
      out[key] = clean(value, definitions, open, seen)
    } else {
      out[key] = value
    }
  }
  if (open && (out["additionalProperties"] === false || out["additionalProperties"] === true || (isObject(out["additionalProperties"]) && Object.keys(out["additionalProperties"]).length === 0))) {
    delete out["additionalProperties"]
  }
  if (Array.isArray(out["required"]) && out["required"].length === 0) delete out["required"]
  if (open && isObject(out["properties"]) && Object.keys(out["properties"]).length === 0) delete out["properties"]
  return out
}

/**
 * `schema` as a self-contained JSON Schema: no `$ref`, no `$schema` line (hosts read a tool's
 * schemas as the current draft), no synthetic titles. An input is described as a client sends it
 * (the encoded side); an output as the document a tool answers with, the JSON of the values (the
 * decoded side).
 */
export const of = (schema: { readonly ast: SchemaAST.AST }, flavour: "input" | "output"): Json => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const open = flavour === "output"
  const root = JSONSchema.fromAST(open ? SchemaAST.typeAST(schema.ast) : schema.ast, {
    definitions,
    topLevelReferenceStrategy: "skip",
    additionalPropertiesStrategy: open ? "allow" : "strict"
  })
  return clean(root, definitions, open, new Set())
}
