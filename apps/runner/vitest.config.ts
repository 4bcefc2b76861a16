import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

export default mergeConfig(shared, {
  test: {
    // The tests spawn the bundled runner (`dist/ratchet-runner.mjs`): build it once per run.
    globalSetup: ["test/build.ts"],
    // Their workers mostly wait on child processes, so run a few files at once even on two cores
    // (the default is one fewer worker than cores).
    maxWorkers: 3
  }
})
