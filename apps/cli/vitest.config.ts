import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default mergeConfig(shared, {
  test: {
    // The end-to-end tests (test/e2e) spawn the bundled CLI: build it once per run.
    globalSetup: ["test/e2e/build.ts"],
    // Their workers mostly wait on child processes, so run a few files at once even on two cores
    // (the default is one fewer worker than cores).
    maxWorkers: 3
  }
})
