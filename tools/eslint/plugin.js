/**
 * The `ratchet` ESLint plugin: the module boundaries of the repository, enforced by lint.
 *
 * - `ratchet/allowed-imports` — a project imports only relative modules and its allowlist
 *   (the kernel: `effect` and `@noble/hashes`).
 * - `ratchet/layering` — `@ratchet/*` dependencies point one way down the package table, and
 *   nothing imports an app.
 * - `ratchet/no-cycle` — no import cycle between the modules of a project.
 *
 * The root `eslint.config.js` decides which files each rule covers.
 *
 * @since 0.1.0
 */
import allowedImports from "./rules/allowed-imports.js"
import layering from "./rules/layering.js"
import noCycle from "./rules/no-cycle.js"

/**
 * @since 0.1.0
 * @type {import("eslint").ESLint.Plugin}
 */
const plugin = {
  meta: { name: "ratchet", version: "0.1.0" },
  rules: {
    "allowed-imports": allowedImports,
    layering,
    "no-cycle": noCycle
  }
}

export default plugin
