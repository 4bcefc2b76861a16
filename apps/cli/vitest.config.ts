import { defineConfig, mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

/**
 * The scenarios whose every tool call runs a hook process under the hook launcher's deadline (8 s,
 * after which the call is denied): beside the other end-to-end files on two cores, a hook waited
 * past it, and the fence's decisions could not be checked. They run last, one file after the
 * other (ADR 0047).
 */
const hookBound = ["test/e2e/agent-fence.sqlite.test.ts", "test/e2e/agent-fence.postgres.test.ts"]

export default defineConfig({
  test: {
    // The end-to-end tests (test/e2e) spawn the bundled CLI: build it once per run. The root's
    // global setup runs once, before every project's files.
    globalSetup: ["test/e2e/build.ts"],
    // Their workers mostly wait on child processes, so run a few files at once even on two cores
    // (the default is one fewer worker than cores).
    maxWorkers: 3,
    projects: [
      mergeConfig(shared, { test: { name: "cli", exclude: hookBound, sequence: { groupOrder: 0 } } }),
      // One file at a time, each in a group of its own; their own files only (`mergeConfig` would
      // add them to the shared `include`).
      ...hookBound.map((file, index) => ({ ...shared, test: { ...shared.test, name: `hook-bound ${index + 1}`, include: [file], sequence: { groupOrder: index + 1 } } }))
    ]
  }
})
