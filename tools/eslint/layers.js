/**
 * The package table from the design brief, as data: the one place that says which
 * `@ratchet/*` package may import which.
 *
 * Dependency arrows point one way, down the table. A package may import only packages on an
 * earlier row (a lower rank); a package on the same row or a later one is out of bounds, so a
 * cycle between packages cannot be written. Apps sit below everything and nothing imports them.
 *
 * Adding a package means adding it to a row here; the `ratchet/layering` rule rejects any
 * `@ratchet/*` package it cannot place.
 *
 * @since 0.1.0
 */

/**
 * Rows of the package table, top to bottom. The index of a row is its rank.
 *
 * @since 0.1.0
 * @type {ReadonlyArray<ReadonlyArray<string>>}
 */
export const layers = [
  ["@ratchet/kernel"],
  ["@ratchet/storage"],
  ["@ratchet/storage-sqlite", "@ratchet/storage-postgres"],
  ["@ratchet/lease", "@ratchet/memory"],
  ["@ratchet/verifier"],
  ["@ratchet/controller"],
  ["@ratchet/host"],
  ["@ratchet/host-claude-code", "@ratchet/host-codex", "@ratchet/host-mcp"],
  ["@ratchet/testkit"]
]

/**
 * The applications, by directory under `apps/`. Their rank is below every package row. When an
 * app has a `package.json`, its `name` is what other code would import; until then the rule
 * assumes `@ratchet/<directory>`.
 *
 * @since 0.1.0
 * @type {ReadonlyArray<string>}
 */
export const apps = ["cli", "runner"]

/**
 * The rank shared by every app: one past the last package row.
 *
 * @since 0.1.0
 */
export const appRank = layers.length

/**
 * The rank of a package name in the table, or `undefined` when the table does not list it.
 *
 * @since 0.1.0
 * @param {string} packageName
 * @returns {number | undefined}
 */
export const rankOf = (packageName) => {
  const index = layers.findIndex((row) => row.includes(packageName))
  return index === -1 ? undefined : index
}
