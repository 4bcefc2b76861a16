/**
 * The kernel's test settings. Self-contained on purpose: Stryker runs these tests from a sandbox
 * copy of this package, where a relative import of the workspace's shared config would not
 * resolve. The kernel imports no other workspace package, so it needs no source condition.
 */
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    testTimeout: 30_000
  }
})
