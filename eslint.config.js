/**
 * The lint configuration for the whole repository. `npm test` runs it on every project, so the
 * module boundaries below fail the build rather than relying on review:
 *
 * - the kernel imports nothing but relative modules, `effect` and `@noble/hashes`;
 * - `@ratchet/*` dependencies point one way down the package table (tools/eslint/layers.js),
 *   and nothing imports an app;
 * - no import cycles between the modules of a project.
 *
 * Type-aware linting is left off to keep lint fast; `tsc` is the type check.
 */
import js from "@eslint/js"
import { defineConfig } from "eslint/config"
import tseslint from "typescript-eslint"
import ratchet from "./tools/eslint/plugin.js"

const root = import.meta.dirname

const sources = ["packages/*/src/**/*.{ts,mts,cts,js,mjs}", "apps/*/src/**/*.{ts,mts,cts,js,mjs}"]
const tests = [
  "packages/*/test/**/*.{ts,mts,cts,js,mjs}",
  "packages/testkit/stand-in/**/*.mjs",
  "apps/*/test/**/*.{ts,mts,cts,js,mjs}",
  "packages/*/src/**/*.test.ts",
  "apps/*/src/**/*.test.ts"
]

export default defineConfig(
  {
    ignores: ["**/node_modules/", "**/dist/", "**/reports/", "**/coverage/", "**/.stryker-tmp*/", ".nx/", "tools/eslint/test/fixtures/"]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    settings: { ratchet: { root } },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrorsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_"
        }
      ],
      // `interface X extends Schema.Type<typeof X> {}` is how Effect names a schema's type.
      "@typescript-eslint/no-empty-object-type": ["error", { allowInterfaces: "with-single-extends" }],
      // `export declare namespace X` groups a module's types, as Effect does.
      "@typescript-eslint/no-namespace": ["error", { allowDeclarations: true }]
    }
  },
  {
    files: ["**/*.{js,mjs,cjs}"],
    languageOptions: {
      globals: {
        console: "readonly",
        process: "readonly",
        URL: "readonly",
        Buffer: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly"
      }
    }
  },
  {
    files: sources,
    plugins: { ratchet },
    rules: {
      "ratchet/layering": "error",
      "ratchet/no-cycle": "error"
    }
  },
  {
    files: ["packages/kernel/src/**/*.{ts,mts,cts,js,mjs}"],
    ignores: ["**/*.test.ts"],
    plugins: { ratchet },
    rules: {
      "ratchet/allowed-imports": [
        "error",
        {
          project: "@ratchet/kernel",
          allow: ["effect", "effect/*", "@noble/hashes/*"],
          reason: "the kernel is pure: no I/O; move this to a storage/host package or pass the value in a command"
        }
      ]
    }
  },
  {
    // Tests may import vitest, fast-check, node:* and the test kit, but never an app.
    files: tests,
    plugins: { ratchet },
    rules: {
      "ratchet/layering": ["error", { alsoAllow: ["@ratchet/testkit"] }],
      "ratchet/no-cycle": "off"
    }
  }
)
