/**
 * The vitest settings every project shares. Tests resolve `@ratchet/*` packages to their
 * TypeScript sources (the `@ratchet/source` export condition), so a test never depends on a
 * stale `dist/` and no build is needed before `test`.
 */
import { defaultClientConditions, defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

export const sourceConditions = ["@ratchet/source"]

export default defineConfig({
  resolve: { conditions: [...sourceConditions, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [...sourceConditions, ...defaultServerConditions] } },
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**", "test/fixtures/**"],
    reporters: ["default"],
    // fast-check properties run many cases; keep them deterministic-per-seed and print the seed.
    testTimeout: 30_000
  }
})
