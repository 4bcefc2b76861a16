import { mergeConfig } from "vitest/config"
import shared from "../vitest.shared.js"

export default mergeConfig(shared, {
  test: {
    include: ["eslint/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["eslint/test/fixtures/**"]
  }
})
