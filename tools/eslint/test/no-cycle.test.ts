/**
 * `ratchet/no-cycle` over the fixture package `packages/demo`: the linted file's imports come
 * from its text, the rest of the graph from disk. Runtime cycles are reported with their path;
 * `import type` cycles, dynamic imports and specifiers inside comments or strings are not edges.
 */
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import rule from "../rules/no-cycle.js"
import { ruleTester } from "./ruleTester.js"

const root = fileURLToPath(new URL("fixtures/repo", import.meta.url))
const src = `${root}/packages/demo/src`

/** Lint a fixture file with its own text. */
const fixture = (file: string) => ({ code: fs.readFileSync(`${src}/${file}`, "utf8"), filename: `${src}/${file}` })

const cycle = (path: string) => ({
  message:
    `Import cycle: ${path}. A cycle makes module initialisation order depend on which file loads first. Move what ` +
    "both sides need into a module neither of them imports, or make an edge `import type` if it only carries types " +
    "(rule ratchet/no-cycle)."
})

ruleTester(root).run("ratchet/no-cycle", rule, {
  valid: [
    fixture("clean/one.ts"),
    fixture("clean/two.ts"),
    fixture("clean/quoted.ts"),
    fixture("typed/left.ts"),
    fixture("typed/right.ts"),
    // product.ts imports maker.ts at runtime; maker.ts reaches back only through type-only edges
    fixture("typed/product.ts"),
    fixture("lazy/front.ts"),
    fixture("lazy/back.ts"),
    // importing a module that sits on a cycle is fine when the walk never comes back here
    { code: 'import { a } from "./a.js"\nexport const c = a', filename: `${src}/clean/two.ts` },
    // the linted file is judged on its text, not on the copy on disk
    { code: "export const c = 3", filename: `${src}/c.ts` },
    // unresolvable and external specifiers are not followed
    { code: 'import { gone } from "./missing.js"\nimport * as Either from "effect/Either"', filename: `${src}/clean/two.ts` },
    // type-only edges back into a cycle do not close it
    { code: 'import type { a } from "./a.js"\nexport const c = 3', filename: `${src}/c.ts` },
    { code: 'export type { a } from "./a.js"\nexport const c = 3', filename: `${src}/c.ts` }
  ],
  invalid: [
    { ...fixture("a.ts"), errors: [{ ...cycle("src/a.ts → src/b.ts → src/c.ts → src/a.ts"), line: 1, column: 19 }] },
    { ...fixture("b.ts"), errors: [cycle("src/b.ts → src/c.ts → src/a.ts → src/b.ts")] },
    { ...fixture("c.ts"), errors: [cycle("src/c.ts → src/a.ts → src/b.ts → src/c.ts")] },
    { ...fixture("self.ts"), errors: [cycle("src/self.ts → src/self.ts")] },
    // `import { type Y }` survives verbatimModuleSyntax as a runtime import, so it is an edge
    { ...fixture("kept/x.ts"), errors: [cycle("src/kept/x.ts → src/kept/y.ts → src/kept/x.ts")] },
    // extensionless specifiers reach directory index files
    { ...fixture("leaf.ts"), errors: [cycle("src/leaf.ts → src/dir/index.ts → src/leaf.ts")] },
    { ...fixture("dir/index.ts"), errors: [cycle("src/dir/index.ts → src/leaf.ts → src/dir/index.ts")] },
    // re-exports are edges, and every import that closes a cycle is reported
    {
      code: 'export * from "./a.js"\nexport { b } from "./b.js"',
      filename: `${src}/c.ts`,
      errors: [
        cycle("src/c.ts → src/a.ts → src/b.ts → src/c.ts"),
        cycle("src/c.ts → src/b.ts → src/c.ts")
      ]
    }
  ]
})
