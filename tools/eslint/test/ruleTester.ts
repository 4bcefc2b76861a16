/**
 * ESLint's `RuleTester`, wired to vitest and the TypeScript parser the repository lints with.
 * Each rule test file builds one with the `settings` its rule reads.
 */
import { RuleTester } from "eslint"
import tseslint from "typescript-eslint"
import { describe, it } from "vitest"

RuleTester.describe = describe
RuleTester.it = it
RuleTester.itOnly = it.only

/** A rule tester whose files are TypeScript modules; `root` is the repository root the rules see. */
export const ruleTester = (root: string): RuleTester =>
  new RuleTester({
    languageOptions: { parser: tseslint.parser, ecmaVersion: "latest", sourceType: "module" },
    settings: { ratchet: { root } }
  })
